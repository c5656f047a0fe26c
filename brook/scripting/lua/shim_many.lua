-- A Python function returning several values, as a Lua function (brook/scripting/libs/bridge.py).
local python_function, failed, raise, spread = ...
local select = select
local function collect(...) return {n = select('#', ...), ...} end
return function(...)
  local results = collect(python_function(...))
  if results[1] == failed then raise(results[2], results[3]) end
  return spread(results, 1, results.n)
end
