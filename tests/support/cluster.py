"""Clusters of real nodes for the tests: Brook and redis-server processes in cluster mode,
joined by the real ``redis-cli --cluster``, and what each node says of the cluster."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import redis

from tests.conftest import ServerProcess, _spawn_factory, redis_cli
from tests.support.cluster_nodes import cluster_info as info_of
from tests.support.cluster_ports import free_cluster_port

NODE_TIMEOUT_MS = 1000  # short, so that failures are detected in a few seconds


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not reached in {timeout:.0f} s"
        time.sleep(0.05)


def cluster_info(node: ServerProcess) -> dict[str, str]:
    return info_of(node.client())


def cluster_nodes(node: ServerProcess) -> list[list[str]]:
    """CLUSTER NODES, a list of fields per line."""
    text = node.client(decode_responses=True).execute_command("CLUSTER", "NODES")
    return [line.split() for line in text.splitlines() if line]


def myself(node: ServerProcess) -> list[str]:
    return next(fields for fields in cluster_nodes(node) if "myself" in fields[2])


def node_id(node: ServerProcess) -> str:
    return str(node.client(decode_responses=True).execute_command("CLUSTER", "MYID"))


def agreed(nodes: list[ServerProcess]) -> bool:
    """Every node ok, knowing every other one, none in handshake or failing, every link up,
    and all with one view of who serves which slots."""
    views = set()
    for node in nodes:
        if cluster_info(node)["cluster_state"] != "ok":
            return False
        lines = cluster_nodes(node)
        if len(lines) != len(nodes):
            return False
        for fields in lines:
            if {"handshake", "fail", "fail?", "noaddr"} & set(fields[2].split(",")):
                return False
            if fields[7] != "connected":
                return False
        views.add(frozenset((fields[0], fields[2].replace("myself,", ""), fields[3],
                             " ".join(fields[8:])) for fields in lines))
    return len(views) == 1


def cli_cluster(node: ServerProcess, *args: str, timeout: float = 120) -> str:
    """``redis-cli --cluster <args>`` (answering yes to its questions); its output."""
    done = redis_cli(node.port, "--cluster", *args, "--cluster-yes", timeout=timeout)
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert done.returncode == 0, output
    return output


class ClusterNodes:
    """Starts Brook and redis-server nodes in cluster mode; stops them after the test."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.factories = {kind: _spawn_factory(kind, tmp) for kind in ("brook", "redis")}

    def start(self, kind: str, port: int | None = None) -> ServerProcess:
        port = port or free_cluster_port()
        spawn = self.factories[kind][0]
        return spawn("--cluster-enabled", "yes", "--cluster-config-file",
                     str(self.tmp / f"nodes-{port}.conf"),
                     "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "",
                     "--appendonly", "no", port=port)

    def restart(self, node: ServerProcess) -> ServerProcess:
        """The same node (its nodes.conf) again, after it was killed."""
        return self.start(node.kind, node.port)

    def create(self, kinds: list[str], replicas: int = 0) -> list[ServerProcess]:
        """Nodes of these kinds joined by ``redis-cli --cluster create`` (with
        ``--cluster-replicas``: on one host it makes masters of the first nodes listed);
        returned once every node agrees and every replica is in sync."""
        nodes = [self.start(kind) for kind in kinds]
        cli_cluster(nodes[0], "create", *(f"127.0.0.1:{node.port}" for node in nodes),
                    *(["--cluster-replicas", str(replicas)] if replicas else []))
        wait_until(lambda: agreed(nodes), "the nodes agree")
        for node in nodes[len(nodes) // (replicas + 1):]:
            wait_until(lambda node=node: node.client().info("replication").get(
                "master_link_status") == "up", "the replicas in sync")
        return nodes

    def add_replica(self, nodes: list[ServerProcess], master: ServerProcess,
                    kind: str) -> ServerProcess:
        """A new node of ``kind`` added as ``master``'s replica (``--cluster add-node``)."""
        replica = self.start(kind)
        cli_cluster(nodes[0], "add-node", f"127.0.0.1:{replica.port}",
                    f"127.0.0.1:{nodes[0].port}", "--cluster-slave",
                    "--cluster-master-id", node_id(master))
        nodes.append(replica)
        wait_until(lambda: agreed(nodes), "the nodes agree")
        wait_until(lambda: replica.client().info("replication").get("master_link_status")
                   == "up", "the replica in sync")
        return replica

    def stop(self) -> None:
        for _spawn, started in self.factories.values():
            for proc in started:
                proc.stop()


def wait_replicated(master: ServerProcess, replica: ServerProcess) -> None:
    """The replica has applied all the master wrote (WAIT would count the writes of its own
    connection only, and RedisCluster's pipelines wrote on others)."""
    def caught_up() -> bool:
        written = master.client().info("replication")["master_repl_offset"]
        return replica.client().info("replication").get("slave_repl_offset") == written
    wait_until(caught_up, "the replica caught up")


def kill(node: ServerProcess) -> None:
    node.process.kill()
    node.process.wait(timeout=10)


def logs(nodes: list[ServerProcess]) -> Iterator[str]:
    """Each node's log tail, for a failure's message."""
    for node in nodes:
        text = node.log_path.read_text(errors="replace").splitlines()[-25:]
        yield f"--- {node.kind} {node.port}\n" + "\n".join(text)


def cluster_client(node: ServerProcess) -> redis.RedisCluster:
    return redis.RedisCluster(host="127.0.0.1", port=node.port, decode_responses=True,
                              protocol=2)

