-- Redis's bundled lua-cmsgpack, in Lua: brook/scripting/libs/cmsgpack.py says what it reproduces.
local H, MAXCSTACK, nan_to_bytes, nan_from_bytes = ...
local type, select, next, error = type, select, next, error
local byte, sub, char, format = string.byte, string.sub, string.char, string.format
local concat, floor, frexp, ldexp, huge = table.concat, math.floor, math.frexp, math.ldexp, math.huge
local fail, argerror, checkstring, optinteger, checkinteger, toint32, spread, register =
  H.fail, H.argerror, H.checkstring, H.optinteger, H.checkinteger, H.toint32, H.spread, H.register

local MAX_NESTING = 16
local TOO_MANY = 'stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)'

-- ===== packing =====

-- Big-endian bytes of an unsigned integer below 2^32.
local function be16(n) return char(floor(n / 256), n % 256) end
local function be32(n)
  return char(floor(n / 16777216), floor(n / 65536) % 256, floor(n / 256) % 256, n % 256)
end
-- ... and of a 64-bit two's complement integer (exact for any integral double in range).
local function be64(n)
  local high = floor(n / 4294967296)
  local low = n - high * 4294967296
  if high < 0 then high = high + 4294967296 end
  return be32(high) .. be32(low)
end

local function pack_integer(n)
  if n >= 0 then
    if n <= 127 then return char(n) end
    if n <= 255 then return char(0xcc, n) end
    if n <= 65535 then return '\205' .. be16(n) end
    if n <= 4294967295 then return '\206' .. be32(n) end
    return '\207' .. be64(n)
  end
  if n >= -32 then return char(256 + n) end
  if n >= -128 then return char(0xd0, 256 + n) end
  if n >= -32768 then return '\209' .. be16(65536 + n) end
  if n >= -2147483648 then return '\210' .. be32(4294967296 + n) end
  return '\211' .. be64(n)
end

-- Does (double)(float)d == d hold? (d finite and non-integral, or infinite)
local function fits_float(magnitude)
  if magnitude == huge then return true end
  if magnitude >= 2^128 then return false end
  local mantissa, exponent = frexp(magnitude)
  if exponent >= -125 then return (mantissa * 16777216) % 1 == 0 end
  return ldexp(magnitude, 149) % 1 == 0
end

local function pack_float(d, magnitude)
  local sign = d < 0 and 2147483648 or 0
  local bits
  if magnitude == huge then
    bits = sign + 2139095040
  else
    local mantissa, exponent = frexp(magnitude)
    if exponent >= -125 then
      bits = sign + (exponent + 126) * 8388608 + (mantissa * 2 - 1) * 8388608
    else
      bits = sign + ldexp(magnitude, 149)
    end
  end
  return '\202' .. be32(bits)
end

local function pack_double(d, magnitude)
  local sign = (d < 0 or (d == 0 and 1 / d < 0)) and 2147483648 or 0
  local biased, fraction
  local mantissa, exponent = frexp(magnitude)
  if exponent >= -1021 then
    biased, fraction = exponent + 1022, (mantissa * 2 - 1) * 4503599627370496
  else
    biased, fraction = 0, ldexp(magnitude, 1074)
  end
  local high = floor(fraction / 4294967296)
  return '\203' .. be32(sign + biased * 1048576 + high) .. be32(fraction - high * 4294967296)
end

local function number_bytes(n)
  if n == floor(n) and n >= -9223372036854775808 and n < 9223372036854775808 then
    return pack_integer(n)
  end
  if n ~= n then return '\203' .. nan_to_bytes(n) end
  local magnitude = n < 0 and -n or n
  if fits_float(magnitude) then return pack_float(n, magnitude) end
  return pack_double(n, magnitude)
end

local function string_header(length)
  if length < 32 then return char(0xa0 + length) end
  if length <= 255 then return char(0xd9, length) end
  if length <= 65535 then return '\218' .. be16(length) end
  return '\219' .. be32(length)
end

-- Numbers and short strings met again (map keys above all) are packed once: a lookup costs a
-- fraction of working them out. Bounded: each memo starts afresh when full. (NaN is never
-- a key; 0 and -0 share one, and both pack as the integer 0.)
local MEMO_SIZE, MEMO_LENGTH = 1024, 64
local packed_numbers, numbers_count = {}, 0
local packed_strings, strings_count = {}, 0

local function pack_number(n)
  local bytes = packed_numbers[n]
  if bytes then return bytes end
  bytes = number_bytes(n)
  if n == n then
    if numbers_count >= MEMO_SIZE then packed_numbers, numbers_count = {}, 0 end
    packed_numbers[n] = bytes
    numbers_count = numbers_count + 1
  end
  return bytes
end

