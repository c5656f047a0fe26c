"""Set commands, checked against real Redis (after Redis's tests/unit/type/set.tcl): replies,
errors, encodings and their conversions, random members, the multi-set operations and their
STORE forms, keyspace events, WATCH, and persistence of SPOP as what it removed.

Hash-table sets have no defined order (Redis's follows its hash function), so their members
are compared sorted; intsets (sorted) and listpacks (insertion order, Redis >= 7.2) are compared
in order.
"""

from __future__ import annotations

import contextlib
import random
import time
from pathlib import Path

import pytest
import redis

from tests.conftest import WRONGTYPE, _reset, error_of, run, start_brook
from tests.support.aof import AOF_ARGS, aof_commands, restart
from tests.support.events import both


def encoding(r: redis.Redis, key: str) -> bytes:
    return run(r, "OBJECT", "ENCODING", key)  # type: ignore[return-value]


def members(r: redis.Redis, key: str) -> list[bytes]:
    return sorted(run(r, "SMEMBERS", key))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Adding, removing, reading
# ---------------------------------------------------------------------------------------------


def test_sadd_scard_sismember_smismember(r):
    assert run(r, "SADD", "s", "a", "b", "a", "c") == 3
    assert run(r, "SADD", "s", "a", "d") == 1
    assert run(r, "SCARD", "s") == 4
    assert run(r, "SCARD", "nosuch") == 0
    assert run(r, "SISMEMBER", "s", "b") == 1
    assert run(r, "SISMEMBER", "s", "x") == 0
    assert run(r, "SISMEMBER", "nosuch", "x") == 0
    assert run(r, "SMISMEMBER", "s", "a", "x", "d") == [1, 0, 1]
    assert run(r, "SMISMEMBER", "nosuch", "a", "b") == [0, 0]
    assert members(r, "s") == [b"a", b"b", b"c", b"d"]
    assert run(r, "TYPE", "s") == b"set"


def test_binary_members(r):
    weird = b"\x00\r\n$3\r\n*1\xff"
    assert run(r, "SADD", "s", weird, b"") == 2
    assert run(r, "SISMEMBER", "s", weird) == 1
    assert members(r, "s") == [b"", weird]


def test_intset_members_come_back_sorted(r):
    run(r, "SADD", "s", 5, 3, 100, -1, 9223372036854775807, -9223372036854775808)
    assert encoding(r, "s") == b"intset"
    assert run(r, "SMEMBERS", "s") == [b"-9223372036854775808", b"-1", b"3", b"5", b"100",
                                       b"9223372036854775807"]


@pytest.mark.parametrize("member", ["+1", "01", "-0", " 1", "1.0", "9223372036854775808"])
def test_non_canonical_numbers_are_strings(r, member):
    run(r, "SADD", "s", member)
    assert encoding(r, "s") != b"intset"
    assert run(r, "SISMEMBER", "s", member) == 1
    assert run(r, "SISMEMBER", "s", member.strip().lstrip("+0") or "0") in (0, 1)


def test_srem_counts_and_deletes_the_emptied_set(r):
    run(r, "SADD", "s", "a", "b", "c")
    assert run(r, "SREM", "s", "a", "x", "a") == 1
    assert run(r, "SREM", "nosuch", "a") == 0
    assert run(r, "SREM", "s", "b", "c", "d") == 2
    assert run(r, "EXISTS", "s") == 0


