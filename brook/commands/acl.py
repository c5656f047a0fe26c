"""ACL: users and their rules (SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI), the categories
(CAT), passwords (GENPASS), what a user may run (DRYRUN) and the log of denials (LOG).

The rules and checks are brook/acl's; this module parses requests and shapes replies as Redis
does (the newest Redis's descriptions: command rules as typed, ``sanitize-payload``).
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Final

from brook.acl.rules import CATEGORIES, AclRuleError, User, category_commands, merge_selectors
from brook.acl.users import COMMAND, KEY, AclFileError, Denial, write_acl_file
from brook.commands.args import parse_int
from brook.commands.common import help_reply
from brook.commands.registry import (
    NO_SUBCOMMAND,
    WRONG_ARITY,
    CommandError,
    command,
    container,
    resolve,
    subcommand_error,
    text,
)
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.commands.registry import Command
    from brook.session import Session

_ADMIN: Final = "admin noscript loading stale"
_ADMIN_ACL: Final = "@admin @slow @dangerous"
_PLAIN: Final = "noscript loading stale"

_NO_ACL_FILE: Final = (
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.")

_HELP: Final = [
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
]

container("acl", group="server", acl="@slow", since="6.0.0",
          summary="A container for Access List Control commands.")


@command("acl|setuser", arity=-3, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="Modify or create the rules for a specific ACL user",
         complexity="O(N). Where N is the number of rules provided.",
         syntax="username [rule [rule ...]]")
def acl_setuser(client: Session, args: list[bytes]) -> bytes:
    name = args[2].decode("utf-8", "surrogateescape")
    if any(char.isspace() or char == "\0" for char in name):
        raise CommandError("ERR Usernames can't contain spaces or null characters")
    server = client.server
    rules, unclosed = merge_selectors([arg.decode("utf-8", "surrogateescape")
                                       for arg in args[3:]])
    if unclosed is not None:
        raise CommandError(f"ERR Unmatched parenthesis in acl selector starting at '{unclosed}'.")
    try:
        user = server.acl.set_user(name, rules, server.config.acl_pubsub_default == "allchannels")
    except AclRuleError as err:
        message, op = err.args
        raise CommandError(f"ERR Error in ACL SETUSER modifier '{op}': {message}") from err
    server.acl_user_changed(user)
    return resp.OK


@command("acl|getuser", arity=3, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="Get the rules for a specific ACL user",
         complexity="O(N). Where N is the number of password, command and pattern rules that "
                    "the user has.",
         syntax="username")
def acl_getuser(client: Session, args: list[bytes]) -> bytes:
    user = client.server.acl.users.get(args[2].decode("utf-8", "surrogateescape"))
    if user is None:
        return resp.null(client.protocol)
    root = user.root
    selectors = [resp.Map({"commands": selector.describe_commands().encode(),
                           "keys": selector.describe_keys().encode(),
                           "channels": selector.describe_channels().encode()})
                 for selector in user.selectors[1:]]
    return resp.encode(resp.Map({
        "flags": resp.RSet([flag.encode() for flag in user.flags()]),
        "passwords": [digest.encode() for digest in user.passwords],
        "commands": root.describe_commands().encode(),
        "keys": root.describe_keys().encode(),
        "channels": root.describe_channels().encode(),
        "selectors": selectors,
    }), client.protocol)


@command("acl|list", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="List the current ACL rules in ACL config file format",
         complexity="O(N). Where N is the number of configured users.", syntax="")
def acl_list(client: Session, args: list[bytes]) -> bytes:
    return resp.array_of_bulks(line.encode("utf-8", "surrogateescape")
                               for line in client.server.acl.list_lines())


@command("acl|users", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="List the username of all the configured ACL rules",
         complexity="O(N). Where N is the number of configured users.", syntax="")
def acl_users(client: Session, args: list[bytes]) -> bytes:
    return resp.array_of_bulks(user.name.encode("utf-8", "surrogateescape")
                               for user in client.server.acl.sorted_users())


@command("acl|whoami", arity=2, flags=_PLAIN, acl="@slow", since="6.0.0",
         summary="Return the name of the user associated to the current connection",
         complexity="O(1)", syntax="")
def acl_whoami(client: Session, args: list[bytes]) -> bytes:
    return resp.bulk(client.user.name.encode("utf-8", "surrogateescape"))


@command("acl|deluser", arity=-3, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="Remove the specified ACL users and the associated rules",
         complexity="O(1) amortized time considering the typical user.",
         syntax="username [username ...]")
def acl_deluser(client: Session, args: list[bytes]) -> bytes:
    names = [arg.decode("utf-8", "surrogateescape") for arg in args[2:]]
    if "default" in names:
        raise CommandError("ERR The 'default' user cannot be removed")
    server = client.server
    deleted = 0
    for name in dict.fromkeys(names):
        user = server.acl.users.pop(name, None)
        if user is not None:
            deleted += 1
            server.acl_user_deleted(user, client)
    return resp.integer(deleted)


@command("acl|cat", arity=-2, flags=_PLAIN, acl="@slow", since="6.0.0",
         summary="List the ACL categories or the commands inside a category",
         complexity="O(1) since the categories and commands are a fixed set.",
         syntax="[category]")
def acl_cat(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 3:
        raise subcommand_error(args, "ACL")
    if len(args) == 2:
        return resp.array_of_bulks(name.encode() for name in CATEGORIES)
    category = args[2].decode("utf-8", "replace").lower()
    if category not in CATEGORIES:
        raise CommandError(f"ERR Unknown category '{text(args[2], 128)}'")
    return resp.array_of_bulks(cmd.fullname.encode() for cmd in category_commands(category))


@command("acl|genpass", arity=-2, flags=_PLAIN, acl="@slow", since="6.0.0",
         summary="Generate a pseudorandom secure password to use for ACL users",
         complexity="O(1)", syntax="[bits]")
def acl_genpass(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 3:
        raise subcommand_error(args, "ACL")
    bits = parse_int(args[2]) if len(args) == 3 else 256
    if not 0 < bits <= 4096:
        raise CommandError("ERR ACL GENPASS argument must be the number of bits for the output "
                           "password, a positive number up to 4096")
    return resp.bulk(secrets.token_hex((bits + 7) // 8)[:(bits + 3) // 4].encode())


@command("acl|dryrun", arity=-4, flags=_ADMIN, acl=_ADMIN_ACL, since="7.0.0",
         summary="Returns whether the user can execute the given command without executing "
                 "the command.",
         complexity="O(1).", syntax="username command [arg [arg ...]]")
def acl_dryrun(client: Session, args: list[bytes]) -> bytes:
    acl = client.server.acl
    name = args[2].decode("utf-8", "surrogateescape")
    user = acl.users.get(name)
    if user is None:
        raise CommandError(f"ERR User '{name}' not found")
    request = args[3:]
    cmd, found = resolve(client.server.command_table, request)
    if cmd is None or found == NO_SUBCOMMAND:
        raise CommandError(f"ERR Command '{text(args[3])}' not found")
    if found == WRONG_ARITY:
        raise CommandError(f"ERR wrong number of arguments for '{cmd.fullname}' command")
    denial = acl.check(user, cmd, request)
    if denial is None:
        return resp.OK
    return resp.bulk(denial_text(user, cmd, request, denial).encode("utf-8", "surrogateescape"))


def denial_text(user: User, cmd: Command, args: list[bytes], denial: Denial) -> str:
    """DRYRUN's reply for a denied request (the log's wording, with the object named)."""
    if denial.reason == COMMAND:
        return f"User {user.name} has no permissions to run the '{cmd.fullname}' command"
    what = "key" if denial.reason == KEY else "channel"
    return (f"User {user.name} has no permissions to access the "
            f"'{text(args[denial.index])}' {what}")


@command("acl|log", arity=-2, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="List latest events denied because of ACLs in place",
         complexity="O(N) with N being the number of entries shown.", syntax="[count | RESET]")
def acl_log(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 3:
        raise subcommand_error(args, "ACL")
    acl = client.server.acl
    count = 10
    if len(args) == 3:
        if args[2].lower() == b"reset":
            acl.log.clear()
            return resp.OK
        count = max(parse_int(args[2]), 0)
    now = int(time.time() * 1000)
    entries = [resp.Map({
        "count": entry.count,
        "reason": entry.reason.encode(),
        "context": entry.context.encode(),
        "object": entry.object,
        "username": entry.username,
        "age-seconds": resp.Double((now - entry.updated_ms) / 1000),
        "client-info": entry.client_info,
        "entry-id": entry.entry_id,
        "timestamp-created": entry.created_ms,
        "timestamp-last-updated": entry.updated_ms,
    }) for entry in acl.log[:count]]
    return resp.encode(entries, client.protocol)


def _acl_file(client: Session) -> str:
    """The configured ACL file (LOAD and SAVE refuse to run without one)."""
    path = client.server.config.aclfile
    if not path:
        raise CommandError(_NO_ACL_FILE)
    return path


@command("acl|load", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="Reload the ACLs from the configured ACL file",
         complexity="O(N). Where N is the number of configured users.", syntax="")
def acl_load(client: Session, args: list[bytes]) -> bytes:
    path = _acl_file(client)
    try:
        client.server.load_acl_file(path)
    except AclFileError as err:
        raise CommandError(f"ERR {err}") from err
    return resp.OK


@command("acl|save", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="6.0.0",
         summary="Save the current ACL rules in the configured ACL file",
         complexity="O(N). Where N is the number of configured users.", syntax="")
def acl_save(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    path = _acl_file(client)
    try:
        write_acl_file(path, server.acl.list_lines())
    except AclFileError as err:
        server.log("warning", f"Saving ACL file '{path}': {err}")
        raise CommandError("ERR There was an error trying to save the ACLs. Please check the "
                           "server logs for more information") from err
    return resp.OK


@command("acl|help", arity=2, flags="loading stale", acl="@slow", since="6.0.0",
         summary="Show helpful text about the different subcommands", complexity="O(1)",
         syntax="")
def acl_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _HELP)

