"""C ``long double`` arithmetic (x87 extended precision), exactly: what INCRBYFLOAT,
HINCRBYFLOAT and the blocking commands' timeouts compute in, as Redis does with ``long double``.

The commands call :func:`incr_by_float` and :func:`timeout_millis`, which run the compiled
build's C (brook/types/_long_double.c, on the platform's own long double) where it was built,
and otherwise their twins here, which emulate it:

A finite value is a Fraction holding exactly a representable long double: a 64-bit
significand, normal exponents down to 2**-16382, subnormals down to 2**-16445, finite below
2**16384. Infinity is a float. Parsing follows glibc's strtold (decimal and hexadecimal
forms, "inf"/"infinity"), rounding half to even; formatting follows printf("%.17Lf").
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Final

from brook.types import native

LongDouble = Fraction | float
ZERO_LD: Final[LongDouble] = Fraction(0)
_SIGNIFICAND_BITS: Final = 64
_MIN_NORMAL_EXP: Final = -16382
_MAX_BITS: Final = 16384  # finite values are below 2**16384
_MAX_LONG_DOUBLE_CHARS: Final = 5 * 1024  # Redis's buffer for such numbers
_INFINITY: Final = float("inf")
_DECIMAL: Final = re.compile(rb"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?")
_HEXADECIMAL: Final = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?[0-9]+))?")
_INFINITY_TEXT: Final = re.compile(rb"([+-]?)(?:inf|infinity)", re.IGNORECASE)
_DIGIT_CHUNK: Final = 4000  # below Python's int/str conversion limit
_HUGE_EXPONENT: Final = 10**7
_LLONG_MAX: Final = (1 << 63) - 1
_LLONG_MIN: Final = -(1 << 63)

# incr_by_float's error codes, the same in brook/types/_long_double.c.
INCREMENT_NOT_FLOAT: Final = 1
CURRENT_NOT_FLOAT: Final = 2
NOT_FINITE: Final = 3

# The hand-written C (None in the pure build, which runs the twins below).
_native_incr_by_float = native.incr_by_float
_native_timeout_millis = native.timeout_millis


def _round_long_double(exact: Fraction) -> LongDouble:
    """The long double nearest to ``exact`` (ties to even); infinity on overflow."""
    if exact == 0:
        return ZERO_LD
    negative = exact < 0
    numerator, denominator = abs(exact.numerator), exact.denominator
    exponent = numerator.bit_length() - denominator.bit_length()
    if exponent >= 0:
        if numerator < denominator << exponent:
            exponent -= 1
    elif numerator << -exponent < denominator:
        exponent -= 1
    # Now 2**exponent <= |exact| < 2**(exponent + 1); the unit in the last place:
    ulp = max(exponent, _MIN_NORMAL_EXP) - (_SIGNIFICAND_BITS - 1)
    if ulp >= 0:
        denominator <<= ulp
    else:
        numerator <<= -ulp
    significand, remainder = divmod(numerator, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and significand & 1):
        significand += 1
    if significand.bit_length() + ulp > _MAX_BITS:
        return -_INFINITY if negative else _INFINITY
    rounded = Fraction(significand << ulp) if ulp >= 0 else Fraction(significand, 1 << -ulp)
    return -rounded if negative else rounded


def _int_from_digits(digits: bytes, base: int = 10) -> int:
    """int() without Python's limit on the length of decimal strings."""
    if base != 10 or len(digits) <= _DIGIT_CHUNK:
        return int(digits, base) if digits else 0
    head, tail = digits[:-_DIGIT_CHUNK], digits[-_DIGIT_CHUNK:]
    return _int_from_digits(head) * 10**_DIGIT_CHUNK + int(tail)


def _digits_of(number: int) -> bytes:
    """str(int) without Python's limit on the length of decimal strings."""
    if number < 10**_DIGIT_CHUNK:
        return b"%d" % number
    high, low = divmod(number, 10**_DIGIT_CHUNK)
    return _digits_of(high) + b"%0*d" % (_DIGIT_CHUNK, low)


def _exponent(text: bytes | None) -> int:
    """An exponent, clamped: beyond ten million every value over- or underflows anyway."""
    if not text:
        return 0
    if len(text.lstrip(b"+-").lstrip(b"0")) > 9:
        return -_HUGE_EXPONENT if text[:1] == b"-" else _HUGE_EXPONENT
    return int(text)


