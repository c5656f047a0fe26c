"""The command table: every command is declared next to its function.

``@command(...)`` records a command's name, arity, flags, key positions, ACL categories and
documentation (summary, syntax, since, group). Everything else is generated from these
declarations: the dispatcher's lookup table, ``COMMAND`` / ``COMMAND INFO`` / ``COMMAND DOCS``
(which ``redis-cli`` reads for its hints) and ``docs/commands.md``, so the documentation cannot
drift from the code.

A handler has the signature ``handler(client, args) -> bytes``: ``args`` is the whole request
(``args[0]`` is the command name as sent) and the return value is the encoded reply. Errors are
raised as :class:`CommandError` and encoded by the dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from brook.session import Session

# None: the command parked its client (brook.blocking), or replied to nobody.
Handler = Callable[["Session", list[bytes]], bytes | None]
ReplayShortcut = Callable[["Session", list[bytes]], bool]


class CommandError(Exception):
    """A command failed: the message is sent as an error reply (it starts with its code)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# Redis's shared error texts, kept in one place so every command says them identically.
WRONGTYPE: Final = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX_ERROR: Final = "ERR syntax error"
NOT_INTEGER: Final = "ERR value is not an integer or out of range"
NOT_FLOAT: Final = "ERR value is not a valid float"
INVALID_EXPIRE: Final = "ERR invalid expire time in '{}' command"
NO_SUCH_KEY: Final = "ERR no such key"
DB_INDEX_OUT_OF_RANGE: Final = "ERR DB index is out of range"


def of_type(value: object, kind: type) -> object:
    """A looked-up value for a command working on ``kind``: None (missing) or the value;
    Redis's WRONGTYPE for any other type."""
    if value is None or type(value) is kind:
        return value
    raise CommandError(WRONGTYPE)


def text(arg: bytes, limit: int | None = None) -> str:
    """An argument as Redis's ``%s`` (``%.<limit>s``) prints it into an error message: its
    bytes up to a NUL, at most ``limit`` of them, unchanged (resp.error writes them back as
    they came)."""
    return arg.split(b"\x00", 1)[0][:limit].decode("utf-8", "surrogateescape")


def subcommand_error(args: list[bytes], container_name: str) -> CommandError:
    """Redis's addReplySubcommandSyntaxError: echoes the subcommand as the client typed it."""
    return CommandError("ERR unknown subcommand or wrong number of arguments for "
                        f"'{text(args[1], 128)}'. "
                        f"Try {container_name} HELP.")


# Run times, as Redis's per-command histogram keeps them (HdrHistogram, 1 ns to 1 s, two
# significant digits): a value's bucket b holds values of b + 8 bits, at a resolution of 2**b
# ns; its index is b * 128 plus the value's top 8 bits (values below 256 ns are exact). LATENCY
# HISTOGRAM reads it at power-of-two levels from 1024 ns; INFO latencystats at percentiles.
_LATENCY_MAX_NS: Final = 1_000_000_000


def latency_index(nanoseconds: int) -> int:
    """The histogram index of a run of ``nanoseconds`` (clamped to 1 ns .. 1 s as Redis)."""
    value = min(max(nanoseconds, 1), _LATENCY_MAX_NS)
    bucket = (value | 0xFF).bit_length() - 8
    return (bucket << 7) + (value >> bucket)


def latency_index_range(index: int) -> tuple[int, int]:
    """The lowest and highest nanoseconds an index stands for."""
    if index < 256:
        return index, index
    bucket = (index >> 7) - 1
    lowest = ((index & 0x7F) + 128) << bucket
    return lowest, lowest + (1 << bucket) - 1


def latency_at_percentile(counts: dict[int, int], percentile: float) -> int:
    """The nanoseconds at ``percentile`` of a histogram (HdrHistogram's value at percentile:
    the top of the bucket where the count reaches it; the bottom for the 0th)."""
    total = sum(counts.values())
    wanted = max(int(min(percentile, 100.0) / 100 * total + 0.5), 1)
    seen = 0
    for index, count in sorted(counts.items()):
        seen += count
        if seen >= wanted:
            lowest, highest = latency_index_range(index)
            return lowest if percentile == 0.0 else highest
    return 0


