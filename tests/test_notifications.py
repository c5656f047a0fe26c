"""Keyspace notifications (``notify-keyspace-events``): which events each write command
publishes, on which channels, in which order. Every test runs against Brook and real Redis.
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.support.events import both, event, space


def test_flags_round_trip_and_bad_letters(r) -> None:
    r.config_set("notify-keyspace-events", "KEA")
    assert r.config_get("notify-keyspace-events")["notify-keyspace-events"] == "AKE"
    r.config_set("notify-keyspace-events", "Elx")
    assert r.config_get("notify-keyspace-events")["notify-keyspace-events"] == "lxE"
    with pytest.raises(redis.ResponseError):
        r.config_set("notify-keyspace-events", "KEQ")
    r.config_set("notify-keyspace-events", "")


def test_nothing_is_published_when_off(r, listen) -> None:
    collected = listen("")
    r.set("k", "v")
    r.xadd("s", {"f": "v"})
    assert collected() == []


def test_string_and_generic_events(r, listen) -> None:
    collected = listen("KEA")
    r.set("k", "1")
    r.incr("k")
    r.incrby("k", 5)
    r.incrbyfloat("k", 1.5)
    r.append("k", "x")
    r.setrange("k", 0, "9")
    r.set("e", "v", ex=100)
    r.expire("e", 200)
    r.persist("e")
    r.rename("e", "f")
    r.copy("f", "g")
    r.move("g", 1)
    r.getdel("f")
    r.delete("k", "nosuchkey")
    r.mset({"m1": "a", "m2": "b"})
    assert collected() == [
        *both("k", "set"), *both("k", "incrby"), *both("k", "incrby"),
        *both("k", "incrbyfloat"), *both("k", "append"), *both("k", "setrange"),
        *both("e", "set"), *both("e", "expire"), *both("e", "expire"), *both("e", "persist"),
        *both("e", "rename_from"), *both("f", "rename_to"), *both("g", "copy_to"),
        *both("g", "move_from"), *both("g", "move_to", 1), *both("f", "del"),
        *both("k", "del"), *both("m1", "set"), *both("m2", "set"),
    ]


def test_only_the_enabled_classes_and_channels(r, listen) -> None:
    collected = listen("E$")
    r.set("k", "v")
    r.expire("k", 100)
    r.hset("h", "f", "v")
    assert collected() == [event("set", "k")]


def test_hash_events(r, listen) -> None:
    collected = listen("Kh")
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.hsetnx("h", "c", "3")
    r.hsetnx("h", "c", "4")
    r.hincrby("h", "a", 2)
    r.hincrbyfloat("h", "a", 0.5)
    r.hdel("h", "a", "zz")
    r.hdel("h", "b", "c")
    assert collected() == [
        space("h", "hset"), space("h", "hset"), space("h", "hincrby"),
        space("h", "hincrbyfloat"), space("h", "hdel"), space("h", "hdel"),
    ]


def test_hash_emptied_by_hdel_also_publishes_del(r, listen) -> None:
    collected = listen("KA")
    r.hset("h", "f", "v")
    r.hdel("h", "f")
    assert collected() == [space("h", "hset"), space("h", "hdel"), space("h", "del")]


def test_stream_events(r, listen) -> None:
    collected = listen("KEt")
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xadd("s", {"f": "v"}, id="2-1", maxlen=1, approximate=False)
    r.xtrim("s", maxlen=0, approximate=False)
    r.xtrim("s", maxlen=0, approximate=False)
    r.xadd("s", {"f": "v"}, id="3-1")
    r.xdel("s", "3-1", "9-9")
    r.xdel("s", "9-9")
    r.execute_command("XSETID", "s", "5-0")
    r.xgroup_create("s", "g", "0")
    r.xgroup_createconsumer("s", "g", "alice")
    r.xgroup_createconsumer("s", "g", "alice")
    r.xgroup_setid("s", "g", "0")
    r.xgroup_delconsumer("s", "g", "alice")
    r.xgroup_delconsumer("s", "g", "nobody")
    r.xgroup_destroy("s", "g")
    r.xgroup_destroy("s", "g")
    assert collected() == [
        *both("s", "xadd"), *both("s", "xadd"), *both("s", "xtrim"), *both("s", "xtrim"),
        *both("s", "xadd"), *both("s", "xdel"), *both("s", "xsetid"),
        *both("s", "xgroup-create"), *both("s", "xgroup-createconsumer"),
        *both("s", "xgroup-setid"), *both("s", "xgroup-delconsumer"),
        *both("s", "xgroup-destroy"),
    ]


@pytest.mark.min_redis(7, 2)
def test_consumers_created_by_reads_and_claims_are_notified(r, listen) -> None:
    """Since 7.2 XREADGROUP, XCLAIM and XAUTOCLAIM create consumers with the same event as
    XGROUP CREATECONSUMER (7.0 created them silently)."""
    r.xgroup_create("s", "g", "$", mkstream=True)
    collected = listen("Kt")
    r.xreadgroup("g", "bob", {"s": ">"})
    r.xreadgroup("g", "bob", {"s": ">"})
    r.execute_command("XAUTOCLAIM", "s", "g", "carol", 0, "0")
    assert collected() == [space("s", "xgroup-createconsumer")] * 2


def test_expired_event_from_lazy_and_active_expiry(r, listen) -> None:
    collected = listen("KEx")
    r.set("lazy", "v", px=20)
    r.set("active", "v", px=20)
    time.sleep(0.05)
    assert r.get("lazy") is None
    events = collected(1.0)
    assert sorted(events) == sorted([*both("lazy", "expired"), *both("active", "expired")])


def test_expire_in_the_past_publishes_del(r, listen) -> None:
    collected = listen("Kg")
    r.set("k", "v")
    r.expire("k", -1)
    assert collected() == [space("k", "del")]


def test_events_of_another_database(r, listen) -> None:
    collected = listen("Eg")
    r.execute_command("SELECT", 3)
    r.set("k", "v")
    r.delete("k")
    r.execute_command("SELECT", 0)
    assert collected() == [event("del", "k", 3)]


def _own_events(server, r, flags: str):  # type: ignore[no-untyped-def]
    """A RESP3 connection subscribed to key ``k``'s keyspace channel, with ``flags`` set."""
    from tests.conftest import RawConnection

    r.config_set("notify-keyspace-events", flags)
    conn = RawConnection(server.port)
    conn.call("HELLO", "3")
    conn.call("SUBSCRIBE", "__keyspace@0__:k")
    return conn


