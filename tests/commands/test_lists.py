"""List commands: parity with Redis for replies, error texts, order of checks and RESP3 shapes.

Every test runs against Brook and against the real redis-server (the ``server`` fixture), so
the expectations written here are also checked against Redis itself.
"""

from __future__ import annotations

import random

import pytest
import redis

from tests.conftest import NOT_INTEGER, WRONGTYPE, call, error_of, run

MUST_BE_POSITIVE = "value is out of range, must be positive"


def items(r: redis.Redis, key: str) -> list[bytes]:
    return r.lrange(key, 0, -1)


# ---------------------------------------------------------------------------------------------
# Pushing
# ---------------------------------------------------------------------------------------------


def test_lpush_rpush_order_and_length(r):
    assert r.lpush("l", "a", "b", "c") == 3
    assert items(r, "l") == [b"c", b"b", b"a"]
    assert r.rpush("l", "x", "y") == 5
    assert items(r, "l") == [b"c", b"b", b"a", b"x", b"y"]
    assert r.llen("l") == 5
    assert r.llen("nokey") == 0


def test_binary_safe_elements(r):
    values = [b"", b"\x00", b"\r\n", bytes(range(256)), b"x" * 5000, b"-0", b"007"]
    r.rpush(b"k\x00\r\n", *values)
    assert items(r, b"k\x00\r\n") == values
    assert r.lindex(b"k\x00\r\n", 3) == bytes(range(256))
    assert r.lpop(b"k\x00\r\n") == b""
    assert r.rpop(b"k\x00\r\n") == b"007"
    assert r.lpos(b"k\x00\r\n", "\r\n") == 1


def test_push_raw_replies(raw):
    assert call(raw, "RPUSH", "l", "a") == b":1\r\n"
    assert call(raw, "LPUSH", "l", "b", "c") == b":3\r\n"
    assert call(raw, "RPUSHX", "l", "d") == b":4\r\n"
    assert call(raw, "LPUSHX", "nokey", "d") == b":0\r\n"


def test_pushx_only_on_existing_lists(r):
    assert r.lpushx("l", "a") == 0
    assert r.rpushx("l", "a") == 0
    assert r.exists("l") == 0
    r.rpush("l", "m")
    assert run(r, "LPUSHX", "l", "b", "a") == 3
    assert run(r, "RPUSHX", "l", "y", "z") == 5
    assert items(r, "l") == [b"a", b"b", b"m", b"y", b"z"]


def test_push_onto_other_type_changes_nothing(r):
    r.set("s", "v")
    for name in ("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"):
        assert error_of(r, name, "s", "a") == WRONGTYPE
    assert r.get("s") == b"v"


def test_push_after_expiry_starts_a_new_list(r):
    r.rpush("l", "old")
    r.pexpire("l", 1)
    r.execute_command("DEBUG", "SLEEP", "0.01")
    assert r.rpush("l", "new") == 1
    assert items(r, "l") == [b"new"]
    assert r.ttl("l") == -1


# ---------------------------------------------------------------------------------------------
# Arity and wrong types for every command
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["LPUSH", "l"], ["RPUSH", "l"], ["LPUSHX", "l"], ["RPUSHX", "l"], ["LPOP"],
        ["RPOP"], ["LPOP", "l", "1", "2"], ["RPOP", "l", "1", "2"], ["LLEN"], ["LLEN", "l", "x"],
        ["LRANGE", "l", "0"], ["LINDEX", "l"], ["LSET", "l", "0"], ["LINSERT", "l", "BEFORE", "p"],
        ["LREM", "l", "0"], ["LTRIM", "l", "0"], ["LPOS", "l"], ["LMOVE", "a", "b", "LEFT"],
        ["RPOPLPUSH", "a"], ["LMPOP", "1", "l"], ["LRANGE", "l", "0", "1", "2"],
    ],
    ids=lambda args: " ".join(args),
)
def test_wrong_number_of_arguments(r, args):
    assert error_of(r, *args) == f"wrong number of arguments for '{args[0].lower()}' command"


@pytest.mark.parametrize(
    "args",
    [
        ["LPOP", "s"], ["RPOP", "s"], ["LPOP", "s", "0"], ["RPOP", "s", "2"], ["LLEN", "s"],
        ["LRANGE", "s", "0", "-1"], ["LINDEX", "s", "x"], ["LSET", "s", "x", "v"],
        ["LINSERT", "s", "BEFORE", "p", "v"], ["LREM", "s", "0", "v"], ["LTRIM", "s", "0", "1"],
        ["LPOS", "s", "v"], ["LPOS", "s", "v", "COUNT", "0"], ["LMOVE", "s", "l", "LEFT", "RIGHT"],
        ["LMOVE", "l", "s", "LEFT", "RIGHT"], ["RPOPLPUSH", "s", "l"], ["RPOPLPUSH", "l", "s"],
        ["LMPOP", "2", "nokey", "s", "LEFT"], ["LMPOP", "2", "s", "l", "RIGHT", "COUNT", "3"],
    ],
    ids=lambda args: " ".join(args),
)
def test_wrong_type(r, args):
    r.set("s", "string")
    r.rpush("l", "a", "b")
    assert error_of(r, *args) == WRONGTYPE
    assert items(r, "l") == [b"a", b"b"]  # nothing moved before the type check failed
    assert r.get("s") == b"string"


