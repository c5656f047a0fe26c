"""One Lua 5.1 interpreter with Redis's scripting environment.

Redis keeps two interpreters: one for EVAL scripts, one for FUNCTION libraries; Brook does the
same (:class:`Interpreter` with ``functions`` set for the second). Each gets Lua's base,
``string``, ``table`` and ``math`` libraries, ``os.clock``, Redis's ``cjson``, ``cmsgpack``,
``bit`` and ``struct`` (built when a script first reads them: they are Lua code, most of an
interpreter's memory otherwise), the ``redis`` API table, and nothing else: no ``io``, ``loadfile``,
``dofile``, ``print``, ``debug`` or lupa's ``python`` bridge. Then the globals are locked
(brook.scripting.prelude).

The Python side of the API (``redis.call``, the time-limit hook, ``redis.log``...) is the
:class:`Host` protocol, implemented by brook.scripting.engine.
"""

from __future__ import annotations

from typing import Any, Protocol

from lupa.lua51 import LuaError, LuaRuntime

from brook.scripting.bytecode import without_debug_information, without_tail_calls
from brook.scripting.libs import LIBRARIES, load_library
from brook.scripting.lua import lua_source
from brook.scripting.prelude import CHUNK_NAME, PRELUDE
from brook.scripting.replies import ReplyReader, ReplyWriter
from brook.version import VERSION

# Redis's allow list of globals (script_lua.c), less what later Redis releases removed for
# safety (getfenv, setfenv, newproxy).
ALLOWED_GLOBALS = (
    "string", "cjson", "bit", "cmsgpack", "math", "table", "struct", "os", "redis",
    "xpcall", "tostring", "setmetatable", "next", "assert", "tonumber", "rawequal",
    "collectgarbage", "getmetatable", "rawset", "pcall", "coroutine", "type", "_G", "select",
    "unpack", "gcinfo", "pairs", "rawget", "loadstring", "ipairs", "_VERSION", "load", "error",
)


# What no script can reach (``io``, ``package``, ``require``... are outside Redis's allow
# list), dropped with the registry's references: a tenth of a fresh interpreter's memory.
_DROP_UNREACHABLE = lua_source("drop_unreachable")

# Arguments passed to Lua as function arguments, below LUAI_MAXCSTACK (8000 slots).
_ARGUMENTS_PASSED = 2000


def version_number(version: str) -> int:
    major, minor, patch = (int(part) for part in version.split("."))
    return (major << 16) | (minor << 8) | patch


class Host(Protocol):
    """What the Lua side calls back into (brook.scripting.engine.Engine)."""

    def call(self, *args: Any) -> Any: ...
    def pcall(self, *args: Any) -> Any: ...
    def call_packed(self, raise_error: bool, count: int, args: Any) -> Any: ...
    def sha1hex(self, *args: Any) -> bytes: ...
    def interrupt(self) -> bytes | None: ...
    def log(self, *args: Any) -> None: ...
    def setresp(self, *args: Any) -> None: ...
    def set_repl(self, *args: Any) -> None: ...
    def acl_check_cmd(self, *args: Any) -> Any: ...
    def random(self, *args: Any) -> float: ...
    def randomseed(self, *args: Any) -> None: ...


class CompileError(Exception):
    """A script that does not compile: the message is Lua's."""


class ScriptCallError(Exception):
    """Raised by a Python function of the ``redis`` API to fail the way Redis's C functions
    do: Lua receives the exception and the error handler (or ``pcall``) takes ``error``, the
    ``{err=...}`` table, out of it."""

    def __init__(self, error: Any) -> None:
        super().__init__("script error")
        self.error = error


def _unwrap(error: Any) -> Any:
    """The Lua error value carried by a Python exception that crossed into Lua."""
    if isinstance(error, ScriptCallError):
        return error.error
    if isinstance(error, BaseException):
        return str(error).encode("utf-8", "replace")
    return error


