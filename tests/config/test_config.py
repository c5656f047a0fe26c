"""Configuration: CONFIG GET/SET/RESETSTAT/REWRITE/HELP, config files, command-line flags,
start-up errors, logging and process lifecycle.

CONFIG tests use the parametrized ``r``/``raw`` fixtures, so replies and error texts are
compared with real Redis. Start-up behaviour is tested by launching real processes (Brook and
redis-server side by side where Redis has the same behaviour).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.conftest import (
    RawConnection,
    ServerProcess,
    encode_request,
    exchange,
    free_port,
    help_footer,
    server_argv,
)

# ---------------------------------------------------------------------------------------------
# Helpers shared with the other administration test files
# ---------------------------------------------------------------------------------------------




def run_server(kind: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a server that is expected to exit by itself (bad configuration, --version)."""
    return subprocess.run(
        server_argv(kind, *args), capture_output=True, text=True, timeout=20, cwd=tmp
    )












def config_value(r: redis.Redis, name: str) -> str:
    return r.config_get(name)[name]


def wait_exit(proc: ServerProcess, timeout: float = 10) -> int:
    return proc.process.wait(timeout=timeout)


# ---------------------------------------------------------------------------------------------
# CONFIG GET
# ---------------------------------------------------------------------------------------------


def test_config_get_single_and_several(r):
    assert r.config_get("maxclients") == {"maxclients": "10000"}
    reply = r.execute_command("CONFIG", "GET", "timeout", "maxclients")
    if isinstance(reply, list):
        reply = dict(zip(reply[::2], reply[1::2], strict=True))
    assert reply == {b"timeout": b"0", b"maxclients": b"10000"}


def test_config_get_glob_patterns(r):
    found = r.config_get("maxmemory*")
    assert {"maxmemory", "maxmemory-policy", "maxmemory-samples"} <= set(found)
    assert all(name.startswith("maxmemory") for name in found)
    assert r.config_get("[m]axclients") == {"maxclients": "10000"}
    assert r.config_get("maxclient?") == {"maxclients": "10000"}
    assert r.config_get("MAXCL*") == {"maxclients": "10000"}


def test_config_get_unknown_and_arity(r, raw):
    assert r.config_get("no-such-parameter") == {}
    assert r.config_get("no-such-*") == {}
    assert exchange(raw, b"CONFIG GET\r\n") == (
        b"-ERR wrong number of arguments for 'config|get' command\r\n"
    )


def test_config_get_exact_name_is_echoed_as_given(raw):
    assert exchange(raw, b"CONFIG GET MAXCLIENTS\r\n") == (
        b"*2\r\n$10\r\nMAXCLIENTS\r\n$5\r\n10000\r\n"
    )


def test_config_get_reports_each_parameter_once(raw):
    expected = b"*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n"
    assert exchange(raw, b"CONFIG GET maxclients MAXCLIENTS\r\n") == expected
    assert exchange(raw, b"CONFIG GET maxclients maxc*\r\n") == expected


def test_config_get_aliases(r, restore_config):
    restore_config("hash-max-listpack-entries")
    r.config_set("hash-max-listpack-entries", "100")
    assert r.config_get("hash-max-ziplist-entries") == {"hash-max-ziplist-entries": "100"}
    assert r.config_get("hash-max-*-entries") == {
        "hash-max-ziplist-entries": "100", "hash-max-listpack-entries": "100",
    }


def test_config_get_resp3_is_a_map(server):
    client = server.client(protocol=3)
    assert client.execute_command("CONFIG", "GET", "timeout") == {b"timeout": b"0"}
    client.close()


def test_parameters_that_tools_read(r):
    """redis-benchmark reads save/appendonly; queue libraries read the rest."""
    everything = r.config_get("*")
    for name in (
        "save", "appendonly", "maxmemory-policy", "notify-keyspace-events", "timeout",
        "databases", "maxmemory", "port", "bind", "dir", "dbfilename", "requirepass",
        "maxclients", "hz", "loglevel", "slowlog-log-slower-than", "slowlog-max-len",
        "latency-monitor-threshold", "proto-max-bulk-len", "client-query-buffer-limit",
        "protected-mode", "client-output-buffer-limit", "appendfsync", "tcp-keepalive",
        "stream-node-max-entries", "list-max-listpack-size", "cluster-enabled",
    ):
        assert name in everything, name
    assert everything["appendonly"] == "no"
    assert everything["databases"] == "16"
    assert everything["maxmemory-policy"] == "noeviction"
    assert everything["cluster-enabled"] == "no"


