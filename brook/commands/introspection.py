"""COMMAND and its subcommands.

They read the declarations in the command table, so what ``redis-cli`` shows as hints, what
``COMMAND INFO`` reports and what the documentation lists are the same facts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from brook import glob
from brook.commands.common import help_reply
from brook.commands.key_specs import (
    KEY_SPEC_BEGINS,
    KEY_SPEC_FLAGS,
    flags_of_keys,
    has_keys,
    spec_flags,
)
from brook.commands.registry import (
    COMMANDS,
    NO_SUBCOMMAND,
    WRONG_ARITY,
    Command,
    CommandError,
    command,
    command_named,
    container,
    resolve,
    syntax_arguments,
)
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

# Flags a command has but COMMAND does not show: Redis hides may_replicate on purpose (EVAL,
# PFCOUNT: read-only scripts refuse them all the same).
_HIDDEN_FLAGS: Final = frozenset({"may_replicate"})


def _one_key_spec(flags: list[str], begin: int | tuple[str, int]) -> resp.Map:
    """A key spec of one key found at an index or after a keyword."""
    if isinstance(begin, int):
        search = resp.Map({"type": "index", "spec": resp.Map({"index": begin})})
    else:
        search = resp.Map({"type": "keyword", "spec": resp.Map(
            {"keyword": begin[0], "startfrom": begin[1]})})
    return resp.Map({
        "flags": resp.RSet([resp.Status(f.encode()) for f in flags]),
        "begin_search": search,
        "find_keys": resp.Map({"type": "range", "spec": resp.Map(
            {"lastkey": 0, "keystep": 1, "limit": 0})}),
    })


def _key_specs(cmd: Command) -> list[Any]:
    begins = KEY_SPEC_BEGINS.get(cmd.fullname)
    if begins is not None:
        return [_one_key_spec(spec_flags(cmd.fullname, number), begin)
                for number, begin in enumerate(begins)]
    declared = KEY_SPEC_FLAGS.get(cmd.fullname)
    if declared is not None:
        access = flags_of_keys(cmd.fullname, cmd.is_write, [], 1)[0]
        if "variable_flags" in declared[0]:
            access = declared[0].split()
    elif cmd.key_flags is not None:
        access = list(cmd.key_flags)
    else:
        access = ["RW", "update"] if cmd.is_write else ["RO", "access"]
    if cmd.key_keyword is not None:
        # movablekeys commands whose keys follow a keyword (XREAD ... STREAMS k1 k2 id1 id2):
        # all the remaining arguments, of which the first half are keys.
        return [
            resp.Map(
                {
                    "flags": resp.RSet([resp.Status(f.encode()) for f in access]),
                    "begin_search": resp.Map({"type": "keyword", "spec": resp.Map(
                        {"keyword": cmd.key_keyword, "startfrom": 1})}),
                    "find_keys": resp.Map({"type": "range", "spec": resp.Map(
                        {"lastkey": -1, "keystep": 1, "limit": 2})}),
                }
            )
        ]
    if cmd.first_key <= 0:
        return []
    last = cmd.last_key - cmd.first_key if cmd.last_key >= 0 else cmd.last_key
    return [
        resp.Map(
            {
                "flags": resp.RSet([resp.Status(f.encode()) for f in access]),
                "begin_search": resp.Map(
                    {"type": "index", "spec": resp.Map({"index": cmd.first_key})}
                ),
                "find_keys": resp.Map(
                    {
                        "type": "range",
                        "spec": resp.Map({"lastkey": last, "keystep": cmd.key_step, "limit": 0}),
                    }
                ),
            }
        )
    ]


def command_info(cmd: Command) -> list[Any]:
    """The 10-element COMMAND INFO description of one command."""
    return [
        cmd.fullname,
        cmd.arity,
        resp.RSet([resp.Status(f.encode()) for f in cmd.flags if f not in _HIDDEN_FLAGS]),
        max(cmd.first_key, 0),
        cmd.last_key if cmd.first_key > 0 else 0,
        cmd.key_step if cmd.first_key > 0 else 0,
        resp.RSet([resp.Status(c.encode()) for c in cmd.acl_categories]),
        [],
        _key_specs(cmd),
        [command_info(sub) for sub in cmd.subcommands.values()],
    ]


def _doc_argument(arg: dict[str, Any], key_index: list[int]) -> resp.Map:
    doc: dict[str, Any] = {"name": arg["name"], "type": arg["type"]}
    if arg["type"] == "key":
        doc["key_spec_index"] = 0
        key_index[0] += 1
    if "token" in arg:
        doc["token"] = arg["token"]
    if arg.get("flags"):
        doc["flags"] = resp.RSet([resp.Status(f.encode()) for f in arg["flags"]])
    if "arguments" in arg:
        doc["arguments"] = [_doc_argument(a, key_index) for a in arg["arguments"]]
    return resp.Map(doc)


def command_docs(cmd: Command) -> resp.Map:
    """The COMMAND DOCS description of one command (redis-cli builds its hints from it)."""
    doc: dict[str, Any] = {
        "summary": cmd.summary,
        "since": cmd.since,
        "group": cmd.group,
        "complexity": cmd.complexity,
    }
    if cmd.syntax:
        doc["arguments"] = [_doc_argument(a, [0]) for a in syntax_arguments(cmd.syntax)]
    if cmd.subcommands:
        doc["subcommands"] = resp.Map(
            {sub.fullname: command_docs(sub) for sub in cmd.subcommands.values()}
        )
    return resp.Map(doc)


container(
    "command", arity=-1, flags="loading stale", acl="@slow @connection", group="server",
    since="2.8.13", summary="Returns detailed information about all commands.",
)


def _command_root(client: Session, args: list[bytes]) -> bytes:
    return resp.encode([command_info(c) for c in COMMANDS.values()], client.protocol)


# COMMAND without a subcommand lists everything: it is the container's own handler. With more
# arguments the arity check fails on the fast path, so the dispatcher resolves the subcommand.
COMMANDS["command"].handler = _command_root
COMMANDS["command"].max_args = 1


@command("command|count", arity=2, flags="loading stale", acl="@slow @connection",
         since="2.8.13", summary="Returns a count of commands.", syntax="")
def command_count(client: Session, args: list[bytes]) -> bytes:
    return resp.integer(len(COMMANDS))


@command("command|info", arity=-2, flags="loading stale", acl="@slow @connection",
         since="2.8.13", summary="Returns information about one, multiple or all commands.",
         complexity="O(N) where N is the number of commands to look up",
         syntax="[command-name [command-name ...]]")
def command_info_cmd(client: Session, args: list[bytes]) -> bytes:
    if len(args) == 2:
        return _command_root(client, args)
    found: list[Any] = []
    for name in args[2:]:
        cmd = command_named(name)
        found.append(None if cmd is None else command_info(cmd))
    return resp.encode(found, client.protocol)


@command("command|docs", arity=-2, flags="loading stale", acl="@slow @connection",
         since="7.0.0", summary="Returns documentary information about one, multiple or all commands.",
         complexity="O(N) where N is the number of commands to look up",
         syntax="[command-name [command-name ...]]")
def command_docs_cmd(client: Session, args: list[bytes]) -> bytes:
    names = args[2:]
    docs: dict[str, Any] = {}
    if not names:
        for cmd in COMMANDS.values():
            docs[cmd.fullname] = command_docs(cmd)
    for name in names:
        cmd = command_named(name)
        if cmd is not None:
            docs[cmd.fullname] = command_docs(cmd)
    return resp.encode(resp.Map(docs), client.protocol)


@command("command|list", arity=-2, flags="loading stale", acl="@slow @connection",
         since="7.0.0", summary="Returns a list of command names.",
         complexity="O(N) where N is the total number of Redis commands",
         syntax="[FILTERBY MODULE module-name | ACLCAT category | PATTERN pattern]")
def command_list(client: Session, args: list[bytes]) -> bytes:
    everything = []
    for cmd in COMMANDS.values():
        everything.append(cmd)
        everything.extend(cmd.subcommands.values())
    if len(args) == 2:
        return resp.array_of_bulks(c.fullname.encode() for c in everything)
    if len(args) != 5 or args[2].lower() != b"filterby":
        raise CommandError("ERR syntax error")
    kind, value = args[3].lower(), args[4].decode("utf-8", "replace")
    if kind == b"module":
        selected: list[Command] = []
    elif kind == b"aclcat":
        selected = [c for c in everything if f"@{value.lower()}" in c.acl_categories]
    elif kind == b"pattern":
        matcher = glob.matcher(args[4], nocase=True)
        selected = [c for c in everything if matcher(c.fullname.encode())]
    else:
        raise CommandError("ERR syntax error")
    return resp.array_of_bulks(c.fullname.encode() for c in selected)


def _keys_of_request(client: Session, args: list[bytes]) -> tuple[Command, list[int]]:
    """COMMAND GETKEYS's checks, in Redis's order, and the positions of the keys in the
    request ``args[2:]``."""
    request = args[2:]
    target, found = resolve(client.server.command_table, request)
    if target is None or found == NO_SUBCOMMAND:
        raise CommandError("ERR Invalid command specified")
    if (target.first_key <= 0 and target.find_keys is None
            or not has_keys(target.fullname)):
        raise CommandError("ERR The command has no key arguments")
    if found == WRONG_ARITY:
        raise CommandError("ERR Invalid number of arguments specified for command")
    positions = target.key_positions(len(request), request)
    if not positions and "no_mandatory_keys" not in target.flags:
        raise CommandError("ERR Invalid arguments specified for command")
    return target, positions


@command("command|getkeys", arity=-3, flags="loading stale", acl="@slow @connection",
         since="2.8.13", summary="Extracts the key names from an arbitrary command.",
         complexity="O(N) where N is the number of arguments to the command",
         syntax="command [arg [arg ...]]")
def command_getkeys(client: Session, args: list[bytes]) -> bytes:
    _, positions = _keys_of_request(client, args)
    request = args[2:]
    return resp.array_of_bulks(request[i] for i in positions)


@command("command|getkeysandflags", arity=-3, flags="loading stale", acl="@slow @connection",
         since="7.0.0", summary="Extracts the key names and access flags for an arbitrary "
         "command.",
         complexity="O(N) where N is the number of arguments to the command",
         syntax="command [arg [arg ...]]")
def command_getkeysandflags(client: Session, args: list[bytes]) -> bytes:
    target, positions = _keys_of_request(client, args)
    request = args[2:]
    flags = flags_of_keys(target.fullname, target.is_write, request, len(positions))
    return resp.encode(
        [[request[i], resp.RSet([resp.Status(f.encode()) for f in key_flags])]
         for i, key_flags in zip(positions, flags, strict=True)],
        client.protocol,
    )


_COMMAND_HELP = [
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
]


@command("command|help", arity=2, flags="loading stale", acl="@slow @connection",
         since="5.0.0", summary="Returns helpful text about the different subcommands.", syntax="")
def command_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _COMMAND_HELP)
