"""arq's side of the framework tests, run with the python of arq's environment (``bench.envs``):
the jobs and worker settings its real worker imports, and the scenario the test drives
(``tests.frameworks.driver``).

arq's queue *is* a sorted set scored by the time a job is due, polled with ZRANGEBYSCORE.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from arq import create_pool
from arq.connections import RedisSettings
from arq.jobs import Job

from tests.frameworks.driver import Scenario, python_module, run

JOBS = 30
BURST_TIMEOUT = 60.0  # seconds for a burst worker to run every job and exit


async def arq_add(ctx: dict[str, Any], a: int, b: int) -> int:
    """An arq job (arq passes its context first)."""
    return a + b


async def arq_fail(ctx: dict[str, Any], message: str) -> None:
    raise ValueError(message)


class ArqSettings:
    """``arq tests.frameworks.arq_driver.ArqSettings --burst``: the worker the test runs."""

    functions = [arq_add, arq_fail]
    redis_settings = RedisSettings(host="127.0.0.1",
                                   port=int(os.environ.get("BROOK_TEST_PORT", "6379")))
    max_tries = 1
    poll_delay = 0.05


def burst(scenario: Scenario) -> dict[str, Any]:
    """Immediate and deferred jobs and a failing one, then ``arq --burst`` runs them all."""
    settings = RedisSettings(host="127.0.0.1", port=scenario.port)

    async def enqueue() -> dict[str, Any]:
        pool = await create_pool(settings)
        ids: list[str | None] = []
        for i in range(JOBS):
            job = await pool.enqueue_job("arq_add", i, 1000, _defer_by=0.2 if i % 3 else None)
            ids.append(None if job is None else job.job_id)
        failing = await pool.enqueue_job("arq_fail", "on purpose")
        queued = await pool.zcard("arq:queue")
        await pool.aclose()
        return {"ids": ids, "failing_id": None if failing is None else failing.job_id,
                "queued": queued}

    enqueued = asyncio.run(enqueue())
    scenario.start(python_module("arq", "tests.frameworks.arq_driver.ArqSettings",
                                 "--burst")).finish(BURST_TIMEOUT)

    async def results() -> dict[str, Any]:
        pool = await create_pool(settings)
        statuses, values = [], []
        for job_id in enqueued["ids"]:
            job = Job(job_id, pool)
            statuses.append((await job.status()).value)
            values.append(await job.result(timeout=5))
        failed = Job(enqueued["failing_id"], pool)
        failing_status = (await failed.status()).value
        try:
            await failed.result(timeout=5)
            failing_error = None
        except Exception as exc:  # what the job raised, read back through arq
            failing_error = {"type": type(exc).__name__, "message": str(exc)}
        queued_after = await pool.zcard("arq:queue")
        await pool.aclose()
        return {"statuses": statuses, "values": values, "failing_status": failing_status,
                "failing_error": failing_error, "queued_after": queued_after}

    return {**enqueued, **asyncio.run(results())}


if __name__ == "__main__":
    run({"burst": burst})