@pytest.mark.parametrize(
    "args, message",
    [
        (["LPOP", "s", "x"], MUST_BE_POSITIVE),  # the count is parsed before the key's type
        (["LRANGE", "s", "x", "0"], NOT_INTEGER),
        (["LTRIM", "s", "0", "x"], NOT_INTEGER),
        (["LREM", "s", "x", "v"], NOT_INTEGER),
        (["LINSERT", "s", "SIDEWAYS", "p", "v"], "syntax error"),
        (["LPOS", "s", "v", "RANK", "0"], "RANK can't be zero: use 1 to start from the first "
         "match, 2 from the second ... or use negative to start from the end of the list"),
        (["LMOVE", "s", "l", "UP", "LEFT"], "syntax error"),
        (["LMPOP", "1", "s", "LEFT", "COUNT", "0"], "count should be greater than 0"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_arguments_are_checked_before_the_type(r, args, message):
    r.set("s", "string")
    assert error_of(r, *args) == message


def test_source_missing_hides_wrong_destination_type(r):
    r.set("s", "string")
    assert run(r, "LMOVE", "nokey", "s", "LEFT", "RIGHT") is None
    assert run(r, "RPOPLPUSH", "nokey", "s") is None
    r.lpush("l", "only")
    assert error_of(r, "LMOVE", "l", "s", "LEFT", "RIGHT") == WRONGTYPE
    assert items(r, "l") == [b"only"]


# ---------------------------------------------------------------------------------------------
# LPOP / RPOP
# ---------------------------------------------------------------------------------------------


def test_pop_single(r):
    r.rpush("l", "a", "b", "c")
    assert r.lpop("l") == b"a"
    assert r.rpop("l") == b"c"
    assert r.lpop("l") == b"b"
    assert r.exists("l") == 0  # an emptied list is deleted
    assert r.lpop("l") is None
    assert r.rpop("l") is None


def test_pop_with_count(r):
    r.rpush("l", *"abcdef")
    assert r.lpop("l", 2) == [b"a", b"b"]
    assert r.rpop("l", 2) == [b"f", b"e"]
    assert r.rpop("l", 10) == [b"d", b"c"]
    assert r.exists("l") == 0
    r.rpush("l", *"abc")
    assert r.lpop("l", 3) == [b"a", b"b", b"c"]
    assert r.exists("l") == 0


@pytest.mark.parametrize("name", ["LPOP", "RPOP"])
def test_pop_null_shapes(raw, name):
    """No count: a null bulk; with a count (even 0): a null array; count 0 on a list: []."""
    call(raw, "RPUSH", "l", "a")
    assert call(raw, name, "nokey") == b"$-1\r\n"
    assert call(raw, name, "nokey", "0") == b"*-1\r\n"
    assert call(raw, name, "nokey", "3") == b"*-1\r\n"
    assert call(raw, name, "l", "0") == b"*0\r\n"
    assert call(raw, name, "l", "5") == b"*1\r\n$1\r\na\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, name, "nokey") == b"_\r\n"
    assert call(raw, name, "nokey", "0") == b"_\r\n"
    assert call(raw, name, "nokey", "3") == b"_\r\n"
    call(raw, "RPUSH", "l", "a")
    assert call(raw, name, "l", "0") == b"*0\r\n"
    assert call(raw, name, "l") == b"$1\r\na\r\n"


@pytest.mark.parametrize("count", ["-1", "x", "1.5", "", " 1", "9223372036854775808"])
def test_pop_bad_count(r, count):
    r.rpush("l", "a")
    assert error_of(r, "LPOP", "l", count) == MUST_BE_POSITIVE
    assert error_of(r, "RPOP", "nokey", count) == MUST_BE_POSITIVE
    assert r.llen("l") == 1


def test_pop_resp3(r3):
    r3.rpush("l", "a", "b", "c")
    assert r3.lpop("l") == b"a"
    assert r3.rpop("l", 5) == [b"c", b"b"]
    assert r3.lpop("l") is None
    assert r3.lpop("l", 2) is None


# ---------------------------------------------------------------------------------------------
# LRANGE / LINDEX / LLEN
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start, stop",
    [(0, -1), (0, 0), (1, 3), (-3, -1), (-100, 100), (2, 1), (-1, -2), (5, 10), (0, -5),
     (0, -6), (4, 4), (-5, -5), (3, 100), (-9223372036854775808, 9223372036854775807),
     (9223372036854775807, -9223372036854775808)],
)
def test_lrange(r, start, stop):
    values = [b"a", b"b", b"c", b"d", b"e"]
    r.rpush("l", *values)
    first = max(start + 5 if start < 0 else start, 0)
    last = stop + 5 if stop < 0 else stop
    assert r.lrange("l", start, stop) == values[first:last + 1]


def test_lrange_raw_and_errors(raw):
    assert call(raw, "LRANGE", "nokey", "0", "-1") == b"*0\r\n"
    assert call(raw, "LRANGE", "nokey", "x", "-1") == b"-ERR " + NOT_INTEGER.encode() + b"\r\n"
    call(raw, "RPUSH", "l", "a", "b")
    assert call(raw, "LRANGE", "l", "0", "-1") == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert call(raw, "LRANGE", "l", "0", "y") == b"-ERR " + NOT_INTEGER.encode() + b"\r\n"


def test_large_list_ranges_from_both_ends(r):
    r.rpush("big", *range(1000))
    assert r.lrange("big", 990, -1) == [b"%d" % i for i in range(990, 1000)]
    assert r.lrange("big", -10, -6) == [b"%d" % i for i in range(990, 995)]
    assert r.lrange("big", 5, 9) == [b"%d" % i for i in range(5, 10)]
    assert r.lrange("big", 400, 600) == [b"%d" % i for i in range(400, 601)]
    assert r.lindex("big", 999) == b"999"
    assert r.lindex("big", -1000) == b"0"
    assert r.lindex("big", 500) == b"500"


@pytest.mark.parametrize(
    "index, expected",
    [(0, b"a"), (2, b"c"), (-1, b"c"), (-3, b"a"), (3, None), (-4, None),
     (9223372036854775807, None), (-9223372036854775808, None)],
)
def test_lindex(r, index, expected):
    r.rpush("l", "a", "b", "c")
    assert r.lindex("l", index) == expected


def test_lindex_checks_the_key_before_the_index(raw):
    assert call(raw, "LINDEX", "nokey", "x") == b"$-1\r\n"
    call(raw, "RPUSH", "l", "a")
    assert call(raw, "LINDEX", "l", "x") == b"-ERR " + NOT_INTEGER.encode() + b"\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "LINDEX", "nokey", "0") == b"_\r\n"
    assert call(raw, "LINDEX", "l", "5") == b"_\r\n"


def test_long_list_one_element_at_a_time(r):
    """Single pushes and pops at both ends of a list long enough to be stored packed (Brook's
    fast path works on its loose ends, packing and unpacking chunks as they fill and run dry),
    against a Python list; then the range and index reads across the whole list."""
    rng = random.Random(7)
    model: list[bytes] = []
    pipe = r.pipeline(transaction=False)
    expected: list[object] = []
    for step in range(6000):
        choice = rng.random()
        grow = step < 3000
        if choice < (0.35 if grow else 0.2):
            element = b"r%d" % step
            model.append(element)
            pipe.rpush("l", element)
            expected.append(len(model))
        elif choice < (0.7 if grow else 0.4):
            element = b"l%d" % step
            model.insert(0, element)
            pipe.lpush("l", element)
            expected.append(len(model))
        elif choice < (0.85 if grow else 0.7):
            pipe.rpop("l")
            expected.append(model.pop() if model else None)
        else:
            pipe.lpop("l")
            expected.append(model.pop(0) if model else None)
        if len(pipe) == 500:
            assert pipe.execute() == expected
            expected = []
            assert r.lrange("l", 0, -1) == model
            if model:
                middle = len(model) // 2
                assert r.lindex("l", middle) == model[middle]
                assert r.lrange("l", middle - 50, middle + 50) == model[max(0, middle - 50):
                                                                       middle + 51]
    assert pipe.execute() == expected
    assert r.llen("l") == len(model)


# ---------------------------------------------------------------------------------------------
# LSET / LINSERT
# ---------------------------------------------------------------------------------------------


def test_lset(r):
    r.rpush("l", "a", "b", "c")
    assert run(r, "LSET", "l", "0", "A") == b"OK"
    assert run(r, "LSET", "l", "-1", "C") == b"OK"
    assert run(r, "LSET", "l", "-3", "first") == b"OK"
    assert items(r, "l") == [b"first", b"b", b"C"]


@pytest.mark.parametrize(
    "key, index, message",
    [("nokey", "0", "no such key"), ("nokey", "x", "no such key"), ("l", "x", NOT_INTEGER),
     ("l", "3", "index out of range"), ("l", "-4", "index out of range"),
     ("l", "9223372036854775807", "index out of range")],
)
def test_lset_errors(r, key, index, message):
    r.rpush("l", "a", "b", "c")
    assert error_of(r, "LSET", key, index, "v") == message
    assert items(r, "l") == [b"a", b"b", b"c"]


@pytest.mark.parametrize(
    "where, pivot, reply, result",
    [
        ("BEFORE", "b", 5, [b"a", b"new", b"b", b"c", b"b"]),
        ("after", "b", 5, [b"a", b"b", b"new", b"c", b"b"]),  # the first pivot from the head
        ("After", "c", 5, [b"a", b"b", b"c", b"new", b"b"]),
        ("before", "a", 5, [b"new", b"a", b"b", b"c", b"b"]),
        ("BEFORE", "zz", -1, [b"a", b"b", b"c", b"b"]),
    ],
)
def test_linsert(r, where, pivot, reply, result):
    r.rpush("l", "a", "b", "c")
    r.rpush("l", "b")  # a second "b"
    assert run(r, "LINSERT", "l", where, pivot, "new") == reply
    assert items(r, "l") == result


def test_linsert_missing_key_and_syntax(r):
    assert run(r, "LINSERT", "nokey", "BEFORE", "p", "v") == 0
    assert r.exists("nokey") == 0
    assert error_of(r, "LINSERT", "nokey", "MIDDLE", "p", "v") == "syntax error"
    r.rpush("l", "p")
    assert error_of(r, "LINSERT", "l", "BEFOREX", "p", "v") == "syntax error"
    assert run(r, "LINSERT", "l", b"after\x00junk", "p", "v") == 2  # a C string comparison
    assert items(r, "l") == [b"p", b"v"]


# ---------------------------------------------------------------------------------------------
# LREM / LTRIM
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "count, removed, result",
    [
        (0, 3, "bcb"), (1, 1, "bacab"), (2, 2, "bcab"), (-1, 1, "abacb"), (-2, 2, "abcb"),
        (10, 3, "bcb"), (-10, 3, "bcb"), (9223372036854775807, 3, "bcb"),
    ],
)
def test_lrem(r, count, removed, result):
    r.rpush("l", *"abacab")
    assert r.lrem("l", count, "a") == removed
    assert items(r, "l") == [c.encode() for c in result]


def test_lrem_count_long_min(server, r):
    """Redis 8.0+ refuses LONG_MIN (its negation overflows); before, it removed every match."""
    r.rpush("l", *"abacab")
    if server.kind == "brook" or server.version >= (8, 0):
        assert error_of(r, "LREM", "l", "-9223372036854775808", "a") == (
            "value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807")
        assert items(r, "l") == [c.encode() for c in "abacab"]
    else:
        assert r.lrem("l", -9223372036854775808, "a") == 3


@pytest.mark.parametrize("count", [0, 12, -12, 25, -25, 40, -40])
def test_lrem_many_matches(r, count):
    values = [b"x" if i % 3 == 0 else b"%d" % i for i in range(90)]  # 30 matches
    r.rpush("l", *values)
    reply = r.lrem("l", count, "x")
    assert reply == (30 if count == 0 else min(abs(count), 30))
    positions = [i for i, v in enumerate(values) if v == b"x"]
    if count < 0:
        positions.reverse()
    gone = set(positions[:abs(count)] if count else positions)
    assert items(r, "l") == [v for i, v in enumerate(values) if i not in gone]


def test_lrem_empties_and_deletes(r):
    r.rpush("l", "a", "a")
    assert r.lrem("l", 0, "b") == 0
    assert r.lrem("nokey", 0, "a") == 0
    assert r.lrem("l", 0, "a") == 2
    assert r.exists("l") == 0


@pytest.mark.parametrize(
    "start, stop",
    [(1, -2), (0, -1), (0, 0), (-3, -1), (-100, 100), (2, 1), (5, 10), (0, -6), (3, 4),
     (8, 9), (-9223372036854775808, 9223372036854775807)],
)
def test_ltrim(r, start, stop):
    values = [b"%d" % i for i in range(10)]
    r.rpush("l", *values)
    first = max(start + 10 if start < 0 else start, 0)
    last = stop + 10 if stop < 0 else stop
    assert run(r, "LTRIM", "l", start, stop) == b"OK"
    kept = values[first:last + 1]
    assert items(r, "l") == kept
    assert r.exists("l") == (1 if kept else 0)


def test_ltrim_missing_key(r):
    assert run(r, "LTRIM", "nokey", "0", "1") == b"OK"
    assert r.exists("nokey") == 0
    assert error_of(r, "LTRIM", "nokey", "x", "1") == NOT_INTEGER


def test_capped_list_pattern(r):
    for i in range(20):
        r.lpush("recent", i)
        r.ltrim("recent", 0, 4)
    assert items(r, "recent") == [b"19", b"18", b"17", b"16", b"15"]


# ---------------------------------------------------------------------------------------------
# LPOS
# ---------------------------------------------------------------------------------------------

LPOS_LIST = ["a", "b", "c", "1", "2", "3", "c", "c"]


@pytest.mark.parametrize(
    "options, expected",
    [
        ([], 2),
        (["RANK", "1"], 2),
        (["RANK", "2"], 6),
        (["RANK", "4"], None),
        (["RANK", "-1"], 7),
        (["RANK", "-3"], 2),
        (["RANK", "-4"], None),
        (["COUNT", "2"], [2, 6]),
        (["COUNT", "0"], [2, 6, 7]),
        (["COUNT", "10"], [2, 6, 7]),
        (["RANK", "2", "COUNT", "0"], [6, 7]),
        (["RANK", "-1", "COUNT", "2"], [7, 6]),
        (["RANK", "-2", "COUNT", "0"], [6, 2]),
        (["MAXLEN", "2"], None),
        (["MAXLEN", "3"], 2),
        (["COUNT", "0", "MAXLEN", "7"], [2, 6]),
        (["RANK", "-1", "COUNT", "0", "MAXLEN", "2"], [7, 6]),
        (["RANK", "-1", "MAXLEN", "1"], 7),
        (["RANK", "2", "MAXLEN", "6"], None),
        (["RANK", "3", "RANK", "1"], 2),  # the last occurrence of an option wins
        (["rank", "9223372036854775807"], None),
        ([b"count\x00x", "1"], [2]),
    ],
)
def test_lpos(r, options, expected):
    r.rpush("l", *LPOS_LIST)
    assert run(r, "LPOS", "l", "c", *options) == expected


@pytest.mark.parametrize("options", [["RANK", "-9223372036854775808"],
                                     ["RANK", "-9223372036854775808", "COUNT", "1"]])
def test_lpos_rank_long_min(server, r, options):
    """Redis 7.2+ refuses RANK LONG_MIN (its negation overflows); 7.0 took it as -1 and let
    COUNT scan on."""
    r.rpush("l", *LPOS_LIST)
    if server.kind == "brook" or server.version >= (7, 2):
        assert error_of(r, "LPOS", "l", "c", *options) == (
            "value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807")
    else:
        assert run(r, "LPOS", "l", "c", *options) == (7 if len(options) == 2 else [7, 6, 2])


def test_lpos_no_match_and_missing_key(raw):
    call(raw, "RPUSH", "l", "a")
    assert call(raw, "LPOS", "l", "z") == b"$-1\r\n"
    assert call(raw, "LPOS", "l", "z", "COUNT", "3") == b"*0\r\n"
    assert call(raw, "LPOS", "nokey", "z") == b"$-1\r\n"
    assert call(raw, "LPOS", "nokey", "z", "COUNT", "0") == b"*0\r\n"
    assert call(raw, "LPOS", "l", "a", "COUNT", "1") == b"*1\r\n:0\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "LPOS", "l", "z") == b"_\r\n"
    assert call(raw, "LPOS", "nokey", "z") == b"_\r\n"
    assert call(raw, "LPOS", "nokey", "z", "COUNT", "0") == b"*0\r\n"


@pytest.mark.parametrize(
    "options, message",
    [
        (["RANK", "0"], "RANK can't be zero: use 1 to start from the first match, 2 from the "
         "second ... or use negative to start from the end of the list"),
        (["RANK", "x"], NOT_INTEGER),
        (["COUNT", "-1"], "COUNT can't be negative"),
        (["COUNT", "x"], "COUNT can't be negative"),
        (["MAXLEN", "-1"], "MAXLEN can't be negative"),
        (["MAXLEN", "1e3"], "MAXLEN can't be negative"),
        (["RANK"], "syntax error"),
        (["COUNT", "1", "MAXLEN"], "syntax error"),
        (["FIRST", "1"], "syntax error"),
        (["RANK", "0", "FOO"], "RANK can't be zero: use 1 to start from the first match, 2 from "
         "the second ... or use negative to start from the end of the list"),
        (["FOO", "RANK", "0"], "syntax error"),
    ],
)
def test_lpos_errors(r, options, message):
    r.rpush("l", "a")
    assert error_of(r, "LPOS", "l", "a", *options) == message
    assert error_of(r, "LPOS", "nokey", "a", *options) == message


def test_lpos_large_list(r):
    r.rpush("big", *[b"x" if i % 100 == 7 else b"%d" % i for i in range(2000)])
    assert r.lpos("big", "x") == 7
    assert r.lpos("big", "x", rank=-1) == 1907
    assert r.lpos("big", "x", rank=3, count=2) == [207, 307]
    assert r.lpos("big", "x", rank=-2, count=3, maxlen=500) == [1807, 1707, 1607]
    assert r.lpos("big", "x", count=0, maxlen=300) == [7, 107, 207]


# ---------------------------------------------------------------------------------------------
# LMOVE / RPOPLPUSH
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wherefrom, whereto, moved, source, destination",
    [
        ("LEFT", "LEFT", b"a", [b"b", b"c"], [b"a", b"x", b"y"]),
        ("LEFT", "RIGHT", b"a", [b"b", b"c"], [b"x", b"y", b"a"]),
        ("RIGHT", "LEFT", b"c", [b"a", b"b"], [b"c", b"x", b"y"]),
        ("right", "right", b"c", [b"a", b"b"], [b"x", b"y", b"c"]),
    ],
)
def test_lmove_directions(r, wherefrom, whereto, moved, source, destination):
    r.rpush("src", "a", "b", "c")
    r.rpush("dst", "x", "y")
    assert run(r, "LMOVE", "src", "dst", wherefrom, whereto) == moved
    assert items(r, "src") == source
    assert items(r, "dst") == destination