def test_smembers_of_missing_key_and_resp3_shapes(raw):
    assert raw.call("SMEMBERS", "nosuch") == []
    raw.send(b"*1\r\n$5\r\nHELLO\r\n")  # still RESP2: HELLO without a version
    raw.read(b"\r\n", timeout=0.5)
    raw.call("HELLO", "3")
    raw.call("SADD", "s", "1", "2")
    raw.send(b"*2\r\n$8\r\nSMEMBERS\r\n$1\r\ns\r\n")
    assert raw.read(b"$1\r\n2\r\n") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    raw.send(b"*3\r\n$4\r\nSPOP\r\n$6\r\nnosuch\r\n$1\r\n3\r\n")
    assert raw.read(b"\r\n") == b"~0\r\n"
    raw.send(b"*2\r\n$4\r\nSPOP\r\n$6\r\nnosuch\r\n")
    assert raw.read(b"\r\n") == b"_\r\n"
    raw.send(b"*3\r\n$11\r\nSRANDMEMBER\r\n$1\r\ns\r\n$1\r\n2\r\n")
    assert raw.read(b"\r\n", timeout=0.5).startswith(b"*2\r\n")
    raw.send(b"*3\r\n$6\r\nSUNION\r\n$1\r\ns\r\n$6\r\nnosuch\r\n")
    assert raw.read(b"$1\r\n2\r\n") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"


def test_wrong_type_and_arity(r):
    r.set("str", "x")
    for args in (("SADD", "str", "a"), ("SREM", "str", "a"), ("SCARD", "str"),
                 ("SISMEMBER", "str", "a"), ("SMISMEMBER", "str", "a"), ("SMEMBERS", "str"),
                 ("SPOP", "str"), ("SPOP", "str", 2), ("SRANDMEMBER", "str"),
                 ("SRANDMEMBER", "str", 2), ("SINTER", "str"), ("SUNION", "str"),
                 ("SDIFF", "str"), ("SINTERCARD", 1, "str"), ("SSCAN", "str", 0)):
        assert error_of(r, *args) == WRONGTYPE, args
    for name, args in (("sadd", ("s",)), ("srem", ("s",)), ("smismember", ("s",)),
                       ("scard", ()), ("smove", ("a", "b")), ("sinterstore", ("d",))):
        assert error_of(r, name.upper(), *args) == (
            f"wrong number of arguments for '{name}' command")
    assert error_of(r, "SPOP", "s", 1, 2) == "syntax error"
    assert error_of(r, "SRANDMEMBER", "s", 1, 2) == "syntax error"


# ---------------------------------------------------------------------------------------------
# Encodings
# ---------------------------------------------------------------------------------------------


def test_intset_converts_to_hashtable_past_its_limit(r):
    r.config_set("set-max-intset-entries", 4)
    run(r, "SADD", "s", 1, 2, 3, 4)
    assert encoding(r, "s") == b"intset"
    run(r, "SADD", "s", 5)
    assert encoding(r, "s") == b"hashtable"
    run(r, "SREM", "s", 5, 4, 3)
    assert encoding(r, "s") == b"hashtable"  # never back
    with contextlib.suppress(redis.ResponseError):  # a 7.0 server has no such setting
        r.config_set("set-max-listpack-entries", 4)
    run(r, "SADD", "big", 1, 2, 3, 4, 5)  # more than the limits at once: converted first
    assert encoding(r, "big") == b"hashtable"


@pytest.mark.min_redis(7, 2)
def test_too_many_integers_for_an_intset_start_as_a_listpack(r):
    r.config_set("set-max-intset-entries", 2)
    run(r, "SADD", "s", 3, 1, 2)
    assert encoding(r, "s") == b"listpack"
    assert run(r, "SMEMBERS", "s") == [b"3", b"1", b"2"]
    run(r, "SADD", "t", 2, 1)
    run(r, "SADD", "t", 0)
    assert encoding(r, "t") == b"hashtable"  # an intset outgrown by integers skips listpack


@pytest.mark.min_redis(7, 2)
def test_listpack_sets_keep_insertion_order(r):
    run(r, "SADD", "s", "c", "a", "b", "1")
    assert encoding(r, "s") == b"listpack"
    assert run(r, "SMEMBERS", "s") == [b"c", b"a", b"b", b"1"]
    run(r, "SREM", "s", "a")
    run(r, "SADD", "s", "a")
    assert run(r, "SMEMBERS", "s") == [b"c", b"b", b"1", b"a"]
    assert run(r, "SSCAN", "s", 0) == [b"0", [b"c", b"b", b"1", b"a"]]


