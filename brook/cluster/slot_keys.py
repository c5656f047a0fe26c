"""The keys of a hash slot in database 0 (cluster mode has only that one): counted, listed,
and deleted when the slot is lost to another node (delKeysInSlot). The key table counts its
keys per slot once asked (``track_slots``), as Redis keeps a dictionary per slot: a count is
one lookup, and a listing walks the table only for a slot that has keys, stopping once it
has them all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook import notify
from brook.cluster.slots import key_slot

if TYPE_CHECKING:
    from brook.context import ServerContext
    from brook.keyspace import Database


def count_keys_in_slot(db: Database, slot: int) -> int:
    table = db.data
    table.track_slots(key_slot)
    return table.slot_count(slot)


def keys_in_slot(db: Database, slot: int, limit: int | None = None) -> list[bytes]:
    """Up to ``limit`` keys of ``slot`` (all, without one)."""
    if limit == 0 or not count_keys_in_slot(db, slot):
        return []
    return db.data.slot_keys(slot, -1 if limit is None else limit)


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
