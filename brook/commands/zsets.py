"""Sorted-set commands: adding and scoring, ranks and ranges, removals, pops (blocking too).

A sorted set is a :class:`brook.types.zset.SortedSet`: members ordered by (score, member) as
8-byte score prefixes plus member bytes, so every range below is two bisections and a slice.
Each command follows t_zset.c's order of checks (options, then numbers, then the key), so the
same bad request gets the same error. An emptied sorted set is deleted (event ``del``). Pops
persist as ZPOPMIN/ZPOPMAX of what they took, never as the blocking or multi-key request.
The multi-key algebra (ZUNION, ZINTER, ZDIFF...), ZRANDMEMBER and ZSCAN are in
:mod:`brook.commands.zset_algebra`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook import blocking
from brook.commands.args import parse_int
from brook.commands.list_args import blmpop_key_positions, lmpop_key_positions, parse_mpop_args
from brook.commands.registry import COMMANDS, SYNTAX_ERROR, CommandError, command
from brook.commands.timeouts import parse_timeout
from brook.commands.zset_add import INCR, run_zadd, zadd_generic
from brook.commands.zset_args import (
    lex_range,
    members_reply,
    positions_in_score_range,
    read_zset,
    score_or_null,
    score_pairs,
    score_range,
    score_reply,
    write_zset,
)
from brook.notify import ZSET, emptied, stored, written
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.types.zset import SortedSet

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session

NOT_POSITIVE = "ERR value is out of range, must be positive"
LIMIT_NEEDS_RANGE = ("ERR syntax error, LIMIT is only supported in combination with either "
                     "BYSCORE or BYLEX")
WITHSCORES_LEX = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"

RANK, SCORE, LEX = 0, 1, 2  # how a ZRANGE-family range is given


# ---------------------------------------------------------------------------------------------
# Adding and scoring (ZADD's work is brook.commands.zset_add's, which GEOADD runs too)
# ---------------------------------------------------------------------------------------------


@command(
    "zadd", arity=-4, flags="write denyoom fast", keys=(1, 1, 1),
    acl="@write @sortedset @fast", group="sorted-set", since="1.2.0",
    summary="Adds one or more members to a sorted set, or updates their scores. Creates the "
    "key if it doesn't exist.",
    complexity="O(log(N)) for each item added, where N is the number of elements in the "
    "sorted set.",
    syntax="key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]",
)
def zadd(client: Session, args: list[bytes]) -> bytes:
    return run_zadd(client, args)


@command(
    "zincrby", arity=4, flags="write denyoom fast", keys=(1, 1, 1),
    acl="@write @sortedset @fast", group="sorted-set", since="1.2.0",
    summary="Increments the score of a member in a sorted set.",
    complexity="O(log(N)) where N is the number of elements in the sorted set.",
    syntax="key increment member",
)
def zincrby(client: Session, args: list[bytes]) -> bytes:
    return zadd_generic(client, args, INCR)


@command(
    "zrem", arity=-3, flags="write fast", keys=(1, 1, 1), acl="@write @sortedset @fast",
    group="sorted-set", since="1.2.0",
    summary="Removes one or more members from a sorted set. Deletes the sorted set if all "
    "members were removed.",
    complexity="O(M*log(N)) with N being the number of elements in the sorted set and M the "
    "number of elements to be removed.",
    syntax="key member [member ...]",
)
def zrem(client: Session, args: list[bytes]) -> bytes:
    key = args[1]
    zset = write_zset(client.db, key)
    if zset is None:
        return resp.ZERO
    removed = 0
    if len(args) > 3:
        zset.loosen()  # one unpacking of a listpack for all the members
    for member in args[2:]:
        if zset.remove(member):
            removed += 1
            if not zset:
                break
    zset.tighten()
    if removed:
        written(client, key, ZSET, b"zrem", removed)
        if not zset:
            emptied(client, key)
    return resp.integer(removed)


@command(
    "zcard", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@read @sortedset @fast",
    group="sorted-set", since="1.2.0", summary="Returns the number of members in a sorted set.",
    syntax="key",
)
def zcard(client: Session, args: list[bytes]) -> bytes:
    zset = read_zset(client.db, args[1])
    return resp.integer(len(zset)) if zset is not None else resp.ZERO


@command(
    "zscore", arity=3, flags="readonly fast", keys=(1, 1, 1), acl="@read @sortedset @fast",
    group="sorted-set", since="1.2.0",
    summary="Returns the score of a member in a sorted set.", syntax="key member",
)
def zscore(client: Session, args: list[bytes]) -> bytes:
    zset = read_zset(client.db, args[1])
    return score_or_null(None if zset is None else zset.score(args[2]), client.protocol)


@command(
    "zmscore", arity=-3, flags="readonly fast", keys=(1, 1, 1), acl="@read @sortedset @fast",
    group="sorted-set", since="6.2.0",
    summary="Returns the score of one or more members in a sorted set.",
    complexity="O(N) where N is the number of members being requested.",
    syntax="key member [member ...]",
)
def zmscore(client: Session, args: list[bytes]) -> bytes:
    zset = read_zset(client.db, args[1])
    proto = client.protocol
    return resp.array([score_or_null(None if zset is None else zset.score(member), proto)
                       for member in args[2:]])


def _rank(client: Session, args: list[bytes], reverse: bool) -> bytes:
    """zrankGenericCommand: the rank (0-based) from the low or the high end; WITHSCORE
    adds the score."""
    if len(args) > 4:
        name = "zrevrank" if reverse else "zrank"
        raise CommandError(f"ERR wrong number of arguments for '{name}' command")
    withscore = False
    if len(args) == 4:
        if args[3].lower() != b"withscore":
            raise CommandError(SYNTAX_ERROR)
        withscore = True
    proto = client.protocol
    zset = read_zset(client.db, args[1])
    rank = None if zset is None else zset.rank(args[2])
    if rank is None:
        return resp.null_array(proto) if withscore else resp.null(proto)
    if reverse:
        rank = len(zset) - 1 - rank  # type: ignore[arg-type]
    if not withscore:
        return resp.integer(rank)
    return b"*2\r\n" + resp.integer(rank) + score_reply(zset.score(args[2]), proto)  # type: ignore[union-attr,arg-type]


@command(
    "zrank", arity=-3, flags="readonly fast", keys=(1, 1, 1), acl="@read @sortedset @fast",
    group="sorted-set", since="2.0.0",
    summary="Returns the index of a member in a sorted set ordered by ascending scores.",
    complexity="O(log(N))", syntax="key member [WITHSCORE]",
)
def zrank(client: Session, args: list[bytes]) -> bytes:
    return _rank(client, args, False)


@command(
    "zrevrank", arity=-3, flags="readonly fast", keys=(1, 1, 1), acl="@read @sortedset @fast",
    group="sorted-set", since="2.0.0",
    summary="Returns the index of a member in a sorted set ordered by descending scores.",
    complexity="O(log(N))", syntax="key member [WITHSCORE]",
)
def zrevrank(client: Session, args: list[bytes]) -> bytes:
    return _rank(client, args, True)


@command(
    "zcount", arity=4, flags="readonly fast", keys=(1, 1, 1), acl="@read @sortedset @fast",
    group="sorted-set", since="2.0.0",
    summary="Returns the count of members in a sorted set that have scores within a range.",
    complexity="O(log(N)) with N being the number of elements in the sorted set.",
    syntax="key min max",
)
def zcount(client: Session, args: list[bytes]) -> bytes:
    bounds = score_range(args[2], args[3])
    zset = read_zset(client.db, args[1])
    if zset is None:
        return resp.ZERO
    start, stop = positions_in_score_range(zset, bounds)
    return resp.integer(stop - start)


@command(
    "zlexcount", arity=4, flags="readonly fast", keys=(1, 1, 1), acl="@read @sortedset @fast",
    group="sorted-set", since="2.8.9",
    summary="Returns the number of members in a sorted set within a lexicographical range.",
    complexity="O(log(N)) with N being the number of elements in the sorted set.",
    syntax="key min max",
)
def zlexcount(client: Session, args: list[bytes]) -> bytes:
    lex_range(None, args[2], args[3])  # errors before the key, as Redis
    zset = read_zset(client.db, args[1])
    start, stop = lex_range(zset, args[2], args[3])
    return resp.integer(stop - start)


# ---------------------------------------------------------------------------------------------
# Ranges: ZRANGE and its older forms, ZRANGESTORE
# ---------------------------------------------------------------------------------------------


def _rank_window(size: int, start: int, end: int, reverse: bool) -> tuple[int, int]:
    """genericZrangebyrankCommand's index sanitising, as ascending positions [lo, hi)."""
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = max(start, 0)
    if start > end or start >= size:
        return 0, 0
    end = min(end, size - 1)
    if reverse:
        return size - 1 - end, size - start
    return start, end + 1