@pytest.mark.min_redis(7, 2)
def test_listpack_limits(r):
    r.config_set("set-max-listpack-entries", 3)
    run(r, "SADD", "s", "a", "b", "c")
    assert encoding(r, "s") == b"listpack"
    run(r, "SADD", "s", "d")
    assert encoding(r, "s") == b"hashtable"
    run(r, "SADD", "long", "x" * 64)
    assert encoding(r, "long") == b"listpack"
    run(r, "SADD", "long", "y" * 65)
    assert encoding(r, "long") == b"hashtable"
    run(r, "SADD", "many", "a", "b", "c", "d")
    assert encoding(r, "many") == b"hashtable"


@pytest.mark.min_redis(7, 2)
def test_intset_becomes_listpack_or_hashtable_for_a_string(r):
    run(r, "SADD", "s", 3, 1, 2)
    run(r, "SADD", "s", "a")
    assert encoding(r, "s") == b"listpack"
    assert run(r, "SMEMBERS", "s") == [b"1", b"2", b"3", b"a"]  # the intset's order, then a
    r.config_set("set-max-listpack-value", 5)
    run(r, "SADD", "wide", 123456)
    run(r, "SADD", "wide", "a")
    assert encoding(r, "wide") == b"hashtable"  # the intset's number would not fit
    r.config_set("set-max-listpack-value", 64)
    r.config_set("set-max-listpack-entries", 2)
    run(r, "SADD", "full", 1, 2)
    run(r, "SADD", "full", "a")
    assert encoding(r, "full") == b"hashtable"


def test_copy_keeps_encoding_and_is_independent(r):
    r.config_set("set-max-intset-entries", 2)
    run(r, "SADD", "s", 1, 2)
    run(r, "SADD", "s", 3)
    run(r, "SREM", "s", 3)
    assert run(r, "COPY", "s", "c") == 1
    assert encoding(r, "c") == b"hashtable"
    run(r, "SADD", "c", 9)
    assert members(r, "s") == [b"1", b"2"]


def test_debug_reload_keeps_members_and_encoding(r):
    run(r, "SADD", "ints", 7, -2)
    run(r, "SADD", "strs", "a", "b")
    run(r, "SADD", "big", *range(600))
    before = {key: (members(r, key), encoding(r, key)) for key in ("ints", "strs", "big")}
    assert run(r, "DEBUG", "RELOAD") == b"OK"
    assert {key: (members(r, key), encoding(r, key)) for key in before} == before


def test_a_shrunk_hashtable_set_is_an_intset_again_after_a_reload(r):
    """Redis's RDB loader re-encodes a hash-table set that now fits an intset, and so does
    Brook loading the RDB file it writes by default."""
    r.config_set("set-max-intset-entries", 2)
    run(r, "SADD", "ht", 1, 2)
    run(r, "SADD", "ht", 3)
    run(r, "SREM", "ht", 3)
    assert run(r, "DEBUG", "RELOAD") == b"OK"
    assert (members(r, "ht"), encoding(r, "ht")) == ([b"1", b"2"], b"intset")


@pytest.mark.brook_only
def test_brooks_own_snapshot_keeps_the_encoding_a_set_reached(r, set_config):
    """snapshot-format brook: the snapshot is exact, encodings included (docs/commands.md,
    known differences)."""
    set_config("snapshot-format", "brook")
    r.config_set("set-max-intset-entries", 2)
    run(r, "SADD", "ht", 1, 2)
    run(r, "SADD", "ht", 3)
    run(r, "SREM", "ht", 3)
    assert run(r, "DEBUG", "RELOAD") == b"OK"
    assert (members(r, "ht"), encoding(r, "ht")) == ([b"1", b"2"], b"hashtable")


def test_generic_key_commands_carry_sets(r):
    run(r, "SADD", "s", 2, 1)
    assert run(r, "RENAME", "s", "t") == b"OK"
    assert run(r, "SMEMBERS", "t") == [b"1", b"2"]
    assert run(r, "MOVE", "t", 1) == 1
    assert run(r, "SWAPDB", 0, 1) == b"OK"
    assert run(r, "SMEMBERS", "t") == [b"1", b"2"] and encoding(r, "t") == b"intset"
    assert run(r, "PEXPIRE", "t", 1) == 1
    time.sleep(0.01)
    assert run(r, "SCARD", "t") == 0 and run(r, "EXISTS", "t") == 0
    docs = run(r, "COMMAND", "DOCS", "SADD")
    assert docs[0] == b"sadd" and b"group" in docs[1]


