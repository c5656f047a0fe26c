"""What an ACL user with key patterns costs, Brook and Redis side by side in one run.

    python -m bench.acl [--requests 200000] [--repeat 3]

SET (redis-benchmark's ``key:__rand_int__`` keys) and XADD (stream ``s``) at ``-P 1`` and
``-P 16``, as the default user and as a user allowed ``~key:* ~s +@all`` (every command, its
keys checked against two patterns), medians of ``--repeat``. Issue 22's target: the user
costs at most 5%, Brook's ratio at least 0.95.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench.run import machine_description, run_benchmark, start_targets, stop_targets
from bench.streams import Connection

USER = ("app", "app-password")
RULES = ("on", f">{USER[1]}", "~key:*", "~s", "+@all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print(machine_description())
    print(f"\nrequests/s (medians of {options.repeat}), default user / user with key patterns")
    print(f"{'test':12} {'server':6} {'default':>10} {'ACL user':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as workdir:
        targets = start_targets(Path(workdir), ["--save", ""])
        try:
            for target in targets:
                with Connection(target.port) as conn:
                    conn.check("ACL", "SETUSER", USER[0], *RULES)
            for test in ("set", "xadd"):
                for pipeline in (1, 16):
                    for target in targets:
                        runs: dict[str, list[float]] = {"default": [], "user": []}
                        for _ in range(options.repeat):  # interleaved: drift hits both alike
                            runs["default"].append(run_benchmark(
                                target.port, test, pipeline, options.requests))
                            runs["user"].append(run_benchmark(
                                target.port, test, pipeline, options.requests, USER))
                        default = statistics.median(runs["default"])
                        user = statistics.median(runs["user"])
                        print(f"{test + ' -P ' + str(pipeline):12} {target.name:6} "
                              f"{default:10,.0f} {user:10,.0f} {user / default:6.2f}")
        finally:
            stop_targets(targets)


if __name__ == "__main__":
    main()
