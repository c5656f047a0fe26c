"""Bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO), LCS and
SUBSTR: parity with Redis for replies, error texts, encodings, notifications, WATCH and dirty
counts. The cases of Redis's own unit/bitops, unit/bitfield and the LCS and SUBSTR tests of
unit/type/string are here, with bad input of every kind.

BITOP's DIFF, DIFF1, ANDOR and ONE are Redis 8.2's; neither Redis these tests run against has
them, so those tests run against Brook only, with the values Redis 8.2 documents.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from brook.types.bits import bit_count, first_bit
from tests.conftest import NOT_INTEGER, WRONGTYPE, ServerProcess, error_of, run, start_brook

BAD_OFFSET = "bit offset is not an integer or out of range"
BAD_BIT = "bit is not an integer or out of range"
BAD_TYPE = ("Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported "
            "but i64 is.")
SYNTAX = "syntax error"


@pytest.fixture
def r(server: ServerProcess) -> Iterator[redis.Redis]:
    client = server.client(protocol=2)
    yield client
    client.close()




def changes(r: redis.Redis) -> int:
    return int(r.info("persistence")["rdb_changes_since_last_save"])


def bits_of(data: bytes) -> str:
    """A string as Redis numbers its bits: the high bit of byte 0 first."""
    return "".join(f"{byte:08b}" for byte in data)


# ---------------------------------------------------------------------------------------------
# SETBIT / GETBIT
# ---------------------------------------------------------------------------------------------


def test_setbit_returns_the_old_bit_and_grows_the_string(r):
    assert r.setbit("k", 7, 1) == 0
    assert r.get("k") == b"\x01"
    assert r.setbit("k", 7, 1) == 1
    assert r.setbit("k", 7, 0) == 1
    assert r.setbit("k", 100, 1) == 0
    assert r.strlen("k") == 13
    assert bits_of(r.get("k")) == "0" * 100 + "1" + "0" * 3
    assert [r.getbit("k", i) for i in (0, 7, 99, 100, 101, 103, 104, 10**6)] == [
        0, 0, 0, 1, 0, 0, 0, 0]
    assert r.getbit("missing", 0) == 0
    assert r.getbit("missing", 2**32 - 1) == 0


def test_setbit_changes_existing_strings_and_integers(r):
    r.set("k", "@")  # 0100 0000
    assert r.setbit("k", 1, 0) == 1
    assert r.setbit("k", 7, 1) == 0
    assert r.get("k") == b"\x01"
    r.set("n", 1)  # '1' is 0011 0001
    assert r.object("encoding", "n") == b"int"
    assert [r.getbit("n", i) for i in range(8)] == [0, 0, 1, 1, 0, 0, 0, 1]
    assert r.getbit("n", 8) == 0
    assert r.setbit("n", 6, 1) == 0
    assert r.get("n") == b"3"
    assert r.object("encoding", "n") == b"raw"  # written in place, as Redis reports it


@pytest.mark.parametrize("value", ["short", "x" * 60])
def test_setbit_leaves_a_raw_string(r, value):
    r.set("k", value)
    r.setbit("k", 0, 0)  # no change, still unshared as in Redis
    assert r.object("encoding", "k") == b"raw"
    r.setbit("fresh", 3, 1)
    assert r.object("encoding", "fresh") == b"raw"


def test_setbit_keeps_the_ttl(r):
    r.set("k", "v", ex=100)
    r.setbit("k", 100, 1)
    assert 0 < r.ttl("k") <= 100


@pytest.mark.parametrize("offset", ["-1", "4294967296", "abc", "1.5", " 1", "+1", "01", "",
                                    "9223372036854775808", "#1"])
def test_setbit_and_getbit_bad_offsets(r, offset):
    assert error_of(r, "SETBIT", "k", offset, "1") == BAD_OFFSET
    assert error_of(r, "GETBIT", "k", offset) == BAD_OFFSET
    assert r.exists("k") == 0


@pytest.mark.parametrize("bit", ["2", "-1", "a", "1.0", "", "10"])
def test_setbit_bad_bit_values(r, bit):
    assert error_of(r, "SETBIT", "k", "0", bit) == BAD_BIT
    assert r.exists("k") == 0


def test_setbit_largest_offset(r):
    assert r.setbit("k", 2**32 - 1, 1) == 0
    assert r.strlen("k") == 2**29
    assert r.getbit("k", 2**32 - 1) == 1
    assert r.bitcount("k") == 1
    assert r.bitpos("k", 1) == 2**32 - 1


def test_bit_offsets_follow_proto_max_bulk_len(r):
    old = r.config_get("proto-max-bulk-len")["proto-max-bulk-len"]
    try:
        r.config_set("proto-max-bulk-len", 1024 * 1024)
        assert error_of(r, "SETBIT", "k", 8 * 1024 * 1024, 1) == BAD_OFFSET
        assert error_of(r, "GETBIT", "k", 8 * 1024 * 1024) == BAD_OFFSET
        assert error_of(r, "BITFIELD", "k", "SET", "u8", 8 * 1024 * 1024, 1) == BAD_OFFSET
        assert error_of(r, "BITFIELD", "k", "GET", "u8", "#1048576") == BAD_OFFSET
        assert r.setbit("k", 8 * 1024 * 1024 - 1, 1) == 0
        assert r.strlen("k") == 1024 * 1024
        assert run(r, "BITFIELD", "k", "GET", "u8", "#1048575") == [1]
    finally:
        r.config_set("proto-max-bulk-len", old)


def test_the_aof_replays_offsets_beyond_a_lowered_limit(tmp_path: Path):
    """A replayed command obeys its source (Redis's mustObeyClient): bits written under one
    proto-max-bulk-len load under a smaller one, while clients are held to it."""
    aof = ("--appendonly", "yes", "--appendfsync", "always")
    proc = start_brook(tmp_path, *aof)
    try:
        client = proc.client()
        client.setbit("bm", 9_000_000, 1)
        run(client, "BITFIELD", "bf", "SET", "u8", "#1200000", 255)
        client.close()
    finally:
        proc.stop()
    proc = start_brook(tmp_path, *aof, "--proto-max-bulk-len", "1mb")
    try:
        client = proc.client()
        assert client.getbit("bm", 8_000_000) == 0  # inside the limit
        assert client.strlen("bm") == 1_125_001
        assert client.bitpos("bm", 1) == 9_000_000
        assert client.strlen("bf") == 1_200_001
        assert error_of(client, "GETBIT", "bm", 9_000_000) == BAD_OFFSET
        client.close()
    finally:
        proc.stop()


def test_bit_commands_against_other_types(r):
    r.rpush("l", "a")
    for args in (("SETBIT", "l", 0, 1), ("GETBIT", "l", 0), ("BITCOUNT", "l"),
                 ("BITCOUNT", "l", 0, 1), ("BITCOUNT", "l", 0, 1, "BIT"), ("BITPOS", "l", 1),
                 ("BITPOS", "l", 0, 0, -1, "BIT"), ("BITFIELD", "l", "GET", "u8", 0),
                 ("BITFIELD", "l", "SET", "u8", 0, 1), ("BITFIELD_RO", "l", "GET", "u8", 0),
                 ("BITFIELD", "l"), ("BITOP", "AND", "d", "l"), ("BITOP", "NOT", "d", "l"),
                 ("BITOP", "OR", "d", "x", "l")):
        assert error_of(r, *args) == WRONGTYPE, args
    assert r.lrange("l", 0, -1) == [b"a"]
    assert r.exists("d") == 0
    r.set("d", "keep")
    assert error_of(r, "BITOP", "AND", "d", "l") == WRONGTYPE
    assert r.get("d") == b"keep"
    assert r.bitop("AND", "l", "d") == 4  # a non-string destination is replaced
    assert r.get("l") == b"keep"


# ---------------------------------------------------------------------------------------------
# BITCOUNT
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "\xaa", "\x00\x00\xff", "foobar", "123", "\xff" * 99])
def test_bitcount_vectors(r, value):
    data = value.encode("latin-1")
    r.set("k", data)
    assert r.bitcount("k") == bits_of(data).count("1")


def test_bitcount_fuzzing_with_ranges(r):
    rng = random.Random(7)
    for _ in range(60):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        r.set("k", data)
        size = len(data)
        start, end = rng.randrange(-size - 3, size + 3), rng.randrange(-size - 3, size + 3)
        lo, hi = (start + size if start < 0 else start), (end + size if end < 0 else end)
        lo, hi = max(lo, 0), min(max(hi, 0), size - 1)
        expected = 0 if (start < 0 and end < 0 and start > end) or lo > hi else bits_of(
            data[lo : hi + 1]).count("1")
        assert r.bitcount("k", start, end) == expected, (data, start, end)
        bits = bits_of(data)
        start, end = rng.randrange(-8 * size - 9, 8 * size + 9), rng.randrange(
            -8 * size - 9, 8 * size + 9)
        lo, hi = (start + 8 * size if start < 0 else start), (end + 8 * size if end < 0 else end)
        lo, hi = max(lo, 0), min(max(hi, 0), 8 * size - 1)
        expected = 0 if (start < 0 and end < 0 and start > end) or lo > hi else bits[
            lo : hi + 1].count("1")
        assert run(r, "BITCOUNT", "k", start, end, "BIT") == expected, (data, start, end)


def test_bitcount_ranges(r):
    r.set("s", "foobar")
    assert r.bitcount("s", 0, -1) == 26
    assert r.bitcount("s", 1, -2) == 18
    assert r.bitcount("s", -2, 1) == 0
    assert r.bitcount("s", 0, 1000) == 26
    assert r.bitcount("s", -1000, 0) == 4
    assert r.bitcount("s", -1, -2) == 0
    assert r.bitcount("s", 1, 1) == 6
    assert run(r, "BITCOUNT", "s", 5, 30, "BIT") == 17
    assert run(r, "BITCOUNT", "s", 5, 30, "bIt") == 17
    assert run(r, "BITCOUNT", "s", 0, -1, "byte") == 26
    assert run(r, "BITCOUNT", "s", -1, -1, "BIT") == 0
    assert run(r, "BITCOUNT", "s", 47, 47, "BIT") == 0
    assert run(r, "BITCOUNT", "s", 46, 46, "BIT") == 1
    assert run(r, "BITCOUNT", "s", 1, 6, "BIT") == 4
    assert run(r, "BITCOUNT", "s", 3, 3, "BIT") == 0
    assert run(r, "BITCOUNT", "s", 2, 2, "BIT") == 1
    r.set("misaligned", b"\x00\xff" * 20)
    assert r.bitcount("misaligned", 1, -1) == 160
    assert r.bitcount("misaligned", 0, 18) == 72
    r.set("int", 1234)
    assert r.bitcount("int") == 13
    assert r.bitcount("int", 1, 2) == 7
    assert r.bitcount("nokey") == 0
    assert r.bitcount("nokey", 0, 10) == 0


def test_bitcount_regression_582(r):
    r.setbit("foo", 0, 1)
    assert r.bitcount("foo", 0, 4294967296) == 1


def test_bitcount_bad_arguments(r):
    r.set("s", "foobar")
    assert error_of(r, "BITCOUNT", "s", 0) == SYNTAX
    assert error_of(r, "BITCOUNT", "s", 0, 1, "bit", "x") == SYNTAX
    assert error_of(r, "BITCOUNT", "s", 0, 1, "bits") == SYNTAX
    assert error_of(r, "BITCOUNT", "s", "a", "b") == NOT_INTEGER
    assert error_of(r, "BITCOUNT", "s", 0, "1.5") == NOT_INTEGER
    assert error_of(r, "BITCOUNT", "s", "a", "1", "x") == NOT_INTEGER
    assert error_of(r, "BITCOUNT") == "wrong number of arguments for 'bitcount' command"


@pytest.mark.min_redis(7, 2)  # 7.0 answered 0 for a missing key before reading the arguments
def test_bitcount_and_bitpos_check_arguments_before_the_key(r):
    assert error_of(r, "BITCOUNT", "nokey", 0) == SYNTAX
    assert error_of(r, "BITCOUNT", "nokey", "a", "b") == NOT_INTEGER
    assert error_of(r, "BITCOUNT", "nokey", 0, 1, "bits") == SYNTAX
    assert error_of(r, "BITPOS", "nokey", 1, "a") == NOT_INTEGER
    assert error_of(r, "BITPOS", "nokey", 1, 0, 1, "bits") == SYNTAX
    assert error_of(r, "BITPOS", "nokey", 1, 0, "b") == NOT_INTEGER
    assert error_of(r, "BITPOS", "nokey", 1, 0, 1, "bit", "x") == SYNTAX


# ---------------------------------------------------------------------------------------------
# BITPOS
# ---------------------------------------------------------------------------------------------


def test_bitpos_basics(r):
    assert r.bitpos("nokey", 0) == 0
    assert r.bitpos("nokey", 1) == -1
    assert r.bitpos("nokey", 0, 5, 10) == 0
    r.set("k", b"\xff\xf0\x00")
    assert r.bitpos("k", 0) == 12
    r.set("k", b"\x00\xff\xf0")
    assert r.bitpos("k", 1, 0) == 8
    assert r.bitpos("k", 1, 2) == 16
    r.set("k", b"\x00\x00\x00")
    assert r.bitpos("k", 1) == -1
    r.set("k", b"\xff\xff\xff")
    assert r.bitpos("k", 0) == 24  # past the end: the string continues with zeros
    assert r.bitpos("k", 0, 0) == 24
    assert r.bitpos("k", 0, 0, -1) == -1  # an explicit end: no zero inside the range
    assert r.bitpos("k", 0, 0, -1, "BIT") == -1
    r.set("e", "")
    assert r.bitpos("e", 0) == -1
    assert r.bitpos("e", 1) == -1


def test_bitpos_with_intervals(r):
    r.set("k", b"\x00\xff\x00")
    assert [r.bitpos("k", 0, 0, -1), r.bitpos("k", 0, 1, -1), r.bitpos("k", 0, 2, -1),
            r.bitpos("k", 0, 2, 200), r.bitpos("k", 0, 1, 1)] == [0, 16, 16, 16, -1]
    assert [r.bitpos("k", 1, 0, -1), r.bitpos("k", 1, 1, -1), r.bitpos("k", 1, 2, -1),
            r.bitpos("k", 1, 2, 200), r.bitpos("k", 1, 1, 1)] == [8, 8, -1, -1, 8]
    assert r.bitpos("k", 1, -1, -3) == -1


def test_bitpos_in_bits(r):
    r.set("k", b"\x00\xff\x00")
    assert run(r, "BITPOS", "k", 1, 7, 15, "BIT") == 8
    assert run(r, "BITPOS", "k", 1, 9, 15, "BIT") == 9
    assert run(r, "BITPOS", "k", 0, 9, 15, "BIT") == -1
    assert run(r, "BITPOS", "k", 0, 9, 16, "BIT") == 16
    assert run(r, "BITPOS", "k", 0, 3, 5, "BIT") == 3
    assert run(r, "BITPOS", "k", 1, 3, 5, "BIT") == -1
    assert run(r, "BITPOS", "k", 1, -16, -9, "BIT") == 8
    assert run(r, "BITPOS", "k", 1, -15, -10, "BIT") == 9
    assert run(r, "BITPOS", "k", 0, 8, 8, "byte") == -1
    assert run(r, "BITPOS", "k", 1, 1, 1, "BYTE") == 8
    r.set("k", b"\xff\xff\xff")
    assert run(r, "BITPOS", "k", 0, 0, -1, "BIT") == -1
    assert run(r, "BITPOS", "k", 0, 5, 5, "BIT") == -1
    r.set("k", b"\x00\x00\x00")
    assert run(r, "BITPOS", "k", 1, 0, -1, "BIT") == -1
    assert run(r, "BITPOS", "k", 0, 17, 17, "BIT") == 17


def test_bitpos_unaligned_and_long(r):
    for bit in (0, 1):
        filler = b"\xff" if bit == 0 else b"\x00"
        r.set("k", filler * 80)
        for offset in (3, 250, 600, 639):
            r.setbit("k", offset, bit)
            assert r.bitpos("k", bit) == offset
            assert r.bitpos("k", bit, offset // 8) == offset
            r.setbit("k", offset, 1 - bit)


def test_bitpos_fuzzing(r):
    rng = random.Random(11)
    for _ in range(40):
        data = bytes(rng.choice((0, 255, rng.randrange(256))) for _ in range(rng.randrange(1, 30)))
        r.set("k", data)
        bits = bits_of(data)
        for bit in "01":
            start = rng.randrange(-len(bits) - 2, len(bits) + 2)
            end = rng.randrange(-len(bits) - 2, len(bits) + 2)
            lo, hi = (start + len(bits) if start < 0 else start), (
                end + len(bits) if end < 0 else end)
            lo, hi = max(lo, 0), min(max(hi, 0), len(bits) - 1)
            found = bits.find(bit, lo, hi + 1) if lo <= hi else -1
            assert run(r, "BITPOS", "k", bit, start, end, "BIT") == found, (data, bit, start, end)
        expected = bits.find("0")
        assert r.bitpos("k", 0) == (expected if expected >= 0 else len(bits))
        assert r.bitpos("k", 1) == bits.find("1")


def test_bitcount_and_bitpos_on_large_sparse_bitmaps(r):
    """Bitmaps of hundreds of KB with a few bits set, or a few cleared (the scans step over
    blocks that cannot hold what they look for)."""
    size = 200_000
    rng = random.Random(4)
    for filler in (0x00, 0xFF):
        data = bytearray([filler]) * size
        for position in (0, 2047, 2048, 65535, 65536, 70000, 131071, size - 1):
            data[position] ^= 1 << rng.randrange(8)
        r.set("big", bytes(data))
        bits_set = sum(bin(byte).count("1") for byte in data)
        assert r.bitcount("big") == bits_set
        for _ in range(12):
            start, end = sorted(rng.randrange(size) for _ in range(2))
            expected = sum(bin(byte).count("1") for byte in data[start : end + 1])
            assert r.bitcount("big", start, end) == expected
            for bit in (0, 1):
                found = bits_of(bytes(data[start : end + 1])).find(str(bit))
                assert r.bitpos("big", bit, start, end) == (found + 8 * start if found >= 0 else -1)
            low, high = start * 8 + 3, end * 8 + 4
            assert run(r, "BITCOUNT", "big", low, high, "BIT") == bits_of(
                bytes(data))[low : high + 1].count("1")


@pytest.mark.parametrize("size", [1, 100, 2047, 2048, 2049, 65535, 65536, 65537, 200_000])
def test_bit_scans_against_a_plain_reference(size):
    """brook.types.bits' block-skipping scans against the whole string as one int."""
    rng = random.Random(size)
    for filler in (0x00, 0xFF, None):
        data = bytearray(rng.randbytes(size)) if filler is None else bytearray([filler]) * size
        for _ in range(3):
            data[rng.randrange(size)] = rng.randrange(256)
        whole = int.from_bytes(data, "big")
        for _ in range(20):
            first, last = sorted(rng.randrange(8 * size) for _ in range(2))
            width = last - first + 1
            piece = (whole >> (8 * size - 1 - last)) & ((1 << width) - 1)
            assert bit_count(data, first, last) == piece.bit_count()
            ones = first + width - piece.bit_length() if piece else -1
            zeros = piece ^ ((1 << width) - 1)
            assert first_bit(data, 1, first, last) == ones
            assert first_bit(data, 0, first, last) == (
                first + width - zeros.bit_length() if zeros else -1)
        assert bit_count(data, 5, 4) == 0 and first_bit(data, 1, 5, 4) == -1


def test_bitpos_bad_arguments(r):
    r.set("k", "foo")
    assert error_of(r, "BITPOS", "k", 2) == "The bit argument must be 1 or 0."
    assert error_of(r, "BITPOS", "k", -1) == "The bit argument must be 1 or 0."
    assert error_of(r, "BITPOS", "k", "a") == NOT_INTEGER
    assert error_of(r, "BITPOS", "k", 1, 0, 1, "bit", "x") == SYNTAX
    assert error_of(r, "BITPOS", "k", 1, 0, 1, "bits") == SYNTAX
    assert error_of(r, "BITPOS", "k", 1, 0, "x", "bits") == SYNTAX  # the unit comes first
    assert error_of(r, "BITPOS", "k", 1, "a", "x", "bits") == NOT_INTEGER
    assert error_of(r, "BITPOS", "k", 1, 0, "1.5") == NOT_INTEGER
    assert error_of(r, "BITPOS", "k") == "wrong number of arguments for 'bitpos' command"
    assert error_of(r, "BITPOS", "k", 2, "x") == "The bit argument must be 1 or 0."
    r.set("n", 1)
    assert r.bitpos("n", 1) == 2  # '1' is 0011 0001


# ---------------------------------------------------------------------------------------------
# BITOP
# ---------------------------------------------------------------------------------------------


def _reference(operation: str, values: list[bytes]) -> bytes:
    size = max(len(value) for value in values)
    padded = [value.ljust(size, b"\0") for value in values]
    out = bytearray()
    for column in zip(*padded, strict=True):
        if operation == "NOT":
            out.append(~column[0] & 0xFF)
            continue
        byte = column[0]
        for other in column[1:]:
            byte = {"AND": byte & other, "OR": byte | other, "XOR": byte ^ other}[operation]
        out.append(byte)
    return bytes(out)


@pytest.mark.parametrize("operation", ["AND", "OR", "XOR"])
def test_bitop_fuzzing(r, operation):
    rng = random.Random(operation)
    for _ in range(20):
        values = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 70)))
                  for _ in range(rng.randrange(1, 5))]
        keys = [f"k{i}" for i in range(len(values))]
        for key, value in zip(keys, values, strict=True):
            r.set(key, value)
        expected = _reference(operation, values)
        assert r.bitop(operation, "dest", *keys) == len(expected)
        assert r.get("dest") == (expected or None)