def _strtold(text: bytes) -> LongDouble | None:
    """The long double glibc's strtold reads from the whole of ``text``; None where Redis's
    string2ld refuses it (not a number, trailing bytes, overflow or a non-zero number that
    underflows to zero: strtold's ERANGE)."""
    match = _DECIMAL.fullmatch(text)
    if match:
        sign, whole, fraction, exponent = match.groups()
        fraction = fraction or b""
        if not whole and not fraction:
            return None
        significant = (whole + fraction).lstrip(b"0")
        if not significant:
            return ZERO_LD
        scale = _exponent(exponent) - len(fraction)
        leading = len(significant) - 1 + scale  # decimal exponent of the leading digit
        if not -4960 <= leading <= 4940:  # far outside 3.6e-4951 .. 1.2e4932
            return None
        exact = Fraction(_int_from_digits(significant)) * Fraction(10) ** scale
    else:
        match = _HEXADECIMAL.fullmatch(text)
        if match:
            sign, whole, fraction, exponent = match.groups()
            fraction = fraction or b""
            if not whole and not fraction:
                return None
            significand = int(whole + fraction, 16)
            if significand == 0:
                return ZERO_LD
            scale = _exponent(exponent) - 4 * len(fraction)
            if not -16500 <= significand.bit_length() + scale <= _MAX_BITS + 8:
                return None
            exact = Fraction(significand) * Fraction(2) ** scale
        else:
            match = _INFINITY_TEXT.fullmatch(text)
            if match is None:
                return None
            return -_INFINITY if match.group(1) == b"-" else _INFINITY
    rounded = _round_long_double(-exact if sign == b"-" else exact)
    if isinstance(rounded, float) or rounded == 0:
        return None
    return rounded


def string_to_long_double(text: bytes | bytearray) -> LongDouble | None:
    """Redis's ``string2ld``: the whole text must be a number ("inf" is one, NaN is not);
    None when it is not."""
    if not text or len(text) >= _MAX_LONG_DOUBLE_CHARS:
        return None
    return _strtold(bytes(text))


def add_long_doubles(first: LongDouble, second: LongDouble) -> LongDouble | None:
    """``first + second`` in long double precision; None when the sum is NaN or infinite."""
    if isinstance(first, float) or isinstance(second, float):
        return None
    total = _round_long_double(first + second)
    return None if isinstance(total, float) else total


def format_long_double(value: LongDouble) -> bytes:
    """printf("%.17Lf") with the trailing zeros (and a bare '.') removed, "-0" shown as "0":
    Redis's human-friendly long double format (ld2string, LD_STR_HUMAN)."""
    if isinstance(value, float):
        return b"inf" if value > 0 else b"-inf"
    scaled = abs(value) * 10**17
    units, remainder = divmod(scaled.numerator, scaled.denominator)
    if 2 * remainder > scaled.denominator or (
        2 * remainder == scaled.denominator and units & 1
    ):
        units += 1
    whole, fraction = divmod(units, 10**17)
    text = _digits_of(whole)
    decimals = (b"%017d" % fraction).rstrip(b"0")
    if decimals:
        text += b"." + decimals
    if value < 0 and text != b"0":
        text = b"-" + text
    if len(text) + 1 > _MAX_LONG_DOUBLE_CHARS:
        return b""  # Redis's buffer overflows and it stores an empty string
    return text


def incr_by_float(current: bytes | bytearray | None, increment: bytes) -> bytes | int:
    """INCRBYFLOAT's and HINCRBYFLOAT's arithmetic: the text Redis stores for ``current +
    increment`` (``current`` None counts as 0), or the code of the first check that fails:
    :data:`INCREMENT_NOT_FLOAT`, :data:`CURRENT_NOT_FLOAT`, :data:`NOT_FINITE` (the sum).
    In C where built: the twin's Fractions cost some 16 us an increment."""
    if _native_incr_by_float is not None:
        return _native_incr_by_float(current, increment)
    return incr_by_float_twin(current, increment)


def incr_by_float_twin(current: bytes | bytearray | None, increment: bytes) -> bytes | int:
    """:func:`incr_by_float` in Python (the C's twin, which the pure build runs)."""
    added = string_to_long_double(increment)
    if added is None:
        return INCREMENT_NOT_FLOAT
    start: LongDouble = ZERO_LD
    if current is not None:
        value = string_to_long_double(current)
        if value is None:
            return CURRENT_NOT_FLOAT
        start = value
    total = add_long_doubles(start, added)
    if total is None:
        return NOT_FINITE
    return format_long_double(total)


def timeout_millis(text: bytes) -> int | None:
    """A blocking command's timeout in seconds as Redis reads it: ``ceill(value * 1000)``, the
    product rounded to a long double first; None when ``text`` is not a number. Any product
    above LLONG_MAX gives 2**63 and any below LLONG_MIN gives LLONG_MIN: both are errors."""
    if _native_timeout_millis is not None:
        return _native_timeout_millis(text)
    return timeout_millis_twin(text)


def timeout_millis_twin(text: bytes) -> int | None:
    """:func:`timeout_millis` in Python (the C's twin, which the pure build runs)."""
    seconds = string_to_long_double(text)
    if seconds is None:
        return None
    millis = seconds if isinstance(seconds, float) else _round_long_double(seconds * 1000)
    if isinstance(millis, float):  # infinite
        return _LLONG_MAX + 1 if millis > 0 else _LLONG_MIN
    if millis > _LLONG_MAX:
        return _LLONG_MAX + 1
    return max(-((-millis.numerator) // millis.denominator), _LLONG_MIN)  # ceil