@pytest.mark.parametrize(
    "wherefrom, whereto, result",
    [("LEFT", "RIGHT", "bca"), ("RIGHT", "LEFT", "cab"), ("LEFT", "LEFT", "abc"),
     ("RIGHT", "RIGHT", "abc")],
)
def test_lmove_same_list_rotates(r, wherefrom, whereto, result):
    r.rpush("l", *"abc")
    run(r, "LMOVE", "l", "l", wherefrom, whereto)
    assert items(r, "l") == [c.encode() for c in result]


def test_lmove_single_element_onto_itself_keeps_the_list(r):
    r.rpush("l", "only")
    assert run(r, "LMOVE", "l", "l", "LEFT", "RIGHT") == b"only"
    assert run(r, "RPOPLPUSH", "l", "l") == b"only"
    assert items(r, "l") == [b"only"]


def test_lmove_creates_destination_and_deletes_source(r):
    r.rpush("src", "a")
    assert run(r, "LMOVE", "src", "dst", "LEFT", "RIGHT") == b"a"
    assert r.exists("src") == 0
    assert items(r, "dst") == [b"a"]


def test_lmove_errors(raw):
    call(raw, "RPUSH", "l", "a")
    syntax = b"-ERR syntax error\r\n"
    assert call(raw, "LMOVE", "l", "m", "UP", "LEFT") == syntax
    assert call(raw, "LMOVE", "l", "m", "LEFT", "DOWN") == syntax
    assert call(raw, "LMOVE", "nokey", "m", "LEFT", "DOWN") == syntax
    assert call(raw, "LMOVE", "l", "m", "LEFTX", "LEFT") == syntax
    assert call(raw, "LMOVE", "nokey", "m", "LEFT", "LEFT") == b"$-1\r\n"
    assert call(raw, "LMOVE", "l", "m", b"left\x00x", "RIGHT") == b"$1\r\na\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "LMOVE", "nokey", "m", "LEFT", "LEFT") == b"_\r\n"
    assert call(raw, "RPOPLPUSH", "nokey", "m") == b"_\r\n"


