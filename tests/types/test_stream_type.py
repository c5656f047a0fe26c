"""Unit tests of the pure stream structure (brook/types/stream.py and its node codec,
brook/types/stream_node.py): no server involved.

The model-based test drives a Stream with tiny node limits, so that sealing, SAMEFIELDS and
"odd" entries, tombstone compaction and node drops all happen, against a plain dict.
"""

from __future__ import annotations

import time
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from brook.commands.registry import CommandError
from brook.commands.stream_args import (
    next_auto_id_text,
    parse_ids,
    parse_strict_id,
    read_plain_id,
)
from brook.types import stream_node
from brook.types.stream import MAX_ID, Stream, format_id, id_parts, make_id
from tests.conftest import native_module

FIELD_SHAPES = [
    [b"a", b"1", b"b", b"2"],
    [b"a", b"xyz", b"b", b""],
    [b"c", b"3"],
    [b"a", b"1", b"b", b"2", b"c", b"3"],
    [b"b", b"2", b"a", b"1"],
    [b"a", b"v" * 300, b"b", b"2"],  # a length that needs a wider column
    [b"", b""],
]


def check_structure(s: Stream) -> None:
    """Internal invariants: sorted non-empty nodes, only the last one may be open."""
    nodes = s._nodes
    assert s._starts == [node.master_id for node in nodes]
    assert s._starts == sorted(s._starts)
    for i, node in enumerate(nodes):
        assert node.live > 0
        if node.blob is None:
            assert i == len(nodes) - 1 and s._tail is node
    assert sum(node.live for node in nodes) == s.length


