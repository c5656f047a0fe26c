"""DEBUG: Redis's testing knobs (SLEEP, OBJECT, PROTOCOL, RELOAD, SET-ACTIVE-EXPIRE...).

DEBUG is one command whose first argument picks the action, as in Redis. Every action is
declared once below, with its argument count and its lines in DEBUG HELP; the table the command
reads and its HELP are both built from those declarations, in one place. An action that works on
another part of the server (RELOAD: the snapshot) calls that part's functions (brook.persistence)
from here. The module imports the command table (registry), the shared helpers (args, common)
and lower layers: no other family.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brook.commands.args import parse_int
from brook.commands.common import help_reply, protected_action_allowed, protected_command_error
from brook.commands.registry import NO_SUCH_KEY, CommandError, command, subcommand_error
from brook.keyspace import ENCODINGS
from brook.persistence.dataset import SnapshotError, load_dataset
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

_ADMIN = "admin noscript loading stale"
_ADMIN_ACL = "@admin @slow @dangerous"

_C_INTEGER_PREFIX = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_C_DOUBLE_PREFIX = re.compile(
    rb"[ \t\n\v\f\r]*([+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
    rb"|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


def c_atoi(arg: bytes) -> int:
    """C's ``atoi``: the leading integer of the argument, 0 when there is none."""
    found = _C_INTEGER_PREFIX.match(arg)
    return int(found.group(1)) if found else 0


def c_strtod(arg: bytes) -> float:
    """C's ``strtod`` without an end pointer: the leading number, 0.0 when there is none."""
    found = _C_DOUBLE_PREFIX.match(arg)
    return float(found.group(1)) if found else 0.0


def _debug_sleep(client: Session, args: list[bytes]) -> bytes:
    seconds = c_strtod(args[2])
    if seconds > 0 and seconds != float("inf"):
        time.sleep(seconds)  # blocks the whole server, which is the point of DEBUG SLEEP
    return resp.OK


def _debug_set_active_expire(client: Session, args: list[bytes]) -> bytes:
    client.server.keyspace.active_expire_enabled = bool(c_atoi(args[2]))
    return resp.OK


def _debug_set_disable_deny_scripts(client: Session, args: list[bytes]) -> bytes:
    """Let scripts run commands flagged ``noscript`` (Redis's test knob)."""
    client.server.scripting.deny_script_disabled = bool(c_atoi(args[2]))
    return resp.OK


def _string_encoding(value: object) -> str:
    if isinstance(value, bytes):
        if len(value) <= 20 and parse_int_or_none(value) is not None:
            return "int"
        return "embstr" if len(value) <= 44 else "raw"
    return "raw"


def parse_int_or_none(value: bytes) -> int | None:
    try:
        return parse_int(value)
    except CommandError:
        return None


def _serialized_length(value: object) -> int:
    """An estimate of the RDB size of a value (DEBUG OBJECT's serializedlength)."""
    if isinstance(value, bytes | bytearray):
        number = parse_int_or_none(bytes(value)) if len(value) <= 20 else None
        if number is not None and -(2**31) <= number < 2**31:
            return 2 if -128 <= number < 128 else 3 if -32768 <= number < 32768 else 5
        size = len(value)
        return size + (1 if size < 64 else 2 if size < 16384 else 5)
    try:
        return len(value)  # type: ignore[arg-type]
    except TypeError:
        return 1


def _debug_object(client: Session, args: list[bytes]) -> bytes:
    value = client.db.data.get(args[2])  # as Redis: an expired key not yet deleted is there
    if value is None:
        raise CommandError(NO_SUCH_KEY)
    encoder = ENCODINGS.get(type(value))
    encoding = encoder(value) if encoder is not None else _string_encoding(value)
    # The key's access field as it is (Redis's o->lru: LFU data under an LFU policy), read
    # without counting as an access.
    field = client.db.data.access(args[2]) or 0
    return resp.simple(
        f"Value at:0x{id(value):x} refcount:1 encoding:{encoding} "
        f"serializedlength:{_serialized_length(value)} lru:{field} "
        f"lru_seconds_idle:{client.db.idle_seconds(args[2])}"
    )


def _debug_log(client: Session, args: list[bytes]) -> bytes:
    client.server.log("warning", f"DEBUG LOG: {args[2].decode('utf-8', 'replace')}")
    return resp.OK


