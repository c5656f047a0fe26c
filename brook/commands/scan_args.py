"""What every SCAN-family command parses and replies alike: the cursor (Redis's string2ull),
the COUNT / MATCH / TYPE / NOVALUES options, the ``cursor, items`` reply, and SSCAN's and
ZSCAN's key lookup. The cursor scheme itself is described in :mod:`brook.commands.scan`.

It registers no command: SCAN, HSCAN, SSCAN (:mod:`brook.commands.scan`) and ZSCAN
(:mod:`brook.commands.zset_algebra`) import it, not one another.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from brook import glob, keyspace
from brook.commands.args import parse_int
from brook.commands.registry import SYNTAX_ERROR, WRONGTYPE, CommandError
from brook.protocol import resp
from brook.protocol.requests import parse_strict_int

if TYPE_CHECKING:
    from brook.session import Session

INVALID_CURSOR = "ERR invalid cursor"
NOVALUES_ONLY_HSCAN = "ERR NOVALUES option can only be used in HSCAN"
EMPTY_SCAN = b"*2\r\n$1\r\n0\r\n*0\r\n"
_CURSOR_MAX = 2**64 - 1
# What C's strtoull accepts after string2ll refused: leading spaces, a sign, decimal digits.
_STRTOULL = re.compile(rb"[ \t\n\v\f\r]*([+-]?)([0-9]+)")


def parse_cursor(arg: bytes) -> int:
    """Redis's ``string2ull``: a strict integer that is not negative, else ``strtoull``'s
    looser syntax (leading spaces, '+', leading zeros; '-' wraps modulo 2**64)."""
    value = parse_strict_int(arg)
    if value is not None:
        if value < 0:
            raise CommandError(INVALID_CURSOR)
        return value
    loose = _STRTOULL.fullmatch(arg)
    if loose is None:
        raise CommandError(INVALID_CURSOR)
    value = int(loose.group(2))
    if value > _CURSOR_MAX:
        raise CommandError(INVALID_CURSOR)
    return (-value) & _CURSOR_MAX if loose.group(1) == b"-" else value


class ScanOptions:
    """COUNT, MATCH, TYPE and NOVALUES as scanGenericCommand parses them. ``of`` says what is
    scanned: ``keys`` (SCAN: TYPE allowed), ``hash`` (HSCAN: NOVALUES allowed) or ``members``
    (SSCAN, ZSCAN: neither)."""

    __slots__ = ("count", "matches", "type_name", "no_values")

    def __init__(self, args: list[bytes], start: int, of: str) -> None:
        self.count = 10
        self.matches: Callable[[bytes], bool] | None = None
        self.type_name: bytes | None = None
        self.no_values = False
        position = start
        while position < len(args):
            option = args[position].lower()
            has_value = position + 1 < len(args)
            if option == b"count" and has_value:
                self.count = parse_int(args[position + 1])
                if self.count < 1:
                    raise CommandError(SYNTAX_ERROR)
                position += 2
            elif option == b"match" and has_value:
                pattern = args[position + 1]
                # Exactly "*" disables matching (and so also returns the empty key name).
                self.matches = None if pattern == b"*" else glob.matcher(pattern)
                position += 2
            elif option == b"type" and of == "keys" and has_value:
                self.type_name = args[position + 1].lower()
                position += 2
            elif option == b"novalues":
                if of != "hash":
                    raise CommandError(NOVALUES_ONLY_HSCAN)
                self.no_values = True
                position += 1
            else:
                raise CommandError(SYNTAX_ERROR)


def scan_reply(cursor: int, items: list[bytes]) -> bytes:
    """Every SCAN reply: the next cursor (a bulk string) and a flat array of items."""
    text = b"%d" % cursor
    return b"*2\r\n$%d\r\n%s\r\n%s" % (len(text), text, resp.array_of_bulks(items))


def scan_target(client: Session, args: list[bytes], type_name: str) -> object | None:
    """SSCAN/ZSCAN's key: parsed cursor first, then the key (None: missing), then its type,
    in the order Redis checks them."""
    value = client.db.lookup_read(args[1])
    if value is not None and keyspace.TYPE_NAMES.get(type(value)) != type_name:
        raise CommandError(WRONGTYPE)
    return value
