"""RDB's scalar encodings: lengths, strings (plain, small integers, LZF), doubles, times.

A length is 6 bits in one byte (``00``), 14 bits in two (``01``, big-endian), or 32/64 bits
after the byte 0x80/0x81 (big-endian). The prefix ``11`` marks a specially encoded string: an
8/16/32-bit little-endian signed integer, or LZF data (compressed length, original length,
bytes). A zset score of the oldest format is a string of up to 255 bytes with three reserved
lengths (253 NaN, 254 +inf, 255 -inf); later formats store the 8 bytes of the double.
"""

from __future__ import annotations

import struct
from typing import Final

from brook.rdb import lzf
from brook.rdb.constants import ENC_INT8, ENC_INT16, ENC_INT32, ENC_LZF, ENCVAL

_DOUBLE: Final = struct.Struct("<d")
_TIME: Final = struct.Struct("<q")
_U32BE: Final = struct.Struct(">I")
_U64BE: Final = struct.Struct(">Q")
_INT32_MIN: Final = -(1 << 31)
_INT32_MAX: Final = (1 << 31) - 1
_COMPRESS_ABOVE: Final = 20  # Redis compresses strings longer than this


class RdbError(ValueError):
    """Data that is not a valid RDB object (Redis: "Bad data format")."""


# -- reading ---------------------------------------------------------------------------------


class Reader:
    """A cursor over RDB bytes; every read past the end raises :class:`RdbError`."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int = -1) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end < 0 else end

    def take(self, size: int) -> bytes:
        pos = self.pos
        stop = pos + size
        if stop > self.end or size < 0:
            raise RdbError("truncated")
        self.pos = stop
        return self.data[pos:stop]

    def byte(self) -> int:
        pos = self.pos
        if pos >= self.end:
            raise RdbError("truncated")
        self.pos = pos + 1
        return self.data[pos]

    def length(self) -> int:
        """A plain length (an encoded-string marker is an error here)."""
        value, encoded = self.length_or_encoding()
        if encoded:
            raise RdbError("unexpected string encoding")
        return value

    def length_or_encoding(self) -> tuple[int, bool]:
        first = self.byte()
        kind = first >> 6
        if kind == 0:
            return first, False
        if kind == 1:
            return (first & 0x3F) << 8 | self.byte(), False
        if kind == ENCVAL:
            return first & 0x3F, True
        if first == 0x80:
            return _U32BE.unpack(self.take(4))[0], False
        if first == 0x81:
            return _U64BE.unpack(self.take(8))[0], False
        raise RdbError("bad length")

    def string(self) -> bytes:
        size, encoded = self.length_or_encoding()
        if not encoded:
            return self.take(size)
        if size == ENC_INT8:
            return b"%d" % int.from_bytes(self.take(1), "little", signed=True)
        if size == ENC_INT16:
            return b"%d" % int.from_bytes(self.take(2), "little", signed=True)
        if size == ENC_INT32:
            return b"%d" % int.from_bytes(self.take(4), "little", signed=True)
        if size == ENC_LZF:
            compressed = self.length()
            original = self.length()
            if original == 0:
                raise RdbError("empty LZF string")
            try:
                return lzf.decompress(self.take(compressed), original)
            except lzf.LzfError as error:
                raise RdbError(str(error)) from None
        raise RdbError("unknown string encoding")

    def binary_double(self) -> float:
        return _DOUBLE.unpack(self.take(8))[0]

    def string_double(self) -> float:
        size = self.byte()
        if size == 253:
            return float("nan")
        if size == 254:
            return float("inf")
        if size == 255:
            return float("-inf")
        text = self.take(size)
        try:
            return float(text)
        except ValueError:
            raise RdbError("bad double") from None

    def millisecond_time(self) -> int:
        return _TIME.unpack(self.take(8))[0]

    def at_end(self) -> bool:
        return self.pos >= self.end


# -- writing ---------------------------------------------------------------------------------


def length(value: int) -> bytes:
    if value < 1 << 6:
        return bytes((value,))
    if value < 1 << 14:
        return bytes((0x40 | value >> 8, value & 0xFF))
    if value <= 0xFFFFFFFF:
        return b"\x80" + _U32BE.pack(value)
    return b"\x81" + _U64BE.pack(value)


def integer_string(value: int) -> bytes | None:
    """The integer encoding of ``value`` when it fits 32 bits (Redis's rdbEncodeInteger)."""
    if -128 <= value <= 127:
        return bytes((ENCVAL << 6 | ENC_INT8,)) + value.to_bytes(1, "little", signed=True)
    if -32768 <= value <= 32767:
        return bytes((ENCVAL << 6 | ENC_INT16,)) + value.to_bytes(2, "little", signed=True)
    if _INT32_MIN <= value <= _INT32_MAX:
        return bytes((ENCVAL << 6 | ENC_INT32,)) + value.to_bytes(4, "little", signed=True)
    return None


def _canonical_int(data: bytes) -> int | None:
    """The integer ``data`` spells exactly as Redis prints it (no sign, zeros or spaces more)."""
    if not data or len(data) > 11:
        return None
    digits = data[1:] if data[0] == 45 else data  # '-'
    if not (digits.isdigit() and (digits[0] != 48 or data == b"0")):
        return None
    return int(data)


def string(data: bytes, compress: bool = True) -> bytes:
    """``data`` as Redis's rdbSaveRawString writes it: a small integer in 1-4 bytes, LZF when
    compression is on and saves at least 4 bytes of a string longer than 20, plain otherwise."""
    size = len(data)
    if size <= 11:
        value = _canonical_int(data)
        if value is not None:
            encoded = integer_string(value)
            if encoded is not None:
                return encoded
    if compress and size > _COMPRESS_ABOVE:
        packed = lzf.compress(data, size - 4)
        if packed is not None:
            return (bytes((ENCVAL << 6 | ENC_LZF,)) + length(len(packed)) + length(size)
                    + packed)
    return length(size) + data


def plain_string(data: bytes) -> bytes:
    """``data`` with its length only (no integer or LZF encoding tried)."""
    return length(len(data)) + data


def binary_double(value: float) -> bytes:
    return _DOUBLE.pack(value)


def millisecond_time(value: int) -> bytes:
    return _TIME.pack(value)
