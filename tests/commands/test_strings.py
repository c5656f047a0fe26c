"""String commands: parity with Redis for replies, error texts, TTLs, encodings and RESP3."""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import (
    NOT_INTEGER,
    WRONGTYPE,
    call,
    encode_request,
    error_of,
    run,
)

# ---------------------------------------------------------------------------------------------
# Raw RESP helpers: exact bytes on the wire, without waiting for a read timeout.
# ---------------------------------------------------------------------------------------------





# ---------------------------------------------------------------------------------------------
# GET / SET
# ---------------------------------------------------------------------------------------------


def test_get_set_basic(r):
    assert r.get("missing") is None
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert r.set("k", "") is True
    assert r.get("k") == b""


@pytest.mark.parametrize("value", [b"a\x00b", b"\r\n", b"\x00" * 10, bytes(range(256)), b"x" * 100_000])
def test_set_binary_safe(r, value):
    r.set(b"bin\x00key\r\n", value)
    assert r.get(b"bin\x00key\r\n") == value
    assert r.strlen(b"bin\x00key\r\n") == len(value)


def test_get_raw_replies(raw):
    assert call(raw, "GET", "nokey") == b"$-1\r\n"
    assert call(raw, "SET", "k", "hello") == b"+OK\r\n"
    assert call(raw, "GET", "k") == b"$5\r\nhello\r\n"
    assert call(raw, "HELLO", "3").startswith(b"%")
    assert call(raw, "GET", "nokey") == b"_\r\n"
    assert call(raw, "SET", "k", "v", "XX", "GET") == b"$5\r\nhello\r\n"
    assert call(raw, "SET", "new", "v", "XX") == b"_\r\n"


def test_get_wrong_type(r):
    r.hset("h", "f", "v")
    assert error_of(r, "GET", "h") == WRONGTYPE
    assert run(r, "SET", "h", "now a string") == b"OK"
    assert r.get("h") == b"now a string"


def test_command_arity(r):
    assert error_of(r, "GET") == "wrong number of arguments for 'get' command"
    assert error_of(r, "GET", "a", "b") == "wrong number of arguments for 'get' command"
    assert error_of(r, "SET", "a") == "wrong number of arguments for 'set' command"


def test_set_clears_ttl(r):
    r.set("k", "v", ex=100)
    assert r.ttl("k") == 100
    r.set("k", "v2")
    assert r.ttl("k") == -1


def test_set_keepttl(r):
    r.set("k", "v", px=100_000)
    r.set("k", "v2", keepttl=True)
    assert 99_000 < r.pttl("k") <= 100_000
    assert r.get("k") == b"v2"
    r.set("plain", "v", keepttl=True)
    assert r.ttl("plain") == -1


def test_set_expire_options(r):
    assert r.set("ex", "v", ex=10) is True
    assert r.ttl("ex") == 10
    assert r.set("px", "v", px=10_000) is True
    assert 9_000 < r.pttl("px") <= 10_000
    now = int(time.time())
    assert run(r, "SET", "exat", "v", "EXAT", now + 100) == b"OK"
    assert 98 <= r.ttl("exat") <= 100
    assert run(r, "SET", "pxat", "v", "PXAT", (now + 100) * 1000) == b"OK"
    assert 98_000 <= r.pttl("pxat") <= 100_000
    assert run(r, "SET", "lower", "v", "ex", "10", "nx") == b"OK"
    assert r.ttl("lower") == 10


def test_set_repeated_expire_option_last_wins(r):
    assert run(r, "SET", "k", "v", "EX", "10", "EX", "20") == b"OK"
    assert r.ttl("k") == 20
    assert run(r, "SET", "k", "v", "NX", "NX") is None
    assert run(r, "SET", "k", "v", "KEEPTTL", "KEEPTTL") == b"OK"
    assert r.ttl("k") == 20
    assert run(r, "SET", "k", "v2", "GET", "GET") == b"v"


def test_set_short_expiry_expires(r):
    r.set("k", "v", px=30)
    time.sleep(0.08)
    assert r.get("k") is None
    assert r.exists("k") == 0


def test_set_absolute_time_in_past(r):
    assert run(r, "SET", "k", "v", "EXAT", 1) == b"OK"
    assert r.get("k") is None
    assert run(r, "SET", "k", "v", "PXAT", 1) == b"OK"
    assert r.exists("k") == 0


