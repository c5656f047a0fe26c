"""Memory accounting and maxmemory, Brook and Redis side by side in one run.

    python -m bench.memory [--items 1000000] [--limit-mb 100] [--parts accounting,fill,evict]

``accounting``: a fresh pair of servers per dataset (1M small string keys, 1M stream entries,
1M pending entries, 1M set members, 1M sorted-set members, 1M list elements in lists of ten);
INFO ``used_memory`` and
``used_memory_rss`` before and after the fill. The table gives each server's growth of both
and their ratio: how much of what the process took from the system the accounting sees (Brook's
``used_memory`` is the allocators' count; brook/memory.py).

``fill``: ``maxmemory <limit>`` with ``noeviction``, then 10 KB SETs worth twice the limit:
peak RSS (the kernel's high-water mark, VmHWM), the share of writes refused with -OOM, and
whether deleting half the keys lets writes in again. ``--redis PATH`` picks the Redis binary
(PATH's redis-server by default; Redis 7.2+ keeps small lists as listpacks). ``evict``: the same with
``allkeys-lru``: peak RSS, keys evicted, writes refused (none expected). The target
is a peak RSS of at most 1.5 x maxmemory + 30 MB.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

import hiredis

from bench.groups import GROUP, read_all_pending
from bench.run import free_port, wait_ready
from bench.streams import KEY, Connection, encode, fill, sensor_batches

BATCH = 1000
VALUE_10K = b"v" * 10_240
REDIS = {"binary": ""}  # --redis


@contextlib.contextmanager
def server(kind: str, *extra: str) -> Iterator[tuple[Connection, int]]:
    """A fresh Brook or Redis (persistence off) and a connection to it; yields (conn, pid)."""
    port = free_port()
    if kind == "brook":
        command = [sys.executable, "-m", "brook", "--port", str(port), "--save", "",
                   "--appendonly", "no", *extra]
    else:
        binary = REDIS["binary"] or shutil.which("redis-server")
        if binary is None:
            sys.exit("redis-server is required (make redis installs it)")
        command = [binary, "--port", str(port), "--save", "", "--appendonly", "no", *extra]
    with tempfile.TemporaryDirectory() as workdir:
        process = subprocess.Popen(command, cwd=workdir, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            wait_ready(port, process)
            with Connection(port) as conn:
                yield conn, process.pid
        finally:
            process.terminate()
            process.wait()


def info(conn: Connection, section: str) -> dict[str, str]:
    text = conn.check("INFO", section)
    assert isinstance(text, bytes)
    return dict(line.split(":", 1) for line in text.decode().splitlines()
                if ":" in line and not line.startswith("#"))


def memory_reading(conn: Connection) -> tuple[int, int]:
    """(used_memory, used_memory_rss) after a pause: Redis reads its RSS in its cron."""
    time.sleep(0.3)
    fields = info(conn, "memory")
    return int(fields["used_memory"]), int(fields["used_memory_rss"])


def peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


# -- accounting ------------------------------------------------------------------------------

def _pipelined(conn: Connection, commands: Iterator[bytes]) -> None:
    batch: list[bytes] = []
    for command in commands:
        batch.append(command)
        if len(batch) == BATCH:
            conn.pipeline(b"".join(batch), len(batch))
            batch = []
    if batch:
        conn.pipeline(b"".join(batch), len(batch))


def _keys(conn: Connection, items: int) -> None:
    _pipelined(conn, (encode("SET", b"key:%09d" % index, b"value:%04d" % (index % 10_000))
                      for index in range(items)))


def _stream(conn: Connection, items: int) -> None:
    fill(conn, sensor_batches(items))


def _group(conn: Connection, items: int) -> None:
    """A stream of ``items`` entries and a group that has read none (before the reading)."""
    fill(conn, sensor_batches(items))
    conn.check("XGROUP", "CREATE", KEY, GROUP, "0")


def _pending(conn: Connection, items: int) -> None:
    read_all_pending(conn)


def _set(conn: Connection, items: int) -> None:
    _pipelined(conn, (encode("SADD", "set", b"member:%09d" % index) for index in range(items)))


def _zset(conn: Connection, items: int) -> None:
    _pipelined(conn, (encode("ZADD", "zset", index, b"member:%09d" % index)
                      for index in range(items)))


def _lists(conn: Connection, items: int) -> None:
    """``items`` elements as lists of ten 6-byte elements (one RPUSH per list)."""
    _pipelined(conn, (encode("RPUSH", b"list:%07d" % index,
                             *[b"e%05d" % ((index + k) % 100_000) for k in range(10)])
                      for index in range(items // 10)))


def _nothing(conn: Connection, items: int) -> None:
    pass


# dataset -> (what is loaded before the first reading, what is measured)
DATASETS: dict[str, tuple[Callable[[Connection, int], None], Callable[[Connection, int], None]]] = {
    "string keys (10-byte values)": (_nothing, _keys),
    "stream entries (3 fields)": (_nothing, _stream),
    "pending entries (one consumer)": (_group, _pending),
    "set members": (_nothing, _set),
    "sorted-set members": (_nothing, _zset),
    "list elements (lists of ten)": (_nothing, _lists),
}


def accounting(items: int, only: list[str] | None = None) -> None:
    print(f"\nAccounting: growth per item over {items:,} items (bytes), used_memory / RSS")
    print(f"{'dataset':34} {'Brook used':>11} {'Brook RSS':>10} {'ratio':>6}   "
          f"{'Redis used':>11} {'Redis RSS':>10} {'ratio':>6}")
    for label in DATASETS:
        if only and not any(label.startswith(prefix) for prefix in only):
            continue
        figures: list[float] = []
        prepare, load = DATASETS[label]
        for kind in ("brook", "redis"):
            with server(kind) as (conn, _pid):
                prepare(conn, items)
                used_before, rss_before = memory_reading(conn)
                load(conn, items)
                used_after, rss_after = memory_reading(conn)
                used = (used_after - used_before) / items
                rss = (rss_after - rss_before) / items
                figures += [used, rss, used / rss if rss else 0.0]
        print(f"{label:34} {figures[0]:11.1f} {figures[1]:10.1f} {figures[2]:6.2f}   "
              f"{figures[3]:11.1f} {figures[4]:10.1f} {figures[5]:6.2f}")


# -- maxmemory fills ---------------------------------------------------------------------------

def _set_batch(conn: Connection, start: int, count: int) -> int:
    """``count`` pipelined 10 KB SETs; how many were refused."""
    payload = b"".join(encode("SET", b"k%08d" % index, VALUE_10K)
                       for index in range(start, start + count))
    conn.sock.sendall(payload)
    refused = 0
    for _ in range(count):
        if isinstance(conn._reply(), hiredis.ReplyError):
            refused += 1
    return refused


def maxmemory_fill(limit_mb: int, policy: str) -> None:
    limit = limit_mb * 1024 * 1024
    writes = 2 * limit // len(VALUE_10K)
    print(f"\nmaxmemory {limit_mb}mb, {policy}: {writes:,} SETs of 10 KB "
          f"(target: peak RSS <= {1.5 * limit_mb + 30:.0f} MB)")
    for kind in ("brook", "redis"):
        with server(kind, "--maxmemory", str(limit), "--maxmemory-policy", policy) as (conn, pid):
            started = time.perf_counter()
            refused = sum(_set_batch(conn, start, 100) for start in range(0, writes, 100))
            seconds = time.perf_counter() - started
            stats = info(conn, "stats")
            stored = conn.check("DBSIZE")
            line = (f"  {kind:6} peak RSS {peak_rss(pid) / 2**20:6.1f} MB, refused "
                    f"{refused / writes:6.1%}, evicted {stats['evicted_keys']:>6}, "
                    f"keys {stored:>6}, {writes / seconds:8.0f} SET/s")
            if policy == "noeviction":
                keys = [b"k%08d" % index for index in range(writes)]
                for start in range(0, len(keys), 1000):
                    conn.check("DEL", *keys[start:start + 1000][::2])
                refused_after = _set_batch(conn, writes, 1000)
                line += f"; after deleting half: {1 - refused_after / 1000:.0%} of 1,000 SETs in"
            print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--limit-mb", type=int, default=100)
    parser.add_argument("--parts", default="accounting,fill,evict")
    parser.add_argument("--datasets", default="", help="comma-separated label prefixes")
    parser.add_argument("--redis", default="", help="the redis-server binary")
    options = parser.parse_args()
    REDIS["binary"] = options.redis
    parts = options.parts.split(",")
    if "accounting" in parts:
        accounting(options.items, [p for p in options.datasets.split(",") if p])
    if "fill" in parts:
        maxmemory_fill(options.limit_mb, "noeviction")
    if "evict" in parts:
        maxmemory_fill(options.limit_mb, "allkeys-lru")


if __name__ == "__main__":
    main()
