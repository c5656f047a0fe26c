"""FUNCTION libraries: Lua code loaded once (FUNCTION LOAD), whose registered functions FCALL
runs. They live in their own interpreter, as in Redis, and are part of the dataset: persisted
(the AOF keeps FUNCTION LOAD; rewrite and snapshot write the libraries) and dumped.

A library's code starts with ``#!lua name=<library>``. Its top-level code runs once at load,
seeing only ``redis.register_function``, ``redis.log`` and the version fields; it must register
at least one function, and fails after 500 ms (a load that loops forever cannot hang the
server). A failed load changes nothing.

FUNCTION DUMP writes Redis's payload: per library the RDB opcode 245 and the code as an RDB
string, then the RDB version and the CRC64 of it all, so a payload moves between Brook and
Redis both ways (Redis compresses its strings with LZF; both encodings are read).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from lupa.lua51 import lua_type

from brook.glob import matches
from brook.protocol.requests import split_inline_args
from brook.rdb.constants import OPCODE_FUNCTION2
from brook.rdb.payload import body_of, wrap
from brook.rdb.strings import RdbError, Reader, string
from brook.scripting.flags import SCRIPT_FLAGS
from brook.scripting.runtime import CompileError, Interpreter

if TYPE_CHECKING:
    from brook.scripting.engine import Engine

LOAD_TIMEOUT = 0.5
_NAME = re.compile(rb"[A-Za-z0-9_]+\Z")
_NAME_ERROR = ("Library names can only contain letters, numbers, or underscores(_) and must "
               "be at least one character long")


class FunctionError(Exception):
    """A FUNCTION command failed: the message is the reply (with its code)."""


class Function:
    __slots__ = ("name", "library", "callback", "description", "flags")

    def __init__(self, name: bytes, library: Library, callback: Any,
                 description: bytes | None, flags: tuple[str, ...]) -> None:
        self.name = name
        self.library = library
        self.callback = callback
        self.description = description
        self.flags = flags


class Library:
    __slots__ = ("name", "code", "functions")

    def __init__(self, name: bytes, code: bytes) -> None:
        self.name = name
        self.code = code
        self.functions: dict[bytes, Function] = {}


def library_name(code: bytes) -> bytes:
    """The name in a library's shebang (Redis's functionExtractLibMetaData)."""
    if not code.startswith(b"#!"):
        raise FunctionError("ERR Missing library metadata")
    end = code.find(b"\n")
    if end < 0:
        raise FunctionError("ERR Invalid library metadata")
    parts = split_inline_args(code[:end])  # sdssplitargs, as Redis: name="foo" is foo
    if not parts:
        raise FunctionError("ERR Invalid library metadata")
    engine, options = parts[0][2:], parts[1:]
    name: bytes | None = None
    for option in options:
        if not option.startswith(b"name="):
            raise FunctionError("ERR Invalid metadata value given: %s"
                                % option.decode("utf-8", "replace"))
        if name is not None:
            raise FunctionError("ERR Invalid metadata value, name argument was given "
                                "multiple times")
        name = option[5:]
    if name is None:
        raise FunctionError("ERR Library name was not given")
    if not _NAME.match(name):
        raise FunctionError("ERR " + _NAME_ERROR)
    if engine.upper() != b"LUA":
        raise FunctionError("ERR Engine '%s' not found" % engine.decode("utf-8", "replace"))
    return name


class Functions:
    """The loaded libraries and their functions (one namespace across libraries)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # Built before the interpreter so that the load-time API can hold it.
        self.loading: Library | None = None
        self.libraries: dict[bytes, Library] = {}
        self.functions: dict[bytes, Function] = {}  # by lower-case name
        self.interpreter = Interpreter(engine, register_function=self.register)

    # -- loading ----------------------------------------------------------------------------

    def load(self, code: bytes, replace: bool) -> bytes:
        """FUNCTION LOAD: the library's name; FunctionError (nothing changed) otherwise."""
        name = library_name(code)
        old = self.libraries.get(name)
        if old is not None and not replace:
            raise FunctionError(f"ERR Library '{name.decode()}' already exists")
        library = self._compile(name, code)
        for function_name in library.functions:
            owner = self.functions.get(function_name.lower())
            if owner is not None and owner.library is not old:
                raise FunctionError(f"ERR Function {function_name.decode()} already exists")
        if old is not None:
            self._unlink(old)
        self._link(library)
        return name

    def _compile(self, name: bytes, code: bytes) -> Library:
        interpreter = self.interpreter
        try:
            # Without the shebang line, but with its newline: line numbers stay right.
            chunk = interpreter.compile(code[code.find(b"\n"):], b"@user_function")
        except CompileError as err:
            raise FunctionError(f"ERR Error compiling function: {err}") from None
        library = Library(name, code)
        engine = self.engine
        run = engine.loading_run(name)
        run.load_deadline = time.monotonic() + LOAD_TIMEOUT
        self.loading = library
        interpreter.set_loading(True)
        engine.run = run
        try:
            ok, error = interpreter.run(True, chunk)
        finally:
            engine.run = None
            interpreter.set_loading(False)
            self.loading = None
        if not ok:
            message = error[b"err"] if lua_type(error) == "table" else error
            if type(message) is not bytes:
                message = b"ERR execution failure"
            raise FunctionError("ERR Error registering functions: "
                                + message.decode("utf-8", "surrogateescape"))
        if not library.functions:
            raise FunctionError("ERR No functions registered")
        return library

    def register(self, *args: Any) -> bytes | None:
        """redis.register_function: None, or the error text (raised in Lua as ``{err=}``)."""
        library = self.loading
        if library is None:
            return b"ERR redis.register_function can only be called on FUNCTION LOAD command"
        description: bytes | None = None
        flags: tuple[str, ...] = ()
        if len(args) == 1:
            table = args[0]
            if lua_type(table) != "table":
                return (b"ERR calling redis.register_function with a single argument is only "
                        b"applicable to Lua table (representing named arguments).")
            name = callback = None
            for key, value in table.items():
                if type(key) is not bytes:
                    return b"ERR named argument key given to redis.register_function is not a string"
                lowered = key.lower()
                if lowered == b"function_name":
                    if type(value) is not bytes:
                        return (b"ERR function_name argument given to redis.register_function "
                                b"must be a string")
                    name = value
                elif lowered == b"description":
                    if type(value) is not bytes:
                        return (b"ERR description argument given to redis.register_function "
                                b"must be a string")
                    description = value
                elif lowered == b"callback":
                    if lua_type(value) != "function":
                        return (b"ERR callback argument given to redis.register_function must "
                                b"be a function")
                    callback = value
                elif lowered == b"flags":
                    if lua_type(value) != "table":
                        return (b"ERR flags argument to redis.register_function must be a "
                                b"table representing function flags")
                    parsed = _flags(value)
                    if parsed is None:
                        return b"ERR unknown flag given"
                    flags = parsed
                else:
                    return b"ERR unknown argument given to redis.register_function"
            if name is None:
                return b"ERR redis.register_function must get a function name argument"
            if callback is None:
                return b"ERR redis.register_function must get a callback argument"
        elif len(args) == 2:
            name, callback = args
            if type(name) in (int, float):  # lua_isstring: a number is a string too
                name = (b"%.14g" % name) if type(name) is float else b"%d" % name
            if type(name) is not bytes:
                return b"ERR first argument to redis.register_function must be a string"
            if lua_type(callback) != "function":
                return b"ERR second argument to redis.register_function must be a function"
        else:
            return b"ERR wrong number of arguments to redis.register_function"
        if not _NAME.match(name):
            return ("ERR " + _NAME_ERROR).encode()
        if name in library.functions:
            return b"ERR Function already exists in the library"
        library.functions[name] = Function(name, library, callback, description, flags)
        return None

    # -- the registry ---------------------------------------------------------------------

    def _link(self, library: Library) -> None:
        self.libraries[library.name] = library
        for name, function in library.functions.items():
            self.functions[name.lower()] = function  # FCALL finds functions in any case

    def _unlink(self, library: Library) -> None:
        del self.libraries[library.name]
        for name in library.functions:
            self.functions.pop(name.lower(), None)

    def find(self, name: bytes) -> Function | None:
        return self.functions.get(name.lower())

    def delete(self, name: bytes) -> None:
        library = self.libraries.get(name)
        if library is None:
            raise FunctionError("ERR Library not found")
        self._unlink(library)

    def flush(self) -> None:
        """FUNCTION FLUSH: no libraries, and a new interpreter, as Redis rebuilds its VM."""
        self.libraries.clear()
        self.functions.clear()
        self.interpreter = Interpreter(self.engine, register_function=self.register)
        self.interpreter.set_memory_limit(self.engine.server.config.lua_max_memory)

    def matching(self, pattern: bytes | None) -> list[Library]:
        return [library for library in self.libraries.values()
                if pattern is None or matches(pattern, library.name, nocase=True)]

    # -- DUMP / RESTORE -----------------------------------------------------------------------

    def dump(self) -> bytes:
        """Per library the opcode and its code as an RDB string, in :mod:`brook.rdb`'s payload
        (RDB 10, Redis 7.0's: the first with functions, so every Redis 7+ takes it)."""
        parts: list[bytes] = []
        for library in self.libraries.values():
            parts += (bytes((OPCODE_FUNCTION2,)), string(library.code))
        return wrap(b"".join(parts))

    def restore(self, payload: bytes, policy: str) -> None:
        """FUNCTION RESTORE with policy FLUSH, APPEND or REPLACE; all or nothing."""
        body = body_of(payload)
        if body is None:
            raise FunctionError("ERR DUMP payload version or checksum are wrong")
        codes: list[bytes] = []
        reader = Reader(body)
        while not reader.at_end():
            if reader.byte() != OPCODE_FUNCTION2:
                raise FunctionError("ERR given type is not a function")
            try:
                codes.append(reader.string())
            except RdbError:
                raise FunctionError("ERR failed loading the given functions payload") from None
        restored = [self._compile(library_name(code), code) for code in codes]
        names = [library.name for library in restored]
        if len(set(names)) != len(names):
            raise FunctionError("ERR Library %s already exists" % _first_repeat(names))
        kept = {} if policy == "FLUSH" else dict(self.libraries)
        for library in restored:
            if library.name in kept and policy == "APPEND":
                raise FunctionError(f"ERR Library {library.name.decode()} already exists")
            kept[library.name] = library
        functions: dict[bytes, Function] = {}
        for library in kept.values():
            for name, function in library.functions.items():
                if name.lower() in functions:
                    raise FunctionError(f"ERR Function {name.decode()} already exists")
                functions[name.lower()] = function
        self.libraries = kept
        self.functions = functions

    def codes(self) -> list[bytes]:
        """Every library's code, in load order (what the snapshot and the rewrite keep)."""
        return [library.code for library in self.libraries.values()]

    def load_libraries(self, codes: list[bytes]) -> None:
        """Load the libraries of a snapshot, replacing any with the same name."""
        for code in codes:
            self.load(code, replace=True)

    def counts(self) -> tuple[int, int]:
        return len(self.libraries), len(self.functions)


def _flags(table: Any) -> tuple[str, ...] | None:
    found: list[str] = []
    for value in table.values():
        if type(value) is not bytes or value.decode("utf-8", "replace") not in SCRIPT_FLAGS:
            return None
        found.append(value.decode())
    return tuple(flag for flag in SCRIPT_FLAGS if flag in found)


def _first_repeat(names: list[bytes]) -> str:
    seen: set[bytes] = set()
    for name in names:
        if name in seen:
            return name.decode()
        seen.add(name)
    return ""