@pytest.mark.parametrize(
    "options",
    [
        ["NX", "XX"],
        ["XX", "NX"],
        ["EX", "10", "PX", "100"],
        ["PX", "100", "EX", "10"],
        ["EX", "10", "KEEPTTL"],
        ["KEEPTTL", "EX", "10"],
        ["KEEPTTL", "PXAT", "10"],
        ["EXAT", "10", "PXAT", "100"],
        ["EX"],
        ["PX"],
        ["EX", "10", "PX"],
        ["PERSIST"],
        ["FOO"],
        ["GET", "FOO"],
        ["NXX"],
        ["EX10"],
    ],
)
def test_set_syntax_errors(r, options):
    assert error_of(r, "SET", "k", "v", *options) == "syntax error"
    assert r.exists("k") == 0


@pytest.mark.parametrize(
    "option, amount",
    [
        ("EX", "0"), ("EX", "-1"), ("PX", "0"), ("PX", "-100"), ("EXAT", "0"), ("PXAT", "0"),
        ("EXAT", "-5"), ("PX", "9223372036854775807"), ("EX", "9223372036854775807"),
        ("EX", "9223372036854775"), ("EX", "9223372036854774"), ("EXAT", "9223372036854776"),
    ],
)
def test_set_invalid_expire(r, option, amount):
    assert error_of(r, "SET", "k", "v", option, amount) == "invalid expire time in 'set' command"
    assert r.exists("k") == 0


@pytest.mark.parametrize("amount", ["abc", "1.5", " 10", "10 ", "+10", "9223372036854775808", ""])
def test_set_expire_not_integer(r, amount):
    assert error_of(r, "SET", "k", "v", "EX", amount) == NOT_INTEGER


def test_set_absolute_expire_limits_accepted(r):
    assert run(r, "SET", "k", "v", "EXAT", "9223372036854775") == b"OK"
    assert run(r, "SET", "k", "v", "PXAT", "9223372036854775807") == b"OK"
    assert r.ttl("k") > 10**12


def test_set_nx_xx(r):
    assert r.set("k", "v1", nx=True) is True
    assert r.set("k", "v2", nx=True) is None
    assert r.get("k") == b"v1"
    assert r.set("k", "v3", xx=True) is True
    assert r.get("k") == b"v3"
    assert r.set("other", "v", xx=True) is None
    assert r.exists("other") == 0


def test_set_nx_does_not_touch_ttl_when_aborted(r):
    r.set("k", "v", ex=100)
    assert r.set("k", "v2", nx=True, ex=5) is None
    assert r.ttl("k") == 100


def test_set_get(r):
    assert r.set("k", "v1", get=True) is None
    assert r.set("k", "v2", get=True) == b"v1"
    assert r.get("k") == b"v2"
    # NX/XX with GET reply the old value whether or not the set happened.
    assert run(r, "SET", "k", "v3", "NX", "GET") == b"v2"
    assert r.get("k") == b"v2"
    assert run(r, "SET", "nokey", "v", "XX", "GET") is None
    assert r.exists("nokey") == 0
    assert run(r, "SET", "k", "v4", "XX", "GET") == b"v2"
    assert r.get("k") == b"v4"
    assert run(r, "SET", "fresh", "v", "NX", "GET") is None
    assert r.get("fresh") == b"v"


def test_set_get_wrong_type_does_not_set(r):
    r.hset("h", "f", "v")
    assert error_of(r, "SET", "h", "v", "GET") == WRONGTYPE
    assert r.type("h") == b"hash"


def test_set_expire_checked_before_get(r):
    r.hset("h", "f", "v")
    assert error_of(r, "SET", "h", "v", "GET", "EX", "0") == "invalid expire time in 'set' command"


def test_set_option_with_embedded_nul_matches_prefix(r):
    assert run(r, "SET", "k", "v", b"NX\x00junk") == b"OK"
    assert run(r, "SET", "k", "v", b"NX\x00junk") is None


# ---------------------------------------------------------------------------------------------
# SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX
# ---------------------------------------------------------------------------------------------


def test_setnx(r):
    assert r.setnx("k", "v") is True
    assert r.setnx("k", "w") is False
    assert r.get("k") == b"v"
    r.hset("h", "f", "v")
    assert r.setnx("h", "v") is False


def test_setnx_on_expired_key(r):
    r.set("k", "v", px=20)
    time.sleep(0.05)
    assert r.setnx("k", "new") is True
    assert r.ttl("k") == -1


def test_setex_psetex(r):
    assert run(r, "SETEX", "k", 100, "v") == b"OK"
    assert r.ttl("k") == 100
    assert r.get("k") == b"v"
    assert r.psetex("p", 100_000, "v") is True
    assert 99_000 < r.pttl("p") <= 100_000
    r.hset("h", "f", "v")
    assert run(r, "SETEX", "h", 10, "v") == b"OK"
    assert r.type("h") == b"string"


