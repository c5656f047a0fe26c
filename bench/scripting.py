"""Scripting rows for ``bench.run``: EVALSHA under redis-benchmark, memory per cached
script, and what entering Lua costs in process.

    python -m bench.run --suite scripting [--repeat 3]
    python -m bench.scripting [--calls 100000] [--repeat 5] [--top 25]   # in process + cProfile

* ``evalsha_incr``: ``EVALSHA <sha> 1 counter`` of ``return redis.call('INCR', KEYS[1])``.
  Before every run the script is loaded with SCRIPT LOAD on the server (the SHA1 is the same on
  both), ``counter`` deleted and one checked EVALSHA made, so a server that lacked the script
  would fail the run instead of timing ``-NOSCRIPT`` replies.
* ``evalsha_enqueue``: dramatiq's Redis broker enqueue. dramatiq runs every broker operation
  through one script (``dispatch.lua``) with ``KEYS = {namespace}`` and ``ARGV = {command,
  timestamp, queue, worker id, heartbeat timeout, dead-message TTL, do-maintenance, max unpack
  size, message id, message body}``; for ``enqueue`` it builds the key names, ZADDs the worker's
  heartbeat, copies the command's arguments, HSETs the message body into ``<queue>.msgs`` and
  RPUSHes the id onto the queue list. :data:`ENQUEUE_SCRIPT` is that path of ``dispatch.lua``
  (the other commands left out, and maintenance, which dramatiq draws for one call in 1,000 by
  default: ``do-maintenance`` is "0"). The message id is ``<__rand_int__>-<__rand_int__>``
  with ``-r 100000`` (the ``@random`` variant): 10^10 ids, so a run of 1M enqueues repeats
  about 50 of them; the body is a 242-byte dramatiq message. The queue, its hash and the
  heartbeats are deleted before every run.
* ``script_memory``: on a fresh pair of servers (per repeat), SCRIPT LOAD of
  :data:`CACHED_SCRIPTS` distinct scripts of about 140 bytes (a lock release ending in
  ``return <i>``), pipelined; the growth of ``used_memory``, ``used_memory_rss`` (both after
  MEMORY PURGE, which Brook does not have, and a pause: Redis reads its RSS in its cron), the
  interpreter's own count (``used_memory_vm_eval`` = ``used_memory_lua``: Lua's allocator,
  which Redis does not count in ``used_memory``) and the cached bodies
  (``used_memory_scripts_eval``), divided by the script count; and the interpreter's count
  again after ``EVAL "collectgarbage('collect') ..."`` (what is live, not where the incremental
  collector happened to be). SCRIPT LOAD, not EVAL: Brook keeps only the last 500 scripts EVAL
  added, as Redis 8 does.
* ``lua_overhead`` (Brook only, no sockets): CPU time (``process_time``) per
  ``Dispatcher.execute`` of PING, INCR, EVALSHA of ``return 1``, EVALSHA of the INCR script,
  the three plain commands of an enqueue and the enqueue script, on a ``Session`` of a
  ``Server(Config())`` in this process. Medians of ``--repeat`` rounds. ``python -m
  bench.scripting`` prints the same table and a cProfile of the EVALSHA path: the top functions
  by own time, and own time summed per module. cProfile does not see inside lupa: the Lua VM,
  lupa's conversions and its calls back into Python are charged to the Python function that
  called into Lua (``Interpreter._protected``).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import pstats
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from bench.streams import Connection, CustomTest, encode

Rows = dict[str, dict[str, list[float]]]
Report = Callable[[str, dict[str, list[float]]], None]

INCR_SCRIPT = b"return redis.call('INCR', KEYS[1])"
COUNTER = "counter"

# dispatch.lua's enqueue path (dramatiq 1.x, brokers/redis/dispatch.lua), line for line except
# for the branches enqueue does not take.
ENQUEUE_SCRIPT = b"""\
local namespace = KEYS[1]
local command = ARGV[1]
local timestamp = ARGV[2]
local queue_name = ARGV[3]
local worker_id = ARGV[4]
local heartbeat_timeout = ARGV[5]
local dead_message_ttl = ARGV[6]
local do_maintenance = ARGV[7]
local max_unpack_size = ARGV[8]

local acks = namespace .. ":__acks__." .. worker_id
local heartbeats = namespace .. ":__heartbeats__"
redis.call("zadd", heartbeats, timestamp, worker_id)

local queue_canonical_name = queue_name
if string.sub(queue_name, -3) == ".DQ" then
    queue_canonical_name = string.sub(queue_name, 1, -4)