def test_config_get_dir_is_absolute(r):
    assert os.path.isabs(config_value(r, "dir"))


# ---------------------------------------------------------------------------------------------
# CONFIG SET
# ---------------------------------------------------------------------------------------------


def test_config_set_several_at_once(r, restore_config):
    restore_config("maxmemory-policy")
    assert r.execute_command("CONFIG", "SET", "timeout", "7", "maxmemory-policy", "allkeys-lru")
    assert config_value(r, "timeout") == "7"
    assert config_value(r, "maxmemory-policy") == "allkeys-lru"


def test_config_set_is_all_or_nothing(r, raw):
    reply = exchange(raw, b"CONFIG SET timeout 5 maxclients -1\r\n")
    assert reply == (
        b"-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must "
        b"be between 1 and 4294967295 inclusive\r\n"
    )
    assert config_value(r, "timeout") == "0"


# Parameters Redis's "CONFIG sanity" test leaves out (immutable, or not settable back as read).
_SANITY_SKIPPED = {
    "rdbchecksum", "daemonize", "io-threads-do-reads", "tcp-backlog", "always-show-logo",
    "syslog-enabled", "cluster-enabled", "disable-thp", "aclfile", "unixsocket", "pidfile",
    "syslog-ident", "appendfilename", "appenddirname", "supervised", "syslog-facility",
    "databases", "io-threads", "logfile", "unixsocketperm", "replicaof", "slaveof", "requirepass",
    "server-cpulist", "bio-cpulist", "aof-rewrite-cpulist", "bgsave-cpulist", "server_cpulist",
    "bio_cpulist", "aof_rewrite_cpulist", "bgsave_cpulist", "set-proc-title",
    "cluster-config-file", "cluster-port", "oom-score-adj", "oom-score-adj-values",
    "enable-protected-configs", "enable-debug-command", "enable-module-command", "dbfilename",
    "dir", "socket-mark-id", "req-res-logfile", "client-default-resp",
    "tls-prefer-server-ciphers", "tls-session-cache-timeout", "tls-session-cache-size",
    "tls-session-caching", "tls-cert-file", "tls-key-file", "tls-client-cert-file",
    "tls-client-key-file", "tls-dh-params-file", "tls-ca-cert-file", "tls-ca-cert-dir",
    "tls-protocols", "tls-ciphers", "tls-ciphersuites", "tls-port",
}


def test_config_set_of_every_parameter_to_its_value_round_trips(r):
    """Redis's "CONFIG sanity": CONFIG SET of what CONFIG GET * says changes nothing (port
    and bind included: they are set at run time, as in Redis)."""
    before = {k: v for k, v in r.config_get("*").items() if k not in _SANITY_SKIPPED}
    refused = []
    for name, value in before.items():
        try:
            r.execute_command("CONFIG", "SET", name, value)
        except redis.ResponseError as err:
            refused.append(f"{name}: {err}")
    assert refused == []
    after = r.config_get("*")
    assert {k: after[k] for k in before} == before


def test_hidden_parameters_answer_only_to_their_name(r):
    assert "key-load-delay" not in r.config_get("*")
    assert "rdb-key-save-delay" not in r.config_get("*delay*")
    assert r.config_get("key-load-delay") == {"key-load-delay": "0"}
    assert r.config_get("RDB-KEY-SAVE-DELAY") == {"RDB-KEY-SAVE-DELAY": "0"}


def test_rdb_key_save_delay_slows_a_background_save(r, restore_config):
    """What Redis's tests use to keep a BGSAVE running: a pause after each key."""
    restore_config("rdb-key-save-delay")
    r.mset({f"k{i}": "v" for i in range(5)})
    r.config_set("rdb-key-save-delay", "200000")  # 0.2 s a key
    started = time.monotonic()
    r.bgsave()
    time.sleep(0.3)
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1
    while r.info("persistence")["rdb_bgsave_in_progress"]:
        time.sleep(0.05)
    assert time.monotonic() - started >= 0.9
    assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"