def _limited(zset: SortedSet, start: int, stop: int, offset: int, limit: int,
             reverse: bool) -> list[bytes]:
    """The order keys at ranks [start, stop), walked from the low end (or the high end),
    skipping ``offset`` and taking ``limit`` (negative: all); a negative offset skips
    everything, as Redis's ``while (offset--)`` walk does."""
    if offset < 0 or (offset > 0 and offset >= len(zset)):
        return []
    if reverse:
        high = stop - offset
        low = start if limit < 0 else max(start, high - limit)
        if low >= high:
            return []
        keys = zset.order[low:high]
        keys.reverse()
        return keys  # type: ignore[no-any-return]
    low = start + offset
    high = stop if limit < 0 else min(stop, low + limit)
    if low >= high:
        return []
    return zset.order[low:high]  # type: ignore[no-any-return]


def _range(client: Session, args: list[bytes], first: int, store: bytes | None,
           kind: int | None, reverse: bool | None) -> bytes:
    """zrangeGenericCommand. ``first`` is the source key's index; ``kind``/``reverse`` are
    fixed by the older commands and None where ZRANGE's options choose them."""
    withscores = False
    offset, limit = 0, -1
    position = first + 3
    while position < len(args):
        option = args[position].lower()
        left = len(args) - position - 1
        if store is None and option == b"withscores":
            withscores = True
        elif option == b"limit" and left >= 2:
            offset = parse_int(args[position + 1])
            limit = parse_int(args[position + 2])
            position += 2
        elif reverse is None and option == b"rev":
            reverse = True
        elif kind is None and option == b"bylex":
            kind = LEX
        elif kind is None and option == b"byscore":
            kind = SCORE
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 1
    reverse = bool(reverse)
    kind = RANK if kind is None else kind
    if limit != -1 and kind == RANK:
        raise CommandError(LIMIT_NEEDS_RANGE)
    if withscores and kind == LEX:
        raise CommandError(WITHSCORES_LEX)
    low_arg, high_arg = args[first + 1], args[first + 2]
    if reverse and kind != RANK:
        low_arg, high_arg = high_arg, low_arg
    if kind == RANK:
        start_rank, end_rank = parse_int(low_arg), parse_int(high_arg)
    elif kind == SCORE:
        bounds = score_range(low_arg, high_arg)
    else:
        lex_range(None, low_arg, high_arg)
    zset = read_zset(client.db, args[first])
    keys: list[bytes] = []
    size_hint = 0
    if zset is not None:
        if kind == RANK:
            low, high = _rank_window(len(zset), start_rank, end_rank, reverse)
            keys = zset.order[low:high]  # type: ignore[assignment]
            if reverse:
                keys.reverse()
            size_hint = len(keys)
        else:
            if kind == SCORE:
                low, high = positions_in_score_range(zset, bounds)
            else:
                low, high = lex_range(zset, low_arg, high_arg)
            keys = _limited(zset, low, high, offset, limit, reverse)
        keys = zset.signed(keys)
    if store is None:
        return members_reply(keys, withscores, client.protocol)
    return _store_range(client, store, keys, size_hint, reverse)


