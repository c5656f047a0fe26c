"""Replication: a master and its replicas as real processes, Brook's pair beside Redis's.

Each parity test runs on a Brook master with a Brook replica and on a redis-server pair, and
asserts the same replies, errors and INFO fields of both. (Brook following a real Redis
master is tests/replication/test_redis_master.py.)
"""

from __future__ import annotations

import re
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import (
    RawConnection,
    ServerProcess,
    start_brook,
    whole_error,
)
from tests.support.replication import Pair, info, info_fields, start, synced, wait_until

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
    hello = [pair.master.execute_command("HELLO", 2), pair.replica.execute_command("HELLO", 2)]
    assert [dict(zip(reply[::2], reply[1::2], strict=True))[b"role"] for reply in hello] == [
        b"master", b"replica"]


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


def test_wait_parks_as_the_first_request_of_a_connection(raw: RawConnection) -> None:
    """No replica: WAIT 1 waits out its timeout and answers 0, even as the first request a
    connection sends (nothing recorded as its last command yet)."""
    assert raw.call("WAIT", 1, 50) == 0
    assert raw.call("PING") == b"PONG"


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


DEMOTED = (b"-UNBLOCKED force unblock from blocking operation, instance state changed "
           b"(master -> replica?)\r\n<CLOSED>")


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_parked_clients_are_unblocked_and_closed_when_a_master_is_followed(
        kind: str, tmp_path: Path) -> None:
    """Redis's disconnectAllBlockedClients, whenever the server starts following a master
    (a master turned replica, or a replica given another master): WAITs included."""
    servers = []
    for name in ("server", "first", "second"):
        (tmp_path / name).mkdir()
        servers.append(start(kind, tmp_path / name))
    server, first, second = servers
    try:
        client = server.client()
        parked = [RawConnection(server.port) for _ in range(2)]
        parked[0].send(b"*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$1\r\n0\r\n")
        parked[1].send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n")
        wait_until(lambda: int(client.info("clients")["blocked_clients"]) == 2)
        assert client.execute_command("REPLICAOF", "127.0.0.1", first.port) == b"OK"
        assert [connection.read(b"<CLOSED>", timeout=5) for connection in parked] == [DEMOTED] * 2
        reader = RawConnection(server.port)  # a replica's reader, on a replica of another master
        reader.send(b"*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n"
                    b"$1\r\ns\r\n$1\r\n$\r\n")
        wait_until(lambda: int(client.info("clients")["blocked_clients"]) == 1)
        assert client.execute_command("REPLICAOF", "127.0.0.1", second.port) == b"OK"
        assert reader.read(b"<CLOSED>", timeout=5) == DEMOTED
        assert client.ping()  # the client that sent REPLICAOF stays
    finally:
        for process in servers:
            process.stop()


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


def test_publish_reaches_the_replica_s_subscribers(pair: Pair) -> None:
    """PUBLISH goes down the stream (Sentinel's hello messages reach replicas' subscribers
    this way), in the database it was run in."""
    listener = pair.replica_process.client().pubsub()
    listener.subscribe("news")
    assert listener.get_message(timeout=5)["type"] == "subscribe"
    pair.master_process.client(db=2).publish("news", "from db 2")
    pair.master.publish("news", "from db 0")
    received = [listener.get_message(timeout=5) for _ in range(2)]
    assert [message["data"] for message in received] == [b"from db 2", b"from db 0"]
    pair.master.set("k", "v")
    pair.sync()
    assert pair.replica.get("k") == b"v"
    listener.close()


def test_a_replica_hides_expired_keys_until_the_master_deletes_them(pair: Pair) -> None:
    pair.master.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    pair.master.set("short", "v", px=100)
    pair.master.set("kept", "v")
    pair.sync()
    time.sleep(0.2)
    assert pair.replica.get("short") is None  # expired for its readers ...
    assert pair.replica.exists("short") == 0
    assert pair.replica.keys("*") == [b"kept"]
    assert pair.replica.dbsize() == 2  # ... but still there: only the master's DEL removes it
    assert pair.master.get("short") is None  # the master expires it and sends the DEL
    pair.sync()
    assert pair.replica.dbsize() == 1