def test_config_set_port_moves_the_listener(spawn):
    proc = spawn()
    r = redis.Redis(port=proc.port)
    new_port = free_port()
    assert r.execute_command("CONFIG", "SET", "port", str(new_port)) == b"OK"
    moved = redis.Redis(port=new_port)
    assert moved.ping()
    assert moved.config_get("port") == {"port": str(new_port)}
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=proc.port).ping()
    assert r.ping()  # connections already made stay
    assert moved.execute_command("CONFIG", "SET", "port", str(proc.port)) == b"OK"
    assert redis.Redis(port=proc.port).ping()


def test_config_set_port_taken_rolls_everything_back(spawn):
    proc = spawn()
    r = redis.Redis(port=proc.port)
    taken = RawConnection(proc.port)  # any socket will do: take a port with a listener
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        port = busy.getsockname()[1]
        reply = exchange(taken, b"CONFIG SET maxmemory 10000001 port %d timeout 9\r\n" % port)
        assert reply == (b"-ERR CONFIG SET failed (possibly related to argument 'port') - "
                         b"Unable to listen on this port. Check server logs.\r\n")
    finally:
        busy.close()
    assert r.config_get("maxmemory") == {"maxmemory": "0"}
    assert r.config_get("timeout") == {"timeout": "0"}
    assert r.config_get("port") == {"port": str(proc.port)}
    assert redis.Redis(port=proc.port).ping()


def test_config_set_bind_keeps_addresses_that_stay(spawn):
    proc = spawn()
    r = redis.Redis(port=proc.port)
    assert r.execute_command("CONFIG", "SET", "bind", "127.0.0.1 -::1") == b"OK"
    assert redis.Redis(port=proc.port).ping()
    assert r.execute_command("CONFIG", "SET", "bind", "127.0.0.1") == b"OK"
    assert redis.Redis(port=proc.port).ping()
    assert r.config_get("bind") == {"bind": "127.0.0.1"}


def test_config_set_name_errors(raw):
    assert exchange(raw, b"CONFIG SET nosuch 1\r\n") == (
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n"
    )
    assert exchange(raw, b"CONFIG SET maxclients 10 timeout\r\n") == b"-ERR syntax error\r\n"
    assert exchange(raw, b"CONFIG SET maxclients\r\n") == (
        b"-ERR wrong number of arguments for 'config|set' command\r\n"
    )
    assert exchange(raw, b"CONFIG SET maxclients 100 MAXCLIENTS 200\r\n") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'MAXCLIENTS') - duplicate "
        b"parameter\r\n"
    )
    assert exchange(raw, b"CONFIG SET daemonize yes\r\n") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set "
        b"immutable config\r\n"
    )
    assert exchange(raw, b"CONFIG SET databases 3\r\n") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
        b"immutable config\r\n"
    )
    assert exchange(raw, b"CONFIG SET dir /tmp\r\n") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected "
        b"config\r\n"
    )
    assert exchange(raw, b"CONFIG SET dbfilename x.rdb\r\n") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set "
        b"protected config\r\n"
    )


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("maxclients", "abc", "argument couldn't be parsed into an integer"),
        ("maxclients", "0", "argument must be between 1 and 4294967295 inclusive"),
        ("timeout", "-1", "argument must be between 0 and 2147483647 inclusive"),
        ("timeout", "+5", "argument couldn't be parsed into an integer"),
        ("timeout", "05", "argument couldn't be parsed into an integer"),
        ("timeout", " 5", "argument couldn't be parsed into an integer"),
        ("timeout", "1e3", "argument couldn't be parsed into an integer"),
        ("hz", "-1", "argument must be between 0 and 2147483647 inclusive"),
        ("slowlog-log-slower-than", "-2",
         "argument must be between -1 and 9223372036854775807 inclusive"),
        ("proto-max-bulk-len", "10",
         "argument must be between 1048576 and 9223372036854775807 inclusive"),
        ("client-query-buffer-limit", "1",
         "argument must be between 1048576 and 9223372036854775807 inclusive"),
        ("maxmemory", "-1", "argument must be a memory value"),
        ("maxmemory", "1.5gb", "argument must be a memory value"),
        ("maxmemory", "1x", "argument must be a memory value"),
        ("protected-mode", "maybe", "argument must be 'yes' or 'no'"),
        ("appendonly", "1", "argument must be 'yes' or 'no'"),
        ("active-expire-effort", "11", "argument must be between 1 and 10 inclusive"),
        ("maxmemory-policy", "foo",
         "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
         "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"),
        ("appendfsync", "sometimes",
         "argument(s) must be one of the following: everysec, always, no"),
        ("save", "x", "Invalid save parameters"),
        ("save", "100", "Invalid save parameters"),
        ("save", "0 0", "Invalid save parameters"),
        ("save", "1 -1", "Invalid save parameters"),
        ("notify-keyspace-events", "Z",
         "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."),
        ("client-output-buffer-limit", "normal 1 2",
         "Wrong number of arguments in buffer limit configuration."),
        ("client-output-buffer-limit", "foo 1 2 3",
         "Invalid client class specified in buffer limit configuration."),
        ("client-output-buffer-limit", "normal x 2 3",
         "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
    ],
)
def test_config_set_value_errors(raw, name, value, reason):
    reply = exchange(raw, encode_request(b"CONFIG", b"SET", name.encode(), value.encode()))
    assert reply == (
        f"-ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}\r\n".encode()
    )


