"""Unit tests of the packed list structure (brook/types/lists.py): no server involved.

The model-based test drives a ListValue against a plain Python list with the limits made tiny
(a few bytes of small form, chunks of three or four elements, one or two loose elements kept
at an end), so that every operation crosses the small/long boundary and chunk boundaries all
the time: packing and unpacking at both ends, refilling an end from the other one, splitting a
chunk on insert, dropping whole chunks on trim, skipping chunks on search.
"""

from __future__ import annotations

import pickle
from collections import deque

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from brook.types import lists
from brook.types.lists import ListValue

# (SMALL_BYTES, CHUNK, CHUNK_BYTES, KEEP, SHRINK_SIZE): tiny everything, then a small form
# roomy enough for elements of 254 bytes and more (its long entries).
LIMITS = {
    "tiny": (16, 3, 40, 1, 4),
    "roomy": (700, 4, 600, 2, 8),
}

SHORT = st.sampled_from([b"", b"a", b"b", b"ab", b"a" * 11, b"\xfe", b"\x00\x01", b"C\x01"])
ELEMENTS = st.one_of(
    SHORT, SHORT, SHORT,
    st.binary(max_size=20),
    st.builds(lambda n, c: c * n, st.integers(250, 320), st.sampled_from([b"a", b"\xfe"])),
)
BATCHES = st.lists(ELEMENTS, min_size=1, max_size=7)
INDEXES = st.integers(-12, 40)


def check_structure(value: ListValue) -> None:
    """The form matches the size, chunk counts are exact, loose ends are bounded."""
    data = value.data
    if value.left is None:
        assert value.right is None and type(data) is bytes
        assert len(data) <= lists.SMALL_BYTES
        assert len(lists._decode_small(data)) == value.size
        return
    assert value.right is not None and isinstance(data, deque)
    assert len(value.left) < lists.PACK_AT and len(value.right) < lists.PACK_AT
    total = len(value.left) + len(value.right)
    for count, chunk in data:
        items = pickle.loads(chunk)
        assert len(items) == count
        assert 1 <= count <= lists.CHUNK
        assert count == 1 or len(chunk) <= lists.CHUNK_BYTES
        total += count
    assert total == value.size
    check_encoding(value)


def check_encoding(value: ListValue) -> None:
    """Redis's encoding is kept with the listpack bytes it needs (brook.types.lists): exact
    for a listpack and for a counted quicklist; a quicklist stops counting only when long."""
    measured = lists.LISTPACK_EMPTY + sum(map(lists.entry_size, value))
    if value.lp == 0:  # a small listpack, not counted: within the bound the docstring gives
        assert value.left is None
        assert measured <= lists.LISTPACK_EMPTY + len(value.data) + 2 * value.size
    elif value.lp > 0:
        assert value.lp == measured
        assert lists.LIMIT.size < 0 or measured <= lists.LIMIT.size + 8 * value.size
    elif value.lp == -1:
        assert value.size > lists.LIMIT.track - 2 * lists.PACK_AT
    else:
        assert -2 - value.lp == measured


class ListMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.value = ListValue()
        self.model: list[bytes] = []

    @rule(items=BATCHES)
    def rpush(self, items: list[bytes]) -> None:
        assert self.value.extend(list(items)) == len(self.model) + len(items)
        self.model.extend(items)

    @rule(items=BATCHES)
    def lpush(self, items: list[bytes]) -> None:
        assert self.value.extendleft(list(items)) == len(self.model) + len(items)
        self.model[:0] = items[::-1]

    @rule(element=ELEMENTS, left=st.booleans())
    def push_one(self, element: bytes, left: bool) -> None:
        if left:
            self.value.appendleft(element)
            self.model.insert(0, element)
        else:
            self.value.append(element)
            self.model.append(element)

    @rule(times=st.integers(1, 9))
    def rpop(self, times: int) -> None:
        for _ in range(times):
            if not self.model:
                with pytest.raises(IndexError):
                    self.value.pop()
                return
            assert self.value.pop() == self.model.pop()

    @rule(times=st.integers(1, 9))
    def lpop(self, times: int) -> None:
        for _ in range(times):
            if not self.model:
                with pytest.raises(IndexError):
                    self.value.popleft()
                return
            assert self.value.popleft() == self.model.pop(0)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), left=st.booleans())
    def popmany(self, data: st.DataObject, left: bool) -> None:
        count = data.draw(st.integers(0, len(self.model) + 2))
        if left:
            expected = self.model[:count]
            del self.model[:count]
        else:
            expected = self.model[::-1][:count]
            del self.model[len(self.model) - len(expected):]
        assert self.value.popmany(count, left) == expected

    @rule(index=INDEXES)
    def get(self, index: int) -> None:
        if -len(self.model) <= index < len(self.model):
            assert self.value[index] == self.model[index]
        else:
            with pytest.raises(IndexError):
                self.value[index]

    @rule(index=INDEXES, element=ELEMENTS)
    def set(self, index: int, element: bytes) -> None:
        if -len(self.model) <= index < len(self.model):
            self.value[index] = element
            self.model[index] = element
        else:
            with pytest.raises(IndexError):
                self.value[index] = element

    @rule(data=st.data(), element=ELEMENTS)
    def insert(self, data: st.DataObject, element: bytes) -> None:
        index = data.draw(st.integers(0, len(self.model)))
        self.value.insert(index, element)
        self.model.insert(index, element)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def range(self, data: st.DataObject) -> None:
        start = data.draw(st.integers(0, len(self.model) - 1))
        stop = data.draw(st.integers(start + 1, len(self.model)))
        assert self.value.range(start, stop) == self.model[start:stop]

    @rule(data=st.data())
    def trim(self, data: st.DataObject) -> None:
        start = data.draw(st.integers(0, len(self.model) + 1))
        stop = data.draw(st.integers(0, len(self.model) + 2))
        before = len(self.model)
        kept = self.model[start:stop] if start < stop else []
        assert self.value.trim(start, stop) == before - len(kept)
        self.model = kept

    @rule(element=ELEMENTS, limit=st.integers(-4, 4))
    def remove_matches(self, element: bytes, limit: int) -> None:
        matches = [i for i, item in enumerate(self.model) if item == element]
        if limit > 0:
            matches = matches[:limit]
        elif limit < 0:
            matches = matches[limit:] if len(matches) >= -limit else matches
        gone = set(matches)
        assert self.value.remove_matches(element, limit) == len(gone)
        self.model = [item for i, item in enumerate(self.model) if i not in gone]

    @rule(element=ELEMENTS, backward=st.booleans(), maxlen=st.integers(0, 12))
    def positions(self, element: bytes, backward: bool, maxlen: int) -> None:
        size = len(self.model)
        order = range(size - 1, -1, -1) if backward else range(size)
        looked = list(order)[:maxlen] if maxlen else list(order)
        expected = [i for i in looked if self.model[i] == element]
        assert list(self.value.positions(element, backward, maxlen)) == expected
        assert self.value.count(element) == self.model.count(element)
        if element in self.model:
            assert self.value.index(element) == self.model.index(element)
        else:
            with pytest.raises(ValueError):
                self.value.index(element)

    @rule(items=BATCHES)
    def copy_is_independent(self, items: list[bytes]) -> None:
        twin = self.value.copy()
        assert list(twin) == self.model
        twin.extend(list(items))
        twin.extendleft(list(items))
        if len(twin) > 3:
            twin[1] = b"changed"
            twin.popleft()
            twin.pop()
        assert list(self.value) == self.model
        # and the copy carries on as the value, the original changed instead
        self.value.extend([b"original"])
        self.value, original = ListValue(self.model), self.value
        self.value = original.copy()
        original.clear()
        self.value.pop()
        assert list(self.value) == self.model

    @rule()
    def clear(self) -> None:
        self.value.clear()
        self.model = []

    @invariant()
    def same_elements(self) -> None:
        value = self.value
        assert len(value) == len(self.model)
        assert bool(value) == bool(self.model)
        assert list(value) == self.model
        assert list(reversed(value)) == self.model[::-1]
        check_structure(value)


