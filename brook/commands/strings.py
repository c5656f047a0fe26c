"""String commands: GET/SET and friends, counters, ranges.

A string value is ``bytes`` as received from the client. APPEND and SETRANGE change a value in
place, so they store a ``bytearray`` (amortized O(1) appends; Redis then reports encoding
``raw``). OBJECT ENCODING is derived from the value as Redis's ``tryObjectEncoding`` decides it.

GET, SET, INCR and MSET are the benchmarked commands: they read ``db.data``/``db.expires``
directly and avoid helper layers, while keeping the exact semantics of the general paths (TTL
dropped by SET, WATCH signalled through ``db.touch``, keyspace hits/misses, ``server.dirty``).

INCRBYFLOAT computes in C ``long double`` (x87 80-bit: 64-bit significand) and prints with
``%.17Lf``, so results like ``10.5 + 0.1 -> 10.6`` come out as Redis prints them; that arithmetic
is emulated exactly with rationals below (also used by HINCRBYFLOAT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook import keyspace
from brook.commands.args import LONG_MAX, LONG_MIN, parse_int
from brook.commands.registry import (
    INVALID_EXPIRE,
    NOT_FLOAT,
    NOT_INTEGER,
    SYNTAX_ERROR,
    WRONGTYPE,
    CommandError,
    command,
)
from brook.commands.string_values import string_value
from brook.notify import GENERIC, NEW, STRING, created, creating, notify, written
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.protocol.requests import parse_strict_int, short_decimal
from brook.types.long_double import NOT_FINITE, incr_by_float

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session

OK: Final = resp.OK
BULK_HEADERS: Final = resp.BULK_HEADERS
NULL_BULK: Final = resp.NULL_BULK
NULL3: Final = resp.NULL3
EMPTY_BULK: Final = resp.EMPTY_BULK

OVERFLOW: Final = "ERR increment or decrement would overflow"
NAN_OR_INFINITY: Final = "ERR increment would produce NaN or Infinity"
OFFSET_OUT_OF_RANGE: Final = "ERR offset is out of range"
STRING_TOO_LONG: Final = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"


# ---------------------------------------------------------------------------------------------
# Value registries: OBJECT ENCODING and COPY for strings.
# ---------------------------------------------------------------------------------------------


def string_encoding(value: object) -> str:
    """Redis's encoding of a string: ``int`` for canonical 64-bit integers (at most 20 bytes),
    ``embstr`` up to 44 bytes, ``raw`` beyond, and always ``raw`` once modified in place."""
    if type(value) is bytearray:
        return "raw"
    size = len(value)  # type: ignore[arg-type]
    if size <= 20 and parse_strict_int(value) is not None:  # type: ignore[arg-type]
        return "int"
    return "embstr" if size <= 44 else "raw"


keyspace.ENCODINGS[bytes] = string_encoding
keyspace.ENCODINGS[bytearray] = string_encoding
keyspace.COPIERS[bytearray] = bytearray  # type: ignore[assignment]  # a copy must not share a mutable value


def _forget_ttl(db: Database, key: bytes) -> None:
    """Drop a key's TTL before overwriting it; a TTL already due counts as an expiry, as
    Redis's lookupKeyWrite expires the old key before SET replaces it."""
    deadline = db.expires.pop(key, None)
    if deadline is not None and deadline <= db.keyspace.clock.expiry_now():
        db.keyspace.expired_keys += 1


# ---------------------------------------------------------------------------------------------
# GET / SET: the hot paths.
# ---------------------------------------------------------------------------------------------


@command(
    "get", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@read @string @fast",
    group="string", summary="Returns the string value of a key.", syntax="key",
)
def get(client: Session, args: list[bytes]) -> bytes:
    value = client.db.lookup_read(args[1])
    if value is None:
        return NULL_BULK if client.protocol == 2 else NULL3
    kind = type(value)
    if kind is bytes or kind is bytearray:
        size = len(value)  # type: ignore[arg-type]
        if size < 4096:
            return BULK_HEADERS[size] + value + b"\r\n"  # type: ignore[operator]
        return b"$%d\r\n%s\r\n" % (size, value)  # type: ignore[str-format]
    raise CommandError(WRONGTYPE)