def test_bitop_not(r):
    r.set("s", "")
    assert r.bitop("NOT", "dest", "s") == 0
    assert r.exists("dest") == 0
    r.set("s", b"\xaa\x00\xff\x55")
    assert r.bitop("not", "dest", "s") == 4
    assert r.get("dest") == b"\x55\xff\x00\xaa"
    rng = random.Random(3)
    for _ in range(10):
        value = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        r.set("s", value)
        r.bitop("NOT", "dest", "s")
        assert r.get("dest") == _reference("NOT", [value])


def test_bitop_cases_of_the_redis_suite(r):
    r.set("s", b"\xaa\x00\xff\x55")
    assert r.bitop("NOT", "s", "s") == 4  # destination and source are the same key
    assert r.get("s") == b"\x55\xff\x00\xaa"
    r.set("s", b"\x01\x02\xff")
    for operation in ("AND", "OR", "XOR"):
        r.bitop(operation, "res", "s")
        assert r.get("res") == b"\x01\x02\xff"
    r.set("s", b"\x01\x02\xff")
    r.bitop("AND", "res1", "no-such", "s")
    r.bitop("OR", "res2", "no-such", "s", "no-such")
    r.bitop("XOR", "res3", "no-such", "s")
    assert [r.get("res1"), r.get("res2"), r.get("res3")] == [b"\0\0\0", b"\x01\x02\xff",
                                                             b"\x01\x02\xff"]
    r.set("a", b"\x01\x02\xff\xff")
    r.set("b", b"\x01\x02\xff")
    r.bitop("AND", "res1", "a", "b")
    r.bitop("OR", "res2", "a", "b")
    r.bitop("XOR", "res3", "a", "b")
    assert [r.get("res1"), r.get("res2"), r.get("res3")] == [
        b"\x01\x02\xff\x00", b"\x01\x02\xff\xff", b"\x00\x00\x00\xff"]
    r.set("int1", 6)  # integer-encoded sources read as their digits
    r.set("int2", 4)
    r.set("int3", 2)
    r.bitop("AND", "res", "int1", "int2", "int3")
    assert r.get("res") == b"0"
    r.set("a", b"\xff")
    r.set("b", b"")
    r.bitop("OR", "x", "a", "b")
    assert r.get("x") == b"\xff"
    r.bitop("OR", "x", "b", "a")
    assert r.get("x") == b"\xff"


