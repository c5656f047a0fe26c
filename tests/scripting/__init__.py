"""Lua scripting (brook/scripting/): EVAL, FUNCTION, the bundled libraries, kill -9 mid-script."""
