-- Redis's bundled Lua CJSON, in Lua: brook/scripting/libs/cjson.py says what it reproduces.
local H, MAXCSTACK = ...
local type, select, next, pairs, tostring, tonumber, rawget = type, select, next, pairs, tostring, tonumber, rawget
local byte, sub, find, format, gsub, lower, char = string.byte, string.sub, string.find, string.format, string.gsub, string.lower, string.char
local concat, floor, huge = table.concat, math.floor, math.huge
local fail, argerror, checkinteger, checkstring, toint32, register =
  H.fail, H.argerror, H.checkinteger, H.checkstring, H.toint32, H.register

-- JSON null: a lightuserdata NULL in Redis, printed as such.
local null = newproxy(true)
getmetatable(null).__tostring = function() return 'userdata: (nil)' end

-- ===== encoding =====

local ESCAPES = {}
for code = 0, 31 do ESCAPES[char(code)] = format('\\u%04x', code) end
ESCAPES['\b'], ESCAPES['\t'], ESCAPES['\n'], ESCAPES['\f'], ESCAPES['\r'] = '\\b', '\\t', '\\n', '\\f', '\\r'
ESCAPES['"'], ESCAPES['\\'], ESCAPES['/'], ESCAPES['\127'] = '\\"', '\\\\', '\\/', '\\u007f'
local NEEDS_ESCAPE = '[%z\1-\31"\\/\127]'
local NOTHING_TO_ESCAPE = '^[^%z\1-\31"\\/\127]*$'

-- Short strings met again (object keys above all) are quoted once: a lookup costs a tenth of
-- scanning them. Bounded: the memo starts afresh when full.
local MEMO_SIZE, MEMO_LENGTH = 1024, 64
local quoted, quoted_count = {}, 0

local function quote(text)
  local json = quoted[text]
  if json then return json end
  if find(text, NOTHING_TO_ESCAPE) then
    json = '"' .. text .. '"'
  else
    json = '"' .. gsub(text, NEEDS_ESCAPE, ESCAPES) .. '"'
  end
  if quoted_count >= MEMO_SIZE then quoted, quoted_count = {}, 0 end
  quoted[text] = json
  quoted_count = quoted_count + 1
  return json
end

-- Append a string's JSON text; a long one in three pieces, saving a copy.
local function encode_string(text, buf, n)
  if #text <= MEMO_LENGTH then
    buf[n + 1] = quote(text)
    return n + 1
  end
  if not find(text, NOTHING_TO_ESCAPE) then text = gsub(text, NEEDS_ESCAPE, ESCAPES) end
  buf[n + 1], buf[n + 2], buf[n + 3] = '"', text, '"'
  return n + 3
end

local INT_MAX, INT_MIN = 2147483647, -2147483648

-- items * ratio in a C int (wrapping like the machine does).
local function int_product(items, ratio)
  local product = items * ratio
  if product <= INT_MAX then return product end
  local low = (items * (ratio % 65536) + (items * floor(ratio / 65536) % 65536) * 65536) % 4294967296
  return toint32(low)
end

