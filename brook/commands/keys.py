"""Keyspace commands (first versions; see the issue notes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.registry import CommandError, command
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.connection import Client


def _flush_mode(args: list[bytes]) -> None:
    if len(args) > 2 or (len(args) == 2 and args[1].lower() not in (b"async", b"sync")):
        raise CommandError("ERR syntax error")


@command("flushall", arity=-1, flags="write", acl="@keyspace @write @slow @dangerous",
         group="server", summary="Removes all keys from all databases.",
         complexity="O(N) where N is the total number of keys in all databases",
         syntax="[ASYNC | SYNC]")
def flushall(client: Client, args: list[bytes]) -> bytes:
    _flush_mode(args)
    for db in client.server.keyspace.databases:
        client.server.dirty += db.clear()
    client.server.dirty += 1
    return resp.OK


@command("flushdb", arity=-1, flags="write", acl="@keyspace @write @slow @dangerous",
         group="server", summary="Remove all keys from the current database.",
         complexity="O(N) where N is the number of keys in the selected database",
         syntax="[ASYNC | SYNC]")
def flushdb(client: Client, args: list[bytes]) -> bytes:
    _flush_mode(args)
    client.server.dirty += client.db.clear()
    return resp.OK
