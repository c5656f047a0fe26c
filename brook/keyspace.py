"""Databases: keys, values, expiry times, and the signals that a key changed.

Values are plain Python objects chosen per type for speed: a string is ``bytes`` (or a
``bytearray`` once modified in place by APPEND/SETRANGE, which Redis reports as encoding
``raw``); every other value type is declared in :data:`TYPE_NAMES`.

Expiry is lazy (a read of an expired key deletes it) and active: each database keeps a heap of
``(deadline, key)`` so the periodic job removes exactly the keys that are due, instead of
sampling random keys as Redis does (a Python dict has no cheap random access). Heap entries made
stale by PERSIST, a new TTL or a deletion are skipped when popped, and the heap is compacted
whenever stale entries outnumber the live ones, so repeated EXPIREs cannot grow it without bound
even while active expiry is disabled.

A database's keys and values live in a :class:`~brook.types.keytable.KeyTable` (``db.data``):
the C table of the compiled build or its dict-pair twin. Besides the value, it keeps each key's
access field (the LRU clock or LFU counter of OBJECT IDLETIME/FREQ and eviction): storing a
value counts as an access, :meth:`KeyTable.fetch` reads one, :meth:`KeyTable.touch` counts one.
It also provides what SCAN and RANDOMKEY need and a dict lacks: a cursor to resume from and
O(1) random sampling (see :mod:`brook.commands.scan` for the cursor scheme).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Final

from mypy_extensions import trait

from brook.types import native
from brook.types.hash import Hash
from brook.types.keytable import LFU_INIT_VAL, KeyTable, idle_seconds, lfu_decayed
from brook.types.lists import ListValue, list_encoding
from brook.types.scanindex import ScanIndex
from brook.types.set import SetValue
from brook.types.stream import Stream
from brook.types.zset import SortedSet

# Per value type (the Python class of a stored value), declared here for every type: the name
# TYPE replies, what OBJECT ENCODING replies, and how COPY duplicates a value.
TYPE_NAMES: Final[dict[type, str]] = {
    bytes: "string", bytearray: "string", Hash: "hash", ListValue: "list", SetValue: "set",
    SortedSet: "zset", Stream: "stream",
}
ENCODINGS: Final[dict[type, Callable[[object], str]]] = {
    Hash: lambda value: value.encoding,  # type: ignore[attr-defined]
    ListValue: list_encoding,
    SetValue: lambda value: value.encoding,  # type: ignore[attr-defined]
    SortedSet: lambda value: value.encoding,  # type: ignore[attr-defined]
    Stream: lambda value: "stream",
}
COPIERS: Final[dict[type, Callable[[object], object]]] = {
    bytes: lambda value: value,
    Hash: lambda value: value.copy(),  # type: ignore[attr-defined]
    ListValue: lambda value: value.copy(),  # type: ignore[attr-defined]
    SetValue: lambda value: value.copy(),  # type: ignore[attr-defined]
    SortedSet: lambda value: value.copy(),  # type: ignore[attr-defined]
    Stream: lambda value: value.copy(),  # type: ignore[attr-defined]
}

# The table a database's keys live in: the C one when this build has it.
_KEY_TABLE: Final[type[KeyTable]] = native.KeyTable or KeyTable



@trait
class Watcher:
    """A client that WATCHes keys (brook.session implements it; declared here so that the
    keyspace names nothing above it, and the compiled call stays native)."""

    def watched_key_touched(self, db_index: int, key: bytes, by_expiry: bool) -> None:
        """A key it watches in ``db_index`` changed (or expired, ``by_expiry``)."""
        raise NotImplementedError

class Clock:
    """The time a server's commands see (Redis's command time snapshot: relative expiries,
    TTLs and TIME all see one instant while a script or transaction runs), and whether keys
    may expire now. One per keyspace, so servers in one process keep their own."""

    __slots__ = ("snapshot", "loading", "replica")

    def __init__(self) -> None:
        self.snapshot: int | None = None  # µs: the frozen time, or None to let it run
        # A file is being loaded (or a master's snapshot applied): nothing expires, as in
        # Redis (a replayed command must find the key its original found alive).
        self.loading = False
        # A replica hides expired keys from its clients without deleting them (Redis's
        # expireIfNeeded on a replica): only the master's DEL removes a key, so the two
        # datasets stay the same even when their clocks disagree.
        self.replica = False

    def now_ms(self) -> int:
        """The command's time in ms: the clock, or the frozen time of a running script."""
        snapshot = self.snapshot
        return int(time.time() * 1000) if snapshot is None else snapshot // 1000

    def now_us(self) -> int:
        snapshot = self.snapshot
        return time.time_ns() // 1000 if snapshot is None else snapshot

    def command_ms(self, read_at: float) -> int:
        """The time in ms of a command whose request was read at ``read_at`` (seconds): the
        frozen time of the script or transaction running it, else when its request was read
        (Redis's commandTimeSnapshot, without a clock call per command)."""
        snapshot = self.snapshot
        return int(read_at * 1000) if snapshot is None else snapshot // 1000

    def expiry_now(self) -> int:
        """The time keys expire against: 0 while loading, so nothing expires then; else the
        command's time (a key alive when a script began stays alive in it)."""
        if self.loading:
            return 0
        snapshot = self.snapshot
        return int(time.time() * 1000) if snapshot is None else snapshot // 1000

    def freeze(self, at_us: int | None) -> int | None:
        """Freeze the command time at ``at_us`` (None: let it run); returns the previous one."""
        previous = self.snapshot
        self.snapshot = at_us
        return previous


