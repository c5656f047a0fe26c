"""The EVAL script cache: scripts compiled once, found by the SHA1 of their body.

As in Redis 8, scripts that EVAL added are evicted least recently used first once 500 of them
are cached (a client that sends a new script body every time cannot grow the cache without
bound); scripts loaded with SCRIPT LOAD stay until SCRIPT FLUSH, so that EVALSHA of a loaded
script never fails. ``evicted_scripts`` counts the evictions (INFO stats).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from brook.protocol.requests import split_inline_args
from brook.scripting.flags import SCRIPT_FLAGS
from brook.scripting.runtime import CompileError

if TYPE_CHECKING:
    from brook.scripting.runtime import Interpreter

EVAL_SCRIPTS_KEPT = 500
_CHUNK_NAME = b"@user_script"


class ScriptCacheError(Exception):
    """A script that cannot be cached (bad shebang, compile error): the message is the reply."""


class Script:
    """A cached script: its body, its shebang flags (None: no shebang), its Lua function."""

    __slots__ = ("sha", "body", "flags", "function", "from_eval")

    def __init__(self, sha: bytes, body: bytes, flags: tuple[str, ...] | None, function: Any,
                 from_eval: bool) -> None:
        self.sha = sha
        self.body = body
        self.flags = flags
        self.function = function
        self.from_eval = from_eval


def sha1hex(body: bytes) -> bytes:
    return hashlib.sha1(body).hexdigest().encode()


def shebang_flags(body: bytes) -> tuple[tuple[str, ...] | None, int]:
    """(flags, length of the shebang line) of a script body; (None, 0) without a shebang.
    Raises ScriptCacheError with Redis's texts (evalExtractShebangFlags)."""
    if not body.startswith(b"#!"):
        return None, 0
    end = body.find(b"\n")
    if end < 0:
        raise ScriptCacheError("ERR Invalid script shebang")
    split = split_inline_args(body[:end])
    if not split:
        raise ScriptCacheError("ERR Invalid engine in script shebang")
    parts = [part.decode("utf-8", "replace") for part in split]
    if parts[0] != "#!lua":
        raise ScriptCacheError(f"ERR Unexpected engine in script shebang: {parts[0]}")
    flags: list[str] = []
    for part in parts[1:]:
        if not part.startswith("flags="):
            raise ScriptCacheError(f"ERR Unknown lua shebang option: {part}")
        for flag in part[6:].split(","):
            if flag == "" and part == "flags=":
                continue
            if flag not in SCRIPT_FLAGS:
                raise ScriptCacheError(f"ERR Unexpected flag in script shebang: {flag}")
            flags.append(flag)
    return tuple(flags), end


class ScriptCache:
    """SHA1 -> :class:`Script`, with the EVAL scripts in least-recently-used order."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter
        self.scripts: dict[bytes, Script] = {}
        self.eval_order: OrderedDict[bytes, None] = OrderedDict()
        self.evicted = 0
        self.body_bytes = 0

    def __len__(self) -> int:
        return len(self.scripts)

    def get(self, sha: bytes) -> Script | None:
        """The script with this SHA1 (any case), noting its use."""
        script = self.scripts.get(sha)
        if script is None:
            script = self.scripts.get(sha.lower())
            if script is None:
                return None
        if script.from_eval:
            self.eval_order.move_to_end(script.sha)
        return script

    def add(self, body: bytes, from_eval: bool, sha: bytes | None = None) -> Script:
        """Compile and cache ``body`` (or return the cached script). SCRIPT LOAD of a script
        EVAL added makes it permanent."""
        sha = sha or sha1hex(body)
        script = self.scripts.get(sha)
        if script is not None:
            if not from_eval and script.from_eval:
                script.from_eval = False
                self.eval_order.pop(sha, None)
            return script
        flags, shebang_length = shebang_flags(body)
        try:
            # The shebang line is left out but its newline kept: line numbers stay right.
            function = self.interpreter.compile(body[shebang_length:], _CHUNK_NAME)
        except CompileError as err:
            raise ScriptCacheError(f"ERR Error compiling script (new function): {err}") from None
        if from_eval:
            while len(self.eval_order) >= EVAL_SCRIPTS_KEPT:
                oldest, _ = self.eval_order.popitem(last=False)
                self._forget(oldest)
                self.evicted += 1
            self.eval_order[sha] = None
        script = Script(sha, body, flags, function, from_eval)
        self.scripts[sha] = script
        self.body_bytes += len(body)
        return script

    def _forget(self, sha: bytes) -> None:
        script = self.scripts.pop(sha)
        self.body_bytes -= len(script.body)
