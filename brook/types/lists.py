"""The list value type: packed elements, with loose ends on a long list, O(1) at both ends.

Redis keeps a list as a quicklist, a doubly linked list of listpacks, where an element is a
length, its bytes and a back-length: an 11-byte element costs 13 bytes. A ``deque`` of
``bytes`` (Brook's first list) paid a 33-byte object header and an 8-byte slot for every
element instead: 55 bytes per 11-byte element in a long list, 132 per element in lists of ten
(key included; Redis: 13.1 and 26.6). Python objects are the cost, so a list keeps as few of
them as it can. Now: 13.6 and 34.8 bytes per element (``INFO memory`` growth, RSS), 39.6 for
lists of ten since the slot that records Redis's encoding (pure build, keys included).

* **Small lists** (packed form at most ``SMALL_BYTES``) are one immutable ``bytes`` held by
  the value object, in listpack style: every element is a length byte, the element, the length
  byte again, so both ends are read without a walk (an element of 254 bytes or more: marker
  254, a 2-byte length, the element, the length, the marker). A push or a pop builds the new
  ``bytes``, a copy of at most ``SMALL_BYTES`` (as a listpack's realloc and memmove cost
  Redis). Ten 6-byte elements cost the 64-byte value object and a 113-byte ``bytes``. Other
  commands decode the small form; when all elements have one length (IDs, fixed payloads) a
  compiled ``struct`` cuts them in C.
* **Long lists** are a deque of packed chunks between two *loose ends*, plain Python lists of
  ``bytes`` objects. LPUSH/RPUSH/LPOP/RPOP touch only a loose end: a C list append or pop,
  which the commands' hot paths do themselves (see :class:`ListValue`). When an end holds
  ``PACK_AT`` (``KEEP + CHUNK``) elements its ``CHUNK`` innermost ones are packed into a
  chunk; when an end runs dry the adjacent chunk is unpacked into it (without chunks, half of
  the other end moves over, so alternating ends stay O(1) amortized). An element is packed
  and unpacked at most once per trip through an end: amortized O(1) pushes and pops, and at
  most ``2 * PACK_AT`` loose objects per list.
* **A chunk** is the pickle (protocol 5, no memo) of the list of its elements: an element
  shorter than 256 bytes is an opcode, a length byte and its bytes, so 11 bytes cost 13, as in
  a listpack. The C pickler and unpickler pack and unpack a chunk of 128 elements at 20-30 ns
  an element; ``marshal`` is a little faster but spends 5 bytes per element, a ``struct``
  format built from a length column is two to three times slower, a Python walk over length
  prefixes five to ten times. Chunks are made only by
  :func:`brook.types.packing.pack_items` and never leave the process, so unpickling them is
  safe. A chunk holds at most ``CHUNK`` elements and
  ``CHUNK_BYTES`` bytes (one element at least, as a quicklist node) and is kept with its
  element count, so an index finds its chunk without unpacking others, walking from the nearer
  end as Redis's quicklist iterator does. LPOS, LINSERT's pivot and LREM skip a chunk whose
  bytes do not contain the element at all; recently read chunks stay unpacked in a small
  cache, so LRANGE/LINDEX repeated on the same region unpack nothing.

Why not the obvious packed design, ``bytearray`` chunks with their lengths or offsets that
pushes and pops edit in place, head and tail positions included: in a prototype a pop from
such a chunk cost 500-800 ns more than a deque pop (several bytearray operations, each a C
call with its bytecodes), while a whole request costs the server 2-5 µs, so the 10% budget
is a few hundred nanoseconds. With loose ends a pop is a list pop, and packing and unpacking
add 20-30 ns per element, once. Per request, pushes now run fewer instructions than with the
deque (an ``append`` instead of a one-element slice and ``extend``) and pops about 5% more
(callgrind over the whole request path). And a small list as a ``bytearray`` plus an
``array('B')`` of lengths is two more objects with their headers: 44 bytes per element for
lists of ten, over the limit of 40 (1.5 times Redis).

A long list that shrinks to ``SHRINK_SIZE`` elements or fewer takes the small form again when
it next refills an end or loses elements in bulk (LPOP/RPOP with a count, LTRIM, LREM): not on
the pop path itself, which stays a list pop. A list drained to nothing is deleted anyway.

OBJECT ENCODING follows Redis 7.2+ (Redis 7.0 reported ``quicklist`` for every list), apart
from how Brook stores the list. Redis keeps a list as one listpack until a push would take it
past ``list-max-listpack-size`` (bytes when negative, entries when positive: ``quicklistNode
ExceedsLimit``), then as a quicklist, which becomes a listpack again when a removal leaves its
one node within *half* the limit (hysteresis). The value's ``lp`` tells which, in one int:

* ``lp > 0``: listpack, and ``lp`` is the byte size Redis's listpack would have (7 bytes of
  header and end, then each element's entry: :func:`entry_size`), kept exact on every change,
  so the growth test is one comparison;
* ``lp == 0``: listpack, in Brook's small form, bytes not counted: the small form is at most
  ``SMALL_BYTES`` and a listpack entry at most 2 bytes longer than its small-form entry, so
  ``7 + len(data) + 2 * size`` bounds the listpack's bytes, far below every byte limit; the
  count starts (exactly, once) when that bound comes near a limit or the list takes the long
  form. Pushes and pops of a small list, the queue's usual state, count nothing;
* ``lp <= -2``: quicklist, with ``-2 - lp`` those bytes as if in one node, kept while the list
  is short enough (:attr:`ListpackLimit.track` elements) for a removal to bring it back;
* ``lp == -1``: quicklist, too long for that; nothing is counted. This is the state of the
  hot paths (:mod:`brook.commands.lists` takes them only then), so a long list's pushes and pops
  cost what they did. A pop may take such a list below ``track`` without counting; the next
  method call (an end's refill at the latest, within ``2 * PACK_AT`` pops, which ``track``
  allows for) starts counting before the list can be small enough to convert.

Redis converts back only when the quicklist has a single node; Brook does not model nodes and
takes the whole list's bytes for that node's, which is the same while a list is pushed and
popped at its ends, and can convert a little early after LINSERTs split nodes or when a node at
each end survives. CONFIG SET of the limit applies to the next change of each list, as in Redis.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import accumulate
from typing import Final

from brook.types.lpsize import string_size
from brook.types.packing import pack_items, unpack_items

SMALL_BYTES = 1024  # the packed form of a small list is at most this long
CHUNK = 128  # elements per chunk of a long list
CHUNK_BYTES = 8192  # bytes per chunk unless it holds one element (a quicklist node: 8 KiB)
KEEP = 32  # loose elements left at an end when its inner ones are packed
PACK_AT = KEEP + CHUNK  # an end this long is packed
SHRINK_SIZE = 32  # a long list this short may become small again

_LONG: Final = 254  # length byte of a small list's long element (2-byte length follows)
_MARKS: Final = [bytes((n,)) for n in range(_LONG)]

Node = tuple[int, bytes]  # (element count, chunk)


# ---------------------------------------------------------------------------------------------
# Redis's encoding: the listpack limit and entry sizes
# ---------------------------------------------------------------------------------------------

LISTPACK_EMPTY: Final = 7  # a listpack's header (total bytes, count) and end byte
_SAFETY_LIMIT: Final = 8192  # quicklist.c's SIZE_SAFETY_LIMIT: a count-limited node's bytes
_SIZE_LEVELS: Final = (4096, 8192, 16384, 32768, 65536)  # fill -1 ... -5 (and below)


def entry_size(element: bytes) -> int:
    """Bytes of ``element`` as a listpack entry (header, data, back-length): an integer's
    encoding when it reads as one, as ``lpAppend`` stores it. Short strings that cannot be
    integers (the usual element) take the short way."""
    size = len(element)
    if size < 64 and (not size or element[0] > 57 or (element[0] < 48 and element[0] != 45)):
        return size + 2
    return string_size(element)


class ListpackLimit:
    """``list-max-listpack-size`` as ``quicklistNodeLimit`` reads it: a byte limit (``size``,
    fill < 0) or an entry limit (``count``, fill >= 0; nodes then also stay within 8 KiB)."""

    __slots__ = ("fill", "size", "count", "track", "room")

    def __init__(self, fill: int = -2) -> None:
        self.fill = fill
        self.size = -1  # -1: no byte limit
        self.count = -1  # -1: no entry limit
        self.track = 0
        self.room = -1
        self.set(fill)

    def set(self, fill: int) -> None:
        self.fill = fill
        if fill >= 0:
            self.size, self.count = -1, fill or 1
            back = self.count // 2  # entries at which a quicklist may turn back
        else:
            self.size, self.count = _SIZE_LEVELS[min(-fill, len(_SIZE_LEVELS)) - 1], -1
            back = (self.size // 2 - LISTPACK_EMPTY) // 2  # every entry is 2 bytes at least
        # A quicklist this short counts its bytes: see the module docstring for the margin.
        self.track = back + 2 * PACK_AT
        # The longest element a push may add to a small listpack without any test: a small
        # form's listpack is at most 7 + 2 * SMALL_BYTES bytes (module docstring).
        self.room = self.size - LISTPACK_EMPTY - 2 * SMALL_BYTES if self.size >= 0 else -1

    def exceeds(self, nbytes: int, count: int) -> bool:
        """Would a listpack of ``nbytes`` and ``count`` entries be past the limit?"""
        if self.size >= 0:
            return nbytes > self.size
        return nbytes > _SAFETY_LIMIT or count > self.count

    def fits(self, nbytes: int, count: int, shrinking: bool) -> bool:
        """May a quicklist of ``nbytes`` (as one node) and ``count`` entries be a listpack?
        Within half the limit after a removal (``shrinking``), the whole limit otherwise."""
        if self.size >= 0:
            return nbytes <= (self.size >> 1 if shrinking else self.size)
        return nbytes <= _SAFETY_LIMIT and count <= (self.count >> 1 if shrinking else self.count)


LIMIT: Final = ListpackLimit()  # the server's setting (brook.server applies CONFIG SET to it)


# ---------------------------------------------------------------------------------------------
# Encodings
# ---------------------------------------------------------------------------------------------


def _entry(element: bytes) -> bytes:
    """One element in the small form (elements of a small list are shorter than 64 KiB)."""
    size = len(element)
    if size < _LONG:
        mark = _MARKS[size]
        return mark + element + mark
    length = size.to_bytes(2, "little")
    return b"\xfe" + length + element + length + b"\xfe"


def _encode_small(items: list[bytes]) -> bytes | None:
    """The small form of ``items``, None when it would be longer than SMALL_BYTES."""
    sizes = list(map(len, items))
    if not sizes:
        return b""
    if sum(sizes) + 2 * len(sizes) > SMALL_BYTES:
        return None
    if max(sizes) < _LONG:  # the usual case: three C-level list assignments and one join
        marks = list(map(_MARKS.__getitem__, sizes))
        parts: list[bytes] = [b""] * (3 * len(items))
        parts[::3] = marks
        parts[1::3] = items
        parts[2::3] = marks
        packed = b"".join(parts)
    else:
        packed = b"".join(map(_entry, items))
    return packed if len(packed) <= SMALL_BYTES else None


# Compiled ``struct`` formats that cut a small form whose elements all have one length:
# (length, count) -> Struct. Brook's own cache, so as not to churn the struct module's.
_CUTTERS: Final[dict[tuple[int, int], struct.Struct]] = {}
_CUTTERS_SIZE: Final = 32


def _decode_small(data: bytes) -> list[bytes]:
    """The elements of a small form, in order. When every element has the same short length
    (IDs, fixed-size payloads), one stride check proves it (each entry starts where the
    previous one's length says) and a compiled struct cuts them all in C, three times faster
    than the walk below."""
    end = len(data)
    if not end:
        return []
    size = data[0]
    step = size + 2
    count = end // step
    if size < _LONG and count * step == end and data[::step].count(size) == count:
        cutter = _CUTTERS.get((size, count))
        if cutter is None:
            if len(_CUTTERS) >= _CUTTERS_SIZE:
                del _CUTTERS[next(iter(_CUTTERS))]
            cutter = _CUTTERS[size, count] = struct.Struct(("x%dsx" % size) * count)
        return list(cutter.unpack(data))
    items: list[bytes] = []
    append = items.append
    position = 0
    while position < end:
        size = data[position]
        if size < _LONG:
            position += 1
            stop = position + size
            append(data[position:stop])
            position = stop + 1
        else:
            size = data[position + 1] | data[position + 2] << 8
            position += 3
            stop = position + size
            append(data[position:stop])
            position = stop + 3
    return items



# Chunks read recently, unpacked: LRANGE, LINDEX and LPOS repeated on the same part of a long
# list (a dashboard polling a queue, redis-benchmark's LRANGE_100) unpack nothing. Keyed by the
# chunk itself (immutable; its hash is computed once), oldest out first, big chunks never kept.
_READ_CACHE: Final[dict[bytes, list[bytes]]] = {}
_READ_CACHE_SIZE: Final = 16
_READ_CACHE_MAX_CHUNK: Final = 1 << 16


def _read(chunk: bytes) -> list[bytes]:
    """A chunk's elements for reading only: callers must not change the list."""
    items = _READ_CACHE.get(chunk)
    if items is None:
        items = unpack_items(chunk)
        if len(chunk) <= _READ_CACHE_MAX_CHUNK:
            if len(_READ_CACHE) >= _READ_CACHE_SIZE:
                del _READ_CACHE[next(iter(_READ_CACHE))]
            _READ_CACHE[chunk] = items
    return items


def _chunk(items: list[bytes], from_end: bool = False) -> Node:
    """A chunk of ``items`` (at most CHUNK, in order): all of them when the chunk is at most
    CHUNK_BYTES long, otherwise as many as surely fit, one at least, the first ones (the
    last ones when ``from_end``). Packing first and measuring after costs nothing in the
    usual case, where everything fits."""
    packed = pack_items(items)
    if len(packed) <= CHUNK_BYTES or len(items) == 1:
        return len(items), packed
    budget = CHUNK_BYTES - 32  # the pickle's header and a second frame
    count = 0
    for total in accumulate(len(item) + 9 for item in (reversed(items) if from_end else items)):
        if total > budget:  # (9: the longest opcode with its length)
            break
        count += 1
    count = max(count, 1)
    return count, pack_items(items[len(items) - count:] if from_end else items[:count])


def _nodes_of(items: list[bytes]) -> list[Node]:
    """``items`` (in order) as consecutive chunks."""
    nodes: list[Node] = []
    start = 0
    while start < len(items):
        node = _chunk(items[start:start + CHUNK])
        nodes.append(node)
        start += node[0]
    return nodes


def _without(items: list[bytes], element: bytes, budget: int,
             from_end: bool) -> tuple[list[bytes], int]:
    """``items`` less up to ``budget`` matches of ``element``, taken from the end when
    ``from_end``: (what is left, how many went)."""
    present = items.count(element)
    if not present:
        return items, 0
    if present <= budget:
        return [item for item in items if item != element], present
    if from_end:
        items = items[::-1]
    kept: list[bytes] = []
    remaining = budget
    scan = iter(items)
    for item in scan:
        if item == element:
            remaining -= 1
            if not remaining:
                break
        else:
            kept.append(item)
    kept.extend(scan)
    if from_end:
        kept.reverse()
    return kept, budget


# ---------------------------------------------------------------------------------------------
# The value
# ---------------------------------------------------------------------------------------------

Segment = tuple[int, bytes | None, list[bytes] | None]


class ListValue:
    """A list of ``size`` elements.

    Small: ``data`` is the small form (``bytes``), ``left`` and ``right`` are None. Long:
    ``data`` is the deque of chunks, each with its element count, in order; ``left`` is the
    loose head, reversed (``left[-1]`` is the first element); ``right`` is the loose tail, in
    order (``right[-1]`` is the last). Each loose end stays shorter than ``PACK_AT``.

    The deque-like surface the list commands use: ``extend``/``extendleft`` (which also return
    the new length, the push reply), ``pop``/``popleft``, :meth:`popmany`, ``len``,
    iteration, indexing, :meth:`range`, :meth:`insert`, :meth:`positions`,
    :meth:`remove_matches`, :meth:`trim`, ``clear`` and ``copy``.

    The hot paths of LPUSH/RPUSH/LPOP/RPOP (:mod:`brook.commands.lists`) skip the method call
    on a long list: they may append one element to ``left`` or ``right`` (and then call
    :meth:`pack_left`/:meth:`pack_right` once that end reaches ``PACK_AT``) or pop one from
    a non-empty end, adjusting ``size`` themselves. A method call and a one-element slice cost
    more than the whole push otherwise does. Holding the ends in the value itself (rather than
    in an object of their own) spares those paths a load and a type test, for 16 bytes more
    per list. ``lp`` is Redis's encoding and listpack bytes (module docstring); those paths
    are taken only while it is -1 (a long quicklist, where nothing is counted).
    """

    __slots__ = ("size", "data", "left", "right", "lp")

    def __init__(self, items: Iterable[bytes] = ()) -> None:
        self.size = 0
        self.data: bytes | deque[Node] = b""
        self.left: list[bytes] | None = None
        self.right: list[bytes] | None = None
        self.lp = 0  # Redis's encoding and byte count (module docstring): a small listpack
        items = list(items)
        if items:
            self._assign(items)
            self.encode_auto()

    def _assign(self, items: list[bytes]) -> None:
        """Hold exactly ``items`` (a list the value may keep), in the form their size calls
        for: a long list starts with everything loose on the right, its inner part packed."""
        self.size = len(items)
        packed = _encode_small(items)
        if packed is not None:
            self.data = packed
            self.left = self.right = None
            return
        self.data = deque()
        self.left = []
        self.right = items
        self.pack_right()

    def _elements(self) -> list[bytes]:
        """Every element, in order, as a new list."""
        left = self.left
        if left is None:
            return _decode_small(self.data)  # type: ignore[arg-type]
        items = left[::-1]
        for _, chunk in self.data:  # type: ignore[misc]
            items += unpack_items(chunk)
        items += self.right  # type: ignore[arg-type]
        return items

    def _maybe_shrink(self) -> None:
        """A long list down to SHRINK_SIZE elements that fits the small form again takes it
        (the size test first: the packed size costs a pass over the list)."""
        left, right = self.left, self.right
        if self.size > SHRINK_SIZE or left is None or right is None:
            return
        bound = (sum(map(len, left)) + sum(map(len, right)) + 6 * (len(left) + len(right))
                 + sum(len(chunk) + 6 * count for count, chunk in self.data))  # type: ignore
        if bound <= SMALL_BYTES:
            packed = _encode_small(self._elements())
            if packed is not None:
                self.data = packed
                self.left = self.right = None

    # -- Redis's encoding (module docstring) ------------------------------------------------------

    def is_listpack(self) -> bool:
        return self.lp >= 0

    def _measure(self) -> int:
        """The list's bytes as one listpack, counted element by element."""
        return LISTPACK_EMPTY + sum(map(entry_size, self._elements()))

    def encode_auto(self) -> None:
        """Redis's LIST_CONV_AUTO, for a list built whole (SORT ... STORE, a snapshot): a
        listpack when it fits the whole limit, a quicklist otherwise."""
        limit = LIMIT
        size = self.size
        bound = limit.count if limit.size < 0 else (limit.size - LISTPACK_EMPTY) >> 1
        if size > bound and size > limit.track:
            self.lp = -1
            return
        nbytes = self._measure()
        if limit.fits(nbytes, size, False):
            self.lp = 0 if self.left is None else nbytes
        else:
            self.lp = -2 - nbytes if size <= limit.track else -1

    def encode_quicklist(self) -> None:
        """A list Redis loads as a quicklist without converting it (an RDB ziplist list):
        a listpack again only when a removal brings it within half the limit."""
        self.lp = -1 if self.size > LIMIT.track else -2 - self._measure()

    def growing(self, items: list[bytes]) -> None:
        """Before ``items`` go in (listTypeTryConversionAppend): a listpack they would take
        past the limit becomes a quicklist. Redis adds their lengths, not their entry sizes.
        LINSERT and LSET call it before they know whether anything goes in (a missing pivot,
        an index out of range), as Redis does; a second call changes nothing."""
        lp = self.lp
        if lp == 0:  # a small listpack: the bound first (module docstring)
            limit = LIMIT
            added = sum(map(len, items))
            count = self.size + len(items)
            bound = LISTPACK_EMPTY + len(self.data) + 2 * self.size + added
            if bound <= (limit.size if limit.size >= 0 else _SAFETY_LIMIT) and (
                    limit.count < 0 or count <= limit.count):
                return
            lp = self._measure()
            self.lp = -2 - lp if limit.exceeds(lp + added, count) else lp
        elif lp > 0 and LIMIT.exceeds(lp + sum(map(len, items)), self.size + len(items)):
            self.lp = -2 - lp

    def _grown(self, items: list[bytes]) -> None:
        """After ``items`` went in: count their bytes (a quicklist past ``track`` stops)."""
        lp = self.lp
        if lp == 0:
            if self.left is not None:  # the push took the long form: count from now on
                self.lp = self._measure()
        elif lp > 0:
            self.lp = lp + sum(map(entry_size, items))
        elif lp != -1:
            self.lp = -1 if self.size > LIMIT.track else lp - sum(map(entry_size, items))

    def _shrunk(self, removed: int) -> None:
        """After entries of ``removed`` bytes went (-1: count again): a quicklist within half
        the limit becomes a listpack (listTypeTryConversion, shrinking)."""
        lp = self.lp
        if lp >= 0:
            if lp:
                self.lp = 0 if self.left is None else (
                    lp - removed if removed >= 0 else self._measure())
            return
        limit = LIMIT
        size = self.size
        if lp == -1:
            if size > limit.track:
                return
            nbytes = self._measure()
        else:
            nbytes = -2 - lp - removed if removed >= 0 else self._measure()
        if limit.fits(nbytes, size, True):
            self.lp = 0 if self.left is None else nbytes
        else:
            self.lp = -2 - nbytes

    def _popped(self, element: bytes) -> None:
        """After one element was popped."""
        if self.lp == 0:
            return
        if self.lp == -1:
            if self.size <= LIMIT.track:
                self._shrunk(-1)
        else:
            self._shrunk(entry_size(element))

    def _replaced(self, old: bytes, new: bytes) -> None:
        """After LSET put ``new`` where ``old`` was (it tried the growth first)."""
        lp = self.lp
        if lp >= 0:
            if lp:
                self.lp = lp - entry_size(old) + entry_size(new)
            elif self.left is not None:  # a long element took the long form: count now
                self.lp = self._measure()
        elif lp == -1:
            if self.size <= LIMIT.track:
                self._shrunk(-1)
        else:
            nbytes = -2 - lp - entry_size(old) + entry_size(new)
            if LIMIT.fits(nbytes, self.size, True):
                self.lp = 0 if self.left is None else nbytes
            else:
                self.lp = -2 - nbytes

    # -- long lists: packing and unpacking the ends ----------------------------------------------

    def pack_right(self) -> None:
        """Pack the inner elements of the right end, leaving KEEP to CHUNK + KEEP - 1."""
        right = self.right
        nodes = self.data
        assert right is not None and isinstance(nodes, deque)
        stop = len(right) - KEEP
        start = 0
        while stop - start >= CHUNK:
            node = _chunk(right[start:start + CHUNK])
            nodes.append(node)
            start += node[0]
        del right[:start]

    def pack_left(self) -> None:
        """Pack the inner elements of the left end (the first entries of ``left``)."""
        left = self.left
        nodes = self.data
        assert left is not None and isinstance(nodes, deque)
        stop = len(left) - KEEP
        start = 0
        while stop - start >= CHUNK:
            piece = left[start:start + CHUNK]
            piece.reverse()  # in list order, the innermost last: a short chunk takes those
            node = _chunk(piece, from_end=True)
            nodes.appendleft(node)
            start += node[0]
        del left[:start]

    def _refill_right(self) -> list[bytes]:
        """The right end ran dry: unpack the last chunk into it, or without chunks move the
        inner half of the left end over (halves, so alternating ends stay O(1) amortized)."""
        nodes = self.data
        assert isinstance(nodes, deque) and self.left is not None
        if nodes:
            right = self.right = unpack_items(nodes.pop()[1])
        else:
            left = self.left
            half = (len(left) + 1) // 2
            right = self.right = left[half - 1::-1]
            del left[:half]
        return right

    def _refill_left(self) -> list[bytes]:
        """The left end ran dry: as :meth:`_refill_right`, mirrored."""
        nodes = self.data
        assert isinstance(nodes, deque) and self.right is not None
        if nodes:
            left = unpack_items(nodes.popleft()[1])
            left.reverse()
            self.left = left
        else:
            right = self.right
            half = (len(right) + 1) // 2
            left = self.left = right[half - 1::-1]
            del right[:half]
        return left

    # -- long lists: chunks by position ------------------------------------------------------------

    def _seek(self, index: int, total: int) -> tuple[int, int]:
        """(chunk position, offset) of element ``index`` of the chunks (``total`` elements in
        all), found from the nearer end."""
        nodes = self.data
        assert isinstance(nodes, deque)
        if index < total - index:
            for position, (count, _) in enumerate(nodes):
                if index < count:
                    return position, index
                index -= count
        else:
            back = total - 1 - index
            last = len(nodes) - 1
            for position, (count, _) in enumerate(reversed(nodes)):
                if back < count:
                    return last - position, count - 1 - back
                back -= count
        raise IndexError("list index out of range")

    def _chunk_range(self, start: int, stop: int, total: int) -> list[bytes]:
        """Elements ``start`` to ``stop - 1`` of the chunks, walked from the nearer end."""
        nodes = self.data
        assert isinstance(nodes, deque)
        wanted = stop - start
        if start <= total - stop:
            items: list[bytes] = []
            skip = start
            for count, chunk in nodes:
                if skip >= count:
                    skip -= count
                    continue
                part = _read(chunk)[skip:skip + wanted]
                items += part
                wanted -= len(part)
                if not wanted:
                    break
                skip = 0
            return items
        pieces: list[list[bytes]] = []
        skip = total - stop
        for count, chunk in reversed(nodes):
            if skip >= count:
                skip -= count
                continue
            end = count - skip
            begin = max(0, end - wanted)
            pieces.append(_read(chunk)[begin:end])
            wanted -= end - begin
            if not wanted:
                break
            skip = 0
        pieces.reverse()
        return [item for piece in pieces for item in piece]

    def _replace_chunk(self, position: int, items: list[bytes]) -> None:
        """Put ``items`` (not empty) where chunk ``position`` was: one chunk or several."""
        nodes = self.data
        assert isinstance(nodes, deque)
        replacement = _nodes_of(items)
        nodes[position] = replacement[0]
        for offset, node in enumerate(replacement[1:], 1):
            nodes.insert(position + offset, node)

    def _take_left(self, count: int, collect: bool) -> list[bytes]:
        """Remove ``count`` (fewer than all) elements from the head of a long list, returned
        in pop order when ``collect`` (whole chunks are dropped unread otherwise)."""
        taken: list[bytes] = []
        left, nodes, right = self.left, self.data, self.right
        assert left is not None and right is not None and isinstance(nodes, deque)
        here = min(count, len(left))
        if here:
            if collect:
                taken = left[len(left) - here:]
                taken.reverse()
            del left[len(left) - here:]
            count -= here
        while count and nodes:
            size, chunk = nodes.popleft()
            if size <= count:
                if collect:
                    taken += unpack_items(chunk)
                count -= size
                continue
            items = unpack_items(chunk)
            if collect:
                taken += items[:count]
            rest = items[count:]
            rest.reverse()
            self.left = rest
            count = 0
        if count:
            if collect:
                taken += right[:count]
            del right[:count]
        return taken

    def _take_right(self, count: int, collect: bool) -> list[bytes]:
        """:meth:`_take_left` at the tail (pop order: the last element first)."""
        taken: list[bytes] = []
        left, nodes, right = self.left, self.data, self.right
        assert left is not None and right is not None and isinstance(nodes, deque)
        here = min(count, len(right))
        if here:
            if collect:
                taken = right[len(right) - here:]
                taken.reverse()
            del right[len(right) - here:]
            count -= here
        while count and nodes:
            size, chunk = nodes.pop()
            items = unpack_items(chunk)
            if size <= count:
                if collect:
                    items.reverse()
                    taken += items
                count -= size
                continue
            if collect:
                part = items[size - count:]
                part.reverse()
                taken += part
            self.right = items[:size - count]
            count = 0
        if count:  # the left end's first entries are the last elements of the list
            if collect:
                taken += left[:count]
            del left[:count]
        return taken

    def _segments(self, backward: bool) -> Iterator[Segment]:
        """The list in scan order as (count, chunk, None) for a chunk (read it if needed) and
        (count, None, elements) for a loose end, its elements in scan order."""
        left, nodes, right = self.left, self.data, self.right
        if left is None or right is None:
            items = _decode_small(nodes)  # type: ignore[arg-type]
            yield len(items), None, items[::-1] if backward else items
            return
        assert isinstance(nodes, deque)
        if backward:
            yield len(right), None, right[::-1]
            for count, chunk in reversed(nodes):
                yield count, chunk, None
            yield len(left), None, left
        else:
            yield len(left), None, left[::-1]
            for count, chunk in nodes:
                yield count, chunk, None
            yield len(right), None, right

    # -- the deque surface ----------------------------------------------------------------------

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __iter__(self) -> Iterator[bytes]:
        for _, chunk, items in self._segments(False):
            yield from items if chunk is None else _read(chunk)  # type: ignore[misc]

    def __reversed__(self) -> Iterator[bytes]:
        for _, chunk, items in self._segments(True):
            yield from items if chunk is None else reversed(_read(chunk))  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"ListValue({self._elements()!r})"

    def extend(self, items: list[bytes]) -> int:
        """RPUSH: append ``items`` in order; returns the new length."""
        lp = self.lp
        if lp or len(items) != 1 or len(items[0]) > LIMIT.room:
            self.growing(items)
        right = self.right
        if right is None:
            size = self._push_small(items, False)
        else:
            right += items
            size = self.size + len(items)
            self.size = size
            if len(right) >= PACK_AT:
                self.pack_right()
        if self.lp or self.left is not None:  # (a small listpack that stayed so counts nothing)
            self._grown(items)
        return size

    def extendleft(self, items: list[bytes]) -> int:
        """LPUSH: prepend ``items`` one by one (so the last ends up first, as
        ``deque.extendleft`` does); returns the new length."""
        lp = self.lp
        if lp or len(items) != 1 or len(items[0]) > LIMIT.room:
            self.growing(items)
        left = self.left
        if left is None:
            size = self._push_small(items, True)
        else:
            left += items
            size = self.size + len(items)
            self.size = size
            if len(left) >= PACK_AT:
                self.pack_left()
        if self.lp or self.left is not None:
            self._grown(items)
        return size

    def _push_small(self, items: list[bytes], left: bool) -> int:
        """A push onto a small list: a new ``bytes``, or the long form when it outgrows
        SMALL_BYTES. Returns the new length."""
        data = self.data
        assert type(data) is bytes
        size = self.size + len(items)
        if len(items) == 1:
            element = items[0]
            length = len(element)
            if length < _LONG:
                mark = _MARKS[length]
                packed = b"".join((mark, element, mark, data) if left else
                                  (data, mark, element, mark))
                if len(packed) <= SMALL_BYTES:
                    self.data = packed
                    self.size = size
                    return size
        added = _encode_small(items[::-1] if left else items)
        if added is not None:
            packed = added + data if left else data + added
            if len(packed) <= SMALL_BYTES:
                self.data = packed
                self.size = size
                return size
        current = _decode_small(data)
        self._assign(items[::-1] + current if left else current + items)
        return size

    def append(self, element: bytes) -> int:
        return self.extend([element])

    def appendleft(self, element: bytes) -> int:
        return self.extendleft([element])

    def pop(self) -> bytes:
        """RPOP: remove and return the last element (IndexError when there is none)."""
        right = self.right
        if right:
            self.size -= 1
            element = right.pop()
        elif right is not None:
            return self._pop_refilled(False)
        else:
            data = self.data
            assert type(data) is bytes
            mark = data[-1]  # IndexError when empty
            self.size -= 1
            if mark < _LONG:
                self.data = data[:-2 - mark]
                element = data[-1 - mark:-1]
            else:
                length = data[-3] | data[-2] << 8
                self.data = data[:-6 - length]
                element = data[-3 - length:-3]
        lp = self.lp
        if lp and (lp != -1 or self.size <= LIMIT.track):  # (see the module docstring)
            self._popped(element)
        return element

    def popleft(self) -> bytes:
        """LPOP: remove and return the first element (IndexError when there is none)."""
        left = self.left
        if left:
            self.size -= 1
            element = left.pop()
        elif left is not None:
            return self._pop_refilled(True)
        else:
            data = self.data
            assert type(data) is bytes
            mark = data[0]
            self.size -= 1
            if mark < _LONG:
                self.data = data[mark + 2:]
                element = data[1:mark + 1]
            else:
                length = data[1] | data[2] << 8
                self.data = data[length + 6:]
                element = data[3:length + 3]
        lp = self.lp
        if lp and (lp != -1 or self.size <= LIMIT.track):
            self._popped(element)
        return element

    def _pop_refilled(self, left: bool) -> bytes:
        """A pop from a long list whose end ran dry: refill it first. This is also where a
        long list that became short takes the small form again (a list drained to nothing
        is deleted by its command anyway)."""
        if not self.size:
            raise IndexError("pop from an empty list")
        element = self._refill_left().pop() if left else self._refill_right().pop()
        self.size -= 1
        self._maybe_shrink()
        self._popped(element)
        return element

    def popmany(self, count: int, left: bool) -> list[bytes]:
        """Remove up to ``count`` elements from one end, returned in the order they were
        popped (LPOP/RPOP with a count, LMPOP, LMOVEM)."""
        size = self.size
        if count >= size:
            items = self._elements()
            if not left:
                items.reverse()
            self.clear()
            return items
        if self.left is None:
            items = self._elements()
            if left:
                taken = items[:count]
                rest = items[count:]
            else:
                taken = items[size - count:]
                taken.reverse()
                rest = items[:size - count]
            self._assign(rest)
        else:
            taken = self._take_left(count, True) if left else self._take_right(count, True)
            self.size = size - count
            self._maybe_shrink()
        lp = self.lp
        if lp > 0 or lp < -1:
            self._shrunk(sum(map(entry_size, taken)))
        elif lp == -1 and self.size <= LIMIT.track:
            self._shrunk(-1)
        return taken

    def clear(self) -> None:
        self.size = 0
        self.data = b""
        self.left = self.right = None
        self.lp = 0

    def copy(self) -> ListValue:
        """An independent copy (COPY): chunks are immutable, so only containers are copied."""
        twin = ListValue()
        twin.size = self.size
        twin.lp = self.lp
        data = self.data
        if type(data) is bytes:
            twin.data = data
        else:
            twin.data = deque(data)  # type: ignore[arg-type]
            twin.left = self.left[:]  # type: ignore[index]
            twin.right = self.right[:]  # type: ignore[index]
        return twin

    # -- by position ----------------------------------------------------------------------------

    def _index(self, index: int) -> int:
        """``index`` (negative from the end) as a position in range; IndexError otherwise."""
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError("list index out of range")
        return index

    def __getitem__(self, index: int) -> bytes:
        """LINDEX: O(1) near the ends, otherwise one chunk unpacked."""
        index = self._index(index)
        left, right = self.left, self.right
        if left is None or right is None:
            return _decode_small(self.data)[index]  # type: ignore[arg-type]
        if index < len(left):
            return left[-1 - index]
        back = self.size - 1 - index
        if back < len(right):
            return right[-1 - back]
        position, offset = self._seek(index - len(left), self.size - len(left) - len(right))
        return _read(self.data[position][1])[offset]  # type: ignore[index]

    def __setitem__(self, index: int, element: bytes) -> None:
        """LSET: O(1) at the ends, otherwise one chunk rewritten. As Redis, the growth test
        comes first (the new element's length added to the listpack's bytes), the test for a
        return to listpack after."""
        index = self._index(index)
        self.growing([element])
        self._replaced(self._put(index, element), element)

    def _put(self, index: int, element: bytes) -> bytes:
        """Replace element ``index`` (in range); returns the one it replaced."""
        left, right = self.left, self.right
        if left is None or right is None:
            items = _decode_small(self.data)  # type: ignore[arg-type]
            old = items[index]
            items[index] = element
            self._assign(items)
            return old
        if index < len(left):
            old = left[-1 - index]
            left[-1 - index] = element
            return old
        back = self.size - 1 - index
        if back < len(right):
            old = right[-1 - back]
            right[-1 - back] = element
            return old
        position, offset = self._seek(index - len(left), self.size - len(left) - len(right))
        items = unpack_items(self.data[position][1])  # type: ignore[index]
        old = items[offset]
        items[offset] = element
        self._replace_chunk(position, items)
        return old

    def insert(self, index: int, element: bytes) -> None:
        """Put ``element`` at position ``index`` (0 to ``len``, LINSERT's pivot or after)."""
        size = self.size
        if not 0 <= index <= size:
            raise IndexError("list index out of range")
        self.growing([element])
        self._insert(index, element)
        self._grown([element])

    def _insert(self, index: int, element: bytes) -> None:
        size = self.size
        left, right = self.left, self.right
        if left is None or right is None:
            items = _decode_small(self.data)  # type: ignore[arg-type]
            items.insert(index, element)
            self._assign(items)
            return
        self.size = size + 1
        if index <= len(left):
            left.insert(len(left) - index, element)
            if len(left) >= PACK_AT:
                self.pack_left()
        elif index >= size - len(right):
            right.insert(index - (size - len(right)), element)
            if len(right) >= PACK_AT:
                self.pack_right()
        else:
            position, offset = self._seek(index - len(left), size - len(left) - len(right))
            items = unpack_items(self.data[position][1])  # type: ignore[index]
            items.insert(offset, element)
            self._replace_chunk(position, items)

    def range(self, start: int, stop: int) -> list[bytes]:
        """LRANGE: elements ``start`` to ``stop - 1`` (``0 <= start < stop <= len``)."""
        left, right = self.left, self.right
        if left is None or right is None:
            return _decode_small(self.data)[start:stop]  # type: ignore[arg-type]
        edge = len(left)
        if start < edge:  # left is reversed: one backward slice, to its start at the most
            last = edge - 1 - min(stop, edge)
            items = left[edge - 1 - start:last if last >= 0 else None:-1]
        else:
            items = []
        tail = self.size - len(right)  # position of right[0]
        if stop > edge and start < tail:
            items += self._chunk_range(max(start, edge) - edge, min(stop, tail) - edge,
                                       tail - edge)
        if stop > tail:
            items += right[max(start, tail) - tail:stop - tail]
        return items

    def trim(self, start: int, stop: int) -> int:
        """LTRIM: keep elements ``start`` to ``stop - 1`` (empty when ``start >= stop``);
        returns how many went. Chunks removed whole are not unpacked."""
        size = self.size
        stop = min(stop, size)
        if start >= stop:
            self.clear()
            return size
        removed = start + size - stop
        if not removed:
            return 0
        if self.left is None:
            self._assign(self._elements()[start:stop])
        else:
            if start:
                self._take_left(start, False)
            if size - stop:
                self._take_right(size - stop, False)
            self.size = stop - start
            self._maybe_shrink()
        self._shrunk(-1)
        return removed

    # -- by value -------------------------------------------------------------------------------

    def count(self, element: bytes) -> int:
        return sum(
            (items if chunk is None else _read(chunk)).count(element)  # type: ignore[union-attr,misc]
            for _, chunk, items in self._segments(False)
            if chunk is None or element in chunk)

    def positions(self, element: bytes, backward: bool = False,
                  maxlen: int = 0) -> Iterator[int]:
        """Indexes of ``element`` in scan order (from the tail when ``backward``), looking at
        no more than ``maxlen`` elements (0: all). LPOS and LINSERT's pivot. A chunk whose
        bytes do not contain the element is skipped unread."""
        size = self.size
        limit = size if maxlen == 0 else min(maxlen, size)
        seen = 0
        for count, chunk, items in self._segments(backward):
            if seen >= limit:
                return
            if chunk is not None:
                if element not in chunk:
                    seen += count
                    continue
                items = _read(chunk)[::-1] if backward else _read(chunk)
            usable = min(count, limit - seen)
            found = 0
            while True:
                try:
                    found = items.index(element, found, usable)  # type: ignore[union-attr]
                except ValueError:
                    break
                yield size - 1 - (seen + found) if backward else seen + found
                found += 1
            seen += count

    def index(self, element: bytes) -> int:
        """The first position of ``element``; ValueError when it is absent."""
        for position in self.positions(element):
            return position
        raise ValueError(f"{element!r} is not in list")

    def remove_matches(self, element: bytes, limit: int) -> int:
        """LREM: remove ``limit`` matches from the head (> 0), from the tail (< 0) or all (0);
        returns how many went. Chunks without the element's bytes are not unpacked, and the
        scan stops once ``limit`` matches went."""
        backward = limit < 0
        budget = abs(limit) or self.size
        if self.left is None or self.right is None:
            kept, removed = _without(self._elements(), element, budget, backward)
            if removed:
                self._assign(kept)
                self._shrunk(removed * entry_size(element))
            return removed
        left, right = self.left[::-1], self.right  # both in order
        if backward:
            right, removed = _without(right, element, budget, True)
        else:
            left, removed = _without(left, element, budget, False)
        nodes = self.data
        assert isinstance(nodes, deque)
        if removed < budget:
            before = removed
            rebuilt: deque[Node] = deque()
            add, add_all = ((rebuilt.appendleft, rebuilt.extendleft) if backward
                            else (rebuilt.append, rebuilt.extend))
            scan = reversed(nodes) if backward else iter(nodes)
            for node in scan:
                chunk = node[1]
                if element in chunk:
                    kept, gone = _without(unpack_items(chunk), element, budget - removed, backward)
                    if gone:
                        removed += gone
                        replacement = _nodes_of(kept)
                        add_all(reversed(replacement) if backward else replacement)
                        if removed == budget:
                            add_all(scan)  # the rest unchanged
                            break
                        continue
                add(node)
            if removed > before:
                nodes = rebuilt
        if removed < budget:
            if backward:
                left, gone = _without(left, element, budget - removed, True)
            else:
                right, gone = _without(right, element, budget - removed, False)
            removed += gone
        if removed:
            left.reverse()
            self.left, self.data, self.right = left, nodes, right
            self.size -= removed
            self._maybe_shrink()
            self._shrunk(removed * entry_size(element))
        return removed


def list_encoding(value: object) -> str:
    """What OBJECT ENCODING and DEBUG OBJECT report for a list (Redis 7.2+; 7.0 said quicklist
    for every list)."""
    assert isinstance(value, ListValue)
    return "listpack" if value.lp >= 0 else "quicklist"
