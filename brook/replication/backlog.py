"""The replication backlog: the newest bytes of the replication stream, for partial resyncs.

Redis's ``repl_backlog``: a replica that lost its link asks ``PSYNC <replid> <offset>``; when
the bytes from ``offset`` are still here, it gets ``+CONTINUE`` and exactly those bytes instead
of a whole new snapshot. Offsets count every byte of the stream since the replication ID was
made (``master_repl_offset``); the backlog holds the last ``repl-backlog-size`` of them (up to a
quarter more: trimming moves memory, so it is done in steps, as Redis trims whole blocks).
"""

from __future__ import annotations


class Backlog:
    """Bytes ``first_byte_offset`` .. ``offset`` of the stream (offsets are 1-based)."""

    __slots__ = ("data", "size", "offset")

    def __init__(self, size: int, offset: int) -> None:
        self.data = bytearray()
        self.size = size
        self.offset = offset  # the stream's length so far: master_repl_offset

    @property
    def histlen(self) -> int:
        return len(self.data)

    @property
    def first_byte_offset(self) -> int:
        return self.offset - len(self.data) + 1

    def append(self, payload: bytes) -> None:
        data = self.data
        data += payload
        self.offset += len(payload)
        if len(data) > self.size + (self.size >> 2):
            del data[: len(data) - self.size]

    def resize(self, size: int) -> None:
        self.size = size
        if len(self.data) > size:
            del self.data[: len(self.data) - size]

    def since(self, offset: int) -> bytes | None:
        """The bytes from ``offset`` (a replica's next byte) on; None when they are gone or
        were never written."""
        first = self.first_byte_offset
        if offset < first or offset > self.offset + 1:
            return None
        return bytes(self.data[offset - first:])
