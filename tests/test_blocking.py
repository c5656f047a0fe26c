"""Blocking reads (XREAD / XREADGROUP BLOCK): parking, serving, timeouts, CLIENT UNBLOCK, and
what parked readers are told when their key or group changes under them.

Every test using ``server`` runs against Brook and real Redis: parked clients are plain
sockets, and ``INFO clients`` ``blocked_clients`` says when they are parked. Tests marked
``brook_only`` pin where Brook deliberately differs from Redis: it never sends a parked group
reader an empty reply, and one write serves only as many readers of a group as it has entries
for (the thundering herd of seed 002).
"""

from __future__ import annotations

import time

import hiredis
import pytest
import redis

from brook.commands.registry import CommandError
from brook.commands.timeouts import parse_timeout
from tests.conftest import WRONGTYPE, Waiting, encode_request, error_text, parked, reexecuted

# What a parked XREADGROUP gets when its stream or group goes. Redis 7.0 sent these texts;
# Redis >= 7.2 runs the command again, which answers as it would at once (Brook follows that).
UNBLOCKED_NO_KEY = "UNBLOCKED the stream key no longer exists"
NOGROUP_BLOCKED = "NOGROUP the consumer group this client was blocked on no longer exists"
NOGROUP_RERUN = "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"










def entry(entry_id: bytes, *fields: bytes) -> list[object]:
    return [entry_id, list(fields)]


# ---------------------------------------------------------------------------------------------
# XREAD BLOCK
# ---------------------------------------------------------------------------------------------


def test_xread_block_dollar_is_served_by_the_next_entry(r, waiting) -> None:
    r.xadd("s", {"a": "1"}, id="1-1")
    reader = waiting()
    reader.send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 1)
    assert reader.nothing()
    r.xadd("s", {"b": "2"}, id="2-1")
    assert reader.reply() == [[b"s", [entry(b"2-1", b"b", b"2")]]]
    parked(r, 0)


def test_xread_block_on_a_missing_key_and_several_keys(r, waiting) -> None:
    reader = waiting()
    reader.send("XREAD", "BLOCK", 0, "STREAMS", "x1", "x2", "$", "$")
    parked(r, 1)
    r.xadd("x2", {"f": "v"}, id="1-1")
    assert reader.reply() == [[b"x2", [entry(b"1-1", b"f", b"v")]]]


def test_xread_block_with_an_id_ahead_waits_for_an_entry_after_it(r, waiting) -> None:
    r.xadd("s", {"a": "1"}, id="1-1")
    reader = waiting()
    reader.send("XREAD", "BLOCK", 0, "STREAMS", "s", "5-0")
    parked(r, 1)
    r.xadd("s", {"a": "3"}, id="3-1")
    assert reader.nothing()
    r.xadd("s", {"a": "6"}, id="6-1")
    assert reader.reply() == [[b"s", [entry(b"6-1", b"a", b"6")]]]


def test_xread_block_serves_every_plain_reader(r, waiting) -> None:
    readers = [waiting() for _ in range(5)]
    for reader in readers:
        reader.send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 5)
    r.xadd("s", {"f": "v"}, id="1-1")
    for reader in readers:
        assert reader.reply() == [[b"s", [entry(b"1-1", b"f", b"v")]]]


def test_plain_readers_on_two_keys_served_again_and_again_stay_parked_on_both(r, waiting) -> None:
    """Readers served through one key leave stale entries on the other; none is lost."""
    readers = [waiting() for _ in range(80)]
    for round_number in range(1, 4):
        for reader in readers:
            reader.send("XREAD", "BLOCK", 0, "STREAMS", "a", "b", "$", "$")
        parked(r, len(readers))
        r.xadd("a", {"n": str(round_number)}, id=f"{round_number}-1")
        for reader in readers:
            assert reader.reply()[0][0] == b"a"
    for reader in readers:
        reader.send("XREAD", "BLOCK", 0, "STREAMS", "a", "b", "$", "$")
    parked(r, len(readers))
    r.xadd("b", {"f": "v"}, id="9-1")
    for reader in readers:
        assert reader.reply() == [[b"b", [entry(b"9-1", b"f", b"v")]]]
    parked(r, 0)


def test_xread_block_count_is_honoured_when_served(r, waiting) -> None:
    reader = waiting()
    reader.send("XREAD", "COUNT", 2, "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 1)
    pipe = r.pipeline(transaction=True)
    for seq in (1, 2, 3):
        pipe.xadd("s", {"n": str(seq)}, id=f"1-{seq}")
    pipe.execute()
    assert reader.reply() == [[b"s", [entry(b"1-1", b"n", b"1"), entry(b"1-2", b"n", b"2")]]]


def test_xread_block_times_out_with_a_null_array(r, waiting) -> None:
    reader = waiting()
    started = time.monotonic()
    reader.send("XREAD", "BLOCK", 100, "STREAMS", "s", "$")
    assert reader.raw() == b"*-1\r\n"
    assert time.monotonic() - started >= 0.1
    r3_reader = waiting(resp3=True)
    r3_reader.send("XREAD", "BLOCK", 50, "STREAMS", "s", "$")
    assert r3_reader.raw() == b"_\r\n"


def test_xread_reader_waits_on_when_its_key_is_deleted_or_replaced(r, waiting) -> None:
    r.xadd("s", {"a": "1"}, id="1-1")
    reader = waiting()
    reader.send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 1)
    r.delete("s")
    assert reader.nothing()
    r.set("s", "x")
    assert reader.nothing()
    r.delete("s")
    r.xadd("s", {"a": "2"}, id="2-1")
    assert reader.reply() == [[b"s", [entry(b"2-1", b"a", b"2")]]]


