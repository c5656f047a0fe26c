"""Glob patterns with Redis's exact ``stringmatchlen`` semantics (KEYS, SCAN, CONFIG GET, PSUBSCRIBE).

A pattern is translated once into a compiled :mod:`re` pattern and cached, so matching many keys
costs one C-level regex call per key. The translation reproduces every quirk of Redis's matcher:

* ``*`` matches any run of bytes, ``?`` any single byte, ``\\x`` the byte ``x`` (a trailing
  ``\\`` is a literal backslash).
* ``[...]`` matches one byte; ``[^...]`` negates; ``a-z`` is a range whose ends may be given in
  either order; ``\\x`` inside brackets is a literal that stays case-sensitive even with
  ``nocase``; a range may swallow the closing bracket (``[a-]`` is the range ``a``..``]``); an
  unterminated bracket ends at the end of the pattern; ``[]`` never matches and ``[^]`` matches
  any byte.
* Range ends and subject bytes are compared as C ``char`` values, which are signed on the
  platforms Redis runs on: ``[a-\\xff]`` is the range -1..97, i.e. bytes 0x00-0x61 and 0xff.
* ``nocase`` folds only ASCII letters (the C locale's ``tolower``), and folds range ends after
  ordering them.
* The empty subject matches only the empty pattern (``*`` does not match ``""``; callers that
  treat a lone ``*`` as "everything", as KEYS and SCAN do, check for it themselves).
* Redis stops recursing after 1000 nested ``*``: a pattern needing more never matches.

Each ``*`` is compiled as an atomic lazy group ``(?>.*?SEGMENT)``: every segment between stars
has a fixed length, so committing to its leftmost occurrence is always optimal and the regex
engine never backtracks across segments. Matching stays O(len(subject) * len(pattern)) however
many stars a client sends, as with Redis's own ``skipLongerMatches`` optimisation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

Matcher = Callable[[bytes], bool]

# Redis's recursion guard: the 1001st nested '*' fails.
_MAX_STAR_NESTING = 1000
_STAR, _BACKSLASH, _OPEN, _CLOSE, _CARET, _DASH, _QUESTION = b"*\\[]^-?"
_ALL_BYTES = (1 << 256) - 1
_UPPERCASE = ((1 << 91) - 1) ^ ((1 << 65) - 1)  # bytes 'A'..'Z'


def matches(pattern: bytes, subject: bytes, nocase: bool = False) -> bool:
    """Whether ``subject`` matches the glob ``pattern`` (Redis's ``stringmatchlen``)."""
    return matcher(pattern, nocase)(subject)


@functools.lru_cache(maxsize=512)
def matcher(pattern: bytes, nocase: bool = False) -> Matcher:
    """A compiled predicate for ``pattern`` (cached: clients repeat their patterns)."""
    if not pattern:
        return _is_empty
    segments, nested_stars = _translate(pattern, nocase)
    if nested_stars > _MAX_STAR_NESTING:
        return _never
    regex = segments[0] + b"".join(b"(?>.*?" + s + b")" for s in segments[1:-1])
    if len(segments) > 1:
        regex += b".*" + segments[-1]
    fullmatch = re.compile(regex, re.DOTALL).fullmatch
    return lambda subject: bool(subject) and fullmatch(subject) is not None


def _is_empty(subject: bytes) -> bool:
    return not subject


def _never(subject: bytes) -> bool:
    return False


def _translate(pattern: bytes, nocase: bool) -> tuple[list[bytes], int]:
    """Split the pattern at its stars into fixed-length regex segments.

    Also returns how many star runs are followed by more pattern: each of those is one level of
    recursion in Redis's matcher (a trailing star matches the rest without recursing).
    """
    segments: list[bytes] = []
    current: list[bytes] = []
    stars = 0
    length = len(pattern)
    i = 0
    while i < length:
        byte = pattern[i]
        if byte == _STAR:
            while i + 1 < length and pattern[i + 1] == _STAR:
                i += 1
            segments.append(b"".join(current))
            current = []
            stars += 1
            i += 1
        elif byte == _QUESTION:
            current.append(b".")
            i += 1
        elif byte == _OPEN:
            members, i = _bracket(pattern, i, nocase)
            current.append(_byte_class(members))
        else:
            if byte == _BACKSLASH and i + 1 < length:
                i += 1
                byte = pattern[i]
            current.append(_literal(byte, nocase))
            i += 1
    segments.append(b"".join(current))
    trailing_star = len(segments) > 1 and not segments[-1]
    return segments, stars - 1 if trailing_star else stars


def _signed(byte: int) -> int:
    """A byte as a C ``char`` (signed on x86 and ARM Linux builds of Redis)."""
    return byte - 256 if byte >= 128 else byte


def _tolower(value: int) -> int:
    """C-locale ``tolower`` on a (possibly negative) char value."""
    return value + 32 if 65 <= value <= 90 else value


def _signed_interval(start: int, end: int) -> int:
    """Bitmask of the bytes whose signed value lies in ``start..end``."""
    mask = 0
    low, high = max(start, -128), min(end, -1)
    if low <= high:  # negative chars are bytes 0x80..0xff
        mask |= ((1 << (high + 257)) - 1) ^ ((1 << (low + 256)) - 1)
    low, high = max(start, 0), min(end, 127)
    if low <= high:
        mask |= ((1 << (high + 1)) - 1) ^ ((1 << low) - 1)
    return mask


def _range_members(first: int, last: int, nocase: bool) -> int:
    start, end = _signed(first), _signed(last)
    if start > end:
        start, end = end, start
    if not nocase:
        return _signed_interval(start, end)
    start, end = _tolower(start), _tolower(end)
    if start > end:
        return 0
    # tolower(c) in start..end: non-letters and lower-case letters by their own value, upper-case
    # letters by the value of their lower-case form.
    own = _signed_interval(start, end) & ~_UPPERCASE
    folded = (_signed_interval(start - 32, end - 32)) & _UPPERCASE
    return own | folded


def _literal_members(byte: int, nocase: bool) -> int:
    mask = 1 << byte
    if nocase:
        lowered = _tolower(_signed(byte)) & 0xFF
        mask |= 1 << lowered
        if 97 <= lowered <= 122:
            mask |= 1 << (lowered - 32)
    return mask


def _bracket(pattern: bytes, i: int, nocase: bool) -> tuple[int, int]:
    """Parse the bracket starting at ``pattern[i] == '['`` the way Redis's loop walks it.

    Returns the bitmask of matching bytes and the index after the bracket.
    """
    length = len(pattern)
    i += 1
    negate = i < length and pattern[i] == _CARET
    if negate:
        i += 1
    members = 0
    while True:
        if i < length and pattern[i] == _BACKSLASH and length - i >= 2:
            i += 1
            members |= 1 << pattern[i]  # escaped: exact byte, even with nocase
        elif i < length and pattern[i] == _CLOSE:
            break
        elif i >= length:  # unterminated: the bracket ends with the pattern
            i = length - 1
            break
        elif length - i >= 3 and pattern[i + 1] == _DASH:
            members |= _range_members(pattern[i], pattern[i + 2], nocase)
            i += 2
        else:
            members |= _literal_members(pattern[i], nocase)
        i += 1
    if negate:
        members ^= _ALL_BYTES
    return members, i + 1


def _literal(byte: int, nocase: bool) -> bytes:
    if nocase and (65 <= byte <= 90 or 97 <= byte <= 122):
        return _byte_class(_literal_members(byte, True))
    return re.escape(bytes((byte,)))


def _byte_class(members: int) -> bytes:
    """A regex character class for a bitmask of bytes (``(?!)`` when empty)."""
    if members == 0:
        return b"(?!)"
    if members == _ALL_BYTES:
        return b"."
    parts: list[bytes] = []
    byte = 0
    while byte < 256:
        if members >> byte & 1:
            start = byte
            while byte + 1 < 256 and members >> (byte + 1) & 1:
                byte += 1
            if start == byte:
                parts.append(b"\\x%02x" % start)
            else:
                parts.append(b"\\x%02x-\\x%02x" % (start, byte))
        byte += 1
    return b"[" + b"".join(parts) + b"]"
