"""Redis Cluster: what k masters carry, and how long a failover takes.

    python -m bench.cluster [--masters 1,2,3] [--requests 200000] [--rounds 3]

For Brook and for Redis in one run, nodes in cluster mode joined by ``redis-cli --cluster
create``:

- **Scaling**: ``redis-benchmark --cluster`` (SET and GET, 50 clients, pipelines of 16,
  random keys over every slot) against k masters; requests/s and the server CPU per request
  (all nodes' user+system time, from /proc, over the requests). On this two-core machine
  redis-benchmark itself takes a core, so what grows with k is mostly the per-node share.
- **Failover**: three masters, the first with a replica, ``cluster-node-timeout`` 1000 ms; a
  writer SETs keys of the first master's slots in a loop (through redis-py's RedisCluster,
  retrying on errors), the master is killed with SIGKILL, and the time from the kill to the
  first write that succeeds again (on the promoted replica) is measured. The node timeout is
  most of it: a node is suspected after it, failed when the majority agrees, and the replica
  waits 500-1000 ms before its election.
- **Resharding**: three masters holding ``--keys`` keys, and ``redis-cli --cluster reshard``
  moving ``--slots`` slots (and their keys) from the first to the second; seconds, and the
  nodes' CPU per slot moved. redis-cli asks each node in turn, a few commands a slot, so a
  node's cost per CLUSTER SETSLOT (its nodes.conf rewrite) and per GETKEYSINSLOT shows here.

    python -m bench.cluster --parts reshard --slots 2048 --keys 100000
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import redis

from bench.failover import wait_for
from bench.run import free_cluster_port, machine_description, stop_processes, wait_ready

NODE_TIMEOUT_MS = 1000
_TICKS = os.sysconf("SC_CLK_TCK")


class Nodes:
    """Cluster-mode servers of one kind in ``workdir``."""

    def __init__(self, kind: str, workdir: Path) -> None:
        self.kind = kind
        self.workdir = workdir
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    def start(self, port: int | None = None) -> int:
        port = port or free_cluster_port()
        directory = self.workdir / f"{self.kind}-{port}"
        directory.mkdir(parents=True, exist_ok=True)
        arguments = ["--port", str(port), "--cluster-enabled", "yes",
                     "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "",
                     "--appendonly", "no"]
        if self.kind == "brook":
            command = [sys.executable, "-m", "brook", *arguments]
        else:
            binary = shutil.which("redis-server")
            if binary is None:
                sys.exit("redis-server is required (make redis installs it)")
            command = [binary, *arguments, "--bind", "127.0.0.1"]
        with open(directory / "server.log", "ab") as log:
            process = subprocess.Popen(command, cwd=directory, stdout=log,
                                       stderr=subprocess.STDOUT)
        self.processes[port] = process
        wait_ready(port, process)
        return port

    def create(self, count: int) -> list[int]:
        ports = [self.start() for _ in range(count)]
        if count < 3:  # what redis-cli --cluster create does, for fewer masters than it takes
            share = 16384 // count
            for index, port in enumerate(ports):
                client = redis.Redis(port=port)
                last = 16383 if index == count - 1 else (index + 1) * share - 1
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", index * share, last)
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", index + 1)
            for port in ports[1:]:
                redis.Redis(port=port).execute_command("CLUSTER", "MEET", "127.0.0.1",
                                                       ports[0])
        else:
            _cli(ports[0], "--cluster", "create", *(f"127.0.0.1:{port}" for port in ports),
                 "--cluster-yes")
        wait_for(lambda: all(_state_ok(port) for port in ports), 60, "the cluster ok")
        return ports

    def kill(self, port: int) -> None:
        process = self.processes.pop(port)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def cpu_seconds(self) -> float:
        total = 0.0
        for process in self.processes.values():
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / _TICKS
        return total

    def stop(self) -> None:
        stop_processes(self.processes)


def _cli(port: int, *args: str) -> str:
    done = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                          timeout=120, check=True)
    return done.stdout.decode()


def _state_ok(port: int) -> bool:
    try:
        text = redis.Redis(port=port).execute_command("CLUSTER", "INFO").decode()
    except redis.RedisError:
        return False
    return "cluster_state:ok" in text


def scaling(kind: str, masters: int, requests: int) -> tuple[float, float]:
    """(requests/s, server CPU µs per request) of SET then GET against ``masters`` nodes."""
    with tempfile.TemporaryDirectory() as directory:
        nodes = Nodes(kind, Path(directory))
        try:
            ports = nodes.create(masters)
            before = nodes.cpu_seconds()
            started = time.perf_counter()
            # (redis-benchmark --cluster wants two masters at least: one is served alone.)
            cluster = ["--cluster"] if masters > 1 else []
            subprocess.run(["redis-benchmark", *cluster, "-p", str(ports[0]), "-t", "set,get", "-P", "16", "-c", "50", "-n", str(requests), "-r",
                            "1000000", "-q"], capture_output=True, timeout=600, check=True)
            elapsed = time.perf_counter() - started
            cpu = nodes.cpu_seconds() - before
        finally:
            nodes.stop()
    done = 2 * requests
    return done / elapsed, cpu / done * 1e6


def failover_seconds(kind: str) -> float:
    """From SIGKILL of a master to the first write that succeeds again in its slots."""
    with tempfile.TemporaryDirectory() as directory:
        nodes = Nodes(kind, Path(directory))
        try:
            ports = nodes.create(3)
            master = ports[0]
            replica = nodes.start()
            master_id = redis.Redis(port=master).execute_command("CLUSTER", "MYID").decode()
            _cli(ports[0], "--cluster", "add-node", f"127.0.0.1:{replica}",
                 f"127.0.0.1:{master}", "--cluster-slave", "--cluster-master-id", master_id)
            wait_for(lambda: redis.Redis(port=replica).info("replication").get(
                "master_link_status") == "up", 60, "the replica in sync")
            client = redis.RedisCluster(host="127.0.0.1", port=master, protocol=2)
            key = next(f"k{i}" for i in range(10000)
                       if client.keyslot(f"k{i}") < 5000)  # one of the first master's
            stop = threading.Event()
            succeeded: list[float] = []

            def writer() -> None:
                own = redis.RedisCluster(host="127.0.0.1", port=ports[1], protocol=2,
                                         socket_timeout=0.5)
                while not stop.is_set():
                    try:
                        own.set(key, "x")
                        succeeded.append(time.monotonic())
                    except (redis.RedisError, OSError):
                        own = _reconnect(ports[1:])
                    time.sleep(0.001)

            thread = threading.Thread(target=writer)
            thread.start()
            time.sleep(0.5)
            killed = time.monotonic()
            nodes.kill(master)
            wait_for(lambda: succeeded and succeeded[-1] > killed, 60, "a write after the kill")
            stop.set()
            thread.join()
            return next(at for at in succeeded if at > killed) - killed
        finally:
            nodes.stop()


def reshard_seconds(kind: str, slots: int, keys: int) -> tuple[float, float]:
    """(seconds, nodes' CPU ms per slot) of ``redis-cli --cluster reshard`` moving ``slots``
    slots from the first master to the second, with ``keys`` keys over all slots."""
    with tempfile.TemporaryDirectory() as directory:
        nodes = Nodes(kind, Path(directory))
        try:
            ports = nodes.create(3)
            client = redis.RedisCluster(host="127.0.0.1", port=ports[0], protocol=2)
            for start in range(0, keys, 10000):
                pipe = client.pipeline()
                for index in range(start, min(start + 10000, keys)):
                    pipe.set(f"key:{index}", "value")
                pipe.execute()
            source, target = (redis.Redis(port=port).execute_command("CLUSTER", "MYID")
                              .decode() for port in ports[:2])
            before = nodes.cpu_seconds()
            started = time.perf_counter()
            _cli(ports[0], "--cluster", "reshard", f"127.0.0.1:{ports[0]}", "--cluster-from",
                 source, "--cluster-to", target, "--cluster-slots", str(slots),
                 "--cluster-yes")
            elapsed = time.perf_counter() - started
            cpu = nodes.cpu_seconds() - before
            moved = sum(redis.Redis(port=port).dbsize() for port in ports)
            if moved != keys:
                raise RuntimeError(f"{keys - moved} keys lost in the resharding")
        finally:
            nodes.stop()
    return elapsed, cpu / slots * 1e3


def _reconnect(ports: list[int]) -> redis.RedisCluster:
    """A fresh client (redis-py drops a node it cannot reach from its map)."""
    time.sleep(0.05)
    for port in ports:
        try:
            return redis.RedisCluster(host="127.0.0.1", port=port, protocol=2,
                                      socket_timeout=0.5)
        except (redis.RedisError, OSError):
            continue
    raise ConnectionError("no node answers")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--masters", default="1,2,3")
    parser.add_argument("--requests", type=int, default=200000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parts", default="scaling,failover,reshard")
    parser.add_argument("--slots", type=int, default=2048)
    parser.add_argument("--keys", type=int, default=100000)
    options = parser.parse_args()
    parts = options.parts.split(",")
    print(machine_description(50))
    if "scaling" in parts:
        print("\n| masters | server | requests/s | server CPU µs/request |")
        print("|---:|---|---:|---:|")
        for masters in (int(text) for text in options.masters.split(",")):
            for kind in ("brook", "redis"):
                runs = [scaling(kind, masters, options.requests)
                        for _ in range(options.rounds)]
                rate = statistics.median(run[0] for run in runs)
                cpu = statistics.median(run[1] for run in runs)
                print(f"| {masters} | {kind} | {rate:,.0f} | {cpu:.2f} |", flush=True)
    if "failover" in parts:
        print("\n| server | failover, s (median of rounds) | all rounds |")
        print("|---|---:|---|")
        for kind in ("brook", "redis"):
            times = [failover_seconds(kind) for _ in range(options.rounds)]
            print(f"| {kind} | {statistics.median(times):.2f} | "
                  f"{', '.join(f'{t:.2f}' for t in times)} |", flush=True)
    if "reshard" in parts:
        print(f"\n| server | reshard {options.slots} slots of {options.keys:,} keys, s | "
              "nodes' CPU ms per slot |")
        print("|---|---:|---:|")
        for kind in ("brook", "redis"):
            runs = [reshard_seconds(kind, options.slots, options.keys)
                    for _ in range(options.rounds)]
            print(f"| {kind} | {statistics.median(run[0] for run in runs):.1f} | "
                  f"{statistics.median(run[1] for run in runs):.2f} |", flush=True)


if __name__ == "__main__":
    main()