@pytest.mark.parametrize("limits", sorted(LIMITS))
def test_list_matches_a_python_list(monkeypatch: pytest.MonkeyPatch, limits: str) -> None:
    small, chunk, chunk_bytes, keep, shrink = LIMITS[limits]
    monkeypatch.setattr(lists, "SMALL_BYTES", small)
    monkeypatch.setattr(lists, "CHUNK", chunk)
    monkeypatch.setattr(lists, "CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(lists, "KEEP", keep)
    monkeypatch.setattr(lists, "PACK_AT", keep + chunk)
    monkeypatch.setattr(lists, "SHRINK_SIZE", shrink)
    try:
        for fill in (5, -2):  # an entry limit the machine's lists cross often, then the default
            lists.LIMIT.set(fill)
            run_state_machine_as_test(
                ListMachine,
                settings=settings(max_examples=200, stateful_step_count=50, deadline=None),
            )
    finally:
        lists.LIMIT.set(-2)


@pytest.mark.parametrize("element, size", [
    (b"", 2), (b"abc", 5), (b"a" * 63, 65), (b"a" * 64, 67), (b"a" * 125, 128), (b"a" * 126, 130),
    (b"7", 2), (b"-1", 3), (b"127", 2), (b"128", 3), (b"-4096", 3), (b"32767", 4),
    (b"12345678901", 10), (b"007", 5), (b"-", 3), (b"+1", 4), (b"1.5", 5),
])
def test_entry_size_is_a_listpack_entry(element: bytes, size: int) -> None:
    assert lists.entry_size(element) == size


def test_limit_follows_the_fill() -> None:
    limit = lists.ListpackLimit(-2)
    assert (limit.size, limit.count) == (8192, -1)
    assert not limit.exceeds(8192, 10**6) and limit.exceeds(8193, 1)
    assert limit.fits(4096, 10**6, True) and not limit.fits(4097, 1, True)
    limit.set(-9)  # below -5: 64 KiB
    assert limit.size == 65536
    limit.set(0)  # one entry per node
    assert (limit.size, limit.count) == (-1, 1)
    limit.set(4)
    assert limit.exceeds(10, 5) and limit.exceeds(8193, 2) and not limit.exceeds(8192, 4)
    assert limit.fits(100, 2, True) and not limit.fits(100, 3, True) and limit.fits(100, 4, False)


def test_small_form_is_one_bytes_object() -> None:
    """Ten 6-byte elements: the list object and one bytes of 80 (2 bytes per element)."""
    value = ListValue([b"el%04d" % i for i in range(10)])
    assert type(value.data) is bytes and len(value.data) == 80
    value.extend([b"x" * 300])  # a long entry: 2-byte length between markers
    assert len(value.data) == 80 + 306
    assert value.pop() == b"x" * 300 and value.popleft() == b"el0000"


def test_long_list_is_packed_with_bounded_loose_ends() -> None:
    """A million pushes leave at most PACK_AT loose elements per end, the rest in chunks of
    13 bytes per 11-byte element."""
    value = ListValue()
    for i in range(0, 100_000, 1000):
        value.extend([b"job:%07d" % n for n in range(i, i + 1000)])
    assert value.left is not None and value.right is not None
    assert len(value.left) + len(value.right) < 2 * lists.PACK_AT
    packed = sum(len(chunk) for _, chunk in value.data)
    assert packed / sum(count for count, _ in value.data) < 13.2
    assert value.range(99_990, 100_000) == [b"job:%07d" % n for n in range(99_990, 100_000)]
    assert value[50_000] == b"job:0050000"
    assert value.trim(10, 99_990) == 20 and value[0] == b"job:0000010"
    assert list(value.positions(b"job:0070000")) == [69_990]
    assert value.remove_matches(b"job:0070000", 0) == 1 and len(value) == 99_979


def test_long_list_shrinks_back_to_the_small_form() -> None:
    """Popping a long list down to a few elements gives it the small form again (at the
    refill of an end), and so does a bulk removal."""
    value = ListValue([b"abc"] * 1000)
    assert value.left is not None
    for _ in range(990):
        value.popleft()
    assert type(value.data) is bytes and list(value) == [b"abc"] * 10
    value = ListValue([b"abc"] * 1000)
    assert value.trim(0, 5) == 995
    assert type(value.data) is bytes and list(value) == [b"abc"] * 5