# How many hashes per database keep a field index for HSCAN between calls.
_FIELD_INDEX_CACHE: Final = 32


class Database:
    """One of the numbered databases."""

    __slots__ = (
        "index", "data", "expires", "expire_heap", "watchers", "keyspace", "avg_ttl",
        "field_indexes", "blocking", "tracking",
    )

    def __init__(self, index: int, keyspace: Keyspace) -> None:
        self.index = index
        self.data: KeyTable = keyspace.new_table()
        self.expires: dict[bytes, int] = {}  # key -> absolute deadline in ms
        self.expire_heap: list[tuple[int, bytes]] = []
        # key -> clients WATCHing it; empty for almost every database, so the check is cheap.
        self.watchers: dict[bytes, set[Watcher]] = {}
        self.keyspace = keyspace
        self.avg_ttl = 0
        # key -> (the hash object, its fields' ScanIndex), for HSCAN over large hashes; an entry
        # is dropped as soon as its key is written.
        self.field_indexes: dict[bytes, tuple[object, ScanIndex]] = {}
        # key -> the clients parked on it (brook.blocking.KeyWaiters); empty unless a blocking
        # command waits, so writers test ``if db.blocking`` before signalling.
        self.blocking: dict[bytes, object] = {}
        # Client-side caching (brook.tracking): told of every changed key (and whether it
        # expired) while some client may cache keys; None otherwise, so writers pay one test.
        self.tracking: Callable[[bytes, bool], None] | None = keyspace.tracking

    # -- reading ----------------------------------------------------------------------------

    def lookup(self, key: bytes) -> object | None:
        """The live value of ``key`` (None when missing or expired; an expired key is deleted).
        Finding it counts as an access (OBJECT IDLETIME) unless the client asked NO-TOUCH."""
        value = self.data.fetch(key)
        if value is not None and self.expires:
            deadline = self.expires.get(key)
            if deadline is not None and deadline <= self.keyspace.clock.expiry_now():
                self.expire_key(key)
                return None
        return value

    def lookup_read(self, key: bytes, touch: bool = True) -> object | None:
        """:meth:`lookup` for read commands: counts keyspace hits and misses (INFO stats).
        ``touch=False`` is Redis's LOOKUP_NOTOUCH (EXISTS, TYPE, TTL and OBJECT use it)."""
        value = self.data.fetch(key) if touch else self.data.get(key)
        if value is not None and self.expires:
            deadline = self.expires.get(key)
            if deadline is not None and deadline <= self.keyspace.clock.expiry_now():
                self.expire_key(key)
                value = None
        keyspace = self.keyspace
        if value is None:
            keyspace.misses += 1
        else:
            keyspace.hits += 1
        return value

    def restore_access(self, saved: dict[bytes, int | None]) -> None:
        """Put back access fields saved before a CLIENT NO-TOUCH client's read (a key that
        was missing then is missing still: the command was a read)."""
        data = self.data
        for key, field in saved.items():
            if field is not None:
                data.set_access(key, field)

    def idle_seconds(self, key: bytes) -> int:
        """Seconds since the key was last accessed (OBJECT IDLETIME)."""
        field = self.data.access(key)
        return 0 if field is None else idle_seconds(field, self.keyspace.lru_clock)

    def frequency(self, key: bytes) -> int:
        """The decayed LFU counter (OBJECT FREQ; LFU_INIT_VAL unless fields are LFU's)."""
        field = self.data.access(key)
        keyspace = self.keyspace
        if field is None or not keyspace.lfu:
            return LFU_INIT_VAL
        return lfu_decayed(field, keyspace.lru_clock, keyspace.lfu_decay_time)

    def exists(self, key: bytes) -> bool:
        return self.lookup(key) is not None

    def is_expired(self, key: bytes) -> bool:
        deadline = self.expires.get(key)
        return deadline is not None and deadline <= self.keyspace.clock.expiry_now()

    def present(self, key: bytes) -> bool:
        """The key is here and not expired, found without expiring it or counting an access:
        cluster routing's question about a key of a slot that moves (Redis's
        getNodeByQuery looks with LOOKUP_NOTOUCH and LOOKUP_NOEXPIRE)."""
        return key in self.data and not self.is_expired(key)

    def __len__(self) -> int:
        return len(self.data)

    def keys(self) -> Iterator[bytes]:
        """Live keys (expired ones are skipped, not deleted, so iteration is safe)."""
        if not self.expires:
            yield from list(self.data)
            return
        current = self.keyspace.clock.expiry_now()
        expires = self.expires
        for key in list(self.data):
            deadline = expires.get(key)
            if deadline is None or deadline > current:
                yield key

    def random_key(self) -> bytes | None:
        """A random live key; expired keys met on the way are deleted, like Redis's dbRandomKey
        (which keeps trying until it finds a live key or the database is empty; a replica,
        which keeps them, gives up after 100 tries and returns the expired key)."""
        tries = 100
        while True:
            key = self.data.random_key()
            if key is None or not self.is_expired(key):
                return key
            if self.keyspace.clock.replica:
                tries -= 1
                if not tries:
                    return key
            self.expire_key(key)

    def field_index(self, key: bytes, fields: Collection[bytes],
                    members: Iterable[bytes] | None = None) -> ScanIndex:
        """A ScanIndex of a hash's fields, kept between HSCAN calls while the hash is unchanged
        (``members``: what to index when iterating ``fields`` does not give it, as a compiled
        sorted set gives its order keys)."""
        cached = self.field_indexes.get(key)
        if cached is not None and cached[0] is fields and cached[1].count == len(fields):
            return cached[1]
        index = ScanIndex(fields if members is None else members, len(fields))
        if len(self.field_indexes) >= _FIELD_INDEX_CACHE:
            del self.field_indexes[next(iter(self.field_indexes))]
        self.field_indexes[key] = (fields, index)
        return index

    # -- writing ----------------------------------------------------------------------------

    def set(self, key: bytes, value: object, keep_ttl: bool = False) -> None:
        """Store a value (SET semantics: any previous TTL is dropped unless ``keep_ttl``)."""
        self.data[key] = value
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)
        if self.field_indexes or self.watchers or self.blocking or self.tracking:
            self.modified(key, ready=True)

    def delete(self, key: bytes) -> bool:
        """Remove a key; True when it existed (an expired key does not count)."""
        if key not in self.data:
            return False
        if self.expires and self.is_expired(key):
            self.expire_key(key)
            return False
        self._remove(key)
        if self.watchers or self.tracking:
            self.touch(key)
        return True

    def _remove(self, key: bytes) -> None:
        """Drop a present key and everything indexed under it."""
        on_removed = self.keyspace.on_removed
        if on_removed is not None:
            on_removed(key, self.data[key])
        del self.data[key]
        if self.expires:
            self.expires.pop(key, None)
        if self.field_indexes:
            self.field_indexes.pop(key, None)
        if self.blocking:
            self.signal_ready(key)

    def set_expire(self, key: bytes, deadline_ms: int) -> None:
        self.expires[key] = deadline_ms
        heap = self.expire_heap
        heapq.heappush(heap, (deadline_ms, key))
        if len(heap) > 2 * len(self.expires) + 1024:
            self._compact_expire_heap()
        if self.watchers or self.tracking:
            self.touch(key)

    def persist(self, key: bytes) -> bool:
        if self.expires.pop(key, None) is None:
            return False
        if self.watchers or self.tracking:
            self.touch(key)
        return True

    def expire_key(self, key: bytes) -> None:
        """Delete a key whose deadline passed (lazily or from the active cycle); on a replica
        the key stays (see :attr:`Clock.replica`)."""
        if self.keyspace.clock.replica:
            return
        if key in self.data:
            self._remove(key)
        else:
            self.expires.pop(key, None)
        self.keyspace.expired_keys += 1
        if self.watchers or self.tracking:
            self.touch(key, by_expiry=True)
        if self.keyspace.on_expired is not None:
            self.keyspace.on_expired(self, key)

    def clear(self) -> int:
        """Remove every key (FLUSHDB); watchers of existing keys are invalidated."""
        removed = len(self.data)
        if self.watchers:
            for key in list(self.watchers):
                if key in self.data:
                    self.fail_watchers(key)
        for key in self.blocking:
            if key in self.data:
                self.signal_ready(key)
        self.data = self.keyspace.new_table()
        self.expires = {}
        self.expire_heap = []
        self.field_indexes = {}
        return removed

    # -- signals ----------------------------------------------------------------------------

    def signal_ready(self, key: bytes) -> None:
        """``key`` was written, replaced or removed: clients parked on it get a look once the
        current command ends (Redis's signalKeyAsReady). Writers call it only when
        ``self.blocking`` is non-empty, so a server with nobody parked pays one test."""
        if key in self.blocking:
            self.keyspace.ready[(self, key)] = None

    def touch(self, key: bytes, by_expiry: bool = False) -> None:
        """A key changed: transactions WATCHing it will fail, clients caching it are told
        (Redis's touchWatchedKey and trackingInvalidateKey). Callers test ``self.watchers or
        self.tracking`` first."""
        if self.watchers:
            self.fail_watchers(key, by_expiry)
        tracking = self.tracking
        if tracking is not None:
            tracking(key, by_expiry)

    def fail_watchers(self, key: bytes, by_expiry: bool = False) -> None:
        """Transactions WATCHing ``key`` will fail (a flush's and SWAPDB's signal: caching
        clients learn of those otherwise)."""
        clients = self.watchers.get(key)
        if clients:
            for client in clients:
                client.watched_key_touched(self.index, key, by_expiry)

    def modified(self, key: bytes, ready: bool = False) -> None:
        """``key``'s value was written, replaced or changed in place: the one place that says
        what a change means to the keyspace (Redis's signalModifiedKey): WATCHers fail and a
        cached HSCAN index goes. ``ready``: it may now have something for clients parked on it
        (Redis's signalKeyAsReady: elements added, the value replaced or gone), who get a look.
        Commands call it through :func:`brook.notify.written`, which adds the keyspace event
        and the dirty counter; the keyspace's own writes (set, delete, expiry) call it
        themselves."""
        if self.field_indexes:
            self.field_indexes.pop(key, None)
        if self.watchers or self.tracking:
            self.touch(key)
        if ready and self.blocking:
            self.signal_ready(key)

    # -- active expiry ----------------------------------------------------------------------

    def expire_due(self, deadline_s: float) -> int:
        """Delete keys whose TTL passed, until done or ``deadline_s`` (perf_counter) is reached."""
        heap = self.expire_heap
        expires = self.expires
        current = self.keyspace.clock.expiry_now()
        removed = 0
        popped = 0
        while heap and heap[0][0] <= current:
            when, key = heapq.heappop(heap)
            if expires.get(key) == when:
                self.expire_key(key)
                removed += 1
            popped += 1
            if popped % 64 == 0 and time.perf_counter() > deadline_s:
                break
        if len(heap) > 2 * len(expires) + 1024:
            self._compact_expire_heap()
        return removed

    def _compact_expire_heap(self) -> None:
        """Rebuild the heap from the live deadlines (drops entries made stale by PERSIST, new
        TTLs and deletions); amortized O(1) per push since it runs once stale ones dominate."""
        self.expire_heap = [(when, key) for key, when in self.expires.items()]
        heapq.heapify(self.expire_heap)


