"""Stream commands without consumer groups: parity with Redis for replies, error texts, IDs at
the 64-bit limits, trimming by whole macro nodes, XINFO STREAM and RESP3 shapes.

Expected values come from the real ``redis-server`` (7.0.15 here) wherever it has the feature.
Behaviour added later is marked ``min_redis`` and its expected replies come from the Redis test
suite (``tests/unit/type/stream.tcl``), ``t_stream.c`` string tables and the redis/docs pages;
each such value carries a comment naming its source. Where Redis changed a reply after 7.0,
``since()`` picks the text of the version under test (Brook reports version 99, the newest).
"""

from __future__ import annotations

import contextlib
import random
import re
import time
from collections.abc import Callable

import pytest
import redis

from tests.conftest import (
    NOT_INTEGER,
    WRONGTYPE,
    ServerProcess,
    call,
    error_of,
    help_footer,
    run,
    since,
)
from tests.support.streams import INVALID_ID, MAX, MAX_ID

XADD_SMALLER = "The ID specified in XADD is equal or smaller than the target stream top item"
XADD_ZERO = "The ID specified in XADD must be greater than 0-0"
EXHAUSTED = "The stream has exhausted the last possible ID, unable to add more items"
LIMIT_NO_TILDE = "syntax error, LIMIT cannot be used without the special ~ option"
LIMIT_NO_STRATEGY = "syntax error, LIMIT cannot be used without specifying a trimming strategy"
BOTH_STRATEGIES = "syntax error, MAXLEN and MINID options at the same time are not compatible"
MAXLEN_NEGATIVE = "The MAXLEN argument must be >= 0."
LIMIT_NEGATIVE = "The LIMIT argument must be >= 0."
XSETID_SMALLER = "The ID specified in XSETID is smaller than the target stream top item"
XSETID_MAXDEL = "The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
XINFO_STREAM_SYNTAX = "unknown subcommand or wrong number of arguments for '{}'. Try XINFO HELP."

# XINFO STREAM fields, in Redis's order; 8.6 inserts the IDMP ones before "groups" (docs
# xinfo-stream.md example reply; stream.tcl reads them from FULL replies too).
INFO_HEAD = [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
             b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id"]
IDMP_FIELDS = [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
               b"iids-added", b"iids-duplicates"]




def info_fields(server: ServerProcess, full: bool = False) -> list[bytes]:
    """The XINFO STREAM field names, in order, for the server under test."""
    head = INFO_HEAD + (IDMP_FIELDS if server.version >= (8, 6) else [])
    return head + ([b"entries", b"groups"] if full else [b"groups", b"first-entry", b"last-entry"])


def xinfo(r: redis.Redis, key: str, *extra: str) -> dict[bytes, object]:
    """XINFO STREAM as a dict (RESP2 flat list of name/value pairs, order kept)."""
    reply = run(r, "XINFO", "STREAM", key, *extra)
    assert isinstance(reply, list)
    return dict(zip(reply[::2], reply[1::2], strict=True))


def ids(reply: object) -> list[bytes]:
    """The entry IDs of an XRANGE-shaped reply."""
    assert isinstance(reply, list)
    return [entry[0] for entry in reply]


def whole(r: redis.Redis, key: str) -> list[object]:
    """The whole stream as XRANGE returns it (for replies that embed it)."""
    reply = run(r, "XRANGE", key, "-", "+")
    assert isinstance(reply, list)
    return reply


def id_tuple(entry_id: bytes) -> tuple[int, int]:
    ms, seq = entry_id.split(b"-")
    return int(ms), int(seq)


def add_many(r: redis.Redis, key: str, count: int, start: int = 1) -> None:
    """Entries ``start-0`` ... with one field, in one pipeline round trip."""
    with r.pipeline(transaction=False) as pipe:
        for i in range(start, start + count):
            pipe.execute_command("XADD", key, f"{i}-0", "f", str(i))
        pipe.execute()




@pytest.fixture
def nodes_of_10(set_config: Callable[[str, object], None]) -> None:
    """Macro nodes of exactly 10 entries, so approximate trimming is predictable."""
    set_config("stream-node-max-entries", 10)


# ---------------------------------------------------------------------------------------------
# XADD: IDs
# ---------------------------------------------------------------------------------------------


def test_xadd_explicit_and_incomplete_ids(r):
    assert run(r, "XADD", "s", "1-1", "a", "1") == b"1-1"
    assert run(r, "XADD", "s", "5", "b", "2") == b"5-0"  # an incomplete ID means seq 0
    assert run(r, "XADD", "s", "5-18", "c", "3") == b"5-18"
    assert run(r, "XRANGE", "s", "-", "+") == [
        [b"1-1", [b"a", b"1"]], [b"5-0", [b"b", b"2"]], [b"5-18", [b"c", b"3"]]]


def test_xadd_raw_replies(raw):
    assert call(raw, "XADD", "s", "1-1", "a", "1") == b"$3\r\n1-1\r\n"
    assert call(raw, "XADD", "nokey", "NOMKSTREAM", "*", "a", "1") == b"$-1\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "XADD", "s", "2-1", "a", "1") == b"$3\r\n2-1\r\n"
    assert call(raw, "XADD", "nokey", "NOMKSTREAM", "*", "a", "1") == b"_\r\n"


def test_xadd_auto_ids_increase(r):
    first = run(r, "XADD", "s", "*", "f", "v")
    assert isinstance(first, bytes) and re.fullmatch(rb"\d+-\d+", first)
    with r.pipeline(transaction=True) as pipe:
        for _ in range(3):
            pipe.execute_command("XADD", "s", "*", "f", "v")
        added = pipe.execute()
    sequence = [id_tuple(first)] + [id_tuple(x) for x in added]
    assert sequence == sorted(set(sequence))
    assert xinfo(r, "s")[b"last-generated-id"] == added[-1]


def test_xadd_auto_id_after_a_future_id(r):
    # The clock is behind the last ID: "*" keeps its ms and increments the sequence.
    assert run(r, "XADD", "s", "99999999999999-5", "f", "v") == b"99999999999999-5"
    assert run(r, "XADD", "s", "*", "f", "v") == b"99999999999999-6"
    assert run(r, "XADD", "s", "99999999999999-*", "f", "v") == b"99999999999999-7"
    # A maximal sequence moves "*" on to the next millisecond (stream.tcl "XADD streamID edge").
    assert run(r, "XADD", "t", f"2577343934890-{MAX}", "f", "v") == f"2577343934890-{MAX}".encode()
    assert run(r, "XADD", "t", "*", "f2", "v2") == b"2577343934891-0"


def test_xadd_ms_star(r):
    assert run(r, "XADD", "n", "0-*", "f", "v") == b"0-1"  # 0-0 is never a valid entry ID
    assert run(r, "XADD", "s", "123-456", "f", "v") == b"123-456"
    assert run(r, "XADD", "s", "123-*", "f", "v") == b"123-457"
    assert run(r, "XADD", "s", "789-*", "f", "v") == b"789-0"
    assert error_of(r, "XADD", "s", "42-*", "f", "v") == XADD_SMALLER
    assert error_of(r, "XADD", "s", "0-*", "f", "v") == XADD_SMALLER
    assert r.xlen("s") == 3


def test_xadd_ms_star_with_exhausted_sequence(r, server):
    run(r, "XADD", "s", f"1-{MAX}", "f1", "v1")
    # Redis 7.0 answered with a misleading "Elements are too large"; newer Redis with the
    # equal-or-smaller error (stream.tcl "XADD with artial ID with maximal seq").
    expected = since(server, (7, 2), XADD_SMALLER, "Elements are too large to be stored")
    assert error_of(r, "XADD", "s", "1-*", "f2", "v2") == expected
    assert run(r, "XADD", "s", "2-*", "f3", "v3") == b"2-0"


def test_xadd_ids_at_the_64_bit_limit(r):
    assert run(r, "XADD", "m", MAX_ID, "f", "v") == MAX_ID.encode()
    assert error_of(r, "XADD", "m", "*", "f", "v") == EXHAUSTED
    assert error_of(r, "XADD", "m", f"{MAX}-*", "f", "v") == EXHAUSTED
    assert error_of(r, "XADD", "m", MAX_ID, "f", "v") == EXHAUSTED  # checked before the ID
    assert error_of(r, "XADD", "m", "1-1", "f", "v") == EXHAUSTED
    assert r.xlen("m") == 1
    assert run(r, "XADD", "n", f"{MAX}-{MAX - 1}", "f", "v") == f"{MAX}-{MAX - 1}".encode()
    assert run(r, "XADD", "n", f"{MAX}-*", "f", "v") == MAX_ID.encode()
    assert error_of(r, "XADD", "n", f"{MAX}-*", "f", "v") == EXHAUSTED


def test_xadd_equal_or_smaller_id(r):
    run(r, "XADD", "s", "5-5", "f", "v")
    for entry_id in ("5-5", "5-4", "5", "4-9", "1"):
        assert error_of(r, "XADD", "s", entry_id, "f", "v") == XADD_SMALLER
    assert run(r, "XRANGE", "s", "-", "+") == [[b"5-5", [b"f", b"v"]]]
    assert xinfo(r, "s")[b"entries-added"] == 1


def test_xadd_zero_id(r):
    for entry_id in ("0-0", "0", "00"):
        assert error_of(r, "XADD", "s", entry_id, "f", "v") == XADD_ZERO
    assert r.exists("s") == 0
    run(r, "XADD", "s", "1", "f", "v")
    assert error_of(r, "XADD", "s", "0-0", "f", "v") == XADD_ZERO
    assert error_of(r, "XADD", "nokey", "NOMKSTREAM", "0-0", "f", "v") == XADD_ZERO


@pytest.mark.parametrize("entry_id", [
    "abc", "1-x", "-1", "+", "-", "$", ">", "6-", "-6", "0x7", "1.5", "1e3", "9-1-1", "*-1", "*-*",
    "*x", "**", "(5", "15 ", "16\t", "14-\x00", "-0", "", " ", "18446744073709551616",
    "8-18446744073709551616", "99999999999999999999", "0" * 126 + "12",
])
def test_xadd_invalid_ids(r, entry_id):
    assert error_of(r, "XADD", "s", entry_id, "f", "v") == INVALID_ID
    assert r.exists("s") == 0


def test_xadd_lenient_id_forms(r):
    # Redis parses each part with strtoull after a strict attempt: leading blanks and a "+"
    # sign pass, leading zeros are fine up to 127 characters, and a NUL ends the argument.
    for entry_id, expected in [
        (" 6", b"6-0"), ("+7", b"7-0"), ("8- 1", b"8-1"), ("9-+1", b"9-1"),
        ("0000000000000000000000000000010", b"10-0"), ("0" * 125 + "11", b"11-0"),
        ("13\x00junk", b"13-0"), ("\t17", b"17-0"), ("18-*\x00x", b"18-0"),
    ]:
        assert run(r, "XADD", "s", entry_id, "f", "v") == expected, entry_id
    assert r.xlen("s") == 9


def test_xadd_arity(r):
    message = "wrong number of arguments for 'xadd' command"
    for args in (["s"], ["s", "*"], ["s", "*", "f"], ["s", "*", "f", "v", "g"], ["s", "MAXLEN"],
                 ["s", "MAXLEN", "1"], ["s", "NOMKSTREAM"], ["s", "1-1", "f", "v", "g", "w", "h"]):
        assert error_of(r, "XADD", *args) == message, args
    assert r.exists("s") == 0


def test_xadd_wrong_type(r):
    r.set("str", "x")
    assert error_of(r, "XADD", "str", "*", "f", "v") == WRONGTYPE
    assert error_of(r, "XADD", "str", "NOMKSTREAM", "*", "f", "v") == WRONGTYPE
    assert error_of(r, "XADD", "str", "MAXLEN", "1", "5-5", "f", "v") == WRONGTYPE
    # Argument errors are found before the key is looked at.
    assert error_of(r, "XADD", "str", "bad", "f", "v") == INVALID_ID
    assert error_of(r, "XADD", "str", "0-0", "f", "v") == XADD_ZERO
    assert error_of(r, "XADD", "str", "MAXLEN", "-1", "*", "f", "v") == MAXLEN_NEGATIVE
    assert r.get("str") == b"x"


def test_xadd_nomkstream(r):
    assert run(r, "XADD", "nokey", "NOMKSTREAM", "*", "f", "v") is None
    assert run(r, "XADD", "nokey", "NOMKSTREAM", "1-1", "f", "v") is None
    assert run(r, "XADD", "nokey", "NOMKSTREAM", "MAXLEN", "0", "1-1", "f", "v") is None
    assert r.exists("nokey") == 0
    assert run(r, "XADD", "s", "1", "item", "1") == b"1-0"
    assert run(r, "XADD", "s", "NOMKSTREAM", "2", "item", "2") == b"2-0"
    assert run(r, "XADD", "s", "NOMKSTREAM", "NOMKSTREAM", "3", "item", "3") == b"3-0"
    assert run(r, "XADD", "s", "nomkstream", "MAXLEN", "1", "4", "item", "4") == b"4-0"
    assert run(r, "XRANGE", "s", "-", "+") == [[b"4-0", [b"item", b"4"]]]


def test_xadd_binary_and_empty_fields(r):
    field, value = b"f\x00\r\nx", b"v\x00\r\n\xff"
    assert run(r, "XADD", "s", "1-1", field, value) == b"1-1"
    assert run(r, "XADD", "s", "2-0", "", "") == b"2-0"
    assert run(r, "XADD", "s", "3-0", "", "x", "y", "") == b"3-0"
    assert run(r, "XRANGE", "s", "-", "+") == [
        [b"1-1", [field, value]], [b"2-0", [b"", b""]], [b"3-0", [b"", b"x", b"y", b""]]]
    assert run(r, "XADD", b"key\x00\xff", "1", "f", "v") == b"1-0"
    assert r.xlen(b"key\x00\xff") == 1


def test_xadd_large_value(r):
    big = bytes(range(256)) * 4096  # 1 MiB, every byte value
    assert run(r, "XADD", "s", "1-1", "big", big, "small", "x") == b"1-1"
    assert run(r, "XADD", "s", "2-1", "small", "y") == b"2-1"
    assert run(r, "XRANGE", "s", "-", "+", "COUNT", "1") == [
        [b"1-1", [b"big", big, b"small", b"x"]]]
    assert run(r, "XREAD", "STREAMS", "s", "1-0") == [
        [b"s", [[b"1-1", [b"big", big, b"small", b"x"]], [b"2-1", [b"small", b"y"]]]]]
    assert run(r, "XREVRANGE", "s", "+", "-") == [
        [b"2-1", [b"small", b"y"]], [b"1-1", [b"big", big, b"small", b"x"]]]


def test_xadd_repeated_fields_and_order_are_kept(r):
    run(r, "XADD", "s", "1", "a", "b", "a", "c", "a", "d")
    run(r, "XADD", "s", "2", "a", "1", "b", "2")
    run(r, "XADD", "s", "3", "b", "2", "a", "1")
    assert run(r, "XRANGE", "s", "-", "+") == [
        [b"1-0", [b"a", b"b", b"a", b"c", b"a", b"d"]], [b"2-0", [b"a", b"1", b"b", b"2"]],
        [b"3-0", [b"b", b"2", b"a", b"1"]]]


def test_xadd_many_fields(r):
    pairs = [x for i in range(1000) for x in (f"field:{i}", "v" * (i % 7))]
    assert run(r, "XADD", "s", "1", *pairs) == b"1-0"
    assert run(r, "XRANGE", "s", "-", "+") == [[b"1-0", [p.encode() for p in pairs]]]


def test_xadd_varying_field_sets_across_nodes(r, nodes_of_10):
    # Redis compresses entries whose fields match their node's first entry; the reply must
    # not show it, whichever entry starts a node.
    shapes = [["a", "1"], ["a", "2", "b", "3"], ["b", "4", "a", "5"], ["a", "6"], ["c", ""]]
    expected = []
    for i in range(1, 38):
        fields = shapes[(i * 7) % len(shapes)]
        run(r, "XADD", "s", f"{i}-1", *fields)
        expected.append([f"{i}-1".encode(), [f.encode() for f in fields]])
    assert run(r, "XRANGE", "s", "-", "+") == expected
    assert run(r, "XREVRANGE", "s", "+", "-") == expected[::-1]
    assert run(r, "XRANGE", "s", "(9-1", "21") == expected[9:21]


# ---------------------------------------------------------------------------------------------
# XADD: trimming options
# ---------------------------------------------------------------------------------------------


def test_xadd_maxlen_exact(r):
    for i in range(1, 11):
        run(r, "XADD", "s", "MAXLEN", "3", str(i), "x", str(i))
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"8-0", b"9-0", b"10-0"]
    run(r, "XADD", "s", "MAXLEN", "=", "2", "11", "x", "11")
    run(r, "XADD", "s", "maxlen", "1", "12", "x", "12")
    assert run(r, "XRANGE", "s", "-", "+") == [[b"12-0", [b"x", b"12"]]]
    info = xinfo(r, "s")
    assert (info[b"length"], info[b"entries-added"]) == (1, 12)
    assert info[b"max-deleted-entry-id"] == b"0-0"  # trimming does not move it
    assert info[b"recorded-first-entry-id"] == b"12-0"