def test_bitop_result_is_raw_and_replaces_the_ttl(r):
    r.set("a", "1")
    r.set("dest", "old", ex=100)
    assert r.bitop("OR", "dest", "a") == 1
    assert r.object("encoding", "dest") == b"raw"
    assert r.ttl("dest") == -1


def test_bitop_empty_result_deletes_the_destination(r):
    r.set("dest", "old")
    r.set("e", "")
    assert r.bitop("AND", "dest", "nokey", "e") == 0
    assert r.exists("dest") == 0
    assert r.bitop("AND", "dest", "nokey") == 0
    assert r.exists("dest") == 0


def test_bitop_bad_arguments(r):
    r.set("a", "x")
    assert error_of(r, "BITOP", "NAND", "d", "a") == SYNTAX
    assert error_of(r, "BITOP", "AN", "d", "a") == SYNTAX
    assert error_of(r, "BITOP", "NOT", "d", "a", "b") == (
        "BITOP NOT must be called with a single source key.")
    assert error_of(r, "BITOP", "AND", "d") == "wrong number of arguments for 'bitop' command"
    assert r.exists("d") == 0


@pytest.mark.brook_only  # Redis 8.2's operators; neither Redis the tests run has them
def test_bitop_redis_8_2_operators(r):
    r.set("x", b"\xf0\x0f\xff")
    r.set("y1", b"\xcc\xcc")
    r.set("y2", b"\x0f")
    # DIFF: in x and in none of the others.
    assert r.bitop("DIFF", "d", "x", "y1", "y2") == 3
    assert r.get("d") == b"\x30\x03\xff"
    # DIFF1: in one or more of the others, not in x.
    assert r.bitop("diff1", "d", "x", "y1", "y2") == 3
    assert r.get("d") == b"\x0f\xc0\x00"
    # ANDOR: in x and in at least one of the others.
    assert r.bitop("ANDOR", "d", "x", "y1", "y2") == 3
    assert r.get("d") == b"\xc0\x0c\x00"
    # ONE: in exactly one of the keys.
    assert r.bitop("ONE", "d", "x", "y1", "y2") == 3
    assert r.get("d") == b"\x33\xc3\xff"
    assert r.bitop("ONE", "d", "x") == 3
    assert r.get("d") == b"\xf0\x0f\xff"
    assert r.bitop("ONE", "d", "x", "x") == 3
    assert r.get("d") == b"\x00\x00\x00"
    assert r.bitop("DIFF", "d", "nokey", "x") == 3
    assert r.get("d") == b"\x00\x00\x00"
    assert r.bitop("DIFF", "d", "nokey", "nokey2") == 0
    assert r.exists("d") == 0
    for operation in ("DIFF", "diff1", "AndOr"):
        assert error_of(r, "BITOP", operation, "d", "x") == (
            f"BITOP {operation.upper()} must be called with at least two source keys.")
    r.rpush("l", "a")
    assert error_of(r, "BITOP", "DIFF", "d", "x", "l") == WRONGTYPE


