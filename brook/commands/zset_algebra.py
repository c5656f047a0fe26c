"""Sorted-set algebra and sampling: ZUNION/ZINTER/ZDIFF (and their STORE forms), ZINTERCARD,
ZRANDMEMBER and ZSCAN, as t_zset.c and db.c do them.

Algebra (zunionInterDiffGenericCommand)
---------------------------------------
Inputs may be sorted sets or plain sets (every member scoring 1.0); a missing key is an empty
input. The keys are looked up (and type-checked) before the options are parsed, so WRONGTYPE
wins over a syntax error, as in Redis. Union and intersection visit their inputs from the
smallest to the largest (a stable sort by cardinality, as glibc's qsort is for these sizes),
which fixes the order in which a member's weighted scores are added: floating-point addition
is not associative, so that order is part of the reply. The score arithmetic is Redis's:
``weight * score`` of a first occurrence becomes 0 when it is NaN (``inf * 0``); a SUM that
comes out NaN (``inf + -inf``) becomes 0; MIN and MAX keep the current score against a NaN.

A result is a dict member -> score, sorted once by order key (:func:`brook.types.zset.
order_key`) for a reply; scores are replied from the dict, so a ``-0`` (weight -1 on a score
of 0) is written as Redis writes it (a stored one becomes 0: see the order key's known
difference in :mod:`brook.types.zset`). A STORE destination is built as a skiplist and then made
a listpack when it is small enough (``fit``, Redis's zsetConvertToListpackIfNeeded); it
replaces the destination (any type, its TTL too) or, when empty, deletes it. STORE commands
are deterministic, so they persist as sent.

ZRANDMEMBER follows zrandmemberWithCountCommand's cases, and their reply orders: a count of
at least the size returns the whole set from the highest score down; a listpack sample keeps
the set's order; a skiplist sample is in random order. Picks are by rank (``order[i]`` is
O(log n)), so a few members of a large sorted set never list it; a pick of more than a third
of a skiplist lists it once instead (Redis's CASE 3 copies it too).

ZSCAN returns a listpack whole with cursor 0 (scores as the listpack stores them: d2string);
a skiplist is walked through the member index that scan.py keeps, with scores written as
``%.17Lg`` (db.c's scanCallback uses ld2string's LD_STR_AUTO there).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from brook.commands.args import LONG_MAX, MAX_REPEATED_MEMBERS, parse_int
from brook.commands.list_args import lmpop_key_positions
from brook.commands.registry import COMMANDS, SYNTAX_ERROR, WRONGTYPE, CommandError, command
from brook.commands.scan_args import EMPTY_SCAN, ScanOptions, parse_cursor, scan_reply, scan_target
from brook.commands.zset_args import members_reply, parse_score, read_zset, score_reply
from brook.notify import ZSET, stored
from brook.protocol import resp
from brook.protocol.requests import parse_strict_int
from brook.types.set import SetValue
from brook.types.zset import LISTPACK, SortedSet, key_score, order_key

if TYPE_CHECKING:
    from brook.session import Session

UNION, INTER, DIFF = 0, 1, 2
SUM, MIN, MAX = 0, 1, 2
_AGGREGATES = {b"sum": SUM, b"min": MIN, b"max": MAX}
_STORE_EVENTS = (b"zunionstore", b"zinterstore", b"zdiffstore")
WEIGHT_NOT_FLOAT = "ERR weight value is not a float"
LIMIT_NEGATIVE = "ERR LIMIT can't be negative"

Source = SortedSet | SetValue | None


# ---------------------------------------------------------------------------------------------
# Inputs and arguments
# ---------------------------------------------------------------------------------------------


def _sources(client: Session, keys: list[bytes]) -> list[Source]:
    """Every input in order (None for a missing key), each looked up as a read and checked:
    a sorted set or a set, else WRONGTYPE."""
    db = client.db
    found: list[Source] = []
    for key in keys:
        value = db.lookup_read(key)
        if value is not None and type(value) is not SortedSet and type(value) is not SetValue:
            raise CommandError(WRONGTYPE)
        found.append(value)  # type: ignore[arg-type]
    return found


def _scored(value: SortedSet | SetValue) -> Iterable[tuple[bytes, float]]:
    """(member, score) of an input; a plain set's members score 1.0."""
    if type(value) is SortedSet:
        return value.items()
    return ((member, 1.0) for member in value)


