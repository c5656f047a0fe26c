"""The append-only file: every change, as RESP commands, written before the reply goes out.

Redis's model (aof.c): commands append their effects to a buffer while they run (the effect log,
brook/persistence/effectlog.py, which replicas follow too); before any reply of the event-loop
turn is sent, what it holds is written to the file, and with
``appendfsync always`` fsynced too, so an acknowledged write is on disk. With ``everysec`` the
write happens at the same point and a background thread fsyncs at most once a second, so a
crash loses at most about one second of acknowledged writes and the event loop never waits for
the disk; ``no`` leaves the flushing to the kernel.

The file is a plain stream of RESP arrays (Redis's pre-7 single-file layout), with ``SELECT``
whenever the database changes, so ``redis-check-aof`` reads it and a truncated tail is easy to
find. While a rewrite runs, the same bytes also go to the rewrite buffer, which is appended to
the rewritten file before it replaces the old one.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Final

__all__ = ["AppendOnlyFile", "encode_command", "encode_xadd"]

_CRLF: Final = b"\r\n"
_ARRAY_HEADERS: Final = [b"*%d\r\n" % n for n in range(64)]
_BULK_HEADERS: Final = [b"$%d\r\n" % n for n in range(1024)]
_SELECTS: Final[dict[int, bytes]] = {}


def encode_command(argv: list[bytes]) -> bytes:
    """One command as a RESP array of bulk strings (what a client sends)."""
    parts = [_ARRAY_HEADERS[len(argv)] if len(argv) < 64 else b"*%d\r\n" % len(argv)]
    _encode_into(parts, argv)
    return b"".join(parts)


def encoded_size(argv: list[bytes]) -> int:
    """The bytes :func:`encode_command` makes of ``argv``, without making them (a replica
    counts its offset this way)."""
    size = 3 + _digits(len(argv))
    for arg in argv:
        length = len(arg)
        size += length + 5 + _digits(length)
    return size


def _digits(number: int) -> int:
    count = 1
    while number >= 10:
        number //= 10
        count += 1
    return count


def _encode_into(parts: list[bytes], args: list[bytes]) -> None:
    """Append the bulk strings of ``args`` to ``parts`` (the cheapest form measured: one
    ``+=`` of a tuple per argument; slice tricks and ``%`` templates cost more)."""
    headers = _BULK_HEADERS
    for arg in args:
        size = len(arg)
        parts += (headers[size] if size < 1024 else b"$%d\r\n" % size, arg, _CRLF)


def encode_xadd(key: bytes, entry_id: bytes, fields: list[bytes]) -> bytes:
    """``XADD key <id> field value ...``: the hottest effect, encoded without building its
    argument list first."""
    count = 3 + len(fields)
    size = len(key)
    parts = [
        _ARRAY_HEADERS[count] if count < 64 else b"*%d\r\n" % count,
        b"$4\r\nXADD\r\n",
        _BULK_HEADERS[size] if size < 1024 else b"$%d\r\n" % size, key, _CRLF,
        _BULK_HEADERS[len(entry_id)], entry_id, _CRLF,
    ]
    headers = _BULK_HEADERS
    for arg in fields:  # _encode_into, inlined
        size = len(arg)
        parts += (headers[size] if size < 1024 else b"$%d\r\n" % size, arg, _CRLF)
    return b"".join(parts)


def select_command(db_index: int) -> bytes:
    encoded = _SELECTS.get(db_index)
    if encoded is None:
        encoded = _SELECTS[db_index] = encode_command([b"SELECT", str(db_index).encode()])
    return encoded


class AppendOnlyFile:
    """The open AOF: payloads of the effect log, written and fsynced by policy."""

    def __init__(self, path: str, fsync_policy: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.size = os.fstat(self.fd).st_size  # bytes written so far (INFO aof_current_size)
        self.base_size = self.size  # size after the last rewrite (auto-rewrite growth base)
        self.fsync_policy = fsync_policy
        # What a failed write left unwritten: it goes out first with the next write.
        self.pending: list[bytes] = []
        # Commands accepted while a rewrite child runs: appended to its file before the swap.
        self.rewrite_buffer: list[bytes] | None = None
        self.last_write_ok = True
        self.last_write_error = ""
        self.written_unsynced = False  # written since the last fsync began
        self.last_fsync = time.monotonic()
        self.fsync_thread: threading.Thread | None = None
        self.delayed_fsyncs = 0  # INFO aof_delayed_fsync
        # Replication offsets (Redis's fsynced_reploff): where the written bytes end in the
        # server's stream, and where those known to be on disk end (WAITAOF's local answer).
        self.written_offset = 0
        self.fsynced_offset = 0

    # -- writing ----------------------------------------------------------------------------

    def write(self, payload: bytes, offset: int = -1) -> bool:
        """Write ``payload`` after anything a failed write left (before any reply of this turn
        goes out); with ``always`` also fsync. ``offset`` is where the payload ends in the
        replication stream (-1: unchanged). False when the write failed (the data stays
        pending for the next try)."""
        if self.rewrite_buffer is not None and payload:
            self.rewrite_buffer.append(payload)
        pending = self.pending
        if pending:
            pending.append(payload)
            payload = b"".join(pending)
            pending.clear()
        if not payload:
            return True
        try:
            view = memoryview(payload)
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
                self.size += written
        except OSError as err:
            # Keep what was not written: it goes out with the next write.
            pending.append(bytes(view))
            self.last_write_ok = False
            self.last_write_error = err.strerror or str(err)
            return False
        self.last_write_ok = True
        if offset >= 0:
            self.written_offset = offset
        if self.fsync_policy == "always":
            os.fsync(self.fd)
            self.last_fsync = time.monotonic()
            self.fsynced_offset = self.written_offset
        else:
            self.written_unsynced = True
        return True

    def tick(self, offset: int) -> None:
        """Once per cron tick: ``everysec`` starts a background fsync when a second passed.
        ``offset`` is the stream's end: when all that was written is on disk, it is fsynced
        as far as the AOF is concerned (commands for replicas only moved it, Redis's rule)."""
        if not self.written_unsynced:
            if self.fsync_policy != "no" and not self.fsync_pending():
                self.fsynced_offset = max(self.fsynced_offset, offset)
            return
        if self.fsync_policy != "everysec":
            return
        now = time.monotonic()
        if now - self.last_fsync < 1.0:
            return
        running = self.fsync_thread
        if running is not None and running.is_alive():
            self.delayed_fsyncs += 1  # the disk is slower than a second: wait for it
            return
        self.written_unsynced = False
        self.last_fsync = now
        thread = threading.Thread(target=self._fsync_quietly, args=(self.written_offset,),
                                  name="aof-fsync", daemon=True)
        self.fsync_thread = thread
        thread.start()

    def _fsync_quietly(self, offset: int) -> None:
        try:
            os.fsync(self.fd)
        except OSError as err:
            self.last_write_ok = False
            self.last_write_error = err.strerror or str(err)
            return
        self.fsynced_offset = offset

    def sync(self) -> None:
        """Write what a failed write left and fsync now (shutdown, before a rewrite swap)."""
        self.write(b"")
        running = self.fsync_thread
        if running is not None:
            running.join()
        os.fsync(self.fd)
        self.written_unsynced = False
        self.last_fsync = time.monotonic()
        self.fsynced_offset = self.written_offset

    def fsync_pending(self) -> bool:
        """INFO aof_pending_bio_fsync."""
        running = self.fsync_thread
        return running is not None and running.is_alive()

    def close(self) -> None:
        self.sync()
        os.close(self.fd)
        self.fd = -1

    def reopen(self, path: str) -> None:
        """Switch to ``path`` (a rewritten file renamed over the old one)."""
        old = self.fd
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.path = path
        self.size = self.base_size = os.fstat(self.fd).st_size
        running = self.fsync_thread
        if running is not None:
            running.join()
        os.close(old)
