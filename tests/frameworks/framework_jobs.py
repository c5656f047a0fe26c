"""Job functions and worker settings that the job frameworks' real workers import (the tests
run ``rq worker`` and ``arq`` in subprocesses with this module on their path)."""

from __future__ import annotations

import os
import time
from typing import Any

from arq.connections import RedisSettings
from rq import get_current_job


def add(a: int, b: int) -> int:
    """An RQ job: its return value is the result the test reads back."""
    return a + b


def fail(message: str) -> None:
    """An RQ job that fails, so that the failed-job registry has something to hold."""
    raise ValueError(message)


def stamp() -> float:
    """An RQ job that says when it ran: a scheduled job must not run before its time."""
    return time.time()


def flaky(key: str, succeed_on: int) -> int:
    """An RQ job that fails until its ``succeed_on``-th run, for ``Retry``. It appends the
    time of each run to the list ``key``, so the test sees how often and when it ran."""
    job = get_current_job()
    assert job is not None
    runs = int(job.connection.rpush(key, repr(time.time())))
    if runs < succeed_on:
        raise RuntimeError(f"run {runs} fails")
    return runs


async def arq_add(ctx: dict[str, Any], a: int, b: int) -> int:
    """An arq job (arq passes its context first)."""
    return a + b


async def arq_fail(ctx: dict[str, Any], message: str) -> None:
    raise ValueError(message)


class ArqSettings:
    """``arq tests.frameworks.framework_jobs.ArqSettings --burst``: the worker the arq test runs."""

    functions = [arq_add, arq_fail]
    redis_settings = RedisSettings(host="127.0.0.1",
                                   port=int(os.environ.get("BROOK_TEST_PORT", "6379")))
    max_tries = 1
    poll_delay = 0.05