def _score_in(value: SortedSet | SetValue, member: bytes) -> float | None:
    """zuiFind: ``member``'s score in an input, None when it is not there."""
    if type(value) is SortedSet:
        return value.score(member)
    return 1.0 if member in value else None


def _cardinality(value: Source) -> int:
    return 0 if value is None else len(value)


class _Request:
    """The parsed request of one algebra command (numkeys, keys, then the options)."""

    __slots__ = ("sources", "weights", "aggregate", "withscores", "limit")

    def __init__(self, client: Session, args: list[bytes], numkeys_index: int, op: int,
                 store: bool, card: bool) -> None:
        count = parse_int(args[numkeys_index])
        if count < 1:
            name = args[0].decode("utf-8", "replace").lower()
            raise CommandError(f"ERR at least 1 input key is needed for '{name}' command")
        first = numkeys_index + 1
        if count > len(args) - first:
            raise CommandError(SYNTAX_ERROR)
        self.sources = _sources(client, args[first:first + count])
        self.weights = [1.0] * count
        self.aggregate = SUM
        self.withscores = False
        self.limit = 0
        position = first + count
        while position < len(args):
            remaining = len(args) - position
            word = args[position].lower()
            if op != DIFF and not card and remaining > count and word == b"weights":
                self.weights = [parse_score(weight, WEIGHT_NOT_FLOAT)
                                for weight in args[position + 1:position + 1 + count]]
                position += 1 + count
            elif op != DIFF and not card and remaining >= 2 and word == b"aggregate":
                aggregate = _AGGREGATES.get(args[position + 1].lower())
                if aggregate is None:
                    raise CommandError(SYNTAX_ERROR)
                self.aggregate = aggregate
                position += 2
            elif not store and not card and word == b"withscores":
                self.withscores = True
                position += 1
            elif card and remaining >= 2 and word == b"limit":
                self.limit = parse_int(args[position + 1], LIMIT_NEGATIVE)
                if self.limit < 0:
                    raise CommandError(LIMIT_NEGATIVE)
                position += 2
            else:
                raise CommandError(SYNTAX_ERROR)

    def by_cardinality(self) -> list[tuple[SortedSet | SetValue | None, float]]:
        """(input, weight) from the smallest input to the largest (ties keep their order)."""
        return sorted(zip(self.sources, self.weights, strict=True),
                      key=lambda pair: _cardinality(pair[0]))


# ---------------------------------------------------------------------------------------------
# The three operations: member -> score
# ---------------------------------------------------------------------------------------------


def _aggregated(aggregate: int, current: float, value: float) -> float:
    """zunionInterAggregate: SUM turns a NaN (inf + -inf) into 0; MIN and MAX ignore one."""
    if aggregate == SUM:
        total = current + value
        return 0.0 if total != total else total
    if aggregate == MIN:
        return value if value < current else current
    return value if value > current else current


def _union(request: _Request) -> dict[bytes, float]:
    scores: dict[bytes, float] = {}
    aggregate = request.aggregate
    for value, weight in request.by_cardinality():
        if not value:
            continue
        for member, score in _scored(value):
            score *= weight
            if score != score:  # inf * 0
                score = 0.0
            current = scores.get(member)
            if current is not None:
                score = _aggregated(aggregate, current, score)
            scores[member] = score
    return scores


