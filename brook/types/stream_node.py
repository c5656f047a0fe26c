"""A stream's macro node and its sealed form: the node codec.

A stream keeps its entries in macro nodes, as Redis keeps listpacks (``t_stream.c``). This
module owns one node: the :class:`Node` (open while it is its stream's tail, its entries in
Python lists; then sealed into one ``bytes`` blob), the blob's layout (drawn below), the passes
that write it (:func:`seal`) and read it back (:func:`decode`, :func:`master_names`,
:func:`blob_id`, :func:`sealed_count`), and a node's cached views: its decoded entries
(:func:`entries_of`) and its RESP encoding for the read commands (:func:`resp_entries`,
:class:`Packed`, :func:`encode_entry`).

Everything a stream knows beyond one node -- which node an entry goes to and when the tail is
sealed, deleted entries' counts, trimming, the IDs and metadata XINFO reports, groups -- is the
container's, :mod:`brook.types.stream`, which builds on this module. So this module must not
import the container (nor the keyspace, groups or IDMP): it imports only
:mod:`brook.types.lpsize` (the SAMEFIELDS test) and :mod:`brook.types.native` (the C passes
whose Python twins are here).

Snapshots store sealed blobs as they are (docs/snapshot-format.md): a change to the layout
bumps the snapshot format's version.

Lists of fields returned by :func:`entries_of` are shared with the node or the decode cache:
callers must not mutate them.
"""

from __future__ import annotations

import struct
from array import array
from itertools import accumulate
from typing import Final, cast

from brook.types import lpsize, native

# The hand-written C (None in the pure build, which runs the twins below).
_seal_node = native.seal_node
_pack_node = native.pack_node

_MASK64: Final = (1 << 64) - 1


# ------------------------------------------------------------------------------------------------
# Sealed node blob layout. Integers in columns use the narrowest array typecode that holds the
# column's largest value (B/H/I/Q: 1/2/4/8 bytes), in native byte order (a snapshot stores blobs
# as they are and records the writer's byte order: docs/snapshot-format.md).
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


class Node:
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

    def copy(self) -> Node:
        """A node that shares nothing mutable with this one (the open node's lists)."""
        twin = Node(self.master_id, [])
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


def seal(master_id: int, names: list[bytes], ids: list[int],
         rows: list[list[bytes] | None]) -> tuple[bytes, int]:
    """Seal the live entries of ``ids``/``rows`` into a blob; returns (blob, entries stored).
    Sealing runs once per node on the XADD path and for every node an AOF replay builds:
    brook.types._node_seal's C pass where it was built, else :func:`_seal_blob`."""
    if _seal_node is not None:
        return _seal_node(master_id, names, ids, rows)
    return _seal_blob(master_id, names, ids, rows)


def _seal_blob(master_id: int, names: list[bytes], ids: list[int],
               rows: list[list[bytes] | None]) -> tuple[bytes, int]:
    """:func:`seal` in Python (the C pass's twin): one pass over the entries."""
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


def decode(node: Node) -> tuple[list[int], list[list[bytes] | None]]:
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


def master_names(blob: bytes) -> list[bytes]:
    """The master entry's field names: the first strings of the blob."""
    count, nmaster, nstr, nodd, codes = _HEADER.unpack_from(blob)
    ms_code, seq_code, odd_code, len_code = codes.decode()
    pos = (_HEADER.size + count * (_WIDTHS[ms_code] + _WIDTHS[seq_code])
           + 2 * nodd * _WIDTHS[odd_code])
    lengths = array(len_code, blob[pos:pos + nmaster * _WIDTHS[len_code]]).tolist()
    offsets = list(accumulate(lengths, initial=pos + nstr * _WIDTHS[len_code]))
    return [blob[a:b] for a, b in zip(offsets, offsets[1:], strict=False)]


def sealed_count(blob: bytes) -> int:
    """The number of entries a sealed blob stores (its header's count)."""
    count: int = _HEADER.unpack_from(blob)[0]
    return count


def blob_id(node: Node, index: int) -> int:
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
    return ((node.master_id >> 64) + delta) << 64 | seq if delta else node.master_id + seq


# Decoded sealed nodes, shared by all streams so that memory stays bounded however many streams
# exist. Small: a range scan decodes each node once anyway; the cache serves repeated reads near
# the same position (consumers a little behind the tail, XDEL/XTRIM on the head node).
DECODE_CACHE: Final[dict[Node, tuple[list[int], list[list[bytes] | None]]]] = {}
_DECODE_CACHE_SIZE: Final = 16


def entries_of(node: Node) -> tuple[list[int], list[list[bytes] | None]]:
    """IDs and rows (None = deleted) of a node, decoding a sealed one through the cache."""
    if node.blob is None:
        return node.ids, node.rows  # type: ignore[return-value]
    hit = DECODE_CACHE.get(node)
    if hit is None:
        hit = decode(node)
        if len(DECODE_CACHE) >= _DECODE_CACHE_SIZE:
            del DECODE_CACHE[next(iter(DECODE_CACHE))]
        DECODE_CACHE[node] = hit
    return hit


