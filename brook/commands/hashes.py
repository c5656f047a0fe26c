"""Hash commands (HSCAN lives with the other SCAN commands).

A hash is a :class:`brook.types.hash.Hash` (a dict that remembers whether Redis would have
converted it from listpack to hashtable encoding). Fields keep insertion order, as a listpack
does. An emptied hash is deleted: Redis never keeps empty aggregates.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from brook.commands.args import (
    LONG_MAX,
    LONG_MIN,
    MAX_REPEATED_MEMBERS,
    parse_int,
)
from brook.commands.registry import NOT_FLOAT, SYNTAX_ERROR, CommandError, command, of_type
from brook.notify import GENERIC, HASH, created, notify, written
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.types.hash import Hash
from brook.types.long_double import CURRENT_NOT_FLOAT, INCREMENT_NOT_FLOAT, incr_by_float

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session

HASH_NOT_INTEGER = "ERR hash value is not an integer"
HASH_NOT_FLOAT = "ERR hash value is not a float"
OVERFLOW = "ERR increment or decrement would overflow"


def _read_hash(db: Database, key: bytes) -> Hash | None:
    """The hash at ``key`` for a read command (counts keyspace hits/misses); WRONGTYPE for
    other types."""
    return of_type(db.lookup_read(key), Hash)  # type: ignore[return-value]


def _write_hash(db: Database, key: bytes) -> Hash | None:
    """The hash at ``key`` for a write command (no hit/miss counting)."""
    return of_type(db.lookup(key), Hash)  # type: ignore[return-value]


def _write_hash_or_create(client: Session, key: bytes) -> Hash:
    """Redis's hashTypeLookupWriteOrCreate: an absent key gets a new, empty listpack hash."""
    db = client.db
    found = _write_hash(db, key)
    if found is not None:
        return found
    fresh = Hash()
    created(client, key)
    db.data[key] = fresh  # lookup already removed any expired value and its TTL
    return fresh


def _store_field(client: Session, hash_: Hash, field: bytes, value: bytes) -> None:
    """Set one field as Redis's hashTypeSet does, converting the encoding when needed."""
    config = client.server.config
    hash_.check_lengths([field, value], config.hash_max_listpack_value)
    hash_[field] = value
    hash_.check_size(config.hash_max_listpack_entries)


def _check_pairs(args: list[bytes], name: str) -> None:
    if len(args) & 1:
        raise CommandError(f"ERR wrong number of arguments for '{name}' command")


def _set_fields(client: Session, args: list[bytes]) -> int:
    """HSET/HMSET: store every pair; returns how many fields are new."""
    key = args[1]
    hash_ = _write_hash_or_create(client, key)
    config = client.server.config
    if not hash_.is_hashtable:
        # Redis's hashTypeTryConversion: more pairs than a listpack holds (duplicates
        # included) or any long field/value converts the hash before the insertion.
        if (len(args) - 2) >> 1 > config.hash_max_listpack_entries:
            hash_.is_hashtable = True
        else:
            hash_.check_lengths(args[2:], config.hash_max_listpack_value)
    before = len(hash_)
    hash_.update(zip(args[2::2], args[3::2], strict=True))
    hash_.check_size(config.hash_max_listpack_entries)
    written(client, key, HASH, b"hset", (len(args) - 2) >> 1)
    return len(hash_) - before


@command(
    "hset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @hash @fast",
    group="hash", since="2.0.0", summary="Creates or modifies the value of a field in a hash.",
    complexity="O(1) for each field/value pair added, so O(N) to add N field/value pairs when "
    "the command is called with multiple field/value pairs.",
    syntax="key field value [field value ...]",
)
def hset(client: Session, args: list[bytes]) -> bytes:
    _check_pairs(args, "hset")
    return resp.integer(_set_fields(client, args))


@command(
    "hmset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @hash @fast",
    group="hash", since="2.0.0", summary="Sets the values of multiple fields.",
    complexity="O(N) where N is the number of fields being set.",
    syntax="key field value [field value ...]",
)
def hmset(client: Session, args: list[bytes]) -> bytes:
    _check_pairs(args, "hmset")
    _set_fields(client, args)
    return resp.OK


