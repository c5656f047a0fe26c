"""A sorted set's order keys and encodings: what both builds' sorted sets share as data.

Every member has one *order key*: eight bytes that sort as its score does, then the member::

    order key = sortable(score) (8 bytes, big-endian) + member bytes

``sortable`` maps an IEEE-754 double to an unsigned integer with the same order (the sign bit
set for positives, every bit inverted for negatives), so comparing two order keys as bytes --
C's memcmp, what ``bisect``, ``sortedcontainers`` and ``SortedKeys`` do -- compares scores
first and members second, exactly Redis's (score, sdscmp(member)) order: a score bound is an
8-byte prefix, and every range is two bisections and a slice.

Zeros: a listpack holds a score of -0 as the integer 0, a skiplist keeps the double's sign
(ZSCORE says ``-0``) but compares it equal to 0, as Redis does. So a skiplist orders a -0
member by its *ordered* key (0's prefix) while remembering its own (-0's prefix).
"""

from __future__ import annotations

import struct
from typing import Protocol

LISTPACK, SKIPLIST = 0, 1
ENCODING_NAMES = ("listpack", "skiplist")

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


ZERO = _U64.pack(_sortable(0.0))
NEGATIVE_ZERO = _U64.pack(_sortable(-0.0))
_AFTER_ZERO = _U64.pack(_sortable(0.0) + 1)


def ordered(key: bytes) -> bytes:
    """The key a -0 member sorts by: 0's (Redis compares the scores as equal)."""
    return ZERO + key[8:] if key.startswith(NEGATIVE_ZERO) else key


def order_key(score: float, member: bytes) -> bytes:
    return _U64.pack(_sortable(score)) + member


def key_score(key: bytes) -> float:
    """The score an order key holds."""
    bits = _U64.unpack_from(key)[0]
    return _DOUBLE.unpack(_U64.pack(bits ^ _SIGN if bits & _SIGN else bits ^ _ALL))[0]


def listpack_keys(keys: list[bytes]) -> list[bytes]:
    """Ascending order keys as a listpack holds them: a score of -0 as the integer 0."""
    if any(key.startswith(NEGATIVE_ZERO) for key in keys):
        return sorted(map(ordered, keys))  # sorted again: a -0 member may have moved
    return keys


def may_hold_zero(keys: list[bytes]) -> bool:
    """Whether a run of ordered keys taken in order (ascending or descending) may hold a
    key scored 0: the only keys that may stand for a member scored -0."""
    if not keys:
        return False
    low, high = keys[0], keys[-1]
    if low > high:
        low, high = high, low
    return high >= ZERO and low <= _AFTER_ZERO
