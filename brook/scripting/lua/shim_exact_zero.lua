-- A Python function that must see -0.0, as a Lua function (brook/scripting/libs/bridge.py).
local python_function, failed, raise, negative_zero = ...
local select, unpack = select, unpack
local function collect(...) return {n = select('#', ...), ...} end
return function(...)
  local result, first, second
  local args
  for i = 1, select('#', ...) do
    local value = select(i, ...)
    if value == 0 and 1 / value < 0 then
      args = args or collect(...)
      args[i] = negative_zero
    end
  end
  if args then
    result, first, second = python_function(unpack(args, 1, args.n))
  else
    result, first, second = python_function(...)
  end
  if result == failed then raise(first, second) end
  return result
end
