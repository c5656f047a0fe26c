"""``cmsgpack``: Redis's bundled lua-cmsgpack 0.4.0 (deps/lua/src/lua_cmsgpack.c), in Lua.

In Lua for the same reason as cjson: queue scripts pack and unpack small tables on every job,
and walking or building a table from Python costs a crossing per item. Measured on a 7-key job
table: pack 3.7 us, unpack 3.9 us (Redis's C: 0.8 and 0.8). Repeated short strings and numbers
are packed once (bounded memos). Only NaN goes through Python: Lua arithmetic cannot read or
make a NaN's payload bits, which the C library copies.

What it reproduces: ``pack`` of several values concatenated; integers (numbers that convert
to int64 unchanged, -0 included) in the smallest msgpack int form, other numbers as float 32
when the float holds them exactly, else float 64; strings as fixstr/str8/str16/str32; a table
whose keys are exactly 1..n as an array (an empty table is an empty array), any other as a map;
tables nested 16 deep and values of other types as nil. ``unpack`` returns every value,
``unpack_one``/``unpack_limit`` start at a byte offset and return the next offset (-1 at the
end) first; integers above 2^63 come back negative as in the C code; bin and ext types are
"Bad data format in input."; the Lua stack limit of the C code gives the same "stack
overflow (...)" errors.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from brook.scripting.libs.bridge import LUAI_MAXCSTACK, lua_helpers, run_library
from brook.scripting.lua import lua_source

if TYPE_CHECKING:
    from lupa.lua51 import LuaRuntime

_SOURCE = lua_source("cmsgpack")


def _nan_to_bytes(value: float) -> bytes:
    """The eight big-endian bytes of a NaN, payload and sign as they are."""
    return struct.pack(">d", value)


def _nan_from_bytes(data: bytes) -> float:
    """The NaN a msgpack float 32 or float 64 holds (a float 32 widened as C widens it)."""
    return struct.unpack(">f" if len(data) == 4 else ">d", data)[0]


def install(lua: LuaRuntime) -> None:
    """Set the global ``cmsgpack``."""
    lua.globals()[b"cmsgpack"] = run_library(
        lua, "cmsgpack", _SOURCE, lua_helpers(lua), LUAI_MAXCSTACK, _nan_to_bytes, _nan_from_bytes)
