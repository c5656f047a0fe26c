"""The stream value type: entries in macro nodes, most of them sealed into compact blobs.

Redis keeps a stream as a radix tree of listpack "macro nodes" (``t_stream.c``). Python object
overhead makes the naive layouts expensive: an entry of 3 small fields costs ~270 bytes as a list
of tuples, while 100 entries packed into one ``bytes`` object cost under 20 bytes each. So this
module mirrors Redis:

* entry IDs are plain ints ``ms << 64 | seq`` (C-speed comparison and ``bisect``); they are
  formatted to ``b"ms-seq"`` only at the protocol edge;
* entries live in nodes bounded by ``stream-node-max-entries``/``-bytes``, found by ``bisect``
  over the list of node master (first) IDs;
* only the open tail node holds Python objects; a full node is *sealed* into one ``bytes`` blob
  whose master entry (the first entry's field names) is stored once and whose IDs are deltas;
* XDEL only flags entries (a bitmask per sealed node); a node with no live entry is dropped, and
  a sealed node that is mostly tombstones is re-sealed without them (Redis never reclaims them).

Lists of fields returned by :meth:`Stream.range` and :meth:`Stream.get` are shared with the
stream's storage or its decode cache: callers must not mutate them.
"""

from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate

from brook import keyspace

MAX_ID = (1 << 128) - 1
_MASK64 = (1 << 64) - 1
# Redis's STREAM_LISTPACK_MAX_SIZE: the byte cap when stream-node-max-bytes is 0.
_LISTPACK_MAX_SIZE = 1 << 30


def make_id(ms: int, seq: int) -> int:
    """The int form of the stream ID ``ms-seq``."""
    return ms << 64 | seq


def id_parts(entry_id: int) -> tuple[int, int]:
    """``(ms, seq)`` of an int stream ID."""
    return entry_id >> 64, entry_id & _MASK64


def format_id(entry_id: int) -> bytes:
    """The wire form ``b"ms-seq"`` of an int stream ID."""
    return b"%d-%d" % (entry_id >> 64, entry_id & _MASK64)


# ------------------------------------------------------------------------------------------------
# Sealed node blob layout. Integers in columns use the narrowest array typecode that holds the
# column's largest value (B/H/I/Q: 1/2/4/8 bytes), in native byte order: blobs never leave the
# process (persistence writes commands' effects, not nodes).
#
#   +--------+---------+--------+--------+-------------------------------+
#   | count  | nmaster | nstr   | nodd   | codes: ms seq odd len  (4 x1) |   header, 20 bytes
#   +--------+---------+--------+--------+-------------------------------+
#   | ms-delta x count          |  ms - master.ms
#   | seq x count               |  seq - master.seq when ms-delta is 0, else seq itself
#   | odd-index x nodd          |  entries whose field names differ from the master's
#   | odd-nfields x nodd        |  their number of field/value pairs
#   | length x nstr             |  byte length of every string below
#   +---------------------------+
#   | master field names | entry 0 strings | entry 1 strings | ...  (concatenated, no separators)
#   +---------------------------------------------------------------------------------------------
#
# An entry whose field names equal the master's (Redis's SAMEFIELDS flag, the common case) stores
# only its values; an "odd" entry stores names and values interleaved. Deleted entries are not in
# the blob's format at all: the node keeps a bitmask of deleted entry indexes beside it.
# Both seq forms are non-negative (IDs only grow), so every column is unsigned.
# ------------------------------------------------------------------------------------------------

_HEADER = struct.Struct("<IIII4s")
_CODES = [code for code in "BHILQ" if array(code).itemsize in (1, 2, 4, 8)]
_LIMITS = sorted({(1 << (8 * array(code).itemsize), code) for code in _CODES})
_WIDTHS = {code: array(code).itemsize for code in _CODES}


def _column(values: list[int]) -> tuple[str, bytes]:
    """Pack ints into the narrowest unsigned array column."""
    top = max(values, default=0)
    for limit, code in _LIMITS:
        if top < limit:
            return code, array(code, values).tobytes()
    raise ValueError("stream column value out of range")


