"""The set value type: the members, with the encoding Redis would be using.

Redis keeps a set of integers as an *intset* (sorted, up to ``set-max-intset-entries``), a small
set as a *listpack* (insertion order, up to ``set-max-listpack-entries`` members of at most
``set-max-listpack-value`` bytes) and anything else as a hash table, converting one way only
(t_set.c's setTypeAddAux). The encoding decides what users see: OBJECT ENCODING, the order of
SMEMBERS/SSCAN (an intset is sorted, a listpack is in insertion order) and whether SSCAN
returns everything at once.

:class:`SetValue` keeps those rules; its members live in a :class:`MemberSet` of the same form,
which the compiled build has in C (``brook/types/_member_set.c``: the members packed, no Python
object per member) and the pure build as its Python twin, a dict (:mod:`brook.types.member_set`).
``kind`` is the MemberSet's own, mirrored here so the hot paths read it as a native field.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final, Protocol

from brook.protocol.requests import parse_strict_int
from brook.types import native
from brook.types.member_set import HASHTABLE, INTSET, LISTPACK, MemberSet

ENCODING_NAMES: Final = ("intset", "listpack", "hashtable")
# intset.c keeps at most 2**30 entries, whatever set-max-intset-entries says.
_INTSET_HARD_LIMIT: Final = 1 << 30
# The members' container: C on the compiled build, the dict twin on the pure one.
_MEMBERS: Final[Any] = native.MemberSet or MemberSet

__all__ = ["ENCODING_NAMES", "HASHTABLE", "INTSET", "LISTPACK", "SetLimits", "SetValue"]


class SetLimits(Protocol):
    """The three configuration values the encoding follows (the server's config has them)."""

    set_max_intset_entries: int
    set_max_listpack_entries: int
    set_max_listpack_value: int


def _intset_limit(limits: SetLimits) -> int:
    return min(limits.set_max_intset_entries, _INTSET_HARD_LIMIT)


class SetValue:
    """A set; ``kind`` is its Redis encoding (INTSET, LISTPACK or HASHTABLE).

    Members are changed through :meth:`add`, :meth:`remove` and the pops, which keep the
    encoding right; reads are ``in``, ``len`` and iteration (in the encoding's order).
    """

    __slots__ = ("kind", "members")

    def __init__(self, members: Iterable[bytes] = (), kind: int = INTSET) -> None:
        self.kind = kind
        self.members: MemberSet = _MEMBERS(kind, members)

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

    def __len__(self) -> int:
        return len(self.members)

    def __bool__(self) -> bool:
        return len(self.members) > 0

    def __contains__(self, member: bytes) -> bool:
        return member in self.members

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.members.members())

    def copy(self) -> SetValue:
        """setTypeDup: the same members in the same encoding."""
        value = SetValue(kind=self.kind)
        value.members = self.members.copy()
        return value

    @property
    def encoding(self) -> str:
        return ENCODING_NAMES[self.kind]

    def convert_to(self, encoding: str) -> bool:
        """BROOK.RESTORE-ENCODING: a conversion Redis makes (upwards only) and the members
        allow; False otherwise."""
        target = ENCODING_NAMES.index(encoding) if encoding in ENCODING_NAMES else -1
        if target < self.kind:
            return False
        if target == INTSET and not self.members.all_integers():
            return False
        self._become(target)
        return True

    def _become(self, kind: int) -> None:
        """Take encoding ``kind``: an intset leaving for a listpack keeps its sorted order,
        which the listpack then extends (setTypeConvert copies it in order)."""
        self.members.convert(kind)
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
        kind = self.kind
        members = self.members
        if kind == HASHTABLE:
            return members.add(member)
        if member in members:
            return False
        if kind == LISTPACK:
            if len(members) >= limits.set_max_listpack_entries or (
                    len(member) > limits.set_max_listpack_value):
                self._become(HASHTABLE)
        elif parse_strict_int(member) is not None:
            if len(members) + 1 > _intset_limit(limits):
                self._become(HASHTABLE)
        else:
            self._become(self._intset_outgrown(member, limits))
        return members.add(member)

    def _intset_outgrown(self, member: bytes, limits: SetLimits) -> int:
        """A string joins an intset: a listpack if every member (the intset's widest number
        included) fits one, else a hash table."""
        value_limit = limits.set_max_listpack_value
        if (len(self.members) < limits.set_max_listpack_entries and len(member) <= value_limit
                and self.members.integer_width() <= value_limit):
            return LISTPACK
        return HASHTABLE

    def remove(self, member: bytes) -> bool:
        """True when ``member`` was there."""
        return self.members.discard(member)

    def compact_integers(self, limits: SetLimits) -> None:
        """maybeConvertToIntset: a stored intersection of nothing but integers becomes an
        intset when it is small enough for one."""
        if (self.kind != INTSET and len(self.members) <= _intset_limit(limits)
                and self.members.all_integers()):
            self._become(INTSET)

    def shrink_to(self, kept: list[bytes], limits: SetLimits) -> None:
        """SPOP's third strategy: the set is rebuilt from the members it keeps, in a fresh
        encoding (a listpack from a listpack or hash table, an intset from an intset)."""
        kind = INTSET if self.kind == INTSET else LISTPACK
        self.members = _MEMBERS(kind)
        self.kind = kind
        for member in kept:
            self.add(member, limits)

    # -- sampling and SSCAN ---------------------------------------------------------------------

    def random_member(self) -> bytes:
        """One member, uniformly (the set is not empty)."""
        return self.members.random_member()

    def pop_random(self) -> bytes:
        return self.members.pop_random()

    def select(self, others: list[SetValue], present: bool, limit: int = 0) -> list[bytes]:
        """This set's members (in its order) that every one of ``others`` holds (``present``)
        or none of them holds, at most ``limit`` of them (0: all): SINTER's and SDIFF's loop."""
        return self.members.select([other.members for other in others], present, limit)

    def walk(self, cursor: int, count: int, found: list[bytes]) -> int:
        """One SSCAN call: a hash table's members from ``cursor`` (Redis's reverse-binary
        cursor over its buckets; brook/commands/scan.py), about ``count`` of them, appended to
        ``found``; the next cursor. A compact set gives everything and 0."""
        return self.members.walk(cursor, count, found)
