"""One client connection: bytes in, requests framed, the dispatcher runs them, replies out.

The connection knows bytes and sockets, not what commands mean. :meth:`Client.data_received`
frames a read: when it starts a request and holds nothing unusual, ``hiredis`` parses every
complete request at C speed and :meth:`brook.dispatch.Dispatcher.run_batch` runs them, the
replies going out in one ``transport.write``. Anything else (a partial request, an inline
command, an element that is not a bulk string, a client in a special state) goes to the exact
parser (:class:`brook.protocol.requests.RequestParser`), which produces Redis's precise protocol
errors; its requests run through :meth:`~brook.dispatch.Dispatcher.execute`. Either way a
request is parsed completely, and found well-formed, before it runs: a malformed request never
changes data.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from typing import TYPE_CHECKING

import hiredis

from brook.dispatch import REPLY_BUDGET, Dispatcher
from brook.protocol import resp
from brook.protocol.framing import (
    FramedGets,
    dangerous_header,
    ends_at_request,
    may_hold_other_elements,
)
from brook.protocol.requests import ProtocolError, RequestParser
from brook.session import Session

if TYPE_CHECKING:
    from brook.context import ServerContext


class Client(Session, asyncio.Protocol):
    """A connected client: its session state plus the transport it talks through."""

    def __init__(self, server: ServerContext, dispatcher: Dispatcher) -> None:
        self.reader = hiredis.Reader()
        self.transport: asyncio.Transport | None = None
        self.writing_paused = False  # the transport's buffer is over its high-water mark
        super().__init__(server)
        self.dispatcher = dispatcher

    # -- connection lifecycle -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            self.fd = sock.fileno()
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                _keep_alive(sock, self.server.config.tcp_keepalive)
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        self.addr = _format_address(peer)
        self.laddr = _format_address(local)
        refusal = self.server.admit(self, is_loopback(peer))
        if refusal is not None:
            transport.write(refusal)  # type: ignore[attr-defined]
            transport.close()
            self.closed = True
            return
        if self.server.config.client_output_buffer_limit["normal"] != (0, 0, 0):
            self.server.output_limits.apply(self)
        self.refresh_mode()

    def adopt(self, transport: asyncio.Transport) -> None:
        """The loop's transport takes over a connection that was accepted and served while a
        script held the loop (brook.while_busy): the client stays as it was admitted."""
        self.transport = transport
        if self.server.config.client_output_buffer_limit["normal"] != (0, 0, 0):
            self.server.output_limits.apply(self)
        self.refresh_mode()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed:
            self.closed = True
        self.server.forget(self)

    def unblocked(self) -> None:
        """Its parked command replied (brook.blocking): send that, then run what it sent
        meanwhile, on the next loop turn (never inside another client's command). A reply
        written counts as an interaction for ``timeout``, as in Redis."""
        self.last_interaction = time.time()
        self.refresh_mode()
        self.flush()
        if self.parser is not None and self.server.loop is not None:
            self.server.loop.call_soon(self._resume)

    def _resume(self) -> None:
        if (self.blocked is None and self.parser is not None and not self.closed
                and not self.output_full):
            self._drain_parser()

    def _continue_after_output(self) -> None:
        """The requests held back for a full reply budget run once the replies are written:
        on the next loop turn, or when the peer has read enough (``resume_writing``)."""
        if not self.output_full:
            return
        self.output_full = False
        if self.parser is not None and not self.writing_paused and self.server.loop is not None:
            self.server.loop.call_soon(self._resume)

    def pause_writing(self) -> None:
        """Unsent output passed the threshold: its class's output limits decide
        (brook.output_limits). A subscriber is not stopped from sending commands, as in Redis;
        any other client is no longer read until it catches up, so replies cannot pile up."""
        self.writing_paused = True
        limits = self.server.output_limits
        if self.is_subscribed() or limits.limited(self):
            limits.congested(self)
        if not self.is_subscribed() and self.transport is not None and not self.closing:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.writing_paused = False
        self.server.output_limits.relieved(self)
        if self.transport is not None and not self.closing:
            self.transport.resume_reading()
            if self.parser is not None and self.server.loop is not None:
                self.server.loop.call_soon(self._resume)  # requests held for their replies

    def kill(self) -> None:
        """Close now (CLIENT KILL, timeouts, SHUTDOWN)."""
        self.closing = True
        self.refresh_mode()
        if self.blocked is not None:
            self.server.blocking.forget(self)
        self.server.drop_subscriptions(self)
        self.flush()
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        """Close now, dropping what the peer has not read (output buffer limits)."""
        self.closing = True
        self.refresh_mode()
        if self.transport is not None:
            self.transport.abort()

    # -- what commands may ask of the socket ------------------------------------------------------

    def write_buffer_size(self) -> int:
        transport = self.transport
        return transport.get_write_buffer_size() if transport is not None else 0

    def is_reading(self) -> bool:
        transport = self.transport
        return transport is not None and not transport.is_closing() and transport.is_reading()

    def is_unix(self) -> bool:
        transport = self.transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        return sock is not None and sock.family == socket.AF_UNIX

    def is_local(self) -> bool:
        transport = self.transport
        if transport is None:
            return False
        return self.is_unix() or is_loopback(transport.get_extra_info("peername"))

    def set_write_limits(self, threshold: int) -> None:
        """Pause at ``threshold`` bytes; 0: asyncio's defaults, as every connection starts.
        Redis compares with ``>=``, asyncio pauses above ``high``; ``low`` equal to ``high``
        resumes as soon as it is below again."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        try:
            if threshold:
                transport.set_write_buffer_limits(high=threshold - 1, low=threshold - 1)
            else:
                transport.set_write_buffer_limits()
        except RuntimeError:  # the handle is already closed: nothing will be written any more
            pass

    # -- input ------------------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        server = self.server
        server.net_input_bytes += len(data)
        self.last_interaction = time.time()
        if self.slow or data[0] != 0x2A or dangerous_header(data) is not None:
            # A special client state, an inline command, or a multibulk count of a million or
            # more (hiredis would preallocate that list and take seconds to free it).
            self._data_received_slow(data)
            return
        reader = self.reader
        reader.feed(data)
        next_request = reader.gets
        if may_hold_other_elements(data):
            # hiredis might take such a line for a request's string although it is no bulk
            # string, or for a request although it is no array, wherever it stands: after a
            # line, or after a bulk whose declared length missed its CRLF (hiredis, like Redis,
            # skips the two bytes after a bulk unchecked). Each request is checked against the
            # bytes before it runs.
            next_request = FramedGets(data, next_request)  # type: ignore[assignment]
        completed, arguments, _last, malformed = self.dispatcher.run_batch(self, next_request)
        if server.config.maxmemory:  # what the read may have stored, until the next reading
            server.memory.charge(len(data) + 48 * arguments)
        if malformed:
            # hiredis said only "bad length", or read an element Redis does not accept: the
            # exact parser reads the bad request again (the ones before it have run) and
            # produces Redis's precise text.
            self._reparse_after(data, completed)
            return
        if self.closing:
            self.flush()
            return
        if self.blocked is not None or self.output_full:
            # Parked mid-read, or the read's replies reached their budget: what follows waits
            # in the exact parser (hiredis stopped right after the last request taken, so it
            # holds exactly the rest).
            if reader.has_data():
                self._hold_after(data, completed)
            self.flush()
            self._continue_after_output()
            return
        # Did the read end exactly after the last complete request? hiredis keeps no visible
        # trace of a request cut at an element boundary ("*2\r\n$3\r\nGET\r\n") or inside a
        # header ("*").
        if reader.has_data() or not ends_at_request(data, completed, arguments):
            # The exact parser takes over from the cut request's start.
            self._reparse_after(data, completed)
            return
        self.flush()

    def _reparse_after(self, data: bytes, completed: int) -> None:
        """Hand the exact parser everything after the ``completed`` requests already run.

        hiredis was idle when this read began (it only ever sees reads that start a request),
        so the read's first byte is a request boundary.
        """
        if self._hold_after(data, completed):
            self._drain_parser()

    def _hold_after(self, data: bytes, completed: int) -> bool:
        """Give the exact parser what follows the first ``completed`` requests of ``data``,
        without running it; False when that fails (the client was told and is closing)."""
        self.reader = hiredis.Reader()
        parser = RequestParser()
        parser.feed(data)
        try:
            for _ in range(completed):
                parser.next_request(1 << 62, False, keep_empty=True)
        except ProtocolError as err:  # the requests it skips were framed as Redis frames them
            self.protocol_error(str(err))
            self.flush()
            return False
        self.parser = parser
        self.refresh_mode()
        return True

    def _data_received_slow(self, data: bytes) -> None:
        if self.closing:
            return
        if self.parser is None:
            self.parser = RequestParser()
            self.refresh_mode()  # what it holds must run before any later read's requests
        self.parser.feed(data)
        if self.blocked is not None:
            # Parked: keep it for later, within the query buffer limit (as Redis does).
            if self.parser.buffered() > self.server.config.client_query_buffer_limit:
                self.server.log("warning", "Closing client that reached max query buffer "
                                           f"length: {self.addr}")
                self.server.stats["client_query_buffer_limit_disconnections"] += 1
                self.kill()
            return
        self._drain_parser()

    def _drain_parser(self) -> None:
        """Run every complete request the exact parser holds, then write the replies."""
        parser = self.parser
        assert parser is not None
        config = self.server.config
        out = self.out
        ready = self.server.keyspace.ready
        produced = 0
        while not self.closing and self.blocked is None:
            try:
                request = parser.next_request(config.proto_max_bulk_len, not self.authenticated)
            except ProtocolError as err:
                self.protocol_error(str(err))
                break
            if request is None:
                break
            reply = self.dispatcher.execute(self, request)
            if reply is not None:
                out.append(reply)
                produced += len(reply)
            if ready:
                self.server.blocking.serve_ready()
            if produced > REPLY_BUDGET:
                self.output_full = True  # the rest waits for these replies to be written
                break
        if (not self.closing and self.blocked is None
                # Queued MULTI commands count as query buffer too (Redis 7.4).
                and parser.buffered() + self.multi_bytes > config.client_query_buffer_limit):
            self.server.log(
                "warning", f"Closing client that reached max query buffer length: {self.addr}"
            )
            self.server.stats["client_query_buffer_limit_disconnections"] += 1
            self.out.clear()
            self.kill()
            return
        if parser.is_idle() and self.parser is parser:
            self.parser = None
            self.refresh_mode()
        self.flush()
        self._continue_after_output()

    def protocol_error(self, text: str) -> None:
        self.server.log("verbose", f"Protocol error ({text}) from client: {self.addr}")
        self.out.append(resp.error(f"ERR Protocol error: {text}"))
        self.server.count_error("ERR")
        self.close()

    # -- output -----------------------------------------------------------------------------------

    def flush(self) -> None:
        server = self.server
        if server.effect_log.buffer and not server.aof_write_failed:
            # What this turn changed goes to the AOF before any reply; the server writes it
            # once for every client of the turn, then sends their replies (group commit).
            server.defer_flush(self)
            return
        if server.pubsub.delivered:  # this batch published: subscribers get theirs now
            server.flush_subscribers()
        if self.pubsub_out:  # messages published before its replies go first
            self.write_pending()
        out = self.out
        transport = self.transport
        if out and transport is not None and not self.closed:
            payload = b"".join(out) if len(out) > 1 else out[0]
            server.net_output_bytes += len(payload)
            transport.write(payload)
        out.clear()
        if self.closing and transport is not None and not self.closed:
            self.server.drop_subscriptions(self)  # nothing more is sent after a QUIT's +OK
            transport.close()
            self.closed = True

    def write_pending(self) -> None:
        """Write the queued Pub/Sub messages in one ``transport.write``."""
        pending = self.pubsub_out
        payload = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        transport = self.transport
        if transport is not None and not self.closed and not transport.is_closing():
            self.server.net_output_bytes += len(payload)
            transport.write(payload)

    def push(self, reply: bytes) -> None:
        """Send an out-of-band message (MONITOR lines, later Pub/Sub) outside a read batch."""
        if self.transport is not None and not self.closed:
            self.transport.write(reply)

# A multibulk count of a million or more: hiredis would preallocate that list and take seconds
# to free it, so such a read goes to the exact parser. (A loop of bytes.find calls from each "*"
# cost the compiled build six times what this search does.)
def _format_address(address: object) -> str:
    """``ip:port`` as Redis prints it: IPv6 hosts in brackets, unix sockets as ``path:0``."""
    if isinstance(address, tuple) and len(address) >= 2:
        host = address[0]
        if ":" in host:
            return f"[{host}]:{address[1]}"
        return f"{host}:{address[1]}"
    if isinstance(address, str):
        return f"{address}:0"
    return ""


def is_loopback(peer: object) -> bool:
    """A loopback or Unix-socket peer address (protected mode, ``enable-debug-command``)."""
    if not isinstance(peer, tuple):
        return True  # unix socket
    try:
        return ipaddress.ip_address(peer[0]).is_loopback
    except ValueError:
        return False


def _keep_alive(sock: socket.socket, interval: int) -> None:
    """``tcp-keepalive`` as Redis's anetKeepAlive applies it: probes after ``interval`` idle
    seconds, then every third of it, three unanswered probes close the connection, so a peer
    that vanished without a FIN does not hold its client (and its parked command) forever."""
    if interval <= 0:
        return
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    if hasattr(socket, "TCP_KEEPIDLE"):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, interval)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, max(interval // 3, 1))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)
