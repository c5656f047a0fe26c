"""The wire protocol: inline commands, pipelining, split reads, RESP3, protocol errors.

The byte-level tests run against Brook and real Redis (``raw`` is parametrized), so every reply
and error text is checked for parity. The fuzz tests feed arbitrary bytes to the request parser
and to the live server: nothing may escape the connection or stop the server.
"""

from __future__ import annotations

import socket
import time

import hiredis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brook.protocol.framing import dangerous_header
from brook.protocol.requests import ProtocolError, RequestParser, split_inline_args
from tests.conftest import RawConnection, encode_request

# -- inline commands and pipelining ---------------------------------------------------------


def test_inline_commands(raw):
    assert raw.request(b"PING\r\n") == b"+PONG\r\n"
    assert raw.request(b"ECHO hello\n") == b"$5\r\nhello\r\n"
    assert raw.request(b'ECHO "a b\\x41\\n"\r\n') == b"$5\r\na bA\n\r\n"
    assert raw.request(b"ECHO 'it\\'s'\r\n") == b"$4\r\nit's\r\n"
    assert raw.request(b'ECHO "\\x41\\x4g"\r\n') == b"$4\r\nAx4g\r\n"
    assert raw.request(b"\r\n\r\n   \r\nPING\r\n") == b"+PONG\r\n"


def test_inline_and_multibulk_mixed_in_one_read(raw):
    payload = b"PING\r\n" + encode_request(b"ECHO", b"x") + b"ECHO y\r\n" + encode_request(b"PING")
    assert raw.request(payload, until=b"+PONG\r\n$1\r\nx\r\n$1\r\ny\r\n+PONG\r\n") == (
        b"+PONG\r\n$1\r\nx\r\n$1\r\ny\r\n+PONG\r\n"
    )


def test_pipeline_replies_in_order(raw):
    payload = b"".join(encode_request(b"ECHO", b"%d" % i) for i in range(500))
    expected = b"".join(b"$%d\r\n%d\r\n" % (len(b"%d" % i), i) for i in range(500))
    assert raw.request(payload, until=expected) == expected


def test_requests_split_byte_by_byte(server):
    conn = RawConnection(server.port)
    payload = encode_request(b"ECHO", b"hello") + b"PING\r\n" + encode_request(b"ECHO", b"a\r\nb") + encode_request(b"PING")
    for i in range(len(payload)):
        conn.send(payload[i : i + 1])
        time.sleep(0.001)
    expected = b"$5\r\nhello\r\n+PONG\r\n$4\r\na\r\nb\r\n+PONG\r\n"
    assert conn.read(until=expected) == expected
    conn.close()


def test_pipeline_cut_at_every_position(server):
    """Two reads, cut at each byte: headers, lengths, values with CRLF inside, boundaries."""
    payload = encode_request(b"ECHO", b"a\r\nb") + encode_request(b"PING") + encode_request(b"ECHO", b"xyz")
    expected = b"$4\r\na\r\nb\r\n+PONG\r\n$3\r\nxyz\r\n"
    for cut in range(1, len(payload)):
        conn = RawConnection(server.port)
        conn.send(payload[:cut])
        time.sleep(0.005)
        conn.send(payload[cut:])
        assert conn.read(until=expected) == expected, f"cut after {payload[:cut]!r}"
        conn.close()


def test_request_split_at_element_boundary(server):
    conn = RawConnection(server.port)
    conn.send(b"*2\r\n$4\r\nECHO\r\n")
    time.sleep(0.05)
    conn.send(b"$3\r\nabc\r\n")
    assert conn.read(until=b"abc\r\n") == b"$3\r\nabc\r\n"
    conn.close()


def test_large_value_in_many_reads(server):
    value = bytes(range(256)) * 4096  # 1 MiB, every byte value
    conn = RawConnection(server.port)
    payload = encode_request(b"ECHO", value)
    for start in range(0, len(payload), 7000):
        conn.send(payload[start : start + 7000])
    expected = b"$%d\r\n%s\r\n" % (len(value), value)
    assert conn.read(until=expected, timeout=5) == expected
    conn.close()


def test_empty_multibulk_is_ignored(raw):
    assert raw.request(b"*0\r\n*-1\r\nPING\r\n") == b"+PONG\r\n"


