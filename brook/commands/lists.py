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
module-level functions returning the reply bytes (None when there is nothing to pop), so the
blocking forms run exactly the code the plain forms do:
:func:`pop_reply` (BLPOP/BRPOP), :func:`move_reply` (BLMOVE/BRPOPLPUSH), :func:`mpop_reply`
with :func:`parse_mpop_args` (BLMPOP) and :func:`parse_direction`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice
from typing import TYPE_CHECKING, Final

from brook.commands.args import LONG_MAX, LONG_MIN, parse_int
from brook.commands.registry import (
    COMMANDS,
    NO_SUCH_KEY,
    SYNTAX_ERROR,
    CommandError,
    command,
    of_type,
)
from brook.notify import GENERIC, LIST, created, emptied, notify, written
from brook.persistence.effects import propagate
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
NUMKEYS_ERROR: Final = "ERR numkeys should be greater than 0"
MPOP_COUNT_ERROR: Final = "ERR count should be greater than 0"

_PUSH_COMPLEXITY: Final = (
    "O(1) for each element added, so O(N) to add N elements when the command is called with "
    "multiple arguments."
)


# ---------------------------------------------------------------------------------------------
# Lookups and the bookkeeping every writer shares.
# ---------------------------------------------------------------------------------------------


def _read_list(db: Database, key: bytes) -> ListValue | None:
    """The list at ``key`` for a read command (counts keyspace hits/misses); WRONGTYPE for
    other types."""
    return of_type(db.lookup_read(key), ListValue)  # type: ignore[return-value]


def _write_list(db: Database, key: bytes) -> ListValue | None:
    """The list at ``key`` for a write command (Redis's lookupKeyWrite: no hit/miss count)."""
    return of_type(db.lookup(key), ListValue)  # type: ignore[return-value]


def _write_list_or_create(client: Session, key: bytes) -> ListValue:
    """The general path of a push: expiry, WRONGTYPE, and a new empty list for a missing key
    (the caller adds to it at once, so no empty list is ever visible)."""
    db = client.db
    found = _write_list(db, key)
    if found is None:
        created(client, key)
        found = db.data[key] = ListValue()  # lookup removed any expired value and its TTL
    return found


def _added(client: Session, db: Database, key: bytes, count: int, event: bytes) -> None:
    """After elements went in: WATCH, clients parked on the key, the keyspace event, the
    dirty counter."""
    written(client, key, LIST, event, count, ready=True)


def _removed(client: Session, db: Database, key: bytes, found: ListValue, count: int,
             event: bytes) -> None:
    """After elements went out: the keyspace event, then an emptied list is deleted (which
    signals WATCH; event ``del``), otherwise the key is marked modified; ``count`` elements
    count as changes."""
    written(client, key, LIST, event, count)
    if not found.size:
        emptied(client, key)


def _take(found: ListValue, left: bool, count: int) -> list[bytes]:
    """Pop up to ``count`` elements from one end, in the order they are popped."""
    return found.popmany(count, left)


def _option(arg: bytes) -> bytes:
    """An option word as Redis's ``strcasecmp`` sees it: lower-cased, up to an embedded NUL."""
    if b"\0" in arg:
        arg = arg.split(b"\0", 1)[0]
    return arg.lower()


def _non_negative(arg: bytes, message: str) -> int:
    """Redis's getPositiveLongFromObjectOrReply: the same message for non-numbers and < 0."""
    value = parse_int(arg, message)
    if value < 0:
        raise CommandError(message)
    return value


def _at_least_one(arg: bytes, message: str) -> int:
    """Redis's getRangeLongFromObjectOrReply(1, LONG_MAX, message)."""
    value = parse_int(arg, message)
    if value < 1:
        raise CommandError(message)
    return value


# "$<n>" for small n: an array reply is then one "\r\n".join over headers and elements.
_BULK_PREFIXES: Final = [b"$%d" % n for n in range(4096)]


def _bulks(items: list[bytes]) -> bytes:
    """An array of bulk strings, built by C-level loops only (LRANGE's reply: twice as fast
    as formatting each element)."""
    count = len(items)
    if not count:
        return resp.EMPTY_ARRAY
    sizes = list(map(len, items))
    if max(sizes) >= 4096:
        return resp.array_of_bulks(items)
    parts: list[bytes] = [b""] * (2 * count)
    parts[::2] = map(_BULK_PREFIXES.__getitem__, sizes)
    parts[1::2] = items
    return b"*%d\r\n%s\r\n" % (count, b"\r\n".join(parts))


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
        found = _write_list_or_create(client, key)
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
        found = _write_list_or_create(client, key)
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
    found = _write_list(db, key)
    if found is None:
        return resp.ZERO
    size = found.extendleft(args[2:]) if left else found.extend(args[2:])
    _added(client, db, key, len(args) - 2, b"lpush" if left else b"rpush")
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
        found = _write_list(db, key)
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
    found = _write_list(db, key)
    if found is None:
        return resp.null_array(client.protocol)
    if not count:
        return resp.EMPTY_ARRAY
    items = _take(found, left, count)
    _removed(client, db, key, found, len(items), b"lpop" if left else b"rpop")
    return _bulks(items)


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


