"""A set's members: the C MemberSet against its Python twin, and SSCAN's guarantees on both.

Each test runs a sequence of operations on the C container (brook/types/_member_set.c) and on
the twin (brook/types/member_set.py) and requires the same answers: additions, removals,
membership, errors, the members in order where the form defines one (an intset's numeric
order, a listpack's insertion order; a hash table's as a set), and the members a complete
SSCAN walk returns. Random picks are compared by membership: the member one side picked is then
removed from the other too.
"""

from __future__ import annotations

import sys
from typing import Any

import hiredis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brook.protocol import resp
from brook.types.member_set import HASHTABLE, INTSET, LISTPACK, MemberSet
from tests.conftest import native_module


def _c_set(kind: int = INTSET, members: Any = ()) -> Any:
    return native_module("brook.types._member_set").MemberSet(kind, members)


# Integers near the intset's edges and members of every length class: kept in a hash table's
# slot (up to 7 bytes), in a block with a one-byte length, and with a five-byte one (255 up).
_INTEGERS = st.one_of(
    st.integers(min_value=-300, max_value=300),
    st.sampled_from([2**63 - 1, -(2**63), 2**31, -(2**31) - 1, 10**18]),
).map(lambda n: b"%d" % n)
_NOT_INTEGERS = st.sampled_from([b"-0", b"007", b"+1", b"1 ", b"", b"9223372036854775808",
                                 b"-9223372036854775809", b"1e3", b"-", b"0x10"])
_MEMBERS = st.one_of(
    _INTEGERS,
    _NOT_INTEGERS,
    st.binary(min_size=0, max_size=3).map(lambda tail: b"m" + tail),
    st.binary(min_size=6, max_size=12),
    st.binary(min_size=250, max_size=260),
)
_KINDS = st.sampled_from([INTSET, LISTPACK, HASHTABLE])
_OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), _MEMBERS),
    st.tuples(st.just("add_many"), st.lists(_MEMBERS, max_size=40)),
    st.tuples(st.just("discard"), _MEMBERS),
    st.tuples(st.just("contains"), _MEMBERS),
    st.tuples(st.just("convert"), _KINDS),
    st.tuples(st.just("pop")),
    st.tuples(st.just("random")),
    st.tuples(st.just("width")),
    st.tuples(st.just("copy")),
), max_size=80)


def _apply(members: Any, op: tuple[Any, ...]) -> object:
    """One operation; its answer (an error's type counts as the answer)."""
    name = op[0]
    try:
        if name == "add":
            return members.add(op[1])
        if name == "add_many":
            return [members.add(member) for member in op[1]]
        if name == "discard":
            return members.discard(op[1])
        if name == "contains":
            return op[1] in members
        if name == "convert":
            members.convert(op[1])
            return members.kind
        if name == "width":
            return members.integer_width()
    except (ValueError, KeyError) as err:
        return type(err).__name__
    raise AssertionError(op)


def _same(c: Any, twin: MemberSet) -> None:
    assert c.kind == twin.kind
    assert len(c) == len(twin)
    assert c.all_integers() == twin.all_integers()
    if twin.kind == HASHTABLE:
        assert sorted(c.members()) == sorted(twin.members())
    else:
        assert c.members() == twin.members() == list(c)


def _full_walk(members: Any, count: int = 3) -> list[bytes]:
    found: list[bytes] = []
    cursor = members.walk(0, count, found)
    while cursor:
        cursor = members.walk(cursor, count, found)
    return found


@settings(max_examples=400, deadline=None)
@given(_KINDS, _OPS)
def test_c_member_set_matches_its_twin(kind: int, ops: list[tuple[Any, ...]]) -> None:
    c, twin = _c_set(kind), MemberSet(kind)
    for op in ops:
        if op[0] in ("pop", "random"):
            if not len(twin):
                with pytest.raises(KeyError):
                    c.pop_random() if op[0] == "pop" else c.random_member()
                continue
            picked = c.pop_random() if op[0] == "pop" else c.random_member()
            assert picked in twin
            if op[0] == "pop":
                assert picked not in c
                assert twin.discard(picked)
        elif op[0] == "copy":
            c, twin = c.copy(), twin.copy()
        else:
            assert _apply(c, op) == _apply(twin, op), op
        _same(c, twin)
    assert sorted(_full_walk(c)) == sorted(_full_walk(twin)) == sorted(twin.members())


def _parsed(reply: bytes) -> object:
    reader = hiredis.Reader()
    reader.feed(reply)
    return reader.gets()


@settings(max_examples=300, deadline=None)
@given(_KINDS, st.lists(_MEMBERS, max_size=50), st.lists(st.tuples(
    _KINDS, st.lists(_MEMBERS, max_size=50)), max_size=3), st.booleans(),
    st.integers(min_value=0, max_value=5), st.sampled_from([2, 3]))
