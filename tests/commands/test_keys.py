"""Keyspace commands: DEL, UNLINK, EXISTS, TOUCH, TYPE, KEYS, RANDOMKEY, RENAME(NX), COPY, MOVE,
SWAPDB, DBSIZE, FLUSHDB/FLUSHALL, OBJECT, and WATCH invalidation (parity with Redis)."""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import help_footer, redis_cli

SYNTAX = b"-ERR syntax error\r\n"
NOT_INTEGER = b"-ERR value is not an integer or out of range\r\n"
OUT_OF_RANGE = b"-ERR DB index is out of range\r\n"
INT_RANGE = b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n"
SAME = b"-ERR source and destination objects are the same\r\n"


def stat(r: redis.Redis, section: str, name: str) -> int:
    return int(r.info(section)[name])


# -- DEL / UNLINK / EXISTS / TOUCH -----------------------------------------------------------------


@pytest.mark.parametrize("command", ["DEL", "UNLINK"])
def test_delete_counts_removed_keys(r, command: str) -> None:
    r.mset({"a": 1, "b": 2})
    r.hset("h", "f", "v")
    assert r.execute_command(command, "a", "a", "nokey", "h") == 2  # a duplicate counts once
    assert r.execute_command(command, "a") == 0
    assert r.keys() == [b"b"]


@pytest.mark.parametrize("command", [b"DEL", b"UNLINK", b"EXISTS", b"TOUCH"])
def test_multikey_arity(raw, command: bytes) -> None:
    assert raw.request(command + b"\r\n") == (
        b"-ERR wrong number of arguments for '%s' command\r\n" % command.lower()
    )