def _store_range(client: Session, destination: bytes, keys: list[bytes], size_hint: int,
                 reverse: bool) -> bytes:
    """ZRANGESTORE's result replaces the destination (its TTL too); empty, it deletes it."""
    result = None
    if keys:
        result = SortedSet.build(keys[::-1] if reverse else keys, size_hint,
                                 client.server.config)
    stored(client, destination, result, ZSET, b"zrangestore")
    return resp.integer(len(keys))


_RANGE_SYNTAX = ("key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] "
                 "[WITHSCORES]")


@command(
    "zrange", arity=-4, flags="readonly", keys=(1, 1, 1), acl="@read @sortedset @slow",
    group="sorted-set", since="1.2.0",
    summary="Returns members in a sorted set within a range of indexes.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements returned.",
    syntax=_RANGE_SYNTAX,
)
def zrange(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, 1, None, None, None)


@command(
    "zrangestore", arity=-5, flags="write denyoom", keys=(1, 2, 1),
    acl="@write @sortedset @slow", group="sorted-set", since="6.2.0",
    summary="Stores a range of members from sorted set in a key.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements stored into the destination key.",
    syntax="dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]",
)
def zrangestore(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, 2, args[1], None, None)


@command(
    "zrangebyscore", arity=-4, flags="readonly", keys=(1, 1, 1),
    acl="@read @sortedset @slow", group="sorted-set", since="1.0.5",
    summary="Returns members in a sorted set within a range of scores.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements being returned. If M is constant (e.g. always asking for the first "
    "10 elements with LIMIT), you can consider it O(log(N)).",
    syntax="key min max [WITHSCORES] [LIMIT offset count]",
)
def zrangebyscore(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, 1, None, SCORE, False)


