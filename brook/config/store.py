"""One server's configuration (:class:`Config`): the current value of every parameter as a
typed attribute, CONFIG GET and CONFIG SET's rules, and the apply steps that make a new value
take effect.

Values live as attributes (``config.proto_max_bulk_len``), so hot paths read them with one
attribute lookup; the class is compiled, and a compiled class has exactly the attributes it
declares, so each parameter of the table is declared here too (tests/config/test_config_table.py
checks that the two agree).

An apply step is what a server does when CONFIG SET changes a parameter (Redis's ``apply``
functions of ``config.c``). The part of the server that owns the reaction registers it with
:meth:`Config.on_apply` when the server is built, so CONFIG SET is a table lookup and this
layer imports nothing above it: only the modules of :mod:`brook.config` and :mod:`brook.glob`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Final

from brook import glob
from brook.config.errors import ConfigError, ConfigSetError
from brook.config.parameters import PARAMETERS, PARAMETERS_BY_NAME, Parameter, lookup
from brook.config.rewrite import rewrite_file

_GLOB_CHARS: Final = frozenset("[*?")


def _check_canonical(name: str) -> None:
    """Steps are registered under a parameter's canonical name, never an alias."""
    param = PARAMETERS_BY_NAME[name]
    if param.name != name:
        raise ValueError(f"apply steps are registered under {param.name!r}, not {name!r}")