class StreamMachine(RuleBasedStateMachine):
    @initialize(max_entries=st.sampled_from([0, 1, 3, 5, 12]),
                max_bytes=st.sampled_from([0, 0, 60]))
    def setup(self, max_entries: int, max_bytes: int) -> None:
        self.s = Stream(max_entries, max_bytes)
        self.model: dict[int, list[bytes]] = {}
        self.max_deleted = 0
        self.added = 0

    def next_id(self, jump: int, seq: int) -> int:
        ms, last_seq = id_parts(self.s.last_id)
        if jump == 0:
            return self.s.last_id + 1 + seq
        return make_id(ms + jump, seq)

    @rule(jump=st.sampled_from([0, 0, 1, 2, 300, 70_000, 2**33]),
          seq=st.sampled_from([0, 1, 5, 2**40]), shape=st.sampled_from(FIELD_SHAPES))
    def append(self, jump: int, seq: int, shape: list[bytes]) -> None:
        entry_id = self.next_id(jump, seq)
        self.s.append(entry_id, list(shape))
        self.model[entry_id] = list(shape)
        self.added += 1

    @rule(data=st.data())
    def append_rejects_old_ids(self, data: st.DataObject) -> None:
        bad = data.draw(st.integers(0, self.s.last_id))
        try:
            self.s.append(bad, [b"a", b"b"])
        except ValueError:
            pass
        else:
            raise AssertionError("append accepted a non-increasing ID")

    def pick_id(self, data: st.DataObject) -> int:
        """Mostly existing IDs (live or deleted), sometimes one between or beyond them."""
        ids = list(self.model)
        if ids and data.draw(st.booleans()):
            return data.draw(st.sampled_from(ids))
        return data.draw(st.integers(0, self.s.last_id + 2))

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        entry_id = self.pick_id(data)
        expected = entry_id in self.model
        assert self.s.delete(entry_id) is expected
        if expected:
            del self.model[entry_id]
            self.max_deleted = max(self.max_deleted, entry_id)

    @rule(data=st.data())
    def delete_many(self, data: st.DataObject) -> None:
        """XDEL of several IDs: enough tombstones in one node to trigger its compaction."""
        if self.model:
            ids = list(self.model)
            start = data.draw(st.integers(0, len(ids) - 1))
            for entry_id in ids[start:start + 12:data.draw(st.sampled_from([1, 2]))]:
                assert self.s.delete(entry_id)
                del self.model[entry_id]
                self.max_deleted = max(self.max_deleted, entry_id)

    def check_trim(self, removed: int, approx: bool, limit: int, exact: int) -> list[int]:
        """The trim removed the ``removed`` oldest entries; update the model."""
        gone = list(self.model)[:removed]
        for entry_id in gone:
            del self.model[entry_id]
        if limit:
            assert removed <= limit
        if not approx and not limit:
            assert removed == exact
        else:
            assert removed <= exact
        return gone

    @rule(maxlen=st.integers(0, 12), approx=st.booleans(), limit=st.sampled_from([0, 0, 1, 4]))
    def trim_maxlen(self, maxlen: int, approx: bool, limit: int) -> None:
        before = len(self.model)
        removed = self.s.trim_maxlen(maxlen, approx, limit)
        self.check_trim(removed, approx, limit, max(before - maxlen, 0))
        if before >= maxlen:
            assert len(self.model) >= maxlen  # never below the threshold, approx or not

    @rule(data=st.data(), approx=st.booleans(), limit=st.sampled_from([0, 0, 1, 4]))
    def trim_minid(self, data: st.DataObject, approx: bool, limit: int) -> None:
        min_id = self.pick_id(data)
        exact = sum(1 for entry_id in self.model if entry_id < min_id)
        removed = self.s.trim_minid(min_id, approx, limit)
        gone = self.check_trim(removed, approx, limit, exact)
        assert all(entry_id < min_id for entry_id in gone)

    @rule(data=st.data(), count=st.sampled_from([None, 0, 1, 2, 5]), reverse=st.booleans())
    def range(self, data: st.DataObject, count: int | None, reverse: bool) -> None:
        start, end = self.pick_id(data), self.pick_id(data)
        if data.draw(st.booleans()):
            start, end = min(start, end), max(start, end)
        expected = [(i, f) for i, f in self.model.items() if start <= i <= end]
        if reverse:
            expected.reverse()
        if count is not None:
            expected = expected[:count]
        assert self.s.range(start, end, count, reverse) == expected
        # The read commands' path: cached RESP encodings, built per node.
        encoded = [stream_node.encode_entry(i, f) for i, f in expected]
        for split in (False, True):
            n, pieces = self.s.range_resp(start, end, count, reverse, split)
            assert (n, b"".join(pieces)) == (len(encoded), b"".join(encoded))
            if split:
                assert pieces == encoded

    @rule(data=st.data(), count=st.sampled_from([None, 1, 2, 5]), nextra=st.sampled_from([0, 2]))
    def read_resp(self, data: st.DataObject, count: int | None, nextra: int) -> None:
        """XREADGROUP's path: the first entries from an ID on, from the cached encodings, as
        ``[id, fields]`` or as CLAIM's longer ``[id, fields, idle, deliveries]``."""
        start = self.pick_id(data)
        expected = [(i, f) for i, f in self.model.items() if i >= start][:count]
        extra = b":0\r\n:1\r\n" if nextra else b""
        ids, pieces = self.s.read_resp(start, count, extra, nextra)
        assert ids == [i for i, _ in expected]
        assert b"".join(pieces) == b"".join(
            stream_node.encode_entry(i, f, extra, nextra) for i, f in expected)

    @rule(data=st.data())
    def get(self, data: st.DataObject) -> None:
        entry_id = self.pick_id(data)
        assert self.s.get(entry_id) == self.model.get(entry_id)

    @rule(data=st.data())
    def set_last_id(self, data: st.DataObject) -> None:
        """XSETID: any ID at or above the last live entry and the max deleted ID, possibly
        below deleted entries at the tail (they must not disturb later appends)."""
        floor = max(max(self.model, default=0), self.max_deleted)
        self.s.set_last_id(data.draw(st.integers(floor, max(floor, self.s.last_id) + 3)))

    @rule(max_entries=st.sampled_from([0, 1, 2, 4, 100]), max_bytes=st.sampled_from([0, 40, 90]))
    def change_node_limits(self, max_entries: int, max_bytes: int) -> None:
        """CONFIG SET stream-node-max-*: later appends follow the new limits."""
        self.s.set_node_limits(max_entries, max_bytes)

    @rule()
    def evict_decode_cache(self) -> None:
        stream_node.DECODE_CACHE.clear()
        stream_node.RESP_CACHE.clear()

    @rule()
    def copy(self) -> None:
        dup, probe = self.s.copy(), self.s.copy()
        if self.model:
            victim = next(iter(self.model))
            assert probe.delete(victim)
            assert dup.get(victim) == self.s.get(victim) == self.model[victim]
        self.s = dup  # carry on with the copy: it must behave like the original

    @invariant()
    def metadata(self) -> None:
        s = self.s
        assert s.length == len(self.model)
        assert s.first_id() == next(iter(self.model), 0)
        assert s.max_deleted_id == self.max_deleted
        assert s.entries_added == self.added
        assert s.last_live_id() == max(self.model, default=0)
        if self.model:
            assert s.last_id >= max(self.model)
        check_structure(s)

    @invariant()
    def full_scan(self) -> None:
        assert self.s.range(0, MAX_ID) == list(self.model.items())


