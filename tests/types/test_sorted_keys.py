"""SortedKeys (brook/types/_sorted_keys.c) against its twin, ``sortedcontainers.SortedList``.

Every test runs one sequence of operations on both and requires the same answers: the keys
returned, ranks, lengths and the kind of error. The C type holds distinct keys, so an add of a
key already there is a no-op on both sides (the SortedList is only added to when the key is
absent). Keys come from a small alphabet so that operations meet the same keys again, with
some long ones so that leaves split on bytes as well as on counts, and bulk operations grow
the structure past a few leaves, where ranks go through the leaves' count tree.
"""

from __future__ import annotations

import random
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedList

from tests.conftest import native_module


def _sorted_keys(keys: Any = ()) -> Any:
    return native_module("brook.types._sorted_keys").SortedKeys(keys)


_KEYS = st.one_of(
    st.binary(max_size=3),
    st.binary(min_size=8, max_size=12),
    st.binary(min_size=300, max_size=2000).map(lambda tail: b"\x80" + tail),  # splits on bytes
)
_RANKS = st.integers(min_value=-1600, max_value=1600)
_OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), _KEYS),
    st.tuples(st.just("discard"), _KEYS),
    st.tuples(st.just("remove"), _KEYS),
    st.tuples(st.just("bisect"), _KEYS),
    st.tuples(st.just("contains"), _KEYS),
    st.tuples(st.just("find_member"), _KEYS),
    st.tuples(st.just("pop"), st.one_of(st.none(), _RANKS)),
    st.tuples(st.just("item"), _RANKS),
    st.tuples(st.just("slice"), st.one_of(st.none(), _RANKS), st.one_of(st.none(), _RANKS),
              st.sampled_from([None, 1, 2, -1, -3])),
    st.tuples(st.just("del_item"), _RANKS),
    st.tuples(st.just("del_slice"), st.one_of(st.none(), _RANKS),
              st.one_of(st.none(), _RANKS)),
    # many keys at once: b"b" + a 3-byte number, from ``start``, every ``stride``
    st.tuples(st.just("bulk"), st.integers(min_value=0, max_value=5000),
              st.integers(min_value=1, max_value=1500), st.integers(min_value=1, max_value=7)),
    st.tuples(st.just("check")),
), max_size=60)


def _find_member(model: SortedList, member: bytes) -> bytes | None:
    """The listpack's walk: the first key that is eight bytes and then ``member``."""
    for key in model:
        if len(key) == len(member) + 8 and key.endswith(member):
            return key  # type: ignore[no-any-return]
    return None


def _apply(keys: Any, native: bool, op: tuple[Any, ...]) -> object:
    """One operation on the C type (``native``) or on the SortedList; its answer (an error's
    type counts as the answer)."""
    name = op[0]
    try:
        if name == "add":
            if native:
                return keys.add(op[1])
            if op[1] in keys:
                return False
            keys.add(op[1])
            return True
        if name == "discard":
            if native:
                return keys.discard(op[1])
            if op[1] in keys:
                keys.remove(op[1])
                return True
            return False
        if name == "remove":
            keys.remove(op[1])
            return None
        if name == "bisect":
            return keys.bisect_left(op[1]), keys.bisect_right(op[1])
        if name == "contains":
            return op[1] in keys
        if name == "find_member":
            return keys.find_member(op[1]) if native else _find_member(keys, op[1])
        if name == "pop":
            return keys.pop() if op[1] is None else keys.pop(op[1])
        if name == "item":
            return keys[op[1]]
        if name == "slice":
            return keys[op[1]:op[2]:op[3]]
        if name == "del_item":
            del keys[op[1]]
            return None
        if name == "del_slice":
            del keys[op[1]:op[2]]
            return None
        if name == "bulk":
            added = 0
            for number in range(op[1], op[1] + op[2] * op[3], op[3]):
                key = b"b" + number.to_bytes(3, "big")
                if native:
                    added += keys.add(key)
                elif key not in keys:
                    keys.add(key)
                    added += 1
            return added
        if name == "check":
            return len(keys), list(keys), list(reversed(keys))
    except (ValueError, IndexError) as err:
        return type(err).__name__
    raise AssertionError(op)


def _check_layout(keys: Any) -> None:
    counts = keys.leaf_counts()
    assert sum(counts) == len(keys)
    assert all(count > 0 for count in counts)


@settings(max_examples=300, deadline=None)
@given(_OPS)
def test_operations_match_sorted_list(ops: list[tuple[Any, ...]]) -> None:
    keys = _sorted_keys()
    model = SortedList()
    for op in ops:
        assert _apply(keys, True, op) == _apply(model, False, op), op
        _check_layout(keys)
    assert list(keys) == list(model)
    assert len(keys) == len(model)