_PROTOCOL_REPLIES: dict[bytes, tuple[bytes, bytes]] = {
    # type: (RESP2 reply, RESP3 reply), as Redis's DEBUG PROTOCOL sends them
    b"string": (b"$11\r\nHello World\r\n", b"$11\r\nHello World\r\n"),
    b"integer": (b":12345\r\n", b":12345\r\n"),
    b"double": (b"$5\r\n3.141\r\n", b",3.141\r\n"),
    b"bignum": (
        b"$37\r\n1234567999999999999999999999999999999\r\n",
        b"(1234567999999999999999999999999999999\r\n",
    ),
    b"null": (b"$-1\r\n", b"_\r\n"),
    b"array": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
    b"set": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    b"map": (
        b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
        b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n",
    ),
    b"attrib": (
        b"$39\r\nSome real reply following the attribute\r\n",
        b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
        b"$39\r\nSome real reply following the attribute\r\n",
    ),
    b"push": (
        b"-ERR RESP2 is not supported by this command\r\n",
        b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n",
    ),
    b"verbatim": (
        b"$25\r\nThis is a verbatim\nstring\r\n",
        b"=29\r\ntxt:This is a verbatim\nstring\r\n",
    ),
    b"true": (b":1\r\n", b"#t\r\n"),
    b"false": (b":0\r\n", b"#f\r\n"),
}


def _debug_protocol(client: Session, args: list[bytes]) -> bytes:
    replies = _PROTOCOL_REPLIES.get(args[2].lower())
    if replies is None:
        raise CommandError(
            "ERR Wrong protocol type name. Please use one of the following: "
            "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"
        )
    if args[2].lower() == b"push" and client.protocol == 2:
        raise CommandError("ERR RESP2 is not supported by this command")
    return replies[0] if client.protocol == 2 else replies[1]


def _debug_reload(client: Session, args: list[bytes]) -> bytes:
    """Save the snapshot, empty every database and load the snapshot back (Redis's DEBUG
    RELOAD): a round trip through the snapshot format in one command."""
    server = client.server
    persistence = server.persistence
    if persistence.child_active() == "rdb":
        raise CommandError("ERR Background save already in progress")
    try:
        persistence.save()
    except OSError as err:
        raise CommandError("ERR Error trying to save the DB") from err
    for db in server.keyspace.databases:
        db.clear()
    server.tracking.flushed()  # caching clients learn that everything changed
    try:
        load_dataset(server.keyspace, server.config.dbfilename, server.config)
    except SnapshotError as err:
        raise CommandError(f"ERR Error trying to load the snapshot: {err}") from err
    return resp.OK


@dataclass(frozen=True)
class _DebugAction:
    """One DEBUG action: the exact argument count of its request (DEBUG and the action's name
    included), its handler, and its lines in DEBUG HELP."""

    name: bytes
    argc: int
    handler: Callable[[Session, list[bytes]], bytes]
    help: tuple[str, ...]


# Every DEBUG action, in DEBUG HELP's order (Redis's: alphabetical).
_DEBUG_ACTIONS = (
    _DebugAction(b"log", 3, _debug_log, (
        "LOG <message>",
        "    Write <message> to the server log.",
    )),
    _DebugAction(b"object", 3, _debug_object, (
        "OBJECT <key>",
        "    Show low level info about `key` and associated value.",
    )),
    _DebugAction(b"protocol", 3, _debug_protocol, (
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
    )),
    _DebugAction(b"reload", 2, _debug_reload, (
        "RELOAD",
        "    Save the snapshot on disk, empty the dataset and reload it from the snapshot.",
    )),
    _DebugAction(b"set-active-expire", 3, _debug_set_active_expire, (
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
    )),
    _DebugAction(b"set-disable-deny-scripts", 3, _debug_set_disable_deny_scripts, (
        "SET-DISABLE-DENY-SCRIPTS <0|1>",
        "    Setting it to 1 allows scripts to run commands flagged noscript (such as",
        "    blocking ones, which then do not block).",
    )),
    _DebugAction(b"sleep", 3, _debug_sleep, (
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
    )),
)
_DEBUG_TABLE = {action.name: action for action in _DEBUG_ACTIONS}
_DEBUG_HELP = [line for action in _DEBUG_ACTIONS for line in action.help]


@command("debug", arity=-2, flags=_ADMIN, acl=_ADMIN_ACL, group="server",
         summary="A container for debugging commands.", complexity="Depends on subcommand.",
         syntax="")
def debug(client: Session, args: list[bytes]) -> bytes:
    """One command whose first argument picks the action, as in Redis (not a container)."""
    if not protected_action_allowed(client.server.config.enable_debug_command, client):
        raise protected_command_error("DEBUG", "enable-debug-command")
    name = args[1].lower()
    if name == b"help" and len(args) == 2:
        return help_reply(args, _DEBUG_HELP)
    action = _DEBUG_TABLE.get(name)
    if action is None or action.argc != len(args):
        raise subcommand_error(args, "DEBUG")
    return action.handler(client, args)
