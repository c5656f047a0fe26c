-- The sandbox, run once in each fresh interpreter: brook/scripting/prelude.py says how.
local py = ...
local G = _G
local type, error, tostring, select, unpack = type, error, tostring, select, unpack
local rawget, rawset, rawequal, next = rawget, rawset, rawequal, next
local setmetatable, getmetatable = setmetatable, getmetatable
local xpcall, pcall, loadstring, load, setfenv = xpcall, pcall, loadstring, load, setfenv
local getinfo, sethook = debug.getinfo, debug.sethook
local table_insert, table_remove, table_sort = table.insert, table.remove, table.sort
local string_lib = string

local READONLY = 'Attempt to modify a readonly table'
local protected = setmetatable({}, {__mode = 'k'})   -- proxy -> the real table behind it

local function readonly_error() error(READONLY, 2) end

-- A read-only view of ``real``: reads go through, writes raise.
local function protect(real, seen)
  if protected[real] then return real end
  seen = seen or {}
  if seen[real] then return seen[real] end
  local proxy = {}
  seen[real] = proxy
  for key, value in next, real do
    if type(value) == 'table' and key ~= '_G' then rawset(real, key, protect(value, seen)) end
  end
  local view = {__index = real}
  local meta_view = setmetatable({}, {__index = view, __newindex = readonly_error,
                                      __metatable = false})
  protected[meta_view] = view
  setmetatable(proxy, {__index = real, __newindex = readonly_error, __metatable = meta_view})
  protected[proxy] = real
  return proxy
end

-- The C functions that write tables without metamethods refuse the proxies.
local function guard(original)
  return function(t, ...)
    if protected[t] then error(READONLY, 0) end
    return original(t, ...)
  end
end
G.rawset = guard(rawset)
G.setmetatable = guard(setmetatable)
table.insert = guard(table_insert)
table.remove = guard(table_remove)
table.sort = guard(table_sort)

-- Iteration sees through the proxies (stock Lua 5.1 has no __pairs): a script can list the
-- ``redis`` table or a library as it can in Redis.
local function real_of(t)
  return protected[t] or t
end
local raw_pairs, raw_ipairs = pairs, ipairs
local load_all_libraries = function() end  -- set by seal: listing the globals builds them all
local scripts_globals
local function listed(t)
  local real = real_of(t)
  if real == scripts_globals then load_all_libraries() end
  return real
end
G.next = function(t, k) return next(listed(t), k) end
G.pairs = function(t) return raw_pairs(listed(t)) end
G.ipairs = function(t) return raw_ipairs(real_of(t)) end

-- Basic types' metatables (the string library behind ``s:rep()``) are read-only too.
local string_meta = getmetatable('')
G.getmetatable = function(value)
  if type(value) == 'string' then return protect(string_meta) end
  return getmetatable(value)
end

-- The libraries (brook.scripting.libs) are built when a script first reads them, after the
-- lines above replaced these functions; they keep the stock ones, as when they were built
-- before the sandbox: their own tables are never proxies, and a wrapper would cost them
-- a call per element walked.
local stock = {  -- table, name, stock function: flat, as it stays in memory
  G, 'rawset', rawset, G, 'setmetatable', setmetatable, G, 'getmetatable', getmetatable,
  G, 'next', next, G, 'pairs', raw_pairs, G, 'ipairs', raw_ipairs,
  table, 'insert', table_insert, table, 'remove', table_remove, table, 'sort', table_sort,
}
local function with_stock_functions(fn, arg)
  local sandboxed = {}
  for i = 1, #stock, 3 do
    sandboxed[i] = rawget(stock[i], stock[i + 1])
    rawset(stock[i], stock[i + 1], stock[i + 2])
  end
  local ok, result = pcall(fn, arg)
  for i = 1, #stock, 3 do rawset(stock[i], stock[i + 1], sandboxed[i]) end
  if not ok then error(result, 0) end
  return result
end

