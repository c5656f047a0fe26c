"""``struct``: Roberto Ierusalimschy's struct library as Redis bundles it
(deps/lua/src/lua_struct.c), in Python: Python's own struct module and big integers make the
C library's 64-bit arithmetic easy to follow exactly, and scripts rarely call it in loops
(about 3.5 us a call).

The format language: ``>``/``<`` (endianness, default little as on x86-64), ``!n`` (maximum
alignment, default 8), ``b B h H l L T i I`` (1, 1, 2, 2, 8, 8, 8 bytes; ``i``/``I`` take a
size up to 32), ``f d`` (float, double), ``c`` (``cn``: n bytes; ``c0``: the whole string, or on
unpacking a length read just before), ``s`` (zero-terminated), ``x`` (a zero byte), spaces.
The C code's machine behaviour is kept: integers go through C's double to (u)int64 casts as
x86-64 performs them; integers wider than 8 bytes pack as the 64-bit value zero-extended and
unpack with the sign test on a bit picked by a shift count taken modulo 64; the format ends
at its first zero byte; and the error texts and argument numbers are the C library's.
"""

from __future__ import annotations

import ctypes
import struct as pystruct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from brook.scripting.libs.bridge import (
    LUAI_MAXCSTACK,
    LuaArgError,
    LuaLibError,
    check_number,
    check_string,
    lua_table,
    opt_integer,
    to_integer,
    to_number,
)

if TYPE_CHECKING:
    from lupa.lua51 import LuaRuntime

_MAXINTSIZE = 32
_MAXALIGN = 8  # max(offsetof(struct {char c; double d;}, d), sizeof(int)) on x86-64
_INT_MAX = 0x7FFFFFFF
_U64 = (1 << 64) - 1
_SIZES = {"B": 1, "b": 1, "H": 2, "h": 2, "L": 8, "l": 8, "T": 8, "f": 4, "d": 8, "x": 1}
_INTEGERS = frozenset("bBhHlLTiI")


class _Format:
    """A cursor over a format string, with the header options (endianness, alignment)."""

    def __init__(self, text: bytes) -> None:
        self.text = text.split(b"\0", 1)[0].decode("latin-1")
        self.at = 0
        self.little = True
        self.align = 1

    def next_option(self) -> tuple[str, int] | None:
        """The next option character and its size (optsize), or None at the end."""
        if self.at >= len(self.text):
            return None
        option = self.text[self.at]
        self.at += 1
        if option in _SIZES:
            return option, _SIZES[option]
        if option == "c":
            return option, self._number(1)
        if option in "iI":
            size = self._number(4)
            if size > _MAXINTSIZE:
                raise LuaLibError(f"integral size {size} is larger than limit of {_MAXINTSIZE}")
            return option, size
        return option, 0

    def _number(self, default: int) -> int:
        """getnum: the digits that follow, or ``default``."""
        start = self.at
        while self.at < len(self.text) and self.text[self.at].isdigit() and self.text[self.at].isascii():
            self.at += 1
        if self.at == start:
            return default
        value = 0
        for digit in self.text[start:self.at]:
            if value > _INT_MAX // 10 or value * 10 > _INT_MAX - int(digit):
                raise LuaLibError("integral size overflow")
            value = value * 10 + int(digit)
        return value

    def padding(self, position: int, option: str, size: int) -> int:
        """gettoalign: zero bytes before an item of ``size`` at ``position``."""
        if size == 0 or option == "c":
            return 0
        size = min(size, self.align)
        return (size - (position & (size - 1))) & (size - 1)

    def control(self, option: str) -> None:
        """controloptions: the characters that are not items."""
        if option == " ":
            return
        if option == ">":
            self.little = False
        elif option == "<":
            self.little = True
        elif option == "!":
            align = self._number(_MAXALIGN)
            if align <= 0 or align & (align - 1):
                raise LuaLibError(f"alignment {align} is not a power of 2")
            self.align = align
        else:
            raise LuaArgError(1, f"invalid format option '{option}'")


def _to_uint64(number: float) -> int:
    """putinteger's conversion: ``(Uinttype)(Inttype)n`` below zero, else ``(Uinttype)n``, as
    x86-64 code computes them (NaN: 2^63; 2^64 and above: 0)."""
    if number < 0:
        return to_integer(number) & _U64
    if number != number:
        return 1 << 63
    if number >= 2.0**64:
        return 0
    return int(number)


def _pack_integer(value: int, size: int, little: bool) -> bytes:
    """``size`` bytes of a 64-bit value (zero beyond its eighth byte)."""
    data = (value & _U64).to_bytes(8, "little") + bytes(max(size - 8, 0))
    data = data[:size]
    return data if little else data[::-1]