def test_xadd_maxlen_zero_creates_empty_stream(r):
    assert run(r, "XADD", "z", "MAXLEN", "0", "1-1", "a", "b") == b"1-1"
    assert r.exists("z") == 1
    assert r.type("z") == b"stream"
    assert r.xlen("z") == 0
    assert run(r, "XRANGE", "z", "-", "+") == []
    assert run(r, "XREAD", "STREAMS", "z", "0") is None
    info = xinfo(r, "z")
    assert info[b"last-generated-id"] == b"1-1"
    assert (info[b"entries-added"], info[b"first-entry"], info[b"last-entry"]) == (1, None, None)
    assert error_of(r, "XADD", "z", "1-1", "a", "b") == XADD_SMALLER
    assert run(r, "XADD", "z", "NOMKSTREAM", "2-1", "a", "b") == b"2-1"


def test_xadd_minid(r):
    for j in range(1, 21):
        run(r, "XADD", "s", "MINID", str(max(j - 3, 1)), str(j), "x", str(j))
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"17-0", b"18-0", b"19-0", b"20-0"]
    run(r, "XADD", "s", "MINID", "=", "19-0", "21", "x", "21")
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"19-0", b"20-0", b"21-0"]


def test_xadd_minid_above_the_new_id_trims_it_too(r):
    # The new entry is added, then trimming runs: a MINID above it removes it again.
    assert run(r, "XADD", "f", "MINID", "5", "3", "a", "b") == b"3-0"
    assert r.xlen("f") == 0
    info = xinfo(r, "f")
    assert (info[b"last-generated-id"], info[b"entries-added"]) == (b"3-0", 1)
    assert run(r, "XADD", "f", "MINID", "5", "7", "a", "b") == b"7-0"
    assert run(r, "XRANGE", "f", "-", "+") == [[b"7-0", [b"a", b"b"]]]


@pytest.mark.parametrize(("options", "message"), [
    (["MAXLEN", "-1"], MAXLEN_NEGATIVE),
    (["MAXLEN", "x"], NOT_INTEGER),
    (["MAXLEN", "18446744073709551615"], NOT_INTEGER),
    (["MAXLEN", "1.5"], NOT_INTEGER),
    (["MAXLEN", "=", "~", "1"], NOT_INTEGER),
    (["MAXLEN", "1", "LIMIT", "5"], LIMIT_NO_TILDE),
    (["MAXLEN", "=", "1", "LIMIT", "5"], LIMIT_NO_TILDE),
    (["MINID", "1", "LIMIT", "5"], LIMIT_NO_TILDE),
    (["MAXLEN", "~", "1", "LIMIT", "-1"], LIMIT_NEGATIVE),
    (["MAXLEN", "~", "1", "LIMIT", "x"], NOT_INTEGER),
    (["LIMIT", "5"], LIMIT_NO_STRATEGY),
    (["MINID", "-1"], INVALID_ID),
    (["MINID", "abc"], INVALID_ID),
    (["MINID", "+"], INVALID_ID),
    (["MAXLEN", "1", "MINID", "1"], BOTH_STRATEGIES),
    (["MINID", "1", "MAXLEN", "1"], BOTH_STRATEGIES),
    # A second MAXLEN counts as "both strategies" too.
    (["MAXLEN", "5", "MAXLEN", "3"], BOTH_STRATEGIES),
    (["MINID", "~", "1", "MINID", "2"], BOTH_STRATEGIES),
    # An unknown word, or a stray "=", is taken for the ID.
    (["BOGUS"], INVALID_ID),
    (["MAXLEN", "1", "="], INVALID_ID),
])
def test_xadd_trim_option_errors(r, options, message):
    run(r, "XADD", "s", "1", "f", "v")
    assert error_of(r, "XADD", "s", *options, "*", "f", "v") == message
    assert r.xlen("s") == 1


def test_xadd_limit_options(r):
    assert run(r, "XADD", "t", "MAXLEN", "~", "0", "LIMIT", "0", "1", "f", "v") == b"1-0"
    assert run(r, "XADD", "t", "MAXLEN", "1", "NOMKSTREAM", "2", "f", "v") == b"2-0"
    # A repeated LIMIT: the last one wins.
    assert run(r, "XADD", "t", "MAXLEN", "~", "1", "LIMIT", "1", "LIMIT", "2", "3", "f",
               "v") == b"3-0"
    assert r.xlen("t") == 2  # approximate: the one node is not removed


