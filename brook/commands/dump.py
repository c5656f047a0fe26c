"""DUMP, RESTORE (and RESTORE-ASKING), MIGRATE: values moved as Redis's serialized payloads.

The payload is Redis's own (:mod:`brook.rdb`), so a value dumped by Redis restores on Brook
and one dumped by Brook restores on Redis 7.0 and later. RESTORE checks the version and CRC,
then rebuilds the value completely before it touches the keyspace: a malformed payload gets
"Bad data format" and changes nothing.

What persists: RESTORE with a relative TTL is persisted with the absolute deadline and ABSTTL
(Redis rewrites it the same way), so a replayed file does not extend the key's life; a
RESTORE REPLACE whose deadline has already passed persists as the deletion it caused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.commands.args import parse_int
from brook.commands.registry import COMMANDS, SYNTAX_ERROR, CommandError, command
from brook.keyspace import expiry_now, now_ms
from brook.notify import GENERIC, created, written
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.rdb.decode import RdbError, load_object, load_type
from brook.rdb.encode import dump_object
from brook.rdb.payload import body_of, wrap
from brook.rdb.strings import Reader
from brook.types.keytable import LRU_CLOCK_MAX, lfu_minutes

if TYPE_CHECKING:
    from brook.session import Session

BUSYKEY: Final = "BUSYKEY Target key name already exists."
BAD_PAYLOAD: Final = "ERR DUMP payload version or checksum are wrong"
BAD_DATA: Final = "ERR Bad data format"

_RESTORE_COMPLEXITY: Final = (
    "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, "
    "where N is the number of Redis objects composing the value and M their average size. For "
    "small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply "
    "O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting "
    "values into sorted sets is O(log(N)).")
_RESTORE_SYNTAX: Final = ("key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] "
                          "[FREQ frequency]")


@command("dump", arity=2, flags="readonly", keys=(1, 1, 1), acl="@keyspace @read @slow",
         since="2.6.0", summary="Returns a serialized representation of the value stored at a "
         "key.",
         complexity="O(1) to access the key and additional O(N*M) to serialize it, where N is "
         "the number of Redis objects composing the value and M their average size. For small "
         "string values the time complexity is thus O(1)+O(1*M) where M is small, so simply "
         "O(1).",
         syntax="key")
def dump(client: Session, args: list[bytes]) -> bytes:
    value = client.db.lookup_read(args[1])
    if value is None:
        return resp.bulk_or_null(None, client.protocol)
    body, version = dump_object(value, client.server.config)
    return resp.bulk(wrap(body, version))


def _options(args: list[bytes]) -> tuple[bool, bool, int, int]:
    """(REPLACE, ABSTTL, IDLETIME or -1, FREQ or -1), with Redis's errors in its order."""
    replace = absttl = False
    idle = freq = -1
    position = 4
    while position < len(args):
        option = args[position].lower()
        more = len(args) - position - 1
        if option == b"replace":
            replace = True
        elif option == b"absttl":
            absttl = True
        elif option == b"idletime" and more >= 1 and freq == -1:
            idle = parse_int(args[position + 1])
            if idle < 0:
                raise CommandError("ERR Invalid IDLETIME value, must be >= 0")
            position += 1
        elif option == b"freq" and more >= 1 and idle == -1:
            freq = parse_int(args[position + 1])
            if not 0 <= freq <= 255:
                raise CommandError("ERR Invalid FREQ value, must be >= 0 and <= 255")
            position += 1
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 1
    return replace, absttl, idle, freq