@pytest.mark.parametrize(
    "name, amount, message",
    [
        ("SETEX", "0", "invalid expire time in 'setex' command"),
        ("SETEX", "-1", "invalid expire time in 'setex' command"),
        ("SETEX", "9223372036854775807", "invalid expire time in 'setex' command"),
        ("SETEX", "abc", NOT_INTEGER),
        ("PSETEX", "0", "invalid expire time in 'psetex' command"),
        ("PSETEX", "-5", "invalid expire time in 'psetex' command"),
        ("PSETEX", "9223372036854775807", "invalid expire time in 'psetex' command"),
        ("PSETEX", "1.5", NOT_INTEGER),
    ],
)
def test_setex_errors(r, name, amount, message):
    assert error_of(r, name, "k", amount, "v") == message
    assert r.exists("k") == 0


def test_getset(r):
    assert r.getset("k", "v1") is None
    assert r.getset("k", "v2") == b"v1"
    r.expire("k", 100)
    assert r.getset("k", "v3") == b"v2"
    assert r.ttl("k") == -1
    r.hset("h", "f", "v")
    assert error_of(r, "GETSET", "h", "v") == WRONGTYPE


def test_getdel(r):
    r.set("k", "v")
    assert r.getdel("k") == b"v"
    assert r.exists("k") == 0
    assert r.getdel("k") is None
    r.hset("h", "f", "v")
    assert error_of(r, "GETDEL", "h") == WRONGTYPE
    assert r.exists("h") == 1


def test_getex_options(r):
    r.set("k", "v")
    assert r.getex("k") == b"v"
    assert r.ttl("k") == -1
    assert r.getex("k", ex=100) == b"v"
    assert r.ttl("k") == 100
    assert r.getex("k", px=50_000) == b"v"
    assert 49_000 < r.pttl("k") <= 50_000
    now = int(time.time())
    assert r.getex("k", exat=now + 200) == b"v"
    assert 198 <= r.ttl("k") <= 200
    assert r.getex("k", pxat=(now + 300) * 1000) == b"v"
    assert 298 <= r.ttl("k") <= 300
    assert r.getex("k", persist=True) == b"v"
    assert r.ttl("k") == -1
    assert run(r, "GETEX", "k", "EX", "10", "EX", "20") == b"v"
    assert r.ttl("k") == 20


def test_getex_missing_and_wrong_type(r):
    assert r.getex("nokey", ex=10) is None
    # The expiry is only validated once the key is known to hold a string.
    assert run(r, "GETEX", "nokey", "EX", "0") is None
    r.hset("h", "f", "v")
    assert error_of(r, "GETEX", "h", "EX", "0") == WRONGTYPE


def test_getex_absolute_time_in_past_deletes(r):
    r.set("k", "v")
    assert run(r, "GETEX", "k", "EXAT", "1") == b"v"
    assert r.exists("k") == 0
    assert r.dbsize() == 0


@pytest.mark.parametrize(
    "options",
    [["KEEPTTL"], ["NX"], ["XX"], ["GET"], ["PERSIST", "EX", "10"], ["EX", "10", "PERSIST"],
     ["EX", "10", "PX", "10"], ["EX"], ["FOO"]],
)
def test_getex_syntax_errors(r, options):
    r.set("k", "v")
    assert error_of(r, "GETEX", "k", *options) == "syntax error"
    assert error_of(r, "GETEX", "nokey", *options) == "syntax error"


@pytest.mark.parametrize("option, amount", [("EX", "0"), ("PX", "-1"), ("EXAT", "0"),
                                            ("EX", "9223372036854775807")])
def test_getex_invalid_expire(r, option, amount):
    r.set("k", "v")
    assert error_of(r, "GETEX", "k", option, amount) == "invalid expire time in 'getex' command"
    assert r.ttl("k") == -1


# ---------------------------------------------------------------------------------------------
# MGET / MSET / MSETNX
# ---------------------------------------------------------------------------------------------


def test_mget(r):
    r.set("a", "1")
    r.set("b", b"\x00\r\n")
    r.hset("h", "f", "v")
    assert r.mget("a", "b", "missing", "h", "a") == [b"1", b"\x00\r\n", None, None, b"1"]


def test_mget_raw_resp3(raw):
    call(raw, "SET", "a", "1")
    assert call(raw, "MGET", "a", "zz") == b"*2\r\n$1\r\n1\r\n$-1\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "MGET", "a", "zz") == b"*2\r\n$1\r\n1\r\n_\r\n"


def test_mset(r):
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "b") == [b"1", b"2"]
    assert run(r, "MSET", "a", "x", "a", "y") == b"OK"
    assert r.get("a") == b"y"
    r.expire("a", 100)
    r.mset({"a": "z"})
    assert r.ttl("a") == -1
    r.hset("h", "f", "v")
    r.mset({"h": "s"})
    assert r.get("h") == b"s"


