"""Scripts and functions under persistence and under hostile scripts (Brook's own processes).

A script's effects, never the script, reach the AOF, as one MULTI/EXEC: replay gives the same
data even when the script used the time or random numbers, and a script killed with the
process (kill -9) mid-way leaves nothing of itself in the file. Function libraries are part of
the dataset: they survive a restart from the AOF, from a snapshot and from a rewritten AOF.
A script cannot take the server down: endless loops are killed, deep recursion and
runaway allocations are Lua errors, and the memory goes back.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import ServerProcess, start_brook
from tests.support.aof import AOF_ARGS, aof_commands, restart

LIB = ("#!lua name=counters\n"
       "redis.register_function('bump', function(keys, args) "
       "return redis.call('incrby', keys[1], args[1]) end)")


@pytest.fixture
def aof_server(tmp_path: Path):  # type: ignore[no-untyped-def]
    proc = start_brook(tmp_path, *AOF_ARGS)
    yield proc
    proc.stop()


@pytest.fixture
def spawned() -> Iterator[list[ServerProcess]]:
    """Servers a test starts again (restarts): stopped when it ends, whatever happened."""
    started: list[ServerProcess] = []
    yield started
    for proc in started:
        proc.stop()


def test_script_effects_are_one_transaction_in_the_aof(aof_server: ServerProcess,
                                                       tmp_path: Path,
                                                       spawned: list[ServerProcess]) -> None:
    r = aof_server.client()
    r.eval("redis.call('set', 'a', '1') redis.call('incr', 'a') "
           "redis.call('xadd', 's', '*', 'f', 'v') redis.call('select', 3) "
           "redis.call('lpush', 'l', redis.call('time')[1])", 0)
    r.eval("return redis.call('get', 'missing')", 0)  # changes nothing: nothing written
    r.eval("return redis.call('incr', 'b')", 0)  # one effect: no MULTI around it
    commands = aof_commands(tmp_path / "appendonly.aof")
    names = [c[0] for c in commands]
    assert b"EVAL" not in names
    first = names.index(b"MULTI")
    assert names[first:first + 8] == [b"MULTI", b"SELECT", b"SET", b"INCR", b"XADD", b"SELECT",
                                      b"LPUSH", b"EXEC"]
    xadd = commands[first + 4]
    assert xadd[2] != b"*"  # the ID the script's XADD got
    assert names[first + 8:] == [b"SELECT", b"INCR"]
    stream = r.xrange("s")
    r.select(3)
    listed = r.lrange("l", 0, -1)
    r.close()
    spawned.append(restart(aof_server, tmp_path))
    again = spawned[-1].client()
    assert again.mget("a", "b") == [b"2", b"1"]
    assert again.xrange("s") == stream
    again.select(3)
    assert again.lrange("l", 0, -1) == listed
    again.close()


def test_a_script_killed_with_the_process_leaves_nothing(tmp_path: Path,
                                                        spawned: list[ServerProcess]) -> None:
    proc = start_brook(tmp_path, *AOF_ARGS, "--busy-reply-threshold", "50")
    r = proc.client()
    r.set("before", "1")
    runner = redis.Redis(port=proc.port, socket_timeout=20)

    def run() -> None:
        with contextlib.suppress(redis.RedisError):
            runner.eval("redis.call('set', 'during', '1') while true do end", 0)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            r.ping()
        except redis.ResponseError:
            break  # busy
        time.sleep(0.02)
    proc.process.send_signal(signal.SIGKILL)
    proc.process.wait()
    thread.join(10)
    runner.close()
    names = [c[0] for c in aof_commands(tmp_path / "appendonly.aof")]
    assert b"during" not in [arg for c in aof_commands(tmp_path / "appendonly.aof") for arg in c]
    assert b"MULTI" not in names
    spawned.append(start_brook(tmp_path, *AOF_ARGS))
    again = spawned[-1].client()
    assert again.get("before") == b"1"
    assert again.get("during") is None
    again.close()


def test_shutdown_nosave_stops_an_unkillable_script(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, "--busy-reply-threshold", "50")
    runner = redis.Redis(port=proc.port, socket_timeout=20)
    thread = threading.Thread(target=lambda: _ignore_errors(
        runner.eval, "redis.call('set', 'x', '1') while true do end", 0))
    thread.start()
    r = proc.client()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            r.ping()
        except redis.ResponseError as err:
            assert str(err).startswith("BUSY")
            break
        time.sleep(0.02)
    with pytest.raises(redis.ResponseError, match="UNKILLABLE"):
        r.script_kill()
    _ignore_errors(r.execute_command, "SHUTDOWN", "NOSAVE")
    assert proc.process.wait(timeout=10) == 0
    thread.join(10)
    runner.close()


def _ignore_errors(function, *args):  # type: ignore[no-untyped-def]
    try:
        return function(*args)
    except redis.RedisError:
        return None


def test_functions_survive_restart_from_the_aof(aof_server: ServerProcess, tmp_path: Path,
                                                spawned: list[ServerProcess]) -> None:
    r = aof_server.client()
    assert r.function_load(LIB) == b"counters"
    assert r.fcall("bump", 1, "n", 5) == 5
    r.close()
    spawned.append(restart(aof_server, tmp_path))
    again = spawned[-1].client()
    assert again.fcall("bump", 1, "n", 2) == 7
    again.function_delete("counters")
    again.close()
    spawned.append(restart(spawned[-1], tmp_path))
    final = spawned[-1].client()
    assert final.function_list() == []
    assert final.get("n") == b"7"
    final.close()


def test_functions_survive_a_rewrite_and_a_snapshot(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *AOF_ARGS)
    r = proc.client()
    r.function_load(LIB)
    r.fcall("bump", 1, "n", 3)
    r.bgrewriteaof()
    deadline = time.monotonic() + 20
    while r.info("persistence")["aof_rewrite_in_progress"] and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    r.save()
    r.close()
    assert proc.stop() == 0
    from_aof = start_brook(tmp_path, *AOF_ARGS)
    client = from_aof.client()
    assert client.fcall("bump", 1, "n", 1) == 4
    client.close()
    assert from_aof.stop() == 0
    snapshot_dir = tmp_path / "snap"
    snapshot_dir.mkdir()
    (tmp_path / "dump.rdb").replace(snapshot_dir / "dump.rdb")
    from_snapshot = start_brook(snapshot_dir, "--appendonly", "no")
    client = from_snapshot.client()
    assert client.fcall("bump", 1, "n", 1) == 4  # the snapshot was taken at n = 3
    assert client.function_dump() == from_snapshot.client().function_dump()
    client.close()
    from_snapshot.stop()


def test_function_dump_restore_round_trip(brook: ServerProcess) -> None:
    r = brook.client()
    r.function_load(LIB)
    payload = r.function_dump()
    r.function_flush()
    assert r.function_restore(payload) is True
    assert r.function_dump() == payload
    assert r.fcall("bump", 1, "n", 1) == 1
    r.close()


# ---------------------------------------------------------------------------------------------
# Hostile scripts
# ---------------------------------------------------------------------------------------------


def test_runaway_allocation_is_a_lua_error_and_memory_comes_back(brook: ServerProcess) -> None:
    r = brook.client()
    r.config_set("lua-max-memory", "40mb")
    try:
        before = r.info("memory")["used_memory_lua"]
        for script in ("local t = {} for i = 1, 1e8 do t[i] = 'x' .. i end return #t",
                       "return #string.rep('x', 1e9)",
                       "local s = 'x' while true do s = s .. s end"):
            with pytest.raises(redis.ResponseError, match="not enough memory"):
                r.eval(script, 0)
            assert r.eval("return 1", 0) == 1
        after = r.info("memory")["used_memory_lua"]
        assert after < before + 5 * 1024 * 1024
        # Big replies built by Python are not refused half-way.
        r.set("big", b"x" * (10 * 1024 * 1024))
        assert r.eval("return #redis.call('get', 'big')", 0) == 10 * 1024 * 1024
    finally:
        r.config_set("lua-max-memory", "1gb")
        r.close()


@pytest.mark.parametrize("script", [
    "local function f(n) return f(n + 1) + 1 end return f(1)",
    "local function f(n) return 1 + f(n + 1) end return f(1)",
    "local function f() return pcall(f) end return f()",
    "local t = {} local n = t for i = 1, 100000 do n[1] = {} n = n[1] end "
    "return cjson.encode(t)",
    "return string.rep('(', 100000)",
    "return loadstring(string.rep('(', 100000) .. '1' .. string.rep(')', 100000))",
    "local t = {} t[1] = t return t",
    "return unpack({}, 1, 1e7)",
])
def test_deep_recursion_and_deep_structures_do_not_crash(brook: ServerProcess, script) -> None:
    r = brook.client()
    with contextlib.suppress(redis.ResponseError):
        r.eval(script, 0)
    assert r.eval("return 'alive'", 0) == b"alive"
    r.close()


def test_thousands_of_scripts_are_cached_and_evicted_from_eval(brook: ServerProcess) -> None:
    r = brook.client()
    for i in range(600):
        assert r.eval(f"return {i}", 0) == i
    stats = r.info("memory")
    assert stats["number_of_cached_scripts"] == 500  # EVAL's scripts: least recently used go
    assert r.info("stats")["evicted_scripts"] == 100
    sha = r.script_load("return 'loaded'")
    for i in range(600, 1200):
        r.eval(f"return {i}", 0)
    assert r.evalsha(sha, 0) == b"loaded"  # SCRIPT LOAD's scripts stay
    r.close()
