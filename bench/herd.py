"""Thundering herd: server CPU per entry delivered to N consumers parked on one consumer group.

    python -m bench.herd [--sizes 1,100,1000,3000] [--entries 5000] [--servers brook,redis]
                         [--repeat 1] [--json FILE]
    python -m bench.run --suite herd [--repeat 3]

For each N in ``--sizes`` (``--repeat`` times; the table shows medians), and for each server in
turn (alternating, so drift of the machine affects both alike), a fresh server is started with persistence off (``bench.run``'s helpers)
and then:

1. ``XGROUP CREATE s g $ MKSTREAM`` on a control connection.
2. N consumer connections each send ``XREADGROUP GROUP g c<I> COUNT 1 BLOCK 0 STREAMS s >``; the
   control connection polls ``INFO clients`` until ``blocked_clients`` equals N, so every
   consumer is parked before anything is measured.
3. ``used_cpu_sys + used_cpu_user`` from ``INFO cpu`` (the "before" reading).
4. A producer connection adds ``--entries`` entries, one ``XADD s * f v`` at a time: the next
   XADD is sent when the previous one's reply arrives. Each consumer, on every delivery,
   immediately sends its XREADGROUP again, so all N stay parked.
5. Once every entry has been delivered, and ``blocked_clients`` is N again (the last re-parks
   processed, so each entry is charged its XADD, its delivery and one re-park), ``INFO cpu``
   is read again. The row is (after - before) / entries: server CPU microseconds per delivered
   entry. The rise with N is the herd: how much work an XADD costs the server for each blocked
   client it could wake but does not serve.

Delivery is checked: exactly ``--entries`` entries delivered, each ID once, every delivered ID
one the producer's XADDs returned, and no nil, empty or error reply to any consumer. The run also
records how many distinct consumers received entries, the wall time (first XADD sent to last
delivery received), the client's own CPU time (it must not be the bottleneck) and the server's
CPU time as ``/proc/<pid>/stat`` sees it (a cross-check on ``INFO cpu``, 10 ms ticks).

The client is one Python process and one thread, up to 3,000+ connections: an epoll
``selectors`` loop over non-blocking sockets, a ``hiredis.Reader`` per connection, every
request pre-encoded (one ``send`` of constant bytes per XADD or re-park). The RLIMIT_NOFILE soft
limit is raised to the hard limit at start; the servers inherit it (Redis sizes ``maxclients``
from it). A run that fails a check or stalls is reported and the others still run; the exit
status is 1 if any did.

Noise: at small N the producer, the server and the consumer ping-pong, so the figure is mostly
wake-ups, and on a small VM it depends on where the scheduler puts the processes. On the 2-core
development VM, Redis at N=1 measured ~40 µs/entry with client and server pinned to one core
and ~77 µs/entry pinned to different cores (every wake-up then crosses CPUs); unpinned runs land
on either. Use ``--repeat`` for figures to compare, and read the growth with N at large N.
"""

from __future__ import annotations

import argparse
import json
import resource
import selectors
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import hiredis

from bench.groups import process_cpu
from bench.streams import KEY, Connection, encode

HERD_TEST = "herd"
HERD_TESTS = (HERD_TEST,)
DEFAULT_SIZES = (1, 100, 1000, 3000)
DEFAULT_ENTRIES = 5_000
GROUP = b"g"
XADD = encode("XADD", KEY, "*", "f", "v")
BROOK_ARGS = ["--save", ""]
CONNECT_BATCH = 100  # consumers connected (and parked) before waiting for the server to catch up
PARK_TIMEOUT = 60.0  # seconds for blocked_clients to reach N
STALL_TIMEOUT = 30.0  # seconds without any reply before a produce phase is declared stuck


def pump_selector(selector: selectors.BaseSelector, consume: Callable[[Any, bytes], None],
                  timeout: float, name: str) -> bool:
    """One epoll round of a benchmark client: every readable socket's bytes go to ``consume``
    with the peer registered as the key's data (which has a ``sock``); False if none was."""
    events = selector.select(timeout)
    for key, _ in events:
        peer = key.data
        try:
            chunk = peer.sock.recv(1 << 16)
        except BlockingIOError:
            continue
        if not chunk:
            raise ConnectionError(f"{name} closed a connection")
        consume(peer, chunk)
    return bool(events)


def park_command(index: int) -> bytes:
    return encode("XREADGROUP", "GROUP", GROUP, b"c%d" % index, "COUNT", 1, "BLOCK", 0,
                  "STREAMS", KEY, ">")