# ---------------------------------------------------------------------------------------------
# SMOVE
# ---------------------------------------------------------------------------------------------


def test_smove(r):
    run(r, "SADD", "src", "a", "b")
    run(r, "SADD", "dst", "c")
    assert run(r, "SMOVE", "src", "dst", "a") == 1
    assert members(r, "src") == [b"b"] and members(r, "dst") == [b"a", b"c"]
    assert run(r, "SMOVE", "src", "dst", "x") == 0
    assert run(r, "SMOVE", "src", "new", "b") == 1
    assert run(r, "EXISTS", "src") == 0
    assert members(r, "new") == [b"b"]
    run(r, "SADD", "dst", "b")
    assert run(r, "SMOVE", "new", "dst", "b") == 1  # already there: still a move
    assert members(r, "dst") == [b"a", b"b", b"c"]


def test_smove_same_set_and_types(r):
    run(r, "SADD", "s", "a")
    assert run(r, "SMOVE", "s", "s", "a") == 1
    assert run(r, "SMOVE", "s", "s", "x") == 0
    r.set("str", "x")
    assert run(r, "SMOVE", "nosuch", "str", "a") == 0  # a missing source wins
    assert error_of(r, "SMOVE", "s", "str", "a") == WRONGTYPE
    assert error_of(r, "SMOVE", "str", "s", "a") == WRONGTYPE
    assert members(r, "s") == [b"a"]


def test_smove_converts_the_destination(r):
    run(r, "SADD", "ints", 1, 2)
    run(r, "SADD", "src", "a", "b")
    run(r, "SMOVE", "src", "ints", "a")
    assert encoding(r, "ints") != b"intset"
    run(r, "SMOVE", "ints", "fresh", 1)
    assert encoding(r, "fresh") == b"intset"


# ---------------------------------------------------------------------------------------------
# SPOP and SRANDMEMBER
# ---------------------------------------------------------------------------------------------


def test_spop_single(r):
    run(r, "SADD", "s", "a", "b", "c")
    popped = {run(r, "SPOP", "s") for _ in range(3)}
    assert popped == {b"a", b"b", b"c"}
    assert run(r, "EXISTS", "s") == 0
    assert run(r, "SPOP", "s") is None


@pytest.mark.parametrize("values", [[str(i) for i in range(200)],
                                    [f"m{i}" for i in range(200)],
                                    [str(i) for i in range(40)]])
@pytest.mark.parametrize("count", [1, 3, 30, 150, 199, 200, 500])
def test_spop_count_takes_distinct_members(r, values, count):
    run(r, "SADD", "s", *values)
    popped = run(r, "SPOP", "s", count)
    assert len(popped) == min(count, len(values)) == len(set(popped))
    left = run(r, "SMEMBERS", "s")
    assert sorted(popped + left) == sorted(v.encode() for v in values)
    assert run(r, "SCARD", "s") == len(values) - len(popped)


def test_spop_count_errors_and_zero(r):
    run(r, "SADD", "s", "a")
    assert run(r, "SPOP", "s", 0) == []
    assert run(r, "SPOP", "nosuch", 3) == []
    assert error_of(r, "SPOP", "s", -1) == "value is out of range, must be positive"
    assert error_of(r, "SPOP", "s", "x") == "value is out of range, must be positive"
    assert members(r, "s") == [b"a"]


@pytest.mark.min_redis(7, 2)
def test_spop_taking_most_of_a_set_rebuilds_it_compact(r):
    run(r, "SADD", "strs", *(f"m{i}" for i in range(1000)))
    assert encoding(r, "strs") == b"hashtable"
    run(r, "SPOP", "strs", 900)
    assert encoding(r, "strs") == b"listpack"
    run(r, "SADD", "ints", *range(300))
    run(r, "SPOP", "ints", 290)
    assert encoding(r, "ints") == b"intset"
    assert run(r, "SMEMBERS", "ints") == sorted(run(r, "SMEMBERS", "ints"), key=int)