@pytest.mark.parametrize("tail", [b"*1000000\r\n", b"*1000000", b"*12345678\r\n$3\r\nGET\r\n"])
def test_a_read_ending_in_a_giant_multibulk_count_answers_what_came_before(raw, tail):
    """A count of a million or more is never handed to hiredis (which would allocate it); the
    requests before it run and the rest waits for its elements."""
    assert raw.request(encode_request(b"PING") + encode_request(b"ECHO", b"*1234567") + tail,
                       until=b"$8\r\n*1234567\r\n") == b"+PONG\r\n$8\r\n*1234567\r\n"


@given(st.lists(st.sampled_from([b"*", b"1", b"9", b"0", b"\r\n", b"$", b"x", b"-"]), max_size=40))
def test_giant_header_finds_a_star_and_seven_digits(pieces):
    """The search the connection runs on every read matches a star and seven digits anywhere."""
    data = b"".join(pieces)
    expected = any(data[i:i + 1] == b"*" and data[i + 1:i + 8].isdigit() and len(data) >= i + 8
                   for i in range(len(data)))
    assert (dangerous_header(data) is not None) == expected


# -- protocol errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        (b"*1\r\n:5\r\n", b"expected '$', got ':'"),
        (b"*1\r\n+PING\r\n", b"expected '$', got '+'"),
        (b"*abc\r\n", b"invalid multibulk length"),
        (b"*3000000000\r\n", b"invalid multibulk length"),
        (b"*1\r\n$abc\r\n", b"invalid bulk length"),
        (b"*1\r\n$-1\r\n", b"invalid bulk length"),
        (b"*1\r\n$04\r\nPING\r\n", b"invalid bulk length"),
        (b"*1\r\n$9999999999999\r\n", b"invalid bulk length"),
        (b'SET a "b\r\n', b"unbalanced quotes in request"),
        (b"ECHO 'a'b\r\n", b"unbalanced quotes in request"),
    ],
)
def test_protocol_errors_close_the_connection(server, payload, error):
    conn = RawConnection(server.port)
    reply = conn.request(payload, timeout=2, until=b"<CLOSED>")
    assert reply.endswith(b"-ERR Protocol error: " + error + b"\r\n<CLOSED>")
    conn.close()
    # Everyone else is still served.
    other = RawConnection(server.port)
    assert other.request(b"PING\r\n") == b"+PONG\r\n"
    other.close()


def test_commands_before_a_protocol_error_are_answered(raw):
    reply = raw.request(b"PING\r\n" + encode_request(b"ECHO", b"ok") + b"*1\r\n$x\r\n", until=b"<CLOSED>")
    assert reply == b"+PONG\r\n$2\r\nok\r\n-ERR Protocol error: invalid bulk length\r\n<CLOSED>"