def test_rpoplpush(r):
    r.rpush("src", "a", "b", "c")
    assert r.rpoplpush("src", "dst") == b"c"
    assert r.rpoplpush("src", "dst") == b"b"
    assert items(r, "dst") == [b"b", b"c"]
    assert r.rpoplpush("src", "src") == b"a"
    assert r.rpoplpush("src", "dst") == b"a"
    assert r.exists("src") == 0
    assert r.rpoplpush("src", "dst") is None
    assert items(r, "dst") == [b"a", b"b", b"c"]


# ---------------------------------------------------------------------------------------------
# LMPOP
# ---------------------------------------------------------------------------------------------


def test_lmpop_takes_from_the_first_non_empty_key(r):
    r.rpush("l1", "a", "b", "c")
    r.rpush("l2", "d", "e")
    assert run(r, "LMPOP", "3", "nokey", "l1", "l2", "RIGHT", "COUNT", "2") == [b"l1", [b"c", b"b"]]
    assert run(r, "LMPOP", "3", "nokey", "l1", "l2", "LEFT", "COUNT", "5") == [b"l1", [b"a"]]
    assert r.exists("l1") == 0
    assert run(r, "LMPOP", "3", "nokey", "l1", "l2", "left") == [b"l2", [b"d"]]
    assert run(r, "LMPOP", "2", "l2", "l2", "LEFT", "count", "1") == [b"l2", [b"e"]]
    assert run(r, "LMPOP", "3", "nokey", "l1", "l2", "LEFT") is None


