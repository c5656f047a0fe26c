-- Compiling a chunk without tail calls (brook/scripting/libs/bridge.py).
local patch = ...
return function(source, chunkname)
  local compiled, message = loadstring(source, chunkname)
  if not compiled then return nil, message end
  return loadstring(patch(string.dump(compiled)), chunkname)
end
