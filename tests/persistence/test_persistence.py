"""Restart round trips through the AOF, a rewritten AOF and a snapshot; SAVE, BGSAVE,
BGREWRITEAOF, save points, automatic rewrites, DEBUG RELOAD, INFO persistence.

Real Brook processes in a temporary directory; the state is built and read by real clients.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest
import redis

from tests.conftest import ServerProcess, run_refused_brook, start_brook

AOF = ("--appendonly", "yes", "--appendfsync", "everysec")
NO_AOF = ("--appendonly", "no")


def build_rich_state(r: redis.Redis) -> None:
    """Streams with deletions and trims, groups with PELs in several consumers, NACKed
    entries, IDMP, lists, hashes, strings and expiring keys, in two databases."""
    for i in range(300):
        r.xadd("s", {"n": i, "payload": "x" * (i % 7)})
    ids = [entry_id for entry_id, _ in r.xrange("s")]
    r.xdel("s", ids[5], ids[17], ids[150])
    r.execute_command("XTRIM", "s", "MAXLEN", "~", 250)
    r.execute_command("XTRIM", "s", "MINID", ids[40])
    r.xgroup_create("s", "g1", id="0")
    r.xgroup_create("s", "g2", id="$")
    r.execute_command("XGROUP", "CREATECONSUMER", "s", "g1", "idle-one")
    r.xreadgroup("g1", "alice", {"s": ">"}, count=20)
    r.xreadgroup("g1", "bob", {"s": ">"}, count=15)
    r.xreadgroup("g1", "alice", {"s": "0"}, count=5)  # re-delivery: counts go up
    pending = r.execute_command("XPENDING", "s", "g1", "-", "+", 100)
    r.xack("s", "g1", pending[0][0], pending[3][0])
    r.execute_command("XCLAIM", "s", "g1", "carol", 0, pending[5][0], pending[6][0])
    r.execute_command("XNACK", "s", "g1", "FAIL", "IDS", 1, pending[25][0])
    r.xadd("s", {"late": 1})
    r.xreadgroup("g2", "dave", {"s": ">"}, count=1)
    r.xadd("idem", {"k": "first"})
    r.execute_command("XCFGSET", "idem", "IDMP-DURATION", 300, "IDMP-MAXSIZE", 50)
    r.execute_command("XADD", "idem", "IDMP", "producer", "req-1", "*", "k", "v")
    r.execute_command("XADD", "idem", "IDMP", "producer", "req-2", "*", "k", "w")
    r.rpush("long", *[f"item-{i}" for i in range(5000)])
    r.lpop("long", 7)
    r.rpush("short", "a", "b", "c")
    r.hset("h", mapping={f"f{i}": i for i in range(40)})
    r.hset("small", mapping={"a": "1"})
    r.set("str", "value")
    r.set("ttl", "v", px=3_000_000)
    r.rpush("ttl-list", "x")
    r.pexpire("ttl-list", 4_000_000)
    r.execute_command("SELECT", 5)
    r.set("db5", "here")
    r.execute_command("SELECT", 0)


def read_state(r: redis.Redis) -> dict[str, object]:
    """What clients can see. Consumer idle/inactive times move with the clock, so they are
    compared separately (``idle_times``)."""
    state: dict[str, object] = {
        "stream": _mask_times(r.execute_command("XINFO", "STREAM", "s", "FULL")),
        "pending": [row[:2] + row[3:] for row in
                    r.execute_command("XPENDING", "s", "g1", "-", "+", 1000)],
        "summary": r.execute_command("XPENDING", "s", "g1"),
        "groups": r.execute_command("XINFO", "GROUPS", "s"),
        "consumers": _mask_times(r.execute_command("XINFO", "CONSUMERS", "s", "g1")),
        "idem": r.execute_command("XINFO", "STREAM", "idem"),
        "long": r.lrange("long", 0, -1),
        "short": r.lrange("short", 0, -1),
        "h": r.hgetall("h"),
        "small": r.hgetall("small"),
        "str": r.get("str"),
        "ttl": r.pexpiretime("ttl"),
        "ttl-list": r.pexpiretime("ttl-list"),
        "keys": sorted(r.keys("*")),
    }
    r.execute_command("SELECT", 5)
    state["db5"] = r.get("db5")
    r.execute_command("SELECT", 0)
    return state


_TIME_FIELDS = {b"seen-time", b"active-time", b"idle", b"inactive"}


def _mask_times(value: object) -> object:
    """Replace the values that follow consumer time field names (they age with the clock)."""
    if isinstance(value, list):
        masked: list[object] = []
        skip = False
        for item in value:
            if skip:
                masked.append(b"<time>")
                skip = False
                continue
            masked.append(_mask_times(item))
            skip = isinstance(item, bytes) and item in _TIME_FIELDS
        return masked
    return value


def raw_client(proc: ServerProcess) -> redis.Redis:
    """A client that returns replies as the server sent them (redis-py reshapes XPENDING,
    XINFO and XCLAIM replies, and fails on some of Brook's newer forms)."""
    client = proc.client()
    client.response_callbacks.clear()
    return client


def _restart(proc: ServerProcess, tmp_path: Path, *args: str) -> ServerProcess:
    assert proc.stop() == 0
    return start_brook(tmp_path, *args)


@pytest.mark.parametrize("how", ["aof", "rewritten-aof", "snapshot", "debug-reload",
                                 "brook-snapshot", "brook-debug-reload"])
def test_restart_reproduces_the_exact_state(tmp_path: Path, how: str) -> None:
    """Through the AOF, its rewrite, Redis's RDB file (the default snapshot format, with
    what RDB cannot hold in its aux fields) and Brook's snapshot."""
    args: tuple[str, ...] = AOF
    if how.startswith("brook-"):
        args = (*NO_AOF, "--snapshot-format", "brook")
        how = how.removeprefix("brook-")
    elif how in ("snapshot", "debug-reload"):
        args = NO_AOF
    proc = start_brook(tmp_path, *args)
    try:
        r = raw_client(proc)
        build_rich_state(r)
        req_1 = r.execute_command("XADD", "idem", "IDMP", "producer", "req-1", "*", "k", "v")
        before = read_state(r)
        delivery_times = _delivery_times(r)
        if how == "rewritten-aof":
            plain = proc.client()
            rewrites = plain.info("persistence")["aof_rewrites"]
            assert plain.bgrewriteaof()
            _wait_for(lambda: plain.info("persistence")["aof_rewrites"] > rewrites)
        if how == "snapshot":
            assert r.save()
        if how == "debug-reload":
            assert r.execute_command("DEBUG", "RELOAD")
        else:
            r.close()
            proc = _restart(proc, tmp_path, *args)
            r = raw_client(proc)
        after = read_state(r)
        for field, value in before.items():
            if field == "stream" and how == "rewritten-aof":
                value = _without_node_layout(value)
                after[field] = _without_node_layout(after[field])
            assert after[field] == value, field
        # Delivery times are kept exactly (XPENDING only shows them as idle = now - time).
        assert _delivery_times(r) == delivery_times
        # Deduplication survives: the same request gets the original entry's ID back.
        assert r.execute_command("XADD", "idem", "IDMP", "producer", "req-1", "*", "k", "v") \
            == req_1
    finally:
        proc.stop()


def _delivery_times(r: redis.Redis) -> dict[bytes, int]:
    """Group g1's pending entries: ID -> last delivery time (XINFO STREAM FULL)."""
    info = r.execute_command("XINFO", "STREAM", "s", "FULL")
    groups = dict(zip(info[::2], info[1::2], strict=True))[b"groups"]
    g1 = dict(zip(groups[0][::2], groups[0][1::2], strict=True))
    return {row[0]: row[2] for row in g1[b"pending"]}


def _without_node_layout(info: object) -> object:
    """XINFO STREAM FULL without radix-tree-keys/nodes: a rewrite rebuilds the nodes."""
    assert isinstance(info, list)
    out = list(info)
    for name in (b"radix-tree-keys", b"radix-tree-nodes"):
        if name in out:
            out[out.index(name) + 1] = b"<layout>"
    return out


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def test_writes_accepted_during_a_rewrite_are_kept(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *AOF)
    r = proc.client()
    r.rpush("big", *range(200_000))  # a rewrite that takes a moment
    pushed: list[int] = []
    stop = threading.Event()

    def writer() -> None:
        w = proc.client()
        i = 0
        while not stop.is_set():
            w.rpush("during", i)
            pushed.append(i)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        time.sleep(0.05)
        assert r.bgrewriteaof()
        _wait_for(lambda: r.info("persistence")["aof_rewrites"] == 1)
        time.sleep(0.05)
    finally:
        stop.set()
        thread.join()
    assert pushed
    proc = _restart(proc, tmp_path, *AOF)
    try:
        r = proc.client()
        assert [int(x) for x in r.lrange("during", 0, -1)] == pushed
        assert r.llen("big") == 200_000
    finally:
        proc.stop()


def test_automatic_rewrite_compacts_a_growing_file(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *AOF, "--auto-aof-rewrite-percentage", "100",
                       "--auto-aof-rewrite-min-size", "64kb")
    try:
        r = proc.client()
        for i in range(3000):
            r.set("counter", i)  # the file grows, the state does not
        _wait_for(lambda: r.info("persistence")["aof_rewrites"] >= 1)
        info = r.info("persistence")
        assert info["aof_current_size"] < 64 * 1024
        assert r.get("counter") == b"2999"
    finally:
        proc.stop()
    proc = start_brook(tmp_path, *AOF)
    try:
        assert proc.client().get("counter") == b"2999"
    finally:
        proc.stop()


def test_save_points_trigger_a_background_save(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *NO_AOF, "--save", "1 2")
    try:
        r = proc.client()
        last = r.lastsave()
        r.set("a", 1)
        r.set("b", 2)
        _wait_for(lambda: r.info("persistence")["rdb_saves"] >= 1)
        info = r.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok"
        assert info["rdb_changes_since_last_save"] == 0
        assert r.lastsave() >= last
        assert (tmp_path / "dump.rdb").exists()
    finally:
        proc.stop()


def test_shutdown_save_writes_the_snapshot_that_the_next_start_loads(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *NO_AOF)
    r = proc.client()
    r.rpush("q", "a", "b")
    with contextlib.suppress(redis.ConnectionError):
        r.shutdown(save=True)
    proc.process.wait(timeout=10)
    assert proc.process.returncode == 0
    proc = start_brook(tmp_path, *NO_AOF)
    try:
        r = proc.client()
        assert r.lrange("q", 0, -1) == [b"a", b"b"]
        assert r.info("persistence")["rdb_last_load_keys_loaded"] == 1
        assert "DB loaded from disk" in proc.log()
    finally:
        proc.stop()


def test_a_snapshot_becomes_the_base_of_a_new_aof(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *NO_AOF)
    r = proc.client()
    r.set("from-snapshot", "1")
    assert r.save()
    proc = _restart(proc, tmp_path, *AOF)
    proc.client().set("from-aof", "2")
    proc = _restart(proc, tmp_path, *AOF)
    try:
        assert proc.client().mget("from-snapshot", "from-aof") == [b"1", b"2"]
    finally:
        proc.stop()


def test_a_corrupted_snapshot_refuses_to_start(tmp_path: Path) -> None:
    """Brook's own format (an RDB file's damage: tests/persistence/test_rdb_files.py)."""
    proc = start_brook(tmp_path, *NO_AOF, "--snapshot-format", "brook")
    proc.client().set("k", "v")
    assert proc.client().save()
    proc.stop()
    path = tmp_path / "dump.rdb"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    result = run_refused_brook(tmp_path, *NO_AOF)
    assert result.returncode == 1
    assert "snapshot checksum mismatch: the file is corrupted" in result.stdout


def test_config_set_appendonly_starts_an_aof_with_the_whole_dataset(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *NO_AOF)
    r = proc.client()
    r.set("before", "1")
    assert r.config_set("appendonly", "yes")
    r.set("after", "2")
    assert r.info("persistence")["aof_enabled"] == 1
    proc = _restart(proc, tmp_path, *AOF)
    try:
        assert proc.client().mget("before", "after") == [b"1", b"2"]
    finally:
        proc.stop()


def test_bgsave_and_bgrewriteaof_replies(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *AOF)
    try:
        raw = raw_client(proc)
        assert raw.execute_command("BGSAVE") == b"Background saving started"
        plain = proc.client()
        _wait_for(lambda: plain.info("persistence")["rdb_bgsave_in_progress"] == 0)
        assert raw.execute_command("BGREWRITEAOF") == \
            b"Background append only file rewriting started"
        _wait_for(lambda: plain.info("persistence")["aof_rewrite_in_progress"] == 0)
        with pytest.raises(redis.ResponseError, match="syntax error"):
            raw.execute_command("BGSAVE", "NOW")
        assert plain.lastsave().timestamp() > 0
    finally:
        proc.stop()


def test_info_persistence_names_the_fields_as_redis(server) -> None:
    r = server.client()
    names = set(r.info("persistence"))
    for field in ("loading", "async_loading", "rdb_changes_since_last_save",
                  "rdb_bgsave_in_progress", "rdb_last_save_time", "rdb_last_bgsave_status",
                  "rdb_saves", "aof_enabled", "aof_rewrite_in_progress", "aof_rewrites",
                  "aof_last_write_status", "aof_last_bgrewrite_status",
                  "rdb_last_load_keys_loaded", "aof_rewrites_consecutive_failures"):
        assert field in names


def _until_idle(raw, field: bytes) -> None:
    """Wait until INFO persistence shows ``field:0`` (a background child finished)."""
    _wait_for(lambda: field + b":0" in raw.call("INFO", "persistence"))


def test_persistence_command_replies(raw) -> None:
    raw.call("SET", "kept", "v")
    assert raw.call("SAVE") == b"OK"
    assert isinstance(raw.call("LASTSAVE"), int)
    assert str(raw.call("BGSAVE", "NOW")) == "ERR syntax error"
    assert raw.call("BGSAVE") == b"Background saving started"
    _until_idle(raw, b"rdb_bgsave_in_progress")
    assert raw.call("BGREWRITEAOF") == b"Background append only file rewriting started"
    _until_idle(raw, b"aof_rewrite_in_progress")
    assert raw.call("DEBUG", "RELOAD") == b"OK"
    assert raw.call("GET", "kept") == b"v"
    assert str(raw.call("SAVE", "x")) == "ERR wrong number of arguments for 'save' command"


def test_info_counts_forks_and_times_the_last(server, r) -> None:
    """BGSAVE forks: INFO stats counts it (total_forks) and says how long the fork took
    (latest_fork_usec); CONFIG RESETSTAT clears both, as in Redis."""
    r.config_resetstat()
    stats = r.info("stats")
    assert (stats["total_forks"], stats["latest_fork_usec"]) == (0, 0)
    r.set("k", "v")
    r.bgsave()
    deadline = time.monotonic() + 10
    while r.info("persistence")["rdb_bgsave_in_progress"] and time.monotonic() < deadline:
        time.sleep(0.02)
    stats = r.info("stats")
    assert stats["total_forks"] == 1
    assert stats["latest_fork_usec"] > 0
    r.config_resetstat()
    stats = r.info("stats")
    assert (stats["total_forks"], stats["latest_fork_usec"]) == (0, 0)


def test_info_memory_fragmentation_is_derived_from_what_it_reports(brook) -> None:
    """mem_fragmentation_ratio is RSS over used memory and mem_fragmentation_bytes their
    difference, from the figures INFO prints (not constants). Until the types account for their
    own sizes, Brook's used memory is its RSS: one reading, so 1.00 and 0 by computation."""
    memory = brook.client().info("memory")
    used, rss = memory["used_memory"], memory["used_memory_rss"]
    assert used > 0 and rss > 0
    assert memory["mem_fragmentation_ratio"] == round(rss / used, 2)
    assert memory["mem_fragmentation_bytes"] == rss - used
