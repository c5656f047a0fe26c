"""Stream rows for ``bench.run``: XADD/XRANGE under redis-benchmark, a full scan, memory per entry.

* ``xadd`` and ``xrange_10`` are redis-benchmark custom commands. Before every run the stream key
  is reset the same way on both servers (emptied for XADD, so the stream never grows past one
  run's requests; re-filled with 1,000 entries for XRANGE), so each sample starts from the
  same state whatever ran before it.
* ``xscan`` fills a fresh server with N sensor readings (``XADD s * sensor <n> temp <f> hum <n>``,
  pipelined 1,000 deep), reads ``used_memory`` before and after (bytes per entry), then reads the
  whole stream back with ``XRANGE s (<last-id> + COUNT 1000`` pages from one client (entries/s).

The scan client does not parse the pages into Python objects: hiredis would spend ~0.5 µs per
entry building them, close to half of what Redis itself needs, and that would hide most of the
difference between the servers. Each XRANGE is sent with a PING behind it instead; the page is
complete when the buffer ends with ``+PONG``, its entry count is the array header and the next
start is the last ``*2`` entry's ID. That is only sound because the benchmark controls the data
(numbers and three fixed field names, never ``+PONG`` or ``*2``); the count, the last ID and the
first page's contents are checked against what was written.
"""

from __future__ import annotations

import functools
import random
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import hiredis

KEY = b"s"
XRANGE_PREFILL = 1_000  # entries in the stream that ``xrange_10`` reads from
BATCH = 1_000  # XADDs per pipelined write while filling, and entries per XRANGE page
SCAN_TEST = "xscan"
PING = b"*1\r\n$4\r\nPING\r\n"
PONG = b"+PONG\r\n"
# One sensor reading, formatted directly: building 1M commands through a generic encoder costs
# seconds of client time that has nothing to do with either server.
_SENSOR_XADD = (
    b"*9\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n"
    b"$6\r\nsensor\r\n$%d\r\n%b\r\n$4\r\ntemp\r\n$%d\r\n%b\r\n$3\r\nhum\r\n$%d\r\n%b\r\n"
)


def encode(*args: bytes | str | int) -> bytes:
    """One command in RESP (the bench's own client; no redis-py so both servers see the same bytes)."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(parts)


class Connection:
    """A blocking socket with a hiredis reader: minimal, identical client cost for both servers."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=600)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = hiredis.Reader()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _reply(self) -> object:
        while (reply := self.reader.gets()) is False:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("server closed the connection")
            self.reader.feed(data)
        return reply

    def call(self, *args: bytes | str | int) -> object:
        """Send one command and return its reply (an error reply is returned, not raised)."""
        self.sock.sendall(encode(*args))
        return self._reply()

    def check(self, *args: bytes | str | int) -> object:
        """:meth:`call` that raises on an error reply: for set-up steps that must succeed."""
        reply = self.call(*args)
        if isinstance(reply, hiredis.ReplyError):
            raise RuntimeError(f"{args!r} failed: {reply}")
        return reply

    def pipeline(self, payload: bytes, count: int) -> None:
        """Send ``count`` pre-encoded commands at once and read their replies; raise on any error."""
        self.sock.sendall(payload)
        for _ in range(count):
            reply = self._reply()
            if isinstance(reply, hiredis.ReplyError):
                raise RuntimeError(f"pipelined command failed: {reply}")


# -- redis-benchmark custom commands ----------------------------------------------------------


@dataclass(frozen=True)
class CustomTest:
    """A redis-benchmark custom command and the set-up that precedes each run of it."""

    command: tuple[str, ...]
    prepare: Callable[[int], None]


def _empty_stream(port: int) -> None:
    """An absent key; one checked XADD first, since redis-benchmark counts error replies as work."""
    with Connection(port) as conn:
        conn.check("DEL", KEY)
        conn.check("XADD", KEY, "*", "field", "value")
        conn.check("DEL", KEY)


def _prefilled_stream(port: int) -> None:
    """``XRANGE_PREFILL`` entries shaped like the ``xadd`` test's, written identically to both."""
    with Connection(port) as conn:
        conn.check("DEL", KEY)
        payload = encode("XADD", KEY, "*", "field", "value") * XRANGE_PREFILL
        conn.pipeline(payload, XRANGE_PREFILL)
        page = conn.check("XRANGE", KEY, "-", "+", "COUNT", 10)
        if not (isinstance(page, list) and len(page) == 10):
            raise RuntimeError(f"XRANGE COUNT 10 returned {page!r}")


CUSTOM_TESTS: dict[str, CustomTest] = {
    "xadd": CustomTest(("XADD", "s", "*", "field", "value"), _empty_stream),
    "xrange_10": CustomTest(("XRANGE", "s", "-", "+", "COUNT", "10"), _prefilled_stream),
}
STREAM_TESTS = (*CUSTOM_TESTS, SCAN_TEST)


# -- full scan and memory per entry -----------------------------------------------------------


def sensor_readings(count: int, seed: int = 2024) -> Iterator[tuple[bytes, bytes, bytes]]:
    """Deterministic ``(sensor, temp, hum)`` values: ints 0..10000 and a two-decimal float."""
    rng = random.Random(seed)
    for _ in range(count):
        yield (
            b"%d" % int(rng.random() * 10_001),
            b"%.2f" % (15 + rng.random() * 15),
            b"%d" % int(rng.random() * 10_001),
        )


