"""What an ACL user with key patterns costs, Brook and Redis side by side in one run.

    python -m bench.acl [--requests 200000] [--repeat 3]
    python -m bench.acl --callgrind [--requests 50000]

SET (redis-benchmark's ``key:__rand_int__`` keys) and XADD (stream ``s``) at ``-P 1`` and
``-P 16``, as the default user and as a user allowed ``~key:* ~s +@all`` (every command, its
keys checked against two patterns), medians of ``--repeat``: requests/s, and the server's CPU
time per request (``/proc/<pid>/stat``), steadier than a rate on a shared machine. The
target: the user costs at most 5%.

``--callgrind`` counts instructions instead, the steadiest figure: both servers run under
valgrind's callgrind, the keyspace is filled first (so no run pays for growing it), and each
user's SET and XADD ``-P 16`` run is counted alone (``callgrind_control``: zero, on, off,
dump), divided by its requests.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path

from bench.callgrind import counted, start_under_callgrind
from bench.groups import process_cpu
from bench.run import Target, machine_description, run_benchmark, start_targets, stop_targets
from bench.streams import Connection

USER = ("app", "app-password")
RULES = ("on", f">{USER[1]}", "~key:*", "~s", "+@all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--callgrind", action="store_true",
                        help="instructions per request under callgrind (valgrind)")
    options = parser.parse_args()
    print(machine_description())
    if options.callgrind:
        count_instructions(options.requests)
        return
    print(f"\nmedians of {options.repeat}, default user / user with key patterns: requests/s, "
          "and the server's CPU µs per request")
    print(f"{'test':12} {'server':6} {'default':>10} {'ACL user':>10} {'ratio':>6} "
          f"{'CPU µs':>7} {'CPU µs':>7} {'cost':>6}")
    with tempfile.TemporaryDirectory() as workdir:
        targets = start_targets(Path(workdir), ["--save", ""])
        try:
            for target in targets:
                with Connection(target.port) as conn:
                    conn.check("ACL", "SETUSER", USER[0], *RULES)
            for test in ("set", "xadd"):
                for pipeline in (1, 16):
                    for target in targets:
                        rates: dict[str, list[float]] = {"default": [], "user": []}
                        cpu: dict[str, list[float]] = {"default": [], "user": []}
                        for _ in range(options.repeat):  # interleaved: drift hits both alike
                            for kind, login in (("default", None), ("user", USER)):
                                rate, seconds = _measured(target, test, pipeline,
                                                          options.requests, login)
                                rates[kind].append(rate)
                                cpu[kind].append(seconds * 1e6 / options.requests)
                        default = statistics.median(rates["default"])
                        user = statistics.median(rates["user"])
                        default_cpu = statistics.median(cpu["default"])
                        user_cpu = statistics.median(cpu["user"])
                        print(f"{test + ' -P ' + str(pipeline):12} {target.name:6} "
                              f"{default:10,.0f} {user:10,.0f} {user / default:6.2f} "
                              f"{default_cpu:7.2f} {user_cpu:7.2f} "
                              f"{user_cpu / default_cpu - 1:+6.0%}")
        finally:
            stop_targets(targets)


def count_instructions(requests: int) -> None:
    """Instructions per request of each server for each user (see the module's doc)."""
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is required for --callgrind (apt-get install valgrind)")
    print(f"\ninstructions per request under callgrind ({requests:,} requests, -P 16), "
          "default user / user with key patterns")
    print(f"{'test':12} {'server':6} {'default':>8} {'ACL user':>8} {'cost':>6}")
    with tempfile.TemporaryDirectory() as workdir:
        targets, outputs = start_under_callgrind(Path(workdir), ["--save", ""])
        try:
            for target in targets:
                with Connection(target.port) as conn:
                    conn.check("ACL", "SETUSER", USER[0], *RULES)
                run_benchmark(target.port, "set@random", 16, 600_000)  # every key exists
            for test in ("set@random", "xadd"):
                for target in targets:
                    counts = {}
                    for kind, login in (("default", None), ("user", USER)):
                        run_benchmark(target.port, test, 16, 2_000, login)  # connections warm
                        total = counted(target, outputs[target.name], kind,
                                        partial(run_benchmark, target.port, test, 16, requests,
                                                login))
                        counts[kind] = total / requests
                    name = test.split("@")[0] + " -P 16"
                    print(f"{name:12} {target.name:6} {counts['default']:8,.0f} "
                          f"{counts['user']:8,.0f} {counts['user'] / counts['default'] - 1:+6.1%}")
        finally:
            stop_targets(targets)


def _measured(target: Target, test: str, pipeline: int, requests: int,
              login: tuple[str, str] | None) -> tuple[float, float]:
    """requests/s, and the server's CPU seconds over the run (connections included)."""
    before = process_cpu(target.process.pid)
    rate = run_benchmark(target.port, test, pipeline, requests, login)
    return rate, process_cpu(target.process.pid) - before


if __name__ == "__main__":
    main()
