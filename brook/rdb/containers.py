"""Redis's packed containers inside RDB strings: listpack, ziplist, intset, zipmap.

Decoders check every length against the blob, so a corrupted blob raises
:class:`~brook.rdb.strings.RdbError` instead of reading out of bounds; they return the elements
(integers as ``int`` where the container stored an integer, so stream code can use them).

Listpack (listpack.c): ``total-bytes:u32 count:u16 entry... 0xFF``; an entry is an encoding
byte with its data, then the entry's length written backwards in 1-5 bytes. Integers: 7-bit
``0xxxxxxx``, 13-bit ``110xxxxx``, then 0xF1..0xF4 for 16/24/32/64 bits little-endian; strings:
``10xxxxxx`` (6-bit length), ``1110xxxx`` (12-bit), 0xF0 (32-bit).

Ziplist (ziplist.c, RDB < 10): ``bytes:u32 tail:u32 count:u16 entry... 0xFF``; an entry is the
previous entry's length (1 byte, or 0xFE and 4 bytes), an encoding, its data. Intset: ``width:u32
count:u32`` then sorted little-endian integers of that width. Zipmap (RDB < 4): ``count:u8``
then key/value pairs with a free-space byte after each value's length, 0xFF at the end.
"""

from __future__ import annotations

import struct
from typing import Final

from brook.rdb.strings import RdbError
from brook.types.lpsize import backlen_size

_LP_HEADER: Final = struct.Struct("<IH")
_ZL_HEADER: Final = struct.Struct("<IIH")
_IS_HEADER: Final = struct.Struct("<II")
_U32: Final = struct.Struct("<I")
_LP_UNKNOWN_COUNT: Final = 65535
_INTSET_CODES: Final = {2: "h", 4: "i", 8: "q"}

Element = bytes | int


# -- listpack --------------------------------------------------------------------------------


def listpack_items(blob: bytes) -> list[Element]:
    """Every element of a listpack, in order."""
    end = len(blob)
    if end < 7:
        raise RdbError("listpack too short")
    total, count = _LP_HEADER.unpack_from(blob)
    if total != end or blob[-1] != 0xFF:
        raise RdbError("listpack size disagrees")
    items: list[Element] = []
    append = items.append
    pos = 6
    last = end - 1
    while pos < last:
        first = blob[pos]
        if first < 0x80:
            append(first)
            pos += 2  # one byte and its backlen
            continue
        if first < 0xC0:  # 6-bit string length
            size = first & 0x3F
            start = pos + 1
            append(blob[start:start + size])
            pos = start + size + backlen_size(size + 1)
        elif first < 0xE0:  # 13-bit integer
            if pos + 1 >= last:
                raise RdbError("listpack entry past the end")
            value = (first & 0x1F) << 8 | blob[pos + 1]
            append(value - 8192 if value >= 4096 else value)
            pos += 3
        elif first < 0xF0:  # 12-bit string length
            if pos + 1 >= last:
                raise RdbError("listpack entry past the end")
            size = (first & 0x0F) << 8 | blob[pos + 1]
            start = pos + 2
            append(blob[start:start + size])
            pos = start + size + backlen_size(size + 2)
        elif first == 0xF0:  # 32-bit string length
            if pos + 5 > last:
                raise RdbError("listpack entry past the end")
            size = _U32.unpack_from(blob, pos + 1)[0]
            start = pos + 5
            append(blob[start:start + size])
            pos = start + size + backlen_size(size + 5)
        elif first <= 0xF4:
            width = (2, 3, 4, 8)[first - 0xF1]
            start = pos + 1
            if start + width > last:
                raise RdbError("listpack entry past the end")
            append(int.from_bytes(blob[start:start + width], "little", signed=True))
            pos = start + width + 1
        else:
            raise RdbError("bad listpack encoding")
        if pos > last:
            raise RdbError("listpack entry past the end")
    if pos != last:
        raise RdbError("listpack entry past the end")
    if count != _LP_UNKNOWN_COUNT and count != len(items):
        raise RdbError("listpack count disagrees")
    return items


