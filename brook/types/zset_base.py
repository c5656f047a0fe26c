"""What a sorted set does the same way on both builds, written once.

Each build's sorted set (:mod:`brook.types.zset_pure`, :mod:`brook.types.zset_native`) derives
from :class:`SortedSetBase` and supplies the storage: how members are found, placed, dropped
and ranged. The base has no fields (``__slots__ = ()``), so it can sit beside the C type the
compiled build's sorted set is.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Self

from brook.types.zset_order import (
    ENCODING_NAMES,
    LISTPACK,
    SKIPLIST,
    ZsetLimits,
    key_score,
    order_key,
    ordered,
)

if TYPE_CHECKING:
    from sortedcontainers import SortedList

    from brook.types._sorted_keys import SortedKeys

_FIND = object()  # SortedSetBase.add: the caller did not look the member up


class SortedSetBase:
    """A sorted set; ``kind`` is its Redis encoding (LISTPACK or SKIPLIST).

    Members change through :meth:`add`, :meth:`remove` and :meth:`delete_range`; reads use
    :attr:`order` (ascending *ordered* keys, read-only), :meth:`find`, :meth:`score`,
    :meth:`rank`, :meth:`span` and the bisections; :meth:`signed` turns ordered keys read from
    a range back into the members' own. A command that changes many members calls
    :meth:`loosen` first and :meth:`tighten` at the end.
    """

    __slots__ = ()

    if TYPE_CHECKING:  # each build's class has these (the compiled one's partly in C)
        kind: int

        def __init__(self, kind: int = LISTPACK) -> None: ...

        @property
        def order(self) -> list[bytes] | SortedList | SortedKeys:
            """The ordered keys, ascending: indexable, sliceable into lists, iterable."""

        def __len__(self) -> int: ...

        @classmethod
        def _holding(cls, keys: list[bytes], kind: int) -> Self:
            """A sorted set of the distinct, ascending order ``keys`` in encoding ``kind``."""

        def members(self) -> Iterable[bytes]: ...

        def find(self, member: bytes) -> bytes | None:
            """``member``'s own order key, or None."""

        def signed(self, keys: list[bytes]) -> list[bytes]:
            """Keys taken from :attr:`order` as the members' own (a -0 shows its sign)."""

        def items(self) -> Iterator[tuple[bytes, float]]:
            """(member, score) in ascending order."""

        def span(self, low: bytes, high: bytes) -> tuple[int, int]:
            """The ranks [start, stop) of the order keys from ``low`` up to (not with)
            ``high``."""

        def delete_range(self, start: int, stop: int) -> list[bytes]:
            """Remove the members at ranks ``start`` .. ``stop - 1``; their own keys."""

        def scan_members(self) -> tuple[Collection[bytes], Iterable[bytes] | None]:
            """ZSCAN's cursor index: what stands for the members while they are unchanged
            (its identity and length) and, if iterating that does not give them, the
            members."""

        def _to_skiplist(self) -> None: ...

        def _to_listpack(self) -> None: ...

        def _replace(self, member: bytes, old: bytes | None, key: bytes) -> None:
            """Put ``member`` under ``key`` (``old``: its own key until now, or None)."""

        def _drop(self, member: bytes, key: bytes) -> None:
            """Take out ``member``, whose own key is ``key``."""

    # -- making ---------------------------------------------------------------------------------

    @classmethod
    def create(cls, size_hint: int, longest: int, limits: ZsetLimits) -> Self:
        """zsetTypeCreate: an empty sorted set in the encoding that ``size_hint`` members of
        at most ``longest`` bytes call for."""
        if (size_hint <= limits.zset_max_listpack_entries
                and longest <= limits.zset_max_listpack_value):
            return cls(LISTPACK)
        return cls(SKIPLIST)

    @classmethod
    def restore(cls, pairs: Iterable[tuple[bytes, float]], encoding: str) -> Self:
        """A sorted set loaded from a snapshot, in the encoding it was saved with."""
        keys = {member: order_key(score, member) for member, score in pairs}
        return cls._holding(sorted(keys.values()), ENCODING_NAMES.index(encoding))

    @classmethod
    def build(cls, keys: list[bytes], size_hint: int, limits: ZsetLimits) -> Self:
        """A new sorted set of the ascending order ``keys``, in the encoding Redis reaches by
        creating it for ``size_hint`` members and adding them one by one (ZRANGESTORE)."""
        listpack = (size_hint <= limits.zset_max_listpack_entries
                    and len(keys) <= limits.zset_max_listpack_entries
                    and all(len(key) - 8 <= limits.zset_max_listpack_value for key in keys))
        return cls._holding(keys, LISTPACK if listpack else SKIPLIST)

    def copy(self) -> Self:
        """zsetDup: the same members in the same encoding."""
        return self._holding(self.signed(list(self.order)), self.kind)

    # -- reading --------------------------------------------------------------------------------

    def __bool__(self) -> bool:
        return len(self) > 0

    def __contains__(self, member: bytes) -> bool:
        return self.find(member) is not None

    @property
    def encoding(self) -> str:
        return ENCODING_NAMES[self.kind]

    def score(self, member: bytes) -> float | None:
        key = self.find(member)
        return None if key is None else key_score(key)

    def rank(self, member: bytes) -> int | None:
        key = self.find(member)
        if key is None:
            return None
        order = self.order
        if type(order) is list:
            return bisect_left(order, ordered(key))
        return order.bisect_left(ordered(key))  # type: ignore[union-attr,no-any-return]

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
            return (order.bisect_right if after  # type: ignore[union-attr,no-any-return]
                    else order.bisect_left)(probe)  # type: ignore[union-attr]
        low, high = 0, size
        while low < high:
            middle = (low + high) // 2
            found = order[middle][8:]
            if found < member or (after and found == member):
                low = middle + 1
            else:
                high = middle
        return low

    # -- encoding -------------------------------------------------------------------------------

    def convert_to(self, encoding: str) -> bool:
        """BROOK.RESTORE-ENCODING: only ``skiplist`` is a conversion Redis makes."""
        if encoding != "skiplist":
            return False
        self._to_skiplist()
        return True

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
            self._to_listpack()

    def loosen(self) -> None:
        """Before many changes (a build whose listpack is rewritten whole by each change
        keeps it loose until :meth:`tighten`)."""

    def tighten(self) -> None:
        """After many changes."""

    # -- writing --------------------------------------------------------------------------------

    def add(self, member: bytes, score: float, limits: ZsetLimits,
            old: bytes | None | object = _FIND) -> None:
        """Insert ``member`` or move it to ``score`` (``old``: its current order key, or None
        when absent, if the caller already looked); a listpack that outgrows its limits
        converts, as zsetAdd does."""
        prior: bytes | None = self.find(member) if old is _FIND else old  # type: ignore[assignment]
        if self.kind == LISTPACK:
            if prior is None and (len(self) >= limits.zset_max_listpack_entries
                                or len(member) > limits.zset_max_listpack_value):
                self._to_skiplist()
            else:
                score += 0.0  # a listpack holds -0 as the integer 0
        key = order_key(score, member)
        if prior != key:
            self._replace(member, prior, key)

    def remove(self, member: bytes) -> bool:
        key = self.find(member)
        if key is None:
            return False
        self._drop(member, key)
        return True
