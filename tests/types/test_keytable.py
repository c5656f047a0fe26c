"""The keyspace's table: the C KeyTable against its Python twin, and SCAN's guarantees on both.

Each test runs a sequence of operations on the C table (brook/types/_keytable.c) and on the
twin (brook/types/keytable.py) and requires the same answers: values, access fields, lengths,
errors, and the set of keys a complete SCAN returns. LFU increments are random, so the
comparisons run LFU with ``lfu-log-factor 0`` (every access counts), where both are exact.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brook.cluster.slots import key_slot
from brook.types.keytable import (
    LFU_INIT_VAL,
    KeyTable,
    idle_seconds,
    lfu_decayed,
    lfu_minutes,
)
from tests.conftest import native_module


def _c_table() -> Any:
    return native_module("brook.types._keytable").KeyTable()


# Keys from a small alphabet, so that operations meet the same keys again.
_KEYS = st.binary(min_size=0, max_size=3).map(lambda tail: b"k" + tail)
_VALUES = st.one_of(
    st.binary(max_size=44),  # kept in the entry
    st.binary(min_size=45, max_size=80),  # referenced
    st.binary(max_size=10).map(bytearray),  # a string changed in place: referenced
    st.lists(st.integers(), max_size=3),  # any other value type
)
_CLOCKS = st.integers(min_value=0, max_value=2**40)
_OPS = st.lists(st.one_of(
    st.tuples(st.just("set"), _KEYS, _VALUES),
    st.tuples(st.just("del"), _KEYS),
    st.tuples(st.just("get"), _KEYS),
    st.tuples(st.just("fetch"), _KEYS),
    st.tuples(st.just("touch"), _KEYS),
    st.tuples(st.just("set_access"), _KEYS, st.integers(min_value=0, max_value=2**24 - 1)),
    st.tuples(st.just("clock"), _CLOCKS),
    st.tuples(st.just("configure"), st.booleans(), st.integers(min_value=0, max_value=5)),
), max_size=120)


def _apply(table: Any, op: tuple[Any, ...]) -> object:
    """One operation; its answer (an error's type counts as the answer)."""
    name = op[0]
    try:
        if name == "set":
            table[op[1]] = op[2]
            return None
        if name == "del":
            del table[op[1]]
            return None
        if name == "get":
            return (table.get(op[1]), table.get(op[1], "default"), op[1] in table)
        if name == "fetch":
            return table.fetch(op[1])
        if name == "touch":
            return table.touch(op[1])
        if name == "set_access":
            return table.set_access(op[1], op[2])
        if name == "clock":
            table.clock = op[1]
            return None
        if name == "configure":
            return table.configure(op[1], 0, op[2])  # log factor 0: LFU increments are exact
    except KeyError as err:
        return ("KeyError", err.args)
    raise AssertionError(op)


def _state(table: Any) -> dict[bytes, tuple[object, int | None]]:
    return {key: (table[key], table.access(key)) for key in table}


def _full_scan(table: Any, count: int) -> list[bytes]:
    found: list[bytes] = []
    cursor = table.walk(0, count, found)
    while cursor:
        cursor = table.walk(cursor, count, found)
    return found


@settings(max_examples=300, deadline=None)
@given(_OPS, st.integers(min_value=1, max_value=20))
def test_the_c_table_matches_its_python_twin(ops: list[tuple[Any, ...]], count: int) -> None:
    native, twin = _c_table(), KeyTable()
    for op in ops:
        assert _apply(native, op) == _apply(twin, op), op
        assert len(native) == len(twin)
    assert _state(native) == _state(twin)
    assert sorted(native.keys()) == sorted(twin.keys()) == sorted(native)
    assert native.lfu == twin.lfu
    found = _full_scan(native, count)
    assert sorted(set(found)) == sorted(twin.keys())
    assert len(found) == len(set(found))  # no resize during the walk: each key once
    assert sorted(set(_full_scan(twin, count))) == sorted(twin.keys())
    if len(native):
        assert native.random_key() in twin
    else:
        assert native.random_key() is None is twin.random_key()


@pytest.mark.parametrize("make", [_c_table, KeyTable], ids=["c", "twin"])
@settings(max_examples=100, deadline=None)
@given(initial=st.integers(min_value=0, max_value=300),
       steps=st.lists(st.tuples(st.integers(min_value=-150, max_value=150),
                                st.integers(min_value=1, max_value=30)), max_size=30))
def test_scan_returns_every_key_present_throughout(make: Any, initial: int,
                                                    steps: list[tuple[int, int]]) -> None:
    """Redis's SCAN guarantee across the table growing and shrinking between calls: a key
    present for the whole iteration is returned; nothing is returned that was never there."""
    table = make()
    for number in range(initial):
        table[b"stay:%d" % number] = b"v"
    stay = set(table.keys())
    ever: set[bytes] = set(stay)
    churn = 0
    found: list[bytes] = []
    cursor = table.walk(0, 10, found)
    for change, count in steps:
        if not cursor:
            break
        if change > 0:  # grow: new keys may or may not be returned
            for _ in range(change):
                key = b"new:%d" % churn
                churn += 1
                table[key] = b"v"
                ever.add(key)
        else:  # shrink: delete keys that were not there throughout
            for key in [key for key in table if key not in stay][:-change]:
                del table[key]
        cursor = table.walk(cursor, count, found)
    while cursor:
        cursor = table.walk(cursor, 10, found)
    assert stay <= set(found)
    assert set(found) <= ever


@pytest.mark.parametrize("make", [_c_table, KeyTable], ids=["c", "twin"])
def test_growing_and_shrinking_keeps_every_key(make: Any) -> None:
    table = make()
    for number in range(20_000):
        table[b"key:%d" % number] = b"%d" % number
    for number in range(0, 20_000, 2):
        del table[b"key:%d" % number]
    for number in range(19_000):
        if number % 2 == 0:
            assert b"key:%d" % number not in table
        else:
            assert table[b"key:%d" % number] == b"%d" % number
    for number in range(1, 19_999, 2):
        del table[b"key:%d" % number]
    assert sorted(table.keys()) == [b"key:19999"]
    assert table.random_key() == b"key:19999"


def test_values_are_kept_as_stored() -> None:
    table = _c_table()
    mutable = bytearray(b"abc")
    table[b"a"] = mutable
    mutable += b"def"  # APPEND changes the stored bytearray in place
    assert table[b"a"] == bytearray(b"abcdef") and table[b"a"] is mutable
    big = b"x" * 45
    table[b"b"] = big
    assert table[b"b"] is big  # over the embedding limit: the object itself
    table[b"c"] = b"x" * 44
    assert table[b"c"] == b"x" * 44 and type(table[b"c"]) is bytes
    with pytest.raises(TypeError):
        table["text"] = b"v"  # keys are bytes
    with pytest.raises(KeyError):
        table[b"missing"]  # noqa: B018


def test_the_c_table_releases_values_and_cycles() -> None:
    table = _c_table()

    class Value:
        pass

    value = Value()
    probe = weakref.ref(value)
    table[b"v"] = value
    del value
    assert probe() is not None
    table[b"v"] = b"replaced"
    assert probe() is None
    cycle = Value()
    cycle.table = table  # type: ignore[attr-defined]
    table[b"cycle"] = cycle
    cycle_probe = weakref.ref(cycle)
    del table, cycle
    gc.collect()
    assert cycle_probe() is None  # the collector sees through the table


def test_lru_fields_are_the_clock_and_idle_time_wraps() -> None:
    table = _c_table()
    table.clock = (1 << 24) + 100
    table[b"k"] = b"v"
    assert table.access(b"k") == 100
    table.clock = (1 << 24) + 160
    assert idle_seconds(table.access(b"k"), table.clock) == 60
    table.clock = 2 << 24  # past the 24-bit wrap: Redis's estimateObjectIdleTime
    assert idle_seconds(table.access(b"k"), table.clock) == (1 << 24) - 1 - 100


def test_lfu_fields_count_accesses_and_decay() -> None:
    for table in (_c_table(), KeyTable()):
        table.clock = 600
        table.configure(True, 0, 1)
        table[b"k"] = b"v"
        assert table.access(b"k") == lfu_minutes(600) << 8 | LFU_INIT_VAL
        for _ in range(3):
            table.fetch(b"k")
        table[b"k"] = b"w"  # a store is an access
        field = table.access(b"k")
        assert lfu_decayed(field, 600, 1) == LFU_INIT_VAL + 4
        assert lfu_decayed(field, 600 + 120, 1) == LFU_INIT_VAL + 2  # one per minute
        table.configure(False, 0, 1)  # back to LRU: fields start afresh
        assert table.access(b"k") == 600


# Keys with braces, so that hash tags (empty, unclosed, several) are among them.
_SLOT_KEYS = st.binary(max_size=6).map(lambda text: bytes(b"{}ab"[byte % 4] for byte in text))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _SLOT_KEYS), max_size=60),
       st.integers(min_value=0, max_value=60))
def test_both_tables_count_and_list_the_keys_of_each_hash_slot(
        ops: list[tuple[bool, bytes]], track_from: int) -> None:
    """Cluster mode's per-slot counts, kept by every insert and delete once tracking began
    (before or after some keys exist), and the C table's slot function is the one
    brook.cluster.slots computes."""
    for table in (_c_table(), KeyTable()):
        for step, (store, key) in enumerate(ops):
            if step == track_from:
                table.track_slots(key_slot)
            if store:
                table[key] = b"v"
            elif key in table:
                del table[key]
        table.track_slots(key_slot)
        expected: dict[int, list[bytes]] = {}
        for key in table:
            expected.setdefault(key_slot(key), []).append(key)
        for slot in {key_slot(key) for _store, key in ops} | {0, 16383}:
            keys = expected.get(slot, [])
            assert table.slot_count(slot) == len(keys)
            assert sorted(table.slot_keys(slot, -1)) == sorted(keys)
            assert len(table.slot_keys(slot, 1)) == min(1, len(keys))
        with pytest.raises(ValueError):
            table.slot_count(16384)