def test_srandmember(r):
    assert run(r, "SRANDMEMBER", "nosuch") is None
    assert run(r, "SRANDMEMBER", "nosuch", 5) == []
    values = [f"m{i}" for i in range(100)]
    run(r, "SADD", "s", *values)
    assert run(r, "SRANDMEMBER", "s").decode() in values
    assert run(r, "SRANDMEMBER", "s", 0) == []
    for count in (1, 5, 40, 99):
        got = run(r, "SRANDMEMBER", "s", count)
        assert len(got) == count == len(set(got)) and set(got) <= {v.encode() for v in values}
    assert sorted(run(r, "SRANDMEMBER", "s", 1000)) == sorted(v.encode() for v in values)
    repeated = run(r, "SRANDMEMBER", "s", -500)
    assert len(repeated) == 500 and len(set(repeated)) < 500
    assert run(r, "SCARD", "s") == 100


def test_srandmember_of_an_intset_whole_is_in_order(r):
    run(r, "SADD", "s", 3, 1, 2)
    assert run(r, "SRANDMEMBER", "s", 10) == [b"1", b"2", b"3"]
    assert sorted(run(r, "SRANDMEMBER", "s", -10)) != []


def test_srandmember_errors(r):
    run(r, "SADD", "s", "a")
    assert error_of(r, "SRANDMEMBER", "s", "x") == "value is not an integer or out of range"
    assert error_of(r, "SRANDMEMBER", "s", "-9223372036854775808") == (
        "value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")


def test_random_picks_of_a_large_set_cover_it(r):
    """Many picks from a hash-table set, with members removed and added between them,
    return only members and eventually all of them."""
    run(r, "SADD", "s", *(f"m{i}" for i in range(500)))
    seen: set[bytes] = set()
    for round_ in range(20):
        run(r, "SREM", "s", *(f"m{i}" for i in range(round_ * 5, round_ * 5 + 5)))
        run(r, "SADD", "s", f"n{round_}")
        current = set(run(r, "SMEMBERS", "s"))
        picks = run(r, "SRANDMEMBER", "s", -200)
        assert set(picks) <= current
        seen.update(picks)
    assert len(seen) > 300


# ---------------------------------------------------------------------------------------------
# SINTER, SUNION, SDIFF and their STORE forms; SINTERCARD
# ---------------------------------------------------------------------------------------------


def _three_sets(r: redis.Redis) -> None:
    run(r, "SADD", "a", "x", "y", "z", "1")
    run(r, "SADD", "b", "y", "z", "w", "1")
    run(r, "SADD", "c", "z", "1", "v")


def test_sinter_sunion_sdiff(r):
    _three_sets(r)
    assert sorted(run(r, "SINTER", "a", "b", "c")) == [b"1", b"z"]
    assert sorted(run(r, "SINTER", "a", "a")) == [b"1", b"x", b"y", b"z"]
    assert run(r, "SINTER", "a", "nosuch") == []
    assert sorted(run(r, "SUNION", "a", "b", "nosuch", "c")) == [
        b"1", b"v", b"w", b"x", b"y", b"z"]
    assert sorted(run(r, "SDIFF", "a", "b")) == [b"x"]
    assert sorted(run(r, "SDIFF", "a", "nosuch")) == [b"1", b"x", b"y", b"z"]
    assert run(r, "SDIFF", "a", "b", "a") == []
    assert run(r, "SDIFF", "nosuch", "a") == []


def test_integer_results_are_sorted(r):
    run(r, "SADD", "i1", 5, 1, 3, 7)
    run(r, "SADD", "i2", 3, 9, 1)
    assert run(r, "SINTER", "i1", "i2") == [b"1", b"3"]
    assert run(r, "SUNION", "i1", "i2") == [b"1", b"3", b"5", b"7", b"9"]
    assert run(r, "SDIFF", "i1", "i2") == [b"5", b"7"]


