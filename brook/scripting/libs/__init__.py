"""The libraries Redis loads into its Lua interpreters besides Lua's own: ``cjson``,
``cmsgpack``, ``bit`` and ``struct``, behaving as Redis's bundled C libraries do. cjson and
cmsgpack are Lua source (scripts call them per job, and walking tables costs least inside the
interpreter); bit and struct are Python behind thin Lua wrappers (brook.scripting.libs.bridge).

Each module has ``install(lua)``, which sets its global table in ``lua``'s globals; the
engine calls :func:`install_all` before it locks the globals (brook.scripting.engine)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.scripting.libs import bit, cjson, cmsgpack, struct

if TYPE_CHECKING:
    from lupa.lua51 import LuaRuntime


def install_all(lua: LuaRuntime) -> None:
    for library in (cjson, struct, cmsgpack, bit):
        library.install(lua)
