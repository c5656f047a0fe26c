"""Bit arithmetic on string values: counting, searching, combining and integer fields.

A bitmap is a string read most significant bit first: bit 0 is the high bit of byte 0, as
Redis numbers them. Bytes past the end of a string read as zero. The work is done on Python
ints made from the bytes (``int.from_bytes``), so every scan and combination runs in C over a
whole range at once instead of a Python loop per byte; the scans first pass over the blocks
that cannot hold what they look for (below).

Knows nothing of commands: the callers clamp ranges and check arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

__all__ = [
    "BITOP_OPERATIONS", "OVERFLOW_FAIL", "OVERFLOW_SAT", "OVERFLOW_WRAP", "bit_count",
    "combine", "first_bit", "get_field", "set_field", "field_result",
]

OVERFLOW_WRAP: Final = 0
OVERFLOW_SAT: Final = 1
OVERFLOW_FAIL: Final = 2

# BITOP's operations (the last four since Redis 8.2).
BITOP_OPERATIONS: Final = ("and", "or", "xor", "not", "diff", "diff1", "andor", "one")


# Scans step over blocks that cannot hold what they look for (all zero bytes when counting or
# looking for a 1, all 0xFF when looking for a 0) with ``bytes.startswith``, a memcmp: 64 KB at
# a time, then 2 KB at a time inside a block that is not all alike. A sparse bitmap of megabytes
# is passed over in microseconds, where converting it to an int would take milliseconds; only
# the pieces left are converted.
_BLOCK: Final = 1 << 16
_SUB_BLOCK: Final = 1 << 11
_SKIPPED: Final = {0: (bytes(_BLOCK), bytes(_SUB_BLOCK)),
                   1: (b"\xff" * _BLOCK, b"\xff" * _SUB_BLOCK)}


def _bits_of(data: bytes | bytearray, first: int, last: int) -> tuple[int, int]:
    """The bits ``first..last`` (inclusive bit numbers inside ``data``) as an int, and how
    many there are."""
    low_byte, high_byte = first >> 3, last >> 3
    chunk = int.from_bytes(data[low_byte : high_byte + 1], "big")
    width = last - first + 1
    chunk >>= 7 - (last & 7)  # drop the bits after ``last`` in its byte
    return chunk & ((1 << width) - 1), width


def _pieces(data: bytes | bytearray, first: int, last: int, skipped_bit: int,
            longest: int) -> Iterator[tuple[int, int]]:
    """``first..last`` (bit numbers) in order, without the blocks whose bytes all have every
    bit equal to ``skipped_bit``, as (first, last) pieces of at most ``longest`` bytes."""
    start, stop = first >> 3, (last >> 3) + 1
    if stop - start < _SUB_BLOCK:
        yield first, last
        return
    block, sub_block = _SKIPPED[skipped_bit]
    run = -1  # the first byte of the piece being gathered
    position = start
    while position < stop:
        left = stop - position
        if left >= _BLOCK and data.startswith(block, position):
            step, skip = _BLOCK, True
        elif left >= _SUB_BLOCK and data.startswith(sub_block, position):
            step, skip = _SUB_BLOCK, True
        else:
            step, skip = min(_SUB_BLOCK, left), False
        if run >= 0 and (skip or position - run >= longest):
            yield max(first, run * 8), position * 8 - 1
            run = -1
        if not skip and run < 0:
            run = position
        position += step
    if run >= 0:
        yield max(first, run * 8), last


def bit_count(data: bytes | bytearray, first: int, last: int) -> int:
    """The set bits among bit numbers ``first..last`` (inclusive, inside the string)."""
    if first > last:
        return 0
    low, high = first >> 3, last >> 3
    head = 0xFF >> (first & 7)  # the bits of the first byte from ``first`` on
    tail_shift = 7 - (last & 7)  # the bits of the last byte after ``last``
    if low == high:
        return ((data[low] & head) >> tail_shift).bit_count()
    edges = (data[low] & head).bit_count() + (data[high] >> tail_shift).bit_count()
    if high - low < _SUB_BLOCK:
        return edges + int.from_bytes(data[low + 1 : high], "big").bit_count()
    return edges + sum(int.from_bytes(data[piece_first >> 3 : (piece_last >> 3) + 1],
                                      "big").bit_count()
                       for piece_first, piece_last in _pieces(data, (low + 1) * 8, high * 8 - 1,
                                                             0, _BLOCK))


def first_bit(data: bytes | bytearray, bit: int, first: int, last: int) -> int:
    """The number of the first bit equal to ``bit`` among ``first..last`` (inclusive, inside
    the string), or -1."""
    if first > last:
        return -1
    # Short pieces: the answer is usually near the start of the first piece left.
    for low, high in _pieces(data, first, last, 1 - bit, _SUB_BLOCK):
        chunk, width = _bits_of(data, low, high)
        if not bit:
            chunk ^= (1 << width) - 1
        if chunk:
            return low + width - chunk.bit_length()
    return -1


def combine(operation: str, values: list[bytes | bytearray]) -> bytearray:
    """BITOP: the operation over ``values``, each zero-padded to the longest.

    ``diff``: the first and none of the others; ``diff1``: any of the others but not the
    first; ``andor``: the first and any of the others; ``one``: exactly one of them."""
    size = max(len(value) for value in values)
    numbers = [int.from_bytes(value, "big") << (8 * (size - len(value))) for value in values]
    everything = (1 << (8 * size)) - 1
    head, rest = numbers[0], numbers[1:]
    if operation == "not":
        result = head ^ everything
    elif operation == "and":
        result = head
        for number in rest:
            result &= number
    elif operation == "xor":
        result = head
        for number in rest:
            result ^= number
    elif operation == "one":
        once = head
        more = 0
        for number in rest:
            more |= once & number
            once = (once ^ number) & ~more
        result = once
    else:
        others = 0
        for number in rest:
            others |= number
        if operation == "or":
            result = head | others
        elif operation == "diff":
            result = head & ~others & everything
        elif operation == "diff1":
            result = others & ~head & everything
        else:  # andor
            result = head & others
    return bytearray(result.to_bytes(size, "big"))


# -- integer fields (BITFIELD) ------------------------------------------------------------------


def get_field(data: bytes | bytearray, offset: int, bits: int, signed: bool) -> int:
    """The ``bits``-wide integer at bit ``offset`` (two's complement when ``signed``); bits
    past the end of the string read as zero."""
    end = offset + bits  # first bit after the field
    first_byte, last_byte = offset >> 3, (end - 1) >> 3
    chunk = data[first_byte : last_byte + 1]
    missing = last_byte + 1 - first_byte - len(chunk)
    number = int.from_bytes(chunk, "big") << (8 * missing)
    number = (number >> (7 - ((end - 1) & 7))) & ((1 << bits) - 1)
    if signed and number >> (bits - 1):
        number -= 1 << bits
    return number


def set_field(data: bytearray, offset: int, bits: int, value: int) -> None:
    """Write the low ``bits`` bits of ``value`` at bit ``offset`` (the string already reaches
    the field's last bit)."""
    end = offset + bits
    first_byte, last_byte = offset >> 3, (end - 1) >> 3
    shift = 7 - ((end - 1) & 7)
    width = 8 * (last_byte + 1 - first_byte)
    mask = ((1 << bits) - 1) << shift
    number = int.from_bytes(data[first_byte : last_byte + 1], "big")
    number = (number & ~mask) | ((value << shift) & mask)
    data[first_byte : last_byte + 1] = number.to_bytes(width // 8, "big")


def field_result(value: int, bits: int, signed: bool, overflow: int) -> int | None:
    """What a field of the type holds after an exact ``value`` is stored: the value when it
    fits, otherwise wrapped (modulo 2**bits), saturated at the nearer limit, or None (FAIL:
    nothing is written)."""
    if signed:
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    else:
        low, high = 0, (1 << bits) - 1
    if low <= value <= high:
        return value
    if overflow == OVERFLOW_WRAP:
        return ((value - low) & ((1 << bits) - 1)) + low
    if overflow == OVERFLOW_SAT:
        return high if value > high else low
    return None