def test_xread_block_on_another_type_is_wrongtype_at_once(r, waiting) -> None:
    r.set("s", "x")
    reader = waiting()
    reply = reader.call("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    assert error_text(reply).startswith("WRONGTYPE")


@pytest.mark.parametrize(("timeout", "error"), [
    ("-1", "timeout is negative"),
    ("1.5", "timeout is not an integer or out of range"),
    ("abc", "timeout is not an integer or out of range"),
    ("99999999999999999999", "timeout is not an integer or out of range"),
])
def test_xread_block_timeout_errors(r, timeout: str, error: str) -> None:
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("XREAD", "BLOCK", timeout, "STREAMS", "s", "$")
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", timeout, "STREAMS", "s", ">")


@pytest.mark.min_redis(7, 2)
def test_xread_block_timeout_beyond_the_clock_is_out_of_range(r) -> None:
    with pytest.raises(redis.ResponseError, match="timeout is out of range"):
        r.execute_command("XREAD", "BLOCK", str(2**63 - 2), "STREAMS", "s", "$")


@pytest.mark.min_redis(7, 4)
def test_xread_block_plus_on_an_empty_stream_waits_for_the_next_entry(r, waiting) -> None:
    reader = waiting()
    reader.send("XREAD", "BLOCK", 0, "STREAMS", "s", "+")
    parked(r, 1)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert reader.reply() == [[b"s", [entry(b"1-1", b"f", b"v")]]]


# ---------------------------------------------------------------------------------------------
# XREADGROUP BLOCK
# ---------------------------------------------------------------------------------------------


def _group(r: redis.Redis, key: str = "s", group: str = "g") -> None:
    r.xgroup_create(key, group, "$", mkstream=True)


def _park_group_reader(r, waiting, consumer: str = "c1", *options: str | int,
                       key: str = "s", count: int = 1):  # type: ignore[no-untyped-def]
    reader = waiting()
    reader.send("XREADGROUP", "GROUP", "g", consumer, *options, "BLOCK", 0, "STREAMS", key, ">")
    parked(r, count)
    return reader


def test_xreadgroup_block_is_served_and_the_entry_becomes_pending(r, waiting) -> None:
    _group(r)
    reader = _park_group_reader(r, waiting)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert reader.reply() == [[b"s", [entry(b"1-1", b"f", b"v")]]]
    pending = r.xpending("s", "g")
    assert pending["pending"] == 1 and pending["consumers"] == [{"name": b"c1", "pending": 1}]


def test_xreadgroup_block_noack_leaves_nothing_pending(r, waiting) -> None:
    _group(r)
    reader = _park_group_reader(r, waiting, "c1", "NOACK")
    r.xadd("s", {"f": "v"}, id="1-1")
    assert reader.reply() == [[b"s", [entry(b"1-1", b"f", b"v")]]]
    assert r.xpending("s", "g")["pending"] == 0


def test_xreadgroup_block_count_is_honoured_when_served(r, waiting) -> None:
    _group(r)
    reader = _park_group_reader(r, waiting, "c1", "COUNT", 2)
    pipe = r.pipeline(transaction=True)
    for seq in (1, 2, 3):
        pipe.xadd("s", {"n": str(seq)}, id=f"1-{seq}")
    pipe.execute()
    assert reader.reply() == [[b"s", [entry(b"1-1", b"n", b"1"), entry(b"1-2", b"n", b"2")]]]
    assert r.xreadgroup("g", "c2", {"s": ">"}) == [[b"s", [(b"1-3", {b"n": b"3"})]]]


def test_seed_002_one_entry_serves_one_consumer_of_the_group(r, waiting) -> None:
    """The seeds' scenario: C1 and C2 park on the same group, one XADD: exactly one gets the
    entry; the other gets no reply at all and times out at its own original deadline."""
    _group(r)
    first = waiting()
    second = waiting()
    started = time.monotonic()
    first.send("XREADGROUP", "GROUP", "g", "c1", "BLOCK", 0, "STREAMS", "s", ">")
    second.send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", 1000, "STREAMS", "s", ">")
    parked(r, 2)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert first.reply() == [[b"s", [entry(b"1-1", b"f", b"v")]]]
    assert second.nothing(0.3)
    assert second.raw() == b"*-1\r\n"
    assert time.monotonic() - started >= 1.0
    assert r.xpending("s", "g")["consumers"] == [{"name": b"c1", "pending": 1}]


def test_group_readers_are_served_in_arrival_order(r, waiting) -> None:
    _group(r)
    readers = []
    for index in range(4):
        reader = waiting()
        reader.send("XREADGROUP", "GROUP", "g", f"c{index}", "BLOCK", 0, "STREAMS", "s", ">")
        parked(r, index + 1)
        readers.append(reader)
    for index in range(4):
        r.xadd("s", {"n": str(index)}, id=f"1-{index + 1}")
        assert readers[index].reply() == [[b"s", [entry(b"1-%d" % (index + 1), b"n",
                                                          str(index).encode())]]]


@pytest.mark.parametrize("change", [
    ["DEL", "s"],
    ["SET", "s", "x"],
    ["RENAME", "s", "t"],
    ["MOVE", "s", "1"],
    ["FLUSHALL"],
    ["FLUSHDB"],
    ["SWAPDB", "0", "1"],
    ["UNLINK", "s"],
    ["EXPIRE", "s", "0"],
])
def test_group_reader_is_unblocked_when_the_stream_goes(server, r, waiting,
                                                        change: list[str]) -> None:
    _group(r)
    reader = _park_group_reader(r, waiting)
    r.execute_command(*change)
    if not reexecuted(server):
        expected = UNBLOCKED_NO_KEY
    else:
        expected = WRONGTYPE if change[0] == "SET" else NOGROUP_RERUN
    assert error_text(reader.reply()) == expected
    parked(r, 0)
    if reexecuted(server):  # counted once, as a failed call, when it is unblocked
        stats = r.info("commandstats")["cmdstat_xreadgroup"]
        assert (stats["calls"], stats["failed_calls"]) == (1, 1)


def test_group_reader_is_told_when_its_group_is_destroyed(server, r, waiting) -> None:
    _group(r)
    reader = _park_group_reader(r, waiting)
    r.xgroup_destroy("s", "g")
    expected = NOGROUP_RERUN if reexecuted(server) else NOGROUP_BLOCKED
    assert error_text(reader.reply()) == expected


def test_group_reader_of_a_stream_replaced_by_a_stream_without_its_group(server, r,
                                                                         waiting) -> None:
    """A MULTI that deletes the stream and creates another one under the same key: the group
    is gone, so the reader gets NOGROUP (Redis >= 7.2 runs it again against the new stream)."""
    _group(r)
    reader = _park_group_reader(r, waiting)
    pipe = r.pipeline(transaction=True)
    pipe.delete("s")
    pipe.xadd("s", {"a": "1"}, id="1-1")
    pipe.execute()
    expected = NOGROUP_RERUN if reexecuted(server) else NOGROUP_BLOCKED
    assert error_text(reader.reply()) == expected
    parked(r, 0)


def test_group_reader_of_a_stream_renamed_onto_its_key(r, waiting) -> None:
    _group(r)
    r.xgroup_create("t", "g", "$", mkstream=True)
    r.xadd("t", {"a": "1"}, id="5-1")
    reader = _park_group_reader(r, waiting)
    r.rename("t", "s")
    assert reader.reply() == [[b"s", [entry(b"5-1", b"a", b"1")]]]


def test_group_moved_back_serves_its_reader_at_the_next_entry(r, waiting) -> None:
    """XGROUP SETID does not wake a parked reader (it is no write of an entry); the next
    entry serves it everything from the group's new position."""
    _group(r)
    r.xadd("s", {"a": "1"}, id="1-1")
    r.xgroup_setid("s", "g", "$")
    reader = _park_group_reader(r, waiting)
    r.xgroup_setid("s", "g", "0")
    assert reader.nothing()
    r.xadd("s", {"a": "2"}, id="2-1")
    assert reader.reply() == [[b"s", [entry(b"1-1", b"a", b"1"), entry(b"2-1", b"a", b"2")]]]


def test_group_reader_deleted_consumer_keeps_waiting(r, waiting) -> None:
    _group(r)
    reader = _park_group_reader(r, waiting)
    assert r.xgroup_delconsumer("s", "g", "c1") == 0
    assert reader.nothing()
    r.xadd("s", {"a": "1"}, id="1-1")
    assert reader.reply() == [[b"s", [entry(b"1-1", b"a", b"1")]]]


@pytest.mark.brook_only
def test_group_reader_never_gets_an_empty_reply(r, waiting) -> None:
    """Redis answers ``[[s, []]]`` when a transaction adds an entry and deletes it again;
    Brook keeps the reader waiting, as it has nothing to deliver."""
    _group(r)
    reader = _park_group_reader(r, waiting)
    plain = waiting()
    plain.send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 2)
    pipe = r.pipeline(transaction=True)
    pipe.xadd("s", {"a": "1"}, id="1-1")
    pipe.xdel("s", "1-1")
    pipe.execute()
    assert reader.nothing() and plain.nothing()
    r.xadd("s", {"a": "2"}, id="2-1")
    assert reader.reply() == [[b"s", [entry(b"2-1", b"a", b"2")]]]
    assert plain.reply() == [[b"s", [entry(b"2-1", b"a", b"2")]]]


