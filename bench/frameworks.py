"""Job frameworks on Brook and on redis-server: server CPU per job, side by side in one run.

    python -m bench.frameworks [--frameworks rq,celery,dramatiq,arq,bullmq,saq,huey,taskiq]
                               [--jobs 2000] [--repeat 3] [--workers 1,8] [--commandstats]

For each framework, each worker count in ``--workers`` and each of ``--repeat`` rounds, Brook
and redis-server take turns (one fresh pair of servers per framework, persistence off, started
by ``bench.run``'s helpers; FLUSHALL before every run). A run:

1. Starts the framework's own worker, unchanged, that many times (``--workers 8``: eight worker
   processes side by side): ``rq worker`` (SimpleWorker), ``celery worker --pool threads``,
   ``dramatiq --processes 1``, ``arq``, ``saq``, ``huey_consumer``, ``taskiq worker --workers
   1``, and for BullMQ (whose Python package has no CLI) a script that starts ``bullmq.Worker``.
   Each keeps its framework's default concurrency inside the process.
2. Starts one producer (a subprocess). It sends one job and waits for its result, so a worker
   is up; the bench then waits until the workers' processes are idle (all started).
3. Reads the server's CPU time (user + system, ``/proc/<pid>/stat``); the producer enqueues
   ``--jobs`` jobs (``add(i, 1)``), one call at a time, and waits until all are done through
   the framework's own API: RQ's and BullMQ's completed counts (polled every 50 ms), Celery's
   ``AsyncResult.get`` (the result backend's pub/sub), dramatiq's ``get_result(block=True)``,
   arq's ``Job.result``, saq's ``Job.refresh(until_complete)``, huey's ``Result.get`` and
   taskiq's ``wait_result``; where waiting is per job, reading the results is part of the
   figure. The server's CPU time is read again.
4. Every job's result is read back and checked (outside the measurement).

Rows: jobs/s end to end (first enqueue to last job seen done) and server CPU µs per job (the
difference of the two readings divided by ``--jobs``), medians of ``--repeat``, and Brook/Redis.
CPU per job is the figure to trust on a shared machine; jobs/s also depends on the workers'
own CPU, the polling intervals of each framework and what else runs. ``--commandstats`` prints,
for every framework, the commands the server ran per job (INFO commandstats of the last round)
and what each cost on either server.

Every framework gets a virtualenv of its own under ``.bench-envs/<framework>/``, the one the
framework tests use too (``bench.envs``: made on first use with the framework's newest release
and the redis-py its own requirements resolve to), and the producer and workers run with its
python; the table's heading names the releases each environment holds. The producer, the
workers and the jobs are all this module (imported as ``bench.frameworks``; it imports nothing
outside the standard library until a framework asks for its app), so the same file runs in
every environment.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.envs import framework_python, versions

ROOT = Path(__file__).resolve().parent.parent
QUEUE = "bench"
DEFAULT_JOBS = 2_000
DEFAULT_WORKERS = (1, 8)
PROTOCOL = "BENCH "  # the producer's lines to the bench start with this; anything else is log
POLL = 0.05  # seconds between completion polls where the framework's API is a count
READY_TIMEOUT = 120.0  # seconds for the workers and producer to start and run the first job
SETTLE_TIMEOUT = 60.0  # seconds for the workers to go idle after starting
IDLE_SHARE = 0.1  # workers count as idle below this share of one core


def add(a: int, b: int) -> int:
    """The job: trivial, so that the figure is the framework's and the server's work."""
    return a + b


async def arq_add(ctx: dict[str, Any], a: int, b: int) -> int:
    return a + b


async def saq_add(ctx: dict[str, Any], *, a: int, b: int) -> int:
    return a + b


async def taskiq_add(a: int, b: int) -> int:
    return a + b


async def bullmq_add(job: Any, token: str) -> int:
    return int(job.data["a"]) + int(job.data["b"])


# ---------------------------------------------------------------------------------------------
# The frameworks' apps, built for the server on BENCH_PORT when a worker CLI (or the producer)
# first asks this module for them (PEP 562 ``__getattr__``).


def server_url(port: int) -> str:
    return f"redis://127.0.0.1:{port}/0"


def env_port() -> int:
    return int(os.environ["BENCH_PORT"])


def build_celery(port: int) -> Any:
    from celery import Celery

    app = Celery("bench", broker=server_url(port), backend=server_url(port),
                 set_as_current=False)
    app.conf.update(broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)
    app.task(name="bench.add")(add)
    return app


def build_dramatiq(port: int) -> Any:
    import dramatiq
    import redis
    from dramatiq import actor
    from dramatiq.brokers.redis import RedisBroker
    from dramatiq.results import Results
    from dramatiq.results.backends import RedisBackend

    broker = RedisBroker(host="127.0.0.1", port=port)
    broker.add_middleware(Results(backend=RedisBackend(client=redis.Redis(port=port))))
    actor(add, actor_name="add", broker=broker, store_results=True)
    dramatiq.set_broker(broker)  # Message.get_result finds the results backend through it
    return broker


def build_arq(port: int) -> type:
    from arq.connections import RedisSettings

    return type("ArqSettings", (), {
        "functions": [arq_add],
        "redis_settings": RedisSettings(host="127.0.0.1", port=port),
    })


def huey_with_task(port: int) -> tuple[Any, Any]:
    """The huey instance and its task (the producer calls the task to enqueue)."""
    from huey import RedisHuey

    huey = RedisHuey("bench", host="127.0.0.1", port=port)
    return huey, huey.task(name="add")(add)


def build_huey(port: int) -> Any:
    return huey_with_task(port)[0]


def build_saq(port: int) -> dict[str, Any]:
    from saq import Queue

    return {"queue": Queue.from_url(server_url(port)), "functions": [saq_add]}


def taskiq_with_task(port: int) -> tuple[Any, Any]:
    """taskiq-redis's stream broker (XADD, XREADGROUP, XACK) with its Redis result backend,
    and the task."""
    from taskiq_redis import RedisAsyncResultBackend, RedisStreamBroker

    broker = RedisStreamBroker(server_url(port)).with_result_backend(
        RedisAsyncResultBackend(server_url(port)))
    return broker, broker.task(task_name="add")(taskiq_add)


def build_taskiq(port: int) -> Any:
    return taskiq_with_task(port)[0]


APPS: dict[str, Callable[[int], Any]] = {
    "celery_app": build_celery,
    "dramatiq_broker": build_dramatiq,
    "ArqSettings": build_arq,
    "huey_app": build_huey,
    "saq_settings": build_saq,
    "taskiq_broker": build_taskiq,
}


def __getattr__(name: str) -> Any:
    """``bench.frameworks:celery_app`` and the like, for the workers' CLIs."""
    if name not in APPS:
        raise AttributeError(name)
    value = APPS[name](env_port())
    globals()[name] = value
    return value


