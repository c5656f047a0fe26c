"""Sorted-set commands, checked against real Redis (after Redis's tests/unit/type/zset.tcl):
ZADD and its options, scores (parsing, ``inf``, exclusive bounds, how doubles are printed in
RESP2 and RESP3), ranks and ranges by rank, score and lex, removal by range, the pops and their
reply shapes, ZRANDMEMBER, the multi-key operations (ZUNION/ZINTER/ZDIFF, their STORE forms,
WEIGHTS, AGGREGATE, plain sets as inputs, ZINTERCARD), ZSCAN, the listpack/skiplist encodings
and their conversions, generic key commands, WRONGTYPE and arity, keyspace events, WATCH, and
persistence (DEBUG RELOAD; the AOF effects against Redis's own file; restarts).

Printing doubles changed in Redis 7.2: 7.0 wrote ``%.17g`` (0.1 is "0.10000000000000001"),
7.2 and later the shortest text that reads back as the same double ("0.1"). Brook follows the
newest Redis, so a reply holding a score that is not exactly representable is expected per
server (``shortest``). ZSCAN of a skiplist still prints ``%.17g`` in every version (db.c's
scan callback uses ld2string), which is checked too. Each test runs against Brook and Redis.
"""

from __future__ import annotations

import contextlib
import glob
import math
import socket
import time
from pathlib import Path

import hiredis
import pytest
import redis

from tests.conftest import (
    NOT_INTEGER,
    WRONGTYPE,
    RawConnection,
    ServerProcess,
    call,
    error_of,
    run,
    start_brook,
)
from tests.support.aof import AOF_ARGS, aof_commands, effects_match_redis, restart
from tests.support.events import both

NOT_FLOAT = "value is not a valid float"
RANGE_NOT_FLOAT = "min or max is not a float"
RANGE_NOT_LEX = "min or max not valid string range item"


def encoding(r: redis.Redis, key: str) -> bytes:
    return run(r, "OBJECT", "ENCODING", key)  # type: ignore[return-value]


def withscores(r: redis.Redis, key: str) -> list[bytes]:
    return run(r, "ZRANGE", key, 0, -1, "WITHSCORES")  # type: ignore[return-value]


def members(r: redis.Redis, key: str) -> list[bytes]:
    return run(r, "ZRANGE", key, 0, -1)  # type: ignore[return-value]


def shortest(server: ServerProcess) -> bool:
    """Does this server print doubles as the shortest text that reads back the same (Redis >=
    7.2, and Brook), rather than with ``%.17g`` (Redis 7.0)?"""
    return server.kind == "brook" or server.version >= (7, 2)


def printed(server: ServerProcess, newest: str, value: str | None = None) -> bytes:
    """How ``server`` prints the double that ``newest`` is the shortest form of (``value``, the
    text it was written as, when that is not the same number in Python's eyes)."""
    if shortest(server):
        return newest.encode()
    return ("%.17g" % float(value if value is not None else newest)).encode()


@pytest.fixture(params=["listpack", "skiplist"])
def zenc(request: pytest.FixtureRequest, r: redis.Redis) -> str:
    """Runs a test once per encoding, as zset.tcl's ``basics``: skiplist from the first member
    when ``zset-max-listpack-entries`` is 0."""
    if request.param == "skiplist":
        r.config_set("zset-max-listpack-entries", 0)
    return request.param


def _zset(r: redis.Redis, key: str, *pairs: object) -> None:
    """Create ``key`` afresh from score, member pairs (one ZADD per pair, as create_zset)."""
    run(r, "DEL", key)
    for index in range(0, len(pairs), 2):
        run(r, "ZADD", key, pairs[index], pairs[index + 1])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# ZADD, ZINCRBY and scores
# ---------------------------------------------------------------------------------------------


def test_zadd_adds_and_updates_scores(r, zenc):
    assert run(r, "ZADD", "z", 10, "x") == 1
    assert run(r, "ZADD", "z", 20, "y", 30, "z") == 2
    assert encoding(r, "z") == zenc.encode()
    assert members(r, "z") == [b"x", b"y", b"z"]
    assert run(r, "ZADD", "z", 1, "y") == 0
    assert members(r, "z") == [b"y", b"x", b"z"]
    assert run(r, "ZADD", "z", 5, "x", 20, "b", 30, "c") == 2  # the count of new members
    assert withscores(r, "z") == [b"y", b"1", b"x", b"5", b"b", b"20", b"c", b"30", b"z", b"30"]
    assert run(r, "ZCARD", "z") == 5
    assert run(r, "TYPE", "z") == b"zset"


def test_equal_scores_are_ordered_by_member_bytes(r, zenc):
    run(r, "ZADD", "z", 0, "b", 0, "a", 0, "B", 0, "", 0, "\xff", 0, "a\x00", 0, "aa")
    assert members(r, "z") == [b"", b"B", b"a", b"a\x00", b"aa", b"b", "\xff".encode()]
    weird = b"\x00\r\n$3\r\n*1\xff"
    assert run(r, "ZADD", "z", -1, weird) == 1
    assert run(r, "ZSCORE", "z", weird) == b"-1"
    assert members(r, "z")[0] == weird


def test_zadd_xx_and_nx(r, zenc):
    assert run(r, "ZADD", "z", "XX", 10, "x") == 0
    assert run(r, "TYPE", "z") == b"none"  # XX on a missing key creates nothing
    run(r, "ZADD", "z", 10, "x")
    assert run(r, "ZADD", "z", "XX", 20, "y") == 0
    assert run(r, "ZCARD", "z") == 1
    run(r, "ZADD", "z", 10, "x", 20, "y", 30, "z")
    assert run(r, "ZADD", "z", "xx", 5, "foo", 11, "x", 21, "y", 40, "zap") == 0
    assert withscores(r, "z") == [b"x", b"11", b"y", b"21", b"z", b"30"]
    assert run(r, "ZADD", "n", "NX", 10, "x", 20, "y", 30, "z") == 3
    assert run(r, "ZADD", "n", "nx", 11, "x", 21, "y", 100, "a", 200, "b") == 2
    assert withscores(r, "n") == [b"x", b"10", b"y", b"20", b"z", b"30", b"a", b"100",
                                  b"b", b"200"]


def test_zadd_gt_lt_and_ch(r, zenc):
    run(r, "ZADD", "z", 10, "x", 20, "y", 30, "z")
    assert run(r, "ZADD", "z", "GT", "CH", 5, "foo", 11, "x", 21, "y", 29, "z") == 3
    assert withscores(r, "z") == [b"foo", b"5", b"x", b"11", b"y", b"21", b"z", b"30"]
    _zset(r, "z", 10, "x", 20, "y", 30, "z")
    assert run(r, "ZADD", "z", "LT", "CH", 5, "foo", 11, "x", 21, "y", 29, "z") == 2
    assert withscores(r, "z") == [b"foo", b"5", b"x", b"10", b"y", b"20", b"z", b"29"]
    _zset(r, "z", 10, "x", 20, "y", 30, "z")
    assert run(r, "ZADD", "z", "gt", "xx", "ch", 5, "foo", 11, "x", 21, "y", 29, "z") == 2
    assert withscores(r, "z") == [b"x", b"11", b"y", b"21", b"z", b"30"]
    _zset(r, "z", 10, "x", 20, "y", 30, "z")
    assert run(r, "ZADD", "z", "LT", "XX", "CH", 5, "foo", 11, "x", 21, "y", 29, "z") == 1
    assert withscores(r, "z") == [b"x", b"10", b"y", b"20", b"z", b"29"]
    _zset(r, "z", 10, "x", 20, "y", 30, "z")
    assert run(r, "ZADD", "z", 11, "x", 21, "y", 30, "z") == 0
    assert run(r, "ZADD", "z", "CH", 12, "x", 22, "y", 30, "z") == 2
    assert run(r, "ZADD", "z", "CH", "CH", "XX", "XX", 13, "x") == 1  # repeated flags are fine


@pytest.mark.parametrize(("args", "error"), [
    (("XX", "NX", 10, "x"), "XX and NX options at the same time are not compatible"),
    (("NX", "XX", 10, "x"), "XX and NX options at the same time are not compatible"),
    (("GT", "NX", 10, "x"), "GT, LT, and/or NX options at the same time are not compatible"),
    (("LT", "NX", 10, "x"), "GT, LT, and/or NX options at the same time are not compatible"),
    (("LT", "GT", 10, "x"), "GT, LT, and/or NX options at the same time are not compatible"),
    (("XX", "NX", "GT", 1, "x"), "XX and NX options at the same time are not compatible"),
    (("INCR", 15, "x", 10, "y"), "INCR option supports a single increment-element pair"),
    (("XX", 10, "x", 20), "syntax error"),
    ((10, "a", 20, "b", 30), "syntax error"),
    (("XX", 1), "syntax error"),
    (("CH", 1), "syntax error"),
    (("INCR", 1), "syntax error"),
    (("nan", "x"), NOT_FLOAT),
    ((10, "a", 20, "b", "30.badscore", "c"), NOT_FLOAT),
    (("", "abc"), NOT_FLOAT),
    (("INCR", "XX", "NX", 1, "x"), "XX and NX options at the same time are not compatible"),
])
def test_zadd_option_errors(r, args, error):
    run(r, "ZADD", "z", 1, "keep")
    assert error_of(r, "ZADD", "z", *args) == error
    assert withscores(r, "z") == [b"keep", b"1"]
    assert error_of(r, "ZADD", "new", *args) == error
    assert run(r, "EXISTS", "new") == 0  # nothing is added on a parsing error


def test_zadd_arity(r):
    for args in ((), ("z",), ("z", 1), ("z", "XX")):
        assert error_of(r, "ZADD", *args) == "wrong number of arguments for 'zadd' command"


@pytest.mark.parametrize("text", ["", "abc", "1.5x", " 1", "1 ", "nan", "NaN", "-nan", "1_0",
                                  "1e", "e5", "--1", "1..0", "inf1", "0b1"])
def test_scores_that_are_not_floats(r, text):
    assert error_of(r, "ZADD", "z", text, "a") == NOT_FLOAT
    assert error_of(r, "ZINCRBY", "z", text, "a") == NOT_FLOAT
    assert error_of(r, "ZADD", "z", "INCR", text, "a") == NOT_FLOAT
    assert run(r, "EXISTS", "z") == 0


@pytest.mark.parametrize(("text", "reply"), [
    ("inf", b"inf"), ("+inf", b"inf"), ("-inf", b"-inf"), ("INF", b"inf"), ("-Inf", b"-inf"),
    ("infinity", b"inf"), ("-Infinity", b"-inf"), (".5", b"0.5"), ("5.", b"5"), ("1e3", b"1000"),
    ("1E5", b"100000"), ("+1", b"1"), ("00012", b"12"), ("-0.0", b"0"), ("1e-0", b"1"),
    ("9007199254740993", b"9007199254740992"), ("1e16", b"10000000000000000"),
    ("1e20", b"1e+20"), ("1e22", b"1e+22"), ("1e308", b"1e+308"),
    ("1.7976931348623157e308", b"1.7976931348623157e+308"), ("123.456", b"123.456"),
    ("-2.5", b"-2.5"), ("0.001", b"0.001"), ("1234567.125", b"1234567.125"),
])
def test_scores_that_read_back_the_same_in_every_version(r, text, reply):
    assert run(r, "ZADD", "z", text, "a") == 1
    assert run(r, "ZSCORE", "z", "a") == reply


def test_hexadecimal_scores(server, r):
    """Redis 8.0 parses scores with fast_float (no hex); 7.x used strtod, which reads 0x10."""
    if server.kind == "brook" or server.version >= (8, 0):
        assert error_of(r, "ZADD", "z", "0x10", "a") == NOT_FLOAT
        assert error_of(r, "ZCOUNT", "z", "0x1", 2) == RANGE_NOT_FLOAT
    else:
        assert run(r, "ZADD", "z", "0x10", "a") == 1
        assert run(r, "ZSCORE", "z", "a") == b"16"


@pytest.mark.parametrize(("text", "newest"), [
    ("0.1", "0.1"), ("0.3", "0.3"), ("1e-7", "1e-7"), ("1.5e-7", "1.5e-7"),
    ("0.000001", "0.000001"), ("1e-5", "0.00001"), ("3.14159", "3.14159"),
    ("-0.1", "-0.1"), ("2.5e-308", "2.5e-308"), ("4.9e-324", "5e-324"),
    ("1e-320", "1e-320"), ("1.5e300", "1.5e+300"), ("1e21", "1e+21"),
    ("12345678901234567890", "12345678901234567000"),
    ("4611686018427387903", "4611686018427387904"),
    ("4611686018427387904", "4611686018427387904"),
    ("-4611686018427387904", "-4611686018427387904"),
    ("123456789012345678", "123456789012345680"),
    ("0.30000000000000004", "0.30000000000000004"),
])
def test_how_scores_are_printed(server, r, zenc, text, newest):
    """Redis >= 7.2 prints the shortest round-trip text (fpconv_dtoa, integers up to 2^62
    exactly), 7.0 ``%.17g``; ZSCORE, ZRANGE WITHSCORES, ZINCRBY and ZADD INCR agree."""
    expected = printed(server, newest, text)
    run(r, "ZADD", "z", text, "a")
    assert encoding(r, "z") == zenc.encode()
    assert run(r, "ZSCORE", "z", "a") == expected
    assert run(r, "ZMSCORE", "z", "a") == [expected]
    assert withscores(r, "z") == [b"a", expected]
    assert run(r, "ZINCRBY", "w", text, "m") == expected
    assert run(r, "ZADD", "v", "INCR", text, "m") == expected
    assert run(r, "ZPOPMIN", "z") == [b"a", expected]


def test_increments_print_seventeen_digits_when_needed(server, r, zenc):
    assert run(r, "ZINCRBY", "z", "0.1", "a") == printed(server, "0.1")
    assert run(r, "ZINCRBY", "z", "0.2", "a") == b"0.30000000000000004"
    assert run(r, "ZINCRBY", "z", "-0.30000000000000004", "a") == b"0"
    assert run(r, "ZINCRBY", "z", "1.0", "x") == b"1"
    assert run(r, "ZINCRBY", "z", "1e308", "big") == b"1e+308"
    assert run(r, "ZINCRBY", "z", "1e308", "big") == b"inf"


def test_negative_zero_is_minus_zero_in_a_skiplist_only(r):
    """A listpack keeps a score as text read back as an integer ("-0" becomes 0); a skiplist
    keeps the double, whose sign shows."""
    run(r, "ZADD", "lp", "-0", "m", "-0.0", "n")
    assert withscores(r, "lp") == [b"m", b"0", b"n", b"0"]
    r.config_set("zset-max-listpack-entries", 0)
    run(r, "ZADD", "sl", "-0", "m", "1", "one")
    assert encoding(r, "sl") == b"skiplist"
    assert run(r, "ZSCORE", "sl", "m") == b"-0"
    assert withscores(r, "sl") == [b"m", b"-0", b"one", b"1"]
    assert run(r, "ZINCRBY", "sl", 0, "m") == b"0"  # -0 + 0 is +0
    run(r, "ZADD", "sl", "-0", "m")
    assert run(r, "ZSCORE", "sl", "m") == b"-0"
    assert run(r, "ZRANGEBYSCORE", "sl", 0, 0) == [b"m"]  # -0 == 0 in ranges
    # -0 and 0 are one score: members holding either are ordered by their bytes.
    run(r, "ZADD", "sl", 0, "a", "-0", "z", 0, "n")
    assert withscores(r, "sl") == [b"a", b"0", b"m", b"-0", b"n", b"0", b"z", b"-0",
                                   b"one", b"1"]
    assert run(r, "ZRANK", "sl", "z") == 3
    assert run(r, "ZRANGEBYSCORE", "sl", "-0", "-0") == [b"a", b"m", b"n", b"z"]
    assert run(r, "ZRANGEBYSCORE", "sl", "(-1", "(0") == []
    run(r, "ZADD", "x", 0, "a", 1, "b", -1, "c")
    assert run(r, "ZUNIONSTORE", "w", 1, "x", "WEIGHTS", 0) == 3  # -1 * 0 is -0
    assert withscores(r, "w") == [b"a", b"0", b"b", b"0", b"c", b"-0"]
    cursor, flat = run(r, "ZSCAN", "sl", 0)
    assert cursor == b"0" and dict(zip(flat[::2], flat[1::2], strict=True)) == {
        b"a": b"0", b"m": b"-0", b"n": b"0", b"z": b"-0", b"one": b"1"}


