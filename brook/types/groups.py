"""Consumer groups of a stream: groups, consumers and the pending entries list (PEL).

As in Redis (``streamCG``, ``streamConsumer``, ``streamNACK``), a pending entry is one record
(delivery time, delivery count, owner) shared by the group's PEL and its owner's: the record
lives once, in the group's column-wise :class:`~brook.types.pel.PendingTable`, and the owner's
PEL is the sorted set of its IDs. Moving an entry to another consumer (XCLAIM) or
acknowledging it updates the record and both ID indexes, never a copy. Lookups, inserts and
deletes are O(log n) and range scans (XPENDING, history reads) walk IDs in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from sortedcontainers import SortedList

from brook.types.pel import NO_OWNER, IdSet, PendingTable

if TYPE_CHECKING:
    from brook.types.stream import Stream

# Redis's SCG_INVALID_ENTRIES_READ: the group's read counter is unknown.
INVALID_ENTRIES_READ: Final = -1
LLONG_MAX: Final = (1 << 63) - 1  # delivery counts saturate here (XNACK FATAL's "poison" value)


class Consumer:
    """A named reader of a group, with its own view of the group's PEL."""

    __slots__ = ("name", "seen_time", "active_time", "slot", "pel")

    def __init__(self, name: bytes, now_ms: int, slot: int) -> None:
        self.name = name
        self.seen_time = now_ms  # last attempted interaction (read, claim...)
        self.active_time = -1  # last successful interaction; -1 = never
        self.slot = slot  # how the group's PEL names this consumer as an owner
        self.pel = IdSet()  # IDs of the entries it owns