class _Node:
    """One macro node: open (Python lists) while it is the tail, then sealed into ``blob``."""

    __slots__ = ("master_id", "last_id", "live", "count", "blob", "dead", "names", "ids", "rows",
                 "nbytes")

    def __init__(self, master_id: int, names: list[bytes]) -> None:
        self.master_id = master_id      # ID of the first entry ever stored here: the node's key
        self.last_id = master_id        # ID of the last entry stored here, deleted or not
        self.live = 0                   # entries not deleted
        self.count = 0                  # entries stored, deleted ones included
        self.blob: bytes | None = None  # the sealed form; None while open
        self.dead = 0                   # sealed only: bit i set = entry i deleted
        self.names: list[bytes] | None = names   # master field names (open only)
        self.ids: list[int] | None = []          # open only
        self.rows: list[list[bytes] | None] | None = []  # open only; None = deleted
        self.nbytes = _HEADER.size + sum(map(len, names)) + len(names)  # open: estimated size


def _encode(master_id: int, names: list[bytes], ids: list[int],
            rows: list[list[bytes] | None]) -> tuple[bytes, int]:
    """Seal the live entries of ``ids``/``rows`` into a blob; returns (blob, entries stored)."""
    master_ms, master_seq = master_id >> 64, master_id & _MASK64
    nmaster = len(names)
    ms_deltas: list[int] = []
    seqs: list[int] = []
    odd_index: list[int] = []
    odd_nfields: list[int] = []
    strings = list(names)
    for entry_id, row in zip(ids, rows, strict=True):
        if row is None:
            continue
        delta = (entry_id >> 64) - master_ms
        seq = entry_id & _MASK64
        if not delta:
            seq -= master_seq
        if len(row) == 2 * nmaster and row[0::2] == names:
            strings += row[1::2]
        else:
            odd_index.append(len(ms_deltas))
            odd_nfields.append(len(row) // 2)
            strings += row
        ms_deltas.append(delta)
        seqs.append(seq)
    ms_code, ms_bytes = _column(ms_deltas)
    seq_code, seq_bytes = _column(seqs)
    odd_code, odd_bytes = _column(odd_index + odd_nfields)
    len_code, len_bytes = _column([len(s) for s in strings])
    header = _HEADER.pack(len(ms_deltas), nmaster, len(strings), len(odd_index),
                          (ms_code + seq_code + odd_code + len_code).encode())
    blob = b"".join((header, ms_bytes, seq_bytes, odd_bytes, len_bytes, *strings))
    return blob, len(ms_deltas)


def _decode(node: _Node) -> tuple[list[int], list[list[bytes] | None]]:
    """Rebuild the ID and field lists of a sealed node, deleted entries as None."""
    blob = node.blob
    assert blob is not None
    count, nmaster, nstr, nodd, codes = _HEADER.unpack_from(blob)
    ms_code, seq_code, odd_code, len_code = codes.decode()
    pos = _HEADER.size

    def take(code: str, n: int) -> list[int]:
        nonlocal pos
        end = pos + n * _WIDTHS[code]
        values = array(code, blob[pos:end]).tolist()
        pos = end
        return values

    ms_deltas = take(ms_code, count)
    seqs = take(seq_code, count)
    odd = take(odd_code, 2 * nodd)
    lengths = take(len_code, nstr)
    offsets = list(accumulate(lengths, initial=pos))
    strings = [blob[a:b] for a, b in zip(offsets, offsets[1:], strict=False)]

    master_id = node.master_id
    master_ms = master_id >> 64
    ids = [((master_ms + d) << 64 | s) if d else master_id + s
           for d, s in zip(ms_deltas, seqs, strict=False)]
    names = strings[:nmaster]
    width = 2 * nmaster
    rows: list[list[bytes] | None]
    if not nodd and nmaster:
        # All SAMEFIELDS: interleave names and values for every entry in C, then cut.
        flat: list[bytes] = [b""] * (width * count)
        flat[0::2] = names * count
        flat[1::2] = strings[nmaster:]
        rows = [flat[i:i + width] for i in range(0, len(flat), width)]
    else:
        odd_nfields = dict(zip(odd[:nodd], odd[nodd:], strict=True))
        rows = []
        k = nmaster
        template: list[bytes] = [b""] * width
        template[0::2] = names
        for i in range(count):
            n = odd_nfields.get(i)
            if n is None:
                row = template.copy()
                row[1::2] = strings[k:k + nmaster]
                k += nmaster
            else:
                row = strings[k:k + 2 * n]
                k += 2 * n
            rows.append(row)
    dead = node.dead
    while dead:
        low = dead & -dead
        rows[low.bit_length() - 1] = None
        dead ^= low
    return ids, rows


def _master_names(blob: bytes) -> list[bytes]:
    """The master entry's field names: the first strings of the blob."""
    count, nmaster, nstr, nodd, codes = _HEADER.unpack_from(blob)
    ms_code, seq_code, odd_code, len_code = codes.decode()
    pos = (_HEADER.size + count * (_WIDTHS[ms_code] + _WIDTHS[seq_code])
           + 2 * nodd * _WIDTHS[odd_code])
    lengths = array(len_code, blob[pos:pos + nmaster * _WIDTHS[len_code]]).tolist()
    offsets = list(accumulate(lengths, initial=pos + nstr * _WIDTHS[len_code]))
    return [blob[a:b] for a, b in zip(offsets, offsets[1:], strict=False)]


# Decoded sealed nodes, shared by all streams so that memory stays bounded however many streams
# exist. Small: a range scan decodes each node once anyway; the cache serves repeated reads near
# the same position (consumers a little behind the tail, XDEL/XTRIM on the head node).
_CACHE: dict[_Node, tuple[list[int], list[list[bytes] | None]]] = {}
_CACHE_SIZE = 16


def _entries(node: _Node) -> tuple[list[int], list[list[bytes] | None]]:
    """IDs and rows (None = deleted) of a node, decoding a sealed one through the cache."""
    if node.blob is None:
        return node.ids, node.rows  # type: ignore[return-value]
    hit = _CACHE.get(node)
    if hit is None:
        hit = _decode(node)
        if len(_CACHE) >= _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
        _CACHE[node] = hit
    return hit


class Stream:
    """A stream's entries and the metadata XINFO STREAM reports."""

    def __init__(self, max_entries: int = 100, max_bytes: int = 4096) -> None:
        self.length = 0
        self.last_id = 0
        self.max_deleted_id = 0
        self.entries_added = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._first_id = 0
        self._nodes: list[_Node] = []
        self._starts: list[int] = []   # master IDs of _nodes, for bisect
        self._tail: _Node | None = None  # the open node, always _nodes[-1] when set

    def first_id(self) -> int:
        """ID of the first live entry (XINFO's recorded-first-entry-id), 0 when empty."""
        return self._first_id

    def set_node_limits(self, max_entries: int, max_bytes: int) -> None:
        """CONFIG SET stream-node-max-*: checked at every append, like Redis."""
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    # -- writing ---------------------------------------------------------------------------------

    def append(self, entry_id: int, fields: list[bytes]) -> None:
        """Add an entry (flat field/value list, now owned by the stream) after the last one."""
        if entry_id <= self.last_id:
            raise ValueError("stream ID must be greater than the last ID")
        if len(fields) & 1:
            raise ValueError("stream fields must come in field/value pairs")
        size = sum(map(len, fields)) + len(fields) + 4
        tail = self._tail
        if tail is not None:
            max_bytes = self.max_bytes
            if not max_bytes or max_bytes > _LISTPACK_MAX_SIZE:
                max_bytes = _LISTPACK_MAX_SIZE
            # Redis's streamAppendItem test: a new node if this entry would reach the byte cap
            # or the node already holds max_entries (deleted entries included).
            if tail.nbytes + size >= max_bytes or (
                    self.max_entries and tail.count >= self.max_entries):
                self._seal(tail)
                tail = None
        if tail is None:
            tail = _Node(entry_id, fields[0::2])
            self._nodes.append(tail)
            self._starts.append(entry_id)
            self._tail = tail
        tail.ids.append(entry_id)  # type: ignore[union-attr]
        tail.rows.append(fields)  # type: ignore[union-attr]
        tail.count += 1
        tail.live += 1
        tail.nbytes += size
        tail.last_id = entry_id
        if not self.length:
            self._first_id = entry_id
        self.length += 1
        self.last_id = entry_id
        self.entries_added += 1
        if self.max_entries and tail.count >= self.max_entries:
            self._seal(tail)  # nothing more can go in: free its Python objects now

    def _seal(self, node: _Node) -> None:
        """Turn the open tail into a blob (its deleted entries are dropped on the way)."""
        node.blob, node.count = _encode(node.master_id, node.names, node.ids,  # type: ignore[arg-type]
                                        node.rows)  # type: ignore[arg-type]
        node.names = node.ids = node.rows = None
        node.dead = 0
        if self._tail is node:
            self._tail = None

    def _kill(self, index: int, node: _Node, pos: int, rows: list[list[bytes] | None]) -> None:
        """Flag entry ``pos`` of node ``index`` deleted; drop the node once nothing is live."""
        rows[pos] = None
        node.live -= 1
        self.length -= 1
        if not node.live:
            self._drop(index)
        elif node.blob is not None:
            node.dead |= 1 << pos

    @staticmethod
    def _compact(node: _Node) -> None:
        """Re-seal a sealed node without its tombstones once they outnumber live entries
        (antirez's proposed rule, redis PR #14689; Redis itself never reclaims them)."""
        deleted = node.count - node.live
        if node.blob is None or node.count <= 10 or deleted <= node.live:
            return
        ids, rows = _entries(node)
        names = _master_names(node.blob)
        _CACHE.pop(node, None)
        node.blob, node.count = _encode(node.master_id, names, ids, rows)
        node.dead = 0

    def _drop(self, index: int) -> None:
        node = self._nodes.pop(index)
        del self._starts[index]
        _CACHE.pop(node, None)
        if node is self._tail:
            self._tail = None

    def _refresh_first(self) -> None:
        if not self.length:
            self._first_id = 0
            return
        ids, rows = _entries(self._nodes[0])
        self._first_id = next(i for i, row in zip(ids, rows, strict=False) if row is not None)

    def delete(self, entry_id: int) -> bool:
        """XDEL one ID: True if a live entry was removed."""
        index = bisect_right(self._starts, entry_id) - 1
        if index < 0:
            return False
        node = self._nodes[index]
        if entry_id > node.last_id:
            return False
        ids, rows = _entries(node)
        pos = bisect_left(ids, entry_id)
        if pos == len(ids) or ids[pos] != entry_id or rows[pos] is None:
            return False
        self._kill(index, node, pos, rows)
        if node.live:
            self._compact(node)
        if entry_id > self.max_deleted_id:
            self.max_deleted_id = entry_id
        if entry_id == self._first_id:
            self._refresh_first()
        return True

    def trim_maxlen(self, maxlen: int, approx: bool = False, limit: int = 0) -> int:
        """XTRIM MAXLEN: drop the oldest entries until at most ``maxlen`` remain."""
        return self._trim(maxlen, 0, approx, limit)

    def trim_minid(self, min_id: int, approx: bool = False, limit: int = 0) -> int:
        """XTRIM MINID: drop entries with IDs below ``min_id``."""
        return self._trim(None, min_id, approx, limit)

    def _trim(self, maxlen: int | None, min_id: int, approx: bool, limit: int) -> int:
        """Redis's streamTrim: whole nodes first; with ``approx`` stop at the first node that
        cannot go entirely; ``limit`` (0 = none) stops before a node that would exceed it.
        Trimming changes neither last_id nor max_deleted_id."""
        removed = 0
        nodes = self._nodes
        whole = 0  # leading nodes to drop, removed in one slice deletion
        for node in nodes:
            if maxlen is not None and self.length <= maxlen:
                break
            entries = node.live
            if limit and removed + entries > limit:
                break
            if maxlen is not None:
                remove_node = self.length - entries >= maxlen
            else:
                remove_node = node.last_id < min_id
            if remove_node:
                whole += 1
                self.length -= entries
                removed += entries
                continue
            if approx:
                break
            ids, rows = _entries(node)
            if maxlen is not None:
                stop = len(ids)
            else:
                stop = bisect_left(ids, min_id)
            for pos in range(stop):
                if maxlen is not None and self.length <= maxlen:
                    break
                if rows[pos] is not None:
                    removed += 1
                    if node.live == 1:  # would empty the node: drop it with the others
                        self.length -= 1
                        node.live = 0
                        whole += 1
                        break
                    self._kill(whole, node, pos, rows)
            if node.live:
                self._compact(node)
            break
        if whole:
            for node in nodes[:whole]:
                _CACHE.pop(node, None)
                if node is self._tail:
                    self._tail = None
            del nodes[:whole]
            del self._starts[:whole]
        if removed:
            self._refresh_first()
        return removed

    # -- reading ---------------------------------------------------------------------------------

    def get(self, entry_id: int) -> list[bytes] | None:
        """The fields of a live entry, or None."""
        index = bisect_right(self._starts, entry_id) - 1
        if index < 0:
            return None
        node = self._nodes[index]
        if entry_id > node.last_id:
            return None
        ids, rows = _entries(node)
        pos = bisect_left(ids, entry_id)
        if pos < len(ids) and ids[pos] == entry_id:
            return rows[pos]
        return None

    def range(self, start: int, end: int, count: int | None = None,
              reverse: bool = False) -> list[tuple[int, list[bytes]]]:
        """Live entries with start <= ID <= end, oldest first (newest first with ``reverse``),
        at most ``count`` of them (None = all, 0 = none)."""
        out: list[tuple[int, list[bytes]]] = []
        if start > end or (count is not None and count <= 0):
            return out
        nodes = self._nodes
        if not reverse:
            index = max(bisect_right(self._starts, start) - 1, 0)
            for node in nodes[index:] if index else nodes:
                if node.master_id > end:
                    break
                if node.last_id < start:
                    continue
                ids, rows = _entries(node)
                lo = bisect_left(ids, start) if ids[0] < start else 0
                hi = bisect_right(ids, end) if node.last_id > end else len(ids)
                out += [(i, r) for i, r in zip(ids[lo:hi], rows[lo:hi], strict=False) if r is not None]
                if count is not None and len(out) >= count:
                    del out[count:]
                    break
        else:
            index = bisect_right(self._starts, end) - 1
            while index >= 0:
                node = nodes[index]
                index -= 1
                if node.last_id < start:
                    break
                ids, rows = _entries(node)
                lo = bisect_left(ids, start) if ids[0] < start else 0
                hi = bisect_right(ids, end) if node.last_id > end else len(ids)
                out += [(i, r) for i, r in zip(ids[lo:hi][::-1], rows[lo:hi][::-1], strict=False)
                        if r is not None]
                if count is not None and len(out) >= count:
                    del out[count:]
                    break
        return out  # type: ignore[return-value]

    # -- introspection ---------------------------------------------------------------------------

    def node_count(self) -> int:
        """Macro nodes (XINFO STREAM radix-tree-keys / radix-tree-nodes)."""
        return len(self._nodes)

    def memory_usage(self) -> int:
        """Approximate bytes held (MEMORY USAGE): blobs, tail objects, bookkeeping."""
        size = sys.getsizeof(self) + sys.getsizeof(self._nodes) + sys.getsizeof(self._starts)
        node_size = sys.getsizeof(_Node(0, []))
        for node, start in zip(self._nodes, self._starts, strict=True):
            size += node_size + sys.getsizeof(start)
            if node.blob is not None:
                size += sys.getsizeof(node.blob)
            else:
                size += sys.getsizeof(node.ids) + sys.getsizeof(node.rows)
                for entry_id, row in zip(node.ids, node.rows, strict=False):  # type: ignore[arg-type]
                    size += sys.getsizeof(entry_id)
                    if row is not None:
                        size += sys.getsizeof(row) + sum(map(sys.getsizeof, row))
        return size

    def copy(self) -> Stream:
        """An independent copy (COPY): sealed blobs are immutable and shared."""
        dup = Stream(self.max_entries, self.max_bytes)
        dup.length = self.length
        dup.last_id = self.last_id
        dup.max_deleted_id = self.max_deleted_id
        dup.entries_added = self.entries_added
        dup._first_id = self._first_id
        dup._starts = self._starts.copy()
        for node in self._nodes:
            twin = _Node.__new__(_Node)
            for slot in _Node.__slots__:
                setattr(twin, slot, getattr(node, slot))
            if node.blob is None:
                twin.ids = node.ids.copy()  # type: ignore[union-attr]
                twin.rows = node.rows.copy()  # type: ignore[union-attr]
                dup._tail = twin
            dup._nodes.append(twin)
        return dup


keyspace.TYPE_NAMES[Stream] = "stream"
keyspace.ENCODINGS[Stream] = lambda value: "stream"
keyspace.COPIERS[Stream] = lambda value: value.copy()  # type: ignore[attr-defined]
