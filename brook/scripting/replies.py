"""Conversions between Redis replies and Lua values, by Redis's rules (script_lua.c).

Reply to Lua (what ``redis.call`` returns): integer → number, bulk → string, null bulk and null
array → false, array → table, status → ``{ok=...}``, error → ``{err=...}``; after
``redis.setresp(3)`` also map → ``{map={...}}``, set → ``{set={member=true}}``, double →
``{double=n}``, boolean → boolean, null → nil, big number → ``{big_number=s}``, verbatim →
``{verbatim_string={format=..., string=...}}``. A command's reply is parsed from the bytes the
handler produced: the script is a client like any other.

Lua to reply (what the script returns): string → bulk, number → integer (truncated, as C casts
a double; out of range gives LLONG_MIN as on x86), boolean → 1 / null (RESP2 script) or a
boolean (RESP3 script), a table → error, status, double, big number, verbatim, map, set or
array by its fields, in Redis's order; anything else → null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lupa.lua51 import lua_type

from brook.protocol import resp

if TYPE_CHECKING:
    from lupa.lua51 import LuaRuntime

_LLONG_MIN = -(1 << 63)
_LLONG_MAX = (1 << 63) - 1
# How deep a returned table may nest before the reply says what Redis says at its limit.
MAX_REPLY_DEPTH = 400
_SLICE = 4000


class ReplyReader:
    """Parses one reply's bytes into Lua values for ``lua``."""

    def __init__(self, lua: LuaRuntime) -> None:
        self.lua = lua
        self.table_from = lua.table_from

    def to_lua(self, data: bytes) -> tuple[Any, Any]:
        """(value, None), or (None, error table) for an error reply."""
        kind = data[0]
        if kind == 58:  # ':'
            return int(data[1:-2]), None
        if kind == 36:  # '$'
            if data[1] == 45:
                return False, None
            return data[data.index(b"\n") + 1:-2], None
        if kind == 43:  # '+'
            return self.table_from({b"ok": data[1:-2]}), None
        if kind == 45:  # '-'
            return None, self.error(data[1:-2])
        value, _ = self._parse(data, 0)
        return value, None

    def error(self, line: bytes) -> Any:
        """The error table of an error reply's text (without its '-')."""
        return self.table_from({b"err": line.strip(b"\r\n"), b"ignore_error_stats_update": True})

    def _parse(self, data: bytes, pos: int) -> tuple[Any, int]:
        end = data.index(b"\r\n", pos)
        kind = data[pos]
        head = data[pos + 1:end]
        after = end + 2
        if kind == 36:  # '$'
            size = int(head)
            if size < 0:
                return False, after
            return data[after:after + size], after + size + 2
        if kind == 58:
            return int(head), after
        if kind == 42:  # '*'
            size = int(head)
            if size < 0:
                return False, after
            items = []
            for _ in range(size):
                item, after = self._parse(data, after)
                items.append(item)
            return self.table_from(items), after
        if kind == 43:
            return self.table_from({b"ok": head}), after
        if kind == 45:
            return self.error(head), after
        if kind == 37:  # '%' map
            pairs = {}
            for _ in range(int(head)):
                key, after = self._parse(data, after)
                value, after = self._parse(data, after)
                pairs[key] = value
            return self.table_from({b"map": self.table_from(pairs)}), after
        if kind == 126:  # '~' set
            members = {}
            for _ in range(int(head)):
                member, after = self._parse(data, after)
                members[member] = True
            return self.table_from({b"set": self.table_from(members)}), after
        if kind == 44:  # ',' double
            return self.table_from({b"double": _parse_double(head)}), after
        if kind == 35:  # '#' boolean
            return head == b"t", after
        if kind == 95:  # '_' null
            return None, after
        if kind == 40:  # '(' big number
            return self.table_from({b"big_number": head}), after
        if kind == 61:  # '=' verbatim
            size = int(head)
            body = data[after:after + size]
            verbatim = self.table_from({b"string": body[4:], b"format": body[:3]})
            return self.table_from({b"verbatim_string": verbatim}), after + size + 2
        if kind == 124:  # '|' attribute: skipped, as Redis does
            for _ in range(2 * int(head)):
                _, after = self._parse(data, after)
            return self._parse(data, after)
        raise ValueError(f"unexpected reply type {chr(kind)!r}")


def _parse_double(text: bytes) -> float:
    lowered = text.lower()
    if lowered in (b"inf", b"+inf"):
        return float("inf")
    if lowered == b"-inf":
        return float("-inf")
    return float(text)


