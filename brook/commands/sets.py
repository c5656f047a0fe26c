"""Set commands (SSCAN lives with the other SCAN commands).

A set is a :class:`brook.types.set.SetValue`, which keeps the encoding Redis would use
(intset, listpack, hashtable) and converts it as t_set.c does, so OBJECT ENCODING and the
order of replies match. An emptied set is deleted. SPOP persists what it removed (SREM, or DEL
when it took everything), never the random request itself.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Final, cast

from brook.commands.args import LONG_MAX, MAX_REPEATED_MEMBERS, parse_int
from brook.commands.registry import COMMANDS, SYNTAX_ERROR, CommandError, command, of_type
from brook.notify import SET, created, emptied, stored, written
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.types import native
from brook.types.set import HASHTABLE, INTSET, LISTPACK, SetValue

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session
    from brook.types._member_set import MemberSet as CMemberSet

NOT_POSITIVE = "ERR value is out of range, must be positive"
# SPOP persists its removals as SREMs of at most this many members (Redis's batch).
_SREM_BATCH = 1024
# SPOP rebuilds the set from what it keeps once it takes this many times more than it keeps.
_SPOP_MOVE_STRATEGY_MUL = 5
# Whether sets hold the C MemberSet (brook/types/_member_set.c), which writes its own replies.
_C_MEMBERS: Final = native.MemberSet is not None


def _members_reply(members: SetValue, proto: int) -> bytes:
    """A set's members as a set reply (:func:`resp.set_of_bulks`), which the compiled build's C
    MemberSet writes itself, with no bytes object per member."""
    if _C_MEMBERS:
        return cast("CMemberSet", members.members).reply(proto)
    return resp.set_of_bulks(members, proto)


def _read_set(db: Database, key: bytes) -> SetValue | None:
    """The set at ``key`` for a read command (counts hits/misses); WRONGTYPE otherwise."""
    return of_type(db.lookup_read(key), SetValue)  # type: ignore[return-value]


def _write_set(db: Database, key: bytes) -> SetValue | None:
    return of_type(db.lookup(key), SetValue)  # type: ignore[return-value]


def _add_key(client: Session, key: bytes, value: SetValue) -> None:
    """A new set under ``key`` (lookup already removed any expired value and its TTL)."""
    created(client, key)
    client.db.data[key] = value


# ---------------------------------------------------------------------------------------------
# Single-set commands
# ---------------------------------------------------------------------------------------------


@command(
    "sadd", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @set @fast",
    group="set", since="1.0.0",
    summary="Adds one or more members to a set. Creates the key if it doesn't exist.",
    complexity="O(1) for each element added, so O(N) to add N elements when the command is "
    "called with multiple arguments.",
    syntax="key member [member ...]",
)
def sadd(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    config = client.server.config
    members = _write_set(db, key)
    if members is None:
        members = SetValue.create(args[2], len(args) - 2, config)
        _add_key(client, key, members)
    else:
        members.prepare(len(args) - 2, config)
    added = 0
    for member in args[2:]:
        if members.add(member, config):
            added += 1
    if added:
        written(client, key, SET, b"sadd", added)
    return resp.integer(added)


@command(
    "srem", arity=-3, flags="write fast", keys=(1, 1, 1), acl="@write @set @fast",
    group="set", since="1.0.0",
    summary="Removes one or more members from a set. Deletes the set if the last member was "
    "removed.",
    complexity="O(N) where N is the number of members to be removed.",
    syntax="key member [member ...]",
)
def srem(client: Session, args: list[bytes]) -> bytes:
    key = args[1]
    members = _write_set(client.db, key)
    if members is None:
        return resp.ZERO
    removed = 0
    for member in args[2:]:
        if members.remove(member):
            removed += 1
            if not members:
                break
    if removed:
        written(client, key, SET, b"srem", removed)
        if not members:
            emptied(client, key)
    return resp.integer(removed)


@command(
    "smove", arity=4, flags="write fast", keys=(1, 2, 1), acl="@write @set @fast",
    group="set", since="1.0.0", summary="Moves a member from one set to another.",
    syntax="source destination member",
)
def smove(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    source_key, destination_key, member = args[1], args[2], args[3]
    source = db.lookup(source_key)
    destination = db.lookup(destination_key)
    if source is None:
        return resp.ZERO  # before any type check, as Redis
    of_type(source, SetValue)
    of_type(destination, SetValue)
    assert isinstance(source, SetValue)
    if source is destination:
        return resp.ONE if member in source else resp.ZERO
    if not source.remove(member):
        return resp.ZERO
    config = client.server.config
    written(client, source_key, SET, b"srem")
    if not source:
        emptied(client, source_key)
    if destination is None:
        destination = SetValue.create(member, 1, config)
        _add_key(client, destination_key, destination)
    assert isinstance(destination, SetValue)
    if destination.add(member, config):
        written(client, destination_key, SET, b"sadd")
    return resp.ONE


@command(
    "sismember", arity=3, flags="readonly fast", keys=(1, 1, 1), acl="@read @set @fast",
    group="set", since="1.0.0", summary="Determines whether a member belongs to a set.",
    syntax="key member",
)
def sismember(client: Session, args: list[bytes]) -> bytes:
    members = _read_set(client.db, args[1])
    return resp.ONE if members is not None and args[2] in members else resp.ZERO


@command(
    "smismember", arity=-3, flags="readonly fast", keys=(1, 1, 1), acl="@read @set @fast",
    group="set", since="6.2.0",
    summary="Determines whether multiple members belong to a set.",
    complexity="O(N) where N is the number of elements being checked for membership",
    syntax="key member [member ...]",
)
def smismember(client: Session, args: list[bytes]) -> bytes:
    members = _read_set(client.db, args[1]) or ()
    flags = [resp.ONE if member in members else resp.ZERO for member in args[2:]]
    return resp.array(flags)


@command(
    "scard", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@read @set @fast",
    group="set", since="1.0.0", summary="Returns the number of members in a set.",
    syntax="key",
)
def scard(client: Session, args: list[bytes]) -> bytes:
    members = _read_set(client.db, args[1])
    return resp.integer(len(members) if members is not None else 0)


@command(
    "smembers", arity=2, flags="readonly", keys=(1, 1, 1), acl="@read @set @slow",
    group="set", since="1.0.0", summary="Returns all members of a set.",
    complexity="O(N) where N is the set cardinality.", syntax="key",
)
def smembers(client: Session, args: list[bytes]) -> bytes:
    members = _read_set(client.db, args[1])
    if members is None:
        return resp.set_of_bulks((), client.protocol)
    return _members_reply(members, client.protocol)


# ---------------------------------------------------------------------------------------------
# Random members
# ---------------------------------------------------------------------------------------------


@command(
    "spop", arity=-2, flags="write fast", keys=(1, 1, 1), acl="@write @set @fast",
    group="set", since="1.0.0",
    summary="Returns one or more random members from a set after removing them. Deletes the "
    "set if the last member was popped.",
    complexity="Without the count argument O(1), otherwise O(N) where N is the value of the "
    "passed count.",
    syntax="key [count]",
)
def spop(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 3:
        raise CommandError(SYNTAX_ERROR)
    if len(args) == 3:
        return _spop_count(client, args[1], args[2])
    key = args[1]
    members = _write_set(client.db, key)
    if members is None:
        return resp.null(client.protocol)
    member = members.pop_random()
    written(client, key, SET, b"spop")
    propagate(client, [b"SREM", key, member])
    if not members:
        emptied(client, key)
    return resp.bulk(member)


def _spop_count(client: Session, key: bytes, count_arg: bytes) -> bytes:
    """spopWithCountCommand: pop ``count`` members (all of them deletes the key)."""
    count = parse_int(count_arg, NOT_POSITIVE)
    if count < 0:
        raise CommandError(NOT_POSITIVE)
    members = _write_set(client.db, key)
    if members is None or count == 0:
        return resp.set_of_bulks((), client.protocol)
    size = len(members)
    if count >= size:
        popped = list(members)
        written(client, key, SET, b"spop", size)
        emptied(client, key)
        propagate(client, [b"DEL", key])
        return resp.set_of_bulks(popped, client.protocol)
    remaining = size - count
    if remaining * _SPOP_MOVE_STRATEGY_MUL > count:
        popped = [members.pop_random() for _ in range(count)]
    else:
        # Taking most of the set: pick what stays, and the rest is what was popped.
        kept = [members.pop_random() for _ in range(remaining)]
        popped = list(members)
        members.shrink_to(kept, client.server.config)
    written(client, key, SET, b"spop", count)
    if client.server.propagating:
        propagate(client, *([b"SREM", key, *popped[start:start + _SREM_BATCH]]
                            for start in range(0, count, _SREM_BATCH)))
    return resp.set_of_bulks(popped, client.protocol)


@command(
    "srandmember", arity=-2, flags="readonly", keys=(1, 1, 1), acl="@read @set @slow",
    group="set", since="1.0.0", summary="Get one or multiple random members from a set",
    complexity="Without the count argument O(1), otherwise O(N) where N is the absolute value "
    "of the passed count.",
    syntax="key [count]",
)
def srandmember(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 3:
        raise CommandError(SYNTAX_ERROR)
    if len(args) == 2:
        members = _read_set(client.db, args[1])
        if members is None:
            return resp.null(client.protocol)
        return resp.bulk(members.random_member())
    count = parse_int(args[2])
    if count < -LONG_MAX:
        raise CommandError(
            f"ERR value is out of range, value must between {-LONG_MAX} and {LONG_MAX}")
    members = _read_set(client.db, args[1])
    if members is None or count == 0:
        return resp.EMPTY_ARRAY
    if count < 0:
        if -count > MAX_REPEATED_MEMBERS:
            raise CommandError("ERR value is out of range")
        pick = members.random_member
        return resp.array_of_bulks([pick() for _ in range(-count)])
    return resp.array_of_bulks(_distinct_random(members, count))


def _distinct_random(members: SetValue, count: int) -> list[bytes]:
    """``count`` different members: all of them (in the set's order) when it asks for at least
    as many. A small set, or a count that is a large part of the set, is sampled from its
    listing, keeping the set's order (as Redis's forward walk of a listpack does); a few
    members of a large set are drawn one by one until distinct."""
    size = len(members)
    if count >= size:
        return list(members)
    if count == 1:
        return [members.random_member()]
    if members.kind != HASHTABLE or count * 3 > size:
        listed = list(members)
        return [listed[i] for i in sorted(random.sample(range(size), count))]
    distinct: dict[bytes, None] = {}
    pick = members.random_member
    while len(distinct) < count:
        distinct[pick()] = None
    return list(distinct)


# ---------------------------------------------------------------------------------------------
# Several sets
# ---------------------------------------------------------------------------------------------


def _sets_of(db: Database, keys: list[bytes]) -> list[SetValue | None]:
    """The sets (None for missing keys), each type-checked in order, as Redis reads them."""
    return [of_type(db.lookup_read(key), SetValue) for key in keys]  # type: ignore[misc]


def _store(client: Session, destination: bytes, result: SetValue, event: bytes) -> bytes:
    stored(client, destination, result, SET, event)
    return resp.integer(len(result))


def _intersection(sets: list[SetValue]) -> list[bytes]:
    """The members of the smallest set that every other set has, in the smallest's order."""
    ordered = sorted(sets, key=len)
    first, others = ordered[0], [s for s in ordered[1:] if s is not ordered[0]]
    return first.select(others, True)