def pop_reply(client: Session, key: bytes, left: bool) -> bytes | None:
    """BLPOP/BRPOP's pop: ``*2 key element``, or None when ``key`` holds no list.

    Raises CommandError(WRONGTYPE) when the key holds another type."""
    db = client.db
    found = _write_list(db, key)
    if found is None:
        return None
    element = found.popleft() if left else found.pop()
    _removed(client, db, key, found, 1, b"lpop" if left else b"rpop")
    propagate(client, [b"LPOP" if left else b"RPOP", key])  # BLPOP/BRPOP persist as pops
    return b"*2\r\n" + resp.bulk(key) + resp.bulk(element)


# ---------------------------------------------------------------------------------------------
# LMOVE / RPOPLPUSH
# ---------------------------------------------------------------------------------------------


def parse_direction(arg: bytes) -> bool:
    """LEFT (True) or RIGHT (False), case-insensitively; Redis's syntax error otherwise."""
    word = _option(arg)
    if word == b"left":
        return True
    if word == b"right":
        return False
    raise CommandError(SYNTAX_ERROR)


def move_reply(client: Session, source: bytes, destination: bytes, from_left: bool,
               to_left: bool) -> bytes | None:
    """LMOVE: pop from ``source``, push onto ``destination``, reply with the element (a bulk
    string); None when ``source`` holds no list.

    As Redis's lmoveGenericCommand: the source's type is checked first and the destination's
    only once there is an element to move. The destination is pushed before the source is
    found empty, so moving within one list (rotation) never deletes it."""
    db = client.db
    found = _write_list(db, source)
    if found is None:
        return None
    target = _write_list(db, destination)
    element = found.popleft() if from_left else found.pop()
    if target is None:
        target = _write_list_or_create(client, destination)
    if to_left:
        target.appendleft(element)
    else:
        target.append(element)
    _added(client, db, destination, 0, b"lpush" if to_left else b"rpush")
    _removed(client, db, source, found, 1, b"lpop" if from_left else b"rpop")
    return resp.bulk(element)


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


class HowMany:
    """LMOVEM's optional ``COUNT n | EXACTLY n`` and ``OBO | BULK`` (one element by default)."""

    __slots__ = ("count", "exactly", "one_by_one")

    def __init__(self, count: int = 1, exactly: bool = False, one_by_one: bool = True) -> None:
        self.count = count
        self.exactly = exactly
        self.one_by_one = one_by_one

    def needed(self) -> int:
        """Elements the source must hold for a move: BLMOVEM waits until it does."""
        return self.count if self.exactly else 1


def parse_how_many(args: list[bytes], start: int, end: int) -> HowMany:
    """``args[start:end]``: nothing, or a selector with its positive count and an ordering
    (Redis 8.10's lmovemParseOptions: both parts or neither)."""
    if start == end:
        return HowMany()
    if end - start != 3:
        raise CommandError(SYNTAX_ERROR)
    selector = _option(args[start])
    if selector not in (b"count", b"exactly"):
        raise CommandError(SYNTAX_ERROR)
    count = _at_least_one(args[start + 1], MPOP_COUNT_ERROR)
    ordering = _option(args[start + 2])
    if ordering not in (b"obo", b"bulk"):
        raise CommandError(SYNTAX_ERROR)
    return HowMany(count, selector == b"exactly", ordering == b"obo")


def movem_reply(client: Session, source: bytes, destination: bytes, from_left: bool,
                to_left: bool, how: HowMany) -> bytes | None:
    """LMOVEM: the moved elements in destination order (left to right), None when nothing
    moves (no source, or fewer than EXACTLY elements).

    As Redis 8.10: the source's type is checked first, the shortfall next, then the
    destination's type, all before anything moves. Every element is popped before any is
    pushed, so a move within one list takes the batch out first. OBO pushes them one by one
    in pop order; BULK pushes the batch keeping the order it had in the source."""
    db = client.db
    found = _write_list(db, source)
    if found is None or (how.exactly and len(found) < how.count):
        return None
    target = found if destination == source else _write_list(db, destination)
    popped = _take(found, from_left, min(how.count, len(found)))
    if how.one_by_one:
        arranged = popped[::-1] if to_left else popped
    else:
        arranged = popped if from_left else popped[::-1]
    if target is None:
        target = _write_list_or_create(client, destination)
    if to_left:
        target.extendleft(arranged[::-1])
    else:
        target.extend(arranged)
    _added(client, db, destination, 0, b"lpush" if to_left else b"rpush")
    _removed(client, db, source, found, len(popped), b"lpop" if from_left else b"rpop")
    if client.server.propagating:  # what moved, as plain pops and pushes
        propagate(
            client,
            [b"LPOP" if from_left else b"RPOP", source, b"%d" % len(popped)],
            [b"LPUSH", destination, *arranged[::-1]] if to_left
            else [b"RPUSH", destination, *arranged],
        )
    return resp.array_of_bulks(arranged)


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


