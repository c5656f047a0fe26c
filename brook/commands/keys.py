"""Keyspace commands: DEL, EXISTS, TYPE, KEYS, RANDOMKEY, RENAME, COPY, MOVE, SWAPDB, the
EXPIRE/TTL family, PERSIST, DBSIZE, FLUSHDB/FLUSHALL, TOUCH and OBJECT.

Every change goes through the :class:`~brook.keyspace.Database` methods, which signal WATCH and
parked clients; each successful change adds to ``server.dirty`` as Redis counts it.
Which lookups count keyspace hits/misses follows Redis: reads (EXISTS, TYPE, TTL, TOUCH, OBJECT,
COPY's source) do, writes (DEL, RENAME, MOVE, EXPIRE, PERSIST) do not.

OBJECT IDLETIME reports the seconds since the key's last access (its access field in
``Database.data``, stamped with Redis's whole-second LRU clock; CLIENT NO-TOUCH clients do not
stamp). OBJECT FREQ needs an LFU maxmemory policy, as in Redis, and reports the key's decayed
LFU counter (brook/types/keytable.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brook import glob, keyspace
from brook.commands.args import LONG_MAX, parse_int
from brook.commands.common import help_reply
from brook.commands.registry import (
    DB_INDEX_OUT_OF_RANGE,
    INVALID_EXPIRE,
    NO_SUCH_KEY,
    SYNTAX_ERROR,
    CommandError,
    command,
    container,
    text,
)
from brook.notify import GENERIC, created, notify, written
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.protocol.requests import parse_strict_int

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session

SAME_OBJECT = "ERR source and destination objects are the same"
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
INT_OUT_OF_RANGE = f"ERR value is out of range, value must between {INT_MIN} and {INT_MAX}"
SHARED_REFCOUNT = 2147483647  # OBJ_SHARED_REFCOUNT: Redis's shared integers 0..9999
SHARED_INTEGERS = 10000
LFU_SELECTED = (
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust."
)
LFU_NOT_SELECTED = (
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
    "that when switching between policies at runtime LRU and LFU data will take some time to "
    "adjust."
)


def parse_c_int(arg: bytes, error: str | None = None) -> int:
    """Redis's ``getIntFromObjectOrReply``: a 64-bit integer that must also fit a C ``int``.

    ``error`` replaces both the parse and the range message when given (SWAPDB's texts).
    """
    value = parse_strict_int(arg)
    if value is None:
        raise CommandError(error or "ERR value is not an integer or out of range")
    if not INT_MIN <= value <= INT_MAX:
        raise CommandError(error or INT_OUT_OF_RANGE)
    return value


def database_at(client: Session, arg: bytes) -> Database:
    """The database a ``db`` argument names (MOVE, COPY ... DB)."""
    index = parse_c_int(arg)
    databases = client.server.keyspace
    if not 0 <= index < len(databases):
        raise CommandError(DB_INDEX_OUT_OF_RANGE)
    return databases[index]


# -- deleting and testing keys --------------------------------------------------------------------


def _delete_keys(client: Session, keys: list[bytes]) -> bytes:
    db = client.db
    deleted = 0
    for key in keys:
        if db.delete(key):
            deleted += 1
            written(client, key, GENERIC, b"del")
    return resp.integer(deleted)


@command("del", arity=-2, flags="write", keys=(1, -1, 1), acl="@keyspace @write @slow",
         summary="Deletes one or more keys.",
         complexity="O(N) where N is the number of keys that will be removed. When a key to "
         "remove holds a value other than a string, the individual complexity for this key is "
         "O(M) where M is the number of elements in the list, set, sorted set or hash. Removing "
         "a single key that holds a string value is O(1).",
         syntax="key [key ...]")
def del_(client: Session, args: list[bytes]) -> bytes:
    return _delete_keys(client, args[1:])


@command("unlink", arity=-2, flags="write fast", keys=(1, -1, 1), acl="@keyspace @write @fast",
         summary="Asynchronously deletes one or more keys.", since="4.0.0",
         complexity="O(1) for each key removed regardless of its size. Then the command does "
         "O(N) work in a different thread in order to reclaim memory, where N is the number of "
         "allocations the deleted objects where composed of.",
         syntax="key [key ...]")
def unlink(client: Session, args: list[bytes]) -> bytes:
    # Python frees memory by reference counting as it goes: there is no backlog to hand to
    # another thread, so UNLINK is DEL.
    return _delete_keys(client, args[1:])


@command("exists", arity=-2, flags="readonly fast", keys=(1, -1, 1),
         acl="@keyspace @read @fast", summary="Determines whether one or more keys exist.",
         complexity="O(N) where N is the number of keys to check.", syntax="key [key ...]")
def exists(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    # A key named twice counts twice, as in Redis.
    found = sum(1 for key in args[1:] if db.lookup_read(key, touch=False) is not None)
    return resp.integer(found)


@command("touch", arity=-2, flags="readonly fast", keys=(1, -1, 1), acl="@keyspace @read @fast",
         summary="Returns the number of existing keys out of those specified after updating the "
         "time they were last accessed.", since="3.2.1",
         complexity="O(N) where N is the number of keys that will be touched.",
         syntax="key [key ...]")
def touch(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    found = sum(1 for key in args[1:] if db.lookup_read(key) is not None)
    return resp.integer(found)


@command("type", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@keyspace @read @fast",
         summary="Determines the type of value stored at a key.", syntax="key")
def type_(client: Session, args: list[bytes]) -> bytes:
    value = client.db.lookup_read(args[1], touch=False)
    if value is None:
        return b"+none\r\n"
    return b"+%s\r\n" % keyspace.TYPE_NAMES.get(type(value), "none").encode()


@command("dbsize", arity=1, flags="readonly fast", acl="@keyspace @read @fast", group="server",
         summary="Returns the number of keys in the database.", syntax="")
def dbsize(client: Session, args: list[bytes]) -> bytes:
    # Like Redis, keys whose TTL passed but that were not reclaimed yet still count.
    return resp.integer(len(client.db.data))


@command("keys", arity=2, flags="readonly", acl="@keyspace @read @slow @dangerous",
         summary="Returns all key names that match a pattern.",
         complexity="O(N) with N being the number of keys in the database, under the "
         "assumption that the key names in the database and the given pattern have limited "
         "length.",
         syntax="pattern")
def keys(client: Session, args: list[bytes]) -> bytes:
    pattern = args[1]
    live_keys = client.db.keys()
    if pattern == b"*":  # every key, even the empty name that '*' would not match
        return resp.array_of_bulks(live_keys)
    matches = glob.matcher(pattern)
    return resp.array_of_bulks(key for key in live_keys if matches(key))


@command("randomkey", arity=1, flags="readonly", acl="@keyspace @read @slow",
         summary="Returns a random key name from the database.", syntax="")
def randomkey(client: Session, args: list[bytes]) -> bytes:
    return resp.bulk_or_null(client.db.random_key(), client.protocol)


# -- renaming, copying, moving -------------------------------------------------------------------


def _rename(client: Session, args: list[bytes], only_if_new: bool) -> bytes:
    db = client.db
    source, destination = args[1], args[2]
    value = db.lookup(source)
    if value is None:
        raise CommandError(NO_SUCH_KEY)
    if source == destination:
        return resp.ZERO if only_if_new else resp.OK
    deadline = db.expires.get(source)
    if db.lookup(destination) is not None:
        if only_if_new:
            return resp.ZERO
        db.delete(destination)
    db.delete(source)
    created(client, destination)  # Redis deletes the destination first: always a new key
    db.set(destination, value)
    if deadline is not None:  # the TTL travels with the value
        db.set_expire(destination, deadline)
    notify(client, GENERIC, b"rename_from", source)
    written(client, destination, GENERIC, b"rename_to")
    return resp.ONE if only_if_new else resp.OK


@command("rename", arity=3, flags="write", keys=(1, 2, 1), acl="@keyspace @write @slow",
         summary="Renames a key and overwrites the destination.", syntax="key newkey")
def rename(client: Session, args: list[bytes]) -> bytes:
    return _rename(client, args, only_if_new=False)


@command("renamenx", arity=3, flags="write fast", keys=(1, 2, 1), acl="@keyspace @write @fast",
         summary="Renames a key only when the target key name doesn't exist.", syntax="key newkey")
def renamenx(client: Session, args: list[bytes]) -> bytes:
    return _rename(client, args, only_if_new=True)


@command("copy", arity=-3, flags="write denyoom", keys=(1, 2, 1), acl="@keyspace @write @slow",
         summary="Copies the value of a key to a new key.", since="6.2.0",
         complexity="O(N) worst case for collections, where N is the number of nested items. "
         "O(1) for string values.",
         syntax="source destination [DB destination-db] [REPLACE]")
def copy(client: Session, args: list[bytes]) -> bytes:
    source_db = target_db = client.db
    replace = False
    position = 3
    while position < len(args):
        option = args[position].lower()
        if option == b"replace":
            replace = True
        elif option == b"db" and position + 1 < len(args):
            target_db = database_at(client, args[position + 1])
            position += 1
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 1
    source, destination = args[1], args[2]
    if source_db is target_db and source == destination:
        raise CommandError(SAME_OBJECT)
    value = source_db.lookup_read(source)
    if value is None:
        return resp.ZERO
    deadline = source_db.expires.get(source)
    exists_already = target_db.lookup(destination) is not None
    if exists_already and not replace:
        return resp.ZERO
    copier = keyspace.COPIERS.get(type(value))
    if copier is None:
        raise CommandError("ERR unknown type object")
    duplicate = copier(value)
    if exists_already:
        target_db.delete(destination)
    created(client, destination, target_db.index)
    target_db.set(destination, duplicate)
    if deadline is not None:
        target_db.set_expire(destination, deadline)
    notify(client, GENERIC, b"copy_to", destination, target_db.index)
    client.server.dirty += 1
    return resp.ONE


@command("move", arity=3, flags="write fast", keys=(1, 1, 1), acl="@keyspace @write @fast",
         summary="Moves a key to another database.", syntax="key db")
def move(client: Session, args: list[bytes]) -> bytes:
    source_db = client.db
    target_db = database_at(client, args[2])
    if target_db is source_db:
        raise CommandError(SAME_OBJECT)
    key = args[1]
    value = source_db.lookup(key)
    if value is None:
        return resp.ZERO
    deadline = source_db.expires.get(key)
    if target_db.lookup(key) is not None:
        return resp.ZERO
    created(client, key, target_db.index)
    target_db.set(key, value)
    if deadline is not None:
        target_db.set_expire(key, deadline)
    source_db.delete(key)
    notify(client, GENERIC, b"move_from", key)
    notify(client, GENERIC, b"move_to", key, target_db.index)
    client.server.dirty += 1
    return resp.ONE


@command("swapdb", arity=3, flags="write fast", acl="@keyspace @write @fast @dangerous",
         group="server", summary="Swaps two Redis databases.", since="4.0.0",
         complexity="O(N) where N is the count of clients watching or blocking on keys from "
         "both databases.",
         syntax="index1 index2")
def swapdb(client: Session, args: list[bytes]) -> bytes:
    first = parse_c_int(args[1], "ERR invalid first DB index")
    second = parse_c_int(args[2], "ERR invalid second DB index")
    databases = client.server.keyspace
    if not (0 <= first < len(databases) and 0 <= second < len(databases)):
        raise CommandError(DB_INDEX_OUT_OF_RANGE)
    if first != second:
        databases.swap(first, second)
    client.server.dirty += 1
    return resp.OK


# -- expiry -------------------------------------------------------------------------------------

_NX, _XX, _GT, _LT = 1, 2, 4, 8
_EXPIRE_FLAGS = {b"nx": _NX, b"xx": _XX, b"gt": _GT, b"lt": _LT}


def _expire_conditions(args: list[bytes]) -> int:
    """Redis's parseExtendedExpireArgumentsOrReply (checked before the time argument)."""
    flags = 0
    for option in args[3:]:
        flag = _EXPIRE_FLAGS.get(option.lower())
        if flag is None:
            raise CommandError("ERR Unsupported option " + text(option))
        flags |= flag
    if flags & _NX and flags & (_XX | _GT | _LT):
        raise CommandError("ERR NX and XX, GT or LT options at the same time are not compatible")
    if flags & _GT and flags & _LT:
        raise CommandError("ERR GT and LT options at the same time are not compatible")
    return flags


def _deadline(args: list[bytes], name: str, in_seconds: bool, base_ms: int) -> int:
    """The absolute deadline in ms, with Redis's overflow checks (C 64-bit arithmetic)."""
    when = parse_int(args[2])
    if in_seconds:
        limit = LONG_MAX // 1000  # C division truncates: the same bound on both sides
        if when > limit or when < -limit:
            raise CommandError(INVALID_EXPIRE.format(name))
        when *= 1000
    if when > LONG_MAX - base_ms:
        raise CommandError(INVALID_EXPIRE.format(name))
    return when + base_ms


def _condition_refuses(flags: int, current: int | None, when: int) -> bool:
    """NX/XX/GT/LT against the key's current deadline (None: no TTL, i.e. infinite)."""
    if flags & _NX and current is not None:
        return True
    if flags & _XX and current is None:
        return True
    if flags & _GT and (current is None or when <= current):
        return True
    return bool(flags & _LT and current is not None and when >= current)


def _expire(client: Session, args: list[bytes], name: str, in_seconds: bool,
            absolute: bool) -> bytes:
    flags = _expire_conditions(args)
    now = client.clock.now_ms()
    when = _deadline(args, name, in_seconds, 0 if absolute else now)
    db = client.db
    key = args[1]
    if db.lookup(key) is None:
        return resp.ZERO
    if flags and _condition_refuses(flags, db.expires.get(key), when):
        return resp.ZERO
    # Already past: the key goes now (not counted as an expiry).
    if when <= client.clock.expiry_now():
        db.delete(key)
        written(client, key, GENERIC, b"del")
        propagate(client, [b"DEL", key])
    else:
        db.set_expire(key, when)
        written(client, key, GENERIC, b"expire")
        propagate(client, [b"PEXPIREAT", key, b"%d" % when])  # absolute, as Redis persists it
    return resp.ONE


_EXPIRE_DOC: dict[str, Any] = dict(flags="write fast", keys=(1, 1, 1), acl="@keyspace @write @fast")


@command("expire", arity=-3, **_EXPIRE_DOC, summary="Sets the expiration time of a key in seconds.",
         syntax="key seconds [NX | XX | GT | LT]")
def expire(client: Session, args: list[bytes]) -> bytes:
    return _expire(client, args, "expire", in_seconds=True, absolute=False)


@command("pexpire", arity=-3, **_EXPIRE_DOC, since="2.6.0",
         summary="Sets the expiration time of a key in milliseconds.",
         syntax="key milliseconds [NX | XX | GT | LT]")
def pexpire(client: Session, args: list[bytes]) -> bytes:
    return _expire(client, args, "pexpire", in_seconds=False, absolute=False)


@command("expireat", arity=-3, **_EXPIRE_DOC, since="1.2.0",
         summary="Sets the expiration time of a key to a Unix timestamp.",
         syntax="key unix-time-seconds [NX | XX | GT | LT]")
def expireat(client: Session, args: list[bytes]) -> bytes:
    return _expire(client, args, "expireat", in_seconds=True, absolute=True)


@command("pexpireat", arity=-3, **_EXPIRE_DOC, since="2.6.0",
         summary="Sets the expiration time of a key to a Unix milliseconds timestamp.",
         syntax="key unix-time-milliseconds [NX | XX | GT | LT]")
def pexpireat(client: Session, args: list[bytes]) -> bytes:
    return _expire(client, args, "pexpireat", in_seconds=False, absolute=True)


def _ttl(client: Session, key: bytes, in_ms: bool, absolute: bool) -> bytes:
    db = client.db
    if db.lookup_read(key, touch=False) is None:
        return resp.integer(-2)
    deadline = db.expires.get(key)
    if deadline is None:
        return resp.integer(-1)
    remaining = max(deadline if absolute else deadline - client.clock.now_ms(), 0)
    return resp.integer(remaining if in_ms else (remaining + 500) // 1000)


_TTL_DOC: dict[str, Any] = dict(flags="readonly fast", keys=(1, 1, 1), acl="@keyspace @read @fast", syntax="key")


@command("ttl", arity=2, **_TTL_DOC, summary="Returns the expiration time in seconds of a key.")
def ttl(client: Session, args: list[bytes]) -> bytes:
    return _ttl(client, args[1], in_ms=False, absolute=False)


@command("pttl", arity=2, **_TTL_DOC, since="2.6.0",
         summary="Returns the expiration time in milliseconds of a key.")
def pttl(client: Session, args: list[bytes]) -> bytes:
    return _ttl(client, args[1], in_ms=True, absolute=False)


@command("expiretime", arity=2, **_TTL_DOC, since="7.0.0",
         summary="Returns the expiration time of a key as a Unix timestamp.")
def expiretime(client: Session, args: list[bytes]) -> bytes:
    return _ttl(client, args[1], in_ms=False, absolute=True)


@command("pexpiretime", arity=2, **_TTL_DOC, since="7.0.0",
         summary="Returns the expiration time of a key as a Unix milliseconds timestamp.")
def pexpiretime(client: Session, args: list[bytes]) -> bytes:
    return _ttl(client, args[1], in_ms=True, absolute=True)


@command("persist", arity=2, flags="write fast", keys=(1, 1, 1), acl="@keyspace @write @fast",
         since="2.2.0", summary="Removes the expiration time of a key.", syntax="key")
def persist(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    if db.lookup(key) is None or not db.persist(key):
        return resp.ZERO
    written(client, key, GENERIC, b"persist")
    return resp.ONE


# -- flushing -----------------------------------------------------------------------------------


def _flush_mode(args: list[bytes]) -> None:
    """ASYNC and SYNC are accepted; both free at once (nothing to hand to another thread)."""
    if len(args) > 2 or (len(args) == 2 and args[1].lower() not in (b"async", b"sync")):
        raise CommandError(SYNTAX_ERROR)


def _flushed(client: Session, args: list[bytes]) -> None:
    """Take a memory reading and tell caching clients everything changed. A synchronous flush
    outside MULTI and scripts replies once its background free is done in Redis (8.0+, FLUSH
    SYNC run as blocking ASYNC), so the flushing client's own invalidation precedes its reply
    there."""
    server = client.server
    if server.config.maxmemory:
        server.memory.measure()  # the room it made is usable at once (no per-key credit)
    asynchronous = (args[1].lower() == b"async" if len(args) == 2
                    else server.config.lazyfree_lazy_user_flush)
    server.tracking.flushed(
        own_first=not asynchronous and not client.in_exec and not client.in_script)


@command("flushall", arity=-1, flags="write", acl="@keyspace @write @slow @dangerous",
         group="server", summary="Removes all keys from all databases.",
         complexity="O(N) where N is the total number of keys in all databases",
         syntax="[ASYNC | SYNC]")
def flushall(client: Session, args: list[bytes]) -> bytes:
    _flush_mode(args)
    for db in client.server.keyspace.databases:
        client.server.dirty += db.clear()
    client.server.dirty += 1
    _flushed(client, args)
    return resp.OK


@command("flushdb", arity=-1, flags="write", acl="@keyspace @write @slow @dangerous",
         group="server", summary="Remove all keys from the current database.",
         complexity="O(N) where N is the number of keys in the selected database",
         syntax="[ASYNC | SYNC]")
def flushdb(client: Session, args: list[bytes]) -> bytes:
    _flush_mode(args)
    client.server.dirty += client.db.clear()
    _flushed(client, args)
    return resp.OK


# -- OBJECT -------------------------------------------------------------------------------------

container("object", acl="@slow", since="2.2.3",
          summary="A container for object introspection commands.")

_OBJECT_DOC: dict[str, Any] = dict(flags="readonly", keys=(2, 2, 1), acl="@keyspace @read @slow", syntax="key")
_OBJECT_HELP = [
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
]


def _lfu_selected(client: Session) -> bool:
    return str(getattr(client.server.config, "maxmemory_policy", "")).endswith("lfu")


@command("object|encoding", arity=3, **_OBJECT_DOC, since="2.2.3",
         summary="Returns the internal encoding of a Redis object.")
def object_encoding(client: Session, args: list[bytes]) -> bytes:
    value = client.db.lookup_read(args[2], touch=False)
    if value is None:
        return resp.null(client.protocol)
    describe = keyspace.ENCODINGS.get(type(value))
    return resp.bulk((describe(value) if describe else "unknown").encode())


@command("object|refcount", arity=3, **_OBJECT_DOC, since="2.2.3",
         summary="Returns the reference count of a value of a key.")
def object_refcount(client: Session, args: list[bytes]) -> bytes:
    value = client.db.lookup_read(args[2], touch=False)
    if value is None:
        return resp.null(client.protocol)
    config = client.server.config
    # Redis stops sharing integers when a limit is set with an LRU or LFU policy: each key
    # then needs its own access field.
    sharing = not config.maxmemory or config.maxmemory_policy.endswith(("-random", "-ttl",
                                                                         "noeviction"))
    return resp.integer(SHARED_REFCOUNT if sharing and _is_shared_integer(value) else 1)


def _is_shared_integer(value: object) -> bool:
    """Redis stores the strings "0".."9999" as one shared object each (refcount INT_MAX)."""
    if type(value) is not bytes or len(value) > 4:
        return False
    describe = keyspace.ENCODINGS.get(bytes)
    if describe is None or describe(value) != "int":
        return False
    return 0 <= int(value) < SHARED_INTEGERS


@command("object|idletime", arity=3, **_OBJECT_DOC, since="2.2.3",
         summary="Returns the time since the last access to a Redis object.")
def object_idletime(client: Session, args: list[bytes]) -> bytes:
    if client.db.lookup_read(args[2], touch=False) is None:
        return resp.null(client.protocol)
    if _lfu_selected(client):
        raise CommandError(LFU_SELECTED)
    return resp.integer(client.db.idle_seconds(args[2]))


@command("object|freq", arity=3, **_OBJECT_DOC, since="4.0.0",
         summary="Returns the logarithmic access frequency counter of a Redis object.")
def object_freq(client: Session, args: list[bytes]) -> bytes:
    if client.db.lookup_read(args[2], touch=False) is None:
        return resp.null(client.protocol)
    if not _lfu_selected(client):
        raise CommandError(LFU_NOT_SELECTED)
    return resp.integer(client.db.frequency(args[2]))


@command("object|help", arity=2, flags="loading stale", acl="@keyspace @slow", since="6.2.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def object_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _OBJECT_HELP)