def test_xadd_approx_maxlen_with_limit(r, nodes_of_10):
    # stream.tcl "XADD with LIMIT consecutive calls": nodes of 10, at most 30 entries a call.
    add_many(r, "s", 100)
    run(r, "XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "*", "f", "v")
    assert r.xlen("s") == 71
    run(r, "XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "*", "f", "v")
    assert r.xlen("s") == 62
    assert ids(run(r, "XRANGE", "s", "-", "+", "COUNT", "1")) == [b"41-0"]


def test_xadd_approx_maxlen_removes_whole_nodes_only(r, nodes_of_10):
    add_many(r, "s", 20)
    run(r, "XADD", "s", "MAXLEN", "~", "3", "21", "f", "v")
    assert r.xlen("s") == 11  # 1-10 went; dropping 11-20 would leave fewer than 3
    run(r, "XADD", "s", "MAXLEN", "~", "3", "LIMIT", "1", "22", "f", "v")
    assert r.xlen("s") == 12  # a node of 10 does not fit in LIMIT 1
    assert ids(run(r, "XRANGE", "s", "-", "+", "COUNT", "1")) == [b"11-0"]


# ---------------------------------------------------------------------------------------------
# XLEN
# ---------------------------------------------------------------------------------------------


def test_xlen(r, raw):
    assert r.xlen("nokey") == 0
    run(r, "XADD", "s", "1", "f", "v")
    run(r, "XADD", "s", "2", "f", "v")
    assert call(raw, "XLEN", "s") == b":2\r\n"
    r.xdel("s", "1-0")
    assert r.xlen("s") == 1
    r.set("str", "v")
    assert error_of(r, "XLEN", "str") == WRONGTYPE
    assert error_of(r, "XLEN") == "wrong number of arguments for 'xlen' command"
    assert error_of(r, "XLEN", "a", "b") == "wrong number of arguments for 'xlen' command"


# ---------------------------------------------------------------------------------------------
# XRANGE / XREVRANGE
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def four(r: redis.Redis) -> redis.Redis:
    """A stream with 1-1, 1-2, 2-0 and 3-5."""
    for entry_id, field, value in (("1-1", "a", "1"), ("1-2", "b", "2"), ("2-0", "c", "3"),
                                   ("3-5", "d", "4")):
        run(r, "XADD", "s", entry_id, field, value)
    return r


def test_xrange_whole_stream(four):
    entries = [[b"1-1", [b"a", b"1"]], [b"1-2", [b"b", b"2"]], [b"2-0", [b"c", b"3"]],
               [b"3-5", [b"d", b"4"]]]
    assert run(four, "XRANGE", "s", "-", "+") == entries
    assert run(four, "XREVRANGE", "s", "+", "-") == entries[::-1]
    assert run(four, "XRANGE", "s", "0", MAX_ID) == entries


@pytest.mark.parametrize(("command", "start", "end", "expected"), [
    # Incomplete IDs: the start takes seq 0, the end seq UINT64_MAX.
    ("XRANGE", "1", "1", ["1-1", "1-2"]),
    ("XRANGE", "2", "3", ["2-0", "3-5"]),
    ("XREVRANGE", "3", "2", ["3-5", "2-0"]),
    ("XRANGE", f"1-{MAX}", "+", ["2-0", "3-5"]),
    # Exclusive ranges.
    ("XRANGE", "(1-1", "+", ["1-2", "2-0", "3-5"]),
    ("XRANGE", "-", "(3-5", ["1-1", "1-2", "2-0"]),
    ("XRANGE", "(1-2", "(3-5", ["2-0"]),
    ("XREVRANGE", "(3-5", "(1-1", ["2-0", "1-2"]),
    ("XREVRANGE", "(2-0", "-", ["1-2", "1-1"]),
    # "(1" excludes 1-0 only; "(2" as an end excludes 2-UINT64_MAX only.
    ("XRANGE", "(1", "+", ["1-1", "1-2", "2-0", "3-5"]),
    ("XRANGE", "(2", "+", ["3-5"]),
    ("XRANGE", "-", "(2", ["1-1", "1-2", "2-0"]),
    ("XREVRANGE", "(2", "-", ["2-0", "1-2", "1-1"]),
    ("XRANGE", f"(1-{MAX}", "+", ["2-0", "3-5"]),
    ("XRANGE", "(0-0", "+", ["1-1", "1-2", "2-0", "3-5"]),
    ("XRANGE", "-", f"({MAX_ID}", ["1-1", "1-2", "2-0", "3-5"]),
    # Empty ranges.
    ("XRANGE", "3", "1", []),
    ("XREVRANGE", "1", "3", []),
    ("XRANGE", "+", "+", []),
    ("XRANGE", "-", "-", []),
    ("XRANGE", "+", "-", []),
    ("XRANGE", "(1-2", "(2-0", []),
    ("XRANGE", "4", "+", []),
])
def test_xrange_bounds(four, command, start, end, expected):
    assert ids(run(four, command, "s", start, end)) == [x.encode() for x in expected]


@pytest.mark.parametrize(("command", "start", "end", "message"), [
    ("XRANGE", "(-", "+", INVALID_ID),
    ("XRANGE", "-", "(+", INVALID_ID),
    ("XREVRANGE", "(+", "-", INVALID_ID),
    ("XREVRANGE", "+", "(-", INVALID_ID),
    ("XRANGE", f"({MAX_ID}", "+", "invalid start ID for the interval"),
    ("XRANGE", "-", "(0-0", "invalid end ID for the interval"),
    ("XREVRANGE", "(0-0", "-", "invalid end ID for the interval"),
    ("XREVRANGE", "+", f"({MAX_ID}", "invalid start ID for the interval"),
    ("XRANGE", "x", "+", INVALID_ID),
    ("XRANGE", "-", "y", INVALID_ID),
    ("XRANGE", "1-", "+", INVALID_ID),
    ("XRANGE", "$", "+", INVALID_ID),
    ("XRANGE", "*", "+", INVALID_ID),
    ("XRANGE", "1-*", "+", INVALID_ID),
    ("XRANGE", "(", "+", INVALID_ID),
    ("XRANGE", "((1", "+", INVALID_ID),
])
def test_xrange_id_errors(four, command, start, end, message):
    assert error_of(four, command, "s", start, end) == message
    assert error_of(four, command, "nokey", start, end) == message


def test_xrange_count(four):
    assert ids(run(four, "XRANGE", "s", "-", "+", "COUNT", "2")) == [b"1-1", b"1-2"]
    assert ids(run(four, "XREVRANGE", "s", "+", "-", "COUNT", "1")) == [b"3-5"]
    assert ids(run(four, "XRANGE", "s", "-", "+", "count", "1")) == [b"1-1"]
    assert ids(run(four, "XRANGE", "s", "(1-1", "+", "COUNT", "100")) == [b"1-2", b"2-0", b"3-5"]
    # A repeated COUNT: the last one wins.
    assert ids(run(four, "XRANGE", "s", "-", "+", "COUNT", "1", "COUNT", "2")) == [b"1-1", b"1-2"]


def test_xrange_count_zero_or_negative_is_a_null_reply(four, raw):
    # Unlike XREAD, where COUNT 0 means "no limit".
    for count in ("0", "-1", "-100"):
        assert call(raw, "XRANGE", "s", "-", "+", "COUNT", count) == b"*-1\r\n"
        assert call(raw, "XREVRANGE", "s", "+", "-", "COUNT", count) == b"*-1\r\n"
    assert call(raw, "XRANGE", "nokey", "-", "+") == b"*0\r\n"
    assert call(raw, "XRANGE", "s", "3", "1") == b"*0\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "XRANGE", "s", "-", "+", "COUNT", "0") == b"_\r\n"
    assert call(raw, "XRANGE", "nokey", "-", "+") == b"*0\r\n"


def test_xrange_raw_reply(four, raw):
    assert call(raw, "XRANGE", "s", "-", "1-1") == (
        b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
    call(raw, "HELLO", "3")
    assert call(raw, "XREVRANGE", "s", "+", "3") == (
        b"*1\r\n*2\r\n$3\r\n3-5\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n")


def test_xrange_syntax_errors(four):
    assert error_of(four, "XRANGE", "s", "-", "+", "COUNT") == "syntax error"
    assert error_of(four, "XRANGE", "s", "-", "+", "LIMIT", "1") == "syntax error"
    assert error_of(four, "XRANGE", "s", "-", "+", "COUNT", "1", "X") == "syntax error"
    assert error_of(four, "XRANGE", "s", "-", "+", "COUNT", "x") == NOT_INTEGER
    assert error_of(four, "XRANGE", "s") == "wrong number of arguments for 'xrange' command"
    assert error_of(four, "XRANGE", "s", "-") == "wrong number of arguments for 'xrange' command"
    assert error_of(four, "XREVRANGE", "s", "+") == (
        "wrong number of arguments for 'xrevrange' command")


def test_xrange_wrong_type(r):
    r.set("str", "v")
    assert error_of(r, "XRANGE", "str", "-", "+") == WRONGTYPE
    assert error_of(r, "XREVRANGE", "str", "+", "-") == WRONGTYPE
    # IDs and COUNT are parsed before the key is looked up.
    assert error_of(r, "XRANGE", "str", "x", "+") == INVALID_ID
    assert error_of(r, "XRANGE", "str", "-", "+", "COUNT", "x") == NOT_INTEGER


def test_xrevrange_compressed_and_plain_entries(r):
    # stream.tcl "XREVRANGE regression test for issue #5006".
    for key, fields in (("plain", ["key1", "key2", "key3"]), ("same", ["key1"] * 3)):
        for stamp, field, value in zip((1234567891230, 1234567891240, 1234567891250), fields,
                                       ("value1", "value2", "value3"), strict=True):
            run(r, "XADD", key, str(stamp), field, value)
    assert run(r, "XREVRANGE", "plain", "1234567891245", "-") == [
        [b"1234567891240-0", [b"key2", b"value2"]], [b"1234567891230-0", [b"key1", b"value1"]]]
    assert run(r, "XREVRANGE", "same", "1234567891245", "-") == [
        [b"1234567891240-0", [b"key1", b"value2"]], [b"1234567891230-0", [b"key1", b"value1"]]]


def test_xrange_iterates_across_nodes(r, nodes_of_10):
    add_many(r, "s", 250)
    run(r, "XDEL", "s", "5-0", "10-0", "11-0", "100-0", "250-0")
    seen: list[bytes] = []
    start = "-"
    while True:
        page = run(r, "XRANGE", "s", start, "+", "COUNT", "7")
        assert isinstance(page, list)
        if not page:
            break
        seen += ids(page)
        start = "(" + page[-1][0].decode()
    expected = [f"{i}-0".encode() for i in range(1, 251) if i not in (5, 10, 11, 100, 250)]
    assert seen == expected
    backwards: list[bytes] = []
    end = "+"
    while page := run(r, "XREVRANGE", "s", end, "-", "COUNT", "9"):
        backwards += ids(page)
        end = "(" + page[-1][0].decode()
    assert backwards == expected[::-1]


# ---------------------------------------------------------------------------------------------
# XDEL
# ---------------------------------------------------------------------------------------------


def test_xdel(four, raw):
    assert run(four, "XDEL", "s", "1-2", "9-9", "1-2") == 1  # each ID deleted once
    assert call(raw, "XDEL", "s", "9-9") == b":0\r\n"
    assert run(four, "XDEL", "s", "2") == 1  # incomplete: 2-0
    assert ids(run(four, "XRANGE", "s", "-", "+")) == [b"1-1", b"3-5"]
    assert four.xlen("s") == 2


def test_xdel_checks_every_id_first(four):
    assert error_of(four, "XDEL", "s", "1-1", "bad") == INVALID_ID
    for entry_id in ("-", "+", "3-*", "(3-5", "*", "$"):
        assert error_of(four, "XDEL", "s", entry_id) == INVALID_ID
    assert four.xlen("s") == 4


def test_xdel_missing_key_does_not_check_ids(r):
    assert run(r, "XDEL", "nokey", "1-1") == 0
    assert run(r, "XDEL", "nokey", "bad") == 0  # the key is looked up before the IDs are parsed


def test_xdel_wrong_type_and_arity(r):
    r.set("str", "v")
    assert error_of(r, "XDEL", "str", "1-1") == WRONGTYPE
    assert error_of(r, "XDEL", "s") == "wrong number of arguments for 'xdel' command"


def test_xdel_everything_keeps_the_key(r):
    run(r, "XADD", "s", "1-1", "a", "1")
    run(r, "XADD", "s", "1-2", "b", "2")
    run(r, "XADD", "s", "1-3", "c", "3")
    assert run(r, "XDEL", "s", "1-3", "1-1", "1-2") == 3
    assert (r.exists("s"), r.type("s"), r.xlen("s")) == (1, b"stream", 0)
    info = xinfo(r, "s")
    assert info[b"last-generated-id"] == b"1-3"
    assert info[b"max-deleted-entry-id"] == b"1-3"
    assert info[b"recorded-first-entry-id"] == b"0-0"
    assert error_of(r, "XADD", "s", "1-3", "f", "v") == XADD_SMALLER
    assert run(r, "XADD", "s", "1-4", "f", "v") == b"1-4"


def test_xdel_max_deleted_and_first_entry(r):
    # stream.tcl "Maximum XDEL ID behaves correctly" and "XDEL/TRIM are reflected by recorded
    # first entry".
    for i in range(1, 6):
        run(r, "XADD", "x", f"{i}-0", "data", "a")
    assert xinfo(r, "x")[b"max-deleted-entry-id"] == b"0-0"
    r.xdel("x", "2-0")
    assert (xinfo(r, "x")[b"max-deleted-entry-id"], xinfo(r, "x")[b"recorded-first-entry-id"]) == (
        b"2-0", b"1-0")
    r.xdel("x", "1-0")
    assert (xinfo(r, "x")[b"max-deleted-entry-id"], xinfo(r, "x")[b"recorded-first-entry-id"]) == (
        b"2-0", b"3-0")
    run(r, "XTRIM", "x", "MAXLEN", "=", "2")
    info = xinfo(r, "x", "FULL")
    assert (info[b"recorded-first-entry-id"], info[b"max-deleted-entry-id"]) == (b"4-0", b"2-0")
    assert info[b"entries-added"] == 5


def test_xdel_random_order_against_a_model(r, set_config):
    set_config("stream-node-max-entries", 7)
    rng = random.Random(5)
    model: dict[bytes, list[bytes]] = {}
    for i in range(1, 301):
        entry_id = f"{i // 3}-{i % 3}".encode()
        fields = [b"item", str(i).encode()] + ([b"extra", b"x"] if i % 10 == 0 else [])
        run(r, "XADD", "s", entry_id, *fields)
        model[entry_id] = fields
    order = list(model)
    rng.shuffle(order)
    for n, entry_id in enumerate(order, 1):
        assert run(r, "XDEL", "s", entry_id) == 1
        del model[entry_id]
        assert r.xlen("s") == len(model)
        if n % 25 == 0 or len(model) < 5:
            expected = [[k, v] for k, v in model.items()]
            assert run(r, "XRANGE", "s", "-", "+") == expected
            assert run(r, "XREVRANGE", "s", "+", "-") == expected[::-1]
            if expected:
                pivot = rng.choice(expected)[0].decode()
                assert run(r, "XRANGE", "s", f"({pivot}", "+", "COUNT", "5") == [
                    e for e in expected if id_tuple(e[0]) > id_tuple(pivot.encode())][:5]
    assert run(r, "XRANGE", "s", "-", "+") == []
    assert xinfo(r, "s")[b"max-deleted-entry-id"] == b"100-0"


# ---------------------------------------------------------------------------------------------
# XTRIM
# ---------------------------------------------------------------------------------------------


def test_xtrim_maxlen_and_minid(r, raw):
    for i in range(1, 6):
        run(r, "XADD", "s", str(i), "f", "v")
    assert call(raw, "XTRIM", "s", "MAXLEN", "4") == b":1\r\n"
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"2-0", b"3-0", b"4-0", b"5-0"]
    assert run(r, "XTRIM", "s", "MINID", "3") == 1
    assert run(r, "XTRIM", "s", "MINID", "=", "4-1") == 2  # entries below 4-1 go
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"5-0"]
    assert run(r, "XTRIM", "s", "maxlen", "9223372036854775807") == 0
    assert run(r, "XTRIM", "s", "MINID", "1") == 0
    assert run(r, "XTRIM", "s", "MAXLEN", "=", "0") == 1
    assert run(r, "XTRIM", "s", "MAXLEN", "0") == 0
    assert (r.exists("s"), r.xlen("s")) == (1, 0)
    info = xinfo(r, "s")
    assert (info[b"last-generated-id"], info[b"entries-added"]) == (b"5-0", 5)
    assert (info[b"max-deleted-entry-id"], info[b"recorded-first-entry-id"]) == (b"0-0", b"0-0")


def test_xtrim_minid_big_delta(r):
    # stream.tcl "XTRIM with MINID option, big delta from master record".
    for entry_id in ("1-0", "1641544570597-0", "1641544570597-1"):
        run(r, "XADD", "s", entry_id, "f", "v")
    assert run(r, "XTRIM", "s", "MINID", "1641544570597-0") == 1
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"1641544570597-0", b"1641544570597-1"]