# A malformed request never runs: each frame below is a SET of key k whose value (or name, or
# header) is not framed as Redis frames requests, alone, after a valid request in the same read,
# with values that contain CRLFs, and cut across reads. hiredis reads most of them as a valid
# array of strings; Redis rejects them before running anything.
_MALFORMED_SETS = [
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n+v\r\n",  # a simple string for the value
    b"*3\r\n$3\r\nSET\r\n+k\r\n$1\r\nv\r\n",  # ... for the key
    b"*3\r\n+SET\r\n$1\r\nk\r\n$1\r\nv\r\n",  # ... for the name
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n(12\r\n",  # a big number
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n=5\r\ntxt:v\r\n",  # a verbatim string
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n:5\r\n",  # an integer
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n_\r\n",  # a RESP3 null
    # A simple string balanced by a value holding a CRLF: the CRLF count alone looks right.
    b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n+v\r\n",
    # A simple string after a value that looks like a bulk header ("$5").
    b"*3\r\n$3\r\nSET\r\n$2\r\n$5\r\n+v\r\n",
]


def _malformed_reply(server, payload: bytes) -> bytes:
    conn = RawConnection(server.port)
    try:
        return conn.request(payload, until=b"<CLOSED>", timeout=2)
    finally:
        conn.close()


@pytest.mark.parametrize("frame", _MALFORMED_SETS)
@pytest.mark.parametrize("before", [b"", encode_request(b"PING")])
def test_a_malformed_request_changes_nothing(server, r, frame, before):
    """Redis answers what precedes the bad request and the protocol error, and never runs it."""
    reply = _malformed_reply(server, before + frame)
    assert reply.startswith(b"+PONG\r\n" if before else b"-ERR Protocol error: ")
    assert reply.endswith(b"\r\n<CLOSED>") and b"-ERR Protocol error: " in reply
    assert r.exists("k") == 0
    assert r.info("commandstats").get("cmdstat_set") is None


@pytest.mark.parametrize("frame", _MALFORMED_SETS[:2])
def test_a_malformed_request_after_a_cut_read_changes_nothing(server, r, frame):
    """The malformed request arrives in two reads, after a complete one in the first read."""
    conn = RawConnection(server.port)
    payload = encode_request(b"SET", b"before", b"1") + frame
    cut = len(encode_request(b"SET", b"before", b"1")) + 5
    conn.send(payload[:cut])
    time.sleep(0.05)
    reply = conn.request(payload[cut:], until=b"<CLOSED>", timeout=2)
    conn.close()
    assert reply.startswith(b"+OK\r\n-ERR Protocol error: ") or reply.startswith(b"-ERR Protocol")
    assert r.exists("before") == 1
    assert r.exists("k") == 0


@pytest.mark.parametrize("frame", _MALFORMED_SETS[:2])
def test_a_malformed_request_inside_multi_changes_nothing(server, r, frame):
    """Queued commands of a transaction cut short by a protocol error never run."""
    reply = _malformed_reply(server, encode_request(b"MULTI") + encode_request(b"SET", b"q", b"1") + frame
                             + encode_request(b"EXEC"))
    assert reply.startswith(b"+OK\r\n+QUEUED\r\n-ERR Protocol error: ")
    assert r.exists("q") == 0 and r.exists("k") == 0


def test_a_set_header_is_an_inline_command_not_an_array(raw, r):
    """"~3" (a RESP3 set) after a request whose value starts with "+": Redis reads each line
    as an inline command, so nothing is stored; Brook the same."""
    payload = encode_request(b"ECHO", b"+") + b"~3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
    reply = raw.request(payload, until=b"'v' \r\n")
    assert reply.startswith(b"$1\r\n+\r\n-ERR unknown command '~3'")
    assert r.exists("k") == 0


def test_values_that_start_like_other_frames_in_one_pipeline(raw, r):
    """Values starting with "+", "(", "=", "~", "%", ">" (XRANGE's "+", ZRANGE's "(1") are
    bulk strings like any other: the whole pipeline runs."""
    values = [b"+", b"(1", b"=x", b"~", b"%1", b">3"]
    payload = b"".join(encode_request(b"RPUSH", b"l", v) for v in values) + encode_request(
        b"LRANGE", b"l", b"0", b"-1")
    reply = raw.request(payload, until=b"$2\r\n>3\r\n")
    assert reply == b"".join(b":%d\r\n" % (i + 1) for i in range(len(values))) + (
        b"*6\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(v), v) for v in values))


def test_values_that_look_like_other_frames_are_stored_unchanged(raw, r):
    """The exact parser takes reads whose values contain such bytes: they still work."""
    value = b"x\r\n+y\r\n(1\r\n=5\r\n~2\r\n:3"
    assert raw.request(encode_request(b"SET", b"k", value) + encode_request(b"GET", b"k")) == (
        b"+OK\r\n$%d\r\n%s\r\n" % (len(value), value)
    )


def test_nul_byte_keeps_an_inline_request_incomplete(raw):
    assert raw.request(b"ECHO a\x00b\r\nPING\r\n", timeout=0.3) == b""
    reply = raw.request(b"A" * (64 * 1024 + 10), until=b"<CLOSED>", timeout=2)
    assert reply == b"-ERR Protocol error: too big inline request\r\n<CLOSED>"


def test_too_big_inline_request(raw):
    reply = raw.request(b"A" * (64 * 1024 + 10), until=b"<CLOSED>", timeout=2)
    assert reply == b"-ERR Protocol error: too big inline request\r\n<CLOSED>"


def test_too_big_mbulk_count_string(raw):
    reply = raw.request(b"*" + b"1" * (64 * 1024 + 10), until=b"<CLOSED>", timeout=2)
    assert reply == b"-ERR Protocol error: too big mbulk count string\r\n<CLOSED>"


def test_unknown_command_and_arity_errors(raw):
    assert raw.request(b"foo\r\n") == b"-ERR unknown command 'foo', with args beginning with: \r\n"
    assert raw.request(encode_request(b"FooBar", b"a" * 200, b"b")) == (
        b"-ERR unknown command 'FooBar', with args beginning with: '"
        + b"a" * 128 + b"' \r\n"
    )
    assert raw.request(encode_request(b"x", b"a\r\nb")) == (
        b"-ERR unknown command 'x', with args beginning with: 'a  b' \r\n"
    )
    assert raw.request(b"ECHO\r\n") == b"-ERR wrong number of arguments for 'echo' command\r\n"
    assert raw.request(b"PiNg a b\r\n") == b"-ERR wrong number of arguments for 'ping' command\r\n"


def test_subcommand_errors(raw):
    assert raw.request(b"CONFIG\r\n") == b"-ERR wrong number of arguments for 'config' command\r\n"
    assert raw.request(b"CONFIG foo\r\n") == b"-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n"
    assert raw.request(b"CONFIG GET\r\n") == (
        b"-ERR wrong number of arguments for 'config|get' command\r\n"
    )
    assert raw.request(b"config|get x\r\n") == (
        b"-ERR unknown command 'config|get', with args beginning with: 'x' \r\n"
    )


# -- RESP3 -----------------------------------------------------------------------------------------


def test_resp3_after_hello(raw):
    hello = raw.request(b"HELLO 3\r\n")
    assert hello.startswith(b"%7\r\n$6\r\nserver\r\n")
    assert raw.request(b"GET missing\r\n") == b"_\r\n"
    assert raw.request(b"HELLO 2\r\n").startswith(b"*14\r\n")
    assert raw.request(b"GET missing\r\n") == b"$-1\r\n"


# -- the exact parser on its own (no I/O) --------------------------------------------------------


def test_inline_splitting_matches_sdssplitargs():
    assert split_inline_args(b"  a  b\tc ") == [b"a", b"b", b"c"]
    assert split_inline_args(b'"a\\tb" \'c d\'') == [b"a\tb", b"c d"]
    assert split_inline_args(b'"\\x41\\x4g"') == [b"Ax4g"]  # a bad \\x escape keeps the x
    assert split_inline_args(b'"unterminated') is None
    assert split_inline_args(b'"a"b') is None
    assert split_inline_args(b"") == []
    # isspace() separates arguments, but only space, tab, CR and LF end an unquoted one.
    assert split_inline_args(b"a\x0bb \x0cc") == [b"a\x0bb", b"c"]


@given(st.lists(st.lists(st.binary(max_size=40), min_size=1, max_size=6), min_size=1, max_size=8),
       st.integers(min_value=1, max_value=50))
def test_exact_parser_agrees_with_hiredis_on_valid_requests(requests, chunk):
    payload = b"".join(encode_request(*request) for request in requests)
    parser = RequestParser()
    parsed = []
    for start in range(0, len(payload), chunk):
        parser.feed(payload[start : start + chunk])
        while (request := parser.next_request(1 << 40, False)) is not None:
            parsed.append(request)
    reader = hiredis.Reader()
    reader.feed(payload)
    expected = []
    while (request := reader.gets()) is not False:
        expected.append(request)
    assert parsed == expected == requests
    assert parser.is_idle()


@given(st.binary(max_size=300))
def test_exact_parser_never_fails_other_than_protocol_error(data):
    parser = RequestParser()
    parser.feed(data)
    try:
        while parser.next_request(1 << 20, False) is not None:
            pass
    except ProtocolError:
        pass


_resp_fragments = st.sampled_from(
    [b"*", b"$", b":", b"+", b"-", b"\r\n", b"\n", b"1", b"3", b"-1", b"0", b"PING", b"ECHO",
     b"SET", b"GET", b"a", b'"', b"'", b"\\", b" ", b"\x00", b"99999999", b"*2\r\n", b"$4\r\n"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.one_of(st.lists(_resp_fragments, max_size=12).map(b"".join),
                                 st.binary(max_size=64)), min_size=1, max_size=5))
def test_fuzzed_input_never_stops_the_server(brook, chunks):
    conn = socket.create_connection(("127.0.0.1", brook.port), timeout=2)
    try:
        for chunk in chunks:
            try:
                conn.sendall(chunk)
            except OSError:  # the server closed it after a protocol error
                break
        conn.settimeout(0.02)
        try:
            while conn.recv(65536):
                pass
        except (TimeoutError, OSError):
            pass
    finally:
        conn.close()
    check = socket.create_connection(("127.0.0.1", brook.port), timeout=2)
    check.sendall(b"PING\r\n")
    assert check.recv(64) == b"+PONG\r\n"
    check.close()
