"""Argument parsing shared by all commands, with Redis's exact error texts."""

from __future__ import annotations

from brook.commands.registry import NOT_INTEGER, CommandError
from brook.protocol.requests import parse_strict_int

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
# A negative SRANDMEMBER (ZRANDMEMBER, HRANDFIELD) count repeats members without bound; beyond this many
# (gigabytes of reply) it is refused rather than exhaust the server's memory.
MAX_REPEATED_MEMBERS = 1 << 27


def parse_int(arg: bytes, error: str = NOT_INTEGER) -> int:
    """A 64-bit integer as Redis's ``string2ll`` reads it (strict: no spaces, '+' or leading 0)."""
    value = parse_strict_int(arg)
    if value is None:
        raise CommandError(error)
    return value
