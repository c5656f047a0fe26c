"""A list at a key as the list commands reach it, and what every list writer does after
changing one.

Looked up for a write (Redis's lookupKeyWrite), created on a push, deleted once emptied: the
plain list commands (:mod:`brook.commands.lists`) and the pops and moves the blocking ones
share (:mod:`brook.commands.list_pops`) all go through these, so the bookkeeping (WATCH,
parked clients, keyspace events, the dirty counter) is the same whichever command changed it.
It registers no command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.commands.registry import of_type
from brook.notify import LIST, created, emptied, written
from brook.protocol import resp
from brook.types.lists import ListValue

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session


def write_list(db: Database, key: bytes) -> ListValue | None:
    """The list at ``key`` for a write command (Redis's lookupKeyWrite: no hit/miss count)."""
    return of_type(db.lookup(key), ListValue)  # type: ignore[return-value]


def write_list_or_create(client: Session, key: bytes) -> ListValue:
    """The general path of a push: expiry, WRONGTYPE, and a new empty list for a missing key
    (the caller adds to it at once, so no empty list is ever visible)."""
    db = client.db
    found = write_list(db, key)
    if found is None:
        created(client, key)
        found = db.data[key] = ListValue()  # lookup removed any expired value and its TTL
    return found


def elements_added(client: Session, db: Database, key: bytes, count: int, event: bytes) -> None:
    """After elements went in: WATCH, clients parked on the key, the keyspace event, the
    dirty counter."""
    written(client, key, LIST, event, count, ready=True)


def elements_removed(client: Session, db: Database, key: bytes, found: ListValue, count: int,
                     event: bytes) -> None:
    """After elements went out: the keyspace event, then an emptied list is deleted (which
    signals WATCH; event ``del``), otherwise the key is marked modified; ``count`` elements
    count as changes."""
    written(client, key, LIST, event, count)
    if not found.size:
        emptied(client, key)


def take(found: ListValue, left: bool, count: int) -> list[bytes]:
    """Pop up to ``count`` elements from one end, in the order they are popped."""
    return found.popmany(count, left)


# "$<n>" for small n: an array reply is then one "\r\n".join over headers and elements.
_BULK_PREFIXES: Final = [b"$%d" % n for n in range(4096)]


def bulks(items: list[bytes]) -> bytes:
    """An array of bulk strings, built by C-level loops only (LRANGE's reply: twice as fast
    as formatting each element)."""
    count = len(items)
    if not count:
        return resp.EMPTY_ARRAY
    sizes = list(map(len, items))
    if max(sizes) >= 4096:
        return resp.array_of_bulks(items)
    parts: list[bytes] = [b""] * (2 * count)
    parts[::2] = map(_BULK_PREFIXES.__getitem__, sizes)
    parts[1::2] = items
    return b"*%d\r\n%s\r\n" % (count, b"\r\n".join(parts))
