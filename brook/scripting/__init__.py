"""Lua scripting: EVAL scripts and FUNCTION libraries run in Lua 5.1 (lupa), as Redis's do."""
