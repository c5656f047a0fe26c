"""Side-by-side benchmark: Brook and redis-server under redis-benchmark, in one run.

    python -m bench.run [--repeat 3] [--tests ping_mbulk,set,get,incr,mset] [--pipelines 1,16]
    python -m bench.run --suite streams [--stream-entries 100000] [--servers redis]
    python -m bench.run --suite groups [--stream-entries 100000]
    python -m bench.run --suite herd
    python -m bench.run --suite scripting
    python -m bench.run --suite slowloris
    python -m bench.run --suite bitmaps

Both servers start on free ports with persistence off; every test runs against each server in
turn (alternating, repeated, median taken) so that drift of the machine affects both alike.
Prints requests/s for each and the ratio Brook/Redis; ``--json FILE`` saves the figures.
Absolute numbers vary between machines; the ratio is what ``docs/performance.md`` records.

Suites: ``core`` (the string/keyspace rows), ``streams`` (``xadd`` and ``xrange_10`` under
redis-benchmark, and ``xscan``: fill a fresh pair of servers with ``--stream-entries`` readings,
memory per entry, full XRANGE scan; see ``bench/streams.py``), ``groups`` (``xgroup_worker``:
an XREADGROUP COUNT 100 + XACK worker loop consuming a stream of ``--stream-entries`` readings, and
``xgroup_pending``: memory per pending entry; see ``bench/groups.py``), ``all`` (the default: all
three). ``herd`` (not in ``all``): server CPU per entry delivered to 1 to 3,000 consumers parked
on blocking XREADGROUP, a fresh server per size; ``python -m bench.herd`` for its own options.
``sets`` (not in ``all``): SADD, SISMEMBER, ZADD, ZRANGEBYSCORE ... LIMIT 0 10 and ZPOPMIN
under redis-benchmark, memory per member of sets and sorted sets, and a delayed-job loop (see
``bench/sets.py``). ``scripting`` (not in ``all``): EVALSHA of a one-INCR script and of dramatiq's
enqueue under redis-benchmark, memory per cached script (SCRIPT LOAD of 10,000, a fresh pair per
repeat), and Brook's in-process cost of EVALSHA against INCR (see ``bench/scripting.py``;
``python -m bench.scripting`` adds a cProfile). ``slowloris`` (not in ``all``): a normal client's
round-trip latency (p50/p99/max) and server CPU per request beside 0, 1,000 and 5,000 slow
connections (see ``bench/slowloris.py``). ``bitmaps`` (not in ``all``): the bit commands (see
``bench/bitmaps.py``). ``--tests`` picks rows directly. ``--servers
redis`` runs one side only (no ratios), which is how the stream rows were developed before Brook
had stream commands.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import bitmaps, groups, herd, lists, scripting, sets, slowloris, streams

# redis-benchmark's own defaults (its keys are the literal "key:__rand_int__"), then SET/GET over
# 100,000 random keys ("@random", -r 100000): a keyspace larger than the CPU caches, where every
# dict probe misses cache.
DEFAULT_TESTS = ("ping_mbulk", "set", "get", "incr", "mset", "set@random", "get@random")
RANDOM_KEYS = 100_000
DEFAULT_PIPELINES = (1, 16)
CLIENTS = 50
SUITES: dict[str, tuple[str, ...]] = {
    "core": DEFAULT_TESTS,
    "streams": streams.STREAM_TESTS,
    "groups": groups.GROUP_TESTS,
    "all": DEFAULT_TESTS + streams.STREAM_TESTS + groups.GROUP_TESTS,
    "herd": herd.HERD_TESTS,
    "sets": sets.SET_TESTS + sets.MEMORY_TESTS + (sets.DELAYED_TEST,),
    "scripting": scripting.SCRIPTING_TESTS,
    "slowloris": slowloris.SLOWLORIS_TESTS,
    "bitmaps": bitmaps.BITMAP_TESTS,
}
SERVERS = ("brook", "redis")
# ``--baseline DIR``: another Brook checkout (an earlier commit) run beside the two, so that a
# change is measured before and after in one run; its figures are in the "baseline" column.
BASELINE = "baseline"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_cluster_port() -> int:
    """A free port below 55,536 whose cluster bus port (10,000 above) is free too: Redis
    refuses a port whose bus port would pass 65,535."""
    while True:
        port = random.randrange(20000, 55535)
        with socket.socket() as first, socket.socket() as second:
            try:
                first.bind(("127.0.0.1", port))
                second.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


def stop_processes(processes: dict[int, subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every server still running, SIGKILL to one that takes over ten seconds."""
    for process in processes.values():
        if process.poll() is None:
            process.terminate()
    for process in processes.values():
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    processes.clear()


