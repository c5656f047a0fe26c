"""A database's keys: per key its value and its access field (LRU clock or LFU counter).

:class:`KeyTable` here is the Python twin of ``brook/types/_keytable.c``, which the compiled
build uses (:data:`brook.types.native.KeyTable`): that one keeps each key, its short value and
its field in one block, which is what brings a small string key near Redis's size
(docs/performance.md). This one is a dict of values, a dict of fields and, once SCAN or random
sampling asks, a :class:`ScanIndex`. Both behave the same; a hypothesis test holds them to it.

This module is deliberately not compiled by mypyc: ``Database.data`` is typed as this class,
and a compiled class would make mypyc reject the C table at run time.

The access field is Redis's 24-bit object field. Under an LRU policy it is the LRU clock's low
24 bits (seconds); under an LFU policy it is the minute of the last decrement (16 bits) and a
logarithmic counter (8 bits), which starts at ``LFU_INIT_VAL``, is incremented with probability
``1 / ((counter - LFU_INIT_VAL) * lfu-log-factor + 1)`` on each access and decays by one per
``lfu-decay-time`` minutes. Storing a value is an access; so is :meth:`KeyTable.fetch`.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Final

from brook.types.scanindex import ScanIndex

LFU_INIT_VAL: Final = 5
LRU_CLOCK_MAX: Final = (1 << 24) - 1  # Redis's LRU_CLOCK_MAX


def lfu_minutes(clock_s: int) -> int:
    """Redis's LFUGetTimeInMinutes: minutes, 16 bits, wrapping."""
    return (clock_s // 60) & 0xFFFF


def lfu_decayed(field: int, clock_s: int, decay_time: int) -> int:
    """Redis's LFUDecrAndReturn: the counter less one per ``decay_time`` minutes elapsed since
    the field's minute (not stored)."""
    counter = field & 0xFF
    if not decay_time:
        return counter
    then = field >> 8
    now = lfu_minutes(clock_s)
    elapsed = now - then if now >= then else 0xFFFF - then + now
    return max(0, counter - elapsed // decay_time)


def lfu_incremented(counter: int, log_factor: int) -> int:
    """Redis's LFULogIncr."""
    if counter == 255:
        return 255
    base = max(0, counter - LFU_INIT_VAL)
    return counter + 1 if random.random() < 1.0 / (base * log_factor + 1) else counter


def idle_seconds(field: int, clock_s: int) -> int:
    """Redis's estimateObjectIdleTime: seconds from an LRU field to the clock (24 bits wrap)."""
    now = clock_s & LRU_CLOCK_MAX
    return now - field if now >= field else now + (LRU_CLOCK_MAX - field)


class KeyTable:
    """The dict-pair twin of the C KeyTable (module docstring)."""

    __slots__ = ("values", "fields", "clock", "lfu", "log_factor", "decay_time", "index",
                 "slot_of", "slot_counts")

    def __init__(self) -> None:
        self.values: dict[bytes, object] = {}
        self.fields: dict[bytes, int] = {}
        self.clock = 0  # the keyspace's LRU clock, in seconds
        self.lfu = False
        self.log_factor = 10
        self.decay_time = 1
        # Built by the first walk or random_key; it lags behind insertions, which are the
        # newest entries of ``values`` (see :meth:`_synced_index`).
        self.index: ScanIndex | None = None
        # Cluster mode: a key's hash slot, and the keys per slot, once track_slots was called.
        self.slot_of: Callable[[bytes], int] | None = None
        self.slot_counts: list[int] | None = None

    def _fresh_field(self) -> int:
        if self.lfu:
            return lfu_minutes(self.clock) << 8 | LFU_INIT_VAL
        return self.clock & LRU_CLOCK_MAX

    def _accessed_field(self, field: int) -> int:
        if self.lfu:
            counter = lfu_incremented(lfu_decayed(field, self.clock, self.decay_time),
                                      self.log_factor)
            return lfu_minutes(self.clock) << 8 | counter
        return self.clock & LRU_CLOCK_MAX

    # -- the mapping --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, key: bytes) -> bool:
        return key in self.values

    def __getitem__(self, key: bytes) -> object:
        return self.values[key]

    def __setitem__(self, key: bytes, value: object) -> None:
        """Store a value; an access of the key (a new key's field starts afresh)."""
        field = self.fields.get(key)
        self.values[key] = value
        self.fields[key] = self._fresh_field() if field is None else self._accessed_field(field)
        if field is None and self.slot_counts is not None:
            self.slot_counts[self.slot_of(key)] += 1  # type: ignore[misc]

    def __delitem__(self, key: bytes) -> None:
        del self.values[key]
        del self.fields[key]
        if self.slot_counts is not None:
            self.slot_counts[self.slot_of(key)] -= 1  # type: ignore[misc]
        if self.index is not None:
            self.index.discard(key)

    def __iter__(self) -> Iterator[bytes]:
        """The keys present when iterating began."""
        return iter(list(self.values))

    # -- cluster hash slots -------------------------------------------------------------------

    def track_slots(self, slot_of: Callable[[bytes], int]) -> None:
        """Count keys per cluster hash slot from now on (``slot_of``: a key's slot; the C
        table computes it itself): COUNTKEYSINSLOT, GETKEYSINSLOT and SETSLOT NODE ask of one
        slot, and resharding asks of thousands."""
        if self.slot_counts is None:
            self.slot_of = slot_of
            counts = [0] * 16384
            for key in self.values:
                counts[slot_of(key)] += 1
            self.slot_counts = counts

    def _counts(self, slot: int) -> list[int]:
        if self.slot_counts is None:
            raise RuntimeError("track_slots() was not called")
        if not 0 <= slot < 16384:
            raise ValueError("not a hash slot")
        return self.slot_counts

    def slot_count(self, slot: int) -> int:
        return self._counts(slot)[slot]

    def slot_keys(self, slot: int, limit: int) -> list[bytes]:
        """Up to ``limit`` keys of a slot (-1: all), by a walk that stops when it has the
        slot's count."""
        wanted = self._counts(slot)[slot]
        if 0 <= limit < wanted:
            wanted = limit
        found: list[bytes] = []
        slot_of = self.slot_of
        for key in self.values:
            if len(found) >= wanted:
                break
            if slot_of(key) == slot:  # type: ignore[misc]
                found.append(key)
        return found

    def keys(self) -> list[bytes]:
        return list(self.values)

    def get(self, key: bytes, default: object = None) -> object:
        """The value, or ``default``; not an access."""
        return self.values.get(key, default)

    def fetch(self, key: bytes) -> object:
        """The value or None, counted as an access."""
        value = self.values.get(key)
        if value is not None:
            self.fields[key] = self._accessed_field(self.fields[key])
        return value

    # -- access fields ------------------------------------------------------------------------

    def touch(self, key: bytes) -> bool:
        """Count an access; whether the key is present."""
        field = self.fields.get(key)
        if field is None:
            return False
        self.fields[key] = self._accessed_field(field)
        return True

    def access(self, key: bytes) -> int | None:
        """The key's access field (None: no such key)."""
        return self.fields.get(key)

    def set_access(self, key: bytes, field: int) -> None:
        """Put back a field read by :meth:`access` (not an access)."""
        if key in self.fields:
            self.fields[key] = field & LRU_CLOCK_MAX

    def configure(self, lfu: bool, log_factor: int, decay_time: int) -> None:
        """What the fields hold. Switching between LRU and LFU starts every key afresh (Redis
        reinterprets the old field; a fresh start is better defined)."""
        if log_factor < 0 or decay_time < 0:
            raise ValueError("log_factor and decay_time are non-negative ints")
        self.log_factor = log_factor
        self.decay_time = decay_time
        if bool(lfu) != self.lfu:
            self.lfu = bool(lfu)
            self.fields = dict.fromkeys(self.values, self._fresh_field())

    # -- SCAN and sampling --------------------------------------------------------------------

    def walk(self, cursor: int, count: int, found: list[bytes]) -> int:
        """One SCAN call (:meth:`ScanIndex.walk`)."""
        if not self.values:
            return 0
        return self._synced_index().walk(cursor, count, found)

    def random_key(self) -> bytes | None:
        values = self.values
        if not values:
            return None
        if len(values) < 64:
            return random.choice(list(values))
        return self._synced_index().random_key()

    def _synced_index(self) -> ScanIndex:
        """The index, brought up to date with keys inserted since it was last used.

        Every deletion updates the index, so it holds exactly the keys that were present when
        it was last synced and still are; the keys added since are the newest dict entries.
        """
        values = self.values
        index = self.index
        if index is None or index.count > len(values):
            return self._rebuild_index()
        missing = len(values) - index.count
        if missing:
            if missing > index.count:  # cheaper to rebuild than to insert one by one
                return self._rebuild_index()
            for key in list(itertools.islice(reversed(values), missing)):
                if key in index:
                    return self._rebuild_index()
                index.add(key)
        return index

    def _rebuild_index(self) -> ScanIndex:
        index = self.index = ScanIndex(self.values, len(self.values))
        return index
