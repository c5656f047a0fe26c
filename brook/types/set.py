"""The set value type: the members in a dict, with the encoding Redis would be using.

Redis keeps a set of integers as an *intset* (sorted, up to ``set-max-intset-entries``), a small
set as a *listpack* (insertion order, up to ``set-max-listpack-entries`` members of at most
``set-max-listpack-value`` bytes) and anything else as a hash table, converting one way only
(t_set.c's setTypeAddAux). The encoding decides what users see: OBJECT ENCODING, the order of
SMEMBERS/SSCAN (an intset is sorted, a listpack is in insertion order) and whether SSCAN
returns everything at once. A dict keeps insertion order and answers membership in O(1) for
every encoding, so only the intset's order is computed, when it is iterated (at most 512
members by default).

Random picks (SPOP, SRANDMEMBER) on a large set use a lazily built list of its members, which
additions extend and picks prune of removed members, so each pick is O(1) amortised instead of
listing the set; a set that is never sampled never pays for the list.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Protocol

from brook.protocol.requests import parse_strict_int

INTSET, LISTPACK, HASHTABLE = 0, 1, 2
ENCODING_NAMES = ("intset", "listpack", "hashtable")
# intset.c keeps at most 2**30 entries, whatever set-max-intset-entries says.
_INTSET_HARD_LIMIT = 1 << 30
# Below this many members a pick lists the set: cheaper than keeping a pool for it.
_SMALL = 64


class SetLimits(Protocol):
    """The three configuration values the encoding follows (the server's config has them)."""

    set_max_intset_entries: int
    set_max_listpack_entries: int
    set_max_listpack_value: int


def _intset_limit(limits: SetLimits) -> int:
    return min(limits.set_max_intset_entries, _INTSET_HARD_LIMIT)


def _digits(number: int) -> int:
    """sdigits10: the length of the number written in decimal, sign included."""
    return len(b"%d" % number)


class SetValue(dict[bytes, None]):
    """A set; ``kind`` is its Redis encoding (INTSET, LISTPACK or HASHTABLE).

    Members are changed through :meth:`add`, :meth:`remove` and the pops, which keep the
    encoding and the sampling pool right; reads use the dict directly (``in``, ``len``).
    """

    __slots__ = ("kind", "pool")

    def __init__(self, members: Iterable[bytes] = (), kind: int = INTSET) -> None:
        super().__init__(dict.fromkeys(members))
        self.kind = kind
        self.pool: list[bytes] | None = None

    @classmethod
    def create(cls, first: bytes, size_hint: int, limits: SetLimits) -> SetValue:
        """setTypeCreate: an empty set in the encoding its first member and the number of
        members about to be added call for."""
        if parse_strict_int(first) is not None and size_hint <= _intset_limit(limits):
            return cls()
        if size_hint <= limits.set_max_listpack_entries:
            return cls(kind=LISTPACK)
        return cls(kind=HASHTABLE)

    @classmethod
    def restore(cls, members: Iterable[bytes], encoding: str) -> SetValue:
        """A set loaded from a snapshot, in the encoding it was saved with."""
        return cls(members, ENCODING_NAMES.index(encoding))

    def __iter__(self) -> Iterator[bytes]:
        if self.kind == INTSET:
            return iter(sorted(dict.keys(self), key=int))
        return dict.__iter__(self)

    def copy(self) -> SetValue:  # type: ignore[override]
        """setTypeDup: the same members in the same encoding."""
        return SetValue(dict.keys(self), self.kind)

    @property
    def encoding(self) -> str:
        return ENCODING_NAMES[self.kind]

    def convert_to(self, encoding: str) -> bool:
        """BROOK.RESTORE-ENCODING: a conversion Redis makes (upwards only) and the members
        allow; False otherwise."""
        target = ENCODING_NAMES.index(encoding) if encoding in ENCODING_NAMES else -1
        if target < self.kind:
            return False
        if target == INTSET and not all(parse_strict_int(m) is not None for m in self):
            return False
        self._become(target)
        return True

    def _become(self, kind: int) -> None:
        """Take encoding ``kind``: an intset leaving for a listpack keeps its sorted order,
        which the listpack then extends (setTypeConvert copies it in order)."""
        if self.kind == INTSET and kind != INTSET:
            ordered = sorted(dict.keys(self), key=int)
            self.clear()
            self.update(dict.fromkeys(ordered))
        self.kind = kind

    # -- writing --------------------------------------------------------------------------------

    def prepare(self, size_hint: int, limits: SetLimits) -> None:
        """setTypeMaybeConvert: a command about to add ``size_hint`` members converts a
        compact set that could not hold them before adding any."""
        kind = self.kind
        if (kind == LISTPACK and size_hint > limits.set_max_listpack_entries) or (
                kind == INTSET and size_hint > _intset_limit(limits)):
            self._become(HASHTABLE)

    def add(self, member: bytes, limits: SetLimits) -> bool:
        """setTypeAddAux: add one member, converting the encoding as Redis would; True when
        it was not there."""
        if member in self:
            return False
        kind = self.kind
        if kind == LISTPACK:
            if len(self) >= limits.set_max_listpack_entries or (
                    len(member) > limits.set_max_listpack_value):
                self.kind = HASHTABLE
        elif kind == INTSET:
            if parse_strict_int(member) is not None:
                if len(self) + 1 > _intset_limit(limits):
                    self._become(HASHTABLE)
            else:
                self._become(self._intset_outgrown(member, limits))
        self[member] = None
        if self.pool is not None:
            self.pool.append(member)
        return True

    def _intset_outgrown(self, member: bytes, limits: SetLimits) -> int:
        """A string joins an intset: a listpack if every member (the intset's widest number
        included) fits one, else a hash table."""
        longest = 0
        if self:
            numbers = [int(m) for m in dict.keys(self)]
            longest = max(_digits(max(numbers)), _digits(min(numbers)))
        value_limit = limits.set_max_listpack_value
        if (len(self) < limits.set_max_listpack_entries and len(member) <= value_limit
                and longest <= value_limit):
            return LISTPACK
        return HASHTABLE

    def remove(self, member: bytes) -> bool:
        """True when ``member`` was there (the pool forgets it at its next pick)."""
        if member in self:
            del self[member]
            return True
        return False

    def compact_integers(self, limits: SetLimits) -> None:
        """maybeConvertToIntset: a stored intersection of nothing but integers becomes an
        intset when it is small enough for one."""
        if self.kind != INTSET and len(self) <= _intset_limit(limits) and all(
                parse_strict_int(member) is not None for member in dict.keys(self)):
            self.kind = INTSET

    def shrink_to(self, kept: list[bytes], limits: SetLimits) -> None:
        """SPOP's third strategy: the set is rebuilt from the members it keeps, in a fresh
        encoding (a listpack from a listpack or hash table, an intset from an intset)."""
        kind = self.kind
        self.clear()
        self.pool = None
        self.kind = INTSET if kind == INTSET else LISTPACK
        for member in kept:
            self.add(member, limits)

    # -- sampling -------------------------------------------------------------------------------

    def random_member(self) -> bytes:
        """One member, uniformly enough (the set is not empty)."""
        if len(self) <= _SMALL:
            return random.choice(list(dict.keys(self)))
        pool = self.pool
        if pool is None or len(pool) > 2 * len(self) + _SMALL:
            pool = self.pool = list(dict.keys(self))
        while True:
            index = random.randrange(len(pool))
            member = pool[index]
            if member in self:
                return member
            pool[index] = pool[-1]  # removed since: prune it
            pool.pop()

    def pop_random(self) -> bytes:
        member = self.random_member()
        del self[member]
        return member
