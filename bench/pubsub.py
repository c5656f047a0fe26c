"""PUBLISH fan-out: messages delivered per second to N subscribers of one channel.

    python -m bench.pubsub [--subscribers 100] [--depth 16] [--seconds 3] [--size 32]
                           [--repeat 3] [--servers brook,redis] [--json FILE]

Brook and Redis are started side by side on free ports with persistence off (``bench.run``'s
helpers) and measured in turn, ``--repeat`` times, alternating, so drift of the machine
affects both alike; the table shows the medians and the ratio Brook/Redis.

One run, on one server:

1. ``--subscribers`` connections send ``SUBSCRIBE bench`` and wait for the confirmation.
2. One publisher connection sends ``--depth`` ``PUBLISH bench <payload>`` requests at once
   (payload ``--size`` bytes) and the next batch when all their replies have arrived, as
   ``redis-benchmark -P`` pipelines.
3. One ``selectors`` (epoll) loop reads the publisher and every subscriber, each socket with its
   own ``hiredis.Reader``; every message is parsed and checked to be a ``message`` on
   ``bench``. After a warm-up of 0.5 s, messages delivered during ``--seconds`` are counted:
   delivered per second is the figure (it is also PUBLISH/s x subscribers).
4. Then the publisher stops, every subscriber must receive exactly what was published (each
   PUBLISH reply says how many received it; checked), and the server's CPU seconds over the
   window are recorded (``/proc/<pid>/stat``).

The client is one Python process and thread; its CPU time over the window is printed too: when
it reaches the window's length the client, not the server, is the limit (on a 2-core machine the
client and the server share the cores). The second row, server CPU microseconds per delivered
message, does not depend on who the limit is; its ratio column is Redis/Brook, so both ratios
read "Brook as a fraction of Redis".
"""

from __future__ import annotations

import argparse
import json
import platform
import selectors
import socket
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import hiredis

from bench.groups import process_cpu
from bench.herd import pump_selector
from bench.streams import encode

CHANNEL = b"bench"
DEFAULT_SUBSCRIBERS = 100
DEFAULT_DEPTH = 16
DEFAULT_SECONDS = 3.0
DEFAULT_SIZE = 32
WARMUP = 0.5
BROOK_ARGS = ["--save", ""]
STALL_TIMEOUT = 10.0


@dataclass
class FanoutRun:
    server: str
    subscribers: int
    depth: int
    size: int
    seconds: float = 0.0  # the measured window
    delivered: int = 0  # messages received by subscribers within the window
    published: int = 0  # PUBLISH replies received within the window
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.delivered / self.seconds if self.seconds else 0.0

    @property
    def cpu_us_per_message(self) -> float:
        """Server CPU per delivered message: the figure a saturated client cannot hide."""
        return 1e6 * self.server_cpu / self.delivered if self.delivered else 0.0


class Peer:
    """One non-blocking connection and its reply parser."""

    __slots__ = ("sock", "reader", "received")

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = hiredis.Reader()
        self.received = 0

    def call(self, payload: bytes, replies: int) -> list[object]:
        """Blocking request/replies, for the setup steps."""
        self.sock.setblocking(True)
        self.sock.sendall(payload)
        found: list[object] = []
        while len(found) < replies:
            reply = self.reader.gets()
            if reply is False:
                self.reader.feed(self.sock.recv(1 << 16))
                continue
            found.append(reply)
        return found


def fanout_run(name: str, port: int, pid: int, subscribers: int, depth: int, size: int,
               seconds: float) -> FanoutRun:
    result = FanoutRun(name, subscribers, depth, size)
    payload = b"m" * size
    publish = encode("PUBLISH", CHANNEL, payload)
    expected = [b"message", CHANNEL, payload]
    selector = selectors.DefaultSelector()
    subs = [Peer(port) for _ in range(subscribers)]
    publisher = Peer(port)
    try:
        for peer in subs:
            confirmation = peer.call(encode("SUBSCRIBE", CHANNEL), 1)[0]
            if confirmation != [b"subscribe", CHANNEL, 1]:
                raise RuntimeError(f"SUBSCRIBE answered {confirmation!r}")
        for peer in [*subs, publisher]:
            peer.sock.setblocking(False)
            selector.register(peer.sock, selectors.EVENT_READ, peer)
        receivers_total = 0  # sum of PUBLISH replies: what the subscribers must receive
        published = 0
        sent = 0
        batch = publish * depth
        measuring = False
        window_delivered = window_published = 0

        def send_batch() -> None:
            nonlocal sent
            publisher.sock.send(batch)
            sent += depth

        def consume(peer: Peer, chunk: bytes) -> None:
            nonlocal receivers_total, published, window_delivered, window_published
            peer.reader.feed(chunk)
            gets = peer.reader.gets
            if peer is publisher:
                answered = 0
                while (reply := gets()) is not False:
                    if not isinstance(reply, int):
                        raise RuntimeError(f"PUBLISH answered {reply!r}")
                    receivers_total += reply
                    answered += 1
                published += answered
                if measuring:
                    window_published += answered
                if sending and published == sent:
                    send_batch()
                return
            count = 0
            while (reply := gets()) is not False:
                if reply != expected:
                    raise RuntimeError(f"subscriber received {reply!r:.200}")
                count += 1
            peer.received += count
            if measuring:
                window_delivered += count

        def pump(timeout: float) -> bool:
            return pump_selector(selector, consume, timeout, name)

        sending = True
        send_batch()
        warm_until = time.perf_counter() + WARMUP
        while time.perf_counter() < warm_until:
            pump(STALL_TIMEOUT)
        measuring = True
        cpu_before = process_cpu(pid)
        client_before = time.process_time()
        started = time.perf_counter()
        stop_at = started + seconds
        while time.perf_counter() < stop_at:
            if not pump(STALL_TIMEOUT):
                raise RuntimeError("stalled: nothing to read")
        result.seconds = time.perf_counter() - started
        result.server_cpu = process_cpu(pid) - cpu_before
        result.client_cpu = time.process_time() - client_before
        measuring = False
        result.delivered, result.published = window_delivered, window_published
        # Drain: the last requests' replies, then every message they caused.
        sending = False
        deadline = time.monotonic() + STALL_TIMEOUT
        while published < sent or sum(p.received for p in subs) < receivers_total:
            pump(0.05)
            if time.monotonic() > deadline:
                break
        received = sum(peer.received for peer in subs)
        if received != receivers_total:
            result.problems.append(f"{received} messages received, PUBLISH replies say "
                                   f"{receivers_total}")
        if receivers_total != published * subscribers:
            result.problems.append(f"{published} PUBLISH reached {receivers_total} receivers, "
                                   f"expected {published * subscribers}")
    except (RuntimeError, OSError) as exc:
        result.problems.append(str(exc))
    finally:
        for peer in [*subs, publisher]:
            peer.sock.close()
        selector.close()
    return result