@command(
    "set", arity=-3, flags="write denyoom", keys=(1, 1, 1), acl="@write @string @slow",
    group="string",
    summary="Sets the string value of a key, ignoring its type. The key is created if it "
    "doesn't exist.",
    syntax="key value [NX | XX] [GET] [EX seconds | PX milliseconds | "
    "EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]",
)
def set_(client: Session, args: list[bytes]) -> bytes:
    if len(args) != 3:
        return _set_with_options(client, args)
    db = client.db
    key = args[1]
    if client.server.config.notify_keyspace_events & NEW:
        creating(client, key)
    db.data[key] = args[2]
    if db.expires:
        _forget_ttl(db, key)
    written(client, key, STRING, b"set", 1, True)  # ready: a replaced stream's readers learn
    return OK


# Option flags of SET and GETEX, as Redis's OBJ_SET_* / OBJ_* bits.
_NX, _XX, _GET, _KEEPTTL, _PERSIST = 1, 2, 4, 8, 16
_EX, _PX, _EXAT, _PXAT = 32, 64, 128, 256
_SECONDS_UNIT: Final = _EX | _EXAT
_RELATIVE: Final = _EX | _PX
# For each expiry option: the options it cannot be combined with.
_EXPIRY_OPTIONS: Final = {
    b"ex": (_EX, _KEEPTTL | _PERSIST | _EXAT | _PX | _PXAT),
    b"px": (_PX, _KEEPTTL | _PERSIST | _EX | _EXAT | _PXAT),
    b"exat": (_EXAT, _KEEPTTL | _PERSIST | _EX | _PX | _PXAT),
    b"pxat": (_PXAT, _KEEPTTL | _PERSIST | _EX | _EXAT | _PX),
}
_ANY_EXPIRY: Final = _EX | _PX | _EXAT | _PXAT


def parse_extended_options(args: list[bytes], first: int, for_set: bool) -> tuple[int, bytes | None]:
    """SET's and GETEX's options, accepted and rejected exactly as Redis's
    ``parseExtendedStringArgumentsOrReply`` does (a repeated EX simply wins, NX with XX or
    EX with PX is a syntax error...). Returns the flags and the expiry argument."""
    flags = 0
    expire: bytes | None = None
    position = first
    count = len(args)
    while position < count:
        # Redis compares C strings: an option is only read up to an embedded NUL.
        option = args[position].split(b"\0", 1)[0].lower()
        if option == b"nx" and for_set and not flags & _XX:
            flags |= _NX
        elif option == b"xx" and for_set and not flags & _NX:
            flags |= _XX
        elif option == b"get" and for_set:
            flags |= _GET
        elif option == b"keepttl" and for_set and not flags & (_PERSIST | _ANY_EXPIRY):
            flags |= _KEEPTTL
        elif option == b"persist" and not for_set and not flags & (_ANY_EXPIRY | _KEEPTTL):
            flags |= _PERSIST
        elif option in _EXPIRY_OPTIONS and position + 1 < count:
            flag, conflicts = _EXPIRY_OPTIONS[option]
            if flags & conflicts:
                raise CommandError(SYNTAX_ERROR)
            flags |= flag
            expire = args[position + 1]
            position += 1
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 1
    return flags, expire