@functools.lru_cache(maxsize=1)
def sensor_batches(count: int) -> list[tuple[bytes, int]]:
    """The fill as pre-encoded ``(payload, commands)`` batches, built once and sent to both.

    Cached: the scan and the consumer-group rows (``bench/groups.py``) fill fresh servers with
    the same readings, and encoding 1M commands takes seconds of client time.
    """
    batches: list[tuple[bytes, int]] = []
    parts: list[bytes] = []
    for sensor, temp, hum in sensor_readings(count):
        parts.append(_SENSOR_XADD % (len(sensor), sensor, len(temp), temp, len(hum), hum))
        if len(parts) == BATCH:
            batches.append((b"".join(parts), len(parts)))
            parts = []
    if parts:
        batches.append((b"".join(parts), len(parts)))
    return batches


def used_memory(conn: Connection) -> int:
    """``INFO memory`` used_memory, after ``MEMORY PURGE`` (ignored where unsupported)."""
    conn.call("MEMORY", "PURGE")
    info = conn.check("INFO", "memory")
    assert isinstance(info, bytes)
    for line in info.splitlines():
        if line.startswith(b"used_memory:"):
            return int(line.split(b":", 1)[1])
    raise RuntimeError(f"no used_memory in INFO memory: {info!r}")


def fill(conn: Connection, batches: list[tuple[bytes, int]]) -> float:
    """Write every batch (one round trip each); seconds taken."""
    started = time.perf_counter()
    for payload, count in batches:
        conn.pipeline(payload, count)
    return time.perf_counter() - started


def exchange(conn: Connection, payload: bytes) -> bytes:
    """Send ``payload`` with a PING behind it; the raw replies up to (not including) the PONG.

    The replies are never parsed into Python objects: the caller knows what it sent and finds
    what it needs in the bytes. Sound only for data without ``+PONG`` in it (the benchmark's).
    """
    conn.sock.sendall(payload + PING)
    chunks: list[bytes] = []
    tail = b""
    while tail != PONG:
        chunk = conn.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        chunks.append(chunk)
        tail = chunk[-len(PONG):] if len(chunk) >= len(PONG) else (tail + chunk)[-len(PONG):]
    return b"".join(chunks)[: -len(PONG)]


def _page(conn: Connection, start: bytes) -> bytes:
    """The raw bytes of one ``XRANGE s <start> + COUNT BATCH`` reply."""
    page = exchange(conn, encode("XRANGE", KEY, start, "+", "COUNT", BATCH))
    if not page.startswith(b"*"):
        raise RuntimeError(f"XRANGE failed: {page[:200]!r}")
    return page


def _last_id(page: bytes) -> bytes:
    """The ID of a page's last entry: the bulk string after its last ``*2`` entry header."""
    header = page.rindex(b"\r\n*2\r\n$") + 6
    length_end = page.index(b"\r\n", header)
    length = int(page[header + 1 : length_end])
    return page[length_end + 2 : length_end + 2 + length]


def scan(conn: Connection) -> tuple[int, float, bytes, bytes]:
    """Read the whole stream in pages; ``(entries, seconds, last ID, first page)``."""
    start, total, last, first = b"-", 0, b"", b""
    started = time.perf_counter()
    while True:
        page = _page(conn, start)
        count = int(page[1 : page.index(b"\r\n")])
        if count == 0:
            break
        first = first or page
        total += count
        last = _last_id(page)
        start = b"(" + last
    return total, time.perf_counter() - started, last, first


def _verify(conn: Connection, entries: int, total: int, last: bytes, first: bytes) -> None:
    """The scan saw every entry, ended on the stream's last ID, and its first page holds our data."""
    length = conn.check("XLEN", KEY)
    newest = conn.check("XREVRANGE", KEY, "+", "-", "COUNT", 1)
    assert isinstance(newest, list)
    if not (total == length == entries and newest and newest[0][0] == last):
        raise RuntimeError(f"scan read {total} entries ending at {last!r}; "
                           f"XLEN {length}, newest {newest[:1]!r}, expected {entries}")
    reader = hiredis.Reader()
    reader.feed(first)
    page = reader.gets()
    assert isinstance(page, list)
    expected = [[b"sensor", s, b"temp", t, b"hum", h]
                for s, t, h in sensor_readings(min(entries, BATCH))]
    if [fields for _, fields in page] != expected:
        raise RuntimeError("first XRANGE page differs from the entries written")


def scan_rows(ports: dict[str, int], entries: int, repeat: int,
              report: Callable[[str, dict[str, list[float]]], None]) -> dict[str, dict[str, list[float]]]:
    """Fill each (fresh) server, measure memory, then scan them alternately ``repeat`` times.

    Labels carry their unit; values are per-server lists like the redis-benchmark rows, so the
    JSON keeps one shape. ``report`` is called with each row as soon as it is complete.
    """
    batches = sensor_batches(entries)
    fill_row: dict[str, list[float]] = {name: [] for name in ports}
    memory_row: dict[str, list[float]] = {name: [] for name in ports}
    scan_row: dict[str, list[float]] = {name: [] for name in ports}
    conns = {name: Connection(port) for name, port in ports.items()}
    try:
        for name, conn in conns.items():
            before = used_memory(conn)
            seconds = fill(conn, batches)
            after = used_memory(conn)
            fill_row[name].append(entries / seconds)
            memory_row[name].append((after - before) / entries)
        report(f"xadd fill, {BATCH} per write (entries/s)", fill_row)
        report("stream memory (bytes/entry)", memory_row)
        for _ in range(repeat):
            for name, conn in conns.items():
                total, seconds, last, first = scan(conn)
                _verify(conn, entries, total, last, first)
                scan_row[name].append(total / seconds)
        report(f"xrange full scan, COUNT {BATCH} (entries/s)", scan_row)
    finally:
        for conn in conns.values():
            conn.close()
    return {
        f"xadd fill, {BATCH} per write (entries/s)": fill_row,
        "stream memory (bytes/entry)": memory_row,
        f"xrange full scan, COUNT {BATCH} (entries/s)": scan_row,
    }