def listpack_strings(blob: bytes) -> list[bytes]:
    """A listpack's elements as strings (integers in decimal)."""
    return [item if isinstance(item, bytes) else b"%d" % item for item in listpack_items(blob)]


SMALL_INTS: Final = [bytes((value, 1)) for value in range(128)]  # 7-bit entries, prebuilt


def lp_int(value: int) -> bytes:
    """One integer entry."""
    if 0 <= value <= 127:
        return SMALL_INTS[value]
    if -4096 <= value <= 4095:
        unsigned = value & 0x1FFF
        return bytes((0xC0 | unsigned >> 8, unsigned & 0xFF, 2))
    if -32768 <= value <= 32767:
        return b"\xf1" + value.to_bytes(2, "little", signed=True) + b"\x03"
    if -(1 << 23) <= value < 1 << 23:
        return b"\xf2" + value.to_bytes(3, "little", signed=True) + b"\x04"
    if -(1 << 31) <= value < 1 << 31:
        return b"\xf3" + value.to_bytes(4, "little", signed=True) + b"\x05"
    return b"\xf4" + value.to_bytes(8, "little", signed=True) + b"\x09"


def _backlen(size: int) -> bytes:
    if size <= 127:
        return bytes((size,))
    if size < 16383:
        return bytes((size >> 7, (size & 127) | 128))
    if size < 2097151:
        return bytes((size >> 14, ((size >> 7) & 127) | 128, (size & 127) | 128))
    if size < 268435455:
        return bytes((size >> 21, ((size >> 14) & 127) | 128, ((size >> 7) & 127) | 128,
                      (size & 127) | 128))
    return bytes((size >> 28, ((size >> 21) & 127) | 128, ((size >> 14) & 127) | 128,
                  ((size >> 7) & 127) | 128, (size & 127) | 128))


def lp_string(item: bytes) -> bytes:
    """One string entry, as an integer when it spells one exactly (Redis's lpAppend does the
    same: digits, an optional minus, no leading zero, within 64 bits)."""
    size = len(item)
    if 0 < size <= 20:
        digits = item[1:] if item[0] == 45 else item  # '-'
        if digits.isdigit() and digits.isascii() and (digits[0] != 48 or digits == item == b"0"):
            value = int(item)
            if -(1 << 63) <= value < 1 << 63:
                return lp_int(value)
    if size < 64:
        head = bytes((0x80 | size,))
    elif size < 4096:
        head = bytes((0xE0 | size >> 8, size & 0xFF))
    else:
        head = b"\xf0" + _U32.pack(size)
    return head + item + _backlen(len(head) + size)


def listpack_entry(item: Element) -> bytes:
    if type(item) is int:
        return lp_int(item)  # type: ignore[arg-type]
    return lp_string(item)  # type: ignore[arg-type]


def listpack(items: list[bytes]) -> bytes:
    """A listpack of string elements (integers encoded as integers)."""
    return listpack_of([lp_string(item) for item in items], len(items))


def listpack_of(entries: list[bytes], count: int) -> bytes:
    """A listpack of already encoded entries."""
    body = b"".join(entries)
    return _LP_HEADER.pack(len(body) + 7, count if count < _LP_UNKNOWN_COUNT
                           else _LP_UNKNOWN_COUNT) + body + b"\xff"


# -- ziplist ---------------------------------------------------------------------------------


