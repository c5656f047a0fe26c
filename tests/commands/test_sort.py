"""SORT and SORT_RO over lists, sets and sorted sets, checked against real Redis (after
Redis's own tests/unit/sort.tcl): numeric and ALPHA order, BY and GET patterns (string keys,
hash fields, ``#``, constant patterns), LIMIT windows, STORE, and the errors."""

from __future__ import annotations

import pytest
import redis

from tests.conftest import WRONGTYPE, error_of, run


def _weights(r: redis.Redis) -> None:
    """A list 1..5 whose weights (and hash weights) reverse its order."""
    r.rpush("l", 3, 1, 5, 2, 4)
    for element in range(1, 6):
        r.set(f"w_{element}", 10 - element)
        r.hset(f"h_{element}", mapping={"weight": element * 3 % 7, "name": f"n{element}"})
        r.set(f"o_{element}", f"object{element}")


def test_numeric_sort_of_list_set_and_zset(r):
    r.rpush("l", 3, 10, -1, 2.5, 7)
    assert run(r, "SORT", "l") == [b"-1", b"2.5", b"3", b"7", b"10"]
    assert run(r, "SORT", "l", "DESC") == [b"10", b"7", b"3", b"2.5", b"-1"]
    r.sadd("s", 5, 3, 100, 1)
    assert run(r, "SORT", "s") == [b"1", b"3", b"5", b"100"]
    r.zadd("z", {"30": 1, "4": 2, "200": 3})
    assert run(r, "SORT", "z") == [b"4", b"30", b"200"]
    assert run(r, "SORT_RO", "z", "DESC") == [b"200", b"30", b"4"]


def test_alpha_sort_and_the_error_for_words(r):
    r.rpush("l", "banana", "apple", "cherry", "10", "9")
    assert error_of(r, "SORT", "l") == "One or more scores can't be converted into double"
    assert run(r, "SORT", "l", "ALPHA") == [b"10", b"9", b"apple", b"banana", b"cherry"]
    assert run(r, "SORT", "l", "ALPHA", "DESC", "LIMIT", 1, 2) == [b"banana", b"apple"]


@pytest.mark.min_redis(8, 0)  # 7.x read weights with strtod, which skips leading spaces
def test_weights_are_read_as_fast_float_does(r):
    r.rpush("l", "1", " 2")
    assert error_of(r, "SORT", "l") == "One or more scores can't be converted into double"
    r.delete("l")
    r.rpush("l", "0x10")
    assert error_of(r, "SORT", "l") == "One or more scores can't be converted into double"


def test_weights_that_are_not_numbers(r):
    r.rpush("l", "nan")
    assert error_of(r, "SORT", "l") == "One or more scores can't be converted into double"
    r.delete("l")
    r.rpush("l", "inf", "-inf", "1e3", "-2", ".5")
    assert run(r, "SORT", "l") == [b"-inf", b"-2", b".5", b"1e3", b"inf"]


def test_equal_scores_are_ordered_by_the_elements(r):
    r.rpush("l", "b", "a", "c")
    r.mset({"w_a": 1, "w_b": 1, "w_c": 1})
    assert run(r, "SORT", "l", "BY", "w_*") == [b"a", b"b", b"c"]
    assert run(r, "SORT", "l", "BY", "w_*", "DESC") == [b"c", b"b", b"a"]
    r.rpush("n", "1.0", "1", "01")
    assert run(r, "SORT", "n") == [b"01", b"1", b"1.0"]


def test_by_string_keys_and_hash_fields(r):
    _weights(r)
    assert run(r, "SORT", "l", "BY", "w_*") == [b"5", b"4", b"3", b"2", b"1"]
    assert run(r, "SORT", "l", "BY", "h_*->weight") == [b"5", b"3", b"1", b"4", b"2"]
    assert run(r, "SORT", "l", "BY", "h_*->weight", "LIMIT", 1, 3) == [b"3", b"1", b"4"]
    assert run(r, "SORT", "l", "BY", "w_*", "ALPHA") == [b"5", b"4", b"3", b"2", b"1"]


def test_missing_weights_count_as_zero_or_sort_first(r):
    r.rpush("l", 1, 2, 3)
    r.set("w_2", -5)
    r.set("w_3", 5)
    assert run(r, "SORT", "l", "BY", "w_*") == [b"2", b"1", b"3"]
    r.set("a_2", "b")
    r.set("a_3", "a")
    assert run(r, "SORT", "l", "BY", "a_*", "ALPHA") == [b"1", b"3", b"2"]
    assert run(r, "SORT", "l", "BY", "a_*", "ALPHA", "DESC") == [b"2", b"3", b"1"]


def test_get_patterns(r):
    _weights(r)
    assert run(r, "SORT", "l", "GET", "o_*") == [b"object1", b"object2", b"object3", b"object4",
                                                 b"object5"]
    assert run(r, "SORT", "l", "LIMIT", 0, 2, "GET", "#", "GET", "h_*->name",
               "GET", "missing_*", "GET", "h_*->nofield") == [
        b"1", b"n1", None, None, b"2", b"n2", None, None]
    # A pattern without '*' finds nothing; '->' with no field name reads a string key.
    r.set("o_1->", "arrow")
    assert run(r, "SORT", "l", "LIMIT", 0, 1, "GET", "constant", "GET", "o_*->") == [None, b"arrow"]
    # A hash read as a string, a string read as a hash: nothing.
    assert run(r, "SORT", "l", "LIMIT", 0, 1, "GET", "h_*", "GET", "o_*->x") == [None, None]


