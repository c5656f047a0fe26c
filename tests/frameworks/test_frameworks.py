"""Job frameworks run unchanged: their real workers, in subprocesses, process jobs through the
server, and every job's result is read back through the framework's own API.

Each test runs against Brook and against real Redis (the ``server`` fixture), so a failure
that shows only on Brook is Brook's. RQ keeps its queue in a list and its registries in sorted
sets and sets (``rq:queues``, ``rq:workers``, finished/failed/started registries); arq's queue
*is* a sorted set scored by the time a job is due, polled with ZRANGEBYSCORE.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
import redis
from arq import create_pool
from arq.connections import RedisSettings
from arq.jobs import Job, JobStatus
from rq import Queue
from rq.job import JobStatus as RqStatus
from rq.registry import FailedJobRegistry, FinishedJobRegistry, StartedJobRegistry

from tests.conftest import ROOT, ServerProcess

JOBS = 30


def _worker_env(server: ServerProcess) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["BROOK_TEST_PORT"] = str(server.port)
    return env


def _run_worker(command: list[str], server: ServerProcess) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, env=_worker_env(server), cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_rq_worker_processes_every_job(server: ServerProcess) -> None:
    connection = redis.Redis(port=server.port)
    queue = Queue("default", connection=connection)
    jobs = [queue.enqueue("tests.frameworks.framework_jobs.add", i, 100) for i in range(JOBS)]
    failing = queue.enqueue("tests.frameworks.framework_jobs.fail", "on purpose")
    assert connection.smembers("rq:queues") == {b"rq:queue:default"}
    assert queue.count == JOBS + 1

    _run_worker([sys.executable, "-m", "rq.cli", "worker", "--burst", "--url",
                 f"redis://127.0.0.1:{server.port}", "default"], server)

    assert queue.count == 0
    for i, job in enumerate(jobs):
        job.refresh()
        assert job.get_status() == RqStatus.FINISHED
        assert job.return_value() == i + 100
    failing.refresh()
    assert failing.get_status() == RqStatus.FAILED
    assert "on purpose" in (failing.latest_result().exc_string or "")
    finished = FinishedJobRegistry(queue=queue)
    assert sorted(finished.get_job_ids()) == sorted(job.id for job in jobs)
    assert FailedJobRegistry(queue=queue).get_job_ids() == [failing.id]
    assert StartedJobRegistry(queue=queue).get_job_ids() == []
    connection.close()


def test_arq_worker_processes_immediate_and_deferred_jobs(server: ServerProcess) -> None:
    async def enqueue() -> list[str]:
        pool = await create_pool(RedisSettings(host="127.0.0.1", port=server.port))
        ids = []
        for i in range(JOBS):
            job = await pool.enqueue_job("arq_add", i, 1000, _defer_by=0.2 if i % 3 else None)
            assert job is not None
            ids.append(job.job_id)
        failing = await pool.enqueue_job("arq_fail", "on purpose")
        assert failing is not None
        ids.append(failing.job_id)
        # The queue is a sorted set scored by due time: deferred jobs score later.
        assert await pool.zcard("arq:queue") == JOBS + 1
        await pool.aclose()
        return ids

    ids = asyncio.run(enqueue())
    _run_worker([sys.executable, "-m", "arq", "tests.frameworks.framework_jobs.ArqSettings", "--burst"],
                server)

    async def results() -> None:
        pool = await create_pool(RedisSettings(host="127.0.0.1", port=server.port))
        for i, job_id in enumerate(ids[:-1]):
            job = Job(job_id, pool)
            assert await job.status() == JobStatus.complete
            assert await job.result(timeout=5) == i + 1000
        failed = Job(ids[-1], pool)
        assert await failed.status() == JobStatus.complete
        with pytest.raises(ValueError, match="on purpose"):
            await failed.result(timeout=5)
        assert await pool.zcard("arq:queue") == 0
        await pool.aclose()

    asyncio.run(results())
