"""AOF rewrite: the commands that rebuild a keyspace, as Redis's ``rewriteAppendOnlyFile``.

:func:`rewrite_commands` walks every database and yields, key by key, the argument lists that,
replayed in order into an empty server, reproduce the exact state: values, TTLs (PEXPIREAT with
the absolute deadline, so replay time does not matter) and for streams everything the stream
commands report. It is a generator that reads the live structures a bounded batch at a time, so
a stream of millions of entries never becomes one big list. It must not be resumed across
commands that change the keyspace (the caller either runs it to completion at once, or iterates
over a copy: every value type has a cheap COPY, see ``keyspace.COPIERS``).

Commands follow Redis's rewrite where Redis has one (``aof.c``: ``rewriteStreamObject``):

* strings ``SET`` (plus ``APPEND key ""`` for a string modified in place: encoding ``raw``);
  lists ``RPUSH`` and hashes ``HSET`` with at most :data:`ITEMS_PER_CMD` elements each
  (``AOF_REWRITE_ITEMS_PER_CMD``);
* streams: one ``XADD`` per live entry, with its ID (an empty stream: Redis's
  ``XADD key MAXLEN 0 id x y``), then ``XSETID key last-id ENTRIESADDED n MAXDELETEDID id``
  which restores the bookkeeping that deleted and trimmed entries left; then per group
  ``XGROUP CREATE key group last-id ENTRIESREAD n``, its consumers (``XGROUP CREATECONSUMER``,
  in creation order), and per pending entry ``XCLAIM key group consumer 0 id TIME ms
  RETRYCOUNT n FORCE JUSTID LASTID id``;
* the idempotent-production settings with ``XCFGSET``.

What Redis commands cannot express goes through Brook's internal restore commands
(:mod:`brook.commands.restore`): pending entries whose stream entry was deleted, entries
released with XNACK (in release order), consumers' seen/active times, the IDMP history and
counters, and a small hash's ``hashtable`` encoding.

Not reproduced: the layout of a stream's macro nodes (XINFO STREAM's ``radix-tree-keys`` and
``radix-tree-nodes``), which depends on the history of deletions and on the node limits of the
server that appended; Redis's rewrite does not keep it either. Snapshots keep it
(:mod:`brook.persistence.snapshot`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from brook.keyspace import Keyspace
from brook.protocol.requests import parse_strict_int
from brook.protocol.resp import format_double
from brook.types.groups import Group
from brook.types.hash import Hash
from brook.types.lists import ListValue
from brook.types.pel import NO_OWNER
from brook.types.set import SetValue
from brook.types.stream import MAX_ID, Stream, format_id
from brook.types.zset import SortedSet

ITEMS_PER_CMD = 64  # Redis's AOF_REWRITE_ITEMS_PER_CMD: elements (or pairs) per command
_RANGE_BATCH = 1024  # stream entries read per range call


def _int(value: int) -> bytes:
    return b"%d" % value


def rewrite_commands(keyspace: Keyspace, now: int | None = None,
                     libraries: Iterable[bytes] = ()) -> Iterator[list[bytes]]:
    """Commands (lists of arguments) that rebuild the FUNCTION ``libraries`` (their code)
    and every database of ``keyspace``.

    Keys already expired at ``now`` (ms; default: the current time) are left out, as Redis
    does. Each non-empty database starts with ``SELECT index``.
    """
    current = keyspace.clock.now_ms() if now is None else now
    for code in libraries:
        yield [b"FUNCTION", b"LOAD", code]
    for db in keyspace.databases:
        if not db.data:
            continue
        yield [b"SELECT", _int(db.index)]
        expires = db.expires
        for key in list(db.data):
            value = db.data.get(key)
            if value is None:
                continue
            deadline = expires.get(key)
            if deadline is not None and deadline <= current:
                continue
            yield from value_commands(key, value)
            if deadline is not None:
                yield [b"PEXPIREAT", key, _int(deadline)]


def value_commands(key: bytes, value: object) -> Iterator[list[bytes]]:
    """The commands that create ``key`` holding ``value`` (no TTL)."""
    kind = type(value)
    if kind is bytes:
        yield [b"SET", key, value]  # type: ignore[list-item]
    elif kind is bytearray:
        yield [b"SET", key, bytes(value)]  # type: ignore[arg-type]
        yield [b"APPEND", key, b""]  # modified in place: Redis reports encoding "raw"
    elif kind is Hash:
        yield from _hash_commands(key, value)  # type: ignore[arg-type]
    elif kind is ListValue:
        yield from _list_commands(key, value)  # type: ignore[arg-type]
    elif kind is Stream:
        yield from stream_commands(key, value)  # type: ignore[arg-type]
    elif kind is SetValue:
        yield from _batched([b"SADD", key], list(value))  # type: ignore[call-overload]
        yield from _encoding_command(key, value)
    elif kind is SortedSet:
        yield from _zset_commands(key, value)  # type: ignore[arg-type]
        yield from _encoding_command(key, value)
    else:
        raise TypeError(f"cannot rewrite a value of type {kind.__name__}")


def _batched(head: list[bytes], items: list[bytes], per_item: int = 1) -> Iterator[list[bytes]]:
    """``head`` followed by ``items``, ITEMS_PER_CMD elements (of ``per_item`` arguments) at a
    time, as Redis's rewrite batches them."""
    step = ITEMS_PER_CMD * per_item
    for start in range(0, len(items), step):
        yield [*head, *items[start:start + step]]


