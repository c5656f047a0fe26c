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

This module owns the container, :class:`Stream`: the node index, the open tail node and when it
is sealed, appends under the node limits, XDEL/XTRIM/XSETID, reads across nodes, the metadata
XINFO reports (length, first, last and max-deleted IDs, entries added), the stream's consumer
groups and IDMP state, and the int form of IDs. One node -- the sealed blob's layout, sealing and
decoding it, its cached decoded and RESP forms -- is :mod:`brook.types.stream_node`'s. This
module imports that codec, :mod:`brook.types.lpsize` (the open node's listpack size),
:mod:`brook.types.native`, groups and IDMP (the keyspace, above, declares the type); the
codec never imports it back.

Lists of fields returned by :meth:`Stream.range` and :meth:`Stream.get` are shared with the
stream's storage or its decode cache: callers must not mutate them.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any, Final, cast

from brook.types import lpsize, native
from brook.types.groups import Group
from brook.types.idmp import Idmp
from brook.types.stream_node import (
    DECODE_CACHE,
    ENTRY_HEAD,
    RESP_CACHE,
    Node,
    Packed,
    blob_id,
    decode,
    entries_of,
    forget,
    longer,
    longer_head,
    master_names,
    resp_entries,
    seal,
)

# The hand-written C (None in the pure build, which runs the twin in lpsize).
_appended_size = native.appended_size

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
        self._nodes: list[Node] = []
        self._starts: list[int] = []   # master IDs of _nodes, for bisect
        self._tail: Node | None = None  # the open node, always _nodes[-1] when set
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
            tail = self._tail = Node(entry_id, fields[0::2])
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
        node = Node(first, names)
        node.blob, node.count = seal(first, names, ids, rows)  # type: ignore[arg-type]
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

    def _seal(self, node: Node) -> None:
        """Turn the open tail into a blob (its deleted entries are dropped on the way)."""
        RESP_CACHE.pop(node, None)  # positions shift when deleted entries go
        node.blob, node.count = seal(node.master_id, node.names, node.ids,  # type: ignore[arg-type]
                                     node.rows)  # type: ignore[arg-type]
        node.names = node.ids = node.rows = None
        node.dead = 0
        if self._tail is node:
            self._tail = None

    def _kill(self, index: int, node: Node, pos: int, rows: list[list[bytes] | None]) -> None:
        """Flag entry ``pos`` of node ``index`` deleted; drop the node once nothing is live."""
        rows[pos] = None
        encoded = RESP_CACHE.get(node)
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
    def _compact(node: Node) -> None:
        """Re-seal a sealed node without its tombstones once they outnumber live entries
        (antirez's proposed rule, redis PR #14689; Redis itself never reclaims them)."""
        deleted = node.count - node.live
        if node.blob is None or node.count <= 10 or deleted <= node.live:
            return
        ids, rows = entries_of(node)
        names = master_names(node.blob)
        forget(node)
        node.blob, node.count = seal(node.master_id, names, ids, rows)
        node.dead = 0

    def _drop(self, index: int) -> None:
        node = self._nodes.pop(index)
        del self._starts[index]
        forget(node)
        if node is self._tail:
            self._tail = None

    def _refresh_first(self) -> None:
        if not self.length:
            self._first_id = 0
            return
        ids, rows = entries_of(self._nodes[0])
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
        ids, rows = entries_of(node)
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
            ids, rows = entries_of(node)
            keep = bisect_right(ids, last_id)
            if node.blob is None:
                forget(node)
                del ids[keep:], rows[keep:]  # type: ignore[union-attr]
                node.count = keep
                node.last_id = ids[-1]
            else:
                names = master_names(node.blob)
                forget(node)
                node.blob, node.count = seal(node.master_id, names, ids[:keep], rows[:keep])
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
            ids, rows = entries_of(node)
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
                forget(node)
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
        ids, rows = entries_of(node)
        pos = bisect_left(ids, entry_id)
        if pos < len(ids) and ids[pos] == entry_id:
            return rows[pos]
        return None

    def _spans(self, view: Callable[[Node], tuple[list[int] | None, Any]], start: int,
               end: int, reverse: bool) -> Iterator[tuple[list[int] | None, Any, int, int, Node]]:
        """For each node holding IDs in [start, end], in reading order: ``(ids, items, lo,
        hi, node)``: ``items[lo:hi]`` (from ``view``) are its entries in range. ``view`` may
        give no IDs when ``items`` can build them (``items.ids()``): only needed at bounds."""
        nodes = self._nodes
        if reverse:
            last = bisect_right(self._starts, end) - 1
            order: Iterable[Node] = (nodes[i] for i in range(last, -1, -1))
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

    def _collect(self, view: Callable[[Node], tuple[list[int], Any]], start: int, end: int,
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
        return self._collect(entries_of, start, end, count, reverse, True)

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
                hit = RESP_CACHE.get(node) if node.blob is not None else None
                enc = (hit if hit is not None else resp_entries(node))[1]  # open: grows
                if type(enc) is Packed:
                    return count, enc.pieces(0, count)
                return count, enc[:count]  # type: ignore[index]
        for _ids, enc, lo, hi, node in self._spans(resp_entries, start, end, reverse):
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
                packed: Packed = enc  # type: ignore[assignment]
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
        head = longer_head(nextra) if nextra else ENTRY_HEAD
        for ids, enc, lo, hi, node in self._spans(resp_entries, start, MAX_ID, False):
            if ids is None:
                ids = enc.ids()
            listed = type(enc) is list
            if node.live == node.count:
                if count is not None:
                    hi = min(hi, lo + count - len(out_ids))
                out_ids += ids[lo:hi]
                if nextra:
                    if listed:
                        pieces += [longer(piece, head, extra) for piece in enc[lo:hi]]
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
                            piece = longer(piece, head, extra)
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
            return blob_id(node, node.count - 1)  # a sealed node's last entry is live
        return self.range(0, MAX_ID, 1, reverse=True)[0][0]

    # -- introspection ---------------------------------------------------------------------------

    def nodes(self) -> list[Node]:
        """The macro nodes, oldest first, for serializers that read sealed blobs as they are
        (callers must not change them)."""
        return self._nodes

    def node_entries(self) -> Iterator[tuple[list[int], list[list[bytes] | None]]]:
        """Each node's IDs and rows (None = deleted), oldest node first, for serializers (a
        sealed node is decoded without entering the read cache)."""
        for node in self._nodes:
            yield entries_of(node) if node.blob is None or node in DECODE_CACHE else decode(node)

    def node_count(self) -> int:
        """Macro nodes (XINFO STREAM radix-tree-keys / radix-tree-nodes)."""
        return len(self._nodes)

    def memory_usage(self) -> int:
        """Approximate bytes held (MEMORY USAGE): blobs, tail objects, bookkeeping."""
        size = sys.getsizeof(self) + sys.getsizeof(self._nodes) + sys.getsizeof(self._starts)
        node_size = sys.getsizeof(Node(0, []))
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
