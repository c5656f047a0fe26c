"""maxmemory, eviction, memory accounting, MEMORY, and output buffer limits.

Where Redis is deterministic (a limit of one byte makes every ``denyoom`` command fail, the
first LFU counters, MEMORY's argument errors) the tests run against Brook and real Redis alike.
Fills, eviction policies and accounting depend on each server's allocator, so those run on
Brook, with bounds taken from the limits themselves; Redis's ``tests/unit/maxmemory.tcl`` was
the guide.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import (
    RawConnection,
    ServerProcess,
    Spawn,
    encode_request,
    redis_binary,
    start_brook,
    start_redis,
)

OOM = "command not allowed when used memory > 'maxmemory'."


def fill_then_limit(r: redis.Redis) -> None:
    """Some data, then a one-byte limit: every server is over it, whatever its overhead."""
    r.set("ballast", b"x" * 100_000)
    r.config_set("maxmemory", "1")


# -- out of memory with noeviction (parity) ------------------------------------------------------

def test_denyoom_commands_get_oom_and_change_nothing(r: redis.Redis):
    r.rpush("queue", "a", "b", "c")
    r.xadd("events", {"f": "v"}, id="1-0")
    r.xgroup_create("events", "g", id="0")
    r.xreadgroup("g", "c1", {"events": ">"})
    fill_then_limit(r)
    for call in (lambda: r.set("k", "v"), lambda: r.rpush("queue", "d"),
                 lambda: r.incr("n"), lambda: r.xadd("events", {"f": "v"}, id="2-0"),
                 lambda: r.hset("h", "f", "v"), lambda: r.sadd("s", "m"),
                 lambda: r.zadd("z", {"m": 1}), lambda: r.append("ballast", "x")):
        with pytest.raises(redis.exceptions.OutOfMemoryError, match="maxmemory"):
            call()
    assert r.exists("k", "n", "h", "s", "z") == 0
    assert r.llen("queue") == 3
    assert r.xlen("events") == 1
    assert r.strlen("ballast") == 100_000


def test_a_full_server_drains(r: redis.Redis):
    """Reads, pops, acknowledgements and deletions run over the limit: a full queue empties."""
    r.rpush("queue", "a", "b")
    r.xadd("events", {"f": "v"}, id="1-0")
    r.xgroup_create("events", "g", id="0")
    r.xreadgroup("g", "c1", {"events": ">"})
    fill_then_limit(r)
    assert r.get("ballast") is not None
    assert r.lpop("queue") == b"a"
    assert r.xack("events", "g", "1-0") == 1
    assert r.xdel("events", "1-0") == 1
    assert r.delete("ballast") == 1
    assert r.expire("queue", 100) is True
    assert r.ping() is True


def test_oom_error_text_and_stats(server: ServerProcess, raw: RawConnection):
    r = server.client()
    fill_then_limit(r)
    raw.send(encode_request("SET", "k", "v"))
    assert raw.read(until=b"\r\n") == f"-OOM {OOM}\r\n".encode()
    stats = r.info("commandstats")["cmdstat_set"]
    assert stats["rejected_calls"] >= 1
    assert r.info("errorstats")["errorstat_OOM"]["count"] >= 1


def test_denyoom_command_queued_in_multi_aborts_exec(r: redis.Redis, raw: RawConnection):
    fill_then_limit(r)
    assert raw.call("MULTI") == b"OK"
    assert str(raw.call("SET", "k", "v")) == f"OOM {OOM}"
    reply = raw.call("EXEC")
    assert str(reply) == "EXECABORT Transaction discarded because of previous errors."
    assert r.exists("k") == 0


@pytest.mark.min_redis(7, 4)
def test_reads_queue_in_multi_over_the_limit(r: redis.Redis, raw: RawConnection):
    """Redis 7.4 stopped refusing every queued command over the limit (#12961): only what
    would add memory is refused."""
    fill_then_limit(r)
    assert raw.call("MULTI") == b"OK"
    assert raw.call("STRLEN", "ballast") == b"QUEUED"
    assert raw.call("DISCARD") == b"OK"


@pytest.mark.min_redis(7, 4)
def test_queued_commands_count_toward_the_query_buffer_limit(server: ServerProcess):
    """...and bounds a transaction's queue by client-query-buffer-limit instead."""
    r = server.client()
    r.config_set("client-query-buffer-limit", str(1024 * 1024))
    conn = RawConnection(server.port)
    try:
        assert conn.call("MULTI") == b"OK"
        for _ in range(30):
            try:
                conn.send(encode_request("SET", "k", b"x" * 50_000))
            except (ConnectionResetError, BrokenPipeError):
                break  # the server has closed the connection already, while we still sent
        assert conn.read(timeout=2).endswith(b"<CLOSED>")
        assert r.info("stats")["client_query_buffer_limit_disconnections"] == 1
    finally:
        conn.close()


def test_exec_refused_when_memory_ran_out_after_queueing(r: redis.Redis, raw: RawConnection):
    r.set("ballast", b"x" * 100_000)
    assert raw.call("MULTI") == b"OK"
    assert raw.call("SET", "k", "v") == b"QUEUED"
    r.config_set("maxmemory", "1")
    reply = raw.call("EXEC")
    assert str(reply) == f"EXECABORT Transaction discarded because of: OOM {OOM}"
    assert r.exists("k") == 0
    assert raw.call("GET", "k") is None  # the transaction is gone: a plain command runs


def test_read_only_transaction_runs_over_the_limit(r: redis.Redis, raw: RawConnection):
    r.set("ballast", b"x" * 100_000)
    assert raw.call("MULTI") == b"OK"
    assert raw.call("STRLEN", "ballast") == b"QUEUED"
    r.config_set("maxmemory", "1")
    assert raw.call("EXEC") == [100_000]


def test_scripts_over_the_limit(r: redis.Redis):
    r.function_load("#!lua name=lib\n"
                    "redis.register_function('w', function() return redis.call('set', 'k3', 'v') end)\n"
                    "redis.register_function{function_name='w2', callback=function() "
                    "return redis.call('set', 'k4', 'v') end, flags={'allow-oom'}}")
    fill_then_limit(r)
    assert r.eval("return redis.call('strlen', 'ballast')", 0) == 100_000
    with pytest.raises(redis.exceptions.ResponseError, match=f"^{OOM}"):
        r.eval("return redis.call('set', 'k', 'v')", 0)
    # Only a script's first write can be refused: after a write, it must be let finish.
    assert r.eval("redis.call('del', 'nothing'); return redis.call('set', 'k', 'v')", 0) == b"OK"
    # A script that declares flags is refused before it runs unless it may run out of memory.
    with pytest.raises(redis.exceptions.OutOfMemoryError, match=f"^{OOM}$"):
        r.eval("#!lua\nreturn redis.call('set', 'k2', 'v')", 0)
    assert r.eval("#!lua flags=allow-oom\nreturn redis.call('set', 'k2', 'v')", 0) == b"OK"
    assert r.eval("#!lua flags=no-writes\nreturn redis.call('get', 'k2')", 0) == b"v"
    with pytest.raises(redis.exceptions.OutOfMemoryError, match=f"^{OOM}$"):
        r.fcall("w", 0)
    assert r.fcall("w2", 0) == b"OK"
    assert r.exists("k3") == 0


def test_eviction_fields_in_info(r: redis.Redis):
    stats = r.info("stats")
    for field in ("evicted_keys", "evicted_clients", "total_eviction_exceeded_time",
                  "current_eviction_exceeded_time"):
        assert field in stats
    memory = r.info("memory")
    for field in ("used_memory", "used_memory_rss", "used_memory_peak", "used_memory_startup",
                  "used_memory_dataset", "mem_fragmentation_ratio", "maxmemory",
                  "maxmemory_policy", "mem_not_counted_for_evict", "mem_clients_normal"):
        assert field in memory


# -- LFU counters (parity) -----------------------------------------------------------------------

def test_lfu_counter_starts_at_five_and_the_first_access_counts(r: redis.Redis):
    r.config_set("maxmemory", "1gb")  # shared integers off in Redis, as with any limit
    r.config_set("maxmemory-policy", "allkeys-lfu")
    r.set("k", "v")
    assert r.object("freq", "k") == 5
    r.get("k")
    assert r.object("freq", "k") == 6
    r.set("n", 1000)
    assert r.object("freq", "n") == 5
    with pytest.raises(redis.exceptions.ResponseError, match="LFU maxmemory policy is selected"):
        r.object("idletime", "k")


def test_lfu_counter_grows_logarithmically(r: redis.Redis):
    r.config_set("maxmemory", "1gb")
    r.config_set("maxmemory-policy", "allkeys-lfu")
    r.config_set("lfu-log-factor", "0")  # every access counts
    r.set("k", "v")
    for _ in range(100):
        r.get("k")
    assert r.object("freq", "k") == 105
    r.config_set("lfu-log-factor", "10")
    for _ in range(200):
        r.get("k")
    assert 105 <= r.object("freq", "k") < 110  # p = 1 / (100 * 10 + 1) per access


@pytest.mark.parametrize(("limit", "policy", "shared"), [
    ("0", "allkeys-lru", True), ("1gb", "allkeys-random", True), ("1gb", "noeviction", True),
    ("1gb", "allkeys-lru", False), ("1gb", "volatile-lfu", False),
])
def test_small_integers_are_shared_unless_keys_need_their_own_lru(
        r: redis.Redis, limit: str, policy: str, shared: bool):
    r.config_set("maxmemory", limit)
    r.config_set("maxmemory-policy", policy)
    r.set("a", 1)
    assert (r.object("refcount", "a") > 1) is shared


# -- MEMORY (parity) -----------------------------------------------------------------------------

def test_memory_usage_arguments(r: redis.Redis):
    r.rpush("list", "a", "b")
    assert r.memory_usage("missing") is None
    assert r.memory_usage("list") > 0
    assert r.memory_usage("list", samples=0) > 0
    for args, error in ((("SAMPLES", "-1"), "syntax error"),
                        (("SAMPLES", "x"), "value is not an integer or out of range"),
                        (("FOO",), "syntax error"), (("SAMPLES",), "syntax error")):
        with pytest.raises(redis.exceptions.ResponseError, match=error):
            r.execute_command("MEMORY", "USAGE", "list", *args)


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_memory_help_doctor_purge(kind: str, tmp_path: Path):
    """On a fresh server: the shared one of the other tests has served thousands of them, and
    in two full runs Brook's used_memory stood more than 5 MB (DOCTOR's "empty" threshold)
    above its start-up reading there after FLUSHALL; what holds it is not known yet."""
    if kind == "redis" and redis_binary() is None:
        pytest.skip("redis-server is not installed")
    process = start_brook(tmp_path) if kind == "brook" else start_redis(tmp_path)
    try:
        _check_memory_help_doctor_purge(process.client())
    finally:
        process.stop()


def _check_memory_help_doctor_purge(r: redis.Redis) -> None:
    help_lines = r.execute_command("MEMORY", "HELP")
    assert help_lines[0].startswith(b"MEMORY <subcommand>")
    assert len(help_lines) == 14
    assert r.execute_command("MEMORY", "DOCTOR").startswith(
        b"Hi Sam, this instance is empty or is using very little memory")
    assert r.execute_command("MEMORY", "PURGE") == b"OK"
    stats = r.execute_command("MEMORY", "STATS")
    fields = dict(zip(stats[::2], stats[1::2], strict=True))
    for name in (b"peak.allocated", b"total.allocated", b"startup.allocated", b"keys.count",
                 b"dataset.bytes", b"fragmentation"):
        assert name in fields


def test_memory_usage_follows_the_value(brook: ServerProcess):
    r = brook.client()
    r.set("small", "v")
    r.set("large", b"x" * 100_000)
    assert 100_000 <= r.memory_usage("large") < 100_400
    assert r.memory_usage("small") < 300
    r.rpush("list", *[b"e" * 100] * 10_000)
    assert 1_000_000 <= r.memory_usage("list") < 1_600_000


@pytest.mark.parametrize("member", [b"%d", b"member:%013d", b"x" * 300 + b"%d"],
                         ids=["in-slot", "short", "long"])
def test_memory_usage_of_a_set_is_what_filling_it_took(brook: ServerProcess, member: bytes):
    """A set's members have no Python objects on the compiled build (brook/types/_member_set.c):
    MEMORY USAGE reads its __sizeof__, which must say what the allocators hold for it."""
    r = brook.client()
    r.flushall()
    before = r.info("memory")["used_memory"]
    pipe = r.pipeline(transaction=False)
    for start in range(0, 10_000, 1000):
        pipe.sadd("s", *[member % n for n in range(start, start + 1000)])
    pipe.execute()
    grown = r.info("memory")["used_memory"] - before
    assert r.object("encoding", "s") == b"hashtable"
    assert 0.85 * grown <= r.memory_usage("s", samples=0) <= 1.15 * grown


# -- accounting (Brook) --------------------------------------------------------------------------

def test_used_memory_rises_and_falls_with_the_data(brook: ServerProcess):
    r = brook.client()
    before = r.info("memory")["used_memory"]
    pipe = r.pipeline(transaction=False)
    for index in range(5000):
        pipe.set(f"key:{index}", b"v" * 10_000)
    pipe.execute()
    filled = r.info("memory")
    assert filled["used_memory"] - before >= 50_000_000
    assert filled["used_memory_dataset"] >= 50_000_000
    r.flushall()
    after = r.info("memory")
    assert after["used_memory"] - before < 2_000_000  # RSS keeps the pages; used does not
    assert after["used_memory_rss"] > after["used_memory"]


def test_client_buffers_count(brook: ServerProcess):
    r = brook.client()
    before = r.info("memory")["mem_clients_normal"]
    sock = socket.create_connection(("127.0.0.1", brook.port))
    try:
        sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000\r\n" + b"x" * 500_000)
        deadline = time.monotonic() + 5
        while r.info("memory")["mem_clients_normal"] - before < 500_000:
            assert time.monotonic() < deadline, "the query buffer is not counted"
            time.sleep(0.05)
    finally:
        sock.close()


# -- eviction (Brook) ----------------------------------------------------------------------------
# These fill a server of their own: a limit of a few megabytes is compared with everything the
# process holds beyond its start-up, and the session's shared server holds what hundreds of
# earlier tests left in its caches.


@pytest.fixture(scope="module")
def own_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = start_brook(tmp_path_factory.mktemp("maxmemory"))
    yield proc
    proc.stop()


@pytest.fixture
def own(own_process: ServerProcess) -> ServerProcess:
    client = own_process.client()
    client.config_set("maxmemory", "0")
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("notify-keyspace-events", "")
    client.flushall()
    client.config_resetstat()
    client.close()
    return own_process

ROOM = 8 * 1024 * 1024  # what a test's limit leaves for data above what the server holds
VALUE = b"v" * 1000


def limit_with_room(r: redis.Redis) -> int:
    """Set ``maxmemory`` to what the server holds now plus ROOM (as Redis's maxmemory.tcl sets
    its limits: the whole of used_memory counts against the limit, in Brook as in Redis)."""
    limit = r.info("memory")["used_memory"] + ROOM
    r.config_set("maxmemory", str(limit))
    return limit


def fill(r: redis.Redis, count: int, prefix: str = "k", ttl: int | None = None) -> int:
    """Write ``count`` 1 KB keys in pipelines; returns how many were refused."""
    refused = 0
    pipe = r.pipeline(transaction=False)
    for index in range(count):
        pipe.set(f"{prefix}{index}", VALUE, ex=ttl)
        if index % 200 == 199 or index == count - 1:
            refused += sum(isinstance(reply, Exception)
                           for reply in pipe.execute(raise_on_error=False))
    return refused


def counted(r: redis.Redis) -> int:
    """What counts against the limit."""
    memory = r.info("memory")
    return memory["used_memory"] - memory["mem_not_counted_for_evict"]


@pytest.mark.parametrize("policy", ["allkeys-random", "allkeys-lru", "allkeys-lfu",
                                    "volatile-random", "volatile-lru", "volatile-lfu",
                                    "volatile-ttl"])
def test_eviction_keeps_memory_under_the_limit(own: ServerProcess, policy: str):
    r = own.client()
    r.config_set("maxmemory-policy", policy)
    limit = limit_with_room(r)
    assert fill(r, 30_000, ttl=10_000) == 0  # 30 MB of writes into 8 MB: none refused
    assert r.info("stats")["evicted_keys"] > 15_000
    assert counted(r) < limit + ROOM * 0.1
    assert 4000 < r.dbsize() < 9000


def test_volatile_policies_evict_only_keys_with_a_ttl(own: ServerProcess):
    r = own.client()
    r.config_set("maxmemory-policy", "volatile-lru")
    fill(r, 3000, prefix="persistent:")
    limit_with_room(r)
    fill(r, 10_000, prefix="volatile:", ttl=10_000)
    assert len(r.keys("persistent:*")) == 3000
    assert r.info("stats")["evicted_keys"] > 0
    # Once no key has a TTL left, nothing can be evicted: writes are refused.
    r.delete(*r.keys("volatile:*"))
    assert fill(r, 10_000, prefix="more:") > 0
    assert len(r.keys("persistent:*")) == 3000


def test_volatile_ttl_evicts_the_nearest_deadlines_first(own: ServerProcess):
    r = own.client()
    r.config_set("maxmemory-policy", "volatile-ttl")
    limit_with_room(r)
    fill(r, 4000, prefix="soon:", ttl=1000)
    fill(r, 4000, prefix="late:", ttl=100_000)
    fill(r, 4000, prefix="later:", ttl=200_000)
    assert len(r.keys("soon:*")) < len(r.keys("later:*"))


def test_lru_keeps_recently_used_keys(own: ServerProcess):
    r = own.client()
    r.config_set("maxmemory-policy", "allkeys-lru")
    limit_with_room(r)
    fill(r, 3000, prefix="cold:")
    time.sleep(2.1)  # the LRU clock counts seconds, as Redis's
    fill(r, 1000, prefix="hot:")
    time.sleep(1.1)
    fill(r, 5000, prefix="new:")
    # Sampled LRU (5 keys a pick, a pool of 16) takes mostly the coldest, as Redis's does:
    # hot keys go at less than half the rate of cold ones. (Rates of the keys evicted, not of
    # those kept: how many must go depends on the memory estimate, which keys go on the LRU.)
    cold_evicted = (3000 - len(r.keys("cold:*"))) / 3000
    hot_evicted = (1000 - len(r.keys("hot:*"))) / 1000
    assert cold_evicted > 0.2
    assert hot_evicted < cold_evicted / 2


def test_lfu_keeps_frequently_used_keys(own: ServerProcess):
    r = own.client()
    r.config_set("maxmemory-policy", "allkeys-lfu")
    limit_with_room(r)
    fill(r, 1000, prefix="hot:")
    pipe = r.pipeline(transaction=False)
    for _ in range(20):
        for index in range(1000):
            pipe.get(f"hot:{index}")
        pipe.execute()
    fill(r, 12_000, prefix="cold:")
    assert len(r.keys("hot:*")) > 900


def test_evictions_are_announced(own: ServerProcess):
    r = own.client()
    r.config_set("notify-keyspace-events", "Ee")
    try:
        listener = r.pubsub()
        listener.subscribe("__keyevent@0__:evicted")
        listener.get_message(timeout=1)
        r.config_set("maxmemory-policy", "allkeys-random")
        limit_with_room(r)
        fill(r, 12_000)
        message = listener.get_message(timeout=2)
        assert message is not None and message["data"].startswith(b"k")
        listener.close()
    finally:
        r.config_set("notify-keyspace-events", "")


def test_evictions_reach_the_aof_and_survive_a_kill(tmp_path: Path):
    proc = start_brook(tmp_path, "--appendonly", "yes", "--appendfsync", "always",
                       "--maxmemory-policy", "allkeys-lru")
    try:
        r = proc.client()
        limit_with_room(r)
        assert fill(r, 20_000) == 0
        assert r.info("stats")["evicted_keys"] > 5000
        # No more evictions from here (a read over the limit may still evict): what the server
        # holds now is what the AOF must give back.
        r.config_set("maxmemory", "0")
        survivors = {key: r.get(key) for key in r.keys("*")}
        assert None not in survivors.values()
        proc.process.kill()  # kill -9: what was acknowledged is in the AOF
        proc.process.wait()
        proc = start_brook(tmp_path, "--appendonly", "yes", port=proc.port)
        r = proc.client()
        assert {key: r.get(key) for key in r.keys("*")} == survivors
    finally:
        proc.stop()


def test_noeviction_fill_refuses_writes_and_deletes_make_room(spawn: Spawn):
    """Against Brook and Redis: the room deletions and flushes make is writable at once, in
    the same read (Brook credits a removed key's estimate and reads the allocators after a
    flush; before, writes were refused until a reading it rations)."""
    r = spawn().client()
    limit = limit_with_room(r)
    refused = fill(r, 20_000)
    assert refused > 10_000
    stored = r.dbsize()
    assert 5000 < stored < 9000
    assert counted(r) < limit + ROOM * 0.2
    for clear in ((lambda pipe: pipe.delete(*[f"k{index}" for index in range(3000)])),
                  (lambda pipe: pipe.flushall())):
        pipe = r.pipeline(transaction=False)
        clear(pipe)
        for index in range(1000):
            pipe.set(f"again:{index}", VALUE)
        replies = pipe.execute(raise_on_error=False)
        assert not [reply for reply in replies if isinstance(reply, Exception)]
        assert fill(r, 20_000, prefix="full:") > 10_000  # at the limit again


# -- client output buffers and client eviction ---------------------------------------------------

def unread_replies(port: int, requests: int) -> socket.socket:
    """A client that pipelines LRANGEs of a 1 MB list and never reads."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    payload = encode_request("LRANGE", "big", 0, -1) * requests
    sock.setblocking(False)
    sent = 0
    deadline = time.monotonic() + 5
    while sent < len(payload) and time.monotonic() < deadline:
        try:
            sent += sock.send(payload[sent:])
        except BlockingIOError:
            time.sleep(0.01)
        except OSError:
            break
    return sock


def closed_by_server(sock: socket.socket, timeout: float = 5) -> bool:
    """Whether the server closed ``sock`` (its unread data is drained on the way)."""
    sock.setblocking(True)
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(1 << 20)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_normal_output_limit_disconnects_a_client_that_does_not_read(r: redis.Redis):
    r.rpush("big", *[b"x" * 1000] * 1000)
    r.config_set("client-output-buffer-limit", "normal 2mb 0 0")
    sock = unread_replies(int(r.connection_pool.connection_kwargs["port"]), 50)
    try:
        time.sleep(0.5)
        assert closed_by_server(sock)
    finally:
        sock.close()
    assert r.ping() is True
    stats = r.info("stats")
    if "client_output_buffer_limit_disconnections" in stats:  # Redis 7.2+
        assert stats["client_output_buffer_limit_disconnections"] == 1


def test_without_limits_an_unread_client_holds_bounded_memory(brook: ServerProcess):
    """Brook stops reading a client whose replies are not taken (Redis buffers them all)."""
    r = brook.client()
    r.rpush("big", *[b"x" * 1000] * 1000)
    before = r.info("memory")["used_memory"]
    sock = unread_replies(brook.port, 200)  # 200 MB of replies if all were produced
    try:
        time.sleep(0.5)
        assert r.info("memory")["used_memory"] - before < 30_000_000
        assert r.info("stats")["client_output_buffer_limit_disconnections"] == 0
    finally:
        sock.close()


@pytest.mark.parametrize(("value", "shown", "error"), [
    ("10%", "10%", None), ("0%", "0", None), ("100%", "100%", None), ("5mb", "5242880", None),
    ("101%", None, "percentage argument must be less or equal to 100"),
    ("-1%", None, "argument must be a memory or percent value"),
    ("abc%", None, "argument must be a memory or percent value"),
    ("1.5%", None, "argument must be a memory or percent value"),
])
def test_maxmemory_clients_takes_a_percentage(r: redis.Redis, value: str, shown: str | None,
                                              error: str | None):
    if error is None:
        r.config_set("maxmemory-clients", value)
        assert r.config_get("maxmemory-clients") == {"maxmemory-clients": shown}
    else:
        with pytest.raises(redis.exceptions.ResponseError, match=error):
            r.config_set("maxmemory-clients", value)


def test_maxmemory_clients_evicts_the_biggest_client(server: ServerProcess):
    r = server.client()
    r.client_setname("keeper")
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.config_set("maxmemory-clients", str(2 * 1024 * 1024))
    sock = socket.create_connection(("127.0.0.1", server.port))
    try:
        # A request announced at 10 MB and half sent: its query buffer grows past the limit.
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):  # evicted mid-send
            sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10000000\r\n" + b"x" * 4_000_000)
        deadline = time.monotonic() + 10
        while r.info("stats")["evicted_clients"] < 1:
            assert time.monotonic() < deadline, "no client was evicted"
            time.sleep(0.05)
        assert closed_by_server(sock)
        assert r.client_getname() == "keeper"
    finally:
        sock.close()
        r.config_set("maxmemory-clients", "0")
