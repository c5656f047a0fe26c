"""A hash table of keys with Redis's reverse-binary SCAN cursor and O(1) random sampling.

A Python dict has neither a position to resume an iteration from nor random access, so SCAN,
HSCAN, SSCAN, ZSCAN, RANDOMKEY, HRANDFIELD and eviction's sampling use this index beside the
dict they describe (brook/commands/scan.py explains the cursor scheme).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Final

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
