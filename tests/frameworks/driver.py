"""The machinery of the framework drivers: what runs inside a framework's own environment.

Each framework's tests run its client side and its worker with the python of that framework's
environment (``bench.envs``), never in the pytest process, whose redis-py is the project's:
``<env python> -m tests.frameworks.<framework>_driver SCENARIO --port PORT --logs DIR``. A
scenario enqueues through the framework's API, starts the real worker (a subprocess of its
own session), waits for the results with deadlines and returns what it observed; ``run``
prints that as one JSON line after ``RESULT``, and the test asserts on it.

A failure (a deadline passed, a worker died, an exception anywhere) exits non-zero with the
traceback and every worker's log on stderr, which the test shows. SIGTERM (the test giving
up) runs the same cleanup: every worker's process group is killed.

Only the standard library is imported here: the framework's modules are the driver's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULT = "RESULT "  # the line of stdout that carries the scenario's observations
WAIT = 20.0  # seconds any one result may take before the scenario fails (they take well under 5)
STOP_TIMEOUT = 60.0  # seconds a worker has for a warm shutdown: generous on a loaded machine


class DriverFailure(Exception):
    """A scenario could not finish: the message says what, with the worker's log."""


class Worker:
    """A framework's worker in a subprocess of its own session (so that the pool, scheduler
    and work-horse processes it forks can be killed with it), its output in a log file. It
    inherits the driver's environment: the server's port and the repository on the path."""

    def __init__(self, command: list[str], log_path: Path) -> None:
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, done: Callable[[], bool], what: str) -> None:
        """Poll ``done`` until it holds; fail at once if the worker died, or after WAIT."""
        deadline = time.monotonic() + WAIT
        while not done():
            if self.process.poll() is not None:
                raise DriverFailure(f"worker exited ({self.process.returncode}) before {what}:\n"
                                    f"{self.log()}")
            if time.monotonic() > deadline:
                raise DriverFailure(f"no {what} after {WAIT:.0f} s; worker log:\n{self.log()}")
            time.sleep(0.05)

    def finish(self, timeout: float) -> None:
        """Wait for a worker that exits by itself (``--burst``): it must, in time and with
        status 0."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise DriverFailure(f"worker still running after {timeout:.0f} s:\n{self.log()}")
        if code != 0:
            raise DriverFailure(f"worker exited with {code}:\n{self.log()}")

    def stop(self) -> int:
        """Ask for a warm shutdown (SIGTERM, for every framework) and wait for it; a worker
        that does not stop in time is killed and fails the scenario."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
                raise DriverFailure(f"worker did not stop on SIGTERM:\n{self.log()}")
        return self.process.returncode

    def kill(self) -> None:
        """Kill the worker's process group: it and whatever it forked that is still there."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


@dataclass
class Scenario:
    """What a scenario gets: the server's port and URL, and a way to start workers."""

    port: int
    logs: Path
    url: str
    workers: list[Worker] = field(default_factory=list)

    def start(self, command: list[str]) -> Worker:
        worker = Worker(command, self.logs / f"worker-{len(self.workers)}.log")
        self.workers.append(worker)
        return worker


def python_module(*args: str) -> list[str]:
    """A command that runs a module with this environment's python (the framework's CLI)."""
    return [sys.executable, "-m", *args]


def error_of(call: Callable[[], object]) -> dict[str, str] | None:
    """The exception ``call`` raised, as the test reads it (its class and text); None if it
    raised nothing. A deadline that passed on the way is a failure, not an observation."""
    try:
        call()
    except DriverFailure:
        raise
    except Exception as exc:  # any other exception is an observation here
        return {"type": type(exc).__name__, "message": str(exc)}
    return None


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(f"terminated by signal {signum}")


def run(scenarios: dict[str, Callable[[Scenario], dict[str, Any]]]) -> None:
    """The driver's main: run the scenario named on the command line, print its result."""
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(scenarios))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--logs", type=Path, required=True)
    parser.add_argument("--url", help="how to reach the server, if not plain TCP on --port")
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, _terminated)
    scenario = Scenario(options.port, options.logs,
                        options.url or f"redis://127.0.0.1:{options.port}")
    try:
        result = scenarios[options.scenario](scenario)
    except DriverFailure as exc:  # its message has the worker's log
        print(exc, file=sys.stderr, flush=True)
        raise SystemExit(1)
    except BaseException:
        print(traceback.format_exc(), file=sys.stderr)
        for worker in scenario.workers:
            print(f"--- {worker.log_path.name}:\n{worker.log()}", file=sys.stderr)
        sys.stderr.flush()
        raise SystemExit(1)
    finally:
        for worker in scenario.workers:
            worker.kill()
    print(RESULT + json.dumps(result), flush=True)
