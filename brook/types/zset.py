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
* ``keys``: the keys in order. Ranks, score ranges (a bound is an 8-byte prefix) and pops are
  bisections and slices: O(log n + m) like Redis's skiplist.

While Redis would use a listpack (at most ``zset-max-listpack-entries`` members of at most
``zset-max-listpack-value`` bytes) there is no index: a member is found by walking the keys, as
zzlFind walks a listpack.

Two backends hold ``keys``, chosen once at import. The compiled build's is
:class:`brook.types._sorted_keys.SortedKeys` (C): the keys copied into leaves of up to 128
packed keys, for both encodings (a listpack's is one small leaf), so a key costs its length
plus four bytes and an add, a removal, a bisection or a rank is C's work. The pure build keeps
a ``sortedcontainers.SortedList`` for a skiplist, and for a listpack the keys packed into one
``bytes`` (:mod:`brook.types.packing`), unpacked and rewritten whole by each change. Both
answer the same calls (``add``, ``remove``, ``bisect_left``, indexing and slicing into lists),
so only the pure listpack takes paths of its own.

The encoding converts one way, as t_zset.c's does (listpack -> skiplist on growth); the only
way back is a new value built for a *STORE destination (``zsetConvertToListpackIfNeeded``).

Zeros: a listpack holds a score of -0 as the integer 0, a skiplist keeps the double's sign
(ZSCORE says ``-0``) but compares it equal to 0, as Redis does. So a skiplist's ``keys`` hold
a -0 member under 0's prefix (its *ordered* key) and ``index`` holds its own key, with -0's
prefix; :meth:`SortedSet.signed` turns ordered keys read from a range back into the members'
own.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from sortedcontainers import SortedList

from brook.types import native
from brook.types.packing import pack_items, unpack_items

if TYPE_CHECKING:
    from brook.types._sorted_keys import SortedKeys

LISTPACK, SKIPLIST = 0, 1
ENCODING_NAMES = ("listpack", "skiplist")
# The container of order keys, and whether a listpack packs its keys into a ``bytes`` (the
# pure build: no SortedKeys).
_SORTED: Any = SortedList if native.SortedKeys is None else native.SortedKeys
PACKED = native.SortedKeys is None

_DOUBLE = struct.Struct(">d")
_U64 = struct.Struct(">Q")
_SIGN = 1 << 63
_ALL = (1 << 64) - 1
# Above every order key (no stored score is a NaN, whose patterns sort above +inf's).
AFTER_ALL = b"\xff" * 9


class ZsetLimits(Protocol):
    """The two configuration values the encoding follows (the server's config has them)."""

    zset_max_listpack_entries: int
    zset_max_listpack_value: int


def _sortable(score: float) -> int:
    bits = _U64.unpack(_DOUBLE.pack(score))[0]
    return bits ^ _ALL if bits & _SIGN else bits | _SIGN


def score_prefix(score: float) -> bytes:
    """A range's lower bound: the eight bytes every ordered key of ``score`` starts with."""
    return _U64.pack(_sortable(score + 0.0))


def after_score(score: float) -> bytes:
    """A prefix above every ordered key of ``score`` and below those of the next double."""
    if score == float("inf"):
        return AFTER_ALL
    return _U64.pack(_sortable(score + 0.0) + 1)


_ZERO = _U64.pack(_sortable(0.0))
_NEGATIVE_ZERO = _U64.pack(_sortable(-0.0))
_AFTER_ZERO = _U64.pack(_sortable(0.0) + 1)


def _ordered(key: bytes) -> bytes:
    """The key a -0 member sorts by: 0's (Redis compares the scores as equal)."""
    return _ZERO + key[8:] if key.startswith(_NEGATIVE_ZERO) else key


def order_key(score: float, member: bytes) -> bytes:
    return _U64.pack(_sortable(score)) + member


def key_score(key: bytes) -> float:
    """The score an order key holds."""
    bits = _U64.unpack_from(key)[0]
    return _DOUBLE.unpack(_U64.pack(bits ^ _SIGN if bits & _SIGN else bits ^ _ALL))[0]


_FIND = object()  # SortedSet.add: the caller did not look the member up


class SortedSet:
    """A sorted set; ``kind`` is its Redis encoding (LISTPACK or SKIPLIST).

    A skiplist holds ``index`` (member -> order key) and ``keys`` (a ``SortedKeys``, or a
    ``SortedList`` on the pure build). A listpack has no index (None) and keeps its order keys
    in one small ``SortedKeys``, or on the pure build packed in one ``bytes``
    (:mod:`brook.types.packing`): either way a small sorted set is a few blocks of about its
    listpack size instead of three objects per member. The packed ``bytes`` is unpacked by
    each operation (C speed, as Redis walks a listpack) and packed again; a command that
    changes many members calls :meth:`loosen` first and :meth:`tighten` at the end, so they
    share one unpacking (on the compiled build both do nothing).

    Members change through :meth:`add`, :meth:`remove` and :meth:`delete_range`; reads use
    :attr:`order` (ascending order keys, read-only; a fresh list for a packed listpack),
    :meth:`find`, :meth:`score`, :meth:`rank` and the bisections.
    """

    __slots__ = ("index", "keys", "kind", "size")

    def __init__(self, kind: int = LISTPACK) -> None:
        self.kind = kind
        self.size = 0  # a listpack's member count (a skiplist's is len(index))
        self.index: dict[bytes, bytes] | None = None if kind == LISTPACK else {}
        self.keys: bytes | list[bytes] | SortedList | SortedKeys = (
            pack_items([]) if kind == LISTPACK and PACKED else _SORTED())

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
        keys = {member: order_key(score, member) for member, score in pairs}
        return cls._holding(sorted(keys.values()), ENCODING_NAMES.index(encoding))

    @classmethod
    def build(cls, keys: list[bytes], size_hint: int, limits: ZsetLimits) -> SortedSet:
        """A new sorted set of the ascending order ``keys``, in the encoding Redis reaches by
        creating it for ``size_hint`` members and adding them one by one (ZRANGESTORE)."""
        listpack = (size_hint <= limits.zset_max_listpack_entries
                    and len(keys) <= limits.zset_max_listpack_entries
                    and all(len(key) - 8 <= limits.zset_max_listpack_value for key in keys))
        return cls._holding(keys, LISTPACK if listpack else SKIPLIST)

    @classmethod
    def _holding(cls, keys: list[bytes], kind: int) -> SortedSet:
        """A sorted set of the distinct, ascending order ``keys`` in encoding ``kind``."""
        value = cls(kind)
        if kind == LISTPACK:
            if any(key.startswith(_NEGATIVE_ZERO) for key in keys):  # a listpack holds 0
                keys = sorted(_ZERO + key[8:] if key.startswith(_NEGATIVE_ZERO) else key
                              for key in keys)
            value.keys = pack_items(keys) if PACKED else _SORTED(keys)
            value.size = len(keys)
        else:
            value.index = {key[8:]: key for key in keys}
            value.keys = _SORTED(map(_ordered, keys))  # sorted again if a -0 moved
        return value

    def __len__(self) -> int:
        index = self.index
        return self.size if index is None else len(index)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __contains__(self, member: bytes) -> bool:
        return self.find(member) is not None

    @property
    def encoding(self) -> str:
        return ENCODING_NAMES[self.kind]

    @property
    def order(self) -> list[bytes] | SortedList | SortedKeys:
        """The order keys, ascending: indexable, sliceable into lists, iterable (not to be
        changed; the pure build's listpack gives a list of its own)."""
        keys = self.keys
        return unpack_items(keys) if type(keys) is bytes else keys

    def members(self) -> Iterable[bytes]:
        index = self.index
        if index is not None:
            return index.keys()
        return [key[8:] for key in self.order]

    def copy(self) -> SortedSet:
        """zsetDup: the same members in the same encoding."""
        index = self.index
        return SortedSet._holding(list(self.order if index is None else index.values()),
                                  self.kind)

    def signed(self, keys: list[bytes]) -> list[bytes]:
        """Keys taken from :attr:`order` as the members' own: a skiplist member scored -0
        sorts as 0 but its score shows the sign."""
        index = self.index
        if index is None or not keys:
            return keys
        low, high = keys[0], keys[-1]  # ascending or descending: zeros lie between the ends
        if (low > high and (low < _ZERO or high > _AFTER_ZERO)) or (
                low <= high and (high < _ZERO or low > _AFTER_ZERO)):
            return keys
        return [index[key[8:]] if key.startswith(_ZERO) else key for key in keys]

    def find(self, member: bytes) -> bytes | None:
        """``member``'s order key, or None. A listpack is searched as Redis's zzlFind walks
        one, after a C substring test that rules most absent members out."""
        index = self.index
        if index is not None:
            return index.get(member)
        keys = self.keys
        if not PACKED:
            return keys.find_member(member)  # type: ignore[union-attr]
        if type(keys) is bytes:
            if member not in keys:
                return None
            keys = unpack_items(keys)
        size = len(member) + 8
        for key in keys:
            if len(key) == size and key.endswith(member):
                return key
        return None

    def score(self, member: bytes) -> float | None:
        key = self.find(member)
        return None if key is None else key_score(key)

    def items(self) -> Iterator[tuple[bytes, float]]:
        """(member, score) in ascending order."""
        index = self.index
        for key in self.order:
            if index is not None and key.startswith(_ZERO):
                key = index[key[8:]]
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
            keys = self.order
            self.index = {key[8:]: key for key in keys}
            if PACKED:  # a SortedKeys stays: a listpack holds no -0, so its keys are in order
                self.keys = SortedList(keys)
            self.kind = SKIPLIST
            self.size = 0

    def prepare(self, size_hint: int, longest: int, limits: ZsetLimits) -> None:
        """zsetTypeMaybeConvert: a command about to add ``size_hint`` members of at most
        ``longest`` bytes converts a listpack that could not hold them first."""
        if self.kind == LISTPACK and (size_hint > limits.zset_max_listpack_entries
                                      or longest > limits.zset_max_listpack_value):
            self._to_skiplist()

    def fit(self, limits: ZsetLimits) -> None:
        """zsetConvertToListpackIfNeeded: a freshly built result (a *STORE destination) that
        is small enough becomes a listpack."""
        index = self.index
        if index is not None and len(index) <= limits.zset_max_listpack_entries and (
                all(len(member) <= limits.zset_max_listpack_value for member in index)):
            compact = SortedSet._holding(list(self.keys), LISTPACK)
            self.kind, self.index, self.keys, self.size = LISTPACK, None, compact.keys, len(index)

    def loosen(self) -> None:
        """Before many changes: a listpack's keys stay unpacked until :meth:`tighten`."""
        if type(self.keys) is bytes:
            self.keys = unpack_items(self.keys)

    def tighten(self) -> None:
        """After many changes: pack a loosened listpack again."""
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

    def add(self, member: bytes, score: float, limits: ZsetLimits,
            old: bytes | None | object = _FIND) -> None:
        """Insert ``member`` or move it to ``score`` (``old``: its current order key, or None
        when absent, if the caller already looked); a listpack that outgrows its limits
        converts, as zsetAdd does."""
        if old is _FIND:
            old = self.find(member)
        if self.kind == LISTPACK:
            if old is None and (self.size >= limits.zset_max_listpack_entries
                                or len(member) > limits.zset_max_listpack_value):
                self._to_skiplist()
            else:
                score += 0.0  # a listpack holds -0 as the integer 0
        key = _U64.pack(_sortable(score)) + member
        if old == key:
            return
        index = self.index
        if index is None and PACKED:
            keys = self._loose_keys()
            if old is not None:
                del keys[bisect_left(keys, old)]
            insort(keys, key)
            self._keep(keys)
            return
        if index is None:
            if old is None:
                self.size += 1
            else:
                self.keys.remove(old)  # type: ignore[union-attr]
            self.keys.add(key)  # type: ignore[union-attr]
            return
        if old is not None:
            self.keys.remove(_ordered(old))  # type: ignore[union-attr]
        index[member] = key
        self.keys.add(_ordered(key))  # type: ignore[union-attr]

    def remove(self, member: bytes) -> bool:
        index = self.index
        if index is not None:
            key = index.pop(member, None)
            if key is None:
                return False
            self.keys.remove(_ordered(key))  # type: ignore[union-attr]
            return True
        key = self.find(member)
        if key is None:
            return False
        if not PACKED:
            self.keys.remove(key)  # type: ignore[union-attr]
            self.size -= 1
            return True
        keys = self._loose_keys()
        del keys[bisect_left(keys, key)]
        self._keep(keys)
        return True

    def delete_range(self, start: int, stop: int) -> list[bytes]:
        """Remove the members at ranks ``start`` .. ``stop - 1``; their order keys."""
        index = self.index
        if index is None and PACKED:
            keys = self._loose_keys()
            gone = keys[start:stop]
            del keys[start:stop]
            self._keep(keys)
            return gone
        order = self.keys
        if index is None:
            gone = order[start:stop]  # type: ignore[index]
            del order[start:stop]  # type: ignore[union-attr]
            self.size -= len(gone)
            return gone  # type: ignore[no-any-return]
        if stop - start == 1:  # a pop: the SortedList's own
            gone = [order.pop(start)]  # type: ignore[union-attr]
        else:
            gone = order[start:stop]  # type: ignore[index]
            del order[start:stop]  # type: ignore[union-attr]
        return [index.pop(key[8:]) for key in gone]

    # -- positions ------------------------------------------------------------------------------

    def rank(self, member: bytes) -> int | None:
        key = self.find(member)
        if key is None:
            return None
        key = _ordered(key)
        if self.index is None and PACKED:
            return bisect_left(self.order, key)
        return self.keys.bisect_left(key)  # type: ignore[union-attr,no-any-return]

    def span(self, low: bytes, high: bytes) -> tuple[int, int]:
        """The ranks [start, stop) of the order keys from ``low`` up to (not with) ``high``."""
        if self.index is None and PACKED:
            order = self.order
            start = bisect_left(order, low)
            stop = bisect_left(order, high, start)
            return start, stop
        keys = self.keys
        start = keys.bisect_left(low)  # type: ignore[union-attr]
        return start, max(start, keys.bisect_left(high))  # type: ignore[union-attr]

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
            if type(order) is list:
                return (bisect_right if after else bisect_left)(order, probe)
            return (order.bisect_right if after else order.bisect_left)(probe)
        low, high = 0, size
        while low < high:
            middle = (low + high) // 2
            found = order[middle][8:]
            if found < member or (after and found == member):
                low = middle + 1
            else:
                high = middle
        return low
