"""HyperLogLog values: Redis's representation, byte for byte.

An HLL is an ordinary string value. Its first 16 bytes are the header: ``HYLL``, the encoding
(0 dense, 1 sparse), three unused bytes and the cached cardinality (8 bytes, little endian; the
top bit of the last byte set means "not valid"). Then the 16384 registers (14 bits of a 64-bit
MurmurHash64A pick the register, the run of zeros in the other 50 bits plus one is its value):

- dense: 16384 registers of 6 bits, packed least significant bits first (12288 bytes);
- sparse: run-length opcodes, ZERO ``00xxxxxx`` (1-64 zero registers), XZERO ``01xxxxxx
  yyyyyyyy`` (1-16384 zero registers), VAL ``1vvvvvxx`` (1-4 registers of value 1-32).

A sparse value is edited in place exactly as Redis edits it (the opcode split, the merge of
equal neighbours a few opcodes around it, the switch to dense past ``hll-sparse-max-bytes`` or
for a value above 32), because the bytes are visible to GET, replicated and persisted: the same
PFADDs must leave the same string as in Redis. Bytes past the end of a (corrupted) string read
as zero, as Redis reads the terminator of its strings.

Whole-register work (counting, merging, conversions) goes through a "raw" form, one byte per
register, made from the dense bytes with slices and big-int masks rather than a Python loop per
register. The estimator is Otmar Ertl's improved one (tau and sigma), which Redis uses.
Knows nothing of commands.
"""

from __future__ import annotations

import math
import re
import struct
from bisect import bisect_right
from collections.abc import Iterator
from itertools import accumulate
from typing import Final

__all__ = [
    "DENSE", "DENSE_SIZE", "HEADER_SIZE", "REGISTERS", "SPARSE", "add", "cached_count",
    "count_raw", "decode_sparse", "histogram", "is_hll", "merge_into", "murmur64a", "new_hll",
    "pattern", "raw_registers", "set_cached_count", "set_raw", "to_dense",
]

HEADER_SIZE: Final = 16
P: Final = 14
Q: Final = 64 - P
REGISTERS: Final = 1 << P
DENSE_BYTES: Final = REGISTERS * 6 // 8
DENSE_SIZE: Final = HEADER_SIZE + DENSE_BYTES
DENSE: Final = 0
SPARSE: Final = 1
MAGIC: Final = b"HYLL"
SEED: Final = 0xADC83B19
ALPHA_INF: Final = 0.721347520444481703680  # 0.5 / ln(2)

_M64: Final = (1 << 64) - 1
_MUL: Final = 0xC6A4A7935BD1E995
_VAL_MAX_VALUE: Final = 32
_VAL_MAX_LEN: Final = 4
_ZERO_MAX_LEN: Final = 64
_XZERO_MAX_LEN: Final = 16384
_EMPTY_SPARSE: Final = b"\x7f\xff"  # one XZERO of 16384 registers

# Masks that move the 4 registers of each 3 dense bytes (widened to 4 bytes) one to a byte.
_SPREAD_WORDS: Final = REGISTERS // 4


def _repeat(word: int) -> int:
    return int.from_bytes(word.to_bytes(4, "little") * _SPREAD_WORDS, "little")


_SIX: Final = tuple(_repeat(63 << (6 * j)) for j in range(4))
_EIGHT: Final = tuple(_repeat(63 << (8 * j)) for j in range(4))


def murmur64a(data: bytes, seed: int = SEED) -> int:
    """MurmurHash64A of ``data`` (Austin Appleby's, 64-bit, as Redis seeds it)."""
    size = len(data)
    h = (seed ^ (size * _MUL)) & _M64
    whole = size & ~7
    if whole:
        for (k,) in struct.iter_unpack("<Q", data[:whole]):
            k = (k * _MUL) & _M64
            k ^= k >> 47
            h ^= (k * _MUL) & _M64
            h = (h * _MUL) & _M64
    if size & 7:
        h ^= int.from_bytes(data[whole:], "little")
        h = (h * _MUL) & _M64
    h ^= h >> 47
    h = (h * _MUL) & _M64
    return h ^ (h >> 47)


def pattern(element: bytes) -> tuple[int, int]:
    """The register an element hashes to and the value it offers (zeros run + 1, 1..51)."""
    h = murmur64a(element)
    rest = (h >> P) | (1 << Q)
    return h & (REGISTERS - 1), (rest & -rest).bit_length()