def parse_mpop_args(args: list[bytes], first_key_index: int,
                    parse_where: Callable[[bytes], bool] = parse_direction,
                    ) -> tuple[list[bytes], bool, int]:
    """LMPOP's (and BLMPOP's) ``numkeys key [key ...] LEFT | RIGHT [COUNT count]``, where
    ``numkeys`` is ``args[first_key_index - 1]``: (keys, left, count), count 1 by default.
    ZMPOP/BZMPOP have the same shape with MIN | MAX (``parse_where``).

    Redis's lmpopGenericCommand order: numkeys, then the direction (a syntax error when the
    keys run past the end), then COUNT, given at most once."""
    numkeys = _at_least_one(args[first_key_index - 1], NUMKEYS_ERROR)
    where = first_key_index + numkeys
    if where >= len(args):
        raise CommandError(SYNTAX_ERROR)
    left = parse_where(args[where])
    count = -1
    position = where + 1
    while position < len(args):
        if count == -1 and position + 1 < len(args) and _option(args[position]) == b"count":
            count = _at_least_one(args[position + 1], MPOP_COUNT_ERROR)
            position += 2
        else:
            raise CommandError(SYNTAX_ERROR)
    return args[first_key_index:where], left, 1 if count == -1 else count


def mpop_reply(client: Session, keys: list[bytes], left: bool, count: int) -> bytes | None:
    """LMPOP: ``*2 key *n elements`` from the first key holding a list, or None when none
    does. A key of another type met before that is Redis's WRONGTYPE."""
    db = client.db
    for key in keys:
        found = _write_list(db, key)
        if found is None:
            continue
        items = _take(found, left, count)
        _removed(client, db, key, found, len(items), b"lpop" if left else b"rpop")
        propagate(client, [b"LPOP" if left else b"RPOP", key, b"%d" % len(items)])
        return b"*2\r\n" + resp.bulk(key) + _bulks(items)
    return None


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


_ATOI_PREFIX: Final = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _atoi(arg: bytes) -> int:
    """C's atoi, which Redis's lmpopGetKeys applies to numkeys: leading digits only, 0 for
    none, the low 32 bits of a saturated long beyond int range."""
    match = _ATOI_PREFIX.match(arg)
    if match is None:
        return 0
    value = max(LONG_MIN, min(LONG_MAX, int(match.group(1))))
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def lmpop_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """LMPOP's keys for COMMAND GETKEYS (``args[0]`` is the command): numkeys keys from
    index 2, none when numkeys is below 1 or names more arguments than there are."""
    numkeys = _atoi(args[1]) if argc > 1 else 0
    if numkeys < 1 or numkeys > argc - 2:
        return []
    return list(range(2, 2 + numkeys))


COMMANDS["lmpop"].find_keys = lmpop_key_positions


def blmpop_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """BLMPOP's and BZMPOP's keys: LMPOP's, one argument further (the timeout comes first)."""
    return [position + 1 for position in lmpop_key_positions(argc - 1, args[1:])]


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
    return _bulks(_slice(found, *bounds))


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
        option = _option(args[position])
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
    found = _write_list(db, key)
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
    where = _option(args[2])
    if where != b"before" and where != b"after":
        raise CommandError(SYNTAX_ERROR)
    db = client.db
    key = args[1]
    found = _write_list(db, key)
    if found is None:
        return resp.ZERO
    found.growing([args[4]])  # Redis converts first, even when the pivot is missing
    try:
        pivot = found.index(args[3])
    except ValueError:
        return resp.integer(-1)
    found.insert(pivot if where == b"before" else pivot + 1, args[4])
    _added(client, db, key, 1, b"linsert")
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
    found = _write_list(db, key)
    if found is None:
        return resp.ZERO
    removed = found.remove_matches(args[3], limit)
    if removed:
        _removed(client, db, key, found, removed, b"lrem")
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
    found = _write_list(db, key)
    if found is None:
        return resp.OK
    removed = _trim(found, _clamp_range(len(found), start, end))
    _removed(client, db, key, found, removed, b"ltrim")  # even if nothing went, as Redis
    return resp.OK

