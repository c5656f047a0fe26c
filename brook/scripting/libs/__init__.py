"""The libraries Redis loads into its Lua interpreters besides Lua's own: ``cjson``,
``cmsgpack``, ``bit`` and ``struct``, behaving as Redis's bundled C libraries do. cjson and
cmsgpack are Lua source (scripts call them per job, and walking tables costs least inside the
interpreter); bit and struct are Python behind thin Lua wrappers (brook.scripting.libs.bridge).

Each module has ``install(lua)``, which sets its global table in ``lua``'s (unsandboxed)
globals. Compiled, they would be most of a fresh interpreter's memory (about 150 KB of 180 KB;
Redis's C libraries cost it nothing), so the sandbox builds each one the first time a script
reads its name (:func:`load_library`, called from brook.scripting.prelude).

Imports: the Lua source (:mod:`brook.scripting.lua`) and the bytecode rules
(:mod:`brook.scripting.bytecode`) only: a library knows no server, session or command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brook.scripting.libs import bit, cjson, cmsgpack, struct

if TYPE_CHECKING:
    from lupa.lua51 import LuaRuntime

# The libraries by their global names.
LIBRARIES = {b"cjson": cjson.install, b"cmsgpack": cmsgpack.install, b"struct": struct.install,
             b"bit": bit.install}


def load_library(lua: LuaRuntime, name: bytes) -> Any:
    """The library ``name``'s table in ``lua``, built on first use."""
    real = lua.globals()
    library = real[name]
    if library is None:
        LIBRARIES[name](lua)
        library = real[name]
    return library

