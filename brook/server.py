"""The server: listeners, clients, periodic jobs, statistics and shutdown.

One event-loop thread runs every command, as in Redis: no locks, a deterministic order.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import secrets
import signal
import ssl
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Final, TextIO

from brook import commands, notify
from brook.acl.rules import AclRuleError, User
from brook.acl.users import (
    CHANNEL,
    COMMAND,
    KEY,
    Acl,
    AclFileError,
    Denial,
    read_acl_file,
)
from brook.blocking import Blocking
from brook.build import BUILD, stale_modules
from brook.commands.registry import Command
from brook.config.errors import ConfigError
from brook.config.parameters import PARAMETERS
from brook.config.store import Config
from brook.connection import Client, is_loopback
from brook.dispatch import Dispatcher
from brook.eviction import Evictor, is_lfu
from brook.keyspace import Database, Keyspace
from brook.listeners import Listeners
from brook.memory import MemoryAccount
from brook.migration import MigrateSockets
from brook.output_limits import OutputLimits
from brook.persistence.aof import AppendOnlyFile
from brook.persistence.effectlog import EffectLog
from brook.persistence.loader import Replayer
from brook.persistence.manager import Persistence, PersistenceError
from brook.pubsub import Registry, Subscribers
from brook.replication.state import Replication
from brook.scripting.engine import Engine, ScriptRun
from brook.session import Session
from brook.tls import TlsConfigError, TlsContexts, build_contexts, tls_wanted
from brook.tracking import Tracking
from brook.types import lists
from brook.version import BROOK_VERSION, VERSION
from brook.while_busy import serve_while_busy

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

# Redis keeps at most 32 arguments of a slow command, each cut to 128 bytes.
# Samples kept per latency event (Redis's LATENCY_TS_LEN).
LATENCY_SAMPLES: Final = 160
# File descriptors kept for listeners, log and persistence files besides one per client.
RESERVED_FDS: Final = 32


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


class Server:
    """Process-wide state shared by all clients."""

    def __init__(self, config: Config) -> None:
        commands.load_all()
        self.config = config
        self.keyspace = Keyspace(config.databases)
        self.keyspace.on_expired = self._expired
        self.pubsub = Registry(on_delivery=self._schedule_subscriber_flush)
        self.clients: dict[int, Client] = {}
        self.output_limits = OutputLimits(config, self.clients, self.log,
                                          self._output_limit_disconnection)
        self.subscribers = Subscribers(self.output_limits, self.pubsub)
        self.commands = commands.registry.CommandTable()  # this server's, with its counters
        self.command_table = self.commands.lookup
        self.dispatcher = Dispatcher(self)
        self.blocking = Blocking(self.keyspace, self.dispatcher)
        # The client whose request is running (Redis's current_client; None between requests
        # and on the fast path, whose sessions are never subscribed): what its command sends
        # it, from EXEC or a script too, follows the command's reply (Dispatcher.execute).
        self.current_client: Session | None = None
        # The script running past busy-reply-threshold: other clients get -BUSY meanwhile.
        self.script_busy: ScriptRun | None = None
        # Client-side caching (CLIENT TRACKING): who caches which keys, and telling them.
        self.tracking = Tracking(self.clients, self.keyspace, self.pubsub,
                                 lambda: self.current_client, self._executing_client,
                                 self._after_turn)
        self.next_client_id = 1
        self.run_id = secrets.token_hex(20)
        self.replication = Replication(self)
        # Whether clients need the dispatcher's replication checks (READONLY on a replica,
        # MASTERDOWN, min-replicas-to-write's NOREPLICAS): they take its general path.
        self.replication_checks = False
        self.replication_ticked = 0.0  # perf_counter of the replication cron's last run
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
        # used_memory (brook.memory): read by INFO and the cron, estimated in between; the
        # start-up reading is taken once listening (INFO used_memory_startup).
        self.memory = MemoryAccount()
        self.evictor = Evictor(self)
        self.migrate_sockets = MigrateSockets()  # MIGRATE's connections to its targets
        self.configure_access()
        # Whether memory was over maxmemory when the running command started (Redis's
        # pre_command_oom_state: scripts refuse their first denyoom write by it).
        self.oom_before_command = False
        # (monotonic time, commands, input bytes, output bytes), one sample per cron tick.
        self.ops_samples: deque[tuple[float, int, int, int]] = deque(maxlen=16)
        self.reset_stats()
        self.latency_events: dict[str, LatencyEvent] = {}
        self.listening = Listeners(lambda: Client(self), self.log)
        self.tls: TlsContexts | None = None  # TLS contexts, when TLS is configured
        self.loop: asyncio.AbstractEventLoop | None = None
        self.shutdown_event: asyncio.Event | None = None
        # Durability: the open AOF (None when appendonly is off) and whether commands record
        # their effects (brook.persistence.effects); ``loading``: a file is being replayed.
        self.aof: AppendOnlyFile | None = None
        # What changed the dataset, encoded once for the AOF (and replicas); ``propagating``
        # says whether anything follows it, so commands know whether to build effects.
        self.effect_log = EffectLog()
        self.propagating = False
        self.loading = False
        self.persistence = Persistence(self)
        self.aof_write_failed = False  # the last AOF write failed: writes get MISCONF
        # Clients whose replies wait for this turn's AOF write (insertion-ordered set).
        self.replies_waiting_for_aof: dict[Client, None] = {}
        self.shutdown_save = False
        self.log_file: TextIO | None = None
        self._last_client_check = 0.0
        self._idle_cursor = 0  # where the next idle-client check starts (_close_idle_clients)
        # Users and their rules; the default user's password is requirepass.
        self.acl = Acl()
        if not config.aclfile:  # (with an ACL file, requirepass is ignored, as in Redis)
            self.acl.set_default_password(config.requirepass)
        lists.LIMIT.set(config.list_max_listpack_size)  # what a list's encoding follows
        self.adjust_open_files_limit()
        self.scripting = Engine(self, self._serve_while_busy)
        self._register_apply_steps()

    # -- configuration ----------------------------------------------------------------------------

    def configure_access(self) -> None:
        """What the keys' access fields hold: LFU counters under an LFU maxmemory-policy."""
        config = self.config
        self.keyspace.configure_access(is_lfu(config.maxmemory_policy), config.lfu_log_factor,
                                       config.lfu_decay_time)

    def _register_apply_steps(self) -> None:
        """What CONFIG SET of each parameter does besides storing the value (Redis's apply
        functions): the part of the server that owns the reaction, registered once. A step
        raises ConfigError to refuse a value (CONFIG SET then restores them all)."""
        apply = self.config.on_apply
        for param in PARAMETERS:  # the TLS files, protocols, ciphers and session cache
            if param.name.startswith("tls-") and param.name not in ("tls-port",
                                                                    "tls-auth-clients"):
                apply(param.name, self._tls_settings_changed)
        apply("tls-port", self._tls_port_changed)
        apply("tls-auth-clients", self._tls_auth_clients_changed)
        apply("port", self._port_changed)
        apply("bind", self._bind_changed)
        slowlog = self.dispatcher.slowlog
        apply("slowlog-log-slower-than", slowlog.update_thresholds)
        apply("latency-monitor-threshold", slowlog.update_thresholds)
        apply("list-max-listpack-size", self._list_limit_changed)
        self.config.on_applied("slowlog-max-len", slowlog.trim)
        self.config.on_applied("slowlog-log-slower-than", slowlog.trim)
        apply("requirepass", self._requirepass_changed)
        apply("dir", self._dir_changed)
        apply("appendonly", self._appendonly_changed)
        apply("appendfsync", self.persistence.fsync_policy_changed)
        apply("client-output-buffer-limit", self.output_limits.limits_changed)
        apply("lua-max-memory", self.scripting.memory_limit_changed)
        for name in ("maxmemory-policy", "lfu-log-factor", "lfu-decay-time"):
            apply(name, self.configure_access)
        apply("min-replicas-to-write", self.refresh_replication_checks)
        apply("min-replicas-max-lag", self.refresh_replication_checks)
        apply("repl-backlog-size", self._backlog_size_changed)
        apply("maxmemory", self._maxmemory_changed)
        apply("maxclients", self._maxclients_changed)

    def _list_limit_changed(self) -> None:
        lists.LIMIT.set(self.config.list_max_listpack_size)

    def _requirepass_changed(self) -> None:
        self.acl.set_default_password(self.config.requirepass)
        self.acl_user_changed(self.acl.default)

    def _dir_changed(self) -> None:
        try:
            os.chdir(self.config.dir)
        except OSError as err:
            raise ConfigError(err.strerror or str(err))

    def _appendonly_changed(self) -> None:
        """Open or close the AOF; a refused ``yes`` leaves ``appendonly`` off."""
        config = self.config
        if config.appendonly and self.aof is None:
            if self.persistence.child_active():
                config.appendonly = False
                raise ConfigError("Background save or rewrite in progress")
            try:
                self.persistence.enable_aof()
            except OSError as err:
                config.appendonly = False
                raise ConfigError(err.strerror or str(err))
        elif not config.appendonly and self.aof is not None:
            self.persistence.disable_aof()

    def _backlog_size_changed(self) -> None:
        backlog = self.replication.backlog
        if backlog is not None:
            backlog.resize(self.config.repl_backlog_size)

    def _maxmemory_changed(self) -> None:
        config = self.config
        if config.maxmemory and config.maxmemory < self.memory.measure() - (
                self.evictor.not_counted()):
            self.log("warning", "WARNING: the new maxmemory value set via CONFIG SET "
                     f"({config.maxmemory}) is smaller than the current memory usage. "
                     "This will result in key eviction and/or the inability to accept "
                     "new write commands depending on the maxmemory-policy.")
        for client in self.clients.values():
            client.refresh_mode()

    def _maxclients_changed(self) -> None:
        config = self.config
        requested = config.maxclients
        self.adjust_open_files_limit()
        if config.maxclients != requested:
            raise ConfigError(
                "The operating system is not able to handle the specified number of "
                f"clients, try with {config.maxclients}"
            )

    def adjust_open_files_limit(self) -> None:
        """Redis's adjustOpenFilesLimit: raise the process's open-files limit to what
        ``maxclients`` needs, or lower ``maxclients`` to what the limit allows."""
        needed = self.config.maxclients + RESERVED_FDS
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft >= needed:
            return
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        best = soft
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            best = target
        except (ValueError, OSError) as err:
            self.log("warning", f"Server can't set maximum open files to {needed} because of "
                                f"OS error: {err}.")
        if best >= needed:
            self.log("notice", f"Increased maximum number of open files to {needed} (it was "
                               f"originally set to {soft}).")
            return
        self.config.maxclients = max(best - RESERVED_FDS, 1)
        self.log(
            "warning",
            f"You requested maxclients of {needed - RESERVED_FDS} requiring at least {needed} "
            f"max file descriptors.",
        )
        self.log(
            "warning",
            f"Current maximum open files is {best}. maxclients has been reduced to "
            f"{self.config.maxclients} to compensate for low ulimit. If you need higher "
            "maxclients increase 'ulimit -n'.",
        )

    # -- clients ----------------------------------------------------------------------------------

    # -- ACL --------------------------------------------------------------------------------

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

    def _load_users(self) -> None:
        """The users of the ``aclfile``, or of the config file's ``user`` lines (each applied
        as ``reset`` and its rules); a start that cannot load them stops, as Redis's."""
        config = self.config
        if config.aclfile and config.user_lines:
            self.log("warning", "Configuring Brook with users defined in the config file and at "
                     "the same setting an ACL file path is invalid. This setup is very likely "
                     "to lead to configuration errors and security holes, please define "
                     "either an ACL file or declare users directly in your config file, but "
                     "not both.")
            raise SystemExit(1)
        if config.aclfile:
            try:
                self.load_acl_file(config.aclfile)
            except AclFileError as err:
                self.log("warning", f"Aborting Brook startup because of ACL errors: {err}")
                raise SystemExit(1) from err
            return
        pubsub_all = config.acl_pubsub_default == "allchannels"
        for name, *rules in config.user_lines:
            try:
                self.acl.set_user(name, ["reset", *rules], pubsub_all)
            except AclRuleError as rule_error:
                message, op = rule_error.args
                self.log("warning", f"Error loading ACL rule '{op}' for the user named "
                                    f"'{name}': {message}")
                self.log("warning", "Critical error while loading ACLs. Exiting.")
                raise SystemExit(1) from rule_error
        config.rewrite_users = self.acl.list_lines

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

    def admit(self, client: Client, peer: object) -> bytes | None:
        """Accept a new connection or return the refusal to write before closing it (a refused
        one is counted as rejected, not as received, as Redis counts them)."""
        if len(self.clients) >= self.config.maxclients:
            self.stats["rejected_connections"] += 1
            return MAX_CLIENTS_REACHED
        if self.config.protected_mode and self.acl.default.nopass and not is_loopback(peer):
            self.stats["rejected_connections"] += 1
            return DENIED
        self.stats["total_connections_received"] += 1
        client.id = self.next_client_id
        self.next_client_id += 1
        self.clients[client.id] = client
        return None

    def forget(self, client: Client) -> None:
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

    def _executing_client(self) -> Session | None:
        """The session running the command at hand: the scripts' own during a script (Redis's
        executing_client), else the current client."""
        scripting = self.scripting
        return scripting.session if scripting.run is not None else self.current_client

    def _after_turn(self, job: Callable[[], object]) -> None:
        """Run ``job`` once this event loop turn's callbacks are done (BCAST invalidations,
        which Redis sends before it sleeps), then write what it sent."""
        if self.loop is not None:
            self.loop.call_soon(self._run_after_turn, job)

    def _run_after_turn(self, job: Callable[[], object]) -> None:
        job()
        if self.pubsub.delivered:
            self.flush_subscribers()

    def _schedule_subscriber_flush(self) -> None:
        """A first publish since the last flush: the publisher's batch end normally writes it
        (Client.flush); this covers publishes outside any batch, such as expiry events."""
        if self.loop is not None:
            self.loop.call_soon(self.flush_subscribers)

    def add_monitor(self, client: Client) -> None:
        client.is_monitor = True
        self.dispatcher.monitors.clients.append(client)
        for other in self.clients.values():
            other.refresh_mode()

    def remove_monitor(self, client: Client) -> None:
        client.is_monitor = False
        monitors = self.dispatcher.monitors.clients
        if client in monitors:
            monitors.remove(client)
        for other in self.clients.values():
            other.refresh_mode()

    # -- replies and statistics ------------------------------------------------------------------

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

    def _output_limit_disconnection(self) -> None:
        self.stats["client_output_buffer_limit_disconnections"] += 1

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

    # -- logging ---------------------------------------------------------------------------------

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

    # -- running ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the listeners (the server then runs until :meth:`shutdown`)."""
        self.loop = self.blocking.loop = asyncio.get_running_loop()
        self.shutdown_event = asyncio.Event()
        config = self.config
        if config.logfile:
            self.log_file = open(config.logfile, "a", encoding="utf-8")  # noqa: SIM115
        self.log("notice", "oO0OoO0OoO0Oo Brook is starting oO0OoO0OoO0Oo")
        self.log(
            "notice",
            f"Brook version={BROOK_VERSION}, redis-compat={VERSION}, bits=64, pid={self.pid}, "
            f"build={BUILD}, just started",
        )
        stale = stale_modules()
        if stale:
            self.log("warning", "Compiled modules older than their source (make build rebuilds "
                                f"them; until then the old code runs): {', '.join(stale)}")
        if config.config_file:
            self.log("notice", "Configuration loaded")
        else:
            self.log(
                "warning",
                "Warning: no config file specified, using the default config. In order to "
                "specify a config file use brook-server /path/to/brook.conf",
            )
        self.persistence.plan_startup()
        await self._listen()
        if config.pidfile:
            try:
                with open(config.pidfile, "w", encoding="utf-8") as handle:
                    handle.write(f"{self.pid}\n")
            except OSError as err:
                self.log("warning", f"Failed to write PID file: {err.strerror}")
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, self._on_signal, sig)
        self.log("notice", f"Running mode=standalone, port={config.port}.")
        self.memory.startup = self.used_memory()
        self.log("notice", "Server initialized")
        self._load_users()
        try:
            await self.persistence.startup()
        except PersistenceError as failure:
            self.log("warning", str(failure))
            raise SystemExit(1) from failure
        for kind, configured in (("tcp", config.port), ("unix", config.unixsocket),
                                 ("tls", config.tls_port)):
            if configured:
                self.log("notice", f"Ready to accept connections {kind}")
        if config.replicaof:
            host, port = config.replicaof
            self.replication.follow(host, int(port))
        self.loop.create_task(self._cron())

    async def _listen(self) -> None:
        """TCP, TLS and the Unix socket, as configured (Redis's initListeners)."""
        config = self.config
        listening = self.listening
        listening.backlog = max(config.tcp_backlog, 1)
        if tls_wanted(config):
            try:
                self._configure_tls()
            except ConfigError:
                self.log("warning", "Failed to configure TLS. Check logs for more info.")
                raise SystemExit(1)
        if config.port:
            await listening.open_tcp(config.bind, config.port)
        if config.tls_port:
            listening.listen_tls(config.bind, config.tls_port, self._tls_server_context())
        if config.unixsocket:
            await listening.open_unix(config.unixsocket, config.unixsocketperm)
        if not listening.any:
            raise OSError("Configured to not listen anywhere, exiting.")

    def _tls_server_context(self) -> ssl.SSLContext | None:
        """The context new TLS connections get: the one for ``tls-auth-clients``."""
        return self.tls.server[self.config.tls_auth_clients] if self.tls is not None else None

    # CONFIG SET of a ``tls-*`` parameter (Redis's applyTlsCfg and applyTLSPort): new contexts
    # are built whole before they replace the old, so a bad file changes nothing; connections
    # already made keep theirs.

    def _tls_auth_clients_changed(self) -> None:
        """Read per connection, not a reconfiguration: new connections get the other context."""
        context = self._tls_server_context()
        if context is not None:
            self.listening.reload_tls(context)

    def _tls_port_changed(self) -> None:
        config = self.config
        listening = self.listening
        if self.tls is None:  # TLS is configured once, when a port first needs it
            self._configure_tls()
        if config.tls_port != listening.tls_port:
            try:
                listening.listen_tls(config.bind, config.tls_port, self._tls_server_context())
            except OSError as err:
                self.log("warning", str(err))
                raise ConfigError("Unable to listen on this port. Check server logs.")

    def _tls_settings_changed(self) -> None:
        """The files, protocols, ciphers, session cache: new contexts, when TLS is wanted."""
        if tls_wanted(self.config):
            self._configure_tls()
            context = self._tls_server_context()
            assert context is not None
            self.listening.reload_tls(context)

    def _port_changed(self) -> None:
        """CONFIG SET port (Redis's updatePort): a failure leaves the old socket serving."""
        self._listen_again(False, "Unable to listen on this port. Check server logs.")

    def _bind_changed(self) -> None:
        """CONFIG SET bind (Redis's applyBind): the TLS listener moves too."""
        self._listen_again(True, "Failed to bind to specified addresses.")

    def _listen_again(self, with_tls: bool, failure: str) -> None:
        """Listen on the configured port and addresses (the TLS port too, ``with_tls``); a
        failure leaves the old sockets serving and is refused with ``failure``."""
        config = self.config
        listening = self.listening
        try:
            listening.listen_tcp(config.bind, config.port)
            if with_tls and config.tls_port:
                listening.listen_tls(config.bind, config.tls_port, self._tls_server_context())
        except OSError as err:
            self.log("warning", str(err))
            raise ConfigError(failure)

    def _configure_tls(self) -> None:
        """New contexts from the ``tls-*`` parameters; ConfigError (the reason logged) when
        they cannot be built."""
        try:
            self.tls = build_contexts(self.config)
        except TlsConfigError as err:
            self.log("warning", str(err))
            raise ConfigError("Unable to update TLS configuration. Check server logs.")

    # -- durability -------------------------------------------------------------------------

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

    def defer_flush(self, client: Client) -> None:
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

    def make_replayer(self) -> Replayer:
        """A replayer of a file's or a master's requests: a detached session of this server
        on the dispatcher's replay lane."""
        return Replayer(self.dispatcher, Session(self), self.log)

    def _serve_while_busy(self, caller: Session) -> None:
        """A script runs past busy-reply-threshold: the other clients' waiting requests (not
        while loading, when no client is served)."""
        if not self.loading:
            serve_while_busy(self.clients.values(), caller, self.flush_effects,
                             self.shutdown_requested)

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

    def _flush_effects_then_replies(self) -> None:
        waiting = self.replies_waiting_for_aof
        self.flush_effects()
        clients = list(waiting)
        waiting.clear()
        for client in clients:
            client.flush()

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

    def _expired(self, db: Database, key: bytes) -> None:
        """A key expired: the keyspace event, and a DEL in the AOF (replay must agree)."""
        notify.expired(self.config, self.pubsub, self.current_client, db, key)
        if self.propagating:
            self.effect_log.feed(db.index, ([b"DEL", key],))

    async def serve_forever(self) -> None:
        await self.start()
        assert self.shutdown_event is not None
        await self.shutdown_event.wait()
        await asyncio.sleep(0.01)  # let the closing transports write what they still hold

    def _on_signal(self, sig: int) -> None:
        name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
        self.log("warning", f"Received {name} scheduling shutdown...")
        self.shutdown()

    def shutdown(self, save: bool | None = None, force: bool = False) -> bool:
        """Run the shutdown hooks (persistence), stop accepting, close every client, then let
        :meth:`serve_forever` return so the process exits 0.

        ``save`` None means: save when save points are configured (Redis's default). A failing
        hook aborts the shutdown unless ``force``; False is then returned and the server runs on.
        """
        if self.shutdown_event is None or self.shutdown_event.is_set():
            return True
        self.log("warning", "User requested shutdown...")
        self.shutdown_save = bool(self.config.save) if save is None else save
        if self.shutdown_save:
            self.log("notice", "Saving the final RDB snapshot before exiting.")
        try:
            self.persistence.shutdown(self.shutdown_save)
        except OSError as err:
            self.log("warning", f"Error trying to save the DB, can't exit: {err}")
            if not force:
                self.log("warning", "Errors trying to shut down the server. Check the logs "
                         "for more information.")
                return False
        self.listening.close()
        link = self.replication.link
        if link is not None:
            link.stop()
        for client in list(self.clients.values()):
            client.kill()
        if self.config.pidfile:
            self.log("notice", "Removing the pid file.")
            with contextlib.suppress(OSError):
                os.unlink(self.config.pidfile)
        self.log("warning", "Brook is now ready to exit, bye bye...")
        self.shutdown_event.set()
        return True

    async def _cron(self) -> None:
        """Periodic work, ``hz`` times a second: active expiry, idle timeouts, ops/sec samples."""
        while self.shutdown_event is not None and not self.shutdown_event.is_set():
            period = 1.0 / self.config.hz
            await asyncio.sleep(period)
            started = time.perf_counter()
            if not self.replication.is_replica:  # a replica's keys expire by its master's DEL
                self.keyspace.active_expire_cycle(period * 0.25)
            cycle_ms = int((time.perf_counter() - started) * 1000)
            if cycle_ms:
                self.latency_add("expire-cycle", cycle_ms)
            self.keyspace.tick(int(time.time()))
            self.persistence.tick()
            if self.replication.waiters:
                self.replication.serve_waiters()  # WAITAOF: a background fsync finished
            if started - self.replication_ticked >= 1.0:  # Redis's replicationCron
                self.replication_ticked = started
                self.replication.tick()
                self.migrate_sockets.close_idle()
            if self.output_limits.slow:  # soft limits expire even when nothing is written
                self.output_limits.check_slow()
            if self.tracking.count:  # a limit lowered by CONFIG SET applies even when idle
                self.tracking.limit(self.config.tracking_table_max_keys)
            now = time.monotonic()
            if self.config.maxmemory_clients:
                self.evictor.evict_clients()
            if self.config.maxmemory:
                # A fresh reading each tick bounds the estimate's drift; evictions the last
                # command left unfinished (their time limit) go on.
                self.memory.measure()
                self.evictor.perform()
            self._close_idle_clients()
            if now - self._last_client_check >= 1.0:
                self._last_client_check = now
                if not self.config.maxmemory:
                    self.memory.measure()  # the peak, and a current figure for the estimate
            self.ops_samples.append(
                (now, self.total_commands(), self.net_input_bytes, self.net_output_bytes)
            )

    def _close_idle_clients(self) -> None:
        """``timeout``: each cron tick checks the next slice of the clients, ``clients / hz``
        of them (at least 5), so each is checked about once a second and a crowd that went
        idle together is closed over a second, not in one pass that stalls everyone else
        (Redis's clientsCron)."""
        timeout = self.config.timeout
        if not timeout or not self.clients:
            return
        clients = list(self.clients.values())
        count = max(len(clients) // self.config.hz, 5)
        start = self._idle_cursor % len(clients)
        self._idle_cursor = start + count
        limit = time.time() - timeout
        for client in clients[start:start + count]:
            if client.last_interaction < limit and not client.is_monitor and not _is_waiting(client):
                self.log("verbose", "Closing idle client")
                client.kill()

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


def _is_waiting(client: Session) -> bool:
    """Blocked and Pub/Sub clients are exempt from the idle timeout, as in Redis."""
    return bool(client.blocked is not None or client.channels or client.patterns
                or client.shard_channels)


