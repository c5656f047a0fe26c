"""Hash slots (cluster.c's keyHashSlot): which of the 16,384 slots a key or a shard channel
belongs to, and the slot arguments of the CLUSTER commands."""

from __future__ import annotations

import re
from binascii import crc_hqx
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


_ONES: Final = re.compile("1+")


def bitmap_runs(bitmap: bytes | bytearray) -> list[tuple[int, int]]:
    """(first, last) runs of the slots set in a bitmap laid out as the bus's (slot ``s`` is
    bit ``s & 7`` of byte ``s >> 3``): one regex pass over its bits, not a Python step per
    slot -- CLUSTER NODES and every nodes.conf save describe each node this way."""
    body = bytes(bitmap).lstrip(b"\0")  # (most claims checked add no slot at all)
    if not body:
        return []
    start = (len(bitmap) - len(body)) * 8
    body = body.rstrip(b"\0")
    bits = f"{int.from_bytes(body, 'little'):0{len(body) * 8}b}"[::-1]
    return [(start + match.start(), start + match.end() - 1)
            for match in _ONES.finditer(bits)]


def bitmap_slots(bitmap: bytes | bytearray) -> list[int]:
    """The slots set in a bitmap, in order."""
    return [slot for first, last in bitmap_runs(bitmap) for slot in range(first, last + 1)]


def bitmap_without(claimed: bytes | bytearray, known: bytes | bytearray) -> bytes:
    """The slots of ``claimed`` that ``known`` lacks: what a node's gossip claims anew, the
    only slots whose owner it can change (the others are its already)."""
    kept = int.from_bytes(claimed, "little") & ~int.from_bytes(known, "little")
    return kept.to_bytes(len(claimed), "little")