def test_xtrim_missing_key_and_wrong_type(r):
    assert run(r, "XTRIM", "nokey", "MAXLEN", "0") == 0
    assert error_of(r, "XTRIM", "nokey", "MAXLEN", "-1") == MAXLEN_NEGATIVE
    assert error_of(r, "XTRIM", "nokey", "BAD", "1") == "syntax error"
    assert r.exists("nokey") == 0
    r.set("str", "v")
    assert error_of(r, "XTRIM", "str", "MAXLEN", "1") == WRONGTYPE
    assert error_of(r, "XTRIM", "str", "MAXLEN", "-1") == MAXLEN_NEGATIVE


@pytest.mark.parametrize(("options", "message"), [
    (["MAXLEN", "-1"], MAXLEN_NEGATIVE),
    (["MAXLEN", "x"], NOT_INTEGER),
    (["MAXLEN", "18446744073709551615"], NOT_INTEGER),
    (["MAXLEN", "~"], NOT_INTEGER),
    (["MAXLEN", "="], NOT_INTEGER),
    (["MAXLEN", "1", "LIMIT", "1"], LIMIT_NO_TILDE),
    (["MINID", "1", "LIMIT", "1"], LIMIT_NO_TILDE),
    (["MAXLEN", "~", "1", "LIMIT", "-1"], LIMIT_NEGATIVE),
    (["LIMIT", "5"], LIMIT_NO_STRATEGY),
    (["MAXLEN", "1", "MINID", "2"], BOTH_STRATEGIES),
    (["BAD", "1"], "syntax error"),
    (["MAXLEN", "1", "BAD"], "syntax error"),
    (["NOMKSTREAM", "MAXLEN", "1"], "syntax error"),
    (["MAXLEN", "1", "*"], "syntax error"),
    (["MINID", "x"], INVALID_ID),
    (["MINID", "+"], INVALID_ID),
    (["MINID", "-"], INVALID_ID),
    (["MINID", "*"], INVALID_ID),
    (["MINID", "$"], INVALID_ID),
    (["MINID", "(4"], INVALID_ID),
])
def test_xtrim_option_errors(r, options, message):
    run(r, "XADD", "s", "1", "f", "v")
    assert error_of(r, "XTRIM", "s", *options) == message
    assert r.xlen("s") == 1


def test_xtrim_arity(r):
    message = "wrong number of arguments for 'xtrim' command"
    assert error_of(r, "XTRIM", "s") == message
    assert error_of(r, "XTRIM", "s", "MAXLEN") == message


def test_xtrim_approx_removes_whole_nodes(r, nodes_of_10):
    add_many(r, "s", 100)
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "55") == 40
    assert (r.xlen("s"), ids(run(r, "XRANGE", "s", "-", "+", "COUNT", "1"))) == (60, [b"41-0"])
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "55", "LIMIT", "0") == 0
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "5", "LIMIT", "25") == 20
    assert (r.xlen("s"), ids(run(r, "XRANGE", "s", "-", "+", "COUNT", "1"))) == (40, [b"61-0"])
    assert run(r, "XTRIM", "s", "MINID", "~", "75") == 10  # the node holding 75 stays
    assert run(r, "XTRIM", "s", "MINID", "78") == 7  # exact: inside a node
    # The node 71-80 now holds 3 live entries; approximate trimming drops it whole.
    assert run(r, "XTRIM", "s", "MINID", "~", "85") == 3
    assert (r.xlen("s"), ids(run(r, "XRANGE", "s", "-", "+", "COUNT", "1"))) == (20, [b"81-0"])
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "0") == 20
    assert r.xlen("s") == 0


_NODE_SHAPES = [["a", "1"], ["a", "12345"], ["a", "-5000"], ["a", "x" * 70], ["b", "007"],
                ["temperature", "21.5", "humidity", "40"], ["a", "9223372036854775808"],
                ["a", "-0"], ["a", "-9223372036854775808"], ["a", "2147483648"], ["a", "y" * 130]]


def _node_starts(r: redis.Redis) -> list[int]:
    """Positions (in the stream as it is) where a new node starts: ``MINID ~ <entry n>``
    removes something exactly when entry n is the first of a node."""
    entry_ids = ids(run(r, "XRANGE", "s", "-", "+"))
    return [n for n, entry_id in enumerate(entry_ids[1:], 1)
            if run(r, "XTRIM", "s", "MINID", "~", entry_id)]


# Node starts measured on redis-server 7.0.15 for each stream-node-max-bytes.
_BYTE_CAPPED_NODES = {
    60: [2, 3, 5, 7, 9, 10, 13, 14, 16, 18, 20, 21, 24, 25, 27, 29, 31, 32, 35, 36, 38, 40, 42,
         43, 46, 47, 49, 51, 53, 54, 57, 58],
    100: [2, 3, 6, 9, 10, 13, 14, 17, 20, 21, 24, 25, 28, 31, 32, 35, 36, 39, 42, 43, 46, 47, 50,
          53, 54, 57, 58],
    150: [4, 9, 10, 15, 20, 21, 26, 31, 32, 37, 42, 43, 48, 53, 54, 59],
    300: [9, 15, 21, 31, 37, 43, 53, 59],
}


@pytest.mark.parametrize("max_bytes", sorted(_BYTE_CAPPED_NODES))
def test_byte_capped_nodes_end_where_redis_ends_them(r, set_config, max_bytes):
    """A node ends when its listpack's bytes plus the next entry's strings reach
    stream-node-max-bytes: integers, short/long strings, ID deltas and entries with other
    fields than the master's all count with their listpack sizes."""
    set_config("stream-node-max-bytes", max_bytes)
    set_config("stream-node-max-entries", 0)
    for k in range(1, 61):
        run(r, "XADD", "s", f"{k * 37}-{k % 5}", *_NODE_SHAPES[k % len(_NODE_SHAPES)])
    assert _node_starts(r) == _BYTE_CAPPED_NODES[max_bytes]


def test_node_master_counts_grow_and_shrink_in_bytes(r, set_config):
    """Past 127 live entries the master entry's count takes one byte more; deleting entries
    from the open node changes the live and deleted counts (redis-server 7.0.15 figures)."""
    set_config("stream-node-max-entries", 0)
    for k in range(1, 1001):
        run(r, "XADD", "s", f"{k}-0", "a", "1")
        if k in (120, 126, 127, 128, 129, 130, 400, 401):
            run(r, "XDEL", "s", f"{k - 1}-0")
    assert _node_starts(r) == [377, 758]  # the entries 384-0 and 767-0


def test_xtrim_approx_default_limit(r, set_config):
    # stream.tcl "XTRIM with ~ is limited": LIMIT defaults to 100 x stream-node-max-entries.
    set_config("stream-node-max-entries", 1)
    add_many(r, "s", 102)
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "1") == 100
    assert r.xlen("s") == 2
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "1") == 1
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"102-0"]


def test_xtrim_approx_limit_zero_is_unlimited(r, set_config):
    set_config("stream-node-max-entries", 1)
    add_many(r, "s", 102)
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "0") == 101
    assert r.xlen("s") == 1


def test_xtrim_exact_is_not_limited(r, set_config):
    set_config("stream-node-max-entries", 1)
    add_many(r, "s", 102)
    assert run(r, "XTRIM", "s", "MAXLEN", "1") == 101
    assert r.xlen("s") == 1


def test_xtrim_limit_counts_entries(r, set_config):
    # stream.tcl "XTRIM with LIMIT delete entries no more than limit".
    set_config("stream-node-max-entries", 2)
    add_many(r, "s", 3)
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "1") == 0
    assert run(r, "XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "2") == 2
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"3-0"]


def test_xtrim_keeps_ttl(r):
    run(r, "XADD", "s", "1", "f", "v")
    run(r, "XADD", "s", "2", "f", "v")
    r.expireat("s", 4102444800)
    run(r, "XTRIM", "s", "MAXLEN", "0")
    run(r, "XADD", "s", "3", "f", "v")
    run(r, "XDEL", "s", "3")
    run(r, "XSETID", "s", "9")
    assert r.expiretime("s") == 4102444800


# ---------------------------------------------------------------------------------------------
# XSETID
# ---------------------------------------------------------------------------------------------


def test_xsetid(r, raw):
    run(r, "XADD", "s", "5-5", "f", "v")
    assert call(raw, "XSETID", "s", "5-5") == b"+OK\r\n"
    assert run(r, "XSETID", "s", "6") == b"OK"
    assert xinfo(r, "s")[b"last-generated-id"] == b"6-0"
    assert error_of(r, "XADD", "s", "6-0", "f", "v") == XADD_SMALLER
    assert run(r, "XADD", "s", "6-*", "f", "v") == b"6-1"
    assert run(r, "XSETID", "s", "200-0") == b"OK"
    auto = run(r, "XADD", "s", "*", "f", "v")
    assert isinstance(auto, bytes) and id_tuple(auto) > (200, 0)
    assert xinfo(r, "s")[b"entries-added"] == 3


def test_xsetid_smaller_than_top_item(r):
    run(r, "XADD", "s", "5-5", "f", "v")
    run(r, "XSETID", "s", "10")
    for last_id in ("5-4", "4", "1-1", "0-0"):
        assert error_of(r, "XSETID", "s", last_id) == XSETID_SMALLER
    # The check is against the last live entry, not the last generated ID.
    assert run(r, "XSETID", "s", "5-5") == b"OK"
    assert xinfo(r, "s")[b"last-generated-id"] == b"5-5"


def test_xsetid_missing_key_and_wrong_type(r):
    assert error_of(r, "XSETID", "nokey", "1-1") == "no such key"
    assert error_of(r, "XSETID", "nokey", "bad") == INVALID_ID
    assert error_of(r, "XSETID", "nokey", "1-1", "ENTRIESADDED", "-1") == (
        "entries_added must be positive")
    assert error_of(r, "XSETID", "nokey", "1-1", "MAXDELETEDID", "9") == XSETID_MAXDEL
    assert r.exists("nokey") == 0
    r.set("str", "v")
    assert error_of(r, "XSETID", "str", "1-1") == WRONGTYPE
    assert error_of(r, "XSETID", "str", "bad") == INVALID_ID
    assert error_of(r, "XSETID", "s") == "wrong number of arguments for 'xsetid' command"


@pytest.mark.parametrize("last_id", ["bad", "+", "-", "$", "*", "10-*", ">", "(5"])
def test_xsetid_invalid_ids(r, last_id):
    run(r, "XADD", "s", "5-5", "f", "v")
    assert error_of(r, "XSETID", "s", last_id) == INVALID_ID


def test_xsetid_entriesadded_and_maxdeletedid(r):
    run(r, "XADD", "s", "5-5", "f", "v")
    assert run(r, "XSETID", "s", "10", "ENTRIESADDED", "1") == b"OK"
    assert run(r, "XSETID", "s", "10", "MAXDELETEDID", "10") == b"OK"
    info = xinfo(r, "s")
    assert (info[b"last-generated-id"], info[b"max-deleted-entry-id"]) == (b"10-0", b"10-0")
    assert run(r, "XSETID", "s", "10", "MAXDELETEDID", "3") == b"OK"  # may go down
    assert run(r, "XSETID", "s", "10", "ENTRIESADDED", "5", "ENTRIESADDED", "7") == b"OK"
    info = xinfo(r, "s")
    assert (info[b"max-deleted-entry-id"], info[b"entries-added"]) == (b"3-0", 7)
    assert run(r, "XSETID", "s", "10", "entriesadded", "9", "maxdeletedid", "9") == b"OK"
    info = xinfo(r, "s")
    assert (info[b"max-deleted-entry-id"], info[b"entries-added"]) == (b"9-0", 9)
    assert info[b"length"] == 1


