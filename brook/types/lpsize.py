"""The byte size a Redis stream node's listpack would have, element by element.

Redis starts a new stream node when ``lpBytes(tail) + <the new entry's string bytes>`` reaches
``stream-node-max-bytes`` (``streamAppendItem``), so where nodes end (and so what an
approximate ``MAXLEN ~``/``MINID ~`` trim removes) depends on the exact listpack encoding of
every element: integers in 1 to 9 bytes, strings with a 1, 2 or 5 byte header, each element
followed by a 1 to 5 byte back-length (``listpack.c``). Brook stores nodes its own way but keeps
this count for the open tail node, so its nodes end where Redis's do.
"""

from __future__ import annotations

from typing import Final

from brook.protocol.requests import parse_strict_int, short_decimal

LISTPACK_EMPTY: Final = 7  # header (total bytes + element count) and the end byte


def backlen_size(encoded: int) -> int:
    """Bytes of the back-length that follows an element of ``encoded`` bytes."""
    if encoded <= 127:
        return 1
    if encoded < 16383:
        return 2
    if encoded < 2097151:
        return 3
    if encoded < 268435455:
        return 4
    return 5


def int_size(value: int) -> int:
    """Bytes of an integer element (encoding, value and back-length)."""
    if 0 <= value <= 127:
        return 2
    if -4096 <= value <= 4095:
        return 3
    if -32768 <= value <= 32767:
        return 4
    if -8388608 <= value <= 8388607:
        return 5
    if -2147483648 <= value <= 2147483647:
        return 6
    return 10


def string_size(item: bytes) -> int:
    """Bytes of an element appended as a string: stored as an integer when it reads as one
    (``lpStringToInt64``, the rules of ``string2ll``)."""
    n = len(item)
    if n < 21 and (item.isdigit() or item[:1] == b"-"):
        value = parse_strict_int(item)
        if value is not None:
            return int_size(value)
    if n < 64:
        return n + 2
    encoded = n + 2 if n < 4096 else n + 5
    return encoded + backlen_size(encoded)


def delta_size(delta: int) -> int:
    """Bytes of an ID delta from the master entry, stored as a wrapped int64."""
    delta &= (1 << 64) - 1
    return int_size(delta - (1 << 64) if delta >= 1 << 63 else delta)


def master_size(names: list[bytes]) -> int:
    """A new node: the empty listpack plus the master entry (count 1, deleted 0, the number
    of fields, the field names, the terminating 0)."""
    return LISTPACK_EMPTY + 2 + 2 + int_size(len(names)) + sum(map(string_size, names)) + 2


def values_size(items: list[bytes], start: int = 0, step: int = 1) -> int:
    """:func:`string_size` summed over ``items[start::step]`` (no slice is built); inlined
    for the XADD path, where plain digits (counters, readings) are common and take the short
    way."""
    total = 0
    index = start
    end = len(items)
    while index < end:  # (a range with a variable step is not compiled into a C loop)
        item = items[index]
        index += step
        n = len(item)
        value = short_decimal(item)  # up to 18 digits, no sign, no leading zero: an int64
        if value >= 0:
            total += 2 if value <= 127 else 3 if value <= 4095 else 4 if value <= 32767 \
                else 5 if value <= 8388607 else 6 if value <= 2147483647 else 10
        elif n < 19 and (n == 0 or item[0] != 45):
            total += n + 2  # short, unsigned and not canonical digits: cannot read as an int
        else:
            total += string_size(item)
    return total


def same_fields(fields: list[bytes], names: list[bytes]) -> bool:
    """Redis's SAMEFIELDS test: are the names of ``fields`` (a flat field/value list) exactly
    ``names``? Compared pairwise, without building the slice of names."""
    if len(fields) != 2 * len(names):
        return False
    return all(fields[2 * k] == names[k] for k in range(len(names)))


def entry_size(ms_delta: int, seq_delta: int, fields: list[bytes], same_fields: bool) -> int:
    """An entry appended to a node: flags, ID deltas, [field count and names,] values and the
    element count (``lp-count``)."""
    nfields = len(fields) >> 1
    size = 2 + values_size(fields, 1, 2)
    size += 2 if 0 <= ms_delta <= 127 else delta_size(ms_delta)
    size += 2 if 0 <= seq_delta <= 127 else delta_size(seq_delta)
    if same_fields:
        return size + int_size(nfields + 3)
    return size + int_size(nfields) + values_size(fields, 0, 2) + int_size(2 * nfields + 4)


# Live counts after which the master entry's count needs more bytes (see int_size).
_COUNT_GROWTH: Final = {127: 1, 4095: 1, 32767: 1, 8388607: 1, 2147483647: 4}


def appended_size(ms_delta: int, seq_delta: int, fields: list[bytes], names: list[bytes],
                  live: int) -> int:
    """What appending an entry adds to an open node with master field ``names`` and ``live``
    live entries: the entry (:func:`entry_size`) and the growth of the master's count. It runs
    on every XADD, so the common shape (the master's fields, small deltas) takes a short way."""
    if same_fields(fields, names):
        nfields = len(names)
        size = values_size(fields, 1, 2) + (6 if nfields < 125 else int_size(nfields + 3) + 4)
    else:
        return entry_size(ms_delta, seq_delta, fields, False) + _COUNT_GROWTH.get(live, 0)
    if not 0 <= ms_delta <= 127:
        size += delta_size(ms_delta) - 2
    if not 0 <= seq_delta <= 127:
        size += delta_size(seq_delta) - 2
    return size + 2 + (_COUNT_GROWTH.get(live, 0) if live >= 127 else 0)