class Group:
    """A consumer group: where it has read up to, and what it has delivered but not acked.

    Besides the PEL by ID, two views serve claiming (XREADGROUP CLAIM): ``nacked``, the entries
    released with XNACK in release order (served first), and ``by_time``, the other pending
    entries as ``(delivery_time, id)`` so that the most idle come first. ``by_time`` is built
    the first time a reader uses CLAIM (:meth:`idle_index`): groups that never claim pay
    nothing for it. From then on every change of a delivery time keeps it exact.
    """

    __slots__ = ("name", "last_id", "entries_read", "pel", "consumers", "owners", "nacked",
                 "by_time")

    def __init__(self, name: bytes, last_id: int, entries_read: int) -> None:
        self.name = name
        self.last_id = last_id  # last-delivered-id
        self.entries_read = entries_read  # logical read counter, or INVALID_ENTRIES_READ
        self.pel = PendingTable()
        self.consumers: dict[bytes, Consumer] = {}
        self.owners: list[Consumer | None] = []  # consumer by slot (None: slot free)
        self.nacked: dict[int, None] = {}  # released entries, oldest release first
        self.by_time: SortedList | None = None  # (delivery_time, id) of the others, on demand

    # -- consumers ------------------------------------------------------------------------

    def consumer(self, name: bytes, now_ms: int, create: bool = True) -> Consumer | None:
        """The named consumer, created on first use (unless ``create`` is false)."""
        found = self.consumers.get(name)
        if found is None and create:
            owners = self.owners
            slot = owners.index(None) if len(self.consumers) < len(owners) else len(owners)
            found = self.consumers[name] = Consumer(name, now_ms, slot)
            if slot == len(owners):
                owners.append(found)
            else:
                owners[slot] = found
        return found

    def delete_consumer(self, consumer: Consumer) -> int:
        """XGROUP DELCONSUMER: the consumer and its pending entries go; returns how many."""
        for entry_id in consumer.pel:
            record = self.pel.remove(entry_id)
            if self.by_time is not None and record is not None:
                self.by_time.discard((record[1], entry_id))
        del self.consumers[consumer.name]
        self.owners[consumer.slot] = None
        return len(consumer.pel)

    # -- pending records ------------------------------------------------------------------

    def owner_name(self, slot: int) -> bytes:
        """The name of the owner in ``slot`` (empty once released), for replies."""
        owner = self.owners[slot] if slot != NO_OWNER else None
        return owner.name if owner is not None else b""

    def idle_index(self) -> SortedList:
        """``by_time``, built from the PEL on first use."""
        if self.by_time is None:
            nacked = self.nacked
            self.by_time = SortedList((delivery_time, entry_id)
                                      for entry_id, delivery_time, _, _ in self.pel.records()
                                      if entry_id not in nacked)
        return self.by_time

    def _unindex(self, entry_id: int, delivery_time: int) -> None:
        """Take a record out of the released area or the idle index, before it changes."""
        if entry_id in self.nacked:
            del self.nacked[entry_id]
        elif self.by_time is not None:
            self.by_time.discard((delivery_time, entry_id))

    def deliver(self, entry_id: int, consumer: Consumer, delivery_time: int,
                delivery_count: int) -> None:
        """Make ``consumer`` the owner of ``entry_id`` with this delivery time and count,
        creating the record or moving it from its previous owner (XCLAIM, re-reads)."""
        record = self.pel.get(entry_id)
        if record is None:
            consumer.pel.add(entry_id)
            self.pel.put(entry_id, delivery_time, delivery_count, consumer.slot)
        else:
            _, old_time, _, slot = record
            if slot != consumer.slot:
                if slot != NO_OWNER:
                    self.owners[slot].pel.remove(entry_id)  # type: ignore[union-attr]
                consumer.pel.add(entry_id)
            self._unindex(entry_id, old_time)
            self.pel.put(entry_id, delivery_time, delivery_count, consumer.slot)
        if self.by_time is not None:
            self.by_time.add((delivery_time, entry_id))

    def deliver_new(self, entry_ids: list[int], consumer: Consumer, now_ms: int) -> None:
        """First deliveries of ``entry_ids`` (in ID order) to ``consumer``. Entries above
        everything pending, the usual case, are appended in one go; an entry still pending
        (the group was moved back with SETID) changes owner with its count reset to 1."""
        if not entry_ids:
            return
        if self.pel and entry_ids[0] <= self.pel.last_id():
            for entry_id in entry_ids:
                self.deliver(entry_id, consumer, now_ms, 1)
            return
        self.pel.append_new(entry_ids, now_ms, consumer.slot)
        consumer.pel.extend(entry_ids)
        if self.by_time is not None:
            self.by_time.update((now_ms, entry_id) for entry_id in entry_ids)

    def release(self, entry_id: int, delivery_count: int) -> None:
        """XNACK: the entry (pending or not yet) loses its owner and joins the end of the
        released area, with this delivery count."""
        record = self.pel.get(entry_id)
        if record is not None:
            _, old_time, _, slot = record
            if slot != NO_OWNER:
                self.owners[slot].pel.remove(entry_id)  # type: ignore[union-attr]
            self._unindex(entry_id, old_time)
        self.pel.put(entry_id, 0, delivery_count, NO_OWNER)
        self.nacked[entry_id] = None

    def ack(self, entry_id: int) -> bool:
        """Forget a pending entry; True when it was pending."""
        record = self.pel.remove(entry_id)
        if record is None:
            return False
        _, delivery_time, _, slot = record
        if slot != NO_OWNER:
            self.owners[slot].pel.remove(entry_id)  # type: ignore[union-attr]
        if self.nacked or self.by_time is not None:
            self._unindex(entry_id, delivery_time)
        return True

    def ack_many(self, entry_ids: list[int]) -> int:
        """XACK: forget the pending ones among ``entry_ids`` (any order, repeats counted
        once); returns how many were pending. Runs of IDs leave the tables in slices."""
        if not _increasing(entry_ids):
            entry_ids = sorted(set(entry_ids))
        acked, times, _, slots = self.pel.remove_many(entry_ids)
        if not acked:
            return 0
        if slots.count(slots[0]) == len(slots):  # one owner (or none): a sorted run too
            if slots[0] != NO_OWNER:
                self.owners[slots[0]].pel.remove_many(acked)  # type: ignore[union-attr]
        else:
            owned: dict[int, list[int]] = {}
            for entry_id, slot in zip(acked, slots, strict=True):
                owned.setdefault(slot, []).append(entry_id)
            for slot, ids in owned.items():
                if slot != NO_OWNER:
                    self.owners[slot].pel.remove_many(ids)  # type: ignore[union-attr]
        if self.nacked or self.by_time is not None:
            for entry_id, delivery_time in zip(acked, times, strict=True):
                self._unindex(entry_id, delivery_time)
        return len(acked)

    def copy(self) -> Group:
        """An independent copy (COPY of the stream): consumers and records rebuilt."""
        dup = Group(self.name, self.last_id, self.entries_read)
        dup.pel = self.pel.copy()
        for consumer in self.owners:
            twin = None
            if consumer is not None:
                twin = Consumer(consumer.name, consumer.seen_time, consumer.slot)
                twin.active_time = consumer.active_time
                twin.pel = consumer.pel.copy()
                dup.consumers[consumer.name] = twin
            dup.owners.append(twin)
        dup.nacked = dict(self.nacked)
        dup.by_time = SortedList(self.by_time) if self.by_time is not None else None
        return dup


# -- the lag bookkeeping of Redis 7.0 (t_stream.c) ------------------------------------------------