def _inter(client: Session, keys: list[bytes], destination: bytes | None) -> bytes:
    sets = _sets_of(client.db, keys)
    present = [s for s in sets if s is not None]
    if len(present) < len(sets):
        if destination is not None:
            return _store(client, destination, SetValue(), b"sinterstore")
        return resp.set_of_bulks((), client.protocol)
    found = _intersection(present)
    if destination is None:
        return resp.set_of_bulks(found, client.protocol)
    smallest = min(present, key=len)
    config = client.server.config
    result = SetValue(kind=INTSET if smallest.kind == INTSET else LISTPACK)
    for member in found:
        result.add(member, config)
    result.compact_integers(config)  # maybeConvertToIntset
    return _store(client, destination, result, b"sinterstore")


@command(
    "sinter", arity=-2, flags="readonly", keys=(1, -1, 1), acl="@read @set @slow",
    group="set", since="1.0.0", summary="Returns the intersect of multiple sets.",
    complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is the "
    "number of sets.",
    syntax="key [key ...]",
)
def sinter(client: Session, args: list[bytes]) -> bytes:
    return _inter(client, args[1:], None)


@command(
    "sinterstore", arity=-3, flags="write denyoom", keys=(1, -1, 1),
    acl="@write @set @slow", group="set", since="1.0.0",
    summary="Stores the intersect of multiple sets in a key.",
    complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is the "
    "number of sets.",
    syntax="destination key [key ...]",
)
def sinterstore(client: Session, args: list[bytes]) -> bytes:
    return _inter(client, args[2:], args[1])