-- Redis's error handler: the error as a table, with the script's source and line.
local function handler(err)
  local level = 2
  local info = getinfo(level, 'Sl')
  while info and (info.what == 'C' or string_lib.sub(info.source, 1, 6) == '=brook') do
    level = level + 1
    info = getinfo(level, 'Sl')
  end
  if type(err) == 'userdata' then
    -- Raised by a Python library function: like luaL_error, name the calling line.
    err = py.unwrap(err)
    if type(err) == 'string' and info and info.currentline > 0 then
      err = info.short_src .. ':' .. info.currentline .. ': ' .. err
    end
  end
  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
  if info and not protected[err] then
    rawset(err, 'source', info.source)
    rawset(err, 'line', info.currentline)
  end
  return err
end

-- The time-limit hook: every 100,000 instructions Python decides (busy replies, SCRIPT KILL).
local killed_message
local function kill_hook()
  local info = getinfo(2, 'S')
  if info and string_lib.sub(info.source, 1, 6) == '=brook' then return end  -- unwinding
  error({err = killed_message}, 0)
end
local function count_hook()
  local message = py.interrupt()
  if message then
    killed_message = message
    sethook(kill_hook, 'l')   -- every line fails from now on: pcall cannot swallow it
    error({err = message}, 0)
  end
end

-- Redis's luaGC: a step of the collector every 50 scripts run or compiled, so that garbage
-- never waits for a full cycle (which would be a latency spike).
local gc_count = 0
local function gc_tick()
  gc_count = gc_count + 1
  if gc_count >= 50 then
    collectgarbage('step', 50)
    gc_count = 0
  end
end

local function run(hooked, fn, ...)
  if hooked then sethook(count_hook, '', 100000) end
  local ok, result
  if select('#', ...) == 0 then
    ok, result = xpcall(fn, handler)
  else
    local a, b = ...
    ok, result = xpcall(function() return fn(a, b) end, handler)
  end
  sethook()
  gc_tick()
  return ok, result
end

-- What a script's return value is, for the reply (Redis's luaReplyToRedisReply order).
local UNPACK_LIMIT = 4000
local function classify(t)
  local v = rawget(t, 'err')
  if type(v) == 'string' then return 'err', v, rawget(t, 'ignore_error_stats_update') end
  v = rawget(t, 'ok')
  if type(v) == 'string' then return 'ok', v end
  v = rawget(t, 'double')
  if type(v) == 'number' then return 'double', v end
  v = rawget(t, 'big_number')
  if type(v) == 'string' then return 'big_number', v end
  v = rawget(t, 'verbatim_string')
  if type(v) == 'table' then
    local format, text = rawget(v, 'format'), rawget(v, 'string')
    if type(format) == 'string' and type(text) == 'string' then
      return 'verbatim', format, text
    end
  end
  v = rawget(t, 'map')
  if type(v) == 'table' then
    local flat, n = {}, 0
    for key, value in next, v do flat[n + 1] = key; flat[n + 2] = value; n = n + 2 end
    return 'map', n, flat
  end
  v = rawget(t, 'set')
  if type(v) == 'table' then
    local flat, n = {}, 0
    for key in next, v do n = n + 1; flat[n] = key end
    return 'set', n, flat
  end
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  if n <= UNPACK_LIMIT then return 'array', n, unpack(t, 1, n) end
  return 'array', n, t
end

local function slice(t, first, last) return unpack(t, first, last) end

-- Redis's pcall: an error raised as a table with ``err`` reaches the script as that string.
-- Lua 5.1's unpack checks its stack size in C ints: a range of about 2^31 elements passes
-- the check and crashes the interpreter (Redis patches lua_checkstack). This unpack checks
-- its arguments itself, with the stock errors (raised at the caller, as luaL_error places
-- them), and hands the stock one only what it can take.
local MAX_UNPACK = 8000  -- LUAI_MAXCSTACK
local math_floor, tonumber = math.floor, tonumber
local function c_int(value)  -- luaL_checkint: truncated; out of range INT_MIN, NaN 0 (x86)
  if value ~= value then return 0 end
  if value >= 2147483648 or value < -2147483648 then return -2147483648 end
  if value >= 0 then return math_floor(value) end
  return -math_floor(-value)
