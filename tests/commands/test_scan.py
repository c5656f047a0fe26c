"""SCAN and HSCAN: options, errors, cursor parsing, and the iteration guarantees under
concurrent modification (parity with Redis), plus the ScanIndex cursor walk itself."""

from __future__ import annotations

import random

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from brook.types.scanindex import ScanIndex
from tests.conftest import redis_cli


def full_scan(r: redis.Redis, **options: object) -> list[bytes]:
    """Every key one complete SCAN iteration returns (duplicates kept)."""
    seen: list[bytes] = []
    cursor = 0
    while True:
        cursor, batch = r.scan(cursor, **options)
        seen.extend(batch)
        if cursor == 0:
            return seen


def full_hscan(r: redis.Redis, key: str, **options: object) -> dict[bytes, bytes]:
    found: dict[bytes, bytes] = {}
    cursor = 0
    while True:
        cursor, batch = r.hscan(key, cursor, **options)
        found.update(batch)
        if cursor == 0:
            return found


def fill(r: redis.Redis, count: int, prefix: str = "key:") -> set[bytes]:
    pipe = r.pipeline(transaction=False)
    for i in range(count):
        pipe.set(f"{prefix}{i}", i)
    pipe.execute()
    return {f"{prefix}{i}".encode() for i in range(count)}


# -- SCAN -------------------------------------------------------------------------------------------


def test_scan_empty_database(raw) -> None:
    assert raw.request(b"SCAN 0\r\n") == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_scan_returns_every_key_and_ends_with_zero(r) -> None:
    keys = fill(r, 1000)
    seen = full_scan(r, count=7)
    assert set(seen) == keys


def test_scan_small_database_in_one_call(r) -> None:
    r.mset({"a": 1, "b": 2, "c": 3})
    cursor, batch = r.scan(0)
    assert cursor == 0
    assert sorted(batch) == [b"a", b"b", b"c"]


def test_scan_count_is_a_small_hint(r) -> None:
    """A call does a bounded amount of work: it returns about COUNT keys, not the database."""
    fill(r, 5000)
    cursor, batch = r.scan(0, count=10)
    assert cursor != 0
    assert 0 < len(batch) < 100
    cursor, batch = r.scan(0, count=1000)
    assert 500 <= len(batch) < 2000


def test_scan_match(r) -> None:
    fill(r, 300, "user:")
    fill(r, 300, "order:")
    assert set(full_scan(r, match="user:1*", count=50)) == {
        f"user:{i}".encode() for i in range(300) if str(i).startswith("1")
    }
    assert full_scan(r, match="nothing*") == []


def test_scan_match_star_includes_empty_name(r) -> None:
    r.set("", "empty")
    r.set("x", "1")
    assert sorted(full_scan(r, match="*")) == [b"", b"x"]
    assert full_scan(r, match="**") == [b"x"]  # stringmatchlen never matches ""
    assert sorted(full_scan(r)) == [b"", b"x"]


def test_scan_type_filter(r) -> None:
    r.set("s1", "v")
    r.set("s2", "v")
    r.hset("h1", "f", "v")
    assert sorted(full_scan(r, _type="string")) == [b"s1", b"s2"]
    assert full_scan(r, _type="HASH") == [b"h1"]  # case-insensitive
    assert full_scan(r, _type="list") == []
    assert full_scan(r, _type="nosuchtype") == []
    assert full_scan(r, _type="string", match="*2") == [b"s2"]