def test_config_rewrite_follows_the_role(kind: str, tmp_path: Path) -> None:
    """CONFIG GET and REWRITE show the master being followed now, and a promoted replica's
    file loses its replicaof line (Sentinel rewrites configs across failovers)."""
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    master = start(kind, tmp_path / "master")
    config_file = tmp_path / "replica" / "server.conf"
    config_file.write_text("# the replica\nreplicaof 127.0.0.1 1\n")
    replica_process = start(kind, tmp_path / "replica", config_file=config_file)
    try:
        replica = replica_process.client()
        assert replica.config_get("replicaof") == {"replicaof": "127.0.0.1 1"}
        replica.execute_command("REPLICAOF", "127.0.0.1", master.port)
        assert replica.config_get("replicaof") == {"replicaof": f"127.0.0.1 {master.port}"}
        assert replica.config_rewrite()
        lines = config_file.read_text().splitlines()
        assert lines[:2] == ["# the replica", f"replicaof 127.0.0.1 {master.port}"]
        assert sum(line.startswith("replicaof") for line in lines) == 1
        replica.execute_command("REPLICAOF", "NO", "ONE")
        assert replica.config_get("replicaof") == {"replicaof": ""}
        assert replica.config_rewrite()
        lines = config_file.read_text().splitlines()
        assert lines[0] == "# the replica"
        assert not any(line.startswith(("replicaof", "slaveof")) for line in lines)
    finally:
        replica_process.stop()
        master.stop()


def test_sentinel_s_promotion_transaction(pair: Pair) -> None:
    """What Sentinel sends to promote a replica: the role change, the config rewrite (no file
    here: its error), and the other clients disconnected, the sender kept."""
    other = RawConnection(pair.replica_process.port)
    listener = RawConnection(pair.replica_process.port)
    listener.call("SUBSCRIBE", "ch")
    sentinel = RawConnection(pair.replica_process.port)
    try:
        for command in (["MULTI"], ["SLAVEOF", "NO", "ONE"], ["CONFIG", "REWRITE"],
                        ["CLIENT", "KILL", "TYPE", "normal"], ["CLIENT", "KILL", "TYPE", "pubsub"]):
            sentinel.call(*command)
        reply = sentinel.call("EXEC")
        assert isinstance(reply, list)
        assert reply[0] == b"OK"
        assert str(reply[1]).startswith("ERR The server is running without a config file")
        assert reply[2] >= 1 and reply[3] == 1  # the other clients, the subscriber
        assert sentinel.call("PING") == b"PONG"
        assert sentinel.call("ROLE")[0] == b"master"
        assert other.read(timeout=2) == listener.read(timeout=2) == b"<CLOSED>"
    finally:
        for connection in (other, listener, sentinel):
            connection.close()


def test_a_replica_without_its_master_serves_stale_data_or_refuses(pair: Pair) -> None:
    pair.master.set("k", "v")
    pair.sync()
    pair.master_process.stop()
    wait_until(lambda: info(pair.replica)["master_link_status"] == "down")
    assert pair.replica.get("k") == b"v"  # replica-serve-stale-data yes, the default
    pair.replica.config_set("replica-serve-stale-data", "no")
    with pytest.raises(redis.exceptions.ResponseError) as refused:
        pair.replica.get("k")
    assert whole_error(refused.value) == ("MASTERDOWN Link with MASTER is down and "
                                          "replica-serve-stale-data is set to 'no'.")
    assert info(pair.replica)["role"] == "slave"  # INFO is allowed
    assert "master_link_down_since_seconds" in info(pair.replica)


def test_min_replicas_to_write(pair: Pair) -> None:
    master = pair.master
    master.config_set("min-replicas-to-write", "2")
    with pytest.raises(redis.exceptions.ResponseError,
                       match="^NOREPLICAS Not enough good replicas to write.$"):
        master.set("k", "v")
    assert master.get("k") is None  # reads go on
    # (Redis counts good replicas once a second.)
    wait_until(lambda: info(master).get("min_slaves_good_slaves") == "1")
    master.config_set("min-replicas-to-write", "1")
    assert master.set("k", "v")
    master.config_set("min-replicas-to-write", "0")


