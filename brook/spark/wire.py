"""A bare RESP connection for the sink's pipelined writes.

redis-py packs each command in Python and parses each reply through its connection object,
several microseconds a command; the sink instead encodes whole pipelines of XADDs itself (one
``bytes`` per 1,000 rows) and reads the replies with hiredis, one C call each. Connection
settings, AUTH and SELECT come from :class:`~brook.spark.connection.ConnectionOptions`.
"""

from __future__ import annotations

import socket

import hiredis

from brook.spark.connection import ConnectionOptions, ConnectorError


def encode(*args: bytes | str | int) -> bytes:
    """One command in RESP."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(parts)


class Redirected(ConnectorError):
    """A cluster node's ``-MOVED``/``-ASK``: the key's slot is (being) served elsewhere; the
    command was not run."""

    def __init__(self, message: str, host: str, port: int, ask: bool) -> None:
        super().__init__(message)
        self.host, self.port, self.ask = host, port, ask


def redirect_of(reply: object) -> Redirected | None:
    """The redirect an error reply says (``MOVED <slot> <host>:<port>``), else None."""
    if not isinstance(reply, hiredis.ReplyError):
        return None
    kind, _, rest = str(reply).partition(" ")
    if kind not in ("MOVED", "ASK"):
        return None
    host, _, port = rest.partition(" ")[2].rpartition(":")
    return Redirected(str(reply), host, int(port), kind == "ASK")


class Wire:
    """A socket and a reply parser; replies come back in order."""

    def __init__(self, options: ConnectionOptions) -> None:
        options = options.resolved()
        host, port, username, password, db = options.host, options.port, options.username, \
            options.password, options.db
        sock = socket.create_connection((host, port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        context = options.ssl_context()
        if context is not None:
            sock = context.wrap_socket(sock, server_hostname=host)
        self.sock = sock
        self.reader = hiredis.Reader()
        if password is not None:
            auth = ("AUTH", username, password) if username else ("AUTH", password)
            self.call(*auth)
        if db:
            self.call("SELECT", db)

    def call(self, *args: bytes | str | int) -> object:
        """One command; its reply (an error reply raises)."""
        self.sock.sendall(encode(*args))
        reply = self.replies(1)[0]
        if isinstance(reply, hiredis.ReplyError):
            raise redirect_of(reply) or ConnectorError(f"{args[0]!r} failed: {reply}")
        return reply

    def replies(self, count: int) -> list[object]:
        """The next ``count`` replies (error replies included, as ``hiredis.ReplyError``)."""
        out: list[object] = []
        reader = self.reader
        while True:
            reply = reader.gets()
            while reply is not False:
                out.append(reply)
                if len(out) == count:
                    return out
                reply = reader.gets()
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectorError("the server closed the connection")
            reader.feed(data)

    def close(self) -> None:
        self.sock.close()
