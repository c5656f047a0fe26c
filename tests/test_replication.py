"""Replication: a master and its replicas as real processes, Brook's pair beside Redis's.

Each parity test runs on a Brook master with a Brook replica and on a redis-server pair, and
asserts the same replies, errors and INFO fields of both. (A Brook replica cannot follow a
Redis master, nor the reverse: full synchronisation sends each server's own snapshot format.)
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import (
    RawConnection,
    ServerProcess,
    redis_binary,
    start_brook,
    start_redis,
)

MASTER_FIELDS = [
    "role", "connected_slaves", "slave0", "master_failover_state", "master_replid",
    "master_replid2", "master_repl_offset", "second_repl_offset", "repl_backlog_active",
    "repl_backlog_size", "repl_backlog_first_byte_offset", "repl_backlog_histlen",
]
REPLICA_FIELDS = [
    "role", "master_host", "master_port", "master_link_status", "master_last_io_seconds_ago",
    "master_sync_in_progress", "slave_read_repl_offset", "slave_repl_offset", "slave_priority",
    "slave_read_only", "replica_announced", "connected_slaves", "master_failover_state",
    "master_replid", "master_replid2", "master_repl_offset", "second_repl_offset",
    "repl_backlog_active", "repl_backlog_size", "repl_backlog_first_byte_offset",
    "repl_backlog_histlen",
]


def wait_until(check: Callable[[], object], timeout: float = 15.0) -> None:
    """Poll until ``check`` holds (replication is asynchronous)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.05)


def start(kind: str, tmp: Path, *extra: str) -> ServerProcess:
    if kind == "brook":
        return start_brook(tmp, "--save", "", *extra)
    if redis_binary() is None:
        pytest.skip("redis-server is not installed")
    # Redis's default diskless sync waits 5 s for more replicas: start at once instead.
    return start_redis(tmp, "--repl-diskless-sync-delay", "0", *extra)


def _info_lines(client: redis.Redis) -> list[str]:
    """INFO replication's lines as sent (redis-py would parse the values)."""
    raw = RawConnection(client.connection_pool.connection_kwargs["port"])
    try:
        text = raw.call("INFO", "replication")
    finally:
        raw.close()
    assert isinstance(text, bytes)
    return [line for line in text.decode().splitlines() if ":" in line]


def info_fields(client: redis.Redis) -> list[str]:
    return [line.split(":", 1)[0] for line in _info_lines(client)]


def info(client: redis.Redis) -> dict[str, str]:
    return dict(line.split(":", 1) for line in _info_lines(client))


def synced(master: redis.Redis, replica: redis.Redis) -> bool:
    """The replica is connected and has applied everything the master has sent."""
    ours = info(replica)
    return (ours.get("master_link_status") == "up"
            and ours["master_repl_offset"] == info(master)["master_repl_offset"])


class Pair:
    def __init__(self, master: ServerProcess, replica: ServerProcess) -> None:
        self.master_process = master
        self.replica_process = replica
        self.master = master.client()
        self.replica = replica.client()

    def sync(self) -> None:
        wait_until(lambda: synced(self.master, self.replica))