def test_mset_arity(r):
    assert error_of(r, "MSET", "a") == "wrong number of arguments for 'mset' command"
    assert error_of(r, "MSET", "a", "1", "b") == "wrong number of arguments for 'mset' command"
    assert error_of(r, "MSETNX", "a", "1", "b") == "wrong number of arguments for 'msetnx' command"
    assert r.exists("a") == 0


def test_msetnx(r):
    assert r.msetnx({"a": "1", "b": "2"}) is True
    assert r.msetnx({"b": "x", "c": "3"}) is False
    assert r.exists("c") == 0
    assert r.get("b") == b"2"
    r.hset("h", "f", "v")
    assert r.msetnx({"h": "x", "d": "4"}) is False
    assert run(r, "MSETNX", "e", "1", "e", "2") == 1
    assert r.get("e") == b"2"


# ---------------------------------------------------------------------------------------------
# Counters
# ---------------------------------------------------------------------------------------------


def test_incr_decr(r):
    assert r.incr("n") == 1
    assert r.incr("n") == 2
    assert r.incrby("n", 10) == 12
    assert r.decr("n") == 11
    assert r.decrby("n", 20) == -9
    assert r.incrby("n", -1) == -10
    assert r.get("n") == b"-10"
    assert r.decr("fresh") == -1
    assert r.incrby("fresh2", 0) == 0
    assert r.get("fresh2") == b"0"


def test_incr_raw_reply(raw):
    assert call(raw, "INCR", "n") == b":1\r\n"
    assert call(raw, "INCRBY", "n", "-5") == b":-4\r\n"


def test_incr_keeps_ttl(r):
    r.set("n", "5", ex=100)
    assert r.incr("n") == 6
    assert r.decrby("n", 2) == 4
    assert r.ttl("n") == 100


def test_incr_across_the_short_counter_bound(r):
    """18 digits take INCR's byte loop, 19 the full string2ll checks: both count the same."""
    r.set("n", "999999999999999998")
    assert r.incr("n") == 999999999999999999
    assert r.incr("n") == 10**18
    assert r.incr("n") == 10**18 + 1
    assert r.get("n") == b"1000000000000000001"
    r.set("z", "0")
    assert r.incr("z") == 1
    r.set("neg", "-1")
    assert r.incr("neg") == 0
    assert r.incr("neg") == 1


def test_incr_after_append_and_setrange(r):
    r.set("n", "1")
    r.append("n", "0")
    assert r.incr("n") == 11
    r.setrange("m", 0, "42")
    assert r.incr("m") == 43


@pytest.mark.parametrize(
    "value",
    ["abc", "", " 1", "1 ", "+1", "01", "-0", "1.0", "1e3", "0x10", "1_000", "9223372036854775808",
     "-9223372036854775809", "12345678901234567890123", "\x001"],
)
def test_incr_not_integer(r, value):
    r.set("n", value)
    for command in (("INCR", "n"), ("DECR", "n"), ("INCRBY", "n", "1"), ("DECRBY", "n", "1")):
        assert error_of(r, *command) == NOT_INTEGER
    assert r.get("n") == value.encode()


@pytest.mark.parametrize("increment", ["abc", "1.5", "", "+1", "01", "9223372036854775808", " 1"])
def test_incrby_bad_increment(r, increment):
    assert error_of(r, "INCRBY", "n", increment) == NOT_INTEGER
    assert error_of(r, "DECRBY", "n", increment) == NOT_INTEGER
    assert r.exists("n") == 0


def test_incr_overflow(r):
    r.set("max", "9223372036854775807")
    assert error_of(r, "INCR", "max") == "increment or decrement would overflow"
    assert error_of(r, "INCRBY", "max", "1") == "increment or decrement would overflow"
    assert r.decr("max") == 9223372036854775806
    r.set("min", "-9223372036854775808")
    assert error_of(r, "DECR", "min") == "increment or decrement would overflow"
    assert error_of(r, "INCRBY", "min", "-1") == "increment or decrement would overflow"
    assert error_of(r, "DECRBY", "min", "1") == "increment or decrement would overflow"
    assert r.get("min") == b"-9223372036854775808"
    r.set("m", "5")
    assert error_of(r, "INCRBY", "m", "9223372036854775807") == "increment or decrement would overflow"
    assert r.decrby("m", 9223372036854775807) == -9223372036854775802
    assert r.incrby("m", -6) == -9223372036854775808


def test_decrby_min_long(r):
    assert error_of(r, "DECRBY", "n", "-9223372036854775808") == "decrement would overflow"
    r.set("n", "5")
    assert error_of(r, "DECRBY", "n", "-9223372036854775808") == "decrement would overflow"
    assert r.incrby("n", -9223372036854775808) is not None


