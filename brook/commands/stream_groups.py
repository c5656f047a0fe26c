"""Consumer-group commands: XGROUP, XREADGROUP (BLOCK: :mod:`brook.blocking`), XACK,
XPENDING and XINFO GROUPS / CONSUMERS (plus the groups part of XINFO STREAM FULL).

The structures are in :mod:`brook.types.groups`; replies, error texts and the order of checks
follow ``t_stream.c``.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING, Final

from brook import blocking
from brook.commands.args import parse_int
from brook.commands.common import help_reply
from brook.commands.registry import (
    COMMANDS,
    SYNTAX_ERROR,
    WRONGTYPE,
    CommandError,
    command,
    container,
    subcommand_error,
    text,
)
from brook.commands.stream_access import (
    delete_with_policy,
    entries_read_reply,
    existing_stream,
    new_stream,
    read_stream,
    write_stream,
)
from brook.commands.stream_args import (
    parse_delete_args,
    parse_id,
    parse_ids,
    parse_range,
    parse_read_args,
    parse_start,
    parse_strict_id,
    streams_key_positions,
)
from brook.notify import STREAM, notify, written
from brook.persistence.effects import propagate, suppress
from brook.protocol import resp
from brook.types.groups import (
    INVALID_ENTRIES_READ,
    LLONG_MAX,
    Consumer,
    Group,
    advance,
    advance_over,
    group_lag,
)
from brook.types.pel import NO_OWNER, Record
from brook.types.stream import MAX_ID, Stream, format_id
from brook.types.stream_node import encode_entry

if TYPE_CHECKING:
    from brook.session import Session

_NO_KEY_FOR_XGROUP: Final = ("ERR The XGROUP subcommand requires the key to exist. Note that for "
                      "CREATE you may want to use the MKSTREAM option to create an empty stream "
                      "automatically.")


def _group_of(stream: Stream | None, name: bytes) -> Group | None:
    """The group ``name`` of a stream that may be missing."""
    return stream.group(name) if stream is not None else None


# ---------------------------------------------------------------------------------------------
# What reads and claims persist (t_stream.c's streamPropagate*): a delivery depends on the
# clock and on the PEL, so it is written as the PEL record it left, which replays exactly.
# ---------------------------------------------------------------------------------------------


def _claim_effect(key: bytes, group: Group, consumer: bytes, entry_id: int) -> list[bytes]:
    """streamPropagateXCLAIM: the entry's record as it is now (delivery time and count,
    owner). For an entry that left the PEL because it left the stream, the same XCLAIM
    drops it on replay, since the entry is missing there too."""
    record = group.pel.get(entry_id)
    delivery_time, delivery_count = (record[1], record[2]) if record is not None else (0, 0)
    return [b"XCLAIM", key, group.name, consumer, b"0", format_id(entry_id),
            b"TIME", b"%d" % delivery_time, b"RETRYCOUNT", b"%d" % delivery_count,
            b"FORCE", b"JUSTID", b"LASTID", format_id(group.last_id)]


def _position_effect(key: bytes, group: Group) -> list[bytes]:
    """streamPropagateGroupID: where the group has read up to, with its read counter."""
    return [b"XGROUP", b"SETID", key, group.name, format_id(group.last_id),
            b"ENTRIESREAD", b"%d" % group.entries_read]


def _consumer_effect(key: bytes, group: Group, consumer: bytes) -> list[bytes]:
    """streamPropagateConsumerCreation."""
    return [b"XGROUP", b"CREATECONSUMER", key, group.name, consumer]


def _propagate_claims(client: Session, key: bytes, group: Group, consumer: bytes,
                      entry_ids: list[int]) -> None:
    if entry_ids:
        propagate(client, *(_claim_effect(key, group, consumer, entry_id)
                            for entry_id in entry_ids))


# ---------------------------------------------------------------------------------------------
# XGROUP
# ---------------------------------------------------------------------------------------------

container("xgroup", group="stream", acl="@slow", since="5.0.0",
          summary="A container for consumer groups commands.")

_XGROUP_HELP: Final = [
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
]


@command("xgroup|help", arity=2, flags="loading stale", acl="@stream @slow", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def xgroup_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _XGROUP_HELP)


def _group_options(args: list[bytes], create: bool) -> tuple[bool, int]:
    """MKSTREAM (CREATE only) and ENTRIESREAD after the ID: (mkstream, entries_read)."""
    mkstream = False
    entries_read = INVALID_ENTRIES_READ
    i = 5
    while i < len(args):
        opt = args[i].lower()
        if create and opt == b"mkstream":
            mkstream = True
            i += 1
        elif opt == b"entriesread" and i + 1 < len(args):
            entries_read = parse_int(args[i + 1])
            if entries_read < 0 and entries_read != INVALID_ENTRIES_READ:
                raise CommandError("ERR value for ENTRIESREAD must be positive or -1")
            i += 2
        else:
            raise subcommand_error(args, "XGROUP")
    return mkstream, entries_read


def _stream_for_xgroup(client: Session, args: list[bytes], mkstream: bool = False) -> Stream | None:
    """The stream XGROUP works on; Redis's error when it is missing (unless MKSTREAM)."""
    value = client.db.lookup(args[2])
    if value is not None and type(value) is not Stream:
        raise CommandError(WRONGTYPE)
    if value is None and not mkstream:
        raise CommandError(_NO_KEY_FOR_XGROUP)
    return value  # type: ignore[return-value]


