"""The timeout argument of blocking commands, with Redis's errors."""

from __future__ import annotations

from brook.commands.args import parse_int
from brook.commands.registry import CommandError
from brook.types.long_double import timeout_millis

_LLONG_MAX = (1 << 63) - 1
_EXACT_DIGITS = 19  # every integer below 10**19 < 2**64 is exact in a long double


def parse_timeout(arg: bytes, seconds: bool, now_ms: int) -> int:
    """A blocking timeout in milliseconds (0 = forever) with Redis's errors: seconds with
    decimals for list commands (rounded up to the millisecond), whole milliseconds for X*;
    ``now_ms`` is the command's time, which the timeout's deadline must not overflow from."""
    if seconds and arg.isdigit() and len(arg) <= _EXACT_DIGITS:
        # A whole number of seconds (what job frameworks send on every BRPOP and BLMOVE) is
        # exact in a long double: the same milliseconds without the arithmetic below.
        timeout = int(arg) * 1000
    elif seconds:
        millis = timeout_millis(arg)  # ceill(seconds * 1000) in long double, as Redis
        if millis is None:
            raise CommandError("ERR timeout is not a float or out of range")
        if millis > _LLONG_MAX:
            raise CommandError("ERR timeout is out of range")
        timeout = millis
    else:
        timeout = parse_int(arg, "ERR timeout is not an integer or out of range")
    if timeout < 0:
        raise CommandError("ERR timeout is negative")
    if timeout > _LLONG_MAX - now_ms:
        raise CommandError("ERR timeout is out of range")
    return timeout