def test_del_of_expired_key_counts_zero(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("k", "v", px=1)
    time.sleep(0.01)
    assert r.delete("k") == 0
    assert r.dbsize() == 0


def test_exists_counts_duplicates(r) -> None:
    r.set("a", 1)
    r.hset("h", "f", "v")
    assert r.exists("a", "a", "a", "nokey", "h") == 4
    assert r.exists("nokey") == 0


def test_touch(r) -> None:
    r.set("a", 1)
    assert r.touch("a", "a", "nokey") == 2
    assert r.touch("nokey") == 0


def test_read_commands_count_keyspace_hits(r) -> None:
    r.set("k", "v")
    r.execute_command("CONFIG", "RESETSTAT")
    r.exists("k", "nokey")
    r.type("k")
    r.ttl("nokey")
    r.touch("k")
    r.object("encoding", "k")
    r.delete("k", "nokey")  # writes do not count
    assert stat(r, "stats", "keyspace_hits") == 4
    assert stat(r, "stats", "keyspace_misses") == 2


# -- TYPE / DBSIZE / KEYS / RANDOMKEY --------------------------------------------------------------


def test_type(raw) -> None:
    raw.request(b"SET s v\r\n")
    raw.request(b"HSET h f v\r\n")
    assert raw.request(b"TYPE s\r\n") == b"+string\r\n"
    assert raw.request(b"TYPE h\r\n") == b"+hash\r\n"
    assert raw.request(b"TYPE nokey\r\n") == b"+none\r\n"
    raw.request(b"APPEND s x\r\n")
    assert raw.request(b"TYPE s\r\n") == b"+string\r\n"
    raw.request(b"HELLO 3\r\n", until=b"modules")
    assert raw.request(b"TYPE h\r\n") == b"+hash\r\n"


def test_dbsize(r) -> None:
    assert r.dbsize() == 0
    r.mset({"a": 1, "b": 2})
    r.hset("h", "f", "v")
    assert r.dbsize() == 3
    r.delete("a")
    assert r.dbsize() == 2


def test_dbsize_counts_unreclaimed_expired_keys(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("k", "v", px=1)
    time.sleep(0.01)
    assert r.dbsize() == 1
    assert r.keys() == []


def test_keys(r) -> None:
    r.mset({"one": 1, "two": 2, "three": 3, "four": 4})
    assert sorted(r.keys()) == [b"four", b"one", b"three", b"two"]
    assert sorted(r.keys("t*")) == [b"three", b"two"]
    assert sorted(r.keys("*o*")) == [b"four", b"one", b"two"]
    assert sorted(r.keys("???")) == [b"one", b"two"]
    assert r.keys("nothing") == []


def test_keys_skips_expired(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("live", 1)
    r.set("dead", 1, px=1)
    time.sleep(0.01)
    assert r.keys() == [b"live"]
    assert r.keys("d*") == []


def test_keys_arity(raw) -> None:
    assert raw.request(b"KEYS\r\n") == b"-ERR wrong number of arguments for 'keys' command\r\n"
    assert raw.request(b"KEYS a b\r\n") == b"-ERR wrong number of arguments for 'keys' command\r\n"


def test_randomkey(r, raw) -> None:
    assert r.randomkey() is None
    assert raw.request(b"RANDOMKEY\r\n") == b"$-1\r\n"
    keys = {f"k{i}".encode() for i in range(100)}
    r.mset({key: 1 for key in keys})
    picks = {r.randomkey() for _ in range(400)}
    assert picks <= keys
    assert len(picks) > 30
    raw.request(b"HELLO 3\r\n", until=b"modules")
    raw.request(b"FLUSHDB\r\n")
    assert raw.request(b"RANDOMKEY\r\n") == b"_\r\n"


def test_randomkey_large_database(r) -> None:
    pipe = r.pipeline(transaction=False)
    for i in range(3000):
        pipe.set(f"k{i}", i)
    pipe.execute()
    picks = {r.randomkey() for _ in range(300)}
    assert len(picks) > 200
    r.delete(*[f"k{i}" for i in range(2990)])
    assert {r.randomkey() for _ in range(100)} <= {f"k{i}".encode() for i in range(2990, 3000)}


def test_randomkey_never_returns_expired(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(10):
        r.set(f"dead{i}", 1, px=1)
    time.sleep(0.01)
    assert r.randomkey() is None
    r.set("live", 1)
    for i in range(10):
        r.set(f"dead{i}", 1, px=1)
    time.sleep(0.01)
    assert r.randomkey() == b"live"


# -- RENAME / RENAMENX ------------------------------------------------------------------------------


def test_rename(r) -> None:
    r.set("a", "1")
    assert r.rename("a", "b") is True
    assert r.get("b") == b"1"
    assert r.exists("a") == 0


def test_rename_errors_and_same_name(raw) -> None:
    assert raw.request(b"RENAME nokey b\r\n") == b"-ERR no such key\r\n"
    assert raw.request(b"RENAMENX nokey b\r\n") == b"-ERR no such key\r\n"
    assert raw.request(b"RENAME nokey nokey\r\n") == b"-ERR no such key\r\n"
    raw.request(b"SET a 1\r\n")
    assert raw.request(b"RENAME a a\r\n") == b"+OK\r\n"
    assert raw.request(b"RENAMENX a a\r\n") == b":0\r\n"
    assert raw.request(b"GET a\r\n") == b"$1\r\n1\r\n"
    assert raw.request(b"RENAME a\r\n") == b"-ERR wrong number of arguments for 'rename' command\r\n"


def test_rename_overwrites_and_ttl_moves(r) -> None:
    r.set("src", "1", ex=100)
    r.hset("dst", "f", "v")
    r.expire("dst", 5000)
    assert r.rename("src", "dst") is True
    assert r.get("dst") == b"1"
    assert r.ttl("dst") == 100  # the source's TTL, not the destination's
    r.set("plain", "2")
    r.set("volatile", "3", ex=50)
    r.rename("plain", "volatile")
    assert r.ttl("volatile") == -1


def test_renamenx(r) -> None:
    r.set("a", "1", ex=100)
    r.set("b", "2")
    assert r.renamenx("a", "b") is False
    assert r.get("b") == b"2"
    assert r.renamenx("a", "c") is True
    assert r.get("c") == b"1"
    assert r.ttl("c") == 100


def test_rename_hash(r) -> None:
    r.hset("h", mapping={"f1": "v1", "f2": "v2"})
    r.rename("h", "h2")
    assert r.hgetall("h2") == {b"f1": b"v1", b"f2": b"v2"}
    assert r.type("h2") == b"hash"


def test_rename_onto_expired_destination(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("dst", "old", px=1)
    r.set("src", "new")
    time.sleep(0.01)
    assert r.renamenx("src", "dst") is True
    assert r.get("dst") == b"new"


# -- COPY -------------------------------------------------------------------------------------------


def test_copy_string_with_ttl(r) -> None:
    r.set("src", "v", ex=100)
    assert r.copy("src", "dst") is True
    assert r.get("dst") == b"v"
    assert r.ttl("dst") == 100
    assert r.copy("src", "dst") is False
    r.set("src", "w")
    assert r.copy("src", "dst", replace=True) is True
    assert r.get("dst") == b"w"
    assert r.ttl("dst") == -1


def test_copy_hash_is_independent(r) -> None:
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.copy("h", "h2") is True
    r.hset("h2", "c", "3")
    r.hdel("h", "a")
    assert r.hgetall("h") == {b"b": b"2"}
    assert r.hgetall("h2") == {b"a": b"1", b"b": b"2", b"c": b"3"}


def test_copy_appended_string_is_independent(r) -> None:
    r.set("s", "abc")
    r.append("s", "d")
    r.copy("s", "t")
    r.append("s", "e")
    assert r.get("t") == b"abcd"
    assert r.get("s") == b"abcde"


def test_copy_to_other_database(server) -> None:
    r = server.client()
    other = server.client(db=2)
    r.set("k", "v", ex=100)
    assert r.copy("k", "k", destination_db=2) is True
    assert other.get("k") == b"v"
    assert other.ttl("k") == 100
    other.set("taken", "x")
    assert r.copy("k", "taken", destination_db=2) is False
    assert r.copy("k", "taken", destination_db=2, replace=True) is True
    assert other.get("taken") == b"v"


def test_copy_errors(raw) -> None:
    raw.request(b"SET c v\r\n")
    assert raw.request(b"COPY c d DB\r\n") == SYNTAX
    assert raw.request(b"COPY c d DB 1 DB\r\n") == SYNTAX
    assert raw.request(b"COPY c d FOO\r\n") == SYNTAX
    assert raw.request(b"COPY c d DB abc\r\n") == NOT_INTEGER
    assert raw.request(b"COPY c d DB 16\r\n") == OUT_OF_RANGE
    assert raw.request(b"COPY c d DB -1\r\n") == OUT_OF_RANGE
    assert raw.request(b"COPY c d DB 9999999999\r\n") == INT_RANGE
    assert raw.request(b"COPY c c\r\n") == SAME
    assert raw.request(b"COPY c c DB 0\r\n") == SAME
    assert raw.request(b"COPY c c DB 1\r\n") == b":1\r\n"
    assert raw.request(b"COPY nokey x\r\n") == b":0\r\n"
    assert raw.request(b"COPY c d REPLACE REPLACE\r\n") == b":1\r\n"
    assert raw.request(b"COPY c\r\n") == b"-ERR wrong number of arguments for 'copy' command\r\n"
    # Option errors come before the key lookup.
    assert raw.request(b"COPY nokey d DB 99\r\n") == OUT_OF_RANGE


# -- MOVE / SWAPDB ----------------------------------------------------------------------------------


def test_move(server) -> None:
    r = server.client()
    other = server.client(db=1)
    r.set("k", "v", ex=100)
    assert r.move("k", 1) is True
    assert r.exists("k") == 0
    assert other.get("k") == b"v"
    assert other.ttl("k") == 100
    r.set("k", "mine")
    assert r.move("k", 1) is False  # already there
    assert r.get("k") == b"mine"
    assert r.move("nokey", 1) is False


def test_move_hash(server) -> None:
    r = server.client()
    r.hset("h", "f", "v")
    assert r.move("h", 5) is True
    assert server.client(db=5).hgetall("h") == {b"f": b"v"}


def test_move_errors(raw) -> None:
    raw.request(b"SET c v\r\n")
    assert raw.request(b"MOVE c 0\r\n") == SAME
    assert raw.request(b"MOVE c 16\r\n") == OUT_OF_RANGE
    assert raw.request(b"MOVE c -1\r\n") == OUT_OF_RANGE
    assert raw.request(b"MOVE c abc\r\n") == NOT_INTEGER
    assert raw.request(b"MOVE c 9999999999\r\n") == INT_RANGE
    assert raw.request(b"MOVE nokey 0\r\n") == SAME
    assert raw.request(b"MOVE nokey 99\r\n") == OUT_OF_RANGE


def test_swapdb(server) -> None:
    zero = server.client(db=0)
    one = server.client(db=1)
    zero.set("a", "in-zero", ex=100)
    one.set("b", "in-one")
    one.hset("h", "f", "v")
    assert zero.swapdb(0, 1) is True
    assert sorted(zero.keys()) == [b"b", b"h"]
    assert one.get("a") == b"in-zero"
    assert one.ttl("a") == 100
    assert zero.hgetall("h") == {b"f": b"v"}
    assert zero.swapdb(1, 1) is True


def test_swapdb_expiry_follows_data(server) -> None:
    zero = server.client(db=0)
    one = server.client(db=1)
    zero.set("short", "v", px=50)
    zero.swapdb(0, 1)
    assert one.exists("short") == 1
    deadline = time.monotonic() + 5
    while one.dbsize() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert one.dbsize() == 0


def test_swapdb_errors(raw) -> None:
    assert raw.request(b"SWAPDB 0 16\r\n") == OUT_OF_RANGE
    assert raw.request(b"SWAPDB -1 0\r\n") == OUT_OF_RANGE
    assert raw.request(b"SWAPDB abc 0\r\n") == b"-ERR invalid first DB index\r\n"
    assert raw.request(b"SWAPDB 0 abc\r\n") == b"-ERR invalid second DB index\r\n"
    assert raw.request(b"SWAPDB 9999999999 0\r\n") == b"-ERR invalid first DB index\r\n"
    assert raw.request(b"SWAPDB 0\r\n") == b"-ERR wrong number of arguments for 'swapdb' command\r\n"


# -- FLUSHDB / FLUSHALL -----------------------------------------------------------------------------


def test_flushdb_only_current(server) -> None:
    zero = server.client(db=0)
    one = server.client(db=1)
    zero.set("a", 1)
    one.set("b", 1)
    assert zero.flushdb() is True
    assert zero.dbsize() == 0
    assert one.dbsize() == 1
    assert zero.flushall() is True
    assert one.dbsize() == 0


@pytest.mark.parametrize("command", [b"FLUSHDB", b"FLUSHALL"])
def test_flush_modes(raw, command: bytes) -> None:
    for mode in (b"", b" ASYNC", b" sync", b" Async"):
        raw.request(b"SET k v\r\n")
        assert raw.request(command + mode + b"\r\n") == b"+OK\r\n"
        assert raw.request(b"DBSIZE\r\n") == b":0\r\n"
    assert raw.request(command + b" FOO\r\n") == SYNTAX
    assert raw.request(command + b" SYNC ASYNC\r\n") == SYNTAX


def test_flush_then_expiry_state_is_clean(r) -> None:
    r.set("k", "v", px=50)
    r.flushall()
    r.set("k", "v")
    time.sleep(0.15)
    assert r.get("k") == b"v"


# -- OBJECT -----------------------------------------------------------------------------------------


def test_object_encoding(r) -> None:
    r.set("int", "12345")
    r.set("short", "hello")
    r.set("long", "x" * 100)
    r.hset("small", "f", "v")
    r.hset("big", mapping={f"f{i}": i for i in range(1000)})
    assert r.object("encoding", "int") == b"int"
    assert r.object("encoding", "short") == b"embstr"
    assert r.object("encoding", "long") == b"raw"
    assert r.object("encoding", "small") == b"listpack"
    assert r.object("encoding", "big") == b"hashtable"
    r.append("short", "!")
    assert r.object("encoding", "short") == b"raw"
    assert r.object("encoding", "nokey") is None


def test_object_refcount(raw) -> None:
    raw.request(b"SET shared 100\r\n")
    raw.request(b"SET big 10000\r\n")
    raw.request(b"SET text abc\r\n")
    assert raw.request(b"OBJECT REFCOUNT shared\r\n") == b":2147483647\r\n"
    assert raw.request(b"OBJECT REFCOUNT big\r\n") == b":1\r\n"
    assert raw.request(b"OBJECT REFCOUNT text\r\n") == b":1\r\n"
    assert raw.request(b"OBJECT REFCOUNT nokey\r\n") == b"$-1\r\n"


def test_object_idletime_and_freq(server) -> None:
    r = server.client()
    restorer = server.client()
    r.set("k", "text")
    assert r.object("idletime", "k") == 0
    with pytest.raises(redis.ResponseError, match="^An LFU maxmemory policy is not selected, "
                       "access frequency not tracked. Please note that when switching between "
                       "policies at runtime LRU and LFU data will take some time to adjust.$"):
        r.object("freq", "k")
    policy = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        r.config_set("maxmemory-policy", "allkeys-lfu")
        r.set("fresh", "text")
        assert r.object("freq", "fresh") == 5
        with pytest.raises(redis.ResponseError, match="^An LFU maxmemory policy is selected, "
                           "idle time not tracked. Please note that when switching between "
                           "policies at runtime LRU and LFU data will take some time to adjust.$"):
            r.object("idletime", "fresh")
        assert r.object("freq", "nokey") is None
    finally:
        restorer.config_set("maxmemory-policy", policy)
    assert r.object("idletime", "nokey") is None


def test_object_help_and_errors(server, raw) -> None:
    help_reply = raw.request(b"OBJECT HELP\r\n")
    assert help_reply.startswith(
        b"*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
        b"+ENCODING <key>\r\n"
    )
    assert help_reply.endswith(b"+HELP\r\n+" + help_footer(server) + b"\r\n")
    assert raw.request(b"OBJECT foo\r\n") == b"-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n"
    assert raw.request(b"OBJECT ENCODING\r\n") == (
        b"-ERR wrong number of arguments for 'object|encoding' command\r\n"
    )
    assert raw.request(b"OBJECT HELP extra\r\n") == (
        b"-ERR wrong number of arguments for 'object|help' command\r\n"
    )
    assert raw.request(b"OBJECT\r\n") == b"-ERR wrong number of arguments for 'object' command\r\n"


def test_object_resp3_null(raw) -> None:
    raw.request(b"HELLO 3\r\n", until=b"modules")
    assert raw.request(b"OBJECT ENCODING nokey\r\n") == b"_\r\n"


# -- server.dirty ---------------------------------------------------------------------------------


def test_changes_are_counted(r) -> None:
    """rdb_changes_since_last_save grows by what Redis counts for each command."""

    def changes() -> int:
        return stat(r, "persistence", "rdb_changes_since_last_save")

    steps: list[tuple[tuple[object, ...], int]] = [
        (("MSET", "a", 1, "b", 2, "c", 3), 3),
        (("DEL", "a", "b", "nokey"), 2),
        (("DEL", "nokey"), 0),
        (("EXPIRE", "c", 100), 1),
        (("EXPIRE", "nokey", 100), 0),
        (("PERSIST", "c"), 1),
        (("PERSIST", "c"), 0),
        (("RENAME", "c", "d"), 1),
        (("COPY", "d", "e"), 1),
        (("COPY", "d", "e"), 0),
        (("MOVE", "e", 1), 1),
        (("SWAPDB", 0, 1), 1),
        (("EXPIRE", "e", -1), 1),
        (("EXISTS", "d"), 0),
    ]
    for command, expected in steps:
        before = changes()
        r.execute_command(*command)
        assert changes() - before == expected, command


# -- WATCH invalidation ---------------------------------------------------------------------------


def _watch_outcome(server, setup, change, key: str = "w") -> bool:
    """Whether a transaction WATCHing ``key`` still commits after ``change`` ran elsewhere."""
    r = server.client()
    setup(r)
    with r.pipeline() as pipe:
        pipe.watch(key)
        change(server.client())
        pipe.multi()
        pipe.ping()
        try:
            pipe.execute()
        except redis.WatchError:
            return False
    return True


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("del", lambda c: c.delete("w")),
        ("unlink", lambda c: c.unlink("w")),
        ("expire", lambda c: c.expire("w", 100)),
        ("expire-past", lambda c: c.expire("w", -1)),
        ("rename-from", lambda c: c.rename("w", "other")),
        ("rename-onto", lambda c: (c.set("src", 1), c.rename("src", "w"))),
        ("copy-onto", lambda c: (c.set("src", 1), c.copy("src", "w", replace=True))),
        ("move", lambda c: c.move("w", 1)),
        ("flushdb", lambda c: c.flushdb()),
        ("flushall", lambda c: c.flushall()),
        ("swapdb", lambda c: c.swapdb(0, 1)),
    ],
)
def test_watch_invalidated(server, name: str, change) -> None:
    assert _watch_outcome(server, lambda r: r.set("w", "v"), change) is False


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("del-missing", lambda c: c.delete("nokey")),
        ("exists", lambda c: c.exists("w")),
        ("touch", lambda c: c.touch("w")),
        ("type", lambda c: c.type("w")),
        ("ttl", lambda c: c.ttl("w")),
        ("copy-from", lambda c: c.copy("w", "elsewhere")),
        ("flushdb-other", lambda c: (c.select(3), c.flushdb())),
        ("swapdb-others", lambda c: c.swapdb(2, 3)),
        ("expire-gt-refused", lambda c: c.expire("w", 100, gt=True)),
    ],
)
def test_watch_not_invalidated(server, name: str, change) -> None:
    assert _watch_outcome(server, lambda r: r.set("w", "v"), change) is True


def test_swapdb_invalidates_watch_of_key_only_in_other_db(server) -> None:
    """A watched key that does not exist yet but appears through SWAPDB counts as changed."""

    def setup(r: redis.Redis) -> None:
        server.client(db=1).set("w", "there")

    assert _watch_outcome(server, setup, lambda c: c.swapdb(0, 1)) is False


def test_flush_of_empty_database_keeps_watch(server) -> None:
    assert _watch_outcome(server, lambda r: None, lambda c: c.flushdb()) is True


# -- clients --------------------------------------------------------------------------------------


def test_redis_cli_keyspace_commands(server) -> None:
    r = server.client()
    r.set("a", 1)
    assert redis_cli(server.port, "EXISTS", "a").stdout == b"1\n"
    assert redis_cli(server.port, "TYPE", "a").stdout == b"string\n"
    assert redis_cli(server.port, "EXPIRE", "a", "100").stdout == b"1\n"
    assert redis_cli(server.port, "TTL", "a").stdout == b"100\n"
    assert redis_cli(server.port, "RENAME", "a", "b").stdout == b"OK\n"
    assert redis_cli(server.port, "KEYS", "*").stdout == b"b\n"
    assert redis_cli(server.port, "DBSIZE").stdout == b"1\n"


# -- OBJECT IDLETIME: last access, with Redis's whole-second LRU clock ------------------------


def test_object_idletime_counts_from_last_access(r):
    r.set("idle", "v")
    r.hset("idle-hash", "f", "v")
    time.sleep(2.2)
    assert r.object("idletime", "idle") >= 2
    # EXISTS, TYPE, TTL and OBJECT look without touching.
    r.exists("idle")
    r.type("idle")
    r.ttl("idle")
    assert r.object("idletime", "idle") >= 2
    r.get("idle")
    assert r.object("idletime", "idle") <= 1
    assert r.object("idletime", "idle-hash") >= 2
    r.hget("idle-hash", "f")
    assert r.object("idletime", "idle-hash") <= 1
    r.delete("idle")
    assert r.object("idletime", "idle") is None


@pytest.mark.min_redis(7, 2)
def test_no_touch_client_leaves_idletime(server, r):
    r.set("quiet", "v")
    time.sleep(2.2)
    quiet = server.client()
    quiet.execute_command("CLIENT", "NO-TOUCH", "ON")
    assert quiet.get("quiet") == b"v"
    assert r.object("idletime", "quiet") >= 2
    quiet.execute_command("TOUCH", "quiet")  # TOUCH still touches
    assert r.object("idletime", "quiet") <= 1