def test_scan_skips_expired_keys(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("live", "1")
    r.set("gone", "1", px=1)
    r.execute_command("DEBUG", "SLEEP", "0.01")
    assert r.dbsize() == 2  # not reclaimed yet
    assert full_scan(r) == [b"live"]
    assert r.dbsize() == 1  # SCAN deleted the expired key it met


def test_scan_only_sees_the_selected_database(server) -> None:
    zero = server.client(db=0)
    one = server.client(db=1)
    zero.set("in-zero", 1)
    one.set("in-one", 1)
    assert full_scan(zero) == [b"in-zero"]
    assert full_scan(one) == [b"in-one"]


def test_scan_option_errors(raw) -> None:
    syntax = b"-ERR syntax error\r\n"
    assert raw.request(b"SCAN 0 COUNT 0\r\n") == syntax
    assert raw.request(b"SCAN 0 COUNT -1\r\n") == syntax
    assert raw.request(b"SCAN 0 COUNT\r\n") == syntax
    assert raw.request(b"SCAN 0 MATCH\r\n") == syntax
    assert raw.request(b"SCAN 0 TYPE\r\n") == syntax
    assert raw.request(b"SCAN 0 FOO bar\r\n") == syntax
    assert raw.request(b"SCAN 0 COUNT abc\r\n") == b"-ERR value is not an integer or out of range\r\n"
    assert raw.request(b"SCAN 0 COUNT 99999999999999999999\r\n") == (
        b"-ERR value is not an integer or out of range\r\n"
    )
    assert raw.request(b"SCAN\r\n") == b"-ERR wrong number of arguments for 'scan' command\r\n"


def test_scan_options_in_any_order_and_repeated(r) -> None:
    fill(r, 20)
    cursor, batch = r.execute_command("SCAN", 0, "count", 5, "MATCH", "key:1*", "COUNT", 1000,
                                      "match", "key:1?")
    assert int(cursor) == 0
    assert sorted(batch) == sorted(f"key:{i}".encode() for i in range(10, 20))


def test_scan_invalid_cursor(raw) -> None:
    invalid = b"-ERR invalid cursor\r\n"
    for cursor in (b"abc", b"1.5", b"18446744073709551616", b"1 ", b"0x10", b"+"):
        raw.send(b"*2\r\n$4\r\nSCAN\r\n$%d\r\n%s\r\n" % (len(cursor), cursor))
        assert raw.read(until=b"\r\n") == invalid, cursor


def test_scan_cursor_edges(raw) -> None:
    raw.request(b"SET k v\r\n")
    # The largest cursor and a leading '+' are accepted; a huge cursor just ends the walk.
    assert raw.request(b"SCAN 18446744073709551615\r\n").startswith(b"*2\r\n$1\r\n0\r\n")
    assert raw.request(b"SCAN +0\r\n") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n"
    assert raw.request(b"SCAN 00\r\n") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n"


@pytest.mark.min_redis(7, 4)
def test_scan_cursor_parsing_74(raw) -> None:
    """Since 7.4 the cursor is read by string2ull: negative numbers are refused, and strtoull's
    leading spaces are accepted; the empty string is no longer read as 0."""
    assert raw.request(b"SCAN -1\r\n") == b"-ERR invalid cursor\r\n"
    assert raw.request(b"*2\r\n$4\r\nSCAN\r\n$0\r\n\r\n") == b"-ERR invalid cursor\r\n"
    raw.send(b"*2\r\n$4\r\nSCAN\r\n$2\r\n 0\r\n")
    assert raw.read(until=b"*0\r\n") == b"*2\r\n$1\r\n0\r\n*0\r\n"


@pytest.mark.min_redis(7, 4)
def test_scan_novalues_is_hscan_only(raw) -> None:
    assert raw.request(b"SCAN 0 NOVALUES\r\n") == (
        b"-ERR NOVALUES option can only be used in HSCAN\r\n"
    )


def test_scan_resp3(raw) -> None:
    """The reply is the same two-element array in RESP3 (the cursor stays a bulk string)."""
    raw.request(b"SET a 1\r\n")
    raw.request(b"HELLO 3\r\n", until=b"modules")
    assert raw.request(b"SCAN 0\r\n") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n"
    raw.request(b"HSET h f v\r\n")
    assert raw.request(b"HSCAN h 0\r\n") == b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


# -- the guarantees ---------------------------------------------------------------------------------


def test_scan_survives_growth_during_iteration(r) -> None:
    """Keys present for the whole iteration are returned even while the table doubles
    several times between calls."""
    initial = fill(r, 500, "old:")
    seen: set[bytes] = set()
    cursor, added = 0, 0
    while True:
        cursor, batch = r.scan(cursor, count=10)
        seen.update(batch)
        if cursor == 0:
            break
        if added < 3000:  # (unbounded growth would outrun any iteration)
            fill_range(r, "new:", added, added + 20)
            added += 20
    assert initial <= seen
    assert added >= 1500  # the keyspace grew several times over while we iterated


def fill_range(r: redis.Redis, prefix: str, start: int, stop: int) -> None:
    pipe = r.pipeline(transaction=False)
    for i in range(start, stop):
        pipe.set(f"{prefix}{i}", i)
    pipe.execute()


def test_scan_survives_shrinking_during_iteration(r) -> None:
    """Deleting most keys mid-iteration (the table shrinks) loses none of the survivors."""
    fill(r, 4000, "k:")
    survivors = {f"k:{i}".encode() for i in range(0, 4000, 10)}
    doomed = [f"k:{i}" for i in range(4000) if i % 10]
    random.Random(7).shuffle(doomed)
    seen: set[bytes] = set()
    cursor = 0
    while True:
        cursor, batch = r.scan(cursor, count=20)
        seen.update(batch)
        if cursor == 0:
            break
        if doomed:
            r.delete(*doomed[:400])
            del doomed[:400]
    assert survivors <= seen


def test_scan_mixed_churn(r) -> None:
    """Random inserts and deletes between every call; stable keys are all returned, deleted
    ones never appear after their deletion was seen by the caller... at least once for the
    stable set, and nothing that never existed."""
    rng = random.Random(11)
    stable = fill(r, 800, "stable:")
    churn = [f"churn:{i}" for i in range(3000)]
    live: set[str] = set()
    seen: set[bytes] = set()
    cursor = 0
    while True:
        cursor, batch = r.scan(cursor, count=15)
        seen.update(batch)
        if cursor == 0:
            break
        pipe = r.pipeline(transaction=False)
        for _ in range(40):
            name = rng.choice(churn)
            if name in live:
                pipe.delete(name)
                live.discard(name)
            else:
                pipe.set(name, 1)
                live.add(name)
        pipe.execute()
    assert stable <= seen
    assert all(key.startswith((b"stable:", b"churn:")) for key in seen)


def test_scan_interleaved_iterations(r) -> None:
    """Two iterations in flight at once do not disturb each other (the cursor is the state)."""
    keys = fill(r, 600)
    first: set[bytes] = set()
    second: set[bytes] = set()
    cursor_a = cursor_b = 0
    done_a = done_b = False
    while not (done_a and done_b):
        if not done_a:
            cursor_a, batch = r.scan(cursor_a, count=13)
            first.update(batch)
            done_a = cursor_a == 0
        if not done_b:
            cursor_b, batch = r.scan(cursor_b, count=29)
            second.update(batch)
            done_b = cursor_b == 0
    assert first == keys
    assert second == keys


def test_scan_after_flush_and_swapdb(server) -> None:
    r = server.client()
    fill(r, 300)
    cursor, _ = r.scan(0, count=10)
    r.flushdb()
    fill(r, 50, "fresh:")
    assert set(full_scan(r)) == {f"fresh:{i}".encode() for i in range(50)}
    other = server.client(db=1)
    fill(other, 70, "other:")
    r.swapdb(0, 1)
    assert set(full_scan(r)) == {f"other:{i}".encode() for i in range(70)}
    assert set(full_scan(other)) == {f"fresh:{i}".encode() for i in range(50)}


def test_redis_cli_scan(server) -> None:
    r = server.client()
    fill(r, 250, "cli:")
    r.set("other", 1)
    result = redis_cli(server.port, "--scan", "--pattern", "cli:*")
    assert result.returncode == 0
    assert set(result.stdout.split()) == {f"cli:{i}".encode() for i in range(250)}


# -- HSCAN ------------------------------------------------------------------------------------------


def test_hscan_small_hash_whole_and_in_order(raw) -> None:
    raw.request(b"HSET h f1 v1 f2 v2 f3 v3\r\n")
    assert raw.request(b"HSCAN h 0\r\n") == (
        b"*2\r\n$1\r\n0\r\n*6\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf2\r\n$2\r\nv2\r\n"
        b"$2\r\nf3\r\n$2\r\nv3\r\n"
    )
    # COUNT does not split a small hash; MATCH filters it.
    assert raw.request(b"HSCAN h 0 COUNT 1 MATCH f2\r\n") == (
        b"*2\r\n$1\r\n0\r\n*2\r\n$2\r\nf2\r\n$2\r\nv2\r\n"
    )
    # Any cursor on a small hash returns it whole.
    assert raw.request(b"HSCAN h 12345 MATCH *3\r\n") == (
        b"*2\r\n$1\r\n0\r\n*2\r\n$2\r\nf3\r\n$2\r\nv3\r\n"
    )


def test_hscan_large_hash(r) -> None:
    mapping = {f"field:{i}": f"value:{i}" for i in range(1000)}
    r.hset("big", mapping=mapping)
    assert r.object("encoding", "big") == b"hashtable"
    cursor, batch = r.hscan("big", 0, count=10)
    assert cursor != 0 and 0 < len(batch) < 100
    found = full_hscan(r, "big", count=25)
    assert found == {k.encode(): v.encode() for k, v in mapping.items()}
    matched = full_hscan(r, "big", match="field:99*")
    assert set(matched) == {b"field:99"} | {f"field:99{i}".encode() for i in range(10)}


def test_hscan_large_hash_modified_during_iteration(r) -> None:
    r.hset("big", mapping={f"f{i}": i for i in range(1500)})
    stable = {f"f{i}".encode() for i in range(1500) if i % 3}
    seen: set[bytes] = set()
    cursor, round_ = 0, 0
    while True:
        cursor, batch = r.hscan("big", cursor, count=20)
        seen.update(batch)
        if cursor == 0:
            break
        round_ += 1
        r.hset("big", mapping={f"new{round_}-{j}": j for j in range(30)})
        r.hdel("big", *[f"f{i}" for i in range(round_ * 9, round_ * 9 + 9) if i % 3 == 0])
    assert stable <= seen


def test_hscan_missing_key_and_wrong_type(raw) -> None:
    raw.request(b"SET s v\r\n")
    assert raw.request(b"HSCAN nokey 0\r\n") == b"*2\r\n$1\r\n0\r\n*0\r\n"
    # A missing key answers before options are even parsed.
    assert raw.request(b"HSCAN nokey 0 FOO\r\n") == b"*2\r\n$1\r\n0\r\n*0\r\n"
    assert raw.request(b"HSCAN s 0\r\n") == (
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    )
    # The cursor is checked first of all.
    assert raw.request(b"HSCAN s abc\r\n") == b"-ERR invalid cursor\r\n"
    assert raw.request(b"HSCAN nokey abc\r\n") == b"-ERR invalid cursor\r\n"


def test_hscan_option_errors(raw) -> None:
    raw.request(b"HSET h f v\r\n")
    syntax = b"-ERR syntax error\r\n"
    assert raw.request(b"HSCAN h 0 TYPE string\r\n") == syntax
    assert raw.request(b"HSCAN h 0 COUNT 0\r\n") == syntax
    assert raw.request(b"HSCAN h 0 COUNT\r\n") == syntax
    assert raw.request(b"HSCAN h 0 MATCH\r\n") == syntax
    assert raw.request(b"HSCAN h 0 COUNT x\r\n") == b"-ERR value is not an integer or out of range\r\n"
    assert raw.request(b"HSCAN h\r\n") == b"-ERR wrong number of arguments for 'hscan' command\r\n"


@pytest.mark.min_redis(7, 4)
def test_hscan_novalues(raw) -> None:
    raw.request(b"HSET h f1 v1 f2 v2\r\n")
    assert raw.request(b"HSCAN h 0 NOVALUES\r\n") == (
        b"*2\r\n$1\r\n0\r\n*2\r\n$2\r\nf1\r\n$2\r\nf2\r\n"
    )
    assert raw.request(b"HSCAN h 0 novalues MATCH f2\r\n") == (
        b"*2\r\n$1\r\n0\r\n*1\r\n$2\r\nf2\r\n"
    )


@pytest.mark.min_redis(7, 4)
def test_hscan_novalues_large_hash(r) -> None:
    r.hset("big", mapping={f"f{i}": i for i in range(300)})
    fields: set[bytes] = set()
    cursor = 0
    while True:
        cursor, batch = r.hscan("big", cursor, no_values=True)
        fields.update(batch)
        if cursor == 0:
            break
    assert fields == {f"f{i}".encode() for i in range(300)}


# -- the cursor walk itself (pure data structure) ----------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    initial=st.integers(min_value=0, max_value=400),
    seed=st.integers(min_value=0, max_value=2**32),
    churn=st.integers(min_value=0, max_value=60),
)
def test_scan_index_guarantees(initial: int, seed: int, churn: int) -> None:
    """Whatever is added or removed between steps (growing and shrinking the table, with
    incremental rehashing in progress), every key present throughout is visited, the walk
    ends at cursor 0, and a walk without changes visits each key exactly once."""
    rng = random.Random(seed)
    present = {b"k%d" % i for i in range(initial)}
    index = ScanIndex(present, len(present))
    throughout = set(present)
    seen: set[bytes] = set()
    cursor, steps, fresh = 0, 0, 0
    while True:
        found: list[bytes] = []
        if rng.random() < 0.5:
            cursor = index.scan(cursor, found)  # one bucket (both tables while resizing)
        else:
            cursor = index.walk(cursor, rng.randrange(1, 20), found)  # one SCAN call
        assert set(found) <= present
        seen.update(found)
        steps += 1
        assert steps < 100_000
        if cursor == 0:
            break
        for _ in range(rng.randrange(churn + 1)):
            if present and rng.random() < 0.5:
                key = rng.choice(sorted(present))
                assert index.discard(key)
                present.discard(key)
                throughout.discard(key)
            else:
                key = b"n%d" % fresh
                fresh += 1
                index.add(key)
                present.add(key)
        assert len(index) == len(present)
    assert throughout <= seen
    walk: list[bytes] = []
    cursor = 0
    while True:
        cursor = index.scan(cursor, walk)
        if cursor == 0:
            break
    assert sorted(walk) == sorted(present)
    assert all(key in index for key in present)
    assert b"absent" not in index


def test_scan_index_random_key() -> None:
    keys = {b"k%d" % i for i in range(100)}
    index = ScanIndex(keys, len(keys))
    assert {index.random_key() for _ in range(3000)} == keys
    assert ScanIndex().random_key() is None
