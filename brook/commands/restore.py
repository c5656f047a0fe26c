"""Internal restore commands: state that no Redis command can set, written by the AOF rewrite.

:func:`brook.persistence.rewrite.rewrite_commands` reproduces a keyspace with ordinary commands
(SET, RPUSH, HSET, XADD, XSETID, XGROUP CREATE, XCLAIM...) wherever Redis has one. A few pieces
of Brook's state have no such command, and without them a replayed file would differ from the
server that wrote it:

* ``BROOK.RESTORE-PEL`` -- pending entries whose stream entry was deleted (XCLAIM refuses those,
  and drops the record), and entries released with XNACK, in release order (XNACK needs the
  entry to exist and cannot set the delivery count without changing the release order);
* ``BROOK.RESTORE-CONSUMER`` -- a consumer's seen-time and active-time (XCLAIM and
  XGROUP CREATECONSUMER set both to "now");
* ``BROOK.RESTORE-IDMP`` -- the idempotent-production history (XADD IDMP records "now" as the
  time, evicts, and counts) and its lifetime counters;
* ``BROOK.RESTORE-ENCODING`` -- a hash, set or sorted set that Redis would report with a less
  compact encoding than its contents need (the conversions are one-way and depend on the
  loading server's limits).

They are ``write`` commands so that they are persisted and replicated like any other, they
validate every argument before changing anything (a bad file yields an error reply, never a
half-applied command), and they never create the key: the rewrite always emits them after the
command that created it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.args import parse_int
from brook.commands.registry import (
    NO_SUCH_KEY,
    SYNTAX_ERROR,
    WRONGTYPE,
    CommandError,
    command,
    text,
)
from brook.commands.stream_args import parse_strict_id
from brook.protocol import resp
from brook.types.groups import LLONG_MAX, Group
from brook.types.hash import Hash
from brook.types.idmp import Idmp
from brook.types.set import SetValue
from brook.types.stream import Stream
from brook.types.zset import SortedSet

if TYPE_CHECKING:
    from brook.session import Session


def _stream(client: Session, key: bytes) -> Stream:
    value = client.db.lookup(key)
    if value is None:
        raise CommandError(NO_SUCH_KEY)
    if type(value) is not Stream:
        raise CommandError(WRONGTYPE)
    return value


def _group(client: Session, key: bytes, name: bytes) -> tuple[Stream, Group]:
    stream = _stream(client, key)
    group = stream.group(name)
    if group is None:
        raise CommandError(f"NOGROUP No such consumer group '{text(name)}' for key name "
                           f"'{text(key)}'")
    return stream, group


def _count(arg: bytes) -> int:
    """A delivery count: 0 to LLONG_MAX (XNACK FATAL's saturated value)."""
    value = parse_int(arg)
    if not 0 <= value <= LLONG_MAX:
        raise CommandError("ERR delivery count must be between 0 and 2^63-1")
    return value


def _time(arg: bytes, what: str = "time") -> int:
    """A time in Unix milliseconds (-1 only where the caller allows it)."""
    value = parse_int(arg)
    if value < -1:
        raise CommandError(f"ERR invalid {what}")
    return value


def _changed(client: Session, key: bytes) -> bytes:
    client.db.modified(key)
    client.server.dirty += 1
    return resp.OK


@command(
    "brook.restore-pel", arity=-6, flags="write", keys=(1, 1, 1), acl="@write @stream @slow",
    group="stream", since="0.1.0",
    summary="Internal (AOF rewrite): sets pending entries of a group, owned or released.",
    complexity="O(N log M): N records given, M pending entries of the group.",
    syntax="key group OWNER consumer id time count [id time count ...] | "
    "NACKED id count [id count ...]",
)
def brook_restore_pel(client: Session, args: list[bytes]) -> bytes:
    """``OWNER``: records owned by ``consumer`` (created if missing) with their delivery time
    and count, whether or not the entry still exists. ``NACKED``: records released by XNACK,
    appended to the released area in the order given."""
    mode = args[3].lower()
    if mode == b"owner":
        width, first = 3, 5
    elif mode == b"nacked":
        width, first = 2, 4
    else:
        raise CommandError(SYNTAX_ERROR)
    items = args[first:]
    if not items or len(items) % width:
        raise CommandError(f"ERR wrong number of arguments for '{text(args[0])}' command")
    records: list[tuple[int, int, int]] = []
    for i in range(0, len(items), width):
        entry_id = parse_strict_id(items[i])
        if width == 3:
            records.append((entry_id, _time(items[i + 1], "delivery time"),
                            _count(items[i + 2])))
        else:
            records.append((entry_id, 0, _count(items[i + 1])))
    _, group = _group(client, args[1], args[2])
    if width == 3:
        consumer = group.consumer(args[4], client.clock.now_ms())
        assert consumer is not None
        for entry_id, delivery_time, delivery_count in records:
            group.deliver(entry_id, consumer, delivery_time, delivery_count)
    else:
        for entry_id, _, delivery_count in records:
            group.release(entry_id, delivery_count)
    return _changed(client, args[1])


@command(
    "brook.restore-consumer", arity=6, flags="write", keys=(1, 1, 1),
    acl="@write @stream @slow", group="stream", since="0.1.0",
    summary="Internal (AOF rewrite): sets a consumer's seen-time and active-time.",
    syntax="key group consumer seen-time active-time",
)
def brook_restore_consumer(client: Session, args: list[bytes]) -> bytes:
    """Creates the consumer if missing; active-time -1 means "never active"."""
    seen_time = _time(args[4], "seen-time")
    active_time = _time(args[5], "active-time")
    if seen_time < 0:
        raise CommandError("ERR invalid seen-time")
    _, group = _group(client, args[1], args[2])
    consumer = group.consumer(args[3], client.clock.now_ms())
    assert consumer is not None
    consumer.seen_time = seen_time
    consumer.active_time = active_time
    return _changed(client, args[1])


@command(
    "brook.restore-idmp", arity=-5, flags="write", keys=(1, 1, 1), acl="@write @stream @slow",
    group="stream", since="0.1.0",
    summary="Internal (AOF rewrite): sets a stream's idempotent-production history.",
    complexity="O(N) with N the idempotent IDs given.",
    syntax="key COUNTERS iids-added iids-duplicates | "
    "PRODUCER producer-id idempotent-id id time [idempotent-id id time ...]",
)
def brook_restore_idmp(client: Session, args: list[bytes]) -> bytes:
    """``PRODUCER`` appends (idempotent id -> entry id, time recorded) pairs to a producer's
    history, oldest first, without counting them or evicting (the writer's history already
    respects IDMP-MAXSIZE); ``COUNTERS`` sets iids-added and iids-duplicates. Run XCFGSET first:
    changing the settings forgets the history."""
    mode = args[2].lower()
    if mode == b"counters":
        if len(args) != 5:
            raise CommandError(SYNTAX_ERROR)
        added, duplicates = parse_int(args[3]), parse_int(args[4])
        if added < 0 or duplicates < 0:
            raise CommandError("ERR counters must be positive")
        idmp = _idmp(client, _stream(client, args[1]))
        idmp.added, idmp.duplicates = added, duplicates
        return _changed(client, args[1])
    if mode != b"producer":
        raise CommandError(SYNTAX_ERROR)
    items = args[4:]
    if not items or len(items) % 3:
        raise CommandError(f"ERR wrong number of arguments for '{text(args[0])}' command")
    pairs = [(items[i], parse_strict_id(items[i + 1]), _time(items[i + 2]))
             for i in range(0, len(items), 3)]
    if any(when < 0 for _, _, when in pairs):
        raise CommandError("ERR invalid time")
    _idmp(client, _stream(client, args[1])).restore(args[3], pairs)
    return _changed(client, args[1])


def _idmp(client: Session, stream: Stream) -> Idmp:
    if stream.idmp is None:
        config = client.server.config
        stream.idmp = Idmp(config.stream_idmp_duration, config.stream_idmp_maxsize)
    return stream.idmp


@command(
    "brook.restore-encoding", arity=3, flags="write", keys=(1, 1, 1),
    acl="@write @slow", group="generic", since="0.1.0",
    summary="Internal (AOF rewrite): gives a hash, set or sorted set the encoding it had.",
    syntax="key HASHTABLE | LISTPACK | SKIPLIST",
)
def brook_restore_encoding(client: Session, args: list[bytes]) -> bytes:
    """Redis converts these types one way only, so a value that shrank keeps the encoding it
    reached: replaying its contents alone would report a more compact one. Only a conversion
    Redis could have made is accepted (a syntax error otherwise, nothing changed)."""
    value = client.db.lookup(args[1])
    if value is None:
        raise CommandError(NO_SUCH_KEY)
    convert = getattr(value, "convert_to", None) if type(value) in _CONVERTIBLE else None
    if convert is None:
        raise CommandError(WRONGTYPE)
    if not convert(args[2].lower().decode("latin-1")):
        raise CommandError(SYNTAX_ERROR)
    return _changed(client, args[1])


_CONVERTIBLE = (Hash, SetValue, SortedSet)