local function new_module()
  -- configuration (json_config_t)
  local sparse_convert, sparse_ratio, sparse_safe = false, 2, 10
  local encode_max_depth, decode_max_depth = 1000, 1000
  local encode_invalid, decode_invalid = 0, true
  local keep_buffer, precision, number_format = true, 14, '%.14g'

  -- Finite non-zero numbers met again are formatted once (zero has a sign the memo's key
  -- would lose); the memo is per module because the precision is.
  local formatted, formatted_count = {}, 0

  local function encode_number(number)
    local text = formatted[number]
    if text then return text end
    if number ~= number or number == huge or number == -huge then
      if encode_invalid == 0 then
        fail('Cannot serialise number: must not be NaN or Inf')
      elseif encode_invalid == 1 then
        if number ~= number then return 'nan' end
      else
        return 'null'
      end
      return format(number_format, number)
    end
    text = format(number_format, number)
    if number ~= 0 then
      if formatted_count >= MEMO_SIZE then formatted, formatted_count = {}, 0 end
      formatted[number] = text
      formatted_count = formatted_count + 1
    end
    return text
  end

  -- The array length lua_array_length computes: -1 for an object (the C code keeps the
  -- largest index in an int, so an index >= 2^31 resets it to INT_MIN).
  local function array_length(t)
    local max, items = 0, 0
    for k in next, t do
      if type(k) == 'number' and k ~= 0 and floor(k) == k and k >= 1 then
        if k > max then
          if k > INT_MAX then max = INT_MIN else max = k end
        end
        items = items + 1
      else
        return -1
      end
    end
    if sparse_ratio > 0 and max > int_product(items, sparse_ratio) and max > sparse_safe then
      if not sparse_convert then
        fail('Cannot serialise table: excessively sparse array')
      end
      return -1
    end
    return max
  end

  local encode_value

  -- `top` is how many Lua stack slots the C encoder would be using: it gives up at 8000.
  local function encode_table(t, buf, n, depth, top)
    depth = depth + 1
    if depth > encode_max_depth or top + 3 > MAXCSTACK then
      fail(format('Cannot serialise, excessive nesting (%d)', depth))
    end
    local length = array_length(t)
    if length > 0 then
      n = n + 1
      buf[n] = '['
      for i = 1, length do
        if i > 1 then n = n + 1; buf[n] = ',' end
        n = encode_value(rawget(t, i), buf, n, depth, top + 1)
      end
      n = n + 1
      buf[n] = ']'
      return n
    end
    n = n + 1
    buf[n] = '{'
    local comma = false
    for k, v in next, t do
      if comma then n = n + 1; buf[n] = ',' else comma = true end
      local kind = type(k)
      if kind == 'string' then
        n = encode_string(k, buf, n) + 1
        buf[n] = ':'
      elseif kind == 'number' then
        buf[n + 1], buf[n + 2], buf[n + 3] = '"', encode_number(k), '":'
        n = n + 3
      else
        fail('Cannot serialise ' .. kind .. ': table key must be a number or string')
      end
      n = encode_value(v, buf, n, depth, top + 2)
    end
    n = n + 1
    buf[n] = '}'
    return n
  end

  encode_value = function(value, buf, n, depth, top)
    local kind = type(value)
    if kind == 'string' then return encode_string(value, buf, n) end
    n = n + 1
    if kind == 'number' then
      buf[n] = encode_number(value)
    elseif kind == 'table' then
      return encode_table(value, buf, n - 1, depth, top)
    elseif kind == 'boolean' then
      buf[n] = value and 'true' or 'false'
    elseif value == nil or value == null then
      buf[n] = 'null'
    else
      fail('Cannot serialise ' .. kind .. ': type not supported')
    end
    return n
  end

  local function encode(...)
    if select('#', ...) ~= 1 then argerror(1, 'expected 1 argument') end
    local value = ...
    local kind = type(value)
    if kind == 'string' then
      if #value <= MEMO_LENGTH then return quote(value) end
    elseif kind == 'number' then
      return encode_number(value)
    end
    local buf = {}
    local n = encode_value(value, buf, 0, 0, 1)
    return concat(buf, '', 1, n)
  end

  -- ===== decoding =====

  local UNESCAPE = {[34] = '"', [92] = '\\', [47] = '/', [98] = '\b', [116] = '\t',
                    [110] = '\n', [102] = '\f', [114] = '\r'}

  local function utf8(code)
    if code <= 0x7F then return char(code) end
    if code <= 0x7FF then
      return char(0xC0 + floor(code / 64), 0x80 + code % 64)
    end
    if code <= 0xFFFF then
      return char(0xE0 + floor(code / 4096), 0x80 + floor(code / 64) % 64, 0x80 + code % 64)
    end
    return char(0xF0 + floor(code / 262144), 0x80 + floor(code / 4096) % 64,
                0x80 + floor(code / 64) % 64, 0x80 + code % 64)
  end

  -- The \uXXXX escape (or surrogate pair) at `at`: its UTF-8 bytes and length, or nil.
  local function unicode_escape(s, at)
    local hex = sub(s, at + 2, at + 5)
    if not find(hex, '^%x%x%x%x$') then return nil end
    local code = tonumber(hex, 16)
    if code < 0xD800 or code > 0xDFFF then return utf8(code), 6 end
    if code >= 0xDC00 or sub(s, at + 6, at + 7) ~= '\\u' then return nil end
    local low_hex = sub(s, at + 8, at + 11)
    if not find(low_hex, '^%x%x%x%x$') then return nil end
    local low = tonumber(low_hex, 16)
    if low < 0xDC00 or low > 0xDFFF then return nil end
    return utf8((code - 0xD800) * 1024 + (low - 0xDC00) + 0x10000), 12
  end

  -- A string token whose opening quote is at `pos`: kind, value, next position, error position.
  local function string_token(s, pos)
    local start = pos + 1
    local stop = find(s, '["\\]', start)
    if stop and byte(s, stop) == 34 then return 'T_STRING', sub(s, start, stop - 1), stop + 1 end
    local parts, count, at = {}, 0, start
    while true do
      stop = find(s, '["\\]', at)
      if not stop then return 'T_ERROR', 'unexpected end of string', nil, #s + 1 end
      if stop > at then count = count + 1; parts[count] = sub(s, at, stop - 1) end
      if byte(s, stop) == 34 then break end
      local escape = byte(s, stop + 1)
      local plain = UNESCAPE[escape]
      count = count + 1
      if plain then
        parts[count] = plain
        at = stop + 2
      elseif escape == 117 then
        local bytes, length = unicode_escape(s, stop)
        if not bytes then return 'T_ERROR', 'invalid unicode escape code', nil, stop end
        parts[count] = bytes
        at = stop + length
      else
        return 'T_ERROR', 'invalid escape code', nil, stop
      end
    end
    return 'T_STRING', concat(parts, '', 1, count), stop + 1
  end

  -- Where the C library's strtod stops reading a number that starts at `pos` (pos: none).
  local function strtod_end(s, pos)
    local p = pos
    local c = byte(s, p)
    if c == 43 or c == 45 then p = p + 1; c = byte(s, p) end
    if c == 48 then
      local x = byte(s, p + 1)
      if x == 120 or x == 88 then
        local _, e = find(s, '^%x*', p + 2)
        local digits = e - p - 1
        local q = e + 1
        if byte(s, q) == 46 then
          local _, e2 = find(s, '^%x*', q + 1)
          digits = digits + e2 - q
          q = e2 + 1
        end
        if digits == 0 then return p + 1 end
        local mark = byte(s, q)
        if mark == 112 or mark == 80 then
          local _, e3 = find(s, '^[+-]?%d+', q + 1)
          if e3 then q = e3 + 1 end
        end
        return q
      end
    end
    if c and (c >= 48 and c <= 57 or c == 46) then
      local _, e = find(s, '^%d*', p)
      local digits = e - p + 1
      local q = e + 1
      if byte(s, q) == 46 then
        local _, e2 = find(s, '^%d*', q + 1)
        digits = digits + e2 - q
        q = e2 + 1
      end
      if digits == 0 then return pos end
      local mark = byte(s, q)
      if mark == 101 or mark == 69 then
        local _, e3 = find(s, '^[+-]?%d+', q + 1)
        if e3 then q = e3 + 1 end
      end
      return q
    end
    local word = lower(sub(s, p, p + 2))
    if word == 'inf' then
      if lower(sub(s, p + 3, p + 7)) == 'inity' then return p + 8 end
      return p + 3
    elseif word == 'nan' then
      local _, e = find(s, '^%([%dA-Za-z_]*%)', p + 3)
      return e and e + 1 or p + 3
    end
    return pos
  end

  -- json_is_invalid_number: what strict JSON refuses but strtod reads.
  local function is_invalid_number(s, pos)
    local c = byte(s, pos)
    if c == 43 then return true end
    if c == 45 then pos = pos + 1; c = byte(s, pos) end
    if c == 48 then
      local next_c = byte(s, pos + 1)
      return next_c == 120 or next_c == 88 or (next_c ~= nil and next_c >= 48 and next_c <= 57)
    end
    if c == nil or c <= 57 then return false end
    local word = lower(sub(s, pos, pos + 2))
    return word == 'inf' or word == 'nan'
  end

  local function number_token(s, pos)
    local stop = strtod_end(s, pos)
    if stop == pos then return 'T_ERROR', 'invalid number', nil, pos end
    return 'T_NUMBER', tonumber(sub(s, pos, stop - 1)), stop
  end

  local SINGLE = {[123] = 'T_OBJ_BEGIN', [125] = 'T_OBJ_END', [91] = 'T_ARR_BEGIN',
                  [93] = 'T_ARR_END', [44] = 'T_COMMA', [58] = 'T_COLON'}
  local WORDS = {[116] = 'true', [102] = 'false', [110] = 'null'}
  local MAY_START_NUMBER = {[105] = true, [73] = true, [110] = true, [78] = true, [43] = true}

  -- The token at or after `pos`: kind, value, position after it, and its (1-based) position.
  local function next_token(s, pos)
    local c = byte(s, pos)
    if c == 32 or c == 9 or c == 10 or c == 13 then
      pos = find(s, '[^ \t\n\r]', pos) or #s + 1
      c = byte(s, pos)
    end
    if c == nil then return 'T_END', nil, pos, pos end
    local single = SINGLE[c]
    if single then return single, nil, pos + 1, pos end
    local kind, value, after, at
    if c == 34 then
      kind, value, after, at = string_token(s, pos)
    elseif c == 45 or (c >= 48 and c <= 57) then
      if not decode_invalid and is_invalid_number(s, pos) then
        return 'T_ERROR', 'invalid number', pos, pos
      end
      kind, value, after, at = number_token(s, pos)
    else
      local word = WORDS[c]
      if word and sub(s, pos, pos + #word - 1) == word then
        if c == 110 then return 'T_NULL', null, pos + 4, pos end
        return 'T_BOOLEAN', c == 116, pos + #word, pos
      end
      if decode_invalid and MAY_START_NUMBER[c] and is_invalid_number(s, pos) then
        kind, value, after, at = number_token(s, pos)
      else
        return 'T_ERROR', 'invalid token', pos, pos
      end
    end
    return kind, value, after, at or pos
  end

  -- The error for what stands at `pos` where `expected` should: the tokenizer names it.
  local function unexpected(expected, s, pos)
    local kind, value, _, at = next_token(s, pos)
    local found = kind == 'T_ERROR' and value or kind
    fail(format('Expected %s but found %s at character %d', expected, found, at))
  end

  -- The parser below reads what it expects straight from the bytes and leaves anything else
  -- (numbers other than plain integers, strings with escapes, errors) to the tokenizer, which
  -- reads the same tokens the C parser reads.

  local function skip_space(s, pos)
    local c = byte(s, pos)
    if c == 32 or c == 9 or c == 10 or c == 13 then return find(s, '[^ \t\n\r]', pos) or #s + 1 end
    return pos
  end

  -- Where the next backslash of the text being decoded is (huge: none), so that a string
  -- without one is found with two plain searches, not a pattern matched at every byte.
  local backslash = 0

  -- A string starting at `pos` (a quote): its value and the position after it, or nil.
  local function string_value(s, pos)
    local stop = find(s, '"', pos + 1, true)
    if stop then
      if backslash < pos then backslash = find(s, '\\', pos + 1, true) or huge end
      if backslash > stop then return sub(s, pos + 1, stop - 1), stop + 1 end
    end
    local kind, value, after = string_token(s, pos)
    if kind == 'T_STRING' then return value, after end
    return nil
  end

  local function descend(depth, top, slots, pos)
    if depth > decode_max_depth or top + slots > MAXCSTACK then
      fail(format('Found too many nested data structures (%d) at character %d', depth, pos - 1))
    end
  end

  local parse_value

  -- `top` is how many Lua stack slots the C decoder would be using: it gives up at 8000.
  -- Compact JSON has no white space: each step checks the byte it expects before skipping any.
  local function parse_object(s, pos, depth, top)
    depth = depth + 1
    descend(depth, top, 3, pos)
    local t = {}
    if byte(s, pos) ~= 34 then
      pos = skip_space(s, pos)
      if byte(s, pos) == 125 then return t, pos + 1 end
    end
    local key, after, value, c
    while true do
      key = nil
      if byte(s, pos) == 34 then key, after = string_value(s, pos) end
      if key == nil then unexpected('object key string', s, pos) end
      pos = after
      if byte(s, pos) ~= 58 then
        pos = skip_space(s, pos)
        if byte(s, pos) ~= 58 then unexpected('colon', s, pos) end
      end
      value, pos = parse_value(s, pos + 1, depth, top + 2)
      t[key] = value
      c = byte(s, pos)
      if c ~= 44 and c ~= 125 then
        pos = skip_space(s, pos)
        c = byte(s, pos)
      end
      if c == 125 then return t, pos + 1 end
      if c ~= 44 then unexpected('comma or object end', s, pos) end
      pos = pos + 1
      if byte(s, pos) ~= 34 then pos = skip_space(s, pos) end
    end
  end

  local function parse_array(s, pos, depth, top)
    depth = depth + 1
    descend(depth, top, 2, pos)
    local t = {}
    local c = byte(s, pos)
    if c == 93 then return t, pos + 1 end
    if c == 32 or c == 9 or c == 10 or c == 13 then
      pos = skip_space(s, pos)
      if byte(s, pos) == 93 then return t, pos + 1 end
    end
    local i, value = 1, nil
    while true do
      value, pos = parse_value(s, pos, depth, top + 1)
      t[i] = value
      i = i + 1
      c = byte(s, pos)
      if c ~= 44 and c ~= 93 then
        pos = skip_space(s, pos)
        c = byte(s, pos)
      end
      if c == 93 then return t, pos + 1 end
      if c ~= 44 then unexpected('comma or array end', s, pos) end
      pos = pos + 1
    end
  end

  local DIGIT_FOLLOWERS = {[46] = true, [101] = true, [69] = true, [120] = true, [88] = true}

  parse_value = function(s, pos, depth, top)
    local c = byte(s, pos)
    if c == 32 or c == 9 or c == 10 or c == 13 then
      pos = skip_space(s, pos)
      c = byte(s, pos)
    end
    if c == 34 then
      local value, after = string_value(s, pos)
      if value then return value, after end
    elseif c == 123 then
      return parse_object(s, pos + 1, depth, top)
    elseif c == 91 then
      return parse_array(s, pos + 1, depth, top)
    elseif c == 116 then
      if sub(s, pos, pos + 3) == 'true' then return true, pos + 4 end
    elseif c == 102 then
      if sub(s, pos, pos + 4) == 'false' then return false, pos + 5 end
    elseif c == 110 then
      if sub(s, pos, pos + 3) == 'null' then return null, pos + 4 end
    elseif decode_invalid and c and (c == 45 or c >= 48 and c <= 57) then
      local _, last = find(s, '^-?%d+', pos)
      if last and not DIGIT_FOLLOWERS[byte(s, last + 1)] then
        return tonumber(sub(s, pos, last)), last + 1
      end
    end
    local kind, value, after = next_token(s, pos)
    if kind == 'T_NUMBER' then return value, after end
    unexpected('value', s, pos)
  end

  local function decode(...)
    local nargs = select('#', ...)
    if nargs ~= 1 then argerror(1, 'expected 1 argument') end
    local s = ...
    if type(s) ~= 'string' then s = checkstring(1, s, nargs) end
    local first, second = byte(s, 1, 2)
    if second and (first == 0 or second == 0) then
      fail('JSON parser does not support UTF-16 or UTF-32')
    end
    local zero = find(s, '\0', 1, true)
    if zero then s = sub(s, 1, zero - 1) end
    backslash = 0
    local value, after = parse_value(s, 1, 0, 1)
    after = skip_space(s, after)
    if after <= #s then unexpected('the end', s, after) end
    return value
  end

  -- ===== settings =====

  local function arg_count(nargs, allowed)
    if nargs > allowed then argerror(allowed + 1, 'found too many arguments') end
  end

  -- json_integer_option: set from argument `narg` unless nil; the range error names #1.
  local function integer_option(narg, value, nargs, current, min, max)
    if value == nil then return current end
    local number = toint32(checkinteger(narg, value, nargs))
    if number < min or number > max then
      argerror(1, format('expected integer between %d and %d', min, max))
    end
    return number
  end

  -- json_enum_option: a boolean, or one of `options` by name (index from 0).
  local function enum_option(narg, value, nargs, current, options)
    if value == nil then return current end
    if type(value) == 'boolean' then return value and 1 or 0 end
    local option = checkstring(narg, value, nargs)
    for index = 1, #options do
      if options[index] == option then return index - 1 end
    end
    argerror(narg, format("invalid option '%s'", option))
  end

  local ON_OFF = {'off', 'on'}
  local INVALID_NUMBER_OPTIONS = {'off', 'on', 'null'}

  local function bool_option(narg, value, nargs, current)
    return enum_option(narg, value, nargs, current and 1 or 0, ON_OFF) == 1
  end

  local function encode_sparse_array(...)
    local nargs = select('#', ...)
    arg_count(nargs, 3)
    local convert, ratio, safe = ...
    sparse_convert = bool_option(1, convert, nargs, sparse_convert)
    sparse_ratio = integer_option(2, ratio, nargs, sparse_ratio, 0, INT_MAX)
    sparse_safe = integer_option(3, safe, nargs, sparse_safe, 0, INT_MAX)
    return sparse_convert, sparse_ratio, sparse_safe
  end

  local function encode_max_depth_option(...)
    local nargs = select('#', ...)
    arg_count(nargs, 1)
    encode_max_depth = integer_option(1, ..., nargs, encode_max_depth, 1, INT_MAX)
    return encode_max_depth
  end

  local function decode_max_depth_option(...)
    local nargs = select('#', ...)
    arg_count(nargs, 1)
    decode_max_depth = integer_option(1, ..., nargs, decode_max_depth, 1, INT_MAX)
    return decode_max_depth
  end

  local function encode_number_precision(...)
    local nargs = select('#', ...)
    arg_count(nargs, 1)
    precision = integer_option(1, ..., nargs, precision, 1, 14)
    number_format = '%.' .. precision .. 'g'
    formatted, formatted_count = {}, 0
    return precision
  end

  local function encode_keep_buffer(...)
    local nargs = select('#', ...)
    arg_count(nargs, 1)
    keep_buffer = bool_option(1, ..., nargs, keep_buffer)
    return keep_buffer
  end

  local function encode_invalid_numbers(...)
    local nargs = select('#', ...)
    arg_count(nargs, 1)
    encode_invalid = enum_option(1, ..., nargs, encode_invalid,
                                 INVALID_NUMBER_OPTIONS)
    if encode_invalid == 2 then return 'null' end
    return encode_invalid == 1
  end

  local function decode_invalid_numbers(...)
    local nargs = select('#', ...)
    arg_count(nargs, 1)
    decode_invalid = bool_option(1, ..., nargs, decode_invalid)
    return decode_invalid
  end

  local module = {
    encode = encode, decode = decode,
    encode_sparse_array = encode_sparse_array,
    encode_max_depth = encode_max_depth_option,
    decode_max_depth = decode_max_depth_option,
    encode_number_precision = encode_number_precision,
    encode_keep_buffer = encode_keep_buffer,
    encode_invalid_numbers = encode_invalid_numbers,
    decode_invalid_numbers = decode_invalid_numbers,
  }
  for name, fn in pairs(module) do register(fn, name) end
  module.new = new_module
  module.null, module._NAME, module._VERSION = null, 'cjson', '2.1.0'
  return module
end
register(new_module, 'new')

return new_module()
