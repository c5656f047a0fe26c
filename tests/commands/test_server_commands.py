"""Server commands: INFO, TIME, LASTSAVE, DEBUG, SLOWLOG, LATENCY, MONITOR, SHUTDOWN.

Parity tests run against Brook and real Redis; INFO is checked by the field names and formats
that tools parse (Redis 7.0 has a few fields and sections Brook does not, and vice versa).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest
import redis

from brook.commands.registry import latency_at_percentile, latency_index, latency_index_range
from tests.conftest import (
    RawConnection,
    encode_request,
    exchange,
    free_port,
    help_footer,
    wait_for_port,
)

DEFAULT_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU",
                    "Modules", "Errorstats", "Cluster", "Keyspace"]


def info_text(r: redis.Redis, *sections: str) -> str:
    """The INFO report as sent (redis-py would parse it), read on a separate connection."""
    conn = RawConnection(r.connection_pool.connection_kwargs["port"])
    try:
        return conn.call("INFO", *sections).decode()  # type: ignore[union-attr]
    finally:
        conn.close()


def titles(text: str) -> list[str]:
    return [line[2:] for line in text.split("\r\n") if line.startswith("# ")]


def fields(text: str) -> dict[str, str]:
    found = {}
    for line in text.split("\r\n"):
        if line and not line.startswith("#"):
            name, _, value = line.partition(":")
            found[name] = value
    return found


# ---------------------------------------------------------------------------------------------
# INFO
# ---------------------------------------------------------------------------------------------


def test_info_default_sections(r):
    assert titles(info_text(r)) == DEFAULT_SECTIONS
    assert titles(info_text(r, "default")) == DEFAULT_SECTIONS


def test_info_all_and_everything_add_commandstats(r):
    for name in ("all", "everything"):
        shown = [t for t in titles(info_text(r, name)) if t != "Latencystats"]
        assert shown == DEFAULT_SECTIONS[:8] + ["Commandstats"] + DEFAULT_SECTIONS[8:]


def test_info_chosen_sections_exact_layout(r):
    text = info_text(r, "cpu", "CLUSTER")
    assert text.startswith("# CPU\r\nused_cpu_sys:")
    assert text.endswith("\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n")
    assert re.fullmatch(r"\d+\.\d{6}", fields(text)["used_cpu_user"])
    assert info_text(r, "nosuch") == ""
    assert info_text(r, "modules") == "# Modules\r\n"
    assert titles(info_text(r, "keyspace", "server")) == ["Server", "Keyspace"]


def test_info_fields_tools_read(server, r):
    info = fields(info_text(r, "everything"))
    for name in (
        "redis_version", "redis_mode", "process_id", "run_id", "tcp_port", "uptime_in_seconds",
        "uptime_in_days", "hz", "config_file", "connected_clients", "maxclients",
        "blocked_clients", "used_memory", "used_memory_human", "used_memory_peak", "maxmemory",
        "maxmemory_human", "maxmemory_policy", "mem_fragmentation_ratio", "loading",
        "rdb_changes_since_last_save", "rdb_last_save_time", "rdb_bgsave_in_progress",
        "aof_enabled", "total_connections_received", "total_commands_processed",
        "instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes",
        "rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits",
        "keyspace_misses", "pubsub_channels", "total_error_replies", "role",
        "connected_slaves", "master_repl_offset", "used_cpu_sys", "used_cpu_user",
        "cluster_enabled",
    ):
        assert name in info, name
    assert info["redis_mode"] == "standalone"
    assert info["role"] == "master"
    assert int(info["process_id"]) == server.process.pid
    assert int(info["tcp_port"]) == server.port
    assert re.fullmatch(r"[0-9a-f]{40}", info["run_id"])
    assert int(info["used_memory"]) > 0
    assert re.fullmatch(r"\d+(\.\d\d[KMGTP])?B?", info["used_memory_human"])
    assert info["maxmemory"] == "0" and info["maxmemory_human"] == "0B"
    assert info["maxmemory_policy"] == "noeviction"
    assert info["aof_enabled"] == "0"
    assert int(info["connected_clients"]) >= 1
    assert int(info["total_connections_received"]) >= 1


def test_info_executable_is_absolute_from_the_start(tmp_path):
    """A server started by a relative path with a relative ``dir``: INFO's executable is the
    program's absolute path taken at start, not resolved again in the data directory."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "data").mkdir()
    program = tmp_path / "bin" / "brook-server"
    program.write_text(f"#!{sys.executable}\nfrom brook.cli import main\nmain()\n")
    program.chmod(0o755)
    port = free_port()
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(["bin/brook-server", "--port", str(port), "--dir", "data"],
                                   cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, log_path)
        report = fields(info_text(redis.Redis(port=port), "server"))
        assert report["executable"] == str(program)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.brook_only