class Interpreter:
    """A sealed Lua interpreter: compiles chunks, runs them under the error handler, and
    converts replies both ways."""

    def __init__(self, host: Host, register_function: Any = None) -> None:
        lua = LuaRuntime(encoding=None, unpack_returned_tuples=True, register_eval=False,
                         register_builtins=False, max_memory=0)
        self.lua = lua
        lua.execute(_DROP_UNREACHABLE)
        real = lua.globals()
        real[b"os"] = lua.table_from({b"clock": real[b"os"][b"clock"]})
        math = real[b"math"]
        math[b"random"] = host.random
        math[b"randomseed"] = host.randomseed
        callbacks = lua.table_from({
            b"call": host.call, b"pcall": host.pcall, b"call_packed": host.call_packed,
            b"interrupt": host.interrupt,
            b"sha1hex": host.sha1hex, b"log": host.log, b"setresp": host.setresp,
            b"set_repl": host.set_repl, b"acl_check_cmd": host.acl_check_cmd,
            b"unwrap": _unwrap, b"patch": without_tail_calls, b"library": self._library,
        })
        env = lua.eval("loadstring")(_prelude_image(lua), CHUNK_NAME.encode())(callbacks)
        api = env[b"api"]
        api[b"REDIS_VERSION"] = VERSION.encode()
        api[b"REDIS_VERSION_NUM"] = version_number(VERSION)
        load_api = None
        if register_function is not None:
            load_api = lua.table_from({b"register_function": env[b"raising"](register_function)})
            for name in (b"log", b"LOG_DEBUG", b"LOG_VERBOSE", b"LOG_NOTICE", b"LOG_WARNING",
                         b"REDIS_VERSION", b"REDIS_VERSION_NUM"):
                load_api[name] = api[name]
        allowed = lua.table_from({name.encode(): True for name in ALLOWED_GLOBALS})
        libraries = lua.table_from({name: True for name in LIBRARIES})
        # ``globals``: the table behind the scripts' globals (where KEYS and ARGV go).
        self.set_loading, self.globals, self.compile_chunk, self._run_eval = env[b"seal"](
            allowed, libraries, api, load_api)
        self._run = env[b"run"]
        self.memory_limit = 0
        self.error_table = env[b"error_table"]
        self.collect()  # what building the environment left behind
        self.reader = ReplyReader(lua)
        self.writer = ReplyWriter(env[b"classify"], env[b"slice"])
        self.table_from = lua.table_from

    def _library(self, name: bytes) -> Any:
        """A library's table, built the first time a script reads its global (the sandbox
        calls this once per library: Python's work here runs without the memory limit)."""
        self.lift_memory_limit()
        return load_library(self.lua, name)

    def compile(self, body: bytes, name: bytes) -> Any:
        """The function of a chunk; CompileError with Lua's message if it does not compile."""
        try:
            result = self.compile_chunk(body, name)
        except LuaError as err:  # out of memory while compiling
            raise CompileError(str(err)) from None
        if type(result) is tuple:
            function, message = result
            if function is None:
                raise CompileError(_decode(message))
            return function
        return result

    def run_eval(self, hooked: bool, function: Any, keys: list[bytes],
                 argv: list[bytes]) -> tuple[bool, Any]:
        """Run an EVAL script with its KEYS and ARGV globals."""
        if len(keys) + len(argv) > _ARGUMENTS_PASSED:  # more than Lua's C stack takes
            self.globals[b"KEYS"] = self.table_from(keys)
            self.globals[b"ARGV"] = self.table_from(argv)
            return self._protected(self._run, hooked, function)
        # _protected written out: a layer of calls is a tenth of a short script's cost.
        limit = self.memory_limit
        if not limit:
            return self._run_eval(hooked, function, len(keys), *keys, *argv)  # type: ignore[no-any-return]
        lua = self.lua
        lua.set_max_memory(limit, total=True)
        try:
            ok, result = self._run_eval(True, function, len(keys), *keys, *argv)
        finally:
            lua.set_max_memory(0)
        if not ok and result == b"not enough memory":
            self.collect()
        return ok, result

    def run(self, hooked: bool, function: Any, *arguments: Any) -> tuple[bool, Any]:
        """Call ``function`` under the error handler: (True, its result) or (False, the
        error)."""
        return self._protected(self._run, hooked, function, *arguments)

    def _protected(self, runner: Any, hooked: bool, *arguments: Any) -> tuple[bool, Any]:
        """Call a runner of the prelude, within the memory limit.

        The memory limit (``lua-max-memory``) holds only while Lua code runs. Lua raises a
        failed allocation as an error, which is safe inside the protected call but aborts the
        process when it happens in an unprotected API call (lupa's, from Python), so Python's
        own work on the interpreter runs without it: the callbacks lift it and the hook
        (armed whenever there is a limit) sets it again, within 100,000 instructions.
        """
        limit = self.memory_limit
        if not limit:
            return runner(hooked, *arguments)  # type: ignore[no-any-return]
        lua = self.lua
        lua.set_max_memory(limit, total=True)
        try:
            ok, result = runner(True, *arguments)
        finally:
            lua.set_max_memory(0)
        if not ok and result == b"not enough memory":
            self.collect()  # what the script built is garbage now: give it back
        return ok, result

    def lift_memory_limit(self) -> None:
        """Python is about to build Lua values (a reply): no limit until the next hook."""
        if self.memory_limit:
            self.lua.set_max_memory(0)

    def restore_memory_limit(self) -> None:
        if self.memory_limit:
            self.lua.set_max_memory(self.memory_limit, total=True)

    def memory(self) -> int:
        """Bytes the interpreter holds (Redis's ``used_memory_lua``)."""
        return int(self.lua.get_memory_used() or 0)

    def set_memory_limit(self, limit: int) -> None:
        self.memory_limit = limit

    def collect(self) -> None:
        self.lua.execute("collectgarbage('collect')")  # the thread's own globals: never limited


_PRELUDE_IMAGES: list[bytes] = []  # the compiled prelude, made once per process


def _prelude_image(lua: LuaRuntime) -> bytes:
    """The prelude compiled without its debug information: half its memory, which is most of
    a fresh interpreter's (its frames are skipped when an error names the script's line, and
    its errors are raised at the caller's level)."""
    if not _PRELUDE_IMAGES:
        dump = lua.eval("function(source, name) return string.dump(loadstring(source, name)) end")
        _PRELUDE_IMAGES.append(without_debug_information(dump(PRELUDE.encode(), CHUNK_NAME.encode())))
    return _PRELUDE_IMAGES[0]


def _decode(message: Any) -> str:
    if isinstance(message, bytes):
        return message.decode("utf-8", "surrogateescape")
    return str(message)


__all__ = ["ALLOWED_GLOBALS", "CompileError", "Host", "Interpreter", "ScriptCallError",
           "version_number"]
