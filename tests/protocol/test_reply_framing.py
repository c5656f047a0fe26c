"""Stored bytes reach every client unchanged, in RESP2 and RESP3 (parity with real Redis).

Values that look like RESP frames (``*-1\\r\\n``, ``_\\r\\n``, ``$-1\\r\\n``, ``%1\\r\\n``...) are
stored by each type and read back over a raw socket; the reply must decode to exactly what was
stored and leave the connection in step (a PING sent after it is answered with ``PONG``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import hiredis
import pytest

from brook.types.stream import MAX_ID, Stream, format_id
from brook.types.stream_node import encode_entry
from tests.conftest import RawConnection, _reset, encode_request, reply_end

FRAME_LIKE = [b"*-1\r\n", b"a*-1\r\nb", b"_\r\n", b"$-1\r\n", b"%1\r\n", b">3\r\n", b"\r\n",
              b"+OK\r\n", b"-ERR x\r\n", b":1\r\n", b",1.5\r\n", b"#t\r\n"]



class Client:
    """A raw connection that decodes replies with hiredis, RESP2 or RESP3."""

    def __init__(self, port: int, protocol: int) -> None:
        self.conn = RawConnection(port)
        self.reader = hiredis.Reader()
        if protocol == 3:
            self.call("HELLO", "3")

    def call(self, *args: bytes | str | int) -> object:
        self.conn.send(encode_request(*args))
        return self.next_reply()

    def next_reply(self) -> object:
        self.conn.sock.settimeout(5)
        while True:
            reply = self.reader.gets()
            if reply is not False:
                return reply
            chunk = self.conn.sock.recv(1 << 20)
            assert chunk, "connection closed"
            self.reader.feed(chunk)

    def in_step(self) -> bool:
        """Nothing unread is left over and the next command gets its own reply."""
        return self.call("PING") in (b"PONG", "PONG")

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def client(request: pytest.FixtureRequest, server):  # type: ignore[no-untyped-def]
    made = Client(server.port, request.param)
    made.call("FLUSHALL")
    yield made
    made.close()


def test_stream_reads_keep_stored_bytes(client: Client) -> None:
    for index, value in enumerate(FRAME_LIKE, 1):
        assert client.call("XADD", "s", f"{index}-1", value, value) == f"{index}-1".encode()
    expected = [[f"{i}-1".encode(), [v, v]] for i, v in enumerate(FRAME_LIKE, 1)]
    assert client.call("XRANGE", "s", "-", "+") == expected
    assert client.call("XREVRANGE", "s", "+", "-") == expected[::-1]
    read = client.call("XREAD", "STREAMS", "s", "0")
    assert read in ([[b"s", expected]], {b"s": expected})
    assert client.in_step()


def test_group_reads_keep_stored_bytes_and_a_deleted_entry_is_nil(client: Client) -> None:
    """XREADGROUP of the consumer's history: a deleted entry's fields are the nil array of the
    client's protocol, and values that look like that nil are not touched."""
    client.call("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    for index, value in enumerate(FRAME_LIKE, 1):
        client.call("XADD", "s", f"{index}-1", "f", value)
    new = client.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    expected = [[f"{i}-1".encode(), [b"f", v]] for i, v in enumerate(FRAME_LIKE, 1)]
    assert new in ([[b"s", expected]], {b"s": expected})
    assert client.call("XDEL", "s", "2-1") == 1
    history = client.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    expected[1] = [b"2-1", None]
    assert history in ([[b"s", expected]], {b"s": expected})
    assert client.in_step()
    claimed = client.call("XCLAIM", "s", "g", "d", "0", "1-1", "3-1")
    assert claimed == [expected[0], expected[2]]
    assert client.in_step()


def test_group_history_nil_is_framed_for_the_protocol(server) -> None:  # type: ignore[no-untyped-def]
    """The exact bytes of a deleted history entry next to a value holding ``*-1\\r\\n``."""
    for protocol, nil, head in ((2, b"*-1\r\n", b"*1\r\n*2\r\n"), (3, b"_\r\n", b"%1\r\n")):
        conn = RawConnection(server.port)
        if protocol == 3:
            conn.request(encode_request("HELLO", "3"), until=b"modules")
        conn.call("DEL", "s")
        conn.call("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
        conn.call("XADD", "s", "1-1", "f", "a*-1\r\nb")
        conn.call("XADD", "s", "2-1", "f", "v")
        conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
        conn.call("XDEL", "s", "2-1")
        reply = conn.request(encode_request("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
                             until=nil)
        assert reply == (head + b"$1\r\ns\r\n*2\r\n"
                         b"*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$7\r\na*-1\r\nb\r\n"
                         b"*2\r\n$3\r\n2-1\r\n" + nil)
        conn.close()


def test_other_types_keep_stored_bytes(client: Client) -> None:
    for index, value in enumerate(FRAME_LIKE):
        client.call("SET", f"k{index}", value)
        client.call("HSET", "h", f"f{index}", value)
        client.call("RPUSH", "l", value)
    assert [client.call("GET", f"k{i}") for i in range(len(FRAME_LIKE))] == FRAME_LIKE
    assert client.call("LRANGE", "l", 0, -1) == FRAME_LIKE
    pairs = client.call("HGETALL", "h")
    as_dict = pairs if isinstance(pairs, dict) else dict(zip(pairs[::2], pairs[1::2], strict=True))
    assert as_dict == {f"f{i}".encode(): v for i, v in enumerate(FRAME_LIKE)}
    assert client.in_step()


# ---------------------------------------------------------------------------------------------
# Byte parity: the same commands against Brook and the real Redis, replies compared byte for
# byte, in RESP2 and RESP3. IDs are explicit so both servers store the same entries.
# ---------------------------------------------------------------------------------------------


class Wire:
    """A raw connection that returns each reply's exact bytes (framing checked on the way)."""

    def __init__(self, port: int, protocol: int) -> None:
        self.conn = RawConnection(port)
        self.buffer = b""
        if protocol == 3:
            self.call("HELLO", "3")  # its text names the server: not compared

    def send(self, *args: bytes | str | int) -> None:
        self.conn.send(encode_request(*args))

    def reply(self, timeout: float = 5) -> bytes:
        self.conn.sock.settimeout(timeout)
        while True:
            end = reply_end(self.buffer)
            if end is not None:
                reply, self.buffer = self.buffer[:end], self.buffer[end:]
                return reply
            try:
                chunk = self.conn.sock.recv(1 << 20)
            except TimeoutError:
                chunk = b""
            if not chunk:
                reply, self.buffer = self.buffer + b"<INCOMPLETE>", b""
                return reply
            self.buffer += chunk

    def call(self, *args: bytes | str | int) -> bytes:
        self.send(*args)
        return self.reply()

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def both(brook, redis_process):  # type: ignore[no-untyped-def]
    """Brook and the real Redis, both emptied (the parity comparisons need the two)."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    _reset(redis_process)
    return brook, redis_process


Step = tuple  # a command's arguments


def _transcripts(both, protocol: int, script: list[Step]) -> list[list[tuple[Step, bytes]]]:  # type: ignore[no-untyped-def]
    out = []
    for proc in both:
        wire = Wire(proc.port, protocol)
        out.append([(step, wire.call(*step)) for step in script])
        assert wire.call("PING") == b"+PONG\r\n", f"{proc.kind} out of step"
        wire.close()
    return out


def _assert_same(both, protocol: int, script: list[Step]) -> None:  # type: ignore[no-untyped-def]
    brook_side, redis_side = _transcripts(both, protocol, script)
    for (step, got), (_, want) in zip(brook_side, redis_side, strict=True):
        assert got == want, f"{step!r}\n brook: {got!r}\n redis: {want!r}"


PROTOCOLS = pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])


def _fill(key: str, ms: int, count: int, fields: int = 2) -> list[Step]:
    """``count`` entries ``ms-1``..``ms-count`` whose names and values cycle through the
    frame-like values (the same names in every entry: Brook's packed node encoding)."""
    steps: list[Step] = []
    for seq in range(1, count + 1):
        row: list[bytes | str] = []
        for k in range(fields):
            row += [f"n{k}", FRAME_LIKE[(seq + k) % len(FRAME_LIKE)]]
        steps.append(("XADD", key, f"{ms}-{seq}", *row))
    return steps


def _stream_writes() -> list[Step]:
    steps: list[Step] = [("XADD", "s", f"1-{i}", v, v) for i, v in enumerate(FRAME_LIKE, 1)]
    steps.append(("XADD", "s", "2-1", "f", b"*-1\r\n", b"*-1\r\n", b"_\r\n", "x", b"$-1\r\n"))
    steps.append(("XADD", "t", "1-1", b"_\r\n", b"*-1\r\n"))
    steps += _fill("big", 5, 250)  # sealed nodes (packed), then the open tail
    # Values of 1 KiB or more: a sealed node of entries encoded one by one, then the tail.
    steps += [("XADD", "big", f"6-{seq}", "n0", b"*-1\r\n" * (300 + seq), "n1", b"_\r\n")
              for seq in range(1, 5)]
    steps.append(("XADD", "big", "7-1", "n0", b"$-1\r\n", "n1", b"%1\r\n"))
    steps += [("XADD", "odd", f"1-{i}", FRAME_LIKE[i % len(FRAME_LIKE)], f"v{i}")
              for i in range(1, 131)]  # field names differ: per-entry encodings
    return steps


_STREAM_READS: list[Step] = [
    ("XRANGE", "s", "-", "+"), ("XRANGE", "s", "-", "+", "COUNT", "3"),
    ("XRANGE", "s", "1-3", "1-5"), ("XRANGE", "s", "-", "+", "COUNT", "0"),
    ("XREVRANGE", "s", "+", "-"), ("XREVRANGE", "s", "+", "-", "COUNT", "4"),
    ("XREAD", "STREAMS", "s", "0-0"), ("XREAD", "COUNT", "2", "STREAMS", "s", "1-3"),
    ("XREAD", "STREAMS", "s", "t", "0-0", "0-0"), ("XREAD", "STREAMS", "s", "2-1"),
    ("XRANGE", "big", "-", "+"), ("XRANGE", "big", "-", "+", "COUNT", "7"),
    ("XRANGE", "big", "5-50", "5-180"), ("XREVRANGE", "big", "+", "-", "COUNT", "120"),
    ("XREAD", "COUNT", "110", "STREAMS", "big", "5-3"),
    ("XRANGE", "odd", "-", "+"), ("XREVRANGE", "odd", "1-120", "1-5"),
    ("XREAD", "COUNT", "105", "STREAMS", "odd", "0-0"),
]


@PROTOCOLS
def test_stream_reads_are_byte_identical_to_redis(both, protocol: int) -> None:  # type: ignore[no-untyped-def]
    deletes: list[Step] = [("XDEL", "s", "1-2", "1-7"), ("XDEL", "big", "5-2", "5-60", "5-61"),
                           ("XDEL", "odd", "1-1", "1-77")]
    _assert_same(both, protocol,
                 _stream_writes() + _STREAM_READS + deletes + _STREAM_READS)


def _group_script() -> list[Step]:
    odd_group, odd_consumer = b"g*-1\r\n", b"c_\r\n"
    return _stream_writes() + [
        ("XGROUP", "CREATE", "s", "g", "0"), ("XGROUP", "CREATE", "s", odd_group, "0"),
        ("XGROUP", "CREATE", "t", odd_group, "0"), ("XGROUP", "CREATE", "s", "idle", "$"),
        ("XGROUP", "CREATE", "big", "g", "0"), ("XGROUP", "CREATE", "odd", "g", "0"),
        ("XPENDING", "s", "g"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),  # nothing new: nil
        ("XREADGROUP", "GROUP", odd_group, odd_consumer, "STREAMS", "s", "t", ">", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "120", "STREAMS", "big", "odd", ">", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "big", "odd", ">", ">"),
        ("XDEL", "s", "1-2", "1-5", "2-1"), ("XDEL", "big", "5-3", "5-200"),
        ("XDEL", "odd", "1-4"),
        # The consumer's history: deleted entries come with nil fields.
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "1-3"),
        ("XREADGROUP", "GROUP", odd_group, odd_consumer, "STREAMS", "s", "t", "0", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "big", "odd", "0", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "big", "odd", "5-190", "1-1"),
        ("XREADGROUP", "GROUP", "idle", "c", "STREAMS", "s", "0"),  # no history: empty
        ("XPENDING", "s", "g"), ("XPENDING", "s", odd_group), ("XPENDING", "s", "idle"),
        ("XINFO", "GROUPS", "s"),
        # Claims: deleted entries leave the PEL and are left out (XAUTOCLAIM lists them).
        ("XCLAIM", "s", "g", "d", "0", "1-1", "1-2", "1-3"),
        ("XCLAIM", "s", "g", "d", "0", "1-4", "1-6", "JUSTID"),
        ("XCLAIM", "s", "g", "d", "0", "1-8", "1-9", "1-10", "1-11"),
        ("XAUTOCLAIM", "s", "g", "e", "0", "0-0", "COUNT", "3"),
        ("XAUTOCLAIM", "s", "g", "e", "0", "0-0"),
        ("XAUTOCLAIM", "s", odd_group, odd_consumer, "0", "0-0", "JUSTID"),
        ("XAUTOCLAIM", "big", "g", "e", "0", "5-1", "COUNT", "50"),
        ("XCLAIM", "odd", "g", "e", "0", "1-3", "1-4", "1-5"),
        ("XREADGROUP", "GROUP", "g", "e", "STREAMS", "s", "big", "0", "0"),
        ("XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
        ("XPENDING", "s", "g"), ("XINFO", "GROUPS", "s"),
        ("XACK", "s", "g", "1-1", "1-3"), ("XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", "0"),
        ("XGROUP", "CREATE", "s", "noack", "0"),
        ("XREADGROUP", "GROUP", "noack", "c", "NOACK", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "noack", "c", "STREAMS", "s", "0"),
    ]


@PROTOCOLS
def test_group_reads_and_claims_are_byte_identical_to_redis(both, protocol: int) -> None:  # type: ignore[no-untyped-def]
    _assert_same(both, protocol, _group_script())


def _field_spans(reply: bytes) -> dict[bytes, bytes]:
    """A top-level map (RESP3) or flat name/value array (RESP2) of bulk-string names: each
    name's value as its exact bytes."""
    line_end = reply.index(b"\r\n")
    count = int(reply[1:line_end])
    pairs = count if reply[:1] == b"%" else count // 2
    spans: dict[bytes, bytes] = {}
    pos = line_end + 2
    for _ in range(pairs):
        name_end = reply_end(reply, pos)
        assert name_end is not None
        name = hiredis.Reader()
        name.feed(reply[pos:name_end])
        value_end = reply_end(reply, name_end)
        assert value_end is not None
        spans[name.gets()] = reply[name_end:value_end]
        pos = value_end
    assert pos == len(reply)
    return spans


@PROTOCOLS
def test_xinfo_stream_entries_are_byte_identical_to_redis(both, protocol: int) -> None:  # type: ignore[no-untyped-def]
    """XINFO STREAM (FULL): the parts holding stored bytes (Brook reports more fields than
    Redis 7.0, and consumers' times differ, so those are not compared)."""
    script = _group_script() + [("XADD", "gone", "1-1", "f", b"*-1\r\n"), ("XDEL", "gone", "1-1")]
    reads: list[Step] = [("XINFO", "STREAM", "s"), ("XINFO", "STREAM", "s", "FULL"),
                         ("XINFO", "STREAM", "big", "FULL", "COUNT", "150"),
                         ("XINFO", "STREAM", "odd", "FULL", "COUNT", "0"),
                         ("XINFO", "STREAM", "gone"), ("XINFO", "STREAM", "gone", "FULL")]
    brook_side, redis_side = _transcripts(both, protocol, script + reads)
    compared = (b"length", b"last-generated-id", b"first-entry", b"last-entry", b"entries")
    for (step, got), (_, want) in zip(brook_side[-len(reads):], redis_side[-len(reads):],
                                      strict=True):
        got_spans, want_spans = _field_spans(got), _field_spans(want)
        for name in compared:
            assert got_spans.get(name) == want_spans.get(name), (step, name)
        assert any(name in want_spans for name in (b"entries", b"first-entry"))


@PROTOCOLS
def test_other_types_are_byte_identical_to_redis(both, protocol: int) -> None:  # type: ignore[no-untyped-def]
    script: list[Step] = []
    for index, value in enumerate(FRAME_LIKE):
        script += [("SET", f"k{index}", value), ("HSET", "h", value, value),
                   ("LPUSH", "l", value), ("RPUSH", "r", value)]
    script += [("GET", f"k{i}") for i in range(len(FRAME_LIKE))]
    script += [
        ("MGET", "k0", "missing", "k2"), ("GET", "missing"),
        ("HGETALL", "h"), ("HMGET", "h", b"*-1\r\n", "missing", b"_\r\n"), ("HKEYS", "h"),
        ("HVALS", "h"), ("HGET", "h", b"$-1\r\n"), ("HGET", "h", "missing"),
        ("LRANGE", "l", "0", "-1"), ("LRANGE", "r", "2", "5"), ("LINDEX", "l", "3"),
        ("LINDEX", "l", "99"), ("LPOP", "l", "2"), ("RPOP", "r"), ("LPOP", "missing", "2"),
        ("GETDEL", "k1"), ("GETRANGE", "k3", "0", "-1"),
    ]
    _assert_same(both, protocol, script)


def _wait_blocked(wire: Wire, count: int) -> None:
    for _ in range(200):
        if b"blocked_clients:%d\r\n" % count in wire.call("INFO", "clients"):
            return
        time.sleep(0.01)
    raise AssertionError("the reader did not block")


@PROTOCOLS
def test_served_blocked_readers_are_byte_identical_to_redis(both, protocol: int) -> None:  # type: ignore[no-untyped-def]
    """A parked XREAD/XREADGROUP answered by a later XADD: the reply built when it is served."""
    replies: dict[str, list[bytes]] = {}
    for proc in both:
        writer = Wire(proc.port, 2)
        writer.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
        reader = Wire(proc.port, protocol)
        group_reader = Wire(proc.port, protocol)
        reader.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        group_reader.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
        _wait_blocked(writer, 2)
        writer.call("XADD", "s", "7-1", b"*-1\r\n", b"a*-1\r\nb", b"_\r\n", b"$-1\r\n")
        got = replies[proc.kind] = [reader.reply(), group_reader.reply()]
        writer.call("XDEL", "s", "7-1")
        got.append(group_reader.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"))
        for wire in (writer, reader, group_reader):
            assert wire.call("PING") == b"+PONG\r\n"
            wire.close()
    assert replies["brook"] == replies["redis"]


# ---------------------------------------------------------------------------------------------
# XREADGROUP CLAIM (Redis 8.4, newer than the parity Redis): [id, fields, idle, deliveries]
# arrays framed as they are assembled from the cached encodings.
# ---------------------------------------------------------------------------------------------


def _claim_streams() -> Iterator[tuple[str, Stream]]:
    """Streams whose entries sit in every kind of node: packed sealed nodes, sealed nodes of
    entries encoded one by one (other field names, values of 1 KiB or more), the open tail,
    each also with deleted entries."""
    packed = Stream()
    for seq in range(1, 251):
        packed.append(seq << 64, [b"a", FRAME_LIKE[seq % len(FRAME_LIKE)], b"b", b"*-1\r\n"])
    yield "packed", packed
    odd = Stream()
    for seq in range(1, 251):
        odd.append(seq << 64, [FRAME_LIKE[seq % len(FRAME_LIKE)], b"v%d" % seq])
    yield "odd", odd
    large = Stream()
    for seq in range(1, 31):
        large.append(seq << 64, [b"a", b"_\r\n" * (400 + seq)])
    yield "large", large
    for name, stream in (("packed", packed), ("odd", odd), ("large", large)):
        dirty = stream.copy()
        for seq in (2, 3, 50, 101, 150, 249, 250, 17):
            dirty.delete(seq << 64)
        yield f"{name}-deleted", dirty


def test_read_resp_frames_longer_entries_from_every_node_kind() -> None:
    extra = b":7\r\n:3\r\n"
    for name, stream in _claim_streams():
        for start, count in ((0, None), (1 << 64, 5), (95 << 64, 20), (240 << 64, None)):
            rows = stream.range(start, MAX_ID, count)
            ids, pieces = stream.read_resp(start, count, extra=extra, nextra=2)
            assert ids == [entry_id for entry_id, _ in rows], name
            assert pieces == [encode_entry(i, row, extra, 2) for i, row in rows], name
            for piece, (entry_id, row) in zip(pieces, rows, strict=True):
                assert reply_end(piece) == len(piece)
                reader = hiredis.Reader()
                reader.feed(piece)
                assert reader.gets() == [format_id(entry_id), row, 7, 3]
            plain_ids, plain = stream.read_resp(start, count)
            assert plain_ids == ids
            assert b"".join(plain) == b"".join(encode_entry(i, row) for i, row in rows)


@pytest.mark.brook_only
@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
def test_xreadgroup_claim_keeps_stored_bytes(server, protocol: int) -> None:  # type: ignore[no-untyped-def]
    wire = Wire(server.port, protocol)
    for seq in range(1, 131):
        value = FRAME_LIKE[seq % len(FRAME_LIKE)]
        wire.call("XADD", "s", f"1-{seq}", value, value, "f", b"*-1\r\n")
    wire.call("XGROUP", "CREATE", "s", "g", "0")
    wire.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">")
    wire.call("XDEL", "s", "1-2", "1-60")
    reply = wire.call("XREADGROUP", "GROUP", "g", "d", "CLAIM", "0", "STREAMS", "s", ">")
    assert reply_end(reply) == len(reply)
    reader = hiredis.Reader()
    reader.feed(reply)
    decoded = reader.gets()
    entries = decoded[b"s"] if isinstance(decoded, dict) else decoded[0][1]
    expected = [[f"1-{seq}".encode(),
                 [FRAME_LIKE[seq % len(FRAME_LIKE)]] * 2 + [b"f", b"*-1\r\n"]]
                for seq in range(1, 131) if seq not in (2, 60)]
    assert [item[:2] for item in entries] == expected
    assert [item[3] for item in entries] == [1, 1] + [0] * (len(expected) - 2)
    assert all(isinstance(item[2], int) for item in entries)
    assert wire.call("PING") == b"+PONG\r\n"
    wire.close()
