"""The list value type: a deque of elements, O(1) at both ends.

Redis keeps a list as a quicklist (a linked list of listpacks). A ``collections.deque`` is the
Python counterpart: a linked list of fixed 64-slot blocks written in C, so pushes and pops at
either end are O(1) and indexing walks from the nearer end, as a quicklist does.

OBJECT ENCODING: Redis 7.0 reports ``quicklist`` for every list; Redis 7.2 and later report
``listpack`` while a list is small (``list-max-listpack-size``). The parity server installed
for the tests is 7.0, so Brook reports ``quicklist``, which is also what any list of 7.2+
becomes once it grows past the listpack limit.
"""

from __future__ import annotations

from collections import deque

from brook import keyspace


class ListValue(deque[bytes]):
    """A list value (``__slots__`` keeps instances free of a per-object ``__dict__``)."""

    __slots__ = ()

    def copy(self) -> ListValue:  # type: ignore[override]
        """An independent copy (COPY must not share the elements' container)."""
        return ListValue(self)


def list_encoding(value: object) -> str:
    """What OBJECT ENCODING and DEBUG OBJECT report for a list (Redis 7.0: always quicklist)."""
    return "quicklist"


keyspace.TYPE_NAMES[ListValue] = "list"
keyspace.ENCODINGS[ListValue] = list_encoding
keyspace.COPIERS[ListValue] = lambda value: value.copy()  # type: ignore[attr-defined]