class Config:
    """The server's current configuration; each parameter is a typed attribute."""

    port: int
    bind: list[str]
    unixsocket: str
    unixsocketperm: int
    protected_mode: bool
    tls_port: int
    tls_cert_file: str
    tls_key_file: str
    tls_key_file_pass: str
    tls_client_cert_file: str
    tls_client_key_file: str
    tls_client_key_file_pass: str
    tls_dh_params_file: str
    tls_ca_cert_file: str
    tls_ca_cert_dir: str
    tls_auth_clients: str
    tls_protocols: str
    tls_ciphers: str
    tls_ciphersuites: str
    tls_prefer_server_ciphers: bool
    tls_session_caching: bool
    tls_session_cache_size: int
    tls_session_cache_timeout: int
    tls_replication: bool
    tls_cluster: bool
    max_new_tls_connections_per_cycle: int
    requirepass: str
    maxclients: int
    timeout: int
    tcp_keepalive: int
    tcp_backlog: int
    proto_max_bulk_len: int
    client_query_buffer_limit: int
    client_output_buffer_limit: dict[str, tuple[int, int, int]]
    databases: int
    hz: int
    loglevel: str
    logfile: str
    pidfile: str
    daemonize: bool
    supervised: str
    dir: str
    dbfilename: str
    save: list[tuple[int, int]]
    appendonly: bool
    enable_debug_command: str
    enable_protected_configs: str
    slowlog_log_slower_than: int
    slowlog_max_len: int
    latency_monitor_threshold: int
    repl_backlog_size: int
    maxmemory: int
    maxmemory_policy: str
    maxmemory_samples: int
    maxmemory_eviction_tenacity: int
    maxmemory_clients: int
    lfu_log_factor: int
    lfu_decay_time: int
    notify_keyspace_events: int
    stream_node_max_bytes: int
    stream_node_max_entries: int
    stream_idmp_duration: int
    stream_idmp_maxsize: int
    # The rest of PARAMETERS (a compiled Config has exactly the attributes declared here):
    io_threads: int
    io_threads_do_reads: bool
    dynamic_hz: bool
    syslog_enabled: bool
    syslog_ident: str
    syslog_facility: str
    always_show_logo: bool
    set_proc_title: bool
    proc_title_template: str
    locale_collate: str
    crash_log_enabled: bool
    crash_memcheck_enabled: bool
    enable_module_command: str
    oom_score_adj: str
    oom_score_adj_values: list[int]
    disable_thp: str
    jemalloc_bg_thread: bool
    activerehashing: bool
    active_expire_effort: int
    cluster_enabled: bool
    cluster_config_file: str
    cluster_port: int
    cluster_node_timeout: int
    cluster_require_full_coverage: bool
    cluster_allow_reads_when_down: bool
    cluster_allow_pubsubshard_when_down: bool
    cluster_allow_replica_migration: bool
    cluster_replica_no_failover: bool
    cluster_replica_validity_factor: int
    cluster_migration_barrier: int
    cluster_announce_ip: str
    cluster_announce_port: int
    cluster_announce_bus_port: int
    cluster_announce_tls_port: int
    cluster_announce_hostname: str
    cluster_announce_human_nodename: str
    cluster_preferred_endpoint_type: str
    cluster_link_sendbuf_limit: int
    acllog_max_len: int
    aclfile: str
    acl_pubsub_default: str
    tracking_table_max_keys: int
    busy_reply_threshold: int
    lua_max_memory: int
    stop_writes_on_bgsave_error: bool
    rdbcompression: bool
    rdbchecksum: bool
    snapshot_format: str
    rdb_del_sync_files: bool
    rdb_save_incremental_fsync: bool
    sanitize_dump_payload: str
    appendfilename: str
    appenddirname: str
    appendfsync: str
    no_appendfsync_on_rewrite: bool
    auto_aof_rewrite_percentage: int
    auto_aof_rewrite_min_size: int
    aof_load_truncated: bool
    aof_use_rdb_preamble: bool
    aof_timestamp_enabled: bool
    aof_rewrite_incremental_fsync: bool
    replica_serve_stale_data: bool
    replica_read_only: bool
    replica_ignore_maxmemory: bool
    repl_diskless_sync: bool
    repl_diskless_sync_delay: int
    repl_diskless_sync_max_replicas: int
    repl_diskless_load: str
    repl_disable_tcp_nodelay: bool
    replica_priority: int
    repl_backlog_ttl: int
    repl_timeout: int
    min_replicas_to_write: int
    min_replicas_max_lag: int
    masterauth: str
    replicaof: list[str]
    repl_ping_replica_period: int
    replica_announce_ip: str
    replica_announce_port: int
    replica_announced: bool
    masteruser: str
    latency_tracking: bool
    latency_tracking_info_percentiles: list[float]
    lazyfree_lazy_eviction: bool
    lazyfree_lazy_expire: bool
    lazyfree_lazy_server_del: bool
    lazyfree_lazy_user_del: bool
    lazyfree_lazy_user_flush: bool
    replica_lazy_flush: bool
    hash_max_listpack_entries: int
    hash_max_listpack_value: int
    list_max_listpack_size: int
    list_compress_depth: int
    set_max_intset_entries: int
    set_max_listpack_entries: int
    set_max_listpack_value: int
    zset_max_listpack_entries: int
    zset_max_listpack_value: int
    hll_sparse_max_bytes: int
    rdb_key_save_delay: int
    key_load_delay: int

    def __init__(self) -> None:
        # Per parameter (canonical name), what makes a new value take effect, in the order
        # registered (see on_apply).
        self.apply_steps: dict[str, list[Callable[[], None]]] = {}
        # What may only happen once a CONFIG SET has succeeded as a whole (see on_applied).
        self.applied_steps: dict[str, list[Callable[[], None]]] = {}
        self.config_file: str | None = None  # absolute path, for CONFIG REWRITE and INFO
        # INFO's executable: made absolute now, before a "dir" setting changes directory.
        self.executable = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
        # ``user <name> <rule> ...`` lines (the server applies them once its commands exist),
        # and what CONFIG REWRITE writes for users (the server's ACL LIST, set by the server).
        self.user_lines: list[list[str]] = []
        self.rewrite_users: Callable[[], list[str]] | None = None
        for param in PARAMETERS:
            setattr(self, param.attr, param.parse(param.default))

    def on_apply(self, name: str, step: Callable[[], None]) -> None:
        """Run ``step`` each time CONFIG SET sets the parameter ``name`` (its canonical name).
        A step reads the new value from this Config; it may raise :class:`ConfigError` to
        refuse a value it cannot apply, and CONFIG SET then restores every parameter it set
        and runs their steps again (the restored values are applied as well as they can be)."""
        _check_canonical(name)
        self.apply_steps.setdefault(name, []).append(step)

    def on_applied(self, name: str, step: Callable[[], None]) -> None:
        """Run ``step`` once a CONFIG SET that set ``name`` has succeeded as a whole: for what
        cannot be undone (trimming the slow log), which Redis does after the command, so a
        CONFIG SET refused and rolled back never does it."""
        _check_canonical(name)
        self.applied_steps.setdefault(name, []).append(step)

    # -- reading -------------------------------------------------------------------------------

    def get(self, name: str) -> str:
        param = PARAMETERS_BY_NAME[name.lower()]
        if param.name == "dir":
            return os.getcwd()
        return param.render(getattr(self, param.attr))

    def matching(self, pattern: str) -> dict[str, str]:
        """CONFIG GET for one pattern: an exact name is echoed as given, a glob pattern matches
        every name and alias case-insensitively (Redis's ``stringmatch`` rules)."""
        if not _GLOB_CHARS.intersection(pattern):
            return {pattern: self.get(pattern)} if pattern.lower() in PARAMETERS_BY_NAME else {}
        matcher = glob.matcher(pattern.encode("utf-8", "surrogateescape"), True)
        return {
            name: self.get(name) for name, param in PARAMETERS_BY_NAME.items()
            if not param.hidden and matcher(name.encode())
        }

    # -- writing -------------------------------------------------------------------------------

    def set(self, name: str, text: str, *, at_startup: bool = False) -> None:
        """Parse and apply one value; raises KeyError for unknown names, ConfigError otherwise."""
        param = PARAMETERS_BY_NAME[name.lower()]
        if not at_startup:
            if not param.mutable:
                raise ConfigError("can't set immutable config")
            if param.protected and self.enable_protected_configs != "yes":
                raise ConfigError("can't set protected config")
        setattr(self, param.attr, param.parse(text, getattr(self, param.attr)))
        self._run_apply_steps([param.name])
        self._run_applied_steps([param.name])

    def set_many(self, pairs: list[tuple[str, str]], allow_protected: bool = False) -> None:
        """CONFIG SET: every value is checked before any is applied, and a value the server
        refuses to apply rolls all of them back. Errors are :class:`ConfigSetError`."""
        params: list[tuple[str, Parameter]] = []
        seen: set[str] = set()
        for given, _ in pairs:
            param = lookup(given)
            if param is None:
                raise ConfigSetError(
                    f"Unknown option or number of arguments for CONFIG SET - '{given}'"
                )
            if not param.mutable:
                raise ConfigSetError.about(given, "can't set immutable config")
            if param.protected and not allow_protected:
                raise ConfigSetError.about(given, "can't set protected config")
            if given.lower() in seen:
                raise ConfigSetError.about(given, "duplicate parameter")
            seen.add(given.lower())
            params.append((given, param))
        previous = {param.attr: getattr(self, param.attr) for _, param in params}
        for (given, param), (_, text) in zip(params, pairs, strict=True):
            try:
                setattr(self, param.attr, param.parse(text, getattr(self, param.attr)))
            except ConfigError as err:
                self._restore(previous)
                raise ConfigSetError.about(given, str(err))
        try:
            self._run_apply_steps([param.name for _, param in params])
        except ConfigSetError:
            self._restore(previous)
            self._run_apply_steps([param.name for _, param in params], strict=False)
            raise
        self._run_applied_steps([param.name for _, param in params])

    def _restore(self, previous: dict[str, object]) -> None:
        for attr, value in previous.items():
            setattr(self, attr, value)

    def _run_apply_steps(self, names: list[str], strict: bool = True) -> None:
        """Run the apply steps of ``names`` in that order (each parameter once); ``strict``:
        the first refusal stops them and is raised, otherwise refusals are ignored."""
        for name in dict.fromkeys(names):
            for step in self.apply_steps.get(name, []):
                try:
                    step()
                except ConfigError as err:
                    if strict:
                        raise ConfigSetError.about(name, str(err))

    def _run_applied_steps(self, names: list[str]) -> None:
        for name in dict.fromkeys(names):
            for step in self.applied_steps.get(name, []):
                step()

    # -- CONFIG REWRITE --------------------------------------------------------------------------

    def rewrite(self) -> None:
        """Write the configuration back to its file (brook.config.rewrite); ConfigError when
        it cannot."""
        rewrite_file(self)
