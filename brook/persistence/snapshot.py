"""Snapshots: the whole keyspace in one checksummed binary file (Brook's RDB).

Brook's values are already compact byte layouts -- sealed stream nodes are one ``bytes`` blob
each, long lists are packed chunks -- so a snapshot stores those blobs as they are, with the
few numbers around them, instead of re-encoding entry by entry: writing and loading cost about
a copy of the data plus a little work per node, not per entry. Everything else (hashes, loose
list ends, the open tail node of a stream, pending entries) is written as length columns and
integer arrays that load in C.

The layout is specified in ``docs/snapshot-format.md``. In short: a header (magic
``BROOK-SNAPSHOT``, format version, the writer's byte order and integer widths), one section
per non-empty database, one record per key (type, expiry, key, payload), an end marker, and a
trailer with the file length and a CRC-32 of everything before it. :func:`load_snapshot`
checks the trailer before it parses anything, so a truncated or corrupted file is refused with
a :class:`SnapshotError` and the keyspace is left untouched.

Byte order: integers of the header and trailer are little-endian; every other integer, and the
columns inside sealed stream blobs (see :mod:`brook.types.stream_node`), are in the writer's native
order, recorded in the header. A reader on another byte order or word size refuses the file
(convert it through an AOF rewrite instead). Sealed list chunks are pickles of a list of
``bytes`` (:mod:`brook.types.lists`); they are checked on load with an unpickler that cannot
resolve any global, so a crafted file cannot make loading run code.

The reader trusts the structure of a file whose checksum is right (it is a checksum, not a
signature); a wrong count or offset in such a file raises :class:`SnapshotError`, but values
that are well-formed yet inconsistent (say, a stream blob whose IDs disagree with its node) are
not detected.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import random
import struct
import sys
import tempfile
import time
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Iterable
from itertools import accumulate
from pathlib import Path
from typing import BinaryIO

from brook.keyspace import Database, Keyspace
from brook.types import pel as pel_module
from brook.types.groups import Consumer, Group
from brook.types.hash import Hash
from brook.types.idmp import Idmp
from brook.types.lists import ListValue
from brook.types.pel import PendingTable
from brook.types.set import SetValue
from brook.types.stream import Stream
from brook.types.stream_node import Node, sealed_count
from brook.types.zset import SortedSet

MAGIC = b"BROOK-SNAPSHOT"
VERSION = 1
_MASK64 = (1 << 64) - 1

# Header: magic, version, byte order (0 little, 1 big), the sizes of the array typecodes
# b B h H i I l L q Q (the stream blobs' columns and ours depend on them), writer time (ms).
_TYPECODES = "bBhHiIlLqQ"
_HEADER = struct.Struct("<14sHB10sQ")
_TRAILER_MARK = b"BEND"
_TRAILER = struct.Struct("<4sQI")  # mark, file length (trailer included), CRC-32

# Section opcodes.
_OP_FUNCTION = 0xF5  # a FUNCTION library's code (the opcode Redis's RDB uses for them)
_OP_DB = 0xFE
_OP_END = 0xFF
# Value types.
T_STRING, T_STRING_RAW, T_HASH, T_LIST, T_STREAM, T_SET, T_ZSET = range(7)
# Encodings of sets and sorted sets as stored (Redis converts them one way only, so the
# encoding is part of the value).
_SET_ENCODINGS = ("intset", "listpack", "hashtable")
_ZSET_ENCODINGS = ("listpack", "skiplist")

_U8 = struct.Struct("=B")
_U32 = struct.Struct("=I")
_I64 = struct.Struct("=q")
_U64 = struct.Struct("=Q")
_KEYHEAD = struct.Struct("=Bq")  # type, expiry (ms, -1 = none)
_STREAM_HEAD = struct.Struct("=QQQQQQQQQQQ")
_NODE_HEAD = struct.Struct("=BQQQQQQ")  # sealed, master ms/seq, last ms/seq, live, count
_GROUP_HEAD = struct.Struct("=QQqQQ")  # last ms/seq, entries-read, owner slots, consumers
_CONSUMER = struct.Struct("=Qqq")  # slot, seen-time, active-time

_WRITE_CHUNK = 1 << 20


def _platform() -> bytes:
    return bytes(array(code).itemsize for code in _TYPECODES)


class SnapshotError(Exception):
    """A snapshot file that cannot be loaded (bad magic, version, platform, checksum...)."""


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


class Writer:
    """Buffered output that keeps the running checksum and length of what it wrote: CRC-32
    for Brook's snapshot, or ``checksum`` (a CRC function taking the data and the CRC so far:
    an RDB file's CRC-64, brook/persistence/rdbfile.py)."""

    def __init__(self, out: BinaryIO, checksum: Callable[[bytes, int], int] = zlib.crc32
                 ) -> None:
        self.out = out
        self.checksum = checksum
        self.parts: list[bytes] = []
        self.pending = 0
        self.crc = 0
        self.length = 0

    def put(self, data: bytes) -> None:
        self.parts.append(data)
        self.pending += len(data)
        if self.pending >= _WRITE_CHUNK:
            self.flush()

    def flush(self) -> None:
        if not self.parts:
            return
        data = b"".join(self.parts)
        self.parts = []
        self.pending = 0
        self.crc = self.checksum(data, self.crc)
        self.length += len(data)
        self.out.write(data)

    def u8(self, value: int) -> None:
        self.put(_U8.pack(value))

    def u64(self, value: int) -> None:
        self.put(_U64.pack(value))

    def blob(self, data: bytes | bytearray) -> None:
        self.put(_U64.pack(len(data)))
        self.put(bytes(data))

    def strings(self, items: list[bytes]) -> None:
        """A string list: count, a column of lengths, the strings back to back."""
        self.put(_U64.pack(len(items)))
        if items:
            self.put(array("Q", map(len, items)).tobytes())
            self.put(b"".join(items))

    def column(self, code: str, values: Iterable[int]) -> None:
        """An integer column whose length the reader already knows."""
        self.put(array(code, values).tobytes())

    def ids(self, ids: list[int]) -> None:
        """Stream IDs as two columns, milliseconds then sequence numbers."""
        self.column("Q", [i >> 64 for i in ids])
        self.column("Q", [i & _MASK64 for i in ids])


