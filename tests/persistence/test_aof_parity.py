"""The AOF's contents against real Redis: the same commands, run on Brook and on redis-server
(both with ``appendonly yes``), must leave the same effects in the two files.

Timestamps (PXAT/PEXPIREAT deadlines, entry IDs made from the clock) are masked. Redis 7.0 keeps
its effects in ``appendonlydir/*.incr.aof``, Brook in ``appendonly.aof``. Where Brook persists
more exactly than Redis 7.0 on purpose (XGROUP CREATE/SETID ``$`` as the ID it stood for, the
delivery counts of XREADGROUP history reads, XADD ``~`` trims that removed nothing), the
commands are left out here and covered by tests/persistence/test_aof_streams.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import hiredis
import pytest

from brook.rdb.payload import wrap
from tests.conftest import ServerProcess, free_port, start_brook, wait_for_port

AOF = ("--appendonly", "yes", "--appendfsync", "always")
_PAYLOAD = wrap(b"\x00\x01v")  # DUMP of the string "v"
_CLOCK = re.compile(rb"^1[0-9]{12}(-[0-9]+)?$")  # a time in ms, or an entry ID made from one

SEQUENCE: list[tuple[str | bytes, ...]] = [
    ("SET", "a", "v", "EX", "100"), ("SET", "a2", "v", "PX", "100000"),
    ("SET", "a3", "v", "EXAT", "4000000000"), ("SETEX", "b", "100", "v"),
    ("PSETEX", "b2", "100000", "v"), ("SET", "c", "v"), ("EXPIRE", "c", "100"),
    ("PEXPIRE", "c", "200000"), ("EXPIREAT", "c", "4000000000"), ("GETEX", "c", "EX", "50"),
    ("GETEX", "c", "PERSIST"), ("SET", "gone", "v"), ("EXPIRE", "gone", "-1"),
    ("INCRBYFLOAT", "f", "1.5"), ("HINCRBYFLOAT", "h", "x", "2.5"),
    ("RPUSH", "l", "a", "b", "c", "d", "e"), ("LMPOP", "2", "nosuch", "l", "LEFT", "COUNT", "2"),
    ("BLPOP", "l", "0"), ("BRPOPLPUSH", "l", "l2", "0"), ("BLMOVE", "l2", "l3", "LEFT", "RIGHT", "0"),
    ("BLMPOP", "0", "1", "l", "RIGHT"), ("INCR", "n"), ("SET", "x", "1", "KEEPTTL"),
    ("GETDEL", "x"), ("LPUSH", "q", "z"), ("RPOPLPUSH", "q", "q2"),
    ("LMOVE", "q2", "q", "LEFT", "LEFT"), ("GET", "n"), ("LRANGE", "q", "0", "-1"),
    ("XADD", "s", "*", "f", "v"), ("XADD", "s", "*", "f", "w"), ("XADD", "s2", "5-*", "a", "b"),
    ("XGROUP", "CREATE", "s", "g", "0"), ("XGROUP", "CREATECONSUMER", "s", "g", "c3"),
    ("XTRIM", "s", "MAXLEN", "=", "1"), ("XSETID", "s", "9999999999999-5"),
    ("XGROUP", "DELCONSUMER", "s", "g", "c3"), ("XGROUP", "DESTROY", "s", "g"),
    ("MULTI",), ("INCR", "n"), ("LPUSH", "q", "y"), ("EXEC",),
    # Bit commands persist as themselves, and only when they changed something.
    ("SETBIT", "bm", "9", "1"), ("SETBIT", "bm", "9", "1"), ("GETBIT", "bm", "9"),
    ("BITFIELD", "bf", "SET", "u8", "0", "7", "GET", "u8", "0"), ("BITFIELD", "bf", "SET", "u8", "0", "7"),
    ("BITFIELD", "bf", "GET", "u8", "0"), ("BITFIELD_RO", "bf", "GET", "u8", "0"),
    ("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"),
    ("BITOP", "OR", "bo", "bm", "bf"), ("BITOP", "AND", "bo", "nosuch"), ("BITOP", "AND", "bo", "nosuch"),
    # RESTORE: a relative TTL persists as the deadline with ABSTTL; a REPLACE whose deadline
    # has passed as the deletion it made; one that replaced nothing not at all.
    ("RESTORE", "r1", "0", _PAYLOAD), ("RESTORE", "r2", "100000", _PAYLOAD),
    ("RESTORE", "r3", "4000000000000", _PAYLOAD, "ABSTTL"), ("SET", "r4", "x"),
    ("RESTORE", "r4", "1000", _PAYLOAD, "ABSTTL", "REPLACE"),
    ("RESTORE", "r5", "1000", _PAYLOAD, "ABSTTL"),
    ("RESTORE", "r1", "0", _PAYLOAD, "REPLACE", "IDLETIME", "10"),
]


def _start_redis(tmp: Path) -> ServerProcess:
    port = free_port()
    log_path = tmp / "redis.log"
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--bind", "127.0.0.1", *AOF],
        cwd=tmp, stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
    )
    wait_for_port(port, process, log_path)
    return ServerProcess("redis", port, process, log_path)


def _effects(proc: ServerProcess, aof: Path) -> list[list[bytes]]:
    client = proc.client()
    client.response_callbacks.clear()
    for command in SEQUENCE:
        client.execute_command(*command)
    client.close()
    time.sleep(0.2)  # fsync always: the file holds every write already
    files = sorted(aof.glob("appendonlydir/*.incr.aof")) or [aof / "appendonly.aof"]
    reader = hiredis.Reader()
    reader.feed(files[-1].read_bytes())
    effects = []
    while (command := reader.gets()) is not False:
        name = command[0].upper()
        if name != b"SELECT":
            effects.append([name, *(_CLOCK.sub(b"<time>", arg) for arg in command[1:])])
    return effects


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_the_aof_holds_the_effects_redis_writes(tmp_path: Path) -> None:
    (tmp_path / "redis").mkdir()
    (tmp_path / "brook").mkdir()
    redis_proc = _start_redis(tmp_path / "redis")
    try:
        expected = _effects(redis_proc, tmp_path / "redis")
    finally:
        redis_proc.stop()
    brook = start_brook(tmp_path / "brook", *AOF)
    try:
        assert _effects(brook, tmp_path / "brook") == expected
    finally:
        brook.stop()
    assert [b"MULTI"] in expected and [b"RPOPLPUSH", b"l", b"l2"] in expected


def test_several_effects_of_one_command_are_one_transaction(tmp_path: Path) -> None:
    """XREADGROUP creating a consumer, claiming and moving the group: replayed all or nothing."""
    brook = start_brook(tmp_path, *AOF)
    try:
        r = brook.client()
        r.xgroup_create("s", "g", id="$", mkstream=True)
        r.xadd("s", {"f": "v"})
        r.xreadgroup("g", "c", {"s": ">"})
    finally:
        brook.stop()
    reader = hiredis.Reader()
    reader.feed((tmp_path / "appendonly.aof").read_bytes())
    names = []
    while (command := reader.gets()) is not False:
        names.append(command[0].upper())
    assert names[-5:] == [b"MULTI", b"XGROUP", b"XCLAIM", b"XGROUP", b"EXEC"]