def test_incr_wrong_type(r):
    r.hset("h", "f", "1")
    for command in (("INCR", "h"), ("DECR", "h"), ("INCRBY", "h", "1"), ("DECRBY", "h", "1"),
                    ("INCRBYFLOAT", "h", "1")):
        assert error_of(r, *command) == WRONGTYPE


def test_incr_wrong_type_checked_after_increment(r):
    r.hset("h", "f", "1")
    assert error_of(r, "INCRBY", "h", "x") == NOT_INTEGER


# (stored value or None, increment, reply) as printed by Redis's long double arithmetic.
INCRBYFLOAT_CASES = [
    ("10.5", "0.1", "10.6"),
    ("10.6", "3.0e3", "3010.60000000000000009"),
    (None, "3.0e3", "3000"),
    ("5.0e3", "2.0e2", "5200"),
    (None, "0.1", "0.1"),
    ("0.1", "0.2", "0.3"),
    (None, "-0.0", "0"),
    (None, "1e20", "100000000000000000000"),
    ("100000000000000000000", "1e-17", "100000000000000000000"),
    (None, "3.814697265625e-6", "0.00000381469726562"),
    (None, "1.23456789012345678901234", "1.23456789012345679"),
    (None, ".5", "0.5"),
    ("0.5", "5.", "5.5"),
    (None, "0x10", "16"),
    (None, "0x1.8p1", "3"),
    (None, "1.5e-4950", "0"),
    ("1", "-1e-30", "1"),
    ("-1", "1e-30", "-1"),
    (None, "-1e-30", "0"),
    ("17179869184", "0.1", "17179869184.09999999962747097"),
    ("9223372036854775807", "1", "9223372036854775808"),
    ("-8059256602948617276", "521924.88982515107", "-8059256602948095351"),
    ("-81.228083", "671530.2078397393", "671448.97975673930000085"),
    (None, "00012.500", "12.5"),
    ("1e00000000000000000000001", "1", "11"),
    ("3", "-3", "0"),
    ("1.1", "-1.1", "0"),
]


@pytest.mark.parametrize("initial, increment, expected", INCRBYFLOAT_CASES)
def test_incrbyfloat_long_double_formatting(r, initial, increment, expected):
    if initial is not None:
        r.set("f", initial)
    assert run(r, "INCRBYFLOAT", "f", increment) == expected.encode()
    assert r.get("f") == expected.encode()


def test_incrbyfloat_huge_values(raw):
    reply = call(raw, "INCRBYFLOAT", "f", "1e400")
    assert reply.startswith(b"$401\r\n10000000000000000000281880683947586514586")
    assert call(raw, "INCRBYFLOAT", "f", "-1e400") == b"$1\r\n0\r\n"


@pytest.mark.parametrize(
    "increment",
    ["abc", "", " 1", "1 ", "1_0", "nan", "NaN", "1e", "0x", "--1", "1e5000", "1e-5000", "\x001",
     "1.5.5", "1" * 5120],
)
def test_incrbyfloat_invalid_increment(r, increment):
    assert error_of(r, "INCRBYFLOAT", "f", increment) == "value is not a valid float"
    assert r.exists("f") == 0


@pytest.mark.parametrize("stored", ["abc", "1 ", "nan", "1e5000"])
def test_incrbyfloat_invalid_stored_value(r, stored):
    r.set("f", stored)
    assert error_of(r, "INCRBYFLOAT", "f", "1") == "value is not a valid float"


@pytest.mark.parametrize("initial, increment", [(None, "inf"), (None, "-Infinity"), ("inf", "1"),
                                                ("1e4932", "1e4932"), ("-inf", "inf")])
def test_incrbyfloat_nan_or_infinity(r, initial, increment):
    if initial is not None:
        r.set("f", initial)
    message = "increment would produce NaN or Infinity"
    assert error_of(r, "INCRBYFLOAT", "f", increment) == message
    assert r.get("f") == (initial.encode() if initial else None)


def test_incrbyfloat_keeps_ttl(r):
    r.set("f", "1.5", ex=100)
    assert r.incrbyfloat("f", 1) == 2.5
    assert r.ttl("f") == 100


# ---------------------------------------------------------------------------------------------
# APPEND, STRLEN, GETRANGE, SETRANGE
# ---------------------------------------------------------------------------------------------


def test_append(r):
    assert r.append("k", "Hello") == 5
    assert r.append("k", " World") == 11
    assert r.get("k") == b"Hello World"
    assert r.append("k", b"\x00\r\n") == 14
    assert r.get("k") == b"Hello World\x00\r\n"
    assert r.append("empty", "") == 0
    assert r.exists("empty") == 1
    assert r.get("empty") == b""


