-- What no script can reach, dropped from a fresh interpreter (brook/scripting/runtime.py).
local registry = debug.getregistry()
for _, name in ipairs({'io', 'package', 'os'}) do registry._LOADED[name] = nil end
registry.FILE_STAR = nil
for _, name in ipairs({'io', 'package', 'require', 'module', 'dofile', 'loadfile', 'print'}) do
  _G[name] = nil
end
