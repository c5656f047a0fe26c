"""Slow clients (slowloris): a normal client's round trips beside N slow or idle connections.

    python -m bench.slowloris [--crowds 0,1000,5000] [--requests 2000] [--rate 1000]
                              [--interval 1.0] [--no-expiry] [--repeat 1]
                              [--servers brook,redis] [--json FILE]
    python -m bench.run --suite slowloris [--repeat 3]

Brook and Redis are started side by side on free ports with persistence off (``bench.run``'s
helpers) and measured in turn, alternating, so drift of the machine affects both alike. For each
crowd size N (``--crowds``), on each server:

1. A crowd process (its own process, so that its sends never compete with the measuring client
   for the GIL) opens N connections in batches the server accepts before the next. Half are
   tricklers: each sends one byte of a request every ``--interval`` seconds (the sends are
   spread evenly over the interval), a ``SET`` whose value is declared as 1 MB long, so the
   request never completes. A quarter send a partial request once and then nothing; a quarter
   connect and send nothing.
2. After one interval (every trickler is mid-request) and 100 warm-up requests, the normal
   client sends ``--requests`` requests one at a time (SET, GET, XADD in turn; every reply
   checked), paced at ``--rate`` per second so that the window spans the trickle and the
   servers' once-a-second client checks, and times each round trip: p50, p99 and max.
3. ``used_cpu_sys + used_cpu_user`` (``INFO cpu``) before and after the timed requests: server
   CPU per normal request at that rate, which includes the work the slow clients cost the
   server meanwhile (their reads, the periodic client checks).
4. The crowd stops; no slow connection may have been answered or closed (checked), and the
   server's ``connected_clients`` must return to what it was before (every socket freed).

Then, unless ``--no-expiry``, for each N > 0 the "timing out" rows: N connections that send
nothing, ``CONFIG SET timeout 1``, and the same paced round trips until the server has closed
the whole crowd: p99 and max of those round trips (what closing the crowd costs everybody
else) and how long the server took to close them all. Redis closes idle clients a slice per
``clientsCron`` tick (``numclients/hz``); a server that closes them all in one pass shows it
in the max.

N = 0 is the baseline: read the growth with N down each server's column and the Brook/Redis
column across. The client is Python; on a 2-core machine the client, the crowd process and the
server share the cores, so absolute latencies include scheduling (max is the noisiest row) and
the ratios are what to compare. The RLIMIT_NOFILE soft limit is raised to the hard limit first
(the servers inherit it); a crowd the limit cannot hold is skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection as Pipe
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

import hiredis

from bench.herd import info, raise_fd_limit, server_cpu
from bench.streams import Connection, encode

SLOWLORIS_TEST = "slowloris"
SLOWLORIS_TESTS = (SLOWLORIS_TEST,)
DEFAULT_CROWDS = (0, 1000, 5000)
DEFAULT_REQUESTS = 2_000
DEFAULT_RATE = 1_000.0  # normal requests per second
DEFAULT_INTERVAL = 1.0  # seconds between one trickler's bytes
WARMUP_REQUESTS = 100
BROOK_ARGS = ["--save", ""]
CONNECT_BATCH = 200  # connections opened before waiting for the server to accept them
SPARE_FDS = 200  # descriptors the bench needs besides the crowd's
STALL_TIMEOUT = 60.0  # seconds before a wait for the server is declared stuck


@dataclass
class SlowRun:
    """One measurement: a server, a crowd size, the normal client's latencies and CPU."""

    server: str
    crowd: int
    kind: str  # "slow": the mixed crowd stays; "expiry": a silent crowd meets ``timeout 1``
    requests: int
    rate: float  # normal requests per second (paced)
    interval: float
    latencies_us: list[float] = field(default_factory=list, repr=False)
    # The timed requests' wall time; expiry: from CONFIG SET timeout 1 until the server had
    # closed the whole crowd.
    seconds: float = 0.0
    server_cpu: float = 0.0  # INFO cpu difference over the timed requests, seconds
    trickled: int = 0  # one-byte sends the crowd made during the timed requests
    problems: list[str] = field(default_factory=list)

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies_us)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_us) if self.latencies_us else 0.0

    @property
    def p99(self) -> float:
        return self.percentile(0.99)

    @property
    def max(self) -> float:
        return max(self.latencies_us, default=0.0)

    @property
    def cpu_us_per_request(self) -> float:
        return 1e6 * self.server_cpu / self.requests

    @property
    def ok(self) -> bool:
        return not self.problems


