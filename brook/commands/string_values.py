"""The string at a key, as every command that reads or writes strings (the string, bit and
HyperLogLog families) looks it up.

It registers no command: a family that works on strings imports it, not another family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.registry import WRONGTYPE, CommandError

if TYPE_CHECKING:
    from brook.keyspace import Database


def string_value(db: Database, key: bytes, counted: bool = False) -> bytes | bytearray | None:
    """The live string at ``key`` (None if missing); WRONGTYPE for any other type.

    ``counted`` is for read commands: they count keyspace hits and misses as Redis's
    ``lookupKeyRead`` does (a key of the wrong type counts as a hit)."""
    value = db.lookup_read(key) if counted else db.lookup(key)
    if value is None:
        return None
    kind = type(value)
    if kind is bytes or kind is bytearray:
        return value  # type: ignore[return-value]
    raise CommandError(WRONGTYPE)
