"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO.

They work on string values (read and written through brook.commands.strings' path: a missing
key reads as an empty string, another type is WRONGTYPE). A command that writes bits changes
the value in place, so it keeps it as a ``bytearray`` (Redis's ``raw`` encoding, which is what
Redis reports after SETBIT): setting one bit of a large bitmap is O(1), and growing it is an
amortized append. The bit arithmetic itself is brook.types.bits.

Argument errors come before the key is looked at, as in the newest Redis (7.0 answered 0 for a
missing key whatever the range arguments were).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.commands.args import parse_int
from brook.commands.registry import SYNTAX_ERROR, CommandError, command
from brook.commands.string_values import string_value
from brook.notify import STRING, created, stored, written
from brook.protocol import resp
from brook.protocol.requests import parse_strict_int
from brook.types.bits import (
    BITOP_OPERATIONS,
    OVERFLOW_FAIL,
    OVERFLOW_SAT,
    OVERFLOW_WRAP,
    bit_count,
    combine,
    field_result,
    first_bit,
    get_field,
    set_field,
)

if TYPE_CHECKING:
    from brook.session import Session

BAD_OFFSET: Final = "ERR bit offset is not an integer or out of range"
BAD_BIT: Final = "ERR bit is not an integer or out of range"
BAD_BITPOS_BIT: Final = "ERR The bit argument must be 1 or 0."
BAD_FIELD_TYPE: Final = ("ERR Invalid bitfield type. Use something like i16 u8. "
                         "Note that u64 is not supported but i64 is.")
BAD_OVERFLOW: Final = "ERR Invalid OVERFLOW type specified"
READONLY_FIELDS: Final = "ERR BITFIELD_RO only supports the GET subcommand"
NOT_ONE_SOURCE: Final = "ERR BITOP NOT must be called with a single source key."
TWO_SOURCES: Final = "ERR BITOP {} must be called with at least two source keys."

_UINT64: Final = (1 << 64) - 1
_OVERFLOWS: Final = {b"wrap": OVERFLOW_WRAP, b"sat": OVERFLOW_SAT, b"fail": OVERFLOW_FAIL}


def _c_word(arg: bytes) -> bytes:
    """An argument as Redis's strcasecmp sees it: up to a NUL, lower-cased."""
    return arg.split(b"\0", 1)[0].lower()


def bit_offset(client: Session, arg: bytes, field_bits: int = 0) -> int:
    """A bit offset (Redis's getBitOffsetFromArgument): non-negative and inside a string of
    proto-max-bulk-len bytes, except for a replayed command (the AOF, the master's stream),
    which obeys its source as Redis's mustObeyClient does. With ``field_bits`` (BITFIELD),
    ``#n`` means n fields of that width."""
    by_fields = field_bits > 0 and arg[:1] == b"#"
    offset = parse_strict_int(arg[1:] if by_fields else arg)
    if offset is None:
        raise CommandError(BAD_OFFSET)
    if by_fields:  # a 64-bit multiplication, wrapping as in C
        offset = ((offset * field_bits + (1 << 63)) & _UINT64) - (1 << 63)
    if offset < 0 or (offset >> 3 >= client.server.config.proto_max_bulk_len
                      and not client.replaying):
        raise CommandError(BAD_OFFSET)
    return offset


def _writable(client: Session, key: bytes, last_bit: int) -> tuple[bytearray, bool]:
    """The string at ``key`` made writable and long enough to hold ``last_bit`` (Redis's
    lookupStringForBitCommand): a missing key is created with zero bytes. Also whether it was
    created or grown, which counts as a change even where no bit changes."""
    db = client.db
    value = string_value(db, key)
    size = (last_bit >> 3) + 1
    if value is None:
        fresh = bytearray(size)
        db.data[key] = fresh
        created(client, key)
        client.server.memory.charge(size)  # far more than the request the dispatcher charged
        return fresh, True
    if type(value) is not bytearray:
        value = bytearray(value)
        db.data[key] = value  # the TTL is kept
    grown = len(value) < size
    if grown:
        client.server.memory.charge(size - len(value))
        value.extend(bytes(size - len(value)))
    return value, grown  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# Single bits.
# ---------------------------------------------------------------------------------------------


@command(
    "setbit", arity=4, flags="write denyoom", keys=(1, 1, 1), acl="@write @bitmap @slow",
    group="bitmap", since="2.2.0",
    summary="Sets or clears the bit at offset of the string value. Creates the key if it "
    "doesn't exist.",
    syntax="key offset value",
)
def setbit(client: Session, args: list[bytes]) -> bytes:
    offset = bit_offset(client, args[2])
    flag = args[3]  # almost always "0" or "1": no number to parse
    on = 1 if flag == b"1" else 0 if flag == b"0" else parse_int(flag, BAD_BIT)
    if on & ~1:
        raise CommandError(BAD_BIT)
    key = args[1]
    value, grown = _writable(client, key, offset)
    index = offset >> 3
    mask = 0x80 >> (offset & 7)
    byte = value[index]
    was = 1 if byte & mask else 0
    if grown or was != on:
        value[index] = byte | mask if on else byte & ~mask
        written(client, key, STRING, b"setbit")
    return resp.ONE if was else resp.ZERO