TestStreamModel = StreamMachine.TestCase
TestStreamModel.settings = settings(max_examples=300, stateful_step_count=60, deadline=None)


def fill(s: Stream, n: int, start_ms: int = 1) -> list[int]:
    ids = [make_id(start_ms + i, 0) for i in range(n)]
    for i, entry_id in enumerate(ids):
        s.append(entry_id, [b"f", b"%d" % i])
    return ids


def test_id_helpers() -> None:
    entry_id = make_id(1_700_000_000_000, 7)
    assert id_parts(entry_id) == (1_700_000_000_000, 7)
    assert format_id(entry_id) == b"1700000000000-7"
    assert format_id(MAX_ID) == b"18446744073709551615-18446744073709551615"
    assert make_id(1, 0) > make_id(0, 2**64 - 1)


def test_sealing_leaves_only_the_tail_open() -> None:
    s = Stream(max_entries=10)
    fill(s, 25)
    assert s.node_count() == 3
    assert [node.blob is not None for node in s._nodes] == [True, True, False]
    assert s.length == 25 and s.entries_added == 25
    # A node is sealed as soon as it is full, before the next append arrives.
    fill(s, 5, start_ms=100)
    assert s._tail is None and all(node.blob is not None for node in s._nodes)
    assert len(s.range(0, MAX_ID)) == 30


def test_byte_limit_opens_new_nodes() -> None:
    s = Stream(max_entries=0, max_bytes=200)
    for i in range(50):
        s.append(make_id(i + 1, 0), [b"field", b"x" * 20])
    assert s.node_count() > 5
    assert s.get(make_id(1, 0)) == [b"field", b"x" * 20]
    # 0/0 is "unlimited": one node.
    s = Stream(0, 0)
    fill(s, 500)
    assert s.node_count() == 1


def test_samefields_and_odd_entries_round_trip() -> None:
    s = Stream(max_entries=4)
    rows = [[b"a", b"1", b"b", b"2"], [b"a", b"3", b"b", b"4"], [b"x", b"y"], [b"b", b"5", b"a", b"6"]]
    for i, row in enumerate(rows):
        s.append(make_id(5, i), row)
    assert s._tail is None  # sealed
    stream_node.DECODE_CACHE.clear()
    assert [fields for _, fields in s.range(0, MAX_ID)] == rows
    node = s._nodes[0]
    # Only the odd entries' names are stored: the master names appear once in the blob.
    assert node.blob.count(b"a") == 2  # master "a" + the reordered odd entry


