"""A client's protocol state, without its socket: what the dispatcher and the commands see.

A :class:`Session` holds everything Redis keeps in its ``client`` struct that is not I/O: the
selected database, RESP version, authentication, MULTI queue, WATCHed keys, CLIENT REPLY mode,
the parked command, subscriptions, and the replies produced so far (``out``). The connection
(:class:`brook.connection.Client`) is a Session with a transport; a Session alone is a client
that is never connected, which is what the AOF loader and the dispatcher's tests use.

The few things a command needs to know about the socket (CLIENT LIST's buffers, whether it is
a Unix socket, closing it) are methods here that answer for an unconnected session and are
overridden by the connection, so ``commands/`` never imports the connection.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mypy_extensions import mypyc_attr

from brook.keyspace import Watcher

if TYPE_CHECKING:
    from brook.acl.rules import User
    from brook.blocking import Waiter
    from brook.commands.registry import Command
    from brook.context import ServerContext
    from brook.protocol.requests import RequestParser

# CLIENT REPLY modes; SKIP_NEXT is set by CLIENT REPLY SKIP itself and becomes SKIP once that
# command's own (suppressed) reply has passed, so exactly the next command is silenced.
REPLY_ON, REPLY_OFF, REPLY_SKIP, REPLY_SKIP_NEXT = 0, 1, 2, 3


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class Pushed(bytes):
    """A reply made of push messages ((un)subscribe confirmations): sent even under CLIENT
    REPLY OFF/SKIP, as Redis sends what it marks CLIENT_PUSHING."""


class Session(Watcher):
    """One client's state (database, RESP version, transaction, ...), sans I/O."""

    def __init__(self, server: ServerContext) -> None:
        self.server = server
        self.id = 0
        self.addr = ""
        self.laddr = ""
        self.fd = -1
        self.name = b""
        self.lib_name = b""
        self.lib_ver = b""
        self.db = server.keyspace[0]
        # The time its commands see (the server's: frozen while a script or EXEC runs).
        self.clock = server.keyspace.clock
        self.protocol = 2
        self.user = server.acl.default
        self.acl_user: User | None = None  # the user, when its rules must be checked
        self.authenticated = server.acl.default_is_open()
        self.in_multi = False
        self.multi_queue: list[tuple[Command, list[bytes]]] = []
        # The queued arguments' bytes: part of the query buffer for its limit (Redis 7.4).
        self.multi_bytes = 0
        self.multi_error = False
        # (db index, key) -> key was already expired when WATCHed
        self.watched: dict[tuple[int, bytes], bool] = {}
        self.watch_failed = False
        self.reply_mode = REPLY_ON
        self.is_monitor = False
        # A replica of this server (its PSYNC succeeded): the stream goes to it (brook.replication).
        self.is_replica = False
        # What it said with REPLCONF before its PSYNC: listening-port, ip-address, capa.
        self.repl_conf: dict[str, str] = {}
        # Where its last write ends in the replication stream (WAIT's target).
        self.woff = 0
        self.no_evict = False
        self.no_touch = False
        # Cluster mode: ASKING lets its next command (or transaction) reach a slot being
        # imported here; READONLY lets a replica serve its reads of its master's slots.
        self.cluster_asking = False
        self.cluster_readonly = False
        self.closing = False
        self.closed = False
        self.created = time.time()
        self.last_interaction = self.created
        self.last_cmd: Command | None = None  # CLIENT LIST's cmd=
        # The exact request parser while it owns the input (partial, inline or held requests).
        self.parser: RequestParser | None = None
        # Parked by a blocking command (brook.blocking); what it sends meanwhile waits in
        # ``parser`` until it is served.
        self.blocked: Waiter | None = None
        self.reprocessing = False  # its parked command is being run again to serve it
        self.in_exec = False  # running EXEC's queue: blocking commands must not block
        self.in_script = False  # the session scripts run their redis.call commands on
        # Replaying the AOF: a command's bug stops the load; no stats, no MONITOR lines.
        self.replaying = False
        # Pub/Sub subscriptions (brook.pubsub): names -> None, in subscription order.
        self.channels: dict[bytes, None] = {}
        self.patterns: dict[bytes, None] = {}
        self.shard_channels: dict[bytes, None] = {}
        self.obuf_soft_since = 0  # when its output first reached the pubsub soft limit (s)
        # Messages published to it and not yet written: the server writes them once per
        # publisher batch (ServerContext.flush_subscribers), and before anything else it is sent.
        self.pubsub_out: list[bytes] = []
        # Replies produced and not yet written.
        self.out: list[bytes] = []
        # Messages its own running command sent it (a PUBLISH to a channel it listens to, an
        # event of its own write): Redis (7.2+) sends them after the top-level command's whole
        # reply (EXEC's, EVAL's), see Dispatcher.execute. Only a subscribed session gets any.
        # Messages for it are its own while it is the server's ``current_client``.
        self.postponed: list[bytes] = []
        # The read's replies reached the dispatcher's budget: what follows waits until they
        # are written (brook.connection).
        self.output_full = False
        # What the running command persists instead of its request (brook.persistence.effects).
        self.effects: list[list[bytes]] | None = None
        # Or its one effect, already encoded by a hot path (XADD *: see aof.encode_xadd).
        self.encoded_effect: bytes | None = None
        # Client-side caching (brook.tracking): CLIENT TRACKING's mode and options, the client
        # its invalidations go to (0: itself), its BCAST prefixes, and CLIENT CACHING's answer
        # for the next command (Redis's CLIENT_TRACKING* flags).
        self.tracking = False
        self.tracking_bcast = False
        self.tracking_optin = False
        self.tracking_optout = False
        self.tracking_noloop = False
        self.tracking_caching = False
        self.tracking_broken_redirect = False  # the redirect target has gone
        self.tracking_redirect = 0
        self.tracking_prefixes: dict[bytes, None] = {}
        # True: every request takes the dispatcher's general path. Derived by refresh_mode only.
        self.slow = True
        self.refresh_mode()

    # -- the fast-path flag -----------------------------------------------------------------

    def refresh_mode(self) -> None:
        """Recompute whether requests may take the fast path: the one place ``slow`` is set.
        Everything that makes a request need the general path's checks is listed here (a
        user with ACL restrictions keeps the fast path: ``acl_user`` is checked there; so
        does cluster mode: routing's quick test is asked there of each request, and a
        pending ASKING sends the next one to the general path)."""
        server = self.server
        self.acl_user = None if self.user.unrestricted else self.user
        self.slow = bool(
            self.closing
            or self.blocked is not None
            or not self.authenticated
            or self.in_multi
            or self.reply_mode != REPLY_ON
            or self.no_touch
            or server.monitors.clients
            or self.parser is not None
            or server.loading
            or server.aof_write_failed
            or not server.last_bgsave_ok  # MISCONF, stop-writes-on-bgsave-error
            or server.script_busy is not None
            or server.replication_checks  # READONLY, MASTERDOWN, NOREPLICAS
            # RESP2 subscribed mode: only some commands may run (checked by the dispatcher);
            # PING relies on such clients being slow. In RESP3 a subscriber may get messages
            # from its own commands, which execute sends after their replies.
            or self.is_subscribed()
            # Its reads are remembered, and CLIENT CACHING lasts one command: both are done
            # by the general path.
            or self.tracking
        )

    def take_postponed(self) -> bytes:
        """The messages its own command sent it, to be sent after that command's reply."""
        postponed = self.postponed
        payload = postponed[0] if len(postponed) == 1 else b"".join(postponed)
        postponed.clear()
        return payload

    def is_subscribed(self) -> bool:
        return bool(self.channels or self.patterns or self.shard_channels)

    @property
    def last_command(self) -> str:
        """The name of the last command run or queued, as CLIENT LIST's ``cmd=`` shows it."""
        return "NULL" if self.last_cmd is None else self.last_cmd.fullname

    # -- transactions and WATCH -------------------------------------------------------------

    def watched_key_touched(self, db_index: int, key: bytes, by_expiry: bool) -> None:
        expired_at_watch = self.watched.get((db_index, key))
        if expired_at_watch is None:
            return
        if by_expiry and expired_at_watch:
            return  # it was already logically gone when WATCHed: nothing changed
        self.watch_failed = True

    def discard_transaction(self) -> None:
        """Leave MULTI: the queue, its size, its error flag and the WATCHed keys go (DISCARD,
        EXEC, an EXEC the dispatcher refuses, RESET, a replay's abandoned transaction)."""
        self.in_multi = False
        self.multi_queue = []
        self.multi_bytes = 0
        self.multi_error = False
        self.unwatch_all()
        self.refresh_mode()

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

    # -- what the connection provides (an unconnected session answers these itself) --------

    def close(self) -> None:
        """Close after the replies produced so far are written (QUIT, protocol errors)."""
        self.closing = True
        self.refresh_mode()

    def kill(self) -> None:
        """Close now (CLIENT KILL, timeouts, SHUTDOWN)."""
        self.closing = True
        self.refresh_mode()

    def abort(self) -> None:
        """Close now and drop what was not written (output buffer limits)."""
        self.kill()

    def unblocked(self) -> None:
        """Its parked command replied: the connection sends it and resumes reading."""
        self.refresh_mode()

    def push(self, reply: bytes) -> None:
        """Send an out-of-band message (MONITOR lines) outside a read batch."""
        self.out.append(reply)

    def flush(self) -> None:
        """Write the replies produced so far (an unconnected session keeps them in ``out``)."""

    def write_buffer_size(self) -> int:
        """Bytes written and not yet taken by the peer (CLIENT LIST omem, output limits)."""
        return 0

    def is_reading(self) -> bool:
        return False

    def is_unix(self) -> bool:
        return False

    def is_local(self) -> bool:
        """A loopback or Unix-socket peer (``enable-debug-command local``)."""
        return True

    def set_write_limits(self, threshold: int) -> None:
        """Be told (``pause_writing``) when unsent output reaches ``threshold`` bytes; 0 resets
        the defaults."""

    # -- CLIENT LIST ------------------------------------------------------------------------

    def client_type(self) -> str:
        """Redis's getClientType: MONITOR clients count as normal ones."""
        if self.is_replica:
            return "replica"
        return "pubsub" if self.is_subscribed() else "normal"

    def flags(self) -> str:
        """CLIENT LIST's flag letters, in Redis's order; ``N`` when none applies."""
        letters = "S" if self.is_replica else ""
        if self.is_monitor:
            letters += "O"
        if self.is_subscribed():
            letters += "P"
        if self.in_multi:
            letters += "x"
        if self.blocked is not None:
            letters += "b"
        if self.tracking:
            letters += "t"
        if self.tracking_broken_redirect:
            letters += "R"
        if self.tracking_bcast:
            letters += "B"
        if self.watch_failed:
            letters += "d"
        if self.closing:
            letters += "c"
        if self.is_unix():
            letters += "U"
        if self.cluster_readonly:
            letters += "r"
        if self.no_evict:
            letters += "e"
        if self.no_touch:
            letters += "T"
        return letters or "N"

    def memory_bytes(self) -> int:
        """What the client's buffers hold: query buffer, queued MULTI arguments, unsent output
        (CLIENT LIST tot-mem without the running command's arguments; maxmemory-clients)."""
        query_buffer = self.parser.buffered() if self.parser is not None else 0
        return (query_buffer + self.multi_bytes + self.write_buffer_size()
                + sum(map(len, self.out)))

    def info_line(self, now: float, current_args: list[bytes] | None = None) -> bytes:
        """One CLIENT LIST line (without the newline), Redis's fields in Redis's order: tools
        split it on spaces and ``=``. ``current_args`` are the arguments of the command being
        run, for the calling client's ``argv-mem``. Without Redis's allocator, the memory
        fields report what is really buffered (query buffer, queued MULTI arguments, pending
        output)."""
        query_buffer = self.parser.buffered() if self.parser is not None else 0
        argv_mem = sum(len(a) for a in current_args) if current_args else 0
        if current_args:
            # Redis consumes a request from the query buffer only after it ran: while it
            # runs, the buffer still holds it (26 bytes for CLIENT LIST).
            query_buffer += _request_size(current_args)
        multi_mem = self.multi_bytes
        pending = self.write_buffer_size()
        events = ("r" if self.is_reading() else "") + ("w" if pending else "")
        fields = [
            b"id=%d" % self.id,
            b"addr=" + self.addr.encode(),
            b"laddr=" + self.laddr.encode(),
            b"fd=%d" % self.fd,
            b"name=" + self.name,
            b"age=%d" % int(now - self.created),
            b"idle=%d" % int(now - self.last_interaction),
            b"flags=" + self.flags().encode(),
            b"db=%d" % self.db.index,
            b"sub=%d" % len(self.channels),
            b"psub=%d" % len(self.patterns),
            b"ssub=%d" % len(self.shard_channels),
            b"multi=%d" % (len(self.multi_queue) if self.in_multi else -1),
            b"watch=%d" % len(self.watched),
            b"qbuf=%d" % query_buffer,
            b"qbuf-free=0",
            b"argv-mem=%d" % argv_mem,
            b"multi-mem=%d" % multi_mem,
            b"rbs=0",
            b"rbp=0",
            b"obl=%d" % pending,
            b"oll=0",
            b"omem=%d" % pending,
            b"tot-mem=%d" % (query_buffer + argv_mem + multi_mem + pending),
            b"events=" + events.encode(),
            b"cmd=" + self.last_command.encode(),
            b"user=" + self.user.name.encode("utf-8", "surrogateescape"),
            b"redir=%d" % (self.tracking_redirect if self.tracking else -1),
            b"resp=%d" % self.protocol,
            b"lib-name=" + self.lib_name,
            b"lib-ver=" + self.lib_ver,
        ]
        return b" ".join(fields)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.id} addr={self.addr}>"


def _request_size(args: list[bytes]) -> int:
    """The bytes of ``args`` as a RESP multibulk request."""
    size = 3 + len(str(len(args)))
    for arg in args:
        size += len(arg) + 5 + len(str(len(arg)))
    return size