def test_constant_by_keeps_list_and_zset_order(r):
    r.rpush("l", 3, 1, 2)
    assert run(r, "SORT", "l", "BY", "nosort") == [b"3", b"1", b"2"]
    assert run(r, "SORT", "l", "BY", "nosort", "DESC") == [b"2", b"1", b"3"]
    assert run(r, "SORT", "l", "BY", "nosort", "LIMIT", 1, 1) == [b"1"]
    assert run(r, "SORT", "l", "BY", "nosort", "DESC", "LIMIT", 1, 5) == [b"1", b"3"]
    r.zadd("z", {"c": 1, "a": 2, "b": 3, "d": 4})
    assert run(r, "SORT", "z", "BY", "nosort") == [b"c", b"a", b"b", b"d"]
    assert run(r, "SORT", "z", "BY", "nosort", "DESC", "LIMIT", 1, 2) == [b"b", b"a"]
    assert run(r, "SORT", "z", "BY", "nosort", "LIMIT", 2, 10, "GET", "#") == [b"b", b"d"]


def test_constant_by_on_a_stored_set_sorts_alpha(r):
    r.sadd("s", "c", "a", "b", "10")
    assert run(r, "SORT", "s", "BY", "nosort", "STORE", "dst") == 4
    assert r.lrange("dst", 0, -1) == [b"10", b"a", b"b", b"c"]


def test_limit_windows(r):
    r.rpush("l", *range(10))
    assert run(r, "SORT", "l", "LIMIT", 2, 3) == [b"2", b"3", b"4"]
    assert run(r, "SORT", "l", "LIMIT", -5, 2) == [b"0", b"1"]
    assert run(r, "SORT", "l", "LIMIT", 8, -1) == [b"8", b"9"]
    assert run(r, "SORT", "l", "LIMIT", 10, 1) == []
    assert run(r, "SORT", "l", "LIMIT", 9, 0) == []
    assert run(r, "SORT", "l", "LIMIT", 0, 2**62) == [str(i).encode() for i in range(10)]
    assert run(r, "SORT", "l", "LIMIT", 2**62, 2) == []


def test_store_writes_a_list_and_counts_gets(r):
    _weights(r)
    r.set("dst", "old")
    r.expire("dst", 100)
    assert run(r, "SORT", "l", "STORE", "dst") == 5
    assert r.type("dst") == b"list"
    assert r.ttl("dst") == -1
    assert r.lrange("dst", 0, -1) == [b"1", b"2", b"3", b"4", b"5"]
    assert run(r, "SORT", "l", "LIMIT", 0, 2, "GET", "#", "GET", "missing_*", "STORE", "dst") == 4
    assert r.lrange("dst", 0, -1) == [b"1", b"", b"2", b""]


def test_store_of_nothing_deletes_the_destination(r):
    r.set("dst", "x")
    assert run(r, "SORT", "nokey", "STORE", "dst") == 0
    assert r.exists("dst") == 0
    r.rpush("l", 1)
    r.set("dst", "x")
    assert run(r, "SORT", "l", "LIMIT", 5, 5, "STORE", "dst") == 0
    assert r.exists("dst") == 0


def test_missing_key_and_wrong_type(r):
    assert run(r, "SORT", "nokey") == []
    assert run(r, "SORT_RO", "nokey", "GET", "#") == []
    r.set("str", "x")
    assert error_of(r, "SORT", "str") == WRONGTYPE
    r.hset("h", "f", "v")
    assert error_of(r, "SORT", "h") == WRONGTYPE


def test_syntax_errors_come_before_the_type_check(r):
    r.set("str", "x")
    assert error_of(r, "SORT", "str", "BOGUS") == "syntax error"
    assert error_of(r, "SORT", "str", "LIMIT", 1) == "syntax error"
    assert error_of(r, "SORT", "str", "LIMIT", "a", 1) == "value is not an integer or out of range"
    assert error_of(r, "SORT", "str", "GET") == "syntax error"
    assert error_of(r, "SORT_RO", "str", "STORE", "dst") == "syntax error"
    assert error_of(r, "SORT", "nokey", "BY") == "syntax error"


def test_sort_ro_is_read_only_and_sort_store_is_write(r):
    (info,) = run(r, "COMMAND", "INFO", "sort_ro")
    assert info[2] == [b"readonly", b"movablekeys"]
    assert run(r, "COMMAND", "GETKEYS", "SORT", "k", "LIMIT", 0, 1, "STORE", "dst") == [b"k", b"dst"]
    assert run(r, "COMMAND", "GETKEYS", "SORT", "k", "GET", "store", "BY", "store") == [b"k"]
    assert run(r, "COMMAND", "GETKEYS", "SORT", "store", "STORE", "a", "STORE", "b") == [
        b"store", b"b"]


def test_sortstore_keyspace_event(r):
    r.config_set("notify-keyspace-events", "KEl")
    try:
        pubsub = r.pubsub()
        pubsub.psubscribe("__key*__:*")
        pubsub.get_message(timeout=1)
        r.rpush("l", 2, 1)
        run(r, "SORT", "l", "STORE", "dst")
        messages = []
        while (message := pubsub.get_message(timeout=0.5)) is not None:
            messages.append((message["channel"], message["data"]))
        assert (b"__keyspace@0__:dst", b"sortstore") in messages
        assert (b"__keyevent@0__:sortstore", b"dst") in messages
        pubsub.close()
    finally:
        r.config_set("notify-keyspace-events", "")
