"""Instructions per request on the request path, counted by callgrind: Brook, real Redis and
(``--baseline DIR``) an earlier Brook, side by side in one run.

    python -m bench.callgrind [--requests 50000] [--baseline DIR]

Instruction counts are the steadiest figure on a shared machine: every server runs under
valgrind's callgrind with instrumentation off, the keyspace is filled first (no run pays for
growing it), and each row is counted alone (``callgrind_control``: zero, on, off, dump) and
divided by its requests. Rows, all pipelined 16 deep:

- ``set``, ``get``: redis-benchmark's SET and GET on random keys that all exist;
- ``xadd``: XADD ``*`` to one stream; ``evalsha``: a cached script's INCR (``evalsha_incr``);
- ``multi/exec``: MULTI, SET, INCR, GET, EXEC, counted per transaction (one request).

``--baseline`` is what a refactoring is held to: "no performance cost" means the current tree's
count is at most 2% above the baseline's (the "vs baseline" column).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.run import BASELINE, SERVERS, Target, run_benchmark, start_targets, stop_targets
from bench.streams import Connection, encode

PIPELINE = 16
TRANSACTION = (("MULTI",), ("SET", "tx:k", "v"), ("INCR", "tx:n"), ("GET", "tx:k"), ("EXEC",))


def control(target: Target, *args: str) -> None:
    """``callgrind_control`` on a server run under callgrind."""
    subprocess.run(["callgrind_control", *args, str(target.process.pid)], check=True,
                   capture_output=True, timeout=60)


def last_dump_total(output: Path) -> int:
    """The instruction total of the newest dump (``<file>.<n>``, one per ``-d``)."""
    dumps = sorted(output.parent.glob(f"{output.name}.*"),
                   key=lambda path: int(path.suffix.lstrip(".")))
    for line in dumps[-1].read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {dumps[-1]}")


def start_under_callgrind(workdir: Path, brook_args: list[str],
                          servers: tuple[str, ...] = SERVERS,
                          baseline: str | None = None) -> tuple[list[Target], dict[str, Path]]:
    """The servers under callgrind, instrumentation off until :func:`counted` turns it on."""
    outputs = {name: workdir / f"{name}.callgrind" for name in servers}
    targets = start_targets(
        workdir, brook_args, servers, baseline,
        wrapper=lambda name: ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                              f"--callgrind-out-file={outputs[name]}"])
    return targets, outputs


def counted(target: Target, output: Path, label: str, run: Callable[[], None]) -> int:
    """The instructions ``run`` costs ``target`` (its own dump, named ``label``)."""
    control(target, "-z")
    control(target, "-i", "on")
    run()
    control(target, "-i", "off")
    control(target, "-d", label)
    return last_dump_total(output)


def _transactions(port: int, count: int) -> None:
    """``count`` MULTI/SET/INCR/GET/EXEC transactions, 16 per write."""
    batch = b"".join(encode(*command) for command in TRANSACTION) * PIPELINE
    with Connection(port) as conn:
        for _ in range(count // PIPELINE):
            conn.pipeline(batch, len(TRANSACTION) * PIPELINE)


def _benchmark(test: str) -> Callable[[int, int], None]:
    """A redis-benchmark test as a row."""

    def run(port: int, count: int) -> None:
        run_benchmark(port, test, PIPELINE, count)

    return run


ROWS: dict[str, Callable[[int, int], None]] = {
    "set": _benchmark("set@random"),
    "get": _benchmark("get@random"),
    "xadd": _benchmark("xadd"),
    "evalsha": _benchmark("evalsha_incr"),
    "multi/exec": _transactions,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--baseline", help="an earlier Brook checkout (git worktree), built")
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated: " + ",".join(ROWS))
    options = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is required (apt-get install valgrind)")
    servers = SERVERS + ((BASELINE,) if options.baseline else ())
    rows = options.rows.split(",")
    requests = options.requests
    print(f"instructions per request under callgrind ({requests:,} requests, -P {PIPELINE})")
    header = f"{'row':11}" + "".join(f"{name:>10}" for name in servers)
    header += f"{'Brook/Redis':>12}" + (f"{'vs baseline':>12}" if options.baseline else "")
    print(header)
    with tempfile.TemporaryDirectory() as workdir:
        targets, outputs = start_under_callgrind(Path(workdir), ["--save", ""], servers,
                                                 options.baseline)
        try:
            for target in targets:
                run_benchmark(target.port, "set@random", PIPELINE, 600_000)  # every key exists
            for row in rows:
                run = ROWS[row]
                counts: dict[str, float] = {}
                for target in targets:
                    run(target.port, 2_000)  # connections and caches warm
                    total = counted(target, outputs[target.name], row.replace("/", "-"),
                                    partial(run, target.port, requests))
                    counts[target.name] = total / requests
                line = f"{row:11}" + "".join(f"{counts[name]:10,.0f}" for name in servers)
                line += f"{counts['brook'] / counts['redis']:11.2f}×"
                if options.baseline:
                    line += f"{counts['brook'] / counts[BASELINE] - 1:+12.1%}"
                print(line, flush=True)
        finally:
            stop_targets(targets)


if __name__ == "__main__":
    main()
