"""Stream commands that need no consumer group: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XDELEX,
XTRIM, XSETID, XCFGSET, XREAD (BLOCK parks the client: :mod:`brook.blocking`) and XINFO
STREAM / HELP.

The stream itself is :class:`brook.types.stream.Stream` (IDs are ints inside, ``b"ms-seq"`` on
the wire). Replies and error texts follow ``t_stream.c``; where the order of checks decides
which error a bad request gets, the order is Redis's too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook import blocking
from brook.commands.args import parse_int
from brook.commands.common import help_reply
from brook.commands.registry import (
    COMMANDS,
    NO_SUCH_KEY,
    SYNTAX_ERROR,
    WRONGTYPE,
    CommandError,
    command,
    container,
    replay_shortcut,
    subcommand_error,
)
from brook.commands.stream_access import (
    delete_with_policy,
    existing_stream,
    groups_info,
    new_stream,
    read_stream,
    write_stream,
)
from brook.commands.stream_args import (
    ACKED,
    DELREF,
    KEEPREF,
    TrimArgs,
    next_auto_id,
    parse_delete_args,
    parse_ids,
    parse_range,
    parse_read_args,
    parse_strict_id,
    parse_trim_args,
    plain_id,
    streams_key_positions,
)
from brook.notify import STREAM, notify, written
from brook.persistence.aof import encode_xadd
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.types.groups import drop_references_below, referenced
from brook.types.idmp import Idmp, content_iid
from brook.types.stream import MAX_ID, EntryTooLarge, Stream, format_id

if TYPE_CHECKING:
    from brook.session import Session

_MASK64: Final = (1 << 64) - 1


# ---------------------------------------------------------------------------------------------
# Reply encoding (the lookups are brook.commands.stream_access's)
# ---------------------------------------------------------------------------------------------


def _id_reply(entry_id: int) -> bytes:
    """XADD's reply: the ID as a bulk string."""
    return resp.bulk(format_id(entry_id))


def _idmp_of(client: Session, stream: Stream) -> Idmp:
    """The stream's deduplication state, created with the server's defaults on first use."""
    if stream.idmp is None:
        config = client.server.config
        stream.idmp = Idmp(config.stream_idmp_duration, config.stream_idmp_maxsize)
    return stream.idmp


def _entry_value(entry: tuple[int, list[bytes]]) -> list[object]:
    """An entry as a reply value for :func:`resp.encode`."""
    return [format_id(entry[0]), list(entry[1])]


# ---------------------------------------------------------------------------------------------
# XADD / XTRIM
# ---------------------------------------------------------------------------------------------


def _exact_spec(parsed: TrimArgs) -> list[bytes]:
    """An exact MAXLEN/MINID as the arguments that request it."""
    if parsed.strategy == "maxlen":
        return [b"MAXLEN", b"=", b"%d" % parsed.maxlen]
    return [b"MINID", b"=", format_id(parsed.minid)]


def _trim(stream: Stream, parsed: TrimArgs, exact: list[bytes] | None = None) -> int:
    """Apply a parsed MAXLEN/MINID with its reference policy; returns the entries removed.

    ``exact`` (persistence on, approximate trim that removed something) receives the exact
    MAXLEN/MINID that removes the same entries on replay, where node boundaries, LIMIT and
    the node-size settings may differ (Redis's streamRewriteTrimArgument)."""
    if parsed.ref_policy == ACKED and stream.groups:
        return _trim_acked(stream, parsed, exact)
    if parsed.strategy == "maxlen":
        removed = stream.trim_maxlen(parsed.maxlen, parsed.approx, parsed.limit)
    else:
        removed = stream.trim_minid(parsed.minid, parsed.approx, parsed.limit)
    if removed and parsed.ref_policy == DELREF and stream.groups:
        drop_references_below(stream, stream.first_id() if stream.length else MAX_ID)
    if exact is not None and removed:
        if parsed.strategy == "maxlen" or not stream.length:
            exact += [b"MAXLEN", b"=", b"%d" % stream.length]
        else:
            exact += [b"MINID", b"=", format_id(stream.first_id())]
    return removed


