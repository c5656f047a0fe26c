"""The column-wise pending table and ID set against plain dict / set models.

Chunks are made tiny (4 records before a split) so that random operations split, merge and drop
chunks all the time; after every step the table must hold exactly the model's records, in ID
order, and answer lookups and scans like it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brook.types import pel
from brook.types.pel import IdSet, PendingTable

IDS = st.integers(0, 60).map(lambda n: (n // 4) << 64 | n % 4)  # a few ms, a few seqs each

OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("put"), IDS, st.integers(0, 10**13), st.integers(0, 5),
              st.integers(-1, 3)),
    st.tuples(st.just("extend"), st.integers(1, 12), st.integers(0, 10**13), st.integers(0, 3)),
    st.tuples(st.just("remove"), IDS),
    st.tuples(st.just("remove_many"), st.lists(IDS, unique=True, max_size=20).map(sorted)),
    st.tuples(st.just("set"), IDS, st.integers(0, 10**13), st.integers(0, 5), st.integers(-1, 3)),
), max_size=80)


@pytest.fixture(autouse=True)
def tiny_chunks(monkeypatch):
    monkeypatch.setattr(pel, "_LOAD", 2)


def _check(table: PendingTable, model: dict[int, tuple[int, int, int]]) -> None:
    expected = [(i, *model[i]) for i in sorted(model)]
    assert len(table) == len(model)
    assert bool(table) == bool(model)
    assert list(table.records()) == expected
    assert list(table.ids()) == sorted(model)
    if model:
        assert table.first_id() == min(model)
        assert table.last_id() == max(model)
    for probe in range(0, 17 << 64, 1 << 62):  # starts between and on IDs
        assert list(table.records(probe)) == [r for r in expected if r[0] >= probe]
        assert table.ids_below(probe) == [r[0] for r in expected if r[0] < probe]
    _check_chunks(table)


def _check_chunks(table) -> None:
    for chunk in table._chunks:  # no empty chunk, none over the split size, columns aligned
        assert 0 < len(chunk[0]) <= 2 * pel._LOAD
        assert len({len(column) for column in chunk}) == 1
    assert table._heads == [chunk[0][0] for chunk in table._chunks]


@settings(max_examples=300, deadline=None)
@given(OPERATIONS)
def test_pending_table_matches_a_dict(operations):
    table = PendingTable()
    model: dict[int, tuple[int, int, int]] = {}
    for op in operations:
        if op[0] == "put":
            _, entry_id, time, count, owner = op
            table.put(entry_id, time, count, owner)
            model[entry_id] = (time, count, owner)
        elif op[0] == "extend":
            _, n, time, owner = op
            base = (max(model) >> 64) + 1 if model else 0
            new_ids = [(base + k // 3) << 64 | k % 3 for k in range(n)]
            table.append_new(new_ids, time, owner)
            model.update((i, (time, 1, owner)) for i in new_ids)
        elif op[0] == "remove":
            _, entry_id = op
            found = model.pop(entry_id, None)
            assert table.remove(entry_id) == (None if found is None else (entry_id, *found))
        elif op[0] == "remove_many":
            _, entry_ids = op
            expected = [(i, *model.pop(i)) for i in entry_ids if i in model]
            assert list(zip(*table.remove_many(entry_ids), strict=True)) == expected
        else:
            _, entry_id, time, count, owner = op
            if entry_id in model:
                table.put(entry_id, time, count, owner)
                model[entry_id] = (time, count, owner)
        for entry_id in {op[1]} if op[0] in ("put", "remove", "set") else ():
            assert (entry_id in table) == (entry_id in model)
            got = table.get(entry_id)
            assert got == ((entry_id, *model[entry_id]) if entry_id in model else None)
        _check(table, model)
    dup = table.copy()
    _check(dup, model)
    if model:
        dup.remove(min(model))
        _check(table, model)  # the copy is independent


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("add"), IDS),
    st.tuples(st.just("extend"), st.integers(1, 12)),
    st.tuples(st.just("remove"), IDS),
    st.tuples(st.just("remove_many"), st.lists(IDS, unique=True, max_size=20).map(sorted)),
), max_size=80))
def test_id_set_matches_a_set(operations):
    ids = IdSet()
    model: set[int] = set()
    for op, arg in operations:
        if op == "add":
            ids.add(arg)
            model.add(arg)
        elif op == "extend":
            base = (max(model) >> 64) + 1 if model else 0
            new_ids = [(base + k // 3) << 64 | k % 3 for k in range(arg)]
            ids.extend(new_ids)
            model.update(new_ids)
        elif op == "remove":
            assert ids.remove(arg) == ((arg,) if arg in model else None)
            model.discard(arg)
        else:
            assert ids.remove_many(arg) == [[i for i in arg if i in model]]
            model.difference_update(arg)
        assert list(ids) == sorted(model)
        assert len(ids) == len(model)
        for probe in range(0, 17 << 64, 1 << 62):
            assert (probe in ids) == (probe in model)
            assert list(ids.ids(probe)) == sorted(i for i in model if i >= probe)
        _check_chunks(ids)
    assert list(ids.copy()) == sorted(model)
