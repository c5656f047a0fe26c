"""A set's members in one of Redis's three forms: the Python twin of ``_member_set.c``.

The compiled build keeps a set's members packed in C (:data:`brook.types.native.MemberSet`):
sorted 64-bit integers for an intset, one buffer of length-prefixed members for a listpack,
and for a hash table an open-addressing table whose slots hold a short member or point to a
block with a longer one; no Python object per member. This twin, which the pure build uses,
keeps them in a dict. Both answer the same calls the same way, and iterate in the same order
where the order is defined (an intset's is numeric, a listpack's is insertion order; a hash
table's is the table's own); a hypothesis test holds them to it (tests/types/test_member_set.py).
:class:`brook.types.set.SetValue` holds one and keeps Redis's rules for when to convert.

Random picks on a large set use a lazily built list of its members, which additions extend and
picks prune of removed members, so each pick is O(1) amortised instead of listing the set; a set
that is never sampled never pays for the list. SSCAN walks a :class:`ScanIndex` of the members,
built by the first walk and dropped by any change.

This module is deliberately not compiled by mypyc: SetValue's ``members`` is typed as this
class, and a compiled class would make mypyc reject the C one at run time.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Final

from brook.protocol.requests import parse_strict_int
from brook.types.scanindex import ScanIndex

INTSET: Final = 0
LISTPACK: Final = 1
HASHTABLE: Final = 2
# Below this many members a pick lists the set: cheaper than keeping a pool for it.
_SMALL: Final = 64


class MemberSet:
    """A set's members in form ``kind`` (INTSET, LISTPACK or HASHTABLE)."""

    __slots__ = ("kind", "_members", "_pool", "_index")

    def __init__(self, kind: int = INTSET, members: Iterable[bytes] = ()) -> None:
        if kind not in (INTSET, LISTPACK, HASHTABLE):
            raise ValueError("kind is INTSET, LISTPACK or HASHTABLE (0, 1, 2)")
        self.kind = kind
        self._members: dict[bytes, None] = {}
        self._pool: list[bytes] | None = None
        self._index: ScanIndex | None = None
        for member in members:
            self.add(member)

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, member: object) -> bool:
        return member in self._members

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.members())

    def members(self) -> list[bytes]:
        """The members in the set's order."""
        if self.kind == INTSET:
            return sorted(self._members, key=int)
        return list(self._members)

    def add(self, member: bytes) -> bool:
        """Add a member in the current form; whether it was new."""
        if not isinstance(member, bytes):
            raise TypeError(f"members are bytes, not {type(member).__name__}")
        if member in self._members:
            return False
        if self.kind == INTSET and parse_strict_int(member) is None:
            raise ValueError("an intset holds integers only")
        self._members[member] = None
        self._index = None
        if self._pool is not None:
            self._pool.append(member)
        return True

    def discard(self, member: bytes) -> bool:
        """Remove a member; whether it was there (the pool forgets it at its next pick)."""
        if member in self._members:
            del self._members[member]
            self._index = None
            return True
        return False

    def convert(self, kind: int) -> None:
        """Take form ``kind``, keeping the current order (an intset's is numeric); a hash
        table becomes an intset only."""
        if kind not in (INTSET, LISTPACK, HASHTABLE):
            raise ValueError("kind is INTSET, LISTPACK or HASHTABLE (0, 1, 2)")
        if kind == self.kind:
            return
        if kind == LISTPACK and self.kind == HASHTABLE:  # its order is no listpack's
            raise ValueError("a hash table converts to an intset only")
        if kind == INTSET and not self.all_integers():
            raise ValueError("an intset holds integers only")
        self._members = dict.fromkeys(self.members())
        self.kind = kind
        self._index = None

    def integer_width(self) -> int:
        """An intset's widest member in decimal (sign included; 0 when empty)."""
        if self.kind != INTSET:
            raise ValueError("integer_width: not an intset")
        if not self._members:
            return 0
        numbers = [int(member) for member in self._members]
        return max(len(b"%d" % max(numbers)), len(b"%d" % min(numbers)))

    def all_integers(self) -> bool:
        """Whether every member is an integer an intset can hold."""
        return all(parse_strict_int(member) is not None for member in self._members)

    def copy(self) -> MemberSet:
        return MemberSet(self.kind, self.members())

    def select(self, others: list[MemberSet], present: bool, limit: int) -> list[bytes]:
        """This set's members (in its order) that every one of ``others`` holds (``present``)
        or none of them holds, at most ``limit`` of them (0: all)."""
        found: list[bytes] = []
        for member in self.members():
            if limit and len(found) >= limit:
                break
            if all((member in other) == present for other in others):
                found.append(member)
        return found

    # -- sampling ---------------------------------------------------------------------------------

    def random_member(self) -> bytes:
        """A member, uniformly enough (KeyError when empty)."""
        members = self._members
        if not members:
            raise KeyError("the set is empty")
        if len(members) <= _SMALL:
            return random.choice(list(members))
        pool = self._pool
        if pool is None or len(pool) > 2 * len(members) + _SMALL:
            pool = self._pool = list(members)
        while True:
            index = random.randrange(len(pool))
            member = pool[index]
            if member in members:
                return member
            pool[index] = pool[-1]  # removed since: prune it
            pool.pop()

    def pop_random(self) -> bytes:
        member = self.random_member()
        self.discard(member)
        return member

    # -- SSCAN ------------------------------------------------------------------------------------

    def walk(self, cursor: int, count: int, found: list[bytes]) -> int:
        """One SSCAN call (:meth:`ScanIndex.walk`); a compact set gives every member and 0."""
        if self.kind != HASHTABLE:
            found.extend(self.members())
            return 0
        if not self._members:
            return 0
        index = self._index
        if index is None:
            index = self._index = ScanIndex(self._members, len(self._members))
        return index.walk(cursor, count, found)