def test_zadd_incr(r, zenc):
    run(r, "ZADD", "z", 10, "x", 20, "y", 30, "z")
    assert run(r, "ZADD", "z", "INCR", 15, "x") == b"25"
    assert run(r, "ZSCORE", "z", "x") == b"25"
    assert run(r, "ZADD", "z", "INCR", 1, "new") == b"1"
    assert run(r, "ZADD", "z", "NX", "INCR", 1, "x") is None
    assert run(r, "ZADD", "z", "XX", "INCR", 1, "nosuch") is None
    assert run(r, "ZADD", "z", "XX", "INCR", 1, "x") == b"26"
    assert run(r, "ZADD", "z", "CH", "INCR", 1, "x") == b"27"  # INCR replies with the score
    assert run(r, "ZADD", "z", "INCR", 0, "x") == b"27"
    assert run(r, "ZADD", "none", "XX", "INCR", 1, "a") is None
    assert run(r, "EXISTS", "none") == 0


def test_zadd_incr_lt_gt_replies_nil_when_not_updated(r, zenc):
    run(r, "ZADD", "z", 28, "x")
    assert run(r, "ZADD", "z", "LT", "INCR", 1, "x") is None
    assert run(r, "ZADD", "z", "GT", "INCR", -1, "x") is None
    assert run(r, "ZSCORE", "z", "x") == b"28"
    assert run(r, "ZADD", "z", "GT", "INCR", 1, "x") == b"29"
    assert run(r, "ZADD", "z", "LT", "INCR", -2, "x") == b"27"
    assert run(r, "ZADD", "z", "GT", "INCR", 5, "new") == b"5"  # a new member is always added
    run(r, "DEL", "z")
    run(r, "ZADD", "z", "+inf", "x", "-inf", "y")
    for flag, by in (("LT", 1), ("GT", -1), ("LT", -1), ("GT", 1)):
        assert run(r, "ZADD", "z", flag, "INCR", by, "x") is None
        assert run(r, "ZADD", "z", flag, "INCR", by, "y") is None
    assert withscores(r, "z") == [b"y", b"-inf", b"x", b"inf"]


def test_nan_results_are_refused(r, zenc):
    assert run(r, "ZINCRBY", "z", "+inf", "abc") == b"inf"
    assert error_of(r, "ZINCRBY", "z", "-inf", "abc") == (
        "resulting score is not a number (NaN)")
    assert error_of(r, "ZADD", "z", "INCR", "-inf", "abc") == (
        "resulting score is not a number (NaN)")
    assert run(r, "ZSCORE", "z", "abc") == b"inf"
    assert error_of(r, "ZINCRBY", "z", "nan", "abc") == NOT_FLOAT
    assert run(r, "ZADD", "z", "INCR", "-inf", "other") == b"-inf"


def test_zincrby(r, zenc):
    assert run(r, "ZINCRBY", "zset", 1, "foo") == b"1"
    assert members(r, "zset") == [b"foo"]
    assert encoding(r, "zset") == zenc.encode()
    run(r, "ZINCRBY", "zset", 2, "foo")
    run(r, "ZINCRBY", "zset", 1, "bar")
    assert members(r, "zset") == [b"bar", b"foo"]
    run(r, "ZINCRBY", "zset", 10, "bar")
    run(r, "ZINCRBY", "zset", -5, "foo")
    run(r, "ZINCRBY", "zset", -5, "bar")
    assert members(r, "zset") == [b"foo", b"bar"]
    assert run(r, "ZMSCORE", "zset", "foo", "bar") == [b"-2", b"6"]
    assert run(r, "ZINCRBY", "t", "1.0", "x") == b"1"
    assert error_of(r, "ZINCRBY", "zset", "v", "foo") == NOT_FLOAT
    assert error_of(r, "ZINCRBY", "zset", 10, "a", 20, "b") == (
        "wrong number of arguments for 'zincrby' command")


# ---------------------------------------------------------------------------------------------
# RESP3 shapes and doubles
# ---------------------------------------------------------------------------------------------