def _existing_group(stream: Stream, args: list[bytes]) -> Group:
    group = stream.group(args[3])
    if group is None:
        raise CommandError(f"NOGROUP No such consumer group '{text(args[3])}' for key name "
                           f"'{text(args[2])}'")
    return group


def _clampentries_read_reply(stream: Stream, entries_read: int) -> int:
    """Since 8.2 an ENTRIESREAD above entries-added is clamped (redis#14259)."""
    if entries_read > stream.entries_added:
        return stream.entries_added
    return entries_read


def _propagate_resolved(client: Session, args: list[bytes], last_id: int) -> None:
    """XGROUP CREATE/SETID with ``$``: persisted with the ID it stood for."""
    effect = list(args)
    effect[4] = format_id(last_id)
    propagate(client, effect)


@command("xgroup|create", arity=-5, flags="write denyoom", keys=(2, 2, 1),
         acl="@write @stream @slow", since="5.0.0",
         summary="Creates a consumer group.",
         syntax="key group id | $ [MKSTREAM] [ENTRIESREAD entries-read]")
def xgroup_create(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 8:
        raise subcommand_error(args, "XGROUP")
    mkstream, entries_read = _group_options(args, True)
    stream = _stream_for_xgroup(client, args, mkstream)
    if args[4] == b"$":
        last_id = stream.last_id if stream is not None else 0
    else:
        last_id = parse_strict_id(args[4])
    if stream is None:
        stream = new_stream(client, args[2])
    if stream.groups is None:
        stream.groups = {}
    if args[3] in stream.groups:
        raise CommandError("BUSYGROUP Consumer Group name already exists")
    stream.groups[args[3]] = Group(args[3], last_id, _clampentries_read_reply(stream, entries_read))
    if args[4] == b"$" and client.server.propagating:
        _propagate_resolved(client, args, last_id)
    written(client, args[2], STREAM, b"xgroup-create")
    return resp.OK


@command("xgroup|setid", arity=-5, flags="write", keys=(2, 2, 1), acl="@write @stream @slow",
         since="5.0.0", summary="Sets the last-delivered ID of a consumer group.",
         syntax="key group id | $ [ENTRIESREAD entries-read]")
def xgroup_setid(client: Session, args: list[bytes]) -> bytes:
    if len(args) not in (5, 7):
        raise subcommand_error(args, "XGROUP")
    _, entries_read = _group_options(args, False)
    stream = _stream_for_xgroup(client, args)
    group = _existing_group(stream, args)  # type: ignore[arg-type]
    if args[4] == b"$":
        last_id = stream.last_id  # type: ignore[union-attr]
    else:
        last_id = parse_id(args[4])[0]
    group.last_id = last_id
    group.entries_read = _clampentries_read_reply(stream, entries_read)  # type: ignore[arg-type]
    if args[4] == b"$" and client.server.propagating:
        _propagate_resolved(client, args, last_id)
    written(client, args[2], STREAM, b"xgroup-setid")
    return resp.OK


@command("xgroup|destroy", arity=4, flags="write", keys=(2, 2, 1), acl="@write @stream @slow",
         since="5.0.0", summary="Destroys a consumer group.", syntax="key group")
def xgroup_destroy(client: Session, args: list[bytes]) -> bytes:
    stream = _stream_for_xgroup(client, args)
    if not stream.groups or args[3] not in stream.groups:  # type: ignore[union-attr]
        return resp.ZERO
    del stream.groups[args[3]]  # type: ignore[union-attr]
    written(client, args[2], STREAM, b"xgroup-destroy", ready=True)  # its readers are told
    return resp.ONE


@command("xgroup|createconsumer", arity=5, flags="write denyoom", keys=(2, 2, 1),
         acl="@write @stream @slow", since="6.2.0",
         summary="Creates a consumer in a consumer group.", syntax="key group consumer")
def xgroup_createconsumer(client: Session, args: list[bytes]) -> bytes:
    stream = _stream_for_xgroup(client, args)
    group = _existing_group(stream, args)  # type: ignore[arg-type]
    if args[4] in group.consumers:
        return resp.ZERO
    group.consumer(args[4], client.clock.now_ms())
    written(client, args[2], STREAM, b"xgroup-createconsumer")
    return resp.ONE


@command("xgroup|delconsumer", arity=5, flags="write", keys=(2, 2, 1),
         acl="@write @stream @slow", since="5.0.0",
         summary="Deletes a consumer from a consumer group.", syntax="key group consumer")
def xgroup_delconsumer(client: Session, args: list[bytes]) -> bytes:
    stream = _stream_for_xgroup(client, args)
    group = _existing_group(stream, args)  # type: ignore[arg-type]
    consumer = group.consumers.get(args[4])
    if consumer is None:
        return resp.ZERO
    pending = group.delete_consumer(consumer)
    written(client, args[2], STREAM, b"xgroup-delconsumer")
    return resp.integer(pending)


# ---------------------------------------------------------------------------------------------
# XREADGROUP
# ---------------------------------------------------------------------------------------------

_MEANINGLESS_ID: Final = ("ERR The {0} ID is meaningless in the context of XREADGROUP: you want to "
                   "read the history of this consumer by specifying a proper ID, or use the > "
                   "ID to get new messages. The {0} ID would just return an empty result set.")
_NEW_ENTRIES: Final = -1  # the ">" ID


class _Budget:
    """What is left of a call's MAXCOUNT/MAXSIZE (8.10), checked before each entry is
    delivered: an entry over the budget is neither sent nor made pending."""

    __slots__ = ("entries", "size", "used", "sent")

    def __init__(self, maxcount: int, maxsize: int) -> None:
        self.entries = maxcount or -1  # -1 = no cap
        self.size = maxsize  # 0 = no cap
        self.used = 0
        self.sent = 0

    def unlimited(self) -> bool:
        return self.entries < 0 and not self.size

    def allows(self, piece: bytes, extra: bytes = b"") -> bool:
        """Whether ``piece`` (one entry's encoding) may go. MAXSIZE counts the entry itself,
        ``[id, fields]``: CLAIM's idle time and delivery count (``extra``, at the end of
        ``piece``, under an array header as wide) are not counted."""
        if self.entries == 0:
            return False
        if self.size and self.sent and self.used >= self.size:
            return False  # at least one entry is always returned
        self.used += len(piece) - len(extra)
        self.sent += 1
        if self.entries > 0:
            self.entries -= 1
        return True


def _history(stream: Stream, group: Group, consumer: Consumer, after: int, count: int,
             now: int, budget: _Budget, log: list[int] | None,
             proto: int) -> tuple[int, list[bytes]]:
    """The consumer's own pending entries with IDs above ``after``: delivered again (count
    and time updated), a deleted one as ``[id, nil]`` (the nil array of the client's protocol).
    ``log`` (persistence on) collects the IDs whose PEL record changed."""
    pieces: list[bytes] = []
    deleted_fields = resp.null_array(proto)
    for entry_id in list(consumer.pel.ids(after + 1)):
        if count and len(pieces) >= count:
            break
        row = stream.get(entry_id)
        if row is None:
            sid = format_id(entry_id)
            piece = b"*2\r\n$%d\r\n%s\r\n%s" % (len(sid), sid, deleted_fields)
        else:
            piece = encode_entry(entry_id, row)
        if not budget.allows(piece):
            break
        if row is not None:
            _redeliver(group, entry_id, consumer, now)
            if log is not None:
                log.append(entry_id)
        pieces.append(piece)
    return len(pieces), pieces


def _redeliver(group: Group, entry_id: int, consumer: Consumer, now: int) -> None:
    """One more delivery of a pending entry, now, to ``consumer`` (an XNACK FATAL entry's
    count stays at the maximum)."""
    record = group.pel.get(entry_id)
    assert record is not None
    group.deliver(entry_id, consumer, now, min(record[2] + 1, LLONG_MAX))


# XREADGROUP CLAIM's idle time and delivery count for an entry delivered for the first time.
_NEW_CLAIM_EXTRA: Final = b":0\r\n:0\r\n"


def _deliver_new(stream: Stream, group: Group, consumer: Consumer, count: int, noack: bool,
                 now: int, budget: _Budget, log: list[int] | None,
                 claim: bool = False) -> tuple[int, list[bytes]]:
    """Entries after the group's last-delivered-id: the group advances over them and, unless
    NOACK, each becomes pending for ``consumer`` (and goes to ``log``, when given). With
    ``claim`` each piece is one entry in CLAIM's form, ``[id, fields, 0, 0]``."""
    extra, nextra = (_NEW_CLAIM_EXTRA, 2) if claim else (b"", 0)
    if budget.unlimited():  # the usual read: whole cached encodings, the PEL grows in one go
        ids, pieces = stream.read_resp(group.last_id + 1, count or None, extra=extra,
                                       nextra=nextra)
        advance_over(stream, group, ids)
        if not noack:
            group.deliver_new(ids, consumer, now)
            if log is not None:
                log += ids
        return len(ids), pieces
    pieces = []
    for entry_id, row in stream.range(group.last_id + 1, MAX_ID, count or None):
        piece = encode_entry(entry_id, row, extra, nextra)
        if not budget.allows(piece, extra):
            break
        advance(stream, group, entry_id)
        if not noack:
            group.deliver_new([entry_id], consumer, now)
            if log is not None:
                log.append(entry_id)
        pieces.append(piece)
    return len(pieces), pieces


def _claim(stream: Stream, group: Group, consumer: Consumer, min_idle: int, count: int,
           now: int, budget: _Budget, log: list[int] | None) -> tuple[int, list[bytes]]:
    """XREADGROUP CLAIM (8.4): before new entries, take pending entries idle for at least
    ``min_idle`` ms: released ones (XNACK) first in release order, then the most idle first.
    Each is replied as ``[id, fields, idle ms, deliveries so far]``; entries no longer in the
    stream leave the PEL on the way."""
    cutoff = now - min_idle
    candidates = list(group.nacked)
    candidates += [entry_id for _time, entry_id in
                   group.idle_index().irange(maximum=(cutoff, MAX_ID))]
    pieces: list[bytes] = []
    for entry_id in candidates:
        if count and len(pieces) >= count:
            break
        row = stream.get(entry_id)
        if row is None:
            group.ack(entry_id)
            if log is not None:
                log.append(entry_id)
            continue
        record = group.pel.get(entry_id)
        assert record is not None
        _, delivery_time, delivered, _ = record
        extra = b":%d\r\n:%d\r\n" % (max(now - delivery_time, 0), delivered)
        piece = encode_entry(entry_id, row, extra, 2)  # [id, fields, idle, deliveries]
        if not budget.allows(piece, extra):
            break
        _redeliver(group, entry_id, consumer, now)
        if log is not None:
            log.append(entry_id)
        pieces.append(piece)
    if pieces:
        consumer.active_time = now
    return len(pieces), pieces


@command(
    "xreadgroup", arity=-7, flags="write blocking movablekeys", acl="@write @stream @slow @blocking",
    group="stream", since="5.0.0",
    summary="Returns new or historical messages from a stream for a consumer in a group. "
    "Blocks until a message is available otherwise.",
    complexity="For each stream mentioned: O(M) with M being the number of elements returned. "
    "If M is constant (e.g. always asking for the first 10 elements with COUNT), you can "
    "consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time "
    "in order to serve the N clients blocked on the stream getting new data.",
    syntax="GROUP group consumer [COUNT count] [MAXCOUNT maxcount] [MAXSIZE maxsize] "
    "[BLOCK milliseconds] [CLAIM min-idle-time] [NOACK] STREAMS key [key ...] id [id ...]",
)
def xreadgroup(client: Session, args: list[bytes]) -> bytes | None:
    parsed = parse_read_args(args, True, client.clock.now_ms())
    db = client.db
    keys = args[parsed.streams_at:parsed.streams_at + parsed.nstreams]
    id_args = args[parsed.streams_at + parsed.nstreams:]
    group_name = parsed.group
    assert group_name is not None and parsed.consumer is not None
    targets: list[tuple[bytes, Stream, Group, int]] = []
    for key, id_arg in zip(keys, id_args, strict=True):
        stream = write_stream(db, key)
        group = _group_of(stream, group_name)
        if stream is None or group is None:
            raise CommandError(f"NOGROUP No such key '{text(key)}' or consumer group "
                               f"'{text(group_name)}' in XREADGROUP with GROUP option")
        if id_arg == b"$" or id_arg == b"+":
            raise CommandError(_MEANINGLESS_ID.format(id_arg.decode()))
        after = _NEW_ENTRIES if id_arg == b">" else parse_strict_id(id_arg)
        if after == MAX_ID:
            after = _NEW_ENTRIES  # Redis stores ">" as the largest ID: typed out, it reads new
        targets.append((key, stream, group, after))

    now = client.clock.now_ms()
    budget = _Budget(parsed.maxcount, parsed.maxsize)
    served: list[tuple[bytes, int, list[bytes]]] = []
    server = client.server
    propagating = server.propagating
    if propagating:
        suppress(client)  # persisted as its effects (claims, positions, consumers) alone
    log: list[int] | None = None
    position = (0, 0)  # the group's (last_id, entries_read) before the read, when persisting
    # Redis's dirty count: one per consumer created and one per stream whose read propagated
    # something (new entries, claims); a history read changes delivery counts only, which
    # Redis neither propagates nor counts (Brook persists them, but the count stays Redis's).
    dirty = 0
    for key, stream, group, after in targets:
        # Since Redis 7.2 every read creates the consumer and counts as an attempt (seen-time).
        if parsed.consumer not in group.consumers:
            notify(client, STREAM, b"xgroup-createconsumer", key)
            dirty += 1
            if propagating:
                propagate(client, _consumer_effect(key, group, parsed.consumer))
        consumer = group.consumer(parsed.consumer, now)
        assert consumer is not None
        consumer.seen_time = now
        if after == _NEW_ENTRIES and parsed.claim is None and (
                not stream.length or stream.last_live_id() <= group.last_id):
            continue  # nothing new for this group here
        if propagating:
            log = []
            position = (group.last_id, group.entries_read)
        if after == _NEW_ENTRIES and parsed.claim is not None:
            pending = len(group.pel)
            n, pieces = _claim(stream, group, consumer, parsed.claim, parsed.count, now, budget,
                               log)
            if len(group.pel) != pending:
                dirty += 1  # entries gone from the stream left the PEL
                db.modified(key)
            more = parsed.count - n if parsed.count else 0
            if not parsed.count or more > 0:
                extra, new = _deliver_new(stream, group, consumer, more, parsed.noack, now,
                                          budget, log, claim=True)
                n += extra
                pieces += new
        elif after == _NEW_ENTRIES:
            n, pieces = _deliver_new(stream, group, consumer, parsed.count, parsed.noack, now,
                                     budget, log)
        else:
            n, pieces = _history(stream, group, consumer, after, parsed.count, now, budget, log,
                                 client.protocol)
        if log is not None:
            _propagate_claims(client, key, group, parsed.consumer, log)
            if (group.last_id, group.entries_read) != position:
                propagate(client, _position_effect(key, group))
        # active-time is the last read that put entries into the PEL (Redis sets it where a
        # NACK is created or claimed): not a NOACK read, not a history read.
        if n and after == _NEW_ENTRIES and (not parsed.noack or parsed.claim is not None):
            consumer.active_time = now
        if not n and after == _NEW_ENTRIES:
            continue  # MAXCOUNT/MAXSIZE already spent on earlier streams
        served.append((key, n, pieces))
        if after == _NEW_ENTRIES:
            dirty += 1
        db.modified(key)
        if db.blocking:
            blocking.pending_changed(db, key)
    server.dirty += dirty
    if not served:
        if parsed.block is None:
            return resp.null_array(client.protocol)
        reply = blocking.block(client, COMMANDS["xreadgroup"], args, list(keys),
                               blocking.GROUP, parsed.block, group=group_name,
                               claim=parsed.claim)
        return reply  # parked: the dispatcher persists what this run declared (a consumer)
    proto = client.protocol
    out = [b"*%d\r\n" % len(served) if proto == 2 else b"%%%d\r\n" % len(served)]
    for key, n, pieces in served:
        if proto == 2:
            out.append(b"*2\r\n")
        out.append(b"$%d\r\n%s\r\n*%d\r\n" % (len(key), key, n))
        out += pieces
    return b"".join(out)


COMMANDS["xreadgroup"].find_keys = streams_key_positions
COMMANDS["xreadgroup"].key_keyword = "STREAMS"


# ---------------------------------------------------------------------------------------------
# XACK / XPENDING
# ---------------------------------------------------------------------------------------------


@command("xack", arity=-4, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
         group="stream", since="5.0.0",
         summary="Returns the number of messages that were successfully acknowledged by the "
         "consumer group member of a stream.",
         complexity="O(1) for each message ID processed.", syntax="key group id [id ...]")
def xack(client: Session, args: list[bytes]) -> bytes:
    stream = read_stream(client.db, args[1])
    group = _group_of(stream, args[2])
    if group is None:
        return resp.ZERO
    ids = parse_ids(args[3:])  # all or nothing: every ID is checked first
    acked = group.ack_many(ids)
    if acked:
        written(client, args[1], changes=acked)
    return resp.integer(acked)


@command("xackdel", arity=-6, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
         group="stream", since="8.2.0",
         summary="Acknowledges and conditionally deletes one or multiple entries for a stream "
         "consumer group.",
         complexity="O(1) for each entry ID processed.",
         syntax="key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...]")
def xackdel(client: Session, args: list[bytes]) -> bytes:
    policy, ids = parse_delete_args(args, 3)
    stream = write_stream(client.db, args[1])
    group = _group_of(stream, args[2])
    if stream is None or group is None:
        return resp.array([resp.integer(-1)] * len(ids))
    results = []
    for entry_id in ids:
        if not group.ack(entry_id):
            results.append(-1)  # not pending in this group: nothing acked, nothing deleted
            continue
        # Acknowledged: 1 once the entry is deleted (or already gone), 2 if ACKED keeps it.
        results.append(abs(delete_with_policy(stream, entry_id, policy)))
    if len(results) != results.count(-1):  # something was acknowledged
        written(client, args[1])
    return resp.array([resp.integer(n) for n in results])


@command("xpending", arity=-3, flags="readonly", keys=(1, 1, 1), acl="@read @stream @slow",
         group="stream", since="5.0.0",
         summary="Returns the information and entries from a stream consumer group's pending "
         "entries list.",
         complexity="O(N) with N being the number of elements returned, so asking for a small "
         "fixed number of entries per call is O(1). O(M), where M is the total number of "
         "entries scanned when used with the IDLE filter. When the command returns just the "
         "summary and the list of consumers is small, it runs in O(1) time; otherwise, an "
         "additional O(N) time for iterating every consumer.",
         syntax="key group [[IDLE min-idle-time] start end count [consumer]]")
def xpending(client: Session, args: list[bytes]) -> bytes:
    argc = len(args)
    if argc != 3 and not 6 <= argc <= 9:
        raise CommandError(SYNTAX_ERROR)
    min_idle = 0
    consumer_name = None
    if argc >= 6:
        first = 3
        if args[3].lower() == b"idle":
            min_idle = parse_int(args[4])
            if argc < 8:
                raise CommandError(SYNTAX_ERROR)
            first = 5
        count = max(parse_int(args[first + 2]), 0)
        start, end = parse_range(args[first], args[first + 1])
        if first + 3 < argc:
            consumer_name = args[first + 3]
    stream = read_stream(client.db, args[1])
    group = _group_of(stream, args[2])
    if group is None:
        raise CommandError(f"NOGROUP No such key '{text(args[1])}' or consumer group "
                           f"'{text(args[2])}'")
    proto = client.protocol
    if argc == 3:
        if not group.pel:
            return b"*4\r\n:0\r\n" + resp.null(proto) * 2 + resp.null_array(proto)
        owners = sorted((name, len(c.pel)) for name, c in group.consumers.items() if c.pel)
        return resp.encode([len(group.pel), format_id(group.pel.first_id()),
                            format_id(group.pel.last_id()),
                            [[name, b"%d" % pending] for name, pending in owners]], proto)
    records: Iterator[Record] = group.pel.records(start)
    if consumer_name is not None:
        consumer = group.consumers.get(consumer_name)
        if consumer is None:
            return resp.EMPTY_ARRAY
        records = map(group.pel.get, consumer.pel.ids(start))  # type: ignore[arg-type]
    now = client.clock.now_ms()
    rows: list[list[object]] = []
    if count and start <= end:
        for entry_id, delivery_time, delivery_count, slot in records:
            if entry_id > end:
                break
            if slot == NO_OWNER and entry_id in group.nacked:
                idle = -1  # released by XNACK: no delivery to measure from
            else:
                idle = max(now - delivery_time, 0)
            if min_idle and idle < min_idle:
                continue
            rows.append([format_id(entry_id), group.owner_name(slot), idle, delivery_count])
            if len(rows) >= count:
                break
    return resp.encode(rows, proto)


# ---------------------------------------------------------------------------------------------
# XINFO GROUPS / CONSUMERS and the groups of XINFO STREAM FULL
# ---------------------------------------------------------------------------------------------


@command("xinfo|groups", arity=3, flags="readonly", keys=(2, 2, 1), acl="@read @stream @slow",
         since="5.0.0", summary="Returns a list of the consumer groups of a stream.",
         syntax="key")
def xinfo_groups(client: Session, args: list[bytes]) -> bytes:
    stream = existing_stream(client, args[2])
    groups = sorted((stream.groups or {}).values(), key=lambda g: g.name)
    return resp.encode([resp.Map({
        "name": group.name,
        "consumers": len(group.consumers),
        "pending": len(group.pel),
        "last-delivered-id": format_id(group.last_id),
        "entries-read": entries_read_reply(group),
        "lag": group_lag(stream, group),
    }) for group in groups], client.protocol)


@command("xinfo|consumers", arity=4, flags="readonly", keys=(2, 2, 1),
         acl="@read @stream @slow", since="5.0.0",
         summary="Returns a list of the consumers in a consumer group.", syntax="key group")
def xinfo_consumers(client: Session, args: list[bytes]) -> bytes:
    stream = existing_stream(client, args[2])
    group = stream.group(args[3])
    if group is None:
        raise CommandError(f"NOGROUP No such consumer group '{text(args[3])}' for key name "
                           f"'{text(args[2])}'")
    now = client.clock.now_ms()
    consumers = sorted(group.consumers.values(), key=lambda c: c.name)
    return resp.encode([resp.Map({
        "name": consumer.name,
        "pending": len(consumer.pel),
        "idle": max(now - consumer.seen_time, 0),
        "inactive": max(now - consumer.active_time, 0) if consumer.active_time != -1 else -1,
    }) for consumer in consumers], client.protocol)




# ---------------------------------------------------------------------------------------------
# XCLAIM / XAUTOCLAIM
# ---------------------------------------------------------------------------------------------


def _group_or_nogroup(client: Session, args: list[bytes]) -> tuple[Stream, Group]:
    """Key and group of XCLAIM/XAUTOCLAIM, or Redis's NOGROUP error naming both."""
    stream = read_stream(client.db, args[1])
    group = _group_of(stream, args[2])
    if stream is None or group is None:
        raise CommandError(f"NOGROUP No such key '{text(args[1])}' or consumer group "
                           f"'{text(args[2])}'")
    return stream, group


def _take(group: Group, entry_id: int, consumer: Consumer, delivery_time: int,
          delivery_count: int, count_delivery: bool, retrycount: int = -1) -> None:
    """Move an entry with ``delivery_count`` deliveries so far to ``consumer`` with a new
    delivery time (and count)."""
    if retrycount >= 0:
        delivery_count = retrycount
    elif count_delivery and delivery_count < LLONG_MAX:
        delivery_count += 1  # an XNACK FATAL entry stays at the maximum
    group.deliver(entry_id, consumer, delivery_time, delivery_count)


def _claimed_entry(stream: Stream, entry_id: int, justid: bool) -> bytes:
    if justid:
        sid = format_id(entry_id)
        return b"$%d\r\n%s\r\n" % (len(sid), sid)
    row = stream.get(entry_id)
    assert row is not None
    return encode_entry(entry_id, row)


@command(
    "xclaim", arity=-6, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="5.0.0",
    summary="Changes, or acquires, ownership of a message in a consumer group, as if the message "
    "was delivered a consumer group member.",
    complexity="O(log N) with N being the number of messages in the PEL of the consumer group.",
    syntax="key group consumer min-idle-time id [id ...] [IDLE ms] "
    "[TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]",
)
def xclaim(client: Session, args: list[bytes]) -> bytes:
    stream, group = _group_or_nogroup(client, args)
    min_idle = max(parse_int(args[4], "ERR Invalid min-idle-time argument for XCLAIM"), 0)
    ids: list[int] = []
    j = 5
    while j < len(args):  # the IDs run until the first argument that is not one
        try:
            ids.append(parse_strict_id(args[j]))
        except CommandError:
            break
        j += 1
    now = client.clock.now_ms()
    retrycount = -1
    delivery_time = -1
    last_id = 0
    force = justid = False
    while j < len(args):
        more = len(args) - 1 - j
        opt = args[j].lower()
        if opt == b"force":
            force = True
        elif opt == b"justid":
            justid = True
        elif opt == b"idle" and more:
            j += 1
            delivery_time = now - parse_int(args[j], "ERR Invalid IDLE option argument for XCLAIM")
        elif opt == b"time" and more:
            j += 1
            delivery_time = parse_int(args[j], "ERR Invalid TIME option argument for XCLAIM")
        elif opt == b"retrycount" and more:
            j += 1
            retrycount = parse_int(args[j], "ERR Invalid RETRYCOUNT option argument for XCLAIM")
        elif opt == b"lastid" and more:
            j += 1
            last_id = parse_strict_id(args[j])
        else:
            raise CommandError(f"ERR Unrecognized XCLAIM option '{text(args[j])}'")
        j += 1
    if delivery_time == -1 or delivery_time < 0 or delivery_time > now:
        delivery_time = now  # a bogus time is not an error (clients' clocks differ)
    # Applied once every option parsed, as Redis does: a request in error changes nothing.
    moved = last_id > group.last_id
    if moved:
        group.last_id = last_id
    propagating = client.server.propagating
    if propagating:
        suppress(client)  # persisted as the records it left (streamPropagateXCLAIM)
    changed = moved
    if args[3] not in group.consumers:
        notify(client, STREAM, b"xgroup-createconsumer", args[1])
        changed = True
        if propagating:
            propagate(client, _consumer_effect(args[1], group, args[3]))
    consumer = group.consumer(args[3], now)  # created even when nothing is claimed (7.2)
    assert consumer is not None
    consumer.seen_time = now
    out: list[bytes] = []
    log: list[int] = []
    for entry_id in ids:
        record = group.pel.get(entry_id)
        if stream.get(entry_id) is None:
            if record is not None:  # the entry is gone: so is its PEL record
                group.ack(entry_id)
                changed = True
                log.append(entry_id)
            continue
        if record is None:
            if not force:
                continue
            delivery_count = 1  # a new record, as Redis's streamCreateNACK
        else:
            _, last_delivery, delivery_count, slot = record
            if slot != NO_OWNER and min_idle and now - last_delivery < min_idle:
                continue
        consumer.active_time = now
        _take(group, entry_id, consumer, delivery_time, delivery_count, not justid, retrycount)
        out.append(_claimed_entry(stream, entry_id, justid))
        changed = True
        log.append(entry_id)
    if changed:
        written(client, args[1])
        if propagating:
            _propagate_claims(client, args[1], group, args[3], log)
            if moved:
                propagate(client, _position_effect(args[1], group))
    return b"".join([b"*%d\r\n" % len(out), *out])


@command(
    "xautoclaim", arity=-6, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="6.2.0",
    summary="Changes, or acquires, ownership of messages in a consumer group, as if the "
    "messages were delivered to as consumer group member.",
    complexity="O(1) if COUNT is small.",
    syntax="key group consumer min-idle-time start [COUNT count] [JUSTID]",
)
def xautoclaim(client: Session, args: list[bytes]) -> bytes:
    min_idle = max(parse_int(args[4], "ERR Invalid min-idle-time argument for XAUTOCLAIM"), 0)
    start = parse_start(args[5])
    count = 100
    justid = False
    j = 6
    while j < len(args):
        opt = args[j].lower()
        if opt == b"count" and j + 1 < len(args):
            count = parse_int(args[j + 1], "ERR COUNT must be > 0")
            if not 1 <= count <= (1 << 63) // 16:
                raise CommandError("ERR COUNT must be > 0")
            j += 2
        elif opt == b"justid":
            justid = True
            j += 1
        else:
            raise CommandError(SYNTAX_ERROR)
    stream, group = _group_or_nogroup(client, args)
    now = client.clock.now_ms()
    attempts = count * 10  # Redis scans at most 10 x COUNT PEL entries
    # The records it may look at, and the one after them (the next cursor).
    scan = list(islice(group.pel.records(start), attempts + 1))
    propagating = client.server.propagating
    if propagating:
        suppress(client)  # persisted as the records it left (streamPropagateXCLAIM)
    created = args[3] not in group.consumers
    if created:
        notify(client, STREAM, b"xgroup-createconsumer", args[1])
        if propagating:
            propagate(client, _consumer_effect(args[1], group, args[3]))
    consumer = group.consumer(args[3], now)  # created even when nothing is claimed (7.2)
    assert consumer is not None
    consumer.seen_time = now
    out: list[bytes] = []
    deleted: list[int] = []
    log: list[int] = []  # claimed and deleted ones alike, in the order they were met
    pos = 0
    while attempts and count and pos < len(scan):
        attempts -= 1
        entry_id, delivery_time, delivery_count, _ = scan[pos]
        pos += 1
        if stream.get(entry_id) is None:
            group.ack(entry_id)  # gone from the stream: dropped from the PEL, reported
            deleted.append(entry_id)
            log.append(entry_id)
            count -= 1
            continue
        if min_idle and now - delivery_time < min_idle:
            continue
        consumer.active_time = now
        _take(group, entry_id, consumer, now, delivery_count, not justid)
        out.append(_claimed_entry(stream, entry_id, justid))
        log.append(entry_id)
        count -= 1
    cursor = format_id(scan[pos][0]) if pos < len(scan) else b"0-0"
    if out or deleted or created:
        written(client, args[1])
        if propagating:
            _propagate_claims(client, args[1], group, args[3], log)
    return b"".join([b"*3\r\n$%d\r\n%s\r\n*%d\r\n" % (len(cursor), cursor, len(out)), *out,
                     resp.array_of_bulks(format_id(i) for i in deleted)])


# ---------------------------------------------------------------------------------------------
# XNACK (8.8)
# ---------------------------------------------------------------------------------------------

_XNACK_MODES: Final = {b"silent", b"fail", b"fatal"}


def _parse_xnack(args: list[bytes]) -> tuple[bytes, list[int], int, bool]:
    """``mode IDS numids id... [RETRYCOUNT n] [FORCE]`` (options on either side of IDS):
    (mode, ids, retrycount or -1, force)."""
    mode = args[3].lower()
    if mode not in _XNACK_MODES:
        raise CommandError("ERR mode must be SILENT, FAIL, or FATAL")
    ids: list[int] | None = None
    retrycount = -1
    force = False
    i = 4
    while i < len(args):
        opt = args[i].lower()
        if opt == b"ids" and ids is None and i + 1 < len(args):
            try:
                numids = parse_int(args[i + 1])
            except CommandError:
                numids = 0
            if numids <= 0:
                raise CommandError("ERR numids must be a positive integer")
            if numids > len(args) - i - 2:
                raise CommandError("ERR number of IDs doesn't match numids")
            ids = parse_ids(args[i + 2:i + 2 + numids])
            i += 2 + numids
        elif opt == b"retrycount" and i + 1 < len(args):
            retrycount = parse_int(args[i + 1])
            if retrycount < 0:
                raise CommandError("ERR Invalid RETRYCOUNT value, must be >= 0")
            i += 2
        elif opt == b"force":
            force = True
            i += 1
        else:
            raise CommandError(f"ERR Unrecognized XNACK option '{text(args[i])}'")
    if ids is None:
        raise CommandError("ERR syntax error, expected IDS keyword")
    return mode, ids, retrycount, force


@command(
    "xnack", arity=-7, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="8.8.0",
    summary="Releases pending entries of a consumer group without acknowledging them.",
    complexity="O(log N) for each entry ID, with N the number of entries in the group's PEL.",
    syntax="key group SILENT | FAIL | FATAL IDS numids id [id ...] [RETRYCOUNT count] [FORCE]",
)
def xnack(client: Session, args: list[bytes]) -> bytes:
    mode, ids, retrycount, force = _parse_xnack(args)
    stream, group = _group_or_nogroup(client, args)
    released = 0
    for entry_id in ids:
        record = group.pel.get(entry_id)
        if record is None:
            if not force or stream.get(entry_id) is None:
                continue  # only entries of the PEL are released (FORCE: any stream entry)
            delivery_count = 0
        else:
            delivery_count = record[2]
        if retrycount >= 0:
            delivery_count = retrycount
        elif mode == b"silent":
            delivery_count = max(delivery_count - 1, 0)
        elif mode == b"fatal":
            delivery_count = LLONG_MAX
        group.release(entry_id, delivery_count)
        released += 1
    if released:
        written(client, args[1])
        if client.db.blocking:
            blocking.pending_changed(client.db, args[1])
    return resp.integer(released)