def new_hll() -> bytearray:
    """An empty HLL as Redis creates it: sparse, one XZERO, cached cardinality 0 (valid)."""
    return bytearray(MAGIC + b"\x01" + bytes(11) + _EMPTY_SPARSE)


def is_hll(value: bytes | bytearray) -> bool:
    """Whether a string passes Redis's check of an HLL (the header, a dense one's size)."""
    if len(value) < HEADER_SIZE or value[:4] != MAGIC:
        return False
    encoding = value[4]
    return encoding == SPARSE or (encoding == DENSE and len(value) == DENSE_SIZE)


def cached_count(value: bytes | bytearray) -> int | None:
    """The cached cardinality, or None when the header marks it not valid."""
    if value[15] & 0x80:
        return None
    return int.from_bytes(value[8:16], "little")


def set_cached_count(value: bytearray, count: int) -> None:
    value[8:16] = count.to_bytes(8, "little")


def invalidate_cache(value: bytearray) -> None:
    value[15] |= 0x80


# ---------------------------------------------------------------------------------------------
# Raw registers (one byte each) <-> dense bytes.
# ---------------------------------------------------------------------------------------------


def _dense_to_raw(packed: bytes | bytearray) -> bytes:
    """16384 registers, one a byte, from the 12288 bytes of the dense encoding."""
    wide = bytearray(REGISTERS)
    wide[0::4] = packed[0::3]
    wide[1::4] = packed[1::3]
    wide[2::4] = packed[2::3]
    x = int.from_bytes(wide, "little")
    m0, m1, m2, m3 = _SIX
    spread = (x & m0) | ((x & m1) << 2) | ((x & m2) << 4) | ((x & m3) << 6)
    return spread.to_bytes(REGISTERS, "little")


def _raw_to_dense(raw: bytes | bytearray) -> bytearray:
    """The 12288 dense bytes of 16384 registers given one a byte (each 0..63)."""
    x = int.from_bytes(raw, "little")
    m0, m1, m2, m3 = _EIGHT
    packed = ((x & m0) | ((x & m1) >> 2) | ((x & m2) >> 4) | ((x & m3) >> 6)).to_bytes(
        REGISTERS, "little")
    dense = bytearray(DENSE_BYTES)
    dense[0::3] = packed[0::4]
    dense[1::3] = packed[1::4]
    dense[2::3] = packed[2::4]
    return dense


def _sparse_opcodes(value: bytes | bytearray) -> Iterator[tuple[int, int]]:
    """The sparse opcodes as (value, run length) pairs, value 0 for ZERO and XZERO (lazily:
    a corrupted value may hold millions, and the readers stop past 16384 registers)."""
    end = len(value)
    p = HEADER_SIZE
    while p < end:
        op = value[p]
        if op & 0x80:
            yield ((op >> 2) & 0x1F) + 1, (op & 3) + 1
            p += 1
        elif op & 0x40:
            low = value[p + 1] if p + 1 < end else 0
            yield 0, (((op & 0x3F) << 8) | low) + 1
            p += 2
        else:
            yield 0, (op & 0x3F) + 1
            p += 1


def raw_registers(value: bytes | bytearray) -> bytes | None:
    """The registers of a checked HLL one a byte, or None when a sparse one does not cover
    exactly 16384 registers (Redis's "corrupted") before its end or a VAL run past the last
    register (what the newest Redis's merge and conversion to dense read; the count of one
    key reads every opcode: :func:`histogram`)."""
    if value[4] == DENSE:
        return _dense_to_raw(value[HEADER_SIZE:])
    parts: list[bytes] = []
    total = 0
    for val, run in _sparse_opcodes(value):
        if total + run > REGISTERS:
            if val:  # Redis stops at a VAL run past the end: what came before may be whole
                break
            return None  # runs only add up: the total can never come back to 16384
        total += run
        parts.append(bytes((val,)) * run)
    if total != REGISTERS:
        return None
    return b"".join(parts)


def merge_into(maximum: bytearray, value: bytes | bytearray) -> bool:
    """Raise ``maximum`` (16384 bytes) to the registers of ``value``; False if corrupted."""
    raw = raw_registers(value)
    if raw is None:
        return False
    if any(raw):
        maximum[:] = _bytewise_max(maximum, raw) if any(maximum) else raw
    return True


