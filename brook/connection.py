"""One client connection: bytes in, requests parsed, commands run, replies out.

The hot path is :meth:`Client.data_received`: every complete request of a read is parsed by
``hiredis``, looked up in the command table with one dict access, run, and its reply appended to
a list that is written with a single ``transport.write`` at the end of the read. Anything
unusual — a client that must authenticate, a transaction, MONITOR, CLIENT REPLY OFF, a partial or
malformed request, an inline command — switches the client to :meth:`Client.execute`, the general
path that does every check Redis's ``processCommand`` does.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from typing import TYPE_CHECKING

import hiredis

from brook.commands.registry import Command, CommandError
from brook.protocol import resp
from brook.protocol.requests import ProtocolError, RequestParser

if TYPE_CHECKING:
    from brook.blocking import Waiter
    from brook.server import Server

_perf = time.perf_counter

# CLIENT REPLY modes; SKIP_NEXT is set by CLIENT REPLY SKIP itself and becomes SKIP once that
# command's own (suppressed) reply has passed, so exactly the next command is silenced.
REPLY_ON, REPLY_OFF, REPLY_SKIP, REPLY_SKIP_NEXT = 0, 1, 2, 3
# Commands a client in MULTI runs at once instead of queueing (Redis's processCommand list).
_MULTI_IMMEDIATE = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})
_LOADING = "LOADING Redis is loading the dataset in memory"
_NOAUTH = "NOAUTH Authentication required."
# What a RESP2 client in subscribed mode may run (Redis's processCommand check).
_SUBSCRIBED_MODE_COMMANDS = frozenset({
    "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe",
    "punsubscribe", "quit", "reset",
})
_SUBSCRIBED_MODE_ERROR = (
    "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
    "allowed in this context"
)
_INTERNAL_ERROR = "ERR internal error while running '{}': {}"
_EXPECTED_TYPE_CHAR = {int: ":", list: "*", float: ",", bool: "#", dict: "%"}


def unknown_command_error(args: list[bytes]) -> str:
    """Redis's text: the name and up to ~128 characters of quoted arguments, each followed by a
    space."""
    shown = ""
    for arg in args[1:]:
        if len(shown) >= 128:
            break
        shown += "'%s' " % arg.decode("utf-8", "replace")[: 128 - len(shown)]
    name = args[0].decode("utf-8", "replace")[:128]
    return f"ERR unknown command '{name}', with args beginning with: {shown}"


def arity_error(cmd: Command) -> str:
    return f"ERR wrong number of arguments for '{cmd.fullname}' command"


class Pushed(bytes):
    """A reply made of push messages ((un)subscribe confirmations): sent even under CLIENT
    REPLY OFF/SKIP, as Redis sends what it marks CLIENT_PUSHING."""


class Client(asyncio.Protocol):
    """A connected client and its protocol state (database, RESP version, transaction...)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.table = server.command_table
        self.reader = hiredis.Reader()
        self.parser: RequestParser | None = None  # set while the exact parser owns the input
        self.out: list[bytes] = []
        self.transport: asyncio.Transport | None = None
        self.id = 0
        self.addr = ""
        self.laddr = ""
        self.fd = -1
        self.name = b""
        self.lib_name = b""
        self.lib_ver = b""
        self.db = server.keyspace[0]
        self.protocol = 2
        self.authenticated = not server.config.requirepass
        self.in_multi = False
        self.multi_queue: list[tuple[Command, list[bytes]]] = []
        self.multi_error = False
        # (db index, key) -> key was already expired when WATCHed
        self.watched: dict[tuple[int, bytes], bool] = {}
        self.watch_failed = False
        self.reply_mode = REPLY_ON
        self.is_monitor = False
        self.no_evict = False
        self.no_touch = False
        self.closing = False
        self.closed = False
        self.created = time.time()
        self.last_interaction = self.created
        self.last_cmd: Command | None = None  # CLIENT LIST's cmd=
        # Parked by a blocking command (brook.blocking); what it sends meanwhile waits in
        # ``parser`` until it is served.
        self.blocked: Waiter | None = None
        self.reprocessing = False  # its parked command is being run again to serve it
        self.in_exec = False  # running EXEC's queue: blocking commands must not block
        # Pub/Sub subscriptions (brook.commands.pubsub): names -> None, in subscription order.
        self.channels: dict[bytes, None] = {}
        self.patterns: dict[bytes, None] = {}
        self.shard_channels: dict[bytes, None] = {}
        self.obuf_soft_since = 0  # when its output first reached the pubsub soft limit (s)
        # Messages published to it and not yet written: the server writes them once per
        # publisher batch (Server.flush_subscribers), and before anything else it is sent.
        self.pubsub_out: list[bytes] = []
        # What the running command persists instead of its request (brook.persistence.effects).
        self.effects: list[list[bytes]] | None = None
        self.slow = not self.authenticated  # True: every request takes the general path

    # -- connection lifecycle -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            self.fd = sock.fileno()
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        self.addr = _format_address(peer)
        self.laddr = _format_address(local)
        refusal = self.server.admit(self, peer)
        if refusal is not None:
            transport.write(refusal)
            transport.close()
            self.closed = True
            return
        self.refresh_mode()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed:
            self.closed = True
        self.server.forget(self)

    def unblocked(self) -> None:
        """Its parked command replied (brook.blocking): send that, then run what it sent
        meanwhile, on the next loop turn (never inside another client's command)."""
        self.refresh_mode()
        self.flush()
        if self.parser is not None and self.server.loop is not None:
            self.server.loop.call_soon(self._resume)

    def _resume(self) -> None:
        if self.blocked is None and self.parser is not None and not self.closed:
            self._drain_parser()

    def pause_writing(self) -> None:
        if self.channels or self.patterns or self.shard_channels:
            # A subscriber passed its output buffer threshold: the pubsub output limits
            # decide (as Redis, it is not stopped from sending commands).
            self.server.subscriber_congested(self)
            return
        # The peer stopped reading: stop reading its requests too, so replies cannot pile up.
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.server.slow_subscribers.discard(self)
        self.obuf_soft_since = 0
        if self.transport is not None and not self.closing:
            self.transport.resume_reading()

    def close(self) -> None:
        """Close after the replies produced so far are written (QUIT, protocol errors, KILL)."""
        self.closing = True
        self.slow = True

    def kill(self) -> None:
        """Close now (CLIENT KILL, timeouts, SHUTDOWN)."""
        self.closing = True
        if self.blocked is not None:
            self.server.blocking.forget(self)
        self.server.drop_subscriptions(self)
        self.flush()
        if self.transport is not None:
            self.transport.close()

    def refresh_mode(self) -> None:
        """Recompute whether requests may take the fast path."""
        self.slow = bool(
            self.closing
            or self.blocked is not None
            or not self.authenticated
            or self.in_multi
            or self.reply_mode != REPLY_ON
            or self.no_touch
            or self.server.monitors
            or self.parser is not None
            or self.server.loading
            or self.server.aof_write_failed
            # RESP2 subscribed mode: only some commands may run (checked in execute); PING
            # relies on such clients being slow.
            or self.protocol == 2 and bool(self.channels or self.patterns or self.shard_channels)
        )

    # -- input ------------------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        server = self.server
        server.net_input_bytes += len(data)
        self.last_interaction = time.time()
        if self.slow or data[0] != 0x2A or _giant_header(data) is not None:
            # An inline command, a special client state, or a multibulk count of a million or
            # more (hiredis would preallocate that list and take seconds to free it).
            self._data_received_slow(data)
            return
        reader = self.reader
        reader.feed(data)
        out = self.out
        table = self.table
        ready = server.keyspace.ready
        perf = _perf
        slowlog_threshold = server.slowlog_threshold
        join = b"".join
        completed = 0
        arguments = 0
        last: list[bytes] | None = None
        last_cmd: Command | None = None
        failure: ProtocolError | None = None
        reparse = False
        # Commandstats and the slow log. A command Redis flags "fast" (O(1), O(log N)) is not
        # timed on its own: the fast commands of a read are counted in locals and share the
        # read's time left over by the others. Every other command is timed exactly, from the
        # end of the previous one (one clock read each), and can enter the slow log.
        started = clock = perf()
        timed = 0.0
        fast_cmd: Command | None = None  # the (usually only) fast command kind of this read
        fast_calls = 0
        fast_others: dict[Command, int] | None = None
        fast_request = last
        try:
            while True:
                request = reader.gets()
                if request is False:
                    break
                completed += 1
                last = request
                if not request:
                    continue  # "*0" / "*-1": nothing to run, as in Redis
                try:
                    join(request)  # raises TypeError unless every argument is a bulk string
                except TypeError:
                    raise ProtocolError(_first_non_bulk(request))
                cmd = table.get(request[0])
                argc = len(request)
                arguments += argc
                if (
                    self.slow
                    or cmd is None
                    or cmd.handler is None
                    or not cmd.min_args <= argc <= cmd.max_args
                ):
                    if self.closing:
                        break
                    last_cmd = None  # the general path records it itself
                    reply = self.execute(request)
                    if reply is not None:
                        out.append(reply)
                    if ready:
                        server.blocking.serve_ready()
                    clock = perf()
                    if self.blocked is not None:
                        break
                    continue
                last_cmd = cmd
                # Persistence on: a change (dirty moved, or effects declared) is recorded.
                dirty = server.dirty if server.propagating else -1
                if cmd.is_fast:
                    try:
                        out.append(cmd.handler(self, request))
                    except CommandError as err:
                        out.append(server.error_reply(err.message, cmd))
                    except Exception as err:  # a bug must cost one reply, never the server
                        out.append(server.internal_error(cmd, err))
                    if dirty >= 0 and (server.dirty != dirty or self.effects is not None):
                        server.persist(self, request)
                    if cmd is fast_cmd:
                        fast_calls += 1
                    elif fast_cmd is None:
                        fast_cmd, fast_calls = cmd, 1
                    else:
                        if fast_others is None:
                            fast_others = {}
                        fast_others[cmd] = fast_others.get(cmd, 0) + 1
                    fast_request = request
                    clock = 0.0  # stale: the next timed command reads the clock first
                    if ready:
                        server.blocking.serve_ready()
                    continue
                if not clock:
                    clock = perf()
                try:
                    reply = cmd.handler(self, request)
                except CommandError as err:
                    reply = server.error_reply(err.message, cmd)
                except Exception as err:  # a bug must cost one reply, never the server
                    reply = server.internal_error(cmd, err)
                now = perf()
                elapsed = now - clock
                clock = now
                timed += elapsed
                if reply is None:  # parked: its later requests wait until it is served
                    break
                if dirty >= 0 and (server.dirty != dirty or self.effects is not None):
                    server.persist(self, request)
                out.append(reply)
                cmd.calls += 1
                cmd.seconds += elapsed
                if elapsed > slowlog_threshold:
                    server.slowlog_add(self, cmd, request, elapsed)
                if ready:
                    server.blocking.serve_ready()
        except hiredis.ProtocolError:
            # hiredis only says "bad length": the exact parser re-reads the bad request and
            # produces Redis's precise text.
            reparse = True
        except ProtocolError as err:
            failure = err
        # Book-keeping first, before the exact parser may run more commands.
        if last_cmd is not None:
            self.last_cmd = last_cmd
        if fast_cmd is not None:
            self._charge_fast(
                fast_cmd, fast_calls, fast_others, perf() - started - timed, fast_request
            )
        if reparse:
            self._reparse_after(data, completed)
            return
        if self.blocked is not None:
            # Parked mid-read: what follows the blocking request waits in the exact parser
            # (hiredis stopped right after that request, so it holds exactly the rest).
            if reader.has_data():
                self._hold_after(data, completed)
            self.flush()
            return
        if failure is not None:
            self.protocol_error(str(failure))
        elif not self.closing and (
            # Did the read end exactly after the last complete request? hiredis keeps no
            # visible trace of a request cut at an element boundary ("*2\r\n$3\r\nGET\r\n")
            # or inside a header ("*"). A read that ends with CRLF and holds exactly one CRLF
            # per request header and two per argument has no cut request: a cut one ending in
            # CRLF adds its own header's. CRLFs inside values also add some: then the slower
            # check that the read ends with the last request's encoding decides.
            reader.has_data()
            or (
                not data.endswith(b"\r\n")
                or data.count(b"\r\n") != completed + 2 * arguments
            )
            and (not completed or not data.endswith(_encoded(last)))
        ):
            # The exact parser takes over from the cut request's start.
            self._reparse_after(data, completed)
            return
        self.flush()

    def _charge_fast(
        self,
        cmd: Command,
        calls: int,
        others: dict[Command, int] | None,
        seconds: float,
        request: list[bytes] | None,
    ) -> None:
        """Credit the untimed fast commands of a read with their calls and time (shared in
        proportion to calls). One fast command alone gets its exact time, and the slow log."""
        seconds = max(seconds, 0.0)
        if others is None:
            cmd.calls += calls
            cmd.seconds += seconds
            if calls == 1 and request is not None and seconds > self.server.slowlog_threshold:
                self.server.slowlog_add(self, cmd, request, seconds)
            return
        others[cmd] = others.get(cmd, 0) + calls
        total = sum(others.values())
        for each, count in others.items():
            each.calls += count
            each.seconds += seconds * count / total

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
        except ProtocolError as err:
            # hiredis accepted a request Redis rejects (e.g. "+PING" instead of "$4 PING").
            self.protocol_error(str(err))
            self.flush()
            return False
        self.parser = parser
        self.slow = True
        return True

    def _data_received_slow(self, data: bytes) -> None:
        if self.closing:
            return
        if self.parser is None:
            self.parser = RequestParser()
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
        while not self.closing and self.blocked is None:
            try:
                request = parser.next_request(config.proto_max_bulk_len, not self.authenticated)
            except ProtocolError as err:
                self.protocol_error(str(err))
                break
            if request is None:
                break
            reply = self.execute(request)
            if reply is not None:
                out.append(reply)
            if ready:
                self.server.blocking.serve_ready()
        if (not self.closing and self.blocked is None
                and parser.buffered() > config.client_query_buffer_limit):
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

    def protocol_error(self, text: str) -> None:
        self.server.log("verbose", f"Protocol error ({text}) from client: {self.addr}")
        self.out.append(resp.error(f"ERR Protocol error: {text}"))
        self.server.count_error("ERR")
        self.close()

    # -- output -----------------------------------------------------------------------------------

    def flush(self) -> None:
        server = self.server
        aof = server.aof
        if aof is not None and aof.buffer and not server.aof_write_failed:
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

    # -- the general path ---------------------------------------------------------------------

    def execute(self, args: list[bytes]) -> bytes | None:
        """Run one request with every check of Redis's processCommand; returns the reply."""
        cmd = self.table.get(args[0]) if type(args[0]) is bytes else None
        if cmd is None and type(args[0]) is bytes:
            cmd = self.table.get(args[0].lower())
        if cmd is None:
            return self._reject(unknown_command_error(args), None)
        if cmd.subcommands and len(args) >= 2:
            sub = cmd.subcommands.get(args[1].lower())
            if sub is None:
                return self._reject(
                    "ERR unknown subcommand '%s'. Try %s HELP."
                    % (args[1].decode("utf-8", "replace")[:128], cmd.name.upper()),
                    None,
                )
            cmd = sub
        if not cmd.min_args <= len(args) <= cmd.max_args or cmd.handler is None:
            cmd.rejected_calls += 1
            return self._reject(arity_error(cmd), None)
        if not self.authenticated and not cmd.allowed_unauthenticated:
            cmd.rejected_calls += 1
            return self._reject(_NOAUTH, None)
        if self.server.aof_write_failed and cmd.is_write:
            cmd.rejected_calls += 1
            aof = self.server.aof
            return self._reject("MISCONF Errors writing to the AOF file: "
                                f"{aof.last_write_error if aof else ''}", None)
        if self.server.loading and "loading" not in cmd.flags:
            cmd.rejected_calls += 1
            return self._reject(_LOADING, None)
        if self.in_multi and not cmd.allowed_in_multi:
            cmd.rejected_calls += 1
            return self._reject("ERR Command not allowed inside a transaction", None)
        if (self.protocol == 2 and (self.channels or self.patterns or self.shard_channels)
                and (cmd.parent or cmd).name not in _SUBSCRIBED_MODE_COMMANDS):
            self.last_cmd = cmd  # as Redis, which records it before its checks
            return self._reject(_SUBSCRIBED_MODE_ERROR.format(cmd.fullname), cmd)
        if self.in_multi and (cmd.parent or cmd).name not in _MULTI_IMMEDIATE:
            self.multi_queue.append((cmd, args))
            self.last_cmd = cmd
            return self._apply_reply_mode(resp.QUEUED)
        reply = self.call(cmd, args)
        if reply is None:  # parked: the reply mode in force now applies to its reply
            if self.blocked is not None:
                self.blocked.silent = self.reply_mode != REPLY_ON
            self._apply_reply_mode(None)
            return None
        return self._apply_reply_mode(reply)

    def _reject(self, message: str, cmd: Command | None) -> bytes | None:
        if self.in_multi:
            self.multi_error = True
        return self._apply_reply_mode(self.server.error_reply(message, cmd, rejected=True))

    def _apply_reply_mode(self, reply: bytes | None) -> bytes | None:
        mode = self.reply_mode
        if mode == REPLY_ON:
            return reply
        if mode == REPLY_SKIP_NEXT:
            self.reply_mode = REPLY_SKIP
        elif mode == REPLY_SKIP:
            self.reply_mode = REPLY_ON
            self.refresh_mode()
        return reply if type(reply) is Pushed else None

    def call(self, cmd: Command, args: list[bytes]) -> bytes | None:
        """Run a command that passed every check (also used by EXEC for queued commands)."""
        server = self.server
        self.last_cmd = cmd
        # CLIENT NO-TOUCH (such clients always take this path): a read-only command leaves the
        # access times of the keys it names as they were (TOUCH excepted). Restoring them here
        # keeps every lookup on the hot path free of a NO-TOUCH check.
        saved_access = None
        if self.no_touch and not cmd.is_write and cmd.name != "touch":
            access = self.db.access
            saved_access = {key: access.get(key) for key in cmd.key_positions_of(args)}
        dirty = server.dirty
        started = _perf()
        try:
            reply = cmd.handler(self, args)  # type: ignore[misc]
        except CommandError as err:
            reply = server.error_reply(err.message, cmd)
        except Exception as err:
            reply = server.internal_error(cmd, err)
        elapsed = _perf() - started
        if reply is not None and server.propagating:
            server.persist_if_changed(self, args, dirty)
        if saved_access is not None:
            self.db.restore_access(saved_access)
        if reply is None:
            return None  # parked: counted when it is served
        cmd.calls += 1
        cmd.seconds += elapsed
        if elapsed > server.slowlog_threshold:
            server.slowlog_add(self, cmd, args, elapsed)
        if server.monitors:  # after the command, as Redis: a SELECT shows its new database
            server.feed_monitors(self, cmd, args)
        return reply

    # -- transactions and WATCH ---------------------------------------------------------------

    @property
    def last_command(self) -> str:
        """The name of the last command run or queued, as CLIENT LIST's ``cmd=`` shows it."""
        return "NULL" if self.last_cmd is None else self.last_cmd.fullname

    def watched_key_touched(self, db_index: int, key: bytes, by_expiry: bool) -> None:
        expired_at_watch = self.watched.get((db_index, key))
        if expired_at_watch is None:
            return
        if by_expiry and expired_at_watch:
            return  # it was already logically gone when WATCHed: nothing changed
        self.watch_failed = True

    def unwatch_all(self) -> None:
        keyspace = self.server.keyspace
        for db_index, key in self.watched:
            watchers = keyspace[db_index].watchers
            clients = watchers.get(key)
            if clients is not None:
                clients.discard(self)
                if not clients:
                    del watchers[key]
        self.watched.clear()
        self.watch_failed = False

    def __repr__(self) -> str:
        return f"<Client id={self.id} addr={self.addr}>"


_giant_header = re.compile(rb"\*\d{7}").search


def _encoded(request: list[bytes] | None) -> bytes:
    """A request as a client encodes it (used to check that a read ends on a boundary)."""
    if request is None:
        return b"*-1\r\n"
    return b"*%d\r\n%s" % (
        len(request), b"".join([b"$%d\r\n%s\r\n" % (len(a), a) for a in request])
    )


def _first_non_bulk(request: list[object]) -> str:
    """Redis's error for a request element that is not a bulk string (hiredis accepts them)."""
    for arg in request:
        if type(arg) is not bytes:
            return _expected_dollar(arg)
    return "invalid bulk length"


def _expected_dollar(arg: object) -> str:
    if arg is None:
        return "invalid bulk length"
    char = _EXPECTED_TYPE_CHAR.get(type(arg), "-")
    return f"expected '$', got '{char}'"


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