# ---------------------------------------------------------------------------------------------
# Producers: enqueue, wait through the framework's API, read results. They run in the
# framework's environment (``--drive``), started by the bench.


class Producer:
    """One framework's client side: ``submit`` enqueues ``add(i, 1)`` for each i, ``wait``
    returns once all are done, ``results`` gives each job's return value in order."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.loop = asyncio.new_event_loop()

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def submit(self, values: range) -> None:
        raise NotImplementedError

    def wait(self, deadline: float) -> None:
        raise NotImplementedError

    def results(self) -> list[int]:
        raise NotImplementedError

    def close(self) -> None:
        self.loop.close()


def poll_until(done: Callable[[], bool], deadline: float, what: str) -> None:
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} in time")
        time.sleep(POLL)


def remaining(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.1)


class RqProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        from redis import Redis
        from rq import Queue
        from rq.registry import FailedJobRegistry, FinishedJobRegistry

        self.queue = Queue(QUEUE, connection=Redis(port=port))
        self.finished = FinishedJobRegistry(queue=self.queue)
        self.failed = FailedJobRegistry(queue=self.queue)
        self.jobs: list[Any] = []
        self.base = 0

    def submit(self, values: range) -> None:
        self.base = self.finished.count
        self.jobs = [self.queue.enqueue(f"{__name__}.add", i, 1) for i in values]

    def wait(self, deadline: float) -> None:
        def done() -> bool:
            if self.failed.count:
                raise RuntimeError(f"{self.failed.count} jobs failed")
            return self.finished.count >= self.base + len(self.jobs)
        poll_until(done, deadline, "finished jobs")

    def results(self) -> list[int]:
        return [job.return_value() for job in self.jobs]


class CeleryProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.app = build_celery(port)
        self.handles: list[Any] = []
        self.values: list[int] = []

    def submit(self, values: range) -> None:
        self.handles = [self.app.send_task("bench.add", (i, 1)) for i in values]

    def wait(self, deadline: float) -> None:
        self.values = [handle.get(timeout=remaining(deadline)) for handle in self.handles]

    def results(self) -> list[int]:
        return self.values


class DramatiqProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.actor = build_dramatiq(port).get_actor("add")
        self.messages: list[Any] = []
        self.values: list[int] = []

    def submit(self, values: range) -> None:
        self.messages = [self.actor.send(i, 1) for i in values]

    def wait(self, deadline: float) -> None:
        self.values = [message.get_result(block=True, timeout=int(1000 * remaining(deadline)))
                       for message in self.messages]

    def results(self) -> list[int]:
        return self.values


class ArqProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        from arq import create_pool

        self.pool = self.run(create_pool(build_arq(port).redis_settings))  # type: ignore[attr-defined]
        self.jobs: list[Any] = []
        self.values: list[int] = []

    def submit(self, values: range) -> None:
        async def enqueue() -> list[Any]:
            return [await self.pool.enqueue_job("arq_add", i, 1) for i in values]
        self.jobs = self.run(enqueue())

    def wait(self, deadline: float) -> None:
        async def collect() -> list[int]:
            return [await job.result(timeout=remaining(deadline), poll_delay=POLL)
                    for job in self.jobs]
        self.values = self.run(collect())

    def results(self) -> list[int]:
        return self.values

    def close(self) -> None:
        self.run(self.pool.aclose())
        super().close()


class HueyProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.huey, self.task = huey_with_task(port)
        self.handles: list[Any] = []
        self.values: list[int] = []

    def submit(self, values: range) -> None:
        self.handles = [self.task(i, 1) for i in values]

    def wait(self, deadline: float) -> None:
        self.values = [handle.get(blocking=True, timeout=remaining(deadline))
                       for handle in self.handles]

    def results(self) -> list[int]:
        return self.values


class SaqProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        from saq import Queue

        self.queue = Queue.from_url(server_url(port))
        self.run(self.queue.connect())
        self.jobs: list[Any] = []

    def submit(self, values: range) -> None:
        async def enqueue() -> list[Any]:
            return [await self.queue.enqueue("saq_add", a=i, b=1) for i in values]
        self.jobs = self.run(enqueue())

    def wait(self, deadline: float) -> None:
        """As saq's ``Queue.map`` waits (``Queue.jobs``: one MGET of the jobs not yet done),
        but that MGET only once the last job is done, so polling is not the figure."""
        from saq.job import TERMINAL_STATUSES, Status

        async def collect() -> None:
            pending = [job.key for job in self.jobs]
            while pending:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(pending)} saq jobs not done in time")
                (last,) = await self.queue.jobs(pending[-1:])
                if last is None or last.status not in TERMINAL_STATUSES:
                    await asyncio.sleep(POLL)
                    continue
                still = []
                for key, job in zip(pending, await self.queue.jobs(pending), strict=True):
                    if job is None or job.status not in TERMINAL_STATUSES:
                        still.append(key)
                    elif job.status != Status.COMPLETE:
                        raise RuntimeError(f"saq job {key} is {job.status}")
                    else:
                        self.values[key] = job.result
                pending = still
        self.values: dict[str, int] = {}
        self.run(collect())

    def results(self) -> list[int]:
        return [self.values[job.key] for job in self.jobs]

    def close(self) -> None:
        self.run(self.queue.disconnect())
        super().close()


class TaskiqProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.broker, self.task = taskiq_with_task(port)
        self.run(self.broker.startup())
        self.handles: list[Any] = []
        self.values: list[int] = []

    def submit(self, values: range) -> None:
        async def enqueue() -> list[Any]:
            return [await self.task.kiq(i, 1) for i in values]
        self.handles = self.run(enqueue())

    def wait(self, deadline: float) -> None:
        async def collect() -> list[int]:
            values = []
            for handle in self.handles:
                result = await handle.wait_result(check_interval=POLL,
                                                  timeout=remaining(deadline))
                if result.is_err:
                    raise RuntimeError(f"taskiq task failed: {result.error!r}")
                values.append(result.return_value)
            return values
        self.values = self.run(collect())

    def results(self) -> list[int]:
        return self.values

    def close(self) -> None:
        self.run(self.broker.shutdown())
        super().close()


class BullmqProducer(Producer):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        from bullmq import Queue

        self.queue = Queue(QUEUE, {"connection": server_url(port)})
        self.jobs: list[Any] = []
        self.base = 0

    def submit(self, values: range) -> None:
        async def enqueue() -> list[Any]:
            self.base = await self.queue.getCompletedCount()
            return [await self.queue.add("add", {"a": i, "b": 1}) for i in values]
        self.jobs = self.run(enqueue())

    def wait(self, deadline: float) -> None:
        async def poll() -> None:
            while await self.queue.getCompletedCount() < self.base + len(self.jobs):
                if await self.queue.getFailedCount():
                    raise RuntimeError("BullMQ jobs failed")
                if time.monotonic() > deadline:
                    raise TimeoutError("no completed jobs in time")
                await asyncio.sleep(POLL)
        self.run(poll())

    def results(self) -> list[int]:
        async def fetch() -> list[int]:
            jobs = [await self.queue.getJob(job.id) for job in self.jobs]
            return [int(job.returnvalue) for job in jobs]
        return self.run(fetch())

    def close(self) -> None:
        self.run(self.queue.close())
        super().close()


async def serve_bullmq(port: int) -> None:
    """BullMQ's worker: the Python package has no CLI, so this is the script a user writes
    (``Worker(queue, processor, opts)``, default options), stopped by SIGTERM."""
    from bullmq import Worker

    worker = Worker(QUEUE, bullmq_add, {"connection": server_url(port)})
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await worker.close()


# ---------------------------------------------------------------------------------------------
# The frameworks and their environments.


@dataclass(frozen=True)
class Framework:
    """A framework's producer and worker; its environment is ``bench.envs``'s entry of the
    same name."""

    name: str
    producer: type[Producer]
    worker: Callable[[Path, int, int], list[str]]  # (bin dir, port, index) -> the worker's argv


def console(bin_dir: Path, script: str, *args: str) -> list[str]:
    return [str(bin_dir / script), *args]


FRAMEWORKS = {framework.name: framework for framework in (
    Framework("rq", RqProducer, lambda bin_dir, port, index: console(
        bin_dir, "rq", "worker", "--url", server_url(port), "--worker-class",
        "rq.worker.SimpleWorker", QUEUE)),
    Framework("celery", CeleryProducer, lambda bin_dir, port, index: console(
        bin_dir, "celery", "-A", f"{__name__}:celery_app", "worker", "--pool", "threads", "-n",
        f"bench{index}@%h")),
    Framework("dramatiq", DramatiqProducer, lambda bin_dir, port, index: console(
        bin_dir, "dramatiq", f"{__name__}:dramatiq_broker", "--processes", "1")),
    Framework("arq", ArqProducer, lambda bin_dir, port, index: console(
        bin_dir, "arq", f"{__name__}.ArqSettings")),
    Framework("bullmq", BullmqProducer, lambda bin_dir, port, index: [
        str(bin_dir / "python"), "-m", __name__, "--serve", "bullmq", "--port", str(port)]),
    Framework("saq", SaqProducer, lambda bin_dir, port, index: console(
        bin_dir, "saq", f"{__name__}.saq_settings")),
    Framework("huey", HueyProducer, lambda bin_dir, port, index: console(
        bin_dir, "huey_consumer", f"{__name__}.huey_app")),
    Framework("taskiq", TaskiqProducer, lambda bin_dir, port, index: console(
        bin_dir, "taskiq", "worker", f"{__name__}:taskiq_broker", "--workers", "1")),
)}


# ---------------------------------------------------------------------------------------------
# The producer process (``--drive``): its side of the exchange with the bench.


def say(line: str) -> None:
    print(PROTOCOL + line, flush=True)


def expect(word: str) -> None:
    line = sys.stdin.readline().strip()
    if line != word:
        raise RuntimeError(f"expected {word!r} from the bench, got {line!r}")


def drive(name: str, port: int, jobs: int) -> None:
    """One job first (a worker is up), ``ready``; on ``go`` the measured jobs, ``done`` with
    the seconds they took; on ``verify`` every result checked, ``ok``."""
    producer = FRAMEWORKS[name].producer(port)
    try:
        for attempt in range(3):
            # A job waiting when a worker starts can be lost to a race of the worker's start
            # (saq's startup sweep aborts a job its first dequeue has moved but not yet marked
            # active): the first job is tried again; the measured ones never are.
            try:
                producer.submit(range(1))
                producer.wait(time.monotonic() + READY_TIMEOUT / 3)
                if producer.results() != [1]:
                    raise RuntimeError(f"first job's result: {producer.results()!r}")
                break
            except (RuntimeError, TimeoutError) as exc:
                if attempt == 2:
                    raise
                print(f"first job failed ({exc}); trying again", file=sys.stderr, flush=True)
        say("ready")
        expect("go")
        started = time.perf_counter()
        producer.submit(range(jobs))
        producer.wait(time.monotonic() + READY_TIMEOUT + jobs * 0.1)
        say(f"done {time.perf_counter() - started:.6f}")
        expect("verify")
        results = producer.results()
        wrong = sum(1 for i, value in enumerate(results) if value != i + 1)
        if len(results) != jobs or wrong:
            raise RuntimeError(f"{len(results)} results, {wrong} wrong")
        say("ok")
    finally:
        producer.close()


# ---------------------------------------------------------------------------------------------
# The bench.


@dataclass
class Run:
    framework: str
    server: str
    workers: int
    jobs: int
    seconds: float = 0.0
    server_cpu: float = 0.0
    worker_cpu: float = 0.0
    commandstats: dict[str, tuple[int, float]] = field(default_factory=dict)  # calls, usec
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem

    @property
    def jobs_per_second(self) -> float:
        return self.jobs / self.seconds if self.seconds else 0.0

    @property
    def us_per_job(self) -> float:
        return 1e6 * self.server_cpu / self.jobs


class Lines:
    """Protocol lines from the producer's stdout, each waited for with a deadline."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self.fd = process.stdout.fileno()
        self.buffer = b""

    def next(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            line, newline, rest = self.buffer.partition(b"\n")
            if newline:
                self.buffer = rest
                text = line.decode(errors="replace")
                if text.startswith(PROTOCOL):
                    return text[len(PROTOCOL):]
                continue
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise TimeoutError(f"producer silent for {timeout:.0f} s")
            if select.select([self.fd], [], [], wait)[0]:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise RuntimeError("producer exited")
                self.buffer += chunk


def session_cpu(sessions: set[int]) -> float:
    """CPU seconds (user + system) of every live process in these sessions (the workers and
    what they forked), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) in sessions:
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def settle(sessions: set[int]) -> bool:
    """Wait until the workers are idle (every one has started); False if they never were."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    last = session_cpu(sessions)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = session_cpu(sessions)
        if now - last < 0.5 * IDLE_SHARE:
            return True
        last = now
    return False


def stop_groups(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every worker's process group at once (a warm shutdown), SIGKILL to those
    still there 15 s later."""
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=max(deadline - time.monotonic(), 0.01))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def commandstats(client: Any) -> dict[str, tuple[int, float]]:
    """INFO commandstats: command -> (calls, usec)."""
    return {name.removeprefix("cmdstat_"): (int(stats["calls"]), float(stats["usec"]))
            for name, stats in client.info("commandstats").items()}


def run_once(framework: Framework, python: Path, name: str, port: int, pid: int,
             workers: int, jobs: int, logs: Path) -> Run:
    """One measurement (see the module docstring); a failure is recorded, not raised."""
    import redis

    from bench.groups import process_cpu

    run = Run(framework.name, name, workers, jobs)
    client = redis.Redis(port=port)
    client.flushall()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])), "BENCH_PORT": str(port)}
    prefix = logs / f"{framework.name}-{name}-{workers}"
    started: list[subprocess.Popen[bytes]] = []
    producer_log = Path(f"{prefix}-producer.log")
    try:
        for index in range(workers):
            with open(f"{prefix}-worker{index}.log", "wb") as log:
                started.append(subprocess.Popen(
                    framework.worker(python.parent, port, index), env=env, cwd=ROOT,
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        with open(producer_log, "wb") as log:
            producer = subprocess.Popen(
                [str(python), "-m", __name__, "--drive", framework.name, "--port", str(port),
                 "--jobs", str(jobs)], env=env, cwd=ROOT, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        started.append(producer)
        assert producer.stdin is not None
        lines = Lines(producer)
        ready = lines.next(READY_TIMEOUT)
        if ready != "ready":
            raise RuntimeError(f"producer said {ready!r}")
        sessions = {process.pid for process in started[:-1]}
        if not settle(sessions):
            print(f"  ({framework.name}: workers still busy after {SETTLE_TIMEOUT:.0f} s)")
        client.config_resetstat()
        cpu_before, workers_before = process_cpu(pid), session_cpu(sessions)
        producer.stdin.write(b"go\n")
        producer.stdin.flush()
        done = lines.next(READY_TIMEOUT + jobs * 0.1)
        run.server_cpu = process_cpu(pid) - cpu_before
        run.worker_cpu = session_cpu(sessions) - workers_before
        run.commandstats = commandstats(client)
        if not done.startswith("done "):
            raise RuntimeError(f"producer said {done!r}")
        run.seconds = float(done.split()[1])
        producer.stdin.write(b"verify\n")
        producer.stdin.flush()
        if (verdict := lines.next(READY_TIMEOUT + jobs * 0.05)) != "ok":
            raise RuntimeError(f"producer said {verdict!r}")
    except (RuntimeError, TimeoutError, OSError, redis.RedisError) as exc:
        run.problem = (f"{exc}\n--- producer log:\n{tail(producer_log)}\n--- worker log:\n"
                       f"{tail(Path(f'{prefix}-worker0.log'))}")
    finally:
        stop_groups(started[::-1])
        client.close()
    return run


def describe(run: Run) -> str:
    status = "ok" if run.ok else "FAILED: " + run.problem
    return (f"{run.framework:<9} {run.workers} worker{'s' if run.workers > 1 else ' '} "
            f"{run.server:<5} {run.jobs_per_second:8,.0f} jobs/s  server {run.us_per_job:7.1f} "
            f"µs/job  workers {1e6 * run.worker_cpu / run.jobs:7.0f} µs/job  {status}")


def median(runs: list[Run], server: str, figure: Callable[[Run], float]) -> float | None:
    values = [figure(run) for run in runs if run.server == server and run.ok]
    return statistics.median(values) if values else None


def table(runs: list[Run]) -> str:
    """framework, jobs/s and server CPU µs/job on each server, and Brook/Redis of both."""
    from bench.run import number

    headers = ["framework", "workers", "jobs/s Brook", "jobs/s Redis", "jobs/s Brook/Redis",
               "CPU µs/job Brook", "CPU µs/job Redis", "CPU Brook/Redis"]
    lines = ["| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
    groups: dict[tuple[str, int], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.framework, run.workers), []).append(run)

    def cell(value: float | None) -> str:
        return "failed" if value is None else number(value)

    def ratio(brook: float | None, redis: float | None) -> str:
        return f"{brook / redis:.2f}" if brook is not None and redis else "–"

    for (name, workers), group in groups.items():
        rates = [median(group, server, lambda run: run.jobs_per_second)
                 for server in ("brook", "redis")]
        cpus = [median(group, server, lambda run: run.us_per_job)
                for server in ("brook", "redis")]
        lines.append("| " + " | ".join([name, str(workers), cell(rates[0]), cell(rates[1]),
                                        ratio(*rates), cell(cpus[0]), cell(cpus[1]),
                                        ratio(*cpus)]) + " |")
    return "\n".join(lines)


def command_table(runs: list[Run]) -> str:
    """What the server ran per job (the last passing round of each framework's row), with
    each command's µs per call on either server, biggest Brook total first. These are each
    server's own timings (wall clock, so a descheduled server inflates them), and Brook charges
    serving the clients a push wakes to the push, where Redis charges the woken command."""
    out = []
    latest: dict[tuple[str, int, str], Run] = {}
    for run in runs:
        if run.ok:
            latest[(run.framework, run.workers, run.server)] = run
    for (name, workers, server), run in latest.items():
        if server != "brook" or (name, workers, "redis") not in latest:
            continue
        redis_stats = latest[(name, workers, "redis")].commandstats
        rows = sorted(run.commandstats.items(), key=lambda item: -item[1][1])
        cells = []
        for command, (calls, usec) in rows[:8]:
            other = redis_stats.get(command)
            theirs = f"{other[1] / other[0]:.1f}" if other and other[0] else "–"
            cells.append(f"{command} {calls / run.jobs:.2f}/job {usec / calls:.1f} vs {theirs} µs")
        out.append(f"{name} ({workers} worker{'s' if workers > 1 else ''}): " + "; ".join(cells))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                        help="comma-separated, from: " + ",".join(FRAMEWORKS))
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default=",".join(map(str, DEFAULT_WORKERS)),
                        help="comma-separated worker counts, a row each")
    parser.add_argument("--commandstats", action="store_true",
                        help="print the commands each framework sent per job, and their cost")
    parser.add_argument("--drive", help=argparse.SUPPRESS)  # the producer process
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # BullMQ's worker process
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.drive:
        drive(options.drive, options.port, options.jobs)
        return
    if options.serve == "bullmq":
        asyncio.run(serve_bullmq(options.port))
        return
    names = options.frameworks.split(",")
    if unknown := set(names) - set(FRAMEWORKS):
        sys.exit(f"unknown frameworks: {', '.join(sorted(unknown))}")
    counts = [int(count) for count in options.workers.split(",")]
    bench(names, options.jobs, options.repeat, counts, options.commandstats)


def bench(names: list[str], jobs: int, repeat: int, counts: list[int],
          show_commands: bool) -> None:
    from bench import herd
    from bench.run import SERVERS, machine_description, start_targets, stop_targets

    runs: list[Run] = []
    skipped: dict[str, str] = {}
    releases: dict[str, str] = {}
    herd.raise_fd_limit()
    with tempfile.TemporaryDirectory() as workdir:
        logs = Path(workdir)
        for name in names:
            framework = FRAMEWORKS[name]
            try:
                python = framework_python(name)
                releases[name] = versions(name)
            except (subprocess.SubprocessError, OSError) as exc:
                skipped[name] = f"environment not made: {exc}"
                print(f"{name}: skipped ({skipped[name]})", flush=True)
                continue
            targets = start_targets(
                logs, herd.BROOK_ARGS, SERVERS,
                shared_args=lambda server, name=name: ["--logfile", str(logs / f"{name}-{server}.server.log")])
            try:
                for workers in counts:
                    for _ in range(repeat):
                        for target in targets:
                            run = run_once(framework, python, target.name, target.port,
                                           target.process.pid, workers, jobs, logs)
                            runs.append(run)
                            print(describe(run), flush=True)
            finally:
                stop_targets(targets)
            for server in SERVERS:
                log = logs / f"{name}-{server}.server.log"
                suspicious = [line for line in log.read_text(errors="replace").splitlines()
                              if any(word in line.lower() for word in ("error", "traceback",
                                                                       "exception"))]
                if suspicious:
                    print(f"{name}: {server}'s log has {len(suspicious)} error lines, e.g.:")
                    print("  " + "\n  ".join(suspicious[:5]))
    print()
    print(f"Machine: {machine_description(clients=None)}")
    print(f"{jobs:,} jobs add(i, 1) per run, one producer; medians of {repeat}; server CPU "
          f"(user + system, /proc) per job.")
    for name, text in releases.items():
        print(f"  {name}: {text}")
    print()
    if runs:
        print(table(runs))
    for name, why in skipped.items():
        print(f"{name}: skipped, {why}")
    failed = [run for run in runs if not run.ok]
    for run in failed:
        print(f"\n{run.framework} {run.workers} workers {run.server} FAILED: {run.problem}")
    if show_commands and runs:
        print()
        print("Commands per job (INFO commandstats of the last round), µs per call Brook vs Redis:")
        print(command_table(runs))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    # Run as bench.frameworks, not __main__: the workers import the jobs from that module.
    from bench.frameworks import main as module_main

    module_main()