def run_fanout(servers: tuple[str, ...], workdir: Path, repeat: int, subscribers: int,
               depth: int, size: int, seconds: float) -> list[FanoutRun]:
    """Both servers started once; ``repeat`` runs each, alternating."""
    from bench import run as harness

    targets = harness.start_targets(workdir, BROOK_ARGS, servers)
    runs: list[FanoutRun] = []
    try:
        for _ in range(repeat):
            for target in targets:
                run = fanout_run(target.name, target.port, target.process.pid, subscribers,
                                 depth, size, seconds)
                runs.append(run)
                status = "ok" if not run.problems else "FAILED: " + "; ".join(run.problems)
                print(f"  {run.server:<6} {run.per_second:>12,.0f} msg/s  "
                      f"({run.published / max(run.seconds, 1e-9):,.0f} PUBLISH/s, server CPU "
                      f"{run.server_cpu:.2f} s, client CPU {run.client_cpu:.2f} s over "
                      f"{run.seconds:.2f} s) {status}", flush=True)
    finally:
        harness.stop_targets(targets)
    return runs


def report(runs: list[FanoutRun], servers: tuple[str, ...], json_path: str | None) -> bool:
    medians = {name: statistics.median([r.per_second for r in runs if r.server == name])
               for name in servers}
    cpu = {name: statistics.median([r.cpu_us_per_message for r in runs if r.server == name])
           for name in servers}
    first = runs[0]
    print()
    print(f"PUBLISH fan-out: {first.subscribers} subscribers, {first.depth} PUBLISH in flight, "
          f"{first.size}-byte messages, median of {len(runs) // len(servers)} runs")
    header = "".join(f"{name:>16}" for name in servers)
    print(f"{'':<22}{header}" + (f"{'ratio':>10}" if len(servers) == 2 else ""))
    row = "".join(f"{medians[name]:>16,.0f}" for name in servers)
    ratio = ""
    if len(servers) == 2 and medians[servers[1]]:
        ratio = f"{medians[servers[0]] / medians[servers[1]]:>10.2f}"
    print(f"{'delivered msg/s':<22}{row}{ratio}")
    row = "".join(f"{cpu[name]:>16.3f}" for name in servers)
    ratio = ""
    if len(servers) == 2 and cpu[servers[0]]:
        ratio = f"{cpu[servers[1]] / cpu[servers[0]]:>10.2f}"
    print(f"{'server CPU us/msg':<22}{row}{ratio}")
    if json_path:
        Path(json_path).write_text(json.dumps({
            "machine": platform.platform(),
            "medians": medians,
            "server_cpu_us_per_message": cpu,
            "runs": [asdict(r) | {"per_second": r.per_second,
                                  "cpu_us_per_message": r.cpu_us_per_message} for r in runs],
        }, indent=2))
    return all(not r.problems for r in runs)


def main(argv: list[str] | None = None) -> None:
    from bench import run as harness

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", type=int, default=DEFAULT_SUBSCRIBERS)
    parser.add_argument("--depth", type=int, default=DEFAULT_DEPTH,
                        help="PUBLISH requests in flight")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="payload bytes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--servers", default=",".join(harness.SERVERS),
                        help="brook,redis (default), or one of them alone")
    parser.add_argument("--json", help="write the medians and every run to this file")
    options = parser.parse_args(argv)
    servers = harness.parse_servers(options.servers)
    with tempfile.TemporaryDirectory() as workdir:
        runs = run_fanout(servers, Path(workdir), options.repeat, options.subscribers,
                          options.depth, options.size, options.seconds)
    if not report(runs, servers, options.json):
        sys.exit(1)


if __name__ == "__main__":
    main()