@pytest.mark.parametrize(("options", "message"), [
    (["ENTRIESADDED"], "syntax error"),
    (["ENTRIESADDED", "x"], NOT_INTEGER),
    (["ENTRIESADDED", "-1"], "entries_added must be positive"),
    (["ENTRIESADDED", "0"],
     "The entries_added specified in XSETID is smaller than the target stream length"),
    (["ENTRIESADDED", "100", "MAXDELETEDID", "11"], XSETID_MAXDEL),
    (["MAXDELETEDID", "11"], XSETID_MAXDEL),
    (["MAXDELETEDID", "bad"], INVALID_ID),
    (["MAXDELETEDID", "+"], INVALID_ID),
    (["MAXDELETEDID"], "syntax error"),
    (["BAD", "1"], "syntax error"),
    # stream.tcl: an offset without its keyword, or a tombstone without its keyword.
    (["0"], "syntax error"),
    (["0-0"], "syntax error"),
])
def test_xsetid_option_errors(r, options, message):
    run(r, "XADD", "s", "5-5", "f", "v")
    assert error_of(r, "XSETID", "s", "10", *options) == message
    assert xinfo(r, "s")[b"last-generated-id"] == b"5-5"


def test_xsetid_on_an_empty_stream_may_go_below_the_last_id(r):
    run(r, "XADD", "e", "MAXLEN", "0", "1-1", "f", "v")  # trimming leaves max-deleted at 0-0
    assert run(r, "XSETID", "e", "0-5") == b"OK"
    assert xinfo(r, "e")[b"last-generated-id"] == b"0-5"
    assert run(r, "XADD", "e", "1-1", "f", "v") == b"1-1"


def test_xsetid_below_max_deleted_id(r, server):
    # stream.tcl "XSETID cannot set smaller ID than current MAXDELETEDID" (Redis PR #11444,
    # after 7.0); the text is from t_stream.c's string table.
    run(r, "XADD", "x", "1-1", "a", "1")
    run(r, "XADD", "x", "1-2", "b", "2")
    run(r, "XADD", "x", "1-3", "c", "3")
    r.xdel("x", "1-2", "1-3")
    assert xinfo(r, "x")[b"max-deleted-entry-id"] == b"1-3"
    if server.version >= (7, 2):
        assert error_of(r, "XSETID", "x", "1-2") == (
            "The ID specified in XSETID is smaller than current max_deleted_entry_id")
        assert xinfo(r, "x")[b"last-generated-id"] == b"1-3"
    else:
        assert run(r, "XSETID", "x", "1-2") == b"OK"
    assert run(r, "XSETID", "x", "1-5", "MAXDELETEDID", "1-1") == b"OK"


def test_xsetid_to_the_maximum(r):
    run(r, "XADD", "s", "1", "f", "v")
    assert run(r, "XSETID", "s", MAX_ID) == b"OK"
    assert error_of(r, "XADD", "s", "*", "f", "v") == EXHAUSTED


# ---------------------------------------------------------------------------------------------
# XINFO STREAM / XINFO HELP
# ---------------------------------------------------------------------------------------------


def test_xinfo_stream_fields(r, server):
    run(r, "XADD", "t", "1-0", "a", "1")
    run(r, "XADD", "t", "2-0", "b", "2")
    run(r, "XADD", "t", "3-0", "c", "3")
    r.xdel("t", "2-0")
    reply = run(r, "XINFO", "STREAM", "t")
    assert isinstance(reply, list)
    assert reply[::2] == info_fields(server)
    info = xinfo(r, "t")
    assert isinstance(info[b"radix-tree-keys"], int) and isinstance(info[b"radix-tree-nodes"], int)
    assert 1 <= info[b"radix-tree-keys"] <= info[b"radix-tree-nodes"]
    portable = {k: v for k, v in info.items()
                if not k.startswith(b"radix") and k not in IDMP_FIELDS}
    assert portable == {
        b"length": 2, b"last-generated-id": b"3-0", b"max-deleted-entry-id": b"2-0",
        b"entries-added": 3, b"recorded-first-entry-id": b"1-0", b"groups": 0,
        b"first-entry": [b"1-0", [b"a", b"1"]], b"last-entry": [b"3-0", [b"c", b"3"]],
    }


def test_xinfo_stream_empty(r, raw):
    run(r, "XADD", "e", "MAXLEN", "0", "1-1", "a", "b")
    info = xinfo(r, "e")
    assert (info[b"length"], info[b"radix-tree-keys"]) == (0, 0)
    assert (info[b"first-entry"], info[b"last-entry"]) == (None, None)
    assert (info[b"recorded-first-entry-id"], info[b"last-generated-id"]) == (b"0-0", b"1-1")
    tail = b"$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n"
    assert call(raw, "XINFO", "STREAM", "e").endswith(tail)
    call(raw, "HELLO", "3")
    assert call(raw, "XINFO", "STREAM", "e").endswith(
        b"$11\r\nfirst-entry\r\n_\r\n$10\r\nlast-entry\r\n_\r\n")


def test_xinfo_stream_full(r, server):
    run(r, "XADD", "t", "1-0", "a", "1")
    run(r, "XADD", "t", "2-0", "b", "2")
    run(r, "XADD", "t", "3-0", "c", "3")
    r.xdel("t", "2-0")
    reply = run(r, "XINFO", "STREAM", "t", "FULL")
    assert isinstance(reply, list)
    assert reply[::2] == info_fields(server, full=True)
    info = xinfo(r, "t", "full")
    assert info[b"entries"] == [[b"1-0", [b"a", b"1"]], [b"3-0", [b"c", b"3"]]]
    assert (info[b"groups"], info[b"length"], info[b"max-deleted-entry-id"]) == ([], 2, b"2-0")
    assert xinfo(r, "t", "FULL", "COUNT", "1")[b"entries"] == [[b"1-0", [b"a", b"1"]]]
    for count in ("0", "-1"):  # 0 (and below) means every entry
        assert xinfo(r, "t", "FULL", "COUNT", count)[b"entries"] == info[b"entries"]
    run(r, "XADD", "e", "MAXLEN", "0", "1", "f", "v")
    assert (xinfo(r, "e", "FULL")[b"entries"], xinfo(r, "e", "FULL")[b"groups"]) == ([], [])


def test_xinfo_stream_full_default_count_is_10(r):
    add_many(r, "w", 15)
    entries = xinfo(r, "w", "FULL")[b"entries"]
    assert ids(entries) == [f"{i}-0".encode() for i in range(1, 11)]
    assert len(xinfo(r, "w", "FULL", "COUNT", "12")[b"entries"]) == 12


def test_xinfo_stream_errors(r):
    run(r, "XADD", "t", "1", "f", "v")
    assert error_of(r, "XINFO", "STREAM", "nokey") == "no such key"
    assert error_of(r, "XINFO", "STREAM", "nokey", "FULL") == "no such key"
    r.set("str", "v")
    assert error_of(r, "XINFO", "STREAM", "str") == WRONGTYPE
    assert error_of(r, "XINFO", "STREAM", "t", "FULL", "COUNT", "x") == NOT_INTEGER
    for extra in (["COUNT", "1"], ["FULL", "BAD"], ["FULL", "COUNT"], ["BAD"]):
        assert error_of(r, "XINFO", "STREAM", "t", *extra) == XINFO_STREAM_SYNTAX.format("STREAM")
    # The subcommand is echoed as the client typed it.
    assert error_of(r, "XINFO", "Stream", "t", "BAD") == XINFO_STREAM_SYNTAX.format("Stream")
    assert error_of(r, "XINFO", "STREAM") == "wrong number of arguments for 'xinfo|stream' command"
    assert error_of(r, "XINFO") == "wrong number of arguments for 'xinfo' command"
    assert error_of(r, "XINFO", "BAD") == "unknown subcommand 'BAD'. Try XINFO HELP."
    assert error_of(r, "XINFO", "BAD", "x") == "unknown subcommand 'BAD'. Try XINFO HELP."


def test_xinfo_help(server, raw):
    expected = (
        b"*9\r\n+XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
        b"+CONSUMERS <key> <groupname>\r\n+    Show consumers of <groupname>.\r\n"
        b"+GROUPS <key>\r\n+    Show the stream consumer groups.\r\n"
        b"+STREAM <key> [FULL [COUNT <count>]\r\n+    Show information about the stream.\r\n"
        b"+HELP\r\n+" + help_footer(server) + b"\r\n"
    )
    assert call(raw, "XINFO", "HELP") == expected
    assert call(raw, "XINFO", "help") == expected
    assert call(raw, "XINFO", "HELP", "x") == (
        b"-ERR wrong number of arguments for 'xinfo|help' command\r\n")


def test_xinfo_stream_resp3_map(r3, server):
    run(r3, "XADD", "s", "1-1", "a", "1")
    reply = run(r3, "XINFO", "STREAM", "s")
    assert isinstance(reply, dict)
    assert list(reply) == info_fields(server)
    assert (reply[b"first-entry"], reply[b"groups"]) == ([b"1-1", [b"a", b"1"]], 0)
    full = run(r3, "XINFO", "STREAM", "s", "FULL")
    assert isinstance(full, dict)
    assert list(full) == info_fields(server, full=True)
    assert full[b"entries"] == [[b"1-1", [b"a", b"1"]]]


def test_xinfo_counts_survive_copy_and_rename(r):
    run(r, "XADD", "s", "1-1", "a", "1")
    run(r, "XADD", "s", "1-2", "b", "2")
    r.xdel("s", "1-1")
    def portable(key: str) -> dict[bytes, object]:
        return {k: v for k, v in xinfo(r, key).items() if not k.startswith(b"radix-tree")}

    before = portable("s")
    assert r.rename("s", "s2") is True
    assert portable("s2") == before
    assert r.copy("s2", "s3") == 1
    assert portable("s3") == before


@pytest.mark.brook_only
def test_radix_tree_counts_are_node_counts(r, nodes_of_10):
    # Brook has no radix tree: radix-tree-keys is its number of macro nodes and
    # radix-tree-nodes that plus a root (an empty stream reports 0 and 1, as Redis does).
    add_many(r, "s", 25)
    info = xinfo(r, "s")
    assert (info[b"radix-tree-keys"], info[b"radix-tree-nodes"]) == (3, 4)
    run(r, "XTRIM", "s", "MAXLEN", "~", "12")
    info = xinfo(r, "s")
    assert (info[b"length"], info[b"radix-tree-keys"], info[b"radix-tree-nodes"]) == (15, 2, 3)
    run(r, "XTRIM", "s", "MAXLEN", "0")
    info = xinfo(r, "s")
    assert (info[b"radix-tree-keys"], info[b"radix-tree-nodes"]) == (0, 1)


# ---------------------------------------------------------------------------------------------
# XREAD (without BLOCK)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def two(r: redis.Redis) -> redis.Redis:
    """Streams s (1-1, 1-2, 2-0) and t (5-0)."""
    for key, entry_id, field, value in (("s", "1-1", "a", "1"), ("s", "1-2", "b", "2"),
                                        ("s", "2-0", "c", "3"), ("t", "5-0", "x", "y")):
        run(r, "XADD", key, entry_id, field, value)
    return r


S_ENTRIES = [[b"1-1", [b"a", b"1"]], [b"1-2", [b"b", b"2"]], [b"2-0", [b"c", b"3"]]]


def test_xread(two):
    assert run(two, "XREAD", "STREAMS", "s", "0") == [[b"s", S_ENTRIES]]
    assert run(two, "XREAD", "STREAMS", "s", "1-1") == [[b"s", S_ENTRIES[1:]]]
    assert run(two, "XREAD", "STREAMS", "s", "1") == [[b"s", S_ENTRIES]]  # 1 means 1-0
    assert run(two, "XREAD", "STREAMS", "s", f"0-{MAX}") == [[b"s", S_ENTRIES]]
    assert run(two, "xread", "streams", "s", "1-1") == [[b"s", S_ENTRIES[1:]]]


def test_xread_several_streams(two):
    assert run(two, "XREAD", "COUNT", "1", "STREAMS", "s", "t", "0", "0") == [
        [b"s", S_ENTRIES[:1]], [b"t", [[b"5-0", [b"x", b"y"]]]]]
    # Missing keys and streams with nothing new are left out of the reply.
    assert run(two, "XREAD", "STREAMS", "nokey", "s", "t", "0", "1-2", "5") == [
        [b"s", S_ENTRIES[2:]]]
    assert run(two, "XREAD", "STREAMS", "s", "nokey", "2", "0") is None
    # The same key twice is read twice.
    assert run(two, "XREAD", "STREAMS", "s", "s", "0", "1-2") == [
        [b"s", S_ENTRIES], [b"s", S_ENTRIES[2:]]]


def test_xread_count(two):
    assert run(two, "XREAD", "count", "2", "STREAMS", "s", "0") == [[b"s", S_ENTRIES[:2]]]
    assert run(two, "XREAD", "COUNT", "1", "COUNT", "2", "STREAMS", "s", "0") == [
        [b"s", S_ENTRIES[:2]]]
    # Unlike XRANGE, COUNT 0 or below means no limit.
    assert run(two, "XREAD", "COUNT", "0", "STREAMS", "s", "0") == [[b"s", S_ENTRIES]]
    assert run(two, "XREAD", "COUNT", "-1", "STREAMS", "s", "0") == [[b"s", S_ENTRIES]]


