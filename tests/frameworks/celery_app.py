"""The Celery app of the framework tests: kombu's Redis transport as broker, the Redis result
backend, and the tasks a real ``celery worker`` (a subprocess) runs.

The worker imports ``tests.frameworks.celery_app`` and gets ``app``, built for the port in
``BROOK_TEST_PORT``; the driver (``tests.frameworks.celery_driver``, in Celery's environment
with the same port) sends through the same app. Tasks have fixed names, the names the worker
knows them by.

Where Lua comes in: the worker's first poll takes kombu's restore mutex (a redis-py ``Lock``,
released by script). Tasks that must show how often they ran (retries) count their runs in a
Redis key through a plain redis-py client, next to what Celery itself records.
"""

from __future__ import annotations

import os
import time
from typing import Any

import redis
from celery import Celery, Task


def create_app(port: int) -> Celery:
    """A Celery app whose broker and result backend are the server on ``port``."""
    url = f"redis://127.0.0.1:{port}/0"
    app = Celery("brook_tests", broker=url, backend=url, set_as_current=False)
    app.conf.update(
        broker_connection_retry_on_startup=True,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        # The test reads every result through the backend; an unread one must not expire
        # between a slow run and the assertion.
        result_expires=600,
        # One task in flight at a time (delayed tasks are held by the worker's timer
        # regardless): the solo pool runs them one after another.
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
    )
    counter = redis.Redis(port=port)

    @app.task(name="brook.add")
    def add(a: int, b: int) -> int:
        return a + b

    @app.task(name="brook.total")
    def total(values: list[int]) -> int:
        """A chord's callback: it gets the results of the chord's group."""
        return sum(values)

    @app.task(name="brook.stamp")
    def stamp() -> float:
        """When the task ran: a delayed (countdown or eta) task must not run before its time."""
        return time.time()

    @app.task(name="brook.flaky", bind=True, max_retries=5)
    def flaky(self: Task, key: str, succeed_on: int) -> dict[str, Any]:
        """Fails until its ``succeed_on``-th run, retrying each time after a short countdown."""
        runs = int(counter.incr(key))
        if runs < succeed_on:
            raise self.retry(countdown=0.2, exc=RuntimeError(f"run {runs} fails"))
        return {"runs": runs, "retries": self.request.retries}

    @app.task(name="brook.doomed", bind=True)
    def doomed(self: Task, key: str) -> None:
        """Always fails: after ``max_retries`` retries the task fails for good."""
        runs = int(counter.incr(key))
        raise self.retry(countdown=0.1, max_retries=2, exc=ValueError(f"run {runs} fails"))

    return app


app_port = int(os.environ.get("BROOK_TEST_PORT", "6379"))
app = create_app(app_port)
