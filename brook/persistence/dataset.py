"""The whole dataset in a file, in the format ``snapshot-format`` names: Redis's RDB file
(:mod:`brook.persistence.rdbfile`, the default: every Redis tool reads it) or Brook's snapshot
(:mod:`brook.persistence.snapshot`). Loading takes either, told apart by the first bytes.

SAVE, BGSAVE, DEBUG RELOAD, start-up and replication's full synchronisation (both sides) go
through here, so they all agree on what a dump file is.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import BinaryIO

from brook.keyspace import Keyspace
from brook.persistence.rdbfile import MAGIC, RdbFileError, RdbOptions, load_rdb, write_rdb
from brook.persistence.snapshot import (
    SnapshotError,
    debug_delay,
    load_snapshot,
    read_source,
    write_atomically,
    write_snapshot,
)

__all__ = ["SnapshotError", "load_dataset", "write_dataset"]


def write_dataset(keyspace: Keyspace, target: str | os.PathLike[str] | BinaryIO,
                  config: RdbOptions, libraries: Iterable[bytes] = (),
                  key_delay_us: int = 0, redis_file: bool = False) -> None:
    """Write the dataset and the FUNCTION ``libraries`` to ``target`` (a path, replaced
    atomically, or a binary file object, not closed) in ``config``'s snapshot format, or in
    Redis's whatever it says (``redis_file``: the reader asked for Redis's file).
    ``key_delay_us`` (``rdb-key-save-delay``, for tests) pauses after each key."""
    if config.snapshot_format != "rdb" and not redis_file:
        write_snapshot(keyspace, target, libraries, key_delay_us)
        return

    def write(out: BinaryIO) -> None:
        write_rdb(keyspace, out, config, libraries, after_key=_pause(key_delay_us))

    if isinstance(target, (str, os.PathLike)):
        write_atomically(target, write)
    else:
        write(target)


def load_dataset(keyspace: Keyspace, source: str | os.PathLike[str] | bytes,
                 config: RdbOptions, libraries: list[bytes] | None = None,
                 key_delay_us: int = 0) -> int:
    """Fill ``keyspace`` from an RDB file or a Brook snapshot (a path or the bytes); the keys
    loaded. The FUNCTION libraries' code goes to ``libraries``. :class:`SnapshotError` when
    the file cannot be loaded; nothing was stored then."""
    data = read_source(source)
    with _collector_paused():
        if not data.startswith(MAGIC):
            return load_snapshot(keyspace, data, libraries, key_delay_us)
        try:
            return load_rdb(keyspace, data, config, [] if libraries is None else libraries,
                            after_key=_pause(key_delay_us))
        except RdbFileError as err:
            raise SnapshotError(str(err)) from err


@contextmanager
def _collector_paused() -> Iterator[None]:
    """CPython's cycle collector off while a dataset loads: the rows of a stream's nodes are
    lists made by the million and dropped once sealed, no cycle among them, and collecting
    them as they are made took three quarters of loading a stream from an RDB file."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _pause(key_delay_us: int) -> Callable[[], None] | None:
    """What runs after each key for ``rdb-key-save-delay``/``key-load-delay`` (tests)."""
    return (lambda: debug_delay(key_delay_us)) if key_delay_us else None
