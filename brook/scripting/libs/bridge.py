"""What the libraries share: failing the way Redis's C library functions fail.

A C library function fails with ``luaL_error`` or ``luaL_argerror``. The message starts with
the position of the line that called it (``user_script:1: ``, none when the caller is C, as
under ``pcall(f)``), and an argument error names the function as the calling script spelled it
(``bad argument #1 to 'band'`` for ``bit.band(x)``, ``to 'f'`` after ``local f = bit.band``,
``calling 'band' on bad self`` for ``bit:band(x)``, ``to '?'`` under ``pcall``). Brook's
libraries are Lua functions or Lua functions around Python ones, and produce the same text:

* every public function is registered with its name (``register``); a helper that fails
  (``fail``, ``argerror``, ...) walks up the stack to the registered frame and reads its name
  and its caller's line there. Only failures pay for it.
* Python functions (bit, struct) raise :class:`LuaArgError` or :class:`LuaLibError`;
  :func:`lua_function` wraps them in a small Lua function that raises the message as a Lua
  string (a Python exception crossing into Lua would be a userdata error value, which ``pcall``
  callers and error replies cannot use).

A C function called in tail position (``return cjson.decode(x)``) still has the script's frame
under it; a Lua function called so replaces it, and both the line and the alias are lost (the
library's own name is used then). :func:`load_without_tail_calls` compiles a script with its
tail calls as plain calls, which keeps that frame; the libraries' own chunks are compiled so
(:func:`run_library`), so that their internal tail calls never hide the public function.

The Python helpers reproduce the Lua C API's argument conversions (``luaL_checknumber``
accepting numeric strings, ``lua_tolstring`` formatting numbers with ``%.14g``, ``lua_Number``
to ``lua_Integer`` casts as x86-64 performs them)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

import lupa.lua51 as lupa51

from brook.scripting.lua import lua_source

if TYPE_CHECKING:
    from lupa.lua51 import LuaRuntime

# Lua's C API refuses to grow one C function's stack beyond this many slots (luaconf.h).
LUAI_MAXCSTACK = 8000

_FAILED = object()  # the first result of a call that failed; then the message (or narg, message)
NEGATIVE_ZERO = object()  # stands for -0.0, which lupa would hand to Python as the int 0

_HELPERS = lua_source("helpers")

_SHIM_ONE = lua_source("shim_one")

_SHIM_MANY = lua_source("shim_many")

# Only -0.0 is worth a look at the arguments: lupa turns every integral number into an int.
_SHIM_EXACT_ZERO = lua_source("shim_exact_zero")


class LuaLibError(Exception):
    """Raised by a library function: its message (str or bytes) becomes the Lua error."""


class LuaArgError(LuaLibError):
    """A bad argument: Lua reports it as ``bad argument #narg to '<name>' (extramsg)``."""

    def __init__(self, narg: int, extramsg: str | bytes) -> None:
        super().__init__(extramsg)
        self.narg = narg
        self.extramsg = extramsg.encode() if isinstance(extramsg, str) else extramsg


def lua_helpers(lua: LuaRuntime) -> Any:
    """The Lua table of helpers for Lua-source libraries: ``register`` (a public function and
    its name), ``fail`` (luaL_error), ``argerror``, ``typeerror``, ``checkinteger``, ..."""
    return run_library(lua, "helpers", _HELPERS)