def write_snapshot(keyspace: Keyspace, target: str | os.PathLike[str] | BinaryIO,
                   libraries: Iterable[bytes] = (), key_delay_us: int = 0) -> None:
    """Write the FUNCTION ``libraries`` (their code) and every database of ``keyspace`` to
    ``target``: a path (written to a temporary file
    in the same directory, synced, then renamed over it, so a crash never leaves half a
    snapshot under the name) or a binary file object (written as is, not closed).

    Keys already expired are left out. The keyspace must not change until this returns.
    ``key_delay_us`` (``rdb-key-save-delay``, for tests) pauses after each key.
    """
    def write(out: BinaryIO) -> None:
        _write(keyspace, out, libraries, key_delay_us)

    if isinstance(target, (str, os.PathLike)):
        write_atomically(target, write)
    else:
        write(target)


def write_atomically(target: str | os.PathLike[str], write: Callable[[BinaryIO], None]
                     ) -> None:
    """Run ``write`` on a temporary file in ``target``'s directory, sync it, then rename it
    over ``target``: a crash never leaves half a file under the name."""
    path = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def live_keys(db: Database, now_ms: int) -> list[bytes]:
    """The keys of ``db`` not expired at ``now_ms``: what a snapshot of it holds."""
    expires = db.expires
    return [key for key in db.data if (deadline := expires.get(key)) is None or deadline > now_ms]


def debug_delay(microseconds: int) -> None:
    """Redis's debugDelay: sleep ``microseconds``; a negative value -n sleeps 1 us one time in
    n (shorter sleeps than a system call allows, on average)."""
    if microseconds < 0:
        microseconds = 1 if random.randrange(-microseconds) == 0 else 0
    if microseconds:
        time.sleep(microseconds / 1e6)


