-- A Python function returning one value, as a Lua function (brook/scripting/libs/bridge.py).
local python_function, failed, raise = ...
return function(...)
  local result, first, second = python_function(...)
  if result == failed then raise(first, second) end
  return result
end
