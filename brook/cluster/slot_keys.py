"""The keys of a hash slot in database 0 (cluster mode has only that one): counted, listed,
and deleted when the slot is lost to another node (delKeysInSlot). A walk over the keys:
Redis keeps a dictionary per slot, which resharding a large dataset will need here too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook import notify
from brook.cluster.slots import key_slot

if TYPE_CHECKING:
    from brook.context import ServerContext
    from brook.keyspace import Database


def keys_in_slot(db: Database, slot: int, limit: int | None = None) -> list[bytes]:
    """Up to ``limit`` keys of ``slot`` (all, without one)."""
    found: list[bytes] = []
    if limit == 0:
        return found
    for key in db.data:
        if key_slot(key) == slot:
            found.append(key)
            if limit is not None and len(found) >= limit:
                break
    return found


def delete_keys_in_slot(server: ServerContext, slot: int) -> int:
    """Every key of ``slot`` deleted as DEL would: the ``del`` event, and a DEL for the AOF
    and the replicas."""
    db = server.keyspace[0]
    deleted = 0
    for key in keys_in_slot(db, slot):
        if not db.delete(key):
            continue
        deleted += 1
        notify.publish_event(server.config, server.pubsub, b"del", key, 0)
        if server.propagating:
            server.effect_log.feed(0, ([b"DEL", key],))
    return deleted
