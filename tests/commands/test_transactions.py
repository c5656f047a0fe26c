"""MULTI/EXEC/DISCARD/WATCH/UNWATCH, checked against real Redis."""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import stats_of


def test_exec_runs_queued_commands_in_order(raw):
    assert raw.request(b"MULTI\r\nSET a 1\r\nINCR a\r\nGET a\r\nEXEC\r\n", until=b"$1\r\n2\r\n") == (
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n"
    )


def test_runtime_error_inside_exec_does_not_abort(raw):
    reply = raw.request(b"MULTI\r\nSET a b\r\nINCR a\r\nGET a\r\nEXEC\r\n", until=b"$1\r\nb\r\n")
    assert reply == (
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n"
        b"-ERR value is not an integer or out of range\r\n$1\r\nb\r\n"
    )


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (b"GET\r\n", b"-ERR wrong number of arguments for 'get' command\r\n"),
        (b"nosuch\r\n", b"-ERR unknown command 'nosuch', with args beginning with: \r\n"),
        (b"CONFIG FOO\r\n", b"-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"),
    ],
)
def test_queueing_error_aborts_exec(raw, bad, error):
    reply = raw.request(b"MULTI\r\nSET a 1\r\n" + bad + b"EXEC\r\nGET a\r\n", until=b"\r\n$-1\r\n")
    assert reply == (
        b"+OK\r\n+QUEUED\r\n" + error
        + b"-EXECABORT Transaction discarded because of previous errors.\r\n$-1\r\n"
    )


def test_nesting_and_misuse_errors(raw):
    assert raw.request(b"EXEC\r\n") == b"-ERR EXEC without MULTI\r\n"
    assert raw.request(b"DISCARD\r\n") == b"-ERR DISCARD without MULTI\r\n"
    assert raw.request(b"MULTI\r\nMULTI\r\nWATCH a\r\nEXEC\r\n", until=b"*0\r\n") == (
        b"+OK\r\n-ERR MULTI calls can not be nested\r\n"
        b"-ERR WATCH inside MULTI is not allowed\r\n*0\r\n"
    )


def test_discard_drops_queue(raw):
    assert raw.request(b"MULTI\r\nSET a 1\r\nDISCARD\r\nGET a\r\n", until=b"$-1\r\n") == (
        b"+OK\r\n+QUEUED\r\n+OK\r\n$-1\r\n"
    )


def test_select_inside_transaction(raw):
    assert raw.request(
        b"MULTI\r\nSELECT 1\r\nSET x 1\r\nEXEC\r\nGET x\r\nSELECT 0\r\nGET x\r\n", until=b"$-1\r\n"
    ) == b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+OK\r\n$1\r\n1\r\n+OK\r\n$-1\r\n"


def test_quit_inside_multi_closes(raw):
    assert raw.request(b"MULTI\r\nQUIT\r\n", until=b"<CLOSED>") == b"+OK\r\n+OK\r\n<CLOSED>"


def test_reset_inside_multi(raw):
    assert raw.request(b"MULTI\r\nRESET\r\nPING\r\n", until=b"+PONG\r\n") == (
        b"+OK\r\n+RESET\r\n+PONG\r\n"
    )


def _multi_mem(raw) -> int:
    line = raw.call("CLIENT", "INFO").decode()
    return int(line.split("multi-mem=")[1].split()[0])


def test_reset_forgets_the_queued_commands_memory(raw):
    """What a transaction queued counts as the client's (CLIENT LIST multi-mem, and the query
    buffer limit); RESET discards it, as DISCARD does."""
    assert raw.call("MULTI") == b"OK"
    assert raw.call("SET", "k", "v" * 1000) == b"QUEUED"
    assert raw.call("RESET") == b"RESET"
    assert _multi_mem(raw) == 0


def test_redis_py_transaction_pipeline(r):
    pipe = r.pipeline(transaction=True)
    pipe.set("k", "v").incr("n").incr("n").get("k")
    assert pipe.execute() == [True, 1, 2, b"v"]


def _other(server):
    return server.client()


def test_watch_detects_write_by_other_client(server, r):
    r.set("w", "1")
    other = _other(server)
    with r.pipeline() as pipe:
        pipe.watch("w")
        other.set("w", "2")
        pipe.multi()
        pipe.set("w", "3")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert r.get("w") == b"2"


def test_watch_unchanged_key_succeeds(r):
    r.set("w", "1")
    with r.pipeline() as pipe:
        pipe.watch("w")
        pipe.multi()
        pipe.set("w", "3")
        assert pipe.execute() == [True]


def test_watch_invalidated_by_own_write_before_multi(raw):
    reply = raw.request(b"WATCH k\r\nSET k 1\r\nMULTI\r\nGET k\r\nEXEC\r\n", until=b"*-1\r\n")
    assert reply == b"+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n*-1\r\n"


