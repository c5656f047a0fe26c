"""Argument parsing shared by all commands, with Redis's exact error texts."""

from __future__ import annotations

import math

from brook.commands.registry import NOT_FLOAT, NOT_INTEGER, SYNTAX_ERROR, CommandError
from brook.protocol.requests import parse_strict_int

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


def parse_int(arg: bytes, error: str = NOT_INTEGER) -> int:
    """A 64-bit integer as Redis's ``string2ll`` reads it (strict: no spaces, '+' or leading 0)."""
    value = parse_strict_int(arg)
    if value is None:
        raise CommandError(error)
    return value


def parse_nonnegative_int(arg: bytes, error: str) -> int:
    value = parse_strict_int(arg)
    if value is None or value < 0:
        raise CommandError(error)
    return value


def parse_float(arg: bytes, error: str = NOT_FLOAT, allow_inf: bool = True) -> float:
    """A double as Redis's ``string2d``/``strtold`` reads it: no spaces, no NaN."""
    if not arg or arg[:1].isspace() or arg[-1:].isspace():
        raise CommandError(error)
    try:
        value = float(arg)
    except ValueError:
        raise CommandError(error)
    if math.isnan(value) or (not allow_inf and math.isinf(value)):
        raise CommandError(error)
    if b"_" in arg:  # Python accepts 1_000; C's strtod does not
        raise CommandError(error)
    return value


def lower(arg: bytes) -> bytes:
    return arg.lower()


def syntax_error() -> CommandError:
    return CommandError(SYNTAX_ERROR)


def text(arg: bytes) -> str:
    """Decode an argument for an error message, as Redis prints raw bytes."""
    return arg.decode("utf-8", "replace")
