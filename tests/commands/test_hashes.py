"""Hash commands: parity with Redis for replies, error texts, encodings and RESP3 shapes."""

from __future__ import annotations

import pytest
import redis

from tests.conftest import NOT_INTEGER, WRONGTYPE, call, error_of, run


def encoding(r: redis.Redis, key: str) -> bytes:
    return run(r, "OBJECT", "ENCODING", key)  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# Setting and reading fields
# ---------------------------------------------------------------------------------------------


def test_hset_hget(r):
    assert r.hset("h", "f1", "v1") == 1
    assert r.hset("h", "f1", "v2") == 0
    assert run(r, "HSET", "h", "f2", "a", "f3", "b", "f2", "c") == 2
    assert r.hget("h", "f1") == b"v2"
    assert r.hget("h", "f2") == b"c"
    assert r.hget("h", "missing") is None
    assert r.hget("nokey", "f") is None
    assert r.hlen("h") == 3


def test_binary_safe_fields_and_values(r):
    field, value = b"f\x00\r\nx", b"v\x00\r\n\xff"
    r.hset("h", field, value)
    assert r.hget("h", field) == value
    assert r.hgetall("h") == {field: value}
    assert r.hstrlen("h", field) == len(value)
    assert r.hexists("h", field) is True
    assert r.hexists("h", b"f") is False


def test_hset_arity(r):
    message = "wrong number of arguments for 'hset' command"
    assert error_of(r, "HSET", "h") == message
    assert error_of(r, "HSET", "h", "f") == message
    assert error_of(r, "HSET", "h", "f", "v", "f2") == message
    assert error_of(r, "HMSET", "h", "f", "v", "f2") == "wrong number of arguments for 'hmset' command"
    assert error_of(r, "HSETNX", "h", "f") == "wrong number of arguments for 'hsetnx' command"
    assert r.exists("h") == 0


def test_hmset_hmget(r):
    assert run(r, "HMSET", "h", "a", "1", "b", "2") == b"OK"
    assert r.hmget("h", "a", "x", "b", "a") == [b"1", None, b"2", b"1"]
    assert r.hmget("nokey", "a", "b") == [None, None]


def test_hmget_raw_resp3(raw):
    call(raw, "HSET", "h", "a", "1")
    assert call(raw, "HMGET", "h", "a", "b") == b"*2\r\n$1\r\n1\r\n$-1\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "HMGET", "h", "a", "b") == b"*2\r\n$1\r\n1\r\n_\r\n"
    assert call(raw, "HGET", "h", "b") == b"_\r\n"


def test_hsetnx(r):
    assert r.hsetnx("h", "f", "v") == 1
    assert r.hsetnx("h", "f", "w") == 0
    assert r.hget("h", "f") == b"v"
    assert r.hsetnx("h", "g", "w") == 1
    assert r.hlen("h") == 2


def test_hgetall_hkeys_hvals_order(r):
    r.hset("h", mapping={"c": "3", "a": "1", "b": "2"})
    assert run(r, "HGETALL", "h") == [b"c", b"3", b"a", b"1", b"b", b"2"]
    assert r.hkeys("h") == [b"c", b"a", b"b"]
    assert r.hvals("h") == [b"3", b"1", b"2"]
    assert run(r, "HGETALL", "nokey") == []
    assert r.hkeys("nokey") == []
    assert r.hvals("nokey") == []


def test_hgetall_raw_resp2_and_resp3(raw):
    call(raw, "HSET", "h", "f", "v", "g", "w")
    assert call(raw, "HGETALL", "h") == b"*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n$1\r\nw\r\n"
    assert call(raw, "HGETALL", "nokey") == b"*0\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "HGETALL", "h") == b"%2\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n$1\r\nw\r\n"
    assert call(raw, "HGETALL", "nokey") == b"%0\r\n"
    assert call(raw, "HKEYS", "nokey") == b"*0\r\n"
    assert call(raw, "HKEYS", "h") == b"*2\r\n$1\r\nf\r\n$1\r\ng\r\n"


