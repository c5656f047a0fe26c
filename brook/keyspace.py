"""Databases: keys, values, expiry times, and the signals that a key changed.

Values are plain Python objects chosen per type for speed: a string is ``bytes`` (or a
``bytearray`` once modified in place by APPEND/SETRANGE, which Redis reports as encoding
``raw``), a hash is a ``dict``. Later types register their class in :data:`TYPE_NAMES`.

Expiry is lazy (a read of an expired key deletes it) and active: each database keeps a heap of
``(deadline, key)`` so the periodic job removes exactly the keys that are due, instead of
sampling random keys as Redis does (a Python dict has no cheap random access). Heap entries made
stale by PERSIST, a new TTL or a deletion are skipped when popped and swept out when they
outnumber the live ones.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brook.connection import Client

# Per value type (the Python class of a stored value), registered by the module that owns it:
# the name TYPE replies, what OBJECT ENCODING replies, and how COPY duplicates a value.
TYPE_NAMES: dict[type, str] = {bytes: "string", bytearray: "string"}
ENCODINGS: dict[type, Callable[[object], str]] = {}
COPIERS: dict[type, Callable[[object], object]] = {bytes: lambda value: value}


def now_ms() -> int:
    return int(time.time() * 1000)


class Database:
    """One of the numbered databases."""

    __slots__ = ("index", "data", "expires", "expire_heap", "watchers", "keyspace", "avg_ttl")

    def __init__(self, index: int, keyspace: Keyspace) -> None:
        self.index = index
        self.data: dict[bytes, object] = {}
        self.expires: dict[bytes, int] = {}  # key -> absolute deadline in ms
        self.expire_heap: list[tuple[int, bytes]] = []
        # key -> clients WATCHing it; empty for almost every database, so the check is cheap.
        self.watchers: dict[bytes, set[Client]] = {}
        self.keyspace = keyspace
        self.avg_ttl = 0

    # -- reading ----------------------------------------------------------------------------

    def lookup(self, key: bytes) -> object | None:
        """The live value of ``key`` (None when missing or expired; an expired key is deleted)."""
        value = self.data.get(key)
        if value is not None and self.expires:
            deadline = self.expires.get(key)
            if deadline is not None and deadline <= now_ms():
                self.expire_key(key)
                return None
        return value

    def lookup_read(self, key: bytes) -> object | None:
        """:meth:`lookup` for read commands: counts keyspace hits and misses (INFO stats)."""
        value = self.data.get(key)
        if value is not None and self.expires:
            deadline = self.expires.get(key)
            if deadline is not None and deadline <= now_ms():
                self.expire_key(key)
                value = None
        if value is None:
            self.keyspace.misses += 1
        else:
            self.keyspace.hits += 1
        return value

    def exists(self, key: bytes) -> bool:
        return self.lookup(key) is not None

    def is_expired(self, key: bytes) -> bool:
        deadline = self.expires.get(key)
        return deadline is not None and deadline <= now_ms()

    def get_expire(self, key: bytes) -> int | None:
        return self.expires.get(key)

    def __len__(self) -> int:
        return len(self.data)

    def keys(self) -> Iterator[bytes]:
        """Live keys (expired ones are skipped, not deleted, so iteration is safe)."""
        if not self.expires:
            yield from list(self.data)
            return
        current = now_ms()
        expires = self.expires
        for key in list(self.data):
            deadline = expires.get(key)
            if deadline is None or deadline > current:
                yield key

    def random_key(self) -> bytes | None:
        """A random live key; expired keys met on the way are deleted, like Redis's dbRandomKey."""
        for _ in range(100):
            if not self.data:
                return None
            key = random.choice(list(self.data)) if len(self.data) < 64 else self._sample_key()
            if not self.is_expired(key):
                return key
            self.expire_key(key)
        return None

    def _sample_key(self) -> bytes:
        # Walk a random distance into the dict: O(n) but without copying all keys.
        skip = random.randrange(len(self.data))
        for position, key in enumerate(self.data):
            if position == skip:
                return key
        raise AssertionError("unreachable")

    # -- writing ----------------------------------------------------------------------------

    def set(self, key: bytes, value: object, keep_ttl: bool = False) -> None:
        """Store a value (SET semantics: any previous TTL is dropped unless ``keep_ttl``)."""
        self.data[key] = value
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)
        if self.watchers:
            self.touch(key)

    def delete(self, key: bytes) -> bool:
        """Remove a key; True when it existed (an expired key does not count)."""
        if key not in self.data:
            return False
        if self.expires and self.is_expired(key):
            self.expire_key(key)
            return False
        del self.data[key]
        if self.expires:
            self.expires.pop(key, None)
        if self.watchers:
            self.touch(key)
        return True

    def set_expire(self, key: bytes, deadline_ms: int) -> None:
        self.expires[key] = deadline_ms
        heapq.heappush(self.expire_heap, (deadline_ms, key))
        if self.watchers:
            self.touch(key)

    def persist(self, key: bytes) -> bool:
        if self.expires.pop(key, None) is None:
            return False
        if self.watchers:
            self.touch(key)
        return True

    def expire_key(self, key: bytes) -> None:
        """Delete a key whose deadline passed (lazily or from the active cycle)."""
        self.data.pop(key, None)
        self.expires.pop(key, None)
        self.keyspace.expired_keys += 1
        if self.watchers:
            self.touch(key, by_expiry=True)

    def clear(self) -> int:
        """Remove every key (FLUSHDB); watchers of existing keys are invalidated."""
        removed = len(self.data)
        if self.watchers:
            for key in list(self.watchers):
                if key in self.data:
                    self.touch(key)
        self.data = {}
        self.expires = {}
        self.expire_heap = []
        return removed

    # -- signals ----------------------------------------------------------------------------

    def touch(self, key: bytes, by_expiry: bool = False) -> None:
        """A key changed: transactions WATCHing it will fail (Redis's touchWatchedKey)."""
        clients = self.watchers.get(key)
        if clients:
            for client in clients:
                client.watched_key_touched(self.index, key, by_expiry)

    def modified(self, key: bytes) -> None:
        """Commands that change a value in place (INCR on a dict value, HSET...) call this."""
        if self.watchers:
            self.touch(key)

    # -- active expiry ----------------------------------------------------------------------

    def expire_due(self, deadline_s: float) -> int:
        """Delete keys whose TTL passed, until done or ``deadline_s`` (perf_counter) is reached."""
        heap = self.expire_heap
        expires = self.expires
        current = now_ms()
        removed = 0
        while heap and heap[0][0] <= current:
            when, key = heapq.heappop(heap)
            if expires.get(key) == when:
                self.expire_key(key)
                removed += 1
                if removed % 64 == 0 and time.perf_counter() > deadline_s:
                    break
        if len(heap) > 2 * len(expires) + 1024:
            self.expire_heap = [(when, key) for key, when in expires.items()]
            heapq.heapify(self.expire_heap)
        return removed


class Keyspace:
    """All databases plus keyspace-wide statistics."""

    def __init__(self, count: int) -> None:
        self.expired_keys = 0
        self.hits = 0
        self.misses = 0
        self.active_expire_enabled = True
        self.databases = [Database(i, self) for i in range(count)]
        self.on_flush: list[Callable[[], None]] = []

    def __getitem__(self, index: int) -> Database:
        return self.databases[index]

    def __len__(self) -> int:
        return len(self.databases)

    def swap(self, first: int, second: int) -> None:
        """SWAPDB: exchange contents; clients stay on their index and see the other data."""
        a, b = self.databases[first], self.databases[second]
        for db in (a, b):
            for key in list(db.watchers):
                if key in a.data or key in b.data:
                    db.touch(key)
        a.data, b.data = b.data, a.data
        a.expires, b.expires = b.expires, a.expires
        a.expire_heap, b.expire_heap = b.expire_heap, a.expire_heap

    def active_expire_cycle(self, budget_s: float) -> int:
        if not self.active_expire_enabled:
            return 0
        deadline = time.perf_counter() + budget_s
        removed = 0
        for db in self.databases:
            if db.expire_heap:
                removed += db.expire_due(deadline)
        return removed
