"""Set and sorted-set rows for ``bench.run``: throughput, memory per member, a delayed-job loop.

* ``sadd``, ``sismember``, ``zadd`` (with ``-r 100000``: random members and scores),
  ``zrangebyscore_limit`` and ``zpopmin`` are redis-benchmark runs. Each is prepared the same way on both servers before every run: ``sismember`` asks a
  set of 100,000 members for random members (half of them absent); ``zrangebyscore_limit`` reads
  the first 10 of a 1,000-member sorted set; ``zpopmin`` pops from a sorted set refilled with as
  many members as the run makes requests, so no pop finds it empty.
* ``set_memory`` / ``zset_memory``: a fresh pair of servers per row, filled pipelined; the
  growth of ``used_memory`` divided by the member count. Rows: one set of 1M integers, one set
  of 1M 10-byte strings, one sorted set of 1M members, 100,000 sets and 100,000 sorted sets of
  10 members each (the per-key overhead included, as a user pays it).
* ``delayed_jobs``: the loop job frameworks run (arq's queue, RQ's scheduled registry): 1M jobs
  scheduled with ``ZADD queue <due time> <job id>`` (jobs/s, pipelined 1,000 deep), then a
  poller that repeats ``ZRANGEBYSCORE queue -inf <now> LIMIT 0 100`` and ``ZREM queue <those
  ids>`` until the queue is empty (jobs/s); "now" advances by one second of due times (1,000
  jobs) whenever a poll returns less than a page. Checked afterwards: every job was taken
  once, the queue is empty.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from bench.streams import Connection, CustomTest, encode, exchange, used_memory

SET_KEY = "myset"
ZSET_KEY = "myzset"
RANDOM_MEMBERS = 100_000
BATCH = 1_000
JOBS = 1_000_000
JOBS_PER_SECOND = 1_000  # due times: job i is due at second i // JOBS_PER_SECOND
POLL = 100

Rows = dict[str, dict[str, list[float]]]
Report = Callable[[str, dict[str, list[float]]], None]


def _fill(conn: Connection, commands: list[bytes]) -> None:
    for start in range(0, len(commands), BATCH):
        batch = commands[start:start + BATCH]
        conn.pipeline(b"".join(batch), len(batch))


def _members_set(port: int) -> None:
    """``myset`` with members element:0 .. element:49999 (redis-benchmark's __rand_int__ goes to
    99,999 with ``-r 100000``, so half the SISMEMBERs miss)."""
    with Connection(port) as conn:
        conn.check("DEL", SET_KEY)
        _fill(conn, [encode("SADD", SET_KEY, *(f"element:{i:012d}" for i in range(j, j + 100)))
                     for j in range(0, RANDOM_MEMBERS // 2, 100)])


def _small_zset(port: int) -> None:
    with Connection(port) as conn:
        conn.check("DEL", ZSET_KEY)
        _fill(conn, [encode("ZADD", ZSET_KEY, *(x for i in range(j, j + 100)
                                                 for x in (i, f"member:{i}")))
                     for j in range(0, 1_000, 100)])


def _popping_zset(requests: int) -> Callable[[int], None]:
    def prepare(port: int) -> None:
        with Connection(port) as conn:
            conn.check("DEL", ZSET_KEY)
            _fill(conn, [encode("ZADD", ZSET_KEY, *(x for i in range(j, j + 100)
                                                     for x in (i, f"m{i}")))
                         for j in range(0, requests, 100)])
    return prepare


def _empty(key: str) -> Callable[[int], None]:
    def prepare(port: int) -> None:
        with Connection(port) as conn:
            conn.check("DEL", key)
    return prepare


def custom_tests(requests: int) -> dict[str, CustomTest]:
    """The redis-benchmark rows; ``requests`` sizes the sorted set that ZPOPMIN drains."""
    return {
        "sadd": CustomTest(("SADD", SET_KEY, "element:__rand_int__"), _empty(SET_KEY)),
        "sismember": CustomTest(("SISMEMBER", SET_KEY, "element:__rand_int__"), _members_set),
        "zadd": CustomTest(("ZADD", ZSET_KEY, "__rand_int__", "element:__rand_int__"),
                           _empty(ZSET_KEY)),
        "zrangebyscore_limit": CustomTest(
            ("ZRANGEBYSCORE", ZSET_KEY, "-inf", "+inf", "LIMIT", "0", "10"), _small_zset),
        "zpopmin": CustomTest(("ZPOPMIN", ZSET_KEY), _popping_zset(requests)),
    }


SET_TESTS = ("sadd@random", "sismember@random", "zadd@random", "zrangebyscore_limit", "zpopmin")
MEMORY_TESTS = ("set_ints", "set_strings", "zset_members", "small_sets", "small_zsets")
DELAYED_TEST = "delayed_jobs"


# -- memory per member --------------------------------------------------------------------------


def _memory_commands(test: str, members: int) -> tuple[str, list[bytes]]:
    """The label and the fill commands of one memory row."""
    if test == "set_ints":
        return (f"set of {members:,} integers (bytes/member)",
                [encode("SADD", "s", *range(j, j + 100)) for j in range(0, members, 100)])
    if test == "set_strings":
        return (f"set of {members:,} 10-byte strings (bytes/member)",
                [encode("SADD", "s", *(f"m{i:09d}" for i in range(j, j + 100)))
                 for j in range(0, members, 100)])
    if test == "zset_members":
        return (f"sorted set of {members:,} 10-byte members (bytes/member)",
                [encode("ZADD", "z", *(x for i in range(j, j + 100)
                                       for x in (i * 7 % members, f"m{i:09d}")))
                 for j in range(0, members, 100)])
    keys = members // 10
    if test == "small_sets":
        return (f"{keys:,} sets of 10 10-byte strings (bytes/member, keys included)",
                [encode("SADD", f"s:{k:08d}", *(f"m{i:09d}" for i in range(10)))
                 for k in range(keys)])
    if test == "small_zsets":
        return (f"{keys:,} sorted sets of 10 10-byte members (bytes/member, keys included)",
                [encode("ZADD", f"z:{k:08d}", *(x for i in range(10) for x in (i, f"m{i:09d}")))
                 for k in range(keys)])
    raise ValueError(test)


def memory_row(test: str, ports: dict[str, int], members: int, report: Report) -> Rows:
    """Fill each (fresh) server with one row's data; ``used_memory`` growth per member."""
    label, commands = _memory_commands(test, members)
    row: dict[str, list[float]] = {name: [] for name in ports}
    for name, port in ports.items():
        with Connection(port) as conn:
            before = used_memory(conn)
            _fill(conn, commands)
            after = used_memory(conn)
            row[name].append((after - before) / members)
    report(label, row)
    return {label: row}


