"""The digits Redis writes for a double: Grisu2, as its fpconv_dtoa generates them.

Redis's ``d2string`` prints a non-integral double with fpconv (Florian Loitsch's Grisu2 over
64-bit integers), not with a shortest-digits algorithm: Grisu2 works inside the double's
rounding interval narrowed by one unit of its 64-bit approximation on each side, so for a few
doubles in a thousand it emits a digit more than the shortest text that reads back (Redis
writes 3462.0978002316738 where Python's ``repr`` has 3462.097800231674), and it picks the
last digit by its own rounding. Every double reply, score and coordinate follows these digits,
so they are computed the same way here:

1. the double and the bounds of its rounding interval as 64-bit significands;
2. scaled by a cached power of ten chosen so the product's binary exponent falls in
   [-60, -32] (the table holds 10**-348 .. 10**340 in steps of 8, rounded to 64 bits; a
   product keeps its high 64 bits, rounded half up);
3. digits of the upper bound generated until the rest fits in the interval, the last digit
   then moved towards the value while that stays inside it.
"""

from __future__ import annotations

import struct
from typing import Final

_HIDDEN: Final = 1 << 52
_FRACTION: Final = _HIDDEN - 1
_BIAS: Final = 1023 + 52
_U64: Final = (1 << 64) - 1
_DOUBLE: Final = struct.Struct("<d")
_BITS: Final = struct.Struct("<Q")

_FIRST_POWER: Final = -348
_POWER_STEP: Final = 8
_POWERS: Final = 87
_EXP_MIN: Final = -60
_EXP_MAX: Final = -32
_ONE_LOG_TEN: Final = 0.30102999566398114
_TENS: Final = [10 ** (19 - i) for i in range(20)]  # 10**19 .. 1


def _cached_power(k: int) -> tuple[int, int]:
    """10**k as (64-bit significand rounded to nearest, binary exponent)."""
    if k >= 0:
        numerator, denominator = 10 ** k, 1
    else:
        numerator, denominator = 1, 10 ** -k
    exponent = numerator.bit_length() - denominator.bit_length() - 64
    while True:
        if exponent >= 0:
            scaled_num, scaled_den = numerator, denominator << exponent
        else:
            scaled_num, scaled_den = numerator << -exponent, denominator
        significand, rest = divmod(scaled_num, scaled_den)
        if significand >= 1 << 64:
            exponent += 1
            continue
        if significand < 1 << 63:
            exponent -= 1
            continue
        if 2 * rest >= scaled_den:
            significand += 1
        return significand, exponent


_CACHED: Final = [_cached_power(_FIRST_POWER + i * _POWER_STEP) for i in range(_POWERS)]


def _power_for(upper_exp: int) -> tuple[int, int, int]:
    """find_cachedpow10: (significand, binary exponent, k) of the cached 10**k that brings a
    normalised exponent into [-60, -32], searched from fpconv's estimate."""
    approx = int(-(upper_exp + _POWERS) * _ONE_LOG_TEN)
    index = int((approx - _FIRST_POWER) / _POWER_STEP)
    while True:
        current = upper_exp + _CACHED[index][1] + 64
        if current < _EXP_MIN:
            index += 1
        elif current > _EXP_MAX:
            index -= 1
        else:
            power, power_exp = _CACHED[index]
            return power, power_exp, _FIRST_POWER + index * _POWER_STEP


# Every normalised exponent a double's upper bound can have, with its cached power.
_LOWEST_EXP: Final = -1074 - 63
_POWER_BY_EXP: Final = [_power_for(e) for e in range(_LOWEST_EXP, 1024)]


def digits_of(value: float) -> tuple[str, int]:
    """Grisu2's (digits, K) of a finite, non-zero double: ``|value|`` reads as
    ``int(digits) * 10**K``."""
    bits = _BITS.unpack(_DOUBLE.pack(value))[0] & ~(1 << 63)
    fraction = bits & _FRACTION
    biased = bits >> 52
    if biased:  # normal: the bounds and the value need no normalising loop
        fraction += _HIDDEN
        exponent = biased - _BIAS
        upper = ((fraction << 1) + 1) << 10
        upper_exp = exponent - 11
        if fraction == _HIDDEN:
            lower = ((fraction << 2) - 1) << 9
        else:
            lower = ((fraction << 1) - 1) << 10
        fraction <<= 11
    else:
        exponent = 1 - _BIAS
        # The upper bound (value + half an ulp), normalised to 64 bits.
        upper = (fraction << 1) + 1
        upper_exp = exponent - 1
        while not upper & (_HIDDEN << 1):
            upper <<= 1
            upper_exp -= 1
        upper <<= 64 - 52 - 2
        upper_exp -= 64 - 52 - 2
        # The lower bound (half an ulp below), on the same exponent.
        lower = ((fraction << 1) - 1) << ((exponent - 1) - upper_exp)
        # The value itself, normalised.
        while not fraction & _HIDDEN:
            fraction <<= 1
        fraction <<= 64 - 52 - 1
    power, power_exp, k = _POWER_BY_EXP[upper_exp - _LOWEST_EXP]
    w = (fraction * power + (1 << 63)) >> 64
    high = (((upper * power + (1 << 63)) >> 64) - 1) & _U64
    low = (((lower * power + (1 << 63)) >> 64) + 1) & _U64
    return _generate(w, high, low, -(upper_exp + power_exp + 64), -k)


def _generate(w: int, upper: int, lower: int, shift: int, big_k: int) -> tuple[str, int]:
    """fpconv's generate_digits: the fewest leading digits of the upper bound whose rest fits
    in the interval, and the last digit rounded. fpconv tries one digit more at a time; the
    rest only shrinks as digits are added, so the count is found from an estimate instead
    (the same digits): among the integral part's digits when the fraction alone fits, else
    the fewest fractional places."""
    distance = (upper - w) & _U64
    delta = (upper - lower) & _U64
    one = 1 << shift
    mask = one - 1
    part1 = upper >> shift  # at least 8: the upper bound's top bit is bit 63
    part2 = upper & mask
    if part2 <= delta:  # the integral part is enough: keep as few of its digits as fit
        kappa = 0
        while kappa < 9 and ((part1 % _TENS[18 - kappa]) << shift) + part2 <= delta:
            kappa += 1
        power = _TENS[19 - kappa]
        rest = ((part1 % power) << shift) + part2
        number = _rounded(part1 // power, delta, rest, (power << shift) & _U64, distance)
        return str(number), big_k + kappa
    # Fractional places: the fewest with (part2 * 10**places) % one < delta * 10**places;
    # enough of them make delta * 10**places reach one.
    needed = -(-one // delta)
    places = max(1, len(str(needed - 1)))
    while places > 1 and (part2 * _TENS[20 - places]) & mask < delta * _TENS[20 - places]:
        places -= 1
    scale = _TENS[19 - places]
    scaled = part2 * scale
    number = _rounded(part1 * scale + (scaled >> shift), delta * scale, scaled & mask, one,
                      distance * scale)
    return str(number), big_k - places


def _rounded(number: int, delta: int, rest: int, step: int, distance: int) -> int:
    """The digits (as a number) with the last one moved down towards the value while the
    result stays in the interval and gets closer (fpconv's round_digit, in 64-bit
    arithmetic)."""
    while (rest < distance and delta - rest >= step
           and (((rest + step) & _U64) < distance
                or distance - rest > ((rest + step - distance) & _U64))):
        number -= 1
        rest = (rest + step) & _U64
    return number


__all__ = ["digits_of"]