@command(
    "sintercard", arity=-3, flags="readonly movablekeys", acl="@read @set @slow",
    group="set", since="7.0.0", summary="Returns the number of members of the intersect of "
    "multiple sets.",
    complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is the "
    "number of sets.",
    syntax="numkeys key [key ...] [LIMIT limit]",
)
def sintercard(client: Session, args: list[bytes]) -> bytes:
    numkeys = parse_int(args[1], "ERR numkeys should be greater than 0")
    if numkeys < 1:
        raise CommandError("ERR numkeys should be greater than 0")
    if numkeys > len(args) - 2:
        raise CommandError("ERR Number of keys can't be greater than number of args")
    limit = 0
    position = 2 + numkeys
    while position < len(args):
        if args[position].lower() == b"limit" and position + 1 < len(args):
            limit = parse_int(args[position + 1], "ERR LIMIT can't be negative")
            if limit < 0:
                raise CommandError("ERR LIMIT can't be negative")
            position += 2
        else:
            raise CommandError(SYNTAX_ERROR)
    sets = _sets_of(client.db, args[2:2 + numkeys])
    if any(s is None for s in sets):
        return resp.ZERO
    ordered: list[SetValue] = sorted(sets, key=len)  # type: ignore[arg-type]
    first = ordered[0]
    others = [s for s in ordered[1:] if s is not first]
    return resp.integer(len(first.select(others, True, limit)))