# ---------------------------------------------------------------------------------------------
# BITFIELD / BITFIELD_RO
# ---------------------------------------------------------------------------------------------


def bitfield(r: redis.Redis, key: str, *args: str | int) -> object:
    return run(r, "BITFIELD", key, *args)


def test_bitfield_signed_and_unsigned_set_get(r):
    assert bitfield(r, "bits", "set", "i8", 0, -100) == [0]
    assert bitfield(r, "bits", "set", "i8", 0, 101) == [-100]
    assert bitfield(r, "bits", "get", "i8", 0) == [101]
    r.delete("bits")
    assert bitfield(r, "bits", "set", "u8", 0, 255) == [0]
    assert bitfield(r, "bits", "set", "u8", 0, 100) == [255]
    assert bitfield(r, "bits", "get", "u8", 0) == [100]
    r.delete("bits")
    assert bitfield(r, "bits", "set", "u8", 0, 255, "get", "u8", 0) == [0, 255]
    r.delete("bits")
    assert bitfield(r, "bits", "set", "u8", 0, 255, "incrby", "u8", 0, 100, "get", "u8", 0) == [
        0, 99, 99]
    assert bitfield(r, "bits") == []
    assert bitfield(r, "nokey") == []
    assert r.exists("nokey") == 0


def test_bitfield_hash_offsets_and_incrby(r):
    assert bitfield(r, "bits", "set", "u8", "#0", 65, "set", "u8", "#1", 66,
                    "set", "u8", "#2", 67) == [0, 0, 0]
    assert r.get("bits") == b"ABC"
    assert bitfield(r, "bits", "get", "u8", "#0", "get", "u8", "#1", "get", "u8", "#2") == [
        65, 66, 67]
    r.delete("bits")
    assert bitfield(r, "bits", "incrby", "u2", 100, 1, "overflow", "sat",
                    "incrby", "u2", 102, 1) == [1, 1]
    r.delete("bits")
    assert [bitfield(r, "bits", "incrby", "i5", 100, 1)[0] for _ in range(3)] == [1, 2, 3]
    assert bitfield(r, "bits", "incrby", "i5", 100, -10) == [-7]
    r.delete("bits")
    assert bitfield(r, "bits", "incrby", "u8", 0, 1, "incrby", "u8", 0, -1) == [1, 0]
    assert run(r, "BITFIELD", "bits", "GET", "u8", "#1") == [0]
    assert run(r, "BITFIELD", "bits", "SET", "i64", 3, -1, "GET", "i64", 3, "GET", "u63", 3) == [
        0, -1, 2**63 - 1]


