"""The C of INCRBYFLOAT, HINCRBYFLOAT and fractional timeouts (brook/types/_long_double.c,
compiled build, on the platform's long double) gives what its Python twins in
brook.types.long_double give: every text strtold reads or Redis's string2ld refuses, every
exponent, subnormals, sums that overflow, and printf("%.17Lf") as Redis trims it."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from brook.types.long_double import (
    CURRENT_NOT_FLOAT,
    INCREMENT_NOT_FLOAT,
    NOT_FINITE,
    incr_by_float,
    incr_by_float_twin,
    timeout_millis,
    timeout_millis_twin,
)
from tests.conftest import native_module

EDGES = [
    b"0", b"-0", b"+0", b"0.0", b"-0.0", b"1", b"-1", b"0.1", b"0.25", b".5", b"5.", b".", b"",
    b" 1", b"1 ", b"\t1", b"1\n", b"\x001", b"1\x00", b"1_0", b"--1", b"+-1", b"1.5.5", b"1e",
    b"1e+", b"1e-", b"e5", b"1e5", b"1E-5", b"1e+0005", b"00012.500", b"1e00000000000000000000001",
    b"nan", b"NaN", b"-nan", b"nan(1)", b"inf", b"-inf", b"+inf", b"INF", b"Infinity", b"-infinity",
    b"infinit", b"infx", b"0x", b"0x.", b"0x1", b"0X1P4", b"0x1.8p1", b"0x.8", b"0x1p", b"0x1p+",
    b"0xg", b"-0x10", b"0x1p-16445", b"0x1p-16446", b"0x1.8p-16446", b"0x1p-16444",
    b"0x1.fffffffffffffffep16383", b"0x1.ffffffffffffffffp16383", b"0x1p16384",
    b"0x1.fffffffffffffffep-16383", b"0x0.fffffffffffffffep-16382", b"0x1p-16382",
    b"1.18973149535723176502e+4932", b"1.18973149535723176508e+4932", b"1e4932", b"1e4933",
    b"-1e4933", b"3.64519953188247460253e-4951", b"1.82259976594123730126e-4951",
    b"1.8225997659412373013e-4951", b"1e-4951", b"1e-4952", b"1e-5000", b"1e400", b"1e-400",
    b"3.814697265625e-6", b"1.23456789012345678901234", b"17179869184", b"9223372036854775807",
    b"-8059256602948617276", b"521924.88982515107", b"0.009", b"0.001", b"1.5e-4950",
    b"0e999999999999", b"0.0e-999999999999", b"1e-999999999999", b"1e999999999999",
    b"9223372036854775.807", b"9223372036854775.8075", b"9223372036854775.808", b"-1e30",
    b"1" * 5119, b"1" * 5120, b"0." + b"0" * 5116 + b"1", b"0." + b"0" * 5117 + b"1",
    b"1e4931" + b"0" * 10, b"\xff", b"\xc2\xa01", "١".encode(),
]

_DIGITS = st.text("0123456789", max_size=25).map(str.encode)
_HEX_DIGITS = st.text("0123456789abcdefABCDEF", max_size=20).map(str.encode)
_SIGN = st.sampled_from([b"", b"-", b"+"])
_EXPONENT = st.one_of(st.integers(-40, 40), st.integers(-5000, 5000),
                      st.integers(-10**12, 10**12))
_DECIMAL = st.builds(
    lambda sign, whole, point, fraction, mark, exponent: (
        sign + whole + (b"." + fraction if point else b"")
        + (b"%s%d" % (mark, exponent) if mark else b"")),
    _SIGN, _DIGITS, st.booleans(), _DIGITS, st.sampled_from([b"", b"e", b"E"]), _EXPONENT)
_HEXADECIMAL = st.builds(
    lambda sign, whole, point, fraction, mark, exponent: (
        sign + b"0x" + whole + (b"." + fraction if point else b"")
        + (b"%s%d" % (mark, exponent) if mark else b"")),
    _SIGN, _HEX_DIGITS, st.booleans(), _HEX_DIGITS, st.sampled_from([b"", b"p", b"P"]),
    st.one_of(st.integers(-17000, 17000), st.integers(-10**12, 10**12)))
# A long double's own bits (a 64-bit significand, any exponent: subnormals, the largest).
_BITS = st.builds(
    lambda sign, significand, exponent: sign + b"0x%x.%016xp%d" % (
        significand >> 63, (significand & ((1 << 63) - 1)) << 1, exponent),
    _SIGN, st.integers(0, 2**64 - 1), st.integers(-16450, 16385))
_PIECES = st.lists(st.sampled_from([b"0", b"1", b"9", b".", b"e", b"E", b"-", b"+", b"x", b"p",
                                    b"f", b"inf", b"nan", b"ity", b" ", b"\x00", b"a"]),
                   max_size=8).map(b"".join)
TEXTS = st.one_of(_DECIMAL, _HEXADECIMAL, _BITS, _PIECES, st.sampled_from(EDGES))


def _agree(current: bytes | None, increment: bytes) -> None:
    native = native_module("brook.types._long_double")
    assert native.incr_by_float(current, increment) == incr_by_float_twin(current, increment)


def test_edges_agree_with_the_twin() -> None:
    native = native_module("brook.types._long_double")
    for text in EDGES:
        assert native.timeout_millis(text) == timeout_millis_twin(text), text
        for current in (None, b"0", b"-0", b"1", b"-1e-30", b"0x1p-16445", text):
            _agree(current, text)
            _agree(text, b"1")


@given(st.one_of(st.none(), TEXTS), TEXTS)
def test_any_texts_agree_with_the_twin(current: bytes | None, increment: bytes) -> None:
    _agree(current, increment)


@given(TEXTS)
def test_timeouts_agree_with_the_twin(text: bytes) -> None:
    native = native_module("brook.types._long_double")
    assert native.timeout_millis(text) == timeout_millis_twin(text)


def test_random_long_doubles_agree_with_the_twin() -> None:
    """Pairs of random long doubles of every magnitude, near ones (the sum cancels), sums past
    the largest finite value, and the decimals job counters add."""
    rng = random.Random(80)

    def bits(low: int, high: int) -> bytes:
        return b"%s0x%xp%d" % (rng.choice([b"", b"-"]), rng.getrandbits(64), rng.randint(low, high))

    pairs = [(bits(-16520, 16320), bits(-16520, 16320)) for _ in range(1000)]
    pairs += [(bits(-200, 200), bits(-200, 200)) for _ in range(1000)]
    pairs += [(bits(16310, 16320), bits(16310, 16320)) for _ in range(300)]
    pairs += [(b"%d.%d" % (rng.randrange(10**6), rng.randrange(10**4)),
               rng.choice([b"0.25", b"0.1", b"1.5", b"-0.3", b"3.0e3"])) for _ in range(1000)]
    for current, increment in pairs:
        _agree(current, increment)
        _agree(current, current[1:] if current[:1] == b"-" else b"-" + current)  # cancels


def test_bytearray_values_are_read_as_bytes() -> None:
    """String values that APPEND or SETRANGE changed are bytearrays."""
    native = native_module("brook.types._long_double")
    assert native.incr_by_float(bytearray(b"1.5"), b"1") == b"2.5"


def test_the_commands_arithmetic_gives_redis_results() -> None:
    """Whichever runs (C in the compiled build, the twin in the pure one): Redis's results."""
    assert incr_by_float(b"10.5", b"0.1") == b"10.6"
    assert incr_by_float(b"10.6", b"3.0e3") == b"3010.60000000000000009"
    assert incr_by_float(None, b"-1e-30") == b"0"
    assert incr_by_float(b"x", b"1") == CURRENT_NOT_FLOAT
    assert incr_by_float(b"x", b"y") == INCREMENT_NOT_FLOAT
    assert incr_by_float(b"1e4932", b"1e4932") == NOT_FINITE
    assert incr_by_float(None, b"-inf") == NOT_FINITE


def test_timeouts_round_the_product_to_a_long_double_before_ceil() -> None:
    """Redis computes ``ceill(seconds * 1000.0)`` with the product rounded to a long double:
    0.009 s is 9 ms (the exact product of the long double nearest 0.009 is a little above 9)."""
    assert timeout_millis(b"0.009") == 9
    assert timeout_millis(b"0.0091") == 10
    assert timeout_millis(b"1.5") == 1500
    assert timeout_millis(b"-0.5") == -500
    assert timeout_millis(b"1.5x") is None
    assert timeout_millis(b"inf") == 2**63
    assert timeout_millis(b"-inf") == -(2**63)