def wait_ready(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60  # a server under valgrind takes seconds to start
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


def start_targets(workdir: Path, brook_args: list[str], servers: tuple[str, ...] = SERVERS,
                  baseline: str | None = None,
                  shared_args: Callable[[str], list[str]] | None = None,
                  wrapper: Callable[[str], list[str]] | None = None) -> list[Target]:
    """The servers, each on a free port; ``shared_args(name)``: more arguments for either,
    ``wrapper(name)``: a command to run it under (valgrind)."""
    redis_binary = shutil.which("redis-server")
    if redis_binary is None:
        sys.exit("redis-server is required (make redis installs it)")
    brook = [sys.executable, "-m", "brook"]
    commands = {
        "brook": lambda port: [*brook, "--port", str(port), *brook_args],
        "redis": lambda port: [redis_binary, "--port", str(port), "--save", "", "--appendonly", "no"],
        BASELINE: lambda port: [*brook, "--port", str(port), *brook_args],
    }
    targets = []
    for name in servers:
        port = free_port()
        env = None
        if name == BASELINE:
            env = {**os.environ, "PYTHONPATH": str(Path(baseline or ".").resolve())}
        more = shared_args(name) if shared_args is not None else []
        under = wrapper(name) if wrapper is not None else []
        process = subprocess.Popen(
            [*under, *commands[name](port), *more], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=workdir, env=env,
        )
        targets.append(Target(name, port, process))
    try:
        for target in targets:
            wait_ready(target.port, target.process)
    except BaseException:
        stop_targets(targets)
        raise
    return targets


def stop_targets(targets: list[Target]) -> None:
    for target in targets:
        target.stop()


def run_benchmark(port: int, test: str, pipeline: int, requests: int,
                  login: tuple[str, str] | None = None,
                  tls: tuple[int, list[str]] | None = None) -> float:
    """requests/s that redis-benchmark reports for one test (``name@random``: random keys);
    ``login``: (user, password) its connections authenticate as; ``tls``: the server's TLS
    port and redis-benchmark's TLS flags (``--tls --cacert ...``) to reach it with.

    A test in ``streams.CUSTOM_TESTS`` is a custom command line; its ``prepare`` step runs first
    (outside the timing) so every sample starts from the same stream on either server.
    """
    test, _, variant = test.partition("@")
    command = [
        "redis-benchmark", "-p", str(tls[0] if tls is not None else port), "-c", str(CLIENTS),
        "-n", str(requests), "-P", str(pipeline), "--csv",
    ]
    if variant == "random":
        command += ["-r", str(RANDOM_KEYS)]
    if login is not None:
        command += ["--user", login[0], "-a", login[1]]
    if tls is not None:
        command += tls[1]
    custom = (streams.CUSTOM_TESTS.get(test) or sets.custom_tests(requests).get(test)
              or lists.custom_tests(requests).get(test) or scripting.CUSTOM_TESTS.get(test)
              or bitmaps.CUSTOM_TESTS.get(test))
    if custom is not None:
        custom.prepare(port)
        command += custom.command
    else:
        command += ["-t", test]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    if custom is not None:
        # The first field is the command line, quoted but not escaped (a JSON argument breaks
        # it as CSV); the seven after it are numbers, the first of them requests/s.
        for line in result.stdout.splitlines():
            if line.startswith('"') and not line.startswith('"test"'):
                return float(line.rsplit(",", 7)[1].strip('"'))
    rows = list(csv.reader(io.StringIO(result.stdout)))
    for row in rows:
        if not row or row[0] == "test":
            continue
        if custom is not None or row[0].upper().startswith(test.upper().split("_")[0]):
            return float(row[1])
    raise RuntimeError(f"no result for {test} in: {result.stdout!r} {result.stderr!r}")


def parse_servers(text: str) -> tuple[str, ...]:
    """``--servers``: a comma-separated subset of SERVERS, in SERVERS order; exits otherwise."""
    names = text.split(",")
    servers = tuple(name for name in SERVERS if name in names)
    if not servers or set(names) - set(SERVERS):
        sys.exit(f"--servers takes a comma-separated subset of {','.join(SERVERS)}")
    return servers


def machine_description(clients: int | None = CLIENTS) -> str:
    """The machine, Python and Redis versions (and the redis-benchmark client count)."""
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
    description = (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                   f"redis-server {redis_version.removeprefix('v=')}")
    return description if clients is None else f"{description}, {clients} clients"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", choices=SUITES, default="all",
                        help="default set of tests (ignored when --tests is given)")
    parser.add_argument("--tests", help="comma-separated tests (default: the suite's)")
    parser.add_argument("--pipelines", default=",".join(map(str, DEFAULT_PIPELINES)))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=0,
                        help="requests per run (default: 100k at -P 1, 1M with pipelining)")
    parser.add_argument("--stream-entries", type=int, default=1_000_000,
                        help="entries in the stream of the xscan and xgroup_* tests (0 skips them)")
    parser.add_argument("--set-members", type=int, default=1_000_000,
                        help="members of the set/zset memory rows and jobs of delayed_jobs")
    parser.add_argument("--servers", default=",".join(SERVERS),
                        help="brook,redis (default), or one of them alone: no ratios then")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--brook-args", default="", help="extra flags for brook-server")
    parser.add_argument("--baseline", help="a checkout of an earlier Brook (e.g. made with "
                        "git worktree) to run beside them: its figures and Brook/baseline")
    options = parser.parse_args()
    if shutil.which("redis-benchmark") is None:
        sys.exit("redis-benchmark is required (make redis installs it)")
    servers = tuple(name for name in SERVERS if name in options.servers.split(","))
    if not servers or set(options.servers.split(",")) - set(SERVERS):
        sys.exit(f"--servers takes a comma-separated subset of {','.join(SERVERS)}")
    if options.baseline:
        servers += (BASELINE,)
    tests = options.tests.split(",") if options.tests else list(SUITES[options.suite])
    bench_tests = [test for test in tests
                   if test != streams.SCAN_TEST and test not in groups.GROUP_TESTS
                   and test not in herd.HERD_TESTS and test not in sets.MEMORY_TESTS
                   and test not in slowloris.SLOWLORIS_TESTS
                   and test != sets.DELAYED_TEST
                   and test not in (scripting.MEMORY_TEST, scripting.INPROCESS_TEST)]
    scan = streams.SCAN_TEST in tests and options.stream_entries > 0
    worker = groups.WORKER_TEST in tests and options.stream_entries > 0
    pending = groups.PENDING_TEST in tests and options.stream_entries > 0
    pipelines = [int(p) for p in options.pipelines.split(",")]
    brook_args = options.brook_args.split()
    results: dict[str, dict[str, list[float]]] = {}
    # Server CPU µs per request of the same runs: steadier than requests/s on a shared machine.
    cpu_results: dict[str, dict[str, list[float]]] = {}
    scan_results: dict[str, dict[str, list[float]]] = {}
    group_results: dict[str, dict[str, list[float]]] = {}
    set_results: dict[str, dict[str, list[float]]] = {}
    script_results: dict[str, dict[str, list[float]]] = {}
    inprocess_results: dict[str, dict[str, list[float]]] = {}
    herd_runs: list[herd.HerdRun] = []
    slow_runs: list[slowloris.SlowRun] = []
    with tempfile.TemporaryDirectory() as workdir:
        if bench_tests:
            targets = start_targets(Path(workdir), brook_args, servers, options.baseline)
            try:
                for test in bench_tests:
                    for pipeline in pipelines:
                        requests = options.requests or (100_000 if pipeline == 1 else 1_000_000)
                        label = f"{test.replace('@random', ' (random keys)')} -P {pipeline}"
                        row = results.setdefault(label, {name: [] for name in servers})
                        cpu_row = cpu_results.setdefault(label, {name: [] for name in servers})
                        for _ in range(options.repeat):
                            for target in targets:
                                before = groups.process_cpu(target.process.pid)
                                row[target.name].append(
                                    run_benchmark(target.port, test, pipeline, requests))
                                spent = groups.process_cpu(target.process.pid) - before
                                cpu_row[target.name].append(spent * 1e6 / requests)
                        print_row(label, row)
            finally:
                stop_targets(targets)
        if scan:
            # A fresh pair: memory per entry is measured from an empty server, not one whose
            # allocator (or, for Brook, RSS) still carries the redis-benchmark rows' keys.
            targets = start_targets(Path(workdir), brook_args, servers, options.baseline)
            try:
                scan_results = streams.scan_rows(
                    {target.name: target.port for target in targets},
                    options.stream_entries, options.repeat, print_row)
            finally:
                stop_targets(targets)
        # Each consumer-group row gets its own fresh pair: the worker loop a stream nothing else
        # has touched, the memory row a server whose RSS (Brook's used_memory) holds no earlier PEL.
        if worker:
            targets = start_targets(Path(workdir), brook_args, servers, options.baseline)
            try:
                group_results |= groups.worker_rows(
                    {target.name: target.port for target in targets},
                    {target.name: target.process.pid for target in targets},
                    options.stream_entries, options.repeat, print_row)
            finally:
                stop_targets(targets)
        if pending:
            targets = start_targets(Path(workdir), brook_args, servers, options.baseline)
            try:
                group_results |= groups.pending_rows(
                    {target.name: target.port for target in targets},
                    options.stream_entries, print_row)
            finally:
                stop_targets(targets)
        for test in (t for t in tests if t in sets.MEMORY_TESTS):
            # A fresh pair per row: Brook's used_memory is its RSS, which never shrinks.
            targets = start_targets(Path(workdir), brook_args, servers, options.baseline)
            try:
                set_results |= sets.memory_row(
                    test, {target.name: target.port for target in targets},
                    options.set_members, print_row)
            finally:
                stop_targets(targets)
        if sets.DELAYED_TEST in tests:
            targets = start_targets(Path(workdir), brook_args, servers, options.baseline)
            try:
                set_results |= sets.delayed_rows(
                    {target.name: target.port for target in targets}, options.set_members,
                    print_row)
            finally:
                stop_targets(targets)
        if scripting.MEMORY_TEST in tests:
            # A fresh pair per repeat: Brook's used_memory is its RSS, which never shrinks.
            for _ in range(options.repeat):
                targets = start_targets(Path(workdir), brook_args, servers, options.baseline)
                try:
                    scripting.memory_rows({target.name: target.port for target in targets},
                                          script_results)
                finally:
                    stop_targets(targets)
            for label, row in script_results.items():
                print_row(label, row)
        if scripting.INPROCESS_TEST in tests and "brook" in servers:  # in this process
            inprocess_results = scripting.inprocess_rows(options.repeat)
            for label, row in inprocess_results.items():
                print_row(label, row)
        if herd.HERD_TEST in tests:  # a fresh server per size and server, started by bench.herd
            herd_runs = herd.run_herd(list(herd.DEFAULT_SIZES), herd.DEFAULT_ENTRIES, servers,
                                      Path(workdir), options.repeat, options.baseline)
        if slowloris.SLOWLORIS_TEST in tests:  # a normal client beside 0 to 5,000 slow ones
            slow_runs = slowloris.run_slowloris(
                list(slowloris.DEFAULT_CROWDS), slowloris.DEFAULT_REQUESTS,
                slowloris.DEFAULT_RATE, slowloris.DEFAULT_INTERVAL, servers, Path(workdir),
                options.repeat, options.baseline)
    print()
    print(f"Machine: {machine_description()}")
    if results:
        print(f"Medians of {options.repeat} runs, requests/s.")
        print()
        print(markdown_table(results, "test", "rps"))
        print()
        print("Server CPU (user + system, /proc) µs per request, same runs; lower is better.")
        print()
        print(markdown_table(cpu_results, "test", "µs/req"))
    if scan_results:
        print()
        print(f"Stream of {options.stream_entries:,} entries (XADD s * sensor <n> temp <f> hum <n>); "
              f"scan: median of {options.repeat}, fill and memory: one fill per server.")
        print()
        print(markdown_table(scan_results, "measure", ""))
    if group_results:
        print()
        print(f"Consumer group on a stream of {options.stream_entries:,} entries; worker loop "
              f"(one client; each write is the XACK of the last reply's IDs + the next "
              f"XREADGROUP, 1 or 2 writes in flight): median of {options.repeat}; pending "
              f"memory: one pass per server. The ratio column means nothing on the CPU rows.")
        print()
        print(markdown_table(group_results, "measure", ""))
    if set_results:
        print()
        print("Sets and sorted sets: memory (used_memory growth per member, one fill per server, "
              "a fresh pair per row) and the delayed-job loop (one client).")
        print()
        print(markdown_table(set_results, "measure", ""))
    if script_results:
        print()
        print(f"Memory of {scripting.CACHED_SCRIPTS:,} scripts added with SCRIPT LOAD (growth "
              f"per script, a fresh pair per repeat, median of {options.repeat}; Brook's "
              f"used_memory is its RSS).")
        print()
        print(markdown_table(script_results, "measure", ""))
    if inprocess_results:
        print()
        print(f"Brook in process (Dispatcher.execute, no sockets): CPU µs per call, median of "
              f"{options.repeat} rounds of 100,000.")
        print()
        print(markdown_table(inprocess_results, "request", "µs"))
    if herd_runs:
        print()
        print(f"Thundering herd: {herd.DEFAULT_ENTRIES:,} XADDs one at a time, N consumers parked "
              f"on XREADGROUP BLOCK 0; server CPU µs per delivered entry, median of {options.repeat}.")
        print()
        print(herd.table(herd_runs, servers))
    if slow_runs:
        print()
        print(slowloris.heading(slow_runs))
        print()
        print(markdown_table(slowloris.rows(slow_runs), "measure", ""))
    if options.json:
        Path(options.json).write_text(json.dumps(
            results | scan_results | group_results | set_results | script_results
            | inprocess_results | herd.rows(herd_runs) | slowloris.rows(slow_runs),
            indent=2))