@command(
    "zrevrangebyscore", arity=-4, flags="readonly", keys=(1, 1, 1),
    acl="@read @sortedset @slow", group="sorted-set", since="2.2.0",
    summary="Returns members in a sorted set within a range of scores in reverse order.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements being returned. If M is constant (e.g. always asking for the first "
    "10 elements with LIMIT), you can consider it O(log(N)).",
    syntax="key max min [WITHSCORES] [LIMIT offset count]",
)
def zrevrangebyscore(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, 1, None, SCORE, True)


@command(
    "zrangebylex", arity=-4, flags="readonly", keys=(1, 1, 1), acl="@read @sortedset @slow",
    group="sorted-set", since="2.8.9",
    summary="Returns members in a sorted set within a lexicographical range.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements being returned. If M is constant (e.g. always asking for the first "
    "10 elements with LIMIT), you can consider it O(log(N)).",
    syntax="key min max [LIMIT offset count]",
)
def zrangebylex(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, 1, None, LEX, False)


@command(
    "zrevrangebylex", arity=-4, flags="readonly", keys=(1, 1, 1),
    acl="@read @sortedset @slow", group="sorted-set", since="2.8.9",
    summary="Returns members in a sorted set within a lexicographical range in reverse order.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements being returned. If M is constant (e.g. always asking for the first "
    "10 elements with LIMIT), you can consider it O(log(N)).",
    syntax="key max min [LIMIT offset count]",
)
def zrevrangebylex(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, 1, None, LEX, True)


@command(
    "zrevrange", arity=-4, flags="readonly", keys=(1, 1, 1), acl="@read @sortedset @slow",
    group="sorted-set", since="1.2.0",
    summary="Returns members in a sorted set within a range of indexes in reverse order.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements returned.",
    syntax="key start stop [WITHSCORES]",
)
def zrevrange(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, 1, None, RANK, True)


# ---------------------------------------------------------------------------------------------
# Removing ranges
# ---------------------------------------------------------------------------------------------


def _remove_range(client: Session, args: list[bytes], kind: int, event: bytes) -> bytes:
    """zremrangeGenericCommand: the range first, then the key; removes ranks [lo, hi)."""
    if kind == RANK:
        start, end = parse_int(args[2]), parse_int(args[3])
    elif kind == SCORE:
        bounds = score_range(args[2], args[3])
    else:
        lex_range(None, args[2], args[3])
    key = args[1]
    zset = write_zset(client.db, key)
    if zset is None:
        return resp.ZERO
    if kind == RANK:
        low, high = _rank_window(len(zset), start, end, False)
    elif kind == SCORE:
        low, high = positions_in_score_range(zset, bounds)
    else:
        low, high = lex_range(zset, args[2], args[3])
    if low >= high:
        return resp.ZERO
    zset.delete_range(low, high)
    written(client, key, ZSET, event, high - low)
    if not zset:
        emptied(client, key)
    return resp.integer(high - low)


@command(
    "zremrangebyrank", arity=4, flags="write", keys=(1, 1, 1), acl="@write @sortedset @slow",
    group="sorted-set", since="2.0.0",
    summary="Removes members in a sorted set within a range of indexes. Deletes the sorted set "
    "if all members were removed.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements removed by the operation.",
    syntax="key start stop",
)
def zremrangebyrank(client: Session, args: list[bytes]) -> bytes:
    return _remove_range(client, args, RANK, b"zremrangebyrank")