def test_lmpop_raw_shapes(raw):
    assert call(raw, "LMPOP", "1", "nokey", "LEFT") == b"*-1\r\n"
    call(raw, "RPUSH", "l", "a", "b")
    assert call(raw, "LMPOP", "1", "l", "LEFT") == b"*2\r\n$1\r\nl\r\n*1\r\n$1\r\na\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "LMPOP", "1", "nokey", "LEFT") == b"_\r\n"
    assert call(raw, "LMPOP", "1", "l", "LEFT", "COUNT", "9") == b"*2\r\n$1\r\nl\r\n*1\r\n$1\r\nb\r\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["0", "l", "LEFT"], "numkeys should be greater than 0"),
        (["-1", "l", "LEFT"], "numkeys should be greater than 0"),
        (["x", "l", "LEFT"], "numkeys should be greater than 0"),
        (["9223372036854775808", "l", "LEFT"], "numkeys should be greater than 0"),
        (["2", "l", "LEFT"], "syntax error"),
        (["3", "l", "LEFT"], "syntax error"),
        (["1", "l", "MIDDLE"], "syntax error"),
        (["1", "l", "LEFT", "COUNT"], "syntax error"),
        (["1", "l", "LEFT", "COUNT", "0"], "count should be greater than 0"),
        (["1", "l", "LEFT", "COUNT", "-2"], "count should be greater than 0"),
        (["1", "l", "LEFT", "COUNT", "x"], "count should be greater than 0"),
        (["1", "l", "LEFT", "COUNT", "1", "COUNT", "1"], "syntax error"),
        (["1", "l", "LEFT", "LIMIT", "1"], "syntax error"),
        (["1", "l", "LEFT", "1"], "syntax error"),
    ],
)
def test_lmpop_errors(r, args, message):
    r.rpush("l", "a")
    assert error_of(r, "LMPOP", *args) == message
    assert items(r, "l") == [b"a"]