end
local function unpack_bound(value, position)
  local number = tonumber(value)
  if number == nil then
    error("bad argument #" .. position .. " to 'unpack' (number expected, got " .. type(value)
          .. ")", 3)
  end
  return c_int(number)
end
local function checked_unpack(...)
  local count = select('#', ...)
  local t, i, j = ...
  if type(t) ~= 'table' then
    error("bad argument #1 to 'unpack' (table expected, got "
          .. (count == 0 and 'no value' or type(t)) .. ")", 2)
  end
  local first, last = 1, nil
  if i ~= nil then first = unpack_bound(i, 2) end
  if j ~= nil then last = unpack_bound(j, 3) else last = #t end
  if first > last then return end
  if last - first + 1 + count > MAX_UNPACK then error('too many results to unpack', 2) end
  return unpack(...)
end

local function redis_pcall(fn, ...)
  local results = {pcall(fn, ...)}
  if not results[1] and type(results[2]) == 'userdata' then results[2] = py.unwrap(results[2]) end
  if not results[1] and type(results[2]) == 'table' then
    local message = rawget(results[2], 'err')
    if type(message) == 'string' then results[2] = message end
  end
  return unpack(results, 1, table.maxn(results))
end

-- luaPushErrorBuff: "-CODE message" keeps its code, anything else gets ERR; CR/LF trimmed.
local function error_table(text)
  local code, message = 'ERR', text
  if string_lib.sub(text, 1, 1) == '-' then
    local space = string_lib.find(text, ' ', 1, true)
    if space then
      code, message = string_lib.sub(text, 2, space - 1), string_lib.sub(text, space + 1)
    else
      message = string_lib.sub(text, 2)
    end
  end
  message = string_lib.match(message, '^[\r\n]*(.-)[\r\n]*$')
  return {err = code .. ' ' .. message}
end