def test_delete_metadata() -> None:
    s = Stream(max_entries=3)
    ids = fill(s, 7)
    assert not s.delete(make_id(999, 0))
    assert s.delete(ids[3])
    assert not s.delete(ids[3])
    assert s.max_deleted_id == ids[3]
    assert s.delete(ids[1])
    assert s.max_deleted_id == ids[3]  # only grows
    assert s.first_id() == ids[0]
    assert s.delete(ids[0])
    assert s.first_id() == ids[2]
    assert s.length == 4 and s.entries_added == 7 and s.last_id == ids[6]
    # Deleting the last live entry of a node drops the node.
    nodes = s.node_count()
    assert s.delete(ids[2])
    assert s.node_count() == nodes - 1
    assert s.first_id() == ids[4]
    for entry_id in ids[4:]:
        assert s.delete(entry_id)
    assert s.length == 0 and s.first_id() == 0 and s.node_count() == 0
    assert s.last_id == ids[6] and s.max_deleted_id == ids[6]
    s.append(make_id(100, 0), [b"a", b"b"])  # appending after emptying works
    assert s.first_id() == make_id(100, 0)


def test_tombstones_are_compacted() -> None:
    s = Stream(max_entries=100)
    ids = fill(s, 100)
    for entry_id in ids[:60:2] + ids[1:40:2]:
        s.delete(entry_id)
    node = s._nodes[0]
    assert node.count == 100 and node.dead.bit_count() == 50  # half: kept as tombstones
    s.delete(ids[41])  # now most entries are tombstones: re-sealed without them
    assert node.count == node.live == 49 and node.dead == 0
    stream_node.DECODE_CACHE.clear()
    assert [i for i, _ in s.range(0, MAX_ID)] == ids[43:60:2] + ids[60:]
    assert s.first_id() == ids[43]
    s.delete(ids[50])
    assert s.get(ids[50]) is None and s.get(ids[51]) == [b"f", b"51"]


def test_trim_does_not_touch_last_or_max_deleted() -> None:
    s = Stream(max_entries=10)
    ids = fill(s, 30)
    s.delete(ids[29])
    assert s.trim_maxlen(5) == 24
    assert s.length == 5 and s.first_id() == ids[24]
    assert s.last_id == ids[29] and s.max_deleted_id == ids[29]
    assert s.trim_minid(ids[26]) == 2
    assert s.first_id() == ids[26] and s.max_deleted_id == ids[29]


def test_approx_trim_removes_whole_nodes_only() -> None:
    s = Stream(max_entries=10)
    ids = fill(s, 100)
    assert s.trim_maxlen(75, approx=True) == 20  # a third node would leave 70 < 75
    assert s.length == 80 and s.first_id() == ids[20]
    assert s.trim_maxlen(75, approx=True) == 0
    assert s.trim_minid(ids[45], approx=True) == 20  # the node holding ids[40..49] stays
    assert s.first_id() == ids[40]
    assert s.trim_maxlen(75) == 0
    assert s.trim_maxlen(55) == 5  # exact: into a node
    assert s.node_count() == 6


def test_trim_limit() -> None:
    s = Stream(max_entries=10)
    fill(s, 100)
    assert s.trim_maxlen(0, approx=True, limit=25) == 20  # a third node would exceed the limit
    assert s.trim_maxlen(0, approx=True, limit=5) == 0
    assert s.trim_minid(MAX_ID, approx=True, limit=30) == 30
    assert s.length == 50


def test_node_limits_apply_to_later_appends() -> None:
    s = Stream(max_entries=100)
    fill(s, 10)
    s.set_node_limits(5, 4096)
    fill(s, 10, start_ms=100)
    assert s.node_count() == 3  # the tail stopped accepting once over the new cap


def test_copy_is_independent() -> None:
    s = Stream(max_entries=4)
    ids = fill(s, 10)
    dup = s.copy()
    dup.delete(ids[0])
    dup.delete(ids[9])
    dup.append(make_id(500, 0), [b"z", b"z"])
    assert s.length == 10 and s.get(ids[9]) == [b"f", b"9"]
    assert dup.length == 9 and dup.get(ids[9]) is None
    assert s.memory_usage() > 0