def _intersection(request: _Request) -> dict[bytes, float]:
    """Members of the smallest input that every other input has; an empty input (or a
    missing key) sorts first and ends it at once."""
    scores: dict[bytes, float] = {}
    ordered = request.by_cardinality()
    (first, first_weight), others = ordered[0], ordered[1:]
    if not first:
        return scores
    aggregate = request.aggregate
    for member, score in _scored(first):
        total = first_weight * score
        if total != total:
            total = 0.0
        for value, weight in others:
            found = _score_in(value, member)  # type: ignore[arg-type]
            if found is None:
                break
            total = _aggregated(aggregate, total, found * weight)
        else:
            scores[member] = total
    return scores


def _difference(request: _Request) -> dict[bytes, float]:
    """The first input's members (with their own scores, never weighted) that no other input
    has; nothing when the first key is repeated."""
    first, rest = request.sources[0], request.sources[1:]
    if not first or any(value is first for value in rest):
        return {}
    others = [value for value in rest if value]
    return {member: score for member, score in _scored(first)
            if not any(member in value for value in others)}


_OPERATIONS = (_union, _intersection, _difference)


def _in_order(scores: dict[bytes, float]) -> list[tuple[bytes, float]]:
    """(member, score) in Redis's skiplist order: by score (-0 equal to 0, as ``+ 0.0``
    makes it), then member bytes."""
    return sorted(scores.items(), key=lambda item: order_key(item[1] + 0.0, item[0]))


def _scored_reply(pairs: Iterable[tuple[bytes, float]], withscores: bool, proto: int) -> bytes:
    """Members, with WITHSCORES their scores: flat in RESP2, [member, score] pairs in RESP3
    (an order-keeping reply, so not a map)."""
    if not withscores:
        return resp.array_of_bulks(member for member, _ in pairs)
    if proto == 2:
        parts = [resp.bulk(member) + score_reply(score, 2) for member, score in pairs]
        return b"*%d\r\n%s" % (2 * len(parts), b"".join(parts))
    return resp.array([b"*2\r\n" + resp.bulk(member) + score_reply(score, proto)
                       for member, score in pairs])


def _algebra(client: Session, args: list[bytes], op: int) -> bytes:
    request = _Request(client, args, 1, op, store=False, card=False)
    scores = _OPERATIONS[op](request)
    return _scored_reply(_in_order(scores), request.withscores, client.protocol)


def _algebra_store(client: Session, args: list[bytes], op: int) -> bytes:
    """The STORE forms: the result (built as a skiplist, then a listpack if it fits)
    replaces the destination; an empty result deletes it."""
    request = _Request(client, args, 2, op, store=True, card=False)
    scores = _OPERATIONS[op](request)
    result = None
    if scores:
        result = SortedSet.restore(scores.items(), "skiplist")
        result.fit(client.server.config)
    stored(client, args[1], result, ZSET, _STORE_EVENTS[op])
    return resp.integer(len(scores))


# ---------------------------------------------------------------------------------------------
# ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD
# ---------------------------------------------------------------------------------------------


@command(
    "zunion", arity=-3, flags="readonly movablekeys", acl="@read @sortedset @slow",
    group="sorted-set", since="6.2.0", summary="Returns the union of multiple sorted sets.",
    complexity="O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, "
    "and M being the number of elements in the resulting sorted set.",
    syntax="numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] "
    "[WITHSCORES]",
)
def zunion(client: Session, args: list[bytes]) -> bytes:
    return _algebra(client, args, UNION)


@command(
    "zunionstore", arity=-4, flags="write denyoom movablekeys", keys=(1, 1, 1),
    acl="@write @sortedset @slow", group="sorted-set", since="2.0.0",
    summary="Stores the union of multiple sorted sets in a key.",
    complexity="O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, "
    "and M being the number of elements in the resulting sorted set.",
    syntax="destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
    "[AGGREGATE SUM | MIN | MAX]",
)
def zunionstore(client: Session, args: list[bytes]) -> bytes:
    return _algebra_store(client, args, UNION)