def _trim_acked(stream: Stream, parsed: TrimArgs, exact: list[bytes] | None = None) -> int:
    """ACKED trimming: of the entries the strategy would remove, only those no group still
    needs go, one by one (whole nodes do not matter here); LIMIT still bounds the work.
    The exact form of a trim that LIMIT stopped is MINID at the first entry not looked at."""
    if parsed.strategy == "maxlen":
        candidates = stream.range(0, MAX_ID, max(stream.length - parsed.maxlen, 0))
    else:
        candidates = stream.range(0, parsed.minid - 1) if parsed.minid else []
    removed = 0
    stopped_at = None
    for entry_id, _row in candidates:
        if parsed.limit and removed >= parsed.limit:
            stopped_at = entry_id
            break
        if not referenced(stream, entry_id):
            stream.delete(entry_id, count_as_deleted=False)
            removed += 1
    if exact is not None and removed:
        if stopped_at is None:
            exact += _exact_spec(parsed)
        else:
            exact += [b"MINID", b"=", format_id(stopped_at)]
    return removed


def _stream_for_xadd(client: Session, key: bytes, nomkstream: bool) -> Stream | None:
    """The stream XADD appends to, created unless NOMKSTREAM (then None); Redis's errors for
    another type and for a stream whose last ID is the largest possible."""
    stream = client.db.lookup(key)  # write_stream, inlined: XADD is the hottest write
    if stream is None:
        if nomkstream:
            return None
        stream = new_stream(client, key)
    elif type(stream) is not Stream:
        raise CommandError(WRONGTYPE)
    if stream.last_id == MAX_ID:
        raise CommandError("ERR The stream has exhausted the last possible ID, unable to add "
                           "more items")
    return stream


def _store(client: Session, stream: Stream, entry_id: int, fields: list[bytes]) -> None:
    """Append an entry under the current node limits (CONFIG SET applies to later appends)."""
    config = client.server.config
    if (stream.max_entries != config.stream_node_max_entries
            or stream.max_bytes != config.stream_node_max_bytes):
        stream.set_node_limits(config.stream_node_max_entries, config.stream_node_max_bytes)
    try:
        stream.append(entry_id, fields)
    except EntryTooLarge:
        raise CommandError("ERR Elements are too large to be stored") from None


def _xadd_auto(client: Session, args: list[bytes]) -> bytes:
    """``XADD key * field value ...``, the form producers send all the time, without the
    option parser (Redis has the same shortcut for a leading ``*``)."""
    key = args[1]
    stream = _stream_for_xadd(client, key, False)
    assert stream is not None
    entry_id, sid = next_auto_id(client.clock.command_ms(client.last_interaction), stream.last_id)
    fields = args[3:]
    _store(client, stream, entry_id, fields)
    if client.server.propagating:  # persisted with the ID it got, encoded here: the hottest write
        client.encoded_effect = encode_xadd(key, sid, fields)
    written(client, key, STREAM, b"xadd", 1, True)
    return resp.bulk(sid)


def _xadd_idmp(client: Session, args: list[bytes]) -> bytes:
    """``XADD key IDMP producer iid * field value ...``, the exactly-once sink's every write,
    without the option parser (a third of the request's cost). Persisted as the general path
    persists it: with the ID it got, so a replay records the pair again."""
    key, pid, iid = args[1], args[3], args[4]
    stream = _stream_for_xadd(client, key, False)
    assert stream is not None
    idmp = _idmp_of(client, stream)
    fields = args[6:]
    now = client.clock.now_ms()
    found = _duplicate(client, idmp, key, pid, iid, fields, now)
    if found is not None:
        return found
    entry_id, sid = next_auto_id(client.clock.command_ms(client.last_interaction), stream.last_id)
    _store(client, stream, entry_id, fields)
    idmp.record(pid, iid, entry_id, min(entry_id >> 64, now))
    if client.server.propagating:
        propagate(client, [b"XADD", key, b"IDMP", pid, iid, sid, *fields])
    written(client, key, STREAM, b"xadd", 1, True)
    return resp.bulk(sid)


