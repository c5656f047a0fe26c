"""Datasets of every kind and encoding, and what a client sees of them: shared by the tests that
move data between servers (DUMP/RESTORE, RDB files, replication with real Redis)."""

from __future__ import annotations

from collections.abc import Callable

import redis

Filler = Callable[[redis.Redis, str], None]


def fill_stream(r: redis.Redis, key: str) -> None:
    for i in range(1, 260):
        r.xadd(key, {"a": i, "b": "x" * (i % 7)}, id=f"{i}-1")
    r.xadd(key, {"other": "fields", "n": "-12"}, id="400-0")
    r.xdel(key, "5-1", "100-1")
    r.xgroup_create(key, "g1", "0")
    r.xreadgroup("g1", "alice", {key: ">"}, count=4)
    r.xreadgroup("g1", "bob", {key: ">"}, count=2)
    r.xack(key, "g1", "2-1")
    r.xgroup_create(key, "g2", "$")
    r.xgroup_createconsumer(key, "g2", "carol")


VALUES: dict[str, Filler] = {
    "string-short": lambda r, k: r.set(k, "hello"),
    "string-int": lambda r, k: r.set(k, 12345),
    "string-negative": lambda r, k: r.set(k, -7),
    "string-int64": lambda r, k: r.set(k, 2**40),
    "string-not-canonical": lambda r, k: r.set(k, "007"),
    "string-compressible": lambda r, k: r.set(k, "abc" * 100),
    "string-random": lambda r, k: r.set(k, bytes(range(256)) * 3),
    "string-empty": lambda r, k: r.set(k, ""),
    "list-small": lambda r, k: r.rpush(k, *range(10), "abc", -1, 2**62, "x" * 300),
    "list-long": lambda r, k: r.rpush(k, *[f"v{i}" for i in range(5000)]),
    "list-big-elements": lambda r, k: r.rpush(k, *["y" * 9000 for _ in range(5)]),
    "set-intset": lambda r, k: r.sadd(k, 1, 2, 3, -5, 2**40),
    "set-listpack": lambda r, k: r.sadd(k, "a", "b", 1),
    "set-hashtable": lambda r, k: r.sadd(k, *[f"m{i}" for i in range(300)]),
    "set-big-intset": lambda r, k: r.sadd(k, *range(1000)),
    "zset-listpack": lambda r, k: r.zadd(k, {"a": 1.5, "b": float("inf"), "c": float("-inf"),
                                              "d": 0.1, "e": -3, "f": 1e300}),
    "zset-skiplist": lambda r, k: r.zadd(k, {f"m{i}": i / 3 for i in range(300)}),
    "hash-listpack": lambda r, k: r.hset(k, mapping={"f": "v", "n": 1, "neg": -100000}),
    "hash-hashtable": lambda r, k: r.hset(k, mapping={f"f{i}": "v" * i for i in range(200)}),
    "hash-long-value": lambda r, k: r.hset(k, mapping={"f": "z" * 100}),
    "stream": fill_stream,
    "stream-empty": lambda r, k: r.xgroup_create(k, "g", "$", mkstream=True),
}


def contents(r: redis.Redis, key: str) -> object:
    kind = r.type(key).decode()
    if kind == "string":
        return r.get(key)
    if kind == "list":
        return r.lrange(key, 0, -1)
    if kind == "set":
        return sorted(r.smembers(key))
    if kind == "zset":
        return r.zrange(key, 0, -1, withscores=True)
    if kind == "hash":
        return r.hgetall(key)
    info = r.xinfo_stream(key, full=True)
    kept = ("length", "last-generated-id", "max-deleted-entry-id", "entries-added",
            "recorded-first-entry-id", "entries")
    groups = []
    for group in info["groups"]:
        consumers = [(c["name"], c["pel-count"], [p[0] for p in c["pending"]])
                     for c in group["consumers"]]
        groups.append((group["name"], group["last-delivered-id"], group["entries-read"],
                       group["lag"], [(p[0], p[1], p[3]) for p in group["pending"]],
                       consumers))
    return {name: info[name] for name in kept}, groups


def encoding(r: redis.Redis, key: str) -> bytes:
    return r.object("encoding", key)


def comparable_encoding(version: tuple[int, ...], kind: bytes, encoding: bytes) -> bytes:
    """Redis 7.0 has no listpack lists or sets (quicklist and hashtable instead)."""
    if version < (7, 2) and kind == b"list":
        return b"quicklist"
    if version < (7, 2) and kind == b"set" and encoding == b"listpack":
        return b"hashtable"
    return encoding


LIBRARY = "#!lua name=rdblib\nredis.register_function('rdbfn', function() return 7 end)"


def fill_every_kind(r: redis.Redis) -> dict[int, list[str]]:
    """Every value kind in database 0, a few in database 3, TTLs on some; the keys per db."""
    for name, fill in VALUES.items():
        fill(r, name)
    r.pexpire("string-short", 500_000)
    r.pexpire("stream", 400_000)
    r.pexpire("set-hashtable", 300_000)
    r.function_load(LIBRARY)
    r.execute_command("SELECT", 3)
    r.set("in-three", "x" * 50)
    r.zadd("zset-three", {"a": 1})
    r.pexpire("zset-three", 200_000)
    r.execute_command("SELECT", 0)
    return {0: list(VALUES), 3: ["in-three", "zset-three"]}


def client_view(r: redis.Redis, keys: dict[int, list[str]]) -> dict[tuple[int, str], object]:
    """What a client sees of every key: type, contents, encoding, expiry time (ms)."""
    seen: dict[tuple[int, str], object] = {}
    for db, names in keys.items():
        r.execute_command("SELECT", db)
        for name in names:
            kind = r.type(name)
            deadline = r.pexpiretime(name)  # absolute: a file or a sync keeps it exactly
            seen[db, name] = (kind, contents(r, name), r.object("encoding", name),
                              deadline)
    r.execute_command("SELECT", 0)
    return seen


def comparable(seen: dict[tuple[int, str], object], version: tuple[int, ...]
                ) -> dict[tuple[int, str], object]:
    out = {}
    for key, (kind, contents, encoding, ttl) in seen.items():  # type: ignore[misc]
        out[key] = (kind, contents, comparable_encoding(version, kind, encoding), ttl)
    return out
