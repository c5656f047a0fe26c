"""Whether requests read with hiredis were framed exactly as Redis frames them.

hiredis parses requests at C speed but it is a *reply* parser: it accepts elements a request may
not hold and keeps no visible trace of a request cut at an element boundary. Every reader of
requests -- the connection, the AOF loader, a replica applying its master's stream -- asks the
questions here, so the answer is decided once:

- :func:`dangerous_header` -- a multibulk count of a million or more, which hiredis would
  preallocate (seconds of CPU to free): such reads go to the exact parser.
- :func:`may_hold_other_elements` and :class:`FramedGets` -- a read holding ``+ = ( ~ % >``
  may hold an element hiredis takes for a bulk string, or a request that is no array; then each
  request is compared with its own encoding before it is handed over.
- :func:`ends_at_request` -- a run of requests ends exactly at a request boundary (one line
  feed per header and two per argument, the re-encoding when values hold line feeds).
- :func:`valid_prefix` -- the strict scan of RESP arrays of bulk strings that locates the first
  bad byte of a file (the AOF, ``brook-check-aof``).

Imports: hiredis and :mod:`brook.protocol.requests` only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import hiredis

from brook.protocol.requests import ProtocolError, parse_strict_int
from brook.protocol.resp import pack_bulks

try:  # the compiled build's check in C (brook/protocol/_bulks.c), without re-encoding
    from brook.protocol._bulks import framed_end as _native_framed_end
    _FRAMED_END: Callable[[bytes | bytearray, int, object], int] | None = _native_framed_end
except ImportError:
    _FRAMED_END = None
dangerous_header = re.compile(rb"\*\d{7}").search

_STAR: Final = 0x2A
_DOLLAR: Final = 0x24


def may_hold_other_elements(data: bytes | bytearray) -> bool:
    """Whether ``data`` holds a byte that starts an element hiredis accepts in a request and
    Redis does not: ``+`` ``(`` ``=`` (read as strings), ``~`` ``%`` ``>`` (read as arrays).
    Each ``in`` is one memchr: most reads hold none and pass at once."""
    return (43 in data or 61 in data or 40 in data or 126 in data or 37 in data
            or 62 in data)


class FramedGets:
    """``Reader.gets`` for bytes that may hold a request hiredis accepts and Redis does not
    (see :func:`may_hold_other_elements`): each request is compared with the bytes it came
    from, as a client would have written it, before it is handed over (the compiled build's
    ``framed_end`` in C walks the bytes; the pure build encodes the request again); a mismatch
    raises :class:`ProtocolError`, which stops the caller before that request runs. ``data``
    starts at a request boundary."""

    __slots__ = ("data", "gets", "position")

    def __init__(self, data: bytes | bytearray, gets: object) -> None:
        self.data = data
        self.gets = gets
        self.position = 0

    def __call__(self) -> object:
        request = self.gets()  # type: ignore[operator]
        if request is False:
            return request
        if type(request) is not list:  # a map, a push, a null array
            raise ProtocolError("not an array")
        if _FRAMED_END is not None:
            end = _FRAMED_END(self.data, self.position, request)
            if end < 0:
                raise ProtocolError("not framed as bulk strings")
            self.position = end
            return request
        encoded = pack_bulks(tuple(request))  # TypeError for an element that is not bytes
        if not self.data.startswith(encoded, self.position):
            raise ProtocolError("not framed as bulk strings")
        self.position += len(encoded)
        return request


def line_feeds_of(requests: int, arguments: int) -> int:
    """The line feeds of ``requests`` arrays of ``arguments`` bulk strings in all, when no
    value holds one: one per array header, two per argument (its header and its CRLF)."""
    return requests + 2 * arguments


def ends_at_request(data: bytes, requests: int, arguments: int) -> bool:
    """Whether ``data`` is exactly the ``requests`` requests (of ``arguments`` arguments in
    all) hiredis took from it, with nothing cut after them. A read that ends with CRLF and
    holds exactly the line feeds of its requests has no cut request (a cut one ending in CRLF
    adds its own header's); line feeds inside values add some, and then the requests, encoded
    again, must make up the whole read. Counting one byte is several times cheaper than
    CRLFs."""
    if data.endswith(b"\r\n") and data.count(b"\n") == line_feeds_of(requests, arguments):
        return True
    return _exactly_requests(data, requests)


def _exactly_requests(data: bytes, count: int) -> bool:
    """Whether ``data`` is exactly ``count`` requests encoded as clients encode them."""
    if not count:
        return False
    reader = hiredis.Reader()
    reader.feed(data)
    total = 0
    for _ in range(count):
        request = reader.gets()
        if type(request) is not list:
            return False
        try:
            total += len(pack_bulks(tuple(request)))
        except TypeError:
            return False
    return total == len(data)


def _length_line(data: bytes, pos: int) -> tuple[int | None, int]:
    """The number of the ``*n`` / ``$n`` line at ``pos`` (None when it is not one, read
    strictly as the request parser reads it) and where the line ends (-1: no CRLF yet)."""
    newline = data.find(b"\r\n", pos)
    if newline < 0:
        return None, -1
    return parse_strict_int(data[pos + 1:newline]), newline


def valid_prefix(data: bytes, limit: int = -1, start: int = 0) -> tuple[int, int, str | None]:
    """Scan ``data`` as RESP arrays of bulk strings: (commands, bytes) of its longest complete
    prefix, and the reason it stops there (None at a clean end, ``"truncated"`` when the data
    ends inside a command, otherwise a description of the corruption). With ``limit`` the scan
    stops after that many commands; ``start`` is where the scan begins (offsets stay absolute)."""
    pos = start
    end = len(data)
    commands = 0
    while pos < end and commands != limit:
        start = pos
        if data[pos] != _STAR:
            return commands, start, f"expected '*', got {data[pos:pos + 1]!r}"
        count, newline = _length_line(data, pos)
        if newline < 0:
            return commands, start, "truncated"
        if count is None or count < 1:
            return commands, start, "invalid array length"
        pos = newline + 2
        for _ in range(count):
            if pos >= end:
                return commands, start, "truncated"
            if data[pos] != _DOLLAR:
                return commands, start, f"expected '$', got {data[pos:pos + 1]!r}"
            size, newline = _length_line(data, pos)
            if newline < 0:
                return commands, start, "truncated"
            if size is None or size < 0:
                return commands, start, "invalid bulk length"
            pos = newline + 2 + size
            if pos + 2 > end:
                return commands, start, "truncated"
            if data[pos:pos + 2] != b"\r\n":
                return commands, start, "bulk string not terminated by CRLF"
            pos += 2
        commands += 1
    return commands, pos, None