def test_lmpop_resp3(r3):
    r3.rpush("l", "a", "b")
    assert r3.execute_command("LMPOP", "1", "l", "RIGHT", "COUNT", "5") == [b"l", [b"b", b"a"]]
    assert r3.execute_command("LMPOP", "1", "l", "RIGHT") is None


@pytest.mark.parametrize(
    "args, keys",
    [
        (["2", "a", "b", "LEFT"], [b"a", b"b"]),
        (["2x", "a", "b", "LEFT"], [b"a", b"b"]),  # Redis reads numkeys with atoi here
        (["3", "a", "b", "LEFT"], [b"a", b"b", b"LEFT"]),
        (["1", "a", "RIGHT", "COUNT", "2"], [b"a"]),
    ],
)
def test_lmpop_getkeys(raw, args, keys):
    assert raw.call("COMMAND", "GETKEYS", "LMPOP", *args) == keys


@pytest.mark.parametrize("numkeys", ["0", "-1", "5", "x"])
def test_lmpop_getkeys_invalid(raw, numkeys):
    reply = call(raw, "COMMAND", "GETKEYS", "LMPOP", numkeys, "a", "b", "LEFT")
    assert reply == b"-ERR Invalid arguments specified for command\r\n"


def test_getkeys_of_two_key_commands(raw):
    assert raw.call("COMMAND", "GETKEYS", "LMOVE", "a", "b", "LEFT", "RIGHT") == [b"a", b"b"]
    assert raw.call("COMMAND", "GETKEYS", "RPOPLPUSH", "a", "b") == [b"a", b"b"]


# ---------------------------------------------------------------------------------------------
# The list as a key: TYPE, OBJECT, COPY, RENAME, MOVE, SCAN, DEL, expiry, WATCH, stats
# ---------------------------------------------------------------------------------------------


def test_type_and_encoding(server, r):
    r.rpush("small", "a")
    r.rpush("large", *range(1000), "x" * 10000)
    assert r.type("small") == b"list"
    # Redis 7.2+ keeps a small list as a listpack; 7.0 reported quicklist for any size.
    small = "listpack" if server.kind == "brook" or server.version >= (7, 2) else "quicklist"
    assert run(r, "OBJECT", "ENCODING", "small") == small.encode()
    assert run(r, "OBJECT", "ENCODING", "large") == b"quicklist"
    assert run(r, "OBJECT", "REFCOUNT", "small") == 1
    assert f"encoding:{small}".encode() in run(r, "DEBUG", "OBJECT", "small")


def _encoding(r: redis.Redis, key: str) -> bytes:
    return run(r, "OBJECT", "ENCODING", key)


def _lp_bytes(elements: list[bytes]) -> int:
    """A listpack's bytes for these elements (header, entries, end), for strings that are not
    integers and shorter than 64 bytes."""
    return 7 + sum(len(e) + 2 for e in elements)


@pytest.mark.min_redis(7, 2)
@pytest.mark.parametrize("push", ["RPUSH", "LPUSH"])
def test_listpack_becomes_quicklist_past_the_byte_limit(r, push):
    # list-max-listpack-size -2: 8 KiB. Before a push Redis adds the new elements' lengths
    # (not their entries' sizes) to the listpack's bytes, and converts when that passes the
    # limit (listTypeTryConvertListpack): a push can leave a listpack a little over it.
    elements = [b"e%060d" % i for i in range(130)]  # 61 bytes each: 63-byte entries
    r.execute_command(push, "l", *elements)  # 7 + 130 * 61 = 7937 counted
    assert _lp_bytes(elements) == 8197
    assert _encoding(r, "l") == b"listpack"
    r.execute_command(push, "l", b"y")  # 8197 + 1
    assert _encoding(r, "l") == b"quicklist"
    r.delete("l")
    r.execute_command(push, "l", *elements[:129])  # 8134 bytes
    r.execute_command(push, "l", b"x" * 58)  # 8134 + 58 = 8192: still within
    assert _encoding(r, "l") == b"listpack"
    r.execute_command(push, "l", b"y", b"z")
    assert _encoding(r, "l") == b"quicklist"


