"""Brook value -> RDB object (Redis's rdbSaveObjectType + rdbSaveObject).

Each value is written in the RDB type Redis uses for its encoding, limited to what RDB 10
(Redis 7.0) defines, so that a payload restores on 7.0 and on every later Redis:

* strings: small integers in 1-4 bytes, LZF when ``rdbcompression`` is on and it pays off
  (longer than 20 bytes), plain otherwise -- as rdbSaveRawString;
* lists: quicklist v2 of listpacks, nodes cut by ``list-max-listpack-size`` as a quicklist's;
* sets: an intset as an intset; a listpack or table set as the plain set type
  (``RDB_TYPE_SET_LISTPACK`` is RDB 11, unknown to 7.0; a 7.2+ reader gives the plain type
  the listpack encoding again under the same limits);
* sorted sets: listpack, or the binary-score table (members from the highest, as Redis writes
  them so that loading inserts at the head);
* hashes: listpack, or the table;
* streams: listpacks v2 (RDB 10). v3 (RDB 11) adds only the consumers' active time; writing it
  would make the payload of nearly every stream with consumers unreadable on 7.0 (a consumer
  made by XGROUP CREATECONSUMER has no active time yet), so it is left out, and a reader sets
  each active time to the seen time -- what Redis 7.2+ does loading a 7.0 file.

:func:`dump_object` returns the bytes and the RDB version they need. The nodes of packed
containers (listpacks, intsets, a stream's nodes) are strings like any other, LZF-compressed
as Redis's are (brook.rdb._lzf where the compiled core was built). A stream's sealed nodes
become Redis's listpacks in C (brook.types._node_listpack) where the compiled core was built.
Pending entries released with XNACK have no owner, which Redis's format cannot express; they
are not written.
"""

from __future__ import annotations

from typing import Final, Protocol

from brook.protocol.resp import format_double
from brook.rdb import constants as c
from brook.rdb import strings as s
from brook.rdb.containers import (
    SMALL_INTS,
    intset,
    listpack,
    listpack_entry,
    listpack_of,
    lp_int,
    lp_string,
)
from brook.types import native
from brook.types.hash import Hash
from brook.types.lists import ListValue
from brook.types.pel import NO_OWNER
from brook.types.set import SetValue
from brook.types.stream import Stream
from brook.types.stream_node import DECODE_CACHE, Node, decode, entries_of
from brook.types.zset import SortedSet

__all__ = ["Options", "dump_object"]

_MASK64: Final = (1 << 64) - 1
_LP_OVERHEAD: Final = 7
_NODE_BYTES: Final = (4096, 8192, 16384, 32768, 65536)


class Options(Protocol):
    """The configuration that shapes what is written (the server's config)."""

    rdbcompression: bool
    list_max_listpack_size: int


def dump_object(value: object, options: Options) -> tuple[bytes, int]:
    """(type byte + object, the RDB version a reader needs to know it)."""
    kind = type(value)
    compress = options.rdbcompression
    if isinstance(value, (bytes, bytearray)):
        return bytes((c.TYPE_STRING,)) + s.string(bytes(value), compress), 1
    if kind is ListValue:
        return _list(value, options), 10  # type: ignore[arg-type]
    if kind is SetValue:
        return _set(value, compress), 2  # type: ignore[arg-type]
    if kind is SortedSet:
        return _zset(value, compress), 10  # type: ignore[arg-type]
    if kind is Hash:
        return _hash(value, compress), 10  # type: ignore[arg-type]
    if kind is Stream:
        return _stream(value, compress)  # type: ignore[arg-type]
    raise TypeError(f"no RDB type for {kind.__name__}")


def _list(value: ListValue, options: Options) -> bytes:
    fill = options.list_max_listpack_size
    entries = [listpack_entry(item) for item in value.range(0, len(value))]
    out = [bytes((c.TYPE_LIST_QUICKLIST_2,))]
    nodes: list[bytes] = []
    if fill > 0:
        for start in range(0, len(entries), fill):
            chunk = entries[start:start + fill]
            nodes.append(listpack_of(chunk, len(chunk)))
    else:
        limit = _NODE_BYTES[min(-fill, len(_NODE_BYTES)) - 1]
        chunk, size = [], _LP_OVERHEAD
        for entry in entries:
            if chunk and size + len(entry) > limit:
                nodes.append(listpack_of(chunk, len(chunk)))
                chunk, size = [], _LP_OVERHEAD
            chunk.append(entry)
            size += len(entry)
        if chunk:
            nodes.append(listpack_of(chunk, len(chunk)))
    out.append(s.length(len(nodes)))
    packed = s.length(c.CONTAINER_PACKED)
    for node in nodes:
        out += (packed, s.string(node, options.rdbcompression))
    return b"".join(out)


def _set(value: SetValue, compress: bool) -> bytes:
    if value.encoding == "intset":
        blob = intset(sorted(int(member) for member in value))
        return bytes((c.TYPE_SET_INTSET,)) + s.string(blob, compress)
    out = [bytes((c.TYPE_SET,)), s.length(len(value))]
    out += [s.string(member, compress) for member in value]
    return b"".join(out)


