-- The Lua side of the libraries' bridge to Python (brook/scripting/libs/bridge.py).
local getinfo, format, error, type, tonumber, tostring, floor, unpack, select =
  debug.getinfo, string.format, error, type, tonumber, tostring, math.floor, unpack, select
local H = {}

-- Library functions (as scripts see them) and their own names; weak, for cjson.new().
local registry = setmetatable({}, {__mode = 'k'})

function H.register(fn, name)
  registry[fn] = name
  return fn
end

-- Where the running library function is: the name luaL_argerror gives it, how it was
-- reached ("method", ...), and the "source:line: " luaL_where(L, 1) gives its caller.
-- Found by walking up from the helper that failed; only failures pay for it.
local function describe()
  local level = 3
  while true do
    local info = getinfo(level, 'f')
    if info == nil then return '?', '', '' end
    local canonical = registry[info.func]
    if canonical then
      local caller = getinfo(level + 1, 'Sl')
      if caller and caller.what == 'tail' then return canonical, '', '' end
      local named = getinfo(level, 'n')
      local where = ''
      if caller and caller.currentline > 0 then
        where = format('%s:%d: ', caller.short_src, caller.currentline)
      end
      return named.name or '?', named.namewhat, where
    end
    level = level + 1
  end
end

-- luaL_error: the message after the caller's position.
function H.fail(message)
  local _, _, where = describe()
  error(where .. message, 0)
end

-- luaL_argerror.
function H.argerror(narg, extramsg)
  local name, namewhat, where = describe()
  if namewhat == 'method' then
    narg = narg - 1
    if narg == 0 then
      error(format("%scalling '%s' on bad self (%s)", where, name, extramsg), 0)
    end
  end
  error(format("%sbad argument #%d to '%s' (%s)", where, narg, name, extramsg), 0)
end
local argerror = H.argerror

-- luaL_typerror; `nargs` tells a missing argument ("no value") from nil.
function H.typeerror(narg, tname, value, nargs)
  local got = narg > nargs and 'no value' or type(value)
  argerror(narg, format('%s expected, got %s', tname, got))
end
local typeerror = H.typeerror

-- lua_Number -> lua_Integer as a C cast on x86-64: truncation; NaN and overflow give -2^63.
local function tointeger(n)
  if n ~= n or n >= 9223372036854775808 or n < -9223372036854775808 then
    return -9223372036854775808
  end
  if n >= 0 then return floor(n) end
  return -floor(-n)
end
H.tointeger = tointeger

-- A 64-bit integer kept in a C int: the low 32 bits, signed.
function H.toint32(n)
  n = n % 4294967296
  if n >= 2147483648 then return n - 4294967296 end
  return n
end

-- luaL_checkinteger.
function H.checkinteger(narg, value, nargs)
  local n = tonumber(value)
  if n == nil then typeerror(narg, 'number', value, nargs) end
  return tointeger(n)
end

-- luaL_optinteger.
function H.optinteger(narg, value, nargs, default)
  if value == nil then return default end
  return H.checkinteger(narg, value, nargs)
end

-- luaL_checklstring: strings, and numbers as tostring() prints them.
function H.checkstring(narg, value, nargs)
  local kind = type(value)
  if kind == 'string' then return value end
  if kind == 'number' then return tostring(value) end
  typeerror(narg, 'string', value, nargs)
end

-- A Python function's failure (see lua_function): a message, or an argument number and one.
function H.raise(first, second)
  if second == nil then H.fail(first) end
  argerror(first, second)
end

-- Values first..last of a table, even more of them than unpack() returns at once.
function H.spread(values, first, last)
  if last - first < 7000 then return unpack(values, first, last) end
  return values[first], H.spread(values, first + 1, last)
end

return H
