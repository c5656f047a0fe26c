"""CLIENT: naming, listing, killing and configuring connections.

CLIENT LIST and CLIENT INFO print one line per connection with Redis's fields in Redis's order
(``id=4 addr=... flags=N ... resp=2 lib-name= lib-ver=``): tools split it on spaces and ``=``.
Brook has no per-client memory accounting like Redis's allocator, so the memory fields report
what is really buffered (query buffer, queued MULTI arguments, pending output).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from brook.commands.args import parse_int
from brook.commands.common import check_client_name, help_reply
from brook.commands.registry import (
    SYNTAX_ERROR,
    CommandError,
    command,
    container,
    subcommand_error,
    text,
)
from brook.protocol import resp
from brook.session import REPLY_OFF, REPLY_ON, REPLY_SKIP_NEXT

if TYPE_CHECKING:
    from brook.acl.rules import User
    from brook.session import Session

_CLIENT_TYPES = {b"normal": "normal", b"slave": "replica", b"replica": "replica",
                 b"master": "master", b"pubsub": "pubsub"}

container("client", group="connection", acl="@slow", since="2.4.0",
          summary="A container for client connection commands.")

_CONN = "loading noscript stale"
_CONN_ACL = "@slow @connection"
_ADMIN = "admin noscript loading stale"
_ADMIN_ACL = "@admin @slow @dangerous @connection"


# ---------------------------------------------------------------------------------------------
# The CLIENT LIST line
# ---------------------------------------------------------------------------------------------


def _list_reply(client: Session, clients: Iterable[Session], args: list[bytes]) -> bytes:
    now = time.time()
    lines = b"".join(
        c.info_line(now, args if c is client else None) + b"\n" for c in clients
    )
    return resp.encode(resp.Verbatim(lines), client.protocol)


# ---------------------------------------------------------------------------------------------
# Identity
# ---------------------------------------------------------------------------------------------


@command("client|id", arity=2, flags=_CONN, acl=_CONN_ACL, since="5.0.0",
         summary="Returns the unique client ID of the connection.", syntax="")
def client_id(client: Session, args: list[bytes]) -> bytes:
    return resp.integer(client.id)


@command("client|setname", arity=3, flags=_CONN, acl=_CONN_ACL, since="2.6.9",
         summary="Sets the connection name.", syntax="connection-name")
def client_setname(client: Session, args: list[bytes]) -> bytes:
    check_client_name(args[2])
    client.name = args[2]
    return resp.OK


@command("client|getname", arity=2, flags=_CONN, acl=_CONN_ACL, since="2.6.9",
         summary="Returns the name of the connection.", syntax="")
def client_getname(client: Session, args: list[bytes]) -> bytes:
    return resp.bulk_or_null(client.name or None, client.protocol)


@command("client|setinfo", arity=4, flags=_CONN, acl=_CONN_ACL, since="7.2.0",
         summary="Sets information specific to the client or connection.",
         syntax="LIB-NAME libname | LIB-VER libver")
def client_setinfo(client: Session, args: list[bytes]) -> bytes:
    attribute = args[2].lower()
    if attribute not in (b"lib-name", b"lib-ver"):
        raise CommandError(f"ERR Unrecognized option '{text(args[2])}'")
    value = args[3]
    for byte in value:
        if byte < 0x21 or byte > 0x7E:
            raise CommandError(
                f"ERR {text(args[2])} cannot contain spaces, newlines or special characters."
            )
    if attribute == b"lib-name":
        client.lib_name = value
    else:
        client.lib_ver = value
    return resp.OK


# ---------------------------------------------------------------------------------------------
# LIST, INFO, KILL
# ---------------------------------------------------------------------------------------------


def _parse_type(arg: bytes) -> str:
    kind = _CLIENT_TYPES.get(arg.lower())
    if kind is None:
        raise CommandError(f"ERR Unknown client type '{text(arg)}'")
    return kind


@command("client|list", arity=-2, flags=_ADMIN, acl=_ADMIN_ACL, since="2.4.0",
         summary="Lists open connections.",
         complexity="O(N) where N is the number of client connections",
         syntax="[TYPE NORMAL | MASTER | REPLICA | PUBSUB] [ID client-id [client-id ...]]")
def client_list(client: Session, args: list[bytes]) -> bytes:
    clients = client.server.clients
    if len(args) == 4 and args[2].lower() == b"type":
        kind = _parse_type(args[3])
        return _list_reply(client, (c for c in clients.values() if c.client_type() == kind), args)
    if len(args) > 3 and args[2].lower() == b"id":
        ids = [parse_int(a, "ERR Invalid client ID") for a in args[3:]]
        found = (clients[i] for i in ids if i in clients)
        return _list_reply(client, found, args)
    if len(args) != 2:
        raise CommandError(SYNTAX_ERROR)
    return _list_reply(client, list(clients.values()), args)


@command("client|info", arity=2, flags=_CONN, acl=_CONN_ACL, since="6.2.0",
         summary="Returns information about the connection.", syntax="")
def client_info(client: Session, args: list[bytes]) -> bytes:
    return _list_reply(client, [client], args)


class KillFilter:
    """CLIENT KILL's filters; every given one must match (Redis's clientKill). A plain class,
    not a dataclass: the compiled build runs a dataclass's generated ``__init__`` interpreted."""

    def __init__(self) -> None:
        self.client_id: int | None = None
        self.kind: str | None = None
        self.addr: str | None = None
        self.laddr: str | None = None
        self.user: User | None = None  # the ACL user (compared by identity)
        self.skip_me = True
        self.max_age = 0

    def matches(self, candidate: Session, caller: Session, now: float) -> bool:
        if self.addr is not None and candidate.addr != self.addr:
            return False
        if self.laddr is not None and candidate.laddr != self.laddr:
            return False
        if self.kind is not None and candidate.client_type() != self.kind:
            return False
        if self.client_id is not None and candidate.id != self.client_id:
            return False
        if self.user is not None and candidate.user is not self.user:
            return False
        if self.skip_me and candidate is caller:
            return False
        return not (self.max_age and int(now) - int(candidate.created) < self.max_age)

    def matches_master(self, address: str) -> bool:
        """Whether the link to this replica's master (at ``address``) is one of the clients
        to kill: Redis's master client has no ACL user, and no ID or local address a caller
        could know. Cut, the link comes back with a partial resynchronisation."""
        if self.client_id is not None or self.user is not None or self.laddr is not None:
            return False
        if self.addr is not None and self.addr != address:
            return False
        return self.kind == "master" or (self.kind is None and self.addr is not None)


