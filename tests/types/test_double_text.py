"""The C twin of ``resp.format_double`` (brook/protocol/_double_text.c, compiled build) writes
every double as the Python twin does: Grisu2's digits and d2string's layout, Redis's text."""

from __future__ import annotations

import random
import struct

from hypothesis import given
from hypothesis import strategies as st

from brook.protocol.resp import format_double_twin
from tests.conftest import native_module

EDGES = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 5e-324, -5e-324,
         2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308, 0.1, 0.3,
         1 / 3, 3462.0978002316738, 1e21, 1e-7, 1e-6, 123456789012345678.0,
         float((2**63 - 1) // 2), 4.6116860184273879e18 * 2, -1.5, 1e16 + 2, 0.000123]


def test_edges_are_written_as_the_twin_writes_them() -> None:
    native = native_module("brook.protocol._double_text")
    assert [native.format_double(value) for value in EDGES] == [
        format_double_twin(value) for value in EDGES]


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_double_is_written_as_the_twin_writes_it(value: float) -> None:
    native = native_module("brook.protocol._double_text")
    assert native.format_double(value) == format_double_twin(value)


def test_random_bit_patterns_and_scores_are_written_as_the_twin_writes_them() -> None:
    """Every exponent (random 64-bit patterns, subnormals included) and the scores queues
    use (timestamps with a fraction, rounded decimals)."""
    native = native_module("brook.protocol._double_text")
    rng = random.Random(35)
    values = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
              for _ in range(20_000)]
    values += [1.79e9 + rng.random() for _ in range(5_000)]
    values += [round(rng.uniform(-1e4, 1e4), rng.randrange(8)) for _ in range(5_000)]
    assert [native.format_double(value) for value in values] == [
        format_double_twin(value) for value in values]
