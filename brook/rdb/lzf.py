"""LZF, liblzf's format, which Redis uses for strings longer than 20 bytes in RDB data.

A compressed stream is a sequence of runs: a control byte below 32 starts a literal run of
control+1 bytes; otherwise its top three bits are a match length - 2 (7: one more byte adds to
it), its low five bits and the next byte a back offset - 1 (up to 8 KiB) into the output.

The compressor finds matches through a hash table of three-byte prefixes (their last position),
as liblzf does; its output is valid LZF but not byte-identical to Redis's. Both are Python loops
per input byte or run here; the compiled build runs both in C (``brook/rdb/_lzf.c``, the same
algorithms: every string longer than 20 bytes an RDB file holds goes through one of them).
"""

from __future__ import annotations

_MAX_LITERAL = 32
_MAX_OFFSET = 1 << 13
_MAX_MATCH = 264  # 7 + 255 + 2
_HASH_BITS = 14
_MIN_HASH_BITS = 8
_HASH_MULTIPLIER = 2654435761


class LzfError(ValueError):
    """Compressed data that does not decompress to the announced length."""


def _decompress(data: bytes, size: int) -> bytes:
    """The ``size`` bytes ``data`` compresses; :class:`LzfError` if it does not."""
    out = bytearray()
    pos = 0
    end = len(data)
    while pos < end:
        control = data[pos]
        pos += 1
        if control < 32:
            run = control + 1
            if pos + run > end:
                raise LzfError("literal run past the end")
            out += data[pos:pos + run]
            pos += run
        else:
            length = control >> 5
            if length == 7:
                if pos >= end:
                    raise LzfError("truncated match")
                length += data[pos]
                pos += 1
            if pos >= end:
                raise LzfError("truncated match")
            length += 2
            start = len(out) - ((control & 0x1F) << 8) - data[pos] - 1
            pos += 1
            if start < 0:
                raise LzfError("back reference before the start")
            if start + length <= len(out):
                out += out[start:start + length]
            else:  # the match overlaps what it writes: a repeated pattern
                pattern = out[start:]
                repeat = pattern * (length // len(pattern) + 1)
                out += repeat[:length]
        if len(out) > size:
            raise LzfError("output longer than announced")
    if len(out) != size:
        raise LzfError("output shorter than announced")
    return bytes(out)


def _slot(data: bytes, pos: int, bits: int) -> int:
    """The hash table slot of the three bytes at ``pos`` (Fibonacci hashing of their value)."""
    value = data[pos] << 16 | data[pos + 1] << 8 | data[pos + 2]
    return ((value * _HASH_MULTIPLIER) & 0xFFFFFFFF) >> (32 - bits)


def _table_bits(size: int) -> int:
    """The hash table's size (as a power of two) for ``size`` bytes of input: about one slot
    per byte, between 2**8 and 2**14, so a short string does not clear a large table."""
    return max(_MIN_HASH_BITS, min(_HASH_BITS, (size - 1).bit_length()))


def _compress(data: bytes, limit: int) -> bytes | None:
    """``data`` compressed, or None when that takes more than ``limit`` bytes (Redis gives
    liblzf an output buffer of ``len(data) - 4`` and stores the string plain if it is full).
    Matches are found through a table of the last position of each three-byte prefix's hash,
    as liblzf finds them (a candidate is checked, since prefixes share slots)."""
    out = bytearray()
    bits = _table_bits(len(data))
    table = [-1] * (1 << bits)
    literal_start = 0
    pos = 0
    end = len(data)
    last = end - 2  # the last position where a three-byte prefix starts
    while pos < last:
        slot = _slot(data, pos, bits)
        candidate = table[slot]
        table[slot] = pos
        offset = pos - candidate - 1
        if (candidate < 0 or offset >= _MAX_OFFSET
                or data[candidate:candidate + 3] != data[pos:pos + 3]):
            pos += 1
            continue
        # Extend the match as far as it goes (at most _MAX_MATCH, within the input).
        length = 3
        most = min(_MAX_MATCH, end - pos)
        while length < most and data[candidate + length] == data[pos + length]:
            length += 1
        _literals(out, data, literal_start, pos)
        code = length - 2
        if code < 7:
            out.append(code << 5 | offset >> 8)
        else:
            out.append(7 << 5 | offset >> 8)
            out.append(code - 7)
        out.append(offset & 0xFF)
        if len(out) > limit:
            return None
        stop = pos + length
        for inner in range(pos + 1, min(stop, last)):
            table[_slot(data, inner, bits)] = inner
        pos = literal_start = stop
    _literals(out, data, literal_start, end)
    return bytes(out) if len(out) <= limit else None


def _literals(out: bytearray, data: bytes, start: int, stop: int) -> None:
    while start < stop:
        run = min(_MAX_LITERAL, stop - start)
        out.append(run - 1)
        out += data[start:start + run]
        start += run


try:
    from brook.rdb import _lzf
except ImportError:  # the pure build
    decompress = _decompress
    compress = _compress
else:
    _lzf.set_error(LzfError)
    decompress = _lzf.decompress
    compress = _lzf.compress