def _resp3(raw: RawConnection) -> None:
    raw.send(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")
    data = b""
    while b"modules" not in data:
        data += raw.sock.recv(65536)
    if not data.endswith(b"*0\r\n"):
        data += raw.read(b"*0\r\n")


def test_resp3_doubles_and_nulls_on_the_wire(server, raw):
    assert call(raw, "ZADD", "z", "0.1", "a", "3", "b", "-inf", "c", "inf", "d") == b":4\r\n"
    assert call(raw, "ZSCORE", "z", "a") == b"$%d\r\n%s\r\n" % (
        len(printed(server, "0.1")), printed(server, "0.1"))
    _resp3(raw)
    assert call(raw, "ZSCORE", "z", "a") == b"," + printed(server, "0.1") + b"\r\n"
    assert call(raw, "ZSCORE", "z", "b") == b",3\r\n"
    assert call(raw, "ZSCORE", "z", "c") == b",-inf\r\n"
    assert call(raw, "ZSCORE", "z", "d") == b",inf\r\n"
    assert call(raw, "ZSCORE", "z", "nosuch") == b"_\r\n"
    assert call(raw, "ZSCORE", "nokey", "a") == b"_\r\n"
    assert call(raw, "ZMSCORE", "z", "b", "nosuch") == b"*2\r\n,3\r\n_\r\n"
    assert call(raw, "ZINCRBY", "z", "1", "b") == b",4\r\n"
    assert call(raw, "ZADD", "z", "INCR", "1", "b") == b",5\r\n"
    assert call(raw, "ZADD", "z", "NX", "INCR", "1", "b") == b"_\r\n"
    assert call(raw, "ZRANK", "z", "nosuch") == b"_\r\n"
    assert call(raw, "ZRANGE", "z", "0", "1", "WITHSCORES") == (
        b"*2\r\n*2\r\n$1\r\nc\r\n,-inf\r\n*2\r\n$1\r\na\r\n," + printed(server, "0.1")
        + b"\r\n")
    assert call(raw, "ZRANGE", "z", "0", "1") == b"*2\r\n$1\r\nc\r\n$1\r\na\r\n"
    assert call(raw, "ZRANGEBYSCORE", "z", "4", "5", "WITHSCORES") == (
        b"*1\r\n*2\r\n$1\r\nb\r\n,5\r\n")
    assert call(raw, "ZUNION", "1", "z", "WITHSCORES").startswith(b"*4\r\n*2\r\n$1\r\nc\r\n")
    assert call(raw, "ZRANDMEMBER", "nokey") == b"_\r\n"
    assert call(raw, "ZRANDMEMBER", "nokey", "3") == b"*0\r\n"
    assert call(raw, "ZMPOP", "1", "nokey", "MIN") == b"_\r\n"
    assert call(raw, "ZSCAN", "z", "0") == (
        b"*2\r\n$1\r\n0\r\n*8\r\n$1\r\nc\r\n$4\r\n-inf\r\n$1\r\na\r\n$%d\r\n%s\r\n"
        b"$1\r\nb\r\n$1\r\n5\r\n$1\r\nd\r\n$3\r\ninf\r\n"
        % (len(printed(server, "0.1")), printed(server, "0.1")))  # scores stay bulk strings


def test_resp3_through_a_client(r3):
    run(r3, "ZADD", "z", 1, "a", 2, "b", 3, "c", "0.5", "d")
    assert run(r3, "ZSCORE", "z", "a") == 1.0
    assert run(r3, "ZRANGE", "z", 0, -1, "WITHSCORES") == [[b"d", 0.5], [b"a", 1.0], [b"b", 2.0],
                                                          [b"c", 3.0]]
    assert run(r3, "ZREVRANGE", "z", 0, 1, "WITHSCORES") == [[b"c", 3.0], [b"b", 2.0]]
    assert run(r3, "ZINTER", 1, "z", "WITHSCORES")[0] == [b"d", 0.5]
    assert run(r3, "ZDIFF", 1, "z", "WITHSCORES")[-1] == [b"c", 3.0]
    assert run(r3, "ZPOPMIN", "z") == [b"d", 0.5]
    assert run(r3, "ZPOPMAX", "z", 2) == [[b"c", 3.0], [b"b", 2.0]]
    assert run(r3, "ZPOPMIN", "z", 0) == []
    assert run(r3, "ZMPOP", 1, "z", "MAX") == [b"z", [[b"a", 1.0]]]
    assert run(r3, "ZMPOP", 1, "z", "MAX") is None


# ---------------------------------------------------------------------------------------------
# ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK
# ---------------------------------------------------------------------------------------------


def test_zcard_zscore_zmscore(r, zenc):
    run(r, "ZADD", "z", 10, "x", 20, "y")
    assert run(r, "ZCARD", "z") == 2
    assert run(r, "ZCARD", "nosuch") == 0
    assert run(r, "ZSCORE", "z", "x") == b"10"
    assert run(r, "ZSCORE", "z", "nosuch") is None
    assert run(r, "ZSCORE", "nosuch", "x") is None
    assert run(r, "ZMSCORE", "z", "x", "y") == [b"10", b"20"]
    assert run(r, "ZMSCORE", "z", "x", "nosuch") == [b"10", None]
    assert run(r, "ZMSCORE", "z", "y") == [b"20"]
    assert run(r, "ZMSCORE", "nosuch", "x", "y") == [None, None]
    assert error_of(r, "ZMSCORE", "z") == "wrong number of arguments for 'zmscore' command"


def test_zrank_zrevrank(r, raw, zenc):
    run(r, "ZADD", "z", 10, "x", 20, "y", 30, "z")
    assert [run(r, "ZRANK", "z", m) for m in ("x", "y", "z")] == [0, 1, 2]
    assert [run(r, "ZREVRANK", "z", m) for m in ("x", "y", "z")] == [2, 1, 0]
    assert call(raw, "ZRANK", "z", "foo") == b"$-1\r\n"
    assert call(raw, "ZREVRANK", "z", "foo") == b"$-1\r\n"
    assert call(raw, "ZRANK", "nosuch", "foo") == b"$-1\r\n"
    run(r, "ZREM", "z", "y")
    assert (run(r, "ZRANK", "z", "x"), run(r, "ZRANK", "z", "z")) == (0, 1)


@pytest.mark.min_redis(7, 2)
def test_zrank_withscore(server, r, raw, zenc):
    run(r, "ZADD", "z", 10, "x", 20, "y", "0.1", "z")
    assert run(r, "ZRANK", "z", "x", "WITHSCORE") == [1, b"10"]
    assert run(r, "ZRANK", "z", "y", "withscore") == [2, b"20"]
    assert run(r, "ZREVRANK", "z", "y", "WITHSCORE") == [0, b"20"]
    assert run(r, "ZREVRANK", "z", "z", "WITHSCORE") == [2, printed(server, "0.1")]
    assert call(raw, "ZRANK", "z", "foo", "WITHSCORE") == b"*-1\r\n"
    assert call(raw, "ZREVRANK", "nosuch", "foo", "WITHSCORE") == b"*-1\r\n"
    assert error_of(r, "ZRANK", "z", "x", "foo") == "syntax error"
    assert error_of(r, "ZRANK", "z", "x", "WITHSCORE", "foo") == (
        "wrong number of arguments for 'zrank' command")
    _resp3(raw)
    assert call(raw, "ZRANK", "z", "x", "WITHSCORE") == b"*2\r\n:1\r\n,10\r\n"
    assert call(raw, "ZRANK", "z", "foo", "WITHSCORE") == b"_\r\n"


def test_zrank_withscore_is_unknown_to_redis_7_0(server, r):
    if server.kind == "brook" or server.version >= (7, 2):
        pytest.skip("WITHSCORE exists since Redis 7.2")
    run(r, "ZADD", "z", 1, "a")
    assert error_of(r, "ZRANK", "z", "a", "WITHSCORE") == (
        "wrong number of arguments for 'zrank' command")


# ---------------------------------------------------------------------------------------------
# Ranges: by rank, by score, by lex; ZRANGE's unified form; ZRANGESTORE
# ---------------------------------------------------------------------------------------------


def test_zrange_by_rank(r, zenc):
    run(r, "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
    cases = {(0, -1): b"abcd", (0, -2): b"abc", (1, -1): b"bcd", (1, -2): b"bc",
             (-2, -1): b"cd", (-2, -2): b"c", (-5, 2): b"abc", (-5, 1): b"ab", (5, -1): b"",
             (5, -2): b"", (0, 5): b"abcd", (1, 5): b"bcd", (0, -5): b"", (1, -5): b""}
    reverse = {(0, -1): b"dcba", (0, -2): b"dcb", (1, -1): b"cba", (1, -2): b"cb",
               (-2, -1): b"ba", (-2, -2): b"b", (-5, 2): b"dcb", (-5, 1): b"dc", (5, -1): b"",
               (5, -2): b"", (0, 5): b"dcba", (1, 5): b"cba", (0, -5): b"", (1, -5): b""}
    for (start, stop), expected in cases.items():
        assert run(r, "ZRANGE", "z", start, stop) == [bytes([c]) for c in expected]
        assert run(r, "ZREVRANGE", "z", start, stop) == [bytes([c]) for c in
                                                         reverse[start, stop]]
    assert run(r, "ZRANGE", "z", 0, -1, "WITHSCORES") == [b"a", b"1", b"b", b"2", b"c", b"3",
                                                         b"d", b"4"]
    assert run(r, "ZREVRANGE", "z", 0, -1, "WITHSCORES") == [b"d", b"4", b"c", b"3", b"b", b"2",
                                                            b"a", b"1"]
    assert run(r, "ZRANGE", "z", 0, -1, "REV") == [b"d", b"c", b"b", b"a"]
    assert run(r, "ZRANGE", "z", 0, -1, "WITHSCORES", "WITHSCORES") == withscores(r, "z")
    assert run(r, "ZRANGE", "nosuch", 0, -1) == []


def _default_zset(r: redis.Redis) -> None:
    _zset(r, "zset", "-inf", "a", 1, "b", 2, "c", 3, "d", 4, "e", 5, "f", "+inf", "g")


def test_zrangebyscore_zrevrangebyscore_zcount(r, zenc):
    _default_zset(r)

    def check(command: str, low: str | int, high: str | int, expected: str) -> None:
        assert run(r, command, "zset", low, high) == [c.encode() for c in expected], (low, high)

    for low, high, expected in (("-inf", 2, "abc"), (0, 3, "bcd"),
                                (3, 6, "def"), (4, "+inf", "efg"), ("(-inf", "(2", "b"),
                                ("(0", "(3", "bc"), ("(3", "(6", "ef"), ("(4", "(+inf", "f")):
        check("ZRANGEBYSCORE", low, high, expected)
    for high, low, expected in ((2, "-inf", "cba"), (3, 0, "dcb"), (6, 3, "fed"),
                                ("+inf", 4, "gfe"), ("(2", "(-inf", "b"), ("(3", "(0", "cb"),
                                ("(6", "(3", "fe"), ("(+inf", "(4", "f")):
        check("ZREVRANGEBYSCORE", high, low, expected)
    assert run(r, "ZCOUNT", "zset", 0, 3) == 3
    assert run(r, "ZCOUNT", "zset", "(0", "(3") == 2
    assert run(r, "ZCOUNT", "zset", "-inf", "+inf") == 7
    run(r, "ZREM", "zset", "a", "g")
    for low, high in ((4, 2), (6, "+inf"), ("-inf", -6), ("(4", "(2"), (2, "(2"), ("(2", 2),
                      ("(6", "(+inf"), ("(-inf", "(-6"), ("2.4", "2.6"), ("(2.4", "2.6"),
                      ("2.4", "(2.6"), ("(2.4", "(2.6")):
        check("ZRANGEBYSCORE", low, high, "")
    for high, low in (("+inf", 6), (-6, "-inf"), ("(+inf", "(6"), ("(-6", "(-inf")):
        check("ZREVRANGEBYSCORE", high, low, "")
    assert run(r, "ZCOUNT", "zset", 4, 2) == 0
    assert run(r, "ZCOUNT", "nosuch", 0, 1) == 0


def negative_offsets_answer_nothing(server: ServerProcess, zenc: str) -> bool:
    """LIMIT with a negative offset answers nothing. From Redis 7.4 (#12450) a skiplist counted
    it from the end of the range instead, a bug fixed by #14043 (issue #13952, 2025): the 8.0
    development build still has it."""
    return zenc == "listpack" or server.kind == "brook" or not (7, 4) <= server.version < (8, 2)


def test_negative_limit_offsets(server, r, zenc):
    run(r, "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
    if not negative_offsets_answer_nothing(server, zenc):
        pytest.skip("this Redis counts a skiplist's negative offsets from the end (#13952)")
    for args in (("ZRANGEBYSCORE", "z", 1, 4, "LIMIT", -1, 2),
                 ("ZREVRANGEBYSCORE", "z", 4, 1, "LIMIT", -2, 5),
                 ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", -1, 1),
                 ("ZREVRANGEBYLEX", "z", "+", "-", "LIMIT", -1, 1),
                 ("ZRANGE", "z", 1, 4, "BYSCORE", "LIMIT", -1, 2),
                 ("ZRANGE", "z", "-", "+", "BYLEX", "REV", "LIMIT", -3, -1)):
        assert run(r, *args) == [], args
    run(r, "ZADD", "dst", 1, "old")
    assert run(r, "ZRANGESTORE", "dst", "z", 1, 4, "BYSCORE", "LIMIT", -1, 2) == 0
    assert run(r, "EXISTS", "dst") == 0


def test_zrangebyscore_withscores_and_limit(r, zenc):
    _default_zset(r)
    assert run(r, "ZRANGEBYSCORE", "zset", 0, 3, "WITHSCORES") == [b"b", b"1", b"c", b"2",
                                                                  b"d", b"3"]
    assert run(r, "ZREVRANGEBYSCORE", "zset", 3, 0, "WITHSCORES") == [b"d", b"3", b"c", b"2",
                                                                     b"b", b"1"]
    limits = {("ZRANGEBYSCORE", 0, 10, 0, 2): "bc", ("ZRANGEBYSCORE", 0, 10, 2, 3): "def",
              ("ZRANGEBYSCORE", 0, 10, 2, 10): "def", ("ZRANGEBYSCORE", 0, 10, 20, 10): "",
              ("ZREVRANGEBYSCORE", 10, 0, 0, 2): "fe", ("ZREVRANGEBYSCORE", 10, 0, 2, 3): "dcb",
              ("ZREVRANGEBYSCORE", 10, 0, 2, 10): "dcb", ("ZREVRANGEBYSCORE", 10, 0, 20, 10): "",
              ("ZRANGEBYSCORE", 0, 10, 1, -1): "cdef",
              ("ZRANGEBYSCORE", 0, 10, 0, 0): ""}
    for (command, low, high, offset, count), expected in limits.items():
        assert run(r, command, "zset", low, high, "LIMIT", offset, count) == [
            c.encode() for c in expected], (command, offset, count)
    assert run(r, "ZRANGEBYSCORE", "zset", 2, 5, "LIMIT", 2, 3, "WITHSCORES") == [
        b"e", b"4", b"f", b"5"]
    assert run(r, "ZRANGEBYSCORE", "zset", 2, 5, "WITHSCORES", "LIMIT", 2, 3) == [
        b"e", b"4", b"f", b"5"]
    assert run(r, "ZREVRANGEBYSCORE", "zset", 5, 2, "LIMIT", 2, 3, "WITHSCORES") == [
        b"d", b"3", b"c", b"2"]
    assert run(r, "ZRANGEBYSCORE", "zset", 2, 5, "LIMIT", 12, 13, "WITHSCORES") == []
    # Past ZSKIPLIST_MAX_SEARCH the skiplist seeks by rank: offsets beyond 10.
    _zset(r, "long", *[x for i in range(30) for x in (i, f"i{i}")])
    cases = {("ZRANGEBYSCORE", 0, 20, 12, 3): ["i12", "i13", "i14"],
             ("ZRANGEBYSCORE", 0, 20, 14, 2): ["i14", "i15"],
             ("ZRANGEBYSCORE", 0, 30, 19, 3): ["i19", "i20", "i21"],
             ("ZRANGEBYSCORE", 10, 30, 19, 2): ["i29"],
             ("ZREVRANGEBYSCORE", 30, 10, 12, 3): ["i17", "i16", "i15"],
             ("ZREVRANGEBYSCORE", 20, 0, 14, 2): ["i6", "i5"],
             ("ZREVRANGEBYSCORE", 20, 0, 18, 5): ["i2", "i1", "i0"],
             ("ZREVRANGEBYSCORE", 20, 0, 20, 5): ["i0"]}
    for (command, low, high, offset, count), expected in cases.items():
        assert run(r, command, "long", low, high, "LIMIT", offset, count) == [
            e.encode() for e in expected]


def _lex_zset(r: redis.Redis, key: str = "zset", long: bool = False) -> None:
    words = ["alpha", "bar", "cool", "down", "elephant", "foo", "great", "hill", "omega"]
    if long:
        words = ["alpha", "bar", "cool", "down", "elephant", "foo", "great", "hill", "island",
                 "jacket", "key", "lip", "max", "null", "omega", "point", "query", "result",
                 "sea", "tree"]
    _zset(r, key, *[x for word in words for x in (0, word)])


def _words(text: str) -> list[bytes]:
    return [w.encode() for w in text.split()]


def test_zrangebylex_zrevrangebylex_zlexcount(r, zenc):
    _lex_zset(r)
    for low, high, expected in (("-", "[cool", "alpha bar cool"), ("[bar", "[down", "bar cool down"),
                                ("[g", "+", "great hill omega"), ("-", "(cool", "alpha bar"),
                                ("(bar", "(down", "cool"), ("(great", "+", "hill omega"),
                                ("(az", "(b", ""), ("(z", "+", ""), ("-", "[aaaa", "")):
        assert run(r, "ZRANGEBYLEX", "zset", low, high) == _words(expected), (low, high)
    for high, low, expected in (("[cool", "-", "cool bar alpha"),
                                ("[down", "[bar", "down cool bar"),
                                ("+", "[d", "omega hill great foo elephant down"),
                                ("(cool", "-", "bar alpha"), ("(down", "(bar", "cool"),
                                ("+", "(great", "omega hill"), ("[elez", "[elex", ""),
                                ("(hill", "(omega", "")):
        assert run(r, "ZREVRANGEBYLEX", "zset", high, low) == _words(expected), (high, low)
    counts = {("[ele", "[h"): 3, ("(ele", "(great"): 2, ("-", "+"): 9, ("+", "-"): 0,
              ("+", "[c"): 0, ("[c", "-"): 0, ("[bar", "+"): 8, ("[bar", "[foo"): 5,
              ("[bar", "(foo"): 4, ("(bar", "[foo"): 4, ("(bar", "(foo"): 3, ("-", "(foo"): 5,
              ("(maxstring", "+"): 1}
    for (low, high), expected in counts.items():
        assert run(r, "ZLEXCOUNT", "zset", low, high) == expected, (low, high)
    assert run(r, "ZLEXCOUNT", "nosuch", "-", "+") == 0


def test_zrangebylex_with_limit(r, zenc):
    _lex_zset(r)
    cases = {("ZRANGEBYLEX", "-", "[cool", 0, 2): "alpha bar",
             ("ZRANGEBYLEX", "-", "[cool", 1, 2): "bar cool",
             ("ZRANGEBYLEX", "[bar", "[down", 0, 0): "",
             ("ZRANGEBYLEX", "[bar", "[down", 2, 0): "",
             ("ZRANGEBYLEX", "[bar", "[down", 0, 1): "bar",
             ("ZRANGEBYLEX", "[bar", "[down", 1, 1): "cool",
             ("ZRANGEBYLEX", "[bar", "[down", 0, 100): "bar cool down",
             ("ZREVRANGEBYLEX", "+", "[d", 0, 5): "omega hill great foo elephant",
             ("ZREVRANGEBYLEX", "+", "[d", 0, 4): "omega hill great foo",
             ("ZREVRANGEBYLEX", "+", "[d", 2, 3): "great foo elephant"}
    for (command, low, high, offset, count), expected in cases.items():
        assert run(r, command, "zset", low, high, "LIMIT", offset, count) == _words(expected)
    _lex_zset(r, long=True)
    cases = {("ZRANGEBYLEX", "-", "[tree", 12, 2): "max null",
             ("ZRANGEBYLEX", "-", "[tree", 15, 2): "point query",
             ("ZRANGEBYLEX", "[max", "[tree", 10, 0): "",
             ("ZRANGEBYLEX", "[max", "[tree", 12, 0): "",
             ("ZRANGEBYLEX", "[max", "[null", 0, 1): "max",
             ("ZRANGEBYLEX", "[max", "[null", 1, 1): "null",
             ("ZRANGEBYLEX", "[max", "[point", 0, 100): "max null omega point",
             ("ZREVRANGEBYLEX", "+", "[o", 0, 5): "tree sea result query point",
             ("ZREVRANGEBYLEX", "+", "[o", 0, 4): "tree sea result query",
             ("ZREVRANGEBYLEX", "+", "[l", 5, 4): "omega null max lip",
             ("ZREVRANGEBYLEX", "+", "[a", 15, 2): "elephant down",
             ("ZREVRANGEBYLEX", "+", "-", 18, 6): "bar alpha",
             ("ZREVRANGEBYLEX", "+", "[c", 12, 3): "hill great foo"}
    for (command, low, high, offset, count), expected in cases.items():
        assert run(r, command, "zset", low, high, "LIMIT", offset, count) == _words(expected)


def test_lex_ranges_compare_bytes(r, zenc):
    run(r, "ZADD", "z", 0, "a", 0, "a\x00", 0, "ab", 0, "b", 0, "\xff", 0, "")
    assert run(r, "ZRANGEBYLEX", "z", "[a", "(b") == [b"a", b"a\x00", b"ab"]
    assert run(r, "ZRANGEBYLEX", "z", "(a", "[ab") == [b"a\x00", b"ab"]
    assert run(r, "ZRANGEBYLEX", "z", "[", "(a") == [b""]
    assert run(r, "ZRANGEBYLEX", "z", "(", "+") == [b"a", b"a\x00", b"ab", b"b", "\xff".encode()]
    assert run(r, "ZRANGEBYLEX", "z", "(b", "+") == ["\xff".encode()]


def test_zrange_unified_forms(r, zenc):
    run(r, "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
    assert run(r, "ZRANGE", "z", 5, 0, "BYSCORE", "REV", "LIMIT", 0, 2, "WITHSCORES") == [
        b"d", b"4", b"c", b"3"]
    assert run(r, "ZRANGE", "z", 4, 1, "byscore", "rev", "withscores") == [
        b"d", b"4", b"c", b"3", b"b", b"2", b"a", b"1"]
    assert run(r, "ZRANGE", "z", 0, -1, "BYSCORE", "REV") == []
    assert run(r, "ZRANGE", "z", 1, 4, "BYSCORE", "LIMIT", 1, 2, "WITHSCORES") == [
        b"b", b"2", b"c", b"3"]
    assert run(r, "ZRANGE", "z", 1, 4, "BYSCORE", "LIMIT", 1, -1) == [b"b", b"c", b"d"]
    assert run(r, "ZRANGE", "z", 1, 4, "BYSCORE", "LIMIT", 0, -5) == [b"a", b"b", b"c", b"d"]
    assert run(r, "ZRANGE", "z", 0, -1, "LIMIT", 0, 1, "BYSCORE") == []  # scores 0 to -1
    assert run(r, "ZRANGE", "z", "(1", "(4", "BYSCORE") == [b"b", b"c"]
    assert run(r, "ZRANGE", "z", "(", 4, "BYSCORE") == [b"a", b"b", b"c", b"d"]  # "(" is 0
    for low, high in (("-inf", "+inf"), ("-inf", "inf"), ("-INF", "INF"),
                      ("-Infinity", "Infinity"), ("1e0", "4")):
        assert run(r, "ZRANGE", "z", low, high, "BYSCORE") == [b"a", b"b", b"c", b"d"]
    assert run(r, "ZRANGE", "z", "[b", "[c", "BYLEX") == [b"b", b"c"]
    assert run(r, "ZRANGE", "z", "(a", "[b", "BYLEX") == [b"b"]
    assert run(r, "ZRANGE", "z", "-", "+", "BYLEX", "LIMIT", 0, 2) == [b"a", b"b"]
    assert run(r, "ZRANGE", "z", "+", "-", "BYLEX", "REV") == [b"d", b"c", b"b", b"a"]
    assert run(r, "ZRANGE", "z", "+", "-", "BYLEX", "REV", "LIMIT", 1, 2) == [b"c", b"b"]


@pytest.mark.parametrize(("args", "error"), [
    ((0, -1, "LIMIT", 0, 1),
     "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"),
    ((0, -1, "BYLEX", "WITHSCORES"),
     "syntax error, WITHSCORES not supported in combination with BYLEX"),
    (("-", "+", "BYLEX", "WITHSCORES", "LIMIT", 0, 1),
     "syntax error, WITHSCORES not supported in combination with BYLEX"),
    ((0, -1, "BYSCORE", "BYLEX"), "syntax error"),
    ((0, -1, "BYLEX", "BYSCORE"), "syntax error"),
    ((0, -1, "FOO"), "syntax error"),
    ((1, 4, "BYSCORE", "LIMIT", 1), "syntax error"),
    ((1, 4, "BYSCORE", "LIMIT", 1, "x"), NOT_INTEGER),
    ((1, 4, "BYSCORE", "LIMIT", "x", 1), NOT_INTEGER),
    (("a", "b", "BYLEX"), RANGE_NOT_LEX),
    ((0, "x", "BYSCORE"), RANGE_NOT_FLOAT),
    (("((1", 4, "BYSCORE"), RANGE_NOT_FLOAT),
    (("[1", 4, "BYSCORE"), RANGE_NOT_FLOAT),
    ((1, "nan", "BYSCORE"), RANGE_NOT_FLOAT),
    (("x", 0), NOT_INTEGER),
    ((0, "1.5"), NOT_INTEGER),
    ((0, "99999999999999999999"), NOT_INTEGER),
    (("-99999999999999999999", -1), NOT_INTEGER),
])
def test_zrange_errors(r, args, error):
    run(r, "ZADD", "z", 1, "a")
    assert error_of(r, "ZRANGE", "z", *args) == error
    assert error_of(r, "ZRANGE", "nosuch", *args) == error


@pytest.mark.parametrize(("command", "args", "error"), [
    ("ZRANGEBYSCORE", (1, 4, "REV"), "syntax error"),
    ("ZRANGEBYSCORE", (1, 4, "BYSCORE"), "syntax error"),
    ("ZRANGEBYSCORE", (1, 4, "LIMIT"), "syntax error"),
    ("ZRANGEBYSCORE", (1, 4, "LIMIT", 1), "syntax error"),
    ("ZRANGEBYSCORE", ("str", 1), RANGE_NOT_FLOAT),
    ("ZRANGEBYSCORE", (1, "str"), RANGE_NOT_FLOAT),
    ("ZRANGEBYSCORE", (1, "NaN"), RANGE_NOT_FLOAT),
    ("ZREVRANGEBYSCORE", ("(", "(("), RANGE_NOT_FLOAT),
    ("ZRANGEBYLEX", ("-", "+", "WITHSCORES"),
     "syntax error, WITHSCORES not supported in combination with BYLEX"),
    ("ZRANGEBYLEX", ("foo", "bar"), RANGE_NOT_LEX),
    ("ZRANGEBYLEX", ("[foo", "bar"), RANGE_NOT_LEX),
    ("ZRANGEBYLEX", ("foo", "[bar"), RANGE_NOT_LEX),
    ("ZRANGEBYLEX", ("+x", "[bar"), RANGE_NOT_LEX),
    ("ZRANGEBYLEX", ("-x", "[bar"), RANGE_NOT_LEX),
    ("ZREVRANGEBYLEX", ("", "-"), RANGE_NOT_LEX),
    ("ZREVRANGE", (0, -1, "BYSCORE"), "syntax error"),
    ("ZREVRANGE", (0, 1, "WITHSCORES", "foo"), "syntax error"),
    ("ZCOUNT", ("x", 3), RANGE_NOT_FLOAT),
    ("ZCOUNT", (1, "(x"), RANGE_NOT_FLOAT),
    ("ZLEXCOUNT", ("a", "b"), RANGE_NOT_LEX),
    ("ZREMRANGEBYSCORE", ("str", 1), RANGE_NOT_FLOAT),
    ("ZREMRANGEBYSCORE", (1, "NaN"), RANGE_NOT_FLOAT),
    ("ZREMRANGEBYLEX", ("a", "b"), RANGE_NOT_LEX),
    ("ZREMRANGEBYRANK", ("x", 1), NOT_INTEGER),
])
def test_range_errors_come_before_the_key_is_read(r, command, args, error):
    run(r, "ZADD", "z", 1, "a")
    r.set("str", "x")
    for key in ("z", "nosuch", "str"):
        assert error_of(r, command, key, *args) == error, key


def test_zrangestore(r, zenc):
    run(r, "ZADD", "z1", 1, "a", 2, "b", 3, "c", 4, "d")
    assert run(r, "ZRANGESTORE", "z2", "z1", 0, -1) == 4
    assert withscores(r, "z2") == [b"a", b"1", b"b", b"2", b"c", b"3", b"d", b"4"]
    assert run(r, "ZRANGESTORE", "z2", "z1", 1, 2) == 2
    assert withscores(r, "z2") == [b"b", b"2", b"c", b"3"]
    assert run(r, "ZRANGESTORE", "z3", "z1", "[b", "[c", "BYLEX") == 2
    assert withscores(r, "z3") == [b"b", b"2", b"c", b"3"]
    assert run(r, "ZRANGESTORE", "z4", "z1", 1, 2, "BYSCORE") == 2
    assert withscores(r, "z4") == [b"a", b"1", b"b", b"2"]
    assert run(r, "ZRANGESTORE", "z2", "z1", 0, 5, "BYSCORE", "LIMIT", 0, 2) == 2
    assert withscores(r, "z2") == [b"a", b"1", b"b", b"2"]
    assert run(r, "ZRANGESTORE", "z2", "z1", 5, 0, "BYSCORE", "REV", "LIMIT", 0, 2) == 2
    assert withscores(r, "z2") == [b"c", b"3", b"d", b"4"]
    assert run(r, "ZRANGESTORE", "z2", "z1", 0, 1, "REV") == 2
    assert withscores(r, "z2") == [b"c", b"3", b"d", b"4"]
    r.set("z5", "string", ex=100)
    assert run(r, "ZRANGESTORE", "z5", "z1", 0, 0) == 1  # any old value is replaced
    assert withscores(r, "z5") == [b"a", b"1"] and r.ttl("z5") == -1
    assert run(r, "ZRANGESTORE", "z1", "z1", 1, 1) == 1  # the source as its destination
    assert withscores(r, "z1") == [b"b", b"2"]


def test_zrangestore_empty_results_delete_the_destination(r):
    run(r, "ZADD", "z1", 1, "a", 2, "b")
    for args in ((5, 6), ("[f", "[g", "BYLEX"), (5, 6, "BYSCORE")):
        run(r, "ZADD", "z2", 1, "old")
        assert run(r, "ZRANGESTORE", "z2", "z1", *args) == 0
        assert run(r, "EXISTS", "z2") == 0
    run(r, "ZADD", "z2", 1, "old")
    assert run(r, "ZRANGESTORE", "z2", "missing", 0, -1) == 0
    assert run(r, "EXISTS", "z2") == 0


def test_zrangestore_errors(r):
    run(r, "ZADD", "z1", 1, "a")
    run(r, "ZADD", "z2", 1, "a")
    r.set("foo", "bar")
    assert error_of(r, "ZRANGESTORE", "z2", "foo", 0, -1) == WRONGTYPE
    assert members(r, "z2") == [b"a"]
    assert error_of(r, "ZRANGESTORE", "z2", "z1", 0, -1, "LIMIT", 1, 2) == (
        "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    assert error_of(r, "ZRANGESTORE", "z2", "z1", 0, -1, "WITHSCORES") == "syntax error"
    assert error_of(r, "ZRANGESTORE", "z2", "z1", "x", 1) == NOT_INTEGER
    assert error_of(r, "ZRANGESTORE", "z2", "z1", 0) == (
        "wrong number of arguments for 'zrangestore' command")


# ---------------------------------------------------------------------------------------------
# ZREM and removal by range
# ---------------------------------------------------------------------------------------------


def test_zrem(r, zenc):
    run(r, "ZADD", "z", 10, "x", 20, "y")
    assert run(r, "ZREM", "z", "z") == 0
    assert run(r, "ZREM", "z", "y") == 1
    assert run(r, "ZREM", "z", "x") == 1
    assert run(r, "EXISTS", "z") == 0
    run(r, "ZADD", "z", 10, "a", 20, "b", 30, "c")
    assert run(r, "ZREM", "z", "x", "y", "a", "b", "k") == 2
    assert run(r, "ZREM", "z", "foo", "bar") == 0
    assert run(r, "ZREM", "z", "c") == 1
    assert run(r, "EXISTS", "z") == 0
    run(r, "ZADD", "z", 10, "a", 20, "b", 30, "c")
    assert run(r, "ZREM", "z", "a", "b", "c", "d", "e", "f", "g") == 3
    assert run(r, "ZREM", "nosuch", "a") == 0
    assert error_of(r, "ZREM", "z") == "wrong number of arguments for 'zrem' command"


@pytest.mark.parametrize(("low", "high", "removed", "left"), [
    (2, 4, 3, "ae"), (-10, 1, 1, "bcde"), (5, 10, 1, "abcd"), (4, 2, 0, "abcde"),
    ("-inf", 3, 3, "de"), (3, "+inf", 3, "ab"), ("-inf", "+inf", 5, ""), ("(1", 5, 4, "a"),
    ("(2", 5, 3, "ab"), (1, "(5", 4, "e"), (1, "(4", 3, "de"), ("(1", "(5", 3, "ae"),
    (1, 5, 5, ""),
])
def test_zremrangebyscore(r, zenc, low, high, removed, left):
    _zset(r, "zset", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
    assert run(r, "ZREMRANGEBYSCORE", "zset", low, high) == removed
    assert members(r, "zset") == [c.encode() for c in left]
    assert run(r, "EXISTS", "zset") == int(bool(left))


@pytest.mark.parametrize(("start", "stop", "removed", "left"), [
    (1, 3, 3, "ae"), (-10, 0, 1, "bcde"), (10, -1, 0, "abcde"), (0, -10, 0, "abcde"),
    (0, 10, 5, ""), (0, 4, 5, ""), (-2, -1, 2, "abc"), (3, 1, 0, "abcde"),
])
def test_zremrangebyrank(r, zenc, start, stop, removed, left):
    _zset(r, "zset", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
    assert run(r, "ZREMRANGEBYRANK", "zset", start, stop) == removed
    assert members(r, "zset") == [c.encode() for c in left]
    assert run(r, "EXISTS", "zset") == int(bool(left))


@pytest.mark.parametrize(("low", "high", "removed", "left"), [
    ("-", "[cool", 3, "down elephant foo great hill omega"),
    ("[bar", "[down", 3, "alpha elephant foo great hill omega"),
    ("[g", "+", 3, "alpha bar cool down elephant foo"),
    ("-", "(cool", 2, "cool down elephant foo great hill omega"),
    ("(bar", "(down", 1, "alpha bar down elephant foo great hill omega"),
    ("(great", "+", 2, "alpha bar cool down elephant foo great"),
    ("(az", "(b", 0, "alpha bar cool down elephant foo great hill omega"),
    ("(z", "+", 0, "alpha bar cool down elephant foo great hill omega"),
    ("-", "[aaaa", 0, "alpha bar cool down elephant foo great hill omega"),
    ("-", "+", 9, ""),
])
def test_zremrangebylex(r, zenc, low, high, removed, left):
    _lex_zset(r)
    assert run(r, "ZREMRANGEBYLEX", "zset", low, high) == removed
    assert members(r, "zset") == _words(left)
    assert run(r, "EXISTS", "zset") == int(bool(left))


def test_zremrange_of_a_missing_key(r):
    assert run(r, "ZREMRANGEBYSCORE", "nosuch", 0, 1) == 0
    assert run(r, "ZREMRANGEBYRANK", "nosuch", 0, 1) == 0
    assert run(r, "ZREMRANGEBYLEX", "nosuch", "-", "+") == 0


# ---------------------------------------------------------------------------------------------
# ZPOPMIN, ZPOPMAX, ZMPOP
# ---------------------------------------------------------------------------------------------


def test_zpopmin_zpopmax(r, zenc):
    assert run(r, "ZPOPMIN", "zset") == []
    assert run(r, "ZPOPMAX", "zset", 2) == []
    _zset(r, "zset", -1, "a", 1, "b", 2, "c", 3, "d", 4, "e")
    assert run(r, "ZPOPMIN", "zset") == [b"a", b"-1"]
    assert run(r, "ZPOPMIN", "zset") == [b"b", b"1"]
    assert run(r, "ZPOPMAX", "zset") == [b"e", b"4"]
    assert run(r, "ZPOPMAX", "zset") == [b"d", b"3"]
    assert run(r, "ZPOPMIN", "zset") == [b"c", b"2"]
    assert run(r, "EXISTS", "zset") == 0
    _zset(r, "z1", 0, "a", 1, "b", 2, "c", 3, "d")
    assert run(r, "ZPOPMIN", "z1", 2) == [b"a", b"0", b"b", b"1"]
    assert run(r, "ZPOPMAX", "z1", 2) == [b"d", b"3", b"c", b"2"]
    assert run(r, "EXISTS", "z1") == 0
    _zset(r, "z1", 0, "a", 1, "b")
    assert run(r, "ZPOPMAX", "z1", 10) == [b"b", b"1", b"a", b"0"]


@pytest.mark.parametrize("command", ["ZPOPMIN", "ZPOPMAX"])
def test_zpop_count_zero_and_negative(r, raw, command):
    run(r, "ZADD", "zset", 1, "a", 2, "b", 3, "c")
    assert run(r, command, "zset", 0) == []
    assert call(raw, command, "zset", 0) == b"*0\r\n"  # an empty array, not a null
    assert run(r, "ZCARD", "zset") == 3
    for count in (-1, -2, "x"):
        assert error_of(r, command, "zset", count) == "value is out of range, must be positive"
    assert error_of(r, command, "nosuch", -2) == "value is out of range, must be positive"
    r.set("str", "foo")
    assert error_of(r, command, "str", -1) == "value is out of range, must be positive"
    assert error_of(r, command, "str") == WRONGTYPE
    assert error_of(r, command, "str", 0) == WRONGTYPE
    assert error_of(r, command, "zset", 1, 2) == "syntax error"


def test_zpop_reply_shapes_on_the_wire(raw):
    call(raw, "ZADD", "zset2", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
    assert call(raw, "ZPOPMIN", "zset") == b"*0\r\n"
    assert call(raw, "ZPOPMIN", "zset", "1") == b"*0\r\n"
    assert call(raw, "ZPOPMIN", "zset2") == b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert call(raw, "ZPOPMAX", "zset2", "1") == b"*2\r\n$1\r\ne\r\n$1\r\n5\r\n"
    assert call(raw, "ZMPOP", "1", "zset", "MIN") == b"*-1\r\n"
    assert call(raw, "ZMPOP", "1", "zset2", "MAX") == (
        b"*2\r\n$5\r\nzset2\r\n*1\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n")
    _resp3(raw)
    assert call(raw, "ZPOPMIN", "zset") == b"*0\r\n"
    assert call(raw, "ZPOPMIN", "zset2") == b"*2\r\n$1\r\nb\r\n,2\r\n"  # without a count: flat
    assert call(raw, "ZPOPMIN", "zset2", "1") == b"*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"
    call(raw, "ZADD", "zset3", "1", "a", "2", "b")
    assert call(raw, "ZPOPMAX", "zset3", "5") == b"*2\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\na\r\n,1\r\n"
    assert call(raw, "ZMPOP", "2", "zset", "nosuch", "MIN") == b"_\r\n"
    call(raw, "ZADD", "zset4", "1", "a", "2", "b", "3", "c")
    assert call(raw, "ZMPOP", "2", "zset", "zset4", "MIN", "COUNT", "2") == (
        b"*2\r\n$5\r\nzset4\r\n*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n")


def test_zmpop(r, zenc):
    assert run(r, "ZMPOP", 1, "zset", "MIN") is None
    assert run(r, "ZMPOP", 1, "zset", "MAX", "COUNT", 10) is None
    _zset(r, "zset", -1, "a", 1, "b", 2, "c", 3, "d", 4, "e")
    assert run(r, "ZMPOP", 1, "zset", "MIN") == [b"zset", [[b"a", b"-1"]]]
    assert run(r, "ZMPOP", 1, "zset", "max") == [b"zset", [[b"e", b"4"]]]
    assert run(r, "ZMPOP", 1, "zset", "MIN", "COUNT", 2) == [b"zset", [[b"b", b"1"], [b"c", b"2"]]]
    assert run(r, "ZMPOP", 1, "zset", "MAX", "count", 5) == [b"zset", [[b"d", b"3"]]]
    assert run(r, "EXISTS", "zset") == 0
    _zset(r, "z2", 3, "d", 4, "e", 5, "f")
    assert run(r, "ZMPOP", 2, "z1", "z2", "MAX") == [b"z2", [[b"f", b"5"]]]
    _zset(r, "z1", 0, "a", 1, "b")
    assert run(r, "ZMPOP", 3, "nosuch", "z2", "z1", "MIN", "COUNT", 10) == [
        b"z2", [[b"d", b"3"], [b"e", b"4"]]]
    assert run(r, "ZMPOP", 2, "z1", "z1", "MIN") == [b"z1", [[b"a", b"0"]]]


@pytest.mark.parametrize(("args", "error"), [
    ((), "wrong number of arguments for 'zmpop' command"),
    ((1,), "wrong number of arguments for 'zmpop' command"),
    ((1, "zset"), "wrong number of arguments for 'zmpop' command"),
    ((0, "zset", "MIN"), "numkeys should be greater than 0"),
    (("a", "zset", "MIN"), "numkeys should be greater than 0"),
    ((-1, "zset", "MAX"), "numkeys should be greater than 0"),
    (("99999999999999999999", "zset", "MIN"), "numkeys should be greater than 0"),
    ((1, "zset", "bad_where"), "syntax error"),
    ((1, "zset", "LEFT"), "syntax error"),
    ((1, "zset", "MIN", "bar_arg"), "syntax error"),
    ((1, "zset", "MAX", "MIN"), "syntax error"),
    ((1, "zset", "COUNT"), "syntax error"),
    ((1, "zset", "MIN", "COUNT"), "syntax error"),
    ((1, "zset", "MAX", "COUNT", 1, "COUNT", 2), "syntax error"),
    ((2, "zset", "zset2", "bad_arg"), "syntax error"),
    ((2, "zset", "MIN"), "syntax error"),
    ((2147483647, "zset", "MIN"), "syntax error"),
    ((1, "zset", "MIN", "COUNT", 0), "count should be greater than 0"),
    ((1, "zset", "MAX", "COUNT", "a"), "count should be greater than 0"),
    ((1, "zset", "MIN", "COUNT", -1), "count should be greater than 0"),
    ((2, "zset", "zset2", "MAX", "COUNT", -1), "count should be greater than 0"),
])
def test_zmpop_errors(r, args, error):
    run(r, "ZADD", "zset", 1, "a")
    assert error_of(r, "ZMPOP", *args) == error
    assert run(r, "ZCARD", "zset") == 1


def test_zpop_and_zmpop_against_the_wrong_type(r):
    r.set("foo", "bar")
    for args in (("ZPOPMIN", "foo"), ("ZPOPMIN", "foo", 0), ("ZPOPMAX", "foo"),
                 ("ZPOPMAX", "foo", 0), ("ZPOPMIN", "foo", 2), ("ZMPOP", 1, "foo", "MIN"),
                 ("ZMPOP", 1, "foo", "MAX"), ("ZMPOP", 1, "foo", "MAX", "COUNT", 200),
                 ("ZMPOP", 2, "nosuch", "foo", "MIN"), ("ZMPOP", 2, "foo", "nosuch", "MAX")):
        assert error_of(r, *args) == WRONGTYPE, args
    run(r, "ZADD", "z", 1, "a")
    assert run(r, "ZMPOP", 2, "z", "foo", "MIN") == [b"z", [[b"a", b"1"]]]  # stops at z


# ---------------------------------------------------------------------------------------------
# ZRANDMEMBER
# ---------------------------------------------------------------------------------------------


RANDOM_CONTENTS = {"listpack": [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"), (6, "f"),
                                (7, "g"), (7, "h"), (9, "i"), (10, "j")],
                   "skiplist": [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"), (6, "f"),
                                (7, "g"), (7, "h"), (9, "i"), (10, "x" * 80)]}


@pytest.mark.parametrize("kind", ["listpack", "skiplist"])
def test_zrandmember(r, kind):
    r.config_set("zset-max-listpack-value", 10)
    contents = {member.encode(): str(score).encode() for score, member in RANDOM_CONTENTS[kind]}
    run(r, "ZADD", "z", *[x for pair in RANDOM_CONTENTS[kind] for x in pair])
    assert encoding(r, "z") == kind.encode()
    assert {run(r, "ZRANDMEMBER", "z") for _ in range(200)} == set(contents)
    for count in (-20, -1001):  # repeats allowed
        picks = run(r, "ZRANDMEMBER", "z", count)
        assert len(picks) == -count and set(picks) <= set(contents)
        flat = run(r, "ZRANDMEMBER", "z", count, "WITHSCORES")
        assert len(flat) == -2 * count
        assert all(contents[m] == s for m, s in zip(flat[::2], flat[1::2], strict=True))
    assert len(set(run(r, "ZRANDMEMBER", "z", -1000))) == 10  # every member, in time
    for count in (10, 20):  # the whole set
        picks = run(r, "ZRANDMEMBER", "z", count)
        assert sorted(picks) == sorted(contents)
        flat = run(r, "ZRANDMEMBER", "z", count, "WITHSCORES")
        assert dict(zip(flat[::2], flat[1::2], strict=True)) == contents
    for count in (1, 2, 8):  # distinct members
        seen: set[bytes] = set()
        for _ in range(200):
            picks = run(r, "ZRANDMEMBER", "z", count)
            assert len(picks) == count == len(set(picks)) and set(picks) <= set(contents)
            flat = run(r, "ZRANDMEMBER", "z", count, "withscores")
            assert len(flat) == 2 * count == 2 * len(set(flat[::2]))
            assert all(contents[m] == s for m, s in zip(flat[::2], flat[1::2], strict=True))
            seen.update(picks)
        assert seen == set(contents)
    assert run(r, "ZCARD", "z") == 10


def test_zrandmember_edges_and_errors(r, raw):
    assert run(r, "ZRANDMEMBER", "nosuch") is None
    assert call(raw, "ZRANDMEMBER", "nosuch") == b"$-1\r\n"
    assert call(raw, "ZRANDMEMBER", "nosuch", 100) == b"*0\r\n"
    assert call(raw, "ZRANDMEMBER", "nosuch", 100, "WITHSCORES") == b"*0\r\n"
    run(r, "ZADD", "z", 0, "a", 1, "b")
    assert call(raw, "ZRANDMEMBER", "z", 0) == b"*0\r\n"
    assert call(raw, "ZRANDMEMBER", "z", 0, "WITHSCORES") == b"*0\r\n"
    assert sorted(run(r, "ZRANDMEMBER", "z", "9223372036854775807")) == [b"a", b"b"]
    assert error_of(r, "ZRANDMEMBER", "z", "x") == NOT_INTEGER
    assert error_of(r, "ZRANDMEMBER", "z", "1.5") == NOT_INTEGER
    assert error_of(r, "ZRANDMEMBER", "z", 1, "foo") == "syntax error"
    assert error_of(r, "ZRANDMEMBER", "z", 1, "WITHSCORES", "foo") == "syntax error"
    assert error_of(r, "ZRANDMEMBER", "z", "-9223372036854775808") == (
        "value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")
    assert error_of(r, "ZRANDMEMBER", "z", "-9223372036854775808", "WITHSCORES") == (
        "value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")
    for count in ("-9223372036854770000", "-4611686018427387904"):
        assert error_of(r, "ZRANDMEMBER", "z", count, "WITHSCORES") == "value is out of range"
    r.set("str", "x")
    assert error_of(r, "ZRANDMEMBER", "str") == WRONGTYPE
    assert error_of(r, "ZRANDMEMBER", "str", 2) == WRONGTYPE


def test_zrandmember_resp3(r3):
    run(r3, "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
    scores = {b"a": 1.0, b"b": 2.0, b"c": 3.0, b"d": 4.0}
    for count, size in ((3, 3), (-3, 3), (1, 1), (10, 4), (-10, 10)):
        pairs = run(r3, "ZRANDMEMBER", "z", count, "WITHSCORES")
        assert len(pairs) == size
        assert all(len(pair) == 2 and scores[pair[0]] == pair[1] for pair in pairs)
        if count > 0:
            assert len({pair[0] for pair in pairs}) == size
    picks = run(r3, "ZRANDMEMBER", "z", 3)
    assert len(picks) == 3 and all(isinstance(p, bytes) for p in picks)


# ---------------------------------------------------------------------------------------------
# ZUNION, ZINTER, ZDIFF and their STORE forms; ZINTERCARD
# ---------------------------------------------------------------------------------------------


def _two_zsets(r: redis.Redis) -> None:
    _zset(r, "zseta", 1, "a", 2, "b", 3, "c")
    _zset(r, "zsetb", 1, "b", 2, "c", 3, "d")


def test_missing_and_empty_inputs(r, zenc):
    assert run(r, "ZUNIONSTORE", "dst", 1, "zseta") == 0
    assert run(r, "EXISTS", "dst") == 0
    for command in ("ZUNION", "ZINTER", "ZDIFF"):
        assert run(r, command, 1, "zseta") == []
    assert run(r, "ZINTERCARD", 1, "zseta") == 0
    assert run(r, "ZINTERCARD", 1, "zseta", "LIMIT", 0) == 0
    run(r, "ZADD", "zseta", 1, "a", 2, "b")
    assert run(r, "ZUNIONSTORE", "zsetc", 2, "zseta", "zsetb") == 2
    assert withscores(r, "zsetc") == [b"a", b"1", b"b", b"2"]
    assert run(r, "ZUNION", 2, "zseta", "zsetb", "WITHSCORES") == [b"a", b"1", b"b", b"2"]
    assert run(r, "ZINTER", 2, "zseta", "zsetb", "WITHSCORES") == []
    assert run(r, "ZINTERCARD", 2, "zseta", "zsetb") == 0
    assert run(r, "ZDIFF", 2, "zseta", "zsetb", "WITHSCORES") == [b"a", b"1", b"b", b"2"]


def test_union_inter_diff_basics(r, zenc):
    _two_zsets(r)
    assert run(r, "ZUNIONSTORE", "zsetc", 2, "zseta", "zsetb") == 4
    assert withscores(r, "zsetc") == [b"a", b"1", b"b", b"3", b"d", b"3", b"c", b"5"]
    assert run(r, "ZUNION", 2, "zseta", "zsetb") == [b"a", b"b", b"d", b"c"]
    assert run(r, "ZINTERSTORE", "zsetc", 2, "zseta", "zsetb") == 2
    assert withscores(r, "zsetc") == [b"b", b"3", b"c", b"5"]
    assert run(r, "ZINTER", 2, "zseta", "zsetb", "WITHSCORES") == [b"b", b"3", b"c", b"5"]
    assert run(r, "ZDIFFSTORE", "zsetc", 2, "zseta", "zsetb") == 1
    assert withscores(r, "zsetc") == [b"a", b"1"]
    assert run(r, "ZDIFF", 2, "zseta", "zsetb", "WITHSCORES") == [b"a", b"1"]
    assert run(r, "ZDIFFSTORE", "zsetc", 2, "zseta", "zseta") == 0
    assert run(r, "EXISTS", "zsetc") == 0
    _zset(r, "d", 1, 1, 2, 2, 3, 3)
    _zset(r, "f", 1, 1, 3, 3, 4, 4)
    assert run(r, "ZUNION", 2, "d", "f", "WITHSCORES") == [b"1", b"2", b"2", b"2", b"4", b"4",
                                                            b"3", b"6"]
    assert run(r, "ZINTER", 2, "d", "f", "WITHSCORES") == [b"1", b"2", b"3", b"6"]
    assert run(r, "ZINTERCARD", 2, "d", "f") == 2
    assert run(r, "ZDIFF", 2, "d", "f", "WITHSCORES") == [b"2", b"2"]


def test_weights_and_aggregate(r, zenc):
    _two_zsets(r)
    assert run(r, "ZUNIONSTORE", "zsetc", 2, "zseta", "zsetb", "WEIGHTS", 2, 3) == 4
    assert withscores(r, "zsetc") == [b"a", b"2", b"b", b"7", b"d", b"9", b"c", b"12"]
    assert run(r, "ZUNION", 2, "zseta", "zsetb", "weights", 2, 3, "withscores") == [
        b"a", b"2", b"b", b"7", b"d", b"9", b"c", b"12"]
    assert run(r, "ZINTER", 2, "zseta", "zsetb", "WEIGHTS", 2, 3, "WITHSCORES") == [
        b"b", b"7", b"c", b"12"]
    assert run(r, "ZINTERSTORE", "zsetc", 2, "zseta", "zsetb", "WEIGHTS", 2, 3) == 2
    assert withscores(r, "zsetc") == [b"b", b"7", b"c", b"12"]
    assert run(r, "ZUNIONSTORE", "zsetc", 2, "zseta", "zsetb", "AGGREGATE", "MIN") == 4
    assert withscores(r, "zsetc") == [b"a", b"1", b"b", b"1", b"c", b"2", b"d", b"3"]
    assert run(r, "ZUNION", 2, "zseta", "zsetb", "aggregate", "min", "withscores") == [
        b"a", b"1", b"b", b"1", b"c", b"2", b"d", b"3"]
    assert run(r, "ZINTER", 2, "zseta", "zsetb", "AGGREGATE", "MIN", "WITHSCORES") == [
        b"b", b"1", b"c", b"2"]
    assert run(r, "ZUNIONSTORE", "zsetc", 2, "zseta", "zsetb", "AGGREGATE", "MAX") == 4
    assert withscores(r, "zsetc") == [b"a", b"1", b"b", b"2", b"c", b"3", b"d", b"3"]
    assert run(r, "ZINTER", 2, "zseta", "zsetb", "AGGREGATE", "MAX", "WITHSCORES") == [
        b"b", b"2", b"c", b"3"]
    assert run(r, "ZINTERSTORE", "zsetc", 2, "zseta", "zsetb", "AGGREGATE", "MIN") == 2
    assert withscores(r, "zsetc") == [b"b", b"1", b"c", b"2"]
    assert run(r, "ZINTERSTORE", "zsetc", 2, "zseta", "zsetb", "AGGREGATE", "MAX") == 2
    assert withscores(r, "zsetc") == [b"b", b"2", b"c", b"3"]
    # Options may repeat: the last WEIGHTS and the last AGGREGATE count.
    assert run(r, "ZUNION", 1, "zseta", "WEIGHTS", 1, "WITHSCORES", "WEIGHTS", 2) == [
        b"a", b"2", b"b", b"4", b"c", b"6"]
    assert run(r, "ZUNION", 1, "zseta", "WEIGHTS", 1, "AGGREGATE", "MAX", "AGGREGATE", "MIN",
               "WITHSCORES") == [b"a", b"1", b"b", b"2", b"c", b"3"]


def test_negative_and_fractional_weights(r):
    _two_zsets(r)
    assert run(r, "ZUNION", 2, "zseta", "zsetb", "WEIGHTS", "-1", "0.5", "WITHSCORES") == [
        b"c", b"-2", b"b", b"-1.5", b"a", b"-1", b"d", b"1.5"]


def test_sets_count_as_score_one(r, zenc):
    _two_zsets(r)
    run(r, "SADD", "seta", "a", "b", "c")
    assert run(r, "ZUNIONSTORE", "zsetc", 2, "seta", "zsetb", "WEIGHTS", 2, 3) == 4
    assert withscores(r, "zsetc") == [b"a", b"2", b"b", b"5", b"c", b"8", b"d", b"9"]
    assert run(r, "ZINTERSTORE", "zsetc", 2, "seta", "zsetb", "WEIGHTS", 2, 3) == 2
    assert withscores(r, "zsetc") == [b"b", b"5", b"c", b"8"]
    assert run(r, "ZDIFFSTORE", "zsetc", 2, "seta", "zsetb") == 1
    assert withscores(r, "zsetc") == [b"a", b"1"]
    assert run(r, "ZUNION", 1, "seta", "WITHSCORES") == [b"a", b"1", b"b", b"1", b"c", b"1"]
    run(r, "SADD", "set1", "a")
    run(r, "SADD", "set2", 10)
    assert run(r, "ZINTERSTORE", "set3", 2, "set1", "set2") == 0
    run(r, "SADD", "one", 100, 101, 102, 103)
    run(r, "SADD", "two", 100, 200, 201, 202)
    run(r, "ZADD", "three", 1, 500, 1, 501, 1, 502, 1, 503, 1, 100)
    assert run(r, "ZINTERSTORE", "to_here", 3, "one", "two", "three", "WEIGHTS", 0, 0, 1) == 1
    assert withscores(r, "to_here") == [b"100", b"1"]


@pytest.mark.parametrize("set_kind", ["intset", "listpack", "hashtable"])
def test_every_set_encoding_is_an_input(server, r, zenc, set_kind):
    if set_kind == "listpack" and server.kind == "redis" and server.version < (7, 2):
        pytest.skip("listpack sets exist since Redis 7.2")
    if set_kind == "hashtable":
        r.config_set("set-max-intset-entries", 0)
        with contextlib.suppress(redis.ResponseError):  # 7.0 has no listpack sets
            r.config_set("set-max-listpack-entries", 0)
    extra = ["a"] if set_kind == "listpack" else []
    run(r, "SADD", "small", *extra, 1, 2, 3)
    run(r, "SADD", "big", *extra, 1, 2, 3, 4, 5)
    run(r, "SREM", "small", "a")
    run(r, "SREM", "big", "a")
    assert encoding(r, "small") == set_kind.encode() == encoding(r, "big")
    run(r, "ZADD", "zsmall", 1, 1, 2, 2, 3, 3)
    run(r, "ZADD", "zbig", 1, 1, 2, 2, 3, 3, 4, 4, 5, 5)
    for set_key, zset_key, diff in (("small", "zbig", []), ("big", "zsmall", [b"4", b"5"])):
        assert sorted(run(r, "ZUNION", 2, set_key, zset_key)) == [b"1", b"2", b"3", b"4", b"5"]
        assert run(r, "ZUNIONSTORE", "dst", 2, set_key, zset_key) == 5
        assert sorted(run(r, "ZINTER", 2, set_key, zset_key)) == [b"1", b"2", b"3"]
        assert run(r, "ZINTERSTORE", "dst", 2, set_key, zset_key) == 3
        assert run(r, "ZINTERCARD", 2, set_key, zset_key) == 3
        assert sorted(run(r, "ZDIFF", 2, set_key, zset_key)) == diff
        assert run(r, "ZDIFFSTORE", "dst", 2, set_key, zset_key) == len(diff)


def test_infinities_and_nan_become_zero(r, zenc):
    for command in ("ZUNIONSTORE", "ZINTERSTORE"):
        for first, second, expected in (("+inf", "+inf", b"inf"), ("-inf", "+inf", b"0"),
                                        ("+inf", "-inf", b"0"), ("-inf", "-inf", b"-inf")):
            run(r, "ZADD", "inf1", first, "key")
            run(r, "ZADD", "inf2", second, "key")
            run(r, command, "inf3", 2, "inf1", "inf2")
            assert run(r, "ZSCORE", "inf3", "key") == expected, (command, first, second)
        run(r, "ZADD", "inf1", 1, "key")
        run(r, "ZADD", "inf2", 1, "key")
        assert error_of(r, command, "inf3", 2, "inf1", "inf2", "WEIGHTS", "nan", "nan") == (
            "weight value is not a float")
    run(r, "ZADD", "z", "-inf", "neginf")
    run(r, "ZUNIONSTORE", "out", 1, "z", "WEIGHTS", 0)  # -inf * 0 is NaN: 0
    assert withscores(r, "out") == [b"neginf", b"0"]
    run(r, "ZADD", "ninf", "-inf", "k")
    run(r, "ZADD", "pinf", "+inf", "k")
    assert run(r, "ZUNION", 2, "ninf", "pinf", "WITHSCORES") == [b"k", b"0"]
    assert run(r, "ZINTER", 2, "ninf", "pinf", "AGGREGATE", "MIN", "WITHSCORES") == [b"k", b"-inf"]
    assert run(r, "ZINTER", 2, "ninf", "pinf", "AGGREGATE", "MAX", "WITHSCORES") == [b"k", b"inf"]
    assert run(r, "ZUNION", 2, "ninf", "pinf", "WEIGHTS", 0, 1, "WITHSCORES") == [b"k", b"inf"]
    assert run(r, "ZUNION", 2, "pinf", "pinf", "WEIGHTS", -1, 1, "WITHSCORES") == [b"k", b"0"]
    assert run(r, "ZUNION", 1, "pinf", "WEIGHTS", "-inf", "WITHSCORES") == [b"k", b"-inf"]
    assert run(r, "ZUNION", 1, "pinf", "WEIGHTS", "inf", "WITHSCORES") == [b"k", b"inf"]
    run(r, "ZADD", "zero", 0, "k")
    assert run(r, "ZUNION", 1, "zero", "WEIGHTS", "inf", "WITHSCORES") == [b"k", b"0"]
    assert run(r, "ZINTER", 2, "zero", "pinf", "WEIGHTS", "inf", 1, "WITHSCORES") == [
        b"k", b"inf"]  # 0 * inf is NaN, made 0 before inf is added


def test_sums_run_from_the_smallest_input(server, r, zenc):
    """zunionInterDiffGenericCommand sorts the inputs by size before adding: x is summed
    0.2 + 0.3 + 0.1 (0.6), not 0.1 + 0.2 + 0.3 (0.6000000000000001)."""
    run(r, "ZADD", "a", "0.1", "x", 5, "p", 6, "q")
    run(r, "ZADD", "b", "0.2", "x")
    run(r, "ZADD", "c", "0.3", "x", 7, "r")
    six = printed(server, "0.6")
    for command in ("ZUNION", "ZINTER"):
        for keys in (("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")):
            assert run(r, command, 3, *keys, "WITHSCORES")[:2] == [b"x", six], (command, keys)
    assert run(r, "ZUNIONSTORE", "dst", 3, "a", "b", "c") == 4
    assert run(r, "ZSCORE", "dst", "x") == six
    assert run(r, "ZUNION", 2, "a", "b", "WEIGHTS", 2, 1, "WITHSCORES")[:2] == [
        b"x", printed(server, "0.4")]  # each weight stays with its key


def test_store_forms_replace_the_destination(r):
    _two_zsets(r)
    r.set("dst", "string", ex=100)
    assert run(r, "ZUNIONSTORE", "dst", 2, "zseta", "zsetb") == 4
    assert run(r, "TYPE", "dst") == b"zset" and r.ttl("dst") == -1
    assert run(r, "ZINTERSTORE", "zseta", 2, "zseta", "zsetb") == 2  # a source as destination
    assert withscores(r, "zseta") == [b"b", b"3", b"c", b"5"]
    assert run(r, "ZDIFFSTORE", "dst", 1, "nosuch") == 0
    assert run(r, "EXISTS", "dst") == 0
    _zset(r, "big", *[x for i in range(200) for x in (i, f"m{i}")])
    assert run(r, "ZUNIONSTORE", "big", 2, "big", "zsetb") == 203
    assert run(r, "ZRANGE", "big", 0, 1) == [b"m0", b"b"]


def test_union_result_is_sorted(r):
    pairs = [x for i in range(1000) for x in (f"0.{(i * 7919) % 1000:03d}1", str((i * 31) % 1000))]
    run(r, "ZADD", "one", *pairs[: len(pairs) // 2])
    run(r, "ZADD", "two", *pairs[len(pairs) // 2:])
    run(r, "ZUNIONSTORE", "dest", 2, "one", "two")
    flat = withscores(r, "dest")
    scored = [(float(s), m) for m, s in zip(flat[::2], flat[1::2], strict=True)]
    assert scored == sorted(scored)
    assert len(scored) == len(set(run(r, "ZRANGE", "one", 0, -1) + run(r, "ZRANGE", "two", 0, -1)))


def test_zdiff_with_several_inputs(r, zenc):
    _zset(r, "zseta", 1, "a", 2, "b", 3, "c", 5, "e")
    _zset(r, "zsetb", 1, "b")
    _zset(r, "zsetc", 1, "c")
    _zset(r, "zsetd", 1, "d")
    assert run(r, "ZDIFFSTORE", "zsete", 4, "zseta", "zsetb", "zsetc", "zsetd") == 2
    assert withscores(r, "zsete") == [b"a", b"1", b"e", b"5"]
    universe = [f"v{i}" for i in range(40)]
    for first in range(0, 40, 7):
        keys = []
        for index, step in enumerate((1, 3, 5, 7)):
            key = f"f{index}"
            keys.append(key)
            run(r, "DEL", key)
            run(r, "ZADD", key, *[x for v in universe[first::step] for x in (index, v)])
        expected = set(universe[first::1]) - set(universe[first::3]) - set(
            universe[first::5]) - set(universe[first::7])
        assert sorted(run(r, "ZDIFF", 4, *keys)) == sorted(v.encode() for v in expected)


@pytest.mark.parametrize(("args", "error"), [
    (("ZUNION", 0, "key"), "at least 1 input key is needed for 'zunion' command"),
    (("ZUNION", -1, "key"), "at least 1 input key is needed for 'zunion' command"),
    (("ZUNIONSTORE", "dst", 0, "key"), "at least 1 input key is needed for 'zunionstore' command"),
    (("ZINTER", 0, "key"), "at least 1 input key is needed for 'zinter' command"),
    (("ZINTERSTORE", "dst", 0, "key"), "at least 1 input key is needed for 'zinterstore' command"),
    (("ZDIFF", 0, "key"), "at least 1 input key is needed for 'zdiff' command"),
    (("ZDIFFSTORE", "dst", 0, "key"), "at least 1 input key is needed for 'zdiffstore' command"),
    (("ZINTERCARD", 0, "key"), "at least 1 input key is needed for 'zintercard' command"),
    (("ZINTERCARD", -1, "key"), "at least 1 input key is needed for 'zintercard' command"),
    (("ZUNION", "x", "key"), NOT_INTEGER),
    (("ZUNION", "99999999999999999999", "key"), NOT_INTEGER),
    (("ZINTERCARD", "x", "key"), NOT_INTEGER),
    (("ZUNION", 2, "key"), "syntax error"),
    (("ZUNIONSTORE", "dst", 2, "key"), "syntax error"),
    (("ZUNION", 1, "key", "WEIGHTS"), "syntax error"),
    (("ZUNION", 1, "key", "WEIGHTS", 1, 2), "syntax error"),
    (("ZUNION", 1, "key", "WEIGHTS", "x"), "weight value is not a float"),
    (("ZINTER", 1, "key", "WEIGHTS", "nan"), "weight value is not a float"),
    (("ZUNION", 1, "key", "AGGREGATE"), "syntax error"),
    (("ZUNION", 1, "key", "AGGREGATE", "foo"), "syntax error"),
    (("ZUNION", 1, "key", "WITHSCORES", "foo"), "syntax error"),
    (("ZUNIONSTORE", "dst", 1, "key", "WITHSCORES"), "syntax error"),
    (("ZINTERSTORE", "dst", 1, "key", "WITHSCORES"), "syntax error"),
    (("ZDIFFSTORE", "dst", 1, "key", "WITHSCORES"), "syntax error"),
    (("ZDIFF", 1, "key", "WEIGHTS", 1), "syntax error"),
    (("ZDIFF", 1, "key", "AGGREGATE", "MIN"), "syntax error"),
    (("ZDIFFSTORE", "dst", 1, "key", "WEIGHTS", 1), "syntax error"),
    (("ZINTERCARD", 2, "key"), "syntax error"),
    (("ZINTERCARD", 1, "key", "key"), "syntax error"),
    (("ZINTERCARD", 1, "key", "bar_arg"), "syntax error"),
    (("ZINTERCARD", 1, "key", "LIMIT"), "syntax error"),
    (("ZINTERCARD", 1, "key", "WITHSCORES"), "syntax error"),
    (("ZINTERCARD", 1, "key", "LIMIT", -1), "LIMIT can't be negative"),
    (("ZINTERCARD", 1, "key", "LIMIT", "a"), "LIMIT can't be negative"),
    (("ZUNION", 1), "wrong number of arguments for 'zunion' command"),
    (("ZINTERSTORE", "dst", 1), "wrong number of arguments for 'zinterstore' command"),
    (("ZINTERCARD", 1), "wrong number of arguments for 'zintercard' command"),
])
def test_set_operation_errors(r, args, error):
    run(r, "ZADD", "key", 1, "a")
    run(r, "ZADD", "dst", 1, "old")
    assert error_of(r, *args) == error
    assert withscores(r, "dst") == [b"old", b"1"]


def test_zintercard(r, zenc):
    _two_zsets(r)
    assert run(r, "ZINTERCARD", 2, "zseta", "zsetb") == 2
    assert run(r, "ZINTERCARD", 2, "zseta", "zsetb", "LIMIT", 0) == 2
    assert run(r, "ZINTERCARD", 2, "zseta", "zsetb", "limit", 1) == 1
    assert run(r, "ZINTERCARD", 2, "zseta", "zsetb", "LIMIT", 10) == 2
    assert run(r, "ZINTERCARD", 2, "zseta", "zsetb", "LIMIT", 1, "LIMIT", 2) == 2
    assert run(r, "ZINTERCARD", 1, "zseta") == 3
    assert run(r, "ZINTERCARD", 2, "zseta", "nosuch") == 0
    assert run(r, "COMMAND", "GETKEYS", "ZINTERCARD", 2, "a", "b", "LIMIT", 1) == [b"a", b"b"]
    assert run(r, "COMMAND", "GETKEYS", "ZUNIONSTORE", "d", 2, "a", "b", "WEIGHTS", 1, 2) == [
        b"d", b"a", b"b"]


def test_wrong_type_anywhere_fails_even_after_a_missing_key(r):
    _two_zsets(r)
    r.set("str", "x")
    for command in ("ZUNION", "ZINTER", "ZDIFF"):
        assert error_of(r, command, 3, "zseta", "nosuch", "str") == WRONGTYPE
        assert error_of(r, command + "STORE", "d", 3, "zseta", "nosuch", "str") == WRONGTYPE
        assert error_of(r, command, 2, "nosuch", "str") == WRONGTYPE
        assert error_of(r, command, 1, "str", "WEIGHTS", "x"
                        if command != "ZDIFF" else "WITHSCORES") == WRONGTYPE
    assert error_of(r, "ZINTERCARD", 3, "zseta", "nosuch", "str") == WRONGTYPE
    run(r, "RPUSH", "list", "a")
    assert error_of(r, "ZUNION", 2, "zseta", "list") == WRONGTYPE
    assert run(r, "EXISTS", "d") == 0
    assert run(r, "ZINTER", 2, "nosuch", "zseta") == []


# ---------------------------------------------------------------------------------------------
# ZSCAN
# ---------------------------------------------------------------------------------------------


def test_zscan_of_a_listpack_is_whole(server, r):
    run(r, "ZADD", "z", 3, "c", 1, "a", 2, "b", "0.1", "d")
    assert encoding(r, "z") == b"listpack"
    expected = [b"d", printed(server, "0.1"), b"a", b"1", b"b", b"2", b"c", b"3"]
    assert run(r, "ZSCAN", "z", 0) == [b"0", expected]
    assert run(r, "ZSCAN", "z", 0, "COUNT", 1) == [b"0", expected]
    assert run(r, "ZSCAN", "z", 0, "MATCH", "[ab]") == [b"0", [b"a", b"1", b"b", b"2"]]
    assert run(r, "ZSCAN", "z", 0, "MATCH", "nothing*") == [b"0", []]
    assert run(r, "ZSCAN", "z", "18446744073709551615") == [b"0", expected]
    assert run(r, "ZSCAN", "nosuch", 0) == [b"0", []]


def test_zscan_of_a_skiplist_visits_every_member(r):
    expected = {f"m{i}".encode(): str(i).encode() for i in range(1000)}
    run(r, "ZADD", "z", *[x for i in range(1000) for x in (i, f"m{i}")])
    assert encoding(r, "z") == b"skiplist"
    seen: dict[bytes, bytes] = {}
    cursor = b"0"
    for _ in range(10_000):
        cursor, found = run(r, "ZSCAN", "z", cursor, "COUNT", 50)
        seen.update(zip(found[::2], found[1::2], strict=True))
        if cursor == b"0":
            break
    assert seen == expected
    matched: list[bytes] = []
    cursor = b"0"
    while True:
        cursor, page = run(r, "ZSCAN", "z", cursor, "MATCH", "m99*")
        matched += page[::2]
        if cursor == b"0":
            break
    assert sorted(matched) == sorted(m for m in expected if m.startswith(b"m99"))


def test_zscan_of_a_skiplist_prints_scores_with_17_digits(r):
    """db.c's scan callback formats a skiplist's scores with ld2string (``%.17Lg``) in every
    Redis version, unlike ZSCORE/ZRANGE (and unlike a listpack's ZSCAN, which returns the
    score text the listpack holds)."""
    r.config_set("zset-max-listpack-entries", 0)
    values = ["0.1", "1e-7", "12345678901234567890", "3", "-0", "inf", "2.5", "1e-320"]
    run(r, "ZADD", "z", *[x for i, v in enumerate(values) for x in (v, f"m{i}")])
    _, flat = run(r, "ZSCAN", "z", 0, "COUNT", 100)
    assert dict(zip(flat[::2], flat[1::2], strict=True)) == {
        b"m0": b"0.10000000000000001", b"m1": b"9.9999999999999995e-08",
        b"m2": b"1.2345678901234567e+19", b"m3": b"3", b"m4": b"-0", b"m5": b"inf",
        b"m6": b"2.5", b"m7": b"9.9998886718268301e-321"}


def test_zscan_errors(server, r):
    run(r, "ZADD", "z", 1, "a")
    assert error_of(r, "ZSCAN", "z", "x") == "invalid cursor"
    assert error_of(r, "ZSCAN", "z", "18446744073709551616") == "invalid cursor"
    for options in (("COUNT", 0), ("COUNT", -1), ("COUNT",), ("TYPE", "zset"), ("FOO",)):
        assert error_of(r, "ZSCAN", "z", 0, *options) == "syntax error", options
    if server.kind == "brook" or server.version >= (8, 0):
        assert error_of(r, "ZSCAN", "z", "-1") == "invalid cursor"
    r.set("str", "x")
    assert error_of(r, "ZSCAN", "str", 0) == WRONGTYPE


# ---------------------------------------------------------------------------------------------
# Encodings
# ---------------------------------------------------------------------------------------------


def test_listpack_converts_to_skiplist_past_its_limits(r):
    r.config_set("zset-max-listpack-entries", 3)
    run(r, "ZADD", "z", 1, "a", 2, "b", 3, "c")
    assert encoding(r, "z") == b"listpack"
    run(r, "ZADD", "z", 4, "d")
    assert encoding(r, "z") == b"skiplist"
    run(r, "ZREM", "z", "d", "c", "b")
    assert encoding(r, "z") == b"skiplist"  # never back
    run(r, "ZADD", "m", 1, "a", 2, "b", 3, "c", 4, "d")
    assert encoding(r, "m") == b"skiplist"
    r.config_set("zset-max-listpack-entries", 128)
    r.config_set("zset-max-listpack-value", 5)
    run(r, "ZADD", "v", 1, "abcde")
    assert encoding(r, "v") == b"listpack"
    run(r, "ZADD", "v", 2, "abcdef")
    assert encoding(r, "v") == b"skiplist"
    run(r, "ZADD", "w", 1, 123456)  # a member's length counts, even an integer's digits
    assert encoding(r, "w") == b"skiplist"
    run(r, "ZINCRBY", "i", 1, "abcdefgh")
    assert encoding(r, "i") == b"skiplist"
    run(r, "ZADD", "xx", 1, "a")
    run(r, "ZADD", "xx", "XX", 1, "abcdefgh")  # nothing added: no conversion
    assert encoding(r, "xx") == b"listpack"
    r.config_set("zset-max-listpack-entries", 0)
    run(r, "ZADD", "zero", 1, "a")
    assert encoding(r, "zero") == b"skiplist"


@pytest.mark.parametrize("how", ["single", "multiple", "single_multiple"])
def test_zadd_fills_a_listpack_to_its_limit(r, how):
    r.config_set("zset-max-listpack-entries", 64)
    if how == "single":
        for i in range(64):
            run(r, "ZADD", "z", i, i)
    elif how == "multiple":
        run(r, "ZADD", "z", *range(128))
    else:
        run(r, "ZADD", "z", 1, 1)
        run(r, "ZADD", "z", *range(128))
    assert encoding(r, "z") == b"listpack"
    assert run(r, "ZCARD", "z") == 64
    assert run(r, "ZADD", "z", 1, "b") == 1
    assert encoding(r, "z") == b"skiplist"


@pytest.mark.min_redis(7, 2)
def test_zadd_converts_by_the_number_of_pairs_it_is_given(r):
    """Redis >= 7.2 (#12185) sizes the set by ZADD's pair count before adding: more pairs than
    zset-max-listpack-entries make a skiplist even when they name fewer members."""
    r.config_set("zset-max-listpack-entries", 2)
    run(r, "ZADD", "z", 1, "a", 2, "a", 3, "a")
    assert encoding(r, "z") == b"skiplist" and run(r, "ZCARD", "z") == 1
    run(r, "ZADD", "y", 1, "a", 2, "b")
    run(r, "ZADD", "y", "NX", 1, "a", 2, "b", 3, "a")
    assert encoding(r, "y") == b"skiplist" and run(r, "ZCARD", "y") == 2
    run(r, "ZADD", "x", 1, "a", 2, "b")
    run(r, "ZADD", "x", "XX", 5, "a", 6, "b", 7, "c")
    assert encoding(r, "x") == b"skiplist"
    assert withscores(r, "x") == [b"a", b"5", b"b", b"6"]
    run(r, "ZADD", "w", 1, "a")
    run(r, "ZADD", "w", 2, "b")
    assert encoding(r, "w") == b"listpack"


def test_zrangestore_destination_encoding(r):
    r.config_set("zset-max-listpack-entries", 3)
    run(r, "ZADD", "x", 1, "a", 2, "b", 3, "c", 4, "d")
    for args, count, kind in (((0, 2), 3, b"listpack"), (("-inf", "+inf", "BYSCORE"), 4, b"skiplist"),
                              ((0, 1), 2, b"listpack"), ((0, 2, "REV"), 3, b"listpack"),
                              ((0, 99), 4, b"skiplist"), ((2, 99), 2, b"listpack"),
                              (("-inf", "+inf", "BYSCORE", "LIMIT", 0, 3), 3, b"listpack"),
                              (("-inf", "+inf", "BYSCORE", "LIMIT", 0, 4), 4, b"skiplist")):
        assert run(r, "ZRANGESTORE", "d", "x", *args) == count
        assert encoding(r, "d") == kind, args
    r.config_set("zset-max-listpack-entries", 1)
    run(r, "ZADD", "z1", 1, "a", 2, "b")
    assert run(r, "ZRANGESTORE", "z2", "z1", 0, 0) == 1
    assert encoding(r, "z2") == b"listpack"
    assert run(r, "ZRANGESTORE", "z3", "z1", 0, 1) == 2
    assert encoding(r, "z3") == b"skiplist"
    r.config_set("zset-max-listpack-entries", 0)
    run(r, "DEL", "z1")
    run(r, "ZADD", "z1", 1, "a")
    assert run(r, "ZRANGESTORE", "z2", "z1", 0, -1) == 1
    assert encoding(r, "z2") == b"skiplist"


def test_stored_results_take_the_smallest_encoding_that_fits(r):
    r.config_set("zset-max-listpack-value", 3)
    run(r, "ZADD", "lv", 1, "a")
    run(r, "ZADD", "lv2", 1, "abcd")
    assert encoding(r, "lv2") == b"skiplist"
    assert run(r, "ZUNIONSTORE", "u", 1, "lv") == 1
    assert encoding(r, "u") == b"listpack"
    assert run(r, "ZUNIONSTORE", "u2", 2, "lv", "lv2") == 2
    assert encoding(r, "u2") == b"skiplist"
    assert run(r, "ZDIFFSTORE", "d", 2, "u2", "lv2") == 1
    assert encoding(r, "d") == b"listpack"  # from a skiplist source
    assert run(r, "ZINTERSTORE", "i", 2, "u2", "u2") == 2
    assert encoding(r, "i") == b"skiplist"
    assert run(r, "ZRANGESTORE", "r1", "u2", 0, 0) == 1
    assert encoding(r, "r1") == b"listpack"
    assert run(r, "ZRANGESTORE", "r2", "u2", 1, 1) == 1
    assert encoding(r, "r2") == b"skiplist"
    run(r, "SADD", "st", "abcd")
    assert run(r, "ZUNIONSTORE", "ust", 1, "st") == 1
    assert encoding(r, "ust") == b"skiplist"
    r.config_set("zset-max-listpack-value", 64)
    r.config_set("zset-max-listpack-entries", 1)
    run(r, "ZADD", "x", 1, "a")
    run(r, "ZADD", "y", 1, "b")
    assert run(r, "ZUNIONSTORE", "xy", 2, "x", "y") == 2
    assert encoding(r, "xy") == b"skiplist"
    assert run(r, "ZINTERSTORE", "xx", 2, "x", "x") == 1
    assert encoding(r, "xx") == b"listpack"


def test_copy_keeps_encoding_and_is_independent(r):
    r.config_set("zset-max-listpack-entries", 2)
    run(r, "ZADD", "z", 1, "a", 2, "b", 3, "c")
    run(r, "ZREM", "z", "c")
    assert run(r, "COPY", "z", "c") == 1
    assert encoding(r, "c") == b"skiplist"
    run(r, "ZADD", "c", 9, "x")
    run(r, "ZINCRBY", "c", 5, "a")
    assert withscores(r, "z") == [b"a", b"1", b"b", b"2"]
    run(r, "ZADD", "lp", 1, "a")
    run(r, "COPY", "lp", "lp2")
    assert encoding(r, "lp2") == b"listpack"
    assert run(r, "COPY", "lp", "c") == 0
    assert run(r, "COPY", "lp", "c", "REPLACE") == 1
    assert withscores(r, "c") == [b"a", b"1"]


def test_debug_reload_keeps_members_scores_and_encodings(server, r):
    run(r, "ZADD", "lp", "0.1", "a", "-inf", "b", "inf", "c", "1e-320", "d", 7, "e")
    run(r, "ZADD", "big", *[x for i in range(300) for x in (f"{i}.25", f"m{i}")])
    run(r, "ZADD", "long", 1, "x" * 100)
    run(r, "ZADD", "neg", "-0", "z" * 70)  # a skiplist by its member's length, also on loading
    before = {key: (withscores(r, key), encoding(r, key)) for key in ("lp", "big", "long", "neg")}
    assert [kind for _, kind in before.values()] == [b"listpack", b"skiplist", b"skiplist",
                                                     b"skiplist"]
    assert run(r, "DEBUG", "RELOAD") == b"OK"
    assert {key: (withscores(r, key), encoding(r, key)) for key in before} == before
    assert run(r, "ZSCORE", "lp", "a") == printed(server, "0.1")
    assert run(r, "ZSCORE", "neg", "z" * 70) == b"-0"


def test_a_shrunk_skiplist_is_a_listpack_again_after_a_reload(r):
    """Redis's RDB loader converts a skiplist that now fits the listpack limits back to a
    listpack (rdb.c), and so does Brook loading the RDB file it writes by default."""
    r.config_set("zset-max-listpack-entries", 2)
    run(r, "ZADD", "sl", 1, "a", 2, "b", 3, "c")
    run(r, "ZREM", "sl", "c")
    assert run(r, "DEBUG", "RELOAD") == b"OK"
    assert (withscores(r, "sl"), encoding(r, "sl")) == ([b"a", b"1", b"b", b"2"], b"listpack")


@pytest.mark.brook_only
def test_brooks_own_snapshot_keeps_the_encoding_a_sorted_set_reached(r, set_config):
    """snapshot-format brook: the snapshot is exact, encodings included (docs/architecture.md,
    known difference)."""
    set_config("snapshot-format", "brook")
    r.config_set("zset-max-listpack-entries", 2)
    run(r, "ZADD", "sl", 1, "a", 2, "b", 3, "c")
    run(r, "ZREM", "sl", "c")
    assert run(r, "DEBUG", "RELOAD") == b"OK"
    assert (withscores(r, "sl"), encoding(r, "sl")) == ([b"a", b"1", b"b", b"2"], b"skiplist")


# ---------------------------------------------------------------------------------------------
# Generic key commands, WRONGTYPE, arity
# ---------------------------------------------------------------------------------------------


def test_generic_key_commands_carry_sorted_sets(r):
    run(r, "ZADD", "z", 2, "b", 1, "a")
    assert run(r, "RENAME", "z", "t") == b"OK"
    assert withscores(r, "t") == [b"a", b"1", b"b", b"2"]
    assert run(r, "MOVE", "t", 1) == 1
    assert run(r, "SWAPDB", 0, 1) == b"OK"
    assert withscores(r, "t") == [b"a", b"1", b"b", b"2"] and encoding(r, "t") == b"listpack"
    assert run(r, "PEXPIRE", "t", 1) == 1
    time.sleep(0.01)
    assert run(r, "ZCARD", "t") == 0 and run(r, "EXISTS", "t") == 0
    run(r, "ZADD", "e", 1, "a")
    assert run(r, "EXPIRE", "e", 100) == 1
    run(r, "ZADD", "e", 2, "b")
    run(r, "ZREM", "e", "b")
    assert 0 < r.ttl("e") <= 100  # changing members keeps the TTL
    run(r, "ZPOPMIN", "e")
    assert run(r, "EXISTS", "e") == 0 and r.ttl("e") == -2
    assert run(r, "SORT", "nosuch") == []
    run(r, "ZADD", "s", 3, "1", 1, "3", 2, "2")
    assert run(r, "SORT", "s") == [b"1", b"2", b"3"]
    docs = run(r, "COMMAND", "DOCS", "ZADD")
    assert docs[0] == b"zadd" and b"group" in docs[1]


def test_wrong_type_and_arity(r):
    r.set("str", "x")
    for args in (("ZADD", "str", 1, "a"), ("ZADD", "str", "XX", 1, "a"),
                 ("ZINCRBY", "str", 1, "a"), ("ZREM", "str", "a"), ("ZCARD", "str"),
                 ("ZSCORE", "str", "a"), ("ZMSCORE", "str", "a"), ("ZRANK", "str", "a"),
                 ("ZREVRANK", "str", "a"), ("ZCOUNT", "str", 0, 1),
                 ("ZLEXCOUNT", "str", "-", "+"), ("ZRANGE", "str", 0, -1),
                 ("ZRANGE", "str", 0, 1, "BYSCORE"), ("ZRANGEBYSCORE", "str", 0, 1),
                 ("ZREVRANGEBYSCORE", "str", 1, 0), ("ZRANGEBYLEX", "str", "-", "+"),
                 ("ZREVRANGEBYLEX", "str", "+", "-"), ("ZREVRANGE", "str", 0, -1),
                 ("ZRANGESTORE", "d", "str", 0, -1), ("ZREMRANGEBYSCORE", "str", 0, 1),
                 ("ZREMRANGEBYRANK", "str", 0, 1), ("ZREMRANGEBYLEX", "str", "-", "+"),
                 ("ZPOPMIN", "str"), ("ZPOPMAX", "str", 2), ("ZMPOP", 1, "str", "MIN"),
                 ("ZRANDMEMBER", "str"), ("ZRANDMEMBER", "str", -3, "WITHSCORES"),
                 ("ZUNION", 1, "str"), ("ZINTER", 1, "str"), ("ZDIFF", 1, "str"),
                 ("ZUNIONSTORE", "d", 1, "str"), ("ZINTERSTORE", "d", 1, "str"),
                 ("ZDIFFSTORE", "d", 1, "str"), ("ZINTERCARD", 1, "str"), ("ZSCAN", "str", 0),
                 ("BZPOPMIN", "str", 0), ("BZPOPMAX", "str", 0),
                 ("BZMPOP", 0, 1, "str", "MAX")):
        assert error_of(r, *args) == WRONGTYPE, args
    run(r, "ZADD", "z", 1, "a")
    for args in (("SADD", "z", "a"), ("LPUSH", "z", "a"), ("GET", "z"), ("HSET", "z", "f", "v"),
                 ("SINTER", "z"), ("XADD", "z", "*", "f", "v"), ("INCR", "z")):
        assert error_of(r, *args) == WRONGTYPE, args
    arity = {"zadd": ("z", 1), "zincrby": ("z", 1), "zrem": ("z",), "zcard": (),
             "zscore": ("z",), "zmscore": ("z",), "zrank": ("z",), "zrevrank": ("z",),
             "zcount": ("z", 1), "zlexcount": ("z", "-"), "zrange": ("z", 0),
             "zrangebyscore": ("z", 0), "zrevrangebyscore": ("z", 0), "zrangebylex": ("z", "-"),
             "zrevrangebylex": ("z", "+"), "zrevrange": ("z", 0), "zrangestore": ("d", "z", 0),
             "zremrangebyscore": ("z", 0), "zremrangebyrank": ("z", 0),
             "zremrangebylex": ("z", "-"), "zpopmin": (), "zpopmax": (), "zmpop": (1, "z"),
             "zrandmember": (), "zunion": (1,), "zinter": (1,), "zdiff": (1,),
             "zunionstore": ("d", 1), "zinterstore": ("d", 1), "zdiffstore": ("d", 1),
             "zintercard": (1,), "zscan": ("z",), "bzpopmin": ("z",), "bzpopmax": ("z",),
             "bzmpop": (0, 1, "z")}
    for name, args in arity.items():
        assert error_of(r, name.upper(), *args) == (
            f"wrong number of arguments for '{name}' command"), name


def test_sorted_sets_inside_multi(r):
    pipe = r.pipeline(transaction=True)
    pipe.zadd("q", {"a": 1, "b": 2}).zincrby("q", 5, "a").zrange("q", 0, -1).zpopmin("q")
    assert pipe.execute() == [2, 6.0, [b"b", b"a"], [(b"b", 2.0)]]


# ---------------------------------------------------------------------------------------------
# Keyspace events, WATCH
# ---------------------------------------------------------------------------------------------


@pytest.mark.min_redis(7, 2)
def test_scores_are_written_with_grisu2_digits(r):
    """Redis prints a double with fpconv's Grisu2, which for a few doubles in a thousand
    writes a digit more than the shortest text that reads back (or another last digit)."""
    for shortest, written in (("3462.097800231674", b"3462.0978002316738"),
                              ("234.480945925076", b"234.48094592507601"),
                              ("778.077074065923", b"778.0770740659229"),
                              ("-235.2824778397909", b"-235.28247783979089"),
                              ("38.4590358708958", b"38.459035870895796"),
                              ("0.1", b"0.1"), ("1e-7", b"1e-7"), ("2.5e+300", b"2.5e+300")):
        run(r, "ZADD", "z", shortest, "m")
        assert run(r, "ZSCORE", "z", "m") == written, shortest
        assert run(r, "ZINCRBY", "z", 0, "m") == written, shortest


def test_keyspace_events(r, listen):  # noqa: F811
    collected = listen("KEA")
    run(r, "ZADD", "z", 1, "a", 2, "b", 3, "c")
    run(r, "ZADD", "z", 1, "a")  # no change: no event
    run(r, "ZADD", "z", "CH", 5, "a")  # a new score only: still zadd
    run(r, "ZADD", "z", "INCR", 1, "a")
    run(r, "ZINCRBY", "z", 1, "b")
    run(r, "ZINCRBY", "z", 0, "b")  # no change
    run(r, "ZREM", "z", "nosuch")
    run(r, "ZREM", "z", "c")
    run(r, "ZPOPMIN", "z")
    run(r, "ZPOPMAX", "z", 5)
    run(r, "ZADD", "r", 1, "a", 2, "b", 3, "c", 4, "d")
    run(r, "ZREMRANGEBYSCORE", "r", 100, 200)
    run(r, "ZREMRANGEBYSCORE", "r", 1, 1)
    run(r, "ZREMRANGEBYRANK", "r", 0, 0)
    run(r, "ZREMRANGEBYLEX", "r", "-", "+")
    run(r, "ZADD", "u", 1, "x")
    run(r, "ZUNIONSTORE", "d", 1, "u")
    run(r, "ZINTERSTORE", "d", 2, "u", "u")
    run(r, "ZDIFFSTORE", "d", 1, "u")
    run(r, "ZRANGESTORE", "d", "u", 0, -1)
    run(r, "ZDIFFSTORE", "d", 2, "u", "u")  # empty: the destination is deleted
    run(r, "ZDIFFSTORE", "d", 2, "u", "u")  # nothing to delete: no event
    run(r, "ZRANGESTORE", "u", "u", 5, 6)
    run(r, "ZADD", "m", 1, "a", 2, "b")
    run(r, "ZMPOP", 1, "m", "MAX")
    run(r, "ZMPOP", 1, "m", "MIN", "COUNT", 3)
    assert collected() == [
        *both("z", "zadd"), *both("z", "zadd"), *both("z", "zincr"), *both("z", "zincr"),
        *both("z", "zrem"), *both("z", "zpopmin"), *both("z", "zpopmax"), *both("z", "del"),
        *both("r", "zadd"), *both("r", "zremrangebyscore"), *both("r", "zremrangebyrank"),
        *both("r", "zremrangebylex"), *both("r", "del"), *both("u", "zadd"),
        *both("d", "zunionstore"), *both("d", "zinterstore"), *both("d", "zdiffstore"),
        *both("d", "zrangestore"), *both("d", "del"), *both("u", "del"), *both("m", "zadd"),
        *both("m", "zpopmax"), *both("m", "zpopmin"), *both("m", "del")]


def test_zset_events_only_with_z_flag(r, listen):  # noqa: F811
    collected = listen("Kz")
    run(r, "ZADD", "z", 1, "a")
    run(r, "ZPOPMIN", "z")  # the generic del is not a z event
    run(r, "SADD", "s", "a")
    assert collected() == [(b"__keyspace@0__:z", b"zadd"), (b"__keyspace@0__:z", b"zpopmin")]


def test_watch_sees_real_changes_only(server):
    r = server.client()
    other = server.client()
    run(r, "ZADD", "w", 1, "a", 2, "b")
    for change, aborted in ((("ZADD", "w", 1, "a"), False), (("ZREM", "w", "x"), False),
                            (("ZINCRBY", "w", 0, "a"), False),
                            (("ZADD", "w", "NX", 5, "a"), False),
                            (("ZREMRANGEBYSCORE", "w", 100, 200), False),
                            (("ZUNIONSTORE", "other", 1, "nosuch"), False),
                            (("ZADD", "w", 3, "a"), True), (("ZINCRBY", "w", 1, "b"), True),
                            (("ZPOPMIN", "w"), True), (("ZUNIONSTORE", "w", 1, "w"), True),
                            (("ZREMRANGEBYRANK", "w", 0, 0), True)):
        pipe = r.pipeline()
        pipe.watch("w")
        other.execute_command(*change)
        pipe.multi()
        pipe.zcard("w")
        if aborted:
            with pytest.raises(redis.WatchError):
                pipe.execute()
        else:
            assert pipe.execute() == [run(other, "ZCARD", "w")], change
    r.close()
    other.close()


# ---------------------------------------------------------------------------------------------
# Persistence: the AOF against Redis's own, restarts (Brook)
# ---------------------------------------------------------------------------------------------


# Written to both servers' AOFs; (PARK, ...) parks a blocking pop that the next command serves.
AOF_SEQUENCE: list[tuple[str, ...]] = [
    ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"),
    ("ZADD", "z", "XX", "CH", "GT", "9", "a", "0", "b"), ("ZADD", "z", "NX", "1", "a"),
    ("ZADD", "z", "INCR", "0.1", "c"), ("ZINCRBY", "z", "0.5", "d"), ("ZINCRBY", "z", "0", "d"),
    ("ZADD", "z", "GT", "INCR", "-1", "d"), ("ZPOPMIN", "z"), ("ZPOPMAX", "z", "2"),
    ("ZPOPMIN", "nokey"), ("ZPOPMIN", "z", "0"), ("ZMPOP", "2", "nokey", "z", "MIN"),
    ("ZMPOP", "1", "z", "MAX", "COUNT", "10"), ("ZMPOP", "1", "z", "MIN"),
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("BZPOPMIN", "z", "0"),
    ("BZPOPMAX", "nokey", "z", "0"), ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"),
    ("PARK", "BZPOPMIN", "w", "0"), ("ZADD", "w", "1", "x", "2", "y"),
    ("PARK", "BZMPOP", "0", "1", "w2", "MAX", "COUNT", "2"), ("ZADD", "w2", "1", "x", "2", "y", "3", "z"),
    ("ZADD", "s", "1", "a", "2", "b", "3", "c", "4", "d"), ("ZREM", "s", "a", "nosuch"),
    ("ZREM", "s", "nosuch"), ("ZREMRANGEBYSCORE", "s", "100", "200"),
    ("ZREMRANGEBYSCORE", "s", "0", "2"), ("ZREMRANGEBYRANK", "s", "0", "0"),
    ("ZREMRANGEBYLEX", "s", "-", "+"), ("ZADD", "t", "1", "a", "2", "b"),
    ("ZUNIONSTORE", "u", "1", "t", "WEIGHTS", "0.1"),
    ("ZINTERSTORE", "i", "2", "t", "t", "AGGREGATE", "MAX"), ("ZDIFFSTORE", "df", "2", "t", "nokey"),
    ("ZDIFFSTORE", "df", "1", "nokey"), ("ZRANGESTORE", "rs", "t", "0", "0"),
    ("ZRANGESTORE", "rs", "t", "5", "6"), ("ZRANDMEMBER", "t", "1"), ("ZSCORE", "t", "a"),
    ("ZRANGE", "t", "0", "-1"), ("ZADD", "z2", "1", "a"), ("ZREM", "z2", "a"),
    ("ZADD", "e", "1", "a"), ("ZADD", "e", "INCR", "-inf", "a"), ("ZADD", "e", "XX", "1", "b"),
    ("MULTI",), ("ZADD", "m", "1", "a"), ("ZPOPMAX", "m"), ("EXEC",),
]


def _aof_effects(proc: ServerProcess, directory: Path) -> list[list[bytes]]:
    client = proc.client()
    client.response_callbacks.clear()
    admin = proc.client()
    parked: socket.socket | None = None
    for command in AOF_SEQUENCE:
        if command[0] == "PARK":
            parked = socket.create_connection((proc.host, proc.port), timeout=10)
            parked.sendall(b"*%d\r\n" % (len(command) - 1) + b"".join(
                b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in command[1:]))
            deadline = time.monotonic() + 10
            while admin.info("clients")["blocked_clients"] != 1:
                assert time.monotonic() < deadline
                time.sleep(0.005)
            continue
        with contextlib.suppress(redis.ResponseError):
            client.execute_command(*command)
        if parked is not None:
            reader = hiredis.Reader()
            while (reply := reader.gets()) is False:
                reader.feed(parked.recv(65536))
            assert reply, command
            parked.close()
            parked = None
    client.close()
    admin.close()
    time.sleep(0.2)
    files = sorted(glob.glob(str(directory / "appendonlydir" / "*.incr.aof")))
    commands = aof_commands(Path(files[-1]) if files else directory / "appendonly.aof")
    return [command for command in commands if command[0] != b"SELECT"]


def test_the_aof_holds_the_effects_redis_writes(tmp_path: Path) -> None:
    """Pops are written as ZPOPMIN/ZPOPMAX (ZMPOP and BZMPOP with the count they took, the
    blocking pops without one), commands that changed nothing not at all, STORE forms as they
    were sent (an empty result deletes the destination)."""
    expected = effects_match_redis(tmp_path, _aof_effects)
    for effect in ([b"ZPOPMIN", b"z", b"1"], [b"ZPOPMAX", b"z", b"2"], [b"ZPOPMIN", b"z"],
                   [b"ZPOPMAX", b"z"], [b"ZPOPMIN", b"w"], [b"ZPOPMAX", b"w2", b"2"]):
        assert effect in expected
    assert not [c for c in expected if c[0] in (b"ZMPOP", b"BZPOPMIN", b"BZPOPMAX", b"BZMPOP",
                                                b"ZRANDMEMBER", b"ZSCORE", b"ZRANGE")]
    assert [b"ZINCRBY", b"z", b"0", b"d"] not in expected
    assert [b"ZREM", b"s", b"nosuch"] not in expected


def test_sorted_sets_survive_a_restart(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        r = proc.client()
        run(r, "ZADD", "z", "0.1", "a", "-inf", "b", "inf", "c", "1e-320", "d",
            "12345678901234567890", "e")
        run(r, "ZINCRBY", "z", "0.2", "a")
        run(r, "ZADD", "big", *[x for i in range(300) for x in (f"{i}.5", f"m{i}")])
        run(r, "ZPOPMIN", "big", 5)
        run(r, "ZMPOP", 1, "big", "MAX", "COUNT", 3)
        run(r, "BZPOPMIN", "big", 0)
        run(r, "ZUNIONSTORE", "u", 2, "z", "big", "WEIGHTS", "0.5", 3)
        run(r, "ZRANGESTORE", "rs", "big", 10, 20)
        run(r, "ZADD", "neg", "-0", "m" * 70)  # a skiplist, by its member's length
        run(r, "SELECT", 3)
        run(r, "ZADD", "other", 1, "x")
        run(r, "SELECT", 0)
        keys = ("z", "big", "u", "rs", "neg")
        before = {key: (withscores(r, key), encoding(r, key)) for key in keys}
        r.close()
        proc = restart(proc, tmp_path)
        r = proc.client()
        assert {key: (withscores(r, key), encoding(r, key)) for key in keys} == before
        assert run(r, "ZSCORE", "z", "a") == b"0.30000000000000004"
        assert run(r, "ZSCORE", "neg", "m" * 70) == b"-0"
        run(r, "SELECT", 3)
        assert withscores(r, "other") == [b"x", b"1"]
        r.close()
    finally:
        proc.stop()


def test_rewrite_keeps_scores_and_encodings(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        r = proc.client()
        r.config_set("zset-max-listpack-entries", 2)
        run(r, "ZADD", "sl", 1, "a", 2, "b", 3, "c")
        run(r, "ZREM", "sl", "c")
        r.config_set("zset-max-listpack-entries", 128)
        run(r, "ZADD", "lp", "0.1", "a", "-inf", "b", "1e-320", "c")
        run(r, "ZADD", "big", *[x for i in range(300) for x in (f"{i}.25", f"m{i}")])
        before = {k: (withscores(r, k), encoding(r, k)) for k in ("sl", "lp", "big")}
        assert before["sl"][1] == b"skiplist"
        r.execute_command("BGREWRITEAOF")
        for _ in range(500):
            if r.info("persistence")["aof_rewrite_in_progress"] == 0:
                break
            time.sleep(0.01)
        assert [b"BROOK.RESTORE-ENCODING", b"sl", b"SKIPLIST"] in aof_commands(
            tmp_path / "appendonly.aof")
        r.close()
        proc = restart(proc, tmp_path)
        r = proc.client()
        assert {k: (withscores(r, k), encoding(r, k)) for k in before} == before
        r.close()
    finally:
        proc.stop()


def test_scores_are_exact_doubles(r):
    """Every double a score can be reads back as itself (17 significant digits suffice)."""
    values = [0.1, 1 / 3, math.pi, 2.0 ** -1074, 2.0 ** 1023, -1e-300, 123456789.123456789,
              9007199254740993.0, 0.30000000000000004]
    run(r, "ZADD", "z", *[x for i, v in enumerate(values) for x in (repr(v), f"m{i}")])
    for index, value in enumerate(values):
        assert float(run(r, "ZSCORE", "z", f"m{index}")) == value
    r.config_set("zset-max-listpack-entries", 0)
    run(r, "ZADD", "s", *[x for i, v in enumerate(values) for x in (repr(v), f"m{i}")])
    for index, value in enumerate(values):
        assert float(run(r, "ZSCORE", "s", f"m{index}")) == value