@settings(max_examples=100, deadline=None)
@given(st.lists(_KEYS, max_size=400), st.booleans())
def test_built_from_a_list(items: list[bytes], presorted: bool) -> None:
    distinct = sorted(set(items)) if presorted else list(dict.fromkeys(items))
    keys = _sorted_keys(distinct)
    assert list(keys) == sorted(distinct)
    _check_layout(keys)
    for key in items:
        assert keys.bisect_left(key) == SortedList(distinct).bisect_left(key)


def test_built_from_duplicates_or_not_bytes_fails() -> None:
    with pytest.raises(ValueError):
        _sorted_keys([b"b", b"a", b"b"])
    with pytest.raises(TypeError):
        _sorted_keys([b"a", "b"])
    keys = _sorted_keys()
    with pytest.raises(TypeError):
        keys.add("a")
    with pytest.raises(TypeError):
        keys.bisect_left(1)


def test_long_random_run_against_sorted_list() -> None:
    """Tens of thousands of keys (hundreds of leaves), adds and removes anywhere, pops at both
    ends and range deletions, as sorted sets see them; the two compared as they go."""
    rng = random.Random(20240611)
    keys = _sorted_keys()
    model = SortedList()
    most_leaves = 0
    for step in range(120_000):
        roll = rng.random()
        key = rng.randrange(60_000).to_bytes(8, "big") + b"m" * rng.randrange(40)
        if roll < 0.55:
            assert keys.add(key) == (key not in model)
            if key not in model:
                model.add(key)
        elif roll < 0.8:
            found = key in model
            assert keys.discard(key) == found
            if found:
                model.remove(key)
        elif roll < 0.9 and model:
            index = rng.choice((0, -1, rng.randrange(len(model))))
            assert keys.pop(index) == model.pop(index)
        elif roll < 0.902 and model:
            start = rng.randrange(len(model))
            stop = start + rng.randrange(300)
            del keys[start:stop]
            del model[start:stop]
        elif model:
            assert keys.bisect_left(key) == model.bisect_left(key)
            assert keys.bisect_right(key) == model.bisect_right(key)
            high = rng.randrange(60_000).to_bytes(8, "big")  # below ``key`` half the time
            assert keys.span(key, high) == (model.bisect_left(key), max(
                model.bisect_left(key), model.bisect_left(high)))
            start = rng.randrange(len(model))
            assert keys[start:start + 10] == model[start:start + 10]
            assert keys[-start - 1] == model[-start - 1]
        if step % 10_000 == 0:
            assert list(keys) == list(model)
            _check_layout(keys)
            most_leaves = max(most_leaves, len(keys.leaf_counts()))
    assert list(keys) == list(model)
    assert most_leaves > 100  # ranks went through the count tree


def test_ascending_adds_fill_leaves() -> None:
    """Keys added past the last one (timestamps as scores) start new leaves and leave the
    full ones full."""
    keys = _sorted_keys()
    for number in range(10_000):
        keys.add(number.to_bytes(8, "big"))
    counts = keys.leaf_counts()
    assert all(count == 128 for count in counts[:-1])
    for number in range(10_000):  # and popped from the low end, as a queue does
        assert keys.pop(0) == number.to_bytes(8, "big")
    assert len(keys) == 0 and keys.leaf_counts() == []


def test_changes_during_iteration_are_safe() -> None:
    keys = _sorted_keys(number.to_bytes(4, "big") for number in range(1000))
    seen = []
    for key in keys:  # a list's iterator goes on by position: so does this one
        seen.append(key)
        if len(seen) == 10:
            del keys[:500]
    assert seen == [number.to_bytes(4, "big") for number in [*range(10), *range(510, 1000)]]
    backwards = reversed(keys)
    next(backwards)
    del keys[:]
    assert list(backwards) == []


def test_size_counts_the_packed_keys() -> None:
    """__sizeof__ is what MEMORY USAGE reads: the leaves' bytes, a little over the keys'."""
    members = [b"%08d" % number + b"member" for number in range(10_000)]
    keys = _sorted_keys(members)
    payload = sum(map(len, members))
    assert payload < sys.getsizeof(keys) < payload * 1.5
    assert sys.getsizeof(_sorted_keys()) < 100


