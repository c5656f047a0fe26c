"""Replication between Brook and a real redis-server, both ways: the full synchronisation
(Redis's RDB file, from Redis sent diskless or from its file) and then the command stream,
compared key by key with the master. The way in for a team moving from Redis, and the way
back: REPLICAOF, wait for the offsets to meet, switch the clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import ServerProcess
from tests.support.datasets import VALUES, client_view, comparable, fill_every_kind
from tests.support.replication import Pair, start


@pytest.fixture(params=["diskless", "disk"])
def redis_master_and_brook(request: pytest.FixtureRequest, tmp_path: Path
                           ) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    diskless = "yes" if request.param == "diskless" else "no"
    master = start("redis", tmp_path / "master", "--repl-diskless-sync", diskless)
    replica = start("brook", tmp_path / "replica")
    try:
        yield master, replica
    finally:
        replica.stop()
        master.stop()


def _work(r: redis.Redis) -> None:
    """Writes of every kind the stream carries, consumer groups included."""
    r.set("s", "1")
    r.incrby("s", 41)
    r.set("volatile", "v", px=300_000)
    r.rpush("list-small", "more")
    r.lpop("list-long")
    r.sadd("set-listpack", "new")
    r.srem("set-hashtable", "m1")
    r.zincrby("zset-skiplist", 2.5, "m3")
    r.hset("hash-listpack", "added", "1")
    r.hdel("hash-hashtable", "f7")
    r.xadd("stream", {"late": "1"}, id="500-0")
    r.xreadgroup("g1", "dave", {"stream": ">"}, count=3)
    r.xack("stream", "g1", "3-1")
    r.xclaim("stream", "g1", "erin", 0, ["1-1"])
    r.xgroup_setid("stream", "g2", "10-1", entries_read=9)
    r.delete("string-empty")
    r.execute_command("SELECT", 3)
    r.append("in-three", "y")
    r.execute_command("SELECT", 0)
    with r.pipeline(transaction=True) as pipe:
        pipe.lpush("queue", "a", "b").rpoplpush("queue", "done").execute()
    r.eval("redis.call('set', KEYS[1], ARGV[1])", 1, "scripted", "value")


def _follow_and_compare(master: ServerProcess, replica: ServerProcess,
                        version: tuple[int, ...]) -> None:
    """REPLICAOF, then the replica's view equals the master's after the full synchronisation
    and again after the stream carried writes of every kind (compared as the Redis of
    ``version`` defines encodings)."""
    m = master.client()
    keys = fill_every_kind(m)
    pair = Pair(master, replica)
    assert pair.replica.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK"
    pair.sync()
    assert comparable(client_view(pair.replica, keys), version) == \
        comparable(client_view(m, keys), version)
    # (FCALL of a function not flagged no-writes is refused on a replica, as Redis refuses it)
    assert pair.replica.function_list(withcode=True) == m.function_list(withcode=True)
    _work(m)
    keys[0] += ["s", "volatile", "queue", "done", "scripted"]
    keys[0].remove("string-empty")
    pair.sync()
    assert comparable(client_view(pair.replica, keys), version) == \
        comparable(client_view(m, keys), version)
    assert not pair.replica.exists("string-empty")
    assert len(keys[0]) == len(VALUES) + 4


def test_brook_follows_a_redis_master(redis_master_and_brook: tuple[ServerProcess, ServerProcess]
                                      ) -> None:
    master, replica = redis_master_and_brook
    _follow_and_compare(master, replica, master.version)


def test_redis_follows_a_brook_master(tmp_path: Path) -> None:
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    master = start("brook", tmp_path / "master")
    replica = start("redis", tmp_path / "replica")
    try:
        _follow_and_compare(master, replica, replica.version)
    finally:
        replica.stop()
        master.stop()
