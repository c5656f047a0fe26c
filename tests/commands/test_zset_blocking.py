"""Blocking sorted-set pops (BZPOPMIN, BZPOPMAX, BZMPOP), after zset.tcl's blocking tests:
the immediate path, parking and being served by ZADD (or by a sorted set arriving under the key),
several keys, FIFO order among parked clients, how many parked commands one write runs,
timeouts (a null array in RESP2, a null in RESP3), timeout and argument errors, MULTI, CLIENT
UNBLOCK, keys deleted, replaced by another type or expiring under a parked client.

Parked clients are plain sockets (conftest's ``Waiting``) and ``INFO clients``
says when they are parked. Every test runs against Brook and real Redis. Redis 7.0 counted a
blocking command in INFO commandstats when it parked; Redis >= 7.2 (and Brook) count it once,
when it runs to its end, which is what makes "k new members run k parked commands" visible.
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import WRONGTYPE, ServerProcess, encode_request, error_text, parked, reexecuted
from tests.support.events import both

# Each pop as BZPOPMIN/BZPOPMAX and as BZMPOP: how to send it on ``keys`` and what a served
# pop of ``member``/``score`` from ``key`` looks like.
POPS = ["BZPOPMIN", "BZPOPMAX", "BZMPOP_MIN", "BZMPOP_MAX"]


def pop_command(pop: str, timeout: float | int | str, *keys: str,
                count: int | None = None) -> list[object]:
    if pop.startswith("BZMPOP"):
        where = pop.split("_")[1]
        return ["BZMPOP", timeout, len(keys), *keys, where,
                *(["COUNT", count] if count is not None else [])]
    return [pop, *keys, timeout]


def served(pop: str, key: bytes, *pairs: tuple[bytes, bytes]) -> list[object]:
    if pop.startswith("BZMPOP"):
        return [key, [list(pair) for pair in pairs]]
    assert len(pairs) == 1
    return [key, *pairs[0]]


def lowest(pop: str) -> bool:
    return pop.endswith("MIN")


# ---------------------------------------------------------------------------------------------
# The immediate path
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pops", [("BZPOPMIN", "BZPOPMAX"), ("BZMPOP_MIN", "BZMPOP_MAX")])
def test_pops_from_an_existing_sorted_set_at_once(r, waiting, pops) -> None:
    popmin, popmax = pops
    client = waiting()
    r.zadd("zset", {"a": 0, "b": 1, "c": 2, "d": 3})
    assert client.call(*pop_command(popmin, 5, "zset")) == served(popmin, b"zset", (b"a", b"0"))
    assert client.call(*pop_command(popmax, 5, "zset")) == served(popmax, b"zset", (b"d", b"3"))
    assert client.call(*pop_command(popmin, 5, "zset")) == served(popmin, b"zset", (b"b", b"1"))
    assert client.call(*pop_command(popmax, 5, "zset")) == served(popmax, b"zset", (b"c", b"2"))
    assert r.exists("zset") == 0
    r.zadd("z1", {"a": 0, "b": 1, "c": 2})
    r.zadd("z2", {"d": 3, "e": 4, "f": 5})
    assert client.call(*pop_command(popmin, 5, "z1", "z2")) == served(popmin, b"z1", (b"a", b"0"))
    assert client.call(*pop_command(popmax, 5, "z1", "z2")) == served(popmax, b"z1", (b"c", b"2"))
    assert client.call(*pop_command(popmax, 5, "z2", "z1")) == served(popmax, b"z2", (b"f", b"5"))
    assert client.call(*pop_command(popmin, 5, "z2", "z1")) == served(popmin, b"z2", (b"d", b"3"))
    assert (r.zcard("z1"), r.zcard("z2")) == (1, 1)
    r.delete("z1")
    assert client.call(*pop_command(popmax, 5, "z1", "z2")) == served(popmax, b"z2", (b"e", b"4"))
    parked(r, 0)


def test_bzmpop_count_at_once(r, waiting) -> None:
    client = waiting()
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert client.call("BZMPOP", 0, 2, "nosuch", "z", "MIN", "COUNT", 2) == [
        b"z", [[b"a", b"1"], [b"b", b"2"]]]
    assert client.call("BZMPOP", 0, 1, "z", "MAX", "COUNT", 10) == [b"z", [[b"c", b"3"]]]
    assert r.exists("z") == 0


def test_the_same_key_several_times(r, waiting) -> None:
    client = waiting()
    client.send("BZPOPMIN", "z1", "z2", "z2", "z1", 0)
    parked(r, 1)
    r.zadd("z1", {"a": 0})
    assert client.reply() == [b"z1", b"a", b"0"]
    client.send("BZPOPMIN", "z1", "z2", "z2", "z1", 0)
    parked(r, 1)
    r.zadd("z2", {"b": 1})
    assert client.reply() == [b"z2", b"b", b"1"]
    r.zadd("z1", {"a": 0})
    r.zadd("z2", {"b": 1})
    assert client.call("BZPOPMIN", "z1", "z2", "z2", "z1", 0) == [b"z1", b"a", b"0"]
    assert client.call("BZPOPMIN", "z1", "z2", "z2", "z1", 0) == [b"z2", b"b", b"1"]


# ---------------------------------------------------------------------------------------------
# Parked and served
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pop", POPS)
def test_served_by_a_variadic_zadd(r, waiting, pop) -> None:
    client = waiting()
    client.send(*pop_command(pop, 0, "zset"))
    parked(r, 1)
    assert client.nothing()
    assert r.zadd("zset", {"foo": -1, "bar": 1}) == 2
    if lowest(pop):
        assert client.reply() == served(pop, b"zset", (b"foo", b"-1"))
        assert r.zrange("zset", 0, -1) == [b"bar"]
    else:
        assert client.reply() == served(pop, b"zset", (b"bar", b"1"))
        assert r.zrange("zset", 0, -1) == [b"foo"]
    parked(r, 0)


@pytest.mark.parametrize("pop", POPS)
def test_zero_timeout_blocks_until_served(r, waiting, pop) -> None:
    client = waiting()
    client.send(*pop_command(pop, 0, "zset"))
    parked(r, 1)
    assert client.nothing(1.0)
    r.zadd("zset", {"foo": 0})
    assert client.reply() == served(pop, b"zset", (b"foo", b"0"))


def test_a_parked_pop_is_served_from_the_key_that_gets_members(r, waiting) -> None:
    client = waiting()
    client.send("BZPOPMAX", "z1", "z2", "z3", 0)
    parked(r, 1)
    r.zadd("z3", {"x": 5, "y": 6})
    assert client.reply() == [b"z3", b"y", b"6"]
    mpop = waiting()
    mpop.send("BZMPOP", 0, 2, "z1", "z2", "MAX", "COUNT", 2)
    parked(r, 1)
    r.zadd("z2", {"a": 1, "b": 2, "c": 3})
    assert mpop.reply() == [b"z2", [[b"c", b"3"], [b"b", b"2"]]]
    assert r.zrange("z2", 0, -1) == [b"a"]


def test_bzmpop_with_multiple_blocked_clients(r, waiting) -> None:
    """zset.tcl: four BZMPOPs parked on two keys; one transaction fills both."""
    clients = []
    for index, (where, count) in enumerate((("MIN", 1), ("MAX", 10), ("MIN", 10), ("MAX", 1))):
        client = waiting()
        client.send("BZMPOP", 0, 2, "myzset", "myzset2", where, "COUNT", count)
        parked(r, index + 1)
        clients.append(client)
    pipe = r.pipeline(transaction=True)
    pipe.zadd("myzset", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    pipe.zadd("myzset2", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    pipe.execute()
    assert clients[0].reply() == [b"myzset", [[b"a", b"1"]]]
    assert clients[1].reply() == [b"myzset", [[b"e", b"5"], [b"d", b"4"], [b"c", b"3"],
                                              [b"b", b"2"]]]
    assert clients[2].reply() == [b"myzset2", [[b"a", b"1"], [b"b", b"2"], [b"c", b"3"],
                                               [b"d", b"4"], [b"e", b"5"]]]
    assert clients[3].nothing()
    r.zadd("myzset2", {"a": 1, "b": 2, "c": 3})
    assert clients[3].reply() == [b"myzset2", [[b"c", b"3"]]]


def test_each_new_member_goes_to_the_longest_waiting_client(r, waiting) -> None:
    clients = [waiting() for _ in range(3)]
    for count, client in enumerate(clients, start=1):
        client.send("BZPOPMIN", "z", 0)
        parked(r, count)
    assert r.zadd("z", {"a": 1, "b": 2}) == 2
    assert clients[0].reply() == [b"z", b"a", b"1"]
    assert clients[1].reply() == [b"z", b"b", b"2"]
    assert clients[2].nothing()
    assert r.exists("z") == 0
    r.zadd("z", {"c": 3})
    assert clients[2].reply() == [b"z", b"c", b"3"]


def test_fifo_holds_across_pop_kinds_and_keys(r, waiting) -> None:
    first, second, third = waiting(), waiting(), waiting()
    first.send("BZPOPMAX", "other", "z", 0)
    parked(r, 1)
    second.send("BZMPOP", 0, 1, "z", "MIN", "COUNT", 2)
    parked(r, 2)
    third.send("BZPOPMIN", "z", 0)
    parked(r, 3)
    r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4})
    assert first.reply() == [b"z", b"d", b"4"]
    assert second.reply() == [b"z", [[b"a", b"1"], [b"b", b"2"]]]
    assert third.reply() == [b"z", b"c", b"3"]
    parked(r, 0)
    assert r.exists("z") == 0


def test_k_new_members_run_at_most_k_parked_pops(server, r, waiting) -> None:
    """Thirty clients parked on one key; a ZADD of two members serves the first two and runs
    no other parked command (the rest stay parked, untouched). Redis 7.0 counted every
    blocking call when it parked."""
    clients = [waiting() for _ in range(30)]
    for client in clients:
        client.send("BZPOPMIN", "k", 0)
    parked(r, 30)
    r.config_resetstat()
    r.zadd("k", {"a": 1, "b": 2})
    assert clients[0].reply() == [b"k", b"a", b"1"]
    assert clients[1].reply() == [b"k", b"b", b"2"]
    parked(r, 28)
    assert all(client.nothing(0.01) for client in clients[2:])
    stats = r.info("commandstats").get("cmdstat_bzpopmin", {"calls": 0})
    assert stats["calls"] == (2 if reexecuted(server) else 0)
    r.zadd("k", {"c": 3})
    assert clients[2].reply() == [b"k", b"c", b"3"]
    parked(r, 27)


def test_multi_exec_is_isolated_from_a_parked_pop(r, waiting) -> None:
    for command in (["BZPOPMIN", "zset", 0], ["BZMPOP", 0, 1, "zset", "MIN", "COUNT", 1]):
        client = waiting()
        client.send(*command)
        parked(r, 1)
        pipe = r.pipeline(transaction=True)
        pipe.zadd("zset", {"a": 0})
        pipe.zadd("zset", {"b": 1})
        pipe.zadd("zset", {"c": 2})
        pipe.execute()
        expected = [b"zset", b"a", b"0"] if command[0] == "BZPOPMIN" else [b"zset", [[b"a",
                                                                                        b"0"]]]
        assert client.reply() == expected
        r.delete("zset")


@pytest.mark.parametrize("pop", ["BZPOPMIN", "BZMPOP_MIN"])
@pytest.mark.parametrize("then_set", [False, True])
def test_zadd_and_del_in_a_transaction_do_not_wake_a_parked_pop(r, waiting, pop,
                                                                then_set) -> None:
    client = waiting()
    client.send(*pop_command(pop, 0, "zset", count=1 if pop.startswith("BZM") else None))
    parked(r, 1)
    pipe = r.pipeline(transaction=True)
    pipe.zadd("zset", {"foo": 0})
    pipe.delete("zset")
    if then_set:
        pipe.set("zset", "foo")
    pipe.execute()
    assert client.nothing()
    parked(r, 1)
    r.delete("zset")
    r.zadd("zset", {"bar": 1})
    assert client.reply() == served(pop, b"zset", (b"bar", b"1"))


def test_a_parked_pop_waits_while_its_key_holds_another_type(r, waiting) -> None:
    client = waiting()
    client.send("BZPOPMIN", "k", 0)
    parked(r, 1)
    r.lpush("k", "x")
    assert client.nothing()
    r.delete("k")
    r.sadd("k", "m")
    assert client.nothing()
    r.delete("k")
    r.set("k", "v")
    assert client.nothing()
    parked(r, 1)
    r.delete("k")
    r.zadd("k", {"m": 1})
    assert client.reply() == [b"k", b"m", b"1"]


def test_list_and_zset_waiters_on_one_key_are_served_by_their_own_type(r, waiting) -> None:
    list_waiter = waiting()
    list_waiter.send("BLPOP", "k", 0)
    zset_waiter = waiting()
    zset_waiter.send("BZPOPMIN", "k", 0)
    parked(r, 2)
    r.zadd("k", {"m": 1})
    assert zset_waiter.reply() == [b"k", b"m", b"1"]
    assert list_waiter.nothing()
    zset_waiter.send("BZPOPMAX", "k", 0)
    parked(r, 2)
    r.rpush("k", "e")
    assert list_waiter.reply() == [b"k", b"e"]
    assert zset_waiter.nothing()
    r.zadd("k", {"n": 2})
    assert zset_waiter.reply() == [b"k", b"n", b"2"]


@pytest.mark.parametrize("arrival", ["rename", "move", "swapdb", "copy", "zunionstore",
                                     "zinterstore", "zdiffstore", "zrangestore"])
def test_served_by_a_sorted_set_arriving_under_its_key(r, waiting, arrival) -> None:
    client = waiting()
    client.send("BZPOPMIN", "k", 0)
    parked(r, 1)
    r.zadd("src", {"a": 1, "b": 2})
    if arrival == "rename":
        r.rename("src", "k")
    elif arrival == "move":
        r.execute_command("SELECT", 1)
        r.zadd("k", {"a": 1, "b": 2})
        r.execute_command("MOVE", "k", 0)
        r.execute_command("SELECT", 0)
    elif arrival == "swapdb":
        r.execute_command("SELECT", 1)
        r.zadd("k", {"a": 1, "b": 2})
        r.execute_command("SELECT", 0)
        r.swapdb(0, 1)
    elif arrival == "copy":
        r.copy("src", "k")
    elif arrival in ("zunionstore", "zinterstore"):
        r.execute_command(arrival.upper(), "k", 2, "src", "src", "WEIGHTS", 1, 0)
    elif arrival == "zdiffstore":
        r.execute_command("ZDIFFSTORE", "k", 2, "src", "nosuch")
    else:
        r.execute_command("ZRANGESTORE", "k", "src", 0, -1)
    assert client.reply() == [b"k", b"a", b"1"]
    assert r.zrange("k", 0, -1) == [b"b"]


def test_a_stored_list_does_not_serve_a_zset_waiter(r, waiting) -> None:
    client = waiting()
    client.send("BZPOPMIN", "k", 0)
    parked(r, 1)
    r.zadd("src", {"a": 1})
    r.sort("src", alpha=True, store="k")
    assert r.type("k") == b"list"
    assert client.nothing()
    parked(r, 1)


def test_bzmpop_does_not_block_on_its_non_key_arguments(r, waiting) -> None:
    """zset.tcl #10762: keys named like the timeout, numkeys, MIN/MAX or COUNT do not count."""
    first, second = waiting(), waiting()
    first.send("BZMPOP", 0, 1, "myzset", "MIN", "COUNT", 10)
    parked(r, 1)
    second.send("BZMPOP", 0, 2, "myzset2", "myzset3", "MAX", "COUNT", 10)
    parked(r, 2)
    for key, score, member in (("0", 100, "timeout_value"), ("1", 200, "numkeys_value"),
                               ("min", 300, "min_token"), ("max", 400, "max_token"),
                               ("count", 500, "count_token"), ("10", 600, "count_value")):
        r.zadd(key, {member: score})
    assert first.nothing() and second.nothing()
    r.zadd("myzset", {"zset": 1})
    r.zadd("myzset3", {"zset3": 1})
    assert first.reply() == [b"myzset", [[b"zset", b"1"]]]
    assert second.reply() == [b"myzset3", [[b"zset3", b"1"]]]


