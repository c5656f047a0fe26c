"""Configuration values: the parsers that read a parameter's text and the renderers that write
it back (CONFIG GET, CONFIG REWRITE, the config file).

Parsing follows Redis's ``config.c`` to the letter, because clients and tools compare error
texts: integers are read strictly (no ``+``, spaces or leading zeros), memory values accept
the ``k/kb/m/mb/g/gb`` units, and the messages are Redis's. A parser of a multi-word value
takes ``(text, current_value)``: some (buffer limits) change only part of the current value.

May import only :mod:`brook.config.errors` and the request parser's strict integer reader.
"""

from __future__ import annotations

from typing import Final

from brook.config.errors import ConfigError
from brook.protocol.requests import parse_strict_int

_MEMORY_UNITS: Final = {
    "": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2, "g": 1000**3, "gb": 1024**3,
}


def parse_memory(text: str) -> int:
    """Redis's ``memtoull``: digits with an optional k/kb/m/mb/g/gb unit, never negative."""
    digits_end = 0
    while digits_end < len(text) and text[digits_end].isdigit() and text[digits_end].isascii():
        digits_end += 1
    digits, unit = text[:digits_end], text[digits_end:].lower()
    if unit not in _MEMORY_UNITS:
        raise ConfigError("argument must be a memory value")
    return (int(digits) if digits else 0) * _MEMORY_UNITS[unit]


def parse_memory_or_percent(text: str, _current: object = None) -> int:
    """A byte count, or a percentage (of maxmemory) kept as its negative, as Redis keeps it."""
    if text.endswith("%"):
        percent = parse_strict_int(text[:-1].encode())
        if percent is None or percent < 0:
            raise ConfigError("argument must be a memory or percent value")
        if percent > 100:
            raise ConfigError("percentage argument must be less or equal to 100")
        return -percent
    try:
        return parse_memory(text)
    except ConfigError:
        raise ConfigError("argument must be a memory or percent value") from None


def render_memory_or_percent(value: object) -> str:
    number = int(value)  # type: ignore[call-overload]
    return f"{-number}%" if number < 0 else str(number)


def format_memory(value: int) -> str:
    """How CONFIG REWRITE writes a byte count: the largest exact unit (``512mb``)."""
    for unit, size in (("gb", 1024**3), ("mb", 1024**2), ("kb", 1024)):
        if value and value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


def parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered == "yes":
        return True
    if lowered == "no":
        return False
    raise ConfigError("argument must be 'yes' or 'no'")


def parse_int(text: str) -> int:
    value = parse_strict_int(text.encode("utf-8", "surrogateescape"))
    if value is None:
        raise ConfigError("argument couldn't be parsed into an integer")
    return value


def _c_strtoll_whole(text: str) -> int | None:
    """C's ``strtoll`` over a whole token (leading '+', zeros and spaces allowed)."""
    stripped = text.lstrip(" \t\n\v\f\r")
    body = stripped[1:] if stripped[:1] in ("+", "-") else stripped
    if not body.isdigit() or not body.isascii():
        return None
    return int(stripped)


def parse_save(text: str, current: object) -> list[tuple[int, int]]:
    """``save <seconds> <changes> [...]``; an empty value removes every save point."""
    words = text.split()
    if len(words) % 2:
        raise ConfigError("Invalid save parameters")
    points: list[tuple[int, int]] = []
    for i in range(0, len(words), 2):
        seconds, changes = _c_strtoll_whole(words[i]), _c_strtoll_whole(words[i + 1])
        if seconds is None or changes is None or seconds < 1 or changes < 0:
            raise ConfigError("Invalid save parameters")
        points.append((seconds, changes))
    return points


def render_save(points: object) -> str:
    return " ".join(f"{s} {c}" for s, c in points)  # type: ignore[attr-defined]



# client-output-buffer-limit: per class (normal, replica, pubsub): hard, soft, soft-seconds.
_BUFFER_CLASSES: Final = {"normal": "normal", "slave": "replica", "replica": "replica", "pubsub": "pubsub"}


def parse_buffer_limits(text: str, current: object) -> dict[str, tuple[int, int, int]]:
    """Only the classes named change; the others keep their limits, as in Redis."""
    words = text.split()
    if len(words) % 4:
        raise ConfigError("Wrong number of arguments in buffer limit configuration.")
    limits = dict(current) if isinstance(current, dict) else {}
    for i in range(0, len(words), 4):
        klass = _BUFFER_CLASSES.get(words[i].lower())
        if klass is None:
            raise ConfigError("Invalid client class specified in buffer limit configuration.")
        try:
            hard, soft = parse_memory(words[i + 1]), parse_memory(words[i + 2])
        except ConfigError:
            hard = soft = -1
        seconds = _c_strtoll_whole(words[i + 3])
        if hard < 0 or soft < 0 or seconds is None or seconds < 0:
            raise ConfigError(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration."
            )
        limits[klass] = (hard, soft, seconds)
    return limits


def render_buffer_limits(limits: object) -> str:
    parts = []
    for klass, shown in (("normal", "normal"), ("replica", "slave"), ("pubsub", "pubsub")):
        hard, soft, seconds = limits[klass]  # type: ignore[index]
        parts.append(f"{shown} {hard} {soft} {seconds}")
    return " ".join(parts)


def parse_words(text: str, current: object = None) -> list[str]:
    return text.split()


def parse_replicaof(text: str, current: object = None) -> list[str]:
    """``replicaof <host> <port>`` (empty: a master)."""
    words = text.split()
    if not words:
        return []
    if len(words) != 2:
        raise ConfigError("wrong number of arguments")
    port = words[1]
    if not port.isdigit() or int(port) > 65535:
        raise ConfigError("Invalid master port")
    return words


def render_words(words: object) -> str:
    return " ".join(str(word) for word in words)  # type: ignore[attr-defined]


def parse_oom_values(text: str, current: object = None) -> list[int]:
    words = text.split()
    if len(words) != 3:
        raise ConfigError("wrong number of arguments")
    values = []
    for word in words:
        value = _c_strtoll_whole(word)
        if value is None or not -2000 <= value <= 2000:
            raise ConfigError("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
        values.append(value)
    return values


def parse_percentiles(text: str, current: object = None) -> list[float]:
    values = []
    for word in text.split():
        try:
            value = float(word)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 100.0:
            raise ConfigError("Invalid latency-tracking-info-percentiles parameters")
        values.append(value)
    return values


def render_percentiles(values: object) -> str:
    return " ".join(f"{v:g}" for v in values)  # type: ignore[attr-defined]


def parse_octal(text: str, current: object = None) -> int:
    try:
        return int(text, 8)
    except ValueError:
        raise ConfigError("argument couldn't be parsed into an integer")



def quote(text: str) -> str:
    """Redis's ``sdscatrepr`` for config values: double quotes and C escapes."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '\\"':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif char == "\a":
            out.append("\\a")
        elif char == "\b":
            out.append("\\b")
        elif 32 <= code < 127 or code > 127:
            out.append(char)
        else:
            out.append(f"\\x{code:02x}")
    out.append('"')
    return "".join(out)
