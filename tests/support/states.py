"""Servers driven in process, for the rewrite and snapshot tests: built but never listening,
commands run through the dispatcher on sessions that are never connected, the clock frozen
(then moved by hand) so that idle times compare byte for byte; a rich state to build and the
inspection that compares two servers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import hiredis

from brook.config.store import Config
from brook.persistence.rewrite import rewrite_commands
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