@command(
    "getbit", arity=3, flags="readonly fast", keys=(1, 1, 1), acl="@read @bitmap @fast",
    group="bitmap", since="2.2.0", summary="Returns a bit value by offset.",
    syntax="key offset",
)
def getbit(client: Session, args: list[bytes]) -> bytes:
    offset = bit_offset(client, args[2])
    value = string_value(client.db, args[1], counted=True)
    index = offset >> 3
    if value is None or index >= len(value):
        return resp.ZERO
    return resp.ONE if value[index] & (0x80 >> (offset & 7)) else resp.ZERO


# ---------------------------------------------------------------------------------------------
# Ranges: BITCOUNT and BITPOS.
# ---------------------------------------------------------------------------------------------


def _unit_is_bit(arg: bytes) -> bool:
    word = _c_word(arg)
    if word == b"bit":
        return True
    if word == b"byte":
        return False
    raise CommandError(SYNTAX_ERROR)


def _bit_range(size: int, start: int, end: int, in_bits: bool) -> tuple[int, int]:
    """A BYTE or BIT range clamped to a string of ``size`` bytes, as bit numbers (first,
    last); empty when first > last. Negative indices count from the end."""
    total = size * 8 if in_bits else size
    if start < 0:
        start = max(total + start, 0)
    if end < 0:
        end = max(total + end, 0)
    end = min(end, total - 1)
    if in_bits:
        return start, end
    return start * 8, end * 8 + 7


@command(
    "bitcount", arity=-2, flags="readonly", keys=(1, 1, 1), acl="@read @bitmap @slow",
    group="bitmap", since="2.6.0",
    summary="Counts the number of set bits (population counting) in a string.",
    complexity="O(N)",
    syntax="key [start end [BYTE | BIT]]",
)
def bitcount(client: Session, args: list[bytes]) -> bytes:
    count = len(args)
    if count not in (2, 4, 5):
        raise CommandError(SYNTAX_ERROR)
    ranged = count > 2
    if ranged:
        start = parse_int(args[2])
        end = parse_int(args[3])
        in_bits = count == 5 and _unit_is_bit(args[4])
    value = string_value(client.db, args[1], counted=True)
    if value is None:
        return resp.ZERO
    if not ranged:
        return resp.integer(bit_count(value, 0, len(value) * 8 - 1))
    if start < 0 and end < 0 and start > end:
        return resp.ZERO
    first, last = _bit_range(len(value), start, end, in_bits)
    return resp.integer(bit_count(value, first, last))


@command(
    "bitpos", arity=-3, flags="readonly", keys=(1, 1, 1), acl="@read @bitmap @slow",
    group="bitmap", since="2.8.7",
    summary="Finds the first set (1) or clear (0) bit in a string.",
    complexity="O(N)",
    syntax="key bit [start [end [BYTE | BIT]]]",
)
def bitpos(client: Session, args: list[bytes]) -> bytes:
    bit = parse_int(args[2])
    if bit not in (0, 1):
        raise CommandError(BAD_BITPOS_BIT)
    count = len(args)
    if count > 6:
        raise CommandError(SYNTAX_ERROR)
    start, end, in_bits = 0, -1, False
    if count > 3:
        start = parse_int(args[3])
        in_bits = count == 6 and _unit_is_bit(args[5])
        if count > 4:
            end = parse_int(args[4])
    value = string_value(client.db, args[1], counted=True)
    if value is None:
        return resp.integer(-1 if bit else 0)
    first, last = _bit_range(len(value), start, end, in_bits)
    position = first_bit(value, bit, first, last)
    if position < 0 and not bit and count < 5 and first <= last:
        # No end given: the string continues with zero bits, the first of them is the answer.
        position = last + 1
    return resp.integer(position)


# ---------------------------------------------------------------------------------------------
# BITOP.
# ---------------------------------------------------------------------------------------------


@command(
    "bitop", arity=-4, flags="write denyoom", keys=(2, -1, 1), acl="@write @bitmap @slow",
    group="bitmap", since="2.6.0",
    summary="Performs bitwise operations on multiple strings, and stores the result.",
    complexity="O(N)",
    syntax="AND | OR | XOR | NOT | DIFF | DIFF1 | ANDOR | ONE destkey key [key ...]",
)
def bitop(client: Session, args: list[bytes]) -> bytes:
    operation = _c_word(args[1]).decode("latin-1")
    if operation not in BITOP_OPERATIONS:
        raise CommandError(SYNTAX_ERROR)
    sources = args[3:]
    if operation == "not" and len(sources) != 1:
        raise CommandError(NOT_ONE_SOURCE)
    if operation in ("diff", "diff1", "andor") and len(sources) < 2:
        raise CommandError(TWO_SOURCES.format(operation.upper()))
    db = client.db
    values = [string_value(db, key, counted=True) or b"" for key in sources]
    result = combine(operation, values) if any(values) else bytearray()
    stored(client, args[2], result, STRING, b"set")
    return resp.integer(len(result))


