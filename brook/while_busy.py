"""Other clients while a script runs past ``busy-reply-threshold`` (Redis's
processEventsWhileBlocked).

The event loop is inside the script's call, so it cannot read sockets itself. The script's
hook calls the engine's ``serve_others``, which the server wires to :func:`serve_while_busy`:
it polls the connected clients' sockets without
waiting, reads what arrived and hands it to each connection as the loop would: their commands
run through the dispatcher, which answers ``-BUSY`` to everything but the ``allow-busy``
commands (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE...), and their replies are written at
once. The script's own client is left alone (Redis's protectClient).

New connections are accepted too, as Redis's accept handlers run while a script is busy: an
operator's ``redis-cli SCRIPT KILL`` or ``SHUTDOWN NOSAVE`` is a new connection. The loop
cannot make their transports while it is held, so each is served through a
:class:`_HeldTransport` on the plain socket until the script ends, then handed to the loop.
TLS listeners' connections wait in the backlog: their handshake needs the loop.
"""

from __future__ import annotations

import asyncio
import os
import select
import socket
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from brook.connection import Client

if TYPE_CHECKING:
    from brook.session import Session

_READ_SIZE = 65536


def serve_while_busy(clients: Iterable[Session], caller: Session,
                     flush_effects: Callable[[], None],
                     shutdown_requested: Callable[[], bool],
                     listening: list[socket.socket], new_client: Callable[[], Client]) -> None:
    """Accept waiting connections, then serve every client with input waiting, once,
    without blocking: their commands' effects are written (``flush_effects``) before their
    replies, as after any turn."""
    _accept_waiting(listening, new_client)
    by_fd = {client.fd: client for client in list(clients)
             if isinstance(client, Client) and client is not caller and client.fd >= 0
             and not client.closed}
    if not by_fd:
        return
    poller = select.poll()  # (select.select stops at descriptor 1024)
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    try:
        events = poller.poll(0)
    except OSError:
        return
    for fd, _ in events:
        client = by_fd[fd]
        try:
            data = os.read(fd, _READ_SIZE)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            continue
        if not data:
            continue  # the peer closed: the event loop sees it (EOF stays readable)
        client.data_received(data)
        flush_effects()
        client.flush()
        transport = client.transport
        if isinstance(transport, _HeldTransport):
            transport.send_held()
    if shutdown_requested():
        os._exit(0)  # SHUTDOWN NOSAVE stops a script that cannot be killed, as in Redis


def _accept_waiting(listening: list[socket.socket], new_client: Callable[[], Client]) -> None:
    """Every connection waiting on ``listening``, admitted as the loop would admit it."""
    for listener in listening:
        while True:
            try:
                sock, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                break
            except OSError:  # out of descriptors, a connection reset before it was taken
                break
            sock.setblocking(False)
            client = new_client()
            held = _HeldTransport(sock, client)
            client.connection_made(held)  # type: ignore[arg-type]
            if not held.is_closing():
                asyncio.get_running_loop().call_soon(held.hand_over)  # once the script ends


class _HeldTransport:
    """The part of an asyncio transport a client uses, on a connection accepted while the
    event loop is held by a script: writes go straight to the socket, what the peer does
    not take yet is kept, and the loop's own transport takes the connection (and what is
    kept) as soon as the loop runs again."""

    def __init__(self, sock: socket.socket, client: Client) -> None:
        self.sock = sock
        self.client = client
        self.held = bytearray()  # written, not yet taken by the peer
        self.closing = False
        self.handing_over = False  # the loop is making its transport on the socket
        self.reading = True

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.closing:
            return
        self.held += data
        self.send_held()

    def send_held(self) -> None:
        """As much of what is held as the socket takes now (never waiting for the peer)."""
        while self.held and not self.closing:
            try:
                sent = self.sock.send(self.held)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.abort()
                return
            del self.held[:sent]

    def close(self) -> None:
        self.send_held()
        self.abort()

    def abort(self) -> None:
        if self.closing:
            return
        self.closing = True
        self.held.clear()
        if self.handing_over:  # the loop's transport closes it as it takes it (_Adoption)
            return
        self.sock.close()
        asyncio.get_running_loop().call_soon(self.client.connection_lost, None)

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        try:
            if name == "socket":
                return self.sock
            if name == "peername":
                return self.sock.getpeername()
            if name == "sockname":
                return self.sock.getsockname()
        except OSError:
            return default
        return default

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_reading(self) -> bool:
        return self.reading

    def get_write_buffer_size(self) -> int:
        return len(self.held)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        """The limits apply once the loop's transport takes over (Client.adopt sets them)."""

    def hand_over(self) -> None:
        """The script has ended: the loop's transport takes the socket."""
        if not self.closing:
            self.handing_over = True
            loop = asyncio.get_running_loop()
            loop.create_task(loop.connect_accepted_socket(lambda: _Adoption(self), self.sock))


class _Adoption(asyncio.Protocol):
    """The protocol the loop's new transport starts with: it gives the transport straight
    to the client, so everything after goes to the client without a step in between."""

    def __init__(self, held: _HeldTransport) -> None:
        self.held = held

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        held = self.held
        client = held.client
        transport.set_protocol(client)
        if held.closing:  # killed while the transport was being made
            transport.abort()  # (the client hears of it in connection_lost)
            return
        unsent, held.held = bytes(held.held), bytearray()
        held.closing = True  # the loop's transport owns the socket now
        client.adopt(transport)  # type: ignore[arg-type]
        if unsent:
            transport.write(unsent)  # type: ignore[attr-defined]
