"""Consumer-group rows for ``bench.run``: a worker loop and memory per pending entry.

* ``xgroup_worker``: a fresh server is filled with N sensor readings (the ``xscan`` fill), then
  ``XGROUP CREATE s g 0`` and one client loops ``XREADGROUP GROUP g c COUNT 100 STREAMS s >`` /
  ``XACK s g <the 100 IDs>`` until the stream is consumed (entries/s). The XACK for batch k goes
  out in the same write as the XREADGROUP for batch k+1, so there is one round trip per batch.
  Each repeat destroys and re-creates the group, so every sample consumes the same stream.
* ``xgroup_pending``: another fresh server, the same fill, ``XGROUP CREATE s g 0``, then every
  entry read with ``XREADGROUP ... COUNT 1000`` and never acknowledged: the growth of
  ``used_memory`` divided by N is the cost of one pending entry (one consumer).

Like the scan, the client does not build the replies as Python objects (see ``streams.exchange``):
one ``re.findall`` over the raw reply yields each entry's ID *already RESP-encoded as a bulk
string*, which is exactly an XACK argument, so acknowledging costs one join. The loop also
records its own CPU time and the server's (``/proc/<pid>/stat``), so the row says whether the
client or the server was the bottleneck. Delivery is checked after the timing: N entries, IDs
strictly increasing (so no duplicates), the last one the stream's newest, an empty PEL.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from bench.streams import (
    KEY,
    PING,
    PONG,
    Connection,
    encode,
    exchange,
    fill,
    sensor_batches,
    used_memory,
)

WORKER_TEST = "xgroup_worker"
PENDING_TEST = "xgroup_pending"
GROUP_TESTS = (WORKER_TEST, PENDING_TEST)
GROUP = b"g"
CONSUMER = b"c"
WORKER_COUNT = 100  # entries per XREADGROUP in the worker loop (and IDs per XACK)
WORKER_DEPTHS = (1, 2)  # writes in flight: the plain loop, and one that overlaps client and server
PENDING_COUNT = 1_000  # entries per XREADGROUP when building the PEL for the memory row

# An entry in an XREADGROUP reply is ``*2 <id> *6 <fields>``; the group captures the ID with its
# ``$<len>`` header. Field values are digits and decimals, never ``<digits>-<digits>``.
_ENTRY_ID = re.compile(rb"\*2\r\n(\$\d+\r\n\d+-\d+\r\n)\*")
_NULL_ARRAY = b"*-1\r\n"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

Report = Callable[[str, dict[str, list[float]]], None]
Rows = dict[str, dict[str, list[float]]]


def _stream_header(count: int) -> bytes:
    """How a one-stream XREADGROUP reply of ``count`` entries starts (RESP2)."""
    return b"*1\r\n*2\r\n$%d\r\n%b\r\n*%d\r\n" % (len(KEY), KEY, count)


def _read_command(count: int) -> bytes:
    return encode("XREADGROUP", "GROUP", GROUP, CONSUMER, "COUNT", count, "STREAMS", KEY, ">")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


@dataclass
class WorkerRun:
    """One pass of the worker loop: what was delivered, wall time and both sides' CPU time."""

    batches: list[list[bytes]]  # the encoded IDs of each XREADGROUP reply, in order
    seconds: float
    client_cpu: float
    server_cpu: float

    @property
    def delivered(self) -> int:
        return sum(map(len, self.batches))


class _Pipe:
    """Writes framed by a trailing PING, several in flight; replies taken back in order.

    ``streams.exchange`` with the receive side split off, so the client can send its next write
    before it reads the previous reply (the server is never left waiting on the client).
    """

    def __init__(self, conn: Connection) -> None:
        self.sock = conn.sock
        self.buffer = b""

    def send(self, payload: bytes) -> None:
        self.sock.sendall(payload + PING)

    def receive(self) -> bytes:
        """The raw replies of the oldest write still unanswered, without its PONG."""
        searched = 0
        while (end := self.buffer.find(PONG, searched)) < 0:
            searched = max(len(self.buffer) - len(PONG) + 1, 0)
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buffer += chunk
        reply, self.buffer = self.buffer[:end], self.buffer[end + len(PONG):]
        return reply


def worker_loop(conn: Connection, server_pid: int, depth: int = 1) -> WorkerRun:
    """Consume the whole stream as group ``g``, consumer ``c``: read 100, ack them, repeat.

    Every write after the first is ``XACK`` (the IDs of the reply just received) + the next
    ``XREADGROUP`` (+ the framing PING). ``depth`` writes are kept in flight: 1 is the plain
    loop (the XACK for batch k goes with the XREADGROUP for batch k+1), 2 lets the server work
    on one write while the client handles the previous reply. Each XACK's reply is checked to
    be its batch size, each XREADGROUP's header to match the IDs found in it.
    """
    read = _read_command(WORKER_COUNT)
    ack_head = b"*%d\r\n$4\r\nXACK\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n"
    ack_args = (len(KEY), KEY, len(GROUP), GROUP)
    pipe = _Pipe(conn)
    batches: list[list[bytes]] = []
    acks = [b""] * depth  # the XACK reply expected at the front of each write in flight
    server_before = process_cpu(server_pid)
    cpu_before = time.process_time()
    started = time.perf_counter()
    for _ in range(depth):
        pipe.send(read)
    in_flight = depth
    while in_flight:
        reply = pipe.receive()
        in_flight -= 1
        acked = acks.pop(0)
        if not reply.startswith(acked):
            raise RuntimeError(f"XACK answered {reply[:40]!r}, expected {acked!r}")
        start = len(acked)
        ids = _ENTRY_ID.findall(reply, start)
        if not ids:
            if reply[start:] != _NULL_ARRAY:
                raise RuntimeError(f"XREADGROUP answered {reply[start:start + 200]!r}")
            continue  # the stream is consumed; drain what is still in flight
        if not reply.startswith(_stream_header(len(ids)), start):
            raise RuntimeError(f"XREADGROUP reply does not hold {len(ids)} entries: "
                               f"{reply[start:start + 200]!r}")
        batches.append(ids)
        pipe.send(ack_head % (3 + len(ids), *ack_args) + b"".join(ids) + read)
        acks.append(b":%d\r\n" % len(ids))
        in_flight += 1
    seconds = time.perf_counter() - started
    client_cpu = time.process_time() - cpu_before
    return WorkerRun(batches, seconds, client_cpu, process_cpu(server_pid) - server_before)