def _parse_kill_filter(client: Session, args: list[bytes]) -> KillFilter:
    """The option/value pairs, read in order: an option's own error comes before a later
    one's, and an option without its value is a syntax error where it stands."""
    found = KillFilter()
    position = 2
    while position < len(args):
        option = args[position].lower()
        if position + 1 >= len(args):
            raise CommandError(SYNTAX_ERROR)
        value = args[position + 1]
        if option == b"id":
            try:
                found.client_id = parse_int(value)
            except CommandError:
                found.client_id = 0
            if found.client_id < 1:
                raise CommandError("ERR client-id should be greater than 0")
        elif option == b"maxage":
            found.max_age = parse_int(value, "ERR maxage is not an integer or out of range")
            if found.max_age <= 0:
                raise CommandError("ERR maxage should be greater than 0")
        elif option == b"type":
            found.kind = _parse_type(value)
        elif option == b"addr":
            found.addr = text(value)
        elif option == b"laddr":
            found.laddr = text(value)
        elif option == b"user":
            found.user = client.server.acl.users.get(value.decode("utf-8", "surrogateescape"))
            if found.user is None:
                raise CommandError(f"ERR No such user '{text(value)}'")
        elif option == b"skipme":
            if value.lower() not in (b"yes", b"no"):
                raise CommandError(SYNTAX_ERROR)
            found.skip_me = value.lower() == b"yes"
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 2
    return found


def _kill(target: Session, caller: Session) -> None:
    """The caller itself is closed after its reply; others at once."""
    if target is caller:
        caller.close()
    else:
        target.kill()


@command("client|kill", arity=-3, flags=_ADMIN, acl=_ADMIN_ACL, since="2.4.0",
         summary="Terminates open connections.",
         complexity="O(N) where N is the number of client connections",
         syntax="ip:port | [ID client-id] [TYPE NORMAL | MASTER | SLAVE | REPLICA | PUBSUB] "
                "[USER username] [ADDR ip:port] [LADDR ip:port] [SKIPME YES | NO] "
                "[MAXAGE maxage]")