def _restore(client: Session, args: list[bytes]) -> bytes:
    replace, absttl, idle, freq = _options(args)
    db = client.db
    key = args[1]
    if not replace and db.lookup(key) is not None:
        raise CommandError(BUSYKEY)
    ttl = parse_int(args[2])
    if ttl < 0:
        raise CommandError("ERR Invalid TTL value, must be >= 0")
    body = body_of(args[3])
    if body is None:
        raise CommandError(BAD_PAYLOAD)
    reader = Reader(body)
    try:
        value = load_object(load_type(reader), reader, client.server.config, now_ms())
    except RdbError:
        raise CommandError(BAD_DATA) from None
    deleted = replace and db.lookup(key) is not None
    if deleted:
        db.delete(key)
    if ttl and not absttl:
        ttl += now_ms()
    if ttl and ttl <= expiry_now() and not client.server.replication.is_replica:
        if deleted:  # the old value went: that is the whole effect
            written(client, key, GENERIC, b"del")
            unlink = client.server.config.lazyfree_lazy_server_del
            propagate(client, [b"UNLINK" if unlink else b"DEL", key])
        return resp.OK
    created(client, key)
    db.set(key, value)
    if ttl:
        db.set_expire(key, ttl)
        if not absttl:
            propagate(client, [args[0], key, b"%d" % ttl, *args[3:], b"ABSTTL"])
    _set_access(client, key, idle, freq)
    written(client, key, GENERIC, b"restore")
    return resp.OK


def _set_access(client: Session, key: bytes, idle: int, freq: int) -> None:
    """IDLETIME under an LRU policy, FREQ under an LFU one (objectSetLRUOrLFU); ignored
    under the other."""
    keyspace = client.db.keyspace
    if keyspace.lfu:
        if freq >= 0:
            client.db.data.set_access(key, lfu_minutes(keyspace.lru_clock) << 8 | freq)
    elif idle >= 0:
        clock = keyspace.lru_clock & LRU_CLOCK_MAX
        field = clock - idle
        if field < 0:
            field = (clock + LRU_CLOCK_MAX // 2) % LRU_CLOCK_MAX
        client.db.data.set_access(key, field)


@command("restore", arity=-4, flags="write denyoom", keys=(1, 1, 1),
         acl="@keyspace @write @slow @dangerous", since="2.6.0",
         summary="Creates a key from the serialized representation of a value.",
         complexity=_RESTORE_COMPLEXITY, syntax=_RESTORE_SYNTAX)
def restore(client: Session, args: list[bytes]) -> bytes:
    return _restore(client, args)


@command("restore-asking", arity=-4, flags="write denyoom asking", keys=(1, 1, 1),
         acl="@keyspace @write @slow @dangerous", group="server", since="3.0.0",
         summary="An internal command for migrating keys in a cluster.",
         complexity=_RESTORE_COMPLEXITY, syntax=_RESTORE_SYNTAX)
def restore_asking(client: Session, args: list[bytes]) -> bytes:
    return _restore(client, args)


# -- MIGRATE ---------------------------------------------------------------------------------

_MIGRATE_SKIP: Final = {b"copy": 0, b"replace": 0, b"auth": 1, b"auth2": 2}


def migrate_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """migrateGetKeys: the key at 3, or with ``""`` there the keys after KEYS."""
    position = 6
    while position < argc:
        word = args[position].lower()
        if word == b"keys":
            if args[3]:
                return []
            return list(range(position + 1, argc))
        position += _MIGRATE_SKIP.get(word, 0) + 1
    return [3] if argc > 3 else []


@command("migrate", arity=-6, flags="write movablekeys", keys=(3, 3, 1),
         acl="@keyspace @write @slow @dangerous", since="2.6.0",
         summary="Atomically transfers a key from one Redis instance to another.",
         complexity="This command actually executes a DUMP+DEL in the source instance, and a "
         "RESTORE in the target instance. See the pages of these commands for time complexity. "
         "Also an O(N) data transfer between the two instances is performed.",
         syntax="host port key|\"\" destination-db timeout [COPY] [REPLACE] "
         "[AUTH password | AUTH2 username password] [KEYS key [key ...]]")
def migrate(client: Session, args: list[bytes]) -> bytes:
    """Not built yet: the command table entry (its keys, for ACL and cluster checks) only."""
    raise CommandError("ERR MIGRATE is not supported by this server")


COMMANDS["migrate"].find_keys = migrate_key_positions