def test_select_and_reply_match_the_twin(kind: int, members: list[bytes],
                                         others: list[tuple[int, list[bytes]]], present: bool,
                                         limit: int, proto: int) -> None:
    """SINTER/SDIFF's selection against every form of the others, and SMEMBERS's reply
    against resp.set_of_bulks."""
    if kind == INTSET:
        members = [m for m in members if MemberSet(LISTPACK, [m]).all_integers()]
    others = [(k, o if k != INTSET else [m for m in o if MemberSet(LISTPACK, [m]).all_integers()])
              for k, o in others]
    c, twin = _c_set(kind, members), MemberSet(kind, members)
    c_others = [_c_set(k, o) for k, o in others]
    twin_others = [MemberSet(k, o) for k, o in others]
    chosen = c.select(c_others, present, limit)
    expected = twin.select(twin_others, present, limit)
    if kind != HASHTABLE:
        assert chosen == expected
        assert c.reply(proto) == resp.set_of_bulks(twin.members(), proto)
    else:  # the table's own order: the same members when all are taken, as many otherwise
        assert len(chosen) == len(expected)
        if not limit:
            assert sorted(chosen) == sorted(expected)
        assert c.reply(proto)[:1] == (b"*" if proto == 2 else b"~")
        assert sorted(_parsed(c.reply(proto))) == sorted(twin.members())
    assert all(((m in c) and all((m in o) == present for o in c_others)) for m in chosen)


@given(st.lists(_MEMBERS, max_size=60), _KINDS)
def test_construction_adds_in_order(members: list[bytes], kind: int) -> None:
    def build(factory: Any) -> object:
        try:
            return factory(kind, members)
        except ValueError:
            return "ValueError"

    c, twin = build(_c_set), build(MemberSet)
    if twin == "ValueError":
        assert c == "ValueError"
    else:
        _same(c, twin)  # type: ignore[arg-type]


@pytest.mark.parametrize("factory", [_c_set, MemberSet], ids=["c", "twin"])
def test_errors_leave_the_set_unchanged(factory: Any) -> None:
    members = factory(INTSET, [b"1", b"2"])
    with pytest.raises(ValueError):
        members.add(b"x")
    with pytest.raises(TypeError):
        members.add("1")
    with pytest.raises(ValueError):
        factory(7)
    listpack = factory(LISTPACK, [b"1", b"x"])
    with pytest.raises(ValueError):
        listpack.convert(INTSET)
    assert members.members() == [b"1", b"2"] and listpack.members() == [b"1", b"x"]
    assert listpack.kind == LISTPACK and "1" not in listpack and 1 not in members


@pytest.mark.parametrize("factory", [_c_set, MemberSet], ids=["c", "twin"])
def test_intset_orders_numerically_and_keeps_it_in_a_listpack(factory: Any) -> None:
    members = factory(INTSET, [b"10", b"-5", b"9223372036854775807", b"0", b"-9223372036854775808"])
    ordered = [b"-9223372036854775808", b"-5", b"0", b"10", b"9223372036854775807"]
    assert members.members() == ordered
    assert members.integer_width() == 20
    members.convert(LISTPACK)
    members.add(b"1")
    assert members.members() == [*ordered, b"1"]


@pytest.mark.parametrize("factory", [_c_set, MemberSet], ids=["c", "twin"])
def test_scan_returns_every_member_present_throughout(factory: Any) -> None:
    """Redis's guarantee across writes and resizes (growing and shrinking) mid-iteration."""
    members = factory(HASHTABLE, [b"member:%d" % i for i in range(500)] + [b"%d" % i for i in range(300)])
    stable = {b"member:%d" % i for i in range(0, 500, 2)} | {b"%d" % i for i in range(0, 300, 3)}
    found: list[bytes] = []
    cursor = members.walk(0, 10, found)
    step = 0
    while cursor:
        step += 1
        if step == 5:
            for i in range(500, 3000):
                members.add(b"member:%d" % i)
        if step == 15:
            for i in range(1, 500, 2):
                members.discard(b"member:%d" % i)
            for i in range(500, 3000):
                members.discard(b"member:%d" % i)
        cursor = members.walk(cursor, 10, found)
    assert stable <= set(found)


def test_random_picks_are_uniform_over_members() -> None:
    """The C table picks a random occupied slot: every member about equally often."""
    members = _c_set(HASHTABLE, [b"m%d" % i for i in range(200)])
    counts: dict[bytes, int] = {}
    for _ in range(40_000):
        member = members.random_member()
        counts[member] = counts.get(member, 0) + 1
    assert len(counts) == 200
    assert max(counts.values()) < 2 * 200 and min(counts.values()) > 200 // 2


def test_sizeof_counts_the_members() -> None:
    """MEMORY USAGE reads the C container's size: its table and each long member's block."""
    small = _c_set(HASHTABLE, [b"%d" % i for i in range(1000)])  # kept in the slots
    large = _c_set(HASHTABLE, [b"member-%09d" % i for i in range(1000)])
    assert 8 * 1000 < sys.getsizeof(small) < 8 * 4 * 1000
    assert sys.getsizeof(large) >= sys.getsizeof(small) + 1000 * 16
    packed = _c_set(LISTPACK, [b"x" * 10] + [b"y%d" % i for i in range(9)])
    assert sys.getsizeof(packed) < 48 + 16 + 11 * 10