def connected_clients(conn: Connection) -> int:
    return int(info(conn, "clients")["connected_clients"])


def wait_clients(conn: Connection, wanted: str, test: Callable[[int], bool]) -> None:
    """Poll ``connected_clients`` until ``test`` holds (``wanted`` says what, for the error)."""
    deadline = time.monotonic() + STALL_TIMEOUT
    while not test(connected_clients(conn)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"connected_clients never became {wanted}")
        time.sleep(0.01)


# -- the crowd (its own process) ----------------------------------------------------------------


def trickle_bytes(index: int) -> bytes:
    """The start of a request that never completes in a run: a SET of a 1 MB value."""
    return b"*3\r\n$3\r\nSET\r\n$%d\r\nslow:%d\r\n$1000000\r\n" % (len(b"%d" % index) + 5, index)


def unanswered(sock: socket.socket) -> bool:
    """Nothing was sent to this slow connection and it is still open."""
    sock.setblocking(False)
    try:
        sock.recv(1 << 16)  # a reply, or b"" for a close
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def crowd_main(port: int, size: int, interval: float, mixed: bool, pipe: Pipe,
               trickled: Synchronized) -> None:  # type: ignore[type-arg]
    """Open the crowd, say ready, trickle until told to stop, check it, close it, report.
    Not ``mixed``: every connection is silent, and the server is expected to close them."""
    try:
        control = Connection(port)
        base = connected_clients(control)
        socks: list[socket.socket] = []
        while len(socks) < size:
            for _ in range(min(CONNECT_BATCH, size - len(socks))):
                socks.append(socket.create_connection(("127.0.0.1", port), timeout=STALL_TIMEOUT))
            expected = base + len(socks)
            wait_clients(control, f">= {expected}",
                         lambda count, expected=expected: count >= expected)
        tricklers = socks[: size // 2] if mixed else []
        partials = socks[size // 2: size * 3 // 4] if mixed else []
        for index, sock in enumerate(partials):
            sock.sendall(encode("SET", f"part:{index}", "value")[:20])
        heads = [trickle_bytes(index) for index in range(len(tricklers))]
        positions = [0] * len(tricklers)
        pipe.send(("ready", len(socks)))
        started = time.perf_counter()
        sent = 0
        count = len(tricklers)
        while not pipe.poll(0.002):
            due = int((time.perf_counter() - started) / interval * count) if count else 0
            while sent < due:
                index = sent % count
                position = positions[index]
                head = heads[index]
                tricklers[index].send(head[position:position + 1] if position < len(head) else b"x")
                positions[index] = position + 1
                sent += 1
            trickled.value = sent
        pipe.recv()
        touched = sum(1 for sock in socks if not unanswered(sock)) if mixed else 0
        for sock in socks:
            sock.close()
        control.close()
        pipe.send(("done", touched))
    except Exception as exc:  # reported to the parent, which records it as the run's problem
        pipe.send(("error", f"{type(exc).__name__}: {exc}"))


# -- the normal client ----------------------------------------------------------------------------


class NormalClient:
    """SET, GET, XADD in turn, one at a time; every reply checked."""

    def __init__(self, port: int) -> None:
        self.conn = Connection(port)
        self.reader = hiredis.Reader()
        self.index = 0

    def round_trip(self) -> float:
        """One request and its reply; returns the round trip in microseconds."""
        index = self.index
        self.index += 1
        kind = index % 3
        key = b"normal:%d" % (index % 1000)
        if kind == 0:
            payload = encode("SET", key, b"v%d" % index)
        elif kind == 1:
            payload = encode("GET", b"normal:%d" % ((index - 1) % 1000))
        else:
            payload = encode("XADD", "normal:stream", "MAXLEN", "~", 1000, "*", "n", index)
        sock, reader = self.conn.sock, self.reader
        started = time.perf_counter()
        sock.sendall(payload)
        while (reply := reader.gets()) is False:
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the server closed the normal client")
            reader.feed(chunk)
        elapsed = time.perf_counter() - started
        expected: object = {0: b"OK", 1: b"v%d" % (index - 1)}.get(kind)
        if kind == 2 and not (isinstance(reply, bytes) and b"-" in reply):
            raise RuntimeError(f"XADD answered {reply!r}")
        if expected is not None and reply != expected:
            raise RuntimeError(f"request {index} answered {reply!r}, expected {expected!r}")
        return elapsed * 1e6


class Crowd:
    """The crowd process, driven from the measuring process through a pipe."""

    def __init__(self, port: int, size: int, interval: float, mixed: bool) -> None:
        context = multiprocessing.get_context("fork")
        self.pipe, child_pipe = context.Pipe()
        self.trickled = context.Value("q", 0, lock=False)
        self.process = context.Process(
            target=crowd_main, args=(port, size, interval, mixed, child_pipe, self.trickled))
        self.process.start()
        try:
            self._expect("ready", "connect")
        except BaseException:
            self.process.kill()
            self.process.join()
            raise

    def _expect(self, word: str, what: str) -> object:
        if not self.pipe.poll(STALL_TIMEOUT):
            raise RuntimeError(f"the crowd did not {what}")
        message = self.pipe.recv()
        if message[0] != word:
            raise RuntimeError(f"crowd: {message[1]}")
        return message[1]

    def stop(self) -> int:
        """Stop it; returns how many of its connections were answered or closed."""
        self.pipe.send("stop")
        touched = self._expect("done", "stop")
        assert isinstance(touched, int)
        return touched

    def join(self) -> None:
        self.process.join(STALL_TIMEOUT)
        if self.process.is_alive():
            self.process.kill()


def paced(normal: NormalClient, rate: float, requests: int | None,
          until: Callable[[], bool] | None = None) -> tuple[list[float], float]:
    """Round trips at ``rate`` per second: ``requests`` of them, or until ``until()`` (asked
    every 20 ms); returns the round trips (µs) and the wall time. Paced, so that the window
    spans the trickle and the servers' once-a-second client checks, and server CPU per request
    is at the same request rate on both."""
    latencies: list[float] = []
    started = time.perf_counter()
    next_check = started
    deadline = started + STALL_TIMEOUT
    while requests is None or len(latencies) < requests:
        now = time.perf_counter()
        if until is not None and now >= next_check:
            if until():
                break
            if now > deadline:
                raise RuntimeError(f"still waiting after {STALL_TIMEOUT:.0f} s")
            next_check = now + 0.02
        delay = started + len(latencies) / rate - now
        if delay > 0:
            time.sleep(delay)
        latencies.append(normal.round_trip())
    return latencies, time.perf_counter() - started


def slow_run(name: str, port: int, crowd: int, requests: int, rate: float,
             interval: float) -> SlowRun:
    """One measurement beside the mixed crowd (see the module docstring)."""
    result = SlowRun(name, crowd, "slow", requests, rate, interval)
    control = Connection(port)
    normal = NormalClient(port)
    slow = None
    try:
        normal.round_trip()  # the server has accepted both connections before they are counted
        base = connected_clients(control)
        if crowd:
            slow = Crowd(port, crowd, interval, mixed=True)
            time.sleep(interval)  # every trickler is now mid-request
        for _ in range(WARMUP_REQUESTS):
            normal.round_trip()
        trickled_before = slow.trickled.value if slow else 0
        cpu_before = server_cpu(control)
        result.latencies_us, result.seconds = paced(normal, rate, requests)
        result.server_cpu = server_cpu(control) - cpu_before
        result.trickled = (slow.trickled.value if slow else 0) - trickled_before
        if slow is not None:
            expected = base + crowd + 1  # the crowd's own control connection
            if (count := connected_clients(control)) != expected:
                result.problems.append(f"connected_clients is {count}, expected {expected}")
            if touched := slow.stop():
                result.problems.append(f"{touched} slow connections were answered or closed")
            wait_clients(control, str(base), lambda count: count == base)
    except (RuntimeError, OSError) as exc:
        result.problems.append(str(exc))
    finally:
        if slow is not None:
            slow.join()
        normal.conn.close()
        control.close()
    return result


def expiry_run(name: str, port: int, crowd: int, rate: float) -> SlowRun:
    """A silent crowd, then ``CONFIG SET timeout 1``: the normal client's round trips while the
    server closes the crowd, and how long it takes to close it all."""
    result = SlowRun(name, crowd, "expiry", 0, rate, 0.0)
    control = Connection(port)
    normal = NormalClient(port)
    silent = None
    try:
        normal.round_trip()
        base = connected_clients(control)
        silent = Crowd(port, crowd, 1.0, mixed=False)
        for _ in range(WARMUP_REQUESTS):
            normal.round_trip()
        control.check("CONFIG", "SET", "timeout", "1")
        # The control connection asks every 20 ms, so it is never idle; the crowd's own
        # control connection goes with the crowd.
        result.latencies_us, result.seconds = paced(
            normal, rate, None, lambda: connected_clients(control) <= base)
        result.requests = len(result.latencies_us)
        control.check("CONFIG", "SET", "timeout", "0")
        silent.stop()
    except (RuntimeError, OSError) as exc:
        result.problems.append(str(exc))
        with contextlib.suppress(OSError):  # the control connection may have timed out too
            control.call("CONFIG", "SET", "timeout", "0")
    finally:
        if silent is not None:
            silent.join()
        normal.conn.close()
        control.close()
    return result


def run_slowloris(crowds: list[int], requests: int, rate: float, interval: float,
                  servers: tuple[str, ...], workdir: Path, repeat: int = 1,
                  baseline: str | None = None, expiry: bool = True) -> list[SlowRun]:
    """Both servers started once; every crowd size ``repeat`` times on each, alternating;
    then (``expiry``) every non-zero size as a silent crowd that times out."""
    from bench import run as harness  # here: bench.run imports this module for --suite

    limit = raise_fd_limit()
    fitting = [crowd for crowd in crowds if crowd + SPARE_FDS <= limit]
    for crowd in sorted(set(crowds) - set(fitting)):
        print(f"skipped: a crowd of {crowd:,} needs more than RLIMIT_NOFILE {limit}", flush=True)
    targets = harness.start_targets(workdir, BROOK_ARGS, servers, baseline)
    runs: list[SlowRun] = []
    try:
        for crowd in fitting:
            for _ in range(repeat):
                for target in targets:
                    run = slow_run(target.name, target.port, crowd, requests, rate, interval)
                    runs.append(run)
                    print(describe(run), flush=True)
        for crowd in (crowd for crowd in fitting if crowd and expiry):
            for _ in range(repeat):
                for target in targets:
                    run = expiry_run(target.name, target.port, crowd, rate)
                    runs.append(run)
                    print(describe(run), flush=True)
    finally:
        harness.stop_targets(targets)
    return runs


def describe(run: SlowRun) -> str:
    status = "ok" if run.ok else "FAILED: " + "; ".join(run.problems)
    wall = max(run.seconds, 1e-9)
    if run.kind == "expiry":
        return (f"N={run.crowd:<5} {run.server:<6} timing out: p50 {run.p50:7.0f} µs  p99 "
                f"{run.p99:7.0f} µs  max {run.max:7.0f} µs  all closed after {run.seconds:.2f} s "
                f"({run.requests} requests)  {status}")
    return (f"N={run.crowd:<5} {run.server:<6} p50 {run.p50:7.0f} µs  p99 {run.p99:7.0f} µs  "
            f"max {run.max:7.0f} µs  CPU {run.cpu_us_per_request:6.1f} µs/req  "
            f"({run.trickled / wall:,.0f} slow reads/s, server CPU "
            f"{100 * run.server_cpu / wall:3.0f}% over {run.seconds:.2f} s)  {status}")


def rows(runs: list[SlowRun]) -> dict[str, dict[str, list[float]]]:
    """``bench.run``-style rows: label -> server -> figures of each run that passed."""
    result: dict[str, dict[str, list[float]]] = {}
    for run in runs:
        if run.kind == "expiry":
            title = f"{run.crowd:,} idle connections timing out"
            measures = (("p99 µs", run.p99), ("max µs", run.max),
                        ("s until all closed", run.seconds))
        else:
            title = f"{run.crowd:,} slow connections"
            measures = (("p50 µs", run.p50), ("p99 µs", run.p99), ("max µs", run.max),
                        ("server CPU µs/req", run.cpu_us_per_request))
        for measure, value in measures:
            label = f"{title}: {measure}"
            values = result.setdefault(label, {}).setdefault(run.server, [])
            if run.ok:
                values.append(value)
    for row in result.values():
        for values in row.values():
            if not values:  # every run failed (reported below the table): shown as nan
                values.append(float("nan"))
    return result


def heading(runs: list[SlowRun]) -> str:
    first = runs[0]
    repeats = sum(1 for run in runs if (run.server, run.crowd, run.kind)
                  == (first.server, first.crowd, first.kind))
    text = (f"Slow clients: {first.requests:,} normal round trips (SET/GET/XADD, one at a time, "
            f"{first.rate:,.0f}/s) beside N connections (1/2 trickling one byte every "
            f"{first.interval:g} s, 1/4 stopped mid-request, 1/4 silent)")
    if any(run.kind == "expiry" for run in runs):
        text += (f"; timing out: N silent connections, CONFIG SET timeout 1, the same round "
                 f"trips at {first.rate:,.0f}/s until the server has closed them all")
    return text + f"; median of {repeats} run{'s' if repeats > 1 else ''}."


def report(runs: list[SlowRun], json_path: str | None) -> bool:
    """Prints the table (and writes ``json_path``); True if every run passed its checks."""
    from bench import run as harness  # here: bench.run imports this module for --suite

    print()
    print(f"Machine: {harness.machine_description(clients=None)}")
    print(heading(runs))
    print()
    print(harness.markdown_table(rows(runs), "measure", ""))
    failed = [run for run in runs if not run.ok]
    for run in failed:
        print(f"\nN={run.crowd} {run.server} FAILED: " + "; ".join(run.problems))
    if json_path:
        data = {"rows": rows(runs),
                "runs": [asdict(run) | {"p50": run.p50, "p99": run.p99, "max": run.max,
                                        "cpu_us_per_request": run.cpu_us_per_request}
                         for run in runs]}
        for entry in data["runs"]:
            del entry["latencies_us"]
        Path(json_path).write_text(json.dumps(data, indent=2))
    return not failed


def main(argv: list[str] | None = None) -> None:
    from bench import run as harness  # here: bench.run imports this module for --suite

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crowds", default=",".join(map(str, DEFAULT_CROWDS)),
                        help="comma-separated numbers of slow connections")
    parser.add_argument("--requests", type=int, default=DEFAULT_REQUESTS,
                        help="timed round trips of the normal client per run")
    parser.add_argument("--rate", type=float, default=DEFAULT_RATE,
                        help="normal requests per second (each sent on its slot, or at once "
                             "when the previous reply came late)")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL,
                        help="seconds between one trickler's bytes")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per size and server (alternating); the table shows medians")
    parser.add_argument("--servers", default=",".join(harness.SERVERS),
                        help="brook,redis (default), or one of them alone")
    parser.add_argument("--no-expiry", action="store_true",
                        help="skip the rows of a silent crowd timing out")
    parser.add_argument("--json", help="write the rows and every run's figures to this file")
    options = parser.parse_args(argv)
    servers = harness.parse_servers(options.servers)
    crowds = [int(crowd) for crowd in options.crowds.split(",")]
    with tempfile.TemporaryDirectory() as workdir:
        runs = run_slowloris(crowds, options.requests, options.rate, options.interval, servers,
                             Path(workdir), options.repeat, expiry=not options.no_expiry)
    if not runs or not report(runs, options.json):
        sys.exit(1)


if __name__ == "__main__":
    main()