# RESP encodings of nodes' entries, for the read commands. A sealed node is encoded once into
# one bytes object holding its entries back to back, with the offset where each begins; a range
# within it is one slice, so a reply joins a piece per node, not per value.
# The open tail node keeps one bytes object per entry, appended lazily. Nodes with very large
# entries are not kept.
RESP_CACHE: Final[dict[Node, tuple[list[int] | None, object]]] = {}
_RESP_CACHE_SIZE: Final = 16
_RESP_CACHE_MAX_NODE_BYTES: Final = 1 << 18
# An entry is the array [ID, fields] in RESP2 and RESP3 alike: nothing cached here depends on
# the client's protocol. XREADGROUP CLAIM sends longer arrays, [ID, fields, idle, deliveries],
# made from a cached entry by replacing its fixed-width ENTRY_HEAD with the longer header.
# The stored bytes that follow are never looked into.
ENTRY_HEAD: Final = b"*2\r\n"  # how every cached entry encoding starts
_BULK_HEADERS: Final = [b"$%d\r\n" % n for n in range(1024)]
_ENTRY_HEADERS: Final = [b"*2\r\n$%d\r\n" % n for n in range(42)]  # "*2" and the ID's length
_DECIMALS: Final = [b"%d" % n for n in range(4096)]  # sequence numbers' text
_LONGER_HEADS: Final[dict[int, bytes]] = {}  # nextra -> the array header of a longer entry


def longer_head(nextra: int) -> bytes:
    """The array header of an entry with ``nextra`` more elements."""
    head = _LONGER_HEADS.get(nextra)
    if head is None:
        head = _LONGER_HEADS[nextra] = b"*%d\r\n" % (2 + nextra)
    return head


class Packed:
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
        return b"".join((head, self.body[offsets[i] + len(ENTRY_HEAD):offsets[i + 1]], extra))


def forget(node: Node) -> None:
    """Drop a node's cached decodings (it changed or left its stream)."""
    DECODE_CACHE.pop(node, None)
    RESP_CACHE.pop(node, None)


def encode_entry(entry_id: int, row: list[bytes], extra: bytes = b"", nextra: int = 0) -> bytes:
    """The RESP form of one entry: ``[b"ms-seq", [field, value, ...]]``; with ``nextra``
    more elements, already encoded in ``extra``, in the same array (``[id, fields, *extra]``)."""
    sid = b"%d-%d" % (entry_id >> 64, entry_id & _MASK64)
    return b"".join([b"*%d\r\n$%d\r\n%s\r\n*%d\r\n" % (2 + nextra, len(sid), sid, len(row)),
                     *[b"$%d\r\n%s\r\n" % (len(item), item) for item in row], extra])


def longer(piece: bytes, head: bytes, extra: bytes) -> bytes:
    """A cached entry encoding (starting with ENTRY_HEAD) as the longer array ``head``
    announces, ``extra`` its last elements."""
    return b"".join((head, piece[len(ENTRY_HEAD):], extra))


def _encode_sealed_resp(node: Node) -> tuple[list[int] | None, object]:
    """RESP of every entry of a sealed node, as a :class:`Packed` (and the IDs, when they
    were built on the way): brook.types._resp_pack's C pass where it was built, else
    :func:`_pack_sealed_resp`."""
    if _pack_node is not None:
        master_id = node.master_id
        body, offsets, ms_list, seqs = _pack_node(cast(bytes, node.blob), master_id >> 64,
                                                  master_id & _MASK64)
        return None, Packed(body, offsets, ms_list, seqs)
    return _pack_sealed_resp(node)


def _pack_sealed_resp(node: Node) -> tuple[list[int] | None, object]:
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
        ids, rows = entries_of(node)
        entries = [encode_entry(i, row) if row is not None else b""
                   for i, row in zip(ids, rows, strict=True)]
        total = 0
        for piece in entries:
            total += len(piece)
            offsets.append(total)
        return ids, Packed(b"".join(entries), offsets, ms_list, seqs)
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
    return None, Packed(b"".join(parts), offsets, ms_list, seqs)


def resp_entries(node: Node) -> tuple[list[int] | None, object]:
    """IDs and RESP encodings of a node's entries, through the cache: a :class:`Packed` (and
    no IDs: it builds them on demand) for a sealed node, a list of bytes (None = deleted) for
    the open one."""
    hit = RESP_CACHE.get(node)
    if node.blob is None:
        ids, rows = node.ids, node.rows
        if hit is None:
            hit = (ids, [])  # type: ignore[assignment]
            RESP_CACHE[node] = hit  # type: ignore[assignment]
        encoded = hit[1]  # type: ignore[index]
        done = len(encoded)  # type: ignore[arg-type]
        if done < len(ids):  # type: ignore[arg-type]
            encoded += [None if row is None else encode_entry(i, row)  # type: ignore[operator]
                        for i, row in zip(ids[done:], rows[done:], strict=True)]  # type: ignore[index]
        return hit  # type: ignore[return-value]
    if hit is None:
        hit = _encode_sealed_resp(node)
        if len(node.blob) <= _RESP_CACHE_MAX_NODE_BYTES:
            RESP_CACHE[node] = hit
    if len(RESP_CACHE) > _RESP_CACHE_SIZE:
        del RESP_CACHE[next(iter(RESP_CACHE))]
    return hit
