"""SCAN, HSCAN, SSCAN and ZSCAN: cursor-based iteration with Redis's guarantees.

The cursor scheme
-----------------
A Python dict cannot resume an iteration: it has no stable positions and iterators die when it
changes size. So every scanned collection is walked as a hash table in which a key lives in
bucket ``hash(key) & mask`` of a power-of-two table, and the cursor is Redis's: the next bucket
to visit, counted in *reverse binary* (the high bit of the bucket number is incremented first,
see ``scanindex.next_cursor``). A hash or sorted set gets a
:class:`~brook.types.scanindex.ScanIndex` beside it; the keyspace's table is one itself, and so
is a set's hash table (the C tables' bucket is a home slot: linear probing without tombstones
keeps every entry in the run of slots that starts at its home, brook/types/_keytable.c and
_member_set.c).

Why that gives Redis's guarantees:

* A key present for the whole iteration is returned at least once. Its bucket number never
  changes while the table size is fixed. When the table doubles, bucket ``b`` splits into ``b``
  and ``b + size``, which in reverse-binary order are visited right after each other, so the
  buckets already visited map exactly to buckets already visited in the larger table; when it
  halves, buckets merge and the merged bucket is at worst visited again (duplicates, never
  misses). While an incremental resize is in progress both tables are visited as Redis's
  ``dictScan`` does: the smaller table's bucket, then every bucket of the larger table that
  expands it.
* A full iteration ends with cursor 0: reverse-binary increment of a ``k``-bit counter wraps to
  0 after visiting all ``2**k`` buckets.
* Keys added or deleted during an iteration are simply returned or not; nothing else moves.
* Each call costs O(COUNT): it visits buckets until COUNT elements were seen (at most
  10 * COUNT buckets, empty ones included, as Redis bounds it), touching nothing else.

Keeping an index current costs the hot paths nothing. The keyspace's table and a set's C table
need none (their pure twins build one on the first walk: the keyspace's catches up with
insertions from the dict's newest entries, brook/types/keytable.py; a set's is dropped by any
change, brook/types/member_set.py). For HSCAN, SSCAN and ZSCAN, a value small enough to be a
listpack (or an intset) in Redis is returned whole with cursor 0, exactly as Redis does; a
larger hash or sorted set gets a member index that is kept between calls until the value is
written (``db.modified`` drops it), so iterating a value that is being modified rebuilds the
index (O(members)) on the next call, still returning every member present throughout.

``COUNT`` counts elements looked at, before MATCH/TYPE filtering, so a call may return fewer (or
no) elements with a non-zero cursor, as in Redis. Expired keys are filtered out (and deleted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook import keyspace
from brook.commands.registry import WRONGTYPE, CommandError, command
from brook.commands.scan_args import (
    EMPTY_SCAN,
    ScanOptions,
    parse_cursor,
    scan_reply,
    scan_target,
)

if TYPE_CHECKING:
    from brook.session import Session


@command("scan", arity=-2, flags="readonly", acl="@keyspace @read @slow", since="2.8.0",
         summary="Iterates over the key names in the database.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
         "command calls for the cursor to return back to 0. N is the number of elements inside "
         "the collection.",
         syntax="cursor [MATCH pattern] [COUNT count] [TYPE type]")
def scan(client: Session, args: list[bytes]) -> bytes:
    cursor = parse_cursor(args[1])
    options = ScanOptions(args, 2, "keys")
    data = client.db.data
    found: list[bytes] = []
    cursor = data.walk(cursor, options.count, found)
    type_names = keyspace.TYPE_NAMES
    type_name = options.type_name
    matches = options.matches
    candidates: list[bytes] = []
    for key in found:
        if type_name is not None and type_names.get(type(data.get(key)), "").encode() != type_name:
            continue
        if matches is not None and not matches(key):
            continue
        candidates.append(key)
    return scan_reply(cursor, _live_keys(client, candidates, type_name))


def _live_keys(client: Session, candidates: list[bytes], type_name: bytes | None) -> list[bytes]:
    """Drop (and delete) expired keys. With TYPE, Redis re-reads each key as a read command
    would, which also counts keyspace hits; without it, only the expiry is checked."""
    db = client.db
    if type_name is not None:
        return [key for key in candidates if db.lookup_read(key) is not None]
    if not db.expires:
        return candidates
    live = []
    for key in candidates:
        if db.is_expired(key):
            db.expire_key(key)
        else:
            live.append(key)
    return live


@command("hscan", arity=-3, flags="readonly", keys=(1, 1, 1), acl="@read @hash @slow",
         group="hash", since="2.8.0", summary="Iterates over fields and values of a hash.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
         "command calls for the cursor to return back to 0. N is the number of elements inside "
         "the collection..",  # sic: Redis's text
         syntax="key cursor [MATCH pattern] [COUNT count] [NOVALUES]")
def hscan(client: Session, args: list[bytes]) -> bytes:
    cursor = parse_cursor(args[2])
    db = client.db
    key = args[1]
    fields = db.lookup_read(key)
    if fields is None:
        return EMPTY_SCAN
    if keyspace.TYPE_NAMES.get(type(fields)) != "hash":
        raise CommandError(WRONGTYPE)
    assert isinstance(fields, dict)
    options = ScanOptions(args, 3, "hash")
    describe = keyspace.ENCODINGS.get(type(fields))
    if describe is not None and describe(fields).startswith("listpack"):
        # Small hashes come back whole, in order, with cursor 0 (as a listpack does in Redis).
        cursor, found = 0, list(fields)
    else:
        found = []
        cursor = db.field_index(key, fields).walk(cursor, options.count, found)
    matches = options.matches
    items: list[bytes] = []
    for field in found:
        value = fields.get(field)
        if value is None or (matches is not None and not matches(field)):
            continue
        items.append(field)
        if not options.no_values:
            items.append(value)
    return scan_reply(cursor, items)


@command("sscan", arity=-3, flags="readonly", keys=(1, 1, 1), acl="@read @set @slow",
         group="set", since="2.8.0", summary="Iterates over members of a set.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
         "command calls for the cursor to return back to 0. N is the number of elements inside "
         "the collection.",
         syntax="key cursor [MATCH pattern] [COUNT count]")
def sscan(client: Session, args: list[bytes]) -> bytes:
    cursor = parse_cursor(args[2])
    members = scan_target(client, args, "set")
    if members is None:
        return EMPTY_SCAN
    options = ScanOptions(args, 3, "members")
    # intset and listpack sets come back whole, in their order, with cursor 0.
    found: list[bytes] = []
    cursor = members.walk(cursor, options.count, found)  # type: ignore[attr-defined]
    matches = options.matches
    return scan_reply(cursor, [member for member in found if member in members  # type: ignore[operator]
                           and (matches is None or matches(member))])