def _write(keyspace: Keyspace, out: BinaryIO, libraries: Iterable[bytes],
           key_delay_us: int = 0) -> None:
    current = keyspace.clock.now_ms()
    w = Writer(out)
    w.put(_HEADER.pack(MAGIC, VERSION, 0 if sys.byteorder == "little" else 1, _platform(),
                       current))
    for code in libraries:
        w.u8(_OP_FUNCTION)
        w.blob(code)
    for db in keyspace.databases:
        if not db.data:
            continue
        expires = db.expires
        keys = live_keys(db, current)
        w.u8(_OP_DB)
        w.put(_U32.pack(db.index))
        w.u64(len(keys))
        for key in keys:
            _write_key(w, key, db.data[key], expires.get(key, -1))
            if key_delay_us:
                debug_delay(key_delay_us)
    w.u8(_OP_END)
    w.flush()
    length = w.length + _TRAILER.size
    crc = zlib.crc32(_TRAILER_MARK + struct.pack("<Q", length), w.crc)
    out.write(_TRAILER.pack(_TRAILER_MARK, length, crc))


def _write_key(w: Writer, key: bytes, value: object, deadline: int) -> None:
    kind = type(value)
    if kind is bytes or kind is bytearray:
        w.put(_KEYHEAD.pack(T_STRING if kind is bytes else T_STRING_RAW, deadline))
        w.blob(key)
        w.blob(value)  # type: ignore[arg-type]
    elif kind is Hash:
        w.put(_KEYHEAD.pack(T_HASH, deadline))
        w.blob(key)
        w.u8(value.is_hashtable)  # type: ignore[attr-defined]
        flat: list[bytes] = []
        for pair in value.items():  # type: ignore[attr-defined]
            flat += pair
        w.strings(flat)
    elif kind is ListValue:
        w.put(_KEYHEAD.pack(T_LIST, deadline))
        w.blob(key)
        _write_list(w, value)  # type: ignore[arg-type]
    elif kind is Stream:
        w.put(_KEYHEAD.pack(T_STREAM, deadline))
        w.blob(key)
        _write_stream(w, value)  # type: ignore[arg-type]
    elif kind is SetValue:
        w.put(_KEYHEAD.pack(T_SET, deadline))
        w.blob(key)
        w.u8(_SET_ENCODINGS.index(value.encoding))  # type: ignore[attr-defined]
        w.strings(list(value))  # type: ignore[call-overload]
    elif kind is SortedSet:
        w.put(_KEYHEAD.pack(T_ZSET, deadline))
        w.blob(key)
        w.u8(_ZSET_ENCODINGS.index(value.encoding))  # type: ignore[attr-defined]
        pairs = list(value.items())  # type: ignore[attr-defined]
        w.strings([member for member, _ in pairs])
        w.put(array("d", [score for _, score in pairs]).tobytes())
    else:
        raise TypeError(f"cannot snapshot a value of type {kind.__name__}")


def _write_list(w: Writer, value: ListValue) -> None:
    """Small form: its bytes. Long form: left end (as stored, reversed), the chunks' counts,
    the chunks, the right end."""
    w.u64(value.size)
    if value.left is None:
        w.u8(0)
        w.blob(value.data)  # type: ignore[arg-type]
        return
    w.u8(1)
    w.strings(value.left)
    chunks = list(value.data)  # type: ignore[arg-type]
    w.u64(len(chunks))
    w.column("Q", [count for count, _ in chunks])
    w.strings([chunk for _, chunk in chunks])
    w.strings(value.right)  # type: ignore[arg-type]