def test_xread_nothing_new_is_a_null_reply(two, raw):
    assert call(raw, "XREAD", "STREAMS", "s", "2-0") == b"*-1\r\n"
    assert call(raw, "XREAD", "STREAMS", "nokey", "0") == b"*-1\r\n"
    assert call(raw, "XREAD", "STREAMS", "s", "$") == b"*-1\r\n"  # "$": only later entries
    assert call(raw, "XREAD", "STREAMS", "s", MAX_ID) == b"*-1\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "XREAD", "STREAMS", "s", "2-0") == b"_\r\n"
    assert call(raw, "XREAD", "STREAMS", "s", "t", "$", "$") == b"_\r\n"


def test_xread_raw_replies(two, raw):
    entry = b"*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n"
    assert call(raw, "XREAD", "STREAMS", "t", "0") == b"*1\r\n*2\r\n$1\r\nt\r\n*1\r\n" + entry
    call(raw, "HELLO", "3")
    assert call(raw, "XREAD", "STREAMS", "t", "0") == b"%1\r\n$1\r\nt\r\n*1\r\n" + entry


def test_xread_resp3_client(two, r3):
    assert run(r3, "XREAD", "STREAMS", "s", "t", "1-2", "0") == {
        b"s": S_ENTRIES[2:], b"t": [[b"5-0", [b"x", b"y"]]]}
    assert run(r3, "XREAD", "STREAMS", "s", "9") is None


def test_xread_after_deleting_the_last_entry(two):
    run(two, "XDEL", "s", "2-0")
    assert run(two, "XREAD", "STREAMS", "s", "1-2") is None
    assert run(two, "XREAD", "STREAMS", "s", "1-1") == [[b"s", S_ENTRIES[1:2]]]


def test_xread_id_after_a_maximal_sequence(r):
    # stream.tcl "XREAD streamID edge (no-blocking)".
    run(r, "XADD", "x", "1-1", "f", "v")
    run(r, "XADD", "x", f"1-{MAX}", "f", "v")
    run(r, "XADD", "x", "2-1", "f", "v")
    assert run(r, "XREAD", "STREAMS", "x", f"1-{MAX}") == [[b"x", [[b"2-1", [b"f", b"v"]]]]]


def test_xread_block_with_data_answers_at_once(two):
    assert run(two, "XREAD", "BLOCK", "0", "STREAMS", "s", "1-2") == [[b"s", S_ENTRIES[2:]]]


def test_xread_streams_is_a_key_after_streams(two):
    # Only the first STREAMS is the keyword: here the keys are "STREAMS" (missing) and "s".
    assert run(two, "XREAD", "STREAMS", "STREAMS", "s", "0", "0") == [[b"s", S_ENTRIES]]


def test_xread_unbalanced(two, server):
    # 7.0 named the command in capitals; 7.2 quotes its lowercase name; 7.4 lists "+" (the
    # texts of 7.2 and 7.4 are from t_stream.c string tables of those versions).
    if server.version >= (7, 4):
        what = "'xread' list of streams: for each stream key an ID, '+', or '$'"
    elif server.version >= (7, 2):
        what = "'xread' list of streams: for each stream key an ID or '$'"
    else:
        what = "XREAD list of streams: for each stream key an ID or '$'"
    message = f"Unbalanced {what} must be specified."
    assert error_of(two, "XREAD", "STREAMS", "s", "t", "0") == message
    assert error_of(two, "XREAD", "COUNT", "1", "STREAMS", "s", "t", "u", "0", "0") == message


@pytest.mark.parametrize(("args", "message"), [
    (["STREAMS", "s"], "wrong number of arguments for 'xread' command"),
    (["STREAMS"], "wrong number of arguments for 'xread' command"),
    (["COUNT", "1"], "wrong number of arguments for 'xread' command"),
    (["s", "0"], "wrong number of arguments for 'xread' command"),
    (["BAD", "STREAMS", "s", "0"], "syntax error"),
    (["COUNT", "1", "s", "0"], "syntax error"),
    (["COUNT", "x", "STREAMS", "s", "0"], NOT_INTEGER),
    (["BLOCK", "x", "STREAMS", "s", "0"], "timeout is not an integer or out of range"),
    (["BLOCK", "-1", "STREAMS", "s", "0"], "timeout is negative"),
    (["STREAMS", "s", "bad"], INVALID_ID),
    (["STREAMS", "s", "-"], INVALID_ID),
    (["STREAMS", "s", "*"], INVALID_ID),
    (["STREAMS", "s", "(1-1"], INVALID_ID),
    (["STREAMS", "s", "1-*"], INVALID_ID),
    (["STREAMS", "nokey", "bad"], INVALID_ID),
    (["STREAMS", "s", ">"],
     "The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
     "<consumer> option."),
    (["NOACK", "STREAMS", "s", "0"],
     "The NOACK option is only supported by XREADGROUP. You called XREAD instead."),
    (["GROUP", "g", "c", "STREAMS", "s", "0"],
     "The GROUP option is only supported by XREADGROUP. You called XREAD instead."),
])
def test_xread_errors(two, args, message):
    assert error_of(two, "XREAD", *args) == message


def test_xread_wrong_type(two):
    two.set("str", "v")
    assert error_of(two, "XREAD", "STREAMS", "str", "0") == WRONGTYPE
    assert error_of(two, "XREAD", "STREAMS", "s", "str", "0", "0") == WRONGTYPE
    assert error_of(two, "XREAD", "STREAMS", "nokey", "str", "0", "0") == WRONGTYPE
    # The key's type is checked before its ID is parsed.
    assert error_of(two, "XREAD", "STREAMS", "str", "bad") == WRONGTYPE


@pytest.mark.min_redis(7, 4)
def test_xread_plus_reads_the_last_entry(r):
    # stream.tcl "XREAD last element from non-empty stream" / "... with count > 1" / "... from
    # multiple streams" / "read last element after XDEL (issue #13628)".
    for i, (field, value) in enumerate((("k1", "v1"), ("k2", "v2"), ("k3", "v3")), 1):
        run(r, "XADD", "le", f"{i}-0", field, value)
    assert run(r, "XREAD", "STREAMS", "le", "+") == [[b"le", [[b"3-0", [b"k3", b"v3"]]]]]
    assert run(r, "XREAD", "COUNT", "3", "STREAMS", "le", "+") == [
        [b"le", [[b"3-0", [b"k3", b"v3"]]]]]
    run(r, "XADD", "le", f"3-{MAX - 1}", "k4", "v4")
    run(r, "XADD", "le", f"3-{MAX}", "k5", "v5")
    assert run(r, "XREAD", "STREAMS", "le", "+") == [
        [b"le", [[f"3-{MAX}".encode(), [b"k5", b"v5"]]]]]
    run(r, "XDEL", "le", f"3-{MAX}")
    assert run(r, "XREAD", "STREAMS", "le", "+") == [
        [b"le", [[f"3-{MAX - 1}".encode(), [b"k4", b"v4"]]]]]
    run(r, "XADD", "other", "7", "a", "b")
    assert run(r, "XREAD", "STREAMS", "other", "nokey", "le", "+", "+", "0") == [
        [b"other", [[b"7-0", [b"a", b"b"]]]], [b"le", whole(r, "le")]]
    assert run(r, "XREAD", "BLOCK", "0", "STREAMS", "other", "+") == [
        [b"other", [[b"7-0", [b"a", b"b"]]]]]


@pytest.mark.min_redis(7, 4)
def test_xread_plus_on_empty_or_missing_streams(r):
    # stream.tcl "XREAD last element from empty stream".
    assert run(r, "XREAD", "STREAMS", "le", "+") is None
    run(r, "XADD", "le", "1-0", "k1", "v1")
    run(r, "XDEL", "le", "1-0")
    assert run(r, "XREAD", "STREAMS", "le", "+") is None
    run(r, "XADD", "z", "MAXLEN", "0", "1", "f", "v")
    assert run(r, "XREAD", "STREAMS", "z", "le", "+", "+") is None


@pytest.fixture
def three(r: redis.Redis) -> redis.Redis:
    """Streams s1, s2, s3 with three entries each."""
    for key in ("s1", "s2", "s3"):
        for i in range(1, 4):
            run(r, "XADD", key, f"{i}-0", "k", f"{key}:{i}")
    return r


def entries_of(key: str, *numbers: int) -> list[object]:
    return [[f"{i}-0".encode(), [b"k", f"{key}:{i}".encode()]] for i in numbers]


@pytest.mark.min_redis(8, 10)
def test_xread_maxcount_is_cumulative(three):
    # Redis PR #15282 / redis.io XREAD: COUNT per stream, MAXCOUNT for the whole reply,
    # streams filled in the order given (jedis#4627 example: 2 from s1, 1 from s2, s3 skipped).
    assert run(three, "XREAD", "COUNT", "2", "MAXCOUNT", "3", "STREAMS", "s1", "s2", "s3",
               "0", "0", "0") == [[b"s1", entries_of("s1", 1, 2)], [b"s2", entries_of("s2", 1)]]
    assert run(three, "XREAD", "MAXCOUNT", "4", "STREAMS", "s1", "s2", "s3", "0", "0", "0") == [
        [b"s1", entries_of("s1", 1, 2, 3)], [b"s2", entries_of("s2", 1)]]
    assert run(three, "XREAD", "MAXCOUNT", "100", "STREAMS", "s1", "s2", "2", "0") == [
        [b"s1", entries_of("s1", 3)], [b"s2", entries_of("s2", 1, 2, 3)]]
    assert run(three, "XREAD", "MAXCOUNT", "5", "STREAMS", "s1", "3") is None


@pytest.mark.min_redis(8, 10)
def test_xread_maxsize_returns_at_least_one_entry(three):
    # Redis PR #15282: MAXSIZE is a soft cap on the reply's bytes; the first entry is always
    # served so that a reader makes progress, and an empty reply stays empty.
    assert run(three, "XREAD", "MAXSIZE", "1", "STREAMS", "s1", "s2", "0", "0") == [
        [b"s1", entries_of("s1", 1)]]
    assert run(three, "XREAD", "MAXSIZE", "1000000", "STREAMS", "s1", "s2", "0", "0") == [
        [b"s1", entries_of("s1", 1, 2, 3)], [b"s2", entries_of("s2", 1, 2, 3)]]
    assert run(three, "XREAD", "MAXSIZE", "1", "STREAMS", "s1", "3") is None


# ---------------------------------------------------------------------------------------------
# The key: TYPE, OBJECT ENCODING, DEL, RENAME, COPY, expiry
# ---------------------------------------------------------------------------------------------


def test_type_encoding_del(r):
    run(r, "XADD", "s", "1-1", "a", "1")
    assert r.type("s") == b"stream"
    assert run(r, "OBJECT", "ENCODING", "s") == b"stream"
    assert r.delete("s") == 1
    assert (r.exists("s"), r.xlen("s")) == (0, 0)
    assert run(r, "XADD", "s", "1-1", "a", "1") == b"1-1"  # a new stream, a new last ID


def test_rename(r):
    run(r, "XADD", "s", "1-1", "a", "1")
    assert r.rename("s", "s2") is True
    assert r.exists("s") == 0
    assert run(r, "XRANGE", "s2", "-", "+") == [[b"1-1", [b"a", b"1"]]]
    assert error_of(r, "XADD", "s2", "1-1", "a", "1") == XADD_SMALLER


def test_copy_is_independent(r, nodes_of_10):
    add_many(r, "s", 25)
    assert r.copy("s", "c") == 1
    assert run(r, "XRANGE", "c", "-", "+") == run(r, "XRANGE", "s", "-", "+")
    run(r, "XADD", "c", "26", "f", "copy")
    run(r, "XDEL", "c", "3-0")
    run(r, "XTRIM", "c", "MAXLEN", "~", "5")
    run(r, "XADD", "s", "26", "f", "orig")
    assert r.xlen("s") == 26
    assert run(r, "XRANGE", "s", "20", "+") == [
        [f"{i}-0".encode(), [b"f", str(i).encode()]] for i in range(20, 26)] + [
        [b"26-0", [b"f", b"orig"]]]
    assert run(r, "XRANGE", "c", "26", "+") == [[b"26-0", [b"f", b"copy"]]]
    assert xinfo(r, "s")[b"max-deleted-entry-id"] == b"0-0"
    assert xinfo(r, "c")[b"max-deleted-entry-id"] == b"3-0"


def test_copy_of_an_empty_stream(r):
    run(r, "XADD", "s", "1-1", "a", "1")
    r.xdel("s", "1-1")
    assert r.copy("s", "c") == 1
    info = xinfo(r, "c")
    assert (info[b"length"], info[b"last-generated-id"], info[b"max-deleted-entry-id"]) == (
        0, b"1-1", b"1-1")
    assert error_of(r, "XADD", "c", "1-1", "x", "y") == XADD_SMALLER


