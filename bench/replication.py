"""Replication, Brook and Redis side by side in one run.

    python -m bench.replication [--requests 200000] [--repeat 3] [--entries 1000000]

``xadd``: redis-benchmark's XADD at ``-P 16`` against a master with no replica, then with one
connected replica (a second process of the same server), medians of ``--repeat``; the ratio
is what the replica costs the master's throughput (the target: at least 0.85). The CPU
time per request of the master (without, with the replica) and of the replica says whether the
cost is the master's own work or the replica's process competing for the cores.

``resync``: a master holding a stream of ``--entries`` entries; the time from REPLICAOF to the
replica being in step (link up, same offset) for a full synchronisation; then the replica's
link is cut (CLIENT KILL TYPE replica) while 10,000 more entries are written, and the time and
bytes of the partial resynchronisation that follows. For Brook following Brook, Redis
following Redis, and each following the other (the way in and out of a migration).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.groups import process_cpu
from bench.memory import info
from bench.run import free_port, machine_description, run_benchmark, wait_ready
from bench.streams import Connection, fill, sensor_batches

PARTIAL_ENTRIES = 10_000
# Each server following its own kind, then each following the other (a migration's way in
# and way out: Redis's RDB and command stream to Brook, and Brook's to Redis).
PAIRS = (("brook", "brook"), ("redis", "redis"), ("redis", "brook"), ("brook", "redis"))


def start(kind: str, workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    if kind == "brook":
        command = [sys.executable, "-m", "brook", "--port", str(port), "--save", "",
                   "--appendonly", "no", "--repl-backlog-size", "64mb"]
    else:
        binary = shutil.which("redis-server")
        if binary is None:
            sys.exit("redis-server is required (make redis installs it)")
        command = [binary, "--port", str(port), "--save", "", "--appendonly", "no",
                   "--repl-diskless-sync-delay", "0", "--repl-backlog-size", "64mb"]
    workdir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(command, cwd=workdir, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    wait_ready(port, process)
    return process, port


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait()


def in_step(master: Connection, replica: Connection) -> bool:
    ours = info(replica, "replication")
    return (ours.get("master_link_status") == "up"
            and ours["master_repl_offset"] == info(master, "replication")["master_repl_offset"])


def wait_in_step(master: Connection, replica: Connection, timeout: float = 600) -> float:
    started = time.perf_counter()
    while not in_step(master, replica):
        if time.perf_counter() - started > timeout:
            raise RuntimeError("the replica did not catch up")
        time.sleep(0.01)
    return time.perf_counter() - started


def xadd_with_and_without(kind: str, workdir: Path, requests: int, repeat: int) -> list[float]:
    """Requests/s without and with a replica (medians), and CPU µs per request: the master's
    without and with the replica, and the replica's (all runs together)."""
    master, master_port = start(kind, workdir / "master")
    replica, replica_port = start(kind, workdir / "replica")
    try:
        cpu = process_cpu(master.pid)
        alone = [run_benchmark(master_port, "xadd", 16, requests) for _ in range(repeat)]
        master_alone_us = (process_cpu(master.pid) - cpu) * 1e6 / (requests * repeat)
        with Connection(master_port) as mconn, Connection(replica_port) as rconn:
            rconn.check("REPLICAOF", "127.0.0.1", str(master_port))
            wait_in_step(mconn, rconn)
            cpu, replica_cpu = process_cpu(master.pid), process_cpu(replica.pid)
            followed = [run_benchmark(master_port, "xadd", 16, requests) for _ in range(repeat)]
            wait_in_step(mconn, rconn)
            master_followed_us = (process_cpu(master.pid) - cpu) * 1e6 / (requests * repeat)
            replica_us = (process_cpu(replica.pid) - replica_cpu) * 1e6 / (requests * repeat)
    finally:
        stop(replica)
        stop(master)
    return [statistics.median(alone), statistics.median(followed), master_alone_us,
            master_followed_us, replica_us]


def resync(master_kind: str, replica_kind: str, workdir: Path, entries: int) -> list[float]:
    master, master_port = start(master_kind, workdir / "master")
    replica, replica_port = start(replica_kind, workdir / "replica")
    try:
        with Connection(master_port) as mconn, Connection(replica_port) as rconn:
            fill(mconn, sensor_batches(entries))
            started = time.perf_counter()
            rconn.check("REPLICAOF", "127.0.0.1", str(master_port))
            wait_in_step(mconn, rconn)
            full = time.perf_counter() - started
            partial_before = int(info(mconn, "stats")["sync_partial_ok"])
            offset_before = int(info(mconn, "replication")["master_repl_offset"])
            mconn.check("CLIENT", "KILL", "TYPE", "replica")
            for start_at in range(0, PARTIAL_ENTRIES, 1000):
                payload = b"".join(
                    b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nn\r\n$%d\r\n%d\r\n"
                    % (len(str(number)), number)
                    for number in range(start_at, start_at + 1000))
                mconn.pipeline(payload, 1000)
            started = time.perf_counter()
            wait_in_step(mconn, rconn)
            partial = time.perf_counter() - started
            partials = int(info(mconn, "stats")["sync_partial_ok"]) - partial_before
            sent = int(info(mconn, "replication")["master_repl_offset"]) - offset_before
    finally:
        stop(replica)
        stop(master)
    return [full, partial, float(partials), float(sent)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--parts", default="xadd,resync")
    options = parser.parse_args()
    parts = options.parts.split(",")
    print(machine_description())
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if "xadd" in parts:
            print("\nXADD -P 16, requests/s (medians), master without / with one replica; "
                  "CPU µs per request: master without / with, the replica")
            print(f"{'server':8} {'no replica':>12} {'one replica':>12} {'ratio':>6} "
                  f"{'cpu alone':>9} {'cpu with':>9} {'replica':>8}")
            for kind in ("brook", "redis"):
                alone, followed, cpu_alone, cpu_with, cpu_replica = xadd_with_and_without(
                    kind, workdir / kind, options.requests, options.repeat)
                print(f"{kind:8} {alone:12,.0f} {followed:12,.0f} {followed / alone:6.2f} "
                      f"{cpu_alone:9.2f} {cpu_with:9.2f} {cpu_replica:8.2f}")
        if "resync" in parts:
            print(f"\nResynchronisation, a stream of {options.entries:,} entries; partial: "
                  f"{PARTIAL_ENTRIES:,} entries written while the link was cut")
            print(f"{'master -> replica':17} {'full (s)':>9} {'partial (s)':>11} "
                  f"{'partials':>8} {'partial bytes':>13}")
            for master_kind, replica_kind in PAIRS:
                full, partial, partials, sent = resync(
                    master_kind, replica_kind,
                    workdir / f"{master_kind}-{replica_kind}-resync", options.entries)
                print(f"{master_kind + ' -> ' + replica_kind:17} {full:9.2f} {partial:11.3f} "
                      f"{partials:8.0f} {sent:13,.0f}")


if __name__ == "__main__":
    main()