@pytest.mark.min_redis(7, 2)
def test_config_set_loglevel_error_lists_nothing(raw):
    assert exchange(raw, b"CONFIG SET loglevel foo\r\n") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must "
        b"be one of the following: debug, verbose, notice, warning, nothing\r\n"
    )


def test_config_set_memory_units(r, restore_config):
    restore_config("maxmemory")
    for given, stored in (("1GB", "1073741824"), ("5K", "5000"), ("3kb", "3072"),
                          ("2mb", "2097152"), ("7", "7"), ("0", "0")):
        r.config_set("maxmemory", given)
        assert config_value(r, "maxmemory") == stored


def test_config_set_values_are_normalised(r, restore_config):
    restore_config("loglevel", "maxmemory-policy", "notify-keyspace-events", "save")
    r.config_set("loglevel", "WARNING")
    assert config_value(r, "loglevel") == "warning"
    r.config_set("maxmemory-policy", "ALLKEYS-LRU")
    assert config_value(r, "maxmemory-policy") == "allkeys-lru"
    for given, shown in (("KEA", "AKE"), ("Ex", "xE"), ("Kglshzxetmdn", "glshzxetdnKm"),
                         ("A", "A"), ("", "")):
        r.config_set("notify-keyspace-events", given)
        assert config_value(r, "notify-keyspace-events") == shown
    r.config_set("save", "3600 1 300 100")
    assert config_value(r, "save") == "3600 1 300 100"
    r.config_set("save", "")
    assert config_value(r, "save") == ""


def test_config_set_hz_is_clamped(r):
    r.config_set("hz", "0")
    assert config_value(r, "hz") == "1"
    r.config_set("hz", "1000")
    assert config_value(r, "hz") == "500"
    r.config_set("hz", "10")
    assert config_value(r, "hz") == "10"


def test_config_set_buffer_limits_changes_only_named_classes(r, restore_config):
    restore_config("client-output-buffer-limit")
    r.config_set("client-output-buffer-limit", "pubsub 1mb 2mb 3")
    assert config_value(r, "client-output-buffer-limit") == (
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2097152 3"
    )


def test_config_set_aliases_are_distinct_names(r, restore_config):
    restore_config("hash-max-listpack-entries")
    assert r.execute_command(
        "CONFIG", "SET", "hash-max-ziplist-entries", "100", "hash-max-listpack-entries", "200"
    )
    assert config_value(r, "hash-max-listpack-entries") == "200"


def test_maxclients_follows_the_open_files_limit(spawn):
    proc = spawn(fd_limit=100)
    client = proc.client()
    assert config_value(client, "maxclients") == "68"
    with pytest.raises(
        redis.ResponseError,
        match=r"^CONFIG SET failed \(possibly related to argument 'maxclients'\) - The operating "
              r"system is not able to handle the specified number of clients, try with 68$",
    ):
        client.config_set("maxclients", "1000")
    assert config_value(client, "maxclients") == "68"
    client.config_set("maxclients", "50")
    assert config_value(client, "maxclients") == "50"
    client.close()


