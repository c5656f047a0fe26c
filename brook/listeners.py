"""The sockets the server accepts connections on: TCP on ``port``, TLS on ``tls-port`` (each
on every ``bind`` address) and the Unix socket.

The listening sockets are bound here, synchronously, so that CONFIG SET port, bind and tls-port
can report an address they cannot take; the event loop then serves each through a duplicate of
its descriptor. A socket whose address stays (CONFIG SET bind keeping one address) is kept
open, so the address is never released and taken again.
The loop fixes a server's TLS context when it starts serving, so a new context (a reloaded
certificate, another ``tls-auth-clients``) starts new servers on new duplicates of the same
sockets and closes the old ones: the sockets themselves stay open, no connection waiting in
their queues is lost, and connections already made keep the context they were made with, as
in Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
from collections.abc import Callable
from typing import TypeAlias

Log: TypeAlias = Callable[[str, str], None]  # the server's log(level, message)


class Listeners:
    """The server's listening sockets and the loop's servers on them."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], log: Log) -> None:
        self.factory = factory  # a new client's protocol object
        self.log = log
        self.backlog = 511
        self.tcp: list[asyncio.AbstractServer] = []
        self.tcp_sockets: dict[str, socket.socket] = {}  # by bind address; servers hold dups
        self.tcp_port = 0
        self.tcp_addresses: list[str] = []
        self.tls_addresses: list[str] = []
        self.unix: asyncio.AbstractServer | None = None
        self.unix_socket: socket.socket | None = None  # bound here; the server holds a dup
        self.unix_path = ""
        self.tls_sockets: dict[str, socket.socket] = {}  # bound here; the servers hold dups
        self.tls: list[asyncio.AbstractServer] = []
        self.tls_port = 0
        self._changes = asyncio.Lock()

    @property
    def plain_sockets(self) -> list[socket.socket]:
        """The listening sockets whose connections need no handshake (TCP and Unix), which
        a script running past busy-reply-threshold accepts itself (brook.while_busy)."""
        extra = [self.unix_socket] if self.unix_socket is not None else []
        return [*self.tcp_sockets.values(), *extra]

    @property
    def any(self) -> bool:
        """Whether any socket accepts connections (TLS ones are served a moment later)."""
        return bool(self.tcp_sockets or self.unix or self.tls_sockets)

    # -- opening ---------------------------------------------------------------------------

    def bind(self, addresses: list[str], port: int,
             kept: dict[str, socket.socket] | None = None) -> dict[str, socket.socket]:
        """A listening socket on each ``bind`` address (a ``-`` prefix: skipped when it
        cannot be bound, as Redis skips it), by address; OSError with Redis's log text
        otherwise. Sockets of ``kept`` (same port) are reused for their addresses."""
        sockets: dict[str, socket.socket] = {}
        try:
            for address in addresses:
                optional = address.startswith("-")
                host = address.lstrip("-")
                if host == "*":
                    host = "0.0.0.0"
                elif host == "::*":
                    host = "::"
                if kept is not None and host in kept:
                    sockets[host] = kept[host]
                    continue
                try:
                    sockets[host] = _bind(host, port, self.backlog)
                except OSError as err:
                    text = (f"Could not create server TCP listening socket {host}:{port}: "
                            f"{err.strerror or err}")
                    if optional:
                        self.log("warning", text)
                        continue
                    raise OSError(text)
        except OSError:
            for host, sock in sockets.items():
                if kept is None or kept.get(host) is not sock:
                    sock.close()
            raise
        return sockets

    async def serve(self, sockets: list[socket.socket],
                    context: ssl.SSLContext | None) -> list[asyncio.AbstractServer]:
        """The loop's servers on duplicates of ``sockets`` (the originals stay open)."""
        loop = asyncio.get_running_loop()
        return [await loop.create_server(self.factory, sock=sock.dup(), ssl=context,
                                         backlog=self.backlog)
                for sock in sockets]

    async def open_tcp(self, addresses: list[str], port: int) -> None:
        self.tcp_sockets, self.tcp_port = self.bind(addresses, port), port
        self.tcp_addresses = list(addresses)
        self.tcp = await self.serve(list(self.tcp_sockets.values()), None)

    def listen_tcp(self, addresses: list[str], port: int) -> None:
        """Move the TCP listener (CONFIG SET port or bind; port 0: none). The new sockets are
        bound before anything is closed, so an address that cannot be taken leaves the old
        ones serving; addresses that stay keep their sockets."""
        if port == self.tcp_port and addresses == self.tcp_addresses:
            return
        kept = self.tcp_sockets if port == self.tcp_port else None
        sockets = self.bind(addresses, port, kept) if port else {}
        self.tcp_addresses = list(addresses)
        retired = [sock for host, sock in self.tcp_sockets.items()
                   if sockets.get(host) is not sock]
        self.tcp_sockets, self.tcp_port = sockets, port
        self._start(self._replace_tcp(retired))

    async def _replace_tcp(self, retired: list[socket.socket]) -> None:
        async with self._changes:
            new = await self.serve(list(self.tcp_sockets.values()), None)
            for server in self.tcp:
                server.close()
            self.tcp = new
            for sock in retired:
                sock.close()

    async def open_unix(self, path: str, permissions: int) -> None:
        with contextlib.suppress(OSError):
            os.unlink(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            sock.listen(self.backlog)
        except OSError as err:
            sock.close()
            raise OSError(f"Failed opening Unix socket: {err.strerror or err}")
        sock.setblocking(False)
        if permissions:
            os.chmod(path, permissions)
        loop = asyncio.get_running_loop()
        self.unix = await loop.create_unix_server(self.factory, sock=sock.dup(),
                                                  backlog=self.backlog)
        self.unix_socket, self.unix_path = sock, path

    # -- TLS -------------------------------------------------------------------------------

    def listen_tls(self, addresses: list[str], port: int,
                   context: ssl.SSLContext | None) -> None:
        """Move the TLS listener to ``port`` (0: none) or other addresses. The new sockets
        are bound before anything is closed, so a port that cannot be taken leaves the old
        one serving; addresses that stay keep their sockets."""
        if port == self.tls_port and addresses == self.tls_addresses:
            return
        kept = self.tls_sockets if port == self.tls_port else None
        sockets = self.bind(addresses, port, kept) if port else {}
        retired = [sock for host, sock in self.tls_sockets.items()
                   if sockets.get(host) is not sock]
        self.tls_sockets, self.tls_port = sockets, port
        self.tls_addresses = list(addresses)
        self._start(self._replace(context, retired))

    def reload_tls(self, context: ssl.SSLContext) -> None:
        """New connections use ``context`` from now on; existing ones keep theirs."""
        if self.tls_sockets:
            self._start(self._replace(context, []))

    async def _replace(self, context: ssl.SSLContext | None,
                       retired: list[socket.socket]) -> None:
        async with self._changes:
            sockets = list(self.tls_sockets.values())
            new = await self.serve(sockets, context) if sockets else []
            for server in self.tls:
                server.close()
            self.tls = new
            for sock in retired:
                sock.close()

    def _start(self, change: object) -> None:
        asyncio.get_running_loop().create_task(change)  # type: ignore[arg-type]

    # -- closing ---------------------------------------------------------------------------

    def close(self) -> None:
        for server in (*self.tcp, *self.tls):
            server.close()
        for sock in (*self.tcp_sockets.values(), *self.tls_sockets.values()):
            sock.close()
        self.tcp, self.tls = [], []
        self.tcp_sockets, self.tls_sockets = {}, {}
        if self.unix is not None:
            self.unix.close()
            self.unix = None
        if self.unix_socket is not None:
            self.unix_socket.close()
            self.unix_socket = None
            with contextlib.suppress(OSError):
                os.unlink(self.unix_path)

    # -- INFO ------------------------------------------------------------------------------

    def info_lines(self, addresses: list[str], port: int) -> list[str]:
        """INFO's ``listenerN`` lines, numbered by connection type as Redis numbers them
        (0 TCP, 1 Unix, 2 TLS)."""
        binds = ",".join(f"bind={address}" for address in addresses)
        lines = []
        if self.tcp_sockets:
            lines.append(f"listener0:name=tcp,{binds},port={port}")
        if self.unix is not None:
            lines.append(f"listener1:name=unix,bind={self.unix_path}")
        if self.tls_sockets:
            lines.append(f"listener2:name=tls,{binds},port={self.tls_port}")
        return lines


def _bind(host: str, port: int, backlog: int) -> socket.socket:
    """A listening socket on the first of ``host``'s addresses that binds (Redis's
    anetTcpServer); IPv6 sockets take IPv6 only, so ``::`` and ``0.0.0.0`` can both be
    bound."""
    error: OSError | None = None
    for family, _, _, _, address in socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(backlog)
        except OSError as err:
            sock.close()
            error = err
            continue
        sock.setblocking(False)
        return sock
    raise error or OSError(f"no address for {host}")
