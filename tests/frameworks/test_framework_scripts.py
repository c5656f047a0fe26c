"""Job frameworks that depend on Lua scripting run unchanged: Celery, dramatiq, RQ's scheduler
and redis-py's ``Lock``.

Each framework runs in its own environment at its newest release (``bench.envs``): its client
side and its real worker (one job at a time) are a scenario of ``tests.frameworks.<name>_driver``
run with that environment's python (the ``drive`` fixture), pointed at the server under test,
and every job's result is read back through the framework's own API: Celery's ``AsyncResult``
and chord result, dramatiq's Results middleware, RQ's ``job.return_value()`` and results. The
scenario returns what it observed and the test asserts on it here. Each test runs against Brook
and against real Redis (the ``server`` fixture). What each framework runs as scripts:

* Celery: kombu's restore sweep takes a redis-py ``Lock`` (released by script) when a worker
  starts polling; since Celery 5.7 the Redis result backend keeps a chord's books by script
  (each part's return, the callback's claim, the cleanup). kombu 5.7's scripts for the
  bindings of expiring queues do not run here: no queue expires.
* dramatiq: every broker operation (enqueue, fetch, ack, nack) is one script, ``dispatch``,
  after a probe of Lua's stack limit (``maxstack``).
* RQ: the scheduler's lock is taken, refreshed (inside a MULTI pipeline) and released by
  script; ``unique=True`` enqueues and schedules by script.
* redis-py ``Lock`` (the project's redis-py, in the test process): release, extend and
  reacquire are scripts.

Delayed jobs are checked against the time the framework itself scheduled them for, never
against the test's wall clock; workers are stopped with a warm shutdown (SIGTERM) once the
results are in, and every wait has a deadline, so a server that cannot run a script fails the
test with the worker's log rather than hanging it.
"""

from __future__ import annotations

import threading

import pytest
from redis.exceptions import LockError, LockNotOwnedError

from tests.conftest import ServerProcess
from tests.frameworks.conftest import Drive

# -- Celery ---------------------------------------------------------------------------------------


def test_celery_delay(drive: Drive) -> None:
    run = drive("celery", "delay")
    assert run["values"] == [i + 100 for i in range(5)]
    assert run["states"] == ["SUCCESS"] * 5
    assert run["exit"] == 0


def test_celery_countdown_and_eta(drive: Drive) -> None:
    """A delayed task runs no earlier than its eta: the time the task recorded is compared
    with the eta the test asked for (the worker's timer waits on the monotonic clock, so
    10 ms of slack for the two clocks' drift). The worker is up before they are sent, so it
    holds them until they are due."""
    run = drive("celery", "countdown_and_eta")
    assert isinstance(run["first"], float)
    assert isinstance(run["ran_by_countdown"], float) and isinstance(run["ran_by_eta"], float)
    assert run["ran_by_countdown"] >= run["sent"] + 1 - 0.01
    assert run["ran_by_eta"] >= run["eta"] - 0.01
    assert run["exit"] == 0


def test_celery_retries(drive: Drive) -> None:
    """A task that fails twice succeeds on its third run; one that always fails gives up
    after ``max_retries`` retries with its own exception. Runs are counted in Redis."""
    run = drive("celery", "retries")
    assert run["flaky"] == {"runs": 3, "retries": 2}
    assert run["doomed_state"] == "FAILURE"
    assert run["doomed_error"]["type"] == "ValueError"
    assert "run 3 fails" in run["doomed_error"]["message"]
    assert run["runs"] == ["3", "3"]
    assert run["exit"] == 0


def test_celery_chord(drive: Drive) -> None:
    """A chord: the group's results reach the callback, whose result is read back, as are
    the header tasks' own results."""
    run = drive("celery", "chord")
    assert run["value"] == 20
    assert run["parts"] == [0, 2, 4, 6, 8]
    assert run["exit"] == 0


# -- dramatiq -------------------------------------------------------------------------------------


def test_dramatiq_enqueue(drive: Drive) -> None:
    run = drive("dramatiq", "enqueue")
    assert run["values"] == [i + 100 for i in range(5)]
    assert run["exit"] == 0


def test_dramatiq_delay(drive: Drive) -> None:
    """A message sent with a delay waits on the delay queue and runs no earlier than the
    ``eta`` the broker stamped on it (both in dramatiq's milliseconds)."""
    run = drive("dramatiq", "delay")
    assert isinstance(run["first"], int)
    assert run["queue"] == "default.DQ"
    assert isinstance(run["ran_at"], int) and run["ran_at"] >= run["eta"]
    assert run["exit"] == 0


def test_dramatiq_retries(drive: Drive) -> None:
    """An actor that fails twice is retried (through the delay queue) and succeeds on its
    third run; the Retries middleware's count and the actor's own agree. One that always
    fails gives up after its one retry with its own error."""
    run = drive("dramatiq", "retries")
    assert run["flaky"] == {"runs": 3, "retries": 2}
    assert run["doomed_error"]["type"] == "ResultFailure"
    assert "run 2 fails" in run["doomed_error"]["message"]
    assert run["runs"] == ["3", "2"]
    assert run["exit"] == 0


# -- RQ's scheduler -------------------------------------------------------------------------------


def test_rq_enqueue_in(drive: Drive) -> None:
    """Jobs scheduled with ``enqueue_in`` wait in the scheduled registry until the scheduler
    moves them to the queue; neither runs before the time the registry holds for it (whole
    seconds, rounded down). The ``unique=True`` one is scheduled by RQ's Lua script, which
    refuses a second job with its ID. The worker is up first, so the scheduler does wait."""
    run = drive("rq", "enqueue_in")
    assert run["duplicate"] is not None and run["duplicate"]["type"] == "DuplicateJobError"
    assert sorted(run["scheduled"]) == sorted(run["ids"])
    assert run["due"] > run["sent"]
    assert isinstance(run["ran_at"], float) and run["ran_at"] >= run["due"]
    assert run["unique_status"] == "finished"
    assert run["unique_value"] == 5
    assert run["scheduled_after"] == []
    assert run["exit"] == 0


def test_rq_retry_with_intervals(drive: Drive) -> None:
    """``Retry(max=3, interval=[...])``: each failed run is scheduled again after its
    interval, and the scheduler brings it back; the job succeeds on its third run, with one
    retry left. The job records when it ran (RQ keeps only the successful result): runs are
    at least the interval apart, less the second RQ's whole-second schedule may round off."""
    run = drive("rq", "retry")
    assert run["value"] == 3
    assert run["retries_left"] == 1
    assert run["result_types"] == ["SUCCESSFUL"]
    runs = run["runs"]
    assert len(runs) == 3
    assert runs[1] - runs[0] >= 2 - 1 and runs[2] - runs[1] >= 2 - 1
    assert run["exit"] == 0


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