def test_protected_mode_get_and_set(r, restore_config):
    restore_config("protected-mode")
    assert config_value(r, "protected-mode") == "yes"
    r.config_set("protected-mode", "no")
    assert config_value(r, "protected-mode") == "no"


# ---------------------------------------------------------------------------------------------
# CONFIG RESETSTAT, HELP, REWRITE
# ---------------------------------------------------------------------------------------------


def test_config_help(server, raw):
    assert exchange(raw, b"CONFIG HELP\r\n") == (
        b"*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
        b"+GET <pattern>\r\n"
        b"+    Return parameters matching the glob-like <pattern> and their values.\r\n"
        b"+SET <directive> <value>\r\n+    Set the configuration <directive> to <value>.\r\n"
        b"+RESETSTAT\r\n+    Reset statistics reported by the INFO command.\r\n"
        b"+REWRITE\r\n+    Rewrite the configuration file.\r\n+HELP\r\n+" + help_footer(server)
        + b"\r\n"
    )


def test_config_subcommand_errors(raw):
    assert exchange(raw, b"CONFIG FOO\r\n") == b"-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"
    assert exchange(raw, b"CONFIG\r\n") == b"-ERR wrong number of arguments for 'config' command\r\n"
    assert exchange(raw, b"CONFIG RESETSTAT x\r\n") == (
        b"-ERR wrong number of arguments for 'config|resetstat' command\r\n"
    )


def test_config_resetstat(r):
    r.set("k", "v")
    r.get("k")
    r.get("missing")
    errors_before = r.info("stats")["total_error_replies"]
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCOMMAND")
    stats = r.info("stats")
    assert stats["keyspace_hits"] == 1 and stats["keyspace_misses"] == 1
    assert stats["total_error_replies"] == errors_before + 1
    assert r.config_resetstat()
    stats = r.info("stats")
    assert stats["keyspace_hits"] == 0
    assert stats["keyspace_misses"] == 0
    assert stats["total_error_replies"] == 0
    assert r.info("errorstats") == {}
    # Only what ran since the reset is counted (the reset itself and the INFO calls).
    assert set(r.info("commandstats")) == {"cmdstat_config|resetstat", "cmdstat_info"}


def test_config_rewrite_without_config_file(raw):
    assert exchange(raw, b"CONFIG REWRITE\r\n") == (
        b"-ERR The server is running without a config file\r\n"
    )


def test_config_rewrite_updates_the_file(spawn, tmp_path):
    conf = tmp_path / "server.conf"
    conf.write_text("# my settings\ntimeout 3\nsave 900 1\nsave 300 10\n\n# the end\n")
    proc = spawn(config_file=conf)
    client = proc.client()
    client.config_set("maxmemory", "100mb")
    client.config_set("timeout", "9")
    client.config_set("save", "60 5")
    assert client.execute_command("CONFIG", "REWRITE") == b"OK"
    lines = conf.read_text().splitlines()
    # Comments and order are kept; changed values replace their line; new ones are appended.
    assert lines[0] == "# my settings"
    assert lines[1] == "timeout 9"
    assert lines[2] == "save 60 5"
    assert "save 300 10" not in lines
    assert "# the end" in lines
    assert "# Generated by CONFIG REWRITE" in lines
    assert "maxmemory 100mb" in lines
    assert lines.index("maxmemory 100mb") > lines.index("# Generated by CONFIG REWRITE")
    assert not any(line.startswith("maxclients") for line in lines)  # still the default
    client.close()


def test_config_rewrite_result_loads_again(spawn_brook, tmp_path):
    conf = tmp_path / "server.conf"
    conf.write_text("timeout 3\n")
    first = spawn_brook(config_file=conf)
    client = first.client()
    client.config_set("maxmemory-policy", "allkeys-lru")
    client.config_set("notify-keyspace-events", "KEA")
    client.config_set("masterauth", 'with "quotes" and spaces')
    client.execute_command("CONFIG", "REWRITE")
    client.close()
    first.stop()
    second = spawn_brook(config_file=conf)
    client = second.client()
    assert config_value(client, "maxmemory-policy") == "allkeys-lru"
    assert config_value(client, "notify-keyspace-events") == "AKE"
    assert config_value(client, "timeout") == "3"
    client.close()