def test_hgetall_resp3_client(r3):
    r3.hset("h", mapping={"f": "v", "g": "w"})
    assert r3.hgetall("h") == {b"f": b"v", b"g": b"w"}


def test_hstrlen_hexists_hlen(r):
    r.hset("h", mapping={"f": "hello", "n": "12345", "e": ""})
    assert r.hstrlen("h", "f") == 5
    assert r.hstrlen("h", "n") == 5
    assert r.hstrlen("h", "e") == 0
    assert r.hstrlen("h", "missing") == 0
    assert r.hstrlen("nokey", "f") == 0
    assert r.hexists("h", "e") is True
    assert r.hexists("nokey", "f") is False
    assert r.hlen("nokey") == 0


def test_default_listpack_limits(r):
    # redis-server without a configuration file: 512 entries, 64-byte values.
    assert r.config_get("hash-max-listpack-*") == {
        "hash-max-listpack-entries": "512", "hash-max-listpack-value": "64",
    }


def test_type_of_hash(r):
    r.hset("h", "f", "v")
    assert r.type("h") == b"hash"


# ---------------------------------------------------------------------------------------------
# Deleting
# ---------------------------------------------------------------------------------------------


def test_hdel(r):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert r.hdel("h", "a", "x", "a") == 1
    assert r.hkeys("h") == [b"b", b"c"]
    assert r.hdel("h", "zz") == 0
    assert r.hdel("nokey", "a") == 0