class Command:
    """One entry of the command table (a subcommand is a Command whose parent is set)."""

    __slots__ = (
        "name",
        "fullname",
        "handler",
        "arity",
        "min_args",
        "max_args",
        "flags",
        "first_key",
        "last_key",
        "key_step",
        "acl_categories",
        "group",
        "summary",
        "since",
        "complexity",
        "syntax",
        "subcommands",
        "parent",
        "is_write",
        "is_fast",
        "is_denyoom",
        "may_write",
        "is_script",
        "allowed_in_multi",
        "allowed_unauthenticated",
        "is_pubsub",
        "calls",
        "seconds",
        "rejected_calls",
        "failed_calls",
        "latency_counts",
        "find_keys",
        "key_keyword",
        "key_flags",
        "replay_shortcut",
    )

    def __init__(
        self,
        name: str,
        handler: Handler | None,
        arity: int,
        flags: tuple[str, ...],
        keys: tuple[int, int, int],
        acl_categories: tuple[str, ...],
        group: str,
        summary: str,
        since: str,
        complexity: str,
        syntax: str,
        parent: Command | None = None,
    ) -> None:
        self.name = name
        self.fullname = f"{parent.name}|{name}" if parent else name
        self.handler = handler
        self.arity = arity
        # The dispatcher checks ``min_args <= len(args) <= max_args``: two comparisons instead of
        # branching on the sign of the arity for every request.
        self.min_args = abs(arity)
        self.max_args = arity if arity > 0 else 1 << 30
        self.flags = flags
        self.first_key, self.last_key, self.key_step = keys
        self.acl_categories = acl_categories
        self.group = group
        self.summary = summary
        self.since = since
        self.complexity = complexity
        self.syntax = syntax
        self.subcommands: dict[bytes, Command] = {}
        self.parent = parent
        self.is_write = "write" in flags
        self.is_fast = "fast" in flags
        self.is_denyoom = "denyoom" in flags
        # What the maxmemory check must see (Redis runs it before every command; Brook's fast
        # path skips it only for commands that can neither add memory nor run a script).
        self.may_write = self.is_write or self.is_denyoom or "may_replicate" in flags
        # EVAL/EVALSHA/FCALL and their _RO forms: their script's flags count as theirs.
        self.is_script = self.name.startswith(("eval", "fcall")) and parent is None
        self.allowed_in_multi = "no_multi" not in flags
        self.allowed_unauthenticated = "no_auth" in flags
        # SUBSCRIBE, PUBLISH and the rest: the commands whose arguments may be channels.
        self.is_pubsub = "pubsub" in flags
        self.calls = 0
        self.seconds = 0.0  # time spent running it (INFO commandstats usec)
        self.rejected_calls = 0
        self.failed_calls = 0
        # LATENCY HISTOGRAM and INFO latencystats: runs per histogram index (latency_index),
        # None until the first.
        self.latency_counts: dict[int, int] | None = None
        # movablekeys commands (XREAD...): (argc, args) -> key indices, found by keyword.
        self.find_keys: Callable[[int, list[bytes]], list[int]] | None = None
        self.key_keyword: str | None = None  # the keyword its keys follow (key specs)
        # Its key spec's flags when not the RW/RO default: ("not_key",) for the sharded Pub/Sub
        # commands, whose "keys" are channels (cluster slots, never keys of the keyspace).
        self.key_flags: tuple[str, ...] | None = None
        # What replaying the AOF or a master's stream may run instead of the handler for the
        # requests such files hold by the million (XADD with an explicit ID): True when it
        # applied the request, False when it changed nothing and the handler must run.
        self.replay_shortcut: Callable[[Session, list[bytes]], bool] | None = None

    def key_positions(self, argc: int, args: list[bytes] | None = None) -> list[int]:
        """Indices of the key arguments in a request of ``argc`` arguments (movablekeys
        commands need the arguments themselves)."""
        if self.find_keys is not None:
            return self.find_keys(argc, args) if args is not None else []
        if self.first_key <= 0:
            return []
        return list(range(self.first_key, self.last_key_at(argc) + 1, self.key_step))

    def last_key_at(self, argc: int) -> int:
        """The index of the last key a request of ``argc`` arguments can have by the key
        spec (negative ``last_key``: counted from the end), before ``first_key`` when it has
        none; cluster routing's quick test walks the keys between without a list."""
        last = self.last_key if self.last_key >= 0 else argc + self.last_key
        return last if last < argc else argc - 1  # (min() is a generic call, compiled)

    def key_positions_of(self, args: list[bytes]) -> list[bytes]:
        """The key arguments of a request."""
        return [args[i] for i in self.key_positions(len(args), args)]

    def record_latency(self, seconds: float, calls: int = 1) -> None:
        """``calls`` runs that took ``seconds`` each, for LATENCY HISTOGRAM and INFO
        latencystats."""
        counts = self.latency_counts
        if counts is None:
            counts = self.latency_counts = {}
        index = latency_index(int(seconds * 1e9))
        counts[index] = counts.get(index, 0) + calls

    def instance(self, parent: Command | None = None) -> Command:
        """This declaration as one server's command: the same declaration, counters of its
        own (and its subcommands' instances), so that two servers in one process never count
        each other's calls."""
        made = Command(self.name, self.handler, self.arity, self.flags,
                       (self.first_key, self.last_key, self.key_step), self.acl_categories,
                       self.group, self.summary, self.since, self.complexity, self.syntax,
                       parent)
        made.max_args = self.max_args  # (COMMAND's own, narrowed after its declaration)
        made.find_keys = self.find_keys
        made.key_keyword = self.key_keyword
        made.key_flags = self.key_flags
        made.replay_shortcut = self.replay_shortcut
        for key, sub in self.subcommands.items():
            made.subcommands[key] = sub.instance(made)
        return made

    def reset_stats(self) -> None:
        self.calls = self.rejected_calls = self.failed_calls = 0
        self.seconds = 0.0
        self.latency_counts = None
        for sub in self.subcommands.values():
            sub.reset_stats()