def test_config_rewrite_reports_write_errors(spawn, tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    conf = folder / "server.conf"
    conf.write_text("timeout 3\n")
    client = spawn(config_file=conf).client()
    shutil.rmtree(folder)
    with pytest.raises(
        redis.ResponseError, match="^Rewriting config file: No such file or directory$"
    ):
        client.execute_command("CONFIG", "REWRITE")
    client.close()


# ---------------------------------------------------------------------------------------------
# Start-up: files, flags, errors
# ---------------------------------------------------------------------------------------------


def test_file_then_flags_later_wins(spawn, tmp_path):
    conf = tmp_path / "server.conf"
    conf.write_text('timeout 3\nsave 900 1\nsave 300 10\nmaxmemory-policy "allkeys-lfu"\n')
    proc = spawn("--timeout", "4", config_file=conf)
    client = proc.client()
    assert config_value(client, "timeout") == "4"
    assert config_value(client, "save") == "900 1 300 10"
    assert config_value(client, "maxmemory-policy") == "allkeys-lfu"
    assert client.info("server")["config_file"] == str(conf)
    client.close()


def test_flag_with_several_values(spawn):
    proc = spawn("--save", "900", "1", "300", "10", "--maxmemory", "10mb")
    client = proc.client()
    assert config_value(client, "save") == "900 1 300 10"
    assert config_value(client, "maxmemory") == "10485760"
    client.close()


def test_include_directive(spawn_brook, tmp_path):
    (tmp_path / "extra.conf").write_text("timeout 11\n")
    conf = tmp_path / "server.conf"
    conf.write_text(f"include {tmp_path / 'extra.conf'}\nmaxmemory 1mb\n")
    client = spawn_brook(config_file=conf).client()
    assert config_value(client, "timeout") == "11"
    assert config_value(client, "maxmemory") == "1048576"
    client.close()


def _fatal_block(stderr: str) -> list[str]:
    """The lines of the FATAL CONFIG FILE ERROR block, without the version in its title."""
    lines = stderr.strip().splitlines()
    start = next(i for i, line in enumerate(lines) if "FATAL CONFIG FILE ERROR" in line)
    title = re.sub(r"\(.*\)", "(version)", lines[start])
    return [title, *lines[start + 1 : start + 4]]


@pytest.mark.parametrize("kind", ["brook", "redis"])
@pytest.mark.parametrize(
    ("args", "block"),
    [
        (["--port", "0", "--foo", "bar"],
         ["Reading the configuration file, at line 3", ">>> 'foo \"bar\"'",
          "Bad directive or wrong number of arguments"]),
        (["--port", "abc"],
         ["Reading the configuration file, at line 2", ">>> 'port \"abc\"'",
          "argument couldn't be parsed into an integer"]),
        (["--maxclients", "0"],
         ["Reading the configuration file, at line 2", ">>> 'maxclients \"0\"'",
          "argument must be between 1 and 4294967295 inclusive"]),
        (["--timeout", "1", "2"],
         ["Reading the configuration file, at line 2", ">>> 'timeout \"1\" \"2\"'",
          "wrong number of arguments"]),
        (["--port"],
         ["Reading the configuration file, at line 2", ">>> 'port'",
          "wrong number of arguments"]),
    ],
)
def test_bad_flags_are_fatal(kind, args, block, tmp_path):
    result = run_server(kind, tmp_path, *args)
    assert result.returncode == 1
    assert _fatal_block(result.stderr) == ["*** FATAL CONFIG FILE ERROR (version) ***", *block]


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_bad_config_file_lines_are_fatal(kind, tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("port 0\nfoo bar\n")
    result = run_server(kind, tmp_path, str(conf))
    assert result.returncode == 1
    assert _fatal_block(result.stderr)[1:] == [
        "Reading the configuration file, at line 2", ">>> 'foo bar'",
        "Bad directive or wrong number of arguments",
    ]
    conf.write_text('port "0\n')
    result = run_server(kind, tmp_path, str(conf))
    assert result.returncode == 1
    assert _fatal_block(result.stderr)[1:] == [
        "Reading the configuration file, at line 1", ">>> 'port \"0'",
        "Unbalanced quotes in configuration line",
    ]


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_missing_config_file(kind, tmp_path):
    result = run_server(kind, tmp_path, str(tmp_path / "nope.conf"))
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert f"Fatal error, can't open config file '{tmp_path / 'nope.conf'}': No such file or directory" in output


def test_version_and_help(tmp_path):
    result = run_server("brook", tmp_path, "--version")
    assert result.returncode == 0 and "v=" in result.stdout
    result = run_server("brook", tmp_path, "--help")
    assert result.returncode == 0 and "Usage" in result.stdout


# ---------------------------------------------------------------------------------------------
# Logging and process lifecycle
# ---------------------------------------------------------------------------------------------

LOG_LINE = re.compile(r"^\d+:[MC] \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2}\.\d{3} [.\-*#] \S")


def test_log_lines_and_startup_line(spawn_brook):
    proc = spawn_brook()
    log = proc.log().splitlines()
    assert log and all(LOG_LINE.match(line) for line in log), log
    pid = proc.process.pid
    assert any(f"pid={pid}" in line and "version=" in line for line in log)
    assert any(f"port={proc.port}" in line for line in log)
    assert any("Ready to accept connections" in line for line in log)


def test_loglevel_filters_lines(spawn_brook):
    proc = spawn_brook("--loglevel", "warning")
    client = proc.client()
    client.execute_command("DEBUG", "LOG", "a warning line")
    client.close()
    log = proc.log()
    assert "Ready to accept connections" not in log
    assert "DEBUG LOG: a warning line" in log


def test_loglevel_changes_live(spawn_brook):
    proc = spawn_brook()
    client = proc.client()
    client.config_set("loglevel", "nothing")
    client.execute_command("DEBUG", "LOG", "hidden")
    client.config_set("loglevel", "notice")
    client.execute_command("DEBUG", "LOG", "shown")
    client.close()
    log = proc.log()
    assert "DEBUG LOG: hidden" not in log and "DEBUG LOG: shown" in log


def test_logfile_and_pidfile(spawn_brook, tmp_path):
    logfile, pidfile = tmp_path / "server.log", tmp_path / "server.pid"
    proc = spawn_brook("--logfile", str(logfile), "--pidfile", str(pidfile))
    assert pidfile.read_text().strip() == str(proc.process.pid)
    assert "Ready to accept connections" in logfile.read_text()
    proc.process.send_signal(signal.SIGTERM)
    assert wait_exit(proc) == 0
    assert not pidfile.exists()
    assert "bye bye" in logfile.read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_shut_down_cleanly(spawn, sig):
    proc = spawn()
    client = proc.client()
    client.set("k", "v")
    proc.process.send_signal(sig)
    assert wait_exit(proc) == 0
    name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
    assert f"Received {name} scheduling shutdown..." in proc.log()
    client.close()


def test_daemonize(tmp_path):
    port = free_port()
    pidfile = tmp_path / "daemon.pid"
    result = run_server(
        "brook", tmp_path, "--port", str(port), "--daemonize", "yes", "--pidfile", str(pidfile),
        "--logfile", str(tmp_path / "daemon.log"),
    )
    assert result.returncode == 0
    deadline = time.monotonic() + 10
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    client = redis.Redis(port=port, socket_timeout=5)
    assert client.ping()
    pid = int(pidfile.read_text())
    assert client.info("server")["process_id"] == pid
    client.shutdown(nosave=True)  # redis-py checks that the connection ends without a reply
    deadline = time.monotonic() + 10
    while pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pidfile.exists()


def test_unix_socket(spawn_brook, tmp_path):
    path = tmp_path / "brook.sock"
    spawn_brook("--unixsocket", str(path), "--unixsocketperm", "700")
    assert (path.stat().st_mode & 0o777) == 0o700
    client = redis.Redis(unix_socket_path=str(path), socket_timeout=5)
    assert client.ping()
    assert "U" in client.client_info()["flags"]
    client.close()