def _zset(value: SortedSet, compress: bool) -> bytes:
    pairs = list(value.items())
    if value.encoding == "listpack":
        flat: list[bytes] = []
        for member, score in pairs:
            flat += (member, format_double(score))
        return bytes((c.TYPE_ZSET_LISTPACK,)) + s.string(listpack(flat), compress)
    out = [bytes((c.TYPE_ZSET_2,)), s.length(len(pairs))]
    for member, score in reversed(pairs):
        out += (s.string(member, compress), s.binary_double(score))
    return b"".join(out)


def _hash(value: Hash, compress: bool) -> bytes:
    if not value.is_hashtable:
        flat: list[bytes] = []
        for pair in value.items():
            flat += pair
        return bytes((c.TYPE_HASH_LISTPACK,)) + s.string(listpack(flat), compress)
    out = [bytes((c.TYPE_HASH,)), s.length(len(value))]
    for field, item in value.items():
        out += (s.string(field, compress), s.string(item, compress))
    return b"".join(out)


def _raw_id(entry_id: int) -> bytes:
    return (entry_id >> 64).to_bytes(8, "big") + (entry_id & _MASK64).to_bytes(8, "big")


def _node_listpack(node: Node) -> tuple[int, bytes] | None:
    """(master ID, listpack) of a node's live entries, None when none is live: a sealed
    node's blob goes to brook.types._node_listpack where it was built, in one call; an open
    node, or the pure build, takes the rows (:func:`_stream_node`, the C's twin)."""
    blob = node.blob
    node_listpack = native.node_listpack
    if blob is not None and node_listpack is not None:
        dead = node.dead.to_bytes((node.dead.bit_length() + 7) // 8, "little")
        found = node_listpack(blob, node.master_id >> 64, node.master_id & _MASK64, dead)
        return None if found is None else (found[0] << 64 | found[1], found[2])
    ids, rows = entries_of(node) if blob is None or node in DECODE_CACHE else decode(node)
    return _stream_node(ids, rows)


def _stream_node(ids: list[int], rows: list[list[bytes] | None]) -> tuple[int, bytes] | None:
    """(master ID, listpack) of a node's live entries, None when none is live, from its
    rows: integers below 128 and repeated strings come from tables."""
    live = [(entry_id, row) for entry_id, row in zip(ids, rows, strict=True) if row is not None]
    if not live:
        return None
    master, first = live[0]
    names = first[0::2]
    nnames = len(names)
    master_ms, master_seq = master >> 64, master & _MASK64
    small = SMALL_INTS
    seen: dict[bytes, bytes] = {}  # strings of this node already encoded

    def text(item: bytes) -> bytes:
        encoded = seen.get(item)
        if encoded is None:
            encoded = seen[item] = lp_string(item)
        return encoded

    def number(value: int) -> bytes:
        return small[value] if 0 <= value < 128 else lp_int(value)

    parts = [number(len(live)), small[0], number(nnames)]
    parts += [text(name) for name in names]
    parts.append(small[0])
    same_flag, other_flag = small[2], small[0]
    same_count = number(nnames + 3)
    count = 4 + nnames
    for entry_id, row in live:
        ms_delta = (entry_id >> 64) - master_ms
        seq_delta = (entry_id & _MASK64) - master_seq
        if row[0::2] == names:
            parts += (same_flag, number(ms_delta), number(seq_delta))
            parts += [text(item) for item in row[1::2]]
            parts.append(same_count)
            count += nnames + 4
        else:
            npairs = len(row) >> 1
            parts += (other_flag, number(ms_delta), number(seq_delta), number(npairs))
            parts += [text(item) for item in row]
            parts.append(number(2 * npairs + 4))
            count += 2 * npairs + 5
    return master, listpack_of(parts, count)


def _stream(stream: Stream, compress: bool) -> tuple[bytes, int]:
    groups = list((stream.groups or {}).values())
    out = [bytes((c.TYPE_STREAM_LISTPACKS_2,))]
    nodes = [listpack for node in stream.nodes()
             if (listpack := _node_listpack(node)) is not None]
    out.append(s.length(len(nodes)))
    for master, blob in nodes:
        out += (s.plain_string(_raw_id(master)), s.string(blob, compress))
    first = stream.first_id() if stream.length else 0
    deleted = stream.max_deleted_id
    out += (s.length(stream.length), s.length(stream.last_id >> 64),
            s.length(stream.last_id & _MASK64), s.length(first >> 64), s.length(first & _MASK64),
            s.length(deleted >> 64), s.length(deleted & _MASK64), s.length(stream.entries_added),
            s.length(len(groups)))
    for group in groups:
        out += (s.string(group.name, compress), s.length(group.last_id >> 64),
                s.length(group.last_id & _MASK64), s.length(group.entries_read & _MASK64))
        records = [record for record in group.pel.records() if record[3] != NO_OWNER]
        out.append(s.length(len(records)))
        for entry_id, delivery_time, delivery_count, _ in records:
            out += (_raw_id(entry_id), s.millisecond_time(delivery_time),
                    s.length(delivery_count))
        consumers = list(group.consumers.values())
        out.append(s.length(len(consumers)))
        for consumer in consumers:
            out += (s.string(consumer.name, compress), s.millisecond_time(consumer.seen_time))
            owned = sorted(consumer.pel)
            out.append(s.length(len(owned)))
            out += [_raw_id(entry_id) for entry_id in owned]
    return b"".join(out), 10
