"""The committed list of expected outcomes, and the check of a run against it.

One section a unit, one line a test, fields separated by tabs::

    [unit/type/incr]
    ok      INCR against non existing key
    fail    <test name>     <reason>
    skip    <test name>     <reason: it would hang the suite>
    aborted <reason: the unit stops before its end>

A ``fail``, ``skip`` or ``aborted`` line needs its reason; ``--update`` writes ``TODO: ...``
for a new one, which the check refuses until someone writes why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tests.redis_suite import FAIL, OK, SKIP, UnitResult

ABORTED = "aborted"
TODO = "TODO"


@dataclass
class UnitExpectation:
    outcomes: dict[str, str] = field(default_factory=dict)  # test name -> ok | fail | skip
    reasons: dict[str, str] = field(default_factory=dict)  # test name -> why it is not ok
    aborted: str = ""  # why the unit is expected to stop early, if it is


def load(path: Path) -> tuple[list[str], dict[str, UnitExpectation]]:
    """The file's leading comment lines and each unit's expectations."""
    header: list[str] = []
    units: dict[str, UnitExpectation] = {}
    current: UnitExpectation | None = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            if current is None:
                header.append(line)
            continue
        if line.startswith("[") and line.endswith("]"):
            current = units.setdefault(line[1:-1], UnitExpectation())
            continue
        fields = line.split("\t")
        if current is None or fields[0] not in (OK, FAIL, SKIP, ABORTED):
            raise ValueError(f"{path.name}:{number}: not a test line: {line!r}")
        if fields[0] == ABORTED:
            current.aborted = "\t".join(fields[1:])
            continue
        name = fields[1] if len(fields) > 1 else ""
        current.outcomes[name] = fields[0]
        if len(fields) > 2:
            current.reasons[name] = fields[2]
    return header, units


def problems(expected: dict[str, UnitExpectation], results: list[UnitResult]) -> list[str]:
    """Every way the run differs from the list (empty: the run is as expected)."""
    found = []
    for result in results:
        unit = result.unit
        wanted = expected.get(unit)
        if wanted is None:
            found.append(f"{unit}: the unit is not in the list")
            continue
        for name, reason in [*wanted.reasons.items(), ("", wanted.aborted)]:
            if reason.startswith(TODO):
                found.append(f"{unit}: no reason written for {name or 'the abort'!r}")
        for name, outcome in wanted.outcomes.items():
            if outcome in (FAIL, SKIP) and not wanted.reasons.get(name):
                found.append(f"{unit}: {outcome} without a reason: {name!r}")
        for name, outcome in result.outcomes.items():
            listed = wanted.outcomes.get(name)
            if listed is None:
                found.append(f"{unit}: not listed ({outcome}): {name!r}")
            elif listed == OK and outcome == FAIL:
                found.append(f"{unit}: NEW FAILURE: {name!r}: {result.failures.get(name, '')}")
            elif listed == FAIL and outcome == OK:
                found.append(f"{unit}: now passes (take it off the list): {name!r}")
            elif listed == SKIP:
                found.append(f"{unit}: listed as skipped but ran ({outcome}): {name!r}")
        for name, outcome in wanted.outcomes.items():
            if outcome != SKIP and name not in result.outcomes:
                found.append(f"{unit}: did not run ({outcome} expected): {name!r}")
        if result.aborted and not wanted.aborted:
            found.append(f"{unit}: the unit stopped early, in {result.aborted_in!r}: "
                         f"{result.aborted}")
        elif wanted.aborted and not result.aborted:
            found.append(f"{unit}: the unit no longer stops early (take 'aborted' off the list)")
    return found


def skipped(expected: dict[str, UnitExpectation]) -> dict[str, list[str]]:
    """The tests not to run, by unit."""
    return {unit: [name for name, outcome in wanted.outcomes.items() if outcome == SKIP]
            for unit, wanted in expected.items()}


def write(path: Path, header: list[str], expected: dict[str, UnitExpectation],
          results: list[UnitResult]) -> None:
    """The list as this run found it: reasons already written are kept, new failures get
    ``TODO:`` and the suite's message; units not run keep their sections."""
    by_unit = {result.unit: result for result in results}
    lines = [*header, ""]
    for unit in sorted(set(expected) | set(by_unit)):
        wanted = expected.get(unit, UnitExpectation())
        result = by_unit.get(unit)
        lines.append(f"[{unit}]")
        if result is None:
            if wanted.aborted:
                lines.append(f"{ABORTED}\t{wanted.aborted}")
            lines += [_line(outcome, name, wanted.reasons.get(name, ""))
                      for name, outcome in wanted.outcomes.items()]
        else:
            if result.aborted:
                lines.append(f"{ABORTED}\t{wanted.aborted or f'{TODO}: {result.aborted}'}")
            for name, outcome in result.outcomes.items():
                reason = ""
                if outcome == FAIL:
                    reason = (wanted.reasons.get(name)
                              or f"{TODO}: {result.failures.get(name, '')}")
                lines.append(_line(outcome, name, reason))
            lines += [_line(SKIP, name, wanted.reasons.get(name, ""))
                      for name, outcome in wanted.outcomes.items()
                      if outcome == SKIP and name not in result.learned_skips]
            lines += [_line(SKIP, name, wanted.reasons.get(name) or f"{TODO}: {why}")
                      for name, why in result.learned_skips.items()]
        lines.append("")
    path.write_text("\n".join(lines))


def _line(outcome: str, name: str, reason: str) -> str:
    return f"{outcome}\t{name}\t{reason}" if reason else f"{outcome}\t{name}"
