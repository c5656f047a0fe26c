"""Celery's side of the framework tests, run with the python of Celery's environment
(``bench.envs``): the scenarios the tests drive (``tests.frameworks.driver``) with the app of
``tests.frameworks.celery_app``, which the real ``celery worker`` imports too.

The worker runs the solo pool (one task at a time) without gossip, mingle or heartbeat, so
what reaches the server is the broker's polling, the result backend and kombu's restore sweep
(a redis-py ``Lock``, released by script).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from celery import Celery, chord, group
from celery.result import AsyncResult

from tests.frameworks import celery_app
from tests.frameworks.driver import Scenario, Worker, error_of, python_module, run

WORKER = python_module("celery", "-A", "tests.frameworks.celery_app", "worker", "--pool",
                       "solo", "--without-gossip", "--without-mingle", "--without-heartbeat",
                       "--loglevel", "INFO")


def _result(worker: Worker, result: AsyncResult, what: str) -> Any:
    worker.wait_for(result.ready, what)
    return result.get(timeout=5)


def with_app(scenario: Callable[[Scenario, Celery], dict[str, Any]]
             ) -> Callable[[Scenario], dict[str, Any]]:
    """Runs a scenario with ``celery_app.app``, the worker's own app (built for the server
    under test: ``BROOK_TEST_PORT``). One app per process: Celery shares the tasks an app
    declares with every app, so a second would take the first one's. An ``AsyncResult``
    unsubscribes from its result when collected, so results left in reference cycles are
    collected before the app closes, while the server still answers."""
    def wrapped(context: Scenario) -> dict[str, Any]:
        app = celery_app.app
        if celery_app.app_port != context.port:
            raise RuntimeError(f"celery_app's app is for port {celery_app.app_port}")
        try:
            return scenario(context, app)
        finally:
            gc.collect()
            app.close()
    return wrapped


@with_app
def delay(scenario: Scenario, app: Celery) -> dict[str, Any]:
    """Five ``add`` tasks sent before the worker starts."""
    add = app.tasks["brook.add"]
    results = [add.delay(i, 100) for i in range(5)]
    worker = scenario.start(WORKER)
    values = [_result(worker, result, f"result of add({i}, 100)")
              for i, result in enumerate(results)]
    return {"values": values, "states": [result.state for result in results],
            "exit": worker.stop()}


@with_app
def countdown_and_eta(scenario: Scenario, app: Celery) -> dict[str, Any]:
    """An undelayed stamp (the worker is up), then one by countdown (1 s) and one by eta
    (1.5 s), with the times they were asked for."""
    stamp = app.tasks["brook.stamp"]
    worker = scenario.start(WORKER)
    first = _result(worker, stamp.delay(), "an undelayed stamp")
    sent = time.time()
    by_countdown = stamp.apply_async(countdown=1)
    eta = datetime.now(UTC) + timedelta(seconds=1.5)
    by_eta = stamp.apply_async(eta=eta)
    return {
        "first": first,
        "sent": sent,
        "eta": eta.timestamp(),
        "ran_by_countdown": _result(worker, by_countdown, "the countdown stamp"),
        "ran_by_eta": _result(worker, by_eta, "the eta stamp"),
        "exit": worker.stop(),
    }


@with_app
def retries(scenario: Scenario, app: Celery) -> dict[str, Any]:
    """A task that succeeds on its third run and one that always fails, counting their runs."""
    counter = redis.Redis(port=scenario.port)
    flaky = app.tasks["brook.flaky"].delay("celery:flaky-runs", 3)
    doomed = app.tasks["brook.doomed"].delay("celery:doomed-runs")
    worker = scenario.start(WORKER)
    flaky_value = _result(worker, flaky, "the flaky task's result")
    worker.wait_for(doomed.ready, "the doomed task's failure")
    result = {
        "flaky": flaky_value,
        "doomed_state": doomed.state,
        "doomed_error": error_of(lambda: doomed.get(timeout=5)),
        "runs": [None if value is None else value.decode()
                 for value in counter.mget("celery:flaky-runs", "celery:doomed-runs")],
        "exit": worker.stop(),
    }
    counter.close()
    return result


@with_app
def chord_of_adds(scenario: Scenario, app: Celery) -> dict[str, Any]:
    """A chord of five ``add`` tasks whose callback totals them."""
    add, total = app.tasks["brook.add"], app.tasks["brook.total"]
    result = chord(group(add.s(i, i) for i in range(5)))(total.s())
    worker = scenario.start(WORKER)
    value = _result(worker, result, "the chord callback's result")
    parts = result.parent
    return {
        "value": value,
        "parts": None if parts is None else parts.get(timeout=5),
        "exit": worker.stop(),
    }


if __name__ == "__main__":
    run({"delay": delay, "countdown_and_eta": countdown_and_eta, "retries": retries,
         "chord": chord_of_adds})