def raise_fd_limit() -> int:
    """Soft RLIMIT_NOFILE := hard limit (inherited by the servers started afterwards)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


def info(conn: Connection, section: str) -> dict[str, str]:
    reply = conn.check("INFO", section)
    assert isinstance(reply, bytes)
    pairs = (line.partition(":") for line in reply.decode().splitlines())
    return {key: value.strip() for key, sep, value in pairs if sep}


def blocked_clients(conn: Connection) -> int:
    return int(info(conn, "clients")["blocked_clients"])


def server_cpu(conn: Connection) -> float:
    """``used_cpu_sys + used_cpu_user`` from one ``INFO cpu``, in seconds."""
    fields = info(conn, "cpu")
    return float(fields["used_cpu_sys"]) + float(fields["used_cpu_user"])


class Peer:
    """One non-blocking connection: its socket, its reply parser, the request it repeats."""

    __slots__ = ("sock", "reader", "request", "index", "ids")

    def __init__(self, sock: socket.socket, request: bytes, index: int) -> None:
        self.sock = sock
        self.reader = hiredis.Reader()
        self.request = request
        self.index = index  # consumer number; -1 for the producer
        self.ids: list[bytes] = []  # entry IDs delivered to this consumer (or XADD replies)

    def send(self) -> None:
        """The (small, constant) request in one non-blocking send: at most one is in flight."""
        if self.sock.send(self.request) != len(self.request):
            raise RuntimeError("partial send on a connection with one request in flight")


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


@dataclass
class HerdRun:
    server: str
    consumers: int
    entries: int
    delivered: int = 0
    duplicates: int = 0
    unknown_ids: int = 0  # delivered IDs no XADD returned
    empty_replies: int = 0  # nil, an empty stream list or an entry list that is not one entry
    error_replies: int = 0
    consumers_served: int = 0  # distinct consumers that received at least one entry
    seconds: float = 0.0  # first XADD sent to last delivery received
    server_cpu: float = 0.0  # INFO cpu difference, seconds
    server_cpu_proc: float = 0.0  # /proc/<pid>/stat difference, seconds
    client_cpu: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def us_per_entry(self) -> float:
        return 1e6 * self.server_cpu / self.entries

    @property
    def ok(self) -> bool:
        return not self.problems


def wait_parked(control: Connection, consumers: int, what: str) -> None:
    deadline = time.monotonic() + PARK_TIMEOUT
    while (blocked := blocked_clients(control)) != consumers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: blocked_clients is {blocked}, expected {consumers}, "
                               f"after {PARK_TIMEOUT:.0f} s")
        time.sleep(0.01)


def park_consumers(port: int, control: Connection, count: int,
                   selector: selectors.BaseSelector) -> list[Peer]:
    """Connect ``count`` consumers and park them all; returns once blocked_clients == count.

    Connections go in batches, each waited for, so the accept backlog never overflows (a
    dropped SYN costs a one-second retransmit) and a server that cannot park fails early.
    """
    peers: list[Peer] = []
    while len(peers) < count:
        for index in range(len(peers), min(len(peers) + CONNECT_BATCH, count)):
            peer = Peer(connect(port), park_command(index), index)
            selector.register(peer.sock, selectors.EVENT_READ, peer)
            peer.send()
            peers.append(peer)
        wait_parked(control, len(peers), "parking consumers")
    return peers


def herd_run(name: str, port: int, pid: int, consumers: int, entries: int) -> HerdRun:
    """One measurement on a fresh server (see the module docstring)."""
    result = HerdRun(name, consumers, entries)
    selector = selectors.DefaultSelector()
    peers: list[Peer] = []
    control = Connection(port)
    try:
        control.check("XGROUP", "CREATE", KEY, GROUP, "$", "MKSTREAM")
        peers = park_consumers(port, control, consumers, selector)
        producer = Peer(connect(port), XADD, -1)
        peers.append(producer)
        selector.register(producer.sock, selectors.EVENT_READ, producer)
        delivered: set[bytes] = set()
        last_delivery = 0.0

        def consume(peer: Peer, chunk: bytes) -> None:
            nonlocal last_delivery
            peer.reader.feed(chunk)
            while (reply := peer.reader.gets()) is not False:
                if peer is producer:
                    if not isinstance(reply, bytes):
                        raise RuntimeError(f"XADD answered {reply!r}")
                    peer.ids.append(reply)
                    if len(peer.ids) < entries:
                        peer.send()
                    continue
                if isinstance(reply, hiredis.ReplyError):
                    result.error_replies += 1
                    result.problems.append(f"consumer c{peer.index}: error {reply}")
                    continue
                # [[b"s", [[id, [b"f", b"v"]]]]]; BLOCK 0 never times out, so None is wrong too.
                entry_id = single_entry_id(reply)
                if entry_id is None:
                    result.empty_replies += 1
                    if result.empty_replies <= 3:
                        result.problems.append(f"consumer c{peer.index}: reply {reply!r:.200}")
                else:
                    if entry_id in delivered:
                        result.duplicates += 1
                    delivered.add(entry_id)
                    peer.ids.append(entry_id)
                    result.delivered += 1
                    last_delivery = time.perf_counter()
                peer.send()  # re-park at once

        def pump(timeout: float) -> bool:
            return pump_selector(selector, consume, timeout, "server")

        cpu_before = server_cpu(control)
        proc_before = process_cpu(pid)
        client_before = time.process_time()
        started = time.perf_counter()
        producer.send()
        while result.delivered < entries:
            if result.empty_replies + result.error_replies > entries:
                result.problems.append("more bad replies than entries; run abandoned")
                break
            if not pump(STALL_TIMEOUT):
                result.problems.append(
                    f"stalled: {len(producer.ids)} XADDs answered, {result.delivered} entries "
                    f"delivered after {time.perf_counter() - started:.1f} s")
                break
        result.seconds = max(last_delivery - started, 0.0)
        result.client_cpu = time.process_time() - client_before
        if result.ok:
            # Every re-park processed before the "after" reading; anything delivered meanwhile
            # is an extra (a duplicate, or an entry never added).
            deadline = time.monotonic() + PARK_TIMEOUT
            while (blocked := blocked_clients(control)) != consumers:
                pump(0.001)
                if time.monotonic() > deadline:
                    result.problems.append(f"after the run blocked_clients is {blocked}, "
                                           f"expected {consumers}")
                    break
        result.server_cpu = server_cpu(control) - cpu_before
        result.server_cpu_proc = process_cpu(pid) - proc_before
        pump(0.05)
        check_delivery(result, producer, peers[:-1], delivered)
    except (RuntimeError, OSError) as exc:
        result.problems.append(str(exc))
    finally:
        for peer in peers:
            peer.sock.close()
        selector.close()
        control.close()
    return result


def single_entry_id(reply: object) -> bytes | None:
    """The ID in a one-stream, one-entry XREADGROUP reply; None for anything else."""
    try:
        ((key, entries),) = reply  # type: ignore[misc]
        ((entry_id, _fields),) = entries
    except (TypeError, ValueError):
        return None
    return entry_id if key == KEY and isinstance(entry_id, bytes) else None


def check_delivery(result: HerdRun, producer: Peer, consumers: list[Peer],
                   delivered: set[bytes]) -> None:
    added = set(producer.ids)
    result.unknown_ids = len(delivered - added)
    result.consumers_served = sum(1 for peer in consumers if peer.ids)
    if len(producer.ids) != result.entries:
        result.problems.append(f"{len(producer.ids)} XADDs answered, expected {result.entries}")
    if result.delivered != result.entries:
        result.problems.append(f"{result.delivered} entries delivered, expected {result.entries}")
    if result.duplicates:
        result.problems.append(f"{result.duplicates} entries delivered more than once")
    if result.unknown_ids:
        result.problems.append(f"{result.unknown_ids} delivered IDs were never added")
    if result.empty_replies:
        result.problems.append(f"{result.empty_replies} nil/empty replies to consumers")
    if added - delivered and result.delivered == result.entries:
        result.problems.append(f"{len(added - delivered)} added entries never delivered")


def run_herd(sizes: list[int], entries: int, servers: tuple[str, ...], workdir: Path,
             repeat: int = 1, baseline: str | None = None) -> list[HerdRun]:
    """Every size, ``repeat`` times, each server in turn on a fresh process; prints each run."""
    from bench import run as harness  # here: bench.run imports this module for --suite herd

    raise_fd_limit()
    runs: list[HerdRun] = []
    for consumers in sizes:
        for _ in range(repeat):
            for name in servers:
                (target,) = harness.start_targets(workdir, BROOK_ARGS, (name,), baseline)
                try:
                    run = herd_run(name, target.port, target.process.pid, consumers, entries)
                finally:
                    target.stop()
                runs.append(run)
                print(describe(run), flush=True)
    return runs


def rows(runs: list[HerdRun]) -> dict[str, dict[str, list[float]]]:
    """``bench.run``-style rows: label -> server -> µs/entry of each run that passed."""
    result: dict[str, dict[str, list[float]]] = {}
    for run in runs:
        label = f"herd, {run.consumers:,} consumers parked (server CPU µs/entry)"
        values = result.setdefault(label, {}).setdefault(run.server, [])
        if run.ok:
            values.append(run.us_per_entry)
    return result


def describe(run: HerdRun) -> str:
    status = "ok" if run.ok else "FAILED: " + "; ".join(run.problems)
    wall = max(run.seconds, 1e-9)
    return (f"N={run.consumers:<5} {run.server:<5} {run.us_per_entry:8.1f} µs/entry  "
            f"(/proc {1e6 * run.server_cpu_proc / run.entries:6.0f})  "
            f"delivered {run.delivered} to {run.consumers_served} consumers  "
            f"wall {run.seconds:5.2f} s  server CPU {100 * run.server_cpu / wall:3.0f}%  "
            f"client CPU {100 * run.client_cpu / wall:3.0f}%  {status}")


def medians(runs: list[HerdRun]) -> dict[tuple[str, int], float | None]:
    """(server, N) -> median µs/entry; None if any run of that pair failed a check."""
    grouped: dict[tuple[str, int], list[HerdRun]] = {}
    for run in runs:
        grouped.setdefault((run.server, run.consumers), []).append(run)
    return {key: statistics.median(run.us_per_entry for run in group)
            if all(run.ok for run in group) else None
            for key, group in grouped.items()}


def table(runs: list[HerdRun], servers: tuple[str, ...]) -> str:
    """N, µs/entry per server, each server's growth over its own N=1 row, Brook/Redis."""
    figures = medians(runs)
    sizes = sorted({run.consumers for run in runs})
    base_size = 1 if 1 in sizes else sizes[0]
    both = "brook" in servers and "redis" in servers
    headers = ["N", *(f"{name.capitalize()} µs/entry" for name in servers),
               *(f"{name.capitalize()} vs N={base_size}" for name in servers)]
    if both:
        headers.append("Brook/Redis")
    lines = ["| " + " | ".join(headers) + " |", "|---:|" + "---:|" * (len(headers) - 1)]
    for size in sizes:
        values = {name: figures.get((name, size)) for name in servers}
        cells = [f"{size:,}"]
        cells += [f"{value:.1f}" if value is not None else "failed" for value in values.values()]
        for name in servers:
            value, base = values[name], figures.get((name, base_size))
            cells.append(f"{value / base:.2f}" if value is not None and base else "-")
        if both:
            brook, redis = values["brook"], values["redis"]
            cells.append(f"{brook / redis:.2f}" if brook is not None and redis else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(runs: list[HerdRun], servers: tuple[str, ...], entries: int, repeat: int,
           json_path: str | None) -> bool:
    """Prints the table (and writes ``json_path``); True if every run passed its checks."""
    print()
    from bench import run as harness  # here: bench.run imports this module for --suite herd

    print(f"Machine: {harness.machine_description(clients=None)}")
    print(f"{entries:,} entries, one XADD at a time; N consumers parked on XREADGROUP ... "
          f"COUNT 1 BLOCK 0, re-parked after each delivery; server CPU (INFO cpu) per entry, "
          f"median of {repeat} run{'s' if repeat > 1 else ''}.")
    print()
    print(table(runs, servers))
    failed = [run for run in runs if not run.ok]
    for run in failed:
        print(f"\nN={run.consumers} {run.server} FAILED: " + "; ".join(run.problems))
    if json_path:
        medians_ = {f"{name} N={size}": value for (name, size), value in medians(runs).items()}
        data = {"us_per_entry": medians_,
                "runs": [asdict(run) | {"us_per_entry": run.us_per_entry} for run in runs]}
        Path(json_path).write_text(json.dumps(data, indent=2))
    return not failed


def main(argv: list[str] | None = None) -> None:
    from bench import run as harness  # here: bench.run imports this module for --suite herd

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="comma-separated numbers of parked consumers")
    parser.add_argument("--entries", type=int, default=DEFAULT_ENTRIES)
    parser.add_argument("--servers", default=",".join(harness.SERVERS),
                        help="brook,redis (default), or one of them alone")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per size and server (alternating); the table shows medians")
    parser.add_argument("--json", help="write the medians and every run's figures to this file")
    options = parser.parse_args(argv)
    servers = harness.parse_servers(options.servers)
    sizes = [int(size) for size in options.sizes.split(",")]
    limit = raise_fd_limit()
    if max(sizes) + 64 > limit:
        sys.exit(f"RLIMIT_NOFILE is {limit}: too low for {max(sizes)} consumers")
    with tempfile.TemporaryDirectory() as workdir:
        runs = run_herd(sizes, options.entries, servers, Path(workdir), options.repeat)
    if not report(runs, servers, options.entries, options.repeat, options.json):
        sys.exit(1)


if __name__ == "__main__":
    main()