def test_a_silent_master_times_out(pair: Pair) -> None:
    """repl-timeout: a master that sends nothing (stopped, not closed) is dropped; when it
    comes back, the replica resumes with a partial resync."""
    pair.master.set("k", "v")
    pair.sync()
    pair.replica.config_set("repl-timeout", "1")
    pair.master_process.process.send_signal(signal.SIGSTOP)
    try:
        wait_until(lambda: info(pair.replica)["master_link_status"] == "down", timeout=10)
    finally:
        pair.master_process.process.send_signal(signal.SIGCONT)
    pair.master.set("k", "after")
    pair.sync()
    assert pair.replica.get("k") == b"after"


def test_waitaof_counts_what_is_fsynced(kind: str, tmp_path: Path) -> None:
    """WAITAOF (Redis 7.2+): the local AOF (fsync always: at once) and replicas' AOFs (fsync
    every second, told by REPLCONF ACK ... FACK)."""
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    master_process = start(kind, tmp_path / "master", "--appendonly", "yes",
                           "--appendfsync", "always")
    replica_process = start(kind, tmp_path / "replica", "--appendonly", "yes")
    try:
        if master_process.version < (7, 2):
            pytest.skip("WAITAOF is Redis 7.2's")
        master, replica = master_process.client(), replica_process.client()
        for arguments, error in (((2, 0, 0), "^value is out of range, value must between 0 and 1$"),
                                 ((0, -1, 0), "^value is out of range, must be positive$"),
                                 ((0, 0, -1), "^timeout is negative$"),
                                 (("x", 0, 0), "^value is not an integer or out of range$")):
            with pytest.raises(redis.exceptions.ResponseError, match=error):
                master.execute_command("WAITAOF", *arguments)
        master.set("k", "v")
        assert master.execute_command("WAITAOF", 1, 0, 0) == [1, 0]
        assert master.execute_command("WAITAOF", 0, 1, 50) == [1, 0]  # no replica: times out
        replica.execute_command("REPLICAOF", "127.0.0.1", master_process.port)
        wait_until(lambda: synced(master, replica))
        with pytest.raises(redis.exceptions.ResponseError,
                           match="^WAITAOF cannot be used with replica instances"):
            replica.execute_command("WAITAOF", 0, 0, 0)
        master.set("k", "v2")
        assert master.execute_command("WAITAOF", 1, 1, 10_000) == [1, 1]
        transaction = master.pipeline()
        # Inside MULTI it does not wait, and the transaction's own write is not in the stream
        # yet: the connection's previous write is what it counts.
        transaction.set("k", "v3").execute_command("WAITAOF", 0, 2, 0)
        assert transaction.execute()[1] == [1, 1]
        replica.config_set("appendonly", "no")
        master.config_set("appendonly", "no")
        with pytest.raises(redis.exceptions.ResponseError,
                           match="^WAITAOF cannot be used when numlocal is set but appendonly "
                                 "is disabled.$"):
            master.execute_command("WAITAOF", 1, 0, 0)
    finally:
        replica_process.stop()
        master_process.stop()


def test_a_replica_s_own_aof_holds_what_its_master_sent(kind: str, tmp_path: Path) -> None:
    """A replica with the AOF on persists its master's stream, so it restarts with the data:
    stream entries with explicit IDs (how a master propagates XADD, replayed through the
    replay lane's shortcut) and transactions included."""
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    aof = ("--appendonly", "yes", "--appendfsync", "always")
    master_process = start(kind, tmp_path / "master")
    replica_process = start(kind, tmp_path / "replica", *aof)
    try:
        master, replica = master_process.client(), replica_process.client()
        replica.execute_command("REPLICAOF", "127.0.0.1", master_process.port)
        wait_until(lambda: synced(master, replica))
        master.xadd("s", {"f": "v"}, id="1-1")
        automatic = master.xadd("s", {"g": "w"})
        transaction = master.pipeline()
        transaction.set("k", "1").incr("k").rpush("l", "a", "b")
        transaction.execute()
        wait_until(lambda: synced(master, replica) and replica.exists("l"))
        replica_process.stop()
        replica_process = start(kind, tmp_path / "replica", *aof)
        replica = replica_process.client()
        assert [entry_id for entry_id, _ in replica.xrange("s")] == [b"1-1", automatic]
        assert replica.get("k") == b"2"
        assert replica.lrange("l", 0, -1) == [b"a", b"b"]
    finally:
        replica_process.stop()
        master_process.stop()


