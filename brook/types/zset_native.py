"""The compiled build's sorted set: a subclass of the C ``SortedKeys``, so one object.

``SortedKeys`` (``brook/types/_sorted_keys.c``) holds the ordered keys packed into leaves for
both encodings (a listpack's is one small leaf) and, once indexed (a skiplist), a hash table
of each member's score prefix: an add, a removal, a lookup, a bisection, a span or a rank is
C's work, and no Python object exists per member. The subclass adds no fields: ``kind`` is
whether the object is indexed, ``order`` is the object itself, and ``zeros`` names the members
scored -0 (None while there are none), since the index holds their ordered prefix. So a
small sorted set is two blocks, the object and its one leaf.

The C type's ``add``/``remove``/``__contains__`` take order keys; the sorted set's own (members
and scores) hide them, so they are called here as ``SortedKeys.add(self, key)``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Self, cast

from brook.types._sorted_keys import SortedKeys
from brook.types.zset_base import SortedSetBase
from brook.types.zset_order import (
    LISTPACK,
    NEGATIVE_ZERO,
    SKIPLIST,
    ZERO,
    key_score,
    listpack_keys,
    may_hold_zero,
    ordered,
)


# The sorted set's add, remove and __contains__ take members where SortedKeys's take keys.
class NativeSortedSet(SortedSetBase, SortedKeys):  # type: ignore[misc]
    __slots__ = ()

    # The object itself, through SortedKeys's C getter (no Python call on a range's path).
    order = SortedKeys.keys

    def __init__(self, kind: int = LISTPACK) -> None:
        if kind == SKIPLIST:
            self.index_members()

    @classmethod
    def _holding(cls, keys: list[bytes], kind: int) -> Self:
        value = cls(kind)
        if kind == LISTPACK:
            value.reset(listpack_keys(keys), False)
            return value
        zeros = {key[8:] for key in keys if key.startswith(NEGATIVE_ZERO)}
        value.zeros = zeros or None
        value.reset(map(ordered, keys) if zeros else keys, True)  # sorted again if a -0 moved
        return value

    # -- reading --------------------------------------------------------------------------------

    def members(self) -> Iterable[bytes]:
        return [key[8:] for key in self]

    def find(self, member: bytes) -> bytes | None:
        """A skiplist asks its index, a listpack walks its keys as zzlFind does (in C)."""
        found = self.find_member(member)
        zeros = self.zeros
        if zeros is not None and member in zeros:
            return NEGATIVE_ZERO + member
        return found

    def signed(self, keys: list[bytes]) -> list[bytes]:
        zeros = self.zeros
        if zeros is None or not may_hold_zero(keys):
            return keys
        return [NEGATIVE_ZERO + key[8:] if key.startswith(ZERO) and key[8:] in zeros else key
                for key in keys]

    def items(self) -> Iterator[tuple[bytes, float]]:
        zeros = self.zeros
        for key in self:
            if zeros is not None and key.startswith(ZERO) and key[8:] in zeros:
                key = NEGATIVE_ZERO + key[8:]
            yield key[8:], key_score(key)

    def scan_members(self) -> tuple[Collection[bytes], Iterable[bytes] | None]:
        """The object stands for the members (its identity and length); they are given
        apart, since iterating it gives order keys."""
        return cast("Collection[bytes]", self), (key[8:] for key in self)

    # -- encoding -------------------------------------------------------------------------------

    def _to_skiplist(self) -> None:
        if self.kind == LISTPACK:  # the same keys: a listpack holds no -0, so they are in order
            self.index_members()

    def _to_listpack(self) -> None:
        self.reset(list(self), False)  # ordered keys: a listpack holds -0 as 0
        self.zeros = None

    # -- writing --------------------------------------------------------------------------------

    def _replace(self, member: bytes, old: bytes | None, key: bytes) -> None:
        if old is not None:
            self._drop(member, old)
        if key.startswith(NEGATIVE_ZERO):  # a skiplist's -0 (a listpack's was made 0)
            self.zeros = (self.zeros or set()) | {member}
            key = ZERO + member
        SortedKeys.add(self, key)

    def _drop(self, member: bytes, key: bytes) -> None:
        if self.zeros is not None and key.startswith(NEGATIVE_ZERO):
            self._unsign(member)
            key = ZERO + member
        SortedKeys.remove(self, key)

    def delete_range(self, start: int, stop: int) -> list[bytes]:
        gone = self[start:stop]
        del self[start:stop]
        if self.zeros is not None:
            gone = self.signed(gone)
            for key in gone:
                if key.startswith(NEGATIVE_ZERO):
                    self._unsign(key[8:])
        return gone

    def _unsign(self, member: bytes) -> None:
        """``member`` no longer has a score of -0."""
        zeros = self.zeros
        if zeros is not None:
            zeros.discard(member)
            if not zeros:
                self.zeros = None