def client_kill(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    if len(args) == 3:
        # The old form: one address, and a client may kill itself.
        address = text(args[2])
        for candidate in server.clients.values():
            if candidate.addr == address:
                _kill(candidate, client)
                return resp.OK
        raise CommandError("ERR No such client")
    kill_filter = _parse_kill_filter(client, args)
    now = time.time()
    if kill_filter.client_id is not None:
        single = server.clients.get(kill_filter.client_id)
        candidates = [single] if single is not None else []
    else:
        candidates = list(server.clients.values())
    killed = 0
    for candidate in candidates:
        if kill_filter.matches(candidate, client, now):
            _kill(candidate, client)
            killed += 1
    link = server.replication.link
    if (link is not None and link.state == "connected"
            and kill_filter.matches_master(link.address) and not kill_filter.max_age):
        link.cut()
        killed += 1
    return resp.integer(killed)


@command("client|unblock", arity=-3, flags=_ADMIN, acl=_ADMIN_ACL, since="5.0.0",
         summary="Unblocks a client blocked by a blocking command from a different connection.",
         complexity="O(log N) where N is the number of client connections",
         syntax="client-id [TIMEOUT | ERROR]")
def client_unblock(client: Session, args: list[bytes]) -> bytes:
    client_id = parse_int(args[2])
    with_error = False
    if len(args) == 4:
        reason = args[3].lower()
        if reason not in (b"timeout", b"error"):
            raise CommandError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
        with_error = reason == b"error"
    elif len(args) > 4:
        raise subcommand_error(args, "CLIENT")
    target = client.server.clients.get(client_id)
    if target is None or target.blocked is None:
        return resp.ZERO
    client.server.blocking.unblock(target, with_error)
    return resp.ONE


# ---------------------------------------------------------------------------------------------
# Modes
# ---------------------------------------------------------------------------------------------


@command("client|reply", arity=3, flags=_CONN, acl=_CONN_ACL, since="3.2.0",
         summary="Instructs the server whether to reply to commands.", syntax="ON | OFF | SKIP")
def client_reply(client: Session, args: list[bytes]) -> bytes:
    mode = args[2].lower()
    if mode == b"on":
        client.reply_mode = REPLY_ON
        client.refresh_mode()
        return resp.OK
    if mode == b"off":
        client.reply_mode = REPLY_OFF
    elif mode == b"skip":
        if client.reply_mode != REPLY_OFF:
            client.reply_mode = REPLY_SKIP_NEXT
    else:
        raise CommandError(SYNTAX_ERROR)
    client.refresh_mode()
    return b""


def _on_off(arg: bytes) -> bool:
    lowered = arg.lower()
    if lowered == b"on":
        return True
    if lowered == b"off":
        return False
    raise CommandError(SYNTAX_ERROR)


@command("client|no-evict", arity=3, flags=_ADMIN, acl=_ADMIN_ACL, since="7.0.0",
         summary="Sets the client eviction mode of the connection.", syntax="ON | OFF")
def client_no_evict(client: Session, args: list[bytes]) -> bytes:
    client.no_evict = _on_off(args[2])
    return resp.OK


@command("client|no-touch", arity=3, flags="noscript loading stale", acl="@slow @connection",
         since="7.2.0",
         summary="Controls whether commands sent by the client affect the LRU/LFU of accessed "
                 "keys.",
         syntax="ON | OFF")
def client_no_touch(client: Session, args: list[bytes]) -> bytes:
    client.no_touch = _on_off(args[2])
    client.refresh_mode()  # its commands take the general path, which honours NO-TOUCH
    return resp.OK


# ---------------------------------------------------------------------------------------------
# Client-side caching (the bookkeeping and the messages: brook.tracking)
# ---------------------------------------------------------------------------------------------

_SWITCH_MODE = ("tracking for this client, and then re-enabling it with a different mode.")


@command("client|tracking", arity=-3, flags=_CONN, acl=_CONN_ACL, since="6.0.0",
         summary="Controls server-assisted client-side caching for the connection.",
         complexity="O(1). Some options may introduce additional complexity.",
         syntax="<ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] "
                "[OPTIN] [OPTOUT] [NOLOOP]")
def client_tracking(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    redirect = 0
    bcast = optin = optout = noloop = False
    prefixes: list[bytes] = []
    index = 3
    while index < len(args):
        option = args[index].lower()
        more = index + 1 < len(args)
        if option == b"redirect" and more:
            index += 1
            if redirect:
                raise CommandError("ERR A client can only redirect to a single other client")
            redirect = parse_int(args[index])
            # The target must exist now, even if it may go later (as Redis checks).
            if redirect not in server.clients:
                raise CommandError("ERR The client ID you want redirect to does not exist")
        elif option == b"bcast":
            bcast = True
        elif option == b"optin":
            optin = True
        elif option == b"optout":
            optout = True
        elif option == b"noloop":
            noloop = True
        elif option == b"prefix" and more:
            index += 1
            prefixes.append(args[index])
        else:
            raise CommandError(SYNTAX_ERROR)
        index += 1
    switch = args[2].lower()
    if switch == b"off":
        server.tracking.disable(client)
        return resp.OK
    if switch != b"on":
        raise CommandError(SYNTAX_ERROR)
    if prefixes and not bcast:
        raise CommandError("ERR PREFIX option requires BCAST mode to be enabled")
    if client.tracking and client.tracking_bcast != bcast:
        raise CommandError("ERR You can't switch BCAST mode on/off before disabling "
                           + _SWITCH_MODE)
    if bcast and (optin or optout):
        raise CommandError("ERR OPTIN and OPTOUT are not compatible with BCAST")
    if optin and optout:
        raise CommandError("ERR You can't specify both OPTIN mode and OPTOUT mode")
    if (optin and client.tracking_optout) or (optout and client.tracking_optin):
        raise CommandError("ERR You can't switch OPTIN/OPTOUT mode before disabling "
                           + _SWITCH_MODE)
    if bcast:
        _check_prefixes(client, prefixes)
    server.tracking.enable(client, redirect, bcast, optin, optout, noloop, prefixes)
    return resp.OK


def _check_prefixes(client: Session, prefixes: list[bytes]) -> None:
    """No prefix of a BCAST client may be a prefix of another one of its own (Redis's
    checkPrefixCollisionsOrReply, whose texts these are)."""
    existing = sorted(client.tracking_prefixes)
    for i, prefix in enumerate(prefixes):
        for other in existing:
            if other.startswith(prefix) or prefix.startswith(other):
                raise CommandError(
                    f"ERR Prefix '{text(prefix)}' overlaps with an existing prefix "
                    f"'{text(other)}'. Prefixes for a single client must not overlap.")
        for other in prefixes[i + 1:]:
            if other.startswith(prefix) or prefix.startswith(other):
                raise CommandError(
                    f"ERR Prefix '{text(prefix)}' overlaps with another provided prefix "
                    f"'{text(other)}'. Prefixes for a single client must not overlap.")


@command("client|caching", arity=3, flags=_CONN, acl=_CONN_ACL, since="6.0.0",
         summary="Instructs the server whether to track the keys in the next request.",
         syntax="YES | NO")
def client_caching(client: Session, args: list[bytes]) -> bytes:
    if not client.tracking:
        raise CommandError("ERR CLIENT CACHING can be called only when the client is in "
                           "tracking mode with OPTIN or OPTOUT mode enabled")
    answer = args[2].lower()
    if answer == b"yes":
        if not client.tracking_optin:
            raise CommandError("ERR CLIENT CACHING YES is only valid when tracking is enabled "
                               "in OPTIN mode.")
    elif answer == b"no":
        if not client.tracking_optout:
            raise CommandError("ERR CLIENT CACHING NO is only valid when tracking is enabled "
                               "in OPTOUT mode.")
    else:
        raise CommandError(SYNTAX_ERROR)
    client.tracking_caching = True  # for the next command or transaction (Dispatcher)
    return resp.OK


@command("client|trackinginfo", arity=2, flags=_CONN, acl=_CONN_ACL, since="6.2.0",
         summary="Returns information about server-assisted client-side caching for the "
                 "connection.",
         syntax="")
def client_trackinginfo(client: Session, args: list[bytes]) -> bytes:
    flags = [b"on" if client.tracking else b"off"]
    if client.tracking_bcast:
        flags.append(b"bcast")
    if client.tracking_optin:
        flags.append(b"optin")
        if client.tracking_caching:
            flags.append(b"caching-yes")
    if client.tracking_optout:
        flags.append(b"optout")
        if client.tracking_caching:
            flags.append(b"caching-no")
    if client.tracking_noloop:
        flags.append(b"noloop")
    if client.tracking_broken_redirect:
        flags.append(b"broken_redirect")
    return resp.encode(
        resp.Map({"flags": resp.RSet(flags), "redirect": _redirect(client),
                  "prefixes": sorted(client.tracking_prefixes)}),
        client.protocol,
    )


def _redirect(client: Session) -> int:
    """Where its invalidations go: -1 when not tracking, 0 to itself."""
    return client.tracking_redirect if client.tracking else -1


@command("client|getredir", arity=2, flags=_CONN, acl=_CONN_ACL, since="6.0.0",
         summary="Returns the client ID to which the connection's tracking notifications are "
                 "redirected.",
         syntax="")
def client_getredir(client: Session, args: list[bytes]) -> bytes:
    return resp.integer(_redirect(client))


# Redis's lines for the subcommands Brook has (not PAUSE and UNPAUSE).
_CLIENT_HELP = [
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
]


@command("client|help", arity=2, flags="loading stale", acl="@slow @connection", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def client_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _CLIENT_HELP)
