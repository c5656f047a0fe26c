"""The sink's idempotent IDs without Spark: a partition's rows in any order get the same
(producer block, iid) pairs, copies of a row are told apart, and no block outgrows the
stream's IDMP-MAXSIZE (which would evict IDs a replay needs)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from brook.spark.idempotency import blocks, row_ids

rows = st.lists(st.tuples(st.sampled_from([b"a", b"b"]), st.binary(max_size=3)), max_size=60)


def pairs(partition: list[tuple[bytes, bytes]], size: int) -> Counter:
    """What a partition sends, as a multiset of (stream, block, iid, row body)."""
    keys = [key for key, _ in partition]
    bodies = [body for _, body in partition]
    iids = row_ids(keys, bodies)
    placed = blocks(keys, iids, {b"a": size, b"b": size})
    return Counter(zip(keys, placed, iids, bodies, strict=True))


@settings(max_examples=300, deadline=None)
@given(rows, st.integers(min_value=1, max_value=8), st.randoms(use_true_random=False))
def test_ids_do_not_depend_on_the_order_of_rows(partition, size, rng):
    shuffled = list(partition)
    rng.shuffle(shuffled)
    first, replay = pairs(partition, size), pairs(shuffled, size)
    assert first == replay
    # One (stream, block, iid) per row: nothing in a partition is taken for a duplicate.
    assert all(count == 1 for count in Counter(pair[:3] for pair in first.elements()).values())
    per_block = Counter((key, block) for key, block, _, _ in first.elements())
    assert all(count <= size for count in per_block.values())


def test_copies_of_a_row_get_their_own_ids_and_streams_count_apart():
    keys = [b"s", b"s", b"t", b"s"]
    iids = row_ids(keys, [b"x", b"x", b"x", b"y"])
    assert len(set(iids[:2])) == 2 and iids[0] == iids[2]  # per stream: t's copy is its first
    assert iids[1].startswith(iids[0]) and iids[1] != iids[0]


def test_a_large_partition_is_split_by_rank():
    bodies = [b"%d" % i for i in range(2500)]
    keys = [b"s"] * 2500
    iids = row_ids(keys, bodies)
    placed = blocks(keys, iids, {b"s": 1000})
    assert Counter(placed) == {0: 1000, 1: 1000, 2: 500}
    order = list(range(2500))
    random.Random(7).shuffle(order)
    again = blocks([keys[i] for i in order], [iids[i] for i in order], {b"s": 1000})
    assert [placed[i] for i in order] == again