end

local queue_acks = acks .. "." .. queue_name
local queue_full_name = namespace .. ":" .. queue_name
local queue_messages = queue_full_name .. ".msgs"
local xqueue_full_name = namespace .. ":" .. queue_canonical_name .. ".XQ"
local xqueue_messages = xqueue_full_name .. ".msgs"

local ARGS = {}
for i=9,#ARGV do
    ARGS[i - 8] = ARGV[i]
end

if command == "enqueue" then
    local message_id = ARGS[1]
    local message_data = ARGS[2]

    redis.call("hset", queue_messages, message_id, message_data)
    redis.call("rpush", queue_full_name, message_id)
end
"""
NAMESPACE = "dramatiq"
QUEUE = "default"
WORKER = "b5c3c0a3-6d7e-4a8e-9c55-2f1d0c0e7a11"
TIMESTAMP = "1718000000000"
# What dramatiq's JSONEncoder writes for a message (its id is the redis_message_id too).
MESSAGE_BODY = (
    '{"queue_name":"default","actor_name":"send_welcome_email","args":[184467],"kwargs":{},'
    '"options":{"redis_message_id":"d2a9c4b0-3f6e-4f1a-a0d7-5b8e1c2f9a64"},'
    '"message_id":"d2a9c4b0-3f6e-4f1a-a0d7-5b8e1c2f9a64","message_timestamp":1718000000000}'
)
ENQUEUE_KEYS = (f"{NAMESPACE}:__heartbeats__", f"{NAMESPACE}:{QUEUE}",
                f"{NAMESPACE}:{QUEUE}.msgs")


def sha1hex(body: bytes) -> str:
    return hashlib.sha1(body).hexdigest()


def enqueue_arguments(message_id: str) -> tuple[str, ...]:
    """KEYS and ARGV of one enqueue (after ``EVALSHA <sha>``), as dramatiq's broker sends them."""
    return ("1", NAMESPACE, "enqueue", TIMESTAMP, QUEUE, WORKER, "60000", "604800000", "0",
            "7999", message_id, MESSAGE_BODY)


def _load(conn: Connection, body: bytes) -> None:
    sha = conn.check("SCRIPT", "LOAD", body)
    if sha != sha1hex(body).encode():
        raise RuntimeError(f"SCRIPT LOAD returned {sha!r}")


def _prepare_incr(port: int) -> None:
    with Connection(port) as conn:
        _load(conn, INCR_SCRIPT)
        conn.check("DEL", COUNTER)
        if conn.check("EVALSHA", sha1hex(INCR_SCRIPT), 1, COUNTER) != 1:
            raise RuntimeError("EVALSHA of the INCR script did not return 1")
        conn.check("DEL", COUNTER)


def _prepare_enqueue(port: int) -> None:
    with Connection(port) as conn:
        _load(conn, ENQUEUE_SCRIPT)
        conn.check("DEL", *ENQUEUE_KEYS)
        conn.check("EVALSHA", sha1hex(ENQUEUE_SCRIPT), *enqueue_arguments("check"))
        if (conn.check("LRANGE", ENQUEUE_KEYS[1], 0, -1) != [b"check"]
                or conn.check("HGET", ENQUEUE_KEYS[2], "check") != MESSAGE_BODY.encode()
                or conn.check("ZSCORE", ENQUEUE_KEYS[0], WORKER) != TIMESTAMP.encode()):
            raise RuntimeError("the enqueue script did not enqueue")
        conn.check("DEL", *ENQUEUE_KEYS)


CUSTOM_TESTS: dict[str, CustomTest] = {
    "evalsha_incr": CustomTest(("EVALSHA", sha1hex(INCR_SCRIPT), "1", COUNTER), _prepare_incr),
    "evalsha_enqueue": CustomTest(
        ("EVALSHA", sha1hex(ENQUEUE_SCRIPT), *enqueue_arguments("__rand_int__-__rand_int__")),
        _prepare_enqueue),
}
MEMORY_TEST = "script_memory"
INPROCESS_TEST = "lua_overhead"
SCRIPTING_TESTS = ("evalsha_incr", "evalsha_enqueue@random", MEMORY_TEST, INPROCESS_TEST)


# -- memory per cached script --------------------------------------------------------------------

CACHED_SCRIPTS = 10_000
_MEMORY_FIELDS = (
    ("used_memory", "used_memory"),
    ("used_memory_rss", "used_memory_rss"),
    ("used_memory_vm_eval", "Lua interpreter (used_memory_vm_eval)"),
    ("used_memory_scripts_eval", "script bodies (used_memory_scripts_eval)"),
)