# ---------------------------------------------------------------------------------------------
# BITFIELD.
# ---------------------------------------------------------------------------------------------

_GET, _SET, _INCRBY = 0, 1, 2
_OPERATIONS: Final = {b"get": (_GET, 2), b"set": (_SET, 3), b"incrby": (_INCRBY, 3)}


class _FieldOp:
    """One GET, SET or INCRBY of a BITFIELD request, checked before any is run."""

    __slots__ = ("kind", "signed", "bits", "offset", "number", "overflow")

    def __init__(self, kind: int, signed: bool, bits: int, offset: int, number: int,
                 overflow: int) -> None:
        self.kind = kind
        self.signed = signed
        self.bits = bits
        self.offset = offset
        self.number = number
        self.overflow = overflow


def _field_type(arg: bytes) -> tuple[bool, int]:
    """``iN`` (1..64 bits) or ``uN`` (1..63 bits): (signed, bits)."""
    sign = arg[:1]
    if sign not in (b"i", b"u"):
        raise CommandError(BAD_FIELD_TYPE)
    signed = sign == b"i"
    bits = parse_strict_int(arg[1:].split(b"\0", 1)[0])
    if bits is None or bits < 1 or bits > (64 if signed else 63):
        raise CommandError(BAD_FIELD_TYPE)
    return signed, bits


def _field_ops(client: Session, args: list[bytes]) -> list[_FieldOp]:
    ops: list[_FieldOp] = []
    overflow = OVERFLOW_WRAP
    position = 2
    count = len(args)
    while position < count:
        word = _c_word(args[position])
        remaining = count - position - 1
        if word == b"overflow" and remaining >= 1:
            chosen = _OVERFLOWS.get(_c_word(args[position + 1]))
            if chosen is None:
                raise CommandError(BAD_OVERFLOW)
            overflow = chosen
            position += 2
            continue
        kind_and_needs = _OPERATIONS.get(word)
        if kind_and_needs is None or remaining < kind_and_needs[1]:
            raise CommandError(SYNTAX_ERROR)
        kind = kind_and_needs[0]
        signed, bits = _field_type(args[position + 1])
        offset = bit_offset(client, args[position + 2], bits)
        number = parse_int(args[position + 3]) if kind != _GET else 0
        ops.append(_FieldOp(kind, signed, bits, offset, number, overflow))
        position += 3 if kind == _GET else 4
    return ops


def _bitfield(client: Session, args: list[bytes], read_only: bool) -> bytes:
    ops = _field_ops(client, args)
    key = args[1]
    writes = [op for op in ops if op.kind != _GET]
    if not writes:
        value = string_value(client.db, key, counted=True) or b""
        return resp.array([resp.integer(get_field(value, op.offset, op.bits, op.signed))
                           for op in ops])
    if read_only:
        raise CommandError(READONLY_FIELDS)
    last_bit = max(op.offset + op.bits - 1 for op in writes)
    target, grown = _writable(client, key, last_bit)
    replies: list[bytes] = []
    changes = 0
    for op in ops:
        old = get_field(target, op.offset, op.bits, op.signed)
        if op.kind == _GET:
            replies.append(resp.integer(old))
            continue
        if op.kind == _INCRBY:
            wanted = old + op.number
        else:  # an unsigned field's SET reads the 64-bit value as unsigned, as C does
            wanted = op.number if op.signed else op.number & _UINT64
        new = field_result(wanted, op.bits, op.signed, op.overflow)
        if new is None:
            replies.append(resp.null(client.protocol))
            continue
        set_field(target, op.offset, op.bits, new)
        replies.append(resp.integer(new if op.kind == _INCRBY else old))
        if grown or new != old:
            changes += 1
    if changes:
        written(client, key, STRING, b"setbit", changes)
    return resp.array(replies)


@command(
    "bitfield", arity=-2, flags="write denyoom", keys=(1, 1, 1), acl="@write @bitmap @slow",
    group="bitmap", since="3.2.0",
    summary="Performs arbitrary bitfield integer operations on strings.",
    complexity="O(1) for each subcommand specified",
    syntax="key [GET encoding offset | [OVERFLOW WRAP | SAT | FAIL] "
    "SET encoding offset value | INCRBY encoding offset increment ...]",
)
def bitfield(client: Session, args: list[bytes]) -> bytes:
    return _bitfield(client, args, read_only=False)


@command(
    "bitfield_ro", arity=-2, flags="readonly fast", keys=(1, 1, 1),
    acl="@read @bitmap @fast", group="bitmap", since="6.0.0",
    summary="Performs arbitrary read-only bitfield integer operations on strings.",
    complexity="O(1) for each subcommand specified",
    syntax="key [GET encoding offset [GET encoding offset ...]]",
)
def bitfield_ro(client: Session, args: list[bytes]) -> bytes:
    return _bitfield(client, args, read_only=True)

