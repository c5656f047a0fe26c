"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

While a client is in MULTI the dispatcher queues its commands (see ``Dispatcher.execute``); a
command rejected while queueing (unknown, wrong arity) marks the transaction so EXEC aborts.
WATCH registers the client with the key's database; any write to the key, its expiry, FLUSHDB
or SWAPDB marks the client so EXEC returns a null reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.registry import CommandError, command
from brook.persistence.effects import suppress
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

EXECABORT = "EXECABORT Transaction discarded because of previous errors."


@command(
    "multi", arity=1, flags="noscript loading stale fast allow-busy",
    acl="@fast @transaction", group="transactions",
    summary="Starts a transaction.", syntax="",
)
def multi(client: Session, args: list[bytes]) -> bytes:
    if client.in_multi:
        raise CommandError("ERR MULTI calls can not be nested")
    client.in_multi = True
    client.multi_queue = []
    client.multi_bytes = 0
    client.multi_error = False
    client.refresh_mode()
    return resp.OK


@command(
    "discard", arity=1, flags="noscript loading stale fast allow-busy",
    acl="@fast @transaction", group="transactions",
    summary="Discards a transaction.", syntax="",
)
def discard(client: Session, args: list[bytes]) -> bytes:
    if not client.in_multi:
        raise CommandError("ERR DISCARD without MULTI")
    client.discard_transaction()
    return resp.OK


def _watched_key_expired(client: Session) -> bool:
    """A key that was alive at WATCH time and has expired since counts as modified."""
    keyspace = client.server.keyspace
    for (db_index, key), expired_at_watch in client.watched.items():
        if not expired_at_watch and keyspace[db_index].is_expired(key):
            return True
    return False


@command(
    "exec", arity=1, flags="noscript loading stale skip-slowlog",
    acl="@slow @transaction", group="transactions",
    summary="Executes all commands in a transaction.", complexity="Depends on commands in the transaction",
    syntax="",
)
def exec_(client: Session, args: list[bytes]) -> bytes:
    if not client.in_multi:
        raise CommandError("ERR EXEC without MULTI")
    if client.multi_error:
        client.discard_transaction()
        raise CommandError(EXECABORT)
    if client.watch_failed or _watched_key_expired(client):
        client.discard_transaction()
        return resp.null_array(client.protocol)
    queue = client.multi_queue
    client.in_multi = False
    client.multi_queue = []
    client.multi_bytes = 0
    client.unwatch_all()  # as Redis: the keys are released before the commands run
    client.in_exec = True  # blocking commands reply at once instead of parking
    server = client.server
    propagating = server.propagating
    if propagating:
        server.effect_log.begin_transaction()  # its effects are persisted as one MULTI ... EXEC
    # Time stands still for the whole transaction (Redis's command time snapshot, taken when
    # EXEC starts): TIME, XADD's IDs and expiry see one instant.
    clock = client.clock
    outer = clock.freeze(clock.now_us())
    try:
        call = server.dispatcher.call
        if client.user.unrestricted:
            replies = [call(client, cmd, request) for cmd, request in queue]
        else:
            call_queued = server.dispatcher.call_queued
            replies = [call_queued(client, cmd, request) for cmd, request in queue]
    finally:
        clock.freeze(outer)
        client.in_exec = False
        if propagating:
            server.effect_log.end_transaction()
    suppress(client)  # EXEC itself is not persisted: its commands' effects were
    client.discard_transaction()
    return b"*%d\r\n%s" % (len(replies), b"".join(replies))  # type: ignore[arg-type]


@command(
    "watch", arity=-2, flags="noscript loading stale fast allow-busy", keys=(1, -1, 1),
    acl="@fast @transaction", group="transactions", since="2.2.0",
    summary="Monitors changes to keys to determine the execution of a transaction.",
    complexity="O(1) for every key.", syntax="key [key ...]",
)
def watch(client: Session, args: list[bytes]) -> bytes:
    if client.in_multi:
        raise CommandError("ERR WATCH inside MULTI is not allowed")
    db = client.db
    for key in args[1:]:
        slot = (db.index, key)
        if slot in client.watched:
            continue
        client.watched[slot] = key in db.data and db.is_expired(key)
        db.watchers.setdefault(key, set()).add(client)
    return resp.OK


@command(
    "unwatch", arity=1, flags="noscript loading stale fast allow-busy",
    acl="@fast @transaction", group="transactions", since="2.2.0",
    summary="Forgets about all watched keys.", syntax="",
)
def unwatch(client: Session, args: list[bytes]) -> bytes:
    client.unwatch_all()
    return resp.OK
