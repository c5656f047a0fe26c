"""Fixtures of the framework tests: each framework runs in its own environment.

RQ, Celery, dramatiq and arq each have a virtualenv of their own (``bench.envs``, shared with
``bench.frameworks``: ``.bench-envs/<name>/``), with the framework's newest release and the
redis-py its own requirements resolve to, made on first use and reused after. The pytest
process imports none of them: ``drive`` runs a scenario of ``tests.frameworks.<name>_driver``
(client side and worker) with the environment's python and returns what it observed, for the
test to assert on.

The environments are made once the tests are collected, before any test's timeout starts (a
clean clone downloads the frameworks then); the releases met are printed at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.envs import prepare, versions
from tests.conftest import ROOT, ServerProcess
from tests.frameworks.driver import RESULT

FRAMEWORKS = ("rq", "celery", "dramatiq", "arq")  # the environments these tests run in
DRIVER_TIMEOUT = 100.0  # seconds for one scenario; the test's own timeout is 120
HERE = Path(__file__).resolve().parent

_pythons: dict[str, Path | BaseException] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    """Make the environments if any test here is to run (not for ``--collect-only``)."""
    if session.config.option.collectonly:
        return
    if any(Path(str(item.path)).resolve().is_relative_to(HERE)
           and "drive" in getattr(item, "fixturenames", ()) for item in session.items):
        _pythons.update(prepare(FRAMEWORKS))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Which releases the framework tests ran."""
    made = [name for name, python in _pythons.items() if isinstance(python, Path)]
    if made:
        terminalreporter.write_line("framework environments (.bench-envs/): " + "; ".join(
            f"{name}: {versions(name)}" for name in made))


Drive = Callable[[str, str], dict[str, Any]]


@pytest.fixture
def drive(server: ServerProcess, tmp_path: Path) -> Drive:
    """``drive(framework, scenario)``: run the scenario against the server under test and
    return its observations. A scenario that fails or overruns fails the test with its
    output, which has the worker's log."""

    def run(framework: str, scenario: str) -> dict[str, Any]:
        python = _pythons.get(framework)
        if python is None:  # collected some other way: make it now
            python = prepare([framework])[framework]
            _pythons[framework] = python
        if isinstance(python, BaseException):
            pytest.fail(f"{framework}'s environment could not be made: {python}")
        logs = tmp_path / f"{framework}-{scenario}"
        logs.mkdir()
        env = {**os.environ, "BROOK_TEST_PORT": str(server.port), "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        process = subprocess.Popen(
            [str(python), "-m", f"tests.frameworks.{framework}_driver", scenario, "--port",
             str(server.port), "--logs", str(logs)],
            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = process.communicate(timeout=DRIVER_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.terminate()  # the driver kills its workers on SIGTERM
            try:
                out, err = process.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                out, err = process.communicate()
            logs_text = "\n".join(f"--- {path.name}:\n{path.read_text(errors='replace')}"
                                  for path in sorted(logs.glob("*.log")))
            pytest.fail(f"{framework} {scenario} did not finish in {DRIVER_TIMEOUT:.0f} s:\n"
                        f"{out}{err}\n{logs_text}")
        if process.returncode != 0:
            pytest.fail(f"{framework} {scenario} failed ({process.returncode}):\n{out}{err}")
        results = [line for line in out.splitlines() if line.startswith(RESULT)]
        assert len(results) == 1, f"{framework} {scenario} printed no result:\n{out}{err}"
        return json.loads(results[0].removeprefix(RESULT))

    return run