@command(
    "hsetnx", arity=4, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @hash @fast",
    group="hash", since="2.0.0",
    summary="Sets the value of a field in a hash only when the field doesn't exist.",
    syntax="key field value",
)
def hsetnx(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key, field = args[1], args[2]
    hash_ = _write_hash(db, key)
    if hash_ is not None and field in hash_:
        return resp.ZERO
    if hash_ is None:
        hash_ = _write_hash_or_create(client, key)
    _store_field(client, hash_, field, args[3])
    written(client, key, HASH, b"hset")
    return resp.ONE


@command(
    "hget", arity=3, flags="readonly fast", keys=(1, 1, 1), acl="@read @hash @fast",
    group="hash", since="2.0.0", summary="Returns the value of a field in a hash.",
    syntax="key field",
)
def hget(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    value = hash_.get(args[2]) if hash_ is not None else None
    return resp.bulk_or_null(value, client.protocol)


@command(
    "hmget", arity=-3, flags="readonly fast", keys=(1, 1, 1), acl="@read @hash @fast",
    group="hash", since="2.0.0", summary="Returns the values of all fields in a hash.",
    complexity="O(N) where N is the number of fields being requested.",
    syntax="key field [field ...]",
)
def hmget(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    fields = args[2:]
    if hash_ is None:
        values: list[bytes | None] = [None] * len(fields)
    else:
        values = [hash_.get(field) for field in fields]
    return resp.array_of_bulks_or_nulls(values, client.protocol)


def _pairs_reply(items: list[tuple[bytes, bytes]], protocol: int) -> bytes:
    """Field/value pairs: a flat array in RESP2, a map in RESP3."""
    header = b"*%d\r\n" % (2 * len(items)) if protocol == 2 else b"%%%d\r\n" % len(items)
    parts = [
        b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(field), field, len(value), value)
        for field, value in items
    ]
    return header + b"".join(parts)


@command(
    "hgetall", arity=2, flags="readonly", keys=(1, 1, 1), acl="@read @hash @slow",
    group="hash", since="2.0.0", summary="Returns all fields and values in a hash.",
    complexity="O(N) where N is the size of the hash.", syntax="key",
)
def hgetall(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    return _pairs_reply(list(hash_.items()) if hash_ else [], client.protocol)


@command(
    "hkeys", arity=2, flags="readonly", keys=(1, 1, 1), acl="@read @hash @slow",
    group="hash", since="2.0.0", summary="Returns all fields in a hash.",
    complexity="O(N) where N is the size of the hash.", syntax="key",
)
def hkeys(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    return resp.array_of_bulks(hash_.keys() if hash_ else ())


@command(
    "hvals", arity=2, flags="readonly", keys=(1, 1, 1), acl="@read @hash @slow",
    group="hash", since="2.0.0", summary="Returns all values in a hash.",
    complexity="O(N) where N is the size of the hash.", syntax="key",
)
def hvals(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    return resp.array_of_bulks(hash_.values() if hash_ else ())


@command(
    "hdel", arity=-3, flags="write fast", keys=(1, 1, 1), acl="@write @hash @fast",
    group="hash", since="2.0.0",
    summary="Deletes one or more fields and their values from a hash. Deletes the hash if no "
    "fields remain.",
    complexity="O(N) where N is the number of fields to be removed.",
    syntax="key field [field ...]",
)
def hdel(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    hash_ = _write_hash(db, key)
    if hash_ is None:
        return resp.ZERO
    deleted = 0
    for field in args[2:]:
        if hash_.pop(field, None) is not None:
            deleted += 1
            if not hash_:
                break
    if deleted:
        written(client, key, HASH, b"hdel", deleted)
        if not hash_:
            db.delete(key)
            notify(client, GENERIC, b"del", key)
    return resp.integer(deleted)


@command(
    "hlen", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@read @hash @fast",
    group="hash", since="2.0.0", summary="Returns the number of fields in a hash.",
    syntax="key",
)
def hlen(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    return resp.integer(len(hash_) if hash_ else 0)


@command(
    "hexists", arity=3, flags="readonly fast", keys=(1, 1, 1), acl="@read @hash @fast",
    group="hash", since="2.0.0", summary="Determines whether a field exists in a hash.",
    syntax="key field",
)
def hexists(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    return resp.ONE if hash_ is not None and args[2] in hash_ else resp.ZERO


@command(
    "hstrlen", arity=3, flags="readonly fast", keys=(1, 1, 1), acl="@read @hash @fast",
    group="hash", since="3.2.0", summary="Returns the length of the value of a field.",
    syntax="key field",
)
def hstrlen(client: Session, args: list[bytes]) -> bytes:
    hash_ = _read_hash(client.db, args[1])
    value = hash_.get(args[2]) if hash_ is not None else None
    return resp.integer(0 if value is None else len(value))


@command(
    "hincrby", arity=4, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @hash @fast",
    group="hash", since="2.0.0",
    summary="Increments the integer value of a field in a hash by a number. Uses 0 as initial "
    "value if the field doesn't exist.",
    syntax="key field increment",
)
def hincrby(client: Session, args: list[bytes]) -> bytes:
    increment = parse_int(args[3])
    db = client.db
    key, field = args[1], args[2]
    hash_ = _write_hash(db, key)
    current = hash_.get(field) if hash_ is not None else None
    number = 0 if current is None else parse_int(current, HASH_NOT_INTEGER)
    number += increment
    if not LONG_MIN <= number <= LONG_MAX:
        raise CommandError(OVERFLOW)
    if hash_ is None:
        hash_ = _write_hash_or_create(client, key)
    _store_field(client, hash_, field, b"%d" % number)
    written(client, key, HASH, b"hincrby")
    return resp.integer(number)


@command(
    "hincrbyfloat", arity=4, flags="write denyoom fast", keys=(1, 1, 1),
    acl="@write @hash @fast", group="hash", since="2.6.0",
    summary="Increments the floating point value of a field by a number. Uses 0 as initial "
    "value if the field doesn't exist.",
    syntax="key field increment",
)
def hincrbyfloat(client: Session, args: list[bytes]) -> bytes:
    increment = args[3]
    # Redis reads the increment before it looks the key up (a bad one is refused before
    # WRONGTYPE and expires nothing): 0 + increment, which is the result for a new field.
    text = incr_by_float(None, increment)
    if isinstance(text, int):  # not a number, or infinite
        raise CommandError(NOT_FLOAT if text == INCREMENT_NOT_FLOAT else "ERR value is NaN or Infinity")
    db = client.db
    key, field = args[1], args[2]
    hash_ = _write_hash(db, key)
    current = hash_.get(field) if hash_ is not None else None
    if current is not None:
        text = incr_by_float(current, increment)
        if isinstance(text, int):  # the increment was read above: the field's value or the sum
            raise CommandError(HASH_NOT_FLOAT if text == CURRENT_NOT_FLOAT
                               else "ERR increment would produce NaN or Infinity")
    if hash_ is None:
        hash_ = _write_hash_or_create(client, key)
    _store_field(client, hash_, field, text)
    written(client, key, HASH, b"hincrbyfloat")
    propagate(client, [b"HSET", key, field, text])  # the result, as Redis persists it
    return resp.bulk(text)


# HRANDFIELD's count may not exceed this with WITHVALUES (twice that many replies).
_HALF_LONG_MAX = LONG_MAX // 2
# Up to this many fields, listing a hash is cheaper than keeping a field index for it.
_SMALL_HASH = 64


@command(
    "hrandfield", arity=-2, flags="readonly", keys=(1, 1, 1), acl="@read @hash @slow",
    group="hash", since="6.2.0", summary="Returns one or more random fields from a hash.",
    complexity="O(N) where N is the number of fields returned",
    syntax="key [count [WITHVALUES]]",
)
def hrandfield(client: Session, args: list[bytes]) -> bytes:
    if len(args) == 2:
        hash_ = _read_hash(client.db, args[1])
        if hash_ is None:
            return resp.null(client.protocol)
        if len(hash_) <= _SMALL_HASH:
            return resp.bulk(random.choice(list(hash_)))
        picked = client.db.field_index(args[1], hash_).random_key()
        assert picked is not None  # the hash has fields
        return resp.bulk(picked)
    count = parse_int(args[2])
    if count < -LONG_MAX:
        raise CommandError(
            f"ERR value is out of range, value must between {-LONG_MAX} and {LONG_MAX}"
        )
    if len(args) > 4 or (len(args) == 4 and args[3].lower() != b"withvalues"):
        raise CommandError(SYNTAX_ERROR)
    with_values = len(args) == 4
    if with_values and not -_HALF_LONG_MAX <= count <= _HALF_LONG_MAX:
        raise CommandError("ERR value is out of range")
    hash_ = _read_hash(client.db, args[1])
    if hash_ is None or count == 0:
        return resp.EMPTY_ARRAY
    if -count > MAX_REPEATED_MEMBERS:
        raise CommandError("ERR value is out of range")
    fields = _random_fields(client.db, args[1], hash_, count)
    return _random_reply(hash_, fields, with_values, client.protocol)


def _random_fields(db: Database, key: bytes, hash_: Hash, count: int) -> list[bytes]:
    """A negative count may repeat fields; a positive one returns distinct fields, the whole
    hash (in its order) when it asks for at least as many as there are.

    Large hashes draw from the database's cached field index (O(1) per pick, as Redis's
    dictGetFairRandomKey) instead of listing every field for each call."""
    size = len(hash_)
    if count >= size:
        return list(hash_)
    if size <= _SMALL_HASH:
        if count < 0:
            return random.choices(list(hash_), k=-count)
        return random.sample(list(hash_), count)
    if count < 0:
        pick = db.field_index(key, hash_).random_key
        return [pick() for _ in range(-count)]  # type: ignore[misc]
    if count * 3 > size:
        return random.sample(list(hash_), count)  # most of the hash: cheaper to list it
    pick = db.field_index(key, hash_).random_key
    distinct: dict[bytes, None] = {}
    while len(distinct) < count:
        distinct[pick()] = None  # type: ignore[index]
    return list(distinct)


def _random_reply(hash_: Hash, fields: list[bytes], with_values: bool, protocol: int) -> bytes:
    """Fields alone, or with values: flat in RESP2, as [field, value] pairs in RESP3."""
    if not with_values:
        return resp.array_of_bulks(fields)
    pair = b"*2\r\n" if protocol != 2 else b""
    parts = [
        b"%s$%d\r\n%s\r\n$%d\r\n%s\r\n" % (pair, len(f), f, len(hash_[f]), hash_[f])
        for f in fields
    ]
    header = b"*%d\r\n" % (len(fields) * (2 if protocol == 2 else 1))
    return header + b"".join(parts)