@pytest.mark.parametrize(
    ("kind", "overflow", "start", "increment", "expected"),
    [
        ("u8", "wrap", 255, 1, 0), ("u8", "wrap", 0, -1, 255), ("u8", "wrap", 100, 400, 244),
        ("u8", "sat", 255, 1, 255), ("u8", "sat", 0, -1, 0), ("u8", "sat", 250, 1000, 255),
        ("u8", "fail", 255, 1, None), ("u8", "fail", 0, -1, None),
        ("i8", "wrap", 127, 1, -128), ("i8", "wrap", -128, -1, 127), ("i8", "wrap", 0, 300, 44),
        ("i8", "sat", 127, 1, 127), ("i8", "sat", -128, -1, -128), ("i8", "sat", 0, -300, -128),
        ("i8", "fail", 127, 1, None), ("i8", "fail", -128, -1, None),
        ("i64", "wrap", 2**63 - 1, 1, -(2**63)), ("i64", "sat", 2**63 - 1, 1, 2**63 - 1),
        ("i64", "fail", -(2**63), -1, None), ("i64", "sat", -(2**63), -(2**63), -(2**63)),
        ("u63", "wrap", 2**63 - 1, 1, 0), ("u63", "sat", 5, 2**63 - 1, 2**63 - 1),
        ("u1", "wrap", 1, 1, 0), ("i1", "wrap", 0, 1, -1), ("i1", "sat", -1, -1, -1),
    ],
)
def test_bitfield_incrby_overflows(r, kind, overflow, start, increment, expected):
    bitfield(r, "bits", "set", kind, 5, start)
    assert bitfield(r, "bits", "overflow", overflow, "incrby", kind, 5, increment) == [expected]
    assert bitfield(r, "bits", "get", kind, 5) == [start if expected is None else expected]


@pytest.mark.parametrize(
    ("kind", "overflow", "value", "expected"),
    [
        ("u8", "wrap", 256, 0), ("u8", "wrap", -1, 255), ("u8", "sat", 256, 255),
        ("u8", "sat", -1, 255), ("u8", "fail", -1, None), ("u8", "fail", 300, None),
        ("i8", "wrap", 128, -128), ("i8", "sat", 128, 127), ("i8", "sat", -200, -128),
        ("i8", "fail", 128, None), ("u2", "sat", -(2**63), 3), ("u63", "wrap", -1, 2**63 - 1),
        ("i64", "fail", -(2**63), -(2**63)),
    ],
)
def test_bitfield_set_overflows(r, kind, overflow, value, expected):
    reply = bitfield(r, "bits", "overflow", overflow, "set", kind, 0, value, "get", kind, 0)
    assert reply == ([None, 0] if expected is None else [0, expected])


def test_bitfield_overflow_applies_to_the_operations_after_it(r):
    assert bitfield(r, "bits", "set", "u2", 0, 3, "incrby", "u2", 0, 1, "overflow", "sat",
                    "incrby", "u2", 0, 5, "overflow", "fail", "incrby", "u2", 0, 1,
                    "overflow", "wrap", "incrby", "u2", 0, 1) == [0, 0, 3, None, 0]


def _model_field(bits: list[int], offset: int, width: int, signed: bool) -> int:
    while len(bits) < offset + width:
        bits.append(0)
    value = int("".join(map(str, bits[offset : offset + width])), 2)
    return value - (1 << width) if signed and value >> (width - 1) else value