@pytest.fixture(params=["brook", "redis"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pair]:
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    master = start(request.param, tmp_path / "master")
    replica = start(request.param, tmp_path / "replica")
    try:
        made = Pair(master, replica)
        assert made.replica.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK"
        made.sync()
        yield made
    finally:
        replica.stop()
        master.stop()


# -- the handshake and what it shows --------------------------------------------------------

def test_info_replication_fields_are_redis_s(pair: Pair) -> None:
    assert info_fields(pair.master) == MASTER_FIELDS
    assert info_fields(pair.replica) == REPLICA_FIELDS
    master, replica = info(pair.master), info(pair.replica)
    assert master["role"] == "master" and replica["role"] == "slave"
    assert replica["master_link_status"] == "up"
    assert replica["master_port"] == str(pair.master_process.port)
    assert re.fullmatch(r"ip=127\.0\.0\.1,port=\d+,state=online,offset=\d+,lag=\d+",
                        master["slave0"])
    assert f"port={pair.replica_process.port}," in master["slave0"]
    assert replica["master_replid"] == master["master_replid"]
    assert re.fullmatch(r"[0-9a-f]{40}", master["master_replid"])
    assert master["master_replid2"] == "0" * 40 and master["second_repl_offset"] == "-1"
    assert master["repl_backlog_active"] == "1"


def test_role_replies(pair: Pair) -> None:
    role = pair.master.execute_command("ROLE")
    assert role[0] == b"master" and isinstance(role[1], int)
    assert role[2] == [[b"127.0.0.1", str(pair.replica_process.port).encode(), role[2][0][2]]]
    replica_role = pair.replica.execute_command("ROLE")
    assert replica_role[:4] == [b"slave", b"127.0.0.1", pair.master_process.port, b"connected"]
    assert isinstance(replica_role[4], int)


def test_writes_reach_the_replica_in_their_databases(pair: Pair) -> None:
    master = pair.master
    master.set("a", "1")
    other = pair.master_process.client(db=3)
    other.set("c", "3")
    entry = master.xadd("s", {"f": "v"})
    master.incr("n")
    pair.sync()
    assert pair.replica.get("a") == b"1"
    assert pair.replica_process.client(db=3).get("c") == b"3"
    assert pair.replica.xrange("s") == [(entry, {b"f": b"v"})]  # XADD * with its ID
    assert pair.replica.get("n") == b"1"


def test_the_dataset_before_the_replica_came_is_sent_whole(tmp_path: Path,
                                                           pair: Pair) -> None:
    pair.replica.execute_command("REPLICAOF", "NO", "ONE")
    for number in range(500):
        pair.master.set(f"k{number}", number)
    pair.master.hset("h", mapping={"a": 1, "b": 2})
    pair.master.expire("h", 1000)
    pair.replica.set("stale", "gone after the sync")
    pair.replica.execute_command("REPLICAOF", "127.0.0.1", pair.master_process.port)
    pair.sync()
    assert pair.replica.dbsize() == pair.master.dbsize() == 501
    assert pair.replica.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert 0 < pair.replica.ttl("h") <= 1000
    assert pair.replica.get("stale") is None


def test_a_replica_refuses_writes_and_serves_reads(pair: Pair) -> None:
    pair.master.set("k", "v")
    pair.sync()
    with pytest.raises(redis.exceptions.ReadOnlyError,
                       match="^You can't write against a read only replica.$"):
        pair.replica.set("k", "other")
    assert pair.replica.get("k") == b"v"
    transaction = pair.replica.pipeline()
    transaction.set("k", "x")
    with pytest.raises(redis.exceptions.ReadOnlyError):  # queued, then EXECABORT
        transaction.execute()
    assert pair.replica.get("k") == b"v"
    pair.replica.config_set("replica-read-only", "no")
    assert pair.replica.set("local", "1")


def test_replicaof_arguments(pair: Pair) -> None:
    replica = pair.replica
    with pytest.raises(redis.exceptions.ResponseError, match="^Invalid master port$"):
        replica.execute_command("REPLICAOF", "127.0.0.1", "port")
    with pytest.raises(redis.exceptions.ResponseError, match="^Invalid master port$"):
        replica.execute_command("REPLICAOF", "127.0.0.1", "70000")
    assert replica.execute_command(
        "REPLICAOF", "127.0.0.1", pair.master_process.port) == b"OK Already connected to specified master"
    with pytest.raises(redis.exceptions.ResponseError, match="wrong number of arguments"):
        replica.execute_command("SLAVEOF", "127.0.0.1")
    assert pair.master.execute_command("REPLICAOF", "NO", "ONE") == b"OK"  # a master already


def test_replconf_and_psync_errors(pair: Pair) -> None:
    master = pair.master
    assert master.execute_command("REPLCONF", "listening-port", "1234") == b"OK"
    with pytest.raises(redis.exceptions.ResponseError, match="^Unrecognized REPLCONF option: x$"):
        master.execute_command("REPLCONF", "x", "y")
    with pytest.raises(redis.exceptions.ResponseError, match="^syntax error$"):
        master.execute_command("REPLCONF", "capa")
    with pytest.raises(redis.exceptions.ResponseError,
                       match="^value is not an integer or out of range$"):
        master.execute_command("PSYNC", "?", "x")
    assert master.ping()  # the connection stays usable


def test_wait_counts_the_replicas_that_acknowledged(pair: Pair) -> None:
    pair.master.set("k", "v")
    assert pair.master.execute_command("WAIT", 1, 5000) == 1
    assert pair.master.execute_command("WAIT", 0, 0) == 1
    assert pair.master.execute_command("WAIT", 2, 200) == 1  # times out with the count
    with pytest.raises(redis.exceptions.ResponseError, match="^WAIT cannot be used with replica"):
        pair.replica.execute_command("WAIT", 1, 100)
    with pytest.raises(redis.exceptions.ResponseError, match="^timeout is negative$"):
        pair.master.execute_command("WAIT", 1, -1)


def test_expiry_reaches_the_replica_as_a_deletion(pair: Pair) -> None:
    pair.master.set("short", "v", px=100)
    pair.sync()
    wait_until(lambda: pair.master.get("short") is None)
    wait_until(lambda: pair.replica.exists("short") == 0)


def test_a_reader_parked_on_the_replica_is_served_by_the_stream(pair: Pair) -> None:
    pair.master.xadd("events", {"n": "0"}, id="1-1")
    pair.sync()
    reader = pair.replica_process.client()
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(
        reader.xread({"events": "$"}, block=10_000)))
    thread.start()
    wait_until(lambda: int(pair.replica.info("clients")["blocked_clients"]) == 1)
    pair.master.xadd("events", {"n": "1"}, id="2-1")
    thread.join(15)
    assert result == [[[b"events", [(b"2-1", {b"n": b"1"})]]]]