def test_info_brook_version(r):
    info = fields(info_text(r, "server"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", info["brook_version"])
    assert info["redis_version"] == "7.4.0"


@pytest.mark.brook_only
def test_info_brook_build(r):
    """The build the suite was asked to test (make test: compiled, make test-pure: pure) is the
    one the server runs."""
    build = fields(info_text(r, "server"))["brook_build"]
    assert build in ("compiled", "pure")
    expected = os.environ.get("BROOK_EXPECT_BUILD")
    if expected:
        assert build == expected


def test_info_resp3_is_verbatim(raw):
    exchange(raw, b"HELLO 3\r\n")
    reply = exchange(raw, b"INFO cluster\r\n")
    assert reply == b"=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n"


def test_info_maxmemory_follows_config(r, restore_config):
    restore_config("maxmemory", "maxmemory-policy")
    r.config_set("maxmemory", "100mb")
    r.config_set("maxmemory-policy", "allkeys-lru")
    memory = r.info("memory")
    assert memory["maxmemory"] == 104857600
    assert memory["maxmemory_human"] == "100.00M"
    assert memory["maxmemory_policy"] == "allkeys-lru"


def test_info_commandstats(r):
    r.set("k", "v")
    r.get("k")
    r.get("k")
    with pytest.raises(redis.ResponseError):
        r.config_set("maxclients", "abc")
    with pytest.raises(redis.ResponseError):
        r.execute_command("CONFIG", "GET")
    text = info_text(r, "commandstats")
    lines = {line.split(":")[0]: line for line in text.split("\r\n")[1:] if line}
    pattern = (r"cmdstat_get:calls=2,usec=\d+,usec_per_call=\d+\.\d\d,"
               r"rejected_calls=0,failed_calls=0")
    assert re.fullmatch(pattern, lines["cmdstat_get"])
    stats = r.info("commandstats")
    assert stats["cmdstat_set"]["calls"] == 1
    assert stats["cmdstat_config|set"]["failed_calls"] == 1
    assert stats["cmdstat_config|get"]["rejected_calls"] == 1
    assert stats["cmdstat_config|get"]["calls"] == 0


def test_info_errorstats(r):
    before = r.info("stats")["total_error_replies"]
    errors_before = r.info("errorstats").get("errorstat_ERR", {}).get("count", 0)
    for _ in range(2):
        with pytest.raises(redis.ResponseError):
            r.execute_command("NOSUCHCOMMAND")
    assert r.info("errorstats")["errorstat_ERR"]["count"] == errors_before + 2
    assert r.info("stats")["total_error_replies"] == before + 2
    assert re.search(r"^errorstat_ERR:count=\d+\r$", info_text(r, "errorstats"), re.M)


def test_info_keyspace(r):
    assert info_text(r, "keyspace") == "# Keyspace\r\n"
    r.set("a", "1")
    r.set("b", "2", ex=100)
    r.execute_command("SELECT", "3")
    r.set("c", "3")
    lines = info_text(r, "keyspace").split("\r\n")
    assert lines[0] == "# Keyspace"
    assert re.fullmatch(r"db0:keys=2,expires=1,avg_ttl=\d+(,subexpiry=0)?", lines[1])
    assert re.fullmatch(r"db3:keys=1,expires=0,avg_ttl=0(,subexpiry=0)?", lines[2])
    ttl = int(re.search(r"avg_ttl=(\d+)", lines[1]).group(1))
    assert 0 <= ttl <= 100_000  # an estimate: Redis computes it lazily, starting from 0


def test_info_hits_misses_and_expired(r):
    r.set("k", "v")
    r.get("k")
    r.get("nope")
    r.set("short", "v", px=30)
    time.sleep(0.08)
    assert r.get("short") is None
    stats = r.info("stats")
    assert stats["keyspace_hits"] == 1
    assert stats["keyspace_misses"] == 2
    assert stats["expired_keys"] == 1


def test_info_commands_processed_and_persistence(r):
    before = r.info("stats")["total_commands_processed"]
    r.ping()
    r.ping()
    assert r.info("stats")["total_commands_processed"] == before + 3  # the first INFO counts
    dirty = r.info("persistence")["rdb_changes_since_last_save"]
    r.set("a", "1")
    r.set("b", "2")
    assert r.info("persistence")["rdb_changes_since_last_save"] == dirty + 2


# ---------------------------------------------------------------------------------------------
# TIME, LASTSAVE
# ---------------------------------------------------------------------------------------------


def test_time(raw):
    reply = exchange(raw, b"TIME\r\n")
    match = re.fullmatch(rb"\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n", reply)
    assert match
    seconds, micros = int(match.group(1)), int(match.group(2))
    assert abs(seconds - time.time()) < 5
    assert 0 <= micros < 1_000_000
    assert exchange(raw, b"TIME x\r\n") == b"-ERR wrong number of arguments for 'time' command\r\n"


def test_lastsave(r, raw):
    saved = raw.call("LASTSAVE")
    assert isinstance(saved, int)
    assert saved <= time.time() + 1
    assert saved == r.info("persistence")["rdb_last_save_time"]


# ---------------------------------------------------------------------------------------------
# DEBUG
# ---------------------------------------------------------------------------------------------


def test_debug_sleep(raw):
    started = time.monotonic()
    assert exchange(raw, b"DEBUG SLEEP 0.05\r\n") == b"+OK\r\n"
    assert time.monotonic() - started >= 0.05
    assert exchange(raw, b"DEBUG SLEEP 0\r\n") == b"+OK\r\n"
    assert exchange(raw, b"DEBUG SLEEP x\r\n") == b"+OK\r\n"
    assert exchange(raw, b"DEBUG SLEEP -1\r\n") == b"+OK\r\n"
    assert exchange(raw, b"DEBUG SLEEP\r\n") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.\r\n"
    )


def test_debug_unknown_subcommands(raw):
    for name in (b"FOO", b"JMAP"):
        assert exchange(raw, b"DEBUG " + name + b"\r\n") == (
            b"-ERR unknown subcommand or wrong number of arguments for '" + name
            + b"'. Try DEBUG HELP.\r\n"
        )
    assert exchange(raw, b"DEBUG sleep 0 1\r\n") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'sleep'. Try DEBUG HELP.\r\n"
    )
    assert exchange(raw, b"DEBUG\r\n") == b"-ERR wrong number of arguments for 'debug' command\r\n"