@command(
    "zremrangebyscore", arity=4, flags="write", keys=(1, 1, 1), acl="@write @sortedset @slow",
    group="sorted-set", since="1.2.0",
    summary="Removes members in a sorted set within a range of scores. Deletes the sorted set "
    "if all members were removed.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements removed by the operation.",
    syntax="key min max",
)
def zremrangebyscore(client: Session, args: list[bytes]) -> bytes:
    return _remove_range(client, args, SCORE, b"zremrangebyscore")


@command(
    "zremrangebylex", arity=4, flags="write", keys=(1, 1, 1), acl="@write @sortedset @slow",
    group="sorted-set", since="2.8.9",
    summary="Removes members in a sorted set within a lexicographical range. Deletes the "
    "sorted set if all members were removed.",
    complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the "
    "number of elements removed by the operation.",
    syntax="key min max",
)
def zremrangebylex(client: Session, args: list[bytes]) -> bytes:
    return _remove_range(client, args, LEX, b"zremrangebylex")


# ---------------------------------------------------------------------------------------------
# Pops
# ---------------------------------------------------------------------------------------------


def _pop(client: Session, db: Database, key: bytes, zset: SortedSet, highest: bool,
         count: int) -> list[bytes]:
    """Take up to ``count`` members from one end (in the order taken); the event, and the
    key deleted when emptied."""
    size = len(zset)
    count = min(count, size)
    keys = zset.delete_range(size - count, size) if highest else zset.delete_range(0, count)
    if highest:
        keys.reverse()
    written(client, key, ZSET, b"zpopmax" if highest else b"zpopmin", count)
    if not zset:
        emptied(client, key)
    return keys


def _zpop(client: Session, args: list[bytes], highest: bool) -> bytes:
    """ZPOPMIN/ZPOPMAX key [count]: a flat array in RESP2 (and without a count), pairs in
    RESP3 with a count."""
    if len(args) > 3:
        raise CommandError(SYNTAX_ERROR)
    count = -1
    if len(args) == 3:
        count = parse_int(args[2], NOT_POSITIVE)
        if count < 0:
            raise CommandError(NOT_POSITIVE)
    key = args[1]
    zset = write_zset(client.db, key)
    if zset is None or count == 0:
        return resp.EMPTY_ARRAY
    proto = client.protocol
    nested = proto > 2 and count != -1
    keys = _pop(client, client.db, key, zset, highest, 1 if count == -1 else count)
    return ((b"*%d\r\n" % (len(keys) if nested else 2 * len(keys)))
            + score_pairs(keys, nested, proto))


@command(
    "zpopmin", arity=-2, flags="write fast", keys=(1, 1, 1), acl="@write @sortedset @fast",
    group="sorted-set", since="5.0.0",
    summary="Returns the lowest-scoring members from a sorted set after removing them. Deletes "
    "the sorted set if the last member was popped.",
    complexity="O(log(N)*M) with N being the number of elements in the sorted set, and M "
    "being the number of elements popped.",
    syntax="key [count]",
)
def zpopmin(client: Session, args: list[bytes]) -> bytes:
    return _zpop(client, args, False)


@command(
    "zpopmax", arity=-2, flags="write fast", keys=(1, 1, 1), acl="@write @sortedset @fast",
    group="sorted-set", since="5.0.0",
    summary="Returns the highest-scoring members from a sorted set after removing them. "
    "Deletes the sorted set if the last member was popped.",
    complexity="O(log(N)*M) with N being the number of elements in the sorted set, and M "
    "being the number of elements popped.",
    syntax="key [count]",
)
def zpopmax(client: Session, args: list[bytes]) -> bytes:
    return _zpop(client, args, True)


def parse_min_max(arg: bytes) -> bool:
    """ZMPOP's MIN (False) or MAX (True); a syntax error otherwise."""
    word = arg.lower()
    if word == b"max":
        return True
    if word == b"min":
        return False
    raise CommandError(SYNTAX_ERROR)


def _mpop_reply(client: Session, keys: list[bytes], highest: bool, count: int) -> bytes | None:
    """ZMPOP's pop from the first key holding a sorted set: ``*2 key *n [member score]``, or
    None when none does (a key of another type met first is WRONGTYPE). Persisted as
    ZPOPMIN/ZPOPMAX key count."""
    db = client.db
    for key in keys:
        zset = write_zset(db, key)
        if zset is None:
            continue
        popped = _pop(client, db, key, zset, highest, count)
        propagate(client, [b"ZPOPMAX" if highest else b"ZPOPMIN", key, b"%d" % len(popped)])
        return (b"*2\r\n" + resp.bulk(key) + b"*%d\r\n" % len(popped)
                + score_pairs(popped, True, client.protocol))
    return None


