"""What the parts of one server share: its configuration, data, subsystems, counters and flags.

:class:`ServerContext` is the type every part sees the server as (``session.server``): the
subsystems of its layer and below, the state they read (persistence and replication facts,
statistics, the flags that send clients down the dispatcher's checked path) and the operations
on that state more than one part needs. It names nothing above its layer: the command path is
reached through the :class:`CommandPath` lane, declared here and implemented by
:mod:`brook.dispatch`, and the two jobs only the composition root can do (shutting down,
describing its listeners) are methods :class:`brook.server.Server` provides.

The composition root builds the parts and assigns them here; nothing else imports it.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from typing import TYPE_CHECKING, Final, TextIO

from mypy_extensions import trait

from brook import notify
from brook.acl.users import CHANNEL, COMMAND, KEY, read_acl_file
from brook.persistence.loader import Replayer, ReplayLane
from brook.session import Session

if TYPE_CHECKING:
    import asyncio

    from brook.acl.rules import User
    from brook.acl.users import Acl, Denial
    from brook.blocking import Blocking
    from brook.cluster.state import ClusterState
    from brook.command_log import Monitors, SlowLog
    from brook.commands.registry import Command, CommandTable
    from brook.config.store import Config
    from brook.eviction import Evictor
    from brook.keyspace import Database, Keyspace
    from brook.memory import MemoryAccount
    from brook.migration import MigrateSockets
    from brook.output_limits import OutputLimits
    from brook.persistence.aof import AppendOnlyFile
    from brook.persistence.effectlog import EffectLog
    from brook.persistence.manager import Persistence
    from brook.pubsub import Registry, Subscribers
    from brook.replication.state import Replication
    from brook.scripting.engine import Engine, ScriptRun
    from brook.tls import TlsContexts
    from brook.tracking import Tracking

_LOG_MARKS: Final = {"debug": ".", "verbose": "-", "notice": "*", "warning": "#"}
_LOG_LEVELS: Final = {"debug": 0, "verbose": 1, "notice": 2, "warning": 3, "nothing": 4}

DENIED: Final = (
    b"-DENIED Redis is running in protected mode because protected mode is enabled and no "
    b"password is set for the default user. In this mode connections are only accepted from "
    b"the loopback interface. If you want to connect from external computers to Redis you may "
    b"adopt one of the following solutions: 1) Just disable protected mode sending the command "
    b"'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "
    b"the same host the server is running, however MAKE SURE Redis is not publicly accessible "
    b"from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    b"Alternatively you can just disable the protected mode by editing the Redis configuration "
    b"file, and setting the protected mode option to 'no', and then restarting the server. 3) "
    b"If you started the server manually just for testing, restart it with the "
    b"'--protected-mode no' option. 4) Set up an authentication password for the default user. "
    b"NOTE: You only need to do one of the above things in order for the server to start "
    b"accepting connections from the outside.\r\n"
)
MAX_CLIENTS_REACHED: Final = b"-ERR max number of clients reached\r\n"

# Samples kept per latency event (Redis's LATENCY_TS_LEN).
LATENCY_SAMPLES: Final = 160


class LatencyEvent:
    """The samples of one latency event: one per second at most (the worst of that second)."""

    __slots__ = ("samples", "max")

    def __init__(self) -> None:
        self.samples: deque[tuple[int, int]] = deque(maxlen=LATENCY_SAMPLES)
        self.max = 0

    def add(self, now: int, latency_ms: int) -> None:
        if self.samples and self.samples[-1][0] == now:
            if latency_ms > self.samples[-1][1]:
                self.samples[-1] = (now, latency_ms)
        else:
            self.samples.append((now, latency_ms))
        self.max = max(self.max, latency_ms)


@trait
class CommandPath(ReplayLane):
    """What the parts below the command path run commands through: EXEC's queued commands,
    a script's ``redis.call``, a replayed file (brook.dispatch implements it; declared here
    so that nothing below the dispatcher names it, and compiled calls stay native)."""

    def call(self, session: Session, cmd: Command, args: list[bytes]) -> bytes | None:
        """Run a resolved command whose checks were made: its reply."""
        raise NotImplementedError

    def call_queued(self, session: Session, cmd: Command, args: list[bytes]) -> bytes | None:
        """Run a command EXEC took from the queue: the QUEUED lane's checks, then the call."""
        raise NotImplementedError

    def error_reply(self, message: str, cmd: Command | None, rejected: bool = False) -> bytes:
        """An error as the command path answers it (counted in errorstats)."""
        raise NotImplementedError

    def script_call_refusal(self, caller: Session, cmd: Command, args: list[bytes],
                            read_only: bool, wrote: bool, allow_oom: bool) -> str | None:
        """Why a script's ``redis.call`` may not run ``cmd`` (the SCRIPT lane's checks)."""
        raise NotImplementedError

    def script_cluster_refusal(self, caller: Session, cmd: Command, args: list[bytes],
                               slot: int, cross_slot: bool) -> tuple[str | None, int]:
        """Why, in cluster mode, a script may not run ``cmd`` here (its keys on another node
        or in another slot than the run's); the run's slot after it."""
        raise NotImplementedError

    def script_start_refusal(self, caller: Session, flags: tuple[str, ...] | None,
                             read_only_command: bool) -> str | None:
        """Why a script may not start, by the flags it declares."""
        raise NotImplementedError


