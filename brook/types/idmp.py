"""Idempotent production (XADD IDMP/IDMPAUTO, Redis 8.6): per stream, per producer, the
idempotent IDs seen recently and the entry each one created.

A producer retrying a write after a lost reply sends the same (producer id, idempotent id) pair;
the stream answers with the entry ID of the first attempt instead of adding a duplicate. Each
producer keeps its IDs in arrival order, so the oldest is evicted first when IDMP-MAXSIZE is
reached (MAXSIZE wins over DURATION) and expired ones are dropped from the front.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Final

DEFAULT_DURATION: Final = 100  # seconds (stream-idmp-duration)
DEFAULT_MAXSIZE: Final = 100  # idempotent IDs per producer (stream-idmp-maxsize)


def content_iid(fields: list[bytes]) -> bytes:
    """IDMPAUTO's idempotent ID: a digest of the field/value pairs that does not depend on
    their order (Redis documents only that equal content deduplicates)."""
    pairs = sorted(zip(fields[0::2], fields[1::2], strict=True))
    digest = hashlib.blake2b(digest_size=16)
    for field, value in pairs:
        digest.update(b"%d:%s%d:%s" % (len(field), field, len(value), value))
    return digest.digest()


class History:
    """One producer's idempotent IDs, oldest first: ``entries`` maps each to the entry it
    created, ``order`` and ``times`` hold the IDs and the times they were recorded, in arrival
    order. Evicting and expiring pop from the front in O(1); a dict alone finds its oldest
    key by skipping the slots its earlier deletions left at the front (800 instructions a
    look once 10,000 IDs are kept), and a record is two ints rather than a tuple."""

    __slots__ = ("entries", "order", "times")

    def __init__(self) -> None:
        self.entries: dict[bytes, int] = {}
        self.order: deque[bytes] = deque()
        self.times: deque[int] = deque()

    def __len__(self) -> int:
        return len(self.entries)

    def drop_oldest(self) -> None:
        del self.entries[self.order.popleft()]
        self.times.popleft()

    def append(self, iid: bytes, entry_id: int, when: int) -> None:
        """Record ``iid`` as the newest; a record it already had goes (as during an AOF replay,
        which expires nothing, so a stale pair may come again)."""
        entries = self.entries
        if iid in entries:
            position = self.order.index(iid)
            del self.order[position]
            del self.times[position]
        entries[iid] = entry_id
        self.order.append(iid)
        self.times.append(when)

    def records(self) -> list[tuple[bytes, int, int]]:
        """(iid, entry ID, time recorded), oldest first."""
        entries = self.entries
        return [(iid, entries[iid], when)
                for iid, when in zip(self.order, self.times, strict=True)]


class Idmp:
    """The deduplication state of one stream."""

    __slots__ = ("duration", "maxsize", "producers", "added", "duplicates")

    def __init__(self, duration: int = DEFAULT_DURATION, maxsize: int = DEFAULT_MAXSIZE) -> None:
        self.duration = duration  # seconds an idempotent ID is remembered
        self.maxsize = maxsize  # idempotent IDs remembered per producer
        self.producers: dict[bytes, History] = {}  # producer id -> its history
        self.added = 0  # lifetime count of idempotent IDs recorded (iids-added)
        self.duplicates = 0  # lifetime count of duplicates answered (iids-duplicates)

    def _expire(self, pid: bytes, now_ms: int) -> History | None:
        """The producer's history after dropping IDs older than the duration."""
        history = self.producers.get(pid)
        if history is None:
            return None
        horizon = now_ms - self.duration * 1000
        times = history.times
        while times and times[0] <= horizon:
            history.drop_oldest()
        if not times:
            del self.producers[pid]
            return None
        return history

    def find(self, pid: bytes, iid: bytes, now_ms: int) -> int | None:
        """The entry ID recorded for (pid, iid), counting the hit as a duplicate."""
        history = self._expire(pid, now_ms)
        if history is None:
            return None
        found = history.entries.get(iid)
        if found is not None:
            self.duplicates += 1
        return found

    def lookup(self, pid: bytes, iid: bytes) -> int | None:
        """The entry ID recorded for (pid, iid), expired or not, without counting anything:
        replaying the AOF tells a persisted duplicate from an addition with it."""
        history = self.producers.get(pid)
        return history.entries.get(iid) if history is not None else None

    def record(self, pid: bytes, iid: bytes, entry_id: int, now_ms: int) -> None:
        """Remember that (pid, iid) created ``entry_id``. A stale record of the pair (expired
        but not yet dropped, as during an AOF replay, which expires nothing) goes first, so the
        pair takes its place among the newest as it did when the IDs were dropped lazily."""
        history = self.producers.get(pid)
        if history is None:
            history = self.producers[pid] = History()
        history.append(iid, entry_id, now_ms)
        while len(history.entries) > self.maxsize:
            history.drop_oldest()
        self.added += 1

    def restore(self, pid: bytes, records: list[tuple[bytes, int, int]]) -> None:
        """Records (iid, entry ID, time) of a producer read back from a snapshot or a
        rewritten AOF, oldest first, after any it has; nothing is counted as added."""
        history = self.producers.get(pid)
        if history is None:
            history = self.producers[pid] = History()
        for iid, entry_id, when in records:
            history.append(iid, entry_id, when)

    def configure(self, duration: int | None, maxsize: int | None) -> bool:
        """XCFGSET: a changed value forgets every producer's history (counters stay).
        Returns whether anything changed."""
        changed = False
        if duration is not None and duration != self.duration:
            self.duration = duration
            changed = True
        if maxsize is not None and maxsize != self.maxsize:
            self.maxsize = maxsize
            changed = True
        if changed:
            self.producers.clear()
        return changed

    def tracked(self, now_ms: int) -> tuple[int, int]:
        """(producers tracked, idempotent IDs tracked), after expiring old IDs."""
        for pid in list(self.producers):
            self._expire(pid, now_ms)
        return len(self.producers), sum(map(len, self.producers.values()))

    def copy(self) -> Idmp:
        dup = Idmp(self.duration, self.maxsize)
        for pid, history in self.producers.items():
            dup.restore(pid, history.records())
        dup.added = self.added
        dup.duplicates = self.duplicates
        return dup
