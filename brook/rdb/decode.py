"""RDB object -> Brook value (Redis's rdbLoadObject), for RESTORE and, later, RDB files.

Every object type and encoding Redis has written since RDB 9 is read: strings; lists as a
linked list, a ziplist, quicklists of ziplists or of listpacks (with plain nodes); sets as a
table, an intset or a listpack; sorted sets as a table (string or binary scores), a ziplist or a
listpack; hashes as a table, a zipmap, a ziplist or a listpack; streams in the three listpack
formats with their consumer groups. The value takes the encoding Redis gives the same payload
under the same limits (OBJECT ENCODING matches).

Hashes with field expiry (Redis 7.4+): Brook has no per-field TTL. Such a payload loads when
no live field carries a TTL (fields already expired are dropped, as Redis drops them); one
with a TTL still to come is refused as "Bad data format" rather than loaded with fields that
would never expire -- quietly making volatile data permanent is the worse surprise. Module
values (types 6, 7) are refused, as Redis refuses them without the module.

Validation is always deep (Redis's ``sanitize-dump-payload yes``): Brook rebuilds each value
from its elements, so it checks as it reads -- bounds, counts, duplicates, order, the stream's
PEL ownership -- and raises :class:`RdbError` before anything is stored.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, Protocol, cast

from brook.protocol.requests import parse_strict_int
from brook.rdb import constants as c
from brook.rdb.containers import (
    intset_items,
    listpack_items,
    listpack_strings,
    ziplist_items,
    zipmap_items,
)
from brook.rdb.strings import RdbError, Reader
from brook.types.groups import LLONG_MAX, Group, estimate_entries_read
from brook.types.hash import Hash
from brook.types.lists import ListValue
from brook.types.set import SetValue
from brook.types.stream import Stream
from brook.types.zset import SortedSet

__all__ = ["Limits", "RdbError", "load_object", "load_type"]

_STREAM_SAMEFIELDS: Final = 2
_STREAM_DELETED: Final = 1
_U64: Final = 1 << 64

_native_stream_rows: Callable[[bytes, int, int], tuple[list[int], list[list[bytes]], int]] | None
try:
    from brook.rdb import _stream_rows
    _native_stream_rows = _stream_rows.stream_rows
except ImportError:  # the pure build
    _native_stream_rows = None
_LISTPACK_SAFE: Final = 1 << 30  # Redis's lpSafeToAdd: a listpack stays below 1 GB


class Limits(Protocol):
    """The configuration that decides encodings and stream node sizes (the server's config)."""

    hash_max_listpack_entries: int
    hash_max_listpack_value: int
    set_max_intset_entries: int
    set_max_listpack_entries: int
    set_max_listpack_value: int
    zset_max_listpack_entries: int
    zset_max_listpack_value: int
    stream_node_max_entries: int
    stream_node_max_bytes: int


def load_type(r: Reader) -> int:
    """The object type byte; an unknown one is an error."""
    kind = r.byte()
    if not (0 <= kind <= 7 or 9 <= kind <= 25):
        raise RdbError("unknown object type")
    return kind


def load_object(kind: int, r: Reader, limits: Limits, now_ms: int) -> object | None:
    """The value of type ``kind`` at ``r``'s position (:class:`RdbError` if malformed), or
    None for a hash whose fields had all expired (Redis would store it and drop it at once:
    the caller treats it as a key that expired)."""
    try:
        return _LOADERS[kind](kind, r, limits, now_ms)
    except KeyError:
        raise RdbError("unknown object type") from None
    except (IndexError, OverflowError, ValueError) as error:
        if isinstance(error, RdbError):
            raise
        raise RdbError(str(error)) from None


# -- strings and lists -----------------------------------------------------------------------


def _string(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    return r.string()


def _list_value(items: list[bytes]) -> ListValue:
    if not items:
        raise RdbError("empty list")
    return ListValue(items)


def _linked_list(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    count = r.length()
    return _list_value([r.string() for _ in range(count)])


def _quicklist(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    nodes = r.length()
    items: list[bytes] = []
    for _ in range(nodes):
        container = c.CONTAINER_PACKED
        if kind == c.TYPE_LIST_QUICKLIST_2:
            container = r.length()
            if container not in (c.CONTAINER_PACKED, c.CONTAINER_PLAIN):
                raise RdbError("bad quicklist container")
        blob = r.string()
        if not blob:
            raise RdbError("empty quicklist node")
        if container == c.CONTAINER_PLAIN:
            items.append(blob)
        elif kind == c.TYPE_LIST_QUICKLIST_2:
            items += listpack_strings(blob)
        else:
            items += ziplist_items(blob)
    return _list_value(items)


def _list_ziplist(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    """Redis 7.2+ keeps this one a quicklist, whatever its size (it converts the others)."""
    value = _list_value(ziplist_items(r.string()))
    value.encode_quicklist()
    return value


# -- sets ------------------------------------------------------------------------------------


def _intset_limit(limits: Limits) -> int:
    return min(limits.set_max_intset_entries, 1 << 30)


def _set_table(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    """Redis's rdbLoad of a set: an intset while the members are integers (and their number
    fits), then a listpack while it fits, a table otherwise, decided member by member."""
    count = r.length()
    if not count:
        raise RdbError("empty set")
    members = [r.string() for _ in range(count)]
    if len(set(members)) != count:
        raise RdbError("duplicate set members")
    if count > _intset_limit(limits):
        return SetValue.restore(members, "hashtable")
    longest = total = 0
    encoding = "intset"
    converted_at = -1
    for index, member in enumerate(members):
        size = len(member)
        total += size
        longest = max(longest, size)
        if encoding == "intset":
            if parse_strict_int(member) is not None:
                continue
            if (index < limits.set_max_listpack_entries
                    and longest <= limits.set_max_listpack_value and total < _LISTPACK_SAFE):
                encoding, converted_at = "listpack", index
            else:
                encoding = "hashtable"
                break
        if encoding == "listpack" and not (
                index < limits.set_max_listpack_entries
                and size <= limits.set_max_listpack_value and total < _LISTPACK_SAFE):
            encoding = "hashtable"
            break
    if encoding == "intset":
        return SetValue.restore(members, "intset")
    if encoding == "listpack":  # the intset's members come first, in its sorted order
        head = sorted(members[:converted_at], key=int)
        return SetValue.restore(head + members[converted_at:], "listpack")
    return SetValue.restore(members, "hashtable")


def _set_intset(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    values = intset_items(r.string())
    members = [b"%d" % value for value in values]
    if len(members) > limits.set_max_intset_entries:
        return SetValue.restore(members, "hashtable")
    return SetValue.restore(members, "intset")


def _set_listpack(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    members = listpack_strings(r.string())
    if not members:
        raise RdbError("empty set")
    if len(set(members)) != len(members):
        raise RdbError("duplicate set members")
    if len(members) > limits.set_max_listpack_entries:
        return SetValue.restore(members, "hashtable")
    return SetValue.restore(members, "listpack")


# -- sorted sets -----------------------------------------------------------------------------


def _zset_value(pairs: list[tuple[bytes, float]], listpack: bool) -> SortedSet:
    if not pairs:
        raise RdbError("empty sorted set")
    if len({member for member, _ in pairs}) != len(pairs):
        raise RdbError("duplicate sorted set members")
    for _, score in pairs:
        if math.isnan(score):
            raise RdbError("sorted set score is NaN")
    return SortedSet.restore(pairs, "listpack" if listpack else "skiplist")


def _zset_table(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    count = r.length()
    score = r.binary_double if kind == c.TYPE_ZSET_2 else r.string_double
    pairs = []
    for _ in range(count):
        member = r.string()
        pairs.append((member, score()))
    sizes = [len(member) for member, _ in pairs]
    listpack = (count <= limits.zset_max_listpack_entries
                and max(sizes, default=0) <= limits.zset_max_listpack_value
                and sum(sizes) < _LISTPACK_SAFE)
    return _zset_value(pairs, listpack)


def _score(text: bytes) -> float:
    try:
        return float(text)
    except ValueError:
        raise RdbError("bad sorted set score") from None


def _zset_packed(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    blob = r.string()
    items = ziplist_items(blob) if kind == c.TYPE_ZSET_ZIPLIST else listpack_strings(blob)
    if len(items) & 1:
        raise RdbError("sorted set pairs are odd")
    pairs = [(member, _score(score)) for member, score in zip(items[0::2], items[1::2],
                                                                strict=True)]
    return _zset_value(pairs, len(pairs) <= limits.zset_max_listpack_entries)


# -- hashes ----------------------------------------------------------------------------------


def _hash_value(flat: list[bytes], hashtable: bool) -> Hash:
    if not flat:
        raise RdbError("empty hash")
    if len(flat) & 1:
        raise RdbError("hash pairs are odd")
    value = Hash(zip(flat[0::2], flat[1::2], strict=True))
    if len(value) * 2 != len(flat):
        raise RdbError("duplicate hash fields")
    value.is_hashtable = hashtable
    return value


def _too_long(flat: list[bytes], limits: Limits) -> bool:
    return len(flat) > 2 * limits.hash_max_listpack_entries or max(
        map(len, flat), default=0) > limits.hash_max_listpack_value


def _hash_table(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    count = r.length()
    flat = [r.string() for _ in range(2 * count)]
    return _hash_value(flat, _too_long(flat, limits))


def _hash_zipmap(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    flat = zipmap_items(r.string())
    return _hash_value(flat, _too_long(flat, limits))


def _hash_packed(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    blob = r.string()
    flat = ziplist_items(blob) if kind == c.TYPE_HASH_ZIPLIST else listpack_strings(blob)
    return _hash_value(flat, len(flat) > 2 * limits.hash_max_listpack_entries)


def _field_ttl(expire_at: int, now_ms: int) -> bool:
    """True when a field with this expiry time (0: none) is still there; a field whose time
    is still to come cannot be held (module docstring)."""
    if expire_at == 0:
        return True
    if expire_at <= now_ms:
        return False
    raise RdbError("hash field with a time to live")


def _hash_metadata(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    minimum = r.millisecond_time() if kind == c.TYPE_HASH_METADATA else 0
    count = r.length()
    flat: list[bytes] = []
    seen = 0
    for _ in range(count):
        ttl = r.length()
        if kind == c.TYPE_HASH_METADATA and ttl:
            ttl += minimum - 1
        field = r.string()
        value = r.string()
        seen += 1
        if _field_ttl(ttl, now_ms):
            flat += (field, value)
    if not flat:
        if seen:
            return None  # every field expired: nothing to store (load_object)
        raise RdbError("empty hash")
    return _hash_value(flat, seen > limits.hash_max_listpack_entries or _too_long(flat, limits))


def _hash_listpack_ex(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    if kind == c.TYPE_HASH_LISTPACK_EX:
        r.millisecond_time()
    items = listpack_items(r.string())
    if not items or len(items) % 3:
        raise RdbError("hash triples are not whole")
    flat: list[bytes] = []
    for i in range(0, len(items), 3):
        field, value, ttl = items[i:i + 3]
        if type(ttl) is not int:
            raise RdbError("hash field time is not an integer")
        if _field_ttl(ttl, now_ms):  # type: ignore[arg-type]
            flat += (_text(field), _text(value))
    if not flat:
        return None  # every field expired: nothing to store (load_object)
    return _hash_value(flat, len(items) // 3 > limits.hash_max_listpack_entries)


def _text(item: bytes | int) -> bytes:
    return item if isinstance(item, bytes) else b"%d" % item


# -- streams ---------------------------------------------------------------------------------


def _raw_id(raw: bytes) -> int:
    if len(raw) != 16:
        raise RdbError("stream ID is not 16 bytes")
    return int.from_bytes(raw[:8], "big") << 64 | int.from_bytes(raw[8:], "big")


def _node_rows(master: int, blob: bytes, previous: int
               ) -> tuple[list[int], list[list[bytes]], int]:
    """The live entries of one node (IDs, rows) and the last ID it holds, deleted or not:
    in C (brook/rdb/_stream_rows.c) where the compiled core was built, else
    :func:`_stream_node`, its twin."""
    if _native_stream_rows is None:
        return _stream_node(master, blob, previous)
    try:
        return _native_stream_rows(blob, master, previous)
    except ValueError as err:
        raise RdbError(str(err)) from None


def _stream_node(master: int, blob: bytes, previous: int
                 ) -> tuple[list[int], list[list[bytes]], int]:
    """The live entries of one node (IDs, rows) and the last ID it holds, deleted or not."""
    items = listpack_items(blob)
    if not items:
        raise RdbError("empty listpack inside stream")
    end = len(items)
    live, deleted, nnames = items[0], items[1], items[2]
    if type(live) is not int or type(deleted) is not int or type(nnames) is not int \
            or nnames < 0 or 3 + nnames >= end:
        raise RdbError("bad stream master entry")
    names = [_text(name) for name in items[3:3 + nnames]]
    if items[3 + nnames] != 0:
        raise RdbError("bad stream master entry")
    master_ms, master_seq = master >> 64, master & (_U64 - 1)
    pos = 4 + nnames
    seen_deleted = 0
    ids: list[int] = []
    rows: list[list[bytes]] = []
    same_count = nnames + 3
    while pos < end:
        if pos + 3 > end:
            raise RdbError("stream entry past the end")
        flags, ms_delta, seq_delta = items[pos], items[pos + 1], items[pos + 2]
        if type(flags) is not int or type(ms_delta) is not int or type(seq_delta) is not int:
            raise RdbError("bad stream entry header")
        pos += 3
        if flags & _STREAM_SAMEFIELDS:
            stop = pos + nnames
            if stop >= end:
                raise RdbError("bad stream entry length")
            row: list[bytes] = [b""] * (2 * nnames)
            row[0::2] = names
            values = items[pos:stop]
            row[1::2] = cast(list[bytes], values) if all(
                type(v) is bytes for v in values) else [_text(value) for value in values]
            counted = same_count
        else:
            npairs = items[pos] if pos < end else None
            if type(npairs) is not int or npairs <= 0:
                raise RdbError("bad stream entry field count")
            pos += 1
            stop = pos + 2 * npairs
            row = [_text(item) for item in items[pos:stop]]
            counted = 2 * npairs + 4
        if stop >= end or items[stop] != counted or not row:
            raise RdbError("bad stream entry length")
        pos = stop + 1
        ms = master_ms + ms_delta
        seq = master_seq + seq_delta
        entry_id = ms << 64 | seq
        if not (0 <= ms < _U64 and 0 <= seq < _U64) or entry_id <= previous:
            raise RdbError("stream entry IDs out of order")
        previous = entry_id
        if flags & _STREAM_DELETED:
            seen_deleted += 1
        else:
            ids.append(entry_id)
            rows.append(row)
    if len(ids) != live or seen_deleted != deleted:
        raise RdbError("stream node counts disagree")
    return ids, rows, previous


def _stream(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    stream = Stream(limits.stream_node_max_entries, limits.stream_node_max_bytes)
    previous = -1
    live = 0
    keys: set[int] = set()
    for _ in range(r.length()):
        master = _raw_id(r.string())
        if master in keys or master <= previous:
            raise RdbError("stream node keys out of order")
        keys.add(master)
        ids, rows, previous = _node_rows(master, r.string(), max(previous, master - 1))
        stream.append_node(ids, rows)
        live += len(ids)
    length = r.length()
    last_id = r.length() << 64 | r.length()
    if length != live or stream.length != live:
        raise RdbError("stream length disagrees with its entries")
    if last_id < previous or last_id >= 1 << 128:
        raise RdbError("stream last ID below its entries")
    stream.last_id = last_id
    if kind >= c.TYPE_STREAM_LISTPACKS_2:
        r.length()  # the first ID: Brook derives it from the entries
        r.length()
        max_deleted = r.length() << 64 | r.length()
        stream.max_deleted_id = max_deleted
        stream.entries_added = r.length()
    else:
        stream.max_deleted_id = 0
        stream.entries_added = length
    ngroups = r.length()
    if ngroups:
        stream.groups = {}
        for _ in range(ngroups):
            group = _group(kind, r, stream, now_ms)
            if group.name in stream.groups:
                raise RdbError("duplicate consumer group")
            stream.groups[group.name] = group
    return stream


def _group(kind: int, r: Reader, stream: Stream, now_ms: int) -> Group:
    name = r.string()
    last_id = r.length() << 64 | r.length()
    if kind >= c.TYPE_STREAM_LISTPACKS_2:
        entries_read = r.length()
        if entries_read >= 1 << 63:
            entries_read -= _U64  # Redis writes "unknown" (-1) as an unsigned length
    else:
        entries_read = estimate_entries_read(stream, last_id)
    group = Group(name, last_id, entries_read)
    pending: dict[int, tuple[int, int]] = {}
    for _ in range(r.length()):
        entry_id = _raw_id(r.take(16))
        delivery_time = r.millisecond_time()
        delivery_count = r.length()
        if entry_id in pending or delivery_count > LLONG_MAX or delivery_time < 0:
            raise RdbError("bad group PEL entry")
        pending[entry_id] = (delivery_time, delivery_count)
    owned: set[int] = set()
    for _ in range(r.length()):
        consumer_name = r.string()
        if consumer_name in group.consumers:
            raise RdbError("duplicate consumer")
        seen_time = r.millisecond_time()
        active_time = r.millisecond_time() if kind >= c.TYPE_STREAM_LISTPACKS_3 else seen_time
        if seen_time < 0 or active_time < -1:  # idle times would leave 64 bits
            raise RdbError("bad consumer time")
        consumer = group.consumer(consumer_name, seen_time)
        assert consumer is not None
        consumer.seen_time = seen_time
        consumer.active_time = active_time
        ids = [_raw_id(r.take(16)) for _ in range(r.length())]
        for entry_id in sorted(ids):
            record = pending.get(entry_id)
            if record is None or entry_id in owned:
                raise RdbError("consumer PEL entry not in the group's PEL")
            owned.add(entry_id)
            group.deliver(entry_id, consumer, record[0], record[1])
    if len(owned) != len(pending):
        raise RdbError("group PEL entry without a consumer")
    return group


def _module(kind: int, r: Reader, limits: Limits, now_ms: int) -> object:
    raise RdbError("module values need their module")


_LOADERS: Final = {
    c.TYPE_STRING: _string,
    c.TYPE_LIST: _linked_list,
    c.TYPE_SET: _set_table,
    c.TYPE_ZSET: _zset_table,
    c.TYPE_HASH: _hash_table,
    c.TYPE_ZSET_2: _zset_table,
    c.TYPE_MODULE_PRE_GA: _module,
    c.TYPE_MODULE_2: _module,
    c.TYPE_HASH_ZIPMAP: _hash_zipmap,
    c.TYPE_LIST_ZIPLIST: _list_ziplist,
    c.TYPE_SET_INTSET: _set_intset,
    c.TYPE_ZSET_ZIPLIST: _zset_packed,
    c.TYPE_HASH_ZIPLIST: _hash_packed,
    c.TYPE_LIST_QUICKLIST: _quicklist,
    c.TYPE_STREAM_LISTPACKS: _stream,
    c.TYPE_HASH_LISTPACK: _hash_packed,
    c.TYPE_ZSET_LISTPACK: _zset_packed,
    c.TYPE_LIST_QUICKLIST_2: _quicklist,
    c.TYPE_STREAM_LISTPACKS_2: _stream,
    c.TYPE_SET_LISTPACK: _set_listpack,
    c.TYPE_STREAM_LISTPACKS_3: _stream,
    c.TYPE_HASH_METADATA_PRE_GA: _hash_metadata,
    c.TYPE_HASH_LISTPACK_EX_PRE_GA: _hash_listpack_ex,
    c.TYPE_HASH_METADATA: _hash_metadata,
    c.TYPE_HASH_LISTPACK_EX: _hash_listpack_ex,
}
