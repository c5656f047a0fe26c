"""Hash slots (cluster.c's keyHashSlot): which of the 16,384 slots a key or a shard channel
belongs to, and the slot arguments of the CLUSTER commands."""

from __future__ import annotations

from binascii import crc_hqx
from collections.abc import Iterable
from typing import Final

SLOTS: Final = 16384
_OPENING: Final = 0x7B  # "{" as an int: ``int in bytes`` is a memchr, ``b"{" in`` ten times that
# Compiled, a Final is a C static; a module global would be a dictionary lookup per key.
_CRC16: Final = crc_hqx


def key_slot(key: bytes) -> int:
    """CRC16 (XMODEM: what binascii's crc_hqx computes from 0) of the key, or of its hash tag
    -- what lies between the first ``{`` and the first ``}`` after it, when not empty (``{}``
    hashes the whole key) -- so that ``{user1}.a`` and ``{user1}.b`` share a slot. Run for
    every key of every request in cluster mode (compiled: setup.py)."""
    if _OPENING in key:  # (the usual key has no tag)
        opening = key.find(b"{")
        closing = key.find(b"}", opening + 1)
        if closing > opening + 1:
            key = key[opening + 1:closing]
    return _CRC16(key, 0) & (SLOTS - 1)


def slot_ranges(slots: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted slots as (first, last) runs of consecutive slots."""
    runs: list[tuple[int, int]] = []
    for slot in slots:
        if runs and runs[-1][1] == slot - 1:
            runs[-1] = (runs[-1][0], slot)
        else:
            runs.append((slot, slot))
    return runs