def test_wrong_type_anywhere_fails_even_after_a_missing_key(r):
    _three_sets(r)
    r.set("str", "x")
    for name in ("SINTER", "SUNION", "SDIFF"):
        assert error_of(r, name, "a", "nosuch", "str") == WRONGTYPE
        assert error_of(r, name + "STORE", "d", "a", "nosuch", "str") == WRONGTYPE
    assert error_of(r, "SINTERCARD", 3, "a", "nosuch", "str") == WRONGTYPE
    assert run(r, "EXISTS", "d") == 0


def test_store_forms(r):
    _three_sets(r)
    r.set("d", "old", ex=100)
    assert run(r, "SINTERSTORE", "d", "a", "b") == 3
    assert members(r, "d") == [b"1", b"y", b"z"]
    assert r.ttl("d") == -1
    assert run(r, "SUNIONSTORE", "d", "b", "c") == 5
    assert members(r, "d") == [b"1", b"v", b"w", b"y", b"z"]
    assert run(r, "SDIFFSTORE", "d", "a", "b", "c") == 1
    assert members(r, "d") == [b"x"]
    assert run(r, "SINTERSTORE", "d", "a", "nosuch") == 0
    assert run(r, "EXISTS", "d") == 0
    run(r, "SADD", "d", "q")
    assert run(r, "SDIFFSTORE", "d", "a", "a") == 0
    assert run(r, "EXISTS", "d") == 0
    assert run(r, "SUNIONSTORE", "a", "a", "c") == 5  # the destination is also a source
    assert members(r, "a") == [b"1", b"v", b"x", b"y", b"z"]


def test_stored_integers_are_an_intset(r):
    run(r, "SADD", "i1", 5, 1, 3)
    run(r, "SADD", "mixed", 3, 1, "a")
    assert run(r, "SINTERSTORE", "d", "mixed", "i1") == 2
    assert encoding(r, "d") == b"intset"
    assert run(r, "SMEMBERS", "d") == [b"1", b"3"]
    assert run(r, "SUNIONSTORE", "u", "i1") == 3
    assert encoding(r, "u") == b"intset"
    assert run(r, "SDIFFSTORE", "df", "mixed", "i1") == 1
    assert run(r, "SMEMBERS", "df") == [b"a"]


@pytest.mark.min_redis(7, 2)
def test_stored_strings_are_a_listpack(r):
    _three_sets(r)
    assert run(r, "SUNIONSTORE", "d", "a", "b") == 5
    assert encoding(r, "d") == b"listpack"
    assert run(r, "SINTERSTORE", "e", "a", "b") == 3
    assert encoding(r, "e") == b"listpack"


def test_sintercard(r):
    _three_sets(r)
    assert run(r, "SINTERCARD", 2, "a", "b") == 3
    assert run(r, "SINTERCARD", 3, "a", "b", "c") == 2
    assert run(r, "SINTERCARD", 2, "a", "b", "LIMIT", 2) == 2
    assert run(r, "SINTERCARD", 2, "a", "b", "limit", 0) == 3
    assert run(r, "SINTERCARD", 2, "a", "nosuch") == 0
    assert run(r, "SINTERCARD", 1, "a") == 4


def test_sintercard_errors(r):
    _three_sets(r)
    assert error_of(r, "SINTERCARD", 0, "a") == "numkeys should be greater than 0"
    assert error_of(r, "SINTERCARD", "x", "a") == "numkeys should be greater than 0"
    assert error_of(r, "SINTERCARD", 3, "a", "b") == (
        "Number of keys can't be greater than number of args")
    assert error_of(r, "SINTERCARD", 1, "a", "LIMIT", -1) == "LIMIT can't be negative"
    assert error_of(r, "SINTERCARD", 1, "a", "LIMIT") == "syntax error"
    assert error_of(r, "SINTERCARD", 1, "a", "FOO", 1) == "syntax error"
    assert run(r, "COMMAND", "GETKEYS", "SINTERCARD", 2, "a", "b", "LIMIT", 1) == [b"a", b"b"]


