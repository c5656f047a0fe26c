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
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, islice
from typing import Any, Final, cast

from brook import keyspace
from brook.types import lpsize, native
from brook.types.groups import Group
from brook.types.idmp import Idmp

# The hand-written C (None in the pure build, which runs the twins below).
_appended_size = native.appended_size
_seal_node = native.seal_node
_pack_node = native.pack_node

MAX_ID: Final = (1 << 128) - 1
_MASK64: Final = (1 << 64) - 1
# Redis's STREAM_LISTPACK_MAX_SIZE: the byte cap when stream-node-max-bytes is 0.
_LISTPACK_MAX_SIZE: Final = 1 << 30


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

_HEADER: Final = struct.Struct("<IIII4s")
_CODES: Final = [code for code in "BHILQ" if array(code).itemsize in (1, 2, 4, 8)]
_LIMITS: Final = sorted({(1 << (8 * array(code).itemsize), code) for code in _CODES})
_WIDTHS: Final = {code: array(code).itemsize for code in _CODES}


def _column(values: list[int]) -> tuple[str, bytes]:
    """Pack ints into the narrowest unsigned array column."""
    top = 0
    for value in values:  # a C loop when compiled; max() compares generically
        if value > top:
            top = value
    if top < 256:
        return "B", bytes(values)  # the usual column: bytes() converts far faster than array()
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
        self.nbytes = 0  # open only: the bytes Redis's listpack would have (see lpsize)

    def copy(self) -> _Node:
        """A node that shares nothing mutable with this one (the open node's lists)."""
        twin = _Node(self.master_id, [])
        twin.names = self.names
        twin.last_id = self.last_id
        twin.live = self.live
        twin.count = self.count
        twin.blob = self.blob
        twin.dead = self.dead
        twin.ids = self.ids.copy() if self.ids is not None else None
        twin.rows = self.rows.copy() if self.rows is not None else None
        twin.nbytes = self.nbytes
        return twin


def _encode(master_id: int, names: list[bytes], ids: list[int],
            rows: list[list[bytes] | None]) -> tuple[bytes, int]:
    """Seal the live entries of ``ids``/``rows`` into a blob; returns (blob, entries stored).
    Sealing runs once per node on the XADD path and for every node an AOF replay builds:
    brook.types._node_seal's C pass where it was built, else :func:`_seal_blob`."""
    if _seal_node is not None:
        return _seal_node(master_id, names, ids, rows)
    return _seal_blob(master_id, names, ids, rows)