def _duplicate(client: Session, idmp: Idmp, key: bytes, pid: bytes, iid: bytes,
               fields: list[bytes], now: int) -> bytes | None:
    """The reply to an idempotent XADD whose (producer, iid) pair the stream remembers: the
    ID of the entry it added; None for a new pair."""
    found = idmp.find(pid, iid, now)
    if found is None:
        return None
    if client.server.propagating:  # iids-duplicates moved: replay counts it again
        propagate(client, [b"XADD", key, b"IDMP", pid, iid, format_id(found), *fields])
    return _id_reply(found)


def append_explicit(client: Session, args: list[bytes]) -> int:
    """``XADD key ms-seq field value ...`` with a plain ID above the stream's last one: the
    entry's ID; -1, having changed nothing, for anything else (other ID forms, errors), which
    the general path handles with Redis's replies. Written as sent, so nothing to persist
    specially. The AOF loader calls it directly for the XADDs a stream's AOF holds by the
    million (it has no use for the reply)."""
    entry_id = plain_id(args[2])
    if entry_id < 0:
        return -1
    key = args[1]
    db = client.db
    stream = db.data.get(key)
    if type(stream) is not Stream or db.expires or entry_id <= stream.last_id:
        return -1
    _store(client, stream, entry_id, args[3:])
    db.data.touch(key)
    written(client, key, STREAM, b"xadd", 1, True)
    return entry_id


def _canonical(sid: bytes) -> bool:
    """Is a plain ``ms-seq`` ID (see :func:`plain_id`) written as Redis prints it, without
    leading zeros?"""
    if sid[0] == 48 and sid[1] != 45:
        return False
    dash = 1
    while sid[dash] != 45:
        dash += 1
    return sid[dash + 1] != 48 or dash + 2 == len(sid)


