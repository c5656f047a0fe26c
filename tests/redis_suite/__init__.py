"""Redis's own Tcl test suite as a referee: its units run in external mode against a server
this module starts, each test's outcome compared with a committed list.

The list (``expected-<version>.txt`` beside this file) names every test of every unit run:
``ok`` for one that passes, ``fail`` or ``skip`` with the reason for one that does not (a
behaviour that changed after the suite's Redis, which Brook follows; a feature not built yet).
A new failure, a listed failure that now passes, a test that no longer runs or one not listed
fails the check and says which, so a test that passes keeps passing and fixing a known failure
means taking it off the list. ``skip`` lines are tests that would hang until the suite's
timeout; they are not run at all (``--skiptest``).

Each unit runs against a server of its own, started fresh, so a unit that leaves a setting
behind (as a failing test may) cannot change the next unit's results.
"""

from __future__ import annotations

import random
import re
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import ServerProcess, start_brook, start_redis

HERE = Path(__file__).resolve().parent

# The units that cover what Brook implements; the profile leaves out what an external server
# cannot offer the suite (DEBUG-driven internals, spawned replicas, maxmemory tests that need
# a server of their own) and the encoding and digest checks of Redis's internals.
UNITS = (
    "unit/type/stream", "unit/type/stream-cgroups", "unit/type/list", "unit/type/list-2",
    "unit/type/list-3", "unit/pubsub", "unit/type/string", "unit/type/incr", "unit/type/hash",
    "unit/type/set", "unit/type/zset", "unit/multi", "unit/expire", "unit/keyspace",
    "unit/protocol", "unit/info-command", "unit/scripting", "unit/functions", "unit/scan",
    "unit/introspection", "unit/introspection-2", "unit/slowlog", "unit/latency-monitor",
    "unit/sort", "unit/other", "unit/bitops", "unit/bitfield", "unit/quit", "unit/dump",
    "unit/geo", "unit/tracking",
)
PROFILE = ("--tags", "-needs:debug", "--tags", "-needs:repl", "--tags", "-needs:config-maxmemory",
           "--ignore-encoding", "--ignore-digest")
# Seconds without any test finishing after which the suite gives up on a unit.
STALL_TIMEOUT = 120

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STATUS = re.compile(r"^\[(ok|err|exception|skip|ignore)\]: (.*)$")
_OK_TIME = re.compile(r" \(\d+ ms\)$")
_ERR_PLACE = re.compile(r" in (tests/\S+\.tcl)$")
# What the suite tells the server at the start of each test (DEBUG LOG, written to its log).
_LOG_RECORD = re.compile(r"^\d+:[A-Z] ")
_STARTED = re.compile(r"### Starting test (.*) in tests/\S+\.tcl$", re.MULTILINE)

OK, FAIL, SKIP = "ok", "fail", "skip"


@dataclass
class UnitResult:
    """What one unit's run printed: each test's outcome in order, and how the run ended."""

    unit: str
    outcomes: dict[str, str] = field(default_factory=dict)  # test name -> ok | fail
    failures: dict[str, str] = field(default_factory=dict)  # test name -> the suite's message
    aborted: str = ""  # why the unit stopped before its end (exception, stall, crash)
    aborted_in: str = ""  # the test that was running then
    learned_skips: dict[str, str] = field(default_factory=dict)  # test -> why it stopped the unit
    internal_errors: list[str] = field(default_factory=list)  # tracebacks the server logged
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome == OK)

    @property
    def failed(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome == FAIL)


def parse_output(unit: str, text: str) -> UnitResult:
    """Each test's outcome from the suite's output. A name met again (the suite runs some
    tests once per encoding under the same name) gets `` #2``, `` #3``... in order."""
    result = UnitResult(unit)
    seen: Counter[str] = Counter()
    lines = _ANSI.sub("", text).splitlines()
    for index, line in enumerate(lines):
        match = _STATUS.match(line)
        if match is None:
            if line.startswith("[TIMEOUT]"):
                result.aborted = "the suite's stall timeout (a test hung)"
            continue
        status, data = match.groups()
        if status in ("skip", "ignore"):
            continue
        if status == "exception":
            result.aborted = "exception: " + " ".join(lines[index:index + 3])[:300]
            continue
        if status == "ok":
            name = _OK_TIME.sub("", data)
        else:
            name = _ERR_PLACE.sub("", data)
        seen[name] += 1
        if seen[name] > 1:
            name = f"{name} #{seen[name]}"
        result.outcomes[name] = OK if status == "ok" else FAIL
        if status == "err":
            result.failures[name] = " ".join(lines[index + 1:index + 3]).strip()[:300]
    return result