class Keyspace:
    """All databases plus keyspace-wide statistics."""

    def __init__(self, count: int) -> None:
        self.clock = Clock()
        self.expired_keys = 0
        self.hits = 0
        self.misses = 0
        # Redis's LRU clock: whole seconds, advanced by the server's cron through tick() (so
        # a key access reads the table's copy, not the system clock).
        self.lru_clock = int(time.time())
        # What the tables' access fields hold: LFU counters (and their parameters, from
        # lfu-log-factor and lfu-decay-time) or LRU clocks; set by configure_access.
        self.lfu = False
        self.lfu_log_factor = 10
        self.lfu_decay_time = 1
        self.active_expire_enabled = True
        # What every database tells of a changed key while clients may cache keys (see
        # Database.tracking); set through track_changes.
        self.tracking: Callable[[bytes, bool], None] | None = None
        self.databases = [Database(i, self) for i in range(count)]
        self.next_expire_db = 0  # where the next active expiry run starts (round robin)
        # Called with (database, key) after a key expired (the "expired" keyspace event).
        self.on_expired: Callable[[Database, bytes], None] | None = None
        # Called with (key, value) before a key is removed (deleted, expired, evicted), while
        # maxmemory is set: the memory estimate credits what it held, so that room a deletion
        # made is usable before the next allocator reading, as in Redis.
        self.on_removed: Callable[[bytes, object], None] | None = None
        # (database, key) signalled since parked clients were last served, in signal order
        # (a dict used as an ordered set).
        self.ready: dict[tuple[Database, bytes], None] = {}

    def track_changes(self, tracking: Callable[[bytes, bool], None] | None) -> None:
        """Tell every database whom to tell of changed keys (None: nobody caches any)."""
        self.tracking = tracking
        for db in self.databases:
            db.tracking = tracking

    def __getitem__(self, index: int) -> Database:
        return self.databases[index]

    def new_table(self) -> KeyTable:
        """An empty key table that keeps access fields as every other database's does."""
        table = _KEY_TABLE()
        table.clock = self.lru_clock
        table.configure(self.lfu, self.lfu_log_factor, self.lfu_decay_time)
        return table

    def tick(self, clock: int) -> None:
        """Advance the LRU clock (the server's cron, once a tick)."""
        self.lru_clock = clock
        for db in self.databases:
            db.data.clock = clock

    def configure_access(self, lfu: bool, log_factor: int, decay_time: int) -> None:
        """What access fields hold (maxmemory-policy, lfu-log-factor, lfu-decay-time):
        switching between LRU and LFU starts every key's field afresh."""
        self.lfu = lfu
        self.lfu_log_factor = log_factor
        self.lfu_decay_time = decay_time
        for db in self.databases:
            db.data.configure(lfu, log_factor, decay_time)

    def __len__(self) -> int:
        return len(self.databases)

    def swap(self, first: int, second: int) -> None:
        """SWAPDB: exchange contents; clients stay on their index and see the other data."""
        a, b = self.databases[first], self.databases[second]
        for db in (a, b):
            for key in list(db.watchers):
                if key in a.data or key in b.data:
                    db.fail_watchers(key)
            for key in db.blocking:  # parked clients stay on their index and see the other data
                db.signal_ready(key)
        a.data, b.data = b.data, a.data
        a.expires, b.expires = b.expires, a.expires
        a.expire_heap, b.expire_heap = b.expire_heap, a.expire_heap
        a.avg_ttl, b.avg_ttl = b.avg_ttl, a.avg_ttl
        a.field_indexes, b.field_indexes = b.field_indexes, a.field_indexes

    def active_expire_cycle(self, budget_s: float) -> int:
        """Remove due keys from every database within ``budget_s`` seconds (cron, ``hz``/s);
        keys left when the budget runs out are the first ones taken on the next run."""
        if not self.active_expire_enabled:
            return 0
        deadline = time.perf_counter() + budget_s
        removed = 0
        count = len(self.databases)
        # Start where the previous run stopped, so one database with a backlog of due keys
        # cannot starve the others.
        for step in range(count):
            db = self.databases[(self.next_expire_db + step) % count]
            if db.expire_heap:
                removed += db.expire_due(deadline)
                if time.perf_counter() > deadline:
                    self.next_expire_db = (db.index + 1) % count
                    break
        return removed