_HIGH_BITS: Final = int.from_bytes(b"\x80" * REGISTERS, "little")


def _bytewise_max(a: bytes | bytearray, b: bytes | bytearray) -> bytes:
    """The larger of each pair of registers (all below 128), in a few big-int operations:
    ``(a | 0x80) - b`` keeps a byte's high bit exactly where a >= b."""
    x = int.from_bytes(a, "little")
    y = int.from_bytes(b, "little")
    keep = (((x | _HIGH_BITS) - y) & _HIGH_BITS) >> 7
    keep *= 0xFF
    return ((x & keep) | (y & ~keep & ((1 << (8 * REGISTERS)) - 1))).to_bytes(REGISTERS, "little")


def set_raw(value: bytearray, raw: bytes | bytearray, sparse_max_bytes: int) -> None:
    """PFMERGE's write of merged registers into a checked HLL: each non-zero register is set
    in register order, as Redis does (through the sparse edits while the value is sparse)."""
    if value[4] == DENSE:
        current = _dense_to_raw(value[HEADER_SIZE:])
        value[HEADER_SIZE:] = _raw_to_dense(_bytewise_max(current, raw))
        return
    for index, count in enumerate(raw):
        if count:
            if value[4] == DENSE:  # promoted on the way: finish in one pass
                current = _dense_to_raw(value[HEADER_SIZE:])
                rest = bytes(index) + raw[index:]
                value[HEADER_SIZE:] = _raw_to_dense(_bytewise_max(current, rest))
                return
            _sparse_set(value, index, count, sparse_max_bytes)


# ---------------------------------------------------------------------------------------------
# Adding: dense and sparse register updates.
# ---------------------------------------------------------------------------------------------


def _dense_set(value: bytearray, index: int, count: int) -> bool:
    """Raise one dense register to ``count``; whether it changed."""
    bit = index * 6
    at = HEADER_SIZE + (bit >> 3)
    shift = bit & 7
    if shift <= 2:  # the register lies in one byte
        byte = value[at]
        if (byte >> shift) & 63 >= count:
            return False
        value[at] = (byte & ~(63 << shift) & 0xFF) | (count << shift)
        return True
    word = value[at] | (value[at + 1] << 8)
    if (word >> shift) & 63 >= count:
        return False
    word = (word & ~(63 << shift)) | (count << shift)
    value[at] = word & 0xFF
    value[at + 1] = word >> 8
    return True


def to_dense(value: bytearray) -> bool:
    """Convert a sparse HLL to dense in place (the header and its cache kept); False, and
    nothing changed, when the sparse opcodes do not cover exactly 16384 registers."""
    if value[4] == DENSE:
        return True
    raw = raw_registers(value)
    if raw is None:
        return False
    header = bytearray(value[:HEADER_SIZE])
    header[4] = DENSE
    value[:] = header + _raw_to_dense(raw)
    return True


# Locating the opcode that covers a register without a Python step per opcode: the XZERO
# opcodes (two bytes, ``01xxxxxx``) are found by a regular expression search, which resumes
# after each match's second byte, so it reads the opcodes in order (every other opcode is one
# byte); between them the runs of one-byte opcodes are summed and searched through a table of
# their spans.
_XZERO: Final = re.compile(rb"[\x40-\x7f](?:[\x00-\xff]|\Z)")
_SPAN: Final = bytes(((b & 3) + 1) if b & 0x80 else (b & 0x3F) + 1 for b in range(256))


def _locate(value: bytearray, index: int) -> tuple[int, int, int, int, int] | None:
    """The opcode covering register ``index``: its position, its first register, the previous
    opcode's position (-1 if none), its span and length; None if the opcodes end before."""
    end = len(value)
    if end < _SHORT:
        return _walk(value, index)
    pos = HEADER_SIZE
    first = 0
    prev = -1
    for match in _XZERO.finditer(value, HEADER_SIZE):
        at = match.start()
        if at > pos:
            found = _locate_in_run(value, pos, at, index, first, prev)
            if isinstance(found, tuple):
                return found
            first = found
            prev = at - 1
        low = value[at + 1] if at + 1 < end else 0
        span = (((value[at] & 0x3F) << 8) | low) + 1
        if index < first + span:
            return at, first, prev, span, 2
        first += span
        prev = at
        pos = at + 2
    if pos < end:
        found = _locate_in_run(value, pos, end, index, first, prev)
        if isinstance(found, tuple):
            return found
    return None