def test_append_keeps_ttl(r):
    r.set("k", "v", ex=100)
    r.append("k", "w")
    assert r.ttl("k") == 100


def test_append_many_times(r):
    for i in range(200):
        r.append("k", str(i % 10))
    assert r.get("k") == "".join(str(i % 10) for i in range(200)).encode()


def test_append_wrong_type(r):
    r.hset("h", "f", "v")
    assert error_of(r, "APPEND", "h", "x") == WRONGTYPE


def test_append_size_limit(r):
    r.config_set("proto-max-bulk-len", 1024 * 1024)
    r.setrange("k", 1024 * 1024 - 2, "ab")
    message = "string exceeds maximum allowed size (proto-max-bulk-len)"
    assert error_of(r, "APPEND", "k", "c") == message
    assert r.append("k", "") == 1024 * 1024


def test_strlen(r):
    assert r.strlen("nokey") == 0
    r.set("k", "hello")
    assert r.strlen("k") == 5
    r.set("n", "12345")
    assert r.strlen("n") == 5
    r.set("n", "-9223372036854775808")
    assert r.strlen("n") == 20
    r.hset("h", "f", "v")
    assert error_of(r, "STRLEN", "h") == WRONGTYPE


@pytest.mark.parametrize(
    "start, end, expected",
    [
        (0, 3, b"This"), (-3, -1, b"ing"), (0, -1, b"This is a string"), (10, 100, b"string"),
        (-100, -200, b""), (-1, -5, b""), (5, 3, b""), (16, 20, b""),
        (-100, 2, b"Thi"), (3, 3, b"s"), (9223372036854775807, 9223372036854775807, b""),
        (-9223372036854775808, 9223372036854775807, b"This is a string"), (-1, -1, b"g"),
    ],
)
def test_getrange(r, start, end, expected):
    r.set("k", "This is a string")
    assert r.getrange("k", start, end) == expected


def test_getrange_end_before_the_string(r, server):
    """An end still negative after counting from the end: Redis 8 returns nothing, older
    versions clipped it to 0 and returned the first byte."""
    r.set("k", "This is a string")
    newest = server.version >= (8, 0)
    assert r.getrange("k", 0, -100) == (b"" if newest else b"T")
    assert r.getrange("k", -1, -100) == b""
    assert r.getrange("k", -100, -99) == (b"" if newest else b"T")
    r.set("n", 1234)
    assert r.getrange("n", 1, -100) == b""


def test_getrange_special_cases(r):
    assert r.getrange("nokey", 0, -1) == b""
    r.set("empty", "")
    assert r.getrange("empty", 0, -1) == b""
    r.set("n", "12345")
    assert r.getrange("n", 1, 2) == b"23"
    assert error_of(r, "GETRANGE", "k", "a", "1") == NOT_INTEGER
    assert error_of(r, "GETRANGE", "k", "1", "1.5") == NOT_INTEGER
    r.hset("h", "f", "v")
    assert error_of(r, "GETRANGE", "h", "0", "1") == WRONGTYPE
    assert error_of(r, "GETRANGE", "h", "x", "1") == NOT_INTEGER


def test_setrange(r):
    r.set("k", "Hello World")
    assert r.setrange("k", 6, "Redis") == 11
    assert r.get("k") == b"Hello Redis"
    assert r.setrange("k", 11, "!") == 12
    assert r.get("k") == b"Hello Redis!"
    assert r.setrange("k", 15, "x") == 16
    assert r.get("k") == b"Hello Redis!\x00\x00\x00x"
    assert r.setrange("k", 0, b"\r\n") == 16
    assert r.get("k") == b"\r\nllo Redis!\x00\x00\x00x"


def test_setrange_missing_key(r):
    assert r.setrange("k", 2, "ab") == 4
    assert r.get("k") == b"\x00\x00ab"
    assert r.setrange("k", 1, "XYZ") == 4
    assert r.get("k") == b"\x00XYZ"
    assert r.setrange("empty", 5, "") == 0
    assert r.exists("empty") == 0


def test_setrange_empty_value_on_existing_key(r):
    r.set("k", "abc")
    assert r.setrange("k", 100, "") == 3
    assert r.setrange("k", 1 << 40, "") == 3
    assert r.get("k") == b"abc"


def test_setrange_keeps_ttl_and_integer_values(r):
    r.set("k", "12345", ex=100)
    assert r.setrange("k", 1, "9") == 5
    assert r.get("k") == b"19345"
    assert r.ttl("k") == 100


