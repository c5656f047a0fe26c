"""CRC-64/Jones, the checksum Redis puts at the end of DUMP and FUNCTION DUMP payloads
(reflected polynomial 0xad93d23594c935a9, initial value 0)."""

from __future__ import annotations

_POLY = 0x95AC9329AC4BC9B5  # the polynomial's bits reversed, for the reflected algorithm


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc64(data: bytes, crc: int = 0) -> int:
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc
