"""EVAL, EVALSHA, SCRIPT, FUNCTION and FCALL, checked against real Redis (the ``server``
fixture runs each test on both): replies, conversions both ways, error texts, the sandbox,
atomicity, read-only scripts, busy scripts and SCRIPT KILL.

Where Brook follows a newer Redis than the parity build, the test says so
(``min_redis``) or leaves the value out."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
import time
from collections.abc import Iterator

import hiredis
import pytest
import redis

from tests.conftest import (
    RawConnection,
    ServerProcess,
    Waiting,
    encode_request,
    parked,
    stats_of,
    whole_error,
)

SHA_RETURN_1 = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"


def error_of(r: redis.Redis, *args: object) -> str:
    with pytest.raises(redis.ResponseError) as caught:
        r.execute_command(*args)
    return str(caught.value)


def raw_eval(raw: RawConnection, script: str, *args: str | int, resp3: bool = False) -> bytes:
    """The exact reply bytes of an EVAL (RESP3 after HELLO 3)."""
    if resp3:
        raw.request(b"HELLO 3\r\n", until=b"\r\n\r\n", timeout=2)
        raw.read(timeout=0.2)
    encoded = [b"EVAL", script.encode(), *(str(a).encode() for a in args)]
    payload = b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in encoded)
    return raw.request(payload, timeout=1)


# ---------------------------------------------------------------------------------------------
# Conversions: Lua to reply
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("script", "reply"), [
    ("return 1", b":1\r\n"),
    ("return 3.99", b":3\r\n"),
    ("return -3.99", b":-3\r\n"),
    ("return 'x'", b"$1\r\nx\r\n"),
    ("return true", b":1\r\n"),
    ("return false", b"$-1\r\n"),
    ("return nil", b"$-1\r\n"),
    ("return {1, 'a', {2}, true, false}", b"*5\r\n:1\r\n$1\r\na\r\n*1\r\n:2\r\n:1\r\n$-1\r\n"),
    ("return {1, 2, nil, 4}", b"*2\r\n:1\r\n:2\r\n"),
    ("return {1, 2, n=3}", b"*2\r\n:1\r\n:2\r\n"),
    ("return {}", b"*0\r\n"),
    ("return {ok='fine'}", b"+fine\r\n"),
    ("return {ok='a\\r\\nb'}", b"+a  b\r\n"),
    ("return {err='My Error'}", b"-My Error\r\n"),
    ("return {err=1}", b"*0\r\n"),
    ("return redis.status_reply('x y')", b"+x y\r\n"),
    ("return redis.error_reply('My Error')", b"-My Error\r\n"),
    ("return redis.error_reply('x')", b"-ERR x\r\n"),
    ("return redis.error_reply('-ERR x')", b"-ERR x\r\n"),
    ("return redis.error_reply(1)", b"-ERR wrong number or type of arguments\r\n"),
    ("return {double=3.5}", b"$3\r\n3.5\r\n"),
    ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ("return {set={a=true}}", b"*1\r\n$1\r\na\r\n"),
    ("return {1.9, -1.9, 2^53, -2^63, 1e300, 0/0}",
     b"*6\r\n:1\r\n:-1\r\n:9007199254740992\r\n:-9223372036854775808\r\n"
     b":-9223372036854775808\r\n:-9223372036854775808\r\n"),
    ("return redis.call('get', 'nokey')", b"$-1\r\n"),
    ("return redis.call('lrange', 'nokey', 0, -1)", b"*0\r\n"),
    ("return redis.call('ping')", b"+PONG\r\n"),
    ("return redis.pcall('nosuch')", b"-ERR Unknown Redis command called from script\r\n"),
    ("redis.call('set', 'k', 'v') return redis.pcall('incr', 'k')",
     b"-ERR value is not an integer or out of range\r\n"),
    ("return redis.call('set', 'k', 'v')", b"+OK\r\n"),
    ("return redis.set_repl(redis.REPL_ALL)", b"$-1\r\n"),
    ("return redis.sha1hex('')", b"$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
    ("return redis.call('echo', 1e20)", b"$5\r\n1e+20\r\n"),
    ("return redis.call('incr', 'n', 1.5)", None),  # arity error: checked below
])
def test_lua_values_become_replies(raw, script, reply) -> None:
    if reply is None:
        pytest.skip("covered by the error tests")
    assert raw_eval(raw, script, 0) == reply


@pytest.mark.parametrize(("script", "reply"), [
    ("return true", b":1\r\n"),  # a RESP2 script's true is 1 for every client
    ("return false", b"_\r\n"),
    ("return {double=3.5}", b",3.5\r\n"),
    ("return {map={a=1}}", b"%1\r\n$1\r\na\r\n:1\r\n"),
    ("return {set={a=true}}", b"~1\r\n$1\r\na\r\n"),
    ("redis.setresp(3) return true", b"#t\r\n"),
    ("redis.setresp(3) return false", b"#f\r\n"),
    ("redis.setresp(3) return redis.call('get', 'nokey')", b"_\r\n"),
    ("return {big_number='123456789012345678901234567890'}",
     b"(123456789012345678901234567890\r\n"),
    ("return {verbatim_string={format='txt', string='hello'}}", b"=9\r\ntxt:hello\r\n"),
])
def test_resp3_replies(raw, script, reply) -> None:
    assert raw_eval(raw, script, 0, resp3=True) == reply


@pytest.mark.parametrize(("script", "reply"), [
    ("redis.setresp(3) return true", b":1\r\n"),
    ("redis.setresp(3) return false", b":0\r\n"),
    ("redis.call('hset', 'h', 'a', '1') redis.setresp(3) return redis.call('hgetall', 'h')",
     b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    ("redis.call('zadd', 'z', '1.5', 'a') redis.setresp(3) return redis.call('zscore', 'z', 'a')",
     b"$3\r\n1.5\r\n"),
    ("redis.setresp(3) local m = redis.call('hgetall', 'nokey') return type(m['map'])",
     b"$5\r\ntable\r\n"),
    ("redis.call('sadd', 's', 'x') redis.setresp(3) local s = redis.call('smembers', 's') "
     "return tostring(s['set']['x'])", b"$4\r\ntrue\r\n"),
    ("redis.call('zadd', 'z', '2', 'a') redis.setresp(3) "
     "return redis.call('zscore', 'z', 'a')['double']", b":2\r\n"),
    ("return {big_number='123'}", b"$3\r\n123\r\n"),
    ("return {verbatim_string={format='txt', string='hello'}}", b"$5\r\nhello\r\n"),
])
def test_resp3_script_replies_to_a_resp2_client(raw, script, reply) -> None:
    assert raw_eval(raw, script, 0) == reply


# ---------------------------------------------------------------------------------------------
# Conversions: reply to Lua
# ---------------------------------------------------------------------------------------------


def test_replies_become_lua_values(r) -> None:
    r.set("s", "v")
    r.rpush("l", "a", "b")
    script = """
        local out = {}
        out[1] = type(redis.call('incr', 'n'))
        out[2] = type(redis.call('get', 's'))
        out[3] = tostring(redis.call('get', 'missing'))
        out[4] = type(redis.call('lrange', 'l', 0, -1))
        out[5] = redis.call('set', 'x', 'y')['ok']
        out[6] = redis.pcall('incr', 's')['err']
        out[7] = tostring(redis.call('hgetall', 'nokey')[1])
        out[8] = #redis.call('lrange', 'l', 0, -1)
        return out
    """
    assert r.eval(script, 0) == [b"number", b"string", b"false", b"table", b"OK",
                                 b"ERR value is not an integer or out of range", b"nil", 2]


def test_keys_and_argv(r) -> None:
    assert r.eval("return {KEYS, ARGV, #KEYS, #ARGV}", 2, "k1", "k2", "a1", "a2", "a3") == [
        [b"k1", b"k2"], [b"a1", b"a2", b"a3"], 2, 3]
    assert r.eval("return {#KEYS, #ARGV}", 0) == [0, 0]


def test_number_arguments_to_commands(r) -> None:
    assert r.eval("return redis.call('echo', 5)", 0) == b"5"
    assert r.eval("return redis.call('echo', -12)", 0) == b"-12"
    assert r.eval("return redis.call('echo', 2^53)", 0) == b"9007199254740992"
    assert r.eval("return redis.call('echo', 1.5)", 0) == b"1.5"


# ---------------------------------------------------------------------------------------------
# Errors and their decoration
# ---------------------------------------------------------------------------------------------


def _sha(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()


@pytest.mark.parametrize(("script", "error"), [
    ("return foo", "user_script:1: Script attempted to access nonexistent global variable "
                   "'foo' script: {sha}, on @user_script:1."),
    ("a = 10", "user_script:1: Attempt to modify a readonly table script: {sha}, "
               "on @user_script:1."),
    ("return redis.call('nosuch')", "Unknown Redis command called from script script: {sha}, "
                                    "on @user_script:1."),
    ("return redis.call('incr')", "Wrong number of args calling Redis command from script "
                                  "script: {sha}, on @user_script:1."),
    ("redis.call('set', 'k', 'v') return redis.call('incr', 'k')",
     "value is not an integer or out of range script: {sha}, on @user_script:1."),
    ("\nerror('boom')", "user_script:2: boom script: {sha}, on @user_script:2."),
    ("error({err='X bad'})", "X bad script: {sha}, on @user_script:1."),
    ("return redis.call('multi')", "This Redis command is not allowed from script script: "
                                   "{sha}, on @user_script:1."),
    ("return redis.call('eval', 'return 1', '0')", "This Redis command is not allowed from "
                                                   "script script: {sha}, on @user_script:1."),
    ("return redis.call({})", "Lua redis lib command arguments must be strings or integers "
                              "script: {sha}, on @user_script:1."),
    ("return redis.call()", "Please specify at least one argument for this redis lib call "
                            "script: {sha}, on @user_script:1."),
    ("return redis.call('set', 'k')", "Wrong number of args calling Redis command from "
                                      "script script: {sha}, on @user_script:1."),
    ("setmetatable(_G, {})", "Attempt to modify a readonly table script: {sha}, "
                             "on @user_script:1."),
    ("rawset(_G, 'x', 1) return x", "Attempt to modify a readonly table script: {sha}, "
                                    "on @user_script:1."),
    ("local g = getmetatable(_G) g.__index = {}", "user_script:1: Attempt to modify a "
                                                  "readonly table script: {sha}, "
                                                  "on @user_script:1."),
    ("redis = function() return 1 end", "user_script:1: Attempt to modify a readonly table "
                                        "script: {sha}, on @user_script:1."),
    ("redis.call = function() return 1 end", "user_script:1: Attempt to modify a readonly "
                                             "table script: {sha}, on @user_script:1."),
    ("_G = {}", "user_script:1: Attempt to modify a readonly table script: {sha}, "
                "on @user_script:1."),
    ("string.rep = nil", "user_script:1: Attempt to modify a readonly table script: {sha}, "
                         "on @user_script:1."),
    ("loadfile('x')", "user_script:1: Script attempted to access nonexistent global variable "
                      "'loadfile' script: {sha}, on @user_script:1."),
    ("dofile('x')", "user_script:1: Script attempted to access nonexistent global variable "
                    "'dofile' script: {sha}, on @user_script:1."),
    ("print('x')", "user_script:1: Script attempted to access nonexistent global variable "
                   "'print' script: {sha}, on @user_script:1."),
    ("return type(debug)", "user_script:1: Script attempted to access nonexistent global "
                           "variable 'debug' script: {sha}, on @user_script:1."),
    ("return type(io)", "user_script:1: Script attempted to access nonexistent global "
                        "variable 'io' script: {sha}, on @user_script:1."),
    ("return 'x' .. nil", "user_script:1: attempt to concatenate a nil value script: {sha}, "
                          "on @user_script:1."),
    ("return redis.setresp(4)", "RESP version must be 2 or 3. script: {sha}, "
                                "on @user_script:1."),
    ("return redis.log()", "redis.log() requires two arguments or more. script: {sha}, "
                           "on @user_script:1."),
    ("return redis.log('x', 'y')", "First argument must be a number (log level). "
                                   "script: {sha}, on @user_script:1."),
    ("return redis.sha1hex()", "wrong number of arguments script: {sha}, on @user_script:1."),
    ("return loadstring('y = 2')()", '[string "y = 2"]:1: Attempt to modify a readonly table '
                                     "script: {sha}, on y = 2:1."),
    ("return cjson.encode(function() end)", "user_script:1: Cannot serialise function: type "
                                            "not supported script: {sha}, on @user_script:1."),
    ("return bit.band('x')", "user_script:1: bad argument #1 to 'band' (number expected, got "
                             "string) script: {sha}, on @user_script:1."),
    ("return math.random(0)", "user_script:1: bad argument #1 to 'random' (interval is empty) "
                              "script: {sha}, on @user_script:1."),
])
def test_script_errors(r, script, error) -> None:
    assert error_of(r, "EVAL", script, 0) == error.format(sha=_sha(script))


def test_compile_error(r) -> None:
    assert error_of(r, "EVAL", "return 1 +", 0) == (
        "Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'")


@pytest.mark.parametrize(("args", "error"), [
    (("EVAL", "return 1", "x"), "value is not an integer or out of range"),
    (("EVAL", "return 1", 2, "k"), "Number of keys can't be greater than number of args"),
    (("EVAL", "return 1", -1), "Number of keys can't be negative"),
    (("EVALSHA", "abc", 0), "No matching script. Please use EVAL."),
    (("EVALSHA", "a" * 40, 0), "No matching script. Please use EVAL."),
    (("EVALSHA", "abc", "x"), "No matching script. Please use EVAL."),
    (("SCRIPT", "FLUSH", "bad"), "SCRIPT FLUSH only support SYNC|ASYNC option"),
    (("SCRIPT", "KILL"), "NOTBUSY No scripts in execution right now."),
    (("FUNCTION", "KILL"), "NOTBUSY No scripts in execution right now."),
    (("EVAL", "#!lua flags=bad\nreturn 1", 0), "Unexpected flag in script shebang: bad"),
    (("EVAL", "#!lua foo=bar\nreturn 1", 0), "Unknown lua shebang option: foo=bar"),
    (("EVAL", "#!nolua\nreturn 1", 0), "Unexpected engine in script shebang: #!nolua"),
    (("EVAL", "#!lua", 0), "Invalid script shebang"),
])
def test_argument_errors(r, args, error) -> None:
    assert error_of(r, *args) == error


def test_pcall_catches_redis_errors_as_strings(r) -> None:
    assert r.eval("local ok, e = pcall(function() redis.call('nosuch') end) return e", 0) == (
        b"ERR Unknown Redis command called from script")
    assert r.eval("local ok, e = pcall(function() error('x') end) return e", 0) == (
        b"user_script:1: x")
    assert r.eval("local ok, e = pcall(function() return foo end) "
                  "return {tostring(ok), e}", 0) == [
        b"false", b"user_script:1: Script attempted to access nonexistent global variable 'foo'"]
    assert r.eval("return {pcall(function() error({err='x'}) end)}", 0) == [None, b"x"]


# ---------------------------------------------------------------------------------------------
# The script cache
# ---------------------------------------------------------------------------------------------


def test_script_load_exists_flush_and_evalsha(r) -> None:
    assert r.script_load("return 1") == SHA_RETURN_1
    assert r.script_exists(SHA_RETURN_1, SHA_RETURN_1.upper(), "0" * 40) == [True, True, False]
    assert r.evalsha(SHA_RETURN_1, 0) == 1
    assert r.evalsha(SHA_RETURN_1.upper(), 0) == 1
    assert r.script_flush() is True
    assert r.script_exists(SHA_RETURN_1) == [False]
    assert r.eval("return 1", 0) == 1  # EVAL caches the script too
    assert r.script_exists(SHA_RETURN_1) == [True]
    assert r.execute_command("SCRIPT", "FLUSH", "ASYNC") == b"OK"
    assert r.execute_command("SCRIPT", "FLUSH", "SYNC") == b"OK"
    with pytest.raises(redis.exceptions.NoScriptError):
        r.evalsha(SHA_RETURN_1, 0)


def test_script_load_compile_error(r) -> None:
    assert error_of(r, "SCRIPT", "LOAD", "return +") == (
        "Error compiling script (new function): user_script:1: unexpected symbol near '+'")


def test_redis_py_script_object_falls_back_on_noscript(r) -> None:
    incr = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert incr(keys=["n"], args=[5]) == 5
    r.script_flush()
    assert incr(keys=["n"], args=[2]) == 7


def test_script_help(r) -> None:
    lines = r.execute_command("SCRIPT", "HELP")
    assert lines[0] == b"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"LOAD <script>" in lines


# ---------------------------------------------------------------------------------------------
# Read-only scripts, flags
# ---------------------------------------------------------------------------------------------


def test_eval_ro_refuses_writes(r) -> None:
    r.set("k", "v")
    assert r.eval_ro("return redis.call('get', KEYS[1])", 1, "k") == b"v"
    script = "return redis.call('set', KEYS[1], 'x')"
    assert error_of(r, "EVAL_RO", script, 1, "k") == (
        "Write commands are not allowed from read-only scripts. script: "
        f"{_sha(script)}, on @user_script:1.")
    assert r.get("k") == b"v"
    sha = r.script_load(script)
    assert error_of(r, "EVALSHA_RO", sha, 1, "k").startswith(
        "Write commands are not allowed from read-only scripts.")


def test_shebang_flags(r) -> None:
    no_writes = "#!lua flags=no-writes\nreturn redis.call('set', 'k', 'v')"
    assert error_of(r, "EVAL", no_writes, 0).startswith(
        "Write commands are not allowed from read-only scripts. script:")
    writes = "#!lua\nreturn redis.call('set', 'k', 'v')"
    assert r.eval(writes, 0) == b"OK"
    assert error_of(r, "EVAL_RO", writes, 0) == (
        "Can not execute a script with write flag using *_ro command.")
    reads = "#!lua flags=no-writes,allow-oom\nreturn redis.call('get', 'k')"
    assert r.eval_ro(reads, 0) == b"v"
    # The shebang line is not code, but its line still counts.
    assert error_of(r, "EVAL", "#!lua\nerror('x')", 0).startswith("user_script:2: x")


# ---------------------------------------------------------------------------------------------
# Atomicity, transactions, blocked clients, notifications
# ---------------------------------------------------------------------------------------------


def test_script_inside_multi(raw) -> None:
    reply = raw.request(b"MULTI\r\nEVAL \"return redis.call('incr', 'n')\" 0\r\n"
                        b"EVAL \"return redis.call('incr', 'n')\" 0\r\nEXEC\r\n",
                        until=b":2\r\n")
    assert reply == b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:2\r\n"


def test_a_script_write_fails_a_watch(server: ServerProcess, r) -> None:
    other = server.client()
    r.set("k", "1")
    pipe = r.pipeline()
    pipe.watch("k")
    other.eval("return redis.call('set', 'k', '2')", 0)
    pipe.multi()
    pipe.set("k", "3")
    with pytest.raises(redis.WatchError):
        pipe.execute()
    assert r.get("k") == b"2"
    other.close()


def test_select_inside_a_script_stays_inside(r) -> None:
    assert r.eval("redis.call('select', 1) redis.call('set', 'db1', 'v') "
                  "return redis.call('get', 'db1')", 0) == b"v"
    assert r.get("db1") is None
    r.select(1)
    assert r.get("db1") == b"v"
    r.select(0)


def test_blocked_client_is_served_after_the_script(server: ServerProcess, r) -> None:
    waiter = Waiting(server, False)
    waiter.send("BLPOP", "q", 0)
    parked(r, 1)
    assert r.eval("redis.call('rpush', 'q', 'a') redis.call('rpush', 'q', 'b') "
                  "return redis.call('llen', 'q')", 0) == 2
    assert waiter.reply() == [b"q", b"a"]
    assert r.lrange("q", 0, -1) == [b"b"]
    waiter.close()


@pytest.mark.min_redis(7, 4)
def test_blocking_commands_inside_scripts_do_not_block(r) -> None:
    assert r.eval("return redis.call('blpop', 'l', 0)", 0) is None
    assert r.eval("return redis.call('bzpopmin', 'z', 0)", 0) is None
    assert r.eval("return redis.call('xread', 'block', 0, 'streams', 's', '$')", 0) is None
    r.rpush("l", "a")
    assert r.eval("return redis.call('blpop', 'l', 0)", 0) == [b"l", b"a"]


def test_keyspace_notifications_of_script_writes(server: ServerProcess, r) -> None:
    r.config_set("notify-keyspace-events", "KEA")
    try:
        pubsub = r.pubsub()
        pubsub.psubscribe("__keyevent@0__:*")
        assert pubsub.get_message(timeout=2)["type"] == "psubscribe"
        r.eval("redis.call('set', 'a', '1') redis.call('lpush', 'l', 'x')", 0)
        events = []
        for _ in range(2):
            message = pubsub.get_message(timeout=2)
            events.append((message["channel"], message["data"]))
        assert events == [(b"__keyevent@0__:set", b"a"), (b"__keyevent@0__:lpush", b"l")]
        pubsub.close()
    finally:
        r.config_set("notify-keyspace-events", "")


def test_monitor_shows_the_script_then_its_commands(server: ServerProcess, r) -> None:
    monitor = Waiting(server, False)
    monitor.call("MONITOR")
    r.eval("return redis.call('set', 'k', 'v')", 0)
    lines: list[bytes] = []
    deadline = time.monotonic() + 5
    while len(lines) < 2 and time.monotonic() < deadline:
        line = monitor.reply()
        if lines or b'"EVAL"' in line:  # type: ignore[operator]
            lines.append(line)  # type: ignore[arg-type]
    assert b'"EVAL"' in lines[0] and b"lua]" not in lines[0]
    assert lines[1].endswith(b'[0 lua] "set" "k" "v"')
    monitor.close()


# ---------------------------------------------------------------------------------------------
# Busy scripts: -BUSY, SCRIPT KILL, FUNCTION KILL, UNKILLABLE
# ---------------------------------------------------------------------------------------------


class Background:
    """A command running on its own connection in a thread (a script that takes a while)."""

    def __init__(self, server: ServerProcess, *args: object) -> None:
        self.client = redis.Redis(host=server.host, port=server.port, socket_timeout=20)
        self.result: object = None
        self.thread = threading.Thread(target=self._run, args=args)
        self.thread.start()

    def _run(self, *args: object) -> None:
        try:
            self.result = self.client.execute_command(*args)
        except redis.ResponseError as err:
            self.result = err

    def join(self) -> object:
        self.thread.join(20)
        assert not self.thread.is_alive()
        self.client.close()
        return self.result

    def stop(self, server: ServerProcess) -> None:
        """However the test went, the script ends (a failed assertion must not leave the
        server busy for the next tests)."""
        if not self.thread.is_alive():
            return
        killer = redis.Redis(host=server.host, port=server.port, socket_timeout=5)
        deadline = time.monotonic() + 20
        while self.thread.is_alive() and time.monotonic() < deadline:
            for kill in ("SCRIPT", "FUNCTION"):
                with contextlib.suppress(redis.RedisError):
                    killer.execute_command(kill, "KILL")
            self.thread.join(0.2)
        killer.close()


@pytest.fixture
def background(server: ServerProcess):  # type: ignore[no-untyped-def]
    started: list[Background] = []

    def start(*args: object) -> Background:
        running = Background(server, *args)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop(server)


def wait_busy(r: redis.Redis) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            r.ping()
        except redis.exceptions.BusyLoadingError as err:
            return str(err)
        except redis.ResponseError as err:
            return str(err)
        time.sleep(0.02)
    raise AssertionError("the server never got busy")


def test_busy_script_is_killed_by_script_kill(background, r) -> None:
    r.config_set("busy-reply-threshold", 100)
    running = background("EVAL", "local i = 0 while true do i = i + 1 end", 0)
    assert wait_busy(r) == ("BUSY Redis is busy running a script. You can only call SCRIPT "
                            "KILL or SHUTDOWN NOSAVE.")
    assert error_of(r, "FUNCTION", "KILL") == (
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
    assert error_of(r, "GET", "k") == (
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
    assert r.script_kill() is True
    result = running.join()
    assert isinstance(result, redis.ResponseError)
    assert str(result).startswith("Script killed by user with SCRIPT KILL...")
    assert r.ping() is True
    assert error_of(r, "SCRIPT", "KILL") == "NOTBUSY No scripts in execution right now."


def test_a_connection_made_while_a_script_is_busy_is_served(background, r,
                                                           server: ServerProcess) -> None:
    """An operator's redis-cli is a new connection: it is accepted while the script runs,
    gets -BUSY, may SCRIPT KILL, and stays as it was set up once the script has ended."""
    r.config_set("busy-reply-threshold", 100)
    running = background("EVAL", "local i = 0 while true do i = i + 1 end", 0)
    wait_busy(r)
    late = Waiting(server)
    hello = late.call("HELLO", "3")  # allow-busy: the protocol is chosen while it runs
    assert isinstance(hello, dict) and hello[b"proto"] == 3
    late.send("PING")
    late.send("GET", "k")
    assert str(late.reply()).startswith("BUSY Redis is busy running a script.")
    assert str(late.reply()).startswith("BUSY Redis is busy running a script.")
    leaving = Waiting(server)
    assert leaving.call("QUIT") == b"OK"
    with pytest.raises(ConnectionError):
        leaving.reply()
    leaving.close()
    assert late.call("SCRIPT", "KILL") == b"OK"
    assert str(running.join()).startswith("Script killed by user with SCRIPT KILL...")
    assert late.call("CLIENT", "SETNAME", "late") == b"OK"
    late.send("HSET", "h", "f", "v")
    late.send("HGETALL", "h")
    assert late.reply() == 1
    assert late.reply() == {b"f": b"v"}  # still RESP3
    assert any(entry["name"] == "late" for entry in r.client_list())
    late.close()


def test_pcall_cannot_swallow_script_kill(background, r) -> None:
    r.config_set("busy-reply-threshold", 100)
    running = background("EVAL", "while true do pcall(function() "
                                         "local i = 0 while true do i = i + 1 end end) end", 0)
    wait_busy(r)
    assert r.script_kill() is True
    assert isinstance(running.join(), redis.ResponseError)
    assert r.ping() is True


def test_a_script_that_wrote_cannot_be_killed(background, r) -> None:
    r.config_set("busy-reply-threshold", 100)
    # Long enough to be seen busy (a script's TIME is frozen at its start since Redis 7.4,
    # so it counts instead of watching the clock).
    script = ("redis.call('set', 'x', '2') local i = 0 while i < 5e7 do i = i + 1 end "
              "return 'done'")
    running = background("EVAL", script, 0)
    wait_busy(r)
    assert error_of(r, "SCRIPT", "KILL").startswith(
        "UNKILLABLE Sorry the script already executed write commands against the dataset.")
    assert running.join() == b"done"
    assert r.get("x") == b"2"


def test_busy_function_is_killed_by_function_kill(background, r) -> None:
    r.function_load("#!lua name=spin\nredis.register_function{function_name='spin', "
                    "callback=function() while true do end end, flags={'no-writes'}}")
    r.config_set("busy-reply-threshold", 100)
    running = background("FCALL", "spin", 0)
    assert wait_busy(r) == ("BUSY Redis is busy running a script. You can only call FUNCTION "
                            "KILL or SHUTDOWN NOSAVE.")
    assert error_of(r, "SCRIPT", "KILL") == (
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
        "NOSAVE.")
    stats = r.function_stats()
    assert stats[1][1] == b"spin"
    assert r.function_kill() == b"OK"
    assert str(running.join()).startswith("Script killed by user with SCRIPT KILL...")


# ---------------------------------------------------------------------------------------------
# FUNCTION and FCALL
# ---------------------------------------------------------------------------------------------

LIB = """#!lua name=mylib
local function hset(keys, args)
  return redis.call('hset', keys[1], args[1], args[2])