COLLECT_SCRIPT = "collectgarbage('collect') return 0"


def cached_script(i: int) -> bytes:
    """A distinct script of about 140 bytes: a lock release, as clients cache them."""
    return (b"-- release the lock if this caller holds it\n"
            b"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
            b"  return redis.call('DEL', KEYS[1])\n"
            b"end\n"
            b"return %d\n" % i)


def _memory_info(conn: Connection) -> dict[str, int]:
    conn.call("MEMORY", "PURGE")  # Redis: jemalloc gives back what it can; Brook: an error
    time.sleep(0.3)  # Redis reads its RSS in serverCron (every 100 ms at hz 10)
    info = conn.check("INFO", "memory")
    assert isinstance(info, bytes)
    fields = dict(line.split(b":", 1) for line in info.splitlines() if b":" in line)
    return {name: int(fields[name.encode()]) for name, _ in _MEMORY_FIELDS
            if name.encode() in fields}


def memory_rows(ports: dict[str, int], rows: Rows, scripts: int = CACHED_SCRIPTS) -> None:
    """SCRIPT LOAD ``scripts`` distinct scripts into each (fresh) server; append the growth of
    each memory figure per script to ``rows``, as read after the loads and again after a full
    Lua garbage collection (what the interpreter holds depends on where its incremental
    collector is; the collection is one EVAL, cached before the first reading)."""
    bodies = [cached_script(i) for i in range(scripts)]
    for name, port in ports.items():
        with Connection(port) as conn:
            conn.check("EVAL", COLLECT_SCRIPT, 0)
            before = _memory_info(conn)
            for start in range(0, scripts, 1_000):
                batch = bodies[start:start + 1_000]
                conn.pipeline(b"".join(encode("SCRIPT", "LOAD", body) for body in batch),
                              len(batch))
            after = _memory_info(conn)
            conn.check("EVAL", COLLECT_SCRIPT, 0)
            collected = _memory_info(conn)
            info = conn.check("INFO", "memory")
            assert isinstance(info, bytes)
            if b"number_of_cached_scripts:%d\r\n" % (scripts + 1) not in info:
                raise RuntimeError(f"{name} does not hold {scripts} cached scripts")
            for field, label in _MEMORY_FIELDS:
                row = rows.setdefault(f"{scripts:,} cached scripts: {label}, B/script", {})
                row.setdefault(name, []).append((after[field] - before[field]) / scripts)
            row = rows.setdefault(f"{scripts:,} cached scripts: Lua interpreter after "
                                  f"collectgarbage, B/script", {})
            row.setdefault(name, []).append(
                (collected["used_memory_vm_eval"] - before["used_memory_vm_eval"]) / scripts)


# -- in process: what entering Lua costs --------------------------------------------------------


class InProcess:
    """A server with no sockets and one session, the scripts loaded."""

    def __init__(self) -> None:
        from brook.config.store import Config
        from brook.server import Server
        from brook.session import Session

        self.session = Session(Server(Config()))
        self.dispatcher = self.session.server.dispatcher
        for body in (INCR_SCRIPT, ENQUEUE_SCRIPT, b"return 1"):
            self.run([b"SCRIPT", b"LOAD", body])
        self.serial = 0

    def run(self, request: list[bytes]) -> bytes:
        reply = self.dispatcher.execute(self.session, request)
        if reply is None or reply.startswith(b"-"):
            raise RuntimeError(f"{request!r} answered {reply!r}")
        return reply

    def requests(self, name: str, calls: int) -> list[list[list[bytes]]]:
        """``calls`` groups of requests of one row (the enqueue rows: a new message id each)."""
        incr = [b"EVALSHA", sha1hex(INCR_SCRIPT).encode(), b"1", COUNTER.encode()]
        if name == "PING":
            return [[[b"PING"]]] * calls
        if name == "INCR counter":
            return [[[b"INCR", COUNTER.encode()]]] * calls
        if name == "EVALSHA of return 1, 0 keys":
            return [[[b"EVALSHA", sha1hex(b"return 1").encode(), b"0"]]] * calls
        if name == "EVALSHA of the INCR script":
            return [[incr]] * calls
        groups = []
        body = MESSAGE_BODY.encode()
        enqueue = [b"EVALSHA", sha1hex(ENQUEUE_SCRIPT).encode(),
                   *(arg.encode() for arg in enqueue_arguments("x")[:-2])]
        for _ in range(calls):
            self.serial += 1
            message_id = b"m%d" % self.serial
            if name == "ZADD + HSET + RPUSH (enqueue, plain)":
                groups.append([
                    [b"ZADD", ENQUEUE_KEYS[0].encode(), TIMESTAMP.encode(), WORKER.encode()],
                    [b"HSET", ENQUEUE_KEYS[2].encode(), message_id, body],
                    [b"RPUSH", ENQUEUE_KEYS[1].encode(), message_id]])
            else:
                groups.append([[*enqueue, message_id, body]])
        return groups

    def reset(self) -> None:
        self.run([b"DEL", COUNTER.encode(), *(key.encode() for key in ENQUEUE_KEYS)])

    def seconds_per_call(self, name: str, calls: int) -> float:
        groups = self.requests(name, calls)
        execute = self.dispatcher.execute
        session = self.session
        self.reset()
        started = time.process_time()
        for group in groups:
            for request in group:
                execute(session, request)
        spent = time.process_time() - started
        if "INCR" in name:
            check, expected = [b"GET", COUNTER.encode()], b"$%d\r\n%d\r\n" % (len(b"%d" % calls),
                                                                             calls)
        else:
            check, expected = [b"LLEN", ENQUEUE_KEYS[1].encode()], b":%d\r\n" % (
                calls if "enqueue" in name else 0)
        if self.run(check) != expected:
            raise RuntimeError(f"{name}: {check!r} did not answer {expected!r}")
        return spent / calls


