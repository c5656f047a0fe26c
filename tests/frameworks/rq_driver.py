"""RQ's side of the framework tests, run with the python of RQ's environment (``bench.envs``):
the jobs its real worker imports, and the scenarios the tests drive (``tests.frameworks.driver``).

RQ keeps its queue in a list and its registries in sorted sets and sets (``rq:queues``,
``rq:workers``, finished/failed/started registries); its scheduler's lock is taken, refreshed
(inside a MULTI pipeline) and released by script, and ``unique=True`` enqueues and schedules
by script.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from redis import Redis
from rq import Queue, Retry, get_current_job
from rq.job import Job, JobStatus
from rq.registry import (
    FailedJobRegistry,
    FinishedJobRegistry,
    ScheduledJobRegistry,
    StartedJobRegistry,
)
from rq.worker import Worker as RqWorker

from tests.frameworks.driver import Scenario, error_of, python_module, run

JOBS = "tests.frameworks.rq_driver"  # where the worker finds the jobs (not __main__)
BURST_JOBS = 30
BURST_TIMEOUT = 60.0  # seconds for a burst worker to run every job and exit


# -- The jobs ---------------------------------------------------------------------------------

def add(a: int, b: int) -> int:
    """Its return value is the result the test reads back."""
    return a + b


def fail(message: str) -> None:
    """Fails, so that the failed-job registry has something to hold."""
    raise ValueError(message)


def stamp() -> float:
    """Says when it ran: a scheduled job must not run before its time."""
    return time.time()


def flaky(key: str, succeed_on: int) -> int:
    """Fails until its ``succeed_on``-th run, for ``Retry``. It appends the time of each run
    to the list ``key``, so the test sees how often and when it ran."""
    job = get_current_job()
    assert job is not None
    runs = int(job.connection.rpush(key, repr(time.time())))
    if runs < succeed_on:
        raise RuntimeError(f"run {runs} fails")
    return runs


# -- The scenarios ----------------------------------------------------------------------------

def _status(job: Job) -> str:
    return job.get_status(refresh=True).value


def _long_running(scenario: Scenario) -> list[str]:
    """A worker with its scheduler (burst mode would enqueue due jobs once and quit before
    anything scheduled in the future is due)."""
    return python_module("rq.cli", "worker", "--with-scheduler", "--url", scenario.url,
                         "default")


def _finished(job: Job) -> Callable[[], bool]:
    def finished() -> bool:
        return job.get_status(refresh=True) in (JobStatus.FINISHED, JobStatus.FAILED)
    return finished


def burst(scenario: Scenario) -> dict[str, Any]:
    """Jobs and a failing one enqueued, then ``rq worker --burst`` runs them all and exits."""
    connection = Redis(port=scenario.port)
    queue = Queue("default", connection=connection)
    jobs = [queue.enqueue(f"{JOBS}.add", i, 100) for i in range(BURST_JOBS)]
    failing = queue.enqueue(f"{JOBS}.fail", "on purpose")
    queues = sorted(name.decode() for name in connection.smembers("rq:queues"))
    count_before = queue.count

    scenario.start(python_module("rq.cli", "worker", "--burst", "--url", scenario.url,
                                 "default")).finish(BURST_TIMEOUT)

    for job in [*jobs, failing]:
        job.refresh()
    latest = failing.latest_result()
    result = {
        "queues": queues,
        "count_before": count_before,
        "count_after": queue.count,
        "statuses": [job.get_status().value for job in jobs],
        "values": [job.return_value() for job in jobs],
        "ids": [job.id for job in jobs],
        "failing_id": failing.id,
        "failing_status": failing.get_status().value,
        "failing_exc": latest.exc_string if latest is not None else None,
        "finished": FinishedJobRegistry(queue=queue).get_job_ids(),
        "failed": FailedJobRegistry(queue=queue).get_job_ids(),
        "started": StartedJobRegistry(queue=queue).get_job_ids(),
    }
    connection.close()
    return result


def url_burst(scenario: Scenario) -> dict[str, Any]:
    """Ten jobs enqueued through the scenario's URL (TLS with a user, client certificate and
    CA in its query: the TLS tests), then ``rq worker --burst`` given the same URL."""
    connection = Redis.from_url(scenario.url)
    queue = Queue("default", connection=connection)
    jobs = [queue.enqueue(f"{JOBS}.add", i, 100) for i in range(10)]
    scenario.start(python_module("rq.cli", "worker", "--burst", "--url", scenario.url,
                                 "default")).finish(BURST_TIMEOUT)
    for job in jobs:
        job.refresh()
    result = {"statuses": [job.get_status().value for job in jobs],
              "values": [job.return_value() for job in jobs]}
    connection.close()
    return result


def enqueue_in(scenario: Scenario) -> dict[str, Any]:
    """Two jobs scheduled 2 s ahead (one ``unique=True``, then its duplicate) while the worker
    with its scheduler is up."""
    connection = Redis(port=scenario.port)
    queue = Queue("default", connection=connection)
    worker = scenario.start(_long_running(scenario))
    worker.wait_for(lambda: RqWorker.count(queue=queue) > 0, "the worker's registration")
    sent = time.time()
    later = queue.enqueue_in(timedelta(seconds=2), f"{JOBS}.stamp")
    unique = queue.enqueue_in(timedelta(seconds=2), f"{JOBS}.add", 2, 3,
                              job_id="brook-unique", unique=True)
    duplicate = error_of(lambda: queue.enqueue_in(
        timedelta(seconds=2), f"{JOBS}.add", 2, 3, job_id="brook-unique", unique=True))
    registry = ScheduledJobRegistry(queue=queue)
    scheduled = registry.get_job_ids()
    due = registry.get_scheduled_time(later).timestamp()

    worker.wait_for(_finished(later), "the scheduled stamp job")
    worker.wait_for(_finished(unique), "the unique scheduled job")
    result = {
        "sent": sent,
        "ids": [later.id, unique.id],
        "duplicate": duplicate,
        "scheduled": scheduled,
        "due": due,
        "ran_at": later.return_value(),
        "unique_status": _status(unique),
        "unique_value": unique.return_value(),
        "scheduled_after": registry.get_job_ids(),
        "exit": worker.stop(),
    }
    connection.close()
    return result


def retry(scenario: Scenario) -> dict[str, Any]:
    """A job that fails twice, enqueued with ``Retry(max=3, interval=[2, 2])``."""
    connection = Redis(port=scenario.port)
    queue = Queue("default", connection=connection)
    job = queue.enqueue(f"{JOBS}.flaky", "rq:flaky-runs", 3,
                        retry=Retry(max=3, interval=[2, 2]))
    worker = scenario.start(_long_running(scenario))
    worker.wait_for(lambda: job.get_status(refresh=True) == JobStatus.FINISHED,
                    "the flaky job's success")
    job.refresh()
    result = {
        "value": job.return_value(),
        "retries_left": job.retries_left,
        "result_types": [entry.type.name for entry in job.results()],
        "runs": [float(t) for t in connection.lrange("rq:flaky-runs", 0, -1)],
        "exit": worker.stop(),
    }
    connection.close()
    return result


if __name__ == "__main__":
    run({"burst": burst, "url_burst": url_burst, "enqueue_in": enqueue_in, "retry": retry})