def test_watch_missing_key_then_created(server, r):
    other = _other(server)
    with r.pipeline() as pipe:
        pipe.watch("absent")
        other.set("absent", "x")
        pipe.multi()
        pipe.get("absent")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_watch_delete_of_missing_key_does_not_invalidate(server, r):
    other = _other(server)
    with r.pipeline() as pipe:
        pipe.watch("absent")
        other.delete("absent")
        pipe.multi()
        pipe.set("absent", "1")
        assert pipe.execute() == [True]


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c.flushdb(),
        lambda c: c.flushall(),
        lambda c: c.expire("w", 100),
        lambda c: c.delete("w"),
        lambda c: c.hset("w2", "f", "v"),
        lambda c: c.swapdb(0, 1),
    ],
    ids=["flushdb", "flushall", "expire", "del", "other-key-type", "swapdb"],
)
def test_watch_invalidation_sources(server, r, change):
    r.set("w", "1")
    other = _other(server)
    with r.pipeline() as pipe:
        pipe.watch("w", "w2")
        change(other)
        pipe.multi()
        pipe.set("w", "3")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_watched_key_expiring_aborts_exec(r):
    r.set("w", "1", px=50)
    with r.pipeline() as pipe:
        pipe.watch("w")
        time.sleep(0.12)
        pipe.multi()
        pipe.set("x", "1")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_unwatch_forgets_keys(server, raw):
    other = _other(server)
    assert raw.request(b"WATCH w\r\n") == b"+OK\r\n"
    other.set("w", "1")
    reply = raw.request(b"UNWATCH\r\nMULTI\r\nSET w 2\r\nEXEC\r\n", until=b"*1\r\n+OK\r\n")
    assert reply == b"+OK\r\n+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n"


def test_exec_null_reply_in_resp3(server):
    client = server.client(protocol=3)
    other = _other(server)
    client.execute_command("WATCH", "w")
    other.set("w", "1")
    client.execute_command("MULTI")
    client.execute_command("SET", "w", "2")
    assert client.execute_command("EXEC") is None


# ---------------------------------------------------------------------------------------------
# One instant for the whole transaction (Redis's command time snapshot)
# ---------------------------------------------------------------------------------------------


@pytest.mark.min_redis(7, 4)
def test_a_transaction_sees_one_instant(r):
    before = int(time.time() * 1000)
    pipe = r.pipeline()
    pipe.time()
    pipe.xadd("sx", {"f": "v"})
    pipe.execute_command("DEBUG", "SLEEP", "0.02")
    pipe.time()
    pipe.xadd("sx", {"f": "v"})
    first, entry, _, second, later = pipe.execute()
    after = int(time.time() * 1000)
    assert first == second
    started = first[0] * 1000 + first[1] // 1000
    assert before - 5 <= started <= after + 5
    assert entry == b"%d-0" % started
    assert later == b"%d-1" % started


def test_a_key_alive_when_exec_starts_stays_alive_in_it(r):
    r.set("k", "v", px=30)
    pipe = r.pipeline()
    pipe.exists("k")
    pipe.execute_command("DEBUG", "SLEEP", "0.05")
    pipe.exists("k")
    pipe.get("k")
    assert pipe.execute() == [1, b"OK", 1, b"v"]
    assert r.exists("k") == 0


def test_commands_outside_a_transaction_each_take_the_time(r):
    first = r.time()
    r.execute_command("DEBUG", "SLEEP", "0.02")
    second = r.time()
    assert (second[0] - first[0]) * 1_000_000 + second[1] - first[1] >= 20_000


# ---------------------------------------------------------------------------------------------
# Commandstats and errorstats of transactions (Redis's introspection-2 and info tests)
# ---------------------------------------------------------------------------------------------




def test_commandstats_count_exec_and_each_command_it_ran(r):
    r.config_resetstat()
    pipe = r.pipeline()
    pipe.set("foo", "bar")
    pipe.zadd("foo2", {"bar": 0})
    pipe.expire("foo2", 0)
    pipe.eval("return redis.call('set', 'foo', 'baz')", 0)
    assert pipe.execute() == [True, 1, True, b"OK"]
    assert stats_of(r) == ({"multi": (1, 0, 0), "exec": (1, 0, 0), "set": (2, 0, 0),
                            "zadd": (1, 0, 0), "expire": (1, 0, 0), "eval": (1, 0, 0)}, {}, 0)


def test_a_failed_command_inside_exec_is_its_own_failure(r):
    r.config_resetstat()
    pipe = r.pipeline()
    pipe.set("a", "b")
    pipe.execute_command("AUTH", "a")
    ok, failed = pipe.execute(raise_on_error=False)
    assert ok is True and isinstance(failed, redis.RedisError)
    assert stats_of(r) == ({"multi": (1, 0, 0), "exec": (1, 0, 0), "set": (1, 0, 0),
                            "auth": (1, 0, 1)}, {"ERR": 1}, 1)
    # EXEC's own error is its failure.
    with pytest.raises(redis.ResponseError):
        r.execute_command("EXEC")
    assert stats_of(r)[0]["exec"] == (2, 0, 1)


def test_a_rejected_command_aborts_exec_and_both_are_counted(r):
    r.config_resetstat()
    r.execute_command("MULTI")
    with pytest.raises(redis.ResponseError):
        r.execute_command("SET")
    with pytest.raises(redis.ResponseError):
        r.execute_command("EXEC")
    assert stats_of(r) == ({"set": (0, 1, 0), "multi": (1, 0, 0), "exec": (1, 0, 1)},
                           {"ERR": 1, "EXECABORT": 1}, 2)