@pytest.mark.brook_only
def test_one_entry_runs_one_parked_command(r, waiting) -> None:
    """The herd: with 30 readers of a group parked, one XADD runs exactly one XREADGROUP (the
    one served); Redis 7.2+ would run all 30 again."""
    _group(r)
    readers = [waiting() for _ in range(30)]
    for index, reader in enumerate(readers):
        reader.send("XREADGROUP", "GROUP", "g", f"c{index}", "BLOCK", 0, "STREAMS", "s", ">")
    parked(r, 30)
    before = r.info("commandstats").get("cmdstat_xreadgroup", {}).get("calls", 0)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert readers[0].reply() == [[b"s", [entry(b"1-1", b"f", b"v")]]]
    parked(r, 29)
    assert r.info("commandstats")["cmdstat_xreadgroup"]["calls"] == before + 1
    assert all(reader.nothing(0.01) for reader in readers[1:])


@pytest.mark.brook_only
def test_claim_reader_is_woken_when_an_entry_becomes_claimable(r, waiting) -> None:
    _group(r)
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xreadgroup("g", "worker", {"s": ">"})
    reader = waiting()
    reader.send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", 0, "CLAIM", 150, "STREAMS", "s", ">")
    parked(r, 1)
    assert reader.nothing(0.05)
    reply = reader.reply()
    assert reply[0][0] == b"s"
    entry_id, fields, idle, deliveries = reply[0][1][0]
    assert (entry_id, fields, deliveries) == (b"1-1", [b"f", b"v"], 1)
    assert idle >= 150
    pending = r.xpending_range("s", "g", "-", "+", 10)
    assert pending[0]["consumer"] == b"c2" and pending[0]["times_delivered"] == 2


