"""DUMP / RESTORE: Redis's payload format both ways, Redis's errors, and payloads that are
corrupt at any byte (the server answers and stays whole)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis

from brook.rdb import strings
from brook.rdb.containers import listpack_entry, listpack_of
from brook.rdb.crc64 import crc64
from brook.rdb.payload import wrap
from tests.conftest import ServerProcess, error_of, run
from tests.support.datasets import VALUES, comparable_encoding, contents, encoding, fill_stream


@pytest.mark.parametrize("name", sorted(VALUES))
def test_round_trip(r: redis.Redis, name: str) -> None:
    VALUES[name](r, "src")
    payload = r.dump("src")
    assert r.restore("dst", 0, payload)
    assert r.type("dst") == r.type("src")
    assert contents(r, "dst") == contents(r, "src")
    assert encoding(r, "dst") == encoding(r, "src")
    assert r.ttl("dst") == -1


def test_dump_of_a_missing_key_is_nil(r: redis.Redis) -> None:
    assert r.dump("nothing") is None


def test_restore_errors(r: redis.Redis) -> None:
    r.set("k", "v")
    payload = r.dump("k")
    assert error_of(r, "RESTORE", "k", 0, payload) == "BUSYKEY Target key name already exists."
    assert error_of(r, "RESTORE", "n", -1, payload) == "Invalid TTL value, must be >= 0"
    assert error_of(r, "RESTORE", "n", "x", payload) == "value is not an integer or out of range"
    assert error_of(r, "RESTORE", "n", 0, "...") == "DUMP payload version or checksum are wrong"
    bad_crc = payload[:-1] + bytes([payload[-1] ^ 1])
    assert error_of(r, "RESTORE", "n", 0, bad_crc) == \
        "DUMP payload version or checksum are wrong"
    newer = payload[:-10] + (99).to_bytes(2, "little")
    newer += crc64(newer).to_bytes(8, "little")
    assert error_of(r, "RESTORE", "n", 0, newer) == "DUMP payload version or checksum are wrong"
    assert error_of(r, "RESTORE", "n", 0, payload, "bogus") == "syntax error"
    assert error_of(r, "RESTORE", "n", 0, payload, "idletime", -1) == \
        "Invalid IDLETIME value, must be >= 0"
    assert error_of(r, "RESTORE", "n", 0, payload, "freq", 256) == \
        "Invalid FREQ value, must be >= 0 and <= 255"
    assert error_of(r, "RESTORE", "n", 0, payload, "idletime", 1, "freq", 1) == "syntax error"
    assert error_of(r, "RESTORE", "n", 0, payload, "idletime") == "syntax error"
    module = b"\x07" + payload[1:-10]
    module += payload[-10:-8] + crc64(module + payload[-10:-8]).to_bytes(8, "little")
    assert error_of(r, "RESTORE", "n", 0, module) == "Bad data format"
    assert r.exists("n") == 0
    # BUSYKEY is checked before the TTL and the payload
    assert error_of(r, "RESTORE", "k", -1, "...") == "BUSYKEY Target key name already exists."


def test_sanitize_dump_payload_setting(r: redis.Redis) -> None:
    for value in ("yes", "clients", "no"):
        assert r.config_set("sanitize-dump-payload", value)
        assert r.config_get("sanitize-dump-payload") == {"sanitize-dump-payload": value}
    assert "sanitize-dump-payload" in error_of(r, "CONFIG", "SET", "sanitize-dump-payload", "x")


def test_restore_ttl_replace_absttl(r: redis.Redis) -> None:
    r.set("k", "v")
    payload = r.dump("k")
    assert r.restore("a", 5000, payload)
    assert 3000 < r.pttl("a") <= 5000
    deadline = int(time.time() * 1000) + 4000
    assert r.restore("b", deadline, payload, absttl=True)
    assert 2000 < r.pttl("b") <= 4000
    r.set("c", "old")
    assert r.restore("c", 0, payload, replace=True)
    assert r.get("c") == b"v"
    # an absolute TTL in the past: OK, and the key is not (or no longer) there
    assert r.restore("d", int(time.time() * 1000) - 3000, payload, absttl=True)
    assert r.exists("d") == 0
    r.set("e", "old")
    assert r.restore("e", int(time.time() * 1000) - 3000, payload, absttl=True, replace=True)
    assert r.exists("e") == 0


def test_restore_idletime_and_freq(r: redis.Redis) -> None:
    r.set("k", "v")
    payload = r.dump("k")
    r.restore("a", 0, payload, idletime=1000)
    assert 1000 <= r.object("idletime", "a") <= 1010
    r.config_set("maxmemory-policy", "allkeys-lfu")
    r.restore("b", 0, payload, frequency=100)
    assert r.object("freq", "b") == 100


def test_restore_events_and_watch(r: redis.Redis, server: ServerProcess) -> None:
    r.config_set("notify-keyspace-events", "KEA")
    try:
        r.set("k", "v")
        payload = r.dump("k")
        pubsub = r.pubsub()
        pubsub.psubscribe("__keyspace@0__:*")
        pubsub.get_message(timeout=1)
        r.restore("new", 0, payload)
        r.restore("new", int(time.time() * 1000) - 10, payload, replace=True, absttl=True)
        events = []
        for _ in range(10):
            message = pubsub.get_message(timeout=0.5)
            if message is None:
                break
            events.append((message["channel"], message["data"]))
        assert events == [(b"__keyspace@0__:new", b"restore"), (b"__keyspace@0__:new", b"del")]
        pubsub.close()
    finally:
        r.config_set("notify-keyspace-events", "")
    watcher = server.client()
    pipe = watcher.pipeline()
    pipe.watch("w")
    r.restore("w", 0, payload)
    pipe.multi()
    pipe.set("w", "x")
    with pytest.raises(redis.WatchError):
        pipe.execute()
    watcher.close()


def test_restore_asking_and_command_table(r: redis.Redis) -> None:
    r.set("k", "v")
    payload = r.dump("k")
    assert r.execute_command("RESTORE-ASKING", "k2", 0, payload) == b"OK"
    assert r.get("k2") == b"v"
    info = r.execute_command("COMMAND", "INFO", "migrate")["migrate"]
    assert "movablekeys" in info["flags"]
    assert r.command_getkeys("MIGRATE", "h", "1", "", "0", "5", "KEYS", "a", "b") == ["a", "b"]
    assert r.command_getkeys("MIGRATE", "h", "1", "k", "0", "5", "AUTH", "KEYS", "COPY") == ["k"]
    for name, arity in (("dump", 2), ("restore", -4), ("restore-asking", -4), ("migrate", -6)):
        assert r.execute_command("COMMAND", "INFO", name)[name]["arity"] == arity


def test_function_dump_restore_shares_the_codec(r: redis.Redis) -> None:
    code = "#!lua name=lib\nredis.register_function('f', function() return 1 end)" + "--" * 40
    r.function_load(code)
    payload = r.function_dump()
    r.function_flush()
    assert r.function_restore(payload)
    assert r.fcall("f", 0) == 1


# -- Redis's literal payloads ----------------------------------------------------------------


LEGACY_STREAM = (
    b"\x0F\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\xC3\x40\x4A"
    b"\x40\x57\x16\x57\x00\x00\x00\x23\x00\x02\x01\x04\x01\x01\x01\x84\x64\x61\x74\x61\x05\x00"
    b"\x01\x03\x01\x00\x20\x01\x03\x81\x61\x02\x04\x20\x0A\x00\x01\x40\x0A\x00\x62\x60\x0A\x00"
    b"\x02\x40\x0A\x00\x63\x60\x0A\x40\x22\x01\x81\x64\x20\x0A\x40\x39\x20\x0A\x00\x65\x60\x0A"
    b"\x00\x05\x40\x0A\x00\x66\x20\x0A\x00\xFF\x02\x06\x00\x02\x02\x67\x31\x05\x00\x04\x00\x00"
    b"\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00"
    b"\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A"
    b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7"
    b"\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"
    b"\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x01\x03\x63\x31\x31\x3E\xF7\x83\x43\x7A\x01\x00"
    b"\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    b"\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00"
    b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00"
    b"\x02\x67\x32\x00\x00\x00\x00\x09\x00\x3D\x52\xEF\x68\x67\x52\x1D\xFA")


def test_legacy_stream_payload(r: redis.Redis) -> None:
    """stream-cgroups.tcl: a v1 stream payload (RDB 9) with a compressed listpack."""
    assert r.restore("x", 0, LEGACY_STREAM)
    info = r.xinfo_stream("x", full=True)
    assert info["max-deleted-entry-id"] == b"0-0"
    assert info["entries-added"] == 2
    assert [(g["entries-read"], g["lag"]) for g in info["groups"]] == [(1, 1), (0, 2)]
    assert r.xrange("x") == [(b"5-0", {b"data": b"e"}), (b"6-0", {b"data": b"f"})]


# -- across servers --------------------------------------------------------------------------


@pytest.fixture
def pair(brook: ServerProcess, redis_process: ServerProcess | None
         ) -> tuple[redis.Redis, redis.Redis]:
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    real = redis_process.client()
    real.flushall()
    return brook.client(), real


@pytest.mark.parametrize("direction", ["redis-to-brook", "brook-to-redis"])
def test_across_servers(pair: tuple[redis.Redis, redis.Redis], redis_process: ServerProcess,
                        direction: str) -> None:
    brook, real = pair
    source, target = (real, brook) if direction == "redis-to-brook" else (brook, real)
    version = redis_process.version
    for name, fill in VALUES.items():
        fill(source, name)
        source.pexpire(name, 100_000)
        payload = source.dump(name)
        target.restore(name, source.pttl(name), payload)
        assert contents(target, name) == contents(source, name), name
        kind = source.type(name)
        assert comparable_encoding(version, kind, encoding(target, name)) == \
            comparable_encoding(version, kind, encoding(source, name)), name
        assert 90_000 < target.pttl(name) <= 100_000
    brook.close()
    real.close()


# -- corrupt payloads ------------------------------------------------------------------------


def _with_crc(body: bytes) -> bytes:
    return body + crc64(body).to_bytes(8, "little")


def _valid_read(r: redis.Redis, key: str) -> None:
    """Every read of a restored key works (the value is whole)."""
    kind = r.type(key).decode()
    contents(r, key)
    r.object("encoding", key)
    if kind == "list":
        r.lindex(key, -1)
        r.lpos(key, "nothing")
    elif kind == "zset":
        r.zrangebyscore(key, "-inf", "+inf")
        r.zrank(key, "a")
    elif kind == "stream":
        r.xrevrange(key)
        for group in r.xinfo_groups(key):
            r.xpending_range(key, group["name"], "-", "+", 100)
            r.xautoclaim(key, group["name"], "z", 0, "0-0")
    r.dump(key)


SWEPT = ["string-compressible", "list-small", "set-intset", "set-listpack", "zset-listpack",
         "zset-skiplist", "hash-listpack", "hash-hashtable", "stream"]


@pytest.mark.parametrize("name", SWEPT)
def test_corruption_sweep(brook: ServerProcess, name: str) -> None:
    """Every byte of the object flipped (with a right CRC, so the decoder sees it) and every
    truncation: an error or a whole value, and the server keeps answering."""
    r = brook.client()
    small = {"stream": lambda c, k: (c.xadd(k, {"a": 1, "bb": "x"}, id="1-1"),
                                     c.xadd(k, {"a": 2, "bb": "y"}, id="2-1"),
                                     c.xadd(k, {"q": 3}, id="3-0"), c.xdel(k, "2-1"),
                                     c.xgroup_create(k, "g", "0"),
                                     c.xreadgroup("g", "c", {k: ">"}, count=1)),
             "zset-skiplist": lambda c, k: c.zadd(k, {f"m{i}": i / 3 for i in range(40)}),
             "hash-hashtable": lambda c, k: c.hset(k, mapping={"f": "v" * 80, "g": 1})}
    small.get(name, VALUES[name])(r, "src")
    payload = r.dump("src")
    body, footer = payload[:-8], payload[-10:-8]
    for pos in range(len(body) - 2):
        for flip in (0x01, 0x80, 0xFF):
            corrupt = bytearray(body)
            corrupt[pos] ^= flip
            _try(r, _with_crc(bytes(corrupt)))
    for cut in range(len(body) - 2):
        _try(r, _with_crc(body[:cut] + footer))
    assert r.ping()
    r.close()


def _try(r: redis.Redis, payload: bytes) -> None:
    try:
        r.restore("k", 0, payload, replace=True)
    except redis.ResponseError as error:
        assert str(error) in ("Bad data format", "DUMP payload version or checksum are wrong")
        assert r.exists("k") == 0 or r.type("k") is not None
        return
    _valid_read(r, "k")


# -- MIGRATE ---------------------------------------------------------------------------------


@pytest.fixture
def target(server: ServerProcess, brook_process: ServerProcess,
           redis_process: ServerProcess | None) -> Iterator[redis.Redis]:
    """The other server: MIGRATE from Brook goes to Redis and the other way round."""
    other = redis_process if server.kind == "brook" else brook_process
    if other is None:
        pytest.skip("redis-server is not installed")
    client = other.client()
    client.flushall()
    yield client
    client.flushall()
    client.close()


def test_migrate(r: redis.Redis, target: redis.Redis) -> None:
    host, port = target.connection_pool.connection_kwargs["host"], \
        target.connection_pool.connection_kwargs["port"]
    r.set("k", "v")
    r.pexpire("k", 50_000)
    r.rpush("l", 1, 2, 3)
    r.zadd("z", {"a": 1.5})
    assert r.execute_command("MIGRATE", host, port, "k", 0, 1000) == b"OK"
    assert r.exists("k") == 0
    assert target.get("k") == b"v"
    assert 40_000 < target.pttl("k") <= 50_000
    assert r.execute_command("MIGRATE", host, port, "", 3, 1000, "COPY", "KEYS", "l", "z",
                             "nope") == b"OK"
    assert r.exists("l", "z") == 2
    target.select(3)
    assert target.lrange("l", 0, -1) == [b"1", b"2", b"3"]
    assert target.zscore("z", "a") == 1.5
    assert error_of(r, "MIGRATE", host, port, "", 3, 1000, "KEYS", "l") == \
        "Target instance replied with error: BUSYKEY Target key name already exists."
    assert r.exists("l") == 1
    assert r.execute_command("MIGRATE", host, port, "nokey", 3, 1000) == b"NOKEY"
    assert error_of(r, "MIGRATE", host, port, "l", 3, 1000, "KEYS", "a") == \
        "When using MIGRATE KEYS option, the key argument must be set to the empty string"
    assert error_of(r, "MIGRATE", host, port, "l", 3, 1000, "bogus") == "syntax error"
    assert error_of(r, "MIGRATE", host, port, "l", "x", 1000) == \
        "value is not an integer or out of range"
    assert r.execute_command("MIGRATE", host, port, "", 3, 1000, "REPLACE", "KEYS", "l") == \
        b"OK"
    assert r.exists("l") == 0
    assert r.info("stats")["migrate_cached_sockets"] == 1
    target.select(0)


def test_migrate_unreachable_target(r: redis.Redis) -> None:
    r.set("k", "v")
    assert error_of(r, "MIGRATE", "127.0.0.1", 1, "k", 0, 500) == \
        "IOERR error or timeout writing to target instance"  # a refused connection
    assert r.get("k") == b"v"


# -- hashes with field expiry (Redis 7.4+) ---------------------------------------------------


def _hash_payload(kind: int, fields: list[tuple[bytes, bytes, int]]) -> bytes:
    """A type 24 (table) or 25 (listpack) hash payload, RDB 12, with per-field expiry times
    (0: none), laid out as Redis 7.4 writes them."""
    minimum = min((when for _, _, when in fields if when), default=0)
    head = bytes((kind,)) + strings.millisecond_time(minimum)
    if kind == 25:
        entries = [listpack_entry(item) for field, value, when in fields
                   for item in (field, value, when)]
        body = head + strings.plain_string(listpack_of(entries, len(entries)))
    else:
        body = head + strings.length(len(fields)) + b"".join(
            strings.length(when - minimum + 1 if when else 0) + strings.plain_string(field)
            + strings.plain_string(value) for field, value, when in fields)
    return wrap(body, 12)


@pytest.mark.parametrize("kind", [24, 25])
def test_hash_field_expiry_payloads(brook: ServerProcess, kind: int) -> None:
    """Fields without a TTL load, fields already expired are dropped, and a field whose TTL
    is still to come makes the payload refused (Brook cannot hold it; decode's docstring)."""
    r = brook.client()
    now = int(time.time() * 1000)
    assert r.restore("plain", 0, _hash_payload(kind, [(b"a", b"1", 0), (b"b", b"2", 0)]))
    assert r.hgetall("plain") == {b"a": b"1", b"b": b"2"}
    assert r.restore("gone", 0, _hash_payload(kind, [(b"a", b"1", now - 5000),
                                                     (b"b", b"2", 0)]))
    assert r.hgetall("gone") == {b"b": b"2"}
    assert error_of(r, "RESTORE", "future", 0, _hash_payload(
        kind, [(b"a", b"1", now + 60_000), (b"b", b"2", 0)])) == "Bad data format"
    # every field expired: OK, and no key (Redis stores it and drops it at once)
    assert r.restore("empty", 0, _hash_payload(kind, [(b"a", b"1", now - 5000)]))
    assert r.exists("future", "empty") == 0
    r.close()


# -- the older encodings (RDB 9 and before), built byte by byte ------------------------------


def _ziplist(items: list[bytes | int]) -> bytes:
    """A ziplist (RDB < 10) of strings and integers, each in the encoding its size calls for."""
    body = b""
    previous = 0
    last = 10
    for item in items:
        prevlen = bytes((previous,)) if previous < 254 else b"\xfe" + previous.to_bytes(4, "little")
        if isinstance(item, int):
            if 0 <= item <= 12:
                encoded = bytes((0xF1 + item,))
            elif -128 <= item < 128:
                encoded = b"\xfe" + item.to_bytes(1, "little", signed=True)
            elif -32768 <= item < 32768:
                encoded = b"\xc0" + item.to_bytes(2, "little", signed=True)
            elif -(1 << 23) <= item < 1 << 23:
                encoded = b"\xf0" + item.to_bytes(3, "little", signed=True)
            elif -(1 << 31) <= item < 1 << 31:
                encoded = b"\xd0" + item.to_bytes(4, "little", signed=True)
            else:
                encoded = b"\xe0" + item.to_bytes(8, "little", signed=True)
        elif len(item) < 64:
            encoded = bytes((len(item),)) + item
        elif len(item) < 16384:
            encoded = bytes((0x40 | len(item) >> 8, len(item) & 0xFF)) + item
        else:
            encoded = b"\x80" + len(item).to_bytes(4, "big") + item
        entry = prevlen + encoded
        last = 10 + len(body)
        body += entry
        previous = len(entry)
    total = 11 + len(body)
    return (total.to_bytes(4, "little") + last.to_bytes(4, "little")
            + len(items).to_bytes(2, "little") + body + b"\xff")


def _zipmap(pairs: list[tuple[bytes, bytes]]) -> bytes:
    out = bytes((len(pairs),))
    for field, value in pairs:
        out += bytes((len(field),)) + field + bytes((len(value),)) + b"\x00" + value
    return out + b"\xff"


def _rdb9(body: bytes) -> bytes:
    data = body + (9).to_bytes(2, "little")
    return data + crc64(data).to_bytes(8, "little")


def _s(data: bytes) -> bytes:
    return strings.plain_string(data)


ZL_ITEMS: list[bytes | int] = [b"a", 0, 12, 127, -128, 32767, -70000, 2**31 - 1, 2**40, -(2**63),
                               b"x" * 70, b"y" * 20000]
ZL_TEXT = [b"a", b"0", b"12", b"127", b"-128", b"32767", b"-70000", b"2147483647",
           b"1099511627776", b"-9223372036854775808", b"x" * 70, b"y" * 20000]

OLD_PAYLOADS: dict[str, tuple[bytes, str, object]] = {
    "list-linked": (_rdb9(b"\x01\x03" + _s(b"a") + strings.string(b"123") + _s(b"c" * 30)),
                    "list", [b"a", b"123", b"c" * 30]),
    "list-ziplist": (_rdb9(b"\x0a" + _s(_ziplist(ZL_ITEMS))), "list", ZL_TEXT),
    "list-quicklist": (_rdb9(b"\x0e\x02" + _s(_ziplist(ZL_ITEMS[:5]))
                             + _s(_ziplist(ZL_ITEMS[5:]))), "list", ZL_TEXT),
    "set-table": (_rdb9(b"\x02\x03" + _s(b"a") + _s(b"b") + strings.string(b"7")), "set",
                  [b"7", b"a", b"b"]),
    "set-intset": (_rdb9(b"\x0b" + _s(b"\x04\x00\x00\x00\x03\x00\x00\x00"
                                      + b"".join(v.to_bytes(4, "little", signed=True)
                                                 for v in (-5, 3, 70000)))),
                   "set", [b"-5", b"3", b"70000"]),
    "zset-string-scores": (_rdb9(b"\x03\x04" + _s(b"a") + b"\x031.5" + _s(b"b") + b"\xfe"
                                 + _s(b"c") + b"\xff" + _s(b"d") + b"\x04-0.5"), "zset",
                           [(b"c", float("-inf")), (b"d", -0.5), (b"a", 1.5),
                            (b"b", float("inf"))]),
    "zset-binary-scores": (_rdb9(b"\x05\x02" + _s(b"a") + strings.binary_double(2.25)
                                 + _s(b"b") + strings.binary_double(-1e300)), "zset",
                           [(b"b", -1e300), (b"a", 2.25)]),
    "zset-ziplist": (_rdb9(b"\x0c" + _s(_ziplist([b"c", b"-inf", b"a", b"1.5", b"b", 3]))),
                     "zset", [(b"c", float("-inf")), (b"a", 1.5), (b"b", 3.0)]),
    "hash-table": (_rdb9(b"\x04\x02" + _s(b"f") + _s(b"v") + _s(b"n") + strings.string(b"-9")),
                   "hash", {b"f": b"v", b"n": b"-9"}),
    "hash-zipmap": (_rdb9(b"\x09" + _s(_zipmap([(b"f", b"v"), (b"g", b"12")]))), "hash",
                    {b"f": b"v", b"g": b"12"}),
    "hash-ziplist": (_rdb9(b"\x0d" + _s(_ziplist([b"f", b"v", b"n", 300]))), "hash",
                     {b"f": b"v", b"n": b"300"}),
}


@pytest.mark.parametrize("name", sorted(OLD_PAYLOADS))
def test_older_encodings(r: redis.Redis, name: str) -> None:
    """Payloads in the encodings Redis wrote before 7.0 restore, on Brook as on Redis."""
    payload, kind, expected = OLD_PAYLOADS[name]
    assert r.restore("k", 0, payload)
    assert r.type("k").decode() == kind
    assert contents(r, "k") == expected
    if kind in ("hash", "zset"):
        assert r.object("encoding", "k") == b"listpack"
    assert r.restore("k2", 0, r.dump("k"))
    assert contents(r, "k2") == expected


@pytest.mark.min_redis(7, 2)
def test_a_ziplist_list_stays_a_quicklist(r: redis.Redis) -> None:
    """Redis 7.2+ converts every loaded list to a listpack when it fits, but the old ziplist
    type; that one becomes a listpack on its first removal (7.0: always quicklist)."""
    r.restore("k", 0, _rdb9(b"\x0a" + _s(_ziplist([b"a", 1, 2]))))
    assert r.object("encoding", "k") == b"quicklist"
    r.rpush("k", "x")
    assert r.object("encoding", "k") == b"quicklist"
    r.lpop("k")
    assert r.object("encoding", "k") == b"listpack"
    assert r.lrange("k", 0, -1) == [b"1", b"2", b"x"]


def test_migrate_credentials_are_redacted(r: redis.Redis) -> None:
    r.config_set("slowlog-log-slower-than", 0)
    r.slowlog_reset()
    r.set("k", "v")
    error_of(r, "MIGRATE", "127.0.0.1", 1, "k", 0, 100, "AUTH2", "user", "secret")
    error_of(r, "MIGRATE", "127.0.0.1", 1, "k", 0, 100, "COPY", "AUTH", "secret")
    entries = [entry["command"] for entry in r.slowlog_get(10)]
    assert b"MIGRATE 127.0.0.1 1 k 0 100 COPY AUTH (redacted)" in entries
    assert b"MIGRATE 127.0.0.1 1 k 0 100 AUTH2 (redacted) (redacted)" in entries


def test_a_restored_stream_behaves_as_its_original(r: redis.Redis) -> None:
    """The same commands on a stream and on its restored copy give the same replies (node
    boundaries come from the payload: trims by whole nodes agree too)."""
    fill_stream(r, "original")
    r.restore("restored", 0, r.dump("original"))
    steps = [
        ("XADD", "{}", "500-0", "f", "v"), ("XDEL", "{}", "7-1", "8-1", "500-0"),
        ("XTRIM", "{}", "MAXLEN", "~", "150"), ("XLEN", "{}"), ("XRANGE", "{}", "-", "+", "COUNT", "5"),
        ("XREVRANGE", "{}", "+", "-", "COUNT", "5"),
        ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "{}", ">"),
        ("XPENDING", "{}", "g1", "-", "+", "10"), ("XACK", "{}", "g1", "1-1", "3-1"),
        ("XCLAIM", "{}", "g1", "bob", "0", "4-1", "JUSTID"),
        ("XAUTOCLAIM", "{}", "g1", "carol", "0", "0-0", "COUNT", "2", "JUSTID"),
        ("XINFO", "GROUPS", "{}"), ("XTRIM", "{}", "MINID", "200"), ("XLEN", "{}"),
    ]
    for step in steps:
        replies = []
        for key in ("original", "restored"):
            reply = run(r, *[arg.format(key) for arg in step])
            if step[0] == "XPENDING":  # idle times: the two reads are a moment apart
                reply = [[entry_id, owner, 0, count] for entry_id, owner, _, count in reply]
            replies.append(_renamed(reply, key.encode()))
        assert replies[0] == replies[1], step
    assert contents(r, "original") == contents(r, "restored")


def _renamed(reply: object, key: bytes) -> object:
    """``reply`` with the key's name replaced, to compare replies about two keys."""
    if reply == key:
        return b"<key>"
    if isinstance(reply, list):
        return [_renamed(item, key) for item in reply]
    if isinstance(reply, tuple):
        return tuple(_renamed(item, key) for item in reply)
    if isinstance(reply, dict):
        return {_renamed(k, key): _renamed(v, key) for k, v in reply.items()}
    return reply


def test_function_payloads_across_servers(pair: tuple[redis.Redis, redis.Redis]) -> None:
    brook, real = pair
    code = "#!lua name=lib\nredis.register_function('f', function() return 7 end)" + " " * 200
    for source, target in ((brook, real), (real, brook)):
        source.function_flush()
        target.function_flush()
        source.function_load(code)
        assert target.function_restore(source.function_dump())
        assert target.fcall("f", 0) == 7
    brook.function_flush()
    real.function_flush()
    brook.close()
    real.close()
