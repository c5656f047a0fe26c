"""Listpack element sizes (``listpack.c``), which decide where Brook ends a stream node."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brook.types.lpsize import (
    appended_size,
    delta_size,
    entry_size,
    int_size,
    string_size,
    values_size,
)
from tests.conftest import native_module


@pytest.mark.parametrize(("item", "size"), [
    (b"", 2), (b"0", 2), (b"127", 2), (b"128", 3), (b"-1", 3), (b"4095", 3), (b"-4096", 3),
    (b"4096", 4), (b"32767", 4), (b"-32769", 5), (b"8388607", 5), (b"8388608", 6),
    (b"2147483647", 6), (b"2147483648", 10), (b"9223372036854775807", 10),
    (b"-9223372036854775808", 10),
    # Not integers for listpack: stored as strings (1 byte header + data + 1 byte back-length).
    (b"00", 4), (b"-0", 4), (b"+1", 4), (b" 1", 4), (b"9223372036854775808", 21), (b"21.5", 6),
    (b"x" * 63, 65), (b"x" * 64, 67), (b"x" * 125, 128), (b"x" * 126, 130),
    (b"x" * 4095, 4099), (b"x" * 4096, 4103), (b"x" * 16377, 16384), (b"x" * 16378, 16386),
])
def test_string_sizes(item, size):
    assert string_size(item) == size


def test_int_and_delta_sizes():
    assert [int_size(v) for v in (0, 127, 128, -4096, -4097, 2**31, -(2**63))] == \
        [2, 2, 3, 3, 4, 10, 10]
    assert delta_size(-1) == 3 and delta_size((1 << 64) - 1) == 3  # a wrapped int64 -1
    assert delta_size(1 << 63) == 10


@given(st.lists(st.one_of(st.binary(max_size=70),
                          st.text("0123456789-.x", max_size=22).map(str.encode),
                          st.integers(-(2**64), 2**64).map(lambda n: b"%d" % n))))
def test_values_size_is_the_sum_of_string_sizes(items):
    assert values_size(items) == sum(map(string_size, items))


_NAMES = st.lists(st.sampled_from([b"a", b"b", b"c"]), min_size=1, max_size=3)
_VALUES = st.sampled_from([b"1", b"-5", b"xx", b"300", b"x" * 70, b"-", b"", b"1" * 20])


@given(_NAMES, st.one_of(st.none(), _NAMES), st.data(),
       st.sampled_from([0, 5, 127, 128, -3, 2**63, 2**64 - 1]), st.sampled_from([0, 130, -1]),
       st.sampled_from([1, 126, 127, 128, 4095, 2147483647]))
def test_appended_size_is_entry_size_plus_count_growth(names, other, data, ms, seq, live):
    """The XADD short ways give what the general formula gives."""
    fields = [item for name in (other or names) for item in (name, data.draw(_VALUES))]
    same = fields[0::2] == names
    assert appended_size(ms, seq, fields, names, live) == \
        entry_size(ms, seq, fields, same) + int_size(live + 1) - int_size(live)


_IDS = st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
_ITEMS = st.one_of(st.sampled_from([b"1", b"-5", b"xx", b"300", b"-0", b"007", b"", b"1" * 20,
                                    b"9223372036854775808", b"-9223372036854775808",
                                    b"x" * 70, b"x" * 4096]),
                   st.binary(max_size=24))


@given(_NAMES, st.one_of(st.none(), st.lists(_ITEMS, min_size=1, max_size=4)), st.data(),
       _IDS, _IDS, st.sampled_from([1, 126, 127, 128, 4095, 32767, 8388607, 2147483647]))
def test_the_c_size_count_matches_its_python_twin(names, other, data, entry, master, live):
    """brook.types._lp_size (the compiled build's count) gives lpsize.appended_size of the
    IDs' deltas, for any two IDs (deltas that wrap included), names as the master's or not,
    and values that read as integers or not."""
    native = native_module("brook.types._lp_size")
    fields = [item for name in (other or names) for item in (name, data.draw(_ITEMS))]
    entry_id, master_id = entry[0] << 64 | entry[1], master[0] << 64 | master[1]
    expected = appended_size(entry[0] - master[0], entry[1] - master[1], fields, names, live)
    assert native.appended_size(entry_id, master_id, fields, names, live) == expected