def _push(event: bytes) -> bytes:
    return (b">3\r\n$7\r\nmessage\r\n$16\r\n__keyspace@0__:k\r\n$%d\r\n%s\r\n"
            % (len(event), event))


def test_a_writer_subscribed_to_its_own_events_gets_them_after_each_reply(server, r) -> None:
    """RESP3: a client may write while subscribed; each event follows its command's reply
    (Redis 7.2+; Redis 7.0 sent it first)."""
    conn = _own_events(server, r, "K$")
    try:
        conn.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n1\r\n*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n")
        if server.version < (7, 2):
            data = conn.read(until=b":2\r\n", timeout=5)
            assert data == _push(b"set") + b"+OK\r\n" + _push(b"incrby") + b":2\r\n"
        else:
            data = conn.read(until=b"incrby\r\n", timeout=5)
            assert data == b"+OK\r\n" + _push(b"set") + b":2\r\n" + _push(b"incrby")
    finally:
        conn.close()
        r.config_set("notify-keyspace-events", "")


@pytest.mark.min_redis(7, 2)
def test_a_writers_own_events_follow_exec_and_script_replies(server, r) -> None:
    """Inside MULTI/EXEC the events come after EXEC's whole array, inside a script after its
    reply (Redis 7.0 put them where they were made)."""
    conn = _own_events(server, r, "K$g")
    try:
        assert conn.call("MULTI") == b"OK"
        assert conn.call("SET", "k", "1") == b"QUEUED"
        assert conn.call("INCR", "k") == b"QUEUED"
        conn.send(b"*1\r\n$4\r\nEXEC\r\n")
        data = conn.read(until=b"incrby\r\n", timeout=5)
        assert data == b"*2\r\n+OK\r\n:2\r\n" + _push(b"set") + _push(b"incrby")
        conn.send(b"*3\r\n$4\r\nEVAL\r\n$53\r\nredis.call('del', 'k') return redis.status_reply('x')\r\n"
                  b"$1\r\n0\r\n")
        data = conn.read(until=b"del\r\n", timeout=5)
        assert data == b"+x\r\n" + _push(b"del")
    finally:
        conn.close()
        r.config_set("notify-keyspace-events", "")