@command(
    "xadd", arity=-5, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="5.0.0",
    summary="Appends a new message to a stream. Creates the key if it doesn't exist.",
    complexity="O(1) when adding a new entry, O(N) when trimming where N being the number of "
    "entries evicted.",
    syntax="key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] "
    "[IDMPAUTO producer-id | IDMP producer-id idempotent-id] "
    "[MAXLEN | MINID [= | ~] threshold [LIMIT count]] * | id field value [field value ...]",
)
def xadd(client: Session, args: list[bytes]) -> bytes:
    if len(args) & 1:
        if args[2] == b"*":
            return _xadd_auto(client, args)
        if args[2][:1].isdigit():  # an ID, no options: what the AOF replays by the million
            entry_id = append_explicit(client, args)
            if entry_id >= 0:  # a canonical ID is replied with as sent
                return resp.bulk(args[2]) if _canonical(args[2]) else _id_reply(entry_id)
    elif len(args) >= 8 and args[5] == b"*" and args[2] == b"IDMP" and args[3] and args[4]:
        return _xadd_idmp(client, args)
    server = client.server
    parsed = parse_trim_args(args, True, server.config.stream_node_max_entries, server.loading)
    field_pos = parsed.id_index + 1
    nfields = len(args) - field_pos
    if nfields < 2 or nfields & 1:
        raise CommandError("ERR wrong number of arguments for 'xadd' command")
    if parsed.id_given and parsed.seq_given and not parsed.entry_id:
        raise CommandError("ERR The ID specified in XADD must be greater than 0-0")
    key = args[1]
    stream = _stream_for_xadd(client, key, parsed.nomkstream)
    if stream is None:
        return resp.null(client.protocol)
    last_id = stream.last_id
    fields = args[field_pos:]
    iid = None
    now = 0
    if parsed.idmp_pid is not None:
        now = client.clock.now_ms()
        iid = parsed.idmp_iid if parsed.idmp_iid is not None else content_iid(fields)
        idmp = _idmp_of(client, stream)
        if parsed.id_given:
            # Only when replaying the AOF: a duplicate is persisted with the ID it answered.
            if idmp.lookup(parsed.idmp_pid, iid) == parsed.entry_id:
                idmp.duplicates += 1
                return _id_reply(parsed.entry_id)
        else:
            duplicate = _duplicate(client, idmp, key, parsed.idmp_pid, iid, fields, now)
            if duplicate is not None:
                return duplicate

    if not parsed.id_given:
        entry_id = next_auto_id(client.clock.command_ms(client.last_interaction), last_id)[0]
    else:
        entry_id = parsed.entry_id
        if not parsed.seq_given and entry_id >> 64 == last_id >> 64:
            if last_id & _MASK64 == _MASK64:
                entry_id = 0  # fails the check below
            else:
                entry_id = last_id + 1
    if entry_id <= last_id:
        raise CommandError("ERR The ID specified in XADD is equal or smaller than the target "
                           "stream top item")
    _store(client, stream, entry_id, fields)
    if iid is not None:
        # Remembered from the entry's millisecond (never later than now), which the
        # persisted ID carries: a replay restores when each idempotent ID expires.
        _idmp_of(client, stream).record(parsed.idmp_pid, iid, entry_id,  # type: ignore[arg-type]
                                        min(entry_id >> 64, now))
    exact: list[bytes] | None = [] if parsed.approx and server.propagating else None
    trimmed = _trim(stream, parsed, exact) if parsed.strategy is not None else 0
    if server.propagating and (not parsed.id_given or not parsed.seq_given or parsed.approx
                               or iid is not None):
        _propagate_xadd(client, parsed, key, entry_id, iid, exact, fields)
    written(client, key, STREAM, b"xadd", 1, True)
    if trimmed:
        notify(client, STREAM, b"xtrim", key)
    return _id_reply(entry_id)


@replay_shortcut("xadd")
def replay_xadd(client: Session, args: list[bytes]) -> bool:
    """An XADD with a plain explicit ID, what a stream's AOF is made of, applied without the
    handler's reply (4,000 instructions of a replayed XADD were the dispatcher and the reply,
    which replaying discards)."""
    return len(args) >= 5 and len(args) & 1 == 1 and append_explicit(client, args) >= 0


def _propagate_xadd(client: Session, parsed: TrimArgs, key: bytes, entry_id: int,
                    iid: bytes | None, exact: list[bytes] | None, fields: list[bytes]) -> None:
    """Persist an XADD that would not replay as sent: the ID it got, an approximate trim as
    the exact one it amounted to (none when it removed nothing), IDMPAUTO as IDMP with the
    computed idempotent ID (explicit IDs with IDMP are accepted from the AOF only)."""
    effect = [b"XADD", key]
    if parsed.nomkstream:
        effect.append(b"NOMKSTREAM")
    if parsed.ref_policy != KEEPREF:
        effect.append(parsed.ref_policy.upper().encode())
    if iid is not None:
        effect += [b"IDMP", parsed.idmp_pid, iid]  # type: ignore[list-item]
    if parsed.strategy is not None:
        effect += exact if exact is not None else _exact_spec(parsed)
    effect.append(format_id(entry_id))
    effect += fields
    propagate(client, effect)