def _seal_blob(master_id: int, names: list[bytes], ids: list[int],
               rows: list[list[bytes] | None]) -> tuple[bytes, int]:
    """:func:`_encode` in Python (the C pass's twin): one pass over the entries."""
    master_ms, master_seq = master_id >> 64, master_id & _MASK64
    nmaster = len(names)
    width = 2 * nmaster
    ms_deltas: list[int] = []
    seqs: list[int] = []
    strings = list(names)
    lengths = [len(name) for name in names]
    odd_index: list[int] = []
    odd_nfields: list[int] = []
    count = 0
    last_ms = master_ms
    delta = 0
    for entry_id, row in zip(ids, rows, strict=True):
        if row is None:
            continue  # deleted: not stored
        ms = entry_id >> 64
        if ms != last_ms:
            last_ms = ms
            delta = ms - master_ms
        ms_deltas.append(delta)
        seqs.append((entry_id & _MASK64) - master_seq if not delta else entry_id & _MASK64)
        if lpsize.same_fields(row, names):
            for k in range(1, width, 2):  # the master's names: values only
                value = row[k]
                strings.append(value)
                lengths.append(len(value))
        else:
            odd_index.append(count)
            odd_nfields.append(len(row) // 2)
            for item in row:
                strings.append(item)
                lengths.append(len(item))
        count += 1
    ms_code, ms_bytes = _column(ms_deltas)
    seq_code, seq_bytes = _column(seqs)
    odd_code, odd_bytes = _column(odd_index + odd_nfields)
    len_code, len_bytes = _column(lengths)
    header = _HEADER.pack(count, nmaster, len(strings), len(odd_index),
                          (ms_code + seq_code + odd_code + len_code).encode())
    blob = b"".join((header, ms_bytes, seq_bytes, odd_bytes, len_bytes, *strings))
    return blob, count


_CUT_FORMATS: Final = ["%ds" % n for n in range(1024)]


def _cut(blob: bytes, pos: int, lengths: list[int]) -> list[bytes] | tuple[bytes, ...]:
    """The consecutive strings of ``lengths`` starting at ``blob[pos]``: one struct call
    (faster than slicing each) while every length is under 1 KiB."""
    if not lengths or max(lengths) >= len(_CUT_FORMATS):
        offsets = list(accumulate(lengths, initial=pos))
        return [blob[a:b] for a, b in zip(offsets, offsets[1:], strict=False)]
    return struct.unpack_from("".join(map(_CUT_FORMATS.__getitem__, lengths)), blob, pos)


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
    strings = list(_cut(blob, pos, lengths))

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


def _blob_id(node: _Node, index: int) -> int:
    """The ID of entry ``index`` of a sealed node, read from its two ID columns alone."""
    blob: bytes = cast(bytes, node.blob)
    count: int
    codes: bytes
    count, _, _, _, codes = _HEADER.unpack_from(blob)
    ms_code, seq_code = chr(codes[0]), chr(codes[1])
    ms_width, seq_width = _WIDTHS[ms_code], _WIDTHS[seq_code]
    pos = _HEADER.size + index * ms_width
    delta: int = array(ms_code, blob[pos:pos + ms_width])[0]
    pos = _HEADER.size + count * ms_width + index * seq_width
    seq: int = array(seq_code, blob[pos:pos + seq_width])[0]
    return make_id((node.master_id >> 64) + delta, seq) if delta else node.master_id + seq


# Decoded sealed nodes, shared by all streams so that memory stays bounded however many streams
# exist. Small: a range scan decodes each node once anyway; the cache serves repeated reads near
# the same position (consumers a little behind the tail, XDEL/XTRIM on the head node).
_CACHE: Final[dict[_Node, tuple[list[int], list[list[bytes] | None]]]] = {}
_CACHE_SIZE: Final = 16


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


# RESP encodings of nodes' entries, for the read commands. A sealed node is encoded once into
# one bytes object holding its entries back to back, with the offset where each begins; a range
# within it is one slice, so a reply joins a piece per node, not per value.
# The open tail node keeps one bytes object per entry, appended lazily. Nodes with very large
# entries are not kept.
_RESP_CACHE: Final[dict[_Node, tuple[list[int] | None, object]]] = {}
_RESP_CACHE_SIZE: Final = 16
_RESP_CACHE_MAX_NODE_BYTES: Final = 1 << 18
# An entry is the array [ID, fields] in RESP2 and RESP3 alike: nothing cached here depends on
# the client's protocol. XREADGROUP CLAIM sends longer arrays, [ID, fields, idle, deliveries],
# made from a cached entry by replacing its fixed-width _ENTRY_HEAD with the longer header.
# The stored bytes that follow are never looked into.
_ENTRY_HEAD: Final = b"*2\r\n"  # how every cached entry encoding starts
_BULK_HEADERS: Final = [b"$%d\r\n" % n for n in range(1024)]
_ENTRY_HEADERS: Final = [b"*2\r\n$%d\r\n" % n for n in range(42)]  # "*2" and the ID's length
_DECIMALS: Final = [b"%d" % n for n in range(4096)]  # sequence numbers' text
_LONGER_HEADS: Final[dict[int, bytes]] = {}  # nextra -> the array header of a longer entry


def _longer_head(nextra: int) -> bytes:
    """The array header of an entry with ``nextra`` more elements."""
    head = _LONGER_HEADS.get(nextra)
    if head is None:
        head = _LONGER_HEADS[nextra] = b"*%d\r\n" % (2 + nextra)
    return head


class _Packed:
    """A sealed node's entries as RESP: entry i is ``body[offsets[i]:offsets[i + 1]]`` (empty
    for an entry deleted before the node was encoded). The int IDs are only built when a range
    bound falls inside the node."""

    __slots__ = ("body", "offsets", "ms", "seqs", "_ids")

    def __init__(self, body: bytes, offsets: list[int], ms: list[int], seqs: list[int]) -> None:
        self.body = body
        self.offsets = offsets
        self.ms = ms
        self.seqs = seqs
        self._ids: list[int] | None = None

    def ids(self) -> list[int]:
        if self._ids is None:
            ids: list[int] = []
            last_ms = -1
            base = 0
            seqs = self.seqs
            for i, ms in enumerate(self.ms):
                if ms != last_ms:  # one 128-bit shift per millisecond, not per entry
                    base = ms << 64
                    last_ms = ms
                ids.append(base | seqs[i])
            self._ids = ids
        return self._ids

    def pieces(self, lo: int, hi: int) -> list[bytes]:
        """The encoding of entries lo..hi-1, as one piece."""
        offsets = self.offsets
        return [self.body[offsets[lo]:offsets[hi]]]

    def entry(self, i: int) -> bytes:
        return self.body[self.offsets[i]:self.offsets[i + 1]]

    def longer_entry(self, i: int, head: bytes, extra: bytes) -> bytes:
        """Entry i as the longer array ``head`` announces, ``[id, fields, *extra]``."""
        offsets = self.offsets
        return b"".join((head, self.body[offsets[i] + len(_ENTRY_HEAD):offsets[i + 1]], extra))


def _forget(node: _Node) -> None:
    """Drop a node's cached decodings (it changed or left its stream)."""
    _CACHE.pop(node, None)
    _RESP_CACHE.pop(node, None)


def encode_entry(entry_id: int, row: list[bytes], extra: bytes = b"", nextra: int = 0) -> bytes:
    """The RESP form of one entry: ``[b"ms-seq", [field, value, ...]]``; with ``nextra``
    more elements, already encoded in ``extra``, in the same array (``[id, fields, *extra]``)."""
    sid = b"%d-%d" % (entry_id >> 64, entry_id & _MASK64)
    return b"".join([b"*%d\r\n$%d\r\n%s\r\n*%d\r\n" % (2 + nextra, len(sid), sid, len(row)),
                     *[b"$%d\r\n%s\r\n" % (len(item), item) for item in row], extra])


def _longer(piece: bytes, head: bytes, extra: bytes) -> bytes:
    """A cached entry encoding (starting with _ENTRY_HEAD) as the longer array ``head``
    announces, ``extra`` its last elements."""
    return b"".join((head, piece[len(_ENTRY_HEAD):], extra))


def _encode_sealed_resp(node: _Node) -> tuple[list[int] | None, object]:
    """RESP of every entry of a sealed node, as a :class:`_Packed` (and the IDs, when they
    were built on the way): brook.types._resp_pack's C pass where it was built, else
    :func:`_pack_sealed_resp`."""
    if _pack_node is not None:
        master_id = node.master_id
        body, offsets, ms_list, seqs = _pack_node(cast(bytes, node.blob), master_id >> 64,
                                                  master_id & _MASK64)
        return None, _Packed(body, offsets, ms_list, seqs)
    return _pack_sealed_resp(node)


def _pack_sealed_resp(node: _Node) -> tuple[list[int] | None, object]:
    """:func:`_encode_sealed_resp` in Python (the C pass's reference). The common node (every
    entry with the master's field names, values under 1 KiB) is encoded in one pass over the
    blob's columns, an entry's ID text made from the previous one's millisecond part; others
    entry by entry from their decoded rows."""
    blob: bytes = cast(bytes, node.blob)
    count: int
    nmaster: int
    nstr: int
    nodd: int
    count, nmaster, nstr, nodd, codes = _HEADER.unpack_from(blob)
    ms_code, seq_code, odd_code, len_code = codes.decode()
    pos: int = _HEADER.size
    end = pos + count * _WIDTHS[ms_code]
    ms_deltas: list[int] = array(ms_code, blob[pos:end]).tolist()
    pos, end = end, end + count * _WIDTHS[seq_code]
    seq_column: list[int] = array(seq_code, blob[pos:end]).tolist()
    pos = end + 2 * nodd * _WIDTHS[odd_code]
    end = pos + nstr * _WIDTHS[len_code]
    lengths: list[int] = array(len_code, blob[pos:end]).tolist()
    master_ms, master_seq = node.master_id >> 64, node.master_id & _MASK64
    ms_list: list[int] = []
    seqs: list[int] = []
    for i in range(count):
        delta = ms_deltas[i]
        ms_list.append(master_ms + delta)
        seqs.append(seq_column[i] if delta else seq_column[i] + master_seq)
    offsets: list[int] = [0]
    if nodd or not nmaster or max(lengths) >= len(_BULK_HEADERS):
        ids, rows = _entries(node)
        entries = [encode_entry(i, row) if row is not None else b""
                   for i, row in zip(ids, rows, strict=True)]
        total = 0
        for piece in entries:
            total += len(piece)
            offsets.append(total)
        return ids, _Packed(b"".join(entries), offsets, ms_list, seqs)
    # One entry's pieces: header, the ID (ms text, seq text), "\r\n*<2n>\r\n" + name 0's
    # bulk, then per field k: value header, value, and "\r\n" + name k+1's bulk (or "\r\n").
    pos = end
    names: list[bytes] = []
    for k in range(nmaster):
        names.append(blob[pos:pos + lengths[k]])
        pos += lengths[k]
    joints = [b"\r\n$%d\r\n%s\r\n" % (len(name), name) for name in names] + [b"\r\n"]
    joints[0] = b"\r\n*%d" % (2 * nmaster) + joints[0]
    fixed = 0
    for joint in joints:
        fixed += len(joint)
    parts: list[bytes] = []
    total = 0
    at = nmaster  # index in lengths of the next value
    last_ms = -1
    ms_text = b""
    for i in range(count):
        ms = ms_list[i]
        seq = seqs[i]
        if ms != last_ms:
            ms_text = b"%d-" % ms
            last_ms = ms
        seq_text = _DECIMALS[seq] if seq < 4096 else b"%d" % seq
        header = _ENTRY_HEADERS[len(ms_text) + len(seq_text)]
        parts.append(header)
        parts.append(ms_text)
        parts.append(seq_text)
        parts.append(joints[0])
        total += len(header) + len(ms_text) + len(seq_text) + fixed
        for k in range(nmaster):
            size = lengths[at]
            at += 1
            value_header = _BULK_HEADERS[size]
            parts.append(value_header)
            parts.append(blob[pos:pos + size])
            parts.append(joints[k + 1])
            pos += size
            total += len(value_header) + size
        offsets.append(total)
    return None, _Packed(b"".join(parts), offsets, ms_list, seqs)


def _resp_entries(node: _Node) -> tuple[list[int] | None, object]:
    """IDs and RESP encodings of a node's entries, through the cache: a :class:`_Packed` (and
    no IDs: it builds them on demand) for a sealed node, a list of bytes (None = deleted) for
    the open one."""
    hit = _RESP_CACHE.get(node)
    if node.blob is None:
        ids, rows = node.ids, node.rows
        if hit is None:
            hit = (ids, [])  # type: ignore[assignment]
            _RESP_CACHE[node] = hit  # type: ignore[assignment]
        encoded = hit[1]  # type: ignore[index]
        done = len(encoded)  # type: ignore[arg-type]
        if done < len(ids):  # type: ignore[arg-type]
            encoded += [None if row is None else encode_entry(i, row)  # type: ignore[operator]
                        for i, row in zip(ids[done:], rows[done:], strict=True)]  # type: ignore[index]
        return hit  # type: ignore[return-value]
    if hit is None:
        hit = _encode_sealed_resp(node)
        if len(node.blob) <= _RESP_CACHE_MAX_NODE_BYTES:
            _RESP_CACHE[node] = hit
    if len(_RESP_CACHE) > _RESP_CACHE_SIZE:
        del _RESP_CACHE[next(iter(_RESP_CACHE))]
    return hit


class EntryTooLarge(ValueError):
    """An entry Redis could not store in one listpack (over 1 GiB): nothing was added."""


class Stream:
    """A stream's entries and the metadata XINFO STREAM reports."""

    def __init__(self, max_entries: int = 100, max_bytes: int = 4096) -> None:
        self.length = 0
        self.last_id = 0
        self.max_deleted_id = 0
        self.entries_added = 0
        self.set_node_limits(max_entries, max_bytes)
        self._first_id = 0
        self._nodes: list[_Node] = []
        self._starts: list[int] = []   # master IDs of _nodes, for bisect
        self._tail: _Node | None = None  # the open node, always _nodes[-1] when set
        self.idmp: Idmp | None = None  # XADD IDMP state, created on first use
        self.groups: dict[bytes, Group] | None = None  # consumer groups, created on first use

    def first_id(self) -> int:
        """ID of the first live entry (XINFO's recorded-first-entry-id), 0 when empty."""
        return self._first_id

    def set_node_limits(self, max_entries: int, max_bytes: int) -> None:
        """CONFIG SET stream-node-max-*: checked at every append, like Redis (0 = no limit;
        the byte limit is capped like Redis's listpacks)."""
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entry_cap = max_entries or 1 << 62
        self._byte_cap = max_bytes if 0 < max_bytes <= _LISTPACK_MAX_SIZE else _LISTPACK_MAX_SIZE

    # -- writing ---------------------------------------------------------------------------------

    def append(self, entry_id: int, fields: list[bytes]) -> None:
        """Add an entry (flat field/value list, now owned by the stream) after the last one."""
        if entry_id <= self.last_id:
            raise ValueError("stream ID must be greater than the last ID")
        nfields = len(fields)
        if nfields & 1:
            raise ValueError("stream fields must come in field/value pairs")
        data = 0
        for field in fields:  # a loop the compiled build runs in C (map(len) looks len up)
            data += len(field)
        if data > _LISTPACK_MAX_SIZE:  # Redis's check: the strings alone, not their overhead
            raise EntryTooLarge("stream entry larger than a listpack can hold")
        tail = self._tail
        # Redis's streamAppendItem test: a new node if the listpack's bytes plus this entry's
        # strings would reach the byte cap, or the node already holds max_entries (deleted
        # entries included).
        if tail is None or tail.nbytes + data >= self._byte_cap or tail.count >= self._entry_cap:
            if tail is not None:
                self._seal(tail)
            tail = self._tail = _Node(entry_id, fields[0::2])
            self._nodes.append(tail)
            self._starts.append(entry_id)
            tail.nbytes = lpsize.master_size(tail.names) + lpsize.entry_size(  # type: ignore[arg-type]
                0, 0, fields, True)
        elif _appended_size is not None:
            tail.nbytes += _appended_size(entry_id, tail.master_id, fields,
                                          tail.names, tail.live)  # type: ignore[arg-type]
        else:
            master = tail.master_id
            tail.nbytes += lpsize.appended_size(
                (entry_id >> 64) - (master >> 64), (entry_id & _MASK64) - (master & _MASK64),
                fields, tail.names, tail.live)  # type: ignore[arg-type]
        # The open node's lists (typed so that the compiled build appends to them directly).
        cast(list[int], tail.ids).append(entry_id)
        cast(list[list[bytes] | None], tail.rows).append(fields)
        tail.count += 1
        tail.live += 1
        tail.last_id = entry_id
        if not self.length:
            self._first_id = entry_id
        self.length += 1
        self.last_id = entry_id
        self.entries_added += 1
        if tail.count >= self._entry_cap:
            self._seal(tail)  # nothing more can go in: free its Python objects now

    def append_node(self, ids: list[int], rows: list[list[bytes]]) -> None:
        """Add a whole node of entries (IDs increasing, above the last ID), sealed at once:
        for loaders that receive entries already cut into nodes (an RDB's listpacks), one
        seal per node instead of an :meth:`append` per entry. The node keeps the loader's
        cut, whatever the node limits; the next append opens a node of its own."""
        if not ids:
            return
        first = ids[0]
        if first <= self.last_id or len(ids) != len(rows):
            raise ValueError("stream ID must be greater than the last ID")
        if self._tail is not None:
            self._seal(self._tail)
        names = rows[0][0::2]
        node = _Node(first, names)
        node.blob, node.count = _encode(first, names, ids, rows)  # type: ignore[arg-type]
        node.names = node.ids = node.rows = None
        node.live = node.count
        node.last_id = ids[-1]
        self._nodes.append(node)
        self._starts.append(first)
        if not self.length:
            self._first_id = first
        self.length += node.count
        self.last_id = ids[-1]
        self.entries_added += node.count

    def _seal(self, node: _Node) -> None:
        """Turn the open tail into a blob (its deleted entries are dropped on the way)."""
        _RESP_CACHE.pop(node, None)  # positions shift when deleted entries go
        node.blob, node.count = _encode(node.master_id, node.names, node.ids,  # type: ignore[arg-type]
                                        node.rows)  # type: ignore[arg-type]
        node.names = node.ids = node.rows = None
        node.dead = 0
        if self._tail is node:
            self._tail = None

    def _kill(self, index: int, node: _Node, pos: int, rows: list[list[bytes] | None]) -> None:
        """Flag entry ``pos`` of node ``index`` deleted; drop the node once nothing is live."""
        rows[pos] = None
        encoded = _RESP_CACHE.get(node)
        if encoded is not None and type(encoded[1]) is list and pos < len(encoded[1]):
            encoded[1][pos] = None  # sealed nodes are read with their dead bitmask instead
        if node.blob is None:  # the master entry's live and deleted counts change size
            live, deleted = node.live, node.count - node.live
            node.nbytes += lpsize.int_size(live - 1) - lpsize.int_size(live) + \
                lpsize.int_size(deleted + 1) - lpsize.int_size(deleted)
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
        _forget(node)
        node.blob, node.count = _encode(node.master_id, names, ids, rows)
        node.dead = 0

    def _drop(self, index: int) -> None:
        node = self._nodes.pop(index)
        del self._starts[index]
        _forget(node)
        if node is self._tail:
            self._tail = None

    def _refresh_first(self) -> None:
        if not self.length:
            self._first_id = 0
            return
        ids, rows = _entries(self._nodes[0])
        self._first_id = next(i for i, row in zip(ids, rows, strict=False) if row is not None)

    def delete(self, entry_id: int, count_as_deleted: bool = True) -> bool:
        """XDEL one ID: True if a live entry was removed. A trim that removes single entries
        (ACKED) passes ``count_as_deleted=False``: trimming never moves max-deleted-entry-id."""
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
        if count_as_deleted and entry_id > self.max_deleted_id:
            self.max_deleted_id = entry_id
        if entry_id == self._first_id:
            self._refresh_first()
        return True

    def set_last_id(self, last_id: int) -> None:
        """XSETID. The caller has checked that no live entry is above ``last_id``; deleted
        entries above it are dropped so that later appends stay in ID order."""
        nodes = self._nodes
        while nodes and nodes[-1].master_id > last_id:
            self._drop(len(nodes) - 1)
        if nodes and nodes[-1].last_id > last_id:
            node = nodes[-1]
            ids, rows = _entries(node)
            keep = bisect_right(ids, last_id)
            if node.blob is None:
                _forget(node)
                del ids[keep:], rows[keep:]  # type: ignore[union-attr]
                node.count = keep
                node.last_id = ids[-1]
            else:
                names = _master_names(node.blob)
                _forget(node)
                node.blob, node.count = _encode(node.master_id, names, ids[:keep], rows[:keep])
                node.dead = 0
                node.last_id = max(i for i, r in zip(ids[:keep], rows[:keep], strict=True)
                                   if r is not None)
        self.last_id = last_id

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
                _forget(node)
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

    def _spans(self, view: Callable[[_Node], tuple[list[int] | None, Any]], start: int,
               end: int, reverse: bool) -> Iterator[tuple[list[int] | None, Any, int, int, _Node]]:
        """For each node holding IDs in [start, end], in reading order: ``(ids, items, lo,
        hi, node)``: ``items[lo:hi]`` (from ``view``) are its entries in range. ``view`` may
        give no IDs when ``items`` can build them (``items.ids()``): only needed at bounds."""
        nodes = self._nodes
        if reverse:
            last = bisect_right(self._starts, end) - 1
            order: Iterable[_Node] = (nodes[i] for i in range(last, -1, -1))
        else:
            order = islice(nodes, max(bisect_right(self._starts, start) - 1, 0), None)
        for node in order:
            if node.master_id > end or node.last_id < start:
                if reverse or node.master_id > end:
                    return  # past the range (only the first node read forward can end before it)
                continue
            ids, items = view(node)
            lo, hi = 0, node.count
            if node.master_id < start:
                ids = ids if ids is not None else items.ids()
                lo = bisect_left(ids, start)
            if node.last_id > end:
                ids = ids if ids is not None else items.ids()
                hi = bisect_right(ids, end)
            yield ids, items, lo, hi, node

    def _collect(self, view: Callable[[_Node], tuple[list[int], Any]], start: int, end: int,
                 count: int | None, reverse: bool, pairs: bool) -> list:
        """Entries in [start, end] from ``view``: ``(id, item)`` pairs or bare items."""
        out: list = []
        if start > end or (count is not None and count <= 0):
            return out
        for ids, items, lo, hi, node in self._spans(view, start, end, reverse):
            clean = node.live == node.count  # no deleted entry to filter out
            if count is not None and clean:  # take no more than needed
                if reverse:
                    lo = max(lo, hi - (count - len(out)))
                else:
                    hi = min(hi, lo + count - len(out))
            chunk = items[lo:hi]
            if pairs:
                chunk = list(zip(ids[lo:hi], chunk, strict=True))  # type: ignore[index]
                if not clean:
                    chunk = [pair for pair in chunk if pair[1] is not None]
            elif not clean:
                chunk = [item for item in chunk if item is not None]
            if reverse:
                chunk.reverse()
            out += chunk
            if count is not None and len(out) >= count:
                del out[count:]
                break
        return out

    def range(self, start: int, end: int, count: int | None = None,
              reverse: bool = False) -> list[tuple[int, list[bytes]]]:
        """Live entries with start <= ID <= end, oldest first (newest first with ``reverse``),
        at most ``count`` of them (None = all, 0 = none)."""
        return self._collect(_entries, start, end, count, reverse, True)

    def range_resp(self, start: int, end: int, count: int | None = None,
                   reverse: bool = False, split: bool = False) -> tuple[int, list[bytes]]:
        """:meth:`range` as RESP, the form the read commands send: ``(n, pieces)`` where
        ``b"".join(pieces)`` is the n entries' encoding (to go under an ``*n`` header). With
        ``split`` every piece is exactly one entry. The pieces list is the caller's."""
        pieces: list[bytes] = []
        n = 0
        if start > end or (count is not None and count <= 0):
            return n, pieces
        if count is not None and not reverse and not split and self._nodes:
            # The usual read (XRANGE/XREAD pages): served from the first node when it holds
            # enough clean entries, without the generic walk.
            index = max(bisect_right(self._starts, start) - 1, 0)
            node = self._nodes[index]
            if node.master_id >= start and node.last_id <= end and node.live == node.count \
                    and node.count >= count:
                hit = _RESP_CACHE.get(node) if node.blob is not None else None
                enc = (hit if hit is not None else _resp_entries(node))[1]  # open: grows
                if type(enc) is _Packed:
                    return count, enc.pieces(0, count)
                return count, enc[:count]  # type: ignore[index]
        for _ids, enc, lo, hi, node in self._spans(_resp_entries, start, end, reverse):
            clean = node.live == node.count  # no deleted entry to filter out
            if count is not None and clean:  # take no more than needed
                if reverse:
                    lo = max(lo, hi - (count - n))
                else:
                    hi = min(hi, lo + count - n)
            if hi <= lo:
                continue
            if type(enc) is list:
                chunk = enc[lo:hi]
                if not clean:
                    chunk = [item for item in chunk if item is not None]
                if reverse:
                    chunk.reverse()
                taken = len(chunk)
            elif clean and not reverse and not split:
                chunk = enc.pieces(lo, hi)
                taken = hi - lo
            else:
                packed: _Packed = enc  # type: ignore[assignment]
                node_dead = node.dead
                order = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
                chunk = [packed.entry(i) for i in order if not node_dead >> i & 1]
                taken = len(chunk)
            pieces += chunk
            n += taken
            if count is not None and n >= count:
                if n > count:  # only per-entry chunks can overshoot
                    del pieces[count - n:]
                    n = count
                break
        return n, pieces

    def read_resp(self, start: int, count: int | None, extra: bytes = b"",
                  nextra: int = 0) -> tuple[list[int], list[bytes]]:
        """The first ``count`` entries from ``start`` on, as XREADGROUP delivers them: their
        IDs (to make them pending) and RESP pieces that join into their encoding, both from
        the nodes' cached encodings. With ``nextra`` every piece is one entry as the longer
        array ``[id, fields, *extra]`` (``extra`` holds ``nextra`` encoded elements), framed
        with that count as it is put together."""
        out_ids: list[int] = []
        pieces: list[bytes] = []
        if count is not None and count <= 0:
            return out_ids, pieces
        head = _longer_head(nextra) if nextra else _ENTRY_HEAD
        for ids, enc, lo, hi, node in self._spans(_resp_entries, start, MAX_ID, False):
            if ids is None:
                ids = enc.ids()
            listed = type(enc) is list
            if node.live == node.count:
                if count is not None:
                    hi = min(hi, lo + count - len(out_ids))
                out_ids += ids[lo:hi]
                if nextra:
                    if listed:
                        pieces += [_longer(piece, head, extra) for piece in enc[lo:hi]]
                    else:
                        pieces += [enc.longer_entry(i, head, extra) for i in range(lo, hi)]
                elif listed:
                    pieces += enc[lo:hi]
                else:
                    pieces += enc.pieces(lo, hi)
            else:  # skip deleted entries
                for i in range(lo, hi):
                    if listed:
                        piece = enc[i]
                        if piece is None:
                            continue
                        if nextra:
                            piece = _longer(piece, head, extra)
                    elif node.dead >> i & 1:
                        continue
                    elif nextra:
                        piece = enc.longer_entry(i, head, extra)
                    else:
                        piece = enc.entry(i)
                    pieces.append(piece)
                    out_ids.append(ids[i])
                    if len(out_ids) == count:
                        break
            if count is not None and len(out_ids) >= count:
                break
        return out_ids, pieces

    def group(self, name: bytes) -> Group | None:
        """The consumer group called ``name``, if any."""
        return self.groups.get(name) if self.groups else None

    def last_live_id(self) -> int:
        """ID of the last entry not deleted (Redis's streamLastValidID), 0 when empty."""
        if not self.length:
            return 0
        node = self._nodes[-1]
        rows = node.rows
        if node.live and rows is not None and rows[-1] is not None:
            return node.ids[-1]  # type: ignore[index]  # the open node's newest entry is live
        if node.blob is not None and node.live and not node.dead >> (node.count - 1) & 1:
            return _blob_id(node, node.count - 1)  # a sealed node's last entry is live
        return self.range(0, MAX_ID, 1, reverse=True)[0][0]

    # -- introspection ---------------------------------------------------------------------------

    def node_entries(self) -> Iterator[tuple[list[int], list[list[bytes] | None]]]:
        """Each node's IDs and rows (None = deleted), oldest node first, for serializers (a
        sealed node is decoded without entering the read cache)."""
        for node in self._nodes:
            yield _entries(node) if node.blob is None or node in _CACHE else _decode(node)

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
        dup.idmp = self.idmp.copy() if self.idmp is not None else None
        if self.groups is not None:
            dup.groups = {name: group.copy() for name, group in self.groups.items()}
        dup._starts = self._starts.copy()
        for node in self._nodes:
            twin = node.copy()
            if node.blob is None:
                dup._tail = twin
            dup._nodes.append(twin)
        return dup


keyspace.TYPE_NAMES[Stream] = "stream"
keyspace.ENCODINGS[Stream] = lambda value: "stream"
keyspace.COPIERS[Stream] = lambda value: value.copy()  # type: ignore[attr-defined]
