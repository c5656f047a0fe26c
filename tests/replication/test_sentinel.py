"""Automatic failover of Brook by real Redis Sentinel (Debian's ``redis-sentinel``).

A Brook master with two Brook replicas and three sentinels (bench/failover.py's
:class:`Cluster`). Producers write through redis-py's ``Sentinel`` (XADD, then ``WAIT 1``) and
a consumer-group worker reads and acknowledges through it, while the master is killed with
SIGKILL, several times in a row: each time Sentinel promotes a replica, the clients follow it,
and the killed server, restarted, rejoins as a replica. Then every entry acknowledged by
``WAIT 1`` must be in the stream, every entry must have been processed, the group's PEL must
be consistent, and the three servers and their config files must agree.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bench.failover import SERVICE, Cluster, sentinel_command, wait_for

pytestmark = pytest.mark.skipif(sentinel_command() is None,
                                reason="redis-sentinel is not installed")

ROUNDS = 3
STREAM = "jobs"
GROUP = "workers"


def recoverable(error: redis.RedisError) -> bool:
    """What a client may see while a failover goes on, and retries after: a lost connection,
    a timeout, a replica refusing writes, or a blocked command (WAIT, XREADGROUP BLOCK) on a
    master turned replica, which Redis and Brook answer ``-UNBLOCKED ... (master -> replica?)``.
    The last happens when a client still pointed at a killed master reaches it restarted, just
    before Sentinel makes it a replica; what it wrote there was not acknowledged."""
    return (isinstance(error, (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError))
            or "UNBLOCKED force unblock from blocking operation" in str(error))


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    made = Cluster("brook", tmp_path)
    try:
        made.start()
        yield made
    finally:
        made.stop()


class Load:
    """Producers and a worker that only ever reach the master through Sentinel."""

    def __init__(self, cluster: Cluster) -> None:
        self.sentinel = cluster.sentinel()
        self.stopping = threading.Event()  # producers stop
        self.drained = threading.Event()  # the worker stops once it finds nothing more
        self.lock = threading.Lock()
        self.acknowledged: set[bytes] = set()  # tokens whose XADD ``WAIT 1`` confirmed
        self.processed: set[bytes] = set()  # tokens the worker handled
        self.threads = [threading.Thread(target=self.produce, args=(name,), daemon=True)
                        for name in ("p1", "p2")]
        self.threads.append(threading.Thread(target=self.work, daemon=True))

    def master(self) -> redis.Redis:
        return self.sentinel.master_for(SERVICE, socket_timeout=2.0, protocol=2)

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def produce(self, name: str) -> None:
        client = self.master()
        number = 0
        while not self.stopping.is_set():
            token = f"{name}-{number}".encode()
            number += 1  # a token is never sent twice: a lost reply may hide a stored entry
            try:
                # One connection for both: WAIT counts the connection's own last write.
                added, replicas = (client.pipeline(transaction=False)
                                   .xadd(STREAM, {"token": token})
                                   .execute_command("WAIT", 1, 1000)
                                   .execute())
            except redis.RedisError as error:
                if not recoverable(error):
                    raise
                time.sleep(0.05)
                continue
            if replicas >= 1:
                with self.lock:
                    self.acknowledged.add(token)

    def work(self) -> None:
        """Own pending entries first (after every reconnection: a claim may have survived
        the failover while the XACK did not), then new ones."""
        client = self.master()
        recovering = True
        last_pass = False  # the pass over its own pending entries before it stops
        while True:
            try:
                start = "0" if recovering else ">"
                reply = client.xreadgroup(GROUP, "w1", {STREAM: start}, count=100,
                                          block=None if recovering else 200)
                entries = reply[0][1] if reply else []
                if recovering and not entries:
                    if last_pass:
                        return
                    recovering = False
                    continue
                if not entries and self.drained.is_set():
                    # redis-py retries a command whose connection broke on the next master
                    # without telling: an XACK the old master answered but did not pass on
                    # leaves entries pending on the new one, found only by reading them.
                    recovering = last_pass = True
                    continue
                for _entry_id, fields in entries:
                    with self.lock:
                        self.processed.add(fields[b"token"])
                if entries:
                    client.xack(STREAM, GROUP, *[entry_id for entry_id, _ in entries])
            except redis.RedisError as error:
                if not recoverable(error):
                    raise
                recovering = True
                time.sleep(0.05)

    def wait_for_acknowledged(self, more: int) -> None:
        with self.lock:
            target = len(self.acknowledged) + more
        wait_for(lambda: len(self.acknowledged) >= target, 60, f"{more} more acknowledged writes")

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads[:-1]:
            thread.join(30)
        self.drained.set()
        self.threads[-1].join(60)
        assert not any(thread.is_alive() for thread in self.threads)


def stream_state(client: redis.Redis) -> object:
    """What a server holds of the stream and its group (not the consumers' seen-times: a
    replica's are when it applied the claims)."""
    return (client.xrange(STREAM), client.xinfo_groups(STREAM),
            client.xpending_range(STREAM, GROUP, "-", "+", 1_000_000))


def test_sigkill_of_the_master_under_load_loses_nothing_acknowledged(cluster: Cluster) -> None:
    first = cluster.client(cluster.master_port())
    first.xgroup_create(STREAM, GROUP, id="$", mkstream=True)
    wait_for(cluster.settled, 30, "the group replicated")
    load = Load(cluster)
    load.start()
    try:
        for _ in range(ROUNDS):
            load.wait_for_acknowledged(200)
            old = cluster.master_port()
            cluster.kill(old)
            wait_for(lambda old=old: cluster.master_port() != old, 60, "a promotion")
            load.wait_for_acknowledged(200)  # the clients found the new master
            cluster.start_server(old)
            wait_for(lambda old=old: cluster.follows(old, cluster.master_port()), 60,
                     "the killed master rejoining as a replica")
    finally:
        load.stop()
    wait_for(cluster.settled, 60, "the replicas in step")
    master_port = cluster.master_port()
    master = cluster.client(master_port)
    entries = master.xrange(STREAM)
    stored = [fields[b"token"] for _, fields in entries]
    assert len(stored) == len(set(stored))
    assert load.acknowledged <= set(stored)  # nothing acknowledged with WAIT 1 is lost
    # Every entry was handled (a few maybe twice; one read but lost with the master, too).
    assert load.processed >= set(stored)
    group = master.xinfo_groups(STREAM)[0]
    assert group["pending"] == 0
    assert group["last-delivered-id"] == entries[-1][0]
    state = stream_state(master)
    for port in cluster.ports:
        if port != master_port:
            assert stream_state(cluster.client(port)) == state
    # Sentinel's CONFIG REWRITE left every server's file naming its role now.
    for port in cluster.ports:
        lines = (cluster.workdir / f"server-{port}" / "server.conf").read_text().splitlines()
        following = [line for line in lines if line.startswith(("replicaof", "slaveof"))]
        assert following == ([] if port == master_port
                             else [f"replicaof 127.0.0.1 {master_port}"])
