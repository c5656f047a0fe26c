"""What an ACL user with key patterns costs, Brook and Redis side by side in one run.

    python -m bench.acl [--requests 200000] [--repeat 3]

SET (redis-benchmark's ``key:__rand_int__`` keys) and XADD (stream ``s``) at ``-P 1`` and
``-P 16``, as the default user and as a user allowed ``~key:* ~s +@all`` (every command, its
keys checked against two patterns), medians of ``--repeat``: requests/s, and the server's CPU
time per request (``/proc/<pid>/stat``), steadier than a rate on a shared machine. Issue 22's
target: the user costs at most 5%.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench.groups import process_cpu
from bench.run import Target, machine_description, run_benchmark, start_targets, stop_targets
from bench.streams import Connection

USER = ("app", "app-password")
RULES = ("on", f">{USER[1]}", "~key:*", "~s", "+@all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print(machine_description())
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


def _measured(target: Target, test: str, pipeline: int, requests: int,
              login: tuple[str, str] | None) -> tuple[float, float]:
    """requests/s, and the server's CPU seconds over the run (connections included)."""
    before = process_cpu(target.process.pid)
    rate = run_benchmark(target.port, test, pipeline, requests, login)
    return rate, process_cpu(target.process.pid) - before


if __name__ == "__main__":
    main()
