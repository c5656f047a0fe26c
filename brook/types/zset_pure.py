"""The pure build's sorted set: Python containers where the compiled build has SortedKeys.

A skiplist is a dict ``index`` member -> own order key (ZSCORE, ZADD's update, ZREM in O(1))
and a ``sortedcontainers.SortedList`` of the ordered keys (ranks, ranges, pops in
O(log n + m), like Redis's skiplist). A listpack has no index: its order keys are packed into
one ``bytes`` (:mod:`brook.types.packing`), a few blocks of about Redis's listpack size
instead of three objects per member, unpacked at C speed and rewritten whole by each change,
and a member is found by walking them, as zzlFind walks a listpack.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Collection, Iterable, Iterator
from typing import Self

from sortedcontainers import SortedList

from brook.types.packing import pack_items, unpack_items
from brook.types.zset_base import SortedSetBase
from brook.types.zset_order import (
    LISTPACK,
    SKIPLIST,
    ZERO,
    key_score,
    listpack_keys,
    may_hold_zero,
    ordered,
)


class PureSortedSet(SortedSetBase):
    """``size`` counts a listpack's members (a skiplist's is ``len(index)``); ``keys`` is a
    listpack's packed ``bytes`` (a list while loosened) or a skiplist's ``SortedList``."""

    __slots__ = ("index", "keys", "kind", "size")

    def __init__(self, kind: int = LISTPACK) -> None:
        self.kind = kind
        self.size = 0
        self.index: dict[bytes, bytes] | None = None if kind == LISTPACK else {}
        self.keys: bytes | list[bytes] | SortedList = (
            pack_items([]) if kind == LISTPACK else SortedList())

    @classmethod
    def _holding(cls, keys: list[bytes], kind: int) -> Self:
        value = cls(kind)
        if kind == LISTPACK:
            value.keys = pack_items(listpack_keys(keys))
            value.size = len(keys)
        else:
            value.index = {key[8:]: key for key in keys}
            value.keys = SortedList(map(ordered, keys))  # sorted again if a -0 moved
        return value

    # -- reading --------------------------------------------------------------------------------

    def __len__(self) -> int:
        index = self.index
        return self.size if index is None else len(index)

    @property
    def order(self) -> list[bytes] | SortedList:
        """The ordered keys (a listpack's as a list of its own)."""
        keys = self.keys
        return unpack_items(keys) if type(keys) is bytes else keys

    def members(self) -> Iterable[bytes]:
        index = self.index
        if index is not None:
            return index.keys()
        return [key[8:] for key in self.order]

    def find(self, member: bytes) -> bytes | None:
        """A listpack is searched as Redis's zzlFind walks one, after a C substring test that
        rules most absent members out."""
        index = self.index
        if index is not None:
            return index.get(member)
        keys = self.keys
        if type(keys) is bytes and member not in keys:
            return None
        size = len(member) + 8
        for key in self.order:
            if len(key) == size and key.endswith(member):
                return key  # type: ignore[no-any-return]
        return None

    def signed(self, keys: list[bytes]) -> list[bytes]:
        index = self.index
        if index is None or not may_hold_zero(keys):
            return keys
        return [index[key[8:]] if key.startswith(ZERO) else key for key in keys]

    def items(self) -> Iterator[tuple[bytes, float]]:
        index = self.index
        for key in self.order:
            if index is not None and key.startswith(ZERO):
                key = index[key[8:]]
            yield key[8:], key_score(key)

    def span(self, low: bytes, high: bytes) -> tuple[int, int]:
        if self.index is None:
            order = self.order
            start = bisect_left(order, low)
            return start, bisect_left(order, high, start)
        keys = self.keys
        start = keys.bisect_left(low)  # type: ignore[union-attr]
        return start, max(start, keys.bisect_left(high))  # type: ignore[union-attr]

    def scan_members(self) -> tuple[Collection[bytes], Iterable[bytes] | None]:
        """The index, which stands for the members (a listpack is scanned whole instead)."""
        index = self.index
        assert index is not None
        return index, None

    # -- encoding -------------------------------------------------------------------------------

    def _to_skiplist(self) -> None:
        if self.kind == LISTPACK:
            keys = self.order
            self.index = {key[8:]: key for key in keys}
            self.keys = SortedList(keys)
            self.size = 0
            self.kind = SKIPLIST

    def _to_listpack(self) -> None:
        size = len(self)
        self.keys = pack_items(list(self.order))  # ordered keys: a listpack holds -0 as 0
        self.kind, self.index, self.size = LISTPACK, None, size

    def loosen(self) -> None:
        """A listpack's keys stay unpacked until :meth:`tighten`."""
        if type(self.keys) is bytes:
            self.keys = unpack_items(self.keys)

    def tighten(self) -> None:
        """Pack a loosened listpack again."""
        if self.kind == LISTPACK and type(self.keys) is list:
            self.keys = pack_items(self.keys)

    def _loose_keys(self) -> list[bytes]:
        """A listpack's keys as a list to change, then hand to :meth:`_keep`."""
        keys = self.keys
        return unpack_items(keys) if type(keys) is bytes else keys  # type: ignore[return-value]

    def _keep(self, keys: list[bytes]) -> None:
        """Store a listpack's changed keys (a loosened one changed them in place)."""
        if type(self.keys) is bytes:
            self.keys = pack_items(keys)
        self.size = len(keys)

    # -- writing --------------------------------------------------------------------------------

    def _replace(self, member: bytes, old: bytes | None, key: bytes) -> None:
        index = self.index
        if index is None:
            keys = self._loose_keys()
            if old is not None:
                del keys[bisect_left(keys, old)]
            insort(keys, key)
            self._keep(keys)
            return
        if old is not None:
            self.keys.remove(ordered(old))  # type: ignore[union-attr]
        index[member] = key
        self.keys.add(ordered(key))  # type: ignore[union-attr]

    def _drop(self, member: bytes, key: bytes) -> None:
        index = self.index
        if index is None:
            keys = self._loose_keys()
            del keys[bisect_left(keys, key)]
            self._keep(keys)
            return
        del index[member]
        self.keys.remove(ordered(key))  # type: ignore[union-attr]

    def delete_range(self, start: int, stop: int) -> list[bytes]:
        index = self.index
        if index is None:
            keys = self._loose_keys()
            gone = keys[start:stop]
            del keys[start:stop]
            self._keep(keys)
            return gone
        order = self.keys
        if stop - start == 1:  # a pop: the SortedList's own
            gone = [order.pop(start)]  # type: ignore[union-attr]
        else:
            gone = order[start:stop]  # type: ignore[assignment]
            del order[start:stop]  # type: ignore[union-attr]
        return [index.pop(key[8:]) for key in gone]
