"""The RDB codec's C parts against their Python twins: CRC-64 (brook/rdb/_crc64.c) and LZF
decompression (brook/rdb/_lzf.c) give the same answers, errors included, on random data,
on what the compressor writes and on every cut and changed byte of it."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brook.rdb import crc64 as crc_module
from brook.rdb import lzf
from tests.conftest import native_module

_DATA = st.one_of(
    st.binary(max_size=2000),
    st.lists(st.sampled_from([b"ab", b"abc", b"xyz" * 20, b"\x00", b"sensor:12 "]),
             max_size=200).map(b"".join),
)


def test_the_check_value_of_crc64_jones() -> None:
    native = native_module("brook.rdb._crc64")
    assert native.crc64(b"123456789") == crc_module._crc64(b"123456789") == 0xE9C6D914C4B8D9CA


@settings(max_examples=300)
@given(_DATA, st.integers(min_value=0, max_value=2**64 - 1))
def test_crc64_in_c_is_the_twins(data: bytes, start: int) -> None:
    native = native_module("brook.rdb._crc64")
    assert native.crc64(data, start) == crc_module._crc64(data, start)
    cut = len(data) // 3
    assert native.crc64(data[cut:], native.crc64(data[:cut])) == native.crc64(data)


def _outcome(decompress, data: bytes, size: int) -> object:  # noqa: ANN001
    try:
        return decompress(data, size)
    except lzf.LzfError as error:
        return ("error", str(error))


@settings(max_examples=300)
@given(_DATA)
def test_lzf_decompression_in_c_is_the_twins(data: bytes) -> None:
    native = native_module("brook.rdb._lzf")
    packed = lzf.compress(data, len(data) + 64)
    assert packed is not None
    assert native.decompress(packed, len(data)) == lzf._decompress(packed, len(data)) == data
    for size in (len(data) - 1, len(data) + 1):
        if size >= 0:
            assert _outcome(native.decompress, packed, size) == \
                _outcome(lzf._decompress, packed, size)


def test_lzf_damage_gets_the_same_error_from_both() -> None:
    native = native_module("brook.rdb._lzf")
    rng = random.Random(7)
    data = b"".join(rng.choice([b"abc", b"defg", b"x" * 9, bytes([rng.randrange(256)])])
                    for _ in range(300))
    packed = lzf.compress(data, len(data))
    assert packed is not None
    for cut in range(len(packed)):
        assert _outcome(native.decompress, packed[:cut], len(data)) == \
            _outcome(lzf._decompress, packed[:cut], len(data))
    for at in range(len(packed)):
        damaged = bytearray(packed)
        damaged[at] ^= rng.randrange(1, 256)
        assert _outcome(native.decompress, bytes(damaged), len(data)) == \
            _outcome(lzf._decompress, bytes(damaged), len(data))
    with pytest.raises(lzf.LzfError):
        native.decompress(b"\x05ab", 6)