def ziplist_items(blob: bytes) -> list[bytes]:
    """Every element of a ziplist, as strings."""
    end = len(blob)
    if end < 11:
        raise RdbError("ziplist too short")
    total, tail, count = _ZL_HEADER.unpack_from(blob)
    if total != end or blob[-1] != 0xFF or tail >= end:
        raise RdbError("ziplist size disagrees")
    items: list[bytes] = []
    append = items.append
    pos = 10
    last = end - 1
    previous = 0
    start = 10
    while pos < last:
        start = pos
        prevlen = blob[pos]
        if prevlen == 0xFE:
            if pos + 5 > last:
                raise RdbError("ziplist entry past the end")
            prevlen = _U32.unpack_from(blob, pos + 1)[0]
            pos += 5
        else:
            pos += 1
        if prevlen != previous:
            raise RdbError("ziplist prevlen disagrees")
        if pos >= last:
            raise RdbError("ziplist entry past the end")
        code = blob[pos]
        kind = code >> 6
        if kind == 0:
            size = code & 0x3F
            pos += 1
        elif kind == 1:
            if pos + 2 > last:
                raise RdbError("ziplist entry past the end")
            size = (code & 0x3F) << 8 | blob[pos + 1]
            pos += 2
        elif code == 0x80:
            if pos + 5 > last:
                raise RdbError("ziplist entry past the end")
            size = int.from_bytes(blob[pos + 1:pos + 5], "big")
            pos += 5
        elif kind == 2:
            raise RdbError("bad ziplist encoding")
        else:
            pos += 1
            if code == 0xC0:
                width = 2
            elif code == 0xD0:
                width = 4
            elif code == 0xE0:
                width = 8
            elif code == 0xF0:
                width = 3
            elif code == 0xFE:
                width = 1
            elif 0xF1 <= code <= 0xFD:
                append(b"%d" % ((code & 0x0F) - 1))
                previous = pos - start
                continue
            else:
                raise RdbError("bad ziplist encoding")
            if pos + width > last:
                raise RdbError("ziplist entry past the end")
            append(b"%d" % int.from_bytes(blob[pos:pos + width], "little", signed=True))
            pos += width
            previous = pos - start
            continue
        if pos + size > last:
            raise RdbError("ziplist entry past the end")
        append(blob[pos:pos + size])
        pos += size
        previous = pos - start
    if pos != last:
        raise RdbError("ziplist entry past the end")
    if tail != (start if items else 10):
        raise RdbError("ziplist tail offset disagrees")
    if count != 0xFFFF and count != len(items):
        raise RdbError("ziplist count disagrees")
    return items


# -- intset ----------------------------------------------------------------------------------


def intset_items(blob: bytes) -> list[int]:
    """An intset's integers; they must be strictly increasing (Redis's deep check)."""
    if len(blob) < 8:
        raise RdbError("intset too short")
    width, count = _IS_HEADER.unpack_from(blob)
    code = _INTSET_CODES.get(width)
    if code is None or len(blob) != 8 + width * count or count == 0:
        raise RdbError("intset size disagrees")
    values = list(struct.unpack_from(f"<{count}{code}", blob, 8))
    for a, b in zip(values, values[1:], strict=False):
        if a >= b:
            raise RdbError("intset out of order")
    return values


def intset(values: list[int]) -> bytes:
    """An intset of sorted distinct integers, in the narrowest width that holds them."""
    low, high = values[0], values[-1]
    if low >= -32768 and high <= 32767:
        width = 2
    elif low >= -(1 << 31) and high < 1 << 31:
        width = 4
    else:
        width = 8
    return _IS_HEADER.pack(width, len(values)) + struct.pack(
        f"<{len(values)}{_INTSET_CODES[width]}", *values)


# -- zipmap ----------------------------------------------------------------------------------


def zipmap_items(blob: bytes) -> list[bytes]:
    """A zipmap's keys and values, alternating."""
    end = len(blob)
    if end < 2 or blob[-1] != 0xFF:
        raise RdbError("zipmap too short")
    items: list[bytes] = []
    pos = 1
    last = end - 1
    while pos < last:
        for is_value in (False, True):
            if pos >= last:
                raise RdbError("zipmap entry past the end")
            size = blob[pos]
            if size == 254:
                if pos + 5 > last:
                    raise RdbError("zipmap entry past the end")
                size = _U32.unpack_from(blob, pos + 1)[0]
                pos += 5
            elif size == 255:
                raise RdbError("zipmap entry past the end")
            else:
                pos += 1
            free = 0
            if is_value:
                if pos >= last:
                    raise RdbError("zipmap entry past the end")
                free = blob[pos]
                pos += 1
            if pos + size + free > last:
                raise RdbError("zipmap entry past the end")
            items.append(blob[pos:pos + size])
            pos += size + free
    if pos != last:
        raise RdbError("zipmap entry past the end")
    if blob[0] < 254 and blob[0] * 2 != len(items):
        raise RdbError("zipmap count disagrees")
    return items