def expire_deadline(arg: bytes, flags: int, command_name: str, now_ms: int) -> int:
    """The absolute deadline in ms of an expiry argument (Redis's getExpireMillisecondsOrReply:
    non-positive values and overflows are "invalid expire time")."""
    amount = parse_int(arg)
    invalid = INVALID_EXPIRE.format(command_name)
    if amount <= 0 or (flags & _SECONDS_UNIT and amount > LONG_MAX // 1000):
        raise CommandError(invalid)
    if flags & _SECONDS_UNIT:
        amount *= 1000
    if flags & _RELATIVE:
        amount += now_ms
        if amount > LONG_MAX:  # Redis's signed addition wraps negative here
            raise CommandError(invalid)
    return amount


def _set_with_options(client: Session, args: list[bytes]) -> bytes:
    flags, expire = parse_extended_options(args, 3, for_set=True)
    deadline = (None if expire is None
                else expire_deadline(expire, flags, "set", client.clock.now_ms()))
    db = client.db
    key = args[1]
    reply = OK
    if flags & _GET:
        old = string_value(db, key, counted=True)
        reply = resp.bulk_or_null(old, client.protocol)
        found = old is not None
    else:
        found = db.lookup(key) is not None
    if (flags & _NX and found) or (flags & _XX and not found):
        return reply if flags & _GET else resp.null(client.protocol)
    if not found:
        created(client, key)
    db.set(key, args[2], keep_ttl=bool(flags & _KEEPTTL))
    written(client, key, STRING, b"set")
    if deadline is not None:
        db.set_expire(key, deadline)
        notify(client, GENERIC, b"expire", key)
        # A relative or absolute expiry persists as the absolute time (replay comes later).
        propagate(client, [b"SET", key, args[2], b"PXAT", b"%d" % deadline])
    return reply


@command(
    "setnx", arity=3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string", summary="Set the string value of a key only when the key doesn't exist.",
    syntax="key value",
)
def setnx(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    if db.lookup(args[1]) is not None:
        return resp.ZERO
    created(client, args[1])
    db.set(args[1], args[2])
    written(client, args[1], STRING, b"set")
    return resp.ONE


def _set_expiring(client: Session, args: list[bytes], unit_flag: int, name: str) -> bytes:
    """SETEX and PSETEX: ``key amount value``."""
    deadline = expire_deadline(args[2], unit_flag, name, client.clock.now_ms())
    db = client.db
    key = args[1]
    if db.lookup(key) is None:  # an expired previous value counts as expired, as in Redis
        created(client, key)
    db.set(key, args[3])
    db.set_expire(key, deadline)
    written(client, key, STRING, b"set")
    notify(client, GENERIC, b"expire", key)
    propagate(client, [b"SET", key, args[3], b"PXAT", b"%d" % deadline])
    return OK


@command(
    "setex", arity=4, flags="write denyoom", keys=(1, 1, 1), acl="@write @string @slow",
    group="string", since="2.0.0",
    summary="Sets the string value and expiration time of a key. Creates the key if it doesn't "
    "exist.",
    syntax="key seconds value",
)
def setex(client: Session, args: list[bytes]) -> bytes:
    return _set_expiring(client, args, _EX, "setex")


@command(
    "psetex", arity=4, flags="write denyoom", keys=(1, 1, 1), acl="@write @string @slow",
    group="string", since="2.6.0",
    summary="Sets both string value and expiration time in milliseconds of a key. The key is "
    "created if it doesn't exist.",
    syntax="key milliseconds value",
)
def psetex(client: Session, args: list[bytes]) -> bytes:
    return _set_expiring(client, args, _PX, "psetex")


@command(
    "getset", arity=3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string",
    summary="Returns the previous string value of a key after setting it to a new value.",
    syntax="key value",
)
def getset(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    old = string_value(db, args[1], counted=True)
    if old is None:
        created(client, args[1])
    db.set(args[1], args[2])
    written(client, args[1], STRING, b"set")
    return resp.bulk_or_null(old, client.protocol)


@command(
    "getdel", arity=2, flags="write fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string", since="6.2.0",
    summary="Returns the string value of a key after deleting the key.", syntax="key",
)
def getdel(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    value = string_value(db, args[1], counted=True)
    if value is None:
        return resp.null(client.protocol)
    db.delete(args[1])
    written(client, args[1], GENERIC, b"del")
    propagate(client, [b"DEL", args[1]])  # as Redis persists GETDEL
    return resp.bulk(value)


@command(
    "getex", arity=-2, flags="write fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string", since="6.2.0",
    summary="Returns the string value of a key after setting its expiration time.",
    syntax="key [EX seconds | PX milliseconds | EXAT unix-time-seconds | "
    "PXAT unix-time-milliseconds | PERSIST]",
)
def getex(client: Session, args: list[bytes]) -> bytes:
    flags, expire = parse_extended_options(args, 2, for_set=False)
    db = client.db
    key = args[1]
    value = string_value(db, key, counted=True)
    if value is None:
        return resp.null(client.protocol)
    reply = resp.bulk(value)
    if expire is not None:
        deadline = expire_deadline(expire, flags, "getex", client.clock.now_ms())
        if not flags & _RELATIVE and deadline <= client.clock.expiry_now():
            db.delete(key)  # an absolute time already past deletes the key at once
            written(client, key, GENERIC, b"del")
            propagate(client, [b"DEL", key])
        else:
            db.set_expire(key, deadline)
            written(client, key, GENERIC, b"expire")
            propagate(client, [b"PEXPIREAT", key, b"%d" % deadline])
    elif flags & _PERSIST and db.persist(key):
        written(client, key, GENERIC, b"persist")
        propagate(client, [b"PERSIST", key])
    return reply


@command(
    "mget", arity=-2, flags="readonly fast", keys=(1, -1, 1), acl="@read @string @fast",
    group="string", summary="Atomically returns the string values of one or more keys.",
    complexity="O(N) where N is the number of keys to retrieve.", syntax="key [key ...]",
)
def mget(client: Session, args: list[bytes]) -> bytes:
    lookup = client.db.lookup_read
    null = NULL_BULK if client.protocol == 2 else NULL3
    parts = [b"*%d\r\n" % (len(args) - 1)]
    for key in args[1:]:
        value = lookup(key)
        kind = type(value)
        if kind is bytes or kind is bytearray:
            parts.append(b"$%d\r\n%s\r\n" % (len(value), value))  # type: ignore[arg-type]
        else:
            parts.append(null)  # missing keys and other types read as nil
    return b"".join(parts)


def _pairs_arity_check(args: list[bytes], name: str) -> None:
    if not len(args) & 1:
        raise CommandError(f"ERR wrong number of arguments for '{name}' command")


@command(
    "mset", arity=-3, flags="write denyoom", keys=(1, -1, 2), acl="@write @string @slow",
    group="string", since="1.0.1",
    summary="Atomically creates or modifies the string values of one or more keys.",
    complexity="O(N) where N is the number of keys to set.", syntax="key value [key value ...]",
)
def mset(client: Session, args: list[bytes]) -> bytes:
    if not len(args) & 1:
        _pairs_arity_check(args, "mset")
    db = client.db
    events = client.server.config.notify_keyspace_events
    if not (events or db.expires or db.watchers or db.field_indexes or db.blocking
            or db.tracking):
        data = db.data
        for index in range(1, len(args), 2):
            data[args[index]] = args[index + 1]
    else:  # per key, as Redis: its "new" event (when enabled), the store, its "set" event
        data = db.data
        expires = db.expires
        watchers = db.watchers
        for index in range(1, len(args), 2):
            key = args[index]
            if events & NEW:
                creating(client, key)
            data[key] = args[index + 1]
            if expires:
                _forget_ttl(db, key)
            if watchers or db.field_indexes or db.blocking or db.tracking:
                db.modified(key, ready=True)
            if events:
                notify(client, STRING, b"set", key)
    client.server.dirty += len(args) >> 1  # the keys' signals were sent above, in the loop
    return OK


@command(
    "msetnx", arity=-3, flags="write denyoom", keys=(1, -1, 2), acl="@write @string @slow",
    group="string", since="1.0.1",
    summary="Atomically modifies the string values of one or more keys only when all keys "
    "don't exist.",
    complexity="O(N) where N is the number of keys to set.", syntax="key value [key value ...]",
)
def msetnx(client: Session, args: list[bytes]) -> bytes:
    _pairs_arity_check(args, "msetnx")
    db = client.db
    keys = args[1::2]
    for key in keys:
        if db.lookup(key) is not None:
            return resp.ZERO
    for key, value in zip(keys, args[2::2], strict=True):
        created(client, key)
        db.set(key, value)
        written(client, key, STRING, b"set")
    return resp.ONE


# ---------------------------------------------------------------------------------------------
# Counters.
# ---------------------------------------------------------------------------------------------


def _stored_int(value: object) -> int:
    """A stored string read as a 64-bit integer (Redis's string2ll: canonical text only)."""
    kind = type(value)
    if kind is not bytes and kind is not bytearray:
        raise CommandError(WRONGTYPE)
    try:
        number = int(value)  # type: ignore[call-overload]
    except ValueError:
        raise CommandError(NOT_INTEGER)
    # int() also takes spaces, '+', '_' and leading zeros: only the canonical text is valid.
    if b"%d" % number != value or not LONG_MIN <= number <= LONG_MAX:
        raise CommandError(NOT_INTEGER)
    return number


@command(
    "incr", arity=2, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string",
    summary="Increments the integer value of a key by one. Uses 0 as initial value if the key "
    "doesn't exist.",
    syntax="key",
)
def incr(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    value = db.lookup(key)
    # Up to 18 canonical digits take the short way; anything else string2ll's full checks.
    number = 0 if value is None else short_decimal(value) if type(value) is bytes else -1
    if number < 0:
        number = _stored_int(value)  # WRONGTYPE, a bytearray, or Redis's string2ll
        if number == LONG_MAX:
            raise CommandError(OVERFLOW)
    reply = b":%d\r\n" % (number + 1)
    if value is None:
        created(client, key)
    db.data[key] = reply[1:-2]  # the TTL is kept
    written(client, key, STRING, b"incrby")
    return reply


def incr_by(client: Session, key: bytes, delta: int) -> bytes:
    """INCRBY/DECRBY/DECR: add ``delta`` with Redis's overflow check; the TTL is kept."""
    db = client.db
    value = db.lookup(key)
    current = 0 if value is None else _stored_int(value)
    number = current + delta
    if not LONG_MIN <= number <= LONG_MAX:
        raise CommandError(OVERFLOW)
    if value is None:
        created(client, key)
    db.data[key] = b"%d" % number
    written(client, key, STRING, b"incrby")
    return resp.integer(number)


@command(
    "decr", arity=2, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string",
    summary="Decrements the integer value of a key by one. Uses 0 as initial value if the key "
    "doesn't exist.",
    syntax="key",
)
def decr(client: Session, args: list[bytes]) -> bytes:
    return incr_by(client, args[1], -1)


@command(
    "incrby", arity=3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string",
    summary="Increments the integer value of a key by a number. Uses 0 as initial value if the "
    "key doesn't exist.",
    syntax="key increment",
)
def incrby(client: Session, args: list[bytes]) -> bytes:
    return incr_by(client, args[1], parse_int(args[2]))


@command(
    "decrby", arity=3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string",
    summary="Decrements a number from the integer value of a key. Uses 0 as initial value if "
    "the key doesn't exist.",
    syntax="key decrement",
)
def decrby(client: Session, args: list[bytes]) -> bytes:
    decrement = parse_int(args[2])
    if decrement == LONG_MIN:  # its negation does not fit in 64 bits
        raise CommandError("ERR decrement would overflow")
    return incr_by(client, args[1], -decrement)


@command(
    "incrbyfloat", arity=3, flags="write denyoom fast", keys=(1, 1, 1),
    acl="@write @string @fast", group="string", since="2.6.0",
    summary="Increment the floating point value of a key by a number. Uses 0 as initial value "
    "if the key doesn't exist.",
    syntax="key increment",
)
def incrbyfloat(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    value = string_value(db, key)
    text = incr_by_float(value, args[2])
    if isinstance(text, int):  # the value or the increment is no number (one error), or the sum
        raise CommandError(NAN_OR_INFINITY if text == NOT_FINITE else NOT_FLOAT)
    if value is None:
        created(client, key)
    db.data[key] = text  # the TTL is kept
    written(client, key, STRING, b"incrbyfloat")
    # The result, not the addition: replay must not depend on float arithmetic (as Redis).
    propagate(client, [b"SET", key, text, b"KEEPTTL"])
    return resp.bulk(text)


# ---------------------------------------------------------------------------------------------
# Lengths and ranges.
# ---------------------------------------------------------------------------------------------


def _check_length(client: Session, offset: int, added: int) -> None:
    """Redis's checkStringLength: a string may not grow beyond proto-max-bulk-len."""
    total = offset + added
    if total > client.server.config.proto_max_bulk_len or total > LONG_MAX:
        raise CommandError(STRING_TOO_LONG)


@command(
    "append", arity=3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @string @fast",
    group="string", since="2.0.0",
    summary="Appends a string to the value of a key. Creates the key if it doesn't exist.",
    complexity="O(1). The amortized time complexity is O(1) assuming the appended value is "
    "small and the already present value is of any size, since the dynamic string library used "
    "by Redis will double the free space available on every reallocation.",
    syntax="key value",
)
def append(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    suffix = args[2]
    value = string_value(db, key)
    if value is None:
        created(client, key)
        db.data[key] = suffix  # a new key is stored like SET stores it
        length = len(suffix)
    else:
        _check_length(client, len(value), len(suffix))
        if type(value) is bytearray:
            value += suffix
        else:
            value = bytearray(value) + suffix
            db.data[key] = value  # the TTL is kept
        length = len(value)
    written(client, key, STRING, b"append")
    return resp.integer(length)


@command(
    "strlen", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@read @string @fast",
    group="string", since="2.2.0", summary="Returns the length of a string value.",
    syntax="key",
)
def strlen(client: Session, args: list[bytes]) -> bytes:
    value = string_value(client.db, args[1], counted=True)
    return resp.integer(0 if value is None else len(value))


@command(
    "getrange", arity=4, flags="readonly", keys=(1, 1, 1), acl="@read @string @slow",
    group="string", since="2.4.0",
    summary="Returns a substring of the string stored at a key.",
    complexity="O(N) where N is the length of the returned string. The complexity is "
    "ultimately determined by the returned length, but because creating a substring from an "
    "existing string is very cheap, it can be considered O(1) for small strings.",
    syntax="key start end",
)
def getrange(client: Session, args: list[bytes]) -> bytes:
    start = parse_int(args[2])
    end = parse_int(args[3])
    value = string_value(client.db, args[1], counted=True)
    if value is None:
        return EMPTY_BULK
    size = len(value)
    # Negative indices count from the end. An end still before the string is an empty range
    # (Redis 8; older versions clipped it to 0 and returned the first byte).
    if start < 0:
        start += size
    if end < 0:
        end += size
    if size == 0 or start >= size or end < 0 or start > end:
        return EMPTY_BULK
    start = max(start, 0)
    end = min(end, size - 1)
    return resp.bulk(value[start : end + 1])  # type: ignore[arg-type]


# SUBSTR is GETRANGE's old name (deprecated since 2.0), the same handler.
command(
    "substr", arity=4, flags="readonly", keys=(1, 1, 1), acl="@read @string @slow",
    group="string", summary="Returns a substring from a string value.",
    complexity="O(N) where N is the length of the returned string. The complexity is "
    "ultimately determined by the returned length, but because creating a substring from an "
    "existing string is very cheap, it can be considered O(1) for small strings.",
    syntax="key start end",
)(getrange)


@command(
    "setrange", arity=4, flags="write denyoom", keys=(1, 1, 1), acl="@write @string @slow",
    group="string", since="2.2.0",
    summary="Overwrites a part of a string value with another by an offset. Creates the key if "
    "it doesn't exist.",
    complexity="O(1), not counting the time taken to copy the new string in place. Usually, "
    "this string is very small so the amortized complexity is O(1). Otherwise, complexity is "
    "O(M) with M being the length of the value argument.",
    syntax="key offset value",
)
def setrange(client: Session, args: list[bytes]) -> bytes:
    offset = parse_int(args[2])
    if offset < 0:
        raise CommandError(OFFSET_OUT_OF_RANGE)
    db = client.db
    key = args[1]
    patch = args[3]
    value = string_value(db, key)
    if value is None:
        if not patch:
            return resp.ZERO  # nothing to write: no key is created
        _check_length(client, offset, len(patch))
        value = bytearray(offset)
        created(client, key)
        db.data[key] = value
    else:
        if not patch:
            return resp.integer(len(value))
        _check_length(client, offset, len(patch))
        if type(value) is not bytearray:
            value = bytearray(value)
            db.data[key] = value  # the TTL is kept
        if offset > len(value):
            value.extend(bytes(offset - len(value)))
    value[offset : offset + len(patch)] = patch
    written(client, key, STRING, b"setrange")
    return resp.integer(len(value))
