"""List commands (the non-blocking ones; BLPOP and friends park clients in brook.blocking).

A list is a :class:`brook.types.lists.ListValue` (packed elements, loose Python objects only at
the ends of a long list; see that module). Replies, error texts and the order in which
arguments, key and type are checked follow Redis 7.0's ``t_list.c``. An emptied list is
deleted, as Redis never keeps empty aggregates.

LPUSH, RPUSH, LPOP and RPOP are the benchmarked commands: their common forms do one dict
lookup and no helper calls (like GET/SET in :mod:`brook.commands.strings`), with the general
path (expiry, creation, wrong type) behind one call. On a long list, one element goes onto or
comes off a loose end of the value directly (the contract is in ListValue's docstring).

Every command that changes a list says so with :func:`brook.notify.written` (``ready`` when
elements went in, so that parked clients get a look), and the pop/move logic lives in
functions returning the reply bytes (None when there is nothing to pop), so the blocking forms
run exactly the code the plain forms do: they are in :mod:`brook.commands.list_pops`, the
parsing both share in :mod:`brook.commands.list_args`, the lookups and bookkeeping of every list
writer in :mod:`brook.commands.list_values` (none of them a command family).
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Final

from brook.commands.args import LONG_MAX, LONG_MIN, parse_int
from brook.commands.list_args import (
    lmpop_key_positions,
    option_word,
    parse_direction,
    parse_how_many,
    parse_mpop_args,
)
from brook.commands.list_pops import move_reply, movem_reply, mpop_reply
from brook.commands.list_values import (
    bulks,
    elements_added,
    elements_removed,
    take,
    write_list,
    write_list_or_create,
)
from brook.commands.registry import (
    COMMANDS,
    NO_SUCH_KEY,
    SYNTAX_ERROR,
    CommandError,
    command,
    of_type,
)
from brook.notify import GENERIC, LIST, notify, written
from brook.protocol import resp
from brook.types.lists import PACK_AT, ListValue

if TYPE_CHECKING:
    from collections.abc import Iterator

    from brook.keyspace import Database
    from brook.session import Session

BULK_HEADERS: Final = resp.BULK_HEADERS
NULL_BULK: Final = resp.NULL_BULK
NULL3: Final = resp.NULL3

MUST_BE_POSITIVE: Final = "ERR value is out of range, must be positive"
INDEX_OUT_OF_RANGE: Final = "ERR index out of range"
RANK_RANGE: Final = (  # LPOS's RANK and LREM's count: -LONG_MAX to LONG_MAX
    f"ERR value is out of range, value must between {-LONG_MAX} and {LONG_MAX}"
)
RANK_ZERO: Final = (
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list"
)
COUNT_NEGATIVE: Final = "ERR COUNT can't be negative"
MAXLEN_NEGATIVE: Final = "ERR MAXLEN can't be negative"

_PUSH_COMPLEXITY: Final = (
    "O(1) for each element added, so O(N) to add N elements when the command is called with "
    "multiple arguments."
)


# ---------------------------------------------------------------------------------------------
# Lookups and replies (a writer's lookup and bookkeeping: brook.commands.list_values).
# ---------------------------------------------------------------------------------------------


def _read_list(db: Database, key: bytes) -> ListValue | None:
    """The list at ``key`` for a read command (counts keyspace hits/misses); WRONGTYPE for
    other types."""
    return of_type(db.lookup_read(key), ListValue)  # type: ignore[return-value]


def _non_negative(arg: bytes, message: str) -> int:
    """Redis's getPositiveLongFromObjectOrReply: the same message for non-numbers and < 0."""
    value = parse_int(arg, message)
    if value < 0:
        raise CommandError(message)
    return value


def _integers(values: list[int]) -> bytes:
    return b"*%d\r\n%s" % (len(values), b"".join(b":%d\r\n" % v for v in values))


# ---------------------------------------------------------------------------------------------
# Pushing
# ---------------------------------------------------------------------------------------------


