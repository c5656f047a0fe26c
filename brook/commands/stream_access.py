"""How the stream commands reach a stream, beside what the consumer-group commands add to it:
the lookups (read, write, XINFO's "no such key"), the creation of a new stream, the deletion of
one entry under a reference policy (XDELEX, XACKDEL), and the hook through which XINFO STREAM
FULL asks the consumer-group commands for the groups part.

It registers no command: the stream commands (:mod:`brook.commands.streams`) and the
consumer-group commands (:mod:`brook.commands.stream_groups`) import it, not one another.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from brook.commands.registry import NO_SUCH_KEY, CommandError, of_type
from brook.commands.stream_args import ACKED, DELREF
from brook.notify import created
from brook.protocol import resp
from brook.types.groups import (
    INVALID_ENTRIES_READ,
    Group,
    drop_references,
    group_lag,
    referenced,
)
from brook.types.stream import Stream, format_id

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session


def read_stream(db: Database, key: bytes) -> Stream | None:
    """The stream at ``key`` for a read command (counts hits/misses); WRONGTYPE otherwise."""
    return of_type(db.lookup_read(key), Stream)  # type: ignore[return-value]


def existing_stream(client: Session, key: bytes) -> Stream:
    """The stream XINFO describes: Redis's "no such key" when there is none."""
    stream = read_stream(client.db, key)
    if stream is None:
        raise CommandError(NO_SUCH_KEY)
    return stream


def write_stream(db: Database, key: bytes) -> Stream | None:
    """The stream at ``key`` for a write command."""
    return of_type(db.lookup(key), Stream)  # type: ignore[return-value]


def new_stream(client: Session, key: bytes) -> Stream:
    """A new empty stream at ``key`` (XADD, XGROUP CREATE MKSTREAM), with the node limits
    configured now."""
    config = client.server.config
    stream = Stream(config.stream_node_max_entries, config.stream_node_max_bytes)
    db = client.db
    created(client, key)
    db.data[key] = stream  # lookup already removed any expired value and its TTL
    return stream


def delete_with_policy(stream: Stream, entry_id: int, policy: str | None) -> int:
    """XDELEX/XACKDEL's per-ID reply: 1 deleted, -1 no such entry, 2 kept because a group
    still needs it (ACKED). DELREF also clears the entry's PEL references, even when the entry
    itself was already gone."""
    if policy == DELREF and stream.groups:
        drop_references(stream, [entry_id])
    if policy == ACKED and stream.get(entry_id) is not None and referenced(stream, entry_id):
        return 2
    return 1 if stream.delete(entry_id) else -1


# Filled by the consumer-group commands: (client, stream, full, count) -> groups value.


def entries_read_reply(group: Group) -> int | None:
    """A group's entries-read as XINFO shows it (nil while it is not known)."""
    return group.entries_read if group.entries_read != INVALID_ENTRIES_READ else None


def groups_info(client: Session, stream: Stream, full: bool, count: int) -> object:
    """XINFO STREAM's ``groups``: the number of groups, or (FULL) their details."""
    if not full:
        return len(stream.groups or ())
    limit = count or None
    details = []
    for group in sorted((stream.groups or {}).values(), key=lambda g: g.name):
        pel = [[format_id(entry_id), group.owner_name(slot), delivery_time, delivery_count]
               for entry_id, delivery_time, delivery_count, slot
               in islice(group.pel.records(), limit)]
        consumers = []
        for consumer in sorted(group.consumers.values(), key=lambda c: c.name):
            consumers.append(resp.Map({
                "name": consumer.name,
                "seen-time": consumer.seen_time,
                "active-time": consumer.active_time,
                "pel-count": len(consumer.pel),
                "pending": [[format_id(record[0]), record[1], record[2]]
                            for record in map(group.pel.get, islice(consumer.pel, limit))
                            if record is not None],
            }))
        details.append(resp.Map({
            "name": group.name,
            "last-delivered-id": format_id(group.last_id),
            "entries-read": entries_read_reply(group),
            "lag": group_lag(stream, group),
            "pel-count": len(group.pel),
            "nacked-count": len(group.nacked),
            "pending": pel,
            "consumers": consumers,
        }))
    return details