local function pack_string(s)
  local bytes = packed_strings[s]
  if bytes then return bytes end
  bytes = string_header(#s) .. s
  if #s <= MEMO_LENGTH then
    if strings_count >= MEMO_SIZE then packed_strings, strings_count = {}, 0 end
    packed_strings[s] = bytes
    strings_count = strings_count + 1
  end
  return bytes
end

local function container_header(count, fix, sixteen, thirtytwo)
  if count <= 15 then return char(fix + count) end
  if count <= 65535 then return sixteen .. be16(count) end
  return thirtytwo .. be32(count)
end

local pack_value

local function pack_table(t, buf, n, level)
  -- table_is_an_array: keys exactly 1..count (C int keys, so at most 2^31-1)
  local count, max, array = 0, 0, true
  for k in next, t do
    count = count + 1
    if array then
      if type(k) ~= 'number' or k <= 0 or k > 2147483647 or floor(k) ~= k then
        array = false
      elseif k > max then
        max = k
      end
    end
  end
  if array and max == count then
    n = n + 1
    buf[n] = container_header(count, 0x90, '\220', '\221')
    for i = 1, count do n = pack_value(t[i], buf, n, level + 1) end
    return n
  end
  n = n + 1
  buf[n] = container_header(count, 0x80, '\222', '\223')
  for k, v in next, t do
    n = pack_value(k, buf, n, level + 1)
    n = pack_value(v, buf, n, level + 1)
  end
  return n
end

pack_value = function(value, buf, n, level)
  local kind = type(value)
  n = n + 1
  if kind == 'string' then
    if #value <= MEMO_LENGTH then
      buf[n] = pack_string(value)
    else
      buf[n], buf[n + 1] = string_header(#value), value
      n = n + 1
    end
  elseif kind == 'number' then
    buf[n] = pack_number(value)
  elseif kind == 'table' and level < MAX_NESTING then
    return pack_table(value, buf, n - 1, level)
  elseif kind == 'boolean' then
    buf[n] = value and '\195' or '\194'
  else
    buf[n] = '\192'
  end
  return n
end

local function pack(...)
  local nargs = select('#', ...)
  if nargs == 0 then argerror(0, 'MessagePack pack needs input.') end
  if nargs + nargs > MAXCSTACK then
    argerror(0, 'Too many arguments for MessagePack pack.')
  end
  if nargs == 1 then
    local value = ...
    local kind = type(value)
    if kind == 'string' then return pack_string(value) end
    if kind == 'number' then return pack_number(value) end
  end
  local args, buf, n = {...}, {}, 0
  for i = 1, nargs do n = pack_value(args[i], buf, n, 0) end
  return concat(buf, '', 1, n)
end

-- ===== unpacking =====
-- Each decoder takes the data, the position of the value and the number of Lua stack slots
-- the C decoder would be using (`top`), and returns the value and the position after it.
-- Running out of data or an unknown type byte is raised at once: the C code abandons the
-- whole call in both cases.

local function missing() fail('Missing bytes in input.') end

local function need(s, p, count)
  if p + count - 1 > #s then missing() end
end

local function u16(s, p) local a, b = byte(s, p, p + 1); return a * 256 + b end
local function u32(s, p)
  local a, b, c, d = byte(s, p, p + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

-- A 64-bit integer as the C code pushes it: lua_pushinteger of the bits read as int64 (so
-- above 2^63 it is negative), rounded to a double once.
local function int64(s, p)
  local high = u32(s, p)
  if high >= 2147483648 then high = high - 4294967296 end
  return high * 4294967296 + u32(s, p + 4)
end

local function float32(s, p)
  local bits = u32(s, p)
  local sign = bits >= 2147483648
  local biased = floor(bits / 8388608) % 256
  local fraction = bits % 8388608
  local value
  if biased == 255 then
    if fraction ~= 0 then return nan_from_bytes(sub(s, p, p + 3)) end
    value = huge
  elseif biased == 0 then
    value = ldexp(fraction, -149)
  else
    value = ldexp(fraction + 8388608, biased - 150)
  end
  if sign then return -value end
  return value
end

local function float64(s, p)
  local high, low = u32(s, p), u32(s, p + 4)
  local sign = high >= 2147483648
  local biased = floor(high / 1048576) % 2048
  local fraction = (high % 1048576) * 4294967296 + low
  local value
  if biased == 2047 then
    if fraction ~= 0 then return nan_from_bytes(sub(s, p, p + 7)) end
    value = huge
  elseif biased == 0 then
    value = ldexp(fraction, -1074)
  else
    value = ldexp(fraction + 4503599627370496, biased - 1075)
  end
  if sign then return -value end
  return value
end

local decode

local function decode_array(s, p, count, top)
  local t = {}
  if top + 2 > MAXCSTACK then fail('stack overflow (in function mp_decode_to_lua_array)') end
  local value
  for i = 1, count do
    value, p = decode(s, p, top + 2)
    t[i] = value
  end
  return t, p
end

local function decode_map(s, p, count, top)
  local t = {}
  local key, value
  for _ = 1, count do
    key, p = decode(s, p, top + 1)
    value, p = decode(s, p, top + 2)
    if key == nil then error('table index is nil', 0) end
    if key ~= key then error('table index is NaN', 0) end
    t[key] = value
  end
  return t, p
end

local function decode_string(s, p, length)
  need(s, p, length)
  return sub(s, p, p + length - 1), p + length
end

local FIXED = {[0xc0] = {nil}, [0xc2] = {false}, [0xc3] = {true}}

decode = function(s, p, top)
  local c = byte(s, p)
  if c == nil then missing() end
  if top + 1 > MAXCSTACK then fail(TOO_MANY) end
  if c < 0x80 then return c, p + 1 end
  if c >= 0xe0 then return c - 256, p + 1 end
  if c < 0xc0 then
    if c >= 0xa0 then return decode_string(s, p + 1, c - 0xa0) end
    if c >= 0x90 then return decode_array(s, p + 1, c - 0x90, top) end
    return decode_map(s, p + 1, c - 0x80, top)
  end
  local fixed = FIXED[c]
  if fixed then return fixed[1], p + 1 end
  if c == 0xcc then need(s, p, 2); return byte(s, p + 1), p + 2 end
  if c == 0xd0 then need(s, p, 2); local v = byte(s, p + 1); return v >= 128 and v - 256 or v, p + 2 end
  if c == 0xcd then need(s, p, 3); return u16(s, p + 1), p + 3 end
  if c == 0xd1 then need(s, p, 3); local v = u16(s, p + 1); return v >= 32768 and v - 65536 or v, p + 3 end
  if c == 0xce then need(s, p, 5); return u32(s, p + 1), p + 5 end
  if c == 0xd2 then
    need(s, p, 5)
    local v = u32(s, p + 1)
    return v >= 2147483648 and v - 4294967296 or v, p + 5
  end
  if c == 0xcf or c == 0xd3 then need(s, p, 9); return int64(s, p + 1), p + 9 end
  if c == 0xca then need(s, p, 5); return float32(s, p + 1), p + 5 end
  if c == 0xcb then need(s, p, 9); return float64(s, p + 1), p + 9 end
  if c == 0xd9 then need(s, p, 2); return decode_string(s, p + 2, byte(s, p + 1)) end
  if c == 0xda then need(s, p, 3); return decode_string(s, p + 3, u16(s, p + 1)) end
  if c == 0xdb then need(s, p, 5); return decode_string(s, p + 5, u32(s, p + 1)) end
  if c == 0xdc then need(s, p, 3); return decode_array(s, p + 3, u16(s, p + 1), top) end
  if c == 0xdd then need(s, p, 5); return decode_array(s, p + 5, u32(s, p + 1), top) end
  if c == 0xde then need(s, p, 3); return decode_map(s, p + 3, u16(s, p + 1), top) end
  if c == 0xdf then need(s, p, 5); return decode_map(s, p + 5, u32(s, p + 1), top) end
  fail('Bad data format in input.')
end

-- mp_unpack_full. `base`: the stack slots the arguments take in the C function.
local function unpack_full(s, limit, offset, base)
  local length = #s
  if offset < 0 or limit < 0 then
    fail(format('Invalid request to unpack with offset of %d and limit of %d.',
                toint32(offset), toint32(length)))
  elseif offset > length then
    fail(format('Start offset %d greater than input length %d.', toint32(offset), toint32(length)))
  end
  local decode_all = limit == 0 and offset == 0
  if decode_all then limit = 2147483647 end
  local p, count, values = offset + 1, 0, nil
  local value
  while p <= length and count < limit do
    value, p = decode(s, p, base + count)
    count = count + 1
    if decode_all and count == 1 and p > length then return value end
    values = values or {}
    values[count] = value
  end
  if decode_all then return spread(values or {}, 1, count) end
  if base + count + 1 > MAXCSTACK then fail('stack overflow (in function mp_unpack_full)') end
  local next_offset = p > length and -1 or p - 1
  if count == 0 then return next_offset end
  return next_offset, spread(values, 1, count)
end

local function unpack_all(...)
  local nargs = select('#', ...)
  local s = ...
  if type(s) ~= 'string' then s = checkstring(1, s, nargs) end
  return unpack_full(s, 0, 0, nargs)
end

local function unpack_one(...)
  local nargs = select('#', ...)
  local s, offset = ...
  offset = optinteger(2, offset, nargs, 0)
  if type(s) ~= 'string' then s = checkstring(1, s, nargs) end
  return unpack_full(s, 1, offset, 1)
end

local function unpack_limit(...)
  local nargs = select('#', ...)
  local s, limit, offset = ...
  limit = checkinteger(2, limit, nargs)
  offset = optinteger(3, offset, nargs, 0)
  if type(s) ~= 'string' then s = checkstring(1, s, nargs) end
  return unpack_full(s, limit, offset, 1)
end

return {
  pack = register(pack, 'pack'), unpack = register(unpack_all, 'unpack'),
  unpack_one = register(unpack_one, 'unpack_one'), unpack_limit = register(unpack_limit, 'unpack_limit'),
  _NAME = 'cmsgpack', _VERSION = 'lua-cmsgpack 0.4.0',
  _COPYRIGHT = 'Copyright (C) 2012, Salvatore Sanfilippo',
  _DESCRIPTION = 'MessagePack C implementation for Lua',
}
