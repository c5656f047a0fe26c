"""The arguments of the list commands that other families parse the same way: LEFT | RIGHT,
LMOVEM's count and ordering, LMPOP's ``numkeys key [key ...] where [COUNT count]`` (which
ZMPOP and the blocking forms share) and the key positions COMMAND GETKEYS reports for them.

It registers no command, so list, blocking-list and sorted-set commands import it, not one
another.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from brook.commands.args import LONG_MAX, LONG_MIN, parse_int
from brook.commands.registry import SYNTAX_ERROR, CommandError

NUMKEYS_ERROR: Final = "ERR numkeys should be greater than 0"
MPOP_COUNT_ERROR: Final = "ERR count should be greater than 0"


def option_word(arg: bytes) -> bytes:
    """An option word as Redis's ``strcasecmp`` sees it: lower-cased, up to an embedded NUL."""
    if b"\0" in arg:
        arg = arg.split(b"\0", 1)[0]
    return arg.lower()


def at_least_one(arg: bytes, message: str) -> int:
    """Redis's getRangeLongFromObjectOrReply(1, LONG_MAX, message)."""
    value = parse_int(arg, message)
    if value < 1:
        raise CommandError(message)
    return value


def parse_direction(arg: bytes) -> bool:
    """LEFT (True) or RIGHT (False), case-insensitively; Redis's syntax error otherwise."""
    word = option_word(arg)
    if word == b"left":
        return True
    if word == b"right":
        return False
    raise CommandError(SYNTAX_ERROR)


class HowMany:
    """LMOVEM's optional ``COUNT n | EXACTLY n`` and ``OBO | BULK`` (one element by default)."""

    __slots__ = ("count", "exactly", "one_by_one")

    def __init__(self, count: int = 1, exactly: bool = False, one_by_one: bool = True) -> None:
        self.count = count
        self.exactly = exactly
        self.one_by_one = one_by_one

    def needed(self) -> int:
        """Elements the source must hold for a move: BLMOVEM waits until it does."""
        return self.count if self.exactly else 1


def parse_how_many(args: list[bytes], start: int, end: int) -> HowMany:
    """``args[start:end]``: nothing, or a selector with its positive count and an ordering
    (Redis 8.10's lmovemParseOptions: both parts or neither)."""
    if start == end:
        return HowMany()
    if end - start != 3:
        raise CommandError(SYNTAX_ERROR)
    selector = option_word(args[start])
    if selector not in (b"count", b"exactly"):
        raise CommandError(SYNTAX_ERROR)
    count = at_least_one(args[start + 1], MPOP_COUNT_ERROR)
    ordering = option_word(args[start + 2])
    if ordering not in (b"obo", b"bulk"):
        raise CommandError(SYNTAX_ERROR)
    return HowMany(count, selector == b"exactly", ordering == b"obo")


def parse_mpop_args(args: list[bytes], first_key_index: int,
                    parse_where: Callable[[bytes], bool] = parse_direction,
                    ) -> tuple[list[bytes], bool, int]:
    """LMPOP's (and BLMPOP's) ``numkeys key [key ...] LEFT | RIGHT [COUNT count]``, where
    ``numkeys`` is ``args[first_key_index - 1]``: (keys, left, count), count 1 by default.
    ZMPOP/BZMPOP have the same shape with MIN | MAX (``parse_where``).

    Redis's lmpopGenericCommand order: numkeys, then the direction (a syntax error when the
    keys run past the end), then COUNT, given at most once."""
    numkeys = at_least_one(args[first_key_index - 1], NUMKEYS_ERROR)
    where = first_key_index + numkeys
    if where >= len(args):
        raise CommandError(SYNTAX_ERROR)
    left = parse_where(args[where])
    count = -1
    position = where + 1
    while position < len(args):
        if count == -1 and position + 1 < len(args) and option_word(args[position]) == b"count":
            count = at_least_one(args[position + 1], MPOP_COUNT_ERROR)
            position += 2
        else:
            raise CommandError(SYNTAX_ERROR)
    return args[first_key_index:where], left, 1 if count == -1 else count


_ATOI_PREFIX: Final = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _atoi(arg: bytes) -> int:
    """C's atoi, which Redis's lmpopGetKeys applies to numkeys: leading digits only, 0 for
    none, the low 32 bits of a saturated long beyond int range."""
    match = _ATOI_PREFIX.match(arg)
    if match is None:
        return 0
    value = max(LONG_MIN, min(LONG_MAX, int(match.group(1))))
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def lmpop_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """LMPOP's keys for COMMAND GETKEYS (``args[0]`` is the command): numkeys keys from
    index 2, none when numkeys is below 1 or names more arguments than there are."""
    numkeys = _atoi(args[1]) if argc > 1 else 0
    if numkeys < 1 or numkeys > argc - 2:
        return []
    return list(range(2, 2 + numkeys))


def blmpop_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """BLMPOP's and BZMPOP's keys: LMPOP's, one argument further (the timeout comes first)."""
    return [position + 1 for position in lmpop_key_positions(argc - 1, args[1:])]
