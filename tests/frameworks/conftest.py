"""Fixtures of the framework tests: each framework runs in its own environment
(``tests.support.frameworks``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ServerProcess
from tests.support.frameworks import run_driver

Drive = Callable[[str, str], dict[str, Any]]


@pytest.fixture
def drive(server: ServerProcess, framework_envs: dict[str, Path | BaseException],
          tmp_path: Path) -> Drive:
    """``drive(framework, scenario)``: run the scenario in the framework's environment
    against the server under test and return its observations."""

    def run(framework: str, scenario: str) -> dict[str, Any]:
        return run_driver(framework_envs, framework, scenario, server.port,
                          tmp_path / f"{framework}-{scenario}")

    return run
