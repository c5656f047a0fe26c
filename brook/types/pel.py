"""Pending entries, stored column-wise: a group's PEL and its consumers' ID sets.

Redis keeps one ``streamNACK`` (delivery time, delivery count, owner) per pending entry, indexed
by ID in the group's radix tree and again in the owner's: about 84 bytes an entry. A Python
object per entry plus a dict slot in two maps costs more than twice that, so the group's table
is kept the way sealed stream nodes are: in chunks of parallel columns sorted by ID, the ID as
the int ``ms << 64 | seq``, the delivery time and count in ``array('q')``, and the owner as a
small int (the consumer's slot in the group, -1 for none) in ``array('i')``. A consumer's own
PEL only needs the IDs (an :class:`IdSet`, the same chunks without value columns; its int
objects are the group table's): the record itself lives once.

Chunks hold at most ``2 * _LOAD`` entries, so an insert or delete moves at most a few KiB, and
a chunk is found by bisecting the list of chunk heads: O(log n) lookups and updates. New
deliveries append at the end (IDs only grow) and acknowledgements take runs of IDs from the
front: :meth:`SortedChunks.extend` and :meth:`SortedChunks.remove_many` do each in one slice
operation per column.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from itertools import islice
from typing import Final

_LOAD = 512  # a chunk splits above 2 * _LOAD entries, merges with a neighbour below _LOAD / 2

NO_OWNER: Final = -1

# (entry id, delivery time in ms, delivery count, owner slot)
Record = tuple[int, int, int, int]


class SortedChunks:
    """Rows sorted by a unique int ID; each chunk is a list of columns, the IDs first."""

    __slots__ = ("_chunks", "_heads", "_len", "_codes")

    def __init__(self, codes: tuple[str, ...] = ()) -> None:
        self._codes = codes  # array type of each value column
        self._chunks: list[list] = []
        self._heads: list[int] = []  # first ID of each chunk, for bisect
        self._len = 0

    def _new_chunk(self) -> list:
        return [[], *(array(code) for code in self._codes)]

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def _locate(self, entry_id: int) -> tuple[int, int]:
        """(chunk index, position) of ``entry_id``; position -1 when it is absent."""
        index = bisect_right(self._heads, entry_id) - 1
        if index < 0:
            return 0, -1
        ids = self._chunks[index][0]
        pos = bisect_left(ids, entry_id)
        if pos < len(ids) and ids[pos] == entry_id:
            return index, pos
        return index, -1

    def __contains__(self, entry_id: int) -> bool:
        return self._locate(entry_id)[1] >= 0

    def first_id(self) -> int:
        return self._heads[0]

    def last_id(self) -> int:
        return self._chunks[-1][0][-1]

    def _put(self, row: tuple) -> None:
        """Insert ``row`` (ID first), or overwrite the row with its ID."""
        entry_id = row[0]
        heads = self._heads
        index = bisect_right(heads, entry_id) - 1
        if index < 0:
            if not self._chunks:
                self._chunks.append(self._new_chunk())
                heads.append(entry_id)
            index = 0
        chunk = self._chunks[index]
        ids = chunk[0]
        pos = bisect_left(ids, entry_id)
        if pos < len(ids) and ids[pos] == entry_id:
            for column, value in zip(chunk, row, strict=True):
                column[pos] = value
            return
        for column, value in zip(chunk, row, strict=True):
            column.insert(pos, value)
        if pos == 0:
            heads[index] = entry_id
        self._len += 1
        if len(ids) > 2 * _LOAD:
            tail = [column[_LOAD:] for column in chunk]
            for column in chunk:
                del column[_LOAD:]
            self._chunks.insert(index + 1, tail)
            heads.insert(index + 1, tail[0][0])

    def extend(self, entry_ids: list[int], *values: int) -> None:
        """Rows for ``entry_ids`` (sorted, all above every ID held), every value column set to
        the same value: the usual growth, appended column-wise."""
        count = len(entry_ids)
        chunks = self._chunks
        done = 0
        while done < count:
            if not chunks or len(chunks[-1][0]) >= 2 * _LOAD:
                chunks.append(self._new_chunk())
                self._heads.append(entry_ids[done])
            chunk = chunks[-1]
            take = min(2 * _LOAD - len(chunk[0]), count - done)
            chunk[0] += entry_ids[done:done + take]
            for column, code, value in zip(chunk[1:], self._codes, values, strict=True):
                column += array(code, (value,)) * take  # copied in C, not converted per item
            done += take
        self._len += count

    def remove(self, entry_id: int) -> tuple | None:
        """Delete the row of ``entry_id``; returns it, or None when it was absent."""
        index, pos = self._locate(entry_id)
        if pos < 0:
            return None
        row = tuple(column.pop(pos) for column in self._chunks[index])
        self._removed(index, pos, 1)
        return row

    def remove_many(self, entry_ids: list[int]) -> list[list]:
        """Delete the rows of ``entry_ids`` (sorted, no repeats); returns the rows that were
        there column by column (``[ids, values...]``). A run of them that lies side by side
        in a chunk goes in one slice per column."""
        removed: list[list] = [[] for _ in range(len(self._codes) + 1)]
        i, total = 0, len(entry_ids)
        while i < total:
            index, pos = self._locate(entry_ids[i])
            if pos < 0:
                i += 1
                continue
            chunk = self._chunks[index]
            ids = chunk[0]
            end = min(len(ids), pos + total - i)
            if ids[pos:end] != entry_ids[i:i + end - pos]:  # not one whole run: find its end
                end = pos + 1
                while end < len(ids) and i + end - pos < total \
                        and ids[end] == entry_ids[i + end - pos]:
                    end += 1
            for column, out in zip(chunk, removed, strict=True):
                out += column[pos:end]
                del column[pos:end]
            i += end - pos
            self._removed(index, pos, end - pos)
        return removed

    def _removed(self, index: int, pos: int, count: int) -> None:
        """Bookkeeping after ``count`` rows at ``pos`` left chunk ``index``."""
        self._len -= count
        chunks = self._chunks
        ids = chunks[index][0]
        if not ids:
            del chunks[index], self._heads[index]
            return
        if pos == 0:
            self._heads[index] = ids[0]
        if len(ids) >= _LOAD // 2:
            return
        # A small chunk joins its next (or previous) neighbour when both fit in one.
        if index + 1 < len(chunks) and len(ids) + len(chunks[index + 1][0]) <= _LOAD:
            index += 1
        elif not (index > 0 and len(chunks[index - 1][0]) + len(ids) <= _LOAD):
            return
        for column, tail in zip(chunks[index - 1], chunks[index], strict=True):
            column += tail
        del chunks[index], self._heads[index]

    def __iter__(self) -> Iterator[int]:
        return self.ids()

    def ids(self, start: int = 0) -> Iterator[int]:
        """IDs at or above ``start``, in order (no change may happen meanwhile)."""
        index = max(bisect_right(self._heads, start) - 1, 0)
        for chunk in islice(self._chunks, index, None):
            ids = chunk[0]
            yield from (islice(ids, bisect_left(ids, start), None) if ids[0] < start else ids)

    def ids_below(self, end: int) -> list[int]:
        """IDs under ``end``, in order."""
        out: list[int] = []
        for chunk in self._chunks:
            ids = chunk[0]
            if ids[-1] < end:
                out += ids
            else:
                out += ids[:bisect_left(ids, end)]
                break
        return out

    def _copy_into(self, dup: SortedChunks) -> None:
        dup._chunks = [[list(chunk[0]), *(array(column.typecode, column)
                                          for column in chunk[1:])] for chunk in self._chunks]
        dup._heads = list(self._heads)
        dup._len = self._len


class IdSet(SortedChunks):
    """A sorted set of entry IDs (a consumer's PEL)."""

    __slots__ = ()

    def add(self, entry_id: int) -> None:
        self._put((entry_id,))

    def copy(self) -> IdSet:
        dup = IdSet()
        self._copy_into(dup)
        return dup


class PendingTable(SortedChunks):
    """A group's pending records by ID: (delivery time, delivery count, owner slot)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(("q", "q", "i"))

    def get(self, entry_id: int) -> Record | None:
        """The record of ``entry_id``, or None when it is not pending."""
        index, pos = self._locate(entry_id)
        if pos < 0:
            return None
        _, times, counts, owners = self._chunks[index]
        return entry_id, times[pos], counts[pos], owners[pos]

    def put(self, entry_id: int, delivery_time: int, delivery_count: int, owner: int) -> None:
        """Create the record of ``entry_id``, or overwrite it."""
        self._put((entry_id, delivery_time, delivery_count, owner))

    def append_new(self, entry_ids: list[int], delivery_time: int, owner: int) -> None:
        """First deliveries of ``entry_ids`` (sorted, above every pending ID) to one owner."""
        self.extend(entry_ids, delivery_time, 1, owner)

    def records(self, start: int = 0) -> Iterator[Record]:
        """Every record with an ID at or above ``start``, in ID order (no change may happen
        meanwhile: take a list first to change the table)."""
        index = max(bisect_right(self._heads, start) - 1, 0)
        for ids, times, counts, owners in islice(self._chunks, index, None):
            pos = bisect_left(ids, start) if ids[0] < start else 0
            yield from zip(ids[pos:], times[pos:], counts[pos:], owners[pos:], strict=True)

    def copy(self) -> PendingTable:
        dup = PendingTable()
        self._copy_into(dup)
        return dup