def test_expired_stream(r):
    run(r, "XADD", "s", "5-5", "a", "1")
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    assert r.pexpire("s", 1) is True
    time.sleep(0.02)
    assert r.xlen("s") == 0
    assert run(r, "XRANGE", "s", "-", "+") == []
    assert error_of(r, "XINFO", "STREAM", "s") == "no such key"
    assert run(r, "XADD", "s", "1-1", "x", "y") == b"1-1"  # the old last ID went with the key
    assert r.ttl("s") == -1


def test_expire_in_the_past_deletes(r):
    run(r, "XADD", "s", "1-1", "a", "1")
    assert r.pexpireat("s", 1000) is True
    assert r.exists("s") == 0


# ---------------------------------------------------------------------------------------------
# MULTI/EXEC, WATCH, dirty counter
# ---------------------------------------------------------------------------------------------


def test_multi_exec(raw):
    assert raw.call("MULTI") == b"OK"
    for command in (("XADD", "m", "1", "a", "b"), ("XADD", "m", "1", "a", "b"), ("XLEN", "m")):
        assert raw.call(*command) == b"QUEUED"
    reply = raw.call("EXEC")
    assert isinstance(reply, list) and len(reply) == 3
    assert reply[0] == b"1-0" and reply[2] == 1
    assert str(reply[1]) == f"ERR {XADD_SMALLER}"
    assert raw.call("MULTI") == b"OK"
    assert str(raw.call("XADD", "m")) == "ERR wrong number of arguments for 'xadd' command"
    assert str(raw.call("EXEC")) == "EXECABORT Transaction discarded because of previous errors."


@pytest.mark.parametrize("command", [
    ("XADD", "w", "*", "f", "v"), ("XADD", "w", "NOMKSTREAM", "9", "f", "v"),
    ("XADD", "w", "MAXLEN", "0", "9", "f", "v"), ("XDEL", "w", "1-0"),
    ("XTRIM", "w", "MAXLEN", "1"), ("XTRIM", "w", "MINID", "~", "9"),
])
def test_watch_is_invalidated_by_writes(server, command):
    watcher, other = server.client(), server.client()
    run(other, "XADD", "w", "1", "f", "v")
    run(other, "XADD", "w", "2", "f", "v")
    with watcher.pipeline() as pipe:
        pipe.watch("w")
        run(other, *command)
        pipe.multi()
        pipe.xlen("w")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    watcher.close()
    other.close()


@pytest.mark.parametrize("command", [
    ("XADD", "w", "1", "f", "v"), ("XADD", "nokey", "NOMKSTREAM", "*", "f", "v"),
    ("XDEL", "w", "9-0"), ("XTRIM", "w", "MAXLEN", "5"), ("XTRIM", "w", "MINID", "1"),
    ("XLEN", "w"), ("XRANGE", "w", "-", "+"), ("XREAD", "STREAMS", "w", "0"),
    ("XINFO", "STREAM", "w"), ("XSETID", "w", "1"),
    # XSETID changes the stream but does not signal the key (no signalModifiedKey in 7.0.15).
    ("XSETID", "w", "5"), ("XSETID", "w", "2-0", "ENTRIESADDED", "9"),
])
def test_watch_survives_non_writes(server, command):
    watcher, other = server.client(), server.client()
    run(other, "XADD", "w", "1", "f", "v")
    run(other, "XADD", "w", "2", "f", "v")
    with watcher.pipeline() as pipe:
        pipe.watch("w")
        with contextlib.suppress(redis.ResponseError):
            run(other, *command)  # failed writes (an XADD with an old ID, ...) change nothing
        pipe.multi()
        pipe.xlen("w")
        assert pipe.execute() == [2]
    watcher.close()
    other.close()


@pytest.mark.parametrize(("command", "changes"), [
    (("XADD", "d", "9", "f", "v"), 1),
    (("XADD", "d", "MAXLEN", "1", "9", "f", "v"), 1),  # trimming adds nothing to the count
    (("XADD", "nokey", "NOMKSTREAM", "*", "f", "v"), 0),
    (("XADD", "d", "1", "f", "v"), 0),
    (("XDEL", "d", "1", "2", "99"), 2),
    (("XDEL", "d", "99"), 0),
    (("XTRIM", "d", "MAXLEN", "1"), 3),
    (("XTRIM", "d", "MAXLEN", "10"), 0),
    (("XSETID", "d", "100"), 1),
    (("XSETID", "d", "4"), 1),  # even when nothing changes
    (("XSETID", "d", "1"), 0),
])
def test_dirty_counter(r, command, changes):
    add_many(r, "d", 4)
    before = int(r.info("persistence")["rdb_changes_since_last_save"])
    with contextlib.suppress(redis.ResponseError):
        run(r, *command)
    assert int(r.info("persistence")["rdb_changes_since_last_save"]) - before == changes


# ---------------------------------------------------------------------------------------------
# KEEPREF | DELREF | ACKED and XDELEX (Redis 8.2): the parts that need no consumer group
# ---------------------------------------------------------------------------------------------


@pytest.mark.min_redis(8, 2)
@pytest.mark.parametrize("policy", ["KEEPREF", "DELREF", "ACKED", "keepref"])
def test_ref_policies_without_groups_trim_normally(r, policy):
    # docs xadd.md / xtrim.md: the policy only changes what happens to consumer-group
    # references; with no group every entry counts as acknowledged (stream.tcl "XADD with
    # MAXLEN option and ACKED option" trims once all groups have acked).
    add_many(r, "s", 5)
    assert run(r, "XADD", "s", policy, "MAXLEN", "3", "6", "f", "v") == b"6-0"
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"4-0", b"5-0", b"6-0"]
    assert run(r, "XTRIM", "s", "MAXLEN", "=", "2", policy) == 1
    assert run(r, "XTRIM", "s", "MINID", "6", policy) == 1
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"6-0"]
    assert run(r, "XADD", "s", "MAXLEN", "1", policy, "7", "f", "v") == b"7-0"  # any order
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"7-0"]


@pytest.mark.min_redis(8, 2)
def test_xdelex(r, raw):
    add_many(r, "s", 3)
    # docs xdelex.md: 1 deleted, -1 no such entry.
    assert run(r, "XDELEX", "s", "IDS", "3", "1-0", "5-0", "3") == [1, -1, 1]
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"2-0"]
    assert xinfo(r, "s")[b"max-deleted-entry-id"] == b"3-0"
    assert call(raw, "XDELEX", "s", "IDS", "2", "2-0", "2-0") == b"*2\r\n:1\r\n:-1\r\n"
    assert (r.exists("s"), r.xlen("s")) == (1, 0)
    # stream.tcl "XDELEX should return empty array when key doesn't exist".
    assert run(r, "XDELEX", "nokey", "IDS", "2", "1-1", "2-2") == [-1, -1]


@pytest.mark.min_redis(8, 2)
@pytest.mark.parametrize("policy", ["KEEPREF", "DELREF", "ACKED"])
def test_xdelex_policies_without_groups(r, policy):
    add_many(r, "s", 3)
    assert run(r, "XDELEX", "s", policy, "IDS", "2", "1-0", "9-0") == [1, -1]
    # docs xdelex.md: "The IDS block can be at any position in the command".
    assert run(r, "XDELEX", "s", "IDS", "1", "2-0", policy) == [1]
    assert ids(run(r, "XRANGE", "s", "-", "+")) == [b"3-0"]


@pytest.mark.min_redis(8, 2)
@pytest.mark.parametrize(("args", "message"), [
    # stream.tcl "XDELEX IDS parameter validation" and "KEEPREF/DELREF/ACKED parameter
    # validation" (texts from the same tests).
    (["IDS", "abc", "1-1"], "Number of IDs must be a positive integer"),
    (["IDS", "0", "1-1"], "Number of IDs must be a positive integer"),
    (["IDS", "-5", "1-1"], "Number of IDs must be a positive integer"),
    (["IDS", "3", "1-1", "2-2"], "The `numids` parameter must match the number of arguments"),
    (["IDS", "1", "1-1", "2-2"], "syntax error"),
    (["KEEPREF", "DELREF", "IDS", "1", "1-1"], "syntax error"),
    (["KEEPREF", "ACKED", "IDS", "1", "1-1"], "syntax error"),
    (["ACKED", "DELREF", "IDS", "1", "1-1"], "syntax error"),
    (["BOGUS", "IDS", "1", "1-1"], "syntax error"),
    # IDs are parsed strictly, as XDEL does.
    (["IDS", "1", "not-an-id"], INVALID_ID),
    (["IDS", "2", "1-1", "+"], INVALID_ID),
])
def test_xdelex_errors(r, args, message):
    add_many(r, "s", 2)
    assert error_of(r, "XDELEX", "s", *args) == message
    assert r.xlen("s") == 2


@pytest.mark.min_redis(8, 2)
def test_xdelex_arity_and_wrong_type(r):
    message = "wrong number of arguments for 'xdelex' command"
    assert error_of(r, "XDELEX", "s", "DELREF") == message
    assert error_of(r, "XDELEX", "s", "IDS", "1") == message
    r.set("str", "v")
    assert error_of(r, "XDELEX", "str", "IDS", "1", "1-1") == WRONGTYPE


# ---------------------------------------------------------------------------------------------
# Idempotent production: IDMP / IDMPAUTO, XCFGSET (Redis 8.6)
# ---------------------------------------------------------------------------------------------


@pytest.mark.min_redis(8, 6)
def test_idmp_duplicate_returns_the_original_id(r):
    # stream.tcl "XADD IDMP duplicate request returns same ID".
    first = run(r, "XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "100", "currency",
                "USD")
    again = run(r, "XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "200", "currency",
                "EUR")
    assert isinstance(first, bytes) and re.fullmatch(rb"\d+-\d+", first)
    assert again == first
    assert run(r, "XRANGE", "s", "-", "+") == [[first, [b"amount", b"100", b"currency", b"USD"]]]
    binary = b"\x00\x01\x02\xff"
    assert run(r, "XADD", "s", "IDMP", binary, binary, "*", "f", "1") == run(
        r, "XADD", "s", "IDMP", binary, binary, "*", "f", "2")
    assert r.xlen("s") == 2


@pytest.mark.min_redis(8, 6)
def test_idmp_producers_and_iids_are_separate(r):
    a = run(r, "XADD", "s", "IDMP", "producer1", "req-123", "*", "field", "from-p1")
    b = run(r, "XADD", "s", "IDMP", "producer2", "req-123", "*", "field", "from-p2")
    c = run(r, "XADD", "s", "IDMP", "producer1", "req-124", "*", "field", "next")
    assert len({a, b, c}) == 3
    assert run(r, "XADD", "s", "IDMP", "producer2", "req-123", "*", "field", "dup") == b
    assert r.xlen("s") == 3

@pytest.mark.min_redis(8, 6)
def test_idmp_in_any_spelling_and_position_is_one_history(r):
    # The plain ``IDMP p iid *`` form and the same option spelt or placed otherwise share
    # one history and one set of counters.
    first = run(r, "XADD", "s", "IDMP", "p", "req-1", "*", "f", "1")
    assert run(r, "XADD", "s", "idmp", "p", "req-1", "*", "f", "2") == first
    assert run(r, "XADD", "s", "MAXLEN", "100", "IDMP", "p", "req-1", "*", "f", "3") == first
    second = run(r, "xadd", "s", "IdMp", "p", "req-2", "*", "f", "4")
    assert run(r, "XADD", "s", "IDMP", "p", "req-2", "*", "f", "5") == second
    info = dict(zip(*[iter(run(r, "XINFO", "STREAM", "s"))] * 2, strict=True))
    assert (info[b"iids-added"], info[b"iids-duplicates"], info[b"length"]) == (2, 3, 2)
    assert error_of(r, "XADD", "s", "IDMP", "p", "req-3", "*", "f") == (
        "wrong number of arguments for 'xadd' command")
    r.set("str", "x")
    assert error_of(r, "XADD", "str", "IDMP", "p", "req-1", "*", "f", "v") == WRONGTYPE



@pytest.mark.min_redis(8, 6)
def test_idmpauto_dedups_identical_content(r):
    # stream.tcl "XADD IDMPAUTO ... deduplication based on field-value pairs", "regardless of
    # field order", "field names matter", "multiple producers have isolated namespaces".
    first = run(r, "XADD", "s", "IDMPAUTO", "p1", "*", "f1", "a", "f2", "b")
    assert run(r, "XADD", "s", "IDMPAUTO", "p1", "*", "f2", "b", "f1", "a") == first
    assert run(r, "XADD", "s", "IDMPAUTO", "p1", "*", "f1", "a", "f2", "x") != first
    assert run(r, "XADD", "s", "IDMPAUTO", "p1", "*", "g1", "a", "f2", "b") != first
    assert run(r, "XADD", "s", "IDMPAUTO", "p2", "*", "f1", "a", "f2", "b") != first
    empty = run(r, "XADD", "s", "IDMPAUTO", "p1", "*", "field", "")
    assert run(r, "XADD", "s", "IDMPAUTO", "p1", "*", "field", "") == empty
    assert r.xlen("s") == 5


