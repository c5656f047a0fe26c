"""``python -m tests.redis_suite``: run Redis's own test suite against Brook (or a real Redis)
and check every test's outcome against the committed list (see the package's docstring).

    python -m tests.redis_suite                   # Debian's suite against Brook, checked
    python -m tests.redis_suite --update          # rewrite the list from this run
    python -m tests.redis_suite --server redis --no-check --suite DIR   # Redis's own counts
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.redis_suite import HERE, UNITS, run_units
from tests.redis_suite import expected as expectations

ROOT = HERE.parent.parent


def suite_version(suite: Path) -> str:
    """The Redis version the suite belongs to (``newest`` for a development build)."""
    text = (suite / "src" / "version.h").read_text()
    match = re.search(r'REDIS_VERSION "([^"]+)"', text)
    if match is None:
        sys.exit(f"no REDIS_VERSION in {suite / 'src' / 'version.h'}")
    return "newest" if match.group(1) == "255.255.255" else match.group(1)


def debian_suite() -> Path:
    """Debian's redis source package, fetched once into .redis-suite/ (a clear error when it
    cannot be had: the check is never skipped silently)."""
    done = subprocess.run([str(ROOT / "scripts" / "fetch-redis-suite.sh"),
                           str(ROOT / ".redis-suite")], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"Redis's test suite could not be fetched:\n{done.stderr}")
    return Path(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.redis_suite", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, help="a Redis source tree (default: Debian's)")
    parser.add_argument("--server", choices=("brook", "redis"), default="brook",
                        help="what to run it against (redis: BROOK_PARITY_REDIS or PATH's)")
    parser.add_argument("--units", nargs="+", default=list(UNITS), metavar="UNIT")
    parser.add_argument("--expected", type=Path,
                        help="the list (default: expected-<suite version>.txt here)")
    parser.add_argument("--update", action="store_true", help="rewrite the list from this run")
    parser.add_argument("--no-check", action="store_true", help="print the counts only")
    parser.add_argument("--json", type=Path, help="write each unit's outcomes here")
    args = parser.parse_args(argv)

    suite = (args.suite or debian_suite()).resolve()
    version = suite_version(suite)
    listed = args.expected or HERE / f"expected-{version}.txt"
    header: list[str] = []
    expected: dict[str, expectations.UnitExpectation] = {}
    if listed.exists():
        header, expected = expectations.load(listed)
    elif not (args.update or args.no_check):
        sys.exit(f"no list of expected outcomes for Redis {version}'s suite: {listed}")
    print(f"Redis {version}'s suite ({suite.name}) against {args.server}", flush=True)
    skips = expectations.skipped(expected) if args.server == "brook" else {}
    results = run_units(suite, args.server, tuple(args.units), skips, learn_skips=args.update)
    passed = sum(result.passed for result in results)
    failed = sum(result.failed for result in results)
    print(f"total: {passed} ok, {failed} err over {len(results)} units")
    if args.json:
        args.json.write_text(json.dumps(
            {result.unit: {"outcomes": result.outcomes, "aborted": result.aborted,
                           "seconds": round(result.seconds, 1)} for result in results},
            indent=1))
    if args.update:
        expectations.write(listed, header, expected, results)
        print(f"wrote {listed}")
        return 0
    if args.no_check:
        return 0
    found = expectations.problems(expected, results)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} differences from {listed.name}: the suite's outcome changed")
        return 1
    print(f"every outcome as {listed.name} lists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
