"""MIGRATE's connections to other servers, kept for reuse as Redis keeps them.

Redis caches one connection per ``host:port`` (at most 64; a random one goes to make room)
and closes those unused for 10 seconds from its cron; INFO reports their number as
``migrate_cached_sockets``. MIGRATE talks to the target synchronously, with its timeout, and
the server waits meanwhile -- exactly as Redis blocks on MIGRATE: the command moves keys
atomically, so nothing else may run between the DUMP and the DEL.
"""

from __future__ import annotations

import random
import socket
import time
from typing import Final

CACHE_ITEMS: Final = 64
CACHE_TTL: Final = 10.0  # seconds


class CachedSocket:
    """A connection to a target, the database last SELECTed there (-1: unknown), and the
    bytes read past the last reply line."""

    __slots__ = ("sock", "last_db", "last_use", "pending")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.last_db = -1
        self.last_use = time.monotonic()
        self.pending = b""

    def send_all(self, data: bytes, timeout: float) -> None:
        """Write everything within ``timeout`` seconds (OSError otherwise)."""
        self.sock.settimeout(timeout)
        self.sock.sendall(data)

    def read_line(self, timeout: float) -> bytes:
        """One reply line without its CRLF (OSError on timeout or a closed connection)."""
        self.sock.settimeout(timeout)
        while b"\n" not in self.pending:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.rstrip(b"\r")


class MigrateSockets:
    """The cache: ``host:port`` -> :class:`CachedSocket`."""

    def __init__(self) -> None:
        self.cached: dict[bytes, CachedSocket] = {}

    def get(self, host: bytes, port: bytes, timeout: float) -> CachedSocket:
        """The cached connection, or a new one (OSError if it cannot be made in time)."""
        name = host + b":" + port
        found = self.cached.get(name)
        if found is not None:
            found.last_use = time.monotonic()
            return found
        if len(self.cached) >= CACHE_ITEMS:
            self.close(random.choice(list(self.cached)))
        sock = socket.create_connection((host.decode("latin-1"), int(port)), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        found = self.cached[name] = CachedSocket(sock)
        return found

    def close(self, name: bytes) -> None:
        found = self.cached.pop(name, None)
        if found is not None:
            found.sock.close()

    def close_idle(self) -> None:
        """The cron's step: connections unused for CACHE_TTL seconds are closed."""
        limit = time.monotonic() - CACHE_TTL
        for name in [name for name, found in self.cached.items() if found.last_use < limit]:
            self.close(name)

    def close_all(self) -> None:
        for name in list(self.cached):
            self.close(name)