@command(
    "zinter", arity=-3, flags="readonly movablekeys", acl="@read @sortedset @slow",
    group="sorted-set", since="6.2.0", summary="Returns the intersect of multiple sorted sets.",
    complexity="O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K "
    "being the number of input sorted sets and M being the number of elements in the "
    "resulting sorted set.",
    syntax="numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] "
    "[WITHSCORES]",
)
def zinter(client: Session, args: list[bytes]) -> bytes:
    return _algebra(client, args, INTER)


@command(
    "zinterstore", arity=-4, flags="write denyoom movablekeys", keys=(1, 1, 1),
    acl="@write @sortedset @slow", group="sorted-set", since="2.0.0",
    summary="Stores the intersect of multiple sorted sets in a key.",
    complexity="O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K "
    "being the number of input sorted sets and M being the number of elements in the "
    "resulting sorted set.",
    syntax="destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
    "[AGGREGATE SUM | MIN | MAX]",
)
def zinterstore(client: Session, args: list[bytes]) -> bytes:
    return _algebra_store(client, args, INTER)


@command(
    "zdiff", arity=-3, flags="readonly movablekeys", acl="@read @sortedset @slow",
    group="sorted-set", since="6.2.0",
    summary="Returns the difference between multiple sorted sets.",
    complexity="O(L + (N-K)log(N)) worst case where L is the total number of elements in all "
    "the sets, N is the size of the first set, and K is the size of the result set.",
    syntax="numkeys key [key ...] [WITHSCORES]",
)
def zdiff(client: Session, args: list[bytes]) -> bytes:
    return _algebra(client, args, DIFF)


@command(
    "zdiffstore", arity=-4, flags="write denyoom movablekeys", keys=(1, 1, 1),
    acl="@write @sortedset @slow", group="sorted-set", since="6.2.0",
    summary="Stores the difference of multiple sorted sets in a key.",
    complexity="O(L + (N-K)log(N)) worst case where L is the total number of elements in all "
    "the sets, N is the size of the first set, and K is the size of the result set.",
    syntax="destination numkeys key [key ...]",
)
def zdiffstore(client: Session, args: list[bytes]) -> bytes:
    return _algebra_store(client, args, DIFF)


@command(
    "zintercard", arity=-3, flags="readonly movablekeys", acl="@read @sortedset @slow",
    group="sorted-set", since="7.0.0",
    summary="Returns the number of members of the intersect of multiple sorted sets.",
    complexity="O(N*K) worst case with N being the smallest input sorted set, K being the "
    "number of input sorted sets.",
    syntax="numkeys key [key ...] [LIMIT limit]",
)
def zintercard(client: Session, args: list[bytes]) -> bytes:
    """Scores do not change whether a member is counted, so only membership is checked."""
    request = _Request(client, args, 1, INTER, store=False, card=True)
    ordered = [value for value, _ in request.by_cardinality()]
    first, others = ordered[0], ordered[1:]
    if not first:
        return resp.ZERO
    limit = request.limit
    found = 0
    for member in (first.members() if type(first) is SortedSet else first):
        if all(member in value for value in others):  # type: ignore[operator]
            found += 1
            if found == limit:
                break
    return resp.integer(found)


def _sources_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """ZUNION/ZINTER/ZDIFF/ZINTERCARD: numkeys keys after numkeys, as LMPOP's (the key spec
    and genericGetKeys agree on these)."""
    return lmpop_key_positions(argc, args)


def _store_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """The STORE forms: the destination first when the key specs can read numkeys (a strict
    integer); otherwise Redis falls back to zunionInterDiffStoreGetKeys (atoi), which lists
    the destination last."""
    sources = [position + 1 for position in lmpop_key_positions(argc - 1, args[1:])]
    if not sources:
        return []
    if parse_strict_int(args[2]) == len(sources):
        return [1, *sources]
    return [*sources, 1]


for _name in ("zunion", "zinter", "zdiff", "zintercard"):
    COMMANDS[_name].find_keys = _sources_key_positions
for _name in ("zunionstore", "zinterstore", "zdiffstore"):
    COMMANDS[_name].find_keys = _store_key_positions