def test_debug_object(r, raw):
    assert exchange(raw, b"DEBUG OBJECT nokey\r\n") == b"-ERR no such key\r\n"
    r.set("num", "12")
    r.set("text", "hello")
    for key, encoding in (("num", "int"), ("text", "embstr")):
        reply = r.execute_command("DEBUG", "OBJECT", key).decode()
        assert re.fullmatch(
            rf"Value at:0x[0-9a-f]+ refcount:\d+ encoding:{encoding} serializedlength:\d+ "
            r"lru:\d+ lru_seconds_idle:\d+", reply,
        ), reply


def debug_object_fields(raw: RawConnection, key: str) -> dict[str, str]:
    reply = raw.call("DEBUG", "OBJECT", key).decode()  # type: ignore[union-attr]
    return dict(item.split(":", 1) for item in reply.split(" ")[1:])


@pytest.mark.min_redis(7, 2)  # CLIENT NO-TOUCH
def test_debug_object_reports_the_keys_access_without_making_one(raw):
    """DEBUG OBJECT's lru is the key's access field (introspection-2.tcl reads it): reading
    it is no access, a NO-TOUCH client's GET neither, a GET is."""
    raw.call("SET", "k", "v")
    first = debug_object_fields(raw, "k")
    raw.call("CLIENT", "NO-TOUCH", "ON")
    time.sleep(1.1)
    raw.call("GET", "k")
    later = debug_object_fields(raw, "k")
    assert later["lru"] == first["lru"]
    assert int(later["lru_seconds_idle"]) >= 1
    raw.call("CLIENT", "NO-TOUCH", "OFF")
    raw.call("GET", "k")
    touched = debug_object_fields(raw, "k")
    assert int(touched["lru"]) > int(first["lru"])
    assert touched["lru_seconds_idle"] == "0"


def test_debug_set_active_expire(r):
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("gone", "v", px=20)
    time.sleep(0.3)
    assert "keys=1" in info_text(r, "keyspace")  # not deleted in the background
    assert r.get("gone") is None  # deleted when accessed
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    r.set("gone", "v", px=20)
    deadline = time.monotonic() + 3
    while "keys=" in info_text(r, "keyspace") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert info_text(r, "keyspace") == "# Keyspace\r\n"


@pytest.mark.parametrize("kind", [b"string", b"integer", b"double", b"bignum", b"null", b"array",
                                  b"set", b"map", b"attrib", b"push", b"verbatim", b"true",
                                  b"false", b"foo"])
def test_debug_protocol(server, kind):
    for hello in (b"", b"HELLO 3\r\n"):
        conn = RawConnection(server.port)
        if hello:
            exchange(conn, hello)
        reply = exchange(conn, b"DEBUG PROTOCOL " + kind + b"\r\n")
        conn.close()
        assert reply == _PROTOCOL[kind][1 if hello else 0]