def test_served_pop_events(r, waiting, listen) -> None:  # noqa: F811
    collected = listen("KEA")
    client = waiting()
    client.send("BZPOPMAX", "k", 0)
    parked(r, 1)
    r.zadd("k", {"a": 1})
    assert client.reply() == [b"k", b"a", b"1"]
    client.send("BZMPOP", 0, 1, "k", "MIN", "COUNT", 3)
    parked(r, 1)
    r.zadd("k", {"a": 1, "b": 2})
    assert client.reply() == [b"k", [[b"a", b"1"], [b"b", b"2"]]]
    assert collected() == [*both("k", "zadd"), *both("k", "zpopmax"), *both("k", "del"),
                           *both("k", "zadd"), *both("k", "zpopmin"), *both("k", "del")]


# ---------------------------------------------------------------------------------------------
# Timeouts and errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pop", POPS)
def test_timeout_replies_a_null_array_or_a_resp3_null(r, waiting, pop) -> None:
    client = waiting()
    started = time.monotonic()
    client.send(*pop_command(pop, "0.1", "zset", "zset2"))
    assert client.raw() == b"*-1\r\n"
    assert time.monotonic() - started >= 0.1
    resp3 = waiting(resp3=True)
    resp3.send(*pop_command(pop, "0.01", "zset"))
    assert resp3.raw() == b"_\r\n"
    parked(r, 0)


