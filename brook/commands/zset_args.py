"""What the sorted-set commands share: score parsing and replies, range bounds, key access.

Scores are parsed as Redis's ``string2d`` does (fast_float with a leading ``+`` allowed: the
whole argument is the number, ``inf``/``infinity`` in any case, no NaN, no spaces) and written
as its ``d2string`` does (:func:`brook.protocol.resp.format_double`). A score range bound is an
8-byte order-key prefix (see :mod:`brook.types.zset`), so a range is two bisections.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from brook.commands.registry import NOT_FLOAT, CommandError, of_type
from brook.protocol import resp
from brook.types.zset import SortedSet, after_score, key_score, score_prefix

if TYPE_CHECKING:
    from brook.keyspace import Database

NOT_FLOAT_RANGE = "ERR min or max is not a float"
NOT_LEX_RANGE = "ERR min or max not valid string range item"
NAN_SCORE = "ERR resulting score is not a number (NaN)"

# fast_float's grammar as Redis builds it (FASTFLOAT_ALLOWS_LEADING_PLUS).
_FAST_FLOAT = re.compile(
    rb"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf(?:inity)?|nan))")


# The bounds and scores most requests carry, parsed once.
_COMMON = {b"-inf": float("-inf"), b"+inf": float("inf"), b"inf": float("inf"), b"0": 0.0}


def to_double(text: bytes) -> float | None:
    """fast_float_strtod over the whole of ``text``; None unless it is all a number (NaN
    included: callers reject it as Redis does). Plain digits skip the grammar check."""
    common = _COMMON.get(text)
    if common is not None:
        return common
    if text.isdigit() or _FAST_FLOAT.fullmatch(text) is not None:
        return float(text)
    return None


def parse_score(arg: bytes, error: str = NOT_FLOAT) -> float:
    """string2d: a score or increment argument (to_double's steps inline: it is per pair)."""
    value = _COMMON.get(arg)
    if value is not None:
        return value
    if arg.isdigit() or _FAST_FLOAT.fullmatch(arg) is not None:
        value = float(arg)
        if value == value:
            return value
    raise CommandError(error)


def score_reply(score: float, proto: int) -> bytes:
    """addReplyDouble: a bulk string in RESP2, a double in RESP3."""
    text = resp.format_double(score)
    if proto == 2:
        return b"$%d\r\n%s\r\n" % (len(text), text)
    return b",%s\r\n" % text


def members_reply(keys: list[bytes], withscores: bool, proto: int) -> bytes:
    """Members (from order keys) as an array; WITHSCORES: member, score pairs -- flat in
    RESP2, one two-element array each in RESP3 (zrangeResultEmit*ToClient)."""
    if not withscores:
        return resp.array_of_bulks([key[8:] for key in keys])
    if proto == 2:
        return b"*%d\r\n%s" % (2 * len(keys), score_pairs(keys, False, 2))
    return b"*%d\r\n%s" % (len(keys), score_pairs(keys, True, proto))


def score_pairs(keys: list[bytes], nested: bool, proto: int) -> bytes:
    """Members and scores of order keys, each pair its own array when ``nested`` (no
    header): range replies and pops frame them differently."""
    out = []
    for key in keys:
        member = key[8:]
        pair = b"$%d\r\n%s\r\n%s" % (len(member), member, score_reply(key_score(key), proto))
        out.append(b"*2\r\n" + pair if nested else pair)
    return b"".join(out)


def score_or_null(score: float | None, proto: int) -> bytes:
    return resp.null(proto) if score is None else score_reply(score, proto)


def _bound(arg: bytes) -> tuple[float, bool]:
    """zslParseRange's half: ``(x`` is exclusive; nothing else may follow the number."""
    exclusive = arg[:1] == b"("
    text = arg[1:] if exclusive else arg
    # fast_float reads nothing from an empty string and leaves 0, which Redis takes.
    value = to_double(text) if text else 0.0
    if value is None or value != value:
        raise CommandError(NOT_FLOAT_RANGE)
    return value, exclusive


def score_range(min_arg: bytes, max_arg: bytes) -> tuple[bytes, bytes] | None:
    """The order-key bounds [low, high) of a score range; None when it is empty (min > max,
    or equal with either end exclusive), as zslIsInRange's early exit. Pollers repeat the
    same few ranges, so parsed ones are kept (a pure function of the two arguments)."""
    pair = (min_arg, max_arg)
    found = _RANGES.get(pair, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[return-value]
    bounds = _score_range(min_arg, max_arg)
    if len(min_arg) + len(max_arg) <= 64:  # numbers, not whatever a client sends
        if len(_RANGES) >= _RANGES_KEPT:
            _RANGES.clear()
        _RANGES[pair] = bounds
    return bounds


_RANGES: dict[tuple[bytes, bytes], tuple[bytes, bytes] | None] = {}
_RANGES_KEPT = 1024
_MISSING = object()


def _score_range(min_arg: bytes, max_arg: bytes) -> tuple[bytes, bytes] | None:
    low_value, low_exclusive = _bound(min_arg)
    high_value, high_exclusive = _bound(max_arg)
    if low_value > high_value or (low_value == high_value and (low_exclusive or high_exclusive)):
        return None
    low = after_score(low_value) if low_exclusive else score_prefix(low_value)
    high = score_prefix(high_value) if high_exclusive else after_score(high_value)
    return low, high


def positions_in_score_range(zset: SortedSet, bounds: tuple[bytes, bytes] | None
                             ) -> tuple[int, int]:
    """The ranks [start, stop) of the members inside ``bounds``."""
    if bounds is None:
        return 0, 0
    return zset.span(bounds[0], bounds[1])


def _lex_bound(arg: bytes) -> tuple[bytes | None, bool]:
    """zslParseLexRangeItem: ``-`` and ``+`` are the ends (member None plus which end), ``[``
    inclusive, ``(`` exclusive; anything else is an error."""
    first = arg[:1]
    if first == b"+" and len(arg) == 1:
        return None, True
    if first == b"-" and len(arg) == 1:
        return None, False
    if first == b"(":
        return arg[1:], True
    if first == b"[":
        return arg[1:], False
    raise CommandError(NOT_LEX_RANGE)


def lex_range(zset: SortedSet | None, min_arg: bytes, max_arg: bytes) -> tuple[int, int]:
    """The ranks [start, stop) of the members inside a lexicographic range (errors first,
    whether or not the key exists)."""
    low_member, low_flag = _lex_bound(min_arg)
    high_member, high_flag = _lex_bound(max_arg)
    if zset is None:
        return 0, 0
    size = len(zset)
    if low_member is None:
        start = size if low_flag else 0  # "+" as a minimum: nothing is above it
    else:
        start = zset.bisect_member(low_member, low_flag)
    if high_member is None:
        stop = size if high_flag else 0  # "-" as a maximum: nothing is below it
    else:
        stop = zset.bisect_member(high_member, not high_flag)
    return start, max(start, stop)


def read_zset(db: Database, key: bytes) -> SortedSet | None:
    """The sorted set at ``key`` for a read command (counts hits/misses); WRONGTYPE otherwise."""
    return of_type(db.lookup_read(key), SortedSet)  # type: ignore[return-value]


def write_zset(db: Database, key: bytes) -> SortedSet | None:
    return of_type(db.lookup(key), SortedSet)  # type: ignore[return-value]


__all__ = ["NAN_SCORE", "NOT_FLOAT_RANGE", "NOT_LEX_RANGE",
           "lex_range", "members_reply", "parse_score", "positions_in_score_range", "read_zset",
           "score_or_null", "score_pairs", "score_range", "score_reply", "to_double",
           "write_zset"]
