"""A raw Pub/Sub peer that checks exact bytes, and the frames it expects."""

from __future__ import annotations

import socket
import time

import hiredis

from tests.conftest import ServerProcess, encode_request


def bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def frame(head: bytes, *items: bytes | int | None) -> bytes:
    """A RESP2 array (``head`` b"*") or RESP3 push (b">") of bulks, integers and nils."""
    parts = []
    for item in items:
        if item is None:
            parts.append(b"$-1\r\n" if head == b"*" else b"_\r\n")
        elif isinstance(item, int):
            parts.append(b":%d\r\n" % item)
        else:
            parts.append(bulk(item))
    return head + b"%d\r\n" % len(items) + b"".join(parts)


class Peer:
    """A raw client: sends requests, checks exact bytes, or parses replies with hiredis."""

    def __init__(self, server: ServerProcess, resp3: bool = False) -> None:
        self.sock = socket.create_connection((server.host, server.port), timeout=10)
        self.reader = hiredis.Reader()
        self.buffer = b""
        if resp3:
            self.send("HELLO", 3)
            assert self.reply()[b"proto"] == 3  # type: ignore[index]

    def send(self, *args: bytes | str | int) -> None:
        self.sock.sendall(encode_request(*args))

    def read_exactly(self, size: int, timeout: float = 5) -> bytes:
        self.sock.settimeout(timeout)
        while len(self.buffer) < size:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                break
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def expect(self, data: bytes) -> None:
        """The next bytes the server sends are exactly ``data``."""
        assert self.read_exactly(len(data)) == data

    def call_raw(self, *args: bytes | str | int, expected: bytes) -> None:
        self.send(*args)
        self.expect(expected)

    def reply(self, timeout: float = 5) -> object:
        """The next reply, parsed (pushes as lists, errors as hiredis.ReplyError)."""
        if self.buffer:
            self.reader.feed(self.buffer)
            self.buffer = b""
        self.sock.settimeout(timeout)
        while True:
            reply = self.reader.gets()
            if reply is not False:
                return reply
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("closed")
            self.reader.feed(chunk)

    def replies(self, count: int) -> list[object]:
        return [self.reply() for _ in range(count)]

    def call(self, *args: bytes | str | int) -> object:
        self.send(*args)
        return self.reply()

    def silent(self, wait: float = 0.2) -> bool:
        """True when nothing arrives within ``wait`` seconds."""
        if self.buffer:
            return False
        self.sock.settimeout(wait)
        try:
            chunk = self.sock.recv(1 << 16)
        except TimeoutError:
            return True
        self.buffer += chunk
        return False

    def closed(self, timeout: float = 5) -> bool:
        """Whether the server closes the connection within ``timeout`` (data is discarded)."""
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if not self.sock.recv(1 << 20):
                    return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
        return False

    def close(self) -> None:
        self.sock.close()

