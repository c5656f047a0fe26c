"""Job frameworks run unchanged: their real workers, in subprocesses, process jobs through the
server, and every job's result is read back through the framework's own API.

Each framework runs in its own environment at its newest release (``bench.envs``): the
client side and the worker are ``tests.frameworks.<name>_driver`` scenarios run with that
environment's python (the ``drive`` fixture), which return what they observed, asserted on
here. Each test runs against Brook and against real Redis (the ``server`` fixture), so a
failure that shows only on Brook is Brook's. RQ keeps its queue in a list and its registries
in sorted sets and sets (``rq:queues``, ``rq:workers``, finished/failed/started registries);
arq's queue *is* a sorted set scored by the time a job is due, polled with ZRANGEBYSCORE.
"""

from __future__ import annotations

from tests.frameworks.conftest import Drive

JOBS = 30  # the drivers' BURST_JOBS and JOBS


def test_rq_worker_processes_every_job(drive: Drive) -> None:
    run = drive("rq", "burst")
    assert run["queues"] == ["rq:queue:default"]
    assert run["count_before"] == JOBS + 1
    assert run["count_after"] == 0
    assert run["statuses"] == ["finished"] * JOBS
    assert run["values"] == [i + 100 for i in range(JOBS)]
    assert run["failing_status"] == "failed"
    assert "on purpose" in (run["failing_exc"] or "")
    assert sorted(run["finished"]) == sorted(run["ids"])
    assert run["failed"] == [run["failing_id"]]
    assert run["started"] == []


def test_arq_worker_processes_immediate_and_deferred_jobs(drive: Drive) -> None:
    run = drive("arq", "burst")
    assert None not in run["ids"] and run["failing_id"] is not None
    # The queue is a sorted set scored by due time: deferred jobs score later.
    assert run["queued"] == JOBS + 1
    assert run["statuses"] == ["complete"] * JOBS
    assert run["values"] == [i + 1000 for i in range(JOBS)]
    assert run["failing_status"] == "complete"
    assert run["failing_error"]["type"] == "ValueError"
    assert "on purpose" in run["failing_error"]["message"]
    assert run["queued_after"] == 0