@pytest.mark.min_redis(7, 2)
def test_quicklist_returns_to_listpack_at_half_the_limit(r):
    elements = [b"e%060d" % i for i in range(140)]
    r.rpush("l", *elements)
    assert _encoding(r, "l") == b"quicklist"
    # Popping from the tail empties the last node first; the one left turns back into a
    # listpack once it is within half the limit (4 KiB), not before.
    while _lp_bytes(elements) > 4096:
        assert _encoding(r, "l") == b"quicklist"
        elements.pop()
        r.rpop("l")
    assert _lp_bytes(elements) == 4039
    assert _encoding(r, "l") == b"listpack"
    # Growing again converts only past the whole limit.
    r.rpush("l", *[b"f%060d" % i for i in range(60)])
    assert _encoding(r, "l") == b"listpack"


@pytest.mark.min_redis(7, 2)
@pytest.mark.parametrize("name", ["list-max-listpack-size", "list-max-ziplist-size"])
def test_entry_limit(r, name):
    r.config_set(name, "4")
    try:
        r.rpush("l", "a", "b", "c", "d")
        assert _encoding(r, "l") == b"listpack"
        r.rpush("l", "e")
        assert _encoding(r, "l") == b"quicklist"
        r.rpop("l")  # 4 left: a quicklist goes back at half the limit only
        r.rpop("l")
        assert _encoding(r, "l") == b"quicklist"
        r.rpop("l")
        assert _encoding(r, "l") == b"listpack"
        r.delete("l")
        r.rpush("l", *range(4))  # integers take 2 bytes, the 8 KiB safety limit still holds
        r.lpush("big", "x" * 9000)
        assert _encoding(r, "big") == b"quicklist"
    finally:
        r.config_set("list-max-listpack-size", "-2")


@pytest.mark.min_redis(7, 2)
def test_linsert_lset_and_lmove_convert_on_growth(r):
    r.rpush("l", "a", "b", "c")
    r.linsert("l", "BEFORE", "b", "x" * 9000)
    assert _encoding(r, "l") == b"quicklist"
    r.rpush("s", "a", "b", "c")
    r.lset("s", 1, "y" * 8190)  # 7 + 3 * 3 + 8190 > 8192: converted before the replacement
    assert _encoding(r, "s") == b"quicklist"
    r.lset("s", 1, "b")  # ...and back once the list is small again
    assert _encoding(r, "s") == b"listpack"
    r.rpush("src", "z" * 9000)
    r.lmove("src", "dst", "LEFT", "RIGHT")
    assert _encoding(r, "dst") == b"quicklist"
    r.rpush("dst", "w")
    r.lpop("dst")
    assert _encoding(r, "dst") == b"listpack"


@pytest.mark.min_redis(7, 2)
def test_reload_encodes_lists_whole(r):
    # A quicklist that shrank to 6 KiB stays one (half the limit is 4 KiB); loaded from a
    # snapshot it is built whole, and a whole list within the limit is a listpack (RDB load's
    # LIST_CONV_AUTO).
    r.rpush("l", *[b"e%060d" % i for i in range(140)])
    r.ltrim("l", 0, 94)
    assert _encoding(r, "l") == b"quicklist"
    r.rpush("q", *[b"e%060d" % i for i in range(140)])
    assert run(r, "DEBUG", "RELOAD") == b"OK"
    assert _encoding(r, "l") == b"listpack"
    assert _encoding(r, "q") == b"quicklist"
    assert r.llen("l") == 95 and r.llen("q") == 140


@pytest.mark.min_redis(7, 2)
def test_linsert_and_lset_convert_before_they_know(r):
    # Redis tries the conversion before it looks for the pivot or checks the index.
    r.rpush("l", "a", "b")
    assert r.linsert("l", "BEFORE", "nosuch", "x" * 9000) == -1
    assert _encoding(r, "l") == b"quicklist"
    r.rpush("m", "a", "b")
    with pytest.raises(redis.ResponseError, match="index out of range"):
        r.lset("m", 5, "y" * 9000)
    assert _encoding(r, "m") == b"quicklist"
    assert items(r, "m") == [b"a", b"b"]


@pytest.mark.min_redis(7, 2)
def test_ltrim_lrem_and_sort_store(r):
    r.rpush("l", *[b"e%060d" % i for i in range(200)])
    assert _encoding(r, "l") == b"quicklist"
    r.ltrim("l", 0, 9)
    assert _encoding(r, "l") == b"listpack"
    r.rpush("m", *(["x"] * 50), "y" * 9000)
    r.lrem("m", 1, "y" * 9000)
    assert _encoding(r, "m") == b"listpack"
    r.rpush("src", "b", "a", "c")
    run(r, "SORT", "src", "ALPHA", "STORE", "dst")
    assert _encoding(r, "dst") == b"listpack"
    r.rpush("src2", *[b"e%060d" % i for i in range(200)])
    run(r, "SORT", "src2", "ALPHA", "STORE", "dst2")
    assert _encoding(r, "dst2") == b"quicklist"


def test_copy_is_independent(r):
    r.rpush("l", "a", "b")
    assert r.copy("l", "c") == 1
    r.rpush("c", "x")
    r.lpop("l")
    assert items(r, "l") == [b"b"]
    assert items(r, "c") == [b"a", b"b", b"x"]
    assert r.copy("l", "c") == 0
    assert r.copy("l", "c", replace=True) == 1
    assert items(r, "c") == [b"b"]


def test_copy_to_other_db(server):
    client = server.client(db=0)
    client.rpush("l", "a")
    assert client.copy("l", "l", destination_db=1) == 1
    client.rpush("l", "b")
    other = server.client(db=1)
    assert items(other, "l") == [b"a"]
    assert other.type("l") == b"list"


