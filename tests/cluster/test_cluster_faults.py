"""A cluster under the failures it exists to survive: a master cut off from the majority
(the other nodes paused with SIGSTOP) refuses what it must, a stale master that comes back
after its replica replaced it follows the new one, and half the slots resharded while
producers and a consumer-group worker run lose no entry and deliver none twice."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

from tests.conftest import ServerProcess, whole_error
from tests.support.cluster import (
    ClusterNodes,
    agreed,
    cli_cluster,
    cluster_client,
    cluster_info,
    cluster_nodes,
    logs,
    myself,
    node_id,
    wait_replicated,
    wait_until,
)


@contextmanager
def paused(nodes: list[ServerProcess]) -> Iterator[None]:
    """The nodes stopped (SIGSTOP): to the others they vanish, sockets and all open, as a
    network partition would make them; resumed (SIGCONT) however the block ends."""
    for node in nodes:
        os.kill(node.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for node in nodes:
            os.kill(node.process.pid, signal.SIGCONT)


def _key_of(node: ServerProcess) -> str:
    """A key in the first slot ``node`` serves."""
    first = int(myself(node)[8].split("-")[0])
    client = node.client()
    return next(f"k{i}" for i in range(1_000_000)
                if client.execute_command("CLUSTER", "KEYSLOT", f"k{i}") == first)


def _slots_served(node: ServerProcess) -> int:
    ranges = node.client().execute_command("CLUSTER", "SLOTS")
    return sum(end - start + 1 for start, end, master, *_replicas in ranges
               if master[1] == node.port)


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_a_master_cut_off_from_the_majority_refuses_requests_until_it_rejoins(
        cluster: ClusterNodes, kind: str) -> None:
    """Run with each kind of node left alone: what the Brook node answers is what the
    redis-server node answers in its place."""
    nodes = cluster.create([kind, "brook", "redis"])
    alone, others = nodes[0], nodes[1:]
    key = _key_of(alone)
    client = alone.client(decode_responses=True)
    assert client.set(key, "before")
    with paused(others):
        wait_until(lambda: cluster_info(alone)["cluster_state"] == "fail",
                   "the cut-off master's cluster down", timeout=15)
        for command in (("SET", key, "during"), ("GET", key)):
            with pytest.raises(redis.ResponseError) as info:
                client.execute_command(*command)
            assert whole_error(info.value) == "CLUSTERDOWN The cluster is down"
        # One master alone cannot make a failure report a majority: suspected, not failed.
        flags = {fields[0]: fields[2] for fields in cluster_nodes(alone)}
        assert all(flags[node_id_] == "master,fail?" for node_id_ in flags
                   if node_id_ != myself(alone)[0])
        assert int(cluster_info(alone)["cluster_current_epoch"]) == 3  # nobody elected
    try:
        wait_until(lambda: agreed(nodes), "the cluster whole again")
    except AssertionError as failure:
        raise AssertionError("\n".join([str(failure), *logs(nodes)])) from None
    assert client.get(key) == "before"
    assert client.set(key, "after")


def test_a_master_cut_off_and_replaced_follows_its_replica_when_it_comes_back(
        cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "brook", "redis"])
    master = nodes[0]
    replica = cluster.add_replica(nodes, master, "brook")
    key = _key_of(master)
    stale = master.client(decode_responses=True)
    assert stale.set(key, "old")
    wait_replicated(master, replica)
    with paused([master]):
        wait_until(lambda: "master" in myself(replica)[2], "the replica's promotion")
        assert cluster_client(nodes[1]).set(key, "new")  # to the promoted replica
    # Back, the old master learns its slots went to a node of a newer epoch, and follows it.
    try:
        wait_until(lambda: myself(master)[3] == node_id(replica), "the old master a replica")
    except AssertionError as failure:
        raise AssertionError("\n".join([str(failure), *logs(nodes)])) from None
    with pytest.raises(redis.ResponseError) as info:
        stale.set(key, "lost")
    slot = master.client().execute_command("CLUSTER", "KEYSLOT", key)
    assert whole_error(info.value) == f"MOVED {slot} 127.0.0.1:{replica.port}"
    wait_until(lambda: master.client().info("replication").get("master_link_status") == "up",
               "the old master in sync with the new")
    wait_replicated(replica, master)
    assert cluster_client(nodes[1]).get(key) == "new"
    reader = master.client(decode_responses=True, single_connection_client=True)
    assert reader.execute_command("READONLY") is True and reader.get(key) == "new"
    wait_until(lambda: agreed(nodes), "every node agrees")


STREAMS = [f"jobs:{i}" for i in range(120)]


class _Producer(threading.Thread):
    """XADDs round the streams until told to stop, keeping every ID the server returned."""

    def __init__(self, seed: ServerProcess) -> None:
        super().__init__(daemon=True)
        self.client = cluster_client(seed)
        self.added: list[tuple[str, str]] = []
        self.stop = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            count = 0
            while not self.stop.is_set():
                stream = STREAMS[count % len(STREAMS)]
                self.added.append((stream, self.client.xadd(stream, {"n": count})))
                count += 1
        except BaseException as failure:  # noqa: BLE001 -- reported by the test
            self.failure = failure


class _Worker(threading.Thread):
    """A consumer of the group: reads new entries of each stream and acknowledges them."""

    def __init__(self, seed: ServerProcess) -> None:
        super().__init__(daemon=True)
        self.client = cluster_client(seed)
        self.delivered: Counter[tuple[str, str]] = Counter()
        self.stop = threading.Event()
        self.failure: BaseException | None = None

    def round(self) -> int:
        got = 0
        for stream in STREAMS:
            for _name, entries in self.client.xreadgroup("workers", "w1", {stream: ">"},
                                                         count=100):
                ids = [entry_id for entry_id, _fields in entries]
                self.delivered.update((stream, entry_id) for entry_id in ids)
                if ids:
                    assert self.client.xack(stream, "workers", *ids) == len(ids)
                got += len(ids)
        return got

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self.round()
        except BaseException as failure:  # noqa: BLE001 -- reported by the test
            self.failure = failure


@pytest.mark.timeout(600)
def test_resharding_half_the_slots_under_load_loses_no_entry_and_delivers_none_twice(
        cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "brook", "brook"])
    setup = cluster_client(nodes[0])
    for stream in STREAMS:
        assert setup.xgroup_create(stream, "workers", "$", mkstream=True)
    served_before = _slots_served(nodes[1])
    producers = [_Producer(nodes[1]), _Producer(nodes[2])]
    worker = _Worker(nodes[0])
    for thread in (*producers, worker):
        thread.start()
    time.sleep(1)
    # Half the slots change hands: a quarter from each of two masters to the third.
    target = node_id(nodes[1])
    for source in (nodes[0], nodes[2]):
        cli_cluster(nodes[0], "reshard", f"127.0.0.1:{nodes[0].port}", "--cluster-from",
                    node_id(source), "--cluster-to", target, "--cluster-slots", "4096",
                    "--cluster-pipeline", "5")
    time.sleep(1)
    for thread in (*producers, worker):
        thread.stop.set()
        thread.join(timeout=60)
    for thread in (*producers, worker):
        assert thread.failure is None, repr(thread.failure)
    wait_until(lambda: agreed(nodes), "the nodes agree after resharding")
    while worker.round():  # what was added after the worker's last round
        pass
    added = Counter(entry for producer in producers for entry in producer.added)
    assert len(added) > 1000 and max(added.values()) == 1
    assert worker.delivered == added  # every entry once, none twice, none unknown
    assert sum(setup.xlen(stream) for stream in STREAMS) == len(added)
    for stream in STREAMS:
        assert setup.xpending(stream, "workers")["pending"] == 0
    assert _slots_served(nodes[1]) == served_before + 8192