def _increasing(entry_ids: list[int]) -> bool:
    """Are the IDs strictly increasing (sorted, no repeats)? As a worker's XACK of its last
    read sends them: then they need no set and no sort."""
    return all(entry_ids[i - 1] < entry_ids[i] for i in range(1, len(entry_ids)))


def range_has_tombstones(stream: Stream, start: int, end: int | None = None) -> bool:
    """streamRangeHasTombstones: could an entry between ``start`` and ``end`` have been
    deleted? Only the maximal deleted ID is known, so this is a conservative yes/no."""
    deleted = stream.max_deleted_id
    if not stream.length or not deleted:
        return False
    if stream.first_id() > deleted:
        return False  # the latest tombstone is before the first entry
    return start <= deleted and (end is None or deleted <= end)


def estimate_entries_read(stream: Stream, entry_id: int) -> int:
    """streamEstimateDistanceFromFirstEverEntry: the logical read counter of ``entry_id``, or
    INVALID_ENTRIES_READ when fragmentation makes it unknowable."""
    if not stream.entries_added:
        return 0
    if not stream.length and entry_id <= stream.last_id:
        return stream.entries_added
    if entry_id and entry_id < stream.max_deleted_id:
        return INVALID_ENTRIES_READ  # before the last tombstone: unknowable (Redis 8.0)
    if entry_id == stream.last_id:
        return stream.entries_added
    if entry_id > stream.last_id:
        return INVALID_ENTRIES_READ
    first = stream.first_id()
    deleted = stream.max_deleted_id
    if not deleted or deleted < first:
        if entry_id < first:
            return stream.entries_added - stream.length
        if entry_id == first:
            return stream.entries_added - stream.length + 1
    return INVALID_ENTRIES_READ


def group_lag(stream: Stream, group: Group) -> int | None:
    """streamCGLag: entries not yet delivered to the group, None when unknown."""
    if not stream.entries_added:
        return 0
    if group.entries_read != INVALID_ENTRIES_READ and not range_has_tombstones(
            stream, group.last_id):
        # Redis 8.0 (PRs #13338, #13473, #13958): when trimming or deletions took entries
        # the group had not read, its counter is stale; what is left is all still to read.
        if not stream.length:
            return 0
        if group.last_id < stream.first_id():
            return stream.length
        return stream.entries_added - group.entries_read
    entries_read = estimate_entries_read(stream, group.last_id)
    if entries_read != INVALID_ENTRIES_READ:
        return stream.entries_added - entries_read
    return None


def advance(stream: Stream, group: Group, entry_id: int) -> None:
    """Move the group's last-delivered-id to ``entry_id`` (a newer entry it just delivered),
    keeping entries-read exact when it can."""
    if entry_id <= group.last_id:
        return
    if (group.entries_read != INVALID_ENTRIES_READ and group.last_id >= stream.first_id()
            and not range_has_tombstones(stream, entry_id)):
        group.entries_read += 1  # nothing trimmed or deleted in between: count on
    elif stream.entries_added:
        group.entries_read = estimate_entries_read(stream, entry_id)
    group.last_id = entry_id


def advance_over(stream: Stream, group: Group, entry_ids: list[int]) -> None:
    """:func:`advance` over each of ``entry_ids`` (new entries in ID order), at once when
    nothing deleted lies after the first of them: then each one counts one more read."""
    if not entry_ids:
        return
    first = entry_ids[0]
    if (first > group.last_id and group.entries_read != INVALID_ENTRIES_READ
            and group.last_id >= stream.first_id() and not range_has_tombstones(stream, first)):
        group.entries_read += len(entry_ids)
        group.last_id = entry_ids[-1]
        return
    for entry_id in entry_ids:
        advance(stream, group, entry_id)


# -- deletion policies towards group references (Redis 8.2 KEEPREF / DELREF / ACKED) ---------------


def referenced(stream: Stream, entry_id: int) -> bool:
    """Does any group still need the entry (not yet delivered to it, or pending in it)? An
    entry nobody needs is what ACKED may delete."""
    for group in (stream.groups or {}).values():
        if entry_id > group.last_id or entry_id in group.pel:
            return True
    return False


def drop_references(stream: Stream, entry_ids: list[int]) -> None:
    """DELREF: the entries leave every group's PEL (and their owners')."""
    for group in (stream.groups or {}).values():
        if group.pel:
            for entry_id in entry_ids:
                group.ack(entry_id)


def drop_references_below(stream: Stream, first_id: int) -> None:
    """DELREF after trimming: every PEL reference to an ID below the new first entry points
    at an entry that no longer exists."""
    for group in (stream.groups or {}).values():
        for entry_id in group.pel.ids_below(first_id):
            group.ack(entry_id)