def _parse_id(encoded: bytes) -> tuple[int, int]:
    """``b"$15\\r\\n1700000000000-0\\r\\n"`` -> ``(1700000000000, 0)``."""
    ms, seq = encoded.split(b"\r\n")[1].split(b"-")
    return int(ms), int(seq)


def _verify_worker(conn: Connection, run: WorkerRun, entries: int) -> None:
    """Every entry delivered once, in order, up to the newest; nothing left pending."""
    ids = [_parse_id(encoded) for batch in run.batches for encoded in batch]
    if len(ids) != entries:
        raise RuntimeError(f"worker loop delivered {len(ids)} entries, expected {entries}")
    if any(a >= b for a, b in itertools.pairwise(ids)):
        raise RuntimeError("worker loop delivered IDs out of order or twice")
    newest = conn.check("XREVRANGE", KEY, "+", "-", "COUNT", 1)
    assert isinstance(newest, list) and newest
    if b"%d-%d" % ids[-1] != newest[0][0]:
        raise RuntimeError(f"last delivered {ids[-1]!r}, newest entry {newest[0][0]!r}")
    summary = conn.check("XPENDING", KEY, GROUP)
    if not (isinstance(summary, list) and summary[0] == 0):
        raise RuntimeError(f"PEL not empty after the worker loop: {summary!r}")


def _fresh_group(conn: Connection) -> None:
    """Group ``g`` at the start of the stream, with no consumers and nothing pending."""
    conn.check("XGROUP", "DESTROY", KEY, GROUP)
    conn.check("XGROUP", "CREATE", KEY, GROUP, "0")


def _filled(ports: dict[str, int], entries: int) -> dict[str, Connection]:
    """A connection to each server, whose stream now holds the ``entries`` sensor readings."""
    batches = sensor_batches(entries)
    conns = {name: Connection(port) for name, port in ports.items()}
    for conn in conns.values():
        conn.check("DEL", KEY)
        fill(conn, batches)
    return conns


def worker_rows(ports: dict[str, int], pids: dict[str, int], entries: int, repeat: int,
                report: Report) -> Rows:
    """Fill each (fresh) server, then run the worker loop at each depth on them alternately,
    ``repeat`` times; entries/s and both sides' CPU share of the wall time."""
    rows: Rows = {}
    conns = _filled(ports, entries)
    try:
        for depth in WORKER_DEPTHS:
            writes = "1 write" if depth == 1 else f"{depth} writes"
            labels = (f"worker XREADGROUP COUNT {WORKER_COUNT} + XACK, {writes} in flight "
                      "(entries/s)",
                      f"  worker, {writes} in flight: client CPU (% of wall)",
                      f"  worker, {writes} in flight: server CPU (% of wall)")
            speed, client, server = ({name: [] for name in ports} for _ in labels)
            for _ in range(repeat):
                for name, conn in conns.items():
                    _fresh_group(conn)
                    run = worker_loop(conn, pids[name], depth)
                    _verify_worker(conn, run, entries)
                    speed[name].append(run.delivered / run.seconds)
                    client[name].append(100 * run.client_cpu / run.seconds)
                    server[name].append(100 * run.server_cpu / run.seconds)
            for label, row in zip(labels, (speed, client, server), strict=True):
                rows[label] = row
                report(label, row)
    finally:
        for conn in conns.values():
            conn.close()
    return rows


def read_all_pending(conn: Connection) -> int:
    """Read every new entry into consumer ``c``'s PEL, never acking; entries read."""
    read = _read_command(PENDING_COUNT)
    prefix = _stream_header(0)[:-3]  # up to the ``*`` of the entry array's header
    total = 0
    while True:
        reply = exchange(conn, read)
        if reply == _NULL_ARRAY:
            return total
        if not reply.startswith(prefix):
            raise RuntimeError(f"XREADGROUP answered {reply[:200]!r}")
        total += int(reply[len(prefix) : reply.index(b"\r\n", len(prefix))])


def pending_rows(ports: dict[str, int], entries: int, report: Report) -> Rows:
    """Fill each (fresh) server, then measure ``used_memory`` before and after the PEL fills."""
    label = f"pending entries memory, {entries:,} in one consumer (bytes/entry)"
    row: dict[str, list[float]] = {name: [] for name in ports}
    conns = _filled(ports, entries)
    try:
        for name, conn in conns.items():
            conn.check("XGROUP", "CREATE", KEY, GROUP, "0")
            before = used_memory(conn)
            read = read_all_pending(conn)
            after = used_memory(conn)
            summary = conn.check("XPENDING", KEY, GROUP)
            if not (read == entries and isinstance(summary, list) and summary[0] == entries):
                raise RuntimeError(f"read {read}, XPENDING {summary!r}, expected {entries}")
            row[name].append((after - before) / entries)
        report(label, row)
    finally:
        for conn in conns.values():
            conn.close()
    return {label: row}