def test_a_reader_gets_the_expired_event_of_a_key_it_found_expired_after_its_reply(
        server, r) -> None:
    """Lazy expiry during a RESP3 subscriber's GET: the event follows the reply (Redis 7.2+;
    Redis 7.0 sent it first)."""
    from tests.conftest import RawConnection

    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # the fixture turns it back on
    r.config_set("notify-keyspace-events", "Ex")
    conn = RawConnection(server.port)
    try:
        conn.call("HELLO", "3")
        conn.call("SUBSCRIBE", "__keyevent@0__:expired")
        r.set("k", "v", px=1)
        time.sleep(0.01)
        conn.send(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
        push = b">3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$1\r\nk\r\n"
        if server.version < (7, 2):
            assert conn.read(until=b"_\r\n", timeout=5) == push + b"_\r\n"
        else:
            assert conn.read(until=b"$1\r\nk\r\n", timeout=5) == b"_\r\n" + push
    finally:
        conn.close()
        r.config_set("notify-keyspace-events", "")


@pytest.mark.min_redis(7, 2)
def test_a_served_blocked_client_gets_its_own_events_after_its_reply(server, r) -> None:
    """BLPOP served by another client's push: its ``lpop`` event follows its reply."""
    conn = _own_events(server, r, "Kl")
    try:
        conn.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nk\r\n$1\r\n0\r\n")
        deadline = time.monotonic() + 5
        while r.info("clients")["blocked_clients"] != 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        r.rpush("k", "v")  # its event reaches the subscriber first: not its own command
        data = conn.read(until=b"lpop\r\n", timeout=5)
        assert data == _push(b"rpush") + b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n" + _push(b"lpop")
    finally:
        conn.close()
        r.config_set("notify-keyspace-events", "")


def test_list_events(r, listen) -> None:
    collected = listen("KA")
    r.rpush("l", "a", "b", "c")
    r.lpush("l", "z")
    r.lpushx("l", "y")
    r.rpushx("nolist", "y")
    r.linsert("l", "BEFORE", "a", "x")
    r.lset("l", 0, "w")
    r.lrem("l", 0, "x")
    r.lrem("l", 0, "nothere")
    r.lpop("l")
    r.rpop("l", 2)
    r.lmove("l", "m", "LEFT", "RIGHT")
    r.ltrim("l", 0, -1)
    r.ltrim("l", 1, 0)
    r.rpoplpush("m", "m")
    r.lmpop(1, "m", direction="LEFT")
    assert collected() == [
        space("l", "rpush"), space("l", "lpush"), space("l", "lpush"), space("l", "linsert"),
        space("l", "lset"), space("l", "lrem"), space("l", "lpop"), space("l", "rpop"),
        space("m", "rpush"), space("l", "lpop"), space("l", "ltrim"), space("l", "ltrim"),
        space("l", "del"), space("m", "lpush"), space("m", "rpop"), space("m", "lpop"),
        space("m", "del"),
    ]


def test_blocking_pop_served_by_a_push_publishes_both(r, listen, server) -> None:
    from tests.conftest import Waiting, parked

    collected = listen("Kl")
    popper = Waiting(server)
    try:
        popper.send("BLPOP", "q", 0)
        parked(r, 1)
        r.rpush("q", "job")
        assert popper.reply() == [b"q", b"job"]
    finally:
        popper.close()
    assert collected() == [space("q", "rpush"), space("q", "lpop")]


# ---------------------------------------------------------------------------------------------
# "new" (class n, Redis 7.0+): a key added to a database, by any command
# ---------------------------------------------------------------------------------------------


def test_new_key_event_only_for_created_keys(r, listen) -> None:
    # pubsub.tcl "Keyspace notifications: new key test"
    collected = listen("En")
    r.set("foo", "bar")
    r.set("foo", "baz")  # replaced: not new
    r.set("bar", "bar")
    assert collected() == [event("new", "foo"), event("new", "bar")]


def test_new_key_is_not_part_of_all(r, listen) -> None:
    collected = listen("KEA")
    r.set("k", "v")
    assert collected() == both("k", "set")
    r.config_set("notify-keyspace-events", "An")  # Redis names only "A" back (n stays set)
    assert r.config_get("notify-keyspace-events")["notify-keyspace-events"] == "A"
    r.config_set("notify-keyspace-events", "gn$E")
    assert r.config_get("notify-keyspace-events")["notify-keyspace-events"] == "g$nE"


def test_new_key_comes_before_the_commands_event(r, listen) -> None:
    collected = listen("KEA" + "n")
    r.rpush("l", "a", "b")
    r.rpush("l", "c")
    assert collected() == [*both("l", "new"), *both("l", "rpush"), *both("l", "rpush")]


@pytest.mark.parametrize("commands, created", [
    ([("SET", "k", "v", "NX"), ("SET", "k", "w", "NX"), ("SET", "k", "x", "XX")], ["k"]),
    ([("SETNX", "k", "v"), ("SETNX", "k", "w"), ("GETSET", "g", "v"), ("GETSET", "g", "w")],
     ["k", "g"]),
    ([("SETEX", "k", "100", "v"), ("PSETEX", "p", "100000", "v"), ("SETEX", "k", "100", "v")],
     ["k", "p"]),
    ([("MSET", "a", "1", "b", "2", "a", "3"), ("MSETNX", "c", "1", "d", "2"),
      ("MSETNX", "c", "1", "e", "2")], ["a", "b", "c", "d"]),
    ([("INCR", "i"), ("INCRBY", "j", "2"), ("DECR", "i"), ("INCRBYFLOAT", "f", "1.5"),
      ("APPEND", "s", "x"), ("APPEND", "s", "y"), ("SETRANGE", "r", "3", "x"),
      ("SETRANGE", "z", "0", "")], ["i", "j", "f", "s", "r"]),
    ([("LPUSH", "l", "a"), ("RPUSH", "l", "b"), ("LPUSHX", "x", "a"), ("RPUSH", "m", "a"),
      ("LMOVE", "l", "n", "LEFT", "RIGHT"), ("RPOPLPUSH", "l", "n")], ["l", "m", "n"]),
    ([("HSET", "h", "f", "v"), ("HSETNX", "h2", "f", "v"), ("HINCRBY", "h3", "f", "1"),
      ("HINCRBYFLOAT", "h4", "f", "1.5"), ("HSET", "h", "g", "v")], ["h", "h2", "h3", "h4"]),
    ([("SADD", "s", "a"), ("SADD", "s", "b"), ("SMOVE", "s", "t", "a"),
      ("SINTERSTORE", "u", "s", "s"), ("SUNIONSTORE", "u", "s", "t")], ["s", "t", "u"]),
    ([("ZADD", "z", "1", "a"), ("ZINCRBY", "y", "1", "a"), ("ZADD", "w", "XX", "1", "a"),
      ("ZRANGESTORE", "v", "z", "0", "-1"), ("ZUNIONSTORE", "v", "1", "z")], ["z", "y", "v"]),
    ([("XADD", "x", "1-1", "f", "v"), ("XGROUP", "CREATE", "x2", "g", "$", "MKSTREAM"),
      ("XADD", "x3", "NOMKSTREAM", "*", "f", "v")], ["x", "x2"]),
    ([("SET", "a", "v"), ("RENAME", "a", "b"), ("SET", "c", "v"), ("RENAME", "b", "c"),
      ("COPY", "c", "d"), ("COPY", "c", "d", "REPLACE"), ("RPUSH", "src", "x"),
      ("SORT", "src", "ALPHA", "STORE", "e")], ["a", "b", "c", "c", "d", "d", "src", "e"]),
    ([("SETBIT", "b", "7", "1"), ("SETBIT", "b", "100", "1"), ("BITFIELD", "f", "SET", "u8", "0", "1"),
      ("BITFIELD", "g", "GET", "u8", "0"), ("BITFIELD", "f", "INCRBY", "u8", "0", "1"),
      ("BITOP", "OR", "o", "b", "f"), ("BITOP", "OR", "o", "b")], ["b", "f", "o"]),
])
def test_new_key_by_command(r, listen, commands, created) -> None:
    collected = listen("En")
    for command in commands:
        r.execute_command(*command)
    assert collected() == [event("new", key) for key in created]


def test_new_key_in_another_database(r, listen) -> None:
    collected = listen("En")
    r.set("k", "v")
    r.execute_command("MOVE", "k", "3")
    r.set("k", "v")
    r.execute_command("COPY", "k", "c", "DB", "5")
    assert collected() == [event("new", "k"), event("new", "k", 3), event("new", "k"),
                           event("new", "c", 5)]