# ---------------------------------------------------------------------------------------------
# SSCAN
# ---------------------------------------------------------------------------------------------


def test_sscan_of_a_hashtable_set_visits_every_member(r):
    values = {f"m{i}".encode() for i in range(1000)}
    run(r, "SADD", "s", *values)
    seen: set[bytes] = set()
    cursor = b"0"
    for _ in range(10_000):
        cursor, found = run(r, "SSCAN", "s", cursor, "COUNT", 50)
        seen.update(found)
        if cursor == b"0":
            break
    assert seen == values
    cursor, found = b"0", []
    while True:
        cursor, page = run(r, "SSCAN", "s", cursor, "MATCH", "m99*")
        found += page
        if cursor == b"0":
            break
    assert sorted(found) == sorted(v for v in values if v.startswith(b"m99"))


def test_sscan_of_an_intset_is_whole(r):
    run(r, "SADD", "s", 3, 1, 2)
    assert run(r, "SSCAN", "s", 0, "COUNT", 1) == [b"0", [b"1", b"2", b"3"]]
    assert run(r, "SSCAN", "nosuch", 0) == [b"0", []]


# ---------------------------------------------------------------------------------------------
# Keyspace events, WATCH, dirty
# ---------------------------------------------------------------------------------------------


def test_keyspace_events(r, listen):  # noqa: F811
    collected = listen("KEA")
    run(r, "SADD", "s", "a", "b", "c")
    run(r, "SADD", "s", "a")  # nothing added: no event
    run(r, "SREM", "s", "a")
    run(r, "SMOVE", "s", "t", "b")
    run(r, "SPOP", "s")
    run(r, "SADD", "u", "x")
    run(r, "SINTERSTORE", "d", "u", "u")
    run(r, "SUNIONSTORE", "d", "u", "t")
    run(r, "SDIFFSTORE", "d", "u", "nosuch")
    run(r, "SDIFFSTORE", "d", "u", "u")
    run(r, "SADD", "p", "1", "2")
    run(r, "SPOP", "p", 5)
    assert collected() == [
        *both("s", "sadd"), *both("s", "srem"), *both("s", "srem"), *both("t", "sadd"),
        *both("s", "spop"), *both("s", "del"), *both("u", "sadd"),
        *both("d", "sinterstore"), *both("d", "sunionstore"), *both("d", "sdiffstore"),
        *both("d", "del"), *both("p", "sadd"), *both("p", "spop"), *both("p", "del")]


def test_watch_sees_real_changes_only(server):
    r = server.client()
    other = server.client()
    run(r, "SADD", "w", "a")
    for change, aborted in ((("SADD", "w", "a"), False), (("SREM", "w", "x"), False),
                            (("SADD", "w", "b"), True), (("SPOP", "w"), True)):
        pipe = r.pipeline()
        pipe.watch("w")
        other.execute_command(*change)
        pipe.multi()
        pipe.scard("w")
        if aborted:
            with pytest.raises(redis.WatchError):
                pipe.execute()
        else:
            assert pipe.execute() == [run(other, "SCARD", "w")]
    r.close()
    other.close()


def test_sets_inside_multi(r):
    pipe = r.pipeline(transaction=True)
    pipe.sadd("q", "a", "b").srem("q", "a").smembers("q")
    assert pipe.execute() == [2, 1, {b"b"}]


# ---------------------------------------------------------------------------------------------
# Persistence (Brook alone: its AOF)
# ---------------------------------------------------------------------------------------------