@command(
    "zmpop", arity=-4, flags="write movablekeys", acl="@write @sortedset @slow",
    group="sorted-set", since="7.0.0",
    summary="Returns the highest- or lowest-scoring members from one or more sorted sets "
    "after removing them. Deletes the sorted set if the last member was popped.",
    complexity="O(K) + O(M*log(N)) where K is the number of provided keys, N being the number "
    "of elements in the sorted set, and M being the number of elements popped.",
    syntax="numkeys key [key ...] MIN | MAX [COUNT count]",
)
def zmpop(client: Session, args: list[bytes]) -> bytes:
    keys, highest, count = parse_mpop_args(args, 2, parse_min_max)
    reply = _mpop_reply(client, keys, highest, count)
    return resp.null_array(client.protocol) if reply is None else reply


COMMANDS["zmpop"].find_keys = lmpop_key_positions


def _bzpop(client: Session, args: list[bytes], name: str, highest: bool) -> bytes | None:
    """BZPOPMIN/BZPOPMAX: the timeout first, then the keys in order; ``*3 key member score``
    from the first non-empty sorted set, persisted as ZPOPMIN/ZPOPMAX key."""
    timeout = parse_timeout(args[-1], seconds=True, now_ms=client.clock.now_ms())
    keys = args[1:-1]
    db = client.db
    for key in keys:
        zset = write_zset(db, key)
        if zset is None:
            continue
        popped = _pop(client, db, key, zset, highest, 1)
        propagate(client, [b"ZPOPMAX" if highest else b"ZPOPMIN", key])
        return b"*3\r\n" + resp.bulk(key) + score_pairs(popped, False, client.protocol)
    return blocking.block(client, COMMANDS[name], args, keys, blocking.ZPOP, timeout)


@command(
    "bzpopmin", arity=-3, flags="write blocking fast", keys=(1, -2, 1),
    acl="@write @sortedset @fast @blocking", group="sorted-set", since="5.0.0",
    summary="Removes and returns the member with the lowest score from one or more sorted "
    "sets. Blocks until a member is available otherwise. Deletes the sorted set if the last "
    "element was popped.",
    complexity="O(log(N)) with N being the number of elements in the sorted set.",
    syntax="key [key ...] timeout",
)
def bzpopmin(client: Session, args: list[bytes]) -> bytes | None:
    return _bzpop(client, args, "bzpopmin", False)


@command(
    "bzpopmax", arity=-3, flags="write blocking fast", keys=(1, -2, 1),
    acl="@write @sortedset @fast @blocking", group="sorted-set", since="5.0.0",
    summary="Removes and returns the member with the highest score from one or more sorted "
    "sets. Blocks until a member available otherwise.  Deletes the sorted set if the last "
    "element was popped.",
    complexity="O(log(N)) with N being the number of elements in the sorted set.",
    syntax="key [key ...] timeout",
)
def bzpopmax(client: Session, args: list[bytes]) -> bytes | None:
    return _bzpop(client, args, "bzpopmax", True)


@command(
    "bzmpop", arity=-5, flags="write blocking movablekeys",
    acl="@write @sortedset @slow @blocking", group="sorted-set", since="7.0.0",
    summary="Removes and returns a member by score from one or more sorted sets. Blocks until "
    "a member is available otherwise. Deletes the sorted set if the last element was popped.",
    complexity="O(K) + O(M*log(N)) where K is the number of provided keys, N being the number "
    "of elements in the sorted set, and M being the number of elements popped.",
    syntax="timeout numkeys key [key ...] MIN | MAX [COUNT count]",
)
def bzmpop(client: Session, args: list[bytes]) -> bytes | None:
    keys, highest, count = parse_mpop_args(args, 3, parse_min_max)
    timeout = parse_timeout(args[1], seconds=True,
                            now_ms=client.clock.now_ms())  # after the rest, as Redis
    reply = _mpop_reply(client, keys, highest, count)
    if reply is not None:
        return reply
    return blocking.block(client, COMMANDS["bzmpop"], args, keys, blocking.ZPOP, timeout)


COMMANDS["bzmpop"].find_keys = blmpop_key_positions
