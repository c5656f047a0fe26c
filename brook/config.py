"""Configuration: the parameter table, redis.conf-style files, ``--name value`` flags, CONFIG.

Every parameter is declared once in :data:`PARAMETERS` with its type, default and whether
``CONFIG SET`` may change it at run time. Values live as typed attributes on :class:`Config`
(``config.proto_max_bulk_len``), so hot paths read them with one attribute lookup.

Parsing follows Redis's ``config.c`` to the letter, because clients and tools compare error
texts: integers are read strictly (no ``+``, spaces or leading zeros), memory values accept
the ``k/kb/m/mb/g/gb`` units, enums are case-insensitive, and the messages are Redis's.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from brook import glob
from brook.protocol.requests import parse_strict_int, split_inline_args

VERSION: Final = "7.4.0"  # the Redis version whose behaviour clients should assume (HELLO, INFO)
BROOK_VERSION: Final = "0.1.0"

INT_MAX: Final = 2**31 - 1
INT_MIN: Final = -(2**31)
UINT_MAX: Final = 2**32 - 1
LONG_MAX: Final = 2**63 - 1
HZ_MIN, HZ_MAX = 1, 500  # Redis clamps hz to this range instead of rejecting it


class ConfigError(Exception):
    """An invalid parameter name or value (the message is Redis's reason text)."""


# ---------------------------------------------------------------------------------------------
# Value parsers and renderers
# ---------------------------------------------------------------------------------------------

_MEMORY_UNITS: Final = {
    "": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2, "g": 1000**3, "gb": 1024**3,
}


def parse_memory(text: str) -> int:
    """Redis's ``memtoull``: digits with an optional k/kb/m/mb/g/gb unit, never negative."""
    digits_end = 0
    while digits_end < len(text) and text[digits_end].isdigit() and text[digits_end].isascii():
        digits_end += 1
    digits, unit = text[:digits_end], text[digits_end:].lower()
    if unit not in _MEMORY_UNITS:
        raise ConfigError("argument must be a memory value")
    return (int(digits) if digits else 0) * _MEMORY_UNITS[unit]


def parse_memory_or_percent(text: str, _current: object = None) -> int:
    """A byte count, or a percentage (of maxmemory) kept as its negative, as Redis keeps it."""
    if text.endswith("%"):
        percent = parse_strict_int(text[:-1].encode())
        if percent is None or percent < 0:
            raise ConfigError("argument must be a memory or percent value")
        if percent > 100:
            raise ConfigError("percentage argument must be less or equal to 100")
        return -percent
    try:
        return parse_memory(text)
    except ConfigError:
        raise ConfigError("argument must be a memory or percent value") from None


def render_memory_or_percent(value: object) -> str:
    number = int(value)  # type: ignore[call-overload]
    return f"{-number}%" if number < 0 else str(number)


def format_memory(value: int) -> str:
    """How CONFIG REWRITE writes a byte count: the largest exact unit (``512mb``)."""
    for unit, size in (("gb", 1024**3), ("mb", 1024**2), ("kb", 1024)):
        if value and value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


def parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered == "yes":
        return True
    if lowered == "no":
        return False
    raise ConfigError("argument must be 'yes' or 'no'")


def parse_int(text: str) -> int:
    value = parse_strict_int(text.encode("utf-8", "surrogateescape"))
    if value is None:
        raise ConfigError("argument couldn't be parsed into an integer")
    return value


def _c_strtoll_whole(text: str) -> int | None:
    """C's ``strtoll`` over a whole token (leading '+', zeros and spaces allowed)."""
    stripped = text.lstrip(" \t\n\v\f\r")
    body = stripped[1:] if stripped[:1] in ("+", "-") else stripped
    if not body.isdigit() or not body.isascii():
        return None
    return int(stripped)


def parse_save(text: str, current: object) -> list[tuple[int, int]]:
    """``save <seconds> <changes> [...]``; an empty value removes every save point."""
    words = text.split()
    if len(words) % 2:
        raise ConfigError("Invalid save parameters")
    points: list[tuple[int, int]] = []
    for i in range(0, len(words), 2):
        seconds, changes = _c_strtoll_whole(words[i]), _c_strtoll_whole(words[i + 1])
        if seconds is None or changes is None or seconds < 1 or changes < 0:
            raise ConfigError("Invalid save parameters")
        points.append((seconds, changes))
    return points


def render_save(points: object) -> str:
    return " ".join(f"{s} {c}" for s, c in points)  # type: ignore[attr-defined]


# notify-keyspace-events: Redis's class letters and how it prints them back.
NOTIFY_KEYSPACE: Final = 1 << 0  # K
NOTIFY_KEYEVENT: Final = 1 << 1  # E
NOTIFY_GENERIC: Final = 1 << 2  # g
NOTIFY_STRING: Final = 1 << 3  # $
NOTIFY_LIST: Final = 1 << 4  # l
NOTIFY_SET: Final = 1 << 5  # s
NOTIFY_HASH: Final = 1 << 6  # h
NOTIFY_ZSET: Final = 1 << 7  # z
NOTIFY_EXPIRED: Final = 1 << 8  # x
NOTIFY_EVICTED: Final = 1 << 9  # e
NOTIFY_STREAM: Final = 1 << 10  # t
NOTIFY_KEY_MISS: Final = 1 << 11  # m
NOTIFY_MODULE: Final = 1 << 12  # d
NOTIFY_NEW: Final = 1 << 13  # n
NOTIFY_ALL: Final = (
    NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET
    | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE
)
_NOTIFY_CLASSES: Final = {
    "g": NOTIFY_GENERIC, "$": NOTIFY_STRING, "l": NOTIFY_LIST, "s": NOTIFY_SET,
    "h": NOTIFY_HASH, "z": NOTIFY_ZSET, "x": NOTIFY_EXPIRED, "e": NOTIFY_EVICTED,
    "t": NOTIFY_STREAM, "d": NOTIFY_MODULE, "n": NOTIFY_NEW,
}
_NOTIFY_OTHERS: Final = {"K": NOTIFY_KEYSPACE, "E": NOTIFY_KEYEVENT, "m": NOTIFY_KEY_MISS}


def parse_keyspace_events(text: str, current: object = None) -> int:
    """The bit set of ``notify-keyspace-events`` letters (Redis's keyspaceEventsStringToFlags)."""
    flags = 0
    for char in text:
        if char == "A":
            flags |= NOTIFY_ALL
        elif char in _NOTIFY_CLASSES:
            flags |= _NOTIFY_CLASSES[char]
        elif char in _NOTIFY_OTHERS:
            flags |= _NOTIFY_OTHERS[char]
        else:
            raise ConfigError("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
    return flags


def render_keyspace_events(flags: object) -> str:
    value = int(flags)  # type: ignore[call-overload]
    if value & NOTIFY_ALL == NOTIFY_ALL:
        text = "A"
    else:
        text = "".join(char for char, bit in _NOTIFY_CLASSES.items() if value & bit)
    return text + "".join(char for char, bit in _NOTIFY_OTHERS.items() if value & bit)


# client-output-buffer-limit: per class (normal, replica, pubsub): hard, soft, soft-seconds.
_BUFFER_CLASSES: Final = {"normal": "normal", "slave": "replica", "replica": "replica", "pubsub": "pubsub"}


def parse_buffer_limits(text: str, current: object) -> dict[str, tuple[int, int, int]]:
    """Only the classes named change; the others keep their limits, as in Redis."""
    words = text.split()
    if len(words) % 4:
        raise ConfigError("Wrong number of arguments in buffer limit configuration.")
    limits = dict(current) if isinstance(current, dict) else {}
    for i in range(0, len(words), 4):
        klass = _BUFFER_CLASSES.get(words[i].lower())
        if klass is None:
            raise ConfigError("Invalid client class specified in buffer limit configuration.")
        try:
            hard, soft = parse_memory(words[i + 1]), parse_memory(words[i + 2])
        except ConfigError:
            hard = soft = -1
        seconds = _c_strtoll_whole(words[i + 3])
        if hard < 0 or soft < 0 or seconds is None or seconds < 0:
            raise ConfigError(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration."
            )
        limits[klass] = (hard, soft, seconds)
    return limits


def render_buffer_limits(limits: object) -> str:
    parts = []
    for klass, shown in (("normal", "normal"), ("replica", "slave"), ("pubsub", "pubsub")):
        hard, soft, seconds = limits[klass]  # type: ignore[index]
        parts.append(f"{shown} {hard} {soft} {seconds}")
    return " ".join(parts)


def parse_words(text: str, current: object = None) -> list[str]:
    return text.split()


def parse_replicaof(text: str, current: object = None) -> list[str]:
    """``replicaof <host> <port>`` (empty: a master)."""
    words = text.split()
    if not words:
        return []
    if len(words) != 2:
        raise ConfigError("wrong number of arguments")
    port = words[1]
    if not port.isdigit() or int(port) > 65535:
        raise ConfigError("Invalid master port")
    return words


def render_words(words: object) -> str:
    return " ".join(str(word) for word in words)  # type: ignore[attr-defined]


def parse_oom_values(text: str, current: object = None) -> list[int]:
    words = text.split()
    if len(words) != 3:
        raise ConfigError("wrong number of arguments")
    values = []
    for word in words:
        value = _c_strtoll_whole(word)
        if value is None or not -2000 <= value <= 2000:
            raise ConfigError("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
        values.append(value)
    return values


def parse_percentiles(text: str, current: object = None) -> list[float]:
    values = []
    for word in text.split():
        try:
            value = float(word)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 100.0:
            raise ConfigError("Invalid latency-tracking-info-percentiles parameters")
        values.append(value)
    return values


def render_percentiles(values: object) -> str:
    return " ".join(f"{v:g}" for v in values)  # type: ignore[attr-defined]


def parse_octal(text: str, current: object = None) -> int:
    try:
        return int(text, 8)
    except ValueError:
        raise ConfigError("argument couldn't be parsed into an integer")


# ---------------------------------------------------------------------------------------------
# The parameter table
# ---------------------------------------------------------------------------------------------


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

    def rewrite_lines(self, value: object) -> list[str]:
        """The lines CONFIG REWRITE writes (strings quoted, byte counts with units, one line
        per save point and per client class, as Redis writes them)."""
        if self.name == "save":
            points: list[tuple[int, int]] = value  # type: ignore[assignment]
            return [f"save {s} {c}" for s, c in points] or ['save ""']
        if self.name == "client-output-buffer-limit":
            shown = {"normal": "normal", "replica": "slave", "pubsub": "pubsub"}
            return [
                f"{self.name} {shown[klass]} {format_memory(hard)} {format_memory(soft)} {seconds}"
                for klass, (hard, soft, seconds) in value.items()  # type: ignore[attr-defined]
            ]
        if self.name == "replicaof" and not value:
            return []  # a master: the line goes (Redis's rewriteConfigReplicaOfOption)
        if self.kind == "memory":
            text = format_memory(int(value))  # type: ignore[call-overload]
        elif self.kind == "string":
            text = _quote(str(value))
        else:
            text = self.render(value) or '""'
        return [f"{self.name} {text}"]


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
_GLOB_CHARS: Final = frozenset("[*?")


def lookup(name: str) -> Parameter | None:
    """A parameter by name or alias, case-insensitively."""
    return PARAMETERS_BY_NAME.get(name.lower())


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
    acllog_max_len: int
    aclfile: str
    acl_pubsub_default: str
    tracking_table_max_keys: int
    busy_reply_threshold: int
    lua_max_memory: int
    stop_writes_on_bgsave_error: bool
    rdbcompression: bool
    rdbchecksum: bool
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
        # Called with the canonical name of each changed parameter; may raise ConfigError to
        # refuse a value it cannot apply (CONFIG SET then restores every changed parameter).
        self.listeners: list[Callable[[str], None]] = []
        self.config_file: str | None = None  # absolute path, for CONFIG REWRITE and INFO
        # INFO's executable: made absolute now, before a "dir" setting changes directory.
        self.executable = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
        # ``user <name> <rule> ...`` lines (the server applies them once its commands exist),
        # and what CONFIG REWRITE writes for users (the server's ACL LIST, set by the server).
        self.user_lines: list[list[str]] = []
        self.rewrite_users: Callable[[], list[str]] | None = None
        for param in PARAMETERS:
            setattr(self, param.attr, param.parse(param.default))

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
        self._notify([param.name])

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
            self._notify([param.name for _, param in params])
        except ConfigSetError:
            self._restore(previous)
            self._notify([param.name for _, param in params], strict=False)
            raise

    def _restore(self, previous: dict[str, object]) -> None:
        for attr, value in previous.items():
            setattr(self, attr, value)

    def _notify(self, names: list[str], strict: bool = True) -> None:
        for name in dict.fromkeys(names):
            for listener in self.listeners:
                try:
                    listener(name)
                except ConfigError as err:
                    if strict:
                        raise ConfigSetError.about(name, str(err))

    # -- CONFIG REWRITE --------------------------------------------------------------------------

    def rewrite(self) -> None:
        """Write the configuration back to its file, keeping comments and the order of the
        lines already there (Redis's rewriteConfig): changed values replace their line, others
        are appended, values left at their default are not added."""
        if self.config_file is None:
            raise ConfigError("The server is running without a config file")
        lines: list[str] = []
        try:
            with open(self.config_file, encoding="utf-8", errors="surrogateescape") as handle:
                lines.extend(handle.read().splitlines())
        except FileNotFoundError:
            pass
        except OSError as err:
            raise ConfigError(f"Rewriting config file: {err.strerror}")
        positions: dict[int, Parameter] = {}  # line index -> the parameter it sets
        user_positions: list[int] = []
        for index, line in enumerate(lines):
            if line.lstrip().startswith("#"):
                continue
            words = split_inline_args(line.strip().encode("utf-8", "surrogateescape"))
            if words:
                keyword = words[0].decode("utf-8", "replace")
                if keyword.lower() == "user":
                    user_positions.append(index)
                    continue
                param = lookup(keyword)
                if param is not None:
                    positions[index] = param
        # Users: the current ones (none with an ACL file).
        users = self.rewrite_users() if self.rewrite_users is not None else []
        present = {param.name for param in positions.values()}
        replacement: dict[str, list[str]] = {}
        appended: list[str] = []
        for param in PARAMETERS:
            value = os.getcwd() if param.name == "dir" else getattr(self, param.attr)
            new_lines = param.rewrite_lines(value)
            if param.name in present:
                replacement[param.name] = new_lines
            elif param.name == "dir" or value != param.parse(param.default):
                appended.extend(new_lines)
        output: list[str] = []
        for index, line in enumerate(lines):
            if index in user_positions:
                # Each old user line takes the next user, in order (Redis's rewriteConfig);
                # the users left over are appended.
                if users:
                    output.append(users.pop(0))
                continue
            param = positions.get(index)
            if param is None:
                output.append(line)
            elif param.name in replacement:
                # The first line of a parameter takes all its new lines; later ones go.
                output.extend(replacement.pop(param.name))
        appended.extend(users)
        if appended:
            if _REWRITE_MARKER not in output:
                if output and output[-1].strip():
                    output.append("")
                output.append(_REWRITE_MARKER)
            output.extend(appended)
        temporary = f"{self.config_file}.tmp-{os.getpid()}"
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write("\n".join(output) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.config_file)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise ConfigError(f"Rewriting config file: {err.strerror}")


_REWRITE_MARKER: Final = "# Generated by CONFIG REWRITE"


class ConfigSetError(ConfigError):
    """A CONFIG SET failure, already worded as Redis replies it (without the ``ERR``)."""

    @classmethod
    def about(cls, argument: str, reason: str) -> ConfigSetError:
        return cls(f"CONFIG SET failed (possibly related to argument '{argument}') - {reason}")


def _quote(text: str) -> str:
    """Redis's ``sdscatrepr`` for config values: double quotes and C escapes."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '\\"':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif char == "\a":
            out.append("\\a")
        elif char == "\b":
            out.append("\\b")
        elif 32 <= code < 127 or code > 127:
            out.append(char)
        else:
            out.append(f"\\x{code:02x}")
    out.append('"')
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Start-up: the config file and the command line
# ---------------------------------------------------------------------------------------------


class FatalConfigError(Exception):
    """A start-up configuration error, reported as Redis's FATAL CONFIG FILE ERROR block."""

    def __init__(self, line_number: int, line: str, reason: str) -> None:
        super().__init__(reason)
        self.line_number = line_number
        self.line = line
        self.reason = reason


def options_text(options: list[str]) -> str:
    """The command-line options as Redis turns them into config lines (main() in server.c):
    ``--port 6380 --save 900 1`` becomes ``port "6380"\\nsave "900" "1"``."""
    text = ""
    has_value = True
    for position, arg in enumerate(options):
        if has_value and arg.startswith("--"):
            if text:
                text += "\n"
            text += arg[2:] + " "
            if len(arg.split()) == 1:
                has_value = False
                following = options[position + 1] if position + 1 < len(options) else None
                if arg.lower() == "--save" and (following is None or following.startswith("--")):
                    # "--save" alone (or followed by another option) means: no save points.
                    text += '""'
                    has_value = True
            else:
                has_value = True
        else:
            text += _quote(arg) + " "
            has_value = True
    return text


class Loader:
    """Applies configuration text line by line with Redis's start-up rules."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.save_seen = False  # several "save" lines add up; the first one replaces the default

    def load_file(self, path: str) -> None:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            self.load_text(handle.read())

    def load_text(self, text: str) -> None:
        for number, raw in enumerate(text.split("\n"), start=1):
            line = raw.strip(" \t\r\n")
            if not line or line.startswith("#"):
                continue
            words = split_inline_args(line.encode("utf-8", "surrogateescape"))
            if words is None:
                raise FatalConfigError(number, line, "Unbalanced quotes in configuration line")
            if not words:
                continue
            args = [w.decode("utf-8", "surrogateescape") for w in words]
            try:
                self.apply(args[0], args[1:])
            except ConfigError as err:
                raise FatalConfigError(number, line, str(err))

    def apply(self, name: str, args: list[str]) -> None:
        lowered = name.lower()
        if lowered == "include" and len(args) == 1:
            try:
                self.load_file(args[0])
            except OSError as err:
                raise ConfigError(f"Fatal error, can't open config file '{args[0]}': {err.strerror}")
            return
        if lowered == "user" and args:
            if any(line[0] == args[0] for line in self.config.user_lines):
                raise ConfigError(f"Error in user declaration '{args[0]}': Duplicate user found. "
                                  "A user can only be defined once in config files")
            self.config.user_lines.append(args)
            return
        param = lookup(lowered)
        if param is None:
            raise ConfigError("Bad directive or wrong number of arguments")
        if not param.multi_arg and len(args) != 1:
            raise ConfigError("wrong number of arguments")
        text = " ".join(args)
        if param.name == "save":
            points = parse_save(text, None)
            self.config.save = (self.config.save if self.save_seen else []) + points
            self.save_seen = True
            return
        self.config.set(param.name, text, at_startup=True)
        if param.name == "dir":
            try:
                os.chdir(self.config.dir)
            except OSError as err:
                raise ConfigError(f"Can't chdir to '{self.config.dir}': {err.strerror}")
