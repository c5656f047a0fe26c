"""An exact, resumable parser for client requests (no I/O).

The connection feeds complete pipelines to ``hiredis.Reader``, which is fast but lenient: it
accepts any RESP type inside a request and cannot say where a partial request begins. This parser
handles everything else, byte for byte as Redis's ``processInlineBuffer`` and
``processMultibulkBuffer`` do: inline commands (telnet, ``redis-cli`` pipes), requests split across
reads (so ``proto-max-bulk-len`` and the query-buffer limit are checked before a huge value is
buffered), clients that still have to authenticate (tighter limits), and malformed input, where
it produces Redis's exact ``Protocol error`` text.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

INLINE_MAX_SIZE: Final = 64 * 1024
UNAUTH_MAX_MULTIBULK: Final = 10
UNAUTH_MAX_BULK: Final = 16384
INT_MAX: Final = 2**31 - 1


class ProtocolError(Exception):
    """Malformed input: the reply is ``-ERR Protocol error: <text>`` and the connection closes."""


def is_request(value: object) -> bool:
    """What hiredis read is a request: an array of byte strings (nothing else ever runs,
    from a client or from the append-only file)."""
    return isinstance(value, list) and all(type(element) is bytes for element in value)


def short_decimal(text: bytes) -> int:
    """A canonical non-negative decimal of 1 to 18 digits (no sign, no leading zero) as its
    value, -1 for anything else (which :func:`parse_strict_int` judges in full). The common
    case of every integer argument and stored counter: compiled, the loop runs in C on an
    ``i64`` that 18 digits cannot overflow, where ``int(bytes)`` takes the generic parser."""
    size = len(text)
    if size == 0 or size > 18 or (text[0] == 48 and size > 1):
        return -1
    value: i64 = 0
    for i in range(size):
        digit = text[i] - 48
        if digit < 0 or digit > 9:
            return -1
        value = value * 10 + digit
    return value


def parse_strict_int(digits: bytes) -> int | None:
    """Redis's ``string2ll``: optional '-', no '+', no leading zeros, no spaces, 64-bit range."""
    value = short_decimal(digits)
    if value >= 0:
        return value
    if not digits or len(digits) > 20:
        return None
    body = digits[1:] if digits[:1] == b"-" else digits
    if not body.isdigit() or (len(body) > 1 and body[:1] == b"0"):
        return None
    if digits == b"-0":
        return None
    value = int(digits)
    if not -(2**63) <= value < 2**63:
        return None
    return value


_ESCAPES: Final = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("a"): 7}
_SPACES: Final = b" \n\r\t\v\f"  # isspace(): what sdssplitargs skips between arguments and after quotes
_UNQUOTED_ENDS: Final = b" \n\r\t"  # what ends an unquoted argument there (not \v or \f)
_HEX: Final = b"0123456789abcdefABCDEF"


def split_inline_args(line: bytes) -> list[bytes] | None:
    """Redis's ``sdssplitargs``: split on spaces, honour "..." (with escapes) and '...' quoting.

    Returns None for unbalanced quotes, which Redis reports as a protocol error.
    """
    args: list[bytes] = []
    # Redis splits a C string: a NUL byte ends the line (and so leaves a quote unbalanced).
    nul = line.find(b"\x00")
    if nul >= 0:
        line = line[:nul]
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in b" \n\r\t\v\f":
            i += 1
        if i >= n:
            return args
        current = bytearray()
        in_double = in_single = False
        while True:
            if in_double:
                if i >= n:
                    return None
                ch = line[i]
                if (
                    ch == 0x5C
                    and i + 3 < n
                    and line[i + 1] == ord("x")
                    and line[i + 2] in _HEX
                    and line[i + 3] in _HEX
                ):
                    current.append(int(line[i + 2 : i + 4], 16))
                    i += 3
                elif ch == 0x5C and i + 1 < n:
                    i += 1
                    current.append(_ESCAPES.get(line[i], line[i]))
                elif ch == ord('"'):
                    if i + 1 < n and line[i + 1] not in _SPACES:
                        return None
                    i += 1
                    break
                else:
                    current.append(ch)
            elif in_single:
                if i >= n:
                    return None
                ch = line[i]
                if ch == 0x5C and i + 1 < n and line[i + 1] == ord("'"):
                    i += 1
                    current.append(ord("'"))
                elif ch == ord("'"):
                    if i + 1 < n and line[i + 1] not in _SPACES:
                        return None
                    i += 1
                    break
                else:
                    current.append(ch)
            else:
                if i >= n:
                    break
                ch = line[i]
                if ch in _UNQUOTED_ENDS:
                    break
                if ch == ord('"'):
                    in_double = True
                elif ch == ord("'"):
                    in_single = True
                else:
                    current.append(ch)
            i += 1
        args.append(bytes(current))


