"""The composition root: builds a server's parts, wires them, listens, and runs until shutdown.

One event-loop thread runs every command, as in Redis: no locks, a deterministic order. Only
the command-line entry (brook.cli) imports this module; every other part sees the server as
the :class:`brook.context.ServerContext` it shares.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import secrets
import signal
import ssl
import time
from collections.abc import Callable
from typing import Final

from brook import commands
from brook.acl.rules import AclRuleError
from brook.acl.users import Acl, AclFileError
from brook.blocking import Blocking
from brook.build import BUILD, stale_modules
from brook.cluster.bus import ClusterBus
from brook.cluster.state import ClusterConfigError, ClusterState
from brook.command_log import Monitors, SlowLog
from brook.config.errors import ConfigError
from brook.config.parameters import PARAMETERS
from brook.config.store import Config
from brook.connection import Client
from brook.context import ServerContext
from brook.dispatch import Dispatcher
from brook.eviction import Evictor, is_lfu
from brook.keyspace import Keyspace
from brook.listeners import Listeners
from brook.memory import MemoryAccount
from brook.migration import MigrateSockets
from brook.output_limits import OutputLimits
from brook.persistence.effectlog import EffectLog
from brook.persistence.manager import Persistence, PersistenceError
from brook.pubsub import Registry, Subscribers
from brook.replication.state import Replication
from brook.scripting.engine import Engine
from brook.session import Session
from brook.tls import TlsConfigError, build_contexts, tls_wanted
from brook.tracking import Tracking
from brook.types import lists
from brook.version import BROOK_VERSION, VERSION
from brook.while_busy import serve_while_busy

# File descriptors kept for listeners, log and persistence files besides one per client.
RESERVED_FDS: Final = 32


class Server(ServerContext):
    """The composition root: builds one server's parts and wires them (the shared state they
    see is :class:`brook.context.ServerContext`), applies CONFIG SET, listens, runs the
    periodic jobs, answers signals and shuts down."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        commands.load_all()
        self.keyspace = Keyspace(config.databases)
        self.keyspace.on_expired = self.expired
        self.pubsub = Registry(on_delivery=self._schedule_subscriber_flush)
        self.output_limits = OutputLimits(config, self.clients, self.log,
                                          self._output_limit_disconnection)
        self.subscribers = Subscribers(self.output_limits, self.pubsub)
        self.commands = commands.registry.CommandTable()
        self.command_table = self.commands.lookup
        self.slowlog = SlowLog(config, self.latency_add)
        self.monitors = Monitors()
        # The parts see the dispatcher through its lanes; connections run on all of it.
        self._dispatcher = Dispatcher(self)
        self.dispatcher = self._dispatcher
        self.blocking = Blocking(self.keyspace, self._dispatcher)
        # Client-side caching (CLIENT TRACKING): who caches which keys, and telling them.
        self.tracking = Tracking(self.clients, self.keyspace, self.pubsub,
                                 lambda: self.current_client, self._executing_client,
                                 self._after_turn)
        self.run_id = secrets.token_hex(20)
        self.replication = Replication(self)
        self.replication_ticked = 0.0  # perf_counter of the replication cron's last run
        # used_memory (brook.memory): read by INFO and the cron, estimated in between; the
        # start-up reading is taken once listening (INFO used_memory_startup).
        self.memory = MemoryAccount()
        self.evictor = Evictor(self)
        self.evictor.watch_removals()
        self.migrate_sockets = MigrateSockets()
        self.configure_access()
        self.reset_stats()
        self.listening = Listeners(self.new_client, self.log)
        # What changed the dataset, encoded once for the AOF (and replicas).
        self.effect_log = EffectLog()
        self.persistence = Persistence(self)
        self.shutdown_save = False
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

    def new_client(self) -> Client:
        """A connection's client, on this server's command path (the listeners' factory)."""
        return Client(self, self._dispatcher)

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
        slowlog = self.slowlog
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
        self.evictor.watch_removals()
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

    # -- ACL --------------------------------------------------------------------------------

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

    def _output_limit_disconnection(self) -> None:
        self.stats["client_output_buffer_limit_disconnections"] += 1

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
        if config.cluster_enabled:
            self._start_cluster()
        await self._listen()
        if config.pidfile:
            try:
                with open(config.pidfile, "w", encoding="utf-8") as handle:
                    handle.write(f"{self.pid}\n")
            except OSError as err:
                self.log("warning", f"Failed to write PID file: {err.strerror}")
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, self._on_signal, sig)
        mode = "cluster" if config.cluster_enabled else "standalone"
        self.log("notice", f"Running mode={mode}, port={config.port}.")
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
        if self.cluster is not None:
            await self._start_cluster_bus(self.cluster)

    def _start_cluster(self) -> None:
        """This node's view of the cluster from nodes.conf, or a new node (Redis's
        clusterInit), the file written at once."""
        config = self.config
        if config.port > 65535 - 10000 and not config.cluster_port:
            self.log("warning", "Redis port number too high. Cluster communication port is "
                                "10,000 port numbers higher than your Redis port. Your Redis "
                                "port number must be 55535 or less.")
            raise SystemExit(1)
        cluster = ClusterState(config)
        try:
            loaded = cluster.load()
        except (ClusterConfigError, ValueError, IndexError) as failure:
            self.log("warning", str(failure) if isinstance(failure, ClusterConfigError)
                     else f"Unrecoverable error: corrupted cluster config file: {failure}")
            raise SystemExit(1) from failure
        if loaded:
            self.log("notice", f"Node configuration loaded, I'm {cluster.myself.name}")
        else:
            self.log("notice", f"No cluster configuration found, I'm {cluster.myself.name}")
        try:
            cluster.save()
        except OSError as error:
            self.log("warning", f"Cannot save the cluster configuration: {error.strerror}")
            raise SystemExit(1) from error
        cluster.update_state()
        self.cluster = cluster

    async def _start_cluster_bus(self, cluster: ClusterState) -> None:
        """The bus port opened, and its cron run ten times a second whatever ``hz`` is, as
        Redis runs clusterCron."""
        bus = ClusterBus(self, cluster)
        try:
            sockets = self.listening.bind(self.config.bind,
                                          self.config.cluster_port or self.config.port + 10000)
        except OSError as error:
            self.log("warning", str(error))
            raise SystemExit(1) from error
        await bus.listen(list(sockets.values()))
        cluster.bus = bus
        asyncio.get_running_loop().create_task(self._cluster_cron(bus))

    async def _cluster_cron(self, bus: ClusterBus) -> None:
        while self.shutdown_event is not None and not self.shutdown_event.is_set():
            await asyncio.sleep(0.1)
            bus.cron()

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

    def listener_lines(self) -> list[str]:
        return self.listening.info_lines(self.config.bind, self.config.port)

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

    def _serve_while_busy(self, caller: Session) -> None:
        """A script runs past busy-reply-threshold: the other clients' waiting requests (not
        while loading, when no client is served)."""
        if not self.loading:
            serve_while_busy(self.clients.values(), caller, self.flush_effects,
                             self.shutdown_requested, self.listening.plain_sockets,
                             self.new_client)

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
        if self.cluster is not None and self.cluster.bus is not None:
            self.cluster.bus.close()
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
            if self.cluster is not None:
                self.cluster.update_state()
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

def _is_waiting(client: Session) -> bool:
    """Blocked and Pub/Sub clients are exempt from the idle timeout, as in Redis."""
    return bool(client.blocked is not None or client.channels or client.patterns
                or client.shard_channels)


