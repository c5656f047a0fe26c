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
        value = load_object(load_type(reader), reader, client.server.config, client.clock.now_ms())
    except RdbError:
        raise CommandError(BAD_DATA) from None
    deleted = replace and db.lookup(key) is not None
    if deleted:
        db.delete(key)
    if ttl and not absttl:
        ttl += client.clock.now_ms()
    if value is None or (ttl and ttl <= client.clock.expiry_now()
                         and not client.server.replication.is_replica):
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


def _migrate_options(args: list[bytes]) -> tuple[bool, bool, bytes | None, bytes | None, int]:
    """(COPY, REPLACE, AUTH username, AUTH password, index of the first key)."""
    copy = replace = False
    username = password = None
    first = 3
    position = 6
    while position < len(args):
        word = args[position].lower()
        more = len(args) - 1 - position
        if word == b"copy":
            copy = True
        elif word == b"replace":
            replace = True
        elif word == b"auth":
            if not more:
                raise CommandError(SYNTAX_ERROR)
            position += 1
            password = args[position]
        elif word == b"auth2":
            if more < 2:
                raise CommandError(SYNTAX_ERROR)
            username, password = args[position + 1], args[position + 2]
            position += 2
        elif word == b"keys":
            if args[3]:
                raise CommandError("ERR When using MIGRATE KEYS option, the key argument must "
                                   "be set to the empty string")
            first = position + 1
            break
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 1
    return copy, replace, username, password, first


def _encode_command(*parts: bytes) -> bytes:
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


@command("migrate", arity=-6, flags="write movablekeys", keys=(3, 3, 1),
         acl="@keyspace @write @slow @dangerous", since="2.6.0",
         summary="Atomically transfers a key from one Redis instance to another.",
         complexity="This command actually executes a DUMP+DEL in the source instance, and a "
         "RESTORE in the target instance. See the pages of these commands for time complexity. "
         "Also an O(N) data transfer between the two instances is performed.",
         syntax="host port key|\"\" destination-db timeout [COPY] [REPLACE] "
         "[AUTH password | AUTH2 username password] [KEYS key [key ...]]")
def migrate(client: Session, args: list[bytes]) -> bytes:
    """DUMP the keys, RESTORE them on the target in one pipelined write, and delete here
    those the target took (unless COPY). Synchronous with the timeout, as Redis: the server
    waits (:mod:`brook.migration`). One retry on a fresh connection when a cached one turns
    out closed (not after a timeout)."""
    copy, replace, username, password, first = _migrate_options(args)
    timeout_ms = parse_int(args[5])
    db_index = parse_int(args[4])
    if timeout_ms <= 0:
        timeout_ms = 1000
    timeout = timeout_ms / 1000
    db = client.db
    keys = [key for key in args[first:] if db.lookup_read(key) is not None]
    if not keys:
        return resp.simple("NOKEY")
    sockets = client.server.migrate_sockets
    name = args[1] + b":" + args[2]
    restore_name = b"RESTORE-ASKING" if client.server.config.cluster_enabled else b"RESTORE"
    for attempt in (0, 1):
        try:
            target = sockets.get(args[1], args[2], timeout)
        except ConnectionRefusedError:  # Redis's connect does not see it; its write does
            raise CommandError("IOERR error or timeout writing to target instance") from None
        except (OSError, ValueError):
            raise CommandError("IOERR error or timeout connecting to the client") from None
        request = []
        if password is not None:
            request.append(_encode_command(b"AUTH", *([username] if username else []),
                                           password))
        select = target.last_db != db_index
        if select:
            request.append(_encode_command(b"SELECT", b"%d" % db_index))
        moved: list[bytes] = []
        now = client.clock.now_ms()
        for key in keys:
            value = db.lookup(key)
            if value is None:
                continue
            deadline = db.expires.get(key)
            ttl = 0
            if deadline is not None:
                ttl = deadline - now
                if ttl < 0:
                    continue
                ttl = max(ttl, 1)
            body, version = dump_object(value, client.server.config)
            moved.append(key)
            request.append(_encode_command(restore_name, key, b"%d" % ttl, wrap(body, version),
                                           *([b"REPLACE"] if replace else [])))
        reading = False
        try:
            target.send_all(b"".join(request), timeout)
            reading = True
            auth_reply = target.read_line(timeout) if password is not None else b"+"
            select_reply = target.read_line(timeout) if select else b"+"
            replies = [target.read_line(timeout) for _ in moved]
        except OSError as error:
            sockets.close(name)
            if attempt == 0 and not isinstance(error, TimeoutError):
                continue
            what = "reading" if reading else "writing"
            raise CommandError(f"IOERR error or timeout {what} to target instance") from None
        break
    prelude_ok = not auth_reply.startswith(b"-") and not select_reply.startswith(b"-")
    deleted: list[bytes] = []
    for key, reply in zip(moved, replies, strict=True):
        if not copy and prelude_ok and not reply.startswith(b"-"):
            db.delete(key)
            written(client, key, GENERIC, b"del")
            deleted.append(key)
    if deleted:
        propagate(client, [b"DEL", *deleted])
    failure = next((line for line in (auth_reply, select_reply, *replies)
                    if line.startswith(b"-")), None)
    if failure is not None:
        target.last_db = -1
        raise CommandError("ERR Target instance replied with error: "
                           + failure[1:].decode("utf-8", "replace"))
    target.last_db = db_index
    return resp.OK


COMMANDS["migrate"].find_keys = migrate_key_positions
