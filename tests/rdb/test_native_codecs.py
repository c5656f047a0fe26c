"""The RDB codec's C parts against their Python twins: CRC-64 (brook/rdb/_crc64.c) and LZF
(brook/rdb/_lzf.c) give the same answers, errors included, on random data,
on what the compressor writes and on every cut and changed byte of it; a sealed stream node
written as Redis's listpack (brook/types/_node_listpack.c) is the bytes the Python path
writes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brook.rdb import crc64 as crc_module
from brook.rdb import decode, encode, lzf
from brook.rdb.strings import RdbError
from brook.types import stream_node
from brook.types.stream import Stream, make_id
from brook.types.stream_node import Node
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


@settings(max_examples=300)
@given(st.one_of(_DATA, st.binary(min_size=8200, max_size=9000).map(lambda data: data * 3)))
def test_lzf_compression_in_c_is_the_twins(data: bytes) -> None:
    """The same bytes (the same matches from the same table), the same refusals at every
    limit that matters, and what decompresses to the data again."""
    native = native_module("brook.rdb._lzf")
    ample = lzf._compress(data, len(data) + 64)
    assert native.compress(data, len(data) + 64) == ample
    assert ample is not None and lzf._decompress(ample, len(data)) == data
    for limit in (len(ample) - 1, len(ample), len(data) - 4, 0, -1):
        assert native.compress(data, limit) == lzf._compress(data, limit)


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


# -- a sealed stream node as Redis's stream listpack (brook/types/_node_listpack.c) -------------

_TEXTS = st.one_of(
    st.sampled_from([b"0", b"-0", b"007", b"-", b"12", b"-4097", b"32768", b"-8388609",
                     b"2147483648", b"9223372036854775807", b"-9223372036854775808",
                     b"9223372036854775808", b"99999999999999999999", b"1.5", b"", b"f"]),
    st.binary(max_size=3),
    st.binary(min_size=60, max_size=70),
    st.just(b"v" * 4100),
)
_STEPS = st.sampled_from([(0, 1), (0, 300), (1, 0), (5, 7), (1 << 20, 0), (1 << 40, 1 << 40)])


@settings(max_examples=300)
@given(st.integers(0, (1 << 63) - 1),
       st.lists(st.tuples(_STEPS, st.booleans(), st.lists(_TEXTS, min_size=1, max_size=3),
                          st.booleans()), min_size=1, max_size=30))
def test_a_sealed_node_as_a_redis_listpack_in_c_is_the_twins(
        first_ms: int, entries: list[tuple[tuple[int, int], bool, list[bytes], bool]]) -> None:
    """Entries with the master's names or their own (the first one's too), deleted ones (the
    first one's too), strings that spell integers of every width or nearly do, and strings of
    each length encoding: the C listpack is the Python one's."""
    node_listpack = native_module("brook.types._node_listpack").node_listpack
    node = _sealed_node(first_ms, entries)
    expected = encode._stream_node(*stream_node.decode(node))
    dead_bits = node.dead.to_bytes((node.dead.bit_length() + 7) // 8, "little")
    found = node_listpack(node.blob, node.master_id >> 64, node.master_id & ((1 << 64) - 1),
                          dead_bits)
    assert (None if found is None else (make_id(found[0], found[1]), found[2])) == expected


def test_a_malformed_node_is_refused() -> None:
    node_listpack = native_module("brook.types._node_listpack").node_listpack
    stream = Stream(max_entries=0, max_bytes=0)
    stream.append(make_id(5, 1), [b"a", b"1", b"b", b"two"])
    stream.append(make_id(5, 2), [b"a", b"3", b"c", b"four"])
    node = stream.nodes()[0]
    stream._seal(node)
    blob = node.blob
    assert blob is not None
    for cut in range(len(blob)):
        with pytest.raises(ValueError, match="malformed stream node"):
            node_listpack(blob[:cut], 5, 1, b"")


# -- a Redis stream listpack read as Brook's rows (brook/rdb/_stream_rows.c) --------------------

def _rows_outcome(read, *args: object) -> object:  # noqa: ANN001
    """What reading gives: the rows, or the refusal's text (the C raises ValueError, the
    twin RdbError, with the same text)."""
    try:
        return read(*args)
    except (ValueError, RdbError) as err:
        return ("refused", str(err))


def _sealed_node(first_ms: int, entries: list[tuple[tuple[int, int], bool, list[bytes], bool]]
                 ) -> Node:
    """One sealed node of the entries (ID steps, own field names or the master's, values,
    deleted or not), its deleted entries marked as XDEL marks them."""
    stream = Stream(max_entries=0, max_bytes=0)
    ms, seq = first_ms, 0
    deleted: list[int] = []
    for (ms_step, seq_step), own_names, values, dead in entries:
        if ms_step:
            ms, seq = ms + ms_step, seq_step
        else:
            seq += seq_step
        names = [b"name%d" % k for k in range(len(values))]
        if own_names:
            names[0] = b"other"
        if make_id(ms, seq) > stream.last_id:
            fields = [item for pair in zip(names, values, strict=True) for item in pair]
            stream.append(make_id(ms, seq), fields)
            if dead:
                deleted.append(stream.length - 1)
    node = stream.nodes()[0]
    stream._seal(node)
    for index in deleted:
        node.dead |= 1 << index
    return node


def _node_blobs(entries: list[tuple[tuple[int, int], bool, list[bytes], bool]],
                first_ms: int) -> list[tuple[int, bytes]]:
    """Redis stream listpacks (from the Python writer) of a node built from the entries."""
    found = encode._stream_node(*stream_node.decode(_sealed_node(first_ms, entries)))
    return [] if found is None else [found]


@settings(max_examples=200)
@given(st.integers(0, (1 << 63) - 1),
       st.lists(st.tuples(_STEPS, st.booleans(), st.lists(_TEXTS, min_size=1, max_size=3),
                          st.booleans()), min_size=1, max_size=20),
       st.integers(0, 1 << 20), st.integers(0, 255))
def test_a_redis_stream_listpack_read_in_c_is_the_twins(
        first_ms: int, entries: list[tuple[tuple[int, int], bool, list[bytes], bool]],
        where: int, byte: int) -> None:
    """The same rows from a valid listpack, and the same refusal from the same listpack cut
    short or with one byte changed."""
    stream_rows = native_module("brook.rdb._stream_rows").stream_rows
    for master, blob in _node_blobs(entries, first_ms):
        variants = [blob, blob[:where % len(blob)],
                    blob[:where % len(blob)] + bytes((byte,)) + blob[where % len(blob) + 1:]]
        for variant in variants:
            for previous in (-1, master - 1, master):
                assert _rows_outcome(stream_rows, variant, master, previous) == \
                    _rows_outcome(decode._stream_node, master, variant, previous)
