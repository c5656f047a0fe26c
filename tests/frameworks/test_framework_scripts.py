"""Job frameworks that depend on Lua scripting run unchanged: Celery, dramatiq, RQ's scheduler
and redis-py's ``Lock``.

Their real workers run in subprocesses (one job at a time), pointed at the server
under test by ``BROOK_TEST_PORT``, and every job's result is read back through the framework's
own API: Celery's ``AsyncResult`` and chord result, dramatiq's Results middleware, RQ's
``job.return_value()`` and results. Each test runs against Brook and against real Redis (the
``server`` fixture). What each framework runs as scripts:

* Celery: kombu's restore sweep takes a redis-py ``Lock`` (released by script) when a worker
  starts polling. (Celery 5.7 and kombu 5.7 add scripts for chords and queue bindings, but
  need redis-py >= 6.1, which arq rules out here; pyproject.toml pins below them.)
* dramatiq: every broker operation (enqueue, fetch, ack, nack) is one script, ``dispatch``,
  after a probe of Lua's stack limit (``maxstack``).
* RQ: the scheduler's lock is taken, refreshed (inside a MULTI pipeline) and released by
  script; ``unique=True`` enqueues and schedules by script.
* redis-py ``Lock``: release, extend and reacquire are scripts.

Delayed jobs are checked against the time the framework itself scheduled them for, never
against the test's wall clock; workers are stopped with a warm shutdown (SIGTERM) once the
results are in, and every wait has a deadline, so a server that cannot run a script fails the test
with the worker's log rather than hanging it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery, chord, group
from celery.result import AsyncResult
from dramatiq import Message
from dramatiq.brokers.redis import RedisBroker
from dramatiq.results import ResultFailure, ResultMissing
from redis.exceptions import LockError, LockNotOwnedError
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError
from rq.job import Job
from rq.job import JobStatus as RqStatus
from rq.registry import ScheduledJobRegistry
from rq.results import Result
from rq.worker import Worker as RqWorker

from tests.conftest import ROOT, ServerProcess
from tests.frameworks.celery_app import create_app
from tests.frameworks.dramatiq_app import create_broker

WAIT = 20.0  # seconds any one result may take before the test fails (they take well under 5)


class Worker:
    """A framework's worker in a subprocess of its own session (so that the pool, scheduler
    and work-horse processes it forks can be killed with it), its output in a log file."""

    def __init__(self, command: list[str], server: ServerProcess, log_path: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env["BROOK_TEST_PORT"] = str(server.port)
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, done: Callable[[], bool], what: str) -> None:
        """Poll ``done`` until it holds; fail at once if the worker died, or after WAIT."""
        deadline = time.monotonic() + WAIT
        while not done():
            if self.process.poll() is not None:
                pytest.fail(f"worker exited ({self.process.returncode}) before {what}:\n"
                            f"{self.log()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} after {WAIT:.0f} s; worker log:\n{self.log()}")
            time.sleep(0.05)

    def stop(self) -> int:
        """Ask for a warm shutdown (SIGTERM, for all three) and wait for it; a worker that
        does not stop in time is killed and fails the test."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(timeout=60)  # a deadline, generous on a loaded machine
            except subprocess.TimeoutExpired:
                self.kill()
                pytest.fail(f"worker did not stop on SIGTERM:\n{self.log()}")
        return self.process.returncode

    def kill(self) -> None:
        """Kill the worker's process group: it and whatever it forked that is still there."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


@pytest.fixture
def start_worker(server: ServerProcess, tmp_path: Path) -> Iterator[Callable[[list[str]], Worker]]:
    """Starts workers against the server under test; any still running at the end (a failed
    test) are killed."""
    started: list[Worker] = []

    def start(command: list[str]) -> Worker:
        worker = Worker(command, server, tmp_path / f"worker-{len(started)}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()


# -- Celery ---------------------------------------------------------------------------------------

CELERY_WORKER = [sys.executable, "-m", "celery", "-A", "tests.frameworks.celery_app", "worker",
                 "--pool", "solo", "--without-gossip", "--without-mingle", "--without-heartbeat",
                 "--loglevel", "INFO"]


@pytest.fixture
def celery_app(server: ServerProcess) -> Iterator[Celery]:
    """The test side's Celery app, for the server under test. An ``AsyncResult`` unsubscribes
    from its result when collected, so results left in reference cycles are collected here,
    while the server still answers, not at exit."""
    app = create_app(server.port)
    yield app
    gc.collect()
    app.close()


def _celery_result(worker: Worker, result: AsyncResult, what: str) -> object:
    worker.wait_for(result.ready, what)
    return result.get(timeout=5)


def test_celery_delay(server: ServerProcess, celery_app: Celery,
                      start_worker: Callable[[list[str]], Worker]) -> None:
    add = celery_app.tasks["brook.add"]
    results = [add.delay(i, 100) for i in range(5)]
    worker = start_worker(CELERY_WORKER)
    for i, result in enumerate(results):
        assert _celery_result(worker, result, f"result of add({i}, 100)") == i + 100
        assert result.state == "SUCCESS"
    assert worker.stop() == 0


def test_celery_countdown_and_eta(server: ServerProcess, celery_app: Celery,
                                  start_worker: Callable[[list[str]], Worker]) -> None:
    """A delayed task runs no earlier than its eta: the time the task recorded is compared
    with the eta the test asked for (the worker's timer waits on the monotonic clock, so
    10 ms of slack for the two clocks' drift). The worker is up before they are sent, so it
    holds them until they are due."""
    stamp = celery_app.tasks["brook.stamp"]
    worker = start_worker(CELERY_WORKER)
    assert isinstance(_celery_result(worker, stamp.delay(), "an undelayed stamp"), float)
    sent = time.time()
    by_countdown = stamp.apply_async(countdown=1)
    eta = datetime.now(UTC) + timedelta(seconds=1.5)
    by_eta = stamp.apply_async(eta=eta)
    ran_by_countdown = _celery_result(worker, by_countdown, "the countdown stamp")
    ran_by_eta = _celery_result(worker, by_eta, "the eta stamp")
    assert isinstance(ran_by_countdown, float) and isinstance(ran_by_eta, float)
    assert ran_by_countdown >= sent + 1 - 0.01
    assert ran_by_eta >= eta.timestamp() - 0.01
    assert worker.stop() == 0


def test_celery_retries(server: ServerProcess, celery_app: Celery,
                        start_worker: Callable[[list[str]], Worker]) -> None:
    """A task that fails twice succeeds on its third run; one that always fails gives up
    after ``max_retries`` retries with its own exception. Runs are counted in Redis."""
    counter = server.client()
    flaky = celery_app.tasks["brook.flaky"].delay("celery:flaky-runs", 3)
    doomed = celery_app.tasks["brook.doomed"].delay("celery:doomed-runs")
    worker = start_worker(CELERY_WORKER)
    assert _celery_result(worker, flaky, "the flaky task's result") == {"runs": 3, "retries": 2}
    worker.wait_for(doomed.ready, "the doomed task's failure")
    assert doomed.state == "FAILURE"
    with pytest.raises(ValueError, match="run 3 fails"):
        doomed.get(timeout=5)
    assert counter.mget("celery:flaky-runs", "celery:doomed-runs") == [b"3", b"3"]
    assert worker.stop() == 0
    counter.close()


def test_celery_chord(server: ServerProcess, celery_app: Celery,
                      start_worker: Callable[[list[str]], Worker]) -> None:
    """A chord: the group's results reach the callback, whose result is read back, as are
    the header tasks' own results."""
    add, total = celery_app.tasks["brook.add"], celery_app.tasks["brook.total"]
    header = group(add.s(i, i) for i in range(5))
    result = chord(header)(total.s())
    worker = start_worker(CELERY_WORKER)
    assert _celery_result(worker, result, "the chord callback's result") == 20
    parts = result.parent
    assert parts is not None
    assert parts.get(timeout=5) == [0, 2, 4, 6, 8]
    assert worker.stop() == 0


# -- dramatiq -------------------------------------------------------------------------------------

DRAMATIQ_WORKER = [sys.executable, "-m", "dramatiq", "tests.frameworks.dramatiq_app:broker",
                   "--processes", "1", "--threads", "1"]


@pytest.fixture
def dramatiq_broker(server: ServerProcess) -> Iterator[RedisBroker]:
    """The test side's dramatiq broker, for the server under test."""
    broker = create_broker(server.port)
    yield broker
    broker.close()
    broker.client.close()


def _dramatiq_result(worker: Worker, broker: RedisBroker, message: Message[Any],
                     what: str) -> Any:
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


def test_dramatiq_enqueue(server: ServerProcess, dramatiq_broker: RedisBroker,
                          start_worker: Callable[[list[str]], Worker]) -> None:
    add = dramatiq_broker.get_actor("add")
    messages = [add.send(i, 100) for i in range(5)]
    worker = start_worker(DRAMATIQ_WORKER)
    for i, message in enumerate(messages):
        assert _dramatiq_result(worker, dramatiq_broker, message, f"add({i}, 100)") == i + 100
    assert worker.stop() == 0


def test_dramatiq_delay(server: ServerProcess, dramatiq_broker: RedisBroker,
                        start_worker: Callable[[list[str]], Worker]) -> None:
    """A message sent with a delay waits on the delay queue and runs no earlier than the
    ``eta`` the broker stamped on it (both in dramatiq's milliseconds)."""
    stamp = dramatiq_broker.get_actor("stamp")
    worker = start_worker(DRAMATIQ_WORKER)
    assert isinstance(_dramatiq_result(worker, dramatiq_broker, stamp.send(), "a stamp"), int)
    delayed = stamp.send_with_options(delay=1000)
    assert delayed.queue_name == "default.DQ"
    eta = delayed.options["eta"]
    ran_at = _dramatiq_result(worker, dramatiq_broker, delayed, "the delayed stamp")
    assert isinstance(ran_at, int) and ran_at >= eta
    assert worker.stop() == 0


def test_dramatiq_retries(server: ServerProcess, dramatiq_broker: RedisBroker,
                          start_worker: Callable[[list[str]], Worker]) -> None:
    """An actor that fails twice is retried (through the delay queue) and succeeds on its
    third run; the Retries middleware's count and the actor's own agree. One that always
    fails gives up after its one retry with its own error."""
    counter = server.client()
    message = dramatiq_broker.get_actor("flaky").send("dramatiq:flaky-runs", 3)
    failing = dramatiq_broker.get_actor("doomed").send("dramatiq:doomed-runs")
    worker = start_worker(DRAMATIQ_WORKER)
    result = _dramatiq_result(worker, dramatiq_broker, message, "the flaky actor's result")
    assert result == {"runs": 3, "retries": 2}
    with pytest.raises(ResultFailure, match="run 2 fails"):
        _dramatiq_result(worker, dramatiq_broker, failing, "the doomed actor's failure")
    assert counter.mget("dramatiq:flaky-runs", "dramatiq:doomed-runs") == [b"3", b"2"]
    assert worker.stop() == 0
    counter.close()


# -- RQ's scheduler -------------------------------------------------------------------------------

def _rq_worker(server: ServerProcess) -> list[str]:
    """A long-running worker with its scheduler (burst mode would enqueue due jobs once and
    quit before anything scheduled in the future is due)."""
    return [sys.executable, "-m", "rq.cli", "worker", "--with-scheduler", "--url",
            f"redis://127.0.0.1:{server.port}", "default"]


def _rq_finished(job: Job) -> Callable[[], bool]:
    def finished() -> bool:
        return job.get_status(refresh=True) in (RqStatus.FINISHED, RqStatus.FAILED)
    return finished


def test_rq_enqueue_in(server: ServerProcess,
                       start_worker: Callable[[list[str]], Worker]) -> None:
    """Jobs scheduled with ``enqueue_in`` wait in the scheduled registry until the scheduler
    moves them to the queue; neither runs before the time the registry holds for it (whole
    seconds, rounded down). The ``unique=True`` one is scheduled by RQ's Lua script, which
    refuses a second job with its ID. The worker is up first, so the scheduler does wait."""
    connection = redis.Redis(port=server.port)
    queue = Queue("default", connection=connection)
    worker = start_worker(_rq_worker(server))
    worker.wait_for(lambda: RqWorker.count(queue=queue) > 0, "the worker's registration")
    sent = time.time()
    later = queue.enqueue_in(timedelta(seconds=2), "tests.frameworks.framework_jobs.stamp")
    unique = queue.enqueue_in(timedelta(seconds=2), "tests.frameworks.framework_jobs.add", 2, 3,
                              job_id="brook-unique", unique=True)
    with pytest.raises(DuplicateJobError):
        queue.enqueue_in(timedelta(seconds=2), "tests.frameworks.framework_jobs.add", 2, 3,
                         job_id="brook-unique", unique=True)
    registry = ScheduledJobRegistry(queue=queue)
    assert sorted(registry.get_job_ids()) == sorted([later.id, unique.id])
    due = registry.get_scheduled_time(later).timestamp()
    assert due > sent

    worker.wait_for(_rq_finished(later), "the scheduled stamp job")
    worker.wait_for(_rq_finished(unique), "the unique scheduled job")
    ran_at = later.return_value()
    assert isinstance(ran_at, float) and ran_at >= due
    assert unique.get_status() == RqStatus.FINISHED
    assert unique.return_value() == 5
    assert registry.get_job_ids() == []
    assert worker.stop() == 0
    connection.close()


def test_rq_retry_with_intervals(server: ServerProcess,
                                 start_worker: Callable[[list[str]], Worker]) -> None:
    """``Retry(max=3, interval=[...])``: each failed run is scheduled again after its
    interval, and the scheduler brings it back; the job succeeds on its third run, with one
    retry left. The job records when it ran (RQ keeps only the successful result): runs are
    at least the interval apart, less the second RQ's whole-second schedule may round off."""
    connection = redis.Redis(port=server.port)
    queue = Queue("default", connection=connection)
    job = queue.enqueue("tests.frameworks.framework_jobs.flaky", "rq:flaky-runs", 3,
                        retry=Retry(max=3, interval=[2, 2]))
    worker = start_worker(_rq_worker(server))
    worker.wait_for(lambda: job.get_status(refresh=True) == RqStatus.FINISHED,
                    "the flaky job's success")
    job.refresh()
    assert job.return_value() == 3
    assert job.retries_left == 1
    assert [result.type for result in job.results()] == [Result.Type.SUCCESSFUL]
    runs = [float(t) for t in connection.lrange("rq:flaky-runs", 0, -1)]
    assert len(runs) == 3
    assert runs[1] - runs[0] >= 2 - 1 and runs[2] - runs[1] >= 2 - 1
    assert worker.stop() == 0
    connection.close()


# -- redis-py Lock --------------------------------------------------------------------------------

def test_lock_acquire_extend_reacquire_release(server: ServerProcess) -> None:
    r = server.client()
    lock = r.lock("lock:a", timeout=10)
    assert not lock.locked() and not lock.owned()
    assert lock.acquire(blocking=False)
    assert lock.locked() and lock.owned()
    assert 9000 < r.pttl("lock:a") <= 10000
    assert lock.extend(5)  # adds to the TTL left
    assert 14000 < r.pttl("lock:a") <= 15000
    assert lock.extend(3, replace_ttl=True)
    assert 2000 < r.pttl("lock:a") <= 3000
    assert lock.reacquire()  # back to the lock's own timeout
    assert 9000 < r.pttl("lock:a") <= 10000
    lock.release()
    assert not lock.locked() and not lock.owned()
    assert r.exists("lock:a") == 0
    r.close()


def test_lock_context_manager_and_contention(server: ServerProcess) -> None:
    """A lock held by another client makes a non-blocking acquire fail, a bounded one give
    up, and ``with`` raise; a blocked acquire gets it once the holder releases."""
    holder, other = server.client(), server.client()
    with holder.lock("lock:b", timeout=10) as held:
        assert held.owned()
        waiting = other.lock("lock:b", timeout=10, blocking_timeout=0.3)
        assert not waiting.acquire(blocking=False)
        assert not waiting.acquire()  # gives up after blocking_timeout
        assert waiting.locked() and not waiting.owned()
        with pytest.raises(LockError), other.lock("lock:b", blocking_timeout=0.2):
            pass
    assert holder.exists("lock:b") == 0

    # Released from another thread, so its token must not be thread-local.
    held = holder.lock("lock:b", timeout=10, thread_local=False)
    assert held.acquire()
    release = threading.Timer(0.3, held.release)
    release.start()
    patient = other.lock("lock:b", timeout=10, blocking_timeout=5)
    assert patient.acquire()
    release.join()
    assert patient.owned() and not held.owned()
    patient.release()
    assert holder.exists("lock:b") == 0
    holder.close()
    other.close()


def test_lock_release_not_owned(server: ServerProcess) -> None:
    """Release, extend and reacquire check the token by script: a lock that expired, or was
    taken over by someone else, is not theirs to touch."""
    r, other = server.client(), server.client()
    lock = r.lock("lock:c", timeout=10)
    assert lock.acquire()
    r.delete("lock:c")  # as if it had expired
    with pytest.raises(LockNotOwnedError):
        lock.release()
    assert lock.acquire()
    r.set("lock:c", "someone else")  # taken over after expiry
    assert lock.locked() and not lock.owned()
    with pytest.raises(LockNotOwnedError):
        lock.extend(5)
    with pytest.raises(LockNotOwnedError):
        lock.reacquire()
    with pytest.raises(LockNotOwnedError):
        lock.release()
    assert r.get("lock:c") == b"someone else"
    # An unheld lock cannot be released at all.
    with pytest.raises(LockError):
        other.lock("lock:never").release()
    r.close()
    other.close()