def test_a_cut_link_resumes_with_a_partial_resync(pair: Pair) -> None:
    """The replica's offset counts exactly the bytes it applied, requests cut between reads
    included: after the link is cut and writes go on, it resumes where it stopped."""
    partial_before = pair.master.info("stats")["sync_partial_ok"]
    assert pair.master.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    writes = pair.master.pipeline(transaction=False)
    for number in range(3000):
        writes.xadd("s", {"n": number, "pad": "x" * (number % 50)})
    writes.execute()
    pair.sync()  # same offset on both: nothing lost, nothing counted twice
    assert pair.master.info("stats")["sync_partial_ok"] == partial_before + 1
    assert pair.replica.xlen("s") == 3000
    assert pair.replica.xrange("s", count=5) == pair.master.xrange("s", count=5)


def test_promotion_keeps_the_history_as_replid2(pair: Pair) -> None:
    pair.master.set("k", "v")
    pair.sync()
    before = info(pair.replica)
    assert pair.replica.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    after = info(pair.replica)
    assert after["role"] == "master"
    assert after["master_replid2"] == before["master_replid"]
    assert after["second_repl_offset"] == str(int(before["master_repl_offset"]) + 1)
    assert after["master_replid"] != before["master_replid"]
    assert after["master_repl_offset"] == before["master_repl_offset"]
    assert pair.replica.set("now", "writable")


# -- Brook's own --------------------------------------------------------------------------

@pytest.fixture
def brooks(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    try:
        for name in ("a", "b", "c"):
            (tmp_path / name).mkdir()
            started.append(start_brook(tmp_path / name, "--save", ""))
        yield started
    finally:
        for process in started:
            process.stop()


def test_replicas_resume_with_a_partial_resync_after_a_promotion(
        brooks: list[ServerProcess]) -> None:
    master, first, second = (process.client() for process in brooks)
    for replica in (first, second):
        replica.execute_command("REPLICAOF", "127.0.0.1", brooks[0].port)
    for number in range(100):
        master.xadd("s", {"n": number})
    wait_until(lambda: synced(master, first) and synced(master, second))
    first.execute_command("REPLICAOF", "NO", "ONE")
    second.execute_command("REPLICAOF", "127.0.0.1", brooks[1].port)
    wait_until(lambda: synced(first, second))
    stats = first.info("stats")
    assert (stats["sync_partial_ok"], stats["sync_full"]) == (1, 0)
    first.xadd("s", {"n": "after"})
    wait_until(lambda: synced(first, second))
    assert second.xlen("s") == 101
    assert second.xrange("s") == first.xrange("s")


def test_group_state_and_transactions_replicate(brooks: list[ServerProcess]) -> None:
    master, replica = brooks[0].client(), brooks[1].client()
    replica.execute_command("REPLICAOF", "127.0.0.1", brooks[0].port)
    master.xgroup_create("jobs", "workers", id="0", mkstream=True)
    for number in range(10):
        master.xadd("jobs", {"n": number})
    delivered = master.xreadgroup("workers", "w1", {"jobs": ">"}, count=6)
    ids = [entry_id for entry_id, _ in delivered[0][1]]
    master.xack("jobs", "workers", *ids[:4])
    transaction = master.pipeline()
    transaction.incr("counter").lpush("list", "a", "b").expire("list", 100)
    transaction.execute()
    master.eval("redis.call('set', 'from-script', ARGV[1])", 0, "x")
    wait_until(lambda: synced(master, replica))
    assert replica.xpending("jobs", "workers") == master.xpending("jobs", "workers")
    assert (replica.xinfo_groups("jobs")[0]["last-delivered-id"]
            == master.xinfo_groups("jobs")[0]["last-delivered-id"])
    assert replica.get("counter") == b"1" and replica.lrange("list", 0, -1) == [b"b", b"a"]
    assert replica.get("from-script") == b"x"


def test_the_full_sync_framing_and_the_stream(brooks: list[ServerProcess]) -> None:
    """PSYNC ? -1 on a raw socket: +FULLRESYNC, the snapshot as one bulk without CRLF, then
    the stream, starting with a SELECT, as Redis frames it."""
    brooks[0].client().set("before", "1")
    with socket.create_connection(("127.0.0.1", brooks[0].port), timeout=5) as sock:
        sock.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
        data = b""
        while b"\r\n" not in data or data.count(b"\r\n") < 2:
            data += sock.recv(65536)
        head, rest = data.split(b"\r\n", 1)
        assert re.fullmatch(rb"\+FULLRESYNC [0-9a-f]{40} 0", head)
        length_line, rest = rest.split(b"\r\n", 1)
        length = int(length_line[1:])
        while len(rest) < length:
            rest += sock.recv(65536)
        stream = rest[length:]
        brooks[0].client().set("after", "2")
        expected = (b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
                    b"*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n2\r\n")
        while len(stream) < len(expected):
            stream += sock.recv(65536)
        assert stream == expected