def test_memory_and_speed() -> None:
    n = 100_000
    base = make_id(1_700_000_000_000, 0)
    rows = [[b"sensor", b"%d" % (i % 500), b"temp", b"%d" % (200 + i % 97), b"ok", b"1"]
            for i in range(n)]
    ids = [base + ((i // 7) << 64) + i % 7 for i in range(n)]

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    s = Stream()
    for entry_id, row in zip(ids, rows, strict=True):
        s.append(entry_id, row)
    del rows  # only what the stream keeps should remain
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    per_entry = used / n
    print(f"\nstream memory: {per_entry:.1f} bytes/entry traced, "
          f"{s.memory_usage() / n:.1f} by memory_usage()")
    assert per_entry < 75

    rows = [[b"sensor", b"%d" % (i % 500), b"temp", b"%d" % (200 + i % 97), b"ok", b"1"]
            for i in range(n)]
    t0 = time.perf_counter()
    s = Stream()
    for entry_id, row in zip(ids, rows, strict=True):
        s.append(entry_id, row)
    t1 = time.perf_counter()
    stream_node.DECODE_CACHE.clear()
    everything = s.range(0, MAX_ID)
    t2 = time.perf_counter()
    batches = 0
    cursor = 0
    while cursor <= s.last_id:
        batch = s.range(cursor, MAX_ID, count=100)
        if not batch:
            break
        cursor = batch[-1][0] + 1
        batches += 1
    t3 = time.perf_counter()
    assert len(everything) == n and batches == n // 100
    print(f"append {n / (t1 - t0):,.0f} entries/s; range (cold, all) {n / (t2 - t1):,.0f} "
          f"entries/s; range COUNT 100 paging {n / (t3 - t2):,.0f} entries/s")


def test_encoded_tail_follows_appends() -> None:
    """The open node's cached encodings grow with it: a read between appends sees them all."""
    s = Stream()
    for i in range(1, 8):
        s.append(make_id(1, i), [b"f", b"%d" % i])
        n, pieces = s.range_resp(0, MAX_ID, i)
        expected = [stream_node.encode_entry(make_id(1, j), [b"f", b"%d" % j])
                    for j in range(1, i + 1)]
        assert (n, b"".join(pieces)) == (i, b"".join(expected))


_ID_STEPS = st.sampled_from([(0, 1), (0, 300), (1, 0), (5, 7), (1 << 20, 0), (1 << 40, 1 << 40)])
_ROWS = st.one_of(
    st.sampled_from(FIELD_SHAPES),
    st.lists(st.binary(max_size=3), min_size=1, max_size=4).map(lambda items: items * 2),
    st.binary(min_size=1020, max_size=1100).map(lambda value: [b"a", value, b"b", b"2"]),
)


@given(st.integers(0, (1 << 64) - 1), st.lists(st.tuples(_ID_STEPS, _ROWS, st.booleans()),
                                                min_size=1, max_size=40))
@settings(max_examples=200)
def test_the_c_sealer_matches_its_python_twin(
        first_ms: int, entries: list[tuple[tuple[int, int], list[bytes], bool]]) -> None:
    """brook.types._node_seal (the compiled build's sealer) writes the Python one's blob, for
    every column width, odd entries and deleted entries."""
    seal_node = native_module("brook.types._node_seal").seal_node
    ids: list[int] = []
    rows: list[list[bytes] | None] = []
    ms, seq = first_ms, 0
    for (ms_step, seq_step), row, deleted in entries:
        if ms_step:
            ms, seq = min(ms + ms_step, (1 << 64) - 1), seq_step
        else:
            seq = min(seq + seq_step, (1 << 64) - 1)
        if not ids or make_id(ms, seq) > ids[-1]:
            ids.append(make_id(ms, seq))
            rows.append(None if deleted and rows else list(row))
    names = list(entries[0][1][0::2])
    expected = stream_node._seal_blob(ids[0], names, ids, rows)
    assert seal_node(ids[0], names, ids, rows) == expected


@given(st.integers(0, (1 << 64) - 1), st.lists(st.tuples(_ID_STEPS, _ROWS), min_size=1,
                                                max_size=40))
@settings(max_examples=200)
def test_the_c_node_encoder_matches_its_python_twin(first_ms: int,
                                                    entries: list[tuple[tuple[int, int], list[bytes]]]) -> None:
    """brook.types._resp_pack (the compiled build's encoder of sealed nodes) gives the bytes,
    offsets and ID columns of the Python one, for every column width and odd entries."""
    pack_node = native_module("brook.types._resp_pack").pack_node
    s = Stream(max_entries=0, max_bytes=0)
    ms, seq = first_ms, 0
    for (ms_step, seq_step), row in entries:
        if ms_step:
            ms, seq = min(ms + ms_step, (1 << 64) - 1), seq_step
        else:
            seq = min(seq + seq_step, (1 << 64) - 1)
        if make_id(ms, seq) > s.last_id:
            s.append(make_id(ms, seq), list(row))
    node = s._nodes[0]
    s._seal(node)
    _ids, packed = stream_node._pack_sealed_resp(node)
    body, offsets, ms_list, seqs = pack_node(node.blob, node.master_id >> 64,
                                             node.master_id & ((1 << 64) - 1))
    assert (body, offsets, ms_list, seqs) == (packed.body, packed.offsets, packed.ms, packed.seqs)


# -- XACK's ID batches --------------------------------------------------------------------------

_ID_PIECES = st.sampled_from([b"0", b"1", b"9", b"-", b"+", b"*", b" ", b"\x00", b"a",
                              b"18446744073709551615", b"18446744073709551616", b"9999999999999999999"])


@given(st.lists(st.lists(_ID_PIECES, max_size=5).map(b"".join), min_size=1, max_size=6))
def test_parse_ids_agrees_with_the_strict_parser(args: list[bytes]) -> None:
    """The byte loop for plain ``ms-seq`` IDs gives what the general strict parser gives, and
    a batch with any invalid ID is refused whole, as Redis refuses it."""
    try:
        expected: list[int] | str = [parse_strict_id(arg) for arg in args]
    except CommandError as err:
        expected = err.message
    try:
        got: list[int] | str = parse_ids(args)
    except CommandError as err:
        got = err.message
    assert got == expected



@given(st.lists(_ID_PIECES, max_size=5).map(b"".join))
def test_the_c_id_reader_matches_its_python_twin(arg: bytes) -> None:
    """brook.types._stream_ids reads a plain ID (and refuses every other form) exactly as
    stream_args.read_plain_id does, alone and in a batch."""
    native = native_module("brook.types._stream_ids")
    expected = read_plain_id(arg)
    assert native.plain_id(arg) == expected
    assert native.plain_ids([arg, b"1-1"]) == (None if expected < 0 else [expected, make_id(1, 1)])


_U64 = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 2**64 - 2, 2**64 - 1]))


@given(_U64, _U64, _U64)
def test_the_c_auto_id_matches_its_python_twin(now_ms: int, last_ms: int, last_seq: int) -> None:
    """brook.types._stream_ids.next_auto_id makes XADD *'s ID and text as the Python twin does:
    the clock ahead, behind, equal, and the sequence carrying into the milliseconds."""
    native = native_module("brook.types._stream_ids")
    if last_ms == last_seq == 2**64 - 1:
        return  # XADD refuses a stream whose last ID is the largest before making an ID
    for now in (now_ms, last_ms):
        expected = next_auto_id_text(now, make_id(last_ms, last_seq))
        assert native.next_auto_id(now, make_id(last_ms, last_seq)) == expected
        assert expected[1] == format_id(expected[0])
