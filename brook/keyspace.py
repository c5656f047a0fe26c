"""Databases: keys, values, expiry times, and the signals that a key changed.

Values are plain Python objects chosen per type for speed: a string is ``bytes`` (or a
``bytearray`` once modified in place by APPEND/SETRANGE, which Redis reports as encoding
``raw``), a hash is a ``dict``. Later types register their class in :data:`TYPE_NAMES`.

Expiry is lazy (a read of an expired key deletes it) and active: each database keeps a heap of
``(deadline, key)`` so the periodic job removes exactly the keys that are due, instead of
sampling random keys as Redis does (a Python dict has no cheap random access). Heap entries made
stale by PERSIST, a new TTL or a deletion are skipped when popped, and the heap is compacted
whenever stale entries outnumber the live ones, so repeated EXPIREs cannot grow it without bound
even while active expiry is disabled.

SCAN and RANDOMKEY need what a dict lacks: a stable position to resume from and O(1) random
access. :class:`ScanIndex` provides both, as a hash table of its own built the first time a
database is scanned (see :mod:`brook.commands.scan` for the cursor scheme). Hot write paths
insert into ``db.data`` directly and never pay for it: a dict keeps insertion order, so the keys
added since the index was last used are exactly the newest entries and are picked up from
``reversed(db.data)`` when it is next needed. Deletions, which can hit any key, go through
:meth:`Database.delete` / :meth:`Database.expire_key` and update the index at once.
"""

from __future__ import annotations

import heapq
import itertools
import random
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from brook.session import Session

# Per value type (the Python class of a stored value), registered by the module that owns it:
# the name TYPE replies, what OBJECT ENCODING replies, and how COPY duplicates a value.
TYPE_NAMES: Final[dict[type, str]] = {bytes: "string", bytearray: "string"}
ENCODINGS: Final[dict[type, Callable[[object], str]]] = {}
COPIERS: Final[dict[type, Callable[[object], object]]] = {bytes: lambda value: value}


def now_ms() -> int:
    """The command's time in ms: the clock, or a script's start while it runs (Redis's command
    time snapshot: relative expiries, TTLs and TIME all see one instant)."""
    snapshot = _time_snapshot
    return int(time.time() * 1000) if snapshot is None else snapshot // 1000


def now_us() -> int:
    snapshot = _time_snapshot
    return time.time_ns() // 1000 if snapshot is None else snapshot


_loading = False
_time_snapshot: int | None = None  # µs


def expiry_now() -> int:
    """The time keys expire against: 0 while a file is being loaded, so nothing expires then,
    as in Redis (a replayed command must find the key its original found alive); else the
    command's time (:func:`now_ms`: a key alive when a script began stays alive in it)."""
    if _loading:
        return 0
    snapshot = _time_snapshot
    return int(time.time() * 1000) if snapshot is None else snapshot // 1000


def pause_expiry(paused: bool) -> None:
    global _loading
    _loading = paused


def snapshot_time(at_us: int | None) -> int | None:
    """Freeze the command time at ``at_us`` (None: let it run); returns the previous one."""
    global _time_snapshot
    previous = _time_snapshot
    _time_snapshot = at_us
    return previous


# ---------------------------------------------------------------------------------------------
# ScanIndex: a hash table with Redis's reverse-binary cursor.
# ---------------------------------------------------------------------------------------------

_MIN_SLOTS: Final = 4  # Redis's DICT_HT_INITIAL_SIZE
_MIGRATE_BUCKETS: Final = 4  # old buckets moved per add/discard while resizing
_Slot = bytes | list[bytes] | None


def _table_size(count: int) -> int:
    """The smallest power of two holding ``count`` keys at load factor 1."""
    size = _MIN_SLOTS
    while size < count:
        size <<= 1
    return size


# Bit-reversal of every 16-bit value, so reversing a cursor costs two lookups.
_REVERSED_8: Final = [int(format(value, "08b")[::-1], 2) for value in range(256)]
_REVERSED_16: Final = [
    _REVERSED_8[value & 0xFF] << 8 | _REVERSED_8[value >> 8] for value in range(1 << 16)
]


def _reverse_bits(value: int, bits: int) -> int:
    """``value``'s low ``bits`` bits in reverse order (tables never exceed 2**32 buckets)."""
    if bits <= 16:
        return _REVERSED_16[value] >> (16 - bits)
    return (_REVERSED_16[value & 0xFFFF] << 16 | _REVERSED_16[value >> 16]) >> (32 - bits)