def test_bitfield_fuzzing_against_a_model(r):
    """Random SET/INCRBY/GET with every overflow mode, checked against a bit-list model."""
    rng = random.Random(5)
    model: list[int] = []
    for _ in range(300):
        signed = rng.random() < 0.5
        width = rng.randrange(1, 65 if signed else 64)
        offset = rng.randrange(0, 200)
        kind = ("i" if signed else "u") + str(width)
        low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        old = _model_field(model, offset, width, signed)
        overflow = rng.choice(["wrap", "sat", "fail"])
        is_set = rng.random() < 0.5
        if is_set:  # an unsigned field reads the 64-bit value as unsigned
            number = max(min(rng.randrange(low - 10, high + 10), 2**63 - 1), -(2**63))
            target = number if signed else number & (2**64 - 1)
        else:
            number = rng.randrange(-(1 << (width + 1)), 1 << (width + 1))
            number = max(min(number, 2**63 - 1), -(2**63))
            target = old + number
        if low <= target <= high:
            new: int | None = target
        elif overflow == "wrap":
            new = ((target - low) % (1 << width)) + low
        elif overflow == "sat":
            new = high if target > high else low
        else:
            new = None
        reply = bitfield(r, "f", "overflow", overflow, "set" if is_set else "incrby", kind,
                         offset, number)
        if new is None:
            assert reply == [None]
        else:
            assert reply == [old if is_set else new], (kind, offset, overflow, number)
            for i, bit in enumerate(format(new & ((1 << width) - 1), f"0{width}b")):
                model[offset + i] = int(bit)
        assert bitfield(r, "f", "get", kind, offset) == [_model_field(model, offset, width, signed)]


def test_bitfield_reads_past_the_end_and_on_integers(r):
    r.set("k", b"\xff")
    assert bitfield(r, "k", "get", "u16", 0, "get", "i16", 0, "get", "u8", 4) == [
        0xFF00, -256, 0xF0]
    assert bitfield(r, "k", "get", "i64", 1000) == [0]
    r.set("n", 1)
    assert bitfield(r, "n", "get", "u8", 0) == [49]
    assert r.object("encoding", "n") == b"int"  # reading leaves it as it was


def test_bitfield_regressions(r):
    assert bitfield(r, "bits", "SET", "i64", 0, -9223372036854775808) == [0]  # #3221
    assert bitfield(r, "bits", "get", "i64", 0) == [-9223372036854775808]
    r.delete("bits")
    assert bitfield(r, "bits", "set", "i1", 0, 0) == [0]  # #3564
    assert bitfield(r, "bits", "get", "i1", 0) == [0]
    r.delete("mystring")
    assert bitfield(r, "mystring", "set", "i8", 0, 10) == [0]
    assert bitfield(r, "mystring", "set", "i8", 64, 10) == [0]
    assert bitfield(r, "mystring", "incrby", "i8", 10, 99900) == [60]


@pytest.mark.parametrize("kind", ["u64", "i65", "u0", "i0", "I8", "U8", "x8", "i", "u", "8",
                                  "i-1", "i08", "i 8", "i8x", "", "i9223372036854775808"])
def test_bitfield_bad_types(r, kind):
    assert error_of(r, "BITFIELD", "k", "GET", kind, 0) == BAD_TYPE
    assert error_of(r, "BITFIELD", "k", "SET", kind, 0, 1) == BAD_TYPE
    assert error_of(r, "BITFIELD_RO", "k", "GET", kind, 0) == BAD_TYPE


def test_bitfield_bad_arguments(r):
    r.set("k", "x")
    assert error_of(r, "BITFIELD", "k", "GET", "u8") == SYNTAX
    assert error_of(r, "BITFIELD", "k", "SET", "u8", 0) == SYNTAX
    assert error_of(r, "BITFIELD", "k", "INCRBY", "u8", 0) == SYNTAX
    assert error_of(r, "BITFIELD", "k", "FOO", "u8", 0) == SYNTAX
    assert error_of(r, "BITFIELD", "k", "OVERFLOW") == SYNTAX
    assert error_of(r, "BITFIELD", "k", "OVERFLOW", "CLAMP") == "Invalid OVERFLOW type specified"
    assert error_of(r, "BITFIELD", "k", "GET", "u8", -1) == BAD_OFFSET
    assert error_of(r, "BITFIELD", "k", "GET", "u8", "#-1") == BAD_OFFSET
    assert error_of(r, "BITFIELD", "k", "GET", "u8", "##1") == BAD_OFFSET
    assert error_of(r, "BITFIELD", "k", "GET", "u8", "#") == BAD_OFFSET
    assert error_of(r, "BITFIELD", "k", "GET", "u8", "x") == BAD_OFFSET
    assert error_of(r, "BITFIELD", "k", "SET", "u8", 0, "x") == NOT_INTEGER
    assert error_of(r, "BITFIELD", "k", "INCRBY", "u8", 0, "1.5") == NOT_INTEGER
    assert error_of(r, "BITFIELD", "k", "SET", "u8", 0, "9223372036854775808") == NOT_INTEGER
    # An error anywhere: nothing runs, not even the operations before it.
    assert error_of(r, "BITFIELD", "k", "SET", "u8", 0, 65, "GET", "u64", 0) == BAD_TYPE
    assert r.get("k") == b"x"
    assert error_of(r, "BITFIELD", "new", "SET", "u8", 0, 1, "OVERFLOW", "x") == (
        "Invalid OVERFLOW type specified")
    assert r.exists("new") == 0


def test_bitfield_ro(r):
    r.set("k", b"\x0a")
    assert run(r, "BITFIELD_RO", "k", "GET", "u8", 0, "GET", "i4", 4) == [10, -6]
    assert run(r, "BITFIELD_RO", "k") == []
    assert run(r, "BITFIELD_RO", "nokey", "GET", "u8", 0) == [0]
    for args in (("SET", "u8", 0, 1), ("INCRBY", "u8", 0, 1), ("GET", "u8", 0, "SET", "u8", 0, 1)):
        assert error_of(r, "BITFIELD_RO", "k", *args) == (
            "BITFIELD_RO only supports the GET subcommand")
    assert run(r, "BITFIELD_RO", "k", "OVERFLOW", "SAT", "GET", "u8", 0) == [10]
    assert error_of(r, "BITFIELD_RO", "k", "OVERFLOW", "X") == "Invalid OVERFLOW type specified"
    assert r.get("k") == b"\x0a"


def test_bitfield_fail_creates_the_key_without_a_change(r):
    """Redis makes room for the writes before running them: a SET that FAILs leaves the key
    created (zero bytes) but counts no change."""
    before = changes(r)
    assert bitfield(r, "k", "overflow", "fail", "set", "u8", 8, 300) == [None]
    assert r.get("k") == b"\0\0"
    assert changes(r) == before