def lua_function(lua: LuaRuntime, function: Callable[..., Any], name: str, *,
                 many_results: bool = False, exact_zero: bool = False,
                 helpers: Any = None) -> Any:
    """A Lua function calling ``function``. Its result is one Lua value, or with
    ``many_results`` a tuple of them; ``exact_zero`` passes -0.0 as :data:`NEGATIVE_ZERO`.
    ``name`` is the library's name for it, used when the caller's frame cannot say."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except LuaArgError as err:
            return (_FAILED, err.narg, err.extramsg)
        except LuaLibError as err:
            message = err.args[0]
            return (_FAILED, message.encode() if isinstance(message, str) else message)

    helpers = helpers if helpers is not None else lua_helpers(lua)
    if many_results:
        shim = run_library(lua, name, _SHIM_MANY, call, _FAILED, helpers[b"raise"],
                           helpers[b"spread"])
    elif exact_zero:
        shim = run_library(lua, name, _SHIM_EXACT_ZERO, call, _FAILED, helpers[b"raise"],
                           NEGATIVE_ZERO)
    else:
        shim = run_library(lua, name, _SHIM_ONE, call, _FAILED, helpers[b"raise"])
    return helpers[b"register"](shim, name.encode())


def lua_table(lua: LuaRuntime, functions: dict[str, Callable[..., Any]], *,
              many_results: Collection[str] = (), exact_zero: Collection[str] = ()) -> Any:
    """A Lua table of library functions, by name."""
    helpers = lua_helpers(lua)
    table = lua.table()
    for name, function in functions.items():
        table[name.encode()] = lua_function(
            lua, function, name, many_results=name in many_results,
            exact_zero=name in exact_zero, helpers=helpers)
    return table


# ---- the Lua C API's conversions, for Python library functions ------------------------------

def lua_type_name(value: Any) -> str:
    """``luaL_typename`` of a value lupa handed to Python."""
    if value is None:
        return "nil"
    if value is True or value is False:
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, bytes):
        return "string"
    if value is NEGATIVE_ZERO:
        return "number"
    kind = lupa51.lua_type(value)
    return kind if kind is not None else "userdata"


# What glibc's strtod reads (after leading white space): hex floats, decimals, inf, nan(...).
_STRTOD = re.compile(
    rb"[ \t\n\v\f\r]*([+-]?)(?:"
    rb"(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    rb"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    rb"|([iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    rb"|([nN][aA][nN](?:\([0-9A-Za-z_]*\))?))")
_TRAILING_SPACE = re.compile(rb"[ \t\n\v\f\r]*\Z")


def c_strtod(text: bytes) -> tuple[float, int] | None:
    """glibc ``strtod``: the value of the longest number at the start of ``text`` and where it
    ends, or None when there is none."""
    match = _STRTOD.match(text)
    if match is None:
        return None
    sign, hexa, decimal, infinity = match.group(1, 2, 3, 4)
    if hexa is not None:
        try:
            value = float.fromhex(hexa.decode())
        except OverflowError:
            value = math.inf
    elif decimal is not None:
        value = float(decimal)
    elif infinity is not None:
        value = math.inf
    else:
        value = math.nan
    return (-value if sign == b"-" else value), match.end()


def str_to_number(text: bytes) -> float | None:
    """Lua 5.1's ``luaO_str2d`` (what ``tonumber`` and ``lua_tonumber`` do with a string): a
    whole number, with white space around it allowed; the string ends at its first zero byte."""
    text = text.split(b"\0", 1)[0]
    parsed = c_strtod(text)
    if parsed is None or not _TRAILING_SPACE.match(text, parsed[1]):
        return None
    return parsed[0]


def to_number(value: Any) -> float | None:
    """``lua_tonumber``: numbers and numeric strings, else None."""
    if type(value) is int or type(value) is float:
        return value
    if isinstance(value, bytes):
        return str_to_number(value)
    if value is NEGATIVE_ZERO:
        return -0.0
    return None


def arg(args: tuple[Any, ...], narg: int) -> Any:
    """Argument ``narg`` (1-based), None when absent."""
    return args[narg - 1] if narg <= len(args) else None


def type_error(args: tuple[Any, ...], narg: int, expected: str) -> LuaArgError:
    """``luaL_typerror``: what was expected and what came (``no value`` for a missing one)."""
    got = "no value" if narg > len(args) else lua_type_name(args[narg - 1])
    return LuaArgError(narg, f"{expected} expected, got {got}")


def check_number(args: tuple[Any, ...], narg: int) -> float:
    """``luaL_checknumber``."""
    number = to_number(arg(args, narg))
    if number is None:
        raise type_error(args, narg, "number")
    return number


def to_integer(number: float) -> int:
    """A ``lua_Number`` cast to ``lua_Integer`` on x86-64: truncated; NaN and out-of-range
    values give -2**63."""
    if number != number or not -2.0**63 <= number < 2.0**63:
        return -(1 << 63)
    return int(number)


def check_integer(args: tuple[Any, ...], narg: int) -> int:
    """``luaL_checkinteger``."""
    return to_integer(check_number(args, narg))


def opt_integer(args: tuple[Any, ...], narg: int, default: int) -> int:
    """``luaL_optinteger``: absent and nil give ``default``."""
    return default if arg(args, narg) is None else check_integer(args, narg)


def number_to_string(number: float) -> bytes:
    """``lua_tolstring`` of a number (``%.14g``, with C's ``-nan``)."""
    if number != number:
        return b"-nan" if math.copysign(1.0, number) < 0 else b"nan"
    return b"%.14g" % number


def check_string(args: tuple[Any, ...], narg: int) -> bytes:
    """``luaL_checklstring``: a string, or a number converted to one."""
    value = arg(args, narg)
    if isinstance(value, bytes):
        return value
    number = to_number(value)
    if number is not None:
        return number_to_string(number)
    raise type_error(args, narg, "string")


# ---- scripts compiled without tail calls ---------------------------------------------------
#
# In Redis every library function is a C function, and a C function called in tail position
# (``return cjson.decode(x)``) still has the script's frame under it: its errors read
# "user_script:1: ..." and name it as the script spelled it. A Lua function called that way
# replaces the script's frame, and both are lost. A script compiled with its tail calls turned
# into plain calls keeps that frame. Lua 5.1 compiles ``return f(x)`` to
# ``TAILCALL A B 0; RETURN A 0``: as ``CALL A B 0; RETURN A 0`` it returns the same values.
# What changes: unbounded tail recursion in a script stops at Lua's 20000-call limit.

_OP_MASK = 0x3F
_OP_CALL = 28
_OP_TAILCALL = 29


class _Chunk:
    """A reader over a ``string.dump`` image (Lua 5.1 format, sizes from its header)."""

    def __init__(self, image: bytearray, tail_calls_as_calls: bool = True) -> None:
        if image[:5] != b"\x1bLua\x51" or image[6] != 1:
            raise ValueError("not a little-endian Lua 5.1 chunk")
        self.image = image
        self.int_size, self.size_t_size = image[7], image[8]
        self.number_size = image[10]
        self.at = 12
        self.tail_calls_as_calls = tail_calls_as_calls
        # Where each function's debug information is: (from, to) in the image.
        self.debug_parts: list[tuple[int, int]] = []

    def integer(self, size: int) -> int:
        value = int.from_bytes(self.image[self.at:self.at + size], "little")
        self.at += size
        return value

    def skip_string(self) -> None:
        length = self.integer(self.size_t_size)
        self.at += length

    def function(self) -> None:
        """Walk one function prototype, turning its tail calls into calls (unless told not
        to) and noting where its debug information is (:attr:`debug_parts`)."""
        self.skip_string()  # source
        self.at += 2 * self.int_size + 4  # line defined, last line, nups, params, vararg, stack
        for _ in range(self.integer(self.int_size)):
            if self.tail_calls_as_calls and self.image[self.at] & _OP_MASK == _OP_TAILCALL:
                self.image[self.at] = (self.image[self.at] & ~_OP_MASK) | _OP_CALL
            self.at += 4
        for _ in range(self.integer(self.int_size)):
            kind = self.integer(1)
            if kind == 1:
                self.at += 1
            elif kind == 3:
                self.at += self.number_size
            elif kind == 4:
                self.skip_string()
        for _ in range(self.integer(self.int_size)):
            self.function()
        debug_from = self.at
        lines = self.integer(self.int_size)  # line info
        self.at += lines * self.int_size
        for _ in range(self.integer(self.int_size)):  # local variables
            self.skip_string()
            self.at += 2 * self.int_size
        for _ in range(self.integer(self.int_size)):  # upvalue names
            self.skip_string()
        self.debug_parts.append((debug_from, self.at))


def without_tail_calls(image: bytes) -> bytes:
    """A ``string.dump`` image with every tail call (in all nested functions) made a call."""
    chunk = _Chunk(bytearray(image))
    chunk.function()
    return bytes(chunk.image)


def without_debug_information(image: bytes) -> bytes:
    """A ``string.dump`` image without line numbers, local and upvalue names (what Lua 5.2's
    stripped dumps leave out): half of a chunk's memory, for code whose errors never name its
    own lines."""
    chunk = _Chunk(bytearray(image), tail_calls_as_calls=False)
    chunk.function()
    none = bytes(3 * chunk.int_size)  # no lines, no locals, no upvalue names
    parts: list[bytes | bytearray] = []
    start = 0
    for debug_from, debug_to in chunk.debug_parts:
        parts += [chunk.image[start:debug_from], none]
        start = debug_to
    parts.append(chunk.image[start:])
    return b"".join(parts)


# The loader: compiled once per interpreter and kept in its (unsandboxed) globals, so that
# ``without_tail_calls`` crosses into Lua once and stays referenced there. lupa wraps a Python
# object anew each time it is handed over after Lua collected its last wrapper, and a wrapper
# collected in the same cycle as a new one is made can free the new one's registry slot (the
# slot then holds another object: a later call reached a ScriptCallError instead of the
# patcher). An object Lua holds for the interpreter's life is never wrapped twice.
_LOADER_KEY = b"\0brook_load_without_tail_calls"
_LOADER = lua_source("tail_call_loader")


def tail_call_loader(lua: LuaRuntime) -> Any:
    """The interpreter's Lua function ``(source, chunkname)`` compiling without tail calls."""
    real = lua.globals()
    loader = real[_LOADER_KEY]
    if loader is None:
        loader = lua.execute(_LOADER, without_tail_calls)
        real[_LOADER_KEY] = loader
    return loader


def load_without_tail_calls(lua: LuaRuntime, source: bytes, chunkname: bytes) -> Any:
    """``loadstring(source, chunkname)`` with tail calls compiled as calls: the function, or
    ``(None, message)`` for a syntax error (the message as loadstring gives it)."""
    return tail_call_loader(lua)(source, chunkname)


def run_library(lua: LuaRuntime, name: str, source: str, *args: Any) -> Any:
    """Run a library's Lua source (chunk ``=brook:<name>``) with ``args``; its own tail calls
    are compiled as calls too, so a public function's frame stays under its helpers."""
    loaded = load_without_tail_calls(lua, source.encode(), f"=brook:{name}".encode())
    if isinstance(loaded, tuple):
        raise RuntimeError(f"library {name} does not compile: {loaded[1]!r}")
    return loaded(*args)