def next_cursor(cursor: int, mask: int) -> int:
    """Redis's ``dictScan`` step: increment the cursor's bits under ``mask`` in reverse order.

    Bits above the mask are cleared; 0 means the walk wrapped around (iteration complete).
    """
    bits = mask.bit_length()
    incremented = _reverse_bits(cursor & mask, bits) + 1
    if incremented > mask:
        return 0
    return _reverse_bits(incremented, bits)


class ScanIndex:
    """Keys bucketed by ``hash(key) & mask`` in a power-of-two table, for cursors and sampling.

    A bucket holds nothing, one key, or a list of colliding keys (a list per bucket would cost
    far more memory). Growing or shrinking is incremental, as in Redis: the previous table stays
    in ``old`` and a few of its buckets move to the new one on every update, so no single call
    pays for rehashing a large table. :meth:`scan` follows ``dictScan`` exactly, including while
    both tables are live, which is what makes the SCAN guarantees hold across resizes.
    """

    __slots__ = ("table", "old", "migrated", "count")

    def __init__(self, keys: Iterable[bytes] = (), size_hint: int = 0) -> None:
        self.table: list[_Slot] = [None] * _table_size(size_hint)
        self.old: list[_Slot] | None = None
        self.migrated = 0  # buckets of ``old`` below this index have moved to ``table``
        self.count = 0
        table = self.table
        for key in keys:
            _slot_add(table, key)
            self.count += 1

    def __len__(self) -> int:
        return self.count

    def __contains__(self, key: bytes) -> bool:
        code = hash(key)
        old = self.old
        if old is not None:
            index = code & (len(old) - 1)
            if index >= self.migrated and _slot_has(old[index], key):
                return True
        return _slot_has(self.table[code & (len(self.table) - 1)], key)

    def add(self, key: bytes) -> None:
        """Insert a key known to be absent."""
        if self.old is not None:
            self._migrate(_MIGRATE_BUCKETS)
        _slot_add(self.table, key)
        self.count += 1
        if self.count > len(self.table):
            self._resize(len(self.table) * 2)

    def discard(self, key: bytes) -> bool:
        if self.old is not None:
            self._migrate(_MIGRATE_BUCKETS)
        code = hash(key)
        removed = False
        old = self.old
        if old is not None:
            index = code & (len(old) - 1)
            if index >= self.migrated:
                removed = _slot_remove(old, index, key)
        if not removed:
            removed = _slot_remove(self.table, code & (len(self.table) - 1), key)
        if removed:
            self.count -= 1
            size = len(self.table)
            if size > _MIN_SLOTS and self.count * 8 < size and self.old is None:
                self._resize(_table_size(self.count))
        return removed

    def walk(self, cursor: int, count: int, found: list[bytes]) -> int:
        """One SCAN call: visit buckets from ``cursor`` until ``count`` keys were seen (at most
        10 * ``count`` more buckets, Redis's bound for sparse tables); return the next cursor.

        A resize in progress advances first (as Redis's cron rehashes between calls), so an
        idle index does not stay in the slower two-table mode.
        """
        if self.old is not None:
            self._migrate(max(count, 16))
        budget = count * 10
        if self.old is not None:
            while True:
                cursor = self.scan(cursor, found)
                if not cursor or budget <= 0:
                    return cursor
                budget -= 1
                if len(found) >= count:
                    return cursor
        # One table: walk the reversed cursor directly (the common case, kept tight).
        table = self.table
        mask = len(table) - 1
        bits = mask.bit_length()
        position = _reverse_bits(cursor & mask, bits)
        while True:
            slot = table[_reverse_bits(position, bits)]
            if slot is not None:
                if type(slot) is list:
                    found.extend(slot)
                else:
                    found.append(slot)  # type: ignore[arg-type]
            position += 1
            if position > mask:
                return 0
            if budget <= 0 or len(found) >= count:
                return _reverse_bits(position, bits)
            budget -= 1

    def scan(self, cursor: int, found: list[bytes]) -> int:
        """Append the keys of the bucket(s) at ``cursor`` to ``found``; return the next cursor."""
        old = self.old
        table = self.table
        if old is None:
            mask = len(table) - 1
            _slot_extend(table[cursor & mask], found)
            return next_cursor(cursor, mask)
        small, large = (old, table) if len(old) < len(table) else (table, old)
        small_mask, large_mask = len(small) - 1, len(large) - 1
        _slot_extend(small[cursor & small_mask], found)
        # Then every bucket of the larger table that expands the smaller table's bucket.
        while True:
            _slot_extend(large[cursor & large_mask], found)
            cursor = next_cursor(cursor, large_mask)
            if not cursor & (small_mask ^ large_mask):
                return cursor

    def random_key(self) -> bytes | None:
        """A key from a random non-empty bucket (biased like Redis's, O(1) expected)."""
        if not self.count:
            return None
        for _ in range(1000):
            slot = self._random_slot()
            if slot is not None:
                return slot if type(slot) is bytes else random.choice(slot)  # type: ignore[return-value]
        # Only reachable if the count is wrong: fall back to a walk.
        for table in (self.table, self.old or []):
            for slot in table:
                if slot is not None:
                    return slot if type(slot) is bytes else slot[0]  # type: ignore[return-value]
        return None

    def _random_slot(self) -> _Slot:
        old = self.old
        table = self.table
        if old is None:
            return table[random.randrange(len(table))]
        pending = len(old) - self.migrated
        pick = random.randrange(pending + len(table))
        return old[self.migrated + pick] if pick < pending else table[pick - pending]

    def _resize(self, size: int) -> None:
        if self.old is not None:
            self._migrate(len(self.old))  # finish the previous resize first
        self.old = self.table
        self.table = [None] * size
        self.migrated = 0

    def _migrate(self, buckets: int) -> None:
        """Move up to ``buckets`` non-empty buckets (and at most 10x as many empty ones)."""
        old = self.old
        assert old is not None
        table = self.table
        position = self.migrated
        end = len(old)
        empty_budget = buckets * 10
        while buckets and position < end:
            slot = old[position]
            position += 1
            if slot is None:
                empty_budget -= 1
                if not empty_budget:
                    break
                continue
            old[position - 1] = None
            if type(slot) is list:
                for key in slot:
                    _slot_add(table, key)
            else:
                _slot_add(table, slot)  # type: ignore[arg-type]
            buckets -= 1
        self.migrated = position
        if position >= end:
            self.old = None
            self.migrated = 0