def _zset_commands(key: bytes, value: SortedSet) -> Iterator[list[bytes]]:
    """ZADD in ascending order; scores as replies write them (shortest digits that read back
    exactly)."""
    flat: list[bytes] = []
    for member, score in value.items():
        flat += (format_double(score), member)
    yield from _batched([b"ZADD", key], flat, 2)


def _encoding_command(key: bytes, value: Hash | SetValue | SortedSet) -> Iterator[list[bytes]]:
    """Redis converts hashes, sets and sorted sets one way only (listpack -> hashtable,
    intset -> listpack -> hashtable, listpack -> skiplist): a value that shrank, or a set that
    lost its last non-integer member, keeps its encoding, which replaying its contents alone
    would not give back."""
    encoding = value.encoding
    if encoding in ("hashtable", "skiplist") or (
            encoding == "listpack" and type(value) is SetValue
            and all(parse_strict_int(member) is not None for member in value)):
        yield [b"BROOK.RESTORE-ENCODING", key, encoding.upper().encode()]


def _hash_commands(key: bytes, value: Hash) -> Iterator[list[bytes]]:
    flat: list[bytes] = []
    for pair in value.items():
        flat += pair
    yield from _batched([b"HSET", key], flat, 2)
    yield from _encoding_command(key, value)


def _list_commands(key: bytes, value: ListValue) -> Iterator[list[bytes]]:
    yield from _batched([b"RPUSH", key], list(value))


def stream_commands(key: bytes, stream: Stream) -> Iterator[list[bytes]]:
    """A stream: entries, bookkeeping, IDMP state, then groups, consumers and pending entries."""
    if stream.length:
        start = 0
        while True:
            batch = stream.range(start, MAX_ID, _RANGE_BATCH)
            for entry_id, row in batch:
                yield [b"XADD", key, format_id(entry_id), *row]
            if len(batch) < _RANGE_BATCH:
                break
            start = batch[-1][0] + 1
    else:
        # Redis's trick for an empty stream: add and trim at once; XSETID fixes the rest.
        yield [b"XADD", key, b"MAXLEN", b"0", format_id(stream.last_id or 1), b"x", b"y"]
    yield [b"XSETID", key, format_id(stream.last_id), b"ENTRIESADDED",
           _int(stream.entries_added), b"MAXDELETEDID", format_id(stream.max_deleted_id)]
    idmp = stream.idmp
    if idmp is not None:
        yield [b"XCFGSET", key, b"IDMP-DURATION", _int(idmp.duration), b"IDMP-MAXSIZE",
               _int(idmp.maxsize)]
        for pid, history in list(idmp.producers.items()):
            command = [b"BROOK.RESTORE-IDMP", key, b"PRODUCER", pid]
            for iid, entry_id, when in history.records():
                command += (iid, format_id(entry_id), _int(when))
                if len(command) >= 4 + 3 * ITEMS_PER_CMD:
                    yield command
                    command = [b"BROOK.RESTORE-IDMP", key, b"PRODUCER", pid]
            if len(command) > 4:
                yield command
        if idmp.added or idmp.duplicates:
            yield [b"BROOK.RESTORE-IDMP", key, b"COUNTERS", _int(idmp.added),
                   _int(idmp.duplicates)]
    for group in list((stream.groups or {}).values()):
        yield from _group_commands(key, stream, group)


def _group_commands(key: bytes, stream: Stream, group: Group) -> Iterator[list[bytes]]:
    name = group.name
    last_id = format_id(group.last_id)
    yield [b"XGROUP", b"CREATE", key, name, last_id, b"ENTRIESREAD", _int(group.entries_read)]
    consumers = list(group.consumers.values())
    for consumer in consumers:
        yield [b"XGROUP", b"CREATECONSUMER", key, name, consumer.name]
    owners = group.owners
    # Records of deleted entries, per owner slot, flushed ITEMS_PER_CMD at a time.
    dangling: dict[int, list[bytes]] = {}
    for entry_id, delivery_time, delivery_count, slot in group.pel.records():
        if slot == NO_OWNER:
            continue  # released (XNACK): below, in release order
        owner = owners[slot].name  # type: ignore[union-attr]
        sid = format_id(entry_id)
        if stream.get(entry_id) is not None:
            yield [b"XCLAIM", key, name, owner, b"0", sid, b"TIME", _int(delivery_time),
                   b"RETRYCOUNT", _int(delivery_count), b"FORCE", b"JUSTID", b"LASTID",
                   last_id]
            continue
        batch = dangling.setdefault(slot, [b"BROOK.RESTORE-PEL", key, name, b"OWNER", owner])
        batch += (sid, _int(delivery_time), _int(delivery_count))
        if len(batch) >= 5 + 3 * ITEMS_PER_CMD:
            yield dangling.pop(slot)
    yield from dangling.values()
    if group.nacked:
        command = [b"BROOK.RESTORE-PEL", key, name, b"NACKED"]
        for entry_id in list(group.nacked):
            record = group.pel.get(entry_id)
            if record is None:
                continue
            command += (format_id(entry_id), _int(record[2]))
            if len(command) >= 4 + 2 * ITEMS_PER_CMD:
                yield command
                command = [b"BROOK.RESTORE-PEL", key, name, b"NACKED"]
        if len(command) > 4:
            yield command
    # Last: XCLAIM and CREATECONSUMER stamped the consumers with the replay's time.
    for consumer in consumers:
        yield [b"BROOK.RESTORE-CONSUMER", key, name, consumer.name,
               _int(consumer.seen_time), _int(consumer.active_time)]