end
redis.register_function('my_hset', hset)
redis.register_function{function_name='my_get', callback=function(keys)
  return redis.call('hget', keys[1], 'f') end, flags={'no-writes'}, description='reads'}
"""


def test_function_load_and_fcall(r) -> None:
    assert r.function_load(LIB) == b"mylib"
    assert r.fcall("my_hset", 1, "h", "f", "v") == 1
    assert r.fcall("my_get", 1, "h") == b"v"
    assert r.fcall_ro("my_get", 1, "h") == b"v"
    assert error_of(r, "FCALL_RO", "my_hset", 1, "h", "f", "v") == (
        "Can not execute a script with write flag using *_ro command.")
    assert error_of(r, "FCALL", "nosuch", 0) == "Function not found"
    assert error_of(r, "FCALL", "my_get", "x") == "Bad number of keys provided"
    assert error_of(r, "FCALL", "my_get", 3, "a") == (
        "Number of keys can't be greater than number of args")
    assert error_of(r, "FCALL", "my_get", -1) == "Number of keys can't be negative"


def test_function_list_stats_delete_flush(r) -> None:
    r.function_load(LIB)
    listed = r.function_list(withcode=True)
    assert len(listed) == 1
    entry = dict(zip(listed[0][::2], listed[0][1::2], strict=True))
    assert entry[b"library_name"] == b"mylib"
    assert entry[b"engine"] == b"LUA"
    assert entry[b"library_code"] == LIB.encode()
    functions = sorted((dict(zip(f[::2], f[1::2], strict=True)) for f in entry[b"functions"]),
                       key=lambda f: f[b"name"])
    assert functions == [
        {b"name": b"my_get", b"description": b"reads", b"flags": [b"no-writes"]},
        {b"name": b"my_hset", b"description": None, b"flags": []},
    ]
    assert r.function_list(library="my*") == r.function_list()
    assert r.function_list(library="other*") == []
    assert r.function_stats() == [b"running_script", None, b"engines",
                                  [b"LUA", [b"libraries_count", 1, b"functions_count", 2]]]
    assert error_of(r, "FUNCTION", "DELETE", "nosuch") == "Library not found"
    assert r.function_delete("mylib") is True
    assert r.function_list() == []
    r.function_load(LIB)
    assert r.function_flush() is True
    assert error_of(r, "FCALL", "my_get", 0) == "Function not found"


@pytest.mark.parametrize(("code", "error"), [
    ("return 1", "Missing library metadata"),
    ("#!lua", "Invalid library metadata"),
    ("#!lua name=a name=b\n", "Invalid metadata value, name argument was given multiple times"),
    ("#!lua foo=bar\n", "Invalid metadata value given: foo=bar"),
    ("#!lua\n", "Library name was not given"),
    ("#!nolua name=x\n", "Engine 'nolua' not found"),
    ("#!lua name=lib3\nerror('boom')", "Error registering functions: ERR user_function:2: Script "
                                       "attempted to access nonexistent global variable 'error'"),
    ("#!lua name=lib3\nredis.call('ping')", "Error registering functions: ERR user_function:2: "
                                            "Script attempted to access nonexistent global "
                                            "variable 'call'"),
    ("#!lua name=lib3\nredis.register_function('f-x', function() return 1 end)",
     "Error registering functions: ERR Library names can only contain letters, numbers, or "
     "underscores(_) and must be at least one character long"),
    ("#!lua name=lib3\nlocal x = 1", "No functions registered"),
    ("#!lua name=lib3\nredis.register_function{function_name='g', callback=function() "
     "return 2 end, flags={'no-writes','bad'}}", "Error registering functions: ERR unknown flag "
                                                  "given"),
    ("#!lua name=lib3\nredis.register_function('f', function() end)\n"
     "redis.register_function('f', function() end)",
     "Error registering functions: ERR Function already exists in the library"),
    ("#!lua name=lib3\nredis.register_function('f')",
     "Error registering functions: ERR calling redis.register_function with a single argument "
     "is only applicable to Lua table (representing named arguments)."),
    ("#!lua name=lib3\nredis.register_function('f', 1, 2)",
     "Error registering functions: ERR wrong number of arguments to redis.register_function"),
    ("#!lua name=lib3\nredis.register_function({}, function() end)",
     "Error registering functions: ERR first argument to redis.register_function must be a "
     "string"),
    ("#!lua name=lib4\nreturn 1 +", "Error compiling function: user_function:2: unexpected "
                                    "symbol near '<eof>'"),
    ("#!lua name=lib5\nredis.register_function('f', function() end) while true do end",
     "Error registering functions: ERR FUNCTION LOAD timeout"),
])
def test_function_load_errors(r, code, error) -> None:
    assert error_of(r, "FUNCTION", "LOAD", code) == error
    assert r.function_list() == []


def test_function_load_collisions_and_replace(r) -> None:
    r.function_load("#!lua name=lib1\nredis.register_function('f1', function() return 1 end)")
    assert error_of(r, "FUNCTION", "LOAD",
                    "#!lua name=lib1\nredis.register_function('f1', function() return 2 end)"
                    ) == "Library 'lib1' already exists"
    assert error_of(r, "FUNCTION", "LOAD",
                    "#!lua name=lib2\nredis.register_function('f1', function() return 2 end)"
                    ) == "Function f1 already exists"
    assert r.function_load("#!lua name=lib1\nredis.register_function('f1', function() "
                           "return 2 end)", replace=True) == b"lib1"
    assert r.fcall("f1", 0) == 2
    assert error_of(r, "FUNCTION", "LOAD", "BAD", "code") == "Unknown option given: BAD"


def test_function_errors_name_the_function(r) -> None:
    r.function_load("#!lua name=lib6\n"
                    "redis.register_function('e', function(keys) return redis.call('nosuch') end)\n"
                    "redis.register_function('e2', function(keys) error('x') end)")
    assert error_of(r, "FCALL", "e", 0) == (
        "Unknown Redis command called from script script: e, on @user_function:2.")
    assert error_of(r, "FCALL", "e2", 0) == "user_function:3: x script: e2, on @user_function:3."


def test_function_gets_keys_and_args_not_globals(r) -> None:
    r.function_load("#!lua name=lib8\nredis.register_function('f8', function(keys, args) "
                    "return {keys, args} end)\nredis.register_function('g8', function() "
                    "return KEYS end)")
    assert r.fcall("f8", 2, "a", "b", "c", "d") == [[b"a", b"b"], [b"c", b"d"]]
    assert error_of(r, "FCALL", "g8", 0).startswith(
        "user_function:3: Script attempted to access nonexistent global variable 'KEYS'")


def test_function_dump_and_restore(server: ServerProcess, r) -> None:
    r.function_load(LIB)
    payload = r.function_dump()
    assert error_of(r, "FUNCTION", "RESTORE", payload) == "Library mylib already exists"
    assert r.function_restore(payload, "REPLACE") is True
    r.function_flush()
    assert r.function_restore(payload) is True
    assert r.fcall("my_hset", 1, "h", "f", "v") == 1
    assert r.function_restore(payload, "FLUSH") is True
    assert error_of(r, "FUNCTION", "RESTORE", payload, "BAD") == (
        "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
    assert error_of(r, "FUNCTION", "RESTORE", payload[:-1] + b"x") == (
        "DUMP payload version or checksum are wrong")
    assert error_of(r, "FUNCTION", "RESTORE", payload, "FLUSH", "x").startswith(
        "unknown subcommand or wrong number of arguments for 'RESTORE'")


def test_function_dump_moves_between_brook_and_redis(
        brook_process: ServerProcess, redis_process: ServerProcess | None) -> None:
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    brook = brook_process.client()
    real = redis_process.client()
    for source, target in ((brook, real), (real, brook)):
        source.function_flush()
        target.function_flush()
        source.function_load(LIB)
        assert target.function_restore(source.function_dump()) is True
        assert target.fcall("my_hset", 1, "h", "f", "v") in (0, 1)
        assert target.fcall_ro("my_get", 1, "h") == b"v"
        source.function_flush()
        target.function_flush()
        target.delete("h")
    brook.close()
    real.close()


def test_function_help(r) -> None:
    lines = r.execute_command("FUNCTION", "HELP")
    assert lines[0] == b"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"


def test_command_getkeys_of_scripts(r) -> None:
    raw = RawConnection(r.connection_pool.connection_kwargs["port"])
    assert raw.call("COMMAND", "GETKEYS", "EVAL", "return 1", 2, "a", "b", "c") == [b"a", b"b"]
    assert raw.call("COMMAND", "GETKEYS", "FCALL", "f", 1, "a", "b") == [b"a"]
    raw.close()


# ---------------------------------------------------------------------------------------------
# Libraries Redis loads and math.random
# ---------------------------------------------------------------------------------------------


def test_math_random_is_redis_sequence(r) -> None:
    values = r.eval("math.randomseed(7) local t = {} for i = 1, 5 do t[i] = math.random(1000) "
                    "end return t", 0)
    again = r.eval("math.randomseed(7) local t = {} for i = 1, 5 do t[i] = math.random(1000) "
                   "end return t", 0)
    assert values == again
    assert r.eval("math.randomseed(0) return math.random(1000000)", 0) == r.eval(
        "math.randomseed(0) return math.random(1000000)", 0)
    assert r.eval("return type(math.random())", 0) == b"number"
    assert r.eval("math.randomseed(3) return math.random(5, 6)", 0) in (5, 6)


@pytest.mark.min_redis(8, 0)
def test_os_clock_is_the_only_os_function(r) -> None:
    assert r.eval("return type(os.clock)", 0) == b"function"
    assert r.eval("return tostring(os.time)", 0) == b"nil"


# ---------------------------------------------------------------------------------------------
# What Redis's own suite checks (tests/unit/scripting.tcl, functions.tcl) that is not above
# ---------------------------------------------------------------------------------------------


def test_error_replies_of_scripts_count_in_errorstats(r) -> None:
    r.config_resetstat()
    with pytest.raises(redis.ResponseError):
        r.eval("return redis.error_reply('MY_ERR_CODE custom msg')", 0)
    with pytest.raises(redis.ResponseError):
        r.eval("return {err='OTHER_CODE msg'}", 0)
    stats = r.info("errorstats")
    assert stats["errorstat_MY_ERR_CODE"]["count"] == 1
    assert stats["errorstat_OTHER_CODE"]["count"] == 1


@pytest.mark.min_redis(7, 4)
def test_a_script_sees_one_instant(r) -> None:
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1)  # DEBUG SLEEP from the script
    try:
        _script_sees_one_instant(r)
    finally:
        r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)


@pytest.mark.min_redis(7, 4)
def test_xadd_and_time_in_a_script_use_its_start(r) -> None:
    """XADD's ``*`` and TIME take the script's frozen time (Redis's commandTimeSnapshot),
    which is the time it started, not an older one."""
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1)
    try:
        before = int(time.time() * 1000)
        first, slept, second, entry = r.eval("""
            local first = redis.call('time')
            redis.call('debug', 'sleep', 0.02)
            local second = redis.call('time')
            return {first, tostring(first[1] * 1000 + math.floor(first[2] / 1000)), second,
                    redis.call('xadd', KEYS[1], '*', 'f', 'v')}""", 1, "sx")
        after = int(time.time() * 1000)
    finally:
        r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)
    assert first == second
    started = int(slept)
    assert before - 5 <= started <= after + 5
    assert entry == b"%d-0" % started


def test_xadd_in_a_script_takes_the_time_of_now(r) -> None:
    """Not a time the server took long before (the stream ID would lie in the past)."""
    time.sleep(0.2)
    before = int(time.time() * 1000)
    entry = r.eval("return redis.call('XADD', KEYS[1], '*', 'f', 'v')", 1, "sx")
    after = int(time.time() * 1000)
    assert before - 5 <= int(entry.split(b"-")[0]) <= after + 5


def _script_sees_one_instant(r: redis.Redis) -> None:
    assert r.eval("""
        redis.call('set', 'key', 'value', 'PX', '1')
        redis.call('debug', 'sleep', 0.01)
        return redis.call('exists', 'key')""", 1, "key") == 1
    assert r.exists("key") == 0
    first, second = r.eval("local a = redis.call('time') redis.call('debug', 'sleep', 0.01) "
                           "local b = redis.call('time') return {a[1] .. a[2], b[1] .. b[2]}", 0)
    assert first == second


def test_sort_by_a_constant_is_ordered_for_scripts(r) -> None:
    r.sadd("myset", *["a", "b", "c", "d", "e", "f", "g", "h", "i", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "z", "aa", "aaa", "azz"])
    assert r.eval("return redis.call('sort', KEYS[1], 'by', '_')", 1, "myset") == [
        x.encode() for x in ["a", "aa", "aaa", "azz", "b", "c", "d", "e", "f", "g", "h", "i", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "z"]]


def test_function_names_are_case_insensitive_for_fcall(r) -> None:
    r.function_load("#!lua name=test\nredis.register_function('test', function() return 1 end)")
    assert r.fcall("TEST", 0) == 1
    assert error_of(r, "FUNCTION", "LOAD",
                    "#!lua name=test2\nredis.register_function('TeSt', function() end)") == (
        "Function TeSt already exists")
    assert r.function_load('#!lua name="quoted"\n'
                           "redis.register_function('q', function() return 2 end)") == b"quoted"
    assert error_of(r, "FUNCTION", "LOAD",
                    "#! name=x\nredis.register_function('x', function() end)") == (
        "Engine '' not found")
    assert error_of(r, "FUNCTION", "FLUSH", "SYNC", "extra") == (
        "unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.")


def test_many_arguments_to_redis_call(r) -> None:
    assert r.eval("local a = {} for i = 1, 7999 do a[i] = 1 end "
                  "return redis.call('lpush', KEYS[1], unpack(a))", 1, "l") == 7999
    assert r.eval("return #ARGV", 0, *range(3000)) == 3000


def test_pairs_over_library_tables(r) -> None:
    assert r.eval("local n = 0 for k in pairs(bit) do n = n + 1 end return n", 0) == 12
    assert r.eval("local n = 0 for k, v in pairs(redis) do if k == 'call' then n = 1 end end "
                  "return n", 0) == 1


def test_bytecode_cannot_be_loaded(r) -> None:
    assert r.eval("local f, e = loadstring(string.dump(function() return 1 end), 'x') "
                  "return {tostring(f), e}", 0) == [
        b"nil", b"[string \"x\"]:1: unexpected symbol near 'char(27)'"]


# ---------------------------------------------------------------------------------------------
# A script's flags against the server's state, checked before it starts
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def configured(r: redis.Redis, **settings: object) -> Iterator[None]:
    """CONFIG SET for the block, the old values back after it."""
    names = [name.replace("_", "-") for name in settings]
    saved = {name: r.config_get(name)[name] for name in names}
    try:
        for name, value in zip(names, settings.values(), strict=True):
            r.config_set(name, value)
        yield
    finally:
        for name, value in saved.items():
            r.config_set(name, value)


@contextlib.contextmanager
def stale_replica(r: redis.Redis) -> Iterator[None]:
    """A replica of a master that is not there, serving no stale data."""
    with configured(r, replica_serve_stale_data="no"):
        r.execute_command("REPLICAOF", "127.0.0.1", "1")
        try:
            yield
        finally:
            r.execute_command("REPLICAOF", "NO", "ONE")


def full_error(r: redis.Redis, *args: str | int) -> str:
    """An error reply's whole text, its code included (redis-py drops some codes)."""
    raw = RawConnection(r.connection_pool.connection_kwargs["port"])
    try:
        reply = raw.call(*args)
    finally:
        raw.close()
    assert isinstance(reply, hiredis.ReplyError), reply
    return str(reply)


WRITES_FLAGGED = "#!lua\nreturn redis.call('set', KEYS[1], 1)"
READS_FLAGGED = "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])"


def test_min_replicas_refuse_a_writing_script_before_it_starts(r) -> None:
    r.set("x", "some value")
    with configured(r, min_replicas_to_write=1):
        assert full_error(r, "EVAL", WRITES_FLAGGED, 1, "x") == (
            "NOREPLICAS Not enough good replicas to write.")
        # A script that declares flags is judged by them, even one that only reads.
        assert full_error(r, "EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", 1, "x") == (
            "NOREPLICAS Not enough good replicas to write.")
        assert r.eval(READS_FLAGGED, 1, "x") == b"some value"
        assert r.eval_ro(READS_FLAGGED, 1, "x") == b"some value"
        # Without a shebang, each command of the script is checked as it is called.
        assert r.eval("return redis.call('get', KEYS[1])", 1, "x") == b"some value"
        assert full_error(r, "EVAL", "return redis.call('set', KEYS[1], 1)", 1, "x").startswith(
            "NOREPLICAS Not enough good replicas to write. script: ")
        sha = r.script_load(WRITES_FLAGGED)
        assert full_error(r, "EVALSHA", sha, 1, "x") == (
            "NOREPLICAS Not enough good replicas to write.")
        # The read-only forms of a writing script: refused as writes before anything else.
        assert full_error(r, "EVAL_RO", WRITES_FLAGGED, 1, "x") == (
            "NOREPLICAS Not enough good replicas to write.")
        assert full_error(r, "EVALSHA_RO", sha, 1, "x") == (
            "NOREPLICAS Not enough good replicas to write.")
    assert r.get("x") == b"some value"
    assert r.eval(WRITES_FLAGGED, 1, "x") == b"OK"


def test_min_replicas_refuse_a_writing_function(r) -> None:
    r.function_load(
        "#!lua name=lib\n"
        "redis.register_function('w', function(keys) return redis.call('set', keys[1], 1) end)\n"
        "redis.register_function{function_name='ro', callback=function(keys) "
        "return redis.call('get', keys[1]) end, flags={'no-writes'}}")
    r.set("x", "v")
    with configured(r, min_replicas_to_write=1):
        assert full_error(r, "FCALL", "w", 1, "x") == "NOREPLICAS Not enough good replicas to write."
        assert full_error(r, "FCALL_RO", "w", 1, "x") == (
            "NOREPLICAS Not enough good replicas to write.")
        assert r.fcall("ro", 1, "x") == b"v"
        assert r.fcall_ro("ro", 1, "x") == b"v"
        # In a transaction it is refused when queued, and EXEC aborts.
        pipe = r.pipeline()
        pipe.fcall("w", 1, "x")
        with pytest.raises(redis.ResponseError) as caught:
            pipe.execute()
        assert "error: NOREPLICAS Not enough good replicas to write." in str(caught.value)
    assert r.get("x") == b"v"


def test_min_replicas_set_inside_a_transaction_stop_a_later_script(raw) -> None:
    """The state changed after EXEC was admitted: the script's own start check refuses it."""
    try:
        script = "#!lua\nreturn redis.call('set', 'x', 1)"
        reply = raw.request(
            b"MULTI\r\nCONFIG SET min-replicas-to-write 1\r\n"
            + encode_request("EVAL", script, 0) + b"EXEC\r\n", until=b"write.\r\n")
    finally:
        raw.request(b"CONFIG SET min-replicas-to-write 0\r\n")
    assert reply == (b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n"
                     b"-NOREPLICAS Not enough good replicas to write.\r\n")


def test_oom_refuses_a_writing_script_unless_allow_oom(r) -> None:
    r.set("x", "v")
    with configured(r, maxmemory=1, maxmemory_policy="noeviction"):
        assert full_error(r, "EVAL", WRITES_FLAGGED, 1, "x") == (
            "OOM command not allowed when used memory > 'maxmemory'.")
        assert r.eval("#!lua flags=allow-oom\nreturn redis.call('set', KEYS[1], 2)",
                      1, "x") == b"OK"
        assert r.eval(READS_FLAGGED, 1, "x") == b"2"
        # Without a shebang: the first write of the script is refused.
        assert full_error(r, "EVAL", "return redis.call('set', KEYS[1], 3)", 1, "x").startswith(
            "OOM command not allowed when used memory > 'maxmemory'. script: ")
    assert r.get("x") == b"2"


def test_a_read_only_replica_refuses_writing_scripts(r) -> None:
    r.set("x", "v")
    with configured(r, replica_serve_stale_data="yes"):
        r.execute_command("REPLICAOF", "127.0.0.1", "1")
        try:
            assert full_error(r, "EVAL", WRITES_FLAGGED, 1, "x") == (
                "READONLY You can't write against a read only replica.")
            assert full_error(r, "EVAL_RO", WRITES_FLAGGED, 1, "x") == (
                "READONLY You can't write against a read only replica.")
            assert r.eval(READS_FLAGGED, 1, "x") == b"v"
            script = "return redis.call('set', KEYS[1], 1)"
            assert full_error(r, "EVAL", script, 1, "x") == (
                "READONLY You can't write against a read only replica. script: "
                f"{_sha(script)}, on @user_script:1.")
        finally:
            r.execute_command("REPLICAOF", "NO", "ONE")


def test_a_stale_replica_runs_only_allow_stale_scripts(r) -> None:
    masterdown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
    with stale_replica(r):
        assert full_error(r, "EVAL", "return redis.call('get', KEYS[1])", 1, "x") == masterdown
        assert full_error(r, "EVAL", "#!lua flags=no-writes\nreturn 1", 0) == masterdown
        assert r.eval("#!lua flags=allow-stale,no-writes\nreturn 1", 0) == 1
        # A command that may not run stale, called by an allow-stale script.
        assert full_error(r, "EVAL", "#!lua flags=allow-stale,no-writes\n"
                        "return redis.call('get', 'x')", 0).startswith(
            "ERR Can not execute the command on a stale replica script: ")
        assert r.eval("#!lua flags=allow-stale,no-writes\n"
                      "return redis.call('echo', 'hi')", 0) == b"hi"
        # In a transaction: EXEC may run stale, so the script's own start check refuses it.
        pipe = r.pipeline()
        pipe.eval("return 1", 0)
        pipe.echo("after")
        refused, echoed = pipe.execute(raise_on_error=False)
        assert whole_error(refused) == masterdown
        assert echoed == b"after"


def test_acl_check_cmd_asks_the_acl(server: ServerProcess, r) -> None:
    r.execute_command("ACL", "SETUSER", "bob", "on", "nopass", "+set", "+eval", "~x*")
    bob = server.client(username="bob", password="any")
    try:
        assert bob.eval("return redis.acl_check_cmd('set', 'xx', 1)", 1, "xx") == 1
        r.execute_command("ACL", "LOG", "RESET")  # what the client's handshake was refused
        assert bob.eval("return redis.acl_check_cmd('hset', 'xx', 'f', 1)", 1, "xx") is None
        assert bob.eval("return redis.acl_check_cmd('set', 'yy', 1)", 0) is None
        assert bob.eval("return redis.acl_check_cmd('SET', 'xy', 1)", 0) == 1
        assert error_of(bob, "EVAL", "return redis.acl_check_cmd('invalid-cmd', 'arg')",
                        0).startswith("Invalid command passed to redis.acl_check_cmd()")
        assert error_of(bob, "EVAL", "return redis.acl_check_cmd('config', 'nosuch')",
                        0).startswith("Invalid command passed to redis.acl_check_cmd()")
        assert error_of(bob, "EVAL", "return redis.acl_check_cmd()", 0).startswith(
            "Please specify at least one argument for this redis lib call")
        assert error_of(bob, "EVAL", "return redis.acl_check_cmd('set', {})", 0).startswith(
            "Lua redis lib command arguments must be strings or integers")
        # Asking is no denial: the ACL log stays empty.
        assert r.execute_command("ACL", "LOG") == []
    finally:
        bob.close()
    # The default user may do anything.
    assert r.eval("return redis.acl_check_cmd('hset', 'yy', 'f', 1)", 0) == 1
    assert r.eval("return redis.acl_check_cmd('config', 'get', 'x')", 0) == 1


# ---------------------------------------------------------------------------------------------
# Commandstats and errorstats of scripts (Redis's introspection-2 and info tests)
# ---------------------------------------------------------------------------------------------




def test_commandstats_count_a_script_and_each_command_it_called(r) -> None:
    r.set("mykey", "myval")
    r.config_resetstat()
    r.eval("redis.call('set', KEYS[1], 0) redis.call('expire', KEYS[1], 0) "
           "redis.call('zadd', KEYS[1], 0, 'bar') redis.call('set', KEYS[1], 1)", 1, "mykey")
    assert stats_of(r) == ({"eval": (1, 0, 0), "set": (2, 0, 0), "expire": (1, 0, 0),
                            "zadd": (1, 0, 0)}, {}, 0)


@pytest.mark.parametrize(("script", "commands", "errors"), [
    # A failed call caught by pcall: the command failed, the script did not.
    ("redis.pcall('XGROUP', 'CREATECONSUMER', 's1', 'mygroup', 'consumer') return",
     {"eval": (1, 0, 0), "xgroup|createconsumer": (1, 0, 1)}, {"ERR": 1}),
    # A failed call raised: counted once, the script failed too.
    ("return redis.call('lpush', 'str', 'x')",
     {"eval": (1, 0, 1), "lpush": (1, 0, 1)}, {"WRONGTYPE": 1}),
    ("return redis.pcall('lpush', 'str', 'x')",
     {"eval": (1, 0, 1), "lpush": (1, 0, 1)}, {"WRONGTYPE": 1}),
    # Refused calls: counted when refused, not again when the script fails with them.
    ("return redis.call('incr', 'str', 'x')", {"eval": (1, 0, 1), "incr": (0, 1, 0)},
     {"ERR": 1}),
    ("return redis.call('nosuch')", {"eval": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.pcall('nosuch')", {"eval": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.call('eval', 'return 1', 0)", {"eval": (1, 1, 1)}, {"ERR": 1}),
    # The script's own errors.
    ("return error('x')", {"eval": (1, 0, 1)}, {"ERR": 1}),
    ("return redis.error_reply('MY_CODE x')", {"eval": (1, 0, 1)}, {"MY_CODE": 1}),
    ("return {1, redis.error_reply('MY_CODE x'), redis.pcall('nosuch')}",
     {"eval": (1, 0, 2)}, {"MY_CODE": 1, "ERR": 1}),
])
def test_errorstats_of_scripts(r, script: str, commands: dict, errors: dict) -> None:
    r.set("str", "v")
    r.config_resetstat()
    with contextlib.suppress(redis.ResponseError):
        r.eval(script, 0)
    assert stats_of(r) == (commands, errors, sum(errors.values()))


def test_errorstats_of_a_script_refused_before_it_runs(r) -> None:
    r.config_resetstat()
    with pytest.raises(redis.ResponseError):
        r.execute_command("EVAL", "return 1")  # wrong arity
    with pytest.raises(redis.ResponseError):
        r.evalsha("0" * 40, 0)
    assert stats_of(r) == ({"eval": (0, 1, 0), "evalsha": (1, 0, 1)},
                           {"ERR": 1, "NOSCRIPT": 1}, 2)
    with configured(r, min_replicas_to_write=1):
        r.config_resetstat()
        with pytest.raises(redis.ResponseError):
            r.eval(WRITES_FLAGGED, 1, "x")
        assert stats_of(r) == ({"eval": (0, 1, 0)}, {"NOREPLICAS": 1}, 1)


def test_cluster_from_a_script_answers_as_from_a_socket(r) -> None:
    disabled = "This instance has cluster support disabled"
    assert error_of(r, "CLUSTER", "INFO") == disabled
    assert error_of(r, "CLUSTER", "KEYSLOT", "foo") == disabled
    assert error_of(r, "CLUSTER", "nosuch") == "unknown subcommand 'nosuch'. Try CLUSTER HELP."
    assert error_of(r, "CLUSTER") == "wrong number of arguments for 'cluster' command"
    assert error_of(r, "EVAL", "return redis.call('cluster', 'info')", 0).startswith(
        f"{disabled} script: ")
    assert error_of(r, "EVAL", "return redis.pcall('CLUSTER', 'MYID')", 0) == disabled
    assert error_of(r, "EVAL", "return redis.call('cluster', 'nosuch')", 0).startswith(
        "Unknown Redis command called from script script: ")
    assert error_of(r, "EVAL", "return redis.call('cluster')", 0).startswith(
        "Wrong number of args calling Redis command from script script: ")
    assert error_of(r, "EVAL", "return redis.call('cluster', 'reset')", 0).startswith(
        "This Redis command is not allowed from script script: ")
    # Not in cluster mode, a no-cluster script runs.
    assert r.eval("#!lua flags=no-cluster\nreturn 1", 0) == 1


@pytest.mark.parametrize(("arguments", "reply"), [
    ("-2, 2147483647", "too many results to unpack"),
    ("0, 2147483647", "too many results to unpack"),
    ("-2147483648, -2", "too many results to unpack"),
    ("nil, 2^31 - 1", "too many results to unpack"),
    ("'-2', '2147483647'", "too many results to unpack"),
    ("1, 7998", "too many results to unpack"),
    ("1, 7997", [1, 2, 3]),
    ("-1, -2", []),
    ("1, -1", []),
    ("1.5, 2.7", [1, 2]),
    ("2^31, 2^31 + 2", []),
    ("0/0, 1", []),
    ("'a', 2", "bad argument #2 to 'unpack' (number expected, got string)"),
    ("1, {}", "bad argument #3 to 'unpack' (number expected, got table)"),
])
def test_unpack_ranges_never_crash_the_server(r, arguments: str, reply: object) -> None:
    """Stock Lua 5.1 overflows its stack check on a range of about 2^31 elements."""
    script = f"return {{unpack({{1, 2, 3}}, {arguments})}}"
    if isinstance(reply, str):
        assert error_of(r, "EVAL", script, 0) == (
            f"user_script:1: {reply} script: {_sha(script)}, on @user_script:1.")
    else:
        assert r.eval(script, 0) == reply
    assert r.ping() is True


def test_unpack_errors_can_be_caught(r) -> None:
    assert r.eval("return select(2, pcall(unpack, {1, 2, 3}, 0, 2147483647))", 0) == (
        b"too many results to unpack")
    assert r.eval("local t = {} for i = 1, 7999 do t[i] = i end return #{unpack(t)}", 0) == 7999


@pytest.mark.min_redis(7, 4)
def test_wait_and_waitaof_in_a_script_answer_at_once(r) -> None:
    assert r.eval("return redis.pcall('wait', '1', '0')", 0) == 0
    assert r.eval("redis.call('set', 'a', 'b') return redis.pcall('waitaof', '0', '1', '0')",
                  0) == [0, 0]
    assert error_of(r, "EVAL", "return redis.pcall('waitaof', '1', '1', '0')", 0) == (
        "WAITAOF cannot be used when numlocal is set but appendonly is disabled.")


def _snapshot_settled(r: redis.Redis) -> dict:
    deadline = time.monotonic() + 10
    while True:
        info = r.info("persistence")
        if not info["rdb_bgsave_in_progress"] or time.monotonic() > deadline:
            return info
        time.sleep(0.02)


BGSAVE_ERROR = (
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    "RDB error.")


def test_a_failed_snapshot_refuses_writes_and_writing_scripts(r) -> None:
    r.set("x", "v")
    # The dump file's name taken by a directory: the snapshot cannot be put in place.
    dump = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
    if os.path.isfile(dump):
        os.remove(dump)
    os.makedirs(os.path.join(dump, "inside"))
    try:
        with configured(r, save="900 1"):
            r.bgsave()
            assert _snapshot_settled(r)["rdb_last_bgsave_status"] == "err"
            assert full_error(r, "SET", "x", "1") == BGSAVE_ERROR
            assert full_error(r, "PING") == BGSAVE_ERROR
            assert r.get("x") == b"v"
            assert full_error(r, "EVAL", WRITES_FLAGGED, 1, "x") == BGSAVE_ERROR
            assert r.eval(READS_FLAGGED, 1, "x") == b"v"
            script = "return redis.call('set', KEYS[1], 1)"
            assert full_error(r, "EVAL", script, 1, "x") == (
                f"{BGSAVE_ERROR} script: {_sha(script)}, on @user_script:1.")
            with configured(r, stop_writes_on_bgsave_error="no"):
                assert r.set("x", "w") is True
    finally:
        shutil.rmtree(dump)
    r.bgsave()
    assert _snapshot_settled(r)["rdb_last_bgsave_status"] == "ok"
    assert r.set("x", "v") is True


# Errors a script catches with pcall, between FUNCTION LOADs. Each caught error crosses from
# Python into Lua as a wrapper the collector later frees; the compiler's helper was handed
# over anew for each load, and once a freed wrapper's registry slot was given to it, a load
# called a stale error object ("internal error in 'function|load': TypeError", every load
# after it failing the same way).
CAUGHT_ERRORS = ("#!lua name=lib{n}\nredis.register_function('f{n}', function()\n"
                 "  local _, unknown = pcall(redis.call, 'nosuch')\n"
                 "  local _, empty = pcall(redis.call)\n"
                 "  return {{unknown, empty}}\nend)")
GARBAGE = ("#!lua name=garbage{i}\nredis.register_function('g{i}', function() return 1 end)\n"
           "local t = {{}} for j = 1, {size} do t[j] = {{}} end")


def test_function_loads_between_caught_errors_keep_working(r) -> None:
    caught = [b"ERR Unknown Redis command called from script",
              b"ERR Please specify at least one argument for this redis lib call"]
    for i in range(1500):
        n = i % 7
        r.execute_command("FUNCTION", "LOAD", "REPLACE", CAUGHT_ERRORS.format(n=n))
        assert r.execute_command("FCALL", f"f{n}", 0) == caught
        if i % 5 == 0:
            r.execute_command("FUNCTION", "LOAD", GARBAGE.format(i=i, size=(i * 37) % 3000 + 1))
        if i % 50 == 0:
            r.execute_command("FUNCTION", "FLUSH")


def test_a_refused_call_counts_once_after_caught_errors(r) -> None:
    """Redis 7.0.15's "Consistent eval error reporting" after the unit's earlier tests: the
    OOM refusal of redis.call counts once in errorstats, however many errors scripts caught
    before it."""
    for i in range(300):
        r.execute_command("FUNCTION", "LOAD", "REPLACE", CAUGHT_ERRORS.format(n=i % 7))
        r.execute_command("FCALL", f"f{i % 7}", 0)
        r.eval("local ok = pcall(redis.call, 'nosuch') return 1", 0)
    r.config_resetstat()
    with configured(r, maxmemory=1, maxmemory_policy="noeviction"):
        assert full_error(r, "EVAL", "return redis.call('set','x','y')", 1, "x").startswith(
            "OOM command not allowed when used memory > 'maxmemory'.")
        errorstats = r.info("errorstats")
        commandstats = r.info("commandstats")
    assert errorstats == {"errorstat_OOM": {"count": 1}}
    assert r.info("stats")["total_error_replies"] == 1
    assert commandstats["cmdstat_set"]["rejected_calls"] == 1
    assert commandstats["cmdstat_set"]["calls"] == 0
    assert commandstats["cmdstat_eval"]["failed_calls"] == 1


def test_a_fresh_interpreter_is_small(r) -> None:
    """Redis's tests hold used_memory_lua under 100 KB after thousands of scripts and the
    functions' interpreter under 40,000 bytes after FUNCTION FLUSH (Redis: about 32 KB each).
    Brook builds cjson, cmsgpack, struct and bit when a script first reads them."""
    r.script_flush()
    assert r.info("memory")["used_memory_lua"] < 40_000
    for _ in range(200):
        r.eval("return redis.call('incr', KEYS[1])", 1, "x")
    assert r.info("memory")["used_memory_lua"] < 100 * 1024
    assert r.eval("return {cjson.encode({1}), cmsgpack.pack(1), struct.pack('b', 1),"
                  " bit.tohex(1)}", 0) == [b"[1]", b"\x01", b"\x01", b"00000001"]
    r.script_flush()
    assert r.info("memory")["used_memory_lua"] < 40_000


@pytest.mark.min_redis(8, 0)  # Redis 7.0's FUNCTION FLUSH keeps its interpreter's memory
def test_function_flush_leaves_a_small_interpreter(r) -> None:
    r.execute_command("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f',"
                      " function() return cjson.encode({struct.pack('b', 1)}) end)")
    assert r.execute_command("FCALL", "f", 0) == b'["\\u0001"]'
    r.execute_command("FUNCTION", "FLUSH")
    assert r.info("memory")["used_memory_vm_functions"] < 40_000


def test_libraries_built_on_first_use_are_sealed(r) -> None:
    """A library read for the first time is as locked as the sandbox's other tables, in EVAL
    scripts and in functions; FUNCTION LOAD's own code sees only its API."""
    r.script_flush()
    assert full_error(r, "EVAL", "cjson.encode = 1", 0).startswith(
        "ERR user_script:1: Attempt to modify a readonly table script:")
    assert full_error(r, "EVAL", "return cjsonx", 0).startswith(
        "ERR user_script:1: Script attempted to access nonexistent global variable 'cjsonx'")
    r.script_flush()
    assert r.eval("local names = {} for name in pairs(_G) do"
                  " if name == 'cjson' or name == 'bit' or name == 'struct'"
                  " or name == 'cmsgpack' then names[#names + 1] = name end end"
                  " table.sort(names) return names", 0) == [
        b"bit", b"cjson", b"cmsgpack", b"struct"]
    r.execute_command("FUNCTION", "FLUSH")
    r.execute_command("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('enc',"
                      " function(keys, args) return cjson.encode({bit.band(6, 3)}) end)")
    assert r.execute_command("FCALL", "enc", 0) == b"[2]"
    assert full_error(r, "FUNCTION", "LOAD", "#!lua name=lib2\nlocal x = cjson.encode({})\n"
                      "redis.register_function('f', function() return 1 end)").startswith(
        "ERR Error registering functions: ERR user_function:2: Script attempted to access"
        " nonexistent global variable 'cjson'")