@pytest.mark.brook_only
def test_claim_reader_is_woken_by_a_released_entry(r, waiting) -> None:
    _group(r)
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xreadgroup("g", "worker", {"s": ">"})
    reader = waiting()
    reader.send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", 0, "CLAIM", 60000, "STREAMS", "s",
                ">")
    parked(r, 1)
    assert r.execute_command("XNACK", "s", "g", "SILENT", "IDS", 1, "1-1") == 1
    reply = reader.reply()
    assert reply[0][1][0][0] == b"1-1"


# ---------------------------------------------------------------------------------------------
# MULTI, CLIENT UNBLOCK / KILL / LIST, INFO, held requests
# ---------------------------------------------------------------------------------------------


def test_blocking_reads_inside_multi_do_not_block(r, waiting) -> None:
    _group(r)
    client = waiting()
    client.send_raw(encode_request("MULTI") + encode_request("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
                    + encode_request("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
                    + encode_request("EXEC"))
    assert [client.reply() for _ in range(4)] == [b"OK", b"QUEUED", b"QUEUED", [None, None]]


def test_client_unblock(r, waiting) -> None:
    reader = waiting()
    reader_id = reader.client_id()
    assert r.client_unblock(reader_id) == 0
    reader.send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", reader_id, "TIMEOUT") == 1
    assert reader.raw() == b"*-1\r\n"
    reader.send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 1)
    with pytest.raises(redis.ResponseError, match="CLIENT UNBLOCK reason should be TIMEOUT"):
        r.execute_command("CLIENT", "UNBLOCK", reader_id, "FOO")
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        r.execute_command("CLIENT", "UNBLOCK", "x")
    assert r.execute_command("CLIENT", "UNBLOCK", reader_id, "ERROR") == 1
    assert error_text(reader.reply()) == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
    parked(r, 0)
    assert reader.call("PING") == b"PONG"


def test_parked_client_shows_in_client_list_and_info(r, waiting) -> None:
    _group(r)
    _group(r, "t")
    reader = waiting()
    reader_id = reader.client_id()
    reader.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", "t", ">", ">")
    parked(r, 1)
    line = [c for c in r.client_list() if int(c["id"]) == reader_id][0]
    assert line["flags"] == "b" and line["cmd"] == "xreadgroup"
    clients = r.info("clients")
    assert clients["blocked_clients"] == 1
    if "total_blocking_keys" in clients:  # Redis 7.2+
        assert clients["total_blocking_keys"] == 2
        assert clients["total_blocking_keys_on_nokey"] == 2


def test_requests_sent_while_parked_wait_for_the_reply(r, waiting) -> None:
    reader = waiting()
    reader.send_raw(encode_request("XREAD", "BLOCK", 0, "STREAMS", "s", "$") + encode_request("PING")
                    + encode_request("ECHO", "after"))
    parked(r, 1)
    assert reader.nothing()
    reader.send("ECHO", "later")
    assert reader.nothing()
    r.xadd("s", {"f": "v"}, id="1-1")
    assert reader.reply() == [[b"s", [entry(b"1-1", b"f", b"v")]]]
    assert [reader.reply(), reader.reply(), reader.reply()] == [b"PONG", b"after", b"later"]


def test_killed_or_disconnected_parked_clients_leave_nothing_behind(r, waiting) -> None:
    _group(r)
    killed = waiting()
    killed_id = killed.client_id()
    killed.send("XREADGROUP", "GROUP", "g", "c1", "BLOCK", 0, "STREAMS", "s", ">")
    gone = waiting()
    gone.send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    parked(r, 2)
    assert r.client_kill_filter(_id=killed_id) == 1
    gone.close()
    parked(r, 0)
    assert r.info("clients").get("total_blocking_keys", 0) == 0
    r.xadd("s", {"f": "v"}, id="1-1")
    assert r.xreadgroup("g", "c2", {"s": ">"}) == [[b"s", [(b"1-1", {b"f": b"v"})]]]


# ---------------------------------------------------------------------------------------------
# Stress (Brook: 500 consumers, 10,000 entries)
# ---------------------------------------------------------------------------------------------


@pytest.mark.brook_only
def test_500_parked_consumers_share_10000_entries_exactly_once_in_fifo(r, server) -> None:
    """Every entry delivered once, no empty reply, and FIFO: with each consumer re-parking at
    once, the deliveries go round the consumers in turn, so nobody is starved."""
    import selectors
    import socket

    consumers = 500
    entries = 10_000
    _group(r)
    selector = selectors.DefaultSelector()
    requests = {}
    for index in range(consumers):
        sock = socket.create_connection((server.host, server.port))
        request = encode_request("XREADGROUP", "GROUP", "g", f"c{index}", "COUNT", 1, "BLOCK", 0,
                         "STREAMS", "s", ">")
        requests[index] = request
        sock.sendall(request)
        selector.register(sock, selectors.EVENT_READ, (index, hiredis.Reader()))
    parked(r, consumers)
    producer = Waiting(server)
    received: dict[bytes, int] = {}
    per_consumer = [0] * consumers
    empty = 0

    def drain(wait: float) -> None:
        nonlocal empty
        for key, _ in selector.select(wait):
            index, reader = key.data
            reader.feed(key.fileobj.recv(1 << 16))  # type: ignore[union-attr]
            while (reply := reader.gets()) is not False:
                if not reply:
                    empty += 1
                    continue
                for entry_id, _fields in reply[0][1]:
                    received[entry_id] = received.get(entry_id, 0) + 1
                per_consumer[index] += 1
                key.fileobj.sendall(requests[index])  # type: ignore[union-attr]

    for _ in range(entries):
        producer.send("XADD", "s", "*", "f", "v")
        producer.reply()
        drain(0)
    deadline = time.monotonic() + 60
    while sum(received.values()) < entries and time.monotonic() < deadline:
        drain(0.5)
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    producer.close()
    assert empty == 0
    assert len(received) == entries and set(received.values()) == {1}
    assert min(per_consumer) >= 1  # nobody starved
    assert max(per_consumer) - min(per_consumer) <= 2  # round robin, as FIFO implies
    assert r.xpending("s", "g")["pending"] == entries


# ---------------------------------------------------------------------------------------------
# Blocking list pops
# ---------------------------------------------------------------------------------------------


def test_blpop_and_brpop_are_served_by_a_push(r, waiting) -> None:
    left = waiting()
    left.send("BLPOP", "l1", "l2", 0)
    right = waiting()
    right.send("BRPOP", "r", 0)
    parked(r, 2)
    r.rpush("l2", "a", "b")
    assert left.reply() == [b"l2", b"a"]
    r.rpush("r", "x", "y")
    assert right.reply() == [b"r", b"y"]
    assert r.lrange("l2", 0, -1) == [b"b"] and r.lrange("r", 0, -1) == [b"x"]


def test_each_pushed_element_goes_to_the_longest_waiting_client(r, waiting) -> None:
    first, second, third = waiting(), waiting(), waiting()
    for count, client in enumerate((first, second, third), start=1):
        client.send("BLPOP", "l", 0)
        parked(r, count)
    assert r.lpush("l", "a", "b") == 2
    assert first.reply() == [b"l", b"b"]
    assert second.reply() == [b"l", b"a"]
    assert third.nothing()
    assert r.exists("l") == 0
    r.rpush("l", "c")
    assert third.reply() == [b"l", b"c"]


def test_blpop_times_out_with_a_null_array(r, waiting) -> None:
    client = waiting()
    started = time.monotonic()
    client.send("BLPOP", "l", "0.1")
    assert client.raw() == b"*-1\r\n"
    assert time.monotonic() - started >= 0.1
    resp3 = waiting(resp3=True)
    resp3.send("BLMPOP", "0.05", 1, "l", "LEFT")
    assert resp3.raw() == b"_\r\n"
    resp3.send("BLMOVE", "l", "d", "LEFT", "LEFT", "0.05")
    assert resp3.raw() == b"_\r\n"


@pytest.mark.parametrize(("command", "error"), [
    (["BLPOP", "l", "-1"], "timeout is negative"),
    (["BLPOP", "l", "abc"], "timeout is not a float or out of range"),
    (["BLPOP", "l", " 1"], "timeout is not a float or out of range"),
    (["BLPOP", "l", "nan"], "timeout is not a float or out of range"),
    (["BRPOP", "l", "1x"], "timeout is not a float or out of range"),
    (["BRPOPLPUSH", "a", "b", "-1"], "timeout is negative"),
    (["BLMOVE", "a", "b", "UP", "LEFT", "1"], "syntax error"),
    (["BLMOVE", "a", "b", "LEFT", "LEFT", "-2"], "timeout is negative"),
    (["BLMPOP", "-1", "1", "l", "LEFT"], "timeout is negative"),
    (["BLMPOP", "0.1", "0", "l", "LEFT"], "numkeys should be greater than 0"),
    (["BLMPOP", "0.1", "1", "l", "LEFT", "COUNT", "0"], "count should be greater than 0"),
    (["BLMPOP", "0.1", "2", "l", "LEFT"], "syntax error"),
])
def test_blocking_pop_errors(r, command: list[str], error: str) -> None:
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command(*command)


@pytest.mark.min_redis(7, 2)
@pytest.mark.parametrize("timeout", ["inf", "1e20", "9223372036854776", "9999999999999999999"])
def test_blocking_pop_timeout_out_of_range(r, timeout: str) -> None:
    with pytest.raises(redis.ResponseError, match="timeout is out of range"):
        r.execute_command("BLPOP", "l", timeout)


def test_blpop_timeout_in_hex_is_read_as_strtold_does(r, waiting) -> None:
    client = waiting()
    client_id = client.client_id()
    client.send("BLPOP", "l", "0x10")
    parked(r, 1)
    assert r.client_unblock(client_id) == 1
    assert client.raw() == b"*-1\r\n"


def test_blpop_on_another_type_is_wrongtype_at_once(r, waiting) -> None:
    r.set("l", "x")
    assert error_text(waiting().call("BLPOP", "l", 0)).startswith("WRONGTYPE")


def test_pop_waits_on_while_its_key_holds_another_type(r, waiting) -> None:
    client = waiting()
    client.send("BLPOP", "l", 0)
    parked(r, 1)
    r.set("l", "x")
    assert client.nothing()
    r.delete("l")
    r.rpush("l", "a")
    assert client.reply() == [b"l", b"a"]


def test_blmove_to_a_key_of_another_type_fails_when_served(r, waiting) -> None:
    r.set("d", "x")
    client = waiting()
    client.send("BLMOVE", "l", "d", "LEFT", "RIGHT", 0)
    parked(r, 1)
    r.rpush("l", "a")
    assert error_text(client.reply()).startswith("WRONGTYPE")
    assert r.lrange("l", 0, -1) == [b"a"]


def test_brpoplpush_serves_a_client_parked_on_its_destination(r, waiting) -> None:
    mover = waiting()
    mover.send("BRPOPLPUSH", "q", "q2", 0)
    popper = waiting()
    popper.send("BLPOP", "q2", 0)
    parked(r, 2)
    r.rpush("q", "a")
    assert mover.reply() == b"a"
    assert popper.reply() == [b"q2", b"a"]
    assert r.exists("q", "q2") == 0


def test_blmove_moves_atomically_when_served(r, waiting) -> None:
    client = waiting()
    client.send("BLMOVE", "src", "dst", "RIGHT", "LEFT", 0)
    parked(r, 1)
    r.rpush("src", "a", "b")
    assert client.reply() == b"b"
    assert r.lrange("src", 0, -1) == [b"a"] and r.lrange("dst", 0, -1) == [b"b"]


def test_blmpop_is_served_with_its_count(r, waiting) -> None:
    client = waiting()
    client.send("BLMPOP", 0, 2, "l", "l2", "RIGHT", "COUNT", 2)
    parked(r, 1)
    r.rpush("l2", "a", "b", "c")
    assert client.reply() == [b"l2", [b"c", b"b"]]
    assert r.lrange("l2", 0, -1) == [b"a"]


@pytest.mark.parametrize("arrival", ["rename", "move", "swapdb", "copy"])
def test_pop_is_served_by_a_list_arriving_under_its_key(r, waiting, arrival: str) -> None:
    client = waiting()
    client.send("BLPOP", "l", 0)
    parked(r, 1)
    if arrival == "rename":
        r.rpush("z", "a")
        r.rename("z", "l")
    elif arrival == "move":
        r.execute_command("SELECT", 1)
        r.rpush("l", "a")
        r.execute_command("MOVE", "l", 0)
        r.execute_command("SELECT", 0)
    elif arrival == "swapdb":
        r.execute_command("SELECT", 1)
        r.rpush("l", "a")
        r.execute_command("SELECT", 0)
        r.swapdb(0, 1)
    else:
        r.rpush("z", "a")
        r.copy("z", "l")
    assert client.reply() == [b"l", b"a"]


def test_blocking_pops_inside_multi_do_not_block(r, waiting) -> None:
    client = waiting()
    client.send_raw(encode_request("MULTI") + encode_request("BLPOP", "l", 0) + encode_request("BLMOVE", "l", "d",
                    "LEFT", "LEFT", 0) + encode_request("BLMPOP", 0, 1, "l", "LEFT")
                    + encode_request("BRPOPLPUSH", "l", "d", 0) + encode_request("EXEC"))
    replies = [client.reply() for _ in range(6)]
    assert replies[-1] == [None, None, None, None]
    client.send_raw(encode_request("MULTI") + encode_request("BLMOVE", "l", "d", "LEFT", "LEFT", 0)
                    + encode_request("EXEC"))
    assert client.raw(5).endswith(b"*1\r\n$-1\r\n")


# ---------------------------------------------------------------------------------------------
# LMOVEM / BLMOVEM (Redis 8.10; the installed parity server is older)
# ---------------------------------------------------------------------------------------------


@pytest.mark.min_redis(8, 10)
@pytest.mark.parametrize(("ends", "ordering", "reply", "destination"), [
    ("LEFT LEFT", "OBO", [b"b", b"a"], [b"b", b"a", b"x", b"y"]),
    ("LEFT RIGHT", "OBO", [b"a", b"b"], [b"x", b"y", b"a", b"b"]),
    ("RIGHT LEFT", "OBO", [b"c", b"d"], [b"c", b"d", b"x", b"y"]),
    ("RIGHT RIGHT", "OBO", [b"d", b"c"], [b"x", b"y", b"d", b"c"]),
    ("LEFT LEFT", "BULK", [b"a", b"b"], [b"a", b"b", b"x", b"y"]),
    ("RIGHT RIGHT", "BULK", [b"c", b"d"], [b"x", b"y", b"c", b"d"]),
])
def test_lmovem_orders(r, ends: str, ordering: str, reply: list[bytes],
                       destination: list[bytes]) -> None:
    r.rpush("src", "a", "b", "c", "d")
    r.rpush("dst", "x", "y")
    assert r.execute_command("LMOVEM", "src", "dst", *ends.split(), "COUNT", 2,
                             ordering) == reply
    assert r.lrange("dst", 0, -1) == destination
    assert r.llen("src") == 2


@pytest.mark.min_redis(8, 10)
def test_lmovem_counts_same_key_and_missing_source(r, raw) -> None:
    r.rpush("l", "a", "b", "c")
    assert r.execute_command("LMOVEM", "l", "l", "LEFT", "LEFT", "EXACTLY", 2, "OBO") == [
        b"b", b"a"]
    assert r.lrange("l", 0, -1) == [b"b", b"a", b"c"]
    assert r.execute_command("LMOVEM", "l", "l", "LEFT", "RIGHT", "COUNT", 2, "BULK") == [
        b"b", b"a"]
    assert r.lrange("l", 0, -1) == [b"c", b"b", b"a"]
    assert r.execute_command("LMOVEM", "l", "o", "RIGHT", "LEFT") == [b"a"]
    assert r.execute_command("LMOVEM", "l", "o", "LEFT", "LEFT", "EXACTLY", 5, "BULK") is None
    assert r.execute_command("LMOVEM", "l", "o", "LEFT", "LEFT", "COUNT", 5, "BULK") == [
        b"c", b"b"]
    assert r.exists("l") == 0 and r.lrange("o", 0, -1) == [b"c", b"b", b"a"]
    assert raw.request(b"LMOVEM l o LEFT LEFT\r\n") == b"*-1\r\n"
    r.set("s", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.execute_command("LMOVEM", "o", "s", "LEFT", "LEFT")
    assert r.llen("o") == 3
    for bad in (["COUNT", 2], ["COUNT", 2, "SIDEWAYS"], ["MANY", 2, "OBO"]):
        with pytest.raises(redis.ResponseError, match="syntax error"):
            r.execute_command("LMOVEM", "o", "d", "LEFT", "LEFT", *bad)
    with pytest.raises(redis.ResponseError):
        r.execute_command("LMOVEM", "o", "d", "LEFT", "LEFT", "COUNT", 0, "OBO")


@pytest.mark.min_redis(8, 10)
def test_blmovem_exactly_waits_for_enough_elements_and_lets_others_pass(r, waiting) -> None:
    big = waiting()
    big.send("BLMOVEM", "src", "dst", "LEFT", "RIGHT", "EXACTLY", 3, "BULK", 0)
    parked(r, 1)
    small = waiting()
    small.send("BLMOVEM", "src", "dst2", "LEFT", "RIGHT", 0)
    parked(r, 2)
    r.rpush("src", "a", "b")
    assert small.reply() == [b"a"]
    assert big.nothing()
    r.rpush("src", "c", "d")
    assert big.reply() == [b"b", b"c", b"d"]
    assert r.exists("src") == 0 and r.lrange("dst", 0, -1) == [b"b", b"c", b"d"]
    timed = waiting()
    timed.send("BLMOVEM", "src", "dst", "LEFT", "LEFT", "COUNT", 2, "OBO", "0.05")
    assert timed.raw() == b"*-1\r\n"


# ---------------------------------------------------------------------------------------------
# What introspection shows of a parked command (Redis's introspection.tcl, slowlog.tcl and
# info.tcl: "MONITOR log blocked command only once", "blocking command is reported only after
# unblocked", "errorstats: blocking commands")
# ---------------------------------------------------------------------------------------------


def _monitor_lines(monitor: Waiting, count: int) -> list[str]:
    """The next ``count`` MONITOR lines, leaving out the test's INFO polling and the
    connection set-up of redis-py (CLIENT SETINFO, which Redis 7.0 does not know)."""
    lines: list[str] = []
    while len(lines) < count:
        line = monitor.reply()
        assert isinstance(line, bytes), line
        text = line.decode()
        if '"info"' not in text.lower() and '"client"' not in text.lower():
            lines.append(text)
    return lines


def test_monitor_shows_a_blocked_command_once_when_it_is_run(r, waiting) -> None:
    monitor = waiting()
    assert monitor.call("MONITOR") == b"OK"
    popper = waiting()
    popper.send("BLPOP", "mylist", 0)
    parked(r, 1)
    r.lpush("mylist", "1")
    assert popper.reply() == [b"mylist", b"1"]
    r.lpush("mylist", "2")
    blpop, first, second = _monitor_lines(monitor, 3)
    assert '"blpop" "mylist" "0"' in blpop.lower()
    assert '"lpush" "mylist" "1"' in first.lower()
    assert '"lpush" "mylist" "2"' in second.lower()
    assert monitor.nothing()


def test_slowlog_has_a_blocked_command_only_once_it_is_unblocked(r, waiting) -> None:
    r.config_set("slowlog-log-slower-than", 0)
    r.slowlog_reset()
    popper = waiting()
    popper.send("BLPOP", "mylist", 0)
    parked(r, 1)
    assert not [e for e in r.slowlog_get(128) if e["command"].startswith(b"BLPOP")]
    r.lpush("mylist", "1")
    assert popper.reply() == [b"mylist", b"1"]
    logged = [e for e in r.slowlog_get(128) if e["command"].startswith(b"BLPOP")]
    assert [e["command"] for e in logged] == [b"BLPOP mylist 0"]


@pytest.mark.parametrize("ending", ["served", "timeout", "unblock timeout", "unblock error"])
def test_commandstats_count_a_blocked_command_once(server, r, waiting, ending: str) -> None:
    popper = waiting()
    popper_id = popper.client_id()
    r.config_resetstat()
    popper.send("BLPOP", "mylist", 0.1 if ending == "timeout" else 0)
    if ending != "timeout":
        parked(r, 1)
    if ending == "served":
        r.lpush("mylist", "1")
        assert popper.reply() == [b"mylist", b"1"]
    elif ending == "timeout":
        assert popper.reply() is None
    else:
        r.client_unblock(popper_id, error=ending == "unblock error")
        reply = popper.reply()
        if ending == "unblock error":
            assert error_text(reply) == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
        else:
            assert reply is None
    parked(r, 0)
    stats = r.info("commandstats")["cmdstat_blpop"]
    # Redis 7.0 also counted CLIENT UNBLOCK ... TIMEOUT as a failed call; 7.2 does not.
    failed = int(ending == "unblock error"
                 or ending == "unblock timeout" and not reexecuted(server))
    assert (stats["calls"], stats["rejected_calls"], stats["failed_calls"]) == (1, 0, failed)
    errors = r.info("errorstats")
    if ending == "unblock error":
        assert errors["errorstat_UNBLOCKED"]["count"] == 1
        assert r.info("stats")["total_error_replies"] == 1
    else:
        assert "errorstat_UNBLOCKED" not in errors


@pytest.mark.parametrize("text", [b"0", b"1", b"007", b"86400", b"9223372036854775",
                                  b"9223372036854776", b"9999999999999999999"])
def test_whole_second_timeouts_read_as_the_long_double_path_reads_them(text: bytes) -> None:
    """Whole seconds skip the long double arithmetic: the same milliseconds, the same errors
    as the general path gives the same number written with a decimal point."""
    now_ms = 1_700_000_000_000

    def outcome(arg: bytes) -> int | str:
        try:
            return parse_timeout(arg, True, now_ms)
        except CommandError as error:
            return str(error)

    assert outcome(text) == outcome(text + b".0")
