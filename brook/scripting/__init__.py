"""Lua scripting: EVAL scripts and FUNCTION libraries run in Lua 5.1 (lupa), as Redis's do.

Owns: the engine (:mod:`~brook.scripting.engine`: a run, its checks through admission's script
lane, time frozen while it runs), the script cache and shebang flags
(:mod:`~brook.scripting.cache`), FUNCTION libraries (:mod:`~brook.scripting.functions`), the
interpreter and its sandbox (:mod:`~brook.scripting.runtime`, :mod:`~brook.scripting.prelude`),
reply conversion (:mod:`~brook.scripting.replies`), bytecode rules
(:mod:`~brook.scripting.bytecode`), the bundled libraries (:mod:`~brook.scripting.libs`) and
their Lua source (:mod:`~brook.scripting.lua`).

Imports: the session, the command table, the protocol and the RDB codec (FUNCTION DUMP);
never the dispatcher, admission or a connection: a script's commands and their checks go
through the server context's :class:`~brook.context.CommandPath` lane (docs/architecture.md,
Layers).
"""