def sintercard_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """SINTERCARD's keys: numkeys of them after numkeys (none when numkeys is unusable)."""
    try:
        numkeys = int(args[1]) if argc > 1 else 0
    except ValueError:
        return []
    if numkeys < 1 or numkeys > argc - 2:
        return []
    return list(range(2, 2 + numkeys))


COMMANDS["sintercard"].find_keys = sintercard_key_positions


def _union_or_diff(client: Session, keys: list[bytes], destination: bytes | None,
                   union: bool) -> bytes:
    """sunionDiffGenericCommand. The result starts as an empty intset and converts as members
    join it, as Redis's does; without a destination, any listpack or hash table among the
    inputs makes it a hash table (in the hash table's order, as Redis's)."""
    sets = _sets_of(client.db, keys)
    config = client.server.config
    kind = INTSET
    if destination is None and any(s is not None and s.kind != INTSET for s in sets):
        kind = HASHTABLE
    result = SetValue(kind=kind)
    first = sets[0]
    if union:
        for members in sets:
            for member in members or ():
                result.add(member, config)
    elif first is not None and not any(s is first for s in sets[1:]):
        others = [s for s in sets[1:] if s is not None]
        for member in first.select(others, False):
            result.add(member, config)
    if destination is not None:
        return _store(client, destination, result, b"sunionstore" if union else b"sdiffstore")
    return _members_reply(result, client.protocol)


@command(
    "sunion", arity=-2, flags="readonly", keys=(1, -1, 1), acl="@read @set @slow",
    group="set", since="1.0.0", summary="Returns the union of multiple sets.",
    complexity="O(N) where N is the total number of elements in all given sets.",
    syntax="key [key ...]",
)
def sunion(client: Session, args: list[bytes]) -> bytes:
    return _union_or_diff(client, args[1:], None, True)


@command(
    "sunionstore", arity=-3, flags="write denyoom", keys=(1, -1, 1),
    acl="@write @set @slow", group="set", since="1.0.0",
    summary="Stores the union of multiple sets in a key.",
    complexity="O(N) where N is the total number of elements in all given sets.",
    syntax="destination key [key ...]",
)
def sunionstore(client: Session, args: list[bytes]) -> bytes:
    return _union_or_diff(client, args[2:], args[1], True)


@command(
    "sdiff", arity=-2, flags="readonly", keys=(1, -1, 1), acl="@read @set @slow",
    group="set", since="1.0.0", summary="Returns the difference of multiple sets.",
    complexity="O(N) where N is the total number of elements in all given sets.",
    syntax="key [key ...]",
)
def sdiff(client: Session, args: list[bytes]) -> bytes:
    return _union_or_diff(client, args[1:], None, False)


@command(
    "sdiffstore", arity=-3, flags="write denyoom", keys=(1, -1, 1),
    acl="@write @set @slow", group="set", since="1.0.0",
    summary="Stores the difference of multiple sets in a key.",
    complexity="O(N) where N is the total number of elements in all given sets.",
    syntax="destination key [key ...]",
)
def sdiffstore(client: Session, args: list[bytes]) -> bytes:
    return _union_or_diff(client, args[2:], args[1], False)