def test_setrange_errors(r):
    r.set("k", "abc")
    assert error_of(r, "SETRANGE", "k", "-1", "x") == "offset is out of range"
    assert error_of(r, "SETRANGE", "k", "abc", "x") == NOT_INTEGER
    assert error_of(r, "SETRANGE", "k", "9223372036854775808", "x") == NOT_INTEGER
    message = "string exceeds maximum allowed size (proto-max-bulk-len)"
    assert error_of(r, "SETRANGE", "k", "9223372036854775807", "x") == message
    assert error_of(r, "SETRANGE", "k", "536870912", "x") == message
    assert error_of(r, "SETRANGE", "new", "536870912", "x") == message
    assert r.exists("new") == 0
    r.hset("h", "f", "v")
    assert error_of(r, "SETRANGE", "h", "0", "x") == WRONGTYPE
    assert error_of(r, "SETRANGE", "h", "-1", "x") == "offset is out of range"


def test_setrange_respects_configured_limit(r):
    r.config_set("proto-max-bulk-len", 1024 * 1024)
    message = "string exceeds maximum allowed size (proto-max-bulk-len)"
    assert error_of(r, "SETRANGE", "k", 1024 * 1024, "x") == message
    assert r.setrange("k", 1024 * 1024 - 1, "x") == 1024 * 1024


# ---------------------------------------------------------------------------------------------
# Encodings (OBJECT ENCODING), WATCH, dirty counter
# ---------------------------------------------------------------------------------------------


def encoding(r: redis.Redis, key: str) -> bytes:
    return run(r, "OBJECT", "ENCODING", key)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("12345", b"int"), ("-9223372036854775808", b"int"), ("9223372036854775807", b"int"),
        ("0", b"int"), ("-0", b"embstr"), ("01", b"embstr"), ("+1", b"embstr"),
        ("9223372036854775808", b"embstr"), ("12345678901234567890", b"embstr"),
        ("1.5", b"embstr"), ("", b"embstr"), ("a" * 44, b"embstr"), ("a" * 45, b"raw"),
        ("1" * 45, b"raw"),
    ],
)
def test_set_encoding(r, value, expected):
    r.set("k", value)
    assert encoding(r, "k") == expected


def test_encoding_transitions(r):
    assert r.append("k", "123") == 3
    assert encoding(r, "k") == b"int"  # a new key is stored like SET stores it
    r.append("k", "4")
    assert encoding(r, "k") == b"raw"
    assert r.incr("k") == 1235
    assert encoding(r, "k") == b"int"
    r.set("s", "a" * 10)
    r.append("s", "")
    assert encoding(r, "s") == b"raw"
    r.setrange("new", 0, "1")
    assert encoding(r, "new") == b"raw"
    r.set("e", "abc")
    r.setrange("e", 0, "x")
    assert encoding(r, "e") == b"raw"
    r.set("e", "abc")
    assert encoding(r, "e") == b"embstr"
    assert r.getset("g", "1") is None
    assert encoding(r, "g") == b"int"
    r.mset({"m": "77"})
    assert encoding(r, "m") == b"int"
    r.incrbyfloat("f", "1.5")
    assert encoding(r, "f") == b"embstr"


def test_copy_of_appended_value_is_independent(r):
    r.set("a", "x")
    r.append("a", "y")
    assert r.copy("a", "b") is True
    r.append("a", "z")
    r.setrange("b", 0, "Q")
    assert r.get("a") == b"xyz"
    assert r.get("b") == b"Qy"


@pytest.mark.parametrize(
    "command",
    [
        ("SET", "w", "x"), ("SET", "w", "x", "EX", "10"), ("SETEX", "w", "10", "x"),
        ("MSET", "w", "x"), ("INCR", "w"), ("DECRBY", "w", "2"), ("INCRBYFLOAT", "w", "1.5"),
        ("APPEND", "w", "x"), ("SETRANGE", "w", "0", "9"), ("GETSET", "w", "x"),
        ("GETDEL", "w"), ("GETEX", "w", "EX", "100"), ("GETEX", "w", "PERSIST"),
        ("SET", "w", "x", "KEEPTTL"),
    ],
)
def test_watch_is_invalidated_by_writes(server, command):
    watcher = server.client()
    other = server.client()
    other.set("w", "1", ex=50)
    with watcher.pipeline() as pipe:
        pipe.watch("w")
        run(other, *command)
        pipe.multi()
        pipe.get("w")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    watcher.close()
    other.close()


@pytest.mark.parametrize(
    "command",
    [("GET", "w"), ("SET", "w", "x", "NX"), ("SETNX", "w", "y"), ("GETEX", "w"),
     ("GETEX", "w", "PERSIST"), ("SETRANGE", "w", "0", ""), ("MSETNX", "w", "x", "z", "1")],
)
def test_watch_survives_non_writes(server, command):
    watcher = server.client()
    other = server.client()
    other.set("w", "1")
    with watcher.pipeline() as pipe:
        pipe.watch("w")
        run(other, *command)
        pipe.multi()
        pipe.get("w")
        assert pipe.execute() == [b"1"]
    watcher.close()
    other.close()


