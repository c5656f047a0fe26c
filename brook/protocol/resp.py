"""RESP2/RESP3 reply encoders.

Handlers return replies already encoded as bytes: the dispatcher then only has to append them to
the connection's output buffer. The common replies (OK, integers, bulk strings) are built with a
single ``%`` format; richer values go through :func:`encode`, which knows the protocol version.

Marker types say what a Python value means on the wire where RESP3 and RESP2 differ: a
:class:`Map` is a RESP3 map (a flat array in RESP2), a :class:`RSet` a RESP3 set, a
:class:`Double` a RESP3 double (a bulk string in RESP2), and so on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Final

import hiredis
from mypy_extensions import mypyc_attr

from brook.protocol.grisu import digits_of

try:  # the compiled build's C twin of format_double
    from brook.protocol._double_text import format_double as _native_format_double
    _NATIVE_FORMAT_DOUBLE: Callable[[float], bytes] | None = _native_format_double
except ImportError:
    _NATIVE_FORMAT_DOUBLE = None

try:  # the compiled build's arrays of bulk strings, in C (brook/protocol/_bulks.c)
    from brook.protocol._bulks import pack_bulks as _native_pack_bulks
    pack_bulks: Callable[[tuple[bytes, ...]], bytes] = _native_pack_bulks
except ImportError:
    pack_bulks = hiredis.pack_command  # type: ignore[assignment]

OK: Final = b"+OK\r\n"
PONG: Final = b"+PONG\r\n"
QUEUED: Final = b"+QUEUED\r\n"
NULL_BULK: Final = b"$-1\r\n"
NULL_ARRAY: Final = b"*-1\r\n"
NULL3: Final = b"_\r\n"
EMPTY_ARRAY: Final = b"*0\r\n"
EMPTY_BULK: Final = b"$0\r\n\r\n"
ZERO: Final = b":0\r\n"
ONE: Final = b":1\r\n"

_SMALL_INTS: Final = [b":%d\r\n" % i for i in range(-1, 10001)]


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class Status(bytes):
    """A simple string (``+OK``)."""


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class Verbatim(bytes):
    """A verbatim string (RESP3 ``=``, format ``txt``); a bulk string in RESP2."""


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class Double(float):
    """A double (RESP3 ``,``); a bulk string in RESP2."""


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class Map(dict):
    """A map (RESP3 ``%``); a flat key/value array in RESP2."""


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class RSet(list):
    """A set (RESP3 ``~``); an array in RESP2."""


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class Push(list):
    """An out-of-band push message (RESP3 ``>``); an array in RESP2."""


class NullArray:
    """The null array: ``*-1`` in RESP2, ``_`` in RESP3."""


@mypyc_attr(native_class=False)  # a builtin's subclass stays a Python class
class ErrorReply(str):
    """An error, to be embedded in an array (e.g. a transaction's EXEC reply)."""



def integer(n: int) -> bytes:
    if -1 <= n <= 10000:
        return _SMALL_INTS[n + 1]
    return b":%d\r\n" % n


# "$<n>\r\n" for small n: concatenating a cached header is cheaper than %-formatting.
BULK_HEADERS: Final = [b"$%d\r\n" % n for n in range(4096)]


def bulk(value: bytes | bytearray) -> bytes:
    size = len(value)
    if size < 4096:
        return BULK_HEADERS[size] + value + b"\r\n"
    return b"$%d\r\n%s\r\n" % (size, value)


def bulk_or_null(value: bytes | bytearray | None, proto: int) -> bytes:
    if value is None:
        return NULL_BULK if proto == 2 else NULL3
    return b"$%d\r\n%s\r\n" % (len(value), value)


def null(proto: int) -> bytes:
    return NULL_BULK if proto == 2 else NULL3


def null_array(proto: int) -> bytes:
    return NULL_ARRAY if proto == 2 else NULL3


def simple(text: str | bytes) -> bytes:
    if isinstance(text, str):
        text = text.encode()
    return b"+%s\r\n" % text


def error(message: str) -> bytes:
    """Encode an error as Redis's addReplyErrorFormat: CR/LF at either end are trimmed, and
    inside the text, where they would break framing, they become spaces."""
    if "\r" in message or "\n" in message:
        message = message.strip("\r\n").replace("\r", " ").replace("\n", " ")
    return b"-%s\r\n" % message.encode("utf-8", "surrogateescape")


def array_of_bulks(items: Iterable[bytes]) -> bytes:
    """An array of bulk strings: the framing a client gives a request, so C writes it
    (:data:`pack_bulks`: the compiled build's own, else hiredis's ``pack_command``; a third of
    the Python formatting's cost); a ``bytearray`` element (a string changed in place) takes
    the Python path."""
    elements = tuple(items)
    try:
        return pack_bulks(elements)
    except TypeError:
        parts = [b"$%d\r\n%s\r\n" % (len(v), v) for v in elements]
        return b"*%d\r\n%s" % (len(parts), b"".join(parts))


def set_of_bulks(items: Iterable[bytes], proto: int) -> bytes:
    """A set reply (SMEMBERS, SINTER...): an array in RESP2, a ``~`` set in RESP3."""
    parts = [b"$%d\r\n%s\r\n" % (len(v), v) for v in items]
    return b"%s%d\r\n%s" % (b"*" if proto == 2 else b"~", len(parts), b"".join(parts))


def array_of_bulks_or_nulls(items: Iterable[bytes | None], proto: int) -> bytes:
    nul = NULL_BULK if proto == 2 else NULL3
    parts = [nul if v is None else b"$%d\r\n%s\r\n" % (len(v), v) for v in items]
    return b"*%d\r\n%s" % (len(parts), b"".join(parts))


def array(encoded_items: list[bytes]) -> bytes:
    """An array whose elements are already encoded."""
    return b"*%d\r\n%s" % (len(encoded_items), b"".join(encoded_items))


def format_double(value: float) -> bytes:
    """A double as Redis's d2string writes it (:func:`format_double_twin`), in C when the
    compiled build has brook/protocol/_double_text.c: a score costs 0.2 us there against
    some 2 us for the twin's Grisu2 digits, and a ZRANGE ... WITHSCORES writes one per
    member."""
    if _NATIVE_FORMAT_DOUBLE is not None:
        return _NATIVE_FORMAT_DOUBLE(value)
    return format_double_twin(value)


def format_double_twin(value: float) -> bytes:
    """A double as Redis's d2string writes it (every double reply, RESP2 and RESP3): integral
    values up to 2**62 as integers, others in fpconv_dtoa's Grisu2 digits
    (:mod:`brook.protocol.grisu`: round-trip, shortest but for a few in a thousand) laid out
    by its rules (plain up to 7 places of zeros, else ``1.5e+20``/``1.234e-4``)."""
    if value != value:
        return b"nan"
    if value == 0:
        return b"-0" if math.copysign(1.0, value) < 0 else b"0"
    if math.isinf(value):
        return b"inf" if value > 0 else b"-inf"
    if -_HALF_LLONG <= value <= _HALF_LLONG and value == int(value):
        return b"%d" % int(value)
    digits, exponent = digits_of(value)
    negative = value < 0
    count = len(digits)
    magnitude = abs(exponent + count - 1)
    if exponent >= 0 and magnitude < count + 7:
        body = digits + "0" * exponent
    elif exponent < 0 and (exponent > -7 or magnitude < 4):
        point = count + exponent
        body = ("0." + "0" * -point + digits if point <= 0
                else digits[:point] + "." + digits[point:])
    else:
        count = min(count, 18 - negative)
        body = digits[0] + ("." + digits[1:count] if count > 1 else "")
        body += ("e-" if exponent + count - 1 < 0 else "e+") + str(magnitude)
    return (("-" if negative else "") + body).encode()


# (double)(LLONG_MAX / 2): the largest magnitude double2ll turns into an integer.
_HALF_LLONG: Final = float((2**63 - 1) // 2)


def encode(value: object, proto: int) -> bytes:
    """Encode any reply value (see the marker types above) for protocol version ``proto``."""
    out: list[bytes] = []
    _encode_into(value, proto, out)
    return b"".join(out)


def _encode_into(value: object, proto: int, out: list[bytes]) -> None:
    kind = type(value)
    if kind is bytes:
        out.append(b"$%d\r\n%s\r\n" % (len(value), value))  # type: ignore[arg-type]
    elif kind is int:
        out.append(b":%d\r\n" % value)  # type: ignore[str-format]
    elif kind is str:
        data = value.encode("utf-8", "surrogateescape")  # type: ignore[attr-defined,union-attr]
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    elif kind is list or kind is tuple:
        out.append(b"*%d\r\n" % len(value))  # type: ignore[arg-type]
        for item in value:  # type: ignore[attr-defined,union-attr]
            _encode_into(item, proto, out)
    elif value is None:
        out.append(NULL_BULK if proto == 2 else NULL3)
    elif kind is Status:
        out.append(b"+%s\r\n" % value)  # type: ignore[str-format]
    elif kind is Map or kind is dict:
        items = value.items()  # type: ignore[attr-defined,union-attr]
        if proto == 2:
            out.append(b"*%d\r\n" % (2 * len(items)))
        else:
            out.append(b"%%%d\r\n" % len(items))
        for key, item in items:
            _encode_into(key, proto, out)
            _encode_into(item, proto, out)
    elif kind is RSet:
        out.append((b"*%d\r\n" if proto == 2 else b"~%d\r\n") % len(value))  # type: ignore[arg-type,operator]
        for item in value:  # type: ignore[attr-defined,union-attr]
            _encode_into(item, proto, out)
    elif kind is Push:
        out.append((b"*%d\r\n" if proto == 2 else b">%d\r\n") % len(value))  # type: ignore[arg-type,operator]
        for item in value:  # type: ignore[attr-defined,union-attr]
            _encode_into(item, proto, out)
    elif kind is Double or kind is float:
        text = format_double(value)  # type: ignore[arg-type]
        if proto == 2:
            out.append(b"$%d\r\n%s\r\n" % (len(text), text))
        else:
            out.append(b",%s\r\n" % text)
    elif kind is bool:
        if proto == 2:
            out.append(ONE if value else ZERO)
        else:
            out.append(b"#t\r\n" if value else b"#f\r\n")
    elif kind is Verbatim:
        if proto == 2:
            out.append(b"$%d\r\n%s\r\n" % (len(value), value))  # type: ignore[arg-type]
        else:
            out.append(b"=%d\r\ntxt:%s\r\n" % (len(value) + 4, value))  # type: ignore[arg-type]
    elif kind is NullArray:
        out.append(NULL_ARRAY if proto == 2 else NULL3)
    elif kind is ErrorReply:
        out.append(error(value))  # type: ignore[arg-type]
    elif kind is bytearray or kind is memoryview:
        out.append(b"$%d\r\n%s\r\n" % (len(value), value))  # type: ignore[arg-type]
    else:
        raise TypeError(f"cannot encode {kind.__name__} as a reply")