def test_a_replica_authenticates_with_masterauth(kind: str, tmp_path: Path) -> None:
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    master_process = start(kind, tmp_path / "master")
    replica_process = start(kind, tmp_path / "replica")
    try:
        master_process.client().config_set("requirepass", "s3cret")
        master = master_process.client(password="s3cret")
        replica = replica_process.client()
        replica.execute_command("REPLICAOF", "127.0.0.1", master_process.port)
        time.sleep(1.5)
        assert info(replica)["master_link_status"] == "down"  # refused without the password
        replica.config_set("masterauth", "s3cret")
        master.set("k", "v")
        wait_until(lambda: info(replica)["master_link_status"] == "up")
        wait_until(lambda: replica.get("k") == b"v")
    finally:
        replica_process.stop()
        master_process.stop()


def test_a_backlog_that_lost_the_bytes_means_a_full_resync(pair: Pair) -> None:
    master = pair.master
    master.config_set("repl-backlog-size", "16384")
    master.set("k", "v")
    pair.sync()
    stats = master.info("stats")
    replica_offset = int(info(pair.replica)["master_repl_offset"])
    # The replica is stopped while its link is cut and the backlog moves past what it has, so
    # it can only ask for those bytes once they are gone (Redis 7.0 trims a shrunk backlog a
    # block at a time). A stopped process cannot race the test by reconnecting early.
    pair.replica_process.process.send_signal(signal.SIGSTOP)
    try:
        master.execute_command("CLIENT", "KILL", "TYPE", "replica")
        number = 0
        while master.info("replication")["repl_backlog_first_byte_offset"] <= replica_offset + 1:
            batch = master.pipeline(transaction=False)
            for _ in range(50):
                batch.set(f"big{number}", "x" * 1024)
                number += 1
            batch.execute()
            assert number < 100_000
    finally:
        pair.replica_process.process.send_signal(signal.SIGCONT)
    # The full synchronisation waits for the replica's next reconnection (once a second):
    # room for a loaded machine.
    pair.sync(timeout=60)
    after = master.info("stats")
    assert after["sync_full"] == stats["sync_full"] + 1
    assert after["sync_partial_err"] == stats["sync_partial_err"] + 1
    assert after["sync_partial_ok"] == stats["sync_partial_ok"]
    assert pair.replica.dbsize() == number + 1


@pytest.fixture(params=["brook", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


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


def test_a_full_sync_forks_and_the_writes_meanwhile_follow(brooks: list[ServerProcess]) -> None:
    """The snapshot for a full synchronisation is written by a forked child, as Redis's; the
    writes the master takes meanwhile reach the replicas after it, in order, and no dump file
    is left (Redis's diskless sync leaves none either)."""
    master = brooks[0].client()
    writes = master.pipeline(transaction=False)
    for number in range(200_000):
        writes.set(f"key:{number}", number)
    writes.execute()
    forks_before = master.info("stats")["total_forks"]
    stop = threading.Event()
    written: list[int] = []

    def write_on() -> None:
        writer = brooks[0].client()
        number = 0
        while not stop.is_set():
            writer.rpush("during", number)
            written.append(number)
            number += 1

    thread = threading.Thread(target=write_on)
    thread.start()
    try:
        replicas = [process.client() for process in brooks[1:]]
        for replica in replicas:
            replica.execute_command("REPLICAOF", "127.0.0.1", brooks[0].port)
        wait_until(lambda: all(info(replica)["master_link_status"] == "up"
                               for replica in replicas), timeout=60)
        time.sleep(0.2)
    finally:
        stop.set()
        thread.join()
    for replica in replicas:
        wait_until(lambda replica=replica: synced(master, replica))
        assert replica.dbsize() == 200_001
        assert replica.lrange("during", 0, -1) == [b"%d" % n for n in written]
    # One child served both: the second replica came while it ran, and was given the
    # stream since the snapshot's offset from the backlog.
    assert master.info("stats")["total_forks"] == forks_before + 1
    assert brooks[0].log().count("Synchronization with replica") == 2
    assert master.info("persistence")["rdb_bgsave_in_progress"] == 0
    assert not list(Path(brooks[0].log_path).parent.glob("*.brook"))