def _dirty(r: redis.Redis) -> int:
    return int(r.info("persistence")["rdb_changes_since_last_save"])


@pytest.mark.parametrize(
    "command, changes",
    [
        (("SET", "k", "v"), 1), (("SET", "k", "v", "NX"), 0), (("MSET", "a", "1", "b", "2"), 2),
        (("INCR", "n"), 1), (("APPEND", "k", "x"), 1), (("SETRANGE", "k", "0", ""), 0),
        (("GETDEL", "k"), 1), (("GETEX", "k"), 0), (("GETEX", "k", "PERSIST"), 0),
        (("GETEX", "k", "EX", "10"), 1), (("MSETNX", "k", "1", "z", "2"), 0),
        (("MSETNX", "y", "1", "z", "2"), 2), (("SETNX", "k", "1"), 0),
    ],
)
def test_dirty_counter(r, command, changes):
    r.set("k", "value")
    before = _dirty(r)
    run(r, *command)
    assert _dirty(r) - before == changes


def test_keyspace_hits_and_misses(r):
    r.set("k", "v")
    r.config_resetstat()
    r.get("k")
    r.get("nokey")
    r.mget("k", "nokey", "k")
    r.strlen("k")
    r.incr("counter")  # a write: neither a hit nor a miss
    stats = r.info("stats")
    assert (stats["keyspace_hits"], stats["keyspace_misses"]) == (4, 2)


def test_pipelined_sets_and_gets(raw):
    payload = b"".join(encode_request("SET", f"key:{i}", f"value:{i}") for i in range(100))
    payload += b"".join(encode_request("GET", f"key:{i}") for i in range(100))
    raw.send(payload)
    expected = b"+OK\r\n" * 100 + b"".join(
        b"$%d\r\n%s\r\n" % (len(f"value:{i}"), f"value:{i}".encode()) for i in range(100)
    )
    data = b""
    while len(data) < len(expected):
        chunk = raw.sock.recv(65536)
        assert chunk
        data += chunk
    assert data == expected


# ---------------------------------------------------------------------------------------------
# Writes over keys whose TTL has passed (lazy expiry)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def expired_key(r):
    """``k`` holds "old" with a TTL that has passed, not yet removed by active expiry."""
    run(r, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("k", "old", px=10)
    time.sleep(0.05)
    r.config_resetstat()
    return "k"


@pytest.mark.parametrize(
    "command, reply, value",
    [
        (("SET", "k", "new", "KEEPTTL"), b"OK", b"new"),
        (("SET", "k", "new", "XX"), None, None),
        (("SET", "k", "new", "NX"), b"OK", b"new"),
        (("SET", "k", "new", "GET"), None, b"new"),
        (("SETNX", "k", "new"), 1, b"new"),
        (("MSETNX", "k", "new"), 1, b"new"),
        (("INCR", "k"), 1, b"1"),
        (("INCRBY", "k", "5"), 5, b"5"),
        (("INCRBYFLOAT", "k", "1.5"), b"1.5", b"1.5"),
        (("APPEND", "k", "x"), 1, b"x"),
        (("SETRANGE", "k", "1", "x"), 2, b"\x00x"),
        (("GETSET", "k", "new"), None, b"new"),
        (("GETEX", "k", "PERSIST"), None, None),
        (("GETDEL", "k"), None, None),
        (("STRLEN", "k"), 0, None),
    ],
)
def test_writes_over_expired_key(r, expired_key, command, reply, value):
    assert run(r, *command) == reply
    assert r.get("k") == value
    assert r.ttl("k") == (-1 if value is not None else -2)
    assert r.info("stats")["expired_keys"] == 1


@pytest.mark.parametrize("command", [("SET", "k", "new"), ("MSET", "k", "new", "j", "1"),
                                     ("SETEX", "k", "100", "new"), ("SET", "k", "new", "EX", "100")])
def test_overwriting_expired_key_counts_as_expiry(r, expired_key, command):
    run(r, *command)
    assert r.get("k") == b"new"
    assert r.info("stats")["expired_keys"] == 1


def test_commands_inside_multi(r):
    with r.pipeline(transaction=True) as pipe:
        pipe.set("a", "1").incr("a").append("a", "0").get("a").mset({"b": "x", "c": "y"})
        pipe.mget("a", "b", "c").getrange("a", 0, 0).set("a", "z", get=True)
        assert pipe.execute() == [True, 2, 2, b"20", True, [b"20", b"x", b"y"], b"2", b"20"]
