"""Stored bytes reach every client unchanged, in RESP2 and RESP3 (parity with real Redis).

Values that look like RESP frames (``*-1\\r\\n``, ``_\\r\\n``, ``$-1\\r\\n``, ``%1\\r\\n``...) are
stored by each type and read back over a raw socket; the reply must decode to exactly what was
stored and leave the connection in step (a PING sent after it is answered with ``PONG``).
"""

from __future__ import annotations

import hiredis
import pytest

from tests.conftest import RawConnection

FRAME_LIKE = [b"*-1\r\n", b"a*-1\r\nb", b"_\r\n", b"$-1\r\n", b"%1\r\n", b">3\r\n", b"\r\n",
              b"+OK\r\n", b"-ERR x\r\n", b":1\r\n", b",1.5\r\n", b"#t\r\n"]


def _encode(*args: bytes | str | int) -> bytes:
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


class Client:
    """A raw connection that decodes replies with hiredis, RESP2 or RESP3."""

    def __init__(self, port: int, protocol: int) -> None:
        self.conn = RawConnection(port)
        self.reader = hiredis.Reader()
        if protocol == 3:
            self.call("HELLO", "3")

    def call(self, *args: bytes | str | int) -> object:
        self.conn.send(_encode(*args))
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
            conn.request(_encode("HELLO", "3"), until=b"modules")
        conn.call("DEL", "s")
        conn.call("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
        conn.call("XADD", "s", "1-1", "f", "a*-1\r\nb")
        conn.call("XADD", "s", "2-1", "f", "v")
        conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
        conn.call("XDEL", "s", "2-1")
        reply = conn.request(_encode("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
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
