"""The sorted-set value type: members ordered by (score, member), with Redis's encodings.

Layout
------
Every member has one *order key*: eight bytes that sort as its score does, then the member::

    order key = sortable(score) (8 bytes, big-endian) + member bytes

``sortable`` maps an IEEE-754 double to an unsigned integer with the same order (the sign bit
set for positives, every bit inverted for negatives), so comparing two order keys as bytes --
C's memcmp, what ``bisect`` and ``sortedcontainers`` do -- compares scores first and members
second, exactly Redis's (score, sdscmp(member)) order. Two structures hold the keys:

* ``keys``: the keys in order. Ranks, score ranges (a bound is an 8-byte prefix) and pops are
  bisections and slices: O(log n + m) like Redis's skiplist;
* a member index for a skiplist (ZSCORE, ZADD's update, ZREM without a walk; the score is
  read back from the key's first eight bytes).

While Redis would use a listpack (at most ``zset-max-listpack-entries`` members of at most
``zset-max-listpack-value`` bytes) there is no index: a member is found by walking the keys, as
zzlFind walks a listpack.

Two backends, chosen once at import. The compiled build's is
:class:`brook.types._sorted_keys.SortedKeys` (C): the keys copied into leaves of up to 128
packed keys, for both encodings (a listpack's is one small leaf), so a key costs its length
plus two bytes (less its score prefix's trailing zeros) and an add, a removal, a bisection or
a rank is C's work; :class:`SortedSet` is a subclass of it, one object. A skiplist's
SortedKeys is *indexed*: it keeps a hash table of each member's score prefix, nine bytes a
slot and no Python object per member (``index`` is None). The pure build keeps a dict
``index`` member -> order key and a ``sortedcontainers.SortedList`` for a skiplist, and for a
listpack the keys packed into one ``bytes`` (:mod:`brook.types.packing`), unpacked and
rewritten whole by each change. Both answer the same calls (``add``, ``remove``,
``bisect_left``, indexing and slicing into lists), so only the pure listpack takes paths of
its own.

The encoding converts one way, as t_zset.c's does (listpack -> skiplist on growth); the only
way back is a new value built for a *STORE destination (``zsetConvertToListpackIfNeeded``).

Zeros: a listpack holds a score of -0 as the integer 0, a skiplist keeps the double's sign
(ZSCORE says ``-0``) but compares it equal to 0, as Redis does. So a skiplist's ``keys`` hold
a -0 member under 0's prefix (its *ordered* key) and the pure build's ``index`` holds its own
key, with -0's prefix; the compiled build's index holds the ordered prefix, so ``zeros`` names
the members scored -0 (None while there are none). :meth:`SortedSet.signed` turns ordered keys
read from a range back into the members' own.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

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


# The compiled build's SortedSet *is* its SortedKeys (a subclass: one object, no wrapper), so
# the container's own add and remove, which SortedSet's hide, are called through these.
_BASE: Any = object if PACKED else native.SortedKeys
_KEYS_ADD: Any = SortedList.add if PACKED else _SORTED.add
_KEYS_REMOVE: Any = SortedList.remove if PACKED else _SORTED.remove

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


class SortedSet(_BASE):
    """A sorted set; ``kind`` is its Redis encoding (LISTPACK or SKIPLIST).

    On the compiled build a SortedSet is a ``SortedKeys`` (a subclass adding no fields): its
    order keys, ``keys`` (the object itself), ``kind`` (SKIPLIST while indexed) and ``zeros``
    (its members scored -0, skiplist only) are the C object's, so a small sorted set is two
    blocks, the object and its one leaf. On the pure build it holds ``kind``, ``size``, for a
    skiplist ``index`` (member -> order key) and a ``SortedList`` in ``keys``. A listpack has no index (None) and keeps its order keys
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

    __slots__ = ("index", "keys", "kind", "size", "zeros") if PACKED else ()
    if not PACKED:
        index: dict[bytes, bytes] | None = None  # no Python index: SortedKeys's own

    def __init__(self, kind: int = LISTPACK) -> None:
        if not PACKED:
            if kind == SKIPLIST:
                self.index_members()
            return
        self.kind = kind
        self.size = 0  # a listpack's member count (a skiplist's is len(index))
        self.index = None if kind == LISTPACK else {}
        self.zeros: set[bytes] | None = None
        self.keys: bytes | list[bytes] | SortedList | SortedKeys = (
            pack_items([]) if kind == LISTPACK else SortedList())

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
            if PACKED:
                value.keys = pack_items(keys)
                value.size = len(keys)
            else:
                value.reset(keys, False)
        elif PACKED:
            value.index = {key[8:]: key for key in keys}
            value.keys = SortedList(map(_ordered, keys))  # sorted again if a -0 moved
        else:
            zeros = {key[8:] for key in keys if key.startswith(_NEGATIVE_ZERO)}
            value.zeros = zeros or None
            value.reset(map(_ordered, keys) if zeros else keys, True)  # sorted again if a -0 moved
        return value

    if PACKED:  # the compiled build's is SortedKeys's
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

    if not PACKED:  # the object itself, read by SortedKeys's ``keys`` getter (no Python call)
        order = _BASE.__dict__["keys"]  # type: ignore[assignment]  # noqa: F811

    def members(self) -> Iterable[bytes]:
        index = self.index
        if index is not None:
            return index.keys()
        return [key[8:] for key in self.order]

    def copy(self) -> SortedSet:
        """zsetDup: the same members in the same encoding."""
        index = self.index
        return SortedSet._holding(
            self.signed(list(self.order)) if index is None else list(index.values()), self.kind)

    def signed(self, keys: list[bytes]) -> list[bytes]:
        """Keys taken from :attr:`order` as the members' own: a skiplist member scored -0
        sorts as 0 but its score shows the sign."""
        index = self.index
        zeros = self.zeros
        if (index is None and zeros is None) or not keys:
            return keys
        low, high = keys[0], keys[-1]  # ascending or descending: zeros lie between the ends
        if (low > high and (low < _ZERO or high > _AFTER_ZERO)) or (
                low <= high and (high < _ZERO or low > _AFTER_ZERO)):
            return keys
        if zeros is not None:
            return [_NEGATIVE_ZERO + key[8:] if key.startswith(_ZERO) and key[8:] in zeros
                    else key for key in keys]
        assert index is not None
        return [index[key[8:]] if key.startswith(_ZERO) else key for key in keys]

    def find(self, member: bytes) -> bytes | None:
        """``member``'s order key, or None. A listpack is searched as Redis's zzlFind walks
        one, after a C substring test that rules most absent members out."""
        index = self.index
        if index is not None:
            return index.get(member)
        keys = self.keys
        if not PACKED:
            found: bytes | None = keys.find_member(member)  # type: ignore[union-attr]
            zeros = self.zeros
            if zeros is not None and member in zeros:
                return _NEGATIVE_ZERO + member
            return found
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
        zeros = self.zeros
        for key in self.order:
            if key.startswith(_ZERO):
                if index is not None:
                    key = index[key[8:]]
                elif zeros is not None and key[8:] in zeros:
                    key = _NEGATIVE_ZERO + key[8:]
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
            if PACKED:
                self.index = {key[8:]: key for key in keys}
                self.keys = SortedList(keys)
                self.size = 0
                self.kind = SKIPLIST
            else:  # the same keys: a listpack holds no -0, so they are in order
                self.index_members()

    def prepare(self, size_hint: int, longest: int, limits: ZsetLimits) -> None:
        """zsetTypeMaybeConvert: a command about to add ``size_hint`` members of at most
        ``longest`` bytes converts a listpack that could not hold them first."""
        if self.kind == LISTPACK and (size_hint > limits.zset_max_listpack_entries
                                      or longest > limits.zset_max_listpack_value):
            self._to_skiplist()

    def fit(self, limits: ZsetLimits) -> None:
        """zsetConvertToListpackIfNeeded: a freshly built result (a *STORE destination) that
        is small enough becomes a listpack."""
        if self.kind == SKIPLIST and len(self) <= limits.zset_max_listpack_entries and (
                all(len(member) <= limits.zset_max_listpack_value
                    for member in self.members())):
            compact = SortedSet._holding(list(self.keys), LISTPACK)  # type: ignore[arg-type]
            if not PACKED:
                self.reset(list(compact.keys), False)  # type: ignore[arg-type]
                self.zeros = None
                return
            self.kind, self.index, self.keys, self.size = LISTPACK, None, compact.keys, len(self)

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
            if old is None and (len(self) >= limits.zset_max_listpack_entries
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
        if index is None:  # the compiled build's, either encoding
            if old is not None:
                prior = cast(bytes, old)
                if self.zeros is not None and prior.startswith(_NEGATIVE_ZERO):
                    self._unsign(member)
                    prior = _ZERO + member
                _KEYS_REMOVE(self, prior)
            if score == 0.0 and key.startswith(_NEGATIVE_ZERO):  # a skiplist's -0
                self.zeros = (self.zeros or set()) | {member}
                key = _ZERO + member
            _KEYS_ADD(self, key)
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
            if self.zeros is not None and key.startswith(_NEGATIVE_ZERO):
                self._unsign(member)
                key = _ZERO + member
            _KEYS_REMOVE(self, key)
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
            if self.zeros is not None:
                gone = self.signed(gone)
                for key in gone:
                    if key.startswith(_NEGATIVE_ZERO):
                        self._unsign(key[8:])
            return gone  # type: ignore[no-any-return]
        if stop - start == 1:  # a pop: the SortedList's own
            gone = [order.pop(start)]  # type: ignore[union-attr]
        else:
            gone = order[start:stop]  # type: ignore[index]
            del order[start:stop]  # type: ignore[union-attr]
        return [index.pop(key[8:]) for key in gone]

    def _unsign(self, member: bytes) -> None:
        """``member`` no longer has a score of -0."""
        zeros = self.zeros
        if zeros is not None:
            zeros.discard(member)
            if not zeros:
                self.zeros = None

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
        """The ranks [start, stop) of the order keys from ``low`` up to (not with) ``high``
        (the compiled build's is SortedKeys's, in C)."""
        if self.index is None and PACKED:
            order = self.order
            start = bisect_left(order, low)
            stop = bisect_left(order, high, start)
            return start, stop
        keys = self.keys
        start = keys.bisect_left(low)  # type: ignore[union-attr]
        return start, max(start, keys.bisect_left(high))  # type: ignore[union-attr]

    if not PACKED:
        del span

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