def number(value: float) -> str:
    """Thousands separators; decimals for small figures (µs per request, bytes per entry)."""
    if abs(value) < 10:
        return f"{value:.2f}"
    return f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}"


def print_row(label: str, row: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(values) for name, values in row.items()}
    line = f"{label:<44}" + "".join(f" {name} {number(value):>12}" for name, value in medians.items())
    if "brook" in medians and "redis" in medians and medians["redis"]:
        line += f"  ratio {medians['brook'] / medians['redis']:.2f}"
    if "brook" in medians and BASELINE in medians:
        line += f"  vs baseline {medians['brook'] / medians[BASELINE]:.3f}"
    print(line, flush=True)


def markdown_table(results: dict[str, dict[str, list[float]]], first: str, unit: str) -> str:
    servers = [name for name in (*SERVERS, BASELINE) if name in next(iter(results.values()))]
    both = "brook" in servers and "redis" in servers
    baseline = "brook" in servers and BASELINE in servers
    headers = [first, *(f"{name.capitalize()} {unit}".rstrip() for name in servers)]
    headers += ["Brook/Redis"] * both + ["Brook/baseline"] * baseline
    lines = ["| " + " | ".join(headers) + " |",
             "|---|" + "---:|" * (len(headers) - 1)]
    for label, row in results.items():
        medians = {name: statistics.median(row[name]) for name in servers}
        cells = [label, *(number(medians[name]) for name in servers)]
        if both:
            cells.append(f"{medians['brook'] / medians['redis']:.2f}" if medians["redis"] else "–")
        if baseline:
            cells.append(f"{medians['brook'] / medians[BASELINE]:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