INPROCESS_ROWS = ("PING", "INCR counter", "EVALSHA of return 1, 0 keys",
                  "EVALSHA of the INCR script", "ZADD + HSET + RPUSH (enqueue, plain)",
                  "EVALSHA of the enqueue script")


def inprocess_rows(repeat: int, calls: int = 100_000) -> Rows:
    """µs of CPU per ``Dispatcher.execute`` (per group of three for the plain enqueue), rounds
    of every row alternating so that drift affects all alike."""
    bench = InProcess()
    rows: Rows = {f"in process: {name} (µs CPU)": {"brook": []} for name in INPROCESS_ROWS}
    for _ in range(repeat):
        for name in INPROCESS_ROWS:
            rows[f"in process: {name} (µs CPU)"]["brook"].append(
                bench.seconds_per_call(name, calls) * 1e6)
    return rows


def profile(calls: int, top: int, request: str = "EVALSHA of the INCR script") -> str:
    """cProfile of ``calls`` runs of one in-process row: top functions by own time, and own
    time per module (share of the profiled total)."""
    bench = InProcess()
    groups = bench.requests(request, calls)
    bench.reset()
    execute = bench.dispatcher.execute
    session = bench.session
    profiler = cProfile.Profile()
    profiler.enable()
    for group in groups:
        for command in group:
            execute(session, command)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    total = stats.total_tt  # type: ignore[attr-defined]
    per_module: dict[str, float] = {}
    for (filename, _, _), entry in stats.stats.items():  # type: ignore[attr-defined]
        own = entry[2]
        if filename == "~":  # C functions Python called (len, dict.get, hashlib...)
            module = "built-ins"
        else:
            parts = Path(filename).parts
            package = len(parts) - 1 - parts[::-1].index("brook") if "brook" in parts else 0
            module = "/".join(parts[package:])
        per_module[module] = per_module.get(module, 0.0) + own
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    lines = [f"cProfile of {calls:,} × {request} (Dispatcher.execute): {total:.2f} s, "
             f"{total / calls * 1e6:.1f} µs per call under the profiler", "",
             "| module | own time (profiled) | share |", "|---|---:|---:|"]
    for module, own in sorted(per_module.items(), key=lambda item: -item[1]):
        lines.append(f"| {module} | {own / calls * 1e6:.2f} µs | {own / total:.0%} |")
    return "\n".join(lines) + "\n\n" + out.getvalue()


def print_rows(rows: Rows) -> None:
    for label, row in rows.items():
        values = row["brook"]
        print(f"| {label} | {statistics.median(values):.2f} | "
              f"{min(values):.2f}–{max(values):.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100_000, help="calls per row and round")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (the table: medians)")
    parser.add_argument("--top", type=int, default=25, help="cProfile entries shown")
    options = parser.parse_args(argv)
    print(f"Brook in process, CPU µs per call, median of {options.repeat} rounds of "
          f"{options.calls:,}:")
    print()
    print("| request | µs | range |")
    print("|---|---:|---:|")
    print_rows(inprocess_rows(options.repeat, options.calls))
    print()
    print(profile(options.calls, options.top))


if __name__ == "__main__":
    main()
