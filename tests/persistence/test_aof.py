"""The append-only file: effects written before replies, replayed at start-up, damage handled.

Every test runs real Brook processes in a temporary directory (their ``dir``), writes through
real clients, restarts the server on the same directory and compares what clients read.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tests.conftest import free_port, run_refused_brook, start_brook
from tests.support.aof import AOF_ARGS, aof_commands, restart


@pytest.fixture
def aof_server(tmp_path: Path):
    proc = start_brook(tmp_path, *AOF_ARGS)
    yield proc
    proc.stop()


def snapshot_state(r: redis.Redis) -> dict[str, object]:
    """Everything a client can read about the non-stream keys of databases 0 and 3."""
    state: dict[str, object] = {}
    for db in (0, 3):
        r.execute_command("SELECT", db)
        for key in sorted(r.keys("*")):
            kind = r.type(key)
            if kind == b"string":
                value: object = r.get(key)
            elif kind == b"list":
                value = r.lrange(key, 0, -1)
            elif kind == b"hash":
                value = sorted(r.hgetall(key).items())
            else:
                value = None
            state[f"{db}:{key!r}"] = (kind, value, r.pexpiretime(key))
    r.execute_command("SELECT", 0)
    return state


def test_strings_lists_hashes_and_expiries_survive_a_restart(aof_server, tmp_path):
    r = aof_server.client()
    r.set("plain", "v")
    r.set("ex", "v", ex=1000)
    r.set("px", "v", px=500_000)
    r.execute_command("SETEX", "setex", 1000, "v")
    r.psetex("psetex", 900_000, "v")
    r.set("later", "v")
    r.expire("later", 2000)
    r.set("abs", "v")
    r.pexpireat("abs", int(time.time() * 1000) + 3_000_000)
    r.set("getex", "v")
    r.getex("getex", px=700_000)
    r.set("gone", "v")
    r.expireat("gone", 1)  # in the past: deleted
    r.incrbyfloat("float", "1.1")
    r.incrbyfloat("float", "2.25")
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.hincrbyfloat("h", "f", "0.5")
    r.hdel("h", "a")
    r.rpush("l", *[f"e{i}" for i in range(3000)])
    r.lpush("l", "head")
    r.lpop("l", 5)
    r.rpoplpush("l", "l2")
    r.lmove("l", "l2", "LEFT", "RIGHT")
    r.execute_command("LMPOP", 2, "nosuch", "l", "RIGHT", "COUNT", 3)
    r.linsert("l", "BEFORE", "e100", "pivot")
    r.ltrim("l", 0, 2000)
    r.execute_command("SELECT", 3)
    r.set("other-db", "x")
    r.execute_command("SELECT", 0)
    with r.pipeline(transaction=True) as pipe:
        pipe.incr("counter")
        pipe.rpush("l3", "a", "b")
        pipe.execute()
    before = snapshot_state(r)
    r.close()
    proc = restart(aof_server, tmp_path)
    try:
        r = proc.client()
        after = snapshot_state(r)
        assert after == before
        assert r.get("gone") is None
    finally:
        proc.stop()


def test_relative_expiries_and_float_increments_are_persisted_as_results(aof_server, tmp_path):
    r = aof_server.client()
    r.set("a", "v", ex=100)
    r.expire("a", 200)
    r.execute_command("SETEX", "b", 100, "v")
    r.getex("b", ex=300)
    r.incrbyfloat("f", "0.1")
    r.hincrbyfloat("h", "x", "0.25")
    r.set("gone", "v")
    r.pexpireat("gone", 1)
    commands = aof_commands(tmp_path / "appendonly.aof")
    names = [c[0] for c in commands]
    assert b"EXPIRE" not in names and b"SETEX" not in names and b"GETEX" not in names
    assert b"INCRBYFLOAT" not in names and b"HINCRBYFLOAT" not in names
    sets = [c for c in commands if c[0] == b"SET" and c[1] in (b"a", b"b")]
    assert all(c[3] == b"PXAT" and int(c[4]) > time.time() * 1000 for c in sets)
    assert [c for c in commands if c[0] == b"PEXPIREAT"][0][:2] == [b"PEXPIREAT", b"a"]
    assert [b"SET", b"f", b"0.1", b"KEEPTTL"] in commands
    assert [b"HSET", b"h", b"x", b"0.25"] in commands
    assert [b"DEL", b"gone"] in commands


def test_a_write_is_in_the_file_before_its_reply(aof_server, tmp_path):
    r = aof_server.client()
    for i in range(50):
        r.rpush("q", f"job{i}")
        assert [b"RPUSH", b"q", f"job{i}".encode()] in aof_commands(tmp_path / "appendonly.aof")


def test_blocking_pops_are_persisted_as_plain_pops(aof_server, tmp_path):
    r = aof_server.client()
    waiter = aof_server.client()
    r.rpush("src", "a", "b", "c", "d")
    assert waiter.blpop(["nosuch", "src"], timeout=1) == (b"src", b"a")
    assert waiter.brpoplpush("src", "dst", timeout=1) == b"d"
    assert waiter.execute_command("BLMPOP", 1, 2, "nosuch", "src", "LEFT", "COUNT", 5) == [
        b"src", [b"b", b"c"]]
    commands = aof_commands(tmp_path / "appendonly.aof")
    assert [b"LPOP", b"src"] in commands
    assert [b"RPOPLPUSH", b"src", b"dst"] in commands  # as Redis persists BRPOPLPUSH
    assert [b"LPOP", b"src", b"2"] in commands
    assert not [c for c in commands if c[0].startswith(b"B")]


def test_a_pop_served_after_blocking_is_persisted(aof_server, tmp_path):
    r = aof_server.client()
    waiter = aof_server.client()
    import threading

    popped: list[object] = []
    thread = threading.Thread(target=lambda: popped.append(waiter.brpop(["q"], timeout=5)))
    thread.start()
    deadline = time.monotonic() + 5
    while r.info("clients")["blocked_clients"] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    r.lpush("q", "job")
    thread.join()
    assert popped == [(b"q", b"job")]
    commands = aof_commands(tmp_path / "appendonly.aof")
    assert commands[-2:] == [[b"LPUSH", b"q", b"job"], [b"RPOP", b"q"]]
    proc = restart(aof_server, tmp_path)
    try:
        assert proc.client().exists("q") == 0
    finally:
        proc.stop()


def test_lmovem_is_persisted_as_the_elements_it_moved(aof_server, tmp_path):
    r = aof_server.client()
    r.rpush("a", *"abcdef")
    r.rpush("b", "x")
    assert r.execute_command("LMOVEM", "a", "b", "LEFT", "LEFT", "COUNT", 3, "OBO") == [
        b"c", b"b", b"a"]
    assert r.execute_command("LMOVEM", "a", "b", "RIGHT", "RIGHT", "COUNT", 2, "BULK") == [
        b"e", b"f"]
    assert r.execute_command("LMOVEM", "b", "b", "LEFT", "RIGHT", "EXACTLY", 2, "OBO") == [
        b"c", b"b"]
    before = (r.lrange("a", 0, -1), r.lrange("b", 0, -1))
    proc = restart(aof_server, tmp_path)
    try:
        r = proc.client()
        assert (r.lrange("a", 0, -1), r.lrange("b", 0, -1)) == before
    finally:
        proc.stop()


def test_transactions_are_written_as_one_multi_exec(aof_server, tmp_path):
    r = aof_server.client()
    with r.pipeline(transaction=True) as pipe:
        pipe.set("x", "1")
        pipe.get("x")
        pipe.incr("x")
        pipe.execute()
    commands = aof_commands(tmp_path / "appendonly.aof")
    start = commands.index([b"MULTI"])
    assert commands[start:] == [[b"MULTI"], [b"SELECT", b"0"], [b"SET", b"x", b"1"],
                                [b"INCRBY", b"x", b"1"], [b"EXEC"]]


def test_expired_keys_are_persisted_as_deletions(aof_server, tmp_path):
    r = aof_server.client()
    r.set("short", "v", px=50)
    time.sleep(0.2)
    assert r.get("short") is None  # lazily expired
    assert [b"DEL", b"short"] in aof_commands(tmp_path / "appendonly.aof")


def test_reads_and_failed_writes_are_not_persisted(aof_server, tmp_path):
    r = aof_server.client()
    r.set("s", "v")
    r.get("s")
    r.lrange("nosuch", 0, -1)
    r.set("s", "w", nx=True)  # not set
    with pytest.raises(redis.ResponseError):
        r.lpush("s", "x")  # WRONGTYPE
    r.lpop("nosuch")
    r.delete("nosuch")
    assert aof_commands(tmp_path / "appendonly.aof") == [[b"SELECT", b"0"], [b"SET", b"s", b"v"]]


def test_redis_check_aof_accepts_the_file(aof_server, tmp_path):
    checker = shutil.which("redis-check-aof")
    if checker is None:
        pytest.skip("redis-check-aof is not installed")
    r = aof_server.client()
    r.set("k", "v", ex=100)
    r.rpush("l", *range(100))
    r.hset("h", "f", "v")
    with r.pipeline(transaction=True) as pipe:
        pipe.incr("n")
        pipe.lpop("l")
        pipe.execute()
    result = subprocess.run([checker, str(tmp_path / "appendonly.aof")], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is valid" in result.stdout


def test_shutdown_nosave_and_sigterm_keep_every_write(aof_server, tmp_path):
    r = aof_server.client()
    r.set("a", "1")
    # redis-py versions differ in whether they report the connection the server closed
    with contextlib.suppress(redis.ConnectionError):
        r.shutdown(nosave=True)
    aof_server.process.wait(timeout=10)
    assert aof_server.process.returncode == 0
    proc = start_brook(tmp_path, *AOF_ARGS)
    proc.client().set("b", "2")
    assert proc.stop() == 0  # SIGTERM
    proc = start_brook(tmp_path, "--appendonly", "yes", "--appendfsync", "no")
    try:
        assert proc.client().mget("a", "b") == [b"1", b"2"]
    finally:
        proc.stop()


# -- damaged files ---------------------------------------------------------------------------


def _write_aof(tmp_path: Path, payload: bytes) -> Path:
    path = tmp_path / "appendonly.aof"
    path.write_bytes(payload)
    return path


def _encode(*argv: bytes) -> bytes:
    out = b"*%d\r\n" % len(argv)
    for arg in argv:
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def _run_brook(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """A server with the AOF on that is expected to refuse to start."""
    return run_refused_brook(tmp_path, *AOF_ARGS, *extra)


GOOD = _encode(b"SELECT", b"0") + _encode(b"SET", b"a", b"1") + _encode(b"RPUSH", b"l", b"x")


def test_a_truncated_tail_is_loaded_up_to_the_last_complete_command(tmp_path):
    path = _write_aof(tmp_path, GOOD + _encode(b"SET", b"b", b"2")[:-5])
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        r = proc.client()
        assert r.get("a") == b"1" and r.lrange("l", 0, -1) == [b"x"]
        assert r.get("b") is None
        assert "short read while loading the AOF" in proc.log()
        assert path.read_bytes() == GOOD  # cut back, so new writes follow a valid command
        r.set("c", "3")
    finally:
        proc.stop()
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        assert proc.client().mget("a", "b", "c") == [b"1", None, b"3"]
    finally:
        proc.stop()


def test_an_unfinished_transaction_at_the_end_is_dropped(tmp_path):
    tail = _encode(b"MULTI") + _encode(b"SET", b"t", b"1") + _encode(b"INCR", b"n")
    path = _write_aof(tmp_path, GOOD + tail)
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        r = proc.client()
        assert r.get("a") == b"1"
        assert r.get("t") is None and r.get("n") is None
    finally:
        proc.stop()
    assert path.read_bytes() == GOOD


def test_a_truncated_tail_refuses_to_start_without_aof_load_truncated(tmp_path):
    _write_aof(tmp_path, GOOD + b"*3\r\n$3\r\nSET")
    result = _run_brook(tmp_path, "--aof-load-truncated", "no")
    assert result.returncode == 1
    assert "Unexpected end of file reading the append only file" in result.stdout
    assert "brook-check-aof --fix" in result.stdout


def test_corruption_in_the_middle_refuses_to_start(tmp_path):
    damaged = GOOD + b"*2\r\n$3\r\nGET\r\n+oops\r\n" + _encode(b"SET", b"z", b"9")
    _write_aof(tmp_path, damaged)
    result = _run_brook(tmp_path)
    assert result.returncode == 1
    assert f"Bad file format reading the append only file appendonly.aof at offset {len(GOOD)}" \
        in result.stdout


def test_an_unknown_command_refuses_to_start(tmp_path):
    _write_aof(tmp_path, GOOD + _encode(b"NOSUCHCOMMAND", b"x"))
    result = _run_brook(tmp_path)
    assert result.returncode == 1
    assert "Unknown command 'NOSUCHCOMMAND' reading the append only file" in result.stdout


def _check_aof(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "brook.persistence.check", *args],
                          capture_output=True, text=True, timeout=60)


def test_brook_check_aof_fixes_a_truncated_tail(tmp_path):
    path = _write_aof(tmp_path, GOOD + _encode(b"SET", b"b", b"2")[:7])
    result = _check_aof(str(path))
    assert result.returncode == 1 and "Use the --fix option" in result.stdout
    result = _check_aof("--fix", "--yes", str(path))
    assert result.returncode == 0 and "Successfully truncated AOF" in result.stdout
    assert path.read_bytes() == GOOD
    result = _check_aof(str(path))
    assert result.returncode == 0 and "AOF is valid" in result.stdout
    path.write_bytes(GOOD + _encode(b"MULTI") + _encode(b"SET", b"x", b"1"))
    assert _check_aof("--fix", "--yes", str(path)).returncode == 0
    assert path.read_bytes() == GOOD


def test_brook_check_aof_never_cuts_damage_in_the_middle(tmp_path):
    damaged = GOOD + b"*1\r\n:5\r\n" + _encode(b"SET", b"z", b"9")
    path = _write_aof(tmp_path, damaged)
    result = _check_aof("--fix", "--yes", str(path))
    assert result.returncode == 1
    assert f"corrupted at offset {len(GOOD)}" in result.stdout
    assert path.read_bytes() == damaged


def test_clients_get_loading_while_a_large_file_loads(tmp_path):
    chunk = b"".join(_encode(b"RPUSH", b"big", b"%d" % i) for i in range(1000))
    _write_aof(tmp_path, _encode(b"SELECT", b"0") + chunk * 300)
    port = free_port()
    log = (tmp_path / "loading.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "brook", "--port", str(port), *AOF_ARGS],
        cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        replies = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                    sock.sendall(b"*2\r\n$4\r\nLLEN\r\n$3\r\nbig\r\n")
                    reply = sock.recv(256)
            except OSError:
                time.sleep(0.01)
                continue
            replies.append(reply)
            if reply.startswith(b":"):
                break
            time.sleep(0.01)
        assert replies[0] == b"-LOADING Redis is loading the dataset in memory\r\n"
        assert replies[-1] == b":300000\r\n"
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
    text = (tmp_path / "loading.log").read_text()
    assert "DB loaded from append only file" in text