def test_indexed_member_lookup_against_a_dict() -> None:
    """An indexed SortedKeys (a skiplist's keys: a score prefix and a member, each member
    once) finds a member's key through its hash index; a dict member -> key is the model,
    through adds, moves, removals, pops at both ends and range deletions that grow and shrink
    the index. Few distinct scores, so members often share a prefix."""
    rng = random.Random(20261128)
    keys = _sorted_keys_indexed()
    model = SortedList()
    owner: dict[bytes, bytes] = {}
    for step in range(60_000):
        roll = rng.random()
        member = b"m%d" % rng.randrange(8000)
        if roll < 0.5:
            # a prefix ending in zeros half the time (stored without them)
            key = (rng.randrange(50) << rng.choice((0, 40))).to_bytes(8, "big") + member
            old = owner.get(member)
            if old is not None:
                keys.remove(old)
                model.remove(old)
            assert keys.add(key)
            model.add(key)
            owner[member] = key
        elif roll < 0.7:
            old = owner.pop(member, None)
            assert keys.discard(old if old is not None else b"\0" * 8 + member) == (
                old is not None)
            if old is not None:
                model.remove(old)
        elif roll < 0.8 and model:
            key = keys.pop(rng.choice((0, -1, rng.randrange(len(model)))))
            model.remove(key)
            del owner[key[8:]]
        elif roll < 0.803 and model:
            start = rng.randrange(len(model))
            stop = start + rng.randrange(3000)
            for key in model[start:stop]:
                del owner[key[8:]]
            del keys[start:stop]
            del model[start:stop]
        assert keys.find_member(member) == owner.get(member)
        if step % 5000 == 0:
            assert list(keys) == list(model)
            assert all(keys.find_member(key[8:]) == key for key in model)
    assert all(keys.find_member(b"m%d" % number) == owner.get(b"m%d" % number)
               for number in range(8000))
    del keys[:]
    assert keys.find_member(b"m1") is None
    keys.add(b"\0" * 8 + b"m1")
    assert keys.find_member(b"m1") == b"\0" * 8 + b"m1"


def test_index_turned_on_later() -> None:
    """A listpack converting: the keys already held are found once indexing starts."""
    keys = _sorted_keys([number.to_bytes(8, "big") + b"m%d" % number for number in range(300)])
    keys.index_members()
    assert keys.find_member(b"m7") == (7).to_bytes(8, "big") + b"m7"
    assert keys.find_member(b"m300") is None
    size = sys.getsizeof(keys)
    keys.add((5).to_bytes(8, "big") + b"new")
    assert keys.find_member(b"new") == (5).to_bytes(8, "big") + b"new"
    assert sys.getsizeof(keys) >= size


def _sorted_keys_indexed() -> Any:
    return native_module("brook.types._sorted_keys").SortedKeys((), indexed=True)


def test_zero_ended_prefixes_and_long_keys_against_sorted_list() -> None:
    """Keys whose first eight bytes end in zeros (a small integer score's prefix: the leaves
    drop those zeros) beside keys that differ only there, keys of exactly eight bytes, short
    keys and long ones (a leaf of their own, splitting the leaf they land in)."""
    rng = random.Random(7)
    keys = _sorted_keys()
    model = SortedList()
    prefixes = [bytes([a, b]) + bytes(6) for a in (0, 1, 0x80, 0xff) for b in (0, 1)]
    prefixes += [b"\x01" * (8 - zeros) + bytes(zeros) for zeros in range(8)]
    for step in range(40_000):
        roll = rng.random()
        shape = rng.random()
        if shape < 0.7:
            key = rng.choice(prefixes) + b"m" * rng.randrange(4) + bytes(rng.randrange(2))
        elif shape < 0.8:
            key = rng.choice(prefixes)[:rng.randrange(9)]
        else:
            key = rng.choice(prefixes) + bytes([rng.randrange(3)]) * rng.randrange(900, 3000)
        if roll < 0.55:
            assert keys.add(key) == (key not in model)
            if key not in model:
                model.add(key)
        elif roll < 0.8:
            found = key in model
            assert keys.discard(key) == found
            if found:
                model.remove(key)
        elif roll < 0.85 and model:
            index = rng.randrange(len(model))
            assert keys.pop(index) == model.pop(index)
        else:
            assert keys.bisect_left(key) == model.bisect_left(key)
            assert keys.bisect_right(key) == model.bisect_right(key)
            assert (key in keys) == (key in model)
            skip = rng.choice((8, 3, 0))
            member = key[skip:]
            wanted = next((k for k in model
                           if len(k) == len(member) + skip and k[skip:] == member), None)
            assert keys.find_member(member, skip) == wanted
        if step % 4000 == 0:
            assert list(keys) == list(model)
            _check_layout(keys)
    assert list(keys) == list(model) and list(reversed(keys)) == list(reversed(model))