def test_spop_is_persisted_as_what_it_removed(tmp_path: Path):
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        r = proc.client()
        run(r, "SADD", "s", *(f"m{i}" for i in range(200)))
        run(r, "SPOP", "s")
        run(r, "SPOP", "s", 5)
        run(r, "SPOP", "s", 180)  # most of it: the rebuild path
        run(r, "SADD", "t", 1, 2)
        run(r, "SPOP", "t", 10)
        expected = sorted(run(r, "SMEMBERS", "s"))
        commands = aof_commands(tmp_path / "appendonly.aof")
        assert not [c for c in commands if c[0] == b"SPOP"]
        assert [b"DEL", b"t"] in commands
        r.close()
        proc = restart(proc, tmp_path)
        r = proc.client()
        assert sorted(run(r, "SMEMBERS", "s")) == expected
        assert run(r, "EXISTS", "t") == 0
        r.close()
    finally:
        proc.stop()


def test_rewrite_keeps_encodings(tmp_path: Path):
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        r = proc.client()
        r.config_set("set-max-intset-entries", 2)
        run(r, "SADD", "ht", 1, 2)
        run(r, "SADD", "ht", 3)
        run(r, "SREM", "ht", 3)
        r.config_set("set-max-intset-entries", 512)
        run(r, "SADD", "lp", 1, "a")
        run(r, "SREM", "lp", "a")
        run(r, "SADD", "big", *(f"m{i}" for i in range(300)))
        before = {k: (members(r, k), encoding(r, k)) for k in ("ht", "lp", "big")}
        assert before["lp"][1] == b"listpack"
        r.execute_command("BGREWRITEAOF")
        for _ in range(500):
            if r.info("persistence")["aof_rewrite_in_progress"] == 0:
                break
            time.sleep(0.01)
        assert [b"BROOK.RESTORE-ENCODING", b"lp", b"LISTPACK"] in aof_commands(
            tmp_path / "appendonly.aof")
        r.close()
        proc = restart(proc, tmp_path)
        r = proc.client()
        assert {k: (members(r, k), encoding(r, k)) for k in before} == before
        r.close()
    finally:
        proc.stop()


# ---------------------------------------------------------------------------------------------
# Differential: a random sequence of set commands on both servers
# ---------------------------------------------------------------------------------------------


def _random_command(rng: random.Random) -> tuple[object, ...]:
    keys = ("k1", "k2", "k3")
    universe = [*(str(i) for i in range(-3, 12)), "a", "b", "c", "dd", "x" * 70]
    key = rng.choice(keys)
    pick = lambda n: rng.sample(universe, n)  # noqa: E731
    choice = rng.randrange(9)
    if choice < 3:
        return ("SADD", key, *pick(rng.randint(1, 4)))
    if choice == 3:
        return ("SREM", key, *pick(rng.randint(1, 3)))
    if choice == 4:
        return ("SMOVE", key, rng.choice(keys), rng.choice(universe))
    if choice == 5:
        return (rng.choice(("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE")), key,
                *rng.sample(keys, rng.randint(1, 3)))
    if choice == 6:
        return ("SINTERCARD", 2, *rng.sample(keys, 2))
    if choice == 7:
        return ("SMISMEMBER", key, *pick(3))
    return ("SCARD", key)


def _state(r: redis.Redis) -> list[object]:
    """Each key's members (in order for an intset, whose order is defined) and encoding
    when it is an intset."""
    state: list[object] = []
    for key in ("k1", "k2", "k3"):
        value = run(r, "SMEMBERS", key)
        intset = bool(value) and encoding(r, key) == b"intset"
        state.append((key, value if intset else sorted(value), intset))  # type: ignore[arg-type]
    return state


def test_differential_random_commands(brook_process, redis_process):
    """The same random commands on Brook and on Redis: the replies, the contents and (for
    intsets) the order agree after every write."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    clients = []
    for proc in (brook_process, redis_process):
        _reset(proc)
        client = proc.client()
        client.config_set("set-max-intset-entries", 8)
        clients.append(client)
    rng = random.Random(1717)
    for step in range(600):
        args = _random_command(rng)
        replies = []
        for client in clients:
            try:
                reply = run(client, *args)
            except redis.ResponseError as error:
                reply = str(error)
            replies.append(reply if args[0] not in ("SINTER", "SUNION") else sorted(reply))
        assert replies[0] == replies[1], (step, args)
        assert _state(clients[0]) == _state(clients[1]), (step, args)
    for client in clients:
        client.close()