def test_served_replies_on_the_wire(r, waiting) -> None:
    client = waiting()
    r.zadd("zset2", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    client.send("BZPOPMIN", "zset1", "zset2", "0.1")
    assert client.raw() == b"*3\r\n$5\r\nzset2\r\n$1\r\na\r\n$1\r\n1\r\n"
    resp3 = waiting(resp3=True)
    resp3.send("BZPOPMIN", "zset1", "zset2", "0.1")
    assert resp3.raw() == b"*3\r\n$5\r\nzset2\r\n$1\r\nb\r\n,2\r\n"
    resp3.send("BZPOPMIN", "zset", 5)
    parked(r, 1)
    r.zadd("zset", {"a": "1.5"})
    assert resp3.raw() == b"*3\r\n$4\r\nzset\r\n$1\r\na\r\n,1.5\r\n"
    resp3.send("BZMPOP", "0.1", 2, "zset2", "zset4", "MIN")
    assert resp3.raw() == b"*2\r\n$5\r\nzset2\r\n*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"
    resp3.send("BZMPOP", 5, 2, "zset", "zset3", "MAX", "COUNT", 2)
    parked(r, 1)
    r.zadd("zset3", {"a": 1, "b": 2, "c": 3})
    assert resp3.raw() == (b"*2\r\n$5\r\nzset3\r\n*2\r\n*2\r\n$1\r\nc\r\n,3\r\n"
                           b"*2\r\n$1\r\nb\r\n,2\r\n")
    client.send("BZMPOP", 5, 1, "zset3", "MIN", "COUNT", 5)
    assert client.raw() == b"*2\r\n$5\r\nzset3\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"


@pytest.mark.parametrize(("command", "error"), [
    (["BZPOPMIN", "k", "-1"], "timeout is negative"),
    (["BZPOPMAX", "k", "-0.5"], "timeout is negative"),
    (["BZPOPMIN", "k", "abc"], "timeout is not a float or out of range"),
    (["BZPOPMIN", "k", "nan"], "timeout is not a float or out of range"),
    (["BZPOPMIN", "k", " 1"], "timeout is not a float or out of range"),
    (["BZPOPMIN", "k", "1e3x"], "timeout is not a float or out of range"),
    (["BZPOPMIN", "k", ""], "timeout is not a float or out of range"),
    (["BZMPOP", "-1", 1, "k", "MIN"], "timeout is negative"),
    (["BZMPOP", "x", 1, "k", "MIN"], "timeout is not a float or out of range"),
    (["BZPOPMIN"], "wrong number of arguments for 'bzpopmin' command"),
    (["BZPOPMAX", "k"], "wrong number of arguments for 'bzpopmax' command"),
    (["BZMPOP"], "wrong number of arguments for 'bzmpop' command"),
    (["BZMPOP", 0, 1], "wrong number of arguments for 'bzmpop' command"),
    (["BZMPOP", 0, 1, "myzset"], "wrong number of arguments for 'bzmpop' command"),
    (["BZMPOP", 1, 0, "myzset", "MIN"], "numkeys should be greater than 0"),
    (["BZMPOP", 1, "a", "myzset", "MIN"], "numkeys should be greater than 0"),
    (["BZMPOP", 1, -1, "myzset", "MAX"], "numkeys should be greater than 0"),
    (["BZMPOP", 1, 1, "myzset", "bad_where"], "syntax error"),
    (["BZMPOP", 1, 1, "myzset", "MIN", "bar_arg"], "syntax error"),
    (["BZMPOP", 1, 1, "myzset", "MAX", "MIN"], "syntax error"),
    (["BZMPOP", 1, 1, "myzset", "COUNT"], "syntax error"),
    (["BZMPOP", 1, 1, "myzset", "MIN", "COUNT", 1, "COUNT", 2], "syntax error"),
    (["BZMPOP", 1, 2, "myzset", "myzset2", "bad_arg"], "syntax error"),
    (["BZMPOP", 1, 2, "myzset", "MIN"], "syntax error"),
    (["BZMPOP", 1, 1, "myzset", "MIN", "COUNT", 0], "count should be greater than 0"),
    (["BZMPOP", 1, 1, "myzset", "MAX", "COUNT", "a"], "count should be greater than 0"),
    (["BZMPOP", 1, 1, "myzset", "MIN", "COUNT", -1], "count should be greater than 0"),
    (["BZMPOP", 1, 2, "myzset", "myzset2", "MAX", "COUNT", -1],
     "count should be greater than 0"),
    # BZMPOP reads its numkeys, MIN/MAX and COUNT before its timeout.
    (["BZMPOP", "-1", 0, "myzset", "MIN"], "numkeys should be greater than 0"),
    (["BZMPOP", "x", 0, "myzset", "MIN"], "numkeys should be greater than 0"),
    (["BZMPOP", "-1", 1, "myzset", "FOO"], "syntax error"),
    (["BZMPOP", "-1", 1, "myzset", "MIN", "COUNT", 0], "count should be greater than 0"),
])
def test_argument_errors(r, command: list[object], error: str) -> None:
    r.zadd("myzset", {"a": 1})
    with pytest.raises(redis.ResponseError) as info:
        r.execute_command(*command)
    assert str(info.value) == error
    assert r.zcard("myzset") == 1


@pytest.mark.parametrize("timeout", ["inf", "1e20"])
def test_timeout_beyond_the_clock(server, r, timeout: str) -> None:
    """Redis 7.0 called an overflowing timeout negative; 7.2 and later say it is out of range."""
    expected = "timeout is out of range" if reexecuted(server) else "timeout is negative"
    for command in (["BZPOPMIN", "k", timeout], ["BZMPOP", timeout, 1, "k", "MAX"]):
        with pytest.raises(redis.ResponseError) as info:
            r.execute_command(*command)
        assert str(info.value) == expected


def test_timeouts_are_rounded_up_to_milliseconds(r, waiting) -> None:
    """The timeout in ms is ceil(seconds * 1000): -0.0001 s becomes 0 (wait for ever) and
    0.0001 s one millisecond; hexadecimal and exponents are read as strtold reads them."""
    forever = waiting()
    forever_id = forever.client_id()
    forever.send("BZPOPMIN", "k", "-0.0001")
    parked(r, 1)
    assert forever.nothing(0.3)
    assert r.client_unblock(forever_id) == 1
    assert forever.raw() == b"*-1\r\n"
    client = waiting()
    for timeout in ("0.0001", "1e-10", "+1e-1", "0x0.1"):
        client.send("BZPOPMIN", "k", timeout)
        assert client.raw() == b"*-1\r\n", timeout


def test_wrong_type_fails_at_once(r, waiting) -> None:
    r.set("foo", "bar")
    client = waiting()
    for command in (["BZPOPMIN", "foo", 1], ["BZPOPMAX", "foo", 1],
                    ["BZMPOP", 1, 1, "foo", "MIN"], ["BZMPOP", 1, 1, "foo", "MAX"],
                    ["BZMPOP", 1, 1, "foo", "MIN", "COUNT", 10],
                    ["BZMPOP", 1, 2, "nosuch", "foo", "MIN"],
                    ["BZMPOP", 1, 2, "foo", "nosuch", "MAX", "COUNT", 1],
                    ["BZPOPMIN", "nosuch", "foo", 0]):
        assert error_text(client.call(*command)) == WRONGTYPE, command
    r.zadd("z", {"a": 1})
    assert client.call("BZPOPMIN", "z", "foo", 0) == [b"z", b"a", b"1"]  # stops at z
    parked(r, 0)


# ---------------------------------------------------------------------------------------------
# MULTI, CLIENT UNBLOCK, expiry under a parked client
# ---------------------------------------------------------------------------------------------


def test_blocking_pops_inside_multi_do_not_block(r, waiting) -> None:
    client = waiting()
    client.send_raw(encode_request("MULTI") + encode_request("BZPOPMIN", "z", 0) + encode_request("BZPOPMAX", "z", 0)
                    + encode_request("BZMPOP", 0, 1, "z", "MIN") + encode_request("EXEC"))
    assert [client.reply() for _ in range(5)] == [b"OK", b"QUEUED", b"QUEUED", b"QUEUED",
                                                  [None, None, None]]
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    client.send_raw(encode_request("MULTI") + encode_request("BZPOPMIN", "z", 0) + encode_request("BZPOPMAX", "z", 0)
                    + encode_request("BZMPOP", 0, 1, "z", "MIN", "COUNT", 5) + encode_request("EXEC"))
    assert [client.reply() for _ in range(5)][-1] == [[b"z", b"a", b"1"], [b"z", b"c", b"3"],
                                                      [b"z", [[b"b", b"2"]]]]
    client.send_raw(encode_request("MULTI") + encode_request("BZPOPMIN", "z", 0) + encode_request("EXEC"))
    assert client.raw(5).endswith(b"*1\r\n*-1\r\n")
    parked(r, 0)


def test_client_unblock(r, waiting) -> None:
    client = waiting()
    client_id = client.client_id()
    client.send("BZPOPMIN", "z", 0)
    parked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", client_id, "TIMEOUT") == 1
    assert client.raw() == b"*-1\r\n"
    client.send("BZMPOP", 0, 1, "z", "MAX")
    parked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", client_id, "ERROR") == 1
    assert error_text(client.reply()) == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
    parked(r, 0)
    r.zadd("z", {"a": 1})
    assert r.zcard("z") == 1  # nothing is waiting for it any more


def test_parked_pop_shows_in_client_list(r, waiting) -> None:
    client = waiting()
    client_id = client.client_id()
    client.send("BZMPOP", 0, 3, "a", "b", "c", "MIN")
    parked(r, 1)
    line = [c for c in r.client_list() if int(c["id"]) == client_id][0]
    assert line["flags"] == "b" and line["cmd"] == "bzmpop"
    clients = r.info("clients")
    if "total_blocking_keys" in clients:  # Redis 7.2+
        assert clients["total_blocking_keys"] == 3
    client.close()
    parked(r, 0)


def test_a_key_expiring_before_it_serves_leaves_the_client_parked(server: ServerProcess, r,
                                                                  waiting) -> None:
    """zset.tcl: a transaction adds a member, expires the key and sleeps past the expiry; the
    parked pop finds nothing and times out at its original deadline (fixed in #13004)."""
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    client = waiting()
    started = time.monotonic()
    client.send("BZPOPMIN", "zset", 1)
    parked(r, 1)
    pipe = r.pipeline(transaction=True)
    pipe.zadd("zset", {"one": 1})
    pipe.pexpire("zset", 100)
    pipe.execute_command("DEBUG", "SLEEP", "0.2")
    pipe.execute()
    assert client.reply() is None
    assert 1.0 <= time.monotonic() - started < 1.15
    assert r.exists("zset") == 0
