"""dramatiq's side of the framework tests, run with the python of dramatiq's environment
(``bench.envs``): the scenarios the tests drive (``tests.frameworks.driver``) with the broker
of ``tests.frameworks.dramatiq_app``, which the real ``dramatiq`` worker imports too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from dramatiq import Message
from dramatiq.brokers.redis import RedisBroker
from dramatiq.results import ResultFailure, ResultMissing

from tests.frameworks import dramatiq_app
from tests.frameworks.driver import Scenario, Worker, error_of, python_module, run

WORKER = python_module("dramatiq", "tests.frameworks.dramatiq_app:broker", "--processes", "1",
                       "--threads", "1")


def _result(worker: Worker, broker: RedisBroker, message: Message[Any], what: str) -> Any:
    """The message's result from the Results middleware, once the worker has stored it."""
    backend = broker.get_results_backend()

    def stored() -> bool:
        try:
            message.get_result(backend=backend)
        except ResultMissing:
            return False
        except ResultFailure:
            pass
        return True

    worker.wait_for(stored, what)
    return message.get_result(backend=backend)


def with_broker(scenario: Callable[[Scenario, RedisBroker], dict[str, Any]]
                ) -> Callable[[Scenario], dict[str, Any]]:
    """Runs a scenario with ``dramatiq_app.broker``, the worker's own broker (built for the
    server under test: ``BROOK_TEST_PORT``)."""
    def wrapped(context: Scenario) -> dict[str, Any]:
        broker = dramatiq_app.broker
        if dramatiq_app.broker_port != context.port:
            raise RuntimeError(f"dramatiq_app's broker is for port {dramatiq_app.broker_port}")
        try:
            return scenario(context, broker)
        finally:
            broker.close()
            broker.client.close()
    return wrapped


@with_broker
def enqueue(scenario: Scenario, broker: RedisBroker) -> dict[str, Any]:
    """Five ``add`` messages sent before the worker starts."""
    add = broker.get_actor("add")
    messages = [add.send(i, 100) for i in range(5)]
    worker = scenario.start(WORKER)
    values = [_result(worker, broker, message, f"add({i}, 100)")
              for i, message in enumerate(messages)]
    return {"values": values, "exit": worker.stop()}


@with_broker
def delay(scenario: Scenario, broker: RedisBroker) -> dict[str, Any]:
    """An undelayed stamp (the worker is up), then one sent with a delay of 1000 ms, with
    the queue it went to and the ``eta`` the broker stamped on it."""
    stamp = broker.get_actor("stamp")
    worker = scenario.start(WORKER)
    first = _result(worker, broker, stamp.send(), "a stamp")
    delayed = stamp.send_with_options(delay=1000)
    return {
        "first": first,
        "queue": delayed.queue_name,
        "eta": delayed.options["eta"],
        "ran_at": _result(worker, broker, delayed, "the delayed stamp"),
        "exit": worker.stop(),
    }


@with_broker
def retries(scenario: Scenario, broker: RedisBroker) -> dict[str, Any]:
    """An actor that succeeds on its third run and one that always fails, counting runs."""
    counter = redis.Redis(port=scenario.port)
    message = broker.get_actor("flaky").send("dramatiq:flaky-runs", 3)
    failing = broker.get_actor("doomed").send("dramatiq:doomed-runs")
    worker = scenario.start(WORKER)
    result = {
        "flaky": _result(worker, broker, message, "the flaky actor's result"),
        "doomed_error": error_of(
            lambda: _result(worker, broker, failing, "the doomed actor's failure")),
        "runs": [None if value is None else value.decode()
                 for value in counter.mget("dramatiq:flaky-runs", "dramatiq:doomed-runs")],
        "exit": worker.stop(),
    }
    counter.close()
    return result


if __name__ == "__main__":
    run({"enqueue": enqueue, "delay": delay, "retries": retries})