# Below this length a plain walk over the opcodes costs less than the search's set-up.
_SHORT: Final = 600


def _walk(value: bytearray, index: int) -> tuple[int, int, int, int, int] | None:
    """:func:`_locate` one opcode at a time."""
    end = len(value)
    p = HEADER_SIZE
    first = 0
    prev = -1
    while p < end:
        op = value[p]
        if not op & 0xC0:
            span = (op & 0x3F) + 1
            oplen = 1
        elif op & 0x80:
            span = (op & 3) + 1
            oplen = 1
        else:
            span = (((op & 0x3F) << 8) | (value[p + 1] if p + 1 < end else 0)) + 1
            oplen = 2
        if index < first + span:
            return p, first, prev, span, oplen
        prev = p
        p += oplen
        first += span
    return None


def _locate_in_run(value: bytearray, start: int, stop: int, index: int, first: int,
                   prev: int) -> tuple[int, int, int, int, int] | int:
    """:func:`_locate` over one-byte opcodes ``value[start:stop]``: the opcode found, else
    the first register after them."""
    spans = value[start:stop].translate(_SPAN)
    total = sum(spans)
    if index >= first + total:
        return first + total
    ends = list(accumulate(spans))
    k = bisect_right(ends, index - first)
    before = ends[k - 1] if k else 0
    return start + k, first + before, start + k - 1 if k else prev, ends[k] - before, 1


def _sparse_set(value: bytearray, index: int, count: int, sparse_max_bytes: int) -> int:
    """Redis's in-place sparse update of one register: 1 changed, 0 not, -1 corrupted."""
    if count > _VAL_MAX_VALUE:
        return _promote(value, index, count)
    end = len(value)
    found = _locate(value, index)
    if found is None:
        return -1
    p, first, prev, span, oplen = found
    op = value[p]
    has_next = p + oplen < end
    if op & 0x80:
        old = ((op >> 2) & 0x1F) + 1
        if old >= count:
            return 0
        runlen = (op & 3) + 1
        if runlen == 1:
            value[p] = 0x80 | ((count - 1) << 2)
            _merge_around(value, prev)
            return 1
    elif not op & 0xC0 and (op & 0x3F) == 0:  # a ZERO of one register
        value[p] = 0x80 | ((count - 1) << 2)
        _merge_around(value, prev)
        return 1
    last = first + span - 1
    seq = bytearray()
    if op & 0x80:
        base = op & 0x7C
        if index != first:
            seq.append(0x80 | base | (index - first - 1))
        seq.append(0x80 | ((count - 1) << 2))
        if index != last:
            seq.append(0x80 | base | (last - index - 1))
    else:
        if index != first:
            seq += _zeros(index - first)
        seq.append(0x80 | ((count - 1) << 2))
        if index != last:
            seq += _zeros(last - index)
    delta = len(seq) - oplen
    if delta > 0 and end + delta > sparse_max_bytes:
        return _promote(value, index, count)
    if has_next:
        value[p:p + oplen] = seq
    else:  # the last opcode (perhaps an XZERO cut short): the string ends after the new one
        value[p:] = seq
        del value[end + delta:]
    _merge_around(value, prev)
    return 1


def _zeros(run: int) -> bytes:
    """A run of zero registers as one ZERO or XZERO opcode."""
    if run > _ZERO_MAX_LEN:
        run -= 1
        return bytes((0x40 | (run >> 8), run & 0xFF))
    return bytes((run - 1,))


def _merge_around(value: bytearray, prev: int) -> None:
    """Join adjacent VAL opcodes of equal value (up to 4 registers), looking at up to 5
    opcodes from the one before the edit, as Redis does after a sparse update."""
    p = prev if prev >= 0 else HEADER_SIZE
    end = len(value)
    scan = 5
    while p < end and scan:
        scan -= 1
        op = value[p]
        if not op & 0x80:
            p += 2 if op & 0x40 else 1
            continue
        if p + 1 < end:
            following = value[p + 1]
            if following & 0x80 and (op & 0x7C) == (following & 0x7C):
                run = (op & 3) + (following & 3) + 2
                if run <= _VAL_MAX_LEN:
                    value[p + 1] = (following & 0xFC) | (run - 1)
                    del value[p]
                    end -= 1
                    continue
        p += 1
    invalidate_cache(value)