@pytest.mark.min_redis(8, 6)
@pytest.mark.parametrize(("options", "message"), [
    # stream.tcl "XADD IDMP with invalid syntax" / "XADD IDMPAUTO with invalid syntax".
    (["IDMP", "p1", "*"], INVALID_ID),  # "*" is the iid, "f" is then taken for the ID
    (["IDMP", "p1", "iid1", "1-1"], "IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (["IDMPAUTO", "p1", "1-1"], "IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (["IDMP", "p1", "iid1", "IDMP", "p2", "iid2", "*"], "IDMP/IDMPAUTO specified multiple times"),
    (["IDMPAUTO", "p1", "IDMP", "p2", "iid2", "*"], "IDMP/IDMPAUTO specified multiple times"),
    (["IDMPAUTO", "p1", "IDMPAUTO", "p2", "*"], "IDMP/IDMPAUTO specified multiple times"),
    (["IDMP", "p1", "iid1", "IDMPAUTO", "p2", "*"], "IDMP/IDMPAUTO specified multiple times"),
    (["IDMP", "", "iid1", "*"], "IDMP requires a non-empty producer ID"),
    (["IDMP", "p1", "", "*"], "IDMP requires a non-empty idempotent ID"),
    (["IDMPAUTO", "", "*"], "IDMPAUTO requires a non-empty producer ID"),
])
def test_idmp_errors(r, options, message):
    assert error_of(r, "XADD", "s", *options, "f", "v") == message
    assert r.exists("s") == 0


@pytest.mark.min_redis(8, 6)
def test_idmp_with_other_options(r):
    # stream.tcl "XADD IDMP argument order variations", "... with NOMKSTREAM option",
    # "... with combined options".
    assert run(r, "XADD", "s", "NOMKSTREAM", "IDMP", "p1", "req-1", "*", "f", "v") is None
    assert r.exists("s") == 0
    first = run(r, "XADD", "s", "IDMP", "p1", "req-1", "KEEPREF", "MAXLEN", "~", "1000", "LIMIT",
                "10", "*", "field1", "value1", "field2", "value2")
    assert run(r, "XADD", "s", "IDMP", "p1", "req-1", "KEEPREF", "MAXLEN", "~", "1000", "LIMIT",
               "10", "*", "field3", "value3") == first
    second = run(r, "XADD", "s", "MAXLEN", "~", "100", "IDMP", "p1", "req-2", "*", "f", "v")
    third = run(r, "XADD", "s", "NOMKSTREAM", "IDMPAUTO", "p1", "MAXLEN", "~", "100", "*", "f", "v")
    fourth = run(r, "XADD", "s", "IDMPAUTO", "p2", "KEEPREF", "*", "f", "v")
    assert len({first, second, third, fourth}) == 4
    assert r.xlen("s") == 4


@pytest.mark.min_redis(8, 6)
def test_idmp_in_multi(r):
    # stream.tcl "XADD IDMP pipelined requests".
    with r.pipeline(transaction=True) as pipe:
        pipe.execute_command("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
        pipe.execute_command("XADD", "s", "IDMP", "p1", "req-2", "*", "field", "value2")
        pipe.execute_command("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value3")
        first, second, dup = pipe.execute()
    assert dup == first != second
    assert r.xlen("s") == 2


@pytest.mark.min_redis(8, 6)
def test_idmp_xinfo_counters(r):
    # stream.tcl "XINFO STREAM returns iids-tracked and iids-added fields", "... iids-duplicates
    # is lifetime counter", "... returns pids-tracked field", "XINFO STREAM shows default IDMP
    # parameters".
    run(r, "XADD", "s", "*", "field", "value")
    counters = [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
                b"iids-added", b"iids-duplicates"]

    def state() -> list[object]:
        info = xinfo(r, "s")
        return [info[name] for name in counters]

    assert state() == [100, 100, 0, 0, 0, 0]
    run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    run(r, "XADD", "s", "IDMP", "p1", "req-2", "*", "f", "v")
    assert state() == [100, 100, 1, 2, 2, 0]
    run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "f", "dup")
    run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "f", "dup")
    run(r, "XADD", "s", "IDMPAUTO", "p2", "*", "f", "v")
    assert state() == [100, 100, 2, 3, 3, 2]
    full = xinfo(r, "s", "FULL")
    assert [full[name] for name in counters] == [100, 100, 2, 3, 3, 2]


@pytest.mark.min_redis(8, 6)
def test_idmp_maxsize_evicts_the_oldest(r):
    # stream.tcl "XIDMP set evicts entries when MAXSIZE is reached" and "XINFO STREAM
    # iids-added is lifetime counter even after eviction".
    run(r, "XADD", "s", "IDMP", "p1", "init", "*", "field", "init")
    assert run(r, "XCFGSET", "s", "IDMP-MAXSIZE", "3", "IDMP-DURATION", "60") == b"OK"
    added = [run(r, "XADD", "s", "IDMP", "p1", f"req-{i}", "*", "field", f"v{i}")
             for i in (1, 2, 3)]
    for i, entry_id in enumerate(added, 1):
        assert run(r, "XADD", "s", "IDMP", "p1", f"req-{i}", "*", "field", "dup") == entry_id
    run(r, "XADD", "s", "IDMP", "p1", "req-4", "*", "field", "v4")
    assert run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "field", "new") != added[0]
    assert run(r, "XADD", "s", "IDMP", "p1", "req-3", "*", "field", "dup2") == added[2]
    assert r.xlen("s") == 6
    info = xinfo(r, "s")
    assert (info[b"idmp-maxsize"], info[b"idmp-duration"], info[b"iids-tracked"]) == (3, 60, 3)
    assert info[b"iids-added"] == 6  # init, req-1..4, req-1 again


@pytest.mark.min_redis(8, 6)
def test_xcfgset(r, raw):
    run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value")
    assert call(raw, "XCFGSET", "s", "IDMP-DURATION", "5") == b"+OK\r\n"
    assert run(r, "XCFGSET", "s", "IDMP-MAXSIZE", "5000") == b"OK"
    assert (xinfo(r, "s")[b"idmp-duration"], xinfo(r, "s")[b"idmp-maxsize"]) == (5, 5000)
    assert run(r, "XCFGSET", "s", "idmp-duration", "86400", "idmp-maxsize", "1") == b"OK"
    assert (xinfo(r, "s")[b"idmp-duration"], xinfo(r, "s")[b"idmp-maxsize"]) == (86400, 1)
    assert run(r, "XCFGSET", "s", "IDMP-DURATION", "1", "IDMP-MAXSIZE", "10000") == b"OK"
    assert (xinfo(r, "s")[b"idmp-duration"], xinfo(r, "s")[b"idmp-maxsize"]) == (1, 10000)


@pytest.mark.min_redis(8, 6)
@pytest.mark.parametrize(("args", "message"), [
    # Range texts as real Redis 8.6 gives them (fakeredis's
    # test_xinfo_stream_idempotent_fields_config, which runs against Redis; Jedis and Lettuce
    # validate client-side with the same words).
    (["IDMP-DURATION", "0"], "IDMP-DURATION must be between 1 and 86400 seconds"),
    (["IDMP-DURATION", "86401"], "IDMP-DURATION must be between 1 and 86400 seconds"),
    (["IDMP-DURATION", "-100"], "IDMP-DURATION must be between 1 and 86400 seconds"),
    (["IDMP-MAXSIZE", "0"], "IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (["IDMP-MAXSIZE", "10001"], "IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (["idmp-maxsize", "-1"], "IDMP-MAXSIZE must be between 1 and 10000 entries"),
    # stream.tcl "XCFGSET invalid syntax".
    (["IDMP-DURATION"], "syntax error"),
    (["IDMP-MAXSIZE"], "syntax error"),
    (["INVALID"], "syntax error"),
    (["IDMP-DURATION", "A"], NOT_INTEGER),
    (["IDMP-DURATION", "3.14"], NOT_INTEGER),
    (["IDMP-DURATION", "120-5"], NOT_INTEGER),
    (["IDMP-DURATION", "000000000"], NOT_INTEGER),
    (["IDMP-DURATION", "IDMP-DURATION", "IDMP-DURATION"], NOT_INTEGER),
    (["IDMP-MAXSIZE", "+"], NOT_INTEGER),
    (["IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"], NOT_INTEGER),
])
def test_xcfgset_errors(r, args, message):
    run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value")
    assert error_of(r, "XCFGSET", "s", *args) == message
    assert (xinfo(r, "s")[b"idmp-duration"], xinfo(r, "s")[b"idmp-maxsize"]) == (100, 100)


@pytest.mark.min_redis(8, 6)
def test_xcfgset_key_errors(r):
    # docs xcfgset.md and stream.tcl "XCFGSET error on non-existent stream".
    assert error_of(r, "XCFGSET", "nokey", "IDMP-DURATION", "5") == "no such key"
    r.set("str", "v")
    assert error_of(r, "XCFGSET", "str", "IDMP-DURATION", "5") == WRONGTYPE  # docs xcfgset.md
    run(r, "XADD", "s", "*", "f", "v")
    # stream.tcl only checks the start ("ERR At least one parameter*"); the rest is unknown.
    assert error_of(r, "XCFGSET", "s").startswith("At least one parameter")
    assert error_of(r, "XCFGSET") == "wrong number of arguments for 'xcfgset' command"


@pytest.mark.min_redis(8, 6)
def test_xcfgset_clears_history_only_when_a_value_changes(r):
    # stream.tcl "XCFGSET changing IDMP-DURATION clears all iids history", "... setting same
    # IDMP-DURATION does not clear iids history", "XCFGSET clears all producer histories".
    first = run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
    run(r, "XADD", "s", "IDMP", "p2", "req-1", "*", "field", "value2")
    assert run(r, "XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100") == b"OK"
    assert run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "field", "dup") == first
    info = xinfo(r, "s")
    assert [info[b"pids-tracked"], info[b"iids-tracked"], info[b"iids-added"]] == [2, 2, 2]
    assert run(r, "XCFGSET", "s", "IDMP-DURATION", "60") == b"OK"
    info = xinfo(r, "s")
    assert [info[b"pids-tracked"], info[b"iids-tracked"], info[b"iids-added"]] == [0, 0, 2]
    assert info[b"iids-duplicates"] == 1  # a lifetime counter
    again = run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "field", "new")
    assert again != first
    assert run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "field", "dup") == again
    assert r.xlen("s") == 3


@pytest.mark.min_redis(8, 6)
def test_idmp_server_defaults_leave_a_streams_history_alone(r, set_config):
    # Changing the server-wide defaults is not XCFGSET: a stream already deduplicating keeps
    # its settings and every ID it remembers; a stream that starts now takes the new ones.
    first = run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    run(r, "XADD", "s", "IDMP", "p1", "req-2", "*", "f", "v")
    set_config("stream-idmp-duration", 5)
    set_config("stream-idmp-maxsize", 1)
    assert run(r, "XADD", "s", "IDMP", "p1", "req-1", "*", "f", "dup") == first
    info = xinfo(r, "s")
    assert [info[name] for name in (b"idmp-duration", b"idmp-maxsize", b"iids-tracked")] \
        == [100, 100, 2]
    run(r, "XADD", "t", "IDMP", "p1", "a", "*", "f", "v")
    assert (xinfo(r, "t")[b"idmp-duration"], xinfo(r, "t")[b"idmp-maxsize"]) == (5, 1)


@pytest.mark.min_redis(8, 6)
def test_idmp_server_configs(r, set_config):
    # stream.tcl "CONFIG SET stream-idmp-duration and stream-idmp-maxsize validation"; the
    # error layout is Redis's for every bounded numeric config.
    assert run(r, "CONFIG", "GET", "stream-idmp-*") == [
        b"stream-idmp-duration", b"100", b"stream-idmp-maxsize", b"100"]
    for name, bad, bounds in (("stream-idmp-duration", "86401", "1 and 86400"),
                              ("stream-idmp-duration", "0", "1 and 86400"),
                              ("stream-idmp-maxsize", "10001", "1 and 10000"),
                              ("stream-idmp-maxsize", "-1", "1 and 10000")):
        assert error_of(r, "CONFIG", "SET", name, bad) == (
            f"CONFIG SET failed (possibly related to argument '{name}') - argument must be "
            f"between {bounds} inclusive")
    set_config("stream-idmp-duration", 86400)
    set_config("stream-idmp-maxsize", 1)
    assert run(r, "CONFIG", "GET", "stream-idmp-*") == [
        b"stream-idmp-duration", b"86400", b"stream-idmp-maxsize", b"1"]
