"""Bitmap rows for ``bench.run`` (the bit commands): SETBIT, GETBIT, BITCOUNT, BITPOS, BITFIELD
and BITOP under redis-benchmark.

    python -m bench.run --suite bitmaps [--repeat 3]

redis-benchmark pads ``__rand_int__`` with zeros (``000000012345``), which neither server reads
as a bit offset, so random placement goes into the key (``@random``: 100,000 bitmaps) and the
offsets are fixed. ``bitmap`` is 1 MB (its last bit set, the rest zero: a sparse bitmap, what
BITCOUNT and BITPOS scan end to end), ``dense`` 1 MB of mixed bytes; ``small:a`` and
``small:b`` are 1 KB of mixed bytes.
Every run starts from the same keys on either server.
"""

from __future__ import annotations

from bench.streams import Connection, CustomTest

BITMAP_BITS = 8 * 1024 * 1024  # a 1 MB bitmap
SMALL = bytes(range(256)) * 4  # 1 KB


def _bitmaps(port: int) -> None:
    with Connection(port) as conn:
        conn.check("DEL", "bitmap", "dense", "small:a", "small:b", "counters", "dest")
        conn.check("SETBIT", "bitmap", BITMAP_BITS - 1, 1)
        conn.check("SET", "dense", SMALL * 1024)
        conn.check("SET", "small:a", SMALL)
        conn.check("SET", "small:b", SMALL[::-1])


CUSTOM_TESTS: dict[str, CustomTest] = {
    "setbit": CustomTest(("SETBIT", "bits:__rand_int__", "1000", "1"), _bitmaps),
    "setbit_1mb": CustomTest(("SETBIT", "bitmap", "4000000", "1"), _bitmaps),
    "getbit_1mb": CustomTest(("GETBIT", "bitmap", "4000000"), _bitmaps),
    "bitcount_1kb": CustomTest(("BITCOUNT", "small:a"), _bitmaps),
    "bitcount_1mb": CustomTest(("BITCOUNT", "bitmap"), _bitmaps),
    "bitcount_1mb_dense": CustomTest(("BITCOUNT", "dense"), _bitmaps),
    "bitpos_1mb": CustomTest(("BITPOS", "bitmap", "1"), _bitmaps),
    "bitfield_incrby": CustomTest(("BITFIELD", "counters", "INCRBY", "u16", "#100", "1"),
                                  _bitmaps),
    "bitop_and_1kb": CustomTest(("BITOP", "AND", "dest", "small:a", "small:b"), _bitmaps),
}
BITMAP_TESTS = ("setbit@random", "setbit_1mb", "getbit_1mb", "bitcount_1kb", "bitcount_1mb",
                "bitcount_1mb_dense", "bitpos_1mb", "bitfield_incrby", "bitop_and_1kb")