# -- the delayed-job loop ----------------------------------------------------------------------

_BULK = re.compile(rb"\$\d+\r\n(j\d+)\r\n")


def _schedule(conn: Connection, jobs: int) -> float:
    commands = [encode("ZADD", "queue", *(x for i in range(j, min(j + 100, jobs))
                                          for x in (i // JOBS_PER_SECOND, f"j{i}")))
                for j in range(0, jobs, 100)]
    started = time.perf_counter()
    _fill(conn, commands)
    return time.perf_counter() - started


def _drain(conn: Connection, jobs: int) -> tuple[int, float]:
    """Poll until every due time has passed; (jobs taken, seconds)."""
    last_due = (jobs - 1) // JOBS_PER_SECOND
    taken = 0
    now = 0
    started = time.perf_counter()
    while now <= last_due:
        page = exchange(conn, encode("ZRANGEBYSCORE", "queue", "-inf", now, "LIMIT", 0, POLL))
        ids = _BULK.findall(page)
        if ids:
            removed = exchange(conn, encode("ZREM", "queue", *ids))
            if removed != b":%d\r\n" % len(ids):
                raise RuntimeError(f"ZREM of {len(ids)} jobs answered {removed!r}")
            taken += len(ids)
        if len(ids) < POLL:
            now += 1  # nothing more is due: the clock moves on
    return taken, time.perf_counter() - started


def delayed_rows(ports: dict[str, int], jobs: int, report: Report) -> Rows:
    schedule_label = f"delayed jobs: schedule {jobs:,} (ZADD, jobs/s)"
    drain_label = f"delayed jobs: poll + ZREM {jobs:,} (jobs/s)"
    schedule_row: dict[str, list[float]] = {name: [] for name in ports}
    drain_row: dict[str, list[float]] = {name: [] for name in ports}
    for name, port in ports.items():
        with Connection(port) as conn:
            conn.check("DEL", "queue")
            schedule_row[name].append(jobs / _schedule(conn, jobs))
            if conn.check("ZCARD", "queue") != jobs:
                raise RuntimeError("the queue does not hold every scheduled job")
            taken, seconds = _drain(conn, jobs)
            if taken != jobs or conn.check("ZCARD", "queue") != 0:
                raise RuntimeError(f"the poller took {taken} jobs of {jobs}")
            drain_row[name].append(jobs / seconds)
    report(schedule_label, schedule_row)
    report(drain_label, drain_row)
    return {schedule_label: schedule_row, drain_label: drain_row}
