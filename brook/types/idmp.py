"""Idempotent production (XADD IDMP/IDMPAUTO, Redis 8.6): per stream, per producer, the
idempotent IDs seen recently and the entry each one created.

A producer retrying a write after a lost reply sends the same (producer id, idempotent id) pair;
the stream answers with the entry ID of the first attempt instead of adding a duplicate. Each
producer keeps its IDs in arrival order, so the oldest is evicted first when IDMP-MAXSIZE is
reached (MAXSIZE wins over DURATION) and expired ones are dropped from the front.
"""

from __future__ import annotations

import hashlib
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


class Idmp:
    """The deduplication state of one stream."""

    __slots__ = ("duration", "maxsize", "producers", "added", "duplicates")

    def __init__(self, duration: int = DEFAULT_DURATION, maxsize: int = DEFAULT_MAXSIZE) -> None:
        self.duration = duration  # seconds an idempotent ID is remembered
        self.maxsize = maxsize  # idempotent IDs remembered per producer
        # producer id -> {idempotent id: (entry id, time added in ms)}, oldest first
        self.producers: dict[bytes, dict[bytes, tuple[int, int]]] = {}
        self.added = 0  # lifetime count of idempotent IDs recorded (iids-added)
        self.duplicates = 0  # lifetime count of duplicates answered (iids-duplicates)

    def _expire(self, pid: bytes, now_ms: int) -> dict[bytes, tuple[int, int]] | None:
        """The producer's map after dropping IDs older than the duration."""
        seen = self.producers.get(pid)
        if seen is None:
            return None
        horizon = now_ms - self.duration * 1000
        stale = 0
        for record in seen.values():  # oldest first; usually stops at the first
            if record[1] > horizon:
                break
            stale += 1
        for _ in range(stale):
            del seen[next(iter(seen))]
        if not seen:
            del self.producers[pid]
            return None
        return seen

    def find(self, pid: bytes, iid: bytes, now_ms: int) -> int | None:
        """The entry ID recorded for (pid, iid), counting the hit as a duplicate."""
        seen = self._expire(pid, now_ms)
        if seen is None:
            return None
        found = seen.get(iid)
        if found is None:
            return None
        self.duplicates += 1
        return found[0]

    def lookup(self, pid: bytes, iid: bytes) -> int | None:
        """The entry ID recorded for (pid, iid), expired or not, without counting anything:
        replaying the AOF tells a persisted duplicate from an addition with it."""
        seen = self.producers.get(pid)
        found = seen.get(iid) if seen is not None else None
        return found[0] if found is not None else None

    def record(self, pid: bytes, iid: bytes, entry_id: int, now_ms: int) -> None:
        """Remember that (pid, iid) created ``entry_id``. A stale record of the pair (expired
        but not yet dropped, as during an AOF replay, which expires nothing) goes first, so the
        pair takes its place among the newest as it did when the IDs were dropped lazily."""
        seen = self.producers.get(pid)
        if seen is None:
            seen = self.producers[pid] = {}
        seen.pop(iid, None)
        seen[iid] = (entry_id, now_ms)
        while len(seen) > self.maxsize:
            del seen[next(iter(seen))]
        self.added += 1

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
        dup.producers = {pid: dict(seen) for pid, seen in self.producers.items()}
        dup.added = self.added
        dup.duplicates = self.duplicates
        return dup