def test_emptied_hash_is_deleted(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.expire("h", 100)
    assert r.hdel("h", "a", "b", "c") == 2
    assert r.exists("h") == 0
    assert r.hset("h", "x", "1") == 1
    assert r.ttl("h") == -1


# ---------------------------------------------------------------------------------------------
# Counters
# ---------------------------------------------------------------------------------------------


def test_hincrby(r):
    assert r.hincrby("h", "n", 5) == 5
    assert r.hincrby("h", "n", -7) == -2
    assert r.hget("h", "n") == b"-2"
    assert r.hincrby("h", "z", 0) == 0
    r.hset("h", "big", "9223372036854775807")
    assert error_of(r, "HINCRBY", "h", "big", "1") == "increment or decrement would overflow"
    r.hset("h", "small", "-9223372036854775808")
    assert error_of(r, "HINCRBY", "h", "small", "-1") == "increment or decrement would overflow"
    assert r.hincrby("h", "small", 9223372036854775807) == -1


@pytest.mark.parametrize("value", ["abc", "", " 1", "+1", "01", "1.5", "-0", "9223372036854775808"])
def test_hincrby_value_not_integer(r, value):
    r.hset("h", "f", value)
    assert error_of(r, "HINCRBY", "h", "f", "1") == "hash value is not an integer"
    assert r.hget("h", "f") == value.encode()


@pytest.mark.parametrize("increment", ["abc", "1.5", "", "9223372036854775808", "+1"])
def test_hincrby_bad_increment(r, increment):
    assert error_of(r, "HINCRBY", "h", "f", increment) == NOT_INTEGER
    assert r.exists("h") == 0


@pytest.mark.parametrize(
    "initial, increment, expected",
    [
        (None, "1.5", "1.5"), ("10.5", "0.1", "10.6"), ("5", "1.5", "6.5"), (None, "3.0e3", "3000"),
        ("10.6", "3.0e3", "3010.60000000000000009"), ("1", "-1", "0"), (None, "0x10", "16"),
        ("0.1", "0.2", "0.3"), (None, "-0.0", "0"),
    ],
)
def test_hincrbyfloat(r, initial, increment, expected):
    if initial is not None:
        r.hset("h", "f", initial)
    assert run(r, "HINCRBYFLOAT", "h", "f", increment) == expected.encode()
    assert r.hget("h", "f") == expected.encode()


def test_hincrbyfloat_errors(r):
    assert error_of(r, "HINCRBYFLOAT", "h", "f", "inf") == "value is NaN or Infinity"
    assert error_of(r, "HINCRBYFLOAT", "h", "f", "-infinity") == "value is NaN or Infinity"
    assert error_of(r, "HINCRBYFLOAT", "h", "f", "nan") == "value is not a valid float"
    assert error_of(r, "HINCRBYFLOAT", "h", "f", "abc") == "value is not a valid float"
    assert error_of(r, "HINCRBYFLOAT", "h", "f", "1 ") == "value is not a valid float"
    assert r.exists("h") == 0
    r.hset("h", mapping={"s": "abc", "huge": "1e4932"})
    assert error_of(r, "HINCRBYFLOAT", "h", "s", "1") == "hash value is not a float"
    message = "increment would produce NaN or Infinity"
    assert error_of(r, "HINCRBYFLOAT", "h", "huge", "1e4932") == message
    r.hset("h", "i", "inf")
    assert error_of(r, "HINCRBYFLOAT", "h", "i", "1") == message


def test_counters_after_float(r):
    r.hincrbyfloat("h", "f", 1.5)
    assert error_of(r, "HINCRBY", "h", "f", "1") == "hash value is not an integer"


def test_wrong_type(r):
    r.set("s", "v")
    for command in (
        ("HSET", "s", "f", "v"), ("HSETNX", "s", "f", "v"), ("HGET", "s", "f"), ("HMGET", "s", "f"),
        ("HMSET", "s", "f", "v"), ("HGETALL", "s"), ("HDEL", "s", "f"), ("HLEN", "s"),
        ("HEXISTS", "s", "f"), ("HKEYS", "s"), ("HVALS", "s"), ("HINCRBY", "s", "f", "1"),
        ("HINCRBYFLOAT", "s", "f", "1"), ("HSTRLEN", "s", "f"), ("HRANDFIELD", "s"),
        ("HRANDFIELD", "s", "0"), ("HRANDFIELD", "s", "-3", "WITHVALUES"),
    ):
        assert error_of(r, *command) == WRONGTYPE
    assert r.get("s") == b"v"


def test_argument_errors_come_before_type_errors(r):
    r.set("s", "v")
    assert error_of(r, "HINCRBY", "s", "f", "x") == NOT_INTEGER
    assert error_of(r, "HINCRBYFLOAT", "s", "f", "x") == "value is not a valid float"
    assert error_of(r, "HINCRBYFLOAT", "s", "f", "inf") == "value is NaN or Infinity"
    assert error_of(r, "HRANDFIELD", "s", "x") == NOT_INTEGER
    assert error_of(r, "HRANDFIELD", "s", "1", "BAD") == "syntax error"


# ---------------------------------------------------------------------------------------------
# HRANDFIELD
# ---------------------------------------------------------------------------------------------


def test_hrandfield_single(r):
    assert r.hrandfield("nokey") is None
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    for _ in range(20):
        assert r.hrandfield("h") in (b"a", b"b", b"c")


def test_hrandfield_positive_count_is_distinct(r):
    fields = {f"f{i}".encode(): str(i).encode() for i in range(20)}
    r.hset("h", mapping=fields)
    for count in (1, 5, 19):
        picked = r.hrandfield("h", count)
        assert len(picked) == count == len(set(picked))
        assert set(picked) <= set(fields)
    assert sorted(r.hrandfield("h", 20)) == sorted(fields)
    assert sorted(r.hrandfield("h", 1000)) == sorted(fields)


def test_hrandfield_large_hash(r):
    fields = {f"field:{i}".encode(): str(i).encode() for i in range(300)}
    r.hset("h", mapping=fields)
    for _ in range(20):
        assert r.hrandfield("h") in fields
    for count in (1, 10, 99, 100, 150, 299):
        picked = r.hrandfield("h", count)
        assert len(picked) == count == len(set(picked))
        assert set(picked) <= set(fields)
    repeated = r.hrandfield("h", -1000)
    assert len(repeated) == 1000
    assert set(repeated) <= set(fields)
    assert len(set(repeated)) > 100
    pairs = run(r, "HRANDFIELD", "h", "-20", "WITHVALUES")
    for field, value in zip(pairs[::2], pairs[1::2], strict=True):
        assert fields[field] == value
    # The picks follow changes to the hash.
    r.hdel("h", *[f"field:{i}" for i in range(150)])
    remaining = {f"field:{i}".encode() for i in range(150, 300)}
    assert set(r.hrandfield("h", -500)) <= remaining
    assert set(r.hrandfield("h", 40)) <= remaining
    r.hset("h", "extra", "x")
    assert set(r.hrandfield("h", -500)) <= remaining | {b"extra"}
    assert b"extra" in r.hrandfield("h", 151)
    r.hdel("h", "extra", *[f"field:{i}" for i in range(150, 299)])
    assert set(r.hrandfield("h", -10)) == {b"field:299"}
    r.hset("h", "new", "1")
    assert sorted(r.hrandfield("h", 5)) == [b"field:299", b"new"]
    assert set(r.hrandfield("h", -50)) == {b"field:299", b"new"}


def test_hrandfield_whole_small_hash_in_order(r):
    r.hset("h", mapping={"c": "3", "a": "1", "b": "2"})
    assert r.hrandfield("h", 3) == [b"c", b"a", b"b"]
    assert run(r, "HRANDFIELD", "h", "10", "WITHVALUES") == [b"c", b"3", b"a", b"1", b"b", b"2"]


def test_hrandfield_negative_count_repeats(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    picked = r.hrandfield("h", -50)
    assert len(picked) == 50
    assert set(picked) == {b"a", b"b"}
    pairs = run(r, "HRANDFIELD", "h", "-7", "withvalues")
    assert len(pairs) == 14
    for field, value in zip(pairs[::2], pairs[1::2], strict=True):
        assert {b"a": b"1", b"b": b"2"}[field] == value


def test_hrandfield_empty_replies(raw):
    assert call(raw, "HRANDFIELD", "nokey") == b"$-1\r\n"
    assert call(raw, "HRANDFIELD", "nokey", "5") == b"*0\r\n"
    call(raw, "HSET", "h", "f", "v")
    assert call(raw, "HRANDFIELD", "h", "0") == b"*0\r\n"
    assert call(raw, "HRANDFIELD", "h", "0", "WITHVALUES") == b"*0\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "HRANDFIELD", "nokey") == b"_\r\n"
    assert call(raw, "HRANDFIELD", "nokey", "5") == b"*0\r\n"


def test_hrandfield_reply_shapes(raw):
    call(raw, "HSET", "h", "f", "v")
    assert call(raw, "HRANDFIELD", "h") == b"$1\r\nf\r\n"
    assert call(raw, "HRANDFIELD", "h", "1") == b"*1\r\n$1\r\nf\r\n"
    assert call(raw, "HRANDFIELD", "h", "-2") == b"*2\r\n$1\r\nf\r\n$1\r\nf\r\n"
    assert call(raw, "HRANDFIELD", "h", "1", "WITHVALUES") == b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert call(raw, "HRANDFIELD", "h", "-2", "WITHVALUES") == b"*4\r\n" + b"$1\r\nf\r\n$1\r\nv\r\n" * 2
    call(raw, "HELLO", "3")
    assert call(raw, "HRANDFIELD", "h", "1") == b"*1\r\n$1\r\nf\r\n"
    assert call(raw, "HRANDFIELD", "h", "1", "WITHVALUES") == b"*1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert call(raw, "HRANDFIELD", "h", "-2", "WITHVALUES") == (
        b"*2\r\n" + b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n" * 2
    )
    assert call(raw, "HRANDFIELD", "h", "5", "WITHVALUES") == b"*1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


def test_hrandfield_resp3_client(r3):
    r3.hset("h", mapping={"a": "1"})
    assert r3.hrandfield("h", 1, withvalues=True) == [[b"a", b"1"]]


def test_hrandfield_errors(r):
    r.hset("h", "f", "v")
    assert error_of(r, "HRANDFIELD", "h", "abc") == NOT_INTEGER
    assert error_of(r, "HRANDFIELD", "h", "1.5") == NOT_INTEGER
    assert error_of(r, "HRANDFIELD", "h", "-9223372036854775808") == (
        "value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    )
    assert error_of(r, "HRANDFIELD", "h", "1", "WITHSCORES") == "syntax error"
    assert error_of(r, "HRANDFIELD", "h", "1", "WITHVALUES", "x") == "syntax error"
    assert error_of(r, "HRANDFIELD", "h", "4611686018427387904", "WITHVALUES") == "value is out of range"
    assert error_of(r, "HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES") == "value is out of range"
    assert error_of(r, "HRANDFIELD", "nokey", "-4611686018427387904", "WITHVALUES") == (
        "value is out of range"
    )
    assert run(r, "HRANDFIELD", "h", "4611686018427387903", "withvalues") == [b"f", b"v"]


# ---------------------------------------------------------------------------------------------
# Encodings
# ---------------------------------------------------------------------------------------------


def test_small_hash_is_listpack(r):
    r.config_set("hash-max-listpack-entries", 128)
    r.hset("h", mapping={f"f{i}": "v" for i in range(128)})
    assert encoding(r, "h") == b"listpack"
    r.hset("h", "f128", "v")
    assert encoding(r, "h") == b"hashtable"


def test_conversion_on_entries_and_never_back(r):
    r.config_set("hash-max-listpack-entries", 2)
    r.hset("h", mapping={"x": "1", "y": "2"})
    assert encoding(r, "h") == b"listpack"
    r.hset("h", "z", "3")
    assert encoding(r, "h") == b"hashtable"
    r.hdel("h", "z", "y")
    assert encoding(r, "h") == b"hashtable"
    r.hset("h", "x", "again")
    assert encoding(r, "h") == b"hashtable"


def test_conversion_on_long_values(r):
    r.config_set("hash-max-listpack-value", 3)
    r.hset("ok", "f", "123")
    assert encoding(r, "ok") == b"listpack"
    r.hset("value", "f", "1234")
    assert encoding(r, "value") == b"hashtable"
    r.hset("field", "long", "1")
    assert encoding(r, "field") == b"hashtable"
    r.hset("number", "f", "1234567890")
    assert encoding(r, "number") == b"hashtable"
    r.hset("update", "f", "1")
    r.hset("update", "f", "12345")
    assert encoding(r, "update") == b"hashtable"


def test_conversion_by_counters_and_hsetnx(r):
    long_field = "x" * 80
    r.hincrby("c", long_field, 1)
    assert encoding(r, "c") == b"hashtable"
    r.hincrbyfloat("d", long_field, 1)
    assert encoding(r, "d") == b"hashtable"
    r.hset("e", "f", "1")
    assert r.hsetnx("e", "f", long_field) == 0
    assert encoding(r, "e") == b"listpack"
    assert r.hsetnx("e", "g", long_field) == 1
    assert encoding(r, "e") == b"hashtable"


def test_zero_entries_limit(r):
    r.config_set("hash-max-listpack-entries", 0)
    r.hset("z", "a", "1")
    assert encoding(r, "z") == b"hashtable"
    r.hincrby("y", "a", 1)
    assert encoding(r, "y") == b"hashtable"


def test_repeated_fields_within_the_limit(r):
    r.config_set("hash-max-listpack-entries", 2)
    assert r.hset("a", mapping={"x": "1"}) == 1
    assert run(r, "HSET", "a", "x", "1", "x", "2") == 0
    assert encoding(r, "a") == b"listpack"


@pytest.mark.min_redis(7, 2)
def test_many_pairs_convert_before_insertion(r):
    # Redis 7.2+ pre-sizes the hash table when one HSET brings more pairs than a listpack holds,
    # even when some of them repeat a field.
    r.config_set("hash-max-listpack-entries", 2)
    assert run(r, "HSET", "a", "x", "1", "x", "2", "x", "3") == 1
    assert r.hlen("a") == 1
    assert encoding(r, "a") == b"hashtable"


def test_copy_keeps_encoding_and_is_independent(r):
    r.config_set("hash-max-listpack-entries", 1)
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.config_set("hash-max-listpack-entries", 128)
    assert r.copy("h", "c") is True
    assert encoding(r, "c") == b"hashtable"
    r.hset("c", "a", "changed")
    assert r.hget("h", "a") == b"1"


# ---------------------------------------------------------------------------------------------
# WATCH, dirty counter, keyspace statistics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [("HSET", "w", "f", "x"), ("HSET", "w", "f", "1"), ("HMSET", "w", "g", "x"),
     ("HSETNX", "w", "g", "x"), ("HDEL", "w", "f"), ("HINCRBY", "w", "f", "1"),
     ("HINCRBYFLOAT", "w", "f", "1"), ("HSET", "w", "f", "1", "g", "2")],
)
def test_watch_is_invalidated_by_writes(server, command):
    watcher, other = server.client(), server.client()
    other.hset("w", "f", "1")
    with watcher.pipeline() as pipe:
        pipe.watch("w")
        run(other, *command)
        pipe.multi()
        pipe.hgetall("w")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    watcher.close()
    other.close()


