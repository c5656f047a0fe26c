"""Side-by-side benchmark: Brook and redis-server under redis-benchmark, in one run.

    python -m bench.run [--repeat 3] [--tests ping_mbulk,set,get,incr,mset] [--pipelines 1,16]

Both servers start on free ports with persistence off; every test runs against each server in
turn (alternating, repeated, median taken) so that drift of the machine affects both alike.
Prints requests/s for each and the ratio Brook/Redis; ``--json FILE`` saves the figures.
Absolute numbers vary between machines; the ratio is what ``docs/performance.md`` records.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# redis-benchmark's own defaults (its keys are the literal "key:__rand_int__"), then SET/GET over
# 100,000 random keys ("@random", -r 100000): a keyspace larger than the CPU caches, where every
# dict probe misses cache.
DEFAULT_TESTS = ("ping_mbulk", "set", "get", "incr", "mset", "set@random", "get@random")
RANDOM_KEYS = 100_000
DEFAULT_PIPELINES = (1, 16)
CLIENTS = 50


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server on port {port} did not start")


@dataclass
class Target:
    name: str
    port: int
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_targets(workdir: Path, brook_args: list[str]) -> list[Target]:
    redis_binary = shutil.which("redis-server")
    if redis_binary is None:
        sys.exit("redis-server is required (make redis installs it)")
    brook_port, redis_port = free_port(), free_port()
    brook = subprocess.Popen(
        [sys.executable, "-m", "brook", "--port", str(brook_port), *brook_args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir,
    )
    redis = subprocess.Popen(
        [redis_binary, "--port", str(redis_port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir,
    )
    targets = [Target("brook", brook_port, brook), Target("redis", redis_port, redis)]
    for target in targets:
        wait_ready(target.port, target.process)
    return targets


def run_benchmark(port: int, test: str, pipeline: int, requests: int) -> float:
    """requests/s that redis-benchmark reports for one test (``name@random``: random keys)."""
    test, _, variant = test.partition("@")
    command = [
        "redis-benchmark", "-p", str(port), "-c", str(CLIENTS), "-n", str(requests),
        "-P", str(pipeline), "-t", test, "--csv",
    ]
    if variant == "random":
        command += ["-r", str(RANDOM_KEYS)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    rows = list(csv.reader(io.StringIO(result.stdout)))
    for row in rows:
        if row and row[0].upper().startswith(test.upper().split("_")[0]):
            return float(row[1])
    raise RuntimeError(f"no result for {test} in: {result.stdout!r} {result.stderr!r}")


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    redis_version = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True
    ).stdout.split()[2]
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"redis-server {redis_version.removeprefix('v=')}, {CLIENTS} clients"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", default=",".join(DEFAULT_TESTS))
    parser.add_argument("--pipelines", default=",".join(map(str, DEFAULT_PIPELINES)))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=0,
                        help="requests per run (default: 100k at -P 1, 1M with pipelining)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--brook-args", default="", help="extra flags for brook-server")
    options = parser.parse_args()
    if shutil.which("redis-benchmark") is None:
        sys.exit("redis-benchmark is required (make redis installs it)")
    tests = options.tests.split(",")
    pipelines = [int(p) for p in options.pipelines.split(",")]
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as workdir:
        targets = start_targets(Path(workdir), options.brook_args.split())
        try:
            for test in tests:
                for pipeline in pipelines:
                    requests = options.requests or (100_000 if pipeline == 1 else 1_000_000)
                    label = f"{test.replace('@random', ' (random keys)')} -P {pipeline}"
                    row = results.setdefault(label, {"brook": [], "redis": []})
                    for _ in range(options.repeat):
                        for target in targets:
                            row[target.name].append(run_benchmark(target.port, test, pipeline, requests))
                    print_row(label, row)
        finally:
            for target in targets:
                target.stop()
    print()
    print(f"Machine: {machine_description()}")
    print(f"Medians of {options.repeat} runs, requests/s.")
    print()
    print(markdown_table(results))
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=2))


def print_row(label: str, row: dict[str, list[float]]) -> None:
    brook, redis = statistics.median(row["brook"]), statistics.median(row["redis"])
    print(f"{label:<30} brook {brook:>12,.0f}  redis {redis:>12,.0f}  ratio {brook / redis:.2f}",
          flush=True)


def markdown_table(results: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| test | Brook rps | Redis rps | Brook/Redis |", "|---|---:|---:|---:|"]
    for label, row in results.items():
        brook, redis = statistics.median(row["brook"]), statistics.median(row["redis"])
        lines.append(f"| {label} | {brook:,.0f} | {redis:,.0f} | {brook / redis:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
