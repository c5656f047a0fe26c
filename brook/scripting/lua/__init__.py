"""The Lua source of the scripting engine: the sandbox's prelude, the libraries Redis bundles
(cjson, cmsgpack) and the small chunks that bridge Lua and Python, as ``.lua`` files shipped
with the package, so that they read, diff and lint as Lua. The Python modules that run each
one (brook.scripting.prelude, brook.scripting.runtime, brook.scripting.libs.*) say what it
does and why; each file's first line names its module. Nothing here imports Brook."""

from __future__ import annotations

from functools import cache
from importlib.resources import files


@cache
def lua_source(name: str) -> str:
    """The text of ``<name>.lua`` beside this module."""
    return (files(__name__) / f"{name}.lua").read_text(encoding="utf-8")
