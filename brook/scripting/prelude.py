"""The Lua side of the sandbox, run once in each fresh interpreter (brook.scripting.runtime).

Redis locks its Lua globals with a patched interpreter (read-only tables). The stock Lua 5.1
that lupa embeds has no such flag, so the same contract is built from metatables:

* every table a script can reach from its globals (``redis``, ``string``, ``cjson``...) is
  replaced by an empty *proxy* whose ``__index`` is the real table and whose ``__newindex``
  raises "Attempt to modify a readonly table"; ``__metatable`` hands ``getmetatable`` a
  protected view, and ``rawset``/``setmetatable``/``table.insert``... refuse proxies;
* the thread's global environment becomes the proxy of the real globals (``setfenv(0, ...)``),
  so every chunk, ``loadstring``'s included, sees only the protected view; reading a global
  that does not exist raises Redis's "Script attempted to access nonexistent global variable";
* Python reaches the real globals (``KEYS``/``ARGV``) through the table this chunk returns.

The chunk also defines the error handler (Redis's ``__redis__err__handler``: an error becomes
a table ``{err=..., source=..., line=...}`` naming the script's line) and the runners that call
a script under ``xpcall`` with the time-limit hook armed. Frames of this chunk (its source is
``=brook``) are skipped when the handler looks for the script's line, as Redis skips the C
function that raised.
"""

from __future__ import annotations

from brook.scripting.lua import lua_source

CHUNK_NAME = "=brook"

PRELUDE = lua_source("prelude")