# ---------------------------------------------------------------------------------------------
# ZRANDMEMBER
# ---------------------------------------------------------------------------------------------


@command(
    "zrandmember", arity=-2, flags="readonly", keys=(1, 1, 1), acl="@read @sortedset @slow",
    group="sorted-set", since="6.2.0",
    summary="Returns one or more random members from a sorted set.",
    complexity="O(N) where N is the number of members returned",
    syntax="key [count [WITHSCORES]]",
)
def zrandmember(client: Session, args: list[bytes]) -> bytes:
    if len(args) == 2:
        zset = read_zset(client.db, args[1])
        if zset is None:
            return resp.null(client.protocol)
        return resp.bulk(zset.order[random.randrange(len(zset))][8:])
    count = parse_int(args[2])
    if count < -LONG_MAX:
        raise CommandError(
            f"ERR value is out of range, value must between {-LONG_MAX} and {LONG_MAX}")
    if len(args) > 4 or (len(args) == 4 and args[3].lower() != b"withscores"):
        raise CommandError(SYNTAX_ERROR)
    withscores = len(args) == 4
    if withscores and not -(LONG_MAX // 2) <= count <= LONG_MAX // 2:
        raise CommandError("ERR value is out of range")
    zset = read_zset(client.db, args[1])
    if zset is None or count == 0:
        return resp.EMPTY_ARRAY
    size = len(zset)
    order = zset.order
    if count < 0 or count == 1:
        # Repeats allowed, in random order (CASE 1).
        wanted = -count if count < 0 else 1
        if wanted > MAX_REPEATED_MEMBERS:
            raise CommandError("ERR value is out of range")
        ranks: Sequence[int] = random.choices(range(size), k=wanted)
    elif count >= size:
        return members_reply(order[::-1], withscores, client.protocol)  # from the tail (CASE 2)
    elif zset.kind == LISTPACK:
        ranks = sorted(random.sample(range(size), count))  # in the listpack's order
    else:
        ranks = random.sample(range(size), count)  # O(count) for a few of many
    if zset.kind != LISTPACK and len(ranks) * 3 > size:
        order = list(order)  # one pass beats that many O(log n) lookups
    return members_reply(zset.signed([order[rank] for rank in ranks]), withscores,
                         client.protocol)


# ---------------------------------------------------------------------------------------------
# ZSCAN
# ---------------------------------------------------------------------------------------------


@command(
    "zscan", arity=-3, flags="readonly", keys=(1, 1, 1), acl="@read @sortedset @slow",
    group="sorted-set", since="2.8.0",
    summary="Iterates over members and scores of a sorted set.",
    complexity="O(1) for every call. O(N) for a complete iteration, including enough command "
    "calls for the cursor to return back to 0. N is the number of elements inside the "
    "collection.",
    syntax="key cursor [MATCH pattern] [COUNT count]",
)
def zscan(client: Session, args: list[bytes]) -> bytes:
    cursor = parse_cursor(args[2])
    zset = scan_target(client, args, "zset")
    if zset is None:
        return EMPTY_SCAN
    assert isinstance(zset, SortedSet)
    options = ScanOptions(args, 3, "members")
    matches = options.matches
    items: list[bytes] = []
    if zset.kind == LISTPACK:
        # Whole, in order, cursor 0; the score as the listpack holds it (d2string's text).
        for key in zset.order:
            member = key[8:]
            if matches is None or matches(member):
                items.append(member)
                items.append(resp.format_double(key_score(key)))
        return scan_reply(0, items)
    found: list[bytes] = []
    fields, members = zset.scan_members()
    cursor = client.db.field_index(args[1], fields, members).walk(cursor, options.count, found)
    for member in found:
        score = zset.score(member)  # the double itself: a skiplist's sign of zero shows
        if score is not None and (matches is None or matches(member)):
            items.append(member)
            items.append(b"%.17g" % score)
    return scan_reply(cursor, items)
