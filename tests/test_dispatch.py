"""The dispatcher without sockets: a Session and a request in, reply bytes and effects out.

Behaviour over the wire is tested against real Redis elsewhere; these tests pin down what the
one pipeline guarantees to every caller (a batch from hiredis, one request, EXEC, a served
parked command, the AOF loader).
"""

from __future__ import annotations

import time
from pathlib import Path

import hiredis

from brook.config.store import Config
from brook.persistence.aof import AppendOnlyFile, encode_command
from brook.server import Server
from brook.session import Session
from tests.conftest import encode_request


def _session(**config: object) -> Session:
    settings = Config()
    for name, value in config.items():
        setattr(settings, name, value)
    return Session(Server(settings))



def test_execute_runs_a_request_and_counts_it() -> None:
    session = _session()
    dispatcher = session.server.dispatcher
    assert dispatcher.execute(session, [b"SET", b"k", b"v"]) == b"+OK\r\n"
    assert dispatcher.execute(session, [b"get", b"k"]) == b"$1\r\nv\r\n"
    table = session.server.command_table
    assert (table[b"set"].calls, table[b"get"].calls) == (1, 1)
    assert session.last_command == "get"


def test_two_servers_in_one_process_count_their_own_commands() -> None:
    """Per-command statistics belong to a server: each has its own instance of the command
    table, also for a command counted when a parked client is served."""
    first, second = _session(), _session()
    first.server.dispatcher.execute(first, [b"GET", b"k"])
    assert first.server.dispatcher.execute(first, [b"BLPOP", b"l", b"0"]) is None
    pusher = Session(first.server)
    first.server.dispatcher.execute(pusher, [b"RPUSH", b"l", b"x"])
    first.server.blocking.serve_ready()
    assert first.out == [b"*2\r\n$1\r\nl\r\n$1\r\nx\r\n"]
    table, other = first.server.command_table, second.server.command_table
    assert (table[b"get"].calls, table[b"blpop"].calls) == (1, 1)
    assert (other[b"get"].calls, other[b"blpop"].calls) == (0, 0)
    assert "cmdstat_get" not in second.server.dispatcher.execute(
        second, [b"INFO", b"commandstats"]).decode()


def test_two_servers_in_one_process_keep_their_own_time() -> None:
    """A script's frozen time and a replica's kept expired keys belong to their server: the
    other server in the process sees the clock run and expires its keys."""
    first, second = _session(), _session()
    run = first.server.dispatcher.execute
    assert run(first, [b"SET", b"k", b"v", b"PX", b"1"]) == b"+OK\r\n"
    other = second.server.dispatcher.execute
    assert other(second, [b"SET", b"k", b"v", b"PX", b"1"]) == b"+OK\r\n"
    time.sleep(0.01)
    frozen = 1_000_000_000_000_000  # µs: a script of the first server started then
    outer = first.clock.freeze(frozen)
    first.clock.replica = True
    try:
        assert run(first, [b"TIME"]) == b"*2\r\n$10\r\n1000000000\r\n$1\r\n0\r\n"
        assert run(first, [b"EXISTS", b"k"]) == b":1\r\n"  # not yet due at its time
        seconds = int(other(second, [b"TIME"]).split(b"\r\n")[2])
        assert abs(seconds - time.time()) < 60
        assert other(second, [b"EXISTS", b"k"]) == b":0\r\n"
        assert second.server.keyspace.expired_keys == 1
    finally:
        first.clock.freeze(outer)
        first.clock.replica = False


def test_checks_reject_without_running() -> None:
    session = _session(requirepass="pw")
    dispatcher = session.server.dispatcher
    assert dispatcher.execute(session, [b"SET", b"k", b"v"]) == (
        b"-NOAUTH Authentication required.\r\n")
    assert dispatcher.execute(session, [b"AUTH", b"pw"]) == b"+OK\r\n"
    assert dispatcher.execute(session, [b"GET"]) == (
        b"-ERR wrong number of arguments for 'get' command\r\n")
    assert dispatcher.execute(session, [b"NOPE", b"x"]) == (
        b"-ERR unknown command 'NOPE', with args beginning with: 'x' \r\n")
    assert len(session.db.data) == 0
    assert session.server.command_table[b"get"].rejected_calls == 1


def test_multi_queues_and_exec_runs_through_call() -> None:
    session = _session()
    dispatcher = session.server.dispatcher
    assert dispatcher.execute(session, [b"MULTI"]) == b"+OK\r\n"
    assert session.slow  # a session in MULTI never takes the batch's fast branch
    assert dispatcher.execute(session, [b"INCR", b"n"]) == b"+QUEUED\r\n"
    assert dispatcher.execute(session, [b"INCR", b"n"]) == b"+QUEUED\r\n"
    assert dispatcher.execute(session, [b"EXEC"]) == b"*2\r\n:1\r\n:2\r\n"
    assert session.server.command_table[b"incr"].calls == 2


def test_run_batch_stops_before_a_malformed_request() -> None:
    """The requests before it run; the malformed one and those after it do not."""
    session = _session()
    reader = hiredis.Reader()
    reader.feed(encode_request(b"SET", b"a", b"1") + b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n:5\r\n"
                + encode_request(b"SET", b"c", b"1"))
    session.refresh_mode()
    taken, _arguments, last, malformed = session.server.dispatcher.run_batch(
        session, reader.gets)
    assert (taken, last, malformed) == (1, [b"SET", b"a", b"1"], True)
    assert set(session.db.data) == {b"a"}
    assert session.out == [b"+OK\r\n"]


def test_run_batch_charges_fast_commands_of_a_batch() -> None:
    session = _session()
    session.refresh_mode()
    assert not session.slow
    reader = hiredis.Reader()
    reader.feed(encode_request(b"PING") * 3 + encode_request(b"SET", b"k", b"v") + encode_request(b"GET", b"k"))
    taken, arguments, _last, malformed = session.server.dispatcher.run_batch(
        session, reader.gets)
    assert (taken, arguments, malformed) == (5, 8, False)
    assert b"".join(session.out) == b"+PONG\r\n" * 3 + b"+OK\r\n$1\r\nv\r\n"
    table = session.server.command_table
    assert (table[b"ping"].calls, table[b"set"].calls, table[b"get"].calls) == (3, 1, 1)


def test_a_write_persists_its_effects_not_its_request(tmp_path: Path) -> None:
    """With an AOF attached, XADD * is persisted with the ID it got (its effect), a command
    that fails persists nothing, and a plain write persists its request."""
    session = _session()
    server = session.server
    aof = AppendOnlyFile(str(tmp_path / "appendonly.aof"), "no")
    server.attach_aof(aof)
    dispatcher = server.dispatcher
    reply = dispatcher.execute(session, [b"XADD", b"s", b"*", b"f", b"v"])
    assert reply is not None and reply.startswith(b"$")
    entry_id = reply.split(b"\r\n")[1]
    written = b"".join(server.effect_log.buffer)
    assert encode_command([b"XADD", b"s", entry_id, b"f", b"v"]) in written
    assert b"$1\r\n*\r\n" not in written
    failed = dispatcher.execute(session, [b"INCR", b"s"])
    assert failed is not None and failed.startswith(b"-WRONGTYPE")
    assert b"".join(server.effect_log.buffer) == written
    assert dispatcher.execute(session, [b"SET", b"k", b"v"]) == b"+OK\r\n"
    assert b"".join(server.effect_log.buffer).endswith(encode_command([b"SET", b"k", b"v"]))
    server.attach_aof(None)
    aof.close()
