"""Configuration: the parameter table, redis.conf-style files, ``--name value`` flags, CONFIG.

Every parameter is declared once in :data:`PARAMETERS` with its type, default and whether
``CONFIG SET`` may change it at run time. Values live as typed attributes on :class:`Config`
(``config.proto_max_bulk_len``), so hot paths read them with one attribute lookup.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field

from brook.protocol.requests import split_inline_args

VERSION = "7.4.0"  # the Redis version whose behaviour clients should assume (HELLO, INFO)
BROOK_VERSION = "0.1.0"


class ConfigError(Exception):
    """An invalid parameter name or value (the message is Redis's reason text)."""


_MEMORY_UNITS = {
    "": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2, "g": 1000**3, "gb": 1024**3,
}


def parse_memory(text: str) -> int:
    """Redis's ``memtoull``: an integer with an optional k/kb/m/mb/g/gb unit."""
    lowered = text.strip().lower()
    digits = lowered.rstrip("kmgb")
    unit = lowered[len(digits):]
    if unit not in _MEMORY_UNITS or not digits or not digits.lstrip("-").isdigit():
        raise ConfigError("argument must be a memory value")
    return int(digits) * _MEMORY_UNITS[unit]


def parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered == "yes":
        return True
    if lowered == "no":
        return False
    raise ConfigError("argument must be 'yes' or 'no'")


def parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError("argument couldn't be parsed into an integer")


@dataclass
class Parameter:
    """One configuration parameter."""

    name: str
    kind: str  # int | memory | bool | string | enum | list
    default: str
    mutable: bool = True
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    sensitive: bool = False
    validate: Callable[[object], None] | None = field(default=None, repr=False)

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")

    def parse(self, text: str) -> object:
        if self.kind == "bool":
            return parse_bool(text)
        if self.kind in ("int", "memory"):
            value = parse_int(text) if self.kind == "int" else parse_memory(text)
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                raise ConfigError(
                    f"argument must be between {self.minimum} and {self.maximum} inclusive"
                )
            return value
        if self.kind == "enum":
            lowered = text.lower()
            if lowered not in self.choices:
                raise ConfigError(f"argument(s) must be one of the following: {', '.join(self.choices)}")
            return lowered
        if self.kind == "list":
            return text.split()
        return text

    def render(self, value: object) -> str:
        if self.kind == "bool":
            return "yes" if value else "no"
        if self.kind == "list":
            return " ".join(value)  # type: ignore[arg-type]
        return str(value)


_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1

PARAMETERS: list[Parameter] = [
    Parameter("port", "int", "6379", mutable=False, minimum=0, maximum=65535),
    Parameter("bind", "list", "127.0.0.1 -::1", mutable=False),
    Parameter("protected-mode", "bool", "yes"),
    Parameter("requirepass", "string", "", sensitive=True),
    Parameter("maxclients", "int", "10000", minimum=1, maximum=_INT_MAX),
    Parameter("timeout", "int", "0", minimum=0, maximum=_INT_MAX),
    Parameter("tcp-keepalive", "int", "300", minimum=0, maximum=_INT_MAX),
    Parameter("tcp-backlog", "int", "511", mutable=False, minimum=0, maximum=_INT_MAX),
    Parameter("proto-max-bulk-len", "memory", "512mb", minimum=1024 * 1024, maximum=_LONG_MAX),
    Parameter("client-query-buffer-limit", "memory", "1gb", minimum=1024 * 1024, maximum=_LONG_MAX),
    Parameter("databases", "int", "16", mutable=False, minimum=1, maximum=_INT_MAX),
    Parameter("hz", "int", "10", minimum=0, maximum=_INT_MAX),
    Parameter("loglevel", "enum", "notice", choices=("debug", "verbose", "notice", "warning", "nothing")),
    Parameter("logfile", "string", "", mutable=False),
    Parameter("pidfile", "string", "", mutable=False),
    Parameter("daemonize", "bool", "no", mutable=False),
    Parameter("dir", "string", ".", mutable=True),
    Parameter("dbfilename", "string", "dump.rdb"),
    Parameter("save", "string", ""),
    Parameter("appendonly", "bool", "no"),
    Parameter("appendfilename", "string", "appendonly.aof", mutable=False),
    Parameter("appendfsync", "enum", "everysec", choices=("always", "everysec", "no")),
    Parameter("slowlog-log-slower-than", "int", "10000", minimum=-1, maximum=_LONG_MAX),
    Parameter("slowlog-max-len", "int", "128", minimum=0, maximum=_LONG_MAX),
    Parameter("latency-monitor-threshold", "int", "0", minimum=0, maximum=_LONG_MAX),
    Parameter("maxmemory", "memory", "0", minimum=0, maximum=_LONG_MAX),
    Parameter(
        "maxmemory-policy", "enum", "noeviction",
        choices=("volatile-lru", "allkeys-lru", "volatile-lfu", "allkeys-lfu", "volatile-random",
                 "allkeys-random", "volatile-ttl", "noeviction"),
    ),
    Parameter("notify-keyspace-events", "string", ""),
    Parameter("hash-max-listpack-entries", "int", "128", minimum=0, maximum=_LONG_MAX,
              aliases=("hash-max-ziplist-entries",)),
    Parameter("hash-max-listpack-value", "int", "64", minimum=0, maximum=_LONG_MAX,
              aliases=("hash-max-ziplist-value",)),
    Parameter("list-max-listpack-size", "int", "-2", minimum=-5, maximum=_LONG_MAX,
              aliases=("list-max-ziplist-size",)),
    Parameter("stream-node-max-entries", "int", "100", minimum=0, maximum=_LONG_MAX),
    Parameter("stream-node-max-bytes", "memory", "4096", minimum=0, maximum=_LONG_MAX),
    Parameter("lazyfree-lazy-user-del", "bool", "no"),
    Parameter("lazyfree-lazy-user-flush", "bool", "no"),
    Parameter("active-expire-effort", "int", "1", minimum=1, maximum=10),
    Parameter("enable-debug-command", "enum", "no", mutable=False, choices=("no", "yes", "local")),
]

PARAMETERS_BY_NAME: dict[str, Parameter] = {}
for _param in PARAMETERS:
    PARAMETERS_BY_NAME[_param.name] = _param
    for _alias in _param.aliases:
        PARAMETERS_BY_NAME[_alias] = _param


class Config:
    """The server's current configuration; each parameter is a typed attribute."""

    port: int
    bind: list[str]
    protected_mode: bool
    requirepass: str
    maxclients: int
    timeout: int
    tcp_keepalive: int
    tcp_backlog: int
    proto_max_bulk_len: int
    client_query_buffer_limit: int
    databases: int
    hz: int
    loglevel: str
    logfile: str
    pidfile: str
    daemonize: bool
    slowlog_log_slower_than: int
    slowlog_max_len: int
    latency_monitor_threshold: int

    def __init__(self) -> None:
        self.listeners: list[Callable[[str], None]] = []
        self.config_file: str | None = None
        for param in PARAMETERS:
            setattr(self, param.attr, param.parse(param.default))

    def get(self, name: str) -> str:
        param = PARAMETERS_BY_NAME[name]
        return param.render(getattr(self, param.attr))

    def set(self, name: str, text: str, *, at_startup: bool = False) -> None:
        """Parse and apply one value; raises KeyError for unknown names, ConfigError otherwise."""
        param = PARAMETERS_BY_NAME[name.lower()]
        if not param.mutable and not at_startup:
            raise ConfigError("can't set immutable config")
        value = param.parse(text)
        if param.validate is not None:
            param.validate(value)
        setattr(self, param.attr, value)
        for listener in self.listeners:
            listener(param.name)

    def matching(self, pattern: str) -> dict[str, str]:
        """Parameters whose name (or alias) matches a glob pattern, as CONFIG GET replies them."""
        lowered = pattern.lower()
        found: dict[str, str] = {}
        if lowered in PARAMETERS_BY_NAME:
            found[lowered] = self.get(lowered)
            return found
        for param in PARAMETERS:
            for name in (param.name, *param.aliases):
                if fnmatch.fnmatchcase(name, lowered):
                    found[name] = self.get(param.name)
        return found


def parse_arguments(argv: list[str]) -> tuple[str | None, list[tuple[str, list[str]]]]:
    """Split ``brook-server [config-file] [--name value ...]`` into the file and directives."""
    config_file = None
    rest = argv
    if rest and not rest[0].startswith("--"):
        config_file, rest = rest[0], rest[1:]
    directives: list[tuple[str, list[str]]] = []
    for item in rest:
        if item.startswith("--"):
            directives.append((item[2:], []))
        elif directives:
            directives[-1][1].append(item)
        else:
            raise ConfigError(f"Invalid argument '{item}'")
    return config_file, directives


def read_config_file(path: str) -> list[tuple[int, str, str, list[str]]]:
    """Directives of a redis.conf-style file: (line number, line, name, arguments)."""
    found = []
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            args = split_inline_args(line.encode())
            if args is None:
                raise ConfigError(f"line {number}: unbalanced quotes in configuration line")
            if not args:
                continue
            words = [a.decode() for a in args]
            found.append((number, line, words[0].lower(), words[1:]))
    return found


def apply_directive(config: Config, name: str, args: list[str]) -> None:
    """Apply one start-up directive (from the file or the command line)."""
    lowered = name.lower()
    if lowered not in PARAMETERS_BY_NAME:
        raise ConfigError("Bad directive or wrong number of arguments")
    param = PARAMETERS_BY_NAME[lowered]
    if param.kind == "list" or lowered == "save":
        config.set(lowered, " ".join(args), at_startup=True)
        return
    if len(args) != 1:
        raise ConfigError("Bad directive or wrong number of arguments")
    config.set(lowered, args[0], at_startup=True)