class RequestParser:
    """Buffers input and returns one request (a list of bytes) at a time.

    The state of a partly received multibulk request is kept between calls, so a value of many
    megabytes arriving in small reads is scanned once, not once per read.
    """

    __slots__ = ("buf", "pos", "_args", "_remaining", "_bulk_len")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.pos = 0
        self._args: list[bytes] | None = None  # arguments of a partly parsed multibulk request
        self._remaining = 0  # arguments still expected
        self._bulk_len = -1  # length of the bulk being read, -1 while its header is awaited

    def feed(self, data: bytes) -> None:
        if self.pos and self.pos == len(self.buf):
            self.buf.clear()
            self.pos = 0
        elif self.pos > 65536 and self.pos * 2 > len(self.buf):
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += data

    def buffered(self) -> int:
        """Bytes received but not yet returned as requests (the query buffer's size)."""
        return len(self.buf) - self.pos

    def is_idle(self) -> bool:
        """True when no byte is buffered, so the caller may switch back to its fast path."""
        return self.pos == len(self.buf) and self._args is None

    def next_request(
        self, max_bulk_len: int, auth_required: bool, keep_empty: bool = False
    ) -> list[bytes] | None:
        """The next complete request, or None when more input is needed.

        Empty requests (``*0``, ``*-1``, blank inline lines) are skipped, as Redis does, unless
        ``keep_empty`` asks for an empty multibulk to be returned as ``[]`` (to step over
        requests one by one, as hiredis counts them).
        Raises :class:`ProtocolError` with Redis's text for malformed input.
        """
        buf = self.buf
        while True:
            if self._args is None:
                if self.pos >= len(buf):
                    return None
                if buf[self.pos] != 0x2A:  # not '*': an inline command
                    request = self._inline()
                    if request is None:
                        return None
                    if request:
                        return request
                    continue
                header = self._multibulk_header(auth_required)
                if header < 0:
                    return None
                if header == 0:  # no elements: nothing was started
                    if keep_empty:
                        return []
                    continue  # an empty multibulk: nothing to run
            request = self._bulks(max_bulk_len, auth_required)
            if request is None:
                return None
            return request

    def _inline(self) -> list[bytes] | None:
        buf = self.buf
        # Redis looks for the newline with strchr, which stops at a NUL byte: a NUL before the
        # newline leaves the request incomplete until it grows past the inline limit.
        nul = buf.find(b"\x00", self.pos)
        newline = buf.find(b"\n", self.pos, nul if nul >= 0 else len(buf))
        if newline < 0:
            if len(buf) - self.pos > INLINE_MAX_SIZE:
                raise ProtocolError("too big inline request")
            return None
        end = newline - 1 if newline > self.pos and buf[newline - 1] == 0x0D else newline
        line = bytes(buf[self.pos : end])
        self.pos = newline + 1
        args = split_inline_args(line)
        if args is None:
            raise ProtocolError("unbalanced quotes in request")
        return args

    def _line_end(self) -> int:
        """Where the header line at ``pos`` ends, as Redis finds it: its first CR (strchr, so
        a NUL before it means no line yet), with one more byte after it, which Redis skips
        unchecked. -1: no CR yet (the line may be too long); -2: the byte after it is not
        here yet."""
        buf = self.buf
        end = buf.find(b"\r", self.pos)
        if end < 0 or buf.find(b"\x00", self.pos, end) >= 0:
            return -1
        return end if end + 1 < len(buf) else -2

    def _too_long(self, end: int) -> bool:
        """Redis's check while a header line has no end yet (see _line_end): more than the
        inline limit buffered."""
        return end == -1 and len(self.buf) - self.pos > INLINE_MAX_SIZE

    def _multibulk_header(self, auth_required: bool) -> int:
        """Read a ``*<count>`` line: -1 when it is incomplete, else the elements it starts
        (0: an empty or null multibulk, which starts nothing)."""
        buf = self.buf
        newline = self._line_end()
        if self._too_long(newline):
            raise ProtocolError("too big mbulk count string")
        if newline < 0:
            return -1
        count = parse_strict_int(bytes(buf[self.pos + 1 : newline]))
        if count is None or count > INT_MAX:
            raise ProtocolError("invalid multibulk length")
        if count > UNAUTH_MAX_MULTIBULK and auth_required:
            raise ProtocolError("unauthenticated multibulk length")
        self.pos = newline + 2
        if count <= 0:
            return 0
        self._args = []
        self._remaining = count
        self._bulk_len = -1
        return count

    def _bulks(self, max_bulk_len: int, auth_required: bool) -> list[bytes] | None:
        buf = self.buf
        args = self._args
        assert args is not None
        while self._remaining:
            if self._bulk_len < 0:
                newline = self._line_end()
                if self._too_long(newline):
                    raise ProtocolError("too big bulk count string")
                if newline < 0:
                    return None
                if buf[self.pos] != 0x24:  # '$'
                    # Redis's %c writes the byte as it is (resp.error writes it back).
                    got = bytes(buf[self.pos : self.pos + 1]).decode("utf-8", "surrogateescape")
                    raise ProtocolError(f"expected '$', got '{got}'")
                length = parse_strict_int(bytes(buf[self.pos + 1 : newline]))
                if length is None or length < 0 or length > max_bulk_len:
                    raise ProtocolError("invalid bulk length")
                if length > UNAUTH_MAX_BULK and auth_required:
                    raise ProtocolError("unauthenticated bulk length")
                self.pos = newline + 2
                self._bulk_len = length
            end = self.pos + self._bulk_len
            if len(buf) < end + 2:
                return None
            args.append(bytes(buf[self.pos : end]))
            self.pos = end + 2
            self._bulk_len = -1
            self._remaining -= 1
        self._args = None
        return args