-- The functions that can fail are Python callables (C functions to Lua: a failing call keeps
-- the script's frame, even in a tail call); they raise ScriptCallError, which the handler and
-- pcall unwrap into Redis's error table.
-- redis.call/pcall hand many arguments over as one table: lupa takes only so many at once.
local py_call, py_pcall, py_call_packed = py.call, py.pcall, py.call_packed
local PACKED_FROM = 64
local function redis_call(...)
  local n = select('#', ...)
  if n >= PACKED_FROM then return py_call_packed(true, n, {...}) end
  return py_call(...)
end
local function redis_pcall_command(...)
  local n = select('#', ...)
  if n >= PACKED_FROM then return py_call_packed(false, n, {...}) end
  return py_pcall(...)
end

local api = {
  call = redis_call,
  pcall = redis_pcall_command,
  sha1hex = py.sha1hex,
  log = py.log,
  setresp = py.setresp,
  set_repl = py.set_repl,
  acl_check_cmd = py.acl_check_cmd,
  error_reply = function(...)
    local text = ...
    if select('#', ...) ~= 1 or type(text) ~= 'string' then
      return error_table('wrong number or type of arguments')
    end
    if string_lib.sub(text, 1, 1) ~= '-' then text = '-' .. text end
    return error_table(text)
  end,
  status_reply = function(...)
    local text = ...
    if select('#', ...) ~= 1 or type(text) ~= 'string' then
      return error_table('wrong number or type of arguments')
    end
    return {ok = text}
  end,
  replicate_commands = function() return true end,
  breakpoint = function() return false end,
  debug = function() end,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3,
}

-- Lock everything: ``globals`` are the names scripts see (Redis's allow list), ``redis`` its
-- API table. Returns the switch between the run-time globals and another table (FUNCTION
-- LOAD sees only its library API).
local function seal(globals_allowed, libraries, redis_table, load_api)
  -- S: the globals scripts see, a copy of the allowed names. The thread's own globals (G)
  -- stay as they are: lupa reads them (``debug``) on every call from Python.
  local S = {}
  for name, value in next, G do
    if globals_allowed[name] then rawset(S, name, value) end
  end
  rawset(S, 'redis', redis_table)
  rawset(S, 'pcall', redis_pcall)
  rawset(S, 'unpack', checked_unpack)
  -- The libraries (cjson, cmsgpack, struct, bit) are built the first time a script reads
  -- their name: until then they cost the interpreter no memory.
  local py_library = py.library
  local function load_library(name)
    local library = protect(with_stock_functions(py_library, name))
    rawset(S, name, library)
    collectgarbage('collect')  -- building it left twice its size of garbage (source, dumps)
    return library
  end
  load_all_libraries = function()
    for name in next, libraries do
      if rawget(S, name) == nil then load_library(name) end
    end
  end
  scripts_globals = S
  local function nonexistent(_, name)
    error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
  end
  local function missing(_, name)
    if libraries[name] then return load_library(name) end
    error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
  end
  for key, value in next, S do
    if type(value) == 'table' and key ~= '_G' then rawset(S, key, protect(value)) end
  end
  setmetatable(S, {__index = missing})
  -- The proxy scripts get as their environment: reads reach S (or, while a library loads,
  -- its API), writes fail.
  local globals = {}
  local view = {__index = S}
  local meta_view = setmetatable({}, {__index = view, __newindex = readonly_error,
                                      __metatable = false})
  protected[meta_view] = view
  local globals_meta = {__index = S, __newindex = readonly_error, __metatable = meta_view}
  setmetatable(globals, globals_meta)
  protected[globals] = S
  rawset(S, '_G', globals)
  -- Source only, as Redis's Lua reads it: a precompiled chunk (which stock Lua would load
  -- unchecked, and which can crash it) is text with a bad first character.
  local function compile(body, name)
    if type(body) == 'string' and string_lib.byte(body, 1) == 27 then
      local _, err = loadstring('\1' .. string_lib.sub(body, 2), name)
      err = string_lib.gsub(err, "char%(1%)", "char(27)")
      if name == nil then err = string_lib.gsub(err, '\1', '\27', 1) end
      return nil, err
    end
    local fn, err = loadstring(body, name)
    if fn then setfenv(fn, globals) end
    return fn, err
  end
  rawset(S, 'loadstring', compile)
  rawset(S, 'load', function(reader, name)
    if type(reader) ~= 'function' then return load(reader, name) end  -- load's own error
    local parts = {}
    while true do
      local piece = reader()
      if piece == nil or piece == '' then break end
      if type(piece) ~= 'string' then return nil, 'reader function must return a string' end
      parts[#parts + 1] = piece
    end
    return compile(table.concat(parts), name or '=(load)')
  end)
  -- A script's or library's body: tail calls compiled as calls (``patch``), so that a
  -- library function called in tail position keeps the script's frame, as Redis's C
  -- functions do.
  local patch = py.patch
  local function compile_script(body, name)
    local fn, err = compile(body, name)
    if not fn then return nil, err end
    fn = loadstring(patch(string_lib.dump(fn)), name)
    setfenv(fn, globals)
    gc_tick()
    return fn
  end
  local loading_globals
  if load_api then
    local load_table = {redis = load_api}
    setmetatable(load_api, {__index = nonexistent})
    setmetatable(load_table, {__index = nonexistent})  -- no libraries while a library loads
    loading_globals = protect(load_table)
  end
  local function set_loading(loading)
    if loading then globals_meta.__index = loading_globals else globals_meta.__index = S end
  end
  -- EVAL: KEYS and ARGV built here from the arguments (cheaper than two tables from Python).
  local function run_eval(hooked, fn, numkeys, ...)
    local all, keys, argv = {...}, {}, {}
    for i = 1, numkeys do keys[i] = all[i] end
    for i = numkeys + 1, select('#', ...) do argv[i - numkeys] = all[i] end
    rawset(S, 'KEYS', keys)
    rawset(S, 'ARGV', argv)
    return run(hooked, fn)
  end
  return set_loading, S, compile_script, run_eval
end

-- A Python function returning an error text (or nil) as a Lua function raising {err=text}.
local function raising(fn)
  return function(...)
    local err = fn(...)
    if err then error({err = err}, 0) end
  end
end

return {
  api = api,
  raising = raising,
  seal = seal,
  run = run,
  classify = classify,
  slice = slice,
  error_table = error_table,
}