class ServerContext:
    """One server's shared state and parts (Redis's ``server`` struct); the composition root
    (brook.server.Server) assigns the parts it builds."""

    # The parts, built by the composition root.
    keyspace: Keyspace
    pubsub: Registry
    subscribers: Subscribers
    output_limits: OutputLimits
    commands: CommandTable  # this server's, with its counters
    command_table: dict[bytes, Command]
    dispatcher: CommandPath
    slowlog: SlowLog
    monitors: Monitors
    blocking: Blocking
    tracking: Tracking
    replication: Replication
    memory: MemoryAccount
    evictor: Evictor
    migrate_sockets: MigrateSockets  # MIGRATE's connections to its targets
    effect_log: EffectLog
    persistence: Persistence
    acl: Acl
    scripting: Engine

    def __init__(self, config: Config) -> None:
        self.config = config
        self.clients: dict[int, Session] = {}
        self.next_client_id = 1
        # The client whose request is running (Redis's current_client; None between requests
        # and on the fast path, whose sessions are never subscribed): what its command sends
        # it, from EXEC or a script too, follows the command's reply (Dispatcher.execute).
        self.current_client: Session | None = None
        # The script running past busy-reply-threshold: other clients get -BUSY meanwhile.
        self.script_busy: ScriptRun | None = None
        # Whether clients need the dispatcher's replication checks (READONLY on a replica,
        # MASTERDOWN, min-replicas-to-write's NOREPLICAS): they take its general path.
        self.replication_checks = False
        # Redis Cluster's view of the slots and nodes (None: not in cluster mode), built at
        # start-up from nodes.conf (brook/cluster).
        self.cluster: ClusterState | None = None
        self.started = time.time()
        self.started_monotonic = time.monotonic()
        self.pid = os.getpid()
        self.dirty = 0  # changes since the last save (INFO persistence)
        # Persistence facts for INFO and LASTSAVE; the persistence layer updates them.
        self.last_save_time = int(self.started)
        self.rdb_saves = 0
        self.last_bgsave_ok = True
        self.stats: dict[str, int] = {}
        self.errorstats: dict[str, int] = {}
        self.net_input_bytes = 0
        self.net_output_bytes = 0
        # Whether memory was over maxmemory when the running command started (Redis's
        # pre_command_oom_state: scripts refuse their first denyoom write by it).
        self.oom_before_command = False
        # (monotonic time, commands, input bytes, output bytes), one sample per cron tick.
        self.ops_samples: deque[tuple[float, int, int, int]] = deque(maxlen=16)
        self.latency_events: dict[str, LatencyEvent] = {}
        self.tls: TlsContexts | None = None  # TLS contexts, when TLS is configured
        self.loop: asyncio.AbstractEventLoop | None = None
        self.shutdown_event: asyncio.Event | None = None
        # Durability: the open AOF (None when appendonly is off); ``propagating``: whether
        # anything follows the effect log, so commands know whether to build effects;
        # ``loading``: a file is being replayed.
        self.aof: AppendOnlyFile | None = None
        self.propagating = False
        self.loading = False
        self.aof_write_failed = False  # the last AOF write failed: writes get MISCONF
        # Clients whose replies wait for this turn's AOF write (insertion-ordered set).
        self.replies_waiting_for_aof: dict[Session, None] = {}
        self.log_file: TextIO | None = None

    # -- what only the composition root can do ----------------------------------------------

    def shutdown(self, save: bool | None = None, force: bool = False) -> bool:
        """SHUTDOWN and the signals: persist, close every client and listener, then exit.
        False when a failed save keeps the server running."""
        raise NotImplementedError

    def listener_lines(self) -> list[str]:
        """INFO's ``listenerN`` lines: the sockets the server listens on."""
        raise NotImplementedError

    # -- ACL ----------------------------------------------------------------------------------

    def acl_user_changed(self, user: User) -> None:
        """A user's rules changed: its clients see them from their next command (Redis keeps
        them connected); when the default user needs no password any more, every client
        counts as authenticated, as Redis's authRequired reads it."""
        acl = self.acl
        if acl.default_is_open():
            for client in self.clients.values():
                client.authenticated = True
        for client in list(self.clients.values()):
            if client.user is not user and client.user is not acl.default:
                continue
            if client.user is user and client.is_subscribed() and not (
                    all(acl.allows_channel(user, channel, False)
                        for channel in (*client.channels, *client.shard_channels))
                    and all(acl.allows_channel(user, pattern, True)
                            for pattern in client.patterns)):
                # A subscription its rules no longer allow: Redis closes the connection
                # (ACLKillPubsubClientsIfNeeded).
                client.kill()
                continue
            client.refresh_mode()

    def load_acl_file(self, path: str) -> None:
        """ACL LOAD (and the start with ``aclfile``): the file's users replace all others,
        or nothing changes (AclFileError); clients of users gone are closed."""
        users = read_acl_file(path, self.config.acl_pubsub_default == "allchannels")
        for user in self.acl.replace_users(users):
            self.acl_user_deleted(user, None)
        for user in self.acl.users.values():
            self.acl_user_changed(user)

    def acl_user_deleted(self, user: User, caller: Session | None) -> None:
        """ACL DELUSER: the user's clients are closed (the caller after its reply)."""
        for client in list(self.clients.values()):
            if client.user is user:
                client.user = self.acl.default
                client.authenticated = False
                if client is caller:
                    client.closing = True
                    client.refresh_mode()
                else:
                    client.kill()

    def acl_denied(self, session: Session, cmd: Command, args: list[bytes], denial: Denial,
                   context: str) -> str:
        """Log a denial (ACL LOG, INFO's acl_access_denied_*) and word its -NOPERM."""
        user = session.user
        obj = cmd.fullname.encode() if denial.reason == COMMAND else args[denial.index]
        if context != "lua" and not session.in_exec:
            session.last_cmd = cmd  # Redis's lastcmd is set before the check
        self.acl.add_log(denial.reason, context, obj, user.name.encode("utf-8", "surrogateescape"),
                         session.info_line(time.time()), self.config.acllog_max_len)
        if denial.reason == KEY:
            return "NOPERM No permissions to access a key"
        if denial.reason == CHANNEL:
            return "NOPERM No permissions to access a channel"
        return f"NOPERM User {user.name} has no permissions to run the '{cmd.fullname}' command"

    # -- clients ------------------------------------------------------------------------------

    def admit(self, client: Session, loopback: bool) -> bytes | None:
        """Accept a new connection (from the loopback interface, or not) or return the refusal
        to write before closing it (a refused one is counted as rejected, not as received, as
        Redis counts them)."""
        if len(self.clients) >= self.config.maxclients:
            self.stats["rejected_connections"] += 1
            return MAX_CLIENTS_REACHED
        if self.config.protected_mode and self.acl.default.nopass and not loopback:
            self.stats["rejected_connections"] += 1
            return DENIED
        self.stats["total_connections_received"] += 1
        client.id = self.next_client_id
        self.next_client_id += 1
        self.clients[client.id] = client
        return None

    def forget(self, client: Session) -> None:
        """A connection ended: drop every reference the server holds to it."""
        if self.clients.pop(client.id, None) is None:
            return
        client.unwatch_all()
        if client.tracking:
            self.tracking.disable(client)
        if client.blocked is not None:
            self.blocking.forget(client)
        if client.is_monitor:
            self.remove_monitor(client)
        if client.is_replica:
            self.replication.detach(client)
        self.drop_subscriptions(client)

    def drop_subscriptions(self, client: Session) -> None:
        """The client is going: no channel or pattern may keep a reference to it."""
        self.subscribers.drop(client)

    def flush_subscribers(self) -> None:
        """Write what the last batch published to every subscriber it reached: one write per
        subscriber however many messages it got; then check the slow ones' limits."""
        for subscriber in self.pubsub.take_delivered():
            if subscriber.pubsub_out:  # type: ignore[attr-defined]
                subscriber.write_pending()  # type: ignore[attr-defined]
        if self.output_limits.slow:
            self.output_limits.check_slow()

    def add_monitor(self, client: Session) -> None:
        client.is_monitor = True
        self.monitors.clients.append(client)
        for other in self.clients.values():
            other.refresh_mode()

    def remove_monitor(self, client: Session) -> None:
        client.is_monitor = False
        monitors = self.monitors.clients
        if client in monitors:
            monitors.remove(client)
        for other in self.clients.values():
            other.refresh_mode()

    def begin_busy(self, run: ScriptRun) -> None:
        """A script passed busy-reply-threshold: every client takes the dispatcher's checked
        path, where commands not allowed while busy get -BUSY."""
        self.script_busy = run
        for client in self.clients.values():
            client.refresh_mode()

    def end_busy(self) -> None:
        self.script_busy = None
        for client in self.clients.values():
            client.refresh_mode()

    def shutdown_requested(self) -> bool:
        return self.shutdown_event is not None and self.shutdown_event.is_set()

    # -- statistics ---------------------------------------------------------------------------

    def reset_stats(self) -> None:
        """CONFIG RESETSTAT: Redis's resetServerStats plus the per-command counters."""
        self.stats = {
            "total_connections_received": 0,
            "rejected_connections": 0,
            "total_error_replies": 0,
            "client_query_buffer_limit_disconnections": 0,
            "client_output_buffer_limit_disconnections": 0,
            "total_forks": 0,
            "latest_fork_usec": 0,
        }
        self.errorstats = {}
        self.net_input_bytes = 0
        self.net_output_bytes = 0
        self.keyspace.expired_keys = self.keyspace.hits = self.keyspace.misses = 0
        self.evictor.reset_stats()
        for cmd in self.commands.by_name.values():
            cmd.reset_stats()
        self.ops_samples.clear()

    def count_error(self, code: str) -> None:
        self.stats["total_error_replies"] += 1
        self.errorstats[code] = self.errorstats.get(code, 0) + 1

    def latency_add(self, event: str, latency_ms: int) -> None:
        """Record a latency sample (the latency monitor: LATENCY LATEST/HISTORY)."""
        threshold = self.config.latency_monitor_threshold
        if threshold <= 0 or latency_ms < threshold:
            return
        record = self.latency_events.get(event)
        if record is None:
            record = self.latency_events[event] = LatencyEvent()
        record.add(int(time.time()), latency_ms)

    def total_commands(self) -> int:
        # (read by the cron at every tick: a plain loop, no list of every command built)
        total = 0
        for cmd in self.commands.by_name.values():
            total += cmd.calls
            for sub in cmd.subcommands.values():
                total += sub.calls
        return total

    def used_memory(self) -> int:
        """``used_memory`` read from the allocators now (brook.memory)."""
        return self.memory.measure()

    def _rate(self, index: int) -> float:
        if len(self.ops_samples) < 2:
            return 0.0
        first, last = self.ops_samples[0], self.ops_samples[-1]
        elapsed = last[0] - first[0]
        return (last[index] - first[index]) / elapsed if elapsed > 0 else 0.0

    def instantaneous_ops_per_sec(self) -> int:
        return int(self._rate(1))

    def instantaneous_kbps(self) -> tuple[float, float]:
        """Input and output kilobytes per second over the last samples (INFO stats)."""
        return self._rate(2) / 1024, self._rate(3) / 1024

    # -- logging ------------------------------------------------------------------------------

    def log(self, level: str, message: str) -> None:
        """A Redis-style log line: ``pid:M 21 Nov 2026 09:31:37.700 * message``."""
        if _LOG_LEVELS[level] < _LOG_LEVELS.get(self.config.loglevel, 2):
            return
        now = time.time()
        stamp = time.strftime("%d %b %Y %H:%M:%S", time.localtime(now))
        line = f"{self.pid}:M {stamp}.{int(now * 1000) % 1000:03d} {_LOG_MARKS[level]} {message}\n"
        target = self.log_file or sys.stdout
        try:
            target.write(line)
            target.flush()
        except (OSError, ValueError):
            pass  # a full disk or closed stdout must not take the server down

    # -- durability ---------------------------------------------------------------------------

    def attach_aof(self, aof: AppendOnlyFile | None) -> None:
        """Open (or, with None, close) the AOF: ``propagating`` follows it, so that commands
        read one attribute to know whether to build their effects."""
        self.aof = aof
        self.refresh_propagating()
        self.effect_log.force_select()  # a new file starts with a SELECT of its own
        self.check_aof_status()

    def refresh_propagating(self) -> None:
        """Whether anything follows the effect log: the AOF, or replicas (a master's
        backlog); commands build their effects only then."""
        replication = self.replication
        self.propagating = self.aof is not None or (
            replication.backlog is not None and not replication.is_replica)

    def propagate_to_replicas(self, db_index: int, command: list[bytes]) -> None:
        """A command the replicas run but the AOF leaves out (PUBLISH: their subscribers get
        the message too, as with Redis's PROPAGATE_REPL)."""
        replication = self.replication
        if replication.backlog is not None and not replication.is_replica:
            self.effect_log.feed_replication_only(db_index, command)

    def refresh_replication_checks(self) -> None:
        config = self.config
        self.keyspace.clock.replica = self.replication.is_replica
        checks = self.replication.is_replica or bool(
            config.min_replicas_to_write and config.min_replicas_max_lag)
        if checks != self.replication_checks:
            self.replication_checks = checks
            for client in self.clients.values():
                client.refresh_mode()

    def defer_flush(self, client: Session) -> None:
        """Hold ``client``'s replies until the AOF holds what its commands changed: every
        client served in this turn of the event loop is answered after one write (and with
        ``always`` one fsync) of the AOF, as Redis writes the AOF once before it sleeps."""
        waiting = self.replies_waiting_for_aof
        if not waiting:
            if self.loop is None:
                self.flush_effects()
                client.flush()
                return
            self.loop.call_soon(self._flush_effects_then_replies)
        waiting[client] = None

    def _flush_effects_then_replies(self) -> None:
        waiting = self.replies_waiting_for_aof
        self.flush_effects()
        clients = list(waiting)
        waiting.clear()
        for client in clients:
            client.flush()

    def make_replayer(self) -> Replayer:
        """A replayer of a file's or a master's requests: a detached session of this server
        on the dispatcher's replay lane."""
        return Replayer(self.dispatcher, Session(self), self.log)

    def flush_effects(self) -> None:
        """Hand what the effect log holds to the AOF (before the replies that depend on it go
        out). A failed write keeps the data pending and refuses writes (MISCONF) until a retry
        succeeds."""
        payload, aof_payload = self.effect_log.take()
        replication = self.replication
        aof = self.aof
        if payload and not replication.is_replica:
            if replication.backlog is not None:
                replication.feed(payload)
            elif aof is not None:
                # No replicas: the offset still moves, so WAITAOF can tell what is fsynced
                # (Redis 7.2+ adds one per command then).
                replication.offset += 1
        if aof is None:
            return
        if not aof.write(aof_payload, replication.offset) and aof.fsync_policy == "always":
            # Redis exits here: a write it cannot persist must not be acknowledged.
            self.log("warning", "Can't persist to the AOF with appendfsync always: "
                     f"{aof.last_write_error}. Exiting...")
            os._exit(1)
        self.check_aof_status()
        if replication.waiters:
            replication.serve_waiters()  # WAITAOF: what was just fsynced

    def check_aof_status(self) -> None:
        """Follow the AOF's last write or background fsync: while it fails, clients take the
        general path, where writes get MISCONF (Redis's aof_last_write_status)."""
        aof = self.aof
        failed = aof is not None and not aof.last_write_ok
        if failed == self.aof_write_failed:
            return
        self.aof_write_failed = failed
        if failed:
            self.log("warning", f"Error writing to the AOF file: {aof.last_write_error}")  # type: ignore[union-attr]
        else:
            self.log("notice", "AOF write error looks solved, Brook can write again.")
        for client in self.clients.values():
            client.refresh_mode()

    def expired(self, db: Database, key: bytes) -> None:
        """A key expired: the keyspace event, and a DEL in the AOF (replay must agree)."""
        notify.expired(self.config, self.pubsub, self.current_client, db, key)
        if self.propagating:
            self.effect_log.feed(db.index, ([b"DEL", key],))