@pytest.mark.parametrize(
    "command",
    [("HGET", "w", "f"), ("HSETNX", "w", "f", "x"), ("HDEL", "w", "nofield"), ("HGETALL", "w"),
     ("HRANDFIELD", "w", "2"), ("HLEN", "w"), ("HSET", "other", "f", "1")],
)
def test_watch_survives_non_writes(server, command):
    watcher, other = server.client(), server.client()
    other.hset("w", "f", "1")
    with watcher.pipeline() as pipe:
        pipe.watch("w")
        run(other, *command)
        pipe.multi()
        pipe.hget("w", "f")
        assert pipe.execute() == [b"1"]
    watcher.close()
    other.close()


@pytest.mark.parametrize(
    "command, changes",
    [
        (("HSET", "h", "a", "1", "b", "2"), 2), (("HSET", "h", "f", "v"), 1),
        (("HMSET", "h", "f", "v", "f", "w"), 2), (("HSETNX", "h", "f", "v"), 0),
        (("HSETNX", "h", "n", "v"), 1), (("HDEL", "h", "f", "g", "zz"), 2),
        (("HDEL", "h", "zz"), 0), (("HINCRBY", "h", "n", "1"), 1),
        (("HINCRBYFLOAT", "h", "n", "1"), 1),
    ],
)
def test_dirty_counter(r, command, changes):
    r.hset("h", mapping={"f": "1", "g": "2", "k": "3"})
    before = int(r.info("persistence")["rdb_changes_since_last_save"])
    run(r, *command)
    assert int(r.info("persistence")["rdb_changes_since_last_save"]) - before == changes


def test_keyspace_hits_and_misses(r):
    r.hset("h", "f", "v")
    r.config_resetstat()
    r.hget("h", "f")
    r.hget("h", "nofield")  # the key exists: a hit
    r.hget("nokey", "f")
    r.hgetall("h")
    r.hlen("nokey")
    r.hset("h", "g", "w")  # a write: neither
    r.hincrby("h", "n", 1)
    stats = r.info("stats")
    assert (stats["keyspace_hits"], stats["keyspace_misses"]) == (3, 2)
