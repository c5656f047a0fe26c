"""The AOF rewrite (brook.persistence.rewrite): replaying its commands into an empty server
reproduces every database exactly, as the inspection commands see it.

In-process: servers are built but never listen, commands run through the dispatcher on sessions that are never connected, and
the clock is frozen (then moved by hand) so that idle times compare byte for byte. The rich
state and the comparison helpers are shared with the snapshot tests.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import hiredis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brook.config.store import Config
from brook.persistence.aof import encode_command
from brook.persistence.rewrite import ITEMS_PER_CMD, rewrite_commands
from brook.server import Server
from brook.session import Session

T0 = 1_700_000_000.0  # the frozen clock's start (s)


class Clock:
    """``time.time`` for the tests: frozen, moved by :meth:`advance`."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms / 1000


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    frozen = Clock()
    monkeypatch.setattr(time, "time", frozen)
    return frozen


class Client:
    """A session that is never connected: requests go straight to the dispatcher."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.session = Session(server)

    def execute(self, args: list[bytes]) -> bytes | None:
        return self.server.dispatcher.execute(self.session, args)


def new_client() -> Client:
    return Client(Server(Config()))


def parse(reply: bytes | None) -> object:
    reader = hiredis.Reader()
    reader.feed(reply or b"")
    value = reader.gets()
    return value


def run(client: Client, *args: bytes | str | int) -> object:
    """Execute one command; an error reply fails the test."""
    encoded = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    reply = client.execute(encoded)
    assert reply is not None and not reply.startswith(b"-"), (encoded[:8], reply)
    return parse(reply)


def replay(commands: Iterable[list[bytes]]) -> Client:
    """A fresh server fed ``commands``; every one must succeed."""
    client = new_client()
    for command in commands:
        reply = client.execute(command)
        assert reply is not None and not reply.startswith(b"-"), (command[:8], reply)
    client.execute([b"SELECT", b"0"])
    return client


# ---------------------------------------------------------------------------------------------
# The rich state
# ---------------------------------------------------------------------------------------------


def build_rich_state(client: Client, clock: Clock) -> None:
    """Every kind of value and every piece of stream bookkeeping the layers must keep."""
    run(client, "SET", "str", "hello")
    run(client, "SET", "int", "12345")
    run(client, "SET", "long", "x" * 100)
    run(client, "SET", "raw", "abc")
    run(client, "APPEND", "raw", "def")  # bytearray: encoding raw
    run(client, "SET", "ttl-str", "v", "PX", "500000")
    run(client, "SET", "empty", "")
    run(client, "HSET", "h-small", "a", "1", "b", "2")
    run(client, "HSET", "h-big", *[x for i in range(600) for x in (f"f{i}", f"v{i}")])
    run(client, "HSET", "h-shrunk", *[x for i in range(600) for x in (f"f{i}", f"v{i}")])
    run(client, "HDEL", "h-shrunk", *[f"f{i}" for i in range(3, 600)])  # hashtable, 3 fields
    run(client, "HSET", "h-longval", "k", "v" * 100)
    run(client, "PEXPIRE", "h-small", "900000")
    run(client, "RPUSH", "l-small", *[f"e{i}" for i in range(10)])
    run(client, "RPUSH", "l-long", *[f"element-{i}" for i in range(12_000)])
    for i in range(300):
        run(client, "LPUSH", "l-ends", f"left{i}")
        run(client, "RPUSH", "l-ends", f"right{i}")
    run(client, "LPOP", "l-ends", "7")
    run(client, "RPOP", "l-ends", "3")
    run(client, "RPUSH", "l-big-elem", "y" * 300, "z")
    run(client, "RPUSH", "l-ttl", "a", "b")
    run(client, "PEXPIREAT", "l-ttl", str(int(T0 * 1000) + 3_600_000))
    build_stream(client, clock, "s")
    build_idmp_stream(client, clock)
    # An emptied stream that keeps its groups, and a never-written one made by MKSTREAM.
    run(client, "XADD", "s-empty", "5-1", "a", "1")
    run(client, "XADD", "s-empty", "5-2", "a", "2")
    run(client, "XGROUP", "CREATE", "s-empty", "g", "0")
    run(client, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s-empty", ">")
    run(client, "XDEL", "s-empty", "5-1", "5-2")
    run(client, "XGROUP", "CREATE", "s-mk", "g", "$", "MKSTREAM")
    run(client, "XGROUP", "CREATECONSUMER", "s-mk", "g", "lonely")
    run(client, "SELECT", "1")
    run(client, "SET", "db1-key", "one")
    build_stream(client, clock, "s1", entries=150)
    run(client, "SELECT", "5")
    run(client, "HSET", "db5-hash", "f", "v")
    run(client, "PEXPIRE", "db5-hash", "100000")
    run(client, "SELECT", "0")


def build_stream(client: Client, clock: Clock, key: str, entries: int = 1000) -> None:
    """Deletions, trims, three groups, PELs over several consumers with different counts and
    times, claims, XNACKed entries, idle consumers and a reference to a deleted entry."""
    for i in range(1, entries + 1):
        fields = ["a", str(i), "b", "x" * (i % 7)] if i % 13 else ["odd", str(i)]
        run(client, "XADD", key, f"{1000 + i // 3}-{i % 3}", *fields)
        if i % 100 == 0:
            clock.advance(5)
    run(client, "XDEL", key, *[f"{1000 + i // 3}-{i % 3}" for i in range(5, entries, 17)])
    run(client, "XTRIM", key, "MAXLEN", "~", str(entries - 120))
    run(client, "XTRIM", key, "MINID", f"{1000 + 60 // 3}-0")
    for group in ("g1", "g2", "g3"):
        run(client, "XGROUP", "CREATE", key, group, "0")
    for n, consumer in enumerate(("alice", "bob", "carol")):
        clock.advance(1000 + n)
        run(client, "XREADGROUP", "GROUP", "g1", consumer, "COUNT", str(20 + n), "STREAMS", key,
            ">")
    clock.advance(777)
    run(client, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", key, "0")
    run(client, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", key, "0")
    run(client, "XREADGROUP", "GROUP", "g2", "dave", "COUNT", "40", "STREAMS", key, ">")
    pending = parse(client.execute([b"XPENDING", key.encode(), b"g1", b"-", b"+", b"100"]))
    ids = [row[0] for row in pending]  # type: ignore[union-attr]
    clock.advance(2500)
    run(client, "XCLAIM", key, "g1", "bob", "0", ids[1], ids[2], ids[30])
    run(client, "XCLAIM", key, "g1", "erin", "0", ids[3], "RETRYCOUNT", "9")
    run(client, "XACK", key, "g1", ids[4], ids[5])
    run(client, "XNACK", key, "g1", "FAIL", "IDS", "2", ids[10], ids[8])
    run(client, "XNACK", key, "g1", "FATAL", "IDS", "1", ids[12])
    run(client, "XNACK", key, "g1", "SILENT", "IDS", "1", ids[9], "RETRYCOUNT", "4")
    run(client, "XDEL", key, ids[20], ids[21])  # pending entries whose entry is gone
    run(client, "XGROUP", "CREATECONSUMER", key, "g1", "idle-one")
    run(client, "XGROUP", "CREATECONSUMER", key, "g3", "nobody")
    run(client, "XGROUP", "SETID", key, "g3", ids[40], "ENTRIESREAD", "77")
    clock.advance(10)
    run(client, "XADD", key, "*", "tail", "1")  # the open tail node gets a deleted entry too
    run(client, "XADD", key, "*", "tail", "2")
    last = parse(client.execute([b"XADD", key.encode(), b"*", b"tail", b"3"]))
    run(client, "XDEL", key, last)
    clock.advance(10)


def build_idmp_stream(client: Client, clock: Clock) -> None:
    run(client, "XADD", "s-idmp", "IDMP", "p1", "first", "*", "k", "v")
    run(client, "XCFGSET", "s-idmp", "IDMP-DURATION", "300", "IDMP-MAXSIZE", "5")
    for i in range(8):
        clock.advance(3)
        run(client, "XADD", "s-idmp", "IDMP", "p1", f"iid{i}", "*", "k", str(i))
        run(client, "XADD", "s-idmp", "IDMPAUTO", "p2", "*", "k", str(i % 3))
    run(client, "XADD", "s-idmp", "IDMP", "p1", "iid7", "*", "k", "dup")  # a duplicate
    entry = parse(client.execute([b"XADD", b"s-idmp", b"IDMP", b"p3", b"gone", b"*", b"k", b"g"]))
    run(client, "XDEL", "s-idmp", entry)  # its IDMP record outlives the entry


# ---------------------------------------------------------------------------------------------
# Inspection
# ---------------------------------------------------------------------------------------------


def _without_radix(info: list) -> list:
    """XINFO STREAM without the node-layout fields (see the rewrite's docstring)."""
    out = []
    for name, value in zip(info[0::2], info[1::2], strict=True):
        if name not in (b"radix-tree-keys", b"radix-tree-nodes"):
            out += [name, value]
    return out


def inspect(client: Client, exact_layout: bool = True) -> dict:
    """Everything the inspection commands report, per database and key."""
    state: dict = {}
    for index in range(16):
        run(client, "SELECT", index)
        for key in sorted(run(client, "KEYS", "*")):  # type: ignore[arg-type]
            kind = run(client, "TYPE", key)
            view: dict = {
                "type": kind,
                "encoding": run(client, "OBJECT", "ENCODING", key),
                "pexpiretime": run(client, "PEXPIRETIME", key),
                "pttl": run(client, "PTTL", key),
            }
            if kind == b"string":
                view["value"] = run(client, "GET", key)
            elif kind == b"hash":
                view["value"] = run(client, "HGETALL", key)
            elif kind == b"list":
                view["value"] = run(client, "LRANGE", key, 0, -1)
            elif kind == b"stream":
                full = run(client, "XINFO", "STREAM", key, "FULL", "COUNT", "0")
                view["full"] = full if exact_layout else _without_radix(full)  # type: ignore[arg-type]
                short = run(client, "XINFO", "STREAM", key)
                view["info"] = short if exact_layout else _without_radix(short)  # type: ignore[arg-type]
                view["groups"] = run(client, "XINFO", "GROUPS", key)
                view["range"] = run(client, "XRANGE", key, "-", "+")
                for group in view["groups"]:  # type: ignore[union-attr]
                    name = group[1]
                    view[b"consumers " + name] = run(client, "XINFO", "CONSUMERS", key, name)
                    view[b"pending " + name] = run(client, "XPENDING", key, name)
                    view[b"pending-ext " + name] = run(client, "XPENDING", key, name, "-", "+",
                                                       1_000_000)
            state[(index, key)] = view
    run(client, "SELECT", 0)
    return state


def rewrite_round_trip(client: Client) -> Client:
    return replay(rewrite_commands(client.server.keyspace))


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


def test_rewrite_reproduces_a_rich_state(clock: Clock) -> None:
    source = new_client()
    build_rich_state(source, clock)
    before = inspect(source, exact_layout=False)
    copy = rewrite_round_trip(source)
    assert inspect(copy, exact_layout=False) == before
    assert inspect(source, exact_layout=False) == before  # the rewrite only reads


def test_rewrite_keeps_behaviour_after_replay(clock: Clock) -> None:
    """Deduplication and the released-first claim order survive the replay."""
    source = new_client()
    build_rich_state(source, clock)
    copy = rewrite_round_trip(source)
    copy.session.last_interaction = source.session.last_interaction  # the clock XADD * reads
    for client in (source, copy):
        dup = parse(client.execute([b"XADD", b"s-idmp", b"IDMP", b"p1", b"iid6", b"*",
                                    b"k", b"again"]))
        gone = parse(client.execute([b"XADD", b"s-idmp", b"IDMP", b"p3", b"gone", b"*",
                                     b"k", b"again"]))
        claimed = parse(client.execute([b"XREADGROUP", b"GROUP", b"g1", b"zed", b"COUNT", b"3",
                                        b"CLAIM", b"0", b"STREAMS", b"s", b">"]))
        client.state = (dup, gone, claimed)  # type: ignore[attr-defined]
    assert copy.state == source.state  # type: ignore[attr-defined]


def test_rewrite_batches_variadic_commands(clock: Clock) -> None:
    source = new_client()
    build_rich_state(source, clock)
    commands = list(rewrite_commands(source.server.keyspace))
    pushes = [c for c in commands if c[0] == b"RPUSH" and c[1] == b"l-long"]
    assert len(pushes) == -(-12_000 // ITEMS_PER_CMD)
    assert all(len(c) <= 2 + ITEMS_PER_CMD for c in commands if c[0] == b"RPUSH")
    assert all(len(c) <= 2 + 2 * ITEMS_PER_CMD for c in commands if c[0] == b"HSET")
    assert commands[0] == [b"SELECT", b"0"]
    claims = [c for c in commands if c[0] == b"XCLAIM"]
    assert claims and all(c[6] == b"TIME" and c[8] == b"RETRYCOUNT" for c in claims)


def test_rewrite_skips_expired_keys(clock: Clock) -> None:
    source = new_client()
    run(source, "SET", "soon", "v", "PX", "10")
    run(source, "SET", "later", "v", "PX", "10000")
    clock.advance(20)
    keys = {c[1] for c in rewrite_commands(source.server.keyspace) if c[0] == b"SET"}
    assert keys == {b"later"}


def test_rewrite_is_lazy_on_a_large_stream(clock: Clock) -> None:
    source = new_client()
    for i in range(5000):
        source.execute([b"XADD", b"big", b"%d-1" % (i + 1), b"f", b"v"])
    commands = rewrite_commands(source.server.keyspace)
    assert next(commands) == [b"SELECT", b"0"]
    assert next(commands) == [b"XADD", b"big", b"1-1", b"f", b"v"]


@pytest.mark.parametrize("bad", [
    [b"BROOK.RESTORE-PEL", b"s", b"g1", b"OWNER", b"c", b"1-1", b"5"],
    [b"BROOK.RESTORE-PEL", b"s", b"g1", b"OWNER", b"c", b"nope", b"5", b"1"],
    [b"BROOK.RESTORE-PEL", b"s", b"g1", b"OWNER", b"c", b"1-1", b"5", b"-3"],
    [b"BROOK.RESTORE-PEL", b"s", b"nogroup", b"NACKED", b"1-1", b"1"],
    [b"BROOK.RESTORE-PEL", b"missing", b"g1", b"NACKED", b"1-1", b"1"],
    [b"BROOK.RESTORE-PEL", b"s", b"g1", b"SIDEWAYS", b"1-1", b"1"],
    [b"BROOK.RESTORE-PEL", b"str", b"g1", b"NACKED", b"1-1", b"1"],
    [b"BROOK.RESTORE-CONSUMER", b"s", b"g1", b"c", b"x", b"1"],
    [b"BROOK.RESTORE-CONSUMER", b"s", b"g1", b"c", b"1", b"-2"],
    [b"BROOK.RESTORE-IDMP", b"s", b"COUNTERS", b"1"],
    [b"BROOK.RESTORE-IDMP", b"s", b"COUNTERS", b"-1", b"0"],
    [b"BROOK.RESTORE-IDMP", b"s", b"PRODUCER", b"p", b"iid", b"1-1"],
    [b"BROOK.RESTORE-IDMP", b"s", b"PRODUCER", b"p", b"iid", b"bad", b"5"],
    [b"BROOK.RESTORE-IDMP", b"s", b"OTHER", b"p", b"iid"],
    [b"BROOK.RESTORE-ENCODING", b"h", b"LISTPACK"],
    [b"BROOK.RESTORE-ENCODING", b"str", b"HASHTABLE"],
    [b"BROOK.RESTORE-ENCODING", b"missing", b"HASHTABLE"],
])
def test_restore_commands_reject_bad_input(clock: Clock, bad: list[bytes]) -> None:
    client = new_client()
    run(client, "XADD", "s", "1-1", "f", "v")
    run(client, "XGROUP", "CREATE", "s", "g1", "0")
    run(client, "HSET", "h", "f", "v")
    run(client, "SET", "str", "v")
    before = inspect(client)
    reply = client.execute(bad)
    assert reply is not None and reply.startswith(b"-"), reply
    assert inspect(client) == before


def test_restore_commands_set_what_they_say(clock: Clock) -> None:
    client = new_client()
    run(client, "XADD", "s", "1-1", "f", "v")
    run(client, "XGROUP", "CREATE", "s", "g", "0")
    run(client, "BROOK.RESTORE-PEL", "s", "g", "OWNER", "c", "0-5", "123", "4")
    run(client, "BROOK.RESTORE-PEL", "s", "g", "NACKED", "1-1", "2")
    run(client, "BROOK.RESTORE-CONSUMER", "s", "g", "c", "1000", "-1")
    rows = run(client, "XPENDING", "s", "g", "-", "+", "10")
    assert rows == [[b"0-5", b"c", int(T0 * 1000) - 123, 4], [b"1-1", b"", -1, 2]]
    group = client.server.keyspace[0].data[b"s"].groups[b"g"]
    assert list(group.nacked) == [1 << 64 | 1]
    consumer = group.consumers[b"c"]
    assert (consumer.seen_time, consumer.active_time) == (1000, -1)


# -- randomized streams --------------------------------------------------------------------------

def random_stream_operations(client: Client, clock: Clock, seed: int, steps: int) -> None:
    """Random XADD/XDEL/XTRIM/XREADGROUP/XACK/XCLAIM/XNACK on two streams."""
    rng = random.Random(seed)
    added: dict[str, list[bytes]] = {"r1": [], "r2": []}
    for key in added:
        run(client, "XADD", key, "1-1", "seed", "0")
        added[key].append(b"1-1")
        for group in ("ga", "gb"):
            run(client, "XGROUP", "CREATE", key, group, "0")
    for _ in range(steps):
        key = rng.choice(list(added))
        group = rng.choice(("ga", "gb"))
        consumer = rng.choice(("c1", "c2", "c3"))
        clock.advance(rng.randrange(0, 50))
        op = rng.randrange(10)
        ids = added[key]
        if op < 4:
            fields = [b"f%d" % rng.randrange(3), b"v" * rng.randrange(20)]
            entry = client.execute([b"XADD", key.encode(), b"*", *fields])
            ids.append(parse(entry))  # type: ignore[arg-type]
        elif op == 4:
            client.execute([b"XDEL", key.encode(), rng.choice(ids)])
        elif op == 5:
            strategy = rng.choice([[b"MAXLEN", b"~", b"%d" % rng.randrange(50)],
                                   [b"MAXLEN", b"%d" % rng.randrange(50)],
                                   [b"MINID", rng.choice(ids)]])
            client.execute([b"XTRIM", key.encode(), *strategy])
        elif op == 6:
            start = rng.choice([b">", b"0"])
            client.execute([b"XREADGROUP", b"GROUP", group.encode(), consumer.encode(), b"COUNT",
                            b"%d" % rng.randrange(1, 8), b"STREAMS", key.encode(), start])
        elif op == 7:
            client.execute([b"XACK", key.encode(), group.encode(),
                            *rng.sample(ids, min(3, len(ids)))])
        elif op == 8:
            client.execute([b"XCLAIM", key.encode(), group.encode(), consumer.encode(), b"0",
                            *rng.sample(ids, min(2, len(ids))), *rng.choice([[], [b"JUSTID"]])])
        else:
            mode = rng.choice([b"SILENT", b"FAIL", b"FATAL"])
            client.execute([b"XNACK", key.encode(), group.encode(), mode, b"IDS", b"1",
                            rng.choice(ids)])


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 250))
def test_random_streams_round_trip_through_the_rewrite(clock: Clock, seed: int,
                                                       steps: int) -> None:
    source = new_client()
    random_stream_operations(source, clock, seed, steps)
    assert inspect(rewrite_round_trip(source), exact_layout=False) == inspect(
        source, exact_layout=False)


# -- redis-check-aof ----------------------------------------------------------------------------

def test_redis_check_aof_accepts_the_rewrite(clock: Clock, tmp_path: Path) -> None:
    tool = shutil.which("redis-check-aof")
    if tool is None:
        pytest.skip("redis-check-aof is not installed")
    source = new_client()
    build_rich_state(source, clock)
    path = tmp_path / "rewrite.aof"
    with path.open("wb") as out:
        for command in rewrite_commands(source.server.keyspace):
            out.write(encode_command(command))
    result = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is valid" in result.stdout