@command(
    "xtrim", arity=-4, flags="write", keys=(1, 1, 1), acl="@write @stream @slow",
    group="stream", since="5.0.0", summary="Deletes messages from the beginning of a stream.",
    complexity="O(N), with N being the number of evicted entries. Constant times are very small "
    "however, since entries are organized in macro nodes containing multiple entries that can "
    "be released with a single deallocation.",
    syntax="key MAXLEN | MINID [= | ~] threshold [LIMIT count] [KEEPREF | DELREF | ACKED]",
)
def xtrim(client: Session, args: list[bytes]) -> bytes:
    parsed = parse_trim_args(args, False, client.server.config.stream_node_max_entries)
    db = client.db
    stream = write_stream(db, args[1])
    if stream is None:
        return resp.ZERO
    exact: list[bytes] | None = [] if parsed.approx and client.server.propagating else None
    removed = _trim(stream, parsed, exact)
    if removed:
        written(client, args[1], STREAM, b"xtrim", removed)
        if exact is not None:  # approximate: persisted as the exact trim it amounted to
            effect = [b"XTRIM", args[1], *exact]
            if parsed.ref_policy != KEEPREF:
                effect.append(parsed.ref_policy.upper().encode())
            propagate(client, effect)
    return resp.integer(removed)


# ---------------------------------------------------------------------------------------------
# Deleting entries and moving the last ID
# ---------------------------------------------------------------------------------------------


