"""``python -m tests.redis_suite.report REDIS.json BROOK.json``: the per-unit table of
docs/compatibility.md from two runs' ``--json`` files (the same suite, one against real Redis,
one against Brook): how many tests each passes, and how many Redis passes that Brook fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.redis_suite import OK


def table(redis_run: dict[str, Any], brook_run: dict[str, Any]) -> str:
    lines = ["| unit | Redis passes | Brook passes | of Redis's passes, Brook fails |",
             "|---|---:|---:|---:|"]
    totals = [0, 0, 0]
    for unit, redis_unit in redis_run.items():
        brook_outcomes = brook_run.get(unit, {}).get("outcomes", {})
        redis_passes = {name for name, outcome in redis_unit["outcomes"].items() if outcome == OK}
        brook_passes = {name for name, outcome in brook_outcomes.items() if outcome == OK}
        row = [len(redis_passes), len(brook_passes), len(redis_passes - brook_passes)]
        totals = [total + value for total, value in zip(totals, row, strict=True)]
        lines.append(f"| {unit} | {row[0]:,} | {row[1]:,} | {row[2]:,} |")
    share = totals[1] / totals[0] if totals[0] else 0.0
    lines.append(f"| **all** | **{totals[0]:,}** | **{totals[1]:,}** ({share:.1%}) "
                 f"| **{totals[2]:,}** |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    redis_run, brook_run = (json.loads(Path(path).read_text()) for path in argv)
    print(table(redis_run, brook_run))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
