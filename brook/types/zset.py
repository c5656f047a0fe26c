"""The sorted-set value type: members ordered by (score, member), with Redis's encodings.

Layout
------
Every member has one *order key*: eight bytes that sort as its score does, then the member::

    order key = sortable(score) (8 bytes, big-endian) + member bytes

``sortable`` maps an IEEE-754 double to an unsigned integer with the same order (the sign bit
set for positives, every bit inverted for negatives), so comparing two order keys as bytes --
C's memcmp, what ``bisect`` and ``sortedcontainers`` do -- compares scores first and members
second, exactly Redis's (score, sdscmp(member)) order. Two structures hold the keys:

* ``index``: a dict member -> order key (ZSCORE, ZADD's update, ZREM in O(1); the score is
  read back from the key's first eight bytes);
* ``order``: the keys in order -- a plain list while Redis would use a listpack (at most
  ``zset-max-listpack-entries`` members of at most ``zset-max-listpack-value`` bytes), a
  ``SortedList`` once it converts to a skiplist. Ranks, score ranges (a bound is an 8-byte
  prefix) and pops are bisections and slices: O(log n + m) like Redis's skiplist.

The encoding converts one way, as t_zset.c's does (listpack -> skiplist on growth); the only
way back is a new value built for a *STORE destination (``zsetConvertToListpackIfNeeded``).

Known difference: the order key cannot tell -0 from 0, so a score of -0 is stored as 0.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from typing import Protocol

from sortedcontainers import SortedList

from brook import keyspace

LISTPACK, SKIPLIST = 0, 1
ENCODING_NAMES = ("listpack", "skiplist")

_DOUBLE = struct.Struct(">d")
_U64 = struct.Struct(">Q")
_SIGN = 1 << 63
_ALL = (1 << 64) - 1
# Above every order key (no stored score is a NaN, whose patterns sort above +inf's).
AFTER_ALL = b"\xff" * 9
BEFORE_ALL = b""


class ZsetLimits(Protocol):
    """The two configuration values the encoding follows (the server's config has them)."""

    zset_max_listpack_entries: int
    zset_max_listpack_value: int


def _sortable(score: float) -> int:
    bits = _U64.unpack(_DOUBLE.pack(score + 0.0))[0]  # + 0.0: -0 becomes 0
    return bits ^ _ALL if bits & _SIGN else bits | _SIGN


def score_prefix(score: float) -> bytes:
    """The eight bytes every order key of ``score`` starts with."""
    return _U64.pack(_sortable(score))


def after_score(score: float) -> bytes:
    """A prefix above every order key of ``score`` and below those of the next double."""
    return _U64.pack(_sortable(score) + 1) if score != float("inf") else AFTER_ALL


def order_key(score: float, member: bytes) -> bytes:
    return _U64.pack(_sortable(score)) + member


def key_score(key: bytes) -> float:
    """The score an order key holds."""
    bits = _U64.unpack_from(key)[0]
    return _DOUBLE.unpack(_U64.pack(bits ^ _SIGN if bits & _SIGN else bits ^ _ALL))[0]


class SortedSet:
    """A sorted set; ``kind`` is its Redis encoding (LISTPACK or SKIPLIST).

    Members change through :meth:`add` and :meth:`remove` (and the pops), which keep
    ``index`` and ``order`` in step; reads may use both directly.
    """

    __slots__ = ("index", "order", "kind")

    def __init__(self, kind: int = LISTPACK) -> None:
        self.index: dict[bytes, bytes] = {}
        self.order: list[bytes] | SortedList = [] if kind == LISTPACK else SortedList()
        self.kind = kind

    @classmethod
    def create(cls, size_hint: int, longest: int, limits: ZsetLimits) -> SortedSet:
        """zsetTypeCreate: an empty sorted set in the encoding that ``size_hint`` members of
        at most ``longest`` bytes call for."""
        if (size_hint <= limits.zset_max_listpack_entries
                and longest <= limits.zset_max_listpack_value):
            return cls(LISTPACK)
        return cls(SKIPLIST)

    @classmethod
    def restore(cls, pairs: Iterable[tuple[bytes, float]], encoding: str) -> SortedSet:
        """A sorted set loaded from a snapshot, in the encoding it was saved with."""
        value = cls(ENCODING_NAMES.index(encoding))
        keys = {member: order_key(score, member) for member, score in pairs}
        value.index = keys
        if value.kind == LISTPACK:
            value.order = sorted(keys.values())
        else:
            value.order = SortedList(keys.values())
        return value

    @classmethod
    def build(cls, keys: list[bytes], size_hint: int, limits: ZsetLimits) -> SortedSet:
        """A new sorted set of the ascending order ``keys``, in the encoding Redis reaches by
        creating it for ``size_hint`` members and adding them one by one (ZRANGESTORE)."""
        listpack = (size_hint <= limits.zset_max_listpack_entries
                    and len(keys) <= limits.zset_max_listpack_entries
                    and all(len(key) - 8 <= limits.zset_max_listpack_value for key in keys))
        value = cls(LISTPACK if listpack else SKIPLIST)
        value.index = {key[8:]: key for key in keys}
        value.order = list(keys) if listpack else SortedList(keys)
        return value

    def __len__(self) -> int:
        return len(self.index)

    def __bool__(self) -> bool:
        return bool(self.index)

    def __contains__(self, member: bytes) -> bool:
        return member in self.index

    @property
    def encoding(self) -> str:
        return ENCODING_NAMES[self.kind]

    def copy(self) -> SortedSet:
        """zsetDup: the same members in the same encoding."""
        value = SortedSet(self.kind)
        value.index = dict(self.index)
        value.order = list(self.order) if self.kind == LISTPACK else SortedList(self.order)
        return value

    def score(self, member: bytes) -> float | None:
        key = self.index.get(member)
        return None if key is None else key_score(key)

    def items(self) -> Iterator[tuple[bytes, float]]:
        """(member, score) in ascending order."""
        for key in self.order:
            yield key[8:], key_score(key)

    # -- encoding -------------------------------------------------------------------------------

    def convert_to(self, encoding: str) -> bool:
        """BROOK.RESTORE-ENCODING: only ``skiplist`` is a conversion Redis makes."""
        if encoding != "skiplist":
            return False
        self._to_skiplist()
        return True

    def _to_skiplist(self) -> None:
        if self.kind == LISTPACK:
            self.order = SortedList(self.order)
            self.kind = SKIPLIST

    def prepare(self, size_hint: int, longest: int, limits: ZsetLimits) -> None:
        """zsetTypeMaybeConvert: a command about to add ``size_hint`` members of at most
        ``longest`` bytes converts a listpack that could not hold them first."""
        if self.kind == LISTPACK and (size_hint > limits.zset_max_listpack_entries
                                      or longest > limits.zset_max_listpack_value):
            self._to_skiplist()

    def fit(self, limits: ZsetLimits) -> None:
        """zsetConvertToListpackIfNeeded: a freshly built result (a *STORE destination) that
        is small enough becomes a listpack."""
        if self.kind == SKIPLIST and len(self.index) <= limits.zset_max_listpack_entries and (
                all(len(member) <= limits.zset_max_listpack_value for member in self.index)):
            self.order = list(self.order)
            self.kind = LISTPACK

    # -- writing --------------------------------------------------------------------------------

    def add(self, member: bytes, score: float, limits: ZsetLimits) -> None:
        """Insert ``member`` (not present) or move it to ``score``; a listpack that outgrows
        its limits converts, as zsetAdd does."""
        index = self.index
        old = index.get(member)
        key = order_key(score, member)
        if old is not None:
            if old == key:
                return
            self._discard(old)
        elif self.kind == LISTPACK and (len(index) >= limits.zset_max_listpack_entries
                                        or len(member) > limits.zset_max_listpack_value):
            self._to_skiplist()
        index[member] = key
        order = self.order
        if self.kind == LISTPACK:
            insort(order, key)  # type: ignore[arg-type]
        else:
            order.add(key)  # type: ignore[union-attr]

    def append_max(self, member: bytes, score: float) -> None:
        """Add a member known to sort after every present one (building a result in
        order, loading): no search."""
        key = order_key(score, member)
        self.index[member] = key
        if self.kind == LISTPACK:
            self.order.append(key)  # type: ignore[union-attr]
        else:
            self.order.add(key)  # type: ignore[union-attr]

    def remove(self, member: bytes) -> bool:
        key = self.index.pop(member, None)
        if key is None:
            return False
        self._discard(key)
        return True

    def _discard(self, key: bytes) -> None:
        order = self.order
        if self.kind == LISTPACK:
            del order[bisect_left(order, key)]  # type: ignore[arg-type]
        else:
            order.remove(key)  # type: ignore[union-attr]

    def delete_range(self, start: int, stop: int) -> list[bytes]:
        """Remove the members at ranks ``start`` .. ``stop - 1``; their order keys."""
        order = self.order
        keys = order[start:stop]
        del order[start:stop]
        index = self.index
        for key in keys:
            del index[key[8:]]
        return keys  # type: ignore[return-value]

    # -- positions ------------------------------------------------------------------------------

    def rank(self, member: bytes) -> int | None:
        key = self.index.get(member)
        if key is None:
            return None
        order = self.order
        if self.kind == LISTPACK:
            return bisect_left(order, key)  # type: ignore[arg-type]
        return order.bisect_left(key)  # type: ignore[union-attr]

    def bisect(self, bound: bytes) -> int:
        """The number of order keys below ``bound`` (a key or a score prefix)."""
        order = self.order
        if self.kind == LISTPACK:
            return bisect_left(order, bound)  # type: ignore[arg-type]
        return order.bisect_left(bound)  # type: ignore[union-attr]

    def bisect_member(self, member: bytes, after: bool) -> int:
        """For lexicographic ranges (meant for members of one score): the rank of the first
        member >= ``member`` (> with ``after``), comparing members only, as zslFirstInLexRange
        walks. When every score is the same this is one bisection of order keys."""
        order = self.order
        size = len(order)
        if not size:
            return 0
        first, last = order[0], order[-1]
        if first[:8] == last[:8]:
            probe = first[:8] + member
            if self.kind == LISTPACK:
                return (bisect_right if after else bisect_left)(order, probe)  # type: ignore[arg-type]
            return (order.bisect_right if after else order.bisect_left)(probe)  # type: ignore[union-attr]
        low, high = 0, size
        while low < high:
            middle = (low + high) // 2
            found = order[middle][8:]
            if found < member or (after and found == member):
                low = middle + 1
            else:
                high = middle
        return low


keyspace.TYPE_NAMES[SortedSet] = "zset"
keyspace.ENCODINGS[SortedSet] = lambda value: value.encoding  # type: ignore[attr-defined]
keyspace.COPIERS[SortedSet] = lambda value: value.copy()  # type: ignore[attr-defined]