def truncate(number: float | int) -> int:
    """``(long long)`` of a Lua number: truncation toward zero; NaN and out of range give
    LLONG_MIN, as the x86 conversion does."""
    if type(number) is int:
        return number if _LLONG_MIN <= number <= _LLONG_MAX else _LLONG_MIN
    if number != number or not -9.223372036854776e18 <= number < 9.223372036854776e18:
        return _LLONG_MIN
    return int(number)


class ReplyWriter:
    """Encodes a script's return value for a client speaking ``proto``; ``script_proto`` is
    the RESP version the script chose (booleans differ)."""

    def __init__(self, classify: Any, slice_: Any) -> None:
        self.lua_type = lua_type
        self.classify = classify
        self.slice = slice_
        # The codes of the error replies the last encode produced, for errorstats, and how
        # many more it produced that were counted when a command replied them.
        self.errors: list[str] = []
        self.counted_errors = 0

    def encode(self, value: Any, proto: int, script_proto: int) -> bytes:
        self.errors.clear()
        self.counted_errors = 0
        out: list[bytes] = []
        self._encode(value, proto, script_proto, out, 0)
        return out[0] if len(out) == 1 else b"".join(out)

    def _encode(self, value: Any, proto: int, script_proto: int, out: list[bytes],
                depth: int) -> None:
        kind = type(value)
        if kind is bytes:
            out.append(resp.bulk(value))
        elif kind is int or kind is float:
            out.append(resp.integer(truncate(value)))
        elif kind is bool:
            if script_proto == 2:
                out.append(resp.ONE if value else resp.null(proto))
            elif proto == 2:
                out.append(resp.ONE if value else resp.ZERO)
            else:
                out.append(b"#t\r\n" if value else b"#f\r\n")
        elif value is None or self.lua_type(value) != "table":
            out.append(resp.null(proto))
        elif depth >= MAX_REPLY_DEPTH:
            out.append(resp.error("ERR reached lua stack limit"))
        else:
            self._table(value, proto, script_proto, out, depth + 1)

    def _table(self, table: Any, proto: int, script_proto: int, out: list[bytes],
               depth: int) -> None:
        parts = self.classify(table)
        if type(parts) is not tuple:
            parts = (parts,)
        shape = parts[0]
        if shape == b"array":
            count = parts[1]
            out.append(b"*%d\r\n" % count)
            if count <= _SLICE:
                items: Any = parts[2:]
            else:
                items = _slices(self.slice, parts[2], count)
            for item in items:
                self._encode(item, proto, script_proto, out, depth)
        elif shape == b"err":
            text = _text(parts[1])
            out.append(resp.error(text))
            if len(parts) > 2 and parts[2]:  # an error a command replied was counted
                self.counted_errors += 1
            else:
                self.errors.append(text.split(" ", 1)[0])
        elif shape == b"ok":
            status: bytes = parts[1]  # typed: compiled %-formatting needs to know it is bytes
            out.append(b"+%s\r\n" % status.replace(b"\r", b" ").replace(b"\n", b" "))
        elif shape == b"double":
            out.append(resp.encode(resp.Double(parts[1]), proto))
        elif shape == b"map":
            count, flat = parts[1], parts[2]
            out.append((b"*%d\r\n" if proto == 2 else b"%%%d\r\n") % (count if proto == 2
                                                                      else count // 2))
            for item in _slices(self.slice, flat, count):
                self._encode(item, proto, script_proto, out, depth)
        elif shape == b"set":
            count, flat = parts[1], parts[2]
            out.append((b"*%d\r\n" if proto == 2 else b"~%d\r\n") % count)
            for item in _slices(self.slice, flat, count):
                self._encode(item, proto, script_proto, out, depth)
        elif shape == b"big_number":
            digits: bytes = parts[1]
            number = digits.replace(b"\r", b" ").replace(b"\n", b" ")
            out.append(resp.bulk(number) if proto == 2 else b"(%s\r\n" % number)
        elif shape == b"verbatim":
            fmt: bytes = parts[1]
            body: bytes = parts[2]
            if proto == 2:
                out.append(resp.bulk(body))
            else:
                out.append(b"=%d\r\n%s:%s\r\n" % (len(body) + 4, fmt[:3], body))


def _slices(slice_: Any, table: Any, count: int) -> Any:
    for first in range(1, count + 1, _SLICE):
        last = min(first + _SLICE - 1, count)
        chunk = slice_(table, first, last)
        if type(chunk) is tuple:
            yield from chunk
        else:
            yield chunk


def _text(message: bytes) -> str:
    return message.decode("utf-8", "surrogateescape")