# ---------------------------------------------------------------------------------------------
# Dirty counts, notifications, WATCH, ACL
# ---------------------------------------------------------------------------------------------


def test_setbit_and_bitfield_count_only_real_changes(r):
    r.config_set("notify-keyspace-events", "")
    before = changes(r)
    r.setbit("k", 0, 1)
    assert changes(r) == before + 1
    r.setbit("k", 0, 1)
    assert changes(r) == before + 1
    r.setbit("k", 0, 0)
    assert changes(r) == before + 2
    r.setbit("k", 20, 0)  # grows the string: a change
    assert changes(r) == before + 3
    bitfield(r, "k", "set", "u8", 0, 0)
    assert changes(r) == before + 3
    bitfield(r, "k", "set", "u8", 0, 1, "set", "u8", 8, 1, "get", "u8", 0)
    assert changes(r) == before + 5
    bitfield(r, "k", "set", "u8", 40, 0)  # grown: every write counts
    assert changes(r) == before + 6
    run(r, "BITFIELD_RO", "k", "GET", "u8", 0)
    bitfield(r, "k", "incrby", "u8", 0, 0)
    assert changes(r) == before + 6


def test_keyspace_hits_and_misses(r):
    r.set("k", "x")
    r.config_resetstat()
    for args in (("GETBIT", "k", 0), ("GETBIT", "no", 0), ("SETBIT", "k", 1, 1),
                 ("SETBIT", "new", 1, 1), ("BITCOUNT", "k"), ("BITCOUNT", "no", 0, 1),
                 ("BITPOS", "k", 1), ("BITPOS", "no", 0), ("BITOP", "OR", "d", "k", "no"),
                 ("BITFIELD", "k", "GET", "u8", 0), ("BITFIELD", "no", "GET", "u8", 0),
                 ("BITFIELD", "k", "SET", "u8", 0, 1), ("BITFIELD_RO", "no", "GET", "u8", 0),
                 ("LCS", "k", "no"), ("SUBSTR", "k", 0, 1)):
        run(r, *args)
    stats = r.info("stats")
    assert (stats["keyspace_hits"], stats["keyspace_misses"]) == (7, 7)


@pytest.fixture
def events(server: ServerProcess) -> Iterator:  # type: ignore[no-untyped-def]
    admin = server.client()
    admin.config_set("notify-keyspace-events", "KEA")
    subscriber = server.client()
    pubsub = subscriber.pubsub()
    pubsub.psubscribe("__keyevent@0__:*")
    assert pubsub.get_message(timeout=5)["type"] == "psubscribe"

    def collected(wait: float = 0.2) -> list[tuple[bytes, bytes]]:
        found = []
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            message = pubsub.get_message(timeout=0.05)
            if message is not None and message["type"] == "pmessage":
                found.append((message["channel"].split(b":", 1)[1], message["data"]))
        return found

    yield collected
    admin.config_set("notify-keyspace-events", "")
    pubsub.close()
    subscriber.close()
    admin.close()


def test_keyspace_events(r, events):
    r.setbit("k", 3, 1)
    r.setbit("k", 3, 1)  # no change: no event
    bitfield(r, "k", "set", "u8", 0, 7, "incrby", "u8", 0, 1)
    bitfield(r, "k", "get", "u8", 0)
    bitfield(r, "k", "overflow", "fail", "incrby", "u8", 0, 300)
    r.bitop("NOT", "d", "k")
    r.bitop("AND", "d", "nokey")
    r.bitop("AND", "d", "nokey")  # nothing to delete: no event
    assert events() == [(b"setbit", b"k"), (b"setbit", b"k"), (b"set", b"d"), (b"del", b"d")]


@pytest.mark.parametrize(
    ("command", "invalidates"),
    [
        (("SETBIT", "w", 0, 1), True), (("SETBIT", "w", 0, 0), False),
        (("SETBIT", "w", 100, 0), True), (("BITFIELD", "w", "SET", "u8", 0, 1), True),
        (("BITFIELD", "w", "SET", "u8", 0, 0), False), (("BITFIELD", "w", "GET", "u8", 0), False),
        (("BITOP", "OR", "w", "w"), True), (("BITOP", "AND", "w", "nokey"), True),
        (("GETBIT", "w", 0), False), (("BITCOUNT", "w"), False), (("LCS", "w", "w"), False),
    ],
)
def test_watch(server, command, invalidates):
    watcher = server.client()
    other = server.client()
    other.set("w", b"\x00")
    with watcher.pipeline() as pipe:
        pipe.watch("w")
        run(other, *command)
        pipe.multi()
        pipe.exists("w")
        if invalidates:
            with pytest.raises(redis.WatchError):
                pipe.execute()
        else:
            assert pipe.execute() == [1]
    watcher.close()
    other.close()


def test_acl_key_permissions(server, r):
    r.execute_command("ACL", "SETUSER", "reader", "on", ">pw", "%R~*", "+@all")
    r.set("k", "x")
    reader = server.client(username="reader", password="pw")
    try:
        assert run(reader, "BITFIELD", "k", "GET", "u8", 0) == [ord("x")]
        assert run(reader, "BITFIELD_RO", "k", "GET", "u8", 0) == [ord("x")]
        assert reader.getbit("k", 1) == 1
        assert reader.bitcount("k") == 4
        assert run(reader, "LCS", "k", "k") == b"x"
        for args in (("BITFIELD", "k", "SET", "u8", 0, 1), ("SETBIT", "k", 0, 1),
                     ("BITOP", "AND", "d", "k")):
            with pytest.raises(redis.exceptions.NoPermissionError):
                run(reader, *args)
    finally:
        reader.close()
    assert r.get("k") == b"x"


# ---------------------------------------------------------------------------------------------
# LCS
# ---------------------------------------------------------------------------------------------

RNA1 = ("CACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCTGTCACT"
        "CGGCTGCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTTCTG"
        "CAGGCTGCTTACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTTCGTCCGGGTGTG")
RNA2 = ("ATTAAAGGTTTATACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGT"
        "GTGGCTGTCACTCGGCTGCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACT"
        "CGTCTATCTTCTGCAGGCTGCTTACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTT")
RNA_LCS = ("ACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCTGTCAC"
           "TCGGCTGCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTT"
           "CTGCAGGCTGCTTACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTT")