@command(
    "xdel", arity=-3, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="5.0.0",
    summary="Returns the number of messages after removing them from a stream.",
    complexity="O(1) for each single item to delete in the stream, regardless of the stream "
    "size.",
    syntax="key id [id ...]",
)
def xdel(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    stream = write_stream(db, args[1])
    if stream is None:
        return resp.ZERO
    ids = parse_ids(args[2:])  # every ID is checked before any entry goes
    deleted = sum(1 for entry_id in ids if stream.delete(entry_id))
    if deleted:
        written(client, args[1], STREAM, b"xdel", deleted)
    return resp.integer(deleted)


def _pending_total(stream: Stream) -> int:
    """Pending entries over all the groups of a stream."""
    return sum(len(group.pel) for group in (stream.groups or {}).values())


@command(
    "xdelex", arity=-5, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="8.2.0",
    summary="Deletes one or multiple entries from the stream.",
    complexity="O(1) for each single item to delete in the stream, regardless of the stream "
    "size.",
    syntax="key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]",
)
def xdelex(client: Session, args: list[bytes]) -> bytes:
    policy, ids = parse_delete_args(args, 2)
    db = client.db
    stream = write_stream(db, args[1])
    if stream is None:
        return resp.array([resp.integer(-1)] * len(ids))
    # DELREF may clear PEL references even when no entry goes: that is a change too.
    pending = _pending_total(stream) if policy == DELREF and stream.groups else 0
    results = [delete_with_policy(stream, entry_id, policy) for entry_id in ids]
    deleted = results.count(1)
    if deleted:
        written(client, args[1], STREAM, b"xdel", deleted)
    elif pending and _pending_total(stream) != pending:
        written(client, args[1])
    return resp.array([resp.integer(n) for n in results])


@command(
    "xsetid", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="5.0.0", summary="An internal command for replicating stream values.",
    syntax="key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]",
)
def xsetid(client: Session, args: list[bytes]) -> bytes:
    new_last = parse_strict_id(args[2])
    entries_added = -1
    max_deleted = 0
    i = 3
    while i < len(args):
        more = len(args) - 1 - i
        opt = args[i].lower()
        if opt == b"entriesadded" and more:
            entries_added = parse_int(args[i + 1])
            if entries_added < 0:
                raise CommandError("ERR entries_added must be positive")
        elif opt == b"maxdeletedid" and more:
            max_deleted = parse_strict_id(args[i + 1])
            if new_last < max_deleted:
                raise CommandError("ERR The ID specified in XSETID is smaller than the provided "
                                   "max_deleted_entry_id")
        else:
            raise CommandError(SYNTAX_ERROR)
        i += 2
    db = client.db
    stream = write_stream(db, args[1])
    if stream is None:
        raise CommandError(NO_SUCH_KEY)
    if new_last < stream.max_deleted_id:
        raise CommandError("ERR The ID specified in XSETID is smaller than current "
                           "max_deleted_entry_id")
    if stream.length:
        if new_last < stream.last_live_id():
            raise CommandError("ERR The ID specified in XSETID is smaller than the target stream "
                               "top item")
        if entries_added != -1 and stream.length > entries_added:
            raise CommandError("ERR The entries_added specified in XSETID is smaller than the "
                               "target stream length")
    stream.set_last_id(new_last)
    if entries_added != -1:
        stream.entries_added = entries_added
    if max_deleted:
        stream.max_deleted_id = max_deleted
    # No WATCH signal: Redis's xsetidCommand does not call signalModifiedKey.
    # Redis changes the stream without signalling the key (WATCH survives an XSETID).
    notify(client, STREAM, b"xsetid", args[1])
    client.server.dirty += 1
    return resp.OK


@command(
    "xcfgset", arity=-2, flags="write fast", keys=(1, 1, 1), acl="@write @stream @fast",
    group="stream", since="8.6.0",
    summary="Sets the idempotent-production settings of a stream.",
    syntax="key [IDMP-DURATION idmp-duration] [IDMP-MAXSIZE idmp-maxsize]",
)
def xcfgset(client: Session, args: list[bytes]) -> bytes:
    duration = maxsize = None
    i = 2
    while i < len(args):
        opt = args[i].lower()
        if opt not in (b"idmp-duration", b"idmp-maxsize") or i + 1 >= len(args):
            raise CommandError(SYNTAX_ERROR)
        value = parse_int(args[i + 1])
        if opt == b"idmp-duration":
            if not 1 <= value <= 86400:
                raise CommandError("ERR IDMP-DURATION must be between 1 and 86400 seconds")
            duration = value
        else:
            if not 1 <= value <= 10000:
                raise CommandError("ERR IDMP-MAXSIZE must be between 1 and 10000 entries")
            maxsize = value
        i += 2
    if duration is None and maxsize is None:
        raise CommandError("ERR At least one parameter must be specified")
    db = client.db
    stream = write_stream(db, args[1])
    if stream is None:
        raise CommandError(NO_SUCH_KEY)
    created = stream.idmp is None  # the stream now keeps its own settings
    if _idmp_of(client, stream).configure(duration, maxsize) or created:
        written(client, args[1])
    return resp.OK


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


@command(
    "xlen", arity=2, flags="readonly fast", keys=(1, 1, 1), acl="@read @stream @fast",
    group="stream", since="5.0.0", summary="Return the number of messages in a stream.",
    syntax="key",
)
def xlen(client: Session, args: list[bytes]) -> bytes:
    stream = read_stream(client.db, args[1])
    return resp.integer(stream.length if stream is not None else 0)


def _range(client: Session, args: list[bytes], reverse: bool) -> bytes:
    start_arg, end_arg = (args[3], args[2]) if reverse else (args[2], args[3])
    start, end = parse_range(start_arg, end_arg)
    count = -1
    j = 4
    while j < len(args):
        if args[j].lower() == b"count" and j + 1 < len(args):
            count = max(parse_int(args[j + 1]), 0)
            j += 2
        else:
            raise CommandError(SYNTAX_ERROR)
    stream = read_stream(client.db, args[1])
    if stream is None:
        return resp.EMPTY_ARRAY
    if count == 0:
        return resp.null_array(client.protocol)
    n, pieces = stream.range_resp(start, end, None if count < 0 else count, reverse)
    pieces.insert(0, b"*%d\r\n" % n)
    return b"".join(pieces)


@command(
    "xrange", arity=-4, flags="readonly", keys=(1, 1, 1), acl="@read @stream @slow",
    group="stream", since="5.0.0",
    summary="Returns the messages from a stream within a range of IDs.",
    complexity="O(N) with N being the number of elements being returned. If N is constant "
    "(e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
    syntax="key start end [COUNT count]",
)
def xrange(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, False)


@command(
    "xrevrange", arity=-4, flags="readonly", keys=(1, 1, 1), acl="@read @stream @slow",
    group="stream", since="5.0.0",
    summary="Returns the messages from a stream within a range of IDs in reverse order.",
    complexity="O(N) with N being the number of elements returned. If N is constant (e.g. "
    "always asking for the first 10 elements with COUNT), you can consider it O(1).",
    syntax="key end start [COUNT count]",
)
def xrevrange(client: Session, args: list[bytes]) -> bytes:
    return _range(client, args, True)


@command(
    "xread", arity=-4, flags="readonly blocking movablekeys", acl="@read @stream @slow @blocking",
    group="stream", since="5.0.0",
    summary="Returns messages from multiple streams with IDs greater than the ones requested. "
    "Blocks until a message is available otherwise.",
    complexity="For each stream mentioned: O(M) with M being the number of elements returned. "
    "If M is constant (for example, always asking for the first 10 elements with COUNT), you "
    "can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) "
    "time in order to serve the N clients blocked on the stream getting new data.",
    syntax="[COUNT count] [MAXCOUNT maxcount] [MAXSIZE maxsize] [BLOCK milliseconds] "
    "STREAMS key [key ...] id [id ...]",
)
def xread(client: Session, args: list[bytes]) -> bytes | None:
    parsed = parse_read_args(args, False, client.clock.now_ms())
    count, maxcount, maxsize = parsed.count, parsed.maxcount, parsed.maxsize
    streams_at, nstreams = parsed.streams_at, parsed.nstreams

    db = client.db
    keys = args[streams_at:streams_at + nstreams]
    # First pass: types and IDs (errors before any reply), as Redis.
    starts: list[int | None] = []  # read after this ID; None = '+' (the last entry)
    streams: list[Stream | None] = []
    id_args = args[streams_at + nstreams:]
    for key, id_arg in zip(keys, id_args, strict=True):
        stream = read_stream(db, key)
        streams.append(stream)
        if id_arg == b"$":
            starts.append(stream.last_id if stream is not None else 0)
        elif id_arg == b"+":
            starts.append(None)
        elif id_arg == b">":
            raise CommandError("ERR The > ID can be specified only when calling XREADGROUP "
                               "using the GROUP <group> <consumer> option.")
        else:
            starts.append(parse_strict_id(id_arg))

    served: list[tuple[bytes, int, list[bytes]]] = []
    total = 0
    size = 0
    for key, stream, after in zip(keys, streams, starts, strict=True):
        if stream is None or not stream.length:
            continue
        if maxcount and total >= maxcount:
            break
        if maxsize and served and size >= maxsize:
            break
        if after is None:
            n, entries = stream.range_resp(0, MAX_ID, 1, reverse=True)
        else:
            if after >= stream.last_live_id():
                continue
            limit = count or None
            if maxcount:
                limit = min(limit or maxcount, maxcount - total)
            n, entries = stream.range_resp(after + 1, MAX_ID, limit, split=bool(maxsize))
        if maxsize:
            kept = 0
            for entry in entries:
                if size >= maxsize and (served or kept):
                    break
                size += len(entry)  # MAXSIZE counts the protocol bytes too
                kept += 1
            entries = entries[:kept]
            n = kept
        if n:
            served.append((key, n, entries))
            total += n
    if not served:
        if parsed.block is None:
            return resp.null_array(client.protocol)
        return _block_xread(client, args, keys, id_args, streams, starts, parsed.block)
    out = [b"*%d\r\n" % len(served) if client.protocol == 2 else b"%%%d\r\n" % len(served)]
    for key, n, entries in served:
        if client.protocol == 2:
            out.append(b"*2\r\n")
        out.append(b"$%d\r\n%s\r\n*%d\r\n" % (len(key), key, n))
        out += entries
    return b"".join(out)


def _block_xread(client: Session, args: list[bytes], keys: list[bytes], id_args: list[bytes],
                 streams: list[Stream | None], starts: list[int | None],
                 timeout: int) -> bytes | None:
    """Park an XREAD that found nothing. ``$`` and ``+`` become the last ID they stood for,
    in the command itself, so that running it again when served reads what came after."""
    afters: list[int] = []
    first_id = len(args) - len(id_args)
    for position, (stream, after) in enumerate(zip(streams, starts, strict=True)):
        if after is None:  # '+' on an empty stream: wait for the next entry, as '$'
            after = stream.last_id if stream is not None else 0
        if id_args[position] in (b"$", b"+"):
            args[first_id + position] = format_id(after)
        afters.append(after)
    return blocking.block(client, COMMANDS["xread"], args, list(keys), blocking.READ, timeout,
                          afters=afters)


COMMANDS["xread"].find_keys = streams_key_positions
COMMANDS["xread"].key_keyword = "STREAMS"


# ---------------------------------------------------------------------------------------------
# XINFO
# ---------------------------------------------------------------------------------------------

container("xinfo", group="stream", acl="@slow", since="5.0.0",
          summary="A container for stream introspection commands.")

_XINFO_HELP: Final = [
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
]


@command("xinfo|help", arity=2, flags="loading stale", acl="@stream @slow", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def xinfo_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _XINFO_HELP)


def idmp_fields(client: Session, stream: Stream) -> list[tuple[str, int]]:
    """The 8.6 idempotent-production fields of XINFO STREAM."""
    idmp = stream.idmp
    if idmp is None:
        config = client.server.config
        return [("idmp-duration", config.stream_idmp_duration),
                ("idmp-maxsize", config.stream_idmp_maxsize), ("pids-tracked", 0),
                ("iids-tracked", 0), ("iids-added", 0), ("iids-duplicates", 0)]
    pids, iids = idmp.tracked(client.clock.now_ms())
    return [("idmp-duration", idmp.duration), ("idmp-maxsize", idmp.maxsize),
            ("pids-tracked", pids), ("iids-tracked", iids), ("iids-added", idmp.added),
            ("iids-duplicates", idmp.duplicates)]


def stream_header(client: Session, stream: Stream) -> dict[str, object]:
    """The fields XINFO STREAM starts with, in Redis's order."""
    nodes = stream.node_count()
    info: dict[str, object] = {
        "length": stream.length,
        "radix-tree-keys": nodes,
        "radix-tree-nodes": nodes + 1,  # Brook's node index, counted as a tree with a root
        "last-generated-id": format_id(stream.last_id),
        "max-deleted-entry-id": format_id(stream.max_deleted_id),
        "entries-added": stream.entries_added,
        "recorded-first-entry-id": format_id(stream.first_id()),
    }
    info.update(idmp_fields(client, stream))
    return info


@command("xinfo|stream", arity=-3, flags="readonly", keys=(2, 2, 1), acl="@read @stream @slow",
         since="5.0.0", summary="Returns information about a stream.",
         syntax="key [FULL [COUNT count]]")
def xinfo_stream(client: Session, args: list[bytes]) -> bytes:
    stream = existing_stream(client, args[2])
    full = False
    count = 10
    if len(args) > 3:
        if args[3].lower() != b"full":
            raise subcommand_error(args, "XINFO")
        full = True
        if len(args) > 4:
            if len(args) != 6 or args[4].lower() != b"count":
                raise subcommand_error(args, "XINFO")
            count = max(parse_int(args[5]), 0)
    info = stream_header(client, stream)
    if full:
        entries = stream.range(0, MAX_ID, count or None)
        info["entries"] = [_entry_value(entry) for entry in entries]
        info["groups"] = groups_info(client, stream, True, count)
    else:
        info["groups"] = groups_info(client, stream, False, count)
        first = stream.range(0, MAX_ID, 1)
        last = stream.range(0, MAX_ID, 1, reverse=True)
        info["first-entry"] = _entry_value(first[0]) if first else None
        info["last-entry"] = _entry_value(last[0]) if last else None
    return resp.encode(resp.Map(info), client.protocol)