def _promote(value: bytearray, index: int, count: int) -> int:
    if not to_dense(value):
        return -1
    _dense_set(value, index, count)
    return 1


def add(value: bytearray, elements: list[bytes], sparse_max_bytes: int) -> tuple[int, bool]:
    """PFADD's elements added to a checked HLL in place: how many changed a register, and
    False if a corrupted sparse value stopped it (the elements before it stay added)."""
    changed = 0
    for element in elements:
        h = murmur64a(element)
        rest = (h >> P) | (1 << Q)
        index = h & (REGISTERS - 1)
        count = (rest & -rest).bit_length()
        if value[4] == DENSE:
            if _dense_set(value, index, count):
                changed += 1
        else:
            result = _sparse_set(value, index, count, sparse_max_bytes)
            if result < 0:
                return changed, False
            changed += result
    return changed, True


# ---------------------------------------------------------------------------------------------
# Counting.
# ---------------------------------------------------------------------------------------------


_ONE_BYTE: Final = tuple(bytes((v,)) for v in range(256))


def _raw_histogram(raw: bytes) -> list[int]:
    """How many registers hold each value: one C count per value up to the largest (a
    one-byte needle counts faster than an int one)."""
    histo = [0] * 64
    for v in range(max(raw) + 1):
        histo[v] = raw.count(_ONE_BYTE[v])
    return histo


def histogram(value: bytes | bytearray) -> list[int] | None:
    """How many registers hold each value (0..63), or None for a corrupted sparse value."""
    if value[4] == DENSE:
        return _raw_histogram(_dense_to_raw(value[HEADER_SIZE:]))
    histo = [0] * 64
    total = 0
    for val, run in _sparse_opcodes(value):
        total += run
        if total > REGISTERS:  # it can only grow: corrupted whatever follows
            return None
        histo[val] += run
    return histo if total == REGISTERS else None


def _tau(x: float) -> float:
    if x == 0.0 or x == 1.0:
        return 0.0
    y = 1.0
    z = 1 - x
    while True:
        x = math.sqrt(x)
        previous = z
        y *= 0.5
        z -= math.pow(1 - x, 2) * y
        if previous == z:
            return z / 3


def _sigma(x: float) -> float:
    if x == 1.0:
        return math.inf
    y = 1.0
    z = x
    while True:
        x *= x
        previous = z
        z += x * y
        y += y
        if previous == z:
            return z


def estimate(histo: list[int]) -> int:
    """The cardinality from a register histogram (Ertl, arXiv:1702.01284), rounded half away
    from zero as Redis's llroundl does."""
    m = float(REGISTERS)
    z = m * _tau((m - histo[Q + 1]) / m)
    for j in range(Q, 0, -1):
        z += histo[j]
        z *= 0.5
    z += m * _sigma(histo[0] / m)
    e = ALPHA_INF * m * m / z
    whole = math.floor(e)
    return int(whole) + (1 if e - whole >= 0.5 else 0)


def count_raw(raw: bytes) -> int:
    return estimate(_raw_histogram(raw))


# ---------------------------------------------------------------------------------------------
# PFDEBUG DECODE.
# ---------------------------------------------------------------------------------------------


def decode_sparse(value: bytes | bytearray) -> bytes:
    """The sparse opcodes as Redis's PFDEBUG DECODE writes them: ``z:n``, ``Z:n``, ``v:v,n``."""
    words: list[str] = []
    end = len(value)
    p = HEADER_SIZE
    while p < end:
        op = value[p]
        if op & 0x80:
            words.append(f"v:{((op >> 2) & 0x1F) + 1},{(op & 3) + 1}")
            p += 1
        elif op & 0x40:
            low = value[p + 1] if p + 1 < end else 0
            words.append(f"Z:{(((op & 0x3F) << 8) | low) + 1}")
            p += 2
        else:
            words.append(f"z:{(op & 0x3F) + 1}")
            p += 1
    return " ".join(words).encode()
