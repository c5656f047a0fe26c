"""DUMP payloads: an RDB object, then the RDB version (2 bytes) and the CRC-64 of both.

The version written is 10 (Redis 7.0): Redis refuses a payload whose version is above its own
(verifyDumpPayload) and every later Redis reads older versions, and Brook writes only types
RDB 10 defines (:mod:`brook.rdb.encode`), so a payload from Brook restores on Redis 7.0 and on
the newest Redis alike. Payloads up to RDB 12
(Redis 7.4 and later) are read.
"""

from __future__ import annotations

from brook.rdb.constants import RDB_VERSION_READ, RDB_VERSION_WRITTEN
from brook.rdb.crc64 import crc64


def wrap(body: bytes, version: int = RDB_VERSION_WRITTEN) -> bytes:
    """``body`` with the footer: the version (at least RDB_VERSION_WRITTEN) and the CRC."""
    data = body + max(version, RDB_VERSION_WRITTEN).to_bytes(2, "little")
    return data + crc64(data).to_bytes(8, "little")


def body_of(payload: bytes, check_crc: bool = True) -> bytes | None:
    """The object of a payload whose version Brook reads and whose CRC is right; else None.
    (A CRC of zero is not a way around the check: Redis always verifies it for DUMP.)"""
    if len(payload) < 10:
        return None
    if int.from_bytes(payload[-10:-8], "little") > RDB_VERSION_READ:
        return None
    if check_crc and crc64(payload[:-8]) != int.from_bytes(payload[-8:], "little"):
        return None
    return payload[:-10]
