"""Replication commands: REPLICAOF/SLAVEOF, REPLCONF, PSYNC/SYNC, ROLE, WAIT.

The state they act on, and why it works as it does, is in brook/replication/state.py; replies
and error texts are Redis's (replication.c).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Final

from brook.blocking import POP, Waiter
from brook.commands.args import parse_int
from brook.commands.registry import SYNTAX_ERROR, CommandError, command
from brook.commands.timeouts import parse_timeout
from brook.keyspace import Keyspace
from brook.persistence.rdbfile import write_rdb
from brook.protocol import resp
from brook.protocol.requests import parse_strict_int

if TYPE_CHECKING:
    from brook.session import Session

_ADMIN: Final = "admin noscript stale no_async_loading"
_ADMIN_ACL: Final = "@admin @slow @dangerous"
_WAITAOF_ON_REPLICA: Final = (
    "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
    "replicas are just local and are not propagated.")
_ALREADY: Final = b"+OK Already connected to specified master\r\n"
_WAIT_ON_REPLICA: Final = (
    "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
    "replica is configured to be writable (which is not the default) writes to replicas are "
    "just local and are not propagated.")


def _replicaof(client: Session, args: list[bytes]) -> bytes:
    replication = client.server.replication
    if client.server.cluster is not None:  # a cluster node follows CLUSTER REPLICATE
        raise CommandError("ERR REPLICAOF not allowed in cluster mode.")
    if args[1].lower() == b"no" and args[2].lower() == b"one":
        replication.promote()
        return resp.OK
    if client.is_replica:
        raise CommandError("ERR Command is not valid when client is a replica.")
    port_text = args[2]
    port = int(port_text) if port_text.isdigit() and len(port_text) <= 5 else -1
    if not 0 <= port <= 65535:
        raise CommandError("ERR Invalid master port")
    host = args[1].decode("utf-8", "replace")
    if (replication.master_host is not None and replication.master_host.lower() == host.lower()
            and replication.master_port == port):
        return _ALREADY
    replication.follow(host, port)
    return resp.OK


@command("replicaof", arity=3, flags=_ADMIN, acl=_ADMIN_ACL, group="server", since="5.0.0",
         summary="Configures a server as replica of another, or promotes it to a master.",
         complexity="O(1)", syntax="<host port | NO ONE>")
def replicaof(client: Session, args: list[bytes]) -> bytes:
    return _replicaof(client, args)


@command("slaveof", arity=3, flags=_ADMIN, acl=_ADMIN_ACL, group="server", since="1.0.0",
         summary="Sets a Redis server as a replica of another, or promotes it to being a master.",
         complexity="O(1)", syntax="<host port | NO ONE>")
def slaveof(client: Session, args: list[bytes]) -> bytes:
    return _replicaof(client, args)


@command("replconf", arity=-1, flags="admin noscript loading stale allow_busy",
         acl=_ADMIN_ACL, group="server", since="3.0.0",
         summary="An internal command for configuring the replication stream.",
         complexity="O(1)", syntax="")
def replconf(client: Session, args: list[bytes]) -> bytes:
    if not len(args) & 1:
        raise CommandError(SYNTAX_ERROR)
    server = client.server
    conf = client.repl_conf
    for position in range(1, len(args), 2):
        option = args[position].lower()
        value = args[position + 1]
        if option == b"listening-port":
            conf["listening-port"] = str(parse_int(value))
        elif option == b"ip-address":
            if len(value) >= 256:
                raise CommandError("ERR REPLCONF ip-address provided by replica instance is "
                                   f"too long: {len(value)} bytes")
            conf["ip-address"] = value.decode("utf-8", "replace")
        elif option == b"capa":
            if value.lower() in (b"eof", b"psync2"):
                conf["capa-" + value.lower().decode()] = "1"
        elif option == b"rdb-only":
            only = parse_int(value)
            if not 0 <= only <= 1:
                raise CommandError("ERR value is out of range, value must between 0 and 1")
            conf["rdb-only"] = str(only)
        elif option == b"rdb-filter-only":
            # Include filters, space-separated; "functions" is the one there is, and an empty
            # value asks for an empty file (replconfCommand).
            filters = value.split()
            for name in filters:
                if name.lower() != b"functions":
                    raise CommandError("ERR Unsupported rdb-filter-only option: "
                                       + name.decode("utf-8", "replace"))
            conf["rdb-filter-only"] = "functions" if filters else ""
        elif option == b"ack":
            if client.is_replica:
                offset = parse_strict_int(value)  # a bad one is dropped silently
                aof_offset = None
                if len(args) > position + 3 and args[position + 2].lower() == b"fack":
                    aof_offset = parse_strict_int(args[position + 3])
                    if aof_offset is None:
                        return b""
                if offset is not None:
                    server.replication.acknowledged(client, offset, aof_offset)
            return b""  # never a reply
        elif option == b"getack":
            link = server.replication.link
            if link is not None and link.state == "connected":
                link.send_ack()
            return b""
        else:
            raise CommandError("ERR Unrecognized REPLCONF option: "
                               + option.decode("utf-8", "replace"))
    return resp.OK


def _sync(client: Session, replid: str, offset: int, plain: bool) -> bytes:
    server = client.server
    replication = server.replication
    if client.is_replica:
        return b""  # already one: ignored, as Redis does
    if replication.is_replica and (replication.link is None
                                   or replication.link.state != "connected"):
        raise CommandError("NOMASTERLINK Can't SYNC while not connected with my master")
    conf = client.repl_conf
    if conf.get("rdb-only") == "1":
        return _rdb_only(client, plain)
    port = int(conf.get("listening-port", "0"))
    ip = conf.get("ip-address") or client.addr.rsplit(":", 1)[0].strip("[]")
    payload = replication.psync(client, replid, offset, port, ip, "capa-psync2" in conf)
    if plain:  # SYNC: the snapshot without the +FULLRESYNC line
        payload = payload[payload.index(b"\r\n") + 2:]
    # The replies this read produced, then the synchronisation: written now, so the stream
    # that follows can never overtake them.
    client.push(b"".join(client.out) + payload)
    client.out.clear()
    return b""


def _rdb_only(client: Session, plain: bool) -> bytes:
    """``REPLCONF rdb-only 1`` (redis-cli --rdb, --functions-rdb): Redis's RDB file of the
    dataset, or of what ``rdb-filter-only`` keeps, and the connection closes; the client
    never becomes a replica. Redis's file whatever ``snapshot-format`` says: the asker wants
    it. The dataset comes from a forked child, as a replica's does; the functions alone are
    written here and now (no keys: nothing a fork would save)."""
    server = client.server
    conf = client.repl_conf
    replication = server.replication
    head = b"" if plain else b"+FULLRESYNC %s %d\r\n" % (replication.replid.encode(),
                                                         replication.offset)
    functions_only = "rdb-filter-only" in conf
    if not functions_only and server.loop is not None:
        replication.rdb_only_sync(client, head)
        return b""
    # An empty filter keeps nothing; "functions" keeps the libraries.
    keep_libraries = not functions_only or conf["rdb-filter-only"]
    out = io.BytesIO()
    write_rdb(Keyspace(0) if functions_only else server.keyspace, out, server.config,
              server.scripting.functions.codes() if keep_libraries else [])
    data = out.getvalue()
    client.push(b"".join(client.out) + head + b"$%d\r\n" % len(data) + data)
    client.out.clear()
    client.close()
    return b""


@command("psync", arity=-3, flags="admin noscript no_multi no_async_loading",
         acl=_ADMIN_ACL, group="server", since="2.8.0",
         summary="An internal command used in replication.", complexity="",
         syntax="replicationid offset")
def psync(client: Session, args: list[bytes]) -> bytes:
    offset = parse_int(args[2])
    return _sync(client, args[1].decode("utf-8", "replace"), offset, False)


@command("sync", arity=1, flags="admin noscript no_multi no_async_loading",
         acl=_ADMIN_ACL, group="server", since="1.0.0",
         summary="An internal command used in replication.", complexity="", syntax="")
def sync(client: Session, args: list[bytes]) -> bytes:
    return _sync(client, "?", -1, True)


@command("role", arity=1, flags="noscript loading stale fast", acl="@admin @fast @dangerous",
         group="server", since="2.8.12",
         summary="Returns the replication role.", complexity="O(1)", syntax="")
def role(client: Session, args: list[bytes]) -> bytes:
    return client.server.replication.role_reply(client.protocol)


# WAIT and WAITAOF run in scripts and transactions since Redis 7.2 and 7.4: they answer at once
# with what is acknowledged then, never parking.
@command("wait", arity=3, flags="blocking", acl="@slow @connection @blocking", group="generic",
         since="3.0.0",
         summary="Blocks until the asynchronous replication of all preceding write commands "
         "sent by the connection is completed.", complexity="O(1)",
         syntax="numreplicas timeout")
def wait(client: Session, args: list[bytes]) -> bytes | None:
    replication = client.server.replication
    if replication.is_replica:
        raise CommandError(_WAIT_ON_REPLICA)
    wanted = parse_int(args[1])
    timeout_ms = parse_timeout(args[2], seconds=False, now_ms=client.clock.now_ms())
    offset = client.woff  # where this connection's last write ends in the stream
    count = replication.acked_count(offset)
    if count >= wanted or client.in_exec or client.in_script:
        return resp.integer(count)
    _park(client, "wait", args, wanted, offset, -1, timeout_ms)
    return None


@command("waitaof", arity=4, flags="blocking", acl="@slow @connection @blocking",
         group="generic",
         since="7.2.0",
         summary="Blocks until all of the preceding write commands sent by the connection are "
         "written to the append-only file of the master and/or replicas.",
         complexity="O(1)", syntax="numlocal numreplicas timeout")
def waitaof(client: Session, args: list[bytes]) -> bytes | None:
    local = parse_int(args[1])
    if not 0 <= local <= 1:
        raise CommandError("ERR value is out of range, value must between 0 and 1")
    wanted = parse_int(args[2])
    if wanted < 0:
        raise CommandError("ERR value is out of range, must be positive")
    timeout_ms = parse_timeout(args[3], seconds=False, now_ms=client.clock.now_ms())
    server = client.server
    replication = server.replication
    if replication.is_replica:
        raise CommandError(_WAITAOF_ON_REPLICA)
    if local and server.aof is None:
        raise CommandError("ERR WAITAOF cannot be used when numlocal is set but appendonly is "
                           "disabled.")
    offset = client.woff
    reply = replication.wait_reply(wanted, offset, local)
    if reply is not None:
        return reply
    if client.in_exec or client.in_script:
        return replication.wait_timeout_reply(offset, local)
    _park(client, "waitaof", args, wanted, offset, local, timeout_ms)
    return None


def _park(client: Session, name: str, args: list[bytes], wanted: int, offset: int, local: int,
          timeout_ms: int) -> None:
    """WAIT or WAITAOF (``name``) waits for acknowledgements (``local`` -1: WAIT). The
    command is named, not read from ``last_cmd``: the dispatcher's fast path records that
    only when its batch ends."""
    replication = client.server.replication
    waiter = Waiter(client, client.server.commands.by_name[name], args, [], POP)
    waiter.on_timeout = lambda: replication.wait_timeout_reply(offset, local)
    client.server.blocking.park(waiter, timeout_ms)
    replication.wait(waiter, wanted, offset, local)