_PROTOCOL = {
    b"string": (b"$11\r\nHello World\r\n",) * 2,
    b"integer": (b":12345\r\n",) * 2,
    b"double": (b"$5\r\n3.141\r\n", b",3.141\r\n"),
    b"bignum": (b"$37\r\n1234567999999999999999999999999999999\r\n",
                b"(1234567999999999999999999999999999999\r\n"),
    b"null": (b"$-1\r\n", b"_\r\n"),
    b"array": (b"*3\r\n:0\r\n:1\r\n:2\r\n",) * 2,
    b"set": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    b"map": (b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
             b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
    b"attrib": (b"$39\r\nSome real reply following the attribute\r\n",
                b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
                b"$39\r\nSome real reply following the attribute\r\n"),
    b"push": (b"-ERR RESP2 is not supported by this command\r\n",
              b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n"
              b"$40\r\nSome real reply following the push reply\r\n"),
    b"verbatim": (b"$25\r\nThis is a verbatim\nstring\r\n",
                  b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
    b"true": (b":1\r\n", b"#t\r\n"),
    b"false": (b":0\r\n", b"#f\r\n"),
    b"foo": (b"-ERR Wrong protocol type name. Please use one of the following: "
             b"string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"
             b"\r\n",) * 2,
}


@pytest.mark.brook_only
def test_debug_log(server, r):
    r.execute_command("DEBUG", "LOG", "marker-for-the-log")
    assert "# DEBUG LOG: marker-for-the-log" in server.log()


def test_debug_disabled(spawn):
    proc = spawn("--enable-debug-command", "no")
    conn = RawConnection(proc.port)
    assert exchange(conn, b"DEBUG SLEEP 0\r\n") == (
        b'-ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", '
        b"you can run it from a local connection, otherwise you need to set this option in the "
        b"configuration file, and then restart the server.\r\n"
    )
    conn.close()
    local = spawn("--enable-debug-command", "local")
    conn = RawConnection(local.port)
    assert exchange(conn, b"DEBUG SLEEP 0\r\n") == b"+OK\r\n"
    conn.close()


# ---------------------------------------------------------------------------------------------
# SLOWLOG
# ---------------------------------------------------------------------------------------------


def test_slowlog_records_commands(r):
    r.config_set("slowlog-log-slower-than", "0")
    r.client_setname("slowpoke")
    r.set("key", "value")
    entries = r.execute_command("SLOWLOG", "GET")
    assert all(len(e) == 6 for e in entries)
    entry_id, timestamp, duration, args, addr, name = next(
        e for e in entries if e[3] == [b"SET", b"key", b"value"]
    )
    assert isinstance(entry_id, int) and isinstance(duration, int) and duration >= 0
    assert abs(timestamp - time.time()) < 5
    assert addr == r.client_info()["addr"].encode()
    assert name == b"slowpoke"
    ids = [e[0] for e in entries]
    assert ids == sorted(ids, reverse=True)
    length = r.execute_command("SLOWLOG", "LEN")
    assert len(r.execute_command("SLOWLOG", "GET", "-1")) == length + 1  # + SLOWLOG LEN itself


def logged(r: redis.Redis) -> list[list[bytes]]:
    """The slow log's commands, oldest first."""
    return [entry[3] for entry in reversed(r.execute_command("SLOWLOG", "GET", "-1"))]


def test_slowlog_logs_every_command_of_a_pipeline_in_order(server, r):
    """With a threshold of 0 every command is logged, fast ones sent together included, in
    the order they ran (a MULTI before the commands its EXEC runs)."""
    r.config_set("slowlog-log-slower-than", "0")
    raw = RawConnection(server.port)
    r.execute_command("SLOWLOG", "RESET")
    raw.send(encode_request(b"PING") + encode_request(b"GET", b"a") + encode_request(b"ECHO", b"x") + encode_request(b"MULTI")
             + encode_request(b"INCR", b"n") + encode_request(b"EXEC"))
    raw.read(b"*1\r\n:1\r\n", timeout=5)
    assert logged(r) == [[b"SLOWLOG", b"RESET"], [b"PING"], [b"GET", b"a"], [b"ECHO", b"x"],
                         [b"MULTI"], [b"INCR", b"n"]]
    raw.close()


def test_slowlog_shows_commands_as_sent(server, r):
    """Commands Redis propagates rewritten (SPOP as DEL, GETSET as SET, INCRBYFLOAT as SET,
    a served BLPOP as LPOP) are logged as the client sent them."""
    r.config_set("slowlog-log-slower-than", "0")
    r.sadd("set", "a", "b", "c")
    r.set("f", "0")
    r.execute_command("SLOWLOG", "RESET")
    r.execute_command("SPOP", "set", "10")
    r.execute_command("GETSET", "a", "5")
    r.execute_command("INCRBYFLOAT", "f", "1.0")
    r.execute_command("SET", "k", "v", "EX", "100")
    assert logged(r)[1:] == [[b"SPOP", b"set", b"10"], [b"GETSET", b"a", b"5"],
                             [b"INCRBYFLOAT", b"f", b"1.0"], [b"SET", b"k", b"v", b"EX", b"100"]]
    waiter = RawConnection(server.port)
    waiter.send(encode_request(b"BLPOP", b"l", b"0"))
    deadline = time.monotonic() + 5
    while r.info("clients")["blocked_clients"] != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    pipe = r.pipeline(transaction=True)
    pipe.lpush("l", "foo")
    r.execute_command("SLOWLOG", "RESET")
    pipe.execute()
    assert waiter.read(b"foo\r\n", timeout=5).endswith(b"foo\r\n")
    assert logged(r)[-2:] == [[b"LPUSH", b"l", b"foo"], [b"BLPOP", b"l", b"0"]]
    waiter.close()


def test_slowlog_threshold_and_disable(r):
    r.config_set("slowlog-log-slower-than", "-1")
    r.execute_command("DEBUG", "SLEEP", "0.02")
    assert r.execute_command("SLOWLOG", "LEN") == 0
    r.config_set("slowlog-log-slower-than", "10000")
    r.ping()
    r.execute_command("DEBUG", "SLEEP", "0.02")
    entries = r.execute_command("SLOWLOG", "GET")
    assert [e[3] for e in entries] == [[b"DEBUG", b"SLEEP", b"0.02"]]
    assert entries[0][2] >= 20000


def test_slowlog_get_count_and_reset(r):
    r.config_set("slowlog-log-slower-than", "0")
    for i in range(15):
        r.echo(str(i))
    assert len(r.execute_command("SLOWLOG", "GET")) == 10
    assert len(r.execute_command("SLOWLOG", "GET", "3")) == 3
    assert len(r.execute_command("SLOWLOG", "GET", "0")) == 0
    assert len(r.execute_command("SLOWLOG", "GET", "-1")) >= 15
    assert r.execute_command("SLOWLOG", "RESET") == b"OK"
    assert r.execute_command("SLOWLOG", "LEN") <= 1


def test_slowlog_max_len(server, r):
    r.config_set("slowlog-max-len", "3")
    r.config_set("slowlog-log-slower-than", "0")
    for i in range(6):
        r.echo(str(i))
    assert r.execute_command("SLOWLOG", "LEN") == 3
    r.config_set("slowlog-max-len", "0")
    r.echo("x")
    # A limit of 0 turns the log off; since Redis 7.2 what it held stays.
    assert r.execute_command("SLOWLOG", "LEN") == (3 if server.version >= (7, 2) else 0)


def _slow_echoes(r, count: int) -> None:
    """Log ``count`` ECHOs in a slow log of 5 entries at most, then stop logging."""
    r.config_set("slowlog-max-len", "5")
    r.config_set("slowlog-log-slower-than", "0")
    for i in range(count):
        r.echo(str(i))
    r.config_set("slowlog-log-slower-than", "1000000")


def test_slowlog_max_len_lowered_trims_the_oldest(r):
    _slow_echoes(r, 5)
    r.config_set("slowlog-max-len", "2")
    assert [e[3] for e in r.execute_command("SLOWLOG", "GET")] == [[b"ECHO", b"4"],
                                                                 [b"ECHO", b"3"]]


def test_slowlog_keeps_its_entries_when_config_set_is_rolled_back(r):
    _slow_echoes(r, 4)
    before = r.execute_command("SLOWLOG", "LEN")
    # A port another socket holds: the port cannot be applied, so the whole CONFIG SET is
    # rolled back, and the lower slowlog-max-len never takes effect.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        with pytest.raises(redis.ResponseError, match="CONFIG SET failed"):
            r.execute_command("CONFIG", "SET", "slowlog-max-len", "1", "port", port)
    assert r.config_get("slowlog-max-len") == {"slowlog-max-len": "5"}
    assert r.execute_command("SLOWLOG", "LEN") == before


def test_slowlog_turned_off_by_threshold_is_not_trimmed_until_on(r):
    _slow_echoes(r, 4)
    r.config_set("slowlog-log-slower-than", "-1")
    held = r.execute_command("SLOWLOG", "LEN")
    r.config_set("slowlog-max-len", "1")
    assert r.execute_command("SLOWLOG", "LEN") == held
    r.config_set("slowlog-log-slower-than", "1000000")
    assert r.execute_command("SLOWLOG", "LEN") == 1


def test_slowlog_long_arguments_are_trimmed(r):
    r.config_set("slowlog-log-slower-than", "0")
    r.echo("x" * 200)
    r.execute_command("EXISTS", *[f"k{i}" for i in range(40)])
    entries = r.execute_command("SLOWLOG", "GET", "-1")
    echo = next(e for e in entries if e[3][0] == b"ECHO")
    assert echo[3][1] == b"x" * 128 + b"... (72 more bytes)"
    exists = next(e for e in entries if e[3][0] == b"EXISTS")
    assert len(exists[3]) == 32
    assert exists[3][-1] == b"... (10 more arguments)"


def test_slowlog_hides_sensitive_values(r, restore_config):
    restore_config("masterauth")
    r.config_set("slowlog-log-slower-than", "0")
    r.config_set("masterauth", "secret")
    entries = r.execute_command("SLOWLOG", "GET")
    config_entry = next(e for e in entries if e[3][:3] == [b"CONFIG", b"SET", b"masterauth"])
    assert config_entry[3][3] == b"(redacted)"


def test_slowlog_hides_acl_users_and_rules(server, r, restore_config):
    """ACL SETUSER's user and rules are redacted (even when it fails), since Redis 7.4 those
    of GETUSER and DELUSER too; masteruser is a sensitive parameter."""
    restore_config("masteruser")
    r.config_set("slowlog-log-slower-than", "0")
    r.execute_command("SLOWLOG", "RESET")
    with pytest.raises(redis.ResponseError):
        r.execute_command("ACL", "SETUSER", "slowlog test user", "+get", "+set")
    r.config_set("masteruser", "")
    r.execute_command("ACL", "SETUSER", "slowlog-test-user", "+get", "+set")
    r.execute_command("ACL", "GETUSER", "slowlog-test-user")
    r.execute_command("ACL", "DELUSER", "slowlog-test-user", "non-existing-user")
    hidden = b"(redacted)"
    entries = logged(r)
    assert entries[1] == [b"ACL", b"SETUSER", hidden, hidden, hidden]
    assert entries[2] == [b"CONFIG", b"SET", b"masteruser", hidden]
    assert entries[3] == [b"ACL", b"SETUSER", hidden, hidden, hidden]
    if server.version >= (7, 4):
        assert entries[4:6] == [[b"ACL", b"GETUSER", hidden], [b"ACL", b"DELUSER", hidden, hidden]]


def test_slowlog_hides_passwords(r, raw):
    r.config_set("slowlog-log-slower-than", "0")
    exchange(raw, b"AUTH foo\r\n")
    exchange(raw, b"AUTH default bar\r\n")
    exchange(raw, b"HELLO 2 AUTH default pw SETNAME x\r\n")
    exchange(raw, b"MULTI\r\n")
    exchange(raw, b"PING\r\n")
    exchange(raw, b"EXEC\r\n")
    logged = [e[3] for e in reversed(r.execute_command("SLOWLOG", "GET", "-1"))]
    redacted = b"(redacted)"
    assert [b"AUTH", redacted] in logged
    assert [b"AUTH", redacted, redacted] in logged
    assert [b"HELLO", b"2", b"AUTH", redacted, redacted, b"SETNAME", b"x"] in logged
    assert [b"PING"] in logged
    assert [b"EXEC"] not in logged


def test_slowlog_errors_and_help(server, raw):
    error = b"-ERR count should be greater than or equal to -1\r\n"
    assert exchange(raw, b"SLOWLOG GET x\r\n") == error
    assert exchange(raw, b"SLOWLOG GET -2\r\n") == error
    assert exchange(raw, b"SLOWLOG GET 1 2\r\n") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.\r\n"
    )
    assert exchange(raw, b"SLOWLOG LEN x\r\n") == (
        b"-ERR wrong number of arguments for 'slowlog|len' command\r\n"
    )
    assert exchange(raw, b"SLOWLOG HELP\r\n") == (
        b"*12\r\n+SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
        b"+GET [<count>]\r\n"
        b"+    Return top <count> entries from the slowlog (default: 10, -1 mean all).\r\n"
        b"+    Entries are made of:\r\n"
        b"+    id, timestamp, time in microseconds, arguments array, client IP and port,\r\n"
        b"+    client name\r\n+LEN\r\n+    Return the length of the slowlog.\r\n+RESET\r\n"
        b"+    Reset the slowlog.\r\n+HELP\r\n+" + help_footer(server) + b"\r\n"
    )


# ---------------------------------------------------------------------------------------------
# LATENCY
# ---------------------------------------------------------------------------------------------


def test_latency_disabled(r, raw):
    assert exchange(raw, b"LATENCY LATEST\r\n") == b"*0\r\n"
    assert exchange(raw, b"LATENCY HISTORY command\r\n") == b"*0\r\n"
    assert exchange(raw, b"LATENCY RESET\r\n") == b":0\r\n"
    assert exchange(raw, b"LATENCY GRAPH command\r\n") == (
        b"-ERR No samples available for event 'command'\r\n"
    )
    doctor = r.execute_command("LATENCY", "DOCTOR").decode()
    assert doctor.startswith("I'm sorry, Dave, I can't do that. Latency monitoring is disabled")


def test_latency_records_slow_commands(r, restore_config):
    restore_config("latency-monitor-threshold")
    r.execute_command("LATENCY", "RESET")
    r.config_set("latency-monitor-threshold", "10")
    r.execute_command("DEBUG", "SLEEP", "0.03")
    latest = r.execute_command("LATENCY", "LATEST")
    event = next(e for e in latest if e[0] == b"command")
    name, when, last, worst = event
    assert abs(when - time.time()) < 5
    assert last >= 30 and worst >= last
    history = r.execute_command("LATENCY", "HISTORY", "command")
    assert history[-1][1] >= 30
    assert r.execute_command("LATENCY", "GRAPH", "command").startswith(b"command - high ")
    doctor = r.execute_command("LATENCY", "DOCTOR").decode()
    assert "command" in doctor
    assert r.execute_command("LATENCY", "RESET", "command", "nosuch") == 1
    assert r.execute_command("LATENCY", "HISTORY", "command") == []


# The microseconds LATENCY HISTOGRAM reports: Redis's histogram read at power-of-two levels
# from 1024 ns, each level the top of its two-significant-digit bucket.
HISTOGRAM_LEVELS_USEC = {((1 << (10 + k)) + (1 << (3 + k)) - 1) // 1000 for k in range(21)}


def histograms(raw: RawConnection, *names: str) -> dict[bytes, tuple[int, list[int], list[int]]]:
    """LATENCY HISTOGRAM (RESP2): command -> (calls, levels, cumulative counts)."""
    reply = raw.call("LATENCY", "HISTOGRAM", *names)
    found = {}
    for name, body in zip(reply[::2], reply[1::2], strict=True):
        assert body[0] == b"calls" and body[2] == b"histogram_usec"
        levels = body[3]
        found[name] = (body[1], levels[::2], levels[1::2])
    return found


def test_latency_histogram_of_chosen_commands(raw):
    raw.call("CONFIG", "RESETSTAT")
    for request in (("SET", "a", "b"), ("SET", "c", "d"), ("GET", "a"), ("HSET", "h", "k", "v")):
        raw.call(*request)
    found = histograms(raw, "set", "nosuch", "HSET", "zadd")
    assert list(found) == [b"set", b"hset"]
    for name, calls in ((b"set", 2), (b"hset", 1)):
        total, levels, cumulative = found[name]
        assert total == calls
        assert set(levels) <= HISTOGRAM_LEVELS_USEC and levels == sorted(levels)
        assert cumulative == sorted(cumulative) and cumulative[-1] == calls
    assert histograms(raw, "nosuch", "zadd") == {}


def test_latency_histogram_of_every_command_and_of_subcommands(raw):
    raw.call("CONFIG", "RESETSTAT")
    assert list(histograms(raw)) == [b"config|resetstat"]
    raw.call("CLIENT", "ID")
    raw.call("CLIENT", "GETNAME")
    everything = histograms(raw)
    assert everything[b"config|resetstat"][0] == 1
    assert everything[b"latency|histogram"][0] == 1
    assert set(histograms(raw, "client")) == {b"client|id", b"client|getname"}
    assert list(histograms(raw, "client|id")) == [b"client|id"]


def test_latency_histogram_resp3_is_maps(raw):
    raw.call("HELLO", "3")
    raw.call("CONFIG", "RESETSTAT")
    raw.call("GET", "a")
    reply = exchange(raw, b"LATENCY HISTOGRAM get\r\n")
    assert reply.startswith(b"%1\r\n$3\r\nget\r\n%2\r\n$5\r\ncalls\r\n:1\r\n"
                            b"$14\r\nhistogram_usec\r\n%1\r\n:")


def test_latency_histogram_follows_latency_tracking(raw, r, restore_config):
    restore_config("latency-tracking")
    r.config_set("latency-tracking", "no")
    raw.call("CONFIG", "RESETSTAT")
    raw.call("GET", "a")
    assert histograms(raw, "get") == {}
    r.config_set("latency-tracking", "yes")
    raw.call("GET", "a")
    assert histograms(raw, "get")[b"get"][0] == 1


def test_latency_histogram_buckets_are_redis_hdr_buckets():
    """The bucket tops Redis reports (seen from Redis: a 10 ms sleep at 16908 us, 0.3 s at
    541065 us, a short SET at 16 us)."""
    assert [latency_index_range((4 + k) << 7)[1] // 1000 for k in (0, 1, 4, 14, 19)] == [
        1, 2, 16, 16908, 541065]
    for nanoseconds in (1, 255, 256, 1031, 1032, 10_000_000, 300_000_000, 10**9, 10**12):
        lowest, highest = latency_index_range(latency_index(nanoseconds))
        assert lowest <= min(nanoseconds, 10**9) <= highest
    counts = {latency_index(n): 1 for n in (1000, 2000, 3000, 4000)}
    assert latency_at_percentile(counts, 50) == 2007  # the 2nd of 4, its bucket's top
    assert latency_at_percentile(counts, 100) == 4015
    assert latency_at_percentile(counts, 0) == 1000


def test_info_latencystats(raw, r, restore_config):
    restore_config("latency-tracking-info-percentiles")
    raw.call("CONFIG", "RESETSTAT")
    for _ in range(3):
        raw.call("GET", "a")
    report = fields(info_text(r, "latencystats"))
    p50, p99, p999 = (float(v.split("=")[1]) for v in report["latency_percentiles_usec_get"]
                      .split(","))
    assert report["latency_percentiles_usec_get"].startswith("p50=")
    assert ",p99=" in report["latency_percentiles_usec_get"]
    assert 0 < p50 <= p99 <= p999
    for usec in (p50, p99, p999):  # a bucket's top, in microseconds with three decimals
        nanoseconds = round(usec * 1000)
        assert latency_index_range(latency_index(nanoseconds))[1] == nanoseconds
    r.config_set("latency-tracking-info-percentiles", "0 99.99")
    line = fields(info_text(r, "latencystats"))["latency_percentiles_usec_get"]
    assert re.fullmatch(r"p0=\d+\.\d{3},p99\.99=\d+\.\d{3}", line), line
    assert "Latencystats" not in titles(info_text(r))
    assert "Latencystats" in titles(info_text(r, "everything"))


def test_latency_of_the_expire_cycle(r, restore_config):
    """A cycle of active expiry that takes the threshold or longer is an ``expire-cycle``
    event (here: freeing a set of half a million members)."""
    restore_config("latency-monitor-threshold")
    members = [str(i) for i in range(500_000)]
    for start in range(0, len(members), 50_000):
        r.sadd("big", *members[start:start + 50_000])
    r.config_set("latency-monitor-threshold", "1")
    r.execute_command("LATENCY", "RESET")
    r.pexpire("big", 50)
    deadline = time.monotonic() + 5
    while r.dbsize() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert r.dbsize() == 0
    events = {event[0]: event for event in r.execute_command("LATENCY", "LATEST")}
    assert events[b"expire-cycle"][2] >= 1
    assert r.execute_command("LATENCY", "GRAPH", "expire-cycle").startswith(b"expire-cycle - high")


def test_latency_help(raw):
    reply = exchange(raw, b"LATENCY HELP\r\n")
    assert reply.split(b"\r\n")[1] == (
        b"+LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    )
    for line in (b"+DOCTOR", b"+GRAPH <event>", b"+HISTORY <event>", b"+LATEST",
                 b"+RESET [<event> ...]", b"+HELP"):
        assert line in reply.split(b"\r\n")


# ---------------------------------------------------------------------------------------------
# MONITOR
# ---------------------------------------------------------------------------------------------

MONITOR_LINE = re.compile(rb'^\+(\d+\.\d{6}) \[(\d+) (127\.0\.0\.1:\d+)\] (.*)$')


def monitor_lines(monitor: RawConnection, count: int) -> list[re.Match[bytes]]:
    data = b""
    deadline = time.monotonic() + 5
    while data.count(b"\r\n") < count and time.monotonic() < deadline:
        data += monitor.read(timeout=0.2)
    return [MONITOR_LINE.match(line) for line in data.split(b"\r\n")[:count]]


def test_monitor_shows_other_clients_commands(server, r):
    r.ping()  # connect first: redis-py's connection handshake is not part of the test
    monitor = RawConnection(server.port)
    assert exchange(monitor, b"MONITOR\r\n") == b"+OK\r\n"
    r.set("key", "a\nb\x01\"")
    r.execute_command("SELECT", "2")
    r.get("key")
    first, _, third = monitor_lines(monitor, 3)
    assert first is not None and third is not None
    assert abs(float(first.group(1)) - time.time()) < 5
    assert first.group(2) == b"0"
    assert first.group(4) == b'"SET" "key" "a\\nb\\x01\\""'
    assert third.group(2) == b"2"
    assert third.group(4) == b'"GET" "key"'
    own = r.client_info()["addr"].encode()
    assert first.group(3) == own
    monitor.close()


def test_monitor_hides_admin_commands(server, r):
    r.ping()
    monitor = RawConnection(server.port)
    assert exchange(monitor, b"MONITOR\r\n") == b"+OK\r\n"
    r.config_get("maxclients")
    r.execute_command("CLIENT", "LIST")
    r.client_setname("named")
    r.echo("last")
    lines = monitor_lines(monitor, 2)
    assert [m.group(4) for m in lines if m] == [b'"CLIENT" "SETNAME" "named"', b'"ECHO" "last"']
    monitor.close()


def test_monitor_repeated_is_ignored(server):
    monitor = RawConnection(server.port)
    assert exchange(monitor, b"MONITOR\r\n") == b"+OK\r\n"
    assert monitor.request(b"MONITOR\r\n", timeout=0.2) == b""
    monitor.close()


# ---------------------------------------------------------------------------------------------
# SHUTDOWN
# ---------------------------------------------------------------------------------------------


def test_shutdown_argument_errors(raw):
    assert exchange(raw, b"SHUTDOWN foo\r\n") == b"-ERR syntax error\r\n"
    assert exchange(raw, b"SHUTDOWN SAVE NOSAVE\r\n") == b"-ERR syntax error\r\n"
    assert exchange(raw, b"SHUTDOWN ABORT NOW\r\n") == b"-ERR syntax error\r\n"
    assert exchange(raw, b"SHUTDOWN ABORT\r\n") == b"-ERR No shutdown in progress.\r\n"


@pytest.mark.parametrize("args", [[b"NOSAVE"], [b"NOSAVE", b"NOW", b"FORCE"], []])
def test_shutdown_closes_clients_and_exits(spawn, args):
    proc = spawn("--save", "")
    bystander = RawConnection(proc.port)
    assert exchange(bystander, b"PING\r\n") == b"+PONG\r\n"
    caller = RawConnection(proc.port)
    assert exchange(caller, encode_request(b"SHUTDOWN", *args)) == b"<CLOSED>"
    assert bystander.read(timeout=5) == b"<CLOSED>"
    assert proc.process.wait(timeout=10) == 0


@pytest.mark.brook_only
def test_shutdown_logs(spawn):
    proc = spawn()
    conn = RawConnection(proc.port)
    exchange(conn, b"SHUTDOWN NOSAVE\r\n")
    assert proc.process.wait(timeout=10) == 0
    log = proc.log()
    assert "User requested shutdown..." in log
    assert "ready to exit, bye bye..." in log


# ---------------------------------------------------------------------------------------------
# Command table entries
# ---------------------------------------------------------------------------------------------


def _command_entries(port: int) -> dict[str, tuple[int, set[str], set[str]]]:
    found = {}

    def walk(entry: list) -> None:
        name = entry[0].decode()
        flags = {f.decode().replace("_", "-") for f in entry[2]} - {"no-multi", "allow-busy"}
        found[name] = (entry[1], flags, {c.decode() for c in entry[6]})
        for sub in entry[9]:
            walk(sub)

    conn = RawConnection(port)
    for entry in conn.call("COMMAND"):  # type: ignore[union-attr]
        walk(entry)
    conn.close()
    return found


def test_command_table_matches_redis(server, r, redis_process, brook_process):
    """Arity, flags and ACL categories of the administration commands, as Redis 7.0 has them."""
    if server.kind != "brook" or redis_process is None:
        pytest.skip("compares Brook's table with the reference Redis")
    ours = _command_entries(brook_process.port)
    theirs = _command_entries(redis_process.port)
    families = {"client", "config", "info", "time", "debug", "shutdown", "monitor", "slowlog",
                "latency", "lastsave"}
    compared = 0
    for name, entry in theirs.items():
        if name.split("|")[0] in families and name in ours:
            assert ours[name] == entry, name
            compared += 1
    assert compared >= 35


# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------


def test_redis_benchmark_runs(server):
    """redis-benchmark reads CONFIG GET save/appendonly before it starts."""
    binary = shutil.which("redis-benchmark")
    if binary is None:
        pytest.skip("redis-benchmark is not installed")
    result = subprocess.run(
        [binary, "-p", str(server.port), "-n", "200", "-c", "2", "-t", "ping,set,get", "-q"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for name in ("PING_INLINE", "PING_MBULK", "SET", "GET"):
        assert f"{name}: " in result.stdout
