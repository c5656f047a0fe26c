"""What each command does to its keys, for ACL key permissions.

Redis's key specifications say, per group of keys, whether a command reads them (ACCESS: the
``%R~`` permission) and whether it inserts, deletes or updates them (the ``%W~`` permission);
a key spec with neither (EXISTS, TYPE, the ``*LEN`` commands) is allowed by any pattern that
matches. Written here as ``R``, ``W``, ``RW`` or ``-``; two values are the first key's and the
other keys' (``COPY src dst``: ``R W``). These are the flags COMMAND INFO shows
(tests/commands/test_command_table.py compares them with real Redis). SET and BITFIELD depend on their
arguments (:func:`key_needs`). They are read from the key specs' flags of
brook/commands/key_specs.py, the table COMMAND GETKEYSANDFLAGS reports.
"""

from __future__ import annotations

from typing import Final

from brook.acl.rules import READ, WRITE
from brook.commands.key_specs import KEY_SPEC_FLAGS, bitfield_reads_only, set_reads
from brook.commands.registry import Command

__all__ = ["KEY_ACCESS", "key_needs", "needs_of", "single_key"]

_FLAGS: Final = {"R": READ, "W": WRITE, "RW": READ | WRITE, "-": 0}


def _access(flags: str) -> str:
    """A key spec's flags as R, W, RW or -: ACCESS reads, INSERT, DELETE and UPDATE write."""
    words = flags.split()
    text = ("R" if "access" in words else "") + (
        "W" if {"insert", "delete", "update"}.intersection(words) else "")
    return text or "-"


def _first_and_rest(specs: tuple[str, ...]) -> str:
    first, rest = _access(specs[0]), _access(specs[-1])
    return first if first == rest else f"{first} {rest}"


# The key specs' flags (brook/commands/key_specs.py) as ACL needs.
KEY_ACCESS: Final[dict[str, str]] = {
    name: _first_and_rest(specs) for name, specs in KEY_SPEC_FLAGS.items()
}


# KEY_ACCESS as flags: (the first key's, the others').
_NEEDS: Final[dict[str, tuple[int, int]]] = {
    name: (_FLAGS[access.split()[0]], _FLAGS[access.split()[-1]])
    for name, access in KEY_ACCESS.items()
}


def key_needs(cmd: Command, args: list[bytes]) -> list[tuple[int, int]]:
    """(argument index, READ|WRITE needed) for each key of a request."""
    positions = cmd.key_positions(len(args), args)
    if not positions:
        return []
    first, rest = needs_of(cmd, args)
    return [(index, first if number == 0 else rest) for number, index in enumerate(positions)]


def single_key(cmd: Command) -> bool:
    """Whether the command's one key is at a fixed place (most commands): the check then
    reads it and its need directly, without key_needs' list."""
    first_key = cmd.first_key
    return first_key > 0 and first_key == cmd.last_key and cmd.find_keys is None


def needs_of(cmd: Command, args: list[bytes]) -> tuple[int, int]:
    """What the request's first key needs, and what its other keys need."""
    name = cmd.fullname
    if name == "set":
        # Only SET ... GET reads the key (Redis's setGetKeys).
        need = WRITE | (READ if len(args) > 3 and set_reads(args) else 0)
        return need, need
    if name == "bitfield" and bitfield_reads_only(args):
        return READ, READ
    needs = _NEEDS.get(name)
    if needs is None:
        need = READ | WRITE if cmd.is_write else READ
        return need, need
    return needs