# name (lower-case str) -> Command, for top-level commands.
COMMANDS: Final[dict[str, Command]] = {}


def command(
    name: str,
    arity: int,
    flags: str = "",
    keys: tuple[int, int, int] = (0, 0, 0),
    acl: str = "",
    group: str = "generic",
    summary: str = "",
    since: str = "1.0.0",
    complexity: str = "O(1)",
    syntax: str = "",
) -> Callable[[Handler], Handler]:
    """Declare a command (``"config|get"`` declares a subcommand of a container)."""

    def register(handler: Handler) -> Handler:
        _add(name, handler, arity, flags, keys, acl, group, summary, since, complexity, syntax)
        return handler

    return register


def container(
    name: str,
    arity: int = -2,
    flags: str = "",
    acl: str = "",
    group: str = "generic",
    summary: str = "",
    since: str = "1.0.0",
    complexity: str = "Depends on subcommand.",
) -> Command:
    """Declare a command that only dispatches to its subcommands (CONFIG, CLIENT, OBJECT...)."""
    return _add(name, None, arity, flags, (0, 0, 0), acl, group, summary, since, complexity, "")


def _add(
    name: str,
    handler: Handler | None,
    arity: int,
    flags: str,
    keys: tuple[int, int, int],
    acl: str,
    group: str,
    summary: str,
    since: str,
    complexity: str,
    syntax: str,
) -> Command:
    parent_name, _, sub_name = name.partition("|")
    categories = tuple(acl.split())
    # Redis spells flags with underscores (no_auth, allow_busy); accept either spelling.
    flag_tuple = tuple(flag.replace("-", "_") for flag in flags.split())
    if sub_name:
        parent = COMMANDS[parent_name]
        cmd = Command(
            sub_name, handler, arity, flag_tuple, keys, categories, parent.group,
            summary, since, complexity, syntax, parent,
        )
        parent.subcommands[sub_name.encode()] = cmd
    else:
        if name in COMMANDS:
            raise ValueError(f"command {name!r} declared twice")
        cmd = Command(
            name, handler, arity, flag_tuple, keys, categories, group,
            summary, since, complexity, syntax,
        )
        COMMANDS[name] = cmd
    return cmd


def replay_shortcut(name: str) -> Callable[[ReplayShortcut], ReplayShortcut]:
    """Declare ``name``'s replay shortcut (see :attr:`Command.replay_shortcut`)."""

    def register(shortcut: ReplayShortcut) -> ReplayShortcut:
        COMMANDS[name].replay_shortcut = shortcut
        return shortcut

    return register