def _slot_add(table: list[_Slot], key: bytes) -> None:
    index = hash(key) & (len(table) - 1)
    slot = table[index]
    if slot is None:
        table[index] = key
    elif type(slot) is list:
        slot.append(key)
    else:
        table[index] = [slot, key]  # type: ignore[list-item]


def _slot_remove(table: list[_Slot], index: int, key: bytes) -> bool:
    slot = table[index]
    if slot is None:
        return False
    if type(slot) is list:
        if key not in slot:
            return False
        slot.remove(key)
        if len(slot) == 1:
            table[index] = slot[0]
        return True
    if slot == key:
        table[index] = None
        return True
    return False


def _slot_has(slot: _Slot, key: bytes) -> bool:
    if slot is None:
        return False
    if type(slot) is list:
        return key in slot
    return slot == key


def _slot_extend(slot: _Slot, found: list[bytes]) -> None:
    if slot is None:
        return
    if type(slot) is list:
        found.extend(slot)
    else:
        found.append(slot)  # type: ignore[arg-type]


# How many hashes per database keep a field index for HSCAN between calls.
_FIELD_INDEX_CACHE: Final = 32


class Database:
    """One of the numbered databases."""

    __slots__ = (
        "index", "data", "expires", "expire_heap", "watchers", "keyspace", "avg_ttl",
        "key_index", "indexed_data", "field_indexes", "access", "blocking",
    )

    def __init__(self, index: int, keyspace: Keyspace) -> None:
        self.index = index
        self.data: dict[bytes, object] = {}
        self.expires: dict[bytes, int] = {}  # key -> absolute deadline in ms
        self.expire_heap: list[tuple[int, bytes]] = []
        # key -> clients WATCHing it; empty for almost every database, so the check is cheap.
        self.watchers: dict[bytes, set[Session]] = {}
        self.keyspace = keyspace
        self.avg_ttl = 0
        # The keys' ScanIndex, created by the first SCAN/RANDOMKEY; it lags behind insertions
        # (see the module docstring), use :meth:`synced_key_index`.
        self.key_index: ScanIndex | None = None
        self.indexed_data: dict[bytes, object] | None = None  # the dict key_index describes
        # key -> (the hash object, its fields' ScanIndex), for HSCAN over large hashes; an entry
        # is dropped as soon as its key is written.
        self.field_indexes: dict[bytes, tuple[object, ScanIndex]] = {}
        # key -> the LRU clock (seconds) of its last access, for OBJECT IDLETIME and LRU
        # eviction. Every clock value stored is the one shared int object, so an entry costs
        # one dict slot. Under an LFU policy the table stores LFU fields (brook.eviction).
        self.access: dict[bytes, int] = keyspace.new_access()
        # key -> the clients parked on it (brook.blocking.KeyWaiters); empty unless a blocking
        # command waits, so writers test ``if db.blocking`` before signalling.
        self.blocking: dict[bytes, object] = {}

    # -- reading ----------------------------------------------------------------------------

    def lookup(self, key: bytes) -> object | None:
        """The live value of ``key`` (None when missing or expired; an expired key is deleted).
        Finding it counts as an access (OBJECT IDLETIME) unless the client asked NO-TOUCH."""
        value = self.data.get(key)
        if value is not None:
            if self.expires:
                deadline = self.expires.get(key)
                if deadline is not None and deadline <= expiry_now():
                    self.expire_key(key)
                    return None
            self.access[key] = self.keyspace.lru_clock
        return value

    def lookup_read(self, key: bytes, touch: bool = True) -> object | None:
        """:meth:`lookup` for read commands: counts keyspace hits and misses (INFO stats).
        ``touch=False`` is Redis's LOOKUP_NOTOUCH (EXISTS, TYPE, TTL and OBJECT use it)."""
        value = self.data.get(key)
        if value is not None and self.expires:
            deadline = self.expires.get(key)
            if deadline is not None and deadline <= expiry_now():
                self.expire_key(key)
                value = None
        keyspace = self.keyspace
        if value is None:
            keyspace.misses += 1
        else:
            keyspace.hits += 1
            if touch:
                self.access[key] = keyspace.lru_clock
        return value

    def restore_access(self, saved: dict[bytes, int | None]) -> None:
        """Put back access times saved before a CLIENT NO-TOUCH client's read."""
        access = self.access
        for key, clock in saved.items():
            if clock is not None and key in self.data:
                dict.__setitem__(access, key, clock)  # a restore, not an access (LFU)
            elif clock is None:
                access.pop(key, None)

    def idle_seconds(self, key: bytes) -> int:
        """Seconds since the key was last accessed (OBJECT IDLETIME)."""
        clock = self.keyspace.lru_clock
        return max(0, clock - self.access.get(key, clock))

    def exists(self, key: bytes) -> bool:
        return self.lookup(key) is not None

    def is_expired(self, key: bytes) -> bool:
        deadline = self.expires.get(key)
        return deadline is not None and deadline <= expiry_now()

    def __len__(self) -> int:
        return len(self.data)

    def keys(self) -> Iterator[bytes]:
        """Live keys (expired ones are skipped, not deleted, so iteration is safe)."""
        if not self.expires:
            yield from list(self.data)
            return
        current = expiry_now()
        expires = self.expires
        for key in list(self.data):
            deadline = expires.get(key)
            if deadline is None or deadline > current:
                yield key

    def random_key(self) -> bytes | None:
        """A random live key; expired keys met on the way are deleted, like Redis's dbRandomKey
        (which keeps trying until it finds a live key or the database is empty)."""
        while self.data:
            if len(self.data) < 64:
                key: bytes | None = random.choice(list(self.data))
            else:
                key = self.synced_key_index().random_key()
            if key is None or key not in self.data:  # an index out of step: rebuild it
                self.key_index = None
                continue
            if not self.is_expired(key):
                return key
            self.expire_key(key)
        return None

    def synced_key_index(self) -> ScanIndex:
        """The key index, brought up to date with keys inserted since it was last used.

        Every deletion updates the index, so it holds exactly the keys that were present when
        it was last synced and still are; the keys added since are the newest dict entries.
        Anything else (a deletion that bypassed :meth:`delete`, ``data`` replaced wholesale) is
        detected and answered with a rebuild.
        """
        data = self.data
        index = self.key_index
        if index is None or self.indexed_data is not data or index.count > len(data):
            return self._rebuild_key_index()
        missing = len(data) - index.count
        if missing:
            if missing > index.count:  # cheaper to rebuild than to insert one by one
                return self._rebuild_key_index()
            newest = list(itertools.islice(reversed(data), missing))
            for key in newest:
                if key in index:
                    return self._rebuild_key_index()
                index.add(key)
        return index

    def _rebuild_key_index(self) -> ScanIndex:
        index = self.key_index = ScanIndex(self.data, len(self.data))
        self.indexed_data = self.data
        return index

    def field_index(self, key: bytes, fields: dict[bytes, object]) -> ScanIndex:
        """A ScanIndex of a hash's fields, kept between HSCAN calls while the hash is unchanged."""
        cached = self.field_indexes.get(key)
        if cached is not None and cached[0] is fields and cached[1].count == len(fields):
            return cached[1]
        index = ScanIndex(fields, len(fields))
        if len(self.field_indexes) >= _FIELD_INDEX_CACHE:
            del self.field_indexes[next(iter(self.field_indexes))]
        self.field_indexes[key] = (fields, index)
        return index

    # -- writing ----------------------------------------------------------------------------

    def set(self, key: bytes, value: object, keep_ttl: bool = False) -> None:
        """Store a value (SET semantics: any previous TTL is dropped unless ``keep_ttl``)."""
        self.data[key] = value
        self.access[key] = self.keyspace.lru_clock
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)
        if self.field_indexes or self.watchers or self.blocking:
            self.modified(key, ready=True)

    def delete(self, key: bytes) -> bool:
        """Remove a key; True when it existed (an expired key does not count)."""
        if key not in self.data:
            return False
        if self.expires and self.is_expired(key):
            self.expire_key(key)
            return False
        self._remove(key)
        if self.watchers:
            self.touch(key)
        return True

    def _remove(self, key: bytes) -> None:
        """Drop a present key and everything indexed under it."""
        del self.data[key]
        self.access.pop(key, None)
        if self.expires:
            self.expires.pop(key, None)
        if self.key_index is not None:
            self.key_index.discard(key)
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
        if key in self.data:
            self._remove(key)
        else:
            self.expires.pop(key, None)
        self.keyspace.expired_keys += 1
        if self.watchers:
            self.touch(key, by_expiry=True)
        if self.keyspace.on_expired is not None:
            self.keyspace.on_expired(self, key)

    def clear(self) -> int:
        """Remove every key (FLUSHDB); watchers of existing keys are invalidated."""
        removed = len(self.data)
        if self.watchers:
            for key in list(self.watchers):
                if key in self.data:
                    self.touch(key)
        for key in self.blocking:
            if key in self.data:
                self.signal_ready(key)
        self.data = {}
        self.access = self.keyspace.new_access()
        self.expires = {}
        self.expire_heap = []
        self.key_index = self.indexed_data = None
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
        """A key changed: transactions WATCHing it will fail (Redis's touchWatchedKey)."""
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
        if self.watchers:
            self.touch(key)
        if ready and self.blocking:
            self.signal_ready(key)

    # -- active expiry ----------------------------------------------------------------------

    def expire_due(self, deadline_s: float) -> int:
        """Delete keys whose TTL passed, until done or ``deadline_s`` (perf_counter) is reached."""
        heap = self.expire_heap
        expires = self.expires
        current = expiry_now()
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
        self.expired_keys = 0
        self.hits = 0
        self.misses = 0
        # Redis's LRU clock: whole seconds, advanced by the server's cron (so a key access
        # costs one dict store, not a clock read). Typed Any so that the compiled build keeps
        # it as one int object that every access entry shares: typed int it is held unboxed,
        # and each store into an access dict would make a 32-byte int of its own.
        self.lru_clock: Any = int(time.time())
        # What a database's access table is: a dict of clocks, or brook.eviction's LFU table
        # under an LFU policy (set with lfu-log-factor and lfu-decay-time by the server).
        self.new_access: Callable[[], dict[bytes, int]] = dict
        self.lfu_log_factor = 10
        self.lfu_decay_time = 1
        self.active_expire_enabled = True
        self.databases = [Database(i, self) for i in range(count)]
        self.next_expire_db = 0  # where the next active expiry run starts (round robin)
        # Called with (database, key) after a key expired (the "expired" keyspace event).
        self.on_expired: Callable[[Database, bytes], None] | None = None
        # (database, key) signalled since parked clients were last served, in signal order
        # (a dict used as an ordered set).
        self.ready: dict[tuple[Database, bytes], None] = {}

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
            for key in db.blocking:  # parked clients stay on their index and see the other data
                db.signal_ready(key)
        a.data, b.data = b.data, a.data
        a.access, b.access = b.access, a.access
        a.expires, b.expires = b.expires, a.expires
        a.expire_heap, b.expire_heap = b.expire_heap, a.expire_heap
        a.avg_ttl, b.avg_ttl = b.avg_ttl, a.avg_ttl
        a.key_index, b.key_index = b.key_index, a.key_index
        a.indexed_data, b.indexed_data = b.indexed_data, a.indexed_data
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
