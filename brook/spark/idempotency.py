"""The exactly-once sink's idempotent IDs: the same for a row however Spark orders the rows.

Spark replays a failed micro-batch with the same batch ID and, for a deterministic query, the
same rows in each partition, but not in the same order: a shuffle's reduce side receives its
blocks in whatever order they arrive. So nothing about a row's position may enter its ID.

- The **idempotent ID** (iid) of a row is a digest of its encoded fields (name and value of
  each, in column order), in hex, and for the k-th copy of an identical row in the same
  partition and target stream (k > 0) that digest followed by ``#k``. (Hex rather than raw
  bytes: an argument that may hold a line starting like a RESP frame costs the server a
  framing check per request.) A partition's multiset of rows therefore
  maps to one set of iids, whatever the order: the copies of a row are told apart by count,
  and which copy gets which k does not matter, as they are equal.
- The **producer ID** names the task's piece of work (query, batch, partition) and a block. A
  stream keeps at most IDMP-MAXSIZE iids per producer and evicts the oldest, so a partition
  that sends a stream more rows than that splits them into blocks of at most that many: rows
  ranked by iid, block = rank // size. The ranking depends only on the set of iids.

Hence every attempt of a partition sends each row with the same (producer, iid) pair, and the
stream answers a repeated pair with the entry the first attempt added.
"""

from __future__ import annotations

from collections.abc import Mapping
from hashlib import blake2b

DIGEST_SIZE = 16  # bytes: a collision among a partition's rows is out of reach (2**-64 at 2**32)


def row_ids(keys: list[bytes], bodies: list[bytes]) -> list[bytes]:
    """Each row's iid: the digest of its encoded fields, plus the copy number for repeats of
    an identical row to the same stream (``keys``: each row's target stream)."""
    digests = [blake2b(body, digest_size=DIGEST_SIZE).hexdigest().encode() for body in bodies]
    one_stream = not keys or keys.count(keys[0]) == len(keys)
    tagged: list = digests if one_stream else list(zip(keys, digests, strict=True))
    if len(set(tagged)) == len(tagged):
        return digests  # no row repeats (the usual case): the digests are the IDs
    copies: dict[object, int] = {}
    out = []
    for tag, digest in zip(tagged, digests, strict=True):
        seen = copies.get(tag, 0)
        copies[tag] = seen + 1
        out.append(b"%b#%d" % (digest, seen) if seen else digest)
    return out


def blocks(keys: list[bytes], iids: list[bytes], block_size: Mapping[bytes, int]) -> list[int]:
    """Each row's block: 0 while a stream gets no more rows than its block size, else the
    row's rank among that stream's iids divided by the size."""
    out = [0] * len(keys)
    if len(keys) <= min(block_size.values(), default=0):
        return out  # no stream can have more rows than its block size
    rows_of: dict[bytes, list[int]] = {}
    for row, key in enumerate(keys):
        rows_of.setdefault(key, []).append(row)
    for key, rows in rows_of.items():
        size = block_size[key]
        if len(rows) <= size:
            continue
        for rank, row in enumerate(sorted(rows, key=iids.__getitem__)):
            out[row] = rank // size
    return out