def _write_stream(w: Writer, stream: Stream) -> None:
    """Header numbers, IDMP state, the nodes (sealed ones as their blob), then the groups."""
    nodes = stream._nodes
    w.put(_STREAM_HEAD.pack(
        stream.length, stream.last_id >> 64, stream.last_id & _MASK64,
        stream.max_deleted_id >> 64, stream.max_deleted_id & _MASK64, stream.entries_added,
        stream._first_id >> 64, stream._first_id & _MASK64, stream.max_entries,
        stream.max_bytes, len(nodes)))
    for node in nodes:
        sealed = node.blob is not None
        w.put(_NODE_HEAD.pack(sealed, node.master_id >> 64, node.master_id & _MASK64,
                              node.last_id >> 64, node.last_id & _MASK64, node.live, node.count))
        if sealed:
            w.blob(node.blob)  # type: ignore[arg-type]
            dead = node.dead
            w.blob(dead.to_bytes((dead.bit_length() + 7) // 8, "little"))
        else:
            rows = node.rows
            w.u64(node.nbytes)
            w.strings(node.names)  # type: ignore[arg-type]
            w.ids(node.ids)  # type: ignore[arg-type]
            w.column("B", [row is not None for row in rows])  # type: ignore[union-attr]
            live = [row for row in rows if row is not None]  # type: ignore[union-attr]
            w.column("Q", map(len, live))
            flat: list[bytes] = []
            for row in live:
                flat += row
            w.strings(flat)
    _write_idmp(w, stream.idmp)
    groups = list((stream.groups or {}).values())
    w.u8(stream.groups is not None)
    w.u64(len(groups))
    for group in groups:
        _write_group(w, group)


def _write_idmp(w: Writer, idmp: Idmp | None) -> None:
    if idmp is None:
        w.u8(0)
        return
    w.u8(1)
    w.put(_U64.pack(idmp.duration) + _U64.pack(idmp.maxsize) + _U64.pack(idmp.added)
          + _U64.pack(idmp.duplicates))
    producers = list(idmp.producers.items())
    w.u64(len(producers))
    for pid, history in producers:
        records = history.records()
        w.blob(pid)
        w.strings([iid for iid, _, _ in records])
        w.ids([entry_id for _, entry_id, _ in records])
        w.column("q", [when for _, _, when in records])


def _write_group(w: Writer, group: Group) -> None:
    """Name, position, consumers with their slot, the PEL as columns, the released order."""
    w.blob(group.name)
    consumers = list(group.consumers.values())
    w.put(_GROUP_HEAD.pack(group.last_id >> 64, group.last_id & _MASK64, group.entries_read,
                           len(group.owners), len(consumers)))
    for consumer in consumers:
        w.blob(consumer.name)
        w.put(_CONSUMER.pack(consumer.slot, consumer.seen_time, consumer.active_time))
    records = list(group.pel.records())
    w.u64(len(records))
    w.ids([record[0] for record in records])
    w.column("q", [record[1] for record in records])
    w.column("q", [record[2] for record in records])
    w.column("i", [record[3] for record in records])
    nacked = list(group.nacked)
    w.u64(len(nacked))
    w.ids(nacked)


def stream_extras(stream: Stream) -> bytes | None:
    """What of ``stream`` Redis's RDB 10 cannot hold, in this format: its IDMP history, and
    its groups whole when one has entries released by XNACK (pending with no owner, and
    their order) or a consumer whose active time is not its seen time (RDB 10 has no active
    time). None when there is none of that. An RDB file carries it in an aux field
    (brook/persistence/rdbfile.py), which Redis skips."""
    groups = list((stream.groups or {}).values())
    exact_groups = any(group.nacked or any(consumer.active_time != consumer.seen_time
                                           for consumer in group.consumers.values())
                       for group in groups)
    if stream.idmp is None and not exact_groups:
        return None
    out = io.BytesIO()
    w = Writer(out)
    _write_idmp(w, stream.idmp)
    if not exact_groups:
        groups = []
    w.u64(len(groups))
    for group in groups:
        _write_group(w, group)
    w.flush()
    return out.getvalue()


def restore_stream_extras(stream: Stream, data: bytes) -> None:
    """Give ``stream`` (loaded from an RDB file) what :func:`stream_extras` kept of it."""
    r = _Reader(data, 0, len(data))
    try:
        idmp = _read_idmp(r)
        groups = {}
        for _ in range(r.u64()):
            group = _read_group(r)
            groups[group.name] = group
    except (ValueError, IndexError, KeyError, OverflowError, struct.error) as err:
        raise SnapshotError(f"corrupt stream extras: {err}") from err
    if r.pos != r.end:
        raise SnapshotError("corrupt stream extras: data after their end")
    if groups and set(groups) != set(stream.groups or {}):
        raise SnapshotError("corrupt stream extras: the groups disagree with the stream's")
    stream.idmp = idmp
    if groups:
        stream.groups = groups


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


class _Reader:
    """A cursor over the file's bytes; every read checks the bounds."""

    def __init__(self, data: bytes, pos: int, end: int) -> None:
        self.data = data
        self.pos = pos
        self.end = end

    def take(self, size: int) -> bytes:
        pos = self.pos
        if size < 0 or pos + size > self.end:
            raise SnapshotError("corrupt snapshot: a field runs past the end of the data")
        self.pos = pos + size
        return self.data[pos:pos + size]

    def unpack(self, fmt: struct.Struct) -> tuple:
        return fmt.unpack(self.take(fmt.size))

    def u8(self) -> int:
        return self.take(1)[0]

    def u64(self) -> int:
        return _U64.unpack(self.take(8))[0]

    def blob(self) -> bytes:
        return self.take(self.u64())

    def column(self, code: str, count: int) -> array:
        values = array(code)
        values.frombytes(self.take(count * values.itemsize))
        return values

    def strings(self) -> list[bytes]:
        count = self.u64()
        if not count:
            return []
        lengths = self.column("Q", count)
        start = self.pos
        offsets = list(accumulate(lengths, initial=start))
        self.take(offsets[-1] - start)
        data = self.data
        return [data[a:b] for a, b in zip(offsets, offsets[1:], strict=False)]

    def ids(self, count: int) -> list[int]:
        ms = self.column("Q", count)
        seqs = self.column("Q", count)
        return [m << 64 | s for m, s in zip(ms, seqs, strict=True)]


def load_snapshot(keyspace: Keyspace, source: str | os.PathLike[str] | bytes,
                  libraries: list[bytes] | None = None, key_delay_us: int = 0) -> int:
    """Fill ``keyspace`` (normally empty: loaded keys replace existing ones) from a snapshot
    file (or its bytes); returns the number of keys loaded. The code of the FUNCTION libraries
    it holds is appended to ``libraries``.

    The whole file is checked (magic, version, platform, length and CRC-32) before any key is
    stored, so on :class:`SnapshotError` for those the keyspace is unchanged.
    ``key_delay_us`` (``key-load-delay``, for tests) pauses after each key.
    """
    reader = _open(read_source(source))
    try:
        return _load_databases(keyspace, reader, [] if libraries is None else libraries,
                               key_delay_us)
    except SnapshotError:
        raise
    except (ValueError, IndexError, KeyError, OverflowError, struct.error, TypeError,
            pickle.UnpicklingError, EOFError) as err:
        raise SnapshotError(f"corrupt snapshot: {err}") from err


def read_source(source: str | os.PathLike[str] | bytes) -> bytes:
    """A snapshot's bytes: ``source`` itself, or the file it names (:class:`SnapshotError`
    when it cannot be read)."""
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    try:
        return Path(source).read_bytes()
    except OSError as err:
        raise SnapshotError(f"cannot read snapshot: {err}") from err


def _open(data: bytes) -> _Reader:
    """Check header and trailer; a reader positioned after the header."""
    if len(data) < _HEADER.size or not data.startswith(MAGIC):
        raise SnapshotError("not a Brook snapshot (bad magic)")
    magic, version, order, sizes, _written = _HEADER.unpack_from(data)
    if version != VERSION:
        raise SnapshotError(f"unsupported snapshot version {version} (this server reads "
                            f"version {VERSION})")
    if order != (0 if sys.byteorder == "little" else 1) or sizes != _platform():
        raise SnapshotError("snapshot written on a platform with another byte order or integer "
                            "sizes: convert it with an AOF rewrite")
    if len(data) < _HEADER.size + 1 + _TRAILER.size:
        raise SnapshotError("snapshot truncated")
    mark, length, crc = _TRAILER.unpack_from(data, len(data) - _TRAILER.size)
    if mark != _TRAILER_MARK or length != len(data):
        raise SnapshotError(f"snapshot truncated or followed by other data (trailer not found; "
                            f"{len(data)} bytes)")
    if zlib.crc32(memoryview(data)[:-4]) != crc:
        raise SnapshotError("snapshot checksum mismatch: the file is corrupted")
    return _Reader(data, _HEADER.size, len(data) - _TRAILER.size)


def _load_databases(keyspace: Keyspace, r: _Reader, libraries: list[bytes],
                    key_delay_us: int = 0) -> int:
    loaded = 0
    while True:
        op = r.u8()
        if op == _OP_END:
            if r.pos != r.end:
                raise SnapshotError("corrupt snapshot: data after the end marker")
            return loaded
        if op == _OP_FUNCTION:
            libraries.append(r.blob())
            continue
        if op != _OP_DB:
            raise SnapshotError(f"corrupt snapshot: unknown section {op:#x}")
        index = _U32.unpack(r.take(4))[0]
        if index >= len(keyspace):
            raise SnapshotError(f"snapshot has database {index}, the server only "
                                f"{len(keyspace)} (see the 'databases' setting)")
        db = keyspace[index]
        for _ in range(r.u64()):
            kind, deadline = r.unpack(_KEYHEAD)
            key = r.blob()
            value = _read_value(r, kind)
            db.delete(key)
            db.data[key] = value  # a new key: its access field starts afresh
            if deadline != -1:
                db.set_expire(key, deadline)
            loaded += 1
            if key_delay_us:
                debug_delay(key_delay_us)


def _read_value(r: _Reader, kind: int) -> object:
    if kind == T_STRING:
        return r.blob()
    if kind == T_STRING_RAW:
        return bytearray(r.blob())
    if kind == T_HASH:
        is_hashtable = r.u8()
        flat = r.strings()
        value = Hash(zip(flat[0::2], flat[1::2], strict=True))
        value.is_hashtable = bool(is_hashtable)
        return value
    if kind == T_LIST:
        return _read_list(r)
    if kind == T_STREAM:
        return _read_stream(r)
    if kind == T_SET:
        encoding = _SET_ENCODINGS[r.u8()]
        return SetValue.restore(r.strings(), encoding)
    if kind == T_ZSET:
        encoding = _ZSET_ENCODINGS[r.u8()]
        members = r.strings()
        scores = r.column("d", len(members))
        return SortedSet.restore(zip(members, scores, strict=True), encoding)
    raise SnapshotError(f"corrupt snapshot: unknown value type {kind}")


class _ChunkUnpickler(pickle.Unpickler):
    """Loads a list chunk but no global of any kind: a chunk is only a list of bytes."""

    def find_class(self, module: str, name: str) -> object:
        raise SnapshotError("corrupt snapshot: a list chunk refers to a global")


def _check_chunk(chunk: bytes, count: int) -> None:
    items = _ChunkUnpickler(io.BytesIO(chunk)).load()
    if type(items) is not list or len(items) != count or not all(
            type(item) is bytes for item in items):
        raise SnapshotError("corrupt snapshot: a list chunk is not a list of strings")


def _read_list(r: _Reader) -> ListValue:
    value = ListValue()
    size = r.u64()
    form = r.u8()
    if form == 0:
        value.data = r.blob()
        value.size = size
        value.encode_auto()  # Redis's rdbLoad: LIST_CONV_AUTO under the current limit
        return value
    left = r.strings()
    counts = r.column("Q", r.u64())
    chunks = r.strings()
    right = r.strings()
    if len(chunks) != len(counts) or len(left) + sum(counts) + len(right) != size:
        raise SnapshotError("corrupt snapshot: list sizes disagree")
    for count, chunk in zip(counts, chunks, strict=True):
        _check_chunk(chunk, count)
    value.size = size
    value.data = deque(zip(counts.tolist(), chunks, strict=True))
    value.left = left
    value.right = right
    value.encode_auto()
    return value


def _read_stream(r: _Reader) -> Stream:
    (length, last_ms, last_seq, del_ms, del_seq, entries_added, first_ms, first_seq,
     max_entries, max_bytes, nnodes) = r.unpack(_STREAM_HEAD)
    stream = Stream(max_entries, max_bytes)
    stream.length = length
    stream.last_id = last_ms << 64 | last_seq
    stream.max_deleted_id = del_ms << 64 | del_seq
    stream.entries_added = entries_added
    stream._first_id = first_ms << 64 | first_seq
    nodes = stream._nodes
    live_total = 0
    for _ in range(nnodes):
        sealed, m_ms, m_seq, l_ms, l_seq, live, count = r.unpack(_NODE_HEAD)
        node = Node(m_ms << 64 | m_seq, [])
        node.last_id = l_ms << 64 | l_seq
        node.live = live
        node.count = count
        if sealed:
            node.blob = r.blob()
            node.dead = int.from_bytes(r.blob(), "little")
            node.names = node.ids = node.rows = None
            if sealed_count(node.blob) != count:
                raise SnapshotError("corrupt snapshot: a stream node's count disagrees")
        else:
            node.nbytes = r.u64()
            node.names = r.strings()
            node.ids = r.ids(count)
            mask = r.column("B", count)
            widths = r.column("Q", sum(mask))
            flat = r.strings()
            offsets = list(accumulate(widths, initial=0))
            if offsets[-1] != len(flat):
                raise SnapshotError("corrupt snapshot: stream rows disagree")
            rows: list[list[bytes] | None] = []
            k = 0
            for present in mask:
                if present:
                    rows.append(flat[offsets[k]:offsets[k + 1]])
                    k += 1
                else:
                    rows.append(None)
            node.rows = rows
            if sum(mask) != live:
                raise SnapshotError("corrupt snapshot: stream node counts disagree")
        live_total += live
        nodes.append(node)
        stream._starts.append(node.master_id)
    if live_total != length:
        raise SnapshotError("corrupt snapshot: stream length disagrees with its nodes")
    if nodes and nodes[-1].blob is None:
        stream._tail = nodes[-1]
    stream.idmp = _read_idmp(r)
    has_groups = r.u8()
    ngroups = r.u64()
    if has_groups:
        stream.groups = {}
        for _ in range(ngroups):
            group = _read_group(r)
            stream.groups[group.name] = group
    return stream


def _read_idmp(r: _Reader) -> Idmp | None:
    if not r.u8():
        return None
    duration, maxsize, added, duplicates = (r.u64() for _ in range(4))
    idmp = Idmp(duration, maxsize)
    idmp.added = added
    idmp.duplicates = duplicates
    for _ in range(r.u64()):
        pid = r.blob()
        iids = r.strings()
        ids = r.ids(len(iids))
        times = r.column("q", len(iids))
        idmp.restore(pid, list(zip(iids, ids, times, strict=True)))
    return idmp


def _read_group(r: _Reader) -> Group:
    name = r.blob()
    last_ms, last_seq, entries_read, nslots, nconsumers = r.unpack(_GROUP_HEAD)
    group = Group(name, last_ms << 64 | last_seq, entries_read)
    owners: list[Consumer | None] = [None] * nslots
    for _ in range(nconsumers):
        consumer_name = r.blob()
        slot, seen_time, active_time = r.unpack(_CONSUMER)
        if slot >= nslots or owners[slot] is not None:
            raise SnapshotError("corrupt snapshot: consumer slots disagree")
        consumer = Consumer(consumer_name, seen_time, slot)
        consumer.active_time = active_time
        owners[slot] = consumer
        group.consumers[consumer_name] = consumer
    group.owners = owners
    count = r.u64()
    ids = r.ids(count)
    times = r.column("q", count)
    counts = r.column("q", count)
    slots = r.column("i", count)
    if any(b <= a for a, b in zip(ids, ids[1:], strict=False)):
        raise SnapshotError("corrupt snapshot: pending entries out of order")
    owned: dict[int, list[int]] = {}
    for entry_id, slot in zip(ids, slots, strict=True):
        owned.setdefault(slot, []).append(entry_id)
    for slot, slot_ids in owned.items():
        if slot == pel_module.NO_OWNER:
            continue
        if not 0 <= slot < nslots or owners[slot] is None:
            raise SnapshotError("corrupt snapshot: a pending entry has no owner")
        owners[slot].pel.extend(slot_ids)  # type: ignore[union-attr]
    group.pel = _pending_table(ids, times, counts, slots)
    nacked = r.ids(r.u64())
    group.nacked = dict.fromkeys(nacked)
    return group


def _pending_table(ids: list[int], times: array, counts: array, slots: array) -> PendingTable:
    """A PEL built column-wise, chunk by chunk, as :meth:`SortedChunks.extend` lays it out."""
    table = PendingTable()
    step = 2 * pel_module._LOAD
    for start in range(0, len(ids), step):
        end = start + step
        table._chunks.append([ids[start:end], times[start:end], counts[start:end],
                              slots[start:end]])
        table._heads.append(ids[start])
    table._len = len(ids)
    return table


__all__ = ["MAGIC", "VERSION", "SnapshotError", "load_snapshot", "write_snapshot"]