def _c_float_bytes(number: float) -> bytes:
    """The four bytes of ``(float)number`` (C's conversion: overflow gives infinity)."""
    return bytes(ctypes.c_float(number))


def pack(*args: Any) -> bytes:
    """b_pack."""
    form = _Format(check_string(args, 1))
    args = (*args, None)  # b_pack pushes a nil after its arguments: a missing one "got nil"
    out = bytearray()
    narg = 2
    while (item := form.next_option()) is not None:
        option, size = item
        out += bytes(form.padding(len(out), option, size))
        if option in _INTEGERS:
            out += _pack_integer(_to_uint64(check_number(args, narg)), size, form.little)
            narg += 1
        elif option == "x":
            out.append(0)
        elif option in "fd":
            number = check_number(args, narg)
            narg += 1
            data = _c_float_bytes(number) if option == "f" else pystruct.pack("<d", number)
            out += data if form.little else data[::-1]
        elif option in "cs":
            text = check_string(args, narg)
            narg += 1
            if size == 0:
                size = len(text)
            if len(text) < size:
                raise LuaArgError(narg, "string too short")  # narg already past it, as in C
            out += text[:size]
            if option == "s":
                out.append(0)
        else:
            form.control(option)
    return bytes(out)


def _get_integer(data: bytes, little: bool, signed: bool, size: int) -> float:
    """getinteger: the bytes folded into 64 bits, sign-extended from the bit C's shift picks."""
    value = 0
    for byte in (reversed(data) if little else data):
        value = ((value << 8) | byte) & _U64
    if not signed:
        return float(value)
    mask = (_U64 << ((size * 8 - 1) & 63)) & _U64
    if value & mask:
        value |= mask
    return float(value - (1 << 64) if value >> 63 else value)


def _item_error() -> LuaArgError:
    return LuaArgError(2, "data string too short")


def unpack(*args: Any) -> tuple[Any, ...]:
    """b_unpack: the values, then the position after them."""
    form = _Format(check_string(args, 1))
    data = check_string(args, 2)
    position = opt_integer(args, 3, 1) & _U64
    if position == 0:
        raise LuaArgError(3, "offset must be 1 or greater")
    position -= 1
    length = len(data)
    results: list[Any] = []
    while (item := form.next_option()) is not None:
        option, size = item
        position = (position + form.padding(position, option, size)) & _U64
        if not (size <= length and position <= length - size):
            raise _item_error()
        if len(args) + len(results) + 2 > LUAI_MAXCSTACK:
            raise LuaLibError("stack overflow (too many results)")
        chunk = data[position:position + size]
        if option in _INTEGERS:
            results.append(_get_integer(chunk, form.little, option.islower(), size))
        elif option in "fd":
            chunk = chunk if form.little else chunk[::-1]
            results.append(pystruct.unpack("<f" if option == "f" else "<d", chunk)[0])
        elif option == "c":
            size = _previous_size(results, length, position) if size == 0 else size
            results.append(data[position:position + size])
        elif option == "s":
            end = data.find(b"\0", position)
            if end < 0:
                raise LuaLibError("unfinished string in data")
            results.append(data[position:end])
            size = end - position + 1
        elif option != "x":
            form.control(option)
        position += size
    return (*results, position + 1)


def _previous_size(results: list[Any], length: int, position: int) -> int:
    """``c0`` when unpacking: the number read just before is the length (and is dropped)."""
    number = to_number(results[-1]) if results else None
    if number is None:
        raise LuaLibError("format 'c0' needs a previous size")
    results.pop()
    size = _to_uint64(number)
    if not (size <= length and position <= length - size):
        raise _item_error()
    return size


def size(*args: Any) -> int:
    """b_size: the bytes a format packs to."""
    form = _Format(check_string(args, 1))
    position = 0
    while (item := form.next_option()) is not None:
        option, width = item
        position += form.padding(position, option, width)
        if option == "s":
            raise LuaArgError(1, "option 's' has no fixed size")
        if option == "c" and width == 0:
            raise LuaArgError(1, "option 'c0' has no fixed size")
        if not (option.isascii() and option.isalnum()):
            form.control(option)
        position += width
    return position


_FUNCTIONS: dict[str, Callable[..., Any]] = {"pack": pack, "unpack": unpack, "size": size}


def install(lua: LuaRuntime) -> None:
    """Set the global ``struct``."""
    lua.globals()[b"struct"] = lua_table(lua, _FUNCTIONS, many_results=("unpack",),
                                         exact_zero=("pack",))
