"""Brook's own CPU per request on the hot path, in this process: no sockets, no redis-benchmark.

    python -m bench.hotpath [--rows set,xadd] [--pipeline 16] [--reads 20000] [--repeat 5]
    python -m bench.hotpath --profile set       # cProfile of one row, top functions by own time

A ``Server(Config())`` and one connected :class:`brook.connection.Client` whose transport only
keeps the bytes written. Each row feeds ``Client.data_received`` reads of ``--pipeline``
requests, as ``redis-benchmark -P 16`` sends them, so everything a socket read costs Brook runs:
framing, hiredis, the dispatcher, the handler, the reply, the write. What it leaves out is the
event loop and the system calls, which compiling Brook does not change. Figures are µs of
process CPU per request (median of ``--repeat`` rounds, rows alternating): steadier on a shared
machine than requests/s, and comparable between the compiled and the pure build (run it once
with each: ``brook_build`` in the header says which).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable

ROWS: dict[str, Callable[[int], bytes]] = {}
INCR_SCRIPT = b"return redis.call('INCR', KEYS[1])"


def _command(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(arg), arg) for arg in args)


def _row(name: str, *args: bytes) -> None:
    request = _command(*args)
    ROWS[name] = lambda pipeline: request * pipeline


_row("ping", b"PING")
_row("set", b"SET", b"key:__rand_int__", b"xxx")
_row("get", b"GET", b"key:__rand_int__")
_row("incr", b"INCR", b"counter:__rand_int__")
_row("lpush", b"LPUSH", b"mylist", b"xxx")
_row("rpop", b"RPOP", b"mylist")
_row("xadd", b"XADD", b"s", b"*", b"field", b"value")
_row("xadd3", b"XADD", b"s3", b"*", b"sensor", b"1234", b"temp", b"21.5", b"hum", b"40")
# What the job frameworks send (bench.frameworks --commandstats): one "request" of a row below
# may be several commands (a transaction counts as one).
_row("expire", b"EXPIRE", b"hash", b"100")
_row("hset", b"HSET", b"hash", b"status", b"started")
_row("hincrbyfloat", b"HINCRBYFLOAT", b"hash", b"total", b"0.25")
_row("sadd", b"SADD", b"set", b"member:1")
_row("sismember", b"SISMEMBER", b"set", b"member:1")
_row("zadd", b"ZADD", b"zset", b"1700000000.5", b"job:1")
_row("zrangebyscore", b"ZRANGEBYSCORE", b"zset", b"-inf", b"+inf", b"LIMIT", b"0", b"10")
# The same on `bigzset`, 1,000 members (a skiplist; `zset`'s 100 are a listpack).
_row("zadd_1k", b"ZADD", b"bigzset", b"1700000000.5", b"job:1")
_row("zrangebyscore_1k", b"ZRANGEBYSCORE", b"bigzset", b"-inf", b"+inf", b"LIMIT", b"0", b"10")
_row("evalsha", b"EVALSHA", b"61636018f4e6b5817b89791bbed242f93fa089e3", b"1", b"counter")
# What redis-py 8 sends on every new connection after HELLO (the handshake of a short-lived one).
ROWS["handshake"] = lambda pipeline: b"".join((
    _command(b"CLIENT", b"SETINFO", b"LIB-NAME", b"redis-py"),
    _command(b"CLIENT", b"SETINFO", b"LIB-VER", b"8.1.0"),
    _command(b"CLIENT", b"MAINT_NOTIFICATIONS", b"ON", b"moving-endpoint-type", b"internal-ip"),
)) * pipeline
ROWS["multi"] = lambda pipeline: b"".join((
    _command(b"MULTI"), _command(b"HSET", b"hash", b"status", b"started"),
    _command(b"EXPIRE", b"hash", b"100"), _command(b"EXEC"))) * pipeline
ROWS["worker"] = ROWS["ping"]  # not fed as is: HotPath.worker (µs per entry delivered and acked)
ROWS["scan"] = ROWS["ping"]  # not fed as is: HotPath.scan (µs per entry of a full XRANGE scan)
ROWS["xadd_idmp"] = ROWS["ping"]  # not fed as is: HotPath.idmp (the Spark sink's exactly-once XADD)
# Sets beyond one small set's: a large set's lookups, replies of 1,000 members, an intersection
# (HotPath.sets fills them), a new member per request, and pops that empty a large set.
_row("sismember_large", b"SISMEMBER", b"large", b"element:000000012345")
_row("smembers", b"SMEMBERS", b"s1000")
_row("sinter", b"SINTER", b"s1000", b"t1000")
ROWS["sadd_new"] = ROWS["ping"]  # not fed as is: HotPath.distinct (SADD of a new member each)
ROWS["spop"] = ROWS["ping"]  # not fed as is: a set filled with a member per SPOP first
_SET_ROWS = ("sismember_large", "smembers", "sinter")


class _Transport:
    """What the client needs of a transport; keeps the number of bytes written, and the last
    write when asked to (the worker row reads its replies)."""

    def __init__(self) -> None:
        self.written = 0
        self.keep = False
        self.last = b""

    def write(self, data: bytes) -> None:
        self.written += len(data)
        if self.keep:
            self.last = data

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 1) if name in ("peername", "sockname") else default

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False

    def is_reading(self) -> bool:
        return True

    def close(self) -> None:
        pass


class HotPath:
    """One server, one connected client."""

    def __init__(self) -> None:
        from brook.config.store import Config
        from brook.server import Server

        self.server = Server(Config())
        self.client = self.server.new_client()
        self.transport = _Transport()
        self.client.connection_made(self.transport)  # type: ignore[arg-type]

    def reset(self) -> None:
        self.client.data_received(_command(b"FLUSHALL"))
        self.client.data_received(_command(b"RPUSH", b"mylist", *[b"xxx"] * 100))
        self.client.data_received(_command(b"HSET", b"hash", b"status", b"queued"))
        self.client.data_received(_command(b"SADD", b"set", b"member:1"))  # SISMEMBER's set
        for key, count in ((b"zset", 100), (b"bigzset", 1000)):
            members = [part for n in range(count) for part in (b"%d" % n, b"job:%d" % n)]
            self.client.data_received(_command(b"ZADD", key, *members))
        self.client.data_received(_command(b"SCRIPT", b"LOAD", INCR_SCRIPT))

    def sets(self) -> None:
        """The sets the set rows read: ``large`` (100,000 members), ``s1000`` and ``t1000``
        (1,000 each, half of them shared)."""
        receive = self.client.data_received
        for start in range(0, 100_000, 100):
            receive(_command(b"SADD", b"large",
                             *[b"element:%012d" % n for n in range(start, start + 100)]))
        receive(_command(b"SADD", b"s1000", *[b"member:%d" % n for n in range(1000)]))
        receive(_command(b"SADD", b"t1000", *[b"member:%d" % n for n in range(500, 1500)]))

    def distinct(self, name: str, reads: int, pipeline: int) -> float:
        """µs of CPU per ``SADD grown <new member>`` (the set grows from nothing through its
        encodings), or per ``SPOP popped`` of a set holding a member for each."""
        receive = self.client.data_received
        self.reset()
        total = reads * pipeline
        if name == "spop":
            for start in range(0, total, 100):
                receive(_command(b"SADD", b"popped",
                                 *[b"member:%d" % n for n in range(start, start + 100)]))
            payloads = [_command(b"SPOP", b"popped") * pipeline] * reads
        else:
            payloads = [b"".join(_command(b"SADD", b"grown", b"member:%d" % n)
                                 for n in range(read * pipeline, (read + 1) * pipeline))
                        for read in range(reads)]
        started = time.process_time()
        for payload in payloads:
            receive(payload)
        spent = time.process_time() - started
        return spent * 1e6 / total

    def fill(self, key: bytes, entries: int) -> None:
        """``entries`` readings (three fields) in stream ``key``, XADDed 100 per read."""
        fill = _command(b"XADD", key, b"*", b"sensor", b"1234", b"temp", b"21.5", b"hum", b"40")
        for _ in range(entries // 100):
            self.client.data_received(fill * 100)

    def scan(self, entries: int) -> float:
        """µs of CPU per entry of a full scan in ``XRANGE s (<last> + COUNT 1000`` pages
        (bench.streams's scan), over a stream of ``entries`` readings."""
        import hiredis

        receive = self.client.data_received
        self.reset()
        self.fill(b"r", entries)
        transport = self.transport
        transport.keep = True
        reader = hiredis.Reader()
        start = b"-"
        started = time.process_time()
        while True:
            receive(_command(b"XRANGE", b"r", start, b"+", b"COUNT", b"1000"))
            reader.feed(transport.last)
            page = reader.gets()
            if not page:
                break
            start = b"(" + page[-1][0]
        spent = time.process_time() - started
        transport.keep = False
        return spent * 1e6 / entries

    def idmp(self, reads: int, pipeline: int) -> float:
        """µs of CPU per ``XADD k IDMP <producer> <iid> * ...`` as the Spark sink's exactly-once
        writes send them: a new 16-byte idempotent ID each, 10,000 per producer."""
        receive = self.client.data_received
        self.reset()
        payloads = []
        for read in range(reads):
            payloads.append(b"".join(
                _command(b"XADD", b"sink", b"IDMP", b"job:%d" % (n // 10_000), b"%016d" % n,
                         b"*", b"name", b"page-%d" % (n % 97), b"value", b"%d.5" % n, b"n", b"%d" % n)
                for n in range(read * pipeline, (read + 1) * pipeline)))
        started = time.process_time()
        for payload in payloads:
            receive(payload)
        spent = time.process_time() - started
        return spent * 1e6 / (reads * pipeline)

    def worker(self, entries: int) -> float:
        """µs of CPU per entry of a consumer-group worker: each read is the XACK of the last
        reply's IDs and the next ``XREADGROUP ... COUNT 100`` (bench.groups's loop)."""
        import hiredis

        receive = self.client.data_received
        self.reset()
        self.fill(b"w", entries)
        receive(_command(b"XGROUP", b"CREATE", b"w", b"g", b"0"))
        read = _command(b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"100", b"STREAMS", b"w",
                        b">")
        transport = self.transport
        transport.keep = True
        reader = hiredis.Reader()
        ack = b""
        started = time.process_time()
        while True:
            receive(ack + read)
            reader.feed(transport.last)
            if ack:
                reader.gets()
            reply = reader.gets()
            if not reply:
                break
            ids = [entry[0] for entry in reply[0][1]]
            ack = _command(b"XACK", b"w", b"g", *ids)
        spent = time.process_time() - started
        transport.keep = False
        return spent * 1e6 / entries

    def run(self, name: str, pipeline: int, reads: int) -> float:
        """µs of CPU per request for ``reads`` reads of ``pipeline`` requests of a row."""
        if name == "worker":
            return self.worker(reads * pipeline)
        if name == "scan":
            return self.scan(reads * pipeline)
        if name == "xadd_idmp":
            return self.idmp(reads, pipeline)
        if name in ("sadd_new", "spop"):
            return self.distinct(name, reads, pipeline)
        payload = ROWS[name](pipeline)
        receive = self.client.data_received
        self.reset()
        if name in _SET_ROWS:
            self.sets()
        if name == "rpop":  # a list long enough for every pop
            for _ in range(reads):
                receive(ROWS["lpush"](pipeline))
        started = time.process_time()
        for _ in range(reads):
            receive(payload)
        spent = time.process_time() - started
        return spent * 1e6 / (reads * pipeline)


def build() -> str:
    from brook.build import BUILD

    return BUILD


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--reads", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", help="cProfile one row instead")
    options = parser.parse_args(argv)
    bench = HotPath()
    if options.profile:
        profile = cProfile.Profile()
        profile.enable()
        bench.run(options.profile, options.pipeline, options.reads)
        profile.disable()
        stream = io.StringIO()
        pstats.Stats(profile, stream=stream).sort_stats("tottime").print_stats(25)
        print(stream.getvalue())
        return
    names = options.rows.split(",")
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(options.repeat):
        for name in names:
            samples[name].append(bench.run(name, options.pipeline, options.reads))
    print(f"brook_build:{build()}  -P {options.pipeline}, {options.reads} reads per round, "
          f"median of {options.repeat}")
    print("| row | µs CPU/request |\n|---|---:|")
    for name in names:
        print(f"| {name} | {statistics.median(samples[name]):.3f} |")


if __name__ == "__main__":
    main()