class CommandTable:
    """One server's commands: an instance of every declaration (:meth:`Command.instance`),
    holding that server's counters. ``lookup`` is the dispatcher's table: lower- and
    upper-case names map straight to the command, so the common request needs one dict lookup
    and no case folding; ``by_name`` is by lower-case name, in declaration order."""

    __slots__ = ("lookup", "by_name")

    def __init__(self) -> None:
        self.by_name: dict[str, Command] = {name: cmd.instance() for name, cmd in COMMANDS.items()}
        self.lookup: dict[bytes, Command] = {}
        for name, cmd in self.by_name.items():
            self.lookup[name.encode()] = cmd
            self.lookup[name.upper().encode()] = cmd

    def named(self, name: str | bytes) -> Command | None:
        """This server's command by full name (see :func:`command_named`)."""
        return command_named(name, self.by_name)

    def instance_of(self, declared: Command) -> Command:
        """This server's instance of a declared command (a handler names the declaration)."""
        if declared.parent is None:
            return self.by_name[declared.name]
        return self.by_name[declared.parent.name].subcommands[declared.name.encode()]

    def every(self) -> list[Command]:
        """Every command and subcommand, each container followed by its subcommands."""
        found: list[Command] = []
        for cmd in self.by_name.values():
            found.append(cmd)
            found.extend(cmd.subcommands.values())
        return found


# What resolving a request found (Redis's lookupCommand, then its arity check).
RESOLVED: Final = 0
NO_COMMAND: Final = 1  # no command of that name
NO_SUBCOMMAND: Final = 2  # a container without that subcommand (the container is returned)
WRONG_ARITY: Final = 3  # the command, with too few or too many arguments (or a container alone)


def resolve(table: dict[bytes, Command], argv: list[bytes]) -> tuple[Command | None, int]:
    """The command a request names and whether it may be called with these arguments: the one
    resolution every caller uses (the socket, scripts, the AOF and the replica's stream, ACL
    DRYRUN, COMMAND GETKEYS); each caller words the failures its own way, as Redis does."""
    cmd = table.get(argv[0])
    if cmd is None:
        cmd = table.get(argv[0].lower())
        if cmd is None:
            return None, NO_COMMAND
    if cmd.subcommands and len(argv) > 1:
        sub = cmd.subcommands.get(argv[1].lower())
        if sub is None:
            return cmd, NO_SUBCOMMAND
        cmd = sub
    if cmd.handler is None or not cmd.min_args <= len(argv) <= cmd.max_args:
        return cmd, WRONG_ARITY
    return cmd, RESOLVED


def find_command(table: dict[bytes, Command], argv: list[bytes]) -> Command | None:
    """The command a request names, whatever its arity (None: unknown, or a container's
    unknown subcommand, as Redis's lookupCommand)."""
    cmd, found = resolve(table, argv)
    return None if found == NO_SUBCOMMAND else cmd