def test_lcs_of_the_redis_suite(r):
    r.set("virus1", RNA1)
    r.set("virus2", RNA2)
    assert r.lcs("virus1", "virus2") == RNA_LCS.encode()
    assert run(r, "LCS", "virus1", "virus2", "LEN") == len(RNA_LCS)
    assert run(r, "LCS", "virus1", "virus2", "IDX") == [
        b"matches", [[[238, 238], [239, 239]], [[236, 236], [238, 238]], [[229, 230], [236, 237]],
                     [[224, 224], [235, 235]], [[1, 222], [13, 234]]],
        b"len", 227]
    assert run(r, "LCS", "virus1", "virus2", "IDX", "WITHMATCHLEN") == [
        b"matches", [[[238, 238], [239, 239], 1], [[236, 236], [238, 238], 1],
                     [[229, 230], [236, 237], 2], [[224, 224], [235, 235], 1],
                     [[1, 222], [13, 234], 222]],
        b"len", 227]
    assert run(r, "LCS", "virus1", "virus2", "IDX", "WITHMATCHLEN", "MINMATCHLEN", 5) == [
        b"matches", [[[1, 222], [13, 234], 222]], b"len", 227]


def test_lcs_small_cases(r):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    assert r.lcs("a", "b") == b"mytext"
    assert run(r, "LCS", "a", "b", "idx", "minmatchlen", 4, "withmatchlen") == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert run(r, "LCS", "a", "b", "IDX", "MINMATCHLEN", -5) == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert run(r, "LCS", "a", "nokey") == b""
    assert run(r, "LCS", "nokey", "nokey2", "IDX") == [b"matches", [], b"len", 0]
    assert run(r, "LCS", "a", "a", "LEN", "LEN") == 8
    r.set("n1", 12345)
    r.set("n2", 1335)
    assert run(r, "LCS", "n1", "n2") == b"135"
    r.set("x", "abc")
    r.set("y", "xyz")
    assert run(r, "LCS", "x", "y", "IDX", "WITHMATCHLEN") == [b"matches", [], b"len", 0]


def test_lcs_fuzzing_against_the_table(r):
    """Random strings from a small alphabet (many equal lengths, so the walk's tie-breaking
    matters): the length against a plain dynamic program, the text a subsequence of both."""
    rng = random.Random(9)
    for _ in range(25):
        a = "".join(rng.choice("AB") for _ in range(rng.randrange(0, 30)))
        b = "".join(rng.choice("ABC") for _ in range(rng.randrange(0, 30)))
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                table[i][j] = (table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                               else max(table[i - 1][j], table[i][j - 1]))
        r.set("a", a)
        r.set("b", b)
        text = run(r, "LCS", "a", "b")
        assert len(text) == table[len(a)][len(b)]
        assert run(r, "LCS", "a", "b", "LEN") == len(text)
        reply = run(r, "LCS", "a", "b", "IDX", "WITHMATCHLEN")
        matched = sum(match[2] for match in reply[1])
        assert reply[3] == len(text) and matched == len(text)


def test_resp3_replies(server):
    client = server.client(protocol=3)
    try:
        client.set("a", "ohmytext")
        client.set("b", "mynewtext")
        assert run(client, "LCS", "a", "b", "IDX", "WITHMATCHLEN") == {
            b"matches": [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len": 6}
        assert run(client, "LCS", "a", "b", "LEN") == 6
        assert run(client, "LCS", "a", "b") == b"mytext"
        assert run(client, "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 9,
                   "GET", "i4", 0) == [None, 0]
    finally:
        client.close()


def test_lcs_bad_arguments(r):
    r.set("a", "x")
    r.rpush("l", "y")
    assert error_of(r, "LCS", "a", "l") == "The specified keys must contain string values"
    assert error_of(r, "LCS", "l", "a", "BAD") == "The specified keys must contain string values"
    assert error_of(r, "LCS", "a", "a", "IDX", "LEN") == (
        "If you want both the length and indexes, please just use IDX.")
    assert error_of(r, "LCS", "a", "a", "FOO") == SYNTAX
    assert error_of(r, "LCS", "a", "a", "MINMATCHLEN") == SYNTAX
    assert error_of(r, "LCS", "a", "a", "MINMATCHLEN", "x") == NOT_INTEGER
    assert error_of(r, "LCS", "a", "a", "FOO", "IDX", "LEN") == SYNTAX
    assert error_of(r, "LCS", "a") == "wrong number of arguments for 'lcs' command"


def test_lcs_table_limit_follows_proto_max_bulk_len(r):
    old = r.config_get("proto-max-bulk-len")["proto-max-bulk-len"]
    try:
        r.config_set("proto-max-bulk-len", 1024 * 1024)
        r.set("a", "x" * 600)
        r.set("b", "y" * 600)
        assert error_of(r, "LCS", "a", "b") == (
            "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
        r.set("b", "y" * 400)
        assert run(r, "LCS", "a", "b", "LEN") == 0
    finally:
        r.config_set("proto-max-bulk-len", old)


# ---------------------------------------------------------------------------------------------
# SUBSTR
# ---------------------------------------------------------------------------------------------


def test_substr(r):
    r.set("k", "Hello World")
    assert run(r, "SUBSTR", "k", 0, 3) == b"Hell"
    assert run(r, "SUBSTR", "k", -5, -1) == b"World"
    assert run(r, "SUBSTR", "k", 5, 3) == b""
    assert run(r, "SUBSTR", "k", 6, 5000) == b"World"
    assert run(r, "SUBSTR", "nokey", 0, 1) == b""
    r.set("n", 1234)
    assert run(r, "SUBSTR", "n", 1, 2) == b"23"
    assert error_of(r, "SUBSTR", "k", "a", 1) == NOT_INTEGER
    assert error_of(r, "SUBSTR", "k", 0) == "wrong number of arguments for 'substr' command"
    r.rpush("l", "a")
    assert error_of(r, "SUBSTR", "l", 0, 1) == WRONGTYPE


@pytest.mark.min_redis(8, 0)  # older versions clipped a negative end to 0
def test_substr_end_before_the_string(r):
    r.set("k", "Hello World")
    assert run(r, "SUBSTR", "k", 0, -100) == b""
    assert run(r, "SUBSTR", "k", -100, -99) == b""


def test_command_docs_of_substr_and_bitop(r):
    docs = run(r, "COMMAND", "DOCS", "SUBSTR")
    assert docs[0] == b"substr"
    info = run(r, "COMMAND", "INFO", "BITOP", "SETBIT", "LCS", "BITFIELD_RO")
    assert [entry[:6] for entry in info] == [
        [b"bitop", -4, [b"write", b"denyoom"], 2, -1, 1],
        [b"setbit", 4, [b"write", b"denyoom"], 1, 1, 1],
        [b"lcs", -3, [b"readonly"], 1, 2, 1],
        [b"bitfield_ro", -2, [b"readonly", b"fast"], 1, 1, 1],
    ]