def run_unit(suite: Path, unit: str, server: ServerProcess, skip: list[str]) -> UnitResult:
    """One unit in external mode against ``server``; ``skip``: tests not to run."""
    command = ["./runtest", "--host", server.host, "--port", str(server.port),
               "--baseport", str(_suite_baseport()), "--single", unit, "--timeout", str(STALL_TIMEOUT),
               *PROFILE]
    for name in skip:
        command += ["--skiptest", name]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=suite, capture_output=True, text=True,
                              errors="replace", timeout=STALL_TIMEOUT * 4)
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as stopped:
        output = (stopped.stdout or b"").decode(errors="replace") + "\n[TIMEOUT]"
    result = parse_output(unit, output)
    result.seconds = time.monotonic() - started
    if server.process.poll() is not None:
        result.aborted = f"the server exited with {server.process.returncode}"
    elif not result.outcomes:
        result.aborted = result.aborted or "no test ran: " + output.strip()[-300:]
    log = server.log()
    if result.aborted:
        names = _STARTED.findall(log)
        result.aborted_in = names[-1] if names else ""
    result.internal_errors = _internal_errors(log)
    return result


def _internal_errors(log: str) -> list[str]:
    """Each "Internal error" the server logged (a handler raised: always a bug), with the
    test that was running and the traceback's last line."""
    found = []
    for match in re.finditer(r"# Internal error in (\S+): Traceback", log):
        started = _STARTED.findall(log, 0, match.start())
        raised = ""
        for line in log[match.end():].splitlines()[1:]:
            if _LOG_RECORD.match(line):
                break
            if line and not line.startswith(" "):
                raised = line
        found.append(f"{match.group(1)} in {started[-1] if started else '?'!r}: {raised}")
    return found


def _suite_baseport() -> int:
    """Where the suite looks for its own ports: 32 below it for its test server, each with a
    partner 10,000 above for the cluster bus, so below the ephemeral range; random, so that
    two runs on one machine rarely meet (the suite moves on past a busy port)."""
    return random.randrange(20_000, 30_000, 64)


def start_server(kind: str, workdir: Path) -> ServerProcess:
    """A fresh server for one unit: Brook, or the real Redis the parity tests use
    (``BROOK_PARITY_REDIS`` names another build)."""
    workdir.mkdir(parents=True, exist_ok=True)
    return start_brook(workdir) if kind == "brook" else start_redis(workdir)


def run_units(suite: Path, kind: str, units: tuple[str, ...], skips: dict[str, list[str]],
              learn_skips: bool = False) -> list[UnitResult]:
    """Each unit against a fresh server. ``learn_skips``: a unit stopped early by a test
    (an exception: a command Brook lacks; a hang) runs again without that test, until it
    runs to its end; those tests are the result's ``learned_skips``."""
    results = []
    with tempfile.TemporaryDirectory(prefix="redis-suite-") as scratch:
        for unit in units:
            skip = list(skips.get(unit, []))
            learned: dict[str, str] = {}
            for attempt in range(50):
                workdir = Path(scratch) / f"{unit.replace('/', '-')}-{attempt}"
                server = start_server(kind, workdir)
                try:
                    result = run_unit(suite, unit, server, skip)
                finally:
                    server.stop()
                if not (learn_skips and result.aborted_in) or result.aborted_in in skip:
                    break
                learned[result.aborted_in] = result.aborted
                skip.append(result.aborted_in)
                print(f"{unit:28} stopped in {result.aborted_in!r}: again without it", flush=True)
            result.learned_skips = learned
            results.append(result)
            print(f"{unit:28} {result.passed:4} ok {result.failed:4} err {result.seconds:6.1f}s"
                  + (f"  ABORTED in {result.aborted_in!r}: {result.aborted}"
                     if result.aborted else ""), flush=True)
            for error in result.internal_errors:
                print(f"{unit:28} the server logged an internal error: {error}", flush=True)
    return results
