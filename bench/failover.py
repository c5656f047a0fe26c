"""Automatic failover with Redis Sentinel: a master, two replicas and three sentinels.

    python -m bench.failover [--rounds 3] [--down-after 1000]

For Brook and for Redis in one run: writers go through redis-py's ``Sentinel`` (XADD, retried
on errors), the master is killed with SIGKILL, and the time from the kill to the first write
that succeeds afterwards (on the promoted replica) is measured; the killed server is then
restarted and rejoins as a replica before the next round. Sentinel's
``down-after-milliseconds`` is most of that time and is printed with it.

:class:`Cluster` is also what the failover tests run (tests/replication/test_sentinel.py).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis
from redis.sentinel import Sentinel

from bench.run import free_port, machine_description, stop_processes, wait_ready

SERVICE = "mymaster"
QUORUM = 2


def sentinel_command() -> list[str] | None:
    """Debian's ``redis-sentinel``, or ``redis-server --sentinel`` (the same program)."""
    binary = shutil.which("redis-sentinel")
    if binary is not None:
        return [binary]
    binary = shutil.which("redis-server")
    return None if binary is None else [binary, "--sentinel"]


def wait_for(check: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except (redis.RedisError, OSError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not reached in {timeout:.0f} s")
        time.sleep(0.05)


class Cluster:
    """``kind`` ("brook" or "redis") servers, one master and two replicas, each with its own
    config file (so Sentinel's ``CONFIG REWRITE`` has one to write), and three sentinels.
    ``kinds`` mixes them instead, one kind per server, the master first (a migration)."""

    def __init__(self, kind: str, workdir: Path, down_after_ms: int = 1000,
                 failover_timeout_ms: int = 3000, server_args: tuple[str, ...] = (),
                 kinds: tuple[str, str, str] | None = None) -> None:
        self.workdir = workdir
        self.down_after_ms = down_after_ms
        self.failover_timeout_ms = failover_timeout_ms
        self.server_args = server_args
        self.ports = [free_port() for _ in range(3)]
        self.kinds = dict(zip(self.ports, kinds or (kind,) * 3, strict=True))
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    # -- life -------------------------------------------------------------------------------

    def start(self) -> None:
        sentinel = sentinel_command()
        if sentinel is None:
            raise FileNotFoundError("redis-sentinel")
        master = self.ports[0]
        for port in self.ports:
            directory = self.workdir / f"server-{port}"
            directory.mkdir(parents=True, exist_ok=True)
            # (Redis's diskless sync would wait 5 s for more replicas.)
            lines = [f"port {port}", "bind 127.0.0.1", 'save ""', "appendonly no",
                     "repl-diskless-sync-delay 0"]
            if port != master:
                lines.append(f"replicaof 127.0.0.1 {master}")
            (directory / "server.conf").write_text("\n".join(lines) + "\n")
            self.start_server(port)
        wait_for(lambda: all(self.in_step(master, port) for port in self.ports[1:]), 30,
                 "replicas in step")
        for port in self.sentinel_ports:
            directory = self.workdir / f"sentinel-{port}"
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "sentinel.conf").write_text("\n".join([
                f"port {port}", "bind 127.0.0.1", f"dir {directory}",
                f"sentinel monitor {SERVICE} 127.0.0.1 {master} {QUORUM}",
                f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}",
                f"sentinel failover-timeout {SERVICE} {self.failover_timeout_ms}",
                f"sentinel parallel-syncs {SERVICE} 1",
            ]) + "\n")
            with open(directory / "sentinel.log", "ab") as log:
                process = subprocess.Popen([*sentinel, str(directory / "sentinel.conf")],
                                           cwd=directory, stdout=log, stderr=subprocess.STDOUT)
            self.processes[port] = process
            wait_ready(port, process)
        # Every sentinel knows the other two and both replicas before anything fails.
        wait_for(self.discovered, 30, "sentinel discovery")

    def start_server(self, port: int) -> None:
        directory = self.workdir / f"server-{port}"
        if self.kinds[port] == "brook":
            command = [sys.executable, "-m", "brook", "server.conf", *self.server_args]
        else:
            binary = shutil.which("redis-server")
            if binary is None:
                raise FileNotFoundError("redis-server")
            command = [binary, "server.conf", *self.server_args]
        with open(directory / "server.log", "ab") as log:
            process = subprocess.Popen(command, cwd=directory, stdout=log,
                                       stderr=subprocess.STDOUT)
        self.processes[port] = process
        wait_ready(port, process)

    def kill(self, port: int) -> None:
        """SIGKILL: the server gets no chance to tell anyone."""
        process = self.processes.pop(port)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        stop_processes(self.processes)

    # -- looking at it --------------------------------------------------------------------------

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_timeout=5, protocol=2)

    def sentinel(self) -> Sentinel:
        return Sentinel([("127.0.0.1", port) for port in self.sentinel_ports],
                        socket_timeout=1.0, protocol=2)

    def master_port(self) -> int:
        """The master as the sentinels name it (the first one that answers)."""
        for port in self.sentinel_ports:
            try:
                address = self.client(port).execute_command(
                    "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
            except redis.RedisError:
                continue
            if address:
                return int(address[1])
        raise RuntimeError("no sentinel answers")

    def replica_ports(self) -> list[int]:
        master = self.master_port()
        return [port for port in self.ports if port != master]

    def discovered(self) -> bool:
        for port in self.sentinel_ports:
            state = self.client(port).execute_command("SENTINEL", "MASTER", SERVICE)
            fields = dict(zip(state[::2], state[1::2], strict=True))
            if int(fields[b"num-slaves"]) != 2 or int(fields[b"num-other-sentinels"]) != 2:
                return False
        return True

    def follows(self, replica: int, master: int) -> bool:
        """``replica`` is a replica of ``master`` with its link up."""
        ours = self.client(replica).info("replication")
        return ours.get("master_link_status") == "up" and ours.get("master_port") == master

    def in_step(self, master: int, replica: int) -> bool:
        return self.follows(replica, master) and (
            self.client(replica).info("replication")["master_repl_offset"]
            == self.client(master).info("replication")["master_repl_offset"])

    def settled(self) -> bool:
        """Every server runs, the sentinels agree on the master, and both replicas follow it
        and have applied everything it sent."""
        masters = set()
        for port in self.sentinel_ports:
            address = self.client(port).execute_command(
                "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
            masters.add(int(address[1]))
        if len(masters) != 1:
            return False
        master = masters.pop()
        return (len(self.processes) == 6
                and self.client(master).info("replication")["role"] == "master"
                and all(self.in_step(master, port) for port in self.ports if port != master))


# -- the measurement --------------------------------------------------------------------------

def failover_round(cluster: Cluster) -> float:
    """Kill the master while a writer writes through Sentinel; the seconds from the kill to
    the first write that succeeds afterwards."""
    writer = cluster.sentinel().master_for(SERVICE, socket_timeout=1.0)
    old = cluster.master_port()
    writer.execute_command("XADD", "events", "*", "n", "0")
    cluster.kill(old)
    killed = time.monotonic()
    while True:
        try:
            writer.execute_command("XADD", "events", "*", "n", "1")
            break
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
            time.sleep(0.01)
    taken = time.monotonic() - killed
    cluster.start_server(old)
    wait_for(cluster.settled, 60, "the old master rejoining")
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--down-after", type=int, default=1000,
                        help="Sentinel's down-after-milliseconds")
    options = parser.parse_args()
    print(machine_description(None))
    print(f"sentinels: 3, quorum {QUORUM}, down-after-milliseconds {options.down_after}, "
          f"failover-timeout 3000; SIGKILL of the master, {options.rounds} rounds\n")
    results: dict[str, list[float]] = {}
    for kind in ("brook", "redis"):
        with tempfile.TemporaryDirectory(prefix=f"failover-{kind}-") as workdir:
            cluster = Cluster(kind, Path(workdir), options.down_after)
            try:
                cluster.start()
                results[kind] = [failover_round(cluster) for _ in range(options.rounds)]
            finally:
                cluster.stop()
        shown = ", ".join(f"{taken:.2f}" for taken in results[kind])
        print(f"{kind:6} kill -> first write: median {statistics.median(results[kind]):.2f} s "
              f"({shown})")
    ratio = statistics.median(results["brook"]) / statistics.median(results["redis"])
    print(f"\nBrook / Redis: {ratio:.2f}")


if __name__ == "__main__":
    main()
