"""Consumer groups of a stream: groups, consumers and the pending entries list (PEL).

As in Redis (``streamCG``, ``streamConsumer``, ``streamNACK``), a pending entry is one record
shared by the group's PEL and its owner's PEL: moving it to another consumer (XCLAIM) or
acknowledging it touches both maps, never a copy. PELs are ``SortedDict``s keyed by the int
entry ID, so range scans (XPENDING, history reads) and insert/delete/lookup are O(log n).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sortedcontainers import SortedDict, SortedList

if TYPE_CHECKING:
    from brook.types.stream import Stream

# Redis's SCG_INVALID_ENTRIES_READ: the group's read counter is unknown.
INVALID_ENTRIES_READ = -1


class Pending:
    """One delivered, not yet acknowledged entry."""

    __slots__ = ("delivery_time", "delivery_count", "consumer")

    def __init__(self, delivery_time: int, consumer: Consumer | None) -> None:
        self.delivery_time = delivery_time  # ms of the last delivery
        self.delivery_count = 1
        self.consumer = consumer  # the owner


class Consumer:
    """A named reader of a group, with its own view of the group's PEL."""

    __slots__ = ("name", "seen_time", "active_time", "pel")

    def __init__(self, name: bytes, now_ms: int) -> None:
        self.name = name
        self.seen_time = now_ms  # last attempted interaction (read, claim...)
        self.active_time = -1  # last successful interaction; -1 = never
        self.pel: SortedDict = SortedDict()  # entry id -> Pending (shared with the group)


class Group:
    """A consumer group: where it has read up to, and what it has delivered but not acked.

    Besides the PEL by ID, two views serve claiming (XREADGROUP CLAIM): ``nacked``, the entries
    released with XNACK in release order (served first), and ``by_time``, the other pending
    entries as ``(delivery_time, id)`` so that the most idle come first. ``by_time`` is built
    the first time a reader uses CLAIM (:meth:`idle_index`): groups that never claim pay
    nothing for it. From then on every change of a delivery time goes through :meth:`retime`,
    which keeps it exact."""

    __slots__ = ("name", "last_id", "entries_read", "pel", "consumers", "nacked", "by_time")

    def __init__(self, name: bytes, last_id: int, entries_read: int) -> None:
        self.name = name
        self.last_id = last_id  # last-delivered-id
        self.entries_read = entries_read  # logical read counter, or INVALID_ENTRIES_READ
        self.pel: SortedDict = SortedDict()  # entry id -> Pending
        self.consumers: dict[bytes, Consumer] = {}
        self.nacked: dict[int, None] = {}  # released entries, oldest release first
        self.by_time: SortedList | None = None  # (delivery_time, id) of the others, on demand

    def idle_index(self) -> SortedList:
        """``by_time``, built from the PEL on first use."""
        if self.by_time is None:
            self.by_time = SortedList((p.delivery_time, entry_id)
                                      for entry_id, p in self.pel.items()
                                      if entry_id not in self.nacked)
        return self.by_time

    def retime(self, entry_id: int, pending: Pending, delivery_time: int) -> None:
        """Set a pending entry's delivery time (and take it out of the released area)."""
        if entry_id in self.nacked:
            del self.nacked[entry_id]
        elif self.by_time is not None:
            self.by_time.discard((pending.delivery_time, entry_id))
        pending.delivery_time = delivery_time
        if self.by_time is not None:
            self.by_time.add((delivery_time, entry_id))

    def insert(self, entry_id: int, pending: Pending) -> None:
        """A new PEL record (not yet owned by anybody's PEL)."""
        self.pel[entry_id] = pending
        if self.by_time is not None:
            self.by_time.add((pending.delivery_time, entry_id))

    def release(self, entry_id: int, pending: Pending) -> None:
        """XNACK: the entry loses its owner and joins the end of the released area."""
        if pending.consumer is not None:
            pending.consumer.pel.pop(entry_id, None)
            pending.consumer = None
        if entry_id in self.nacked:
            del self.nacked[entry_id]
        elif self.by_time is not None:
            self.by_time.discard((pending.delivery_time, entry_id))
        pending.delivery_time = 0
        self.nacked[entry_id] = None

    def consumer(self, name: bytes, now_ms: int, create: bool = True) -> Consumer | None:
        """The named consumer, created on first use (unless ``create`` is false)."""
        found = self.consumers.get(name)
        if found is None and create:
            found = self.consumers[name] = Consumer(name, now_ms)
        return found

    def delete_consumer(self, consumer: Consumer) -> int:
        """XGROUP DELCONSUMER: the consumer and its pending entries go; returns how many."""
        for entry_id, pending in consumer.pel.items():
            del self.pel[entry_id]
            if self.by_time is not None:
                self.by_time.discard((pending.delivery_time, entry_id))
        del self.consumers[consumer.name]
        return len(consumer.pel)

    def add_pending(self, entry_id: int, consumer: Consumer, now_ms: int) -> None:
        """Record a new delivery of ``entry_id`` to ``consumer`` (a re-delivery of an entry
        still pending moves it to this consumer, as XREADGROUP does after SETID)."""
        pending = self.pel.get(entry_id)
        if pending is None:
            pending = Pending(now_ms, consumer)
            self.insert(entry_id, pending)
        else:
            if pending.consumer is not None and pending.consumer is not consumer:
                del pending.consumer.pel[entry_id]
            self.retime(entry_id, pending, now_ms)
            pending.delivery_count = 1
            pending.consumer = consumer
        consumer.pel[entry_id] = pending

    def ack(self, entry_id: int) -> bool:
        """Forget a pending entry; True when it was pending."""
        pending = self.pel.pop(entry_id, None)
        if pending is None:
            return False
        if pending.consumer is not None:
            pending.consumer.pel.pop(entry_id, None)
        if entry_id in self.nacked:
            del self.nacked[entry_id]
        elif self.by_time is not None:
            self.by_time.discard((pending.delivery_time, entry_id))
        return True

    def copy(self) -> Group:
        """An independent copy (COPY of the stream): consumers and shared records rebuilt."""
        dup = Group(self.name, self.last_id, self.entries_read)
        twins: dict[int, Consumer] = {}
        for name, consumer in self.consumers.items():
            twin = Consumer(name, consumer.seen_time)
            twin.active_time = consumer.active_time
            dup.consumers[name] = twins[id(consumer)] = twin
        for entry_id, pending in self.pel.items():
            owner = twins.get(id(pending.consumer)) if pending.consumer is not None else None
            record = Pending(pending.delivery_time, owner)
            record.delivery_count = pending.delivery_count
            dup.pel[entry_id] = record
            if owner is not None:
                owner.pel[entry_id] = record
        dup.nacked = dict(self.nacked)
        dup.by_time = SortedList(self.by_time) if self.by_time is not None else None
        return dup


# -- the lag bookkeeping of Redis 7.0 (t_stream.c) ------------------------------------------------


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
        for entry_id in list(group.pel.irange(maximum=first_id, inclusive=(True, False))):
            group.ack(entry_id)
