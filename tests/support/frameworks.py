"""Running a job framework's side of a test in the framework's own environment.

RQ, Celery, dramatiq and arq each have a virtualenv of their own (``bench.envs``, shared with
``bench.frameworks``: ``.bench-envs/<name>/``), with the framework's newest release and the
redis-py its own requirements resolve to. The pytest process imports none of them:
``run_driver`` runs a scenario of ``tests.frameworks.<name>_driver`` (client side and worker,
``tests.frameworks.driver``) with the environment's python and returns what it observed, for
the test to assert on. The ``framework_envs`` fixture (tests/conftest.py) makes the
environments once the tests are collected, before any test's timeout starts.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.frameworks.driver import RESULT

FRAMEWORKS = ("rq", "celery", "dramatiq", "arq")  # the environments the tests run in
DRIVER_TIMEOUT = 100.0  # seconds for one scenario; pytest's own timeout per test is 120
ENVS_FIXTURE = "framework_envs"  # a test that asks for it (directly or not) needs them


def run_driver(envs: Mapping[str, Path | BaseException], framework: str, scenario: str,
               port: int, logs: Path, *args: str) -> dict[str, Any]:
    """Run ``scenario`` of ``tests.frameworks.<framework>_driver`` with the python of the
    framework's environment (from ``envs``, the ``framework_envs`` fixture) against the
    server on ``port`` (``args``: more of the driver's options, such as ``--url``) and return
    its observations. A scenario that fails or overruns fails the test with its output,
    which has the worker's log; so does an environment that could not be made."""
    python = envs[framework]
    if isinstance(python, BaseException):
        pytest.fail(f"{framework}'s environment could not be made: {python}")
    root = Path(__file__).resolve().parents[2]
    logs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "BROOK_TEST_PORT": str(port), "PYTHONPATH": os.pathsep.join(
        filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [str(python), "-m", f"tests.frameworks.{framework}_driver", scenario, "--port",
         str(port), "--logs", str(logs), *args],
        env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
