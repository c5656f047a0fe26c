"""Parsing of stream IDs and of the trimming options shared by XADD and XTRIM, with Redis's
exact rules and error texts (``streamGenericParseIDOrReply``, ``streamParseAddOrTrimArgsOrReply``
in ``t_stream.c``). The consumer-group commands reuse the same ID parsers, and share with the
stream commands the options of XREAD / XREADGROUP, the ``IDS`` list of XDELEX / XACKDEL and the
key positions after ``STREAMS``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mypy_extensions import i64

from brook.commands.args import parse_int
from brook.commands.registry import SYNTAX_ERROR, CommandError
from brook.commands.timeouts import parse_timeout
from brook.protocol.requests import parse_strict_int
from brook.types import native
from brook.types.stream import MAX_ID

# The hand-written C (None in the pure build, which runs the twins below).
_native_plain_id = native.plain_id
_native_plain_ids = native.plain_ids
_native_next_auto_id = native.next_auto_id

INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
_U64_MAX = (1 << 64) - 1
_C_SPACES = b" \t\n\v\f\r"

# Deletion policies of XADD/XTRIM/XDELEX/XACKDEL towards consumer-group references (8.2).
KEEPREF, DELREF, ACKED = "keepref", "delref", "acked"
REF_POLICIES = {b"keepref": KEEPREF, b"delref": DELREF, b"acked": ACKED}


def _strtoull(text: bytes) -> int | None:
    """Redis's ``string2ull``: a strict ``string2ll`` first (negatives refused), then C's
    ``strtoull``, which also takes leading spaces and a sign (``-1`` wraps around)."""
    value = parse_strict_int(text)
    if value is not None:
        return value if value >= 0 else None
    body = text.lstrip(_C_SPACES)
    negative = body[:1] == b"-"
    if body[:1] in (b"-", b"+"):
        body = body[1:]
    if not body or not body.isdigit():
        return None
    value = int(body)
    if value > _U64_MAX:
        return None  # ERANGE
    return (-value) & _U64_MAX if negative else value


def parse_id(arg: bytes, missing_seq: int = 0, strict: bool = False,
             allow_seq_star: bool = False) -> tuple[int, bool]:
    """An ID argument as ``(int id, seq_given)``. ``-``/``+`` are the smallest/largest IDs
    unless ``strict``; ``ms`` alone takes ``missing_seq``; ``ms-*`` (XADD only, with
    ``allow_seq_star``) returns seq 0 and ``seq_given`` False."""
    if len(arg) > 127:
        raise CommandError(INVALID_ID)
    text = arg.split(b"\0", 1)[0]  # Redis reads the argument as a C string
    if text == b"-" or text == b"+":
        if strict:
            raise CommandError(INVALID_ID)
        return (0 if text == b"-" else MAX_ID), True
    ms_text, dash, seq_text = text.partition(b"-")
    if dash and ms_text.isdigit() and seq_text.isdigit():  # the usual "ms-seq": plain digits
        ms, seq = int(ms_text), int(seq_text)
        if ms <= _U64_MAX and seq <= _U64_MAX:
            return ms << 64 | seq, True
        raise CommandError(INVALID_ID)
    ms_value = _strtoull(ms_text)
    if ms_value is None:
        raise CommandError(INVALID_ID)
    if not dash:
        return ms_value << 64 | missing_seq, True
    if allow_seq_star and seq_text == b"*":
        return ms_value << 64, False
    seq_value = _strtoull(seq_text)
    if seq_value is None:
        raise CommandError(INVALID_ID)
    return ms_value << 64 | seq_value, True


def parse_strict_id(arg: bytes, missing_seq: int = 0) -> int:
    """``streamParseStrictIDOrReply``: an ID where ``-`` and ``+`` are not accepted."""
    return parse_id(arg, missing_seq, strict=True)[0]


def parse_range_bound(arg: bytes, missing_seq: int) -> tuple[int, bool]:
    """An XRANGE/XPENDING bound: ``(id`` is exclusive (and then strict), else any ID form.
    Returns ``(id, exclusive)``."""
    if len(arg) > 1 and arg[:1] == b"(":
        return parse_id(arg[1:], missing_seq, strict=True)[0], True
    return parse_id(arg, missing_seq)[0], False


_WHOLE_RANGE = {b"-": 0, b"+": MAX_ID}


def parse_start(arg: bytes) -> int:
    """The inclusive start of an interval (XRANGE, XPENDING, XAUTOCLAIM): ``(id`` moves up."""
    start, exclusive = parse_range_bound(arg, 0)
    if exclusive:
        if start == MAX_ID:
            raise CommandError("ERR invalid start ID for the interval")
        start += 1
    return start


def parse_range(start_arg: bytes, end_arg: bytes) -> tuple[int, int]:
    """Inclusive int bounds of an XRANGE-style interval, with Redis's errors for exclusive
    bounds that cannot be moved inwards."""
    start = _WHOLE_RANGE.get(start_arg)
    end = _WHOLE_RANGE.get(end_arg)
    if start is not None and end is not None:  # "- +": the common paging start
        return start, end
    start = parse_start(start_arg)
    end, exclusive = parse_range_bound(end_arg, _U64_MAX)
    if exclusive:
        if end == 0:
            raise CommandError("ERR invalid end ID for the interval")
        end -= 1
    return start, end


def plain_id(arg: bytes) -> int:
    """``ms-seq`` with each part 1 to 18 ASCII digits, as XACK's batches and the AOF's XADDs
    send IDs; -1 for any other form (the general parser's)."""
    if _native_plain_id is not None:
        return _native_plain_id(arg)
    return read_plain_id(arg)


def read_plain_id(arg: bytes) -> int:
    """:func:`plain_id` in Python (the C reader's twin, which the pure build runs). Read a byte
    at a time into ``i64`` accumulators: a loop mypyc compiles to plain C arithmetic (a tagged
    int's multiply leaves the fast path above 2**30, which millisecond times are), where
    matching regular expressions over the joined batch cost several times more. 18 digits
    cannot overflow 64 bits."""
    size = len(arg)
    ms: i64 = 0
    i = 0
    while i < size and 48 <= arg[i] <= 57:
        ms = ms * 10 + (arg[i] - 48)
        i += 1
    if i == 0 or i > 18 or i >= size or arg[i] != 45:
        return -1
    i += 1
    start = i
    seq: i64 = 0
    while i < size and 48 <= arg[i] <= 57:
        seq = seq * 10 + (arg[i] - 48)
        i += 1
    if i != size or i == start or i - start > 18:
        return -1
    return int(ms) << 64 | int(seq)


def next_auto_id(now_ms: int, last_id: int) -> tuple[int, bytes]:
    """XADD ``*``'s ID after ``last_id`` at ``now_ms``, and its text: the current millisecond,
    or the last ID plus one when the clock is not ahead (the sequence carries into the
    milliseconds, as Redis's streamIncrID). The stream's last ID is never the largest
    possible here (XADD refuses that stream first)."""
    if _native_next_auto_id is not None:
        return _native_next_auto_id(now_ms, last_id)
    return next_auto_id_text(now_ms, last_id)


def next_auto_id_text(now_ms: int, last_id: int) -> tuple[int, bytes]:
    """:func:`next_auto_id` in Python (the C one's twin): the text is formatted from the parts
    the ID is made of, not by splitting the 128-bit ID again."""
    last_ms = last_id >> 64
    if now_ms > last_ms:
        return now_ms << 64, b"%d-0" % now_ms
    seq = (last_id & _U64_MAX) + 1
    if seq > _U64_MAX:  # carried into the milliseconds
        return last_id + 1, b"%d-0" % (last_ms + 1)
    return last_id + 1, b"%d-%d" % (last_ms, seq)


def parse_ids(args: list[bytes]) -> list[int]:
    """Every argument as a strict ID, all checked before any is used. Plain ``ms-seq`` IDs (what
    XACK's batches hold) skip the general parser."""
    if _native_plain_ids is not None:
        ids = _native_plain_ids(args)
        return ids if ids is not None else [parse_strict_id(each) for each in args]
    ids = []
    for arg in args:
        entry_id = read_plain_id(arg)
        if entry_id < 0:
            return [parse_strict_id(each) for each in args]
        ids.append(entry_id)
    return ids


class TrimArgs:
    """The options of XADD/XTRIM (``streamAddTrimArgs``). A plain class, not a dataclass: the
    compiled build runs a dataclass's generated ``__init__`` as interpreted code, a quarter
    of an XADD with options."""

    def __init__(self) -> None:
        self.strategy: str | None = None  # "maxlen" or "minid"
        self.maxlen = 0
        self.minid = 0
        self.approx = False
        self.limit = 0
        self.ref_policy = KEEPREF
        self.nomkstream = False
        self.id_given = False
        self.entry_id = 0
        self.seq_given = True
        self.idmp_pid: bytes | None = None
        self.idmp_iid: bytes | None = None  # None with a pid: IDMPAUTO
        self.id_index = 0  # XADD: position of the ID argument


def parse_trim_args(args: list[bytes], xadd: bool, node_max_entries: int,
                    obey: bool = False) -> TrimArgs:
    """Parse from ``args[2]`` on. For XADD parsing stops at the ID (``*`` or explicit), whose
    position is returned in ``id_index``; for XTRIM everything must be an option. ``obey``
    (replaying the AOF, Redis's mustObeyClient) accepts IDMP with an explicit ID: that is how
    an idempotent XADD is persisted."""
    parsed = TrimArgs()
    limit_given = False
    idmp_given = False
    argc = len(args)
    i = 2
    while i < argc:
        more = argc - 1 - i
        opt = args[i]
        lowered = opt.lower()
        if xadd and opt == b"*":
            break
        if lowered in (b"maxlen", b"minid") and more:
            if parsed.strategy is not None:
                raise CommandError("ERR syntax error, MAXLEN and MINID options at the same time "
                                   "are not compatible")
            parsed.approx = False
            following = args[i + 1]
            if more >= 2 and following == b"~":
                parsed.approx = True
                i += 1
            elif more >= 2 and following == b"=":
                i += 1
            if lowered == b"maxlen":
                parsed.maxlen = parse_int(args[i + 1])
                if parsed.maxlen < 0:
                    raise CommandError("ERR The MAXLEN argument must be >= 0.")
                parsed.strategy = "maxlen"
            else:
                parsed.minid = parse_strict_id(args[i + 1])
                parsed.strategy = "minid"
            i += 2
        elif lowered == b"limit" and more:
            parsed.limit = parse_int(args[i + 1])
            if parsed.limit < 0:
                raise CommandError("ERR The LIMIT argument must be >= 0.")
            limit_given = True
            i += 2
        elif lowered in REF_POLICIES:
            parsed.ref_policy = REF_POLICIES[lowered]
            i += 1
        elif xadd and lowered == b"nomkstream":
            parsed.nomkstream = True
            i += 1
        elif xadd and lowered == b"idmp" and more >= 2:
            if idmp_given:
                raise CommandError("ERR IDMP/IDMPAUTO specified multiple times")
            idmp_given = True
            if not args[i + 1]:
                raise CommandError("ERR IDMP requires a non-empty producer ID")
            if not args[i + 2]:
                raise CommandError("ERR IDMP requires a non-empty idempotent ID")
            parsed.idmp_pid, parsed.idmp_iid = args[i + 1], args[i + 2]
            i += 3
        elif xadd and lowered == b"idmpauto" and more:
            if idmp_given:
                raise CommandError("ERR IDMP/IDMPAUTO specified multiple times")
            idmp_given = True
            if not args[i + 1]:
                raise CommandError("ERR IDMPAUTO requires a non-empty producer ID")
            parsed.idmp_pid = args[i + 1]
            i += 2
        elif xadd:
            # Anything else must be the ID (or it is a syntax error shown as a bad ID).
            parsed.entry_id, parsed.seq_given = parse_id(opt, strict=True, allow_seq_star=True)
            parsed.id_given = True
            break
        else:
            raise CommandError(SYNTAX_ERROR)
    parsed.id_index = i

    if parsed.limit and parsed.strategy is None:
        raise CommandError("ERR syntax error, LIMIT cannot be used without specifying a "
                           "trimming strategy")
    if not xadd and parsed.strategy is None:
        raise CommandError("ERR syntax error, XTRIM must be called with a trimming strategy")
    if limit_given:
        if not parsed.approx:
            raise CommandError("ERR syntax error, LIMIT cannot be used without the special ~ "
                               "option")
    elif parsed.approx:
        parsed.limit = 100 * node_max_entries
        if parsed.limit <= 0 or parsed.limit > 1_000_000:
            parsed.limit = 1_000_000
    else:
        parsed.limit = 0
    if idmp_given and parsed.id_given and not obey:
        raise CommandError("ERR IDMP/IDMPAUTO can be used only with auto-generated IDs")
    return parsed


def parse_delete_args(args: list[bytes], pos: int) -> tuple[str | None, list[int]]:
    """``[KEEPREF | DELREF | ACKED] IDS numids id [id ...]`` from ``args[pos]`` on, in any
    order (XDELEX, XACKDEL), with the 8.2 error texts: (policy or None, parsed IDs)."""
    policy: str | None = None
    id_args: list[bytes] | None = None
    argc = len(args)
    i = pos
    while i < argc:
        opt = args[i].lower()
        if opt == b"ids" and i + 1 < argc and id_args is None:
            try:
                numids = parse_int(args[i + 1])
            except CommandError:
                numids = 0
            if numids <= 0:
                raise CommandError("ERR Number of IDs must be a positive integer")
            if numids > argc - i - 2:
                raise CommandError("ERR The `numids` parameter must match the number of "
                                   "arguments")
            id_args = args[i + 2:i + 2 + numids]
            i += 2 + numids
        elif opt in REF_POLICIES and policy is None:
            policy = REF_POLICIES[opt]
            i += 1
        else:
            raise CommandError(SYNTAX_ERROR)
    if id_args is None:
        raise CommandError(SYNTAX_ERROR)
    return policy, parse_ids(id_args)


def streams_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """Key positions of XREAD/XREADGROUP: the first half of what follows STREAMS."""
    for i in range(1, argc):
        if args[i].lower() == b"streams":
            count = (argc - i - 1) // 2
            return list(range(i + 1, i + 1 + count))
    return []


@dataclass
class ReadArgs:
    """The options of XREAD/XREADGROUP (``xreadCommand``'s parsing)."""

    count: int = 0  # per stream; 0 = no limit
    maxcount: int = 0  # across streams (8.10); 0 = none
    maxsize: int = 0  # reply bytes (8.10); 0 = none
    block: int | None = None  # ms
    streams_at: int = 0  # index of the first key
    nstreams: int = 0
    group: bytes | None = None
    consumer: bytes | None = None
    noack: bool = False
    claim: int | None = None  # XREADGROUP CLAIM min-idle-time (8.4)


# Parsed options of recent XREAD/XREADGROUP requests. A blocked consumer sends the very same
# request again after each delivery, and a parked one is parsed again when served: both find
# their options here. Entries are never changed once made (ReadArgs is read-only after parsing).
_PARSED: Final[dict[tuple[bool, tuple[bytes, ...]], ReadArgs]] = {}
_PARSED_MAX: Final = 4096


def parse_read_args(args: list[bytes], grouped: bool, now_ms: int) -> ReadArgs:
    """Options up to STREAMS, with Redis's error for each misuse (memoised per request)."""
    if len(args) > 32:
        return _parse_read_args(args, grouped, now_ms)
    memo_key = (grouped, tuple(args))
    parsed = _PARSED.get(memo_key)
    if parsed is None:
        parsed = _parse_read_args(args, grouped, now_ms)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[memo_key] = parsed
    return parsed


def _parse_read_args(args: list[bytes], grouped: bool, now_ms: int) -> ReadArgs:
    parsed = ReadArgs()
    name = "xreadgroup" if grouped else "xread"
    argc = len(args)
    i = 1
    while i < argc:
        more = argc - i - 1
        opt = args[i].lower()
        if opt == b"block" and more:
            parsed.block = parse_timeout(args[i + 1], seconds=False, now_ms=now_ms)
            i += 2
        elif opt == b"count" and more:
            parsed.count = max(parse_int(args[i + 1]), 0)
            i += 2
        elif opt == b"maxcount" and more:
            parsed.maxcount = parse_int(args[i + 1])
            if parsed.maxcount <= 0:
                raise CommandError("ERR MAXCOUNT must be a positive integer")
            i += 2
        elif opt == b"maxsize" and more:
            parsed.maxsize = parse_int(args[i + 1])
            if parsed.maxsize <= 0:
                raise CommandError("ERR MAXSIZE must be a positive integer")
            i += 2
        elif opt == b"streams" and more:
            parsed.streams_at = i + 1
            nstreams = argc - parsed.streams_at
            if nstreams & 1:
                ids = "ID or '>'" if grouped else "ID, '+', or '$'"
                raise CommandError(f"ERR Unbalanced '{name}' list of streams: for each stream "
                                   f"key an {ids} must be specified.")
            parsed.nstreams = nstreams // 2
            break
        elif opt == b"group" and more >= 2:
            if not grouped:
                raise CommandError("ERR The GROUP option is only supported by XREADGROUP. You "
                                   "called XREAD instead.")
            parsed.group, parsed.consumer = args[i + 1], args[i + 2]
            i += 3
        elif opt == b"noack":
            if not grouped:
                raise CommandError("ERR The NOACK option is only supported by XREADGROUP. You "
                                   "called XREAD instead.")
            parsed.noack = True
            i += 1
        elif opt == b"claim" and more:
            if not grouped:
                raise CommandError("ERR The CLAIM option is only supported by XREADGROUP. You "
                                   "called XREAD instead.")
            parsed.claim = parse_int(args[i + 1], "ERR min-idle-time is not an integer or out "
                                                  "of range")
            if parsed.claim < 0:
                raise CommandError("ERR min-idle-time must be a positive integer")
            i += 2
        else:
            raise CommandError(SYNTAX_ERROR)
    if not parsed.streams_at:
        raise CommandError(SYNTAX_ERROR)
    if grouped and parsed.group is None:
        raise CommandError("ERR Missing GROUP option for XREADGROUP")
    if parsed.maxcount and parsed.count and parsed.maxcount < parsed.count:
        raise CommandError("ERR MAXCOUNT must be greater than or equal to COUNT")
    return parsed
