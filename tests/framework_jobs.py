"""Job functions and worker settings that the job frameworks' real workers import (the tests
run ``rq worker`` and ``arq`` in subprocesses with this module on their path)."""

from __future__ import annotations

import os
from typing import Any

from arq.connections import RedisSettings


def add(a: int, b: int) -> int:
    """An RQ job: its return value is the result the test reads back."""
    return a + b


def fail(message: str) -> None:
    """An RQ job that fails, so that the failed-job registry has something to hold."""
    raise ValueError(message)


async def arq_add(ctx: dict[str, Any], a: int, b: int) -> int:
    """An arq job (arq passes its context first)."""
    return a + b


async def arq_fail(ctx: dict[str, Any], message: str) -> None:
    raise ValueError(message)


class ArqSettings:
    """``arq tests.framework_jobs.ArqSettings --burst``: the worker the arq test runs."""

    functions = [arq_add, arq_fail]
    redis_settings = RedisSettings(host="127.0.0.1",
                                   port=int(os.environ.get("BROOK_TEST_PORT", "6379")))
    max_tries = 1
    poll_delay = 0.05