@command(
    "lpush", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @list @fast",
    group="list", summary="Prepends one or more elements to a list. Creates the key if it "
    "doesn't exist.", complexity=_PUSH_COMPLEXITY, syntax="key element [element ...]",
)
def lpush(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    found = db.data.get(key)
    if type(found) is not ListValue or db.expires:
        found = write_list_or_create(client, key)
    else:
        db.data.touch(key)
    head = found.left  # a long list's loose head, reversed: its last element is the first
    if head is not None and found.lp == -1 and len(args) == 3:  # a long quicklist
        head.append(args[2])
        size = found.size = found.size + 1
        if len(head) >= PACK_AT:
            found.pack_left()
    else:
        size = found.extendleft(args[2:])  # LPUSH a b c leaves c b a at the head
    written(client, key, LIST, b"lpush", len(args) - 2, True)
    return b":%d\r\n" % size


@command(
    "rpush", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @list @fast",
    group="list", summary="Appends one or more elements to a list. Creates the key if it "
    "doesn't exist.", complexity=_PUSH_COMPLEXITY, syntax="key element [element ...]",
)
def rpush(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    found = db.data.get(key)
    if type(found) is not ListValue or db.expires:
        found = write_list_or_create(client, key)
    else:
        db.data.touch(key)
    tail = found.right  # a long list's loose tail
    if tail is not None and found.lp == -1 and len(args) == 3:  # a long quicklist
        tail.append(args[2])
        size = found.size = found.size + 1
        if len(tail) >= PACK_AT:
            found.pack_right()
    else:
        size = found.extend(args[2:])
    written(client, key, LIST, b"rpush", len(args) - 2, True)
    return b":%d\r\n" % size


def _push_existing(client: Session, args: list[bytes], left: bool) -> bytes:
    """LPUSHX/RPUSHX: push only onto a list that exists."""
    db = client.db
    key = args[1]
    found = write_list(db, key)
    if found is None:
        return resp.ZERO
    size = found.extendleft(args[2:]) if left else found.extend(args[2:])
    elements_added(client, db, key, len(args) - 2, b"lpush" if left else b"rpush")
    return resp.integer(size)


@command(
    "lpushx", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @list @fast",
    group="list", since="2.2.0",
    summary="Prepends one or more elements to a list only when the list exists.",
    complexity=_PUSH_COMPLEXITY, syntax="key element [element ...]",
)
def lpushx(client: Session, args: list[bytes]) -> bytes:
    return _push_existing(client, args, left=True)


@command(
    "rpushx", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @list @fast",
    group="list", since="2.2.0",
    summary="Appends one or more elements to a list only when the list exists.",
    complexity=_PUSH_COMPLEXITY, syntax="key element [element ...]",
)
def rpushx(client: Session, args: list[bytes]) -> bytes:
    return _push_existing(client, args, left=False)


# ---------------------------------------------------------------------------------------------
# Popping
# ---------------------------------------------------------------------------------------------


def _pop_one(client: Session, args: list[bytes], left: bool) -> bytes:
    """LPOP/RPOP without a count: a bulk string, or null when the key is missing."""
    db = client.db
    key = args[1]
    found = db.data.get(key)
    if type(found) is not ListValue or db.expires:
        found = write_list(db, key)
        if found is None:
            return NULL_BULK if client.protocol == 2 else NULL3
    else:
        db.data.touch(key)
    end = found.left if left else found.right  # a long list's loose end, if not empty
    if end and found.lp == -1:  # a long quicklist: nothing to count (brook.types.lists)
        element = end.pop()
        size = found.size = found.size - 1
    else:
        element = found.popleft() if left else found.pop()
        size = found.size
    written(client, key, LIST, b"lpop" if left else b"rpop")
    if not size:
        db.delete(key)
        notify(client, GENERIC, b"del", key)
    size = len(element)
    if size < 4096:
        return BULK_HEADERS[size] + element + b"\r\n"
    return b"$%d\r\n%s\r\n" % (size, element)


def _pop_count(client: Session, args: list[bytes], left: bool) -> bytes:
    """LPOP/RPOP key count: an array (empty for count 0), or a null array for a missing key.
    The count is parsed before the key is looked up, as Redis does."""
    if len(args) > 3:
        raise CommandError(f"ERR wrong number of arguments for '{'lpop' if left else 'rpop'}' "
                           "command")
    count = _non_negative(args[2], MUST_BE_POSITIVE)
    db = client.db
    key = args[1]
    found = write_list(db, key)
    if found is None:
        return resp.null_array(client.protocol)
    if not count:
        return resp.EMPTY_ARRAY
    items = take(found, left, count)
    elements_removed(client, db, key, found, len(items), b"lpop" if left else b"rpop")
    return bulks(items)


@command(
    "lpop", arity=-2, flags="write fast", keys=(1, 1, 1), acl="@write @list @fast",
    group="list", summary="Returns the first elements in a list after removing it. Deletes the "
    "list if the last element was popped.",
    complexity="O(N) where N is the number of elements returned", syntax="key [count]",
)
def lpop(client: Session, args: list[bytes]) -> bytes:
    if len(args) == 2:
        return _pop_one(client, args, True)
    return _pop_count(client, args, True)


@command(
    "rpop", arity=-2, flags="write fast", keys=(1, 1, 1), acl="@write @list @fast",
    group="list", summary="Returns and removes the last elements of a list. Deletes the list if "
    "the last element was popped.",
    complexity="O(N) where N is the number of elements returned", syntax="key [count]",
)
def rpop(client: Session, args: list[bytes]) -> bytes:
    if len(args) == 2:
        return _pop_one(client, args, False)
    return _pop_count(client, args, False)


# ---------------------------------------------------------------------------------------------
# LMOVE / RPOPLPUSH
# ---------------------------------------------------------------------------------------------


def _move_or_null(client: Session, args: list[bytes], from_left: bool, to_left: bool) -> bytes:
    reply = move_reply(client, args[1], args[2], from_left, to_left)
    return resp.null(client.protocol) if reply is None else reply


@command(
    "lmove", arity=5, flags="write denyoom", keys=(1, 2, 1), acl="@write @list @slow",
    group="list", since="6.2.0",
    summary="Returns an element after popping it from one list and pushing it to another. "
    "Deletes the list if the last element was moved.",
    syntax="source destination LEFT | RIGHT LEFT | RIGHT",
)
def lmove(client: Session, args: list[bytes]) -> bytes:
    from_left = parse_direction(args[3])
    to_left = parse_direction(args[4])
    return _move_or_null(client, args, from_left, to_left)


@command(
    "rpoplpush", arity=3, flags="write denyoom", keys=(1, 2, 1), acl="@write @list @slow",
    group="list", since="1.2.0",
    summary="Returns the last element of a list after removing and pushing it to another "
    "list. Deletes the list if the last element was popped.",
    syntax="source destination",
)
def rpoplpush(client: Session, args: list[bytes]) -> bytes:
    return _move_or_null(client, args, False, True)


# ---------------------------------------------------------------------------------------------
# LMOVEM (8.10)
# ---------------------------------------------------------------------------------------------


@command(
    "lmovem", arity=-5, flags="write denyoom", keys=(1, 2, 1), acl="@write @list @slow",
    group="list", since="8.10.0",
    summary="Moves up to (or exactly) a number of elements from one list to another and "
    "returns them. Deletes the source list if it becomes empty.",
    complexity="O(N) where N is the number of elements moved.",
    syntax="source destination LEFT | RIGHT LEFT | RIGHT [COUNT count | EXACTLY exactly "
    "OBO | BULK]",
)
def lmovem(client: Session, args: list[bytes]) -> bytes:
    from_left = parse_direction(args[3])
    to_left = parse_direction(args[4])
    how = parse_how_many(args, 5, len(args))
    reply = movem_reply(client, args[1], args[2], from_left, to_left, how)
    return resp.null_array(client.protocol) if reply is None else reply


# ---------------------------------------------------------------------------------------------
# LMPOP
# ---------------------------------------------------------------------------------------------


@command(
    "lmpop", arity=-4, flags="write movablekeys", acl="@write @list @slow", group="list",
    since="7.0.0",
    summary="Returns multiple elements from a list after removing them. Deletes the list if "
    "the last element was popped.",
    complexity="O(N+M) where N is the number of provided keys and M is the number of elements "
    "returned.",
    syntax="numkeys key [key ...] LEFT | RIGHT [COUNT count]",
)
def lmpop(client: Session, args: list[bytes]) -> bytes:
    keys, left, count = parse_mpop_args(args, 2)
    reply = mpop_reply(client, keys, left, count)
    return resp.null_array(client.protocol) if reply is None else reply


COMMANDS["lmpop"].find_keys = lmpop_key_positions


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


@command(
    "llen", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@read @list @fast",
    group="list", summary="Returns the length of a list.", syntax="key",
)
def llen(client: Session, args: list[bytes]) -> bytes:
    found = _read_list(client.db, args[1])
    return resp.integer(len(found) if found is not None else 0)


def _clamp_range(size: int, start: int, end: int) -> tuple[int, int] | None:
    """Redis's range rule (LRANGE, LTRIM): negative indexes count from the end, the range is
    clipped to the list, and None means it is empty."""
    if start < 0:
        start += size
    if end < 0:
        end += size
    if start < 0:
        start = 0
    if start > end or start >= size:
        return None
    return start, min(end, size - 1)


def _slice(found: ListValue, start: int, end: int) -> list[bytes]:
    """Elements ``start..end`` (inclusive, in range), walked from the nearer end as a
    quicklist iterator starts."""
    return found.range(start, end + 1)


@command(
    "lrange", arity=4, flags="readonly", keys=(1, 1, 1), acl="@read @list @slow",
    group="list", summary="Returns a range of elements from a list.",
    complexity="O(S+N) where S is the distance of start offset from HEAD for small lists, from "
    "nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the "
    "specified range.",
    syntax="key start stop",
)
def lrange(client: Session, args: list[bytes]) -> bytes:
    start = parse_int(args[2])
    end = parse_int(args[3])
    found = _read_list(client.db, args[1])
    if found is None:
        return resp.EMPTY_ARRAY
    bounds = _clamp_range(len(found), start, end)
    if bounds is None:
        return resp.EMPTY_ARRAY
    return bulks(_slice(found, *bounds))


@command(
    "lindex", arity=3, flags="readonly", keys=(1, 1, 1), acl="@read @list @slow",
    group="list", summary="Returns an element from a list by its index.",
    complexity="O(N) where N is the number of elements to traverse to get to the element at "
    "index. This makes asking for the first or the last element of the list O(1).",
    syntax="key index",
)
def lindex(client: Session, args: list[bytes]) -> bytes:
    found = _read_list(client.db, args[1])  # the key first: a bad index on no list is null
    if found is None:
        return resp.null(client.protocol)
    index = parse_int(args[2])
    if not -len(found) <= index < len(found):
        return resp.null(client.protocol)
    return resp.bulk(found[index])


def _lpos_options(args: list[bytes]) -> tuple[int, int, int]:
    """LPOS's RANK, COUNT and MAXLEN, each checked as it is read: (rank, count, maxlen) with
    count -1 when COUNT was not given (0 means every match)."""
    rank, count, maxlen = 1, -1, 0
    position = 3
    while position < len(args):
        option = option_word(args[position])
        has_value = position + 1 < len(args)
        if option == b"rank" and has_value:
            rank = parse_int(args[position + 1])
            if rank == LONG_MIN:  # Redis 7.2+: -LONG_MIN would overflow its negation
                raise CommandError(RANK_RANGE)
            if rank == 0:
                raise CommandError(RANK_ZERO)
        elif option == b"count" and has_value:
            count = _non_negative(args[position + 1], COUNT_NEGATIVE)
        elif option == b"maxlen" and has_value:
            maxlen = _non_negative(args[position + 1], MAXLEN_NEGATIVE)
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 2
    return rank, count, maxlen


def _match_positions(found: ListValue, element: bytes, from_tail: bool,
                     maxlen: int) -> Iterator[int]:
    """Indexes of ``element`` in scan order, looking at no more than ``maxlen`` elements
    (0: all)."""
    return found.positions(element, from_tail, maxlen)


@command(
    "lpos", arity=-3, flags="readonly", keys=(1, 1, 1), acl="@read @list @slow",
    group="list", since="6.0.6", summary="Returns the index of matching elements in a list.",
    complexity="O(N) where N is the number of elements in the list, for the average case. When "
    "searching for elements near the head or the tail of the list, or when the MAXLEN option is "
    "provided, the command may run in constant time.",
    syntax="key element [RANK rank] [COUNT num-matches] [MAXLEN len]",
)
def lpos(client: Session, args: list[bytes]) -> bytes:
    rank, count, maxlen = _lpos_options(args)
    found = _read_list(client.db, args[1])
    if found is None:
        return resp.EMPTY_ARRAY if count != -1 else resp.null(client.protocol)
    skip = abs(rank) - 1
    positions = _match_positions(found, args[2], rank < 0, maxlen)
    if count == -1:
        first = next(islice(positions, skip, None), None)
        return resp.null(client.protocol) if first is None else resp.integer(first)
    stop = None if count == 0 else skip + count
    return _integers(list(islice(positions, skip, stop)))


# ---------------------------------------------------------------------------------------------
# Changing elements in place
# ---------------------------------------------------------------------------------------------


@command(
    "lset", arity=4, flags="write denyoom", keys=(1, 1, 1), acl="@write @list @slow",
    group="list", summary="Sets the value of an element in a list by its index.",
    complexity="O(N) where N is the length of the list. Setting either the first or the last "
    "element of the list is O(1).",
    syntax="key index element",
)
def lset(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    found = write_list(db, key)
    if found is None:
        raise CommandError(NO_SUCH_KEY)
    index = parse_int(args[2])
    found.growing([args[3]])  # Redis converts first, even for an index out of range
    if not -len(found) <= index < len(found):
        raise CommandError(INDEX_OUT_OF_RANGE)
    found[index] = args[3]
    written(client, key, LIST, b"lset")
    return resp.OK


@command(
    "linsert", arity=5, flags="write denyoom", keys=(1, 1, 1), acl="@write @list @slow",
    group="list", since="2.2.0",
    summary="Inserts an element before or after another element in a list.",
    complexity="O(N) where N is the number of elements to traverse before seeing the value "
    "pivot. This means that inserting somewhere on the left end on the list (head) can be "
    "considered O(1) and inserting somewhere on the right end (tail) is O(N).",
    syntax="key BEFORE | AFTER pivot element",
)
def linsert(client: Session, args: list[bytes]) -> bytes:
    where = option_word(args[2])
    if where != b"before" and where != b"after":
        raise CommandError(SYNTAX_ERROR)
    db = client.db
    key = args[1]
    found = write_list(db, key)
    if found is None:
        return resp.ZERO
    found.growing([args[4]])  # Redis converts first, even when the pivot is missing
    try:
        pivot = found.index(args[3])
    except ValueError:
        return resp.integer(-1)
    found.insert(pivot if where == b"before" else pivot + 1, args[4])
    elements_added(client, db, key, 1, b"linsert")
    return resp.integer(len(found))


@command(
    "lrem", arity=4, flags="write", keys=(1, 1, 1), acl="@write @list @slow", group="list",
    summary="Removes elements from a list. Deletes the list if the last element was removed.",
    complexity="O(N+M) where N is the length of the list and M is the number of elements "
    "removed.",
    syntax="key count element",
)
def lrem(client: Session, args: list[bytes]) -> bytes:
    limit = parse_int(args[2])
    if limit == LONG_MIN:  # Redis 8.0+: its negation would overflow (as LPOS's RANK)
        raise CommandError(RANK_RANGE)
    db = client.db
    key = args[1]
    found = write_list(db, key)
    if found is None:
        return resp.ZERO
    removed = found.remove_matches(args[3], limit)
    if removed:
        elements_removed(client, db, key, found, removed, b"lrem")
    return resp.integer(removed)


def _trim(found: ListValue, keep: tuple[int, int] | None) -> int:
    """Keep only elements ``keep`` (inclusive bounds, None for none); returns how many went."""
    if keep is None:
        return found.trim(0, 0)
    return found.trim(keep[0], keep[1] + 1)


@command(
    "ltrim", arity=4, flags="write", keys=(1, 1, 1), acl="@write @list @slow", group="list",
    summary="Removes elements from both ends a list. Deletes the list if all elements were "
    "trimmed.",
    complexity="O(N) where N is the number of elements to be removed by the operation.",
    syntax="key start stop",
)
def ltrim(client: Session, args: list[bytes]) -> bytes:
    start = parse_int(args[2])
    end = parse_int(args[3])
    db = client.db
    key = args[1]
    found = write_list(db, key)
    if found is None:
        return resp.OK
    removed = _trim(found, _clamp_range(len(found), start, end))
    elements_removed(client, db, key, found, removed, b"ltrim")  # even if nothing went, as Redis
    return resp.OK

