"""The parameter table: every parameter Brook knows, declared once with its type, default,
limits and aliases, and whether ``CONFIG SET`` may change it at run time.

A :class:`Parameter` turns a value's text into its typed value and back; it knows nothing of a
running server. What a server does when a value changes is its apply step, registered on the
server's own :class:`~brook.config.store.Config` (this table is shared by every server of a
process, so it holds no server's state). May import only the other value modules of
:mod:`brook.config` (errors, values, notify_flags).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from brook.config.errors import ConfigError
from brook.config.notify_flags import parse_keyspace_events, render_keyspace_events
from brook.config.values import (
    parse_bool,
    parse_buffer_limits,
    parse_int,
    parse_memory,
    parse_memory_or_percent,
    parse_octal,
    parse_oom_values,
    parse_percentiles,
    parse_replicaof,
    parse_save,
    parse_words,
    render_buffer_limits,
    render_memory_or_percent,
    render_percentiles,
    render_save,
    render_words,
)

INT_MAX: Final = 2**31 - 1
INT_MIN: Final = -(2**31)
UINT_MAX: Final = 2**32 - 1
LONG_MAX: Final = 2**63 - 1
HZ_MIN, HZ_MAX = 1, 500  # Redis clamps hz to this range instead of rejecting it


@dataclass
class Parameter:
    """One configuration parameter.

    ``kind`` is int | memory | bool | enum | string | special; a special parameter brings its
    own ``parser(text, current_value)`` and ``renderer(value)``. ``multi_arg`` parameters take
    several words in a config file (``save 900 1 300 10``).
    """

    name: str
    kind: str
    default: str
    mutable: bool = True
    protected: bool = False
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    sensitive: bool = False
    hidden: bool = False  # left out of CONFIG GET patterns: read only by its exact name
    multi_arg: bool = False
    clamp: tuple[int, int] | None = None
    parser: Callable[[str, object], object] | None = field(default=None, repr=False)
    renderer: Callable[[object], str] | None = field(default=None, repr=False)

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")

    def parse(self, text: str, current: object = None) -> object:
        kind = self.kind
        if kind == "bool":
            return parse_bool(text)
        if kind in ("int", "memory"):
            value = parse_int(text) if kind == "int" else parse_memory(text)
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                raise ConfigError(
                    f"argument must be between {self.minimum} and {self.maximum} inclusive"
                )
            if self.clamp is not None:
                value = min(max(value, self.clamp[0]), self.clamp[1])
            return value
        if kind == "enum":
            lowered = text.lower()
            if lowered not in self.choices:
                raise ConfigError(
                    f"argument(s) must be one of the following: {', '.join(self.choices)}"
                )
            return lowered
        if kind == "special":
            assert self.parser is not None
            return self.parser(text, current)
        return text

    def render(self, value: object) -> str:
        if self.kind == "bool":
            return "yes" if value else "no"
        if self.renderer is not None:
            return self.renderer(value)
        return str(value)


def _int(name: str, default: int, low: int, high: int, **kw: Any) -> Parameter:
    return Parameter(name, "int", str(default), minimum=low, maximum=high, **kw)


def _mem(name: str, default: str, low: int = 0, high: int = LONG_MAX, **kw: Any) -> Parameter:
    return Parameter(name, "memory", default, minimum=low, maximum=high, **kw)


def _bool(name: str, default: str, **kw: Any) -> Parameter:
    return Parameter(name, "bool", default, **kw)


def _enum(name: str, default: str, choices: tuple[str, ...], **kw: Any) -> Parameter:
    return Parameter(name, "enum", default, choices=choices, **kw)


def _str(name: str, default: str, **kw: Any) -> Parameter:
    return Parameter(name, "string", default, **kw)


def _special(
    name: str, default: str, parser: Callable[[str, object], object],
    renderer: Callable[[object], str] = render_words, **kw: Any,
) -> Parameter:
    return Parameter(name, "special", default, parser=parser, renderer=renderer, multi_arg=True, **kw)


_PROTECTED_ACTION: Final = ("no", "yes", "local")

# Redis's parameters that Brook honours or that tools read, with Redis's defaults and limits
# (a stock redis.conf loads unchanged). Brook differs from Redis only in binding to loopback by
# default and in having no save points until persistence is configured.
PARAMETERS: Final[list[Parameter]] = [
    # Network
    _int("port", 6379, 0, 65535),
    _special("bind", "127.0.0.1 -::1", parse_words),
    _str("unixsocket", "", mutable=False),
    _special("unixsocketperm", "0", parse_octal, lambda v: f"{v:o}", mutable=False),
    _bool("protected-mode", "yes"),
    # TLS (brook.tls): a second port, and TLS links to a master
    _int("tls-port", 0, 0, 65535),
    _str("tls-cert-file", ""),
    _str("tls-key-file", ""),
    _str("tls-key-file-pass", "", sensitive=True),
    _str("tls-client-cert-file", ""),
    _str("tls-client-key-file", ""),
    _str("tls-client-key-file-pass", "", sensitive=True),
    _str("tls-dh-params-file", ""),
    _str("tls-ca-cert-file", ""),
    _str("tls-ca-cert-dir", ""),
    _enum("tls-auth-clients", "yes", ("no", "yes", "optional")),
    _str("tls-protocols", ""),
    _str("tls-ciphers", ""),
    _str("tls-ciphersuites", ""),
    _bool("tls-prefer-server-ciphers", "no"),
    _bool("tls-session-caching", "yes"),
    _int("tls-session-cache-size", 20 * 1024, 0, INT_MAX),
    _int("tls-session-cache-timeout", 300, 0, INT_MAX),
    _bool("tls-replication", "no"),
    _bool("tls-cluster", "no"),
    _int("max-new-tls-connections-per-cycle", 1, 1, 1000),
    _int("tcp-backlog", 511, 0, INT_MAX, mutable=False),
    _int("tcp-keepalive", 300, 0, INT_MAX),
    _int("timeout", 0, 0, INT_MAX),
    _int("maxclients", 10000, 1, UINT_MAX),
    _str("requirepass", "", sensitive=True),
    _mem("proto-max-bulk-len", "512mb", 1024 * 1024),
    _mem("client-query-buffer-limit", "1gb", 1024 * 1024),
    _special(
        "client-output-buffer-limit",
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        parse_buffer_limits, render_buffer_limits,
    ),
    _int("io-threads", 1, 1, 128, mutable=False),
    _bool("io-threads-do-reads", "no", mutable=False),
    # General
    _int("databases", 16, 1, INT_MAX, mutable=False),
    _int("hz", 10, 0, INT_MAX, clamp=(HZ_MIN, HZ_MAX)),
    _bool("dynamic-hz", "yes"),
    _enum("loglevel", "notice", ("debug", "verbose", "notice", "warning", "nothing")),
    _str("logfile", "", mutable=False),
    _bool("syslog-enabled", "no", mutable=False),
    _str("syslog-ident", "redis", mutable=False),
    _enum("syslog-facility", "local0", ("user", "local0", "local1", "local2", "local3",
                                        "local4", "local5", "local6", "local7"), mutable=False),
    _str("pidfile", "", mutable=False),
    _bool("daemonize", "no", mutable=False),
    _enum("supervised", "no", ("upstart", "systemd", "auto", "no"), mutable=False),
    _bool("always-show-logo", "no", mutable=False),
    _bool("set-proc-title", "yes", mutable=False),
    _str("proc-title-template", "{title} {listen-addr} {server-mode}"),
    _str("locale-collate", ""),
    _bool("crash-log-enabled", "yes"),
    _bool("crash-memcheck-enabled", "yes"),
    _enum("enable-protected-configs", "no", _PROTECTED_ACTION, mutable=False),
    _enum("enable-debug-command", "no", _PROTECTED_ACTION, mutable=False),
    _enum("enable-module-command", "no", _PROTECTED_ACTION, mutable=False),
    _enum("oom-score-adj", "no", ("no", "yes", "relative", "absolute")),
    _special("oom-score-adj-values", "0 200 800", parse_oom_values),
    _enum("disable-thp", "yes", ("yes", "no")),
    _bool("jemalloc-bg-thread", "yes"),
    _bool("activerehashing", "yes"),
    _int("active-expire-effort", 1, 1, 10),
    _bool("cluster-enabled", "no", mutable=False),
    # Redis Cluster (brook/cluster, docs/cluster.md)
    _str("cluster-config-file", "nodes.conf", mutable=False),
    _int("cluster-port", 0, 0, 65535, mutable=False),
    _int("cluster-node-timeout", 15000, 0, LONG_MAX),
    _bool("cluster-require-full-coverage", "yes"),
    _bool("cluster-allow-reads-when-down", "no"),
    _bool("cluster-allow-pubsubshard-when-down", "yes"),
    _bool("cluster-allow-replica-migration", "yes"),
    _bool("cluster-replica-no-failover", "no", aliases=("cluster-slave-no-failover",)),
    _int("cluster-replica-validity-factor", 10, 0, INT_MAX,
         aliases=("cluster-slave-validity-factor",)),
    _int("cluster-migration-barrier", 1, 0, INT_MAX),
    _str("cluster-announce-ip", ""),
    _int("cluster-announce-port", 0, 0, 65535),
    _int("cluster-announce-bus-port", 0, 0, 65535),
    _int("cluster-announce-tls-port", 0, 0, 65535),
    _str("cluster-announce-hostname", ""),
    _str("cluster-announce-human-nodename", ""),
    _enum("cluster-preferred-endpoint-type", "ip", ("ip", "hostname", "unknown-endpoint")),
    _mem("cluster-link-sendbuf-limit", "0"),
    _int("acllog-max-len", 128, 0, LONG_MAX),
    _str("aclfile", "", mutable=False),
    _enum("acl-pubsub-default", "resetchannels", ("resetchannels", "allchannels")),
    _int("tracking-table-max-keys", 1000000, 0, LONG_MAX),
    _int("busy-reply-threshold", 5000, 0, LONG_MAX, aliases=("lua-time-limit",)),
    # Brook's own: the most each Lua interpreter may allocate (0: no limit); a script that
    # needs more gets "not enough memory" instead of growing the server without bound.
    _mem("lua-max-memory", "1gb"),
    # Persistence (read by the persistence layer and by tools such as redis-benchmark)
    _str("dir", ".", protected=True),
    _str("dbfilename", "dump.rdb", protected=True),
    _special("save", "", parse_save, render_save),
    _bool("stop-writes-on-bgsave-error", "yes"),
    _bool("rdbcompression", "yes"),
    _bool("rdbchecksum", "yes"),
    # Brook's own: what SAVE, BGSAVE and a full synchronisation write: Redis's RDB file,
    # which every Redis tool reads, or Brook's snapshot (docs/snapshot-format.md). Either kind
    # loads whatever this says (brook/persistence/dataset.py).
    _enum("snapshot-format", "rdb", ("rdb", "brook")),
    _bool("rdb-del-sync-files", "no"),
    _bool("rdb-save-incremental-fsync", "yes"),
    _enum("sanitize-dump-payload", "no", ("no", "yes", "clients")),
    _bool("appendonly", "no"),
    _str("appendfilename", "appendonly.aof", mutable=False),
    _str("appenddirname", "appendonlydir", mutable=False),
    _enum("appendfsync", "everysec", ("everysec", "always", "no")),
    _bool("no-appendfsync-on-rewrite", "no"),
    _int("auto-aof-rewrite-percentage", 100, 0, INT_MAX),
    _mem("auto-aof-rewrite-min-size", "64mb"),
    _bool("aof-load-truncated", "yes"),
    _bool("aof-use-rdb-preamble", "yes"),
    _bool("aof-timestamp-enabled", "no"),
    _bool("aof-rewrite-incremental-fsync", "yes"),
    # Replication (brook/replication)
    _special("replicaof", "", parse_replicaof, mutable=False, aliases=("slaveof",)),
    _int("repl-ping-replica-period", 10, 1, INT_MAX, aliases=("repl-ping-slave-period",)),
    _str("replica-announce-ip", "", aliases=("slave-announce-ip",)),
    _int("replica-announce-port", 0, 0, 65535, aliases=("slave-announce-port",)),
    _bool("replica-announced", "yes"),
    _bool("replica-serve-stale-data", "yes", aliases=("slave-serve-stale-data",)),
    _bool("replica-read-only", "yes", aliases=("slave-read-only",)),
    _bool("replica-ignore-maxmemory", "yes", aliases=("slave-ignore-maxmemory",)),
    _bool("repl-diskless-sync", "yes"),
    _int("repl-diskless-sync-delay", 5, 0, INT_MAX),
    _int("repl-diskless-sync-max-replicas", 0, 0, INT_MAX),
    _enum("repl-diskless-load", "disabled", ("disabled", "on-empty-db", "swapdb")),
    _bool("repl-disable-tcp-nodelay", "no"),
    _int("replica-priority", 100, 0, INT_MAX, aliases=("slave-priority",)),
    _mem("repl-backlog-size", "1mb", 1),
    _int("repl-backlog-ttl", 3600, 0, INT_MAX),
    _int("repl-timeout", 60, 1, INT_MAX),
    _int("min-replicas-to-write", 0, 0, INT_MAX, aliases=("min-slaves-to-write",)),
    _int("min-replicas-max-lag", 10, 0, INT_MAX, aliases=("min-slaves-max-lag",)),
    _str("masterauth", "", sensitive=True),
    _str("masteruser", "", sensitive=True),
    # Monitoring
    _int("slowlog-log-slower-than", 10000, -1, LONG_MAX),
    _int("slowlog-max-len", 128, 0, LONG_MAX),
    _int("latency-monitor-threshold", 0, 0, LONG_MAX),
    _bool("latency-tracking", "yes"),
    _special("latency-tracking-info-percentiles", "50 99 99.9", parse_percentiles,
             render_percentiles),
    # Memory
    _mem("maxmemory", "0"),
    _enum("maxmemory-policy", "noeviction",
          ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
           "allkeys-lfu", "allkeys-random", "noeviction")),
    _int("maxmemory-samples", 5, 1, 64),
    _int("maxmemory-eviction-tenacity", 10, 0, 100),
    Parameter("maxmemory-clients", "special", "0", parser=parse_memory_or_percent,
              renderer=render_memory_or_percent),
    _int("lfu-log-factor", 10, 0, INT_MAX),
    _int("lfu-decay-time", 1, 0, INT_MAX),
    _bool("lazyfree-lazy-eviction", "no"),
    _bool("lazyfree-lazy-expire", "no"),
    _bool("lazyfree-lazy-server-del", "no"),
    _bool("lazyfree-lazy-user-del", "no"),
    _bool("lazyfree-lazy-user-flush", "no"),
    _bool("replica-lazy-flush", "no", aliases=("slave-lazy-flush",)),
    # Events
    _special("notify-keyspace-events", "", parse_keyspace_events, render_keyspace_events),
    # Data structure encodings (read by the value types)
    _int("hash-max-listpack-entries", 512, 0, LONG_MAX, aliases=("hash-max-ziplist-entries",)),
    _int("hash-max-listpack-value", 64, 0, LONG_MAX, aliases=("hash-max-ziplist-value",)),
    _int("list-max-listpack-size", -2, INT_MIN, INT_MAX, aliases=("list-max-ziplist-size",)),
    _int("list-compress-depth", 0, 0, INT_MAX),
    _int("set-max-intset-entries", 512, 0, LONG_MAX),
    _int("set-max-listpack-entries", 128, 0, LONG_MAX),
    _int("set-max-listpack-value", 64, 0, LONG_MAX),
    _int("zset-max-listpack-entries", 128, 0, LONG_MAX, aliases=("zset-max-ziplist-entries",)),
    _int("zset-max-listpack-value", 64, 0, LONG_MAX, aliases=("zset-max-ziplist-value",)),
    _mem("hll-sparse-max-bytes", "3000", 0, LONG_MAX),
    _mem("stream-node-max-bytes", "4096", 0, LONG_MAX),
    _int("stream-node-max-entries", 100, 0, LONG_MAX),
    _int("stream-idmp-duration", 100, 1, 86400),
    _int("stream-idmp-maxsize", 100, 1, 10000),
    # For tests (hidden, as in Redis): a pause after each key saved or loaded, in
    # microseconds (negative -n: 1 us one time in n).
    _int("rdb-key-save-delay", 0, INT_MIN, INT_MAX, hidden=True),
    _int("key-load-delay", 0, INT_MIN, INT_MAX, hidden=True),
]

PARAMETERS_BY_NAME: Final[dict[str, Parameter]] = {}
for _param in PARAMETERS:
    PARAMETERS_BY_NAME[_param.name] = _param
    for _alias in _param.aliases:
        PARAMETERS_BY_NAME[_alias] = _param


def lookup(name: str) -> Parameter | None:
    """A parameter by name or alias, case-insensitively."""
    return PARAMETERS_BY_NAME.get(name.lower())