def test_rename_move_del_exists(server, r):
    r.rpush("l", "a", "b")
    assert r.rename("l", "m") is True
    assert items(r, "m") == [b"a", b"b"]
    assert r.renamenx("m", "l") is True
    assert r.move("l", 1) is True
    assert r.exists("l") == 0
    other = server.client(db=1)
    assert items(other, "l") == [b"a", b"b"]
    assert other.rpush("l", "c") == 3
    assert other.delete("l") == 1
    assert other.exists("l") == 0


def test_scan_type_list(r):
    r.rpush("l1", "a")
    r.rpush("l2", "a")
    r.set("s", "v")
    r.hset("h", "f", "v")
    keys = set()
    cursor = 0
    while True:
        cursor, found = r.scan(cursor, _type="list", count=100)
        keys.update(found)
        if cursor == 0:
            break
    assert keys == {b"l1", b"l2"}


def test_list_with_ttl(r):
    r.rpush("l", "a", "b")
    assert r.expire("l", 100) is True
    r.lpop("l")
    assert 0 < r.ttl("l") <= 100  # changing a list keeps its TTL
    r.lpop("l")
    assert r.ttl("l") == -2  # and deleting it when emptied removes the TTL
    assert r.rpush("l", "c") == 1
    assert r.ttl("l") == -1


def test_set_overwrites_a_list(r):
    r.rpush("l", "a")
    assert r.set("l", "v") is True
    assert r.type("l") == b"string"
    r.delete("l")
    r.rpush("l", "a")
    assert r.lpush("l", "b") == 2


def _exec_after(server, r, prepare, change) -> bool:
    """WATCH ``l``, let another client run ``change``, then EXEC: True when EXEC ran."""
    prepare(r)
    other = server.client()
    with r.pipeline() as pipe:
        pipe.watch("l")
        change(other)
        pipe.multi()
        pipe.set("marker", "1")
        try:
            pipe.execute()
        except redis.WatchError:
            return False
    return True


def _with_list(client: redis.Redis) -> None:
    client.rpush("l", "a", "b", "c")


@pytest.mark.parametrize(
    "change, survives",
    [
        (lambda c: c.lpush("l", "x"), False),
        (lambda c: c.rpushx("l", "x"), False),
        (lambda c: c.lpop("l"), False),
        (lambda c: c.rpop("l", 3), False),  # emptied and deleted
        (lambda c: c.lset("l", 0, "x"), False),
        (lambda c: c.linsert("l", "BEFORE", "b", "x"), False),
        (lambda c: c.linsert("l", "BEFORE", "zz", "x"), True),  # no pivot: nothing changed
        (lambda c: c.lrem("l", 0, "b"), False),
        (lambda c: c.lrem("l", 0, "zz"), True),
        (lambda c: c.ltrim("l", 0, -1), False),  # Redis signals LTRIM even when nothing goes
        (lambda c: c.lmove("l", "l", "LEFT", "RIGHT"), False),
        (lambda c: c.lmove("other", "l", "LEFT", "RIGHT"), True),  # no source: no change
        (lambda c: c.rpoplpush("l", "elsewhere"), False),
        (lambda c: c.execute_command("LMPOP", "1", "l", "LEFT"), False),
        (lambda c: c.lrange("l", 0, -1), True),
        (lambda c: c.lpos("l", "a"), True),
        (lambda c: c.lindex("l", 0), True),
        (lambda c: c.llen("l"), True),
    ],
)
def test_watch(server, r, change, survives):
    assert _exec_after(server, r, _with_list, change) is survives


def test_watch_missing_key_then_pushed(server, r):
    assert _exec_after(server, r, lambda c: None, lambda c: c.rpush("l", "a")) is False
    r.delete("l")
    assert _exec_after(server, r, lambda c: None, lambda c: c.rpushx("l", "a")) is True


def test_lmove_destination_signals_watch(server, r):
    r.rpush("src", "a")
    assert _exec_after(server, r, lambda c: None,
                       lambda c: c.lmove("src", "l", "LEFT", "RIGHT")) is False


def _stats(r: redis.Redis) -> tuple[int, int]:
    info = r.info("stats")
    return info["keyspace_hits"], info["keyspace_misses"]


def test_keyspace_hits_and_misses(r):
    r.rpush("l", "a")
    r.config_resetstat()
    r.lrange("l", 0, -1)
    r.llen("l")
    r.lindex("l", 0)
    r.lpos("l", "a")
    r.lrange("nokey", 0, -1)
    r.llen("nokey")
    r.lpush("l", "b")  # writes count neither
    r.lpop("nokey")
    assert _stats(r) == (4, 2)


def test_dirty_counter(r):
    def changes() -> int:
        return r.info("persistence")["rdb_changes_since_last_save"]

    before = changes()
    r.rpush("l", "a", "b", "c", "d", "e", "f")
    r.lpop("l")
    r.rpop("l", 2)
    r.lrem("l", 0, "b")
    r.ltrim("l", 0, 0)
    r.lset("l", 0, "x")
    r.linsert("l", "AFTER", "x", "y")
    r.lmove("l", "m", "LEFT", "LEFT")
    r.execute_command("LMPOP", "2", "l", "m", "LEFT", "COUNT", "5")
    assert changes() - before == 6 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1


def test_pipelined_queue_round_trip(raw):
    """A producer/consumer burst as redis-benchmark sends it: many pushes and pops in one
    write, replies in order."""
    payload = b"".join(b"*3\r\n$5\r\nLPUSH\r\n$1\r\nq\r\n$1\r\n%d\r\n" % (i % 10) for i in range(50))
    payload += b"".join(b"*2\r\n$4\r\nRPOP\r\n$1\r\nq\r\n" for _ in range(51))
    expected = b"".join(b":%d\r\n" % (i + 1) for i in range(50))
    expected += b"".join(b"$1\r\n%d\r\n" % (i % 10) for i in range(50)) + b"$-1\r\n"
    assert raw.request(payload, until=b"$-1\r\n", timeout=5) == expected
