"""Connection commands: PING, ECHO, HELLO, AUTH, QUIT, RESET, SELECT."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from brook.acl.users import AUTH
from brook.commands.args import parse_int
from brook.commands.common import check_client_name
from brook.commands.registry import DB_INDEX_OUT_OF_RANGE, CommandError, command, text
from brook.protocol import resp
from brook.session import REPLY_ON
from brook.version import VERSION

if TYPE_CHECKING:
    from brook.session import Session

_SUBSCRIBED_PONG = b"*2\r\n$4\r\npong\r\n"  # PING in RESP2 subscribed mode: ["pong", message]
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."


def authenticate(client: Session, username: bytes, password: bytes, typed: bytes) -> None:
    """Log in as the user these credentials open; a failure changes nothing and is logged
    (ACL LOG's ``auth`` entries name the command as typed: ``AUTH``, ``hello``)."""
    server = client.server
    user = server.acl.authenticate(username, password)
    if user is None:
        server.log("verbose", f"Authentication failed for client {client.addr}")
        server.acl.add_log(AUTH, "multi" if client.in_exec else "toplevel", typed, username,
                           client.info_line(time.time()), server.config.acllog_max_len)
        raise CommandError(WRONGPASS)
    client.user = user
    client.authenticated = True
    client.refresh_mode()


@command(
    "ping", arity=-1, flags="fast", acl="@fast @connection", group="connection",
    summary="Returns the server's liveliness response.", syntax="[message]",
)
def ping(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 2:  # arity is -1 in the table, as in Redis, which checks the maximum here
        raise CommandError("ERR wrong number of arguments for 'ping' command")
    # A RESP2 subscriber is always slow (Session.refresh_mode), so the fast path pays one
    # attribute test here.
    if client.slow and client.protocol == 2 and client.is_subscribed():
        return _SUBSCRIBED_PONG + resp.bulk(args[1] if len(args) == 2 else b"")
    if len(args) == 1:
        return resp.PONG
    return resp.bulk(args[1])


@command(
    "echo", arity=2, flags="fast loading stale", acl="@fast @connection", group="connection",
    summary="Returns the given string.", syntax="message",
)
def echo(client: Session, args: list[bytes]) -> bytes:
    return resp.bulk(args[1])


@command(
    "quit", arity=-1, flags="allow-busy noscript loading stale fast no-auth",
    acl="@fast @connection", group="connection", since="1.0.0",
    summary="Closes the connection.", syntax="",
)
def quit_(client: Session, args: list[bytes]) -> bytes:
    client.close()
    return resp.OK


@command(
    "select", arity=2, flags="loading stale fast", acl="@fast @connection",
    group="connection", summary="Changes the selected database.", syntax="index",
)
def select(client: Session, args: list[bytes]) -> bytes:
    index = parse_int(args[1])
    if client.server.cluster is not None and index != 0:
        raise CommandError("ERR SELECT is not allowed in cluster mode")
    if not 0 <= index < len(client.server.keyspace):
        raise CommandError(DB_INDEX_OUT_OF_RANGE)
    client.db = client.server.keyspace[index]
    return resp.OK


@command(
    "auth", arity=-2, flags="noscript loading stale fast no-auth allow-busy",
    acl="@fast @connection", group="connection", since="1.0.0",
    summary="Authenticates the connection.", syntax="[username] password",
)
def auth(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 3:
        raise CommandError("ERR syntax error")
    if len(args) == 2 and client.server.acl.default.nopass:
        raise CommandError(
            "ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?"
        )
    username, password = (b"default", args[1]) if len(args) == 2 else (args[1], args[2])
    authenticate(client, username, password, args[0])
    return resp.OK


@command(
    "hello", arity=-1, flags="noscript loading stale fast no-auth allow-busy",
    acl="@fast @connection", group="connection", since="6.0.0",
    summary="Handshakes with the Redis server.",
    syntax="[protover [AUTH username password] [SETNAME clientname]]",
)
def hello(client: Session, args: list[bytes]) -> bytes:
    protocol = client.protocol
    if len(args) >= 2:
        protocol = parse_int(args[1], "ERR Protocol version is not an integer or out of range")
        if protocol < 2 or protocol > 3:
            raise CommandError("NOPROTO unsupported protocol version")
    credentials: tuple[bytes, bytes] | None = None
    name: bytes | None = None
    position = 2
    while position < len(args):
        option = args[position].lower()
        remaining = len(args) - position - 1
        if option == b"auth" and remaining >= 2:
            credentials = (args[position + 1], args[position + 2])
            position += 3
        elif option == b"setname" and remaining >= 1:
            name = args[position + 1]
            check_client_name(name)  # before any AUTH, as Redis 7.2+ checks it
            position += 2
        else:
            raise CommandError(
                "ERR Syntax error in HELLO option '%s'" % text(args[position])
            )
    if credentials is None and not client.authenticated:
        raise CommandError(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
            "select the RESP protocol version at the same time"
        )
    if credentials is not None:
        authenticate(client, *credentials, args[0])
    if name is not None:
        client.name = name
    if protocol != client.protocol:
        client.protocol = protocol
        if client.is_subscribed():  # its messages change framing; RESP2 restricts it
            client.server.subscribers.protocol_changed(client)
    return resp.encode(
        resp.Map(
            {
                "server": "redis",
                "version": VERSION,
                "proto": protocol,
                "id": client.id,
                "mode": "standalone",
                "role": "replica" if client.server.replication.is_replica else "master",
                "modules": [],
            }
        ),
        protocol,
    )


@command(
    "reset", arity=1, flags="noscript loading stale fast no-auth allow-busy",
    acl="@fast @connection", group="connection", since="6.2.0",
    summary="Resets the connection.", syntax="",
)
def reset(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    server.subscribers.unsubscribe_all(client)
    client.discard_transaction()
    if client.tracking:
        server.tracking.disable(client)
    client.db = server.keyspace[0]
    client.protocol = 2
    client.reply_mode = REPLY_ON
    client.name = b""
    client.no_evict = client.no_touch = False
    if client.is_monitor:
        server.remove_monitor(client)
    client.user = server.acl.default
    client.authenticated = server.acl.default_is_open()
    client.refresh_mode()
    return b"+RESET\r\n"