def command_named(name: str | bytes,
                  commands: dict[str, Command] | None = None) -> Command | None:
    """A command or subcommand by its full name, ``container|sub`` (case-insensitive), as
    COMMAND INFO, ACL rules and LATENCY HISTOGRAM name them: the declaration, or one server's
    instance of it with ``commands`` (:attr:`CommandTable.by_name`)."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    parent_name, bar, sub_name = name.lower().partition("|")
    cmd = (COMMANDS if commands is None else commands).get(parent_name)
    if cmd is None or not bar:
        return cmd
    return cmd.subcommands.get(sub_name.encode())


# ---------------------------------------------------------------------------------------------
# Documentation: the syntax string of a declaration, parsed into Redis's argument tree.
#
# Syntax strings are written as in the Redis documentation:
#     key value [NX | XX] [GET] [EX seconds | PX milliseconds | KEEPTTL]
#     key [key ...]            field value [field value ...]
# UPPER-CASE words are tokens, lower-case words are arguments, [...] is optional, <...> groups
# required alternatives (``<M | KM>``), | separates alternatives and "..." repeats the
# preceding item.
# ---------------------------------------------------------------------------------------------

_INTEGER_NAMES: Final = {
    "seconds", "milliseconds", "count", "numkeys", "index", "db", "timeout", "increment",
    "decrement", "offset", "start", "end", "cursor", "port", "client-id", "numreplicas",
    "unix-time-seconds", "unix-time-milliseconds", "destination-db", "delta", "len", "limit",
    "protover", "maxlen", "entries-read", "entries-added", "min-idle-time", "ms", "retrycount",
    "threshold", "length", "microseconds", "numargs", "index1", "index2",
}


def _tokenize(syntax: str) -> list[str]:
    for mark in "[]<>|":
        syntax = syntax.replace(mark, f" {mark} ")
    return syntax.split()


def _arg_type(name: str) -> str:
    if name in ("key", "source", "destination", "newkey") or name.endswith("key"):
        return "key"
    if name == "pattern":
        return "pattern"
    if name.startswith("unix-time"):
        return "unix-time"
    if name in _INTEGER_NAMES:
        return "integer"
    if name in ("score", "min", "max", "float", "longitude", "latitude", "radius", "width",
                "height"):
        return "double"
    return "string"


def _is_token(word: str) -> bool:
    return word.upper() == word and any(ch.isalpha() for ch in word)


def _parse_sequence(tokens: list[str], pos: int) -> tuple[list[dict[str, Any]], int]:
    """Parse items until ']', '>' or end; alternatives separated by '|' become one oneof
    item."""
    alternatives: list[list[dict[str, Any]]] = [[]]
    while pos < len(tokens) and tokens[pos] not in ("]", ">"):
        tok = tokens[pos]
        if tok == "|":
            alternatives.append([])
            pos += 1
            continue
        if tok == "<":
            inner, pos = _parse_sequence(tokens, pos + 1)
            pos += 1  # skip '>'
            alternatives[-1].append(inner[0] if len(inner) == 1 else {
                "name": "_".join(a["name"] for a in inner), "type": "block",
                "arguments": inner})
            continue
        if tok == "[":
            inner, pos = _parse_sequence(tokens, pos + 1)
            pos += 1  # skip ']'
            current = alternatives[-1]
            if (
                inner
                and inner[-1].get("_repeat")
                and len(current) >= len(inner)
                and [a["name"] for a in current[-len(inner):]] == [a["name"] for a in inner]
            ):
                # "key [key ...]" / "field value [field value ...]": the item repeats.
                if len(inner) == 1:
                    current[-1].setdefault("flags", []).append("multiple")
                else:
                    block = {"name": "data", "type": "block", "flags": ["multiple"],
                             "arguments": current[-len(inner):]}
                    del current[-len(inner):]
                    current.append(block)
                continue
            for arg in inner:
                arg.pop("_repeat", None)
            if len(inner) == 1:
                item = inner[0]
            else:
                item = {"name": "_".join(a["name"] for a in inner), "type": "block",
                        "arguments": inner}
            item.setdefault("flags", []).append("optional")
            alternatives[-1].append(item)
            continue
        if tok == "...":
            if alternatives[-1]:
                alternatives[-1][-1]["_repeat"] = True
            pos += 1
            continue
        if _is_token(tok):
            nxt = tokens[pos + 1] if pos + 1 < len(tokens) else ""
            if nxt and nxt not in ("[", "]", "<", ">", "|", "...") and not _is_token(nxt):
                arg = {"name": nxt, "type": _arg_type(nxt), "token": tok}
                pos += 2
            else:
                arg = {"name": tok.lower(), "type": "pure-token", "token": tok}
                pos += 1
        else:
            arg = {"name": tok, "type": _arg_type(tok)}
            pos += 1
        alternatives[-1].append(arg)
    if len(alternatives) == 1:
        return alternatives[0], pos
    options = []
    for alt in alternatives:
        if len(alt) == 1:
            options.append(alt[0])
        else:
            options.append({"name": "_".join(a["name"] for a in alt), "type": "block",
                            "arguments": alt})
    return [{"name": "_".join(o["name"] for o in options)[:40], "type": "oneof",
             "arguments": options}], pos


def syntax_arguments(syntax: str) -> list[dict[str, Any]]:
    """The argument tree of a syntax string, shaped like Redis's COMMAND DOCS ``arguments``."""
    items, _ = _parse_sequence(_tokenize(syntax), 0)
    _clean(items)
    return items


def _clean(items: list[dict[str, Any]]) -> None:
    for item in items:
        item.pop("_repeat", None)
        if "arguments" in item:
            _clean(item["arguments"])
