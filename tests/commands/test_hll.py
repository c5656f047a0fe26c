"""HyperLogLog commands (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST): parity with Redis for
the bytes of the values, the estimates, error texts, notifications, WATCH and dirty counts.

An HLL is a string whose bytes GET shows, replicas and the AOF carry: after the same commands
the string must be Redis's byte for byte. The differential tests (``pair``) run the same
commands on Brook and on real Redis side by side and compare every reply and the values; the
``r`` tests run once against each. Corrupted values are those of Redis's own unit/hyperloglog
(a tail appended, a broken magic, a bad encoding, a dense value of the wrong length, random
bytes overwritten) and hand-made sparse opcodes that do not add up to 16384 registers.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import redis

from brook.types import hll
from tests.conftest import WRONGTYPE, ServerProcess, _reset

NOT_AN_HLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPTED = "INVALIDOBJ Corrupted HLL object detected"


@pytest.fixture
def pair(brook_process: ServerProcess,
         redis_process: ServerProcess | None) -> Iterator[tuple[redis.Redis, redis.Redis]]:
    """Clients of Brook and of real Redis, both emptied, hll-sparse-max-bytes restored after."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    _reset(brook_process)
    _reset(redis_process)
    ours, theirs = brook_process.client(), redis_process.client()
    yield ours, theirs
    for client in (ours, theirs):
        client.config_set("hll-sparse-max-bytes", "3000")
        client.close()


def _reply(client: redis.Redis, *command: object) -> object:
    try:
        return client.execute_command(*command)
    except redis.ResponseError as error:
        return ("error", str(error))


def _same(pair: tuple[redis.Redis, redis.Redis], *command: object) -> object:
    ours, theirs = pair
    mine, real = _reply(ours, *command), _reply(theirs, *command)
    assert mine == real, command[:3]
    return mine


def _elements(rng: random.Random, count: int) -> list[bytes]:
    return [rng.choice((b"%d" % rng.getrandbits(40), b"e:%f" % rng.random(),
                        rng.randbytes(rng.randrange(0, 24)))) for _ in range(count)]


def _add(pair: tuple[redis.Redis, redis.Redis], key: str, elements: list[bytes],
         batch: int) -> None:
    for start in range(0, len(elements), batch):
        _same(pair, "PFADD", key, *elements[start:start + batch])


# ---------------------------------------------------------------------------------------------
# The representation itself.
# ---------------------------------------------------------------------------------------------


def test_murmur64a_seed_and_tails() -> None:
    """MurmurHash64A seeds with Redis's constant and tells apart every tail length; that its
    values are Redis's is checked through the registers PFADD sets on real Redis
    (test_single_element_sets_its_register) and the byte-for-byte tests."""
    assert hll.murmur64a(b"") == hll.murmur64a(b"", hll.SEED)
    assert hll.murmur64a(b"abcdefgh") != hll.murmur64a(b"abcdefgi")
    assert len({hll.murmur64a(bytes(n)) for n in range(20)}) == 20


def test_dense_raw_round_trip() -> None:
    rng = random.Random(5)
    raw = bytes(rng.getrandbits(6) for _ in range(hll.REGISTERS))
    value = bytearray(b"HYLL" + bytes(hll.DENSE_SIZE - 4))
    hll.set_raw(value, raw, 3000)
    assert hll.raw_registers(value) == raw
    assert len(value) == hll.DENSE_SIZE


def test_single_element_sets_its_register(r: redis.Redis) -> None:
    """The register and value an element gets are Redis's (hash, seed, 14/50 split)."""
    for element in (b"", b"a", b"hello world", b"x" * 8, b"y" * 17, bytes(range(256))):
        r.delete("h")
        r.pfadd("h", element)
        index, count = hll.pattern(element)
        registers = r.execute_command("PFDEBUG", "GETREG", "h")
        assert registers[index] == count
        assert sum(1 for value in registers if value) == 1


# ---------------------------------------------------------------------------------------------
# Byte-for-byte parity.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 2, 3, 10, 50, 100, 250, 500, 800, 1000, 1500, 2000,
                                  3000, 5000, 20000, 200000])
def test_values_identical_after_the_same_adds(pair, size: int) -> None:
    """Across the sparse to dense limit: the same PFADDs leave the same string, and PFCOUNT
    (which writes its cache into the string) gives the same count and bytes."""
    rng = random.Random(size)
    elements = _elements(rng, size)
    batch = 1000 if size > 5000 else rng.choice((1, 7, 100))
    if size == 0:
        _same(pair, "PFADD", "h")
    _add(pair, "h", elements, batch)
    ours, theirs = pair
    assert ours.get("h") == theirs.get("h")
    _same(pair, "PFCOUNT", "h")
    assert ours.get("h") == theirs.get("h")
    _same(pair, "PFDEBUG", "ENCODING", "h")
    _same(pair, "PFADD", "h", *elements[:50])  # nothing new
    assert ours.get("h") == theirs.get("h")


@pytest.mark.parametrize("limit", [0, 1, 17, 100, 500, 2000, 10000])
def test_sparse_limit_respected(pair, limit: int) -> None:
    _same(pair, "CONFIG", "SET", "hll-sparse-max-bytes", str(limit))
    rng = random.Random(limit)
    for step in range(30):
        _add(pair, "h", _elements(rng, 10 * step), 10)
        _same(pair, "GET", "h")
        _same(pair, "PFDEBUG", "ENCODING", "h")


def test_values_move_between_servers(pair) -> None:
    """A value Redis made counts the same on Brook and the other way round, for both encodings
    and a stale cache."""
    ours, theirs = pair
    rng = random.Random(7)
    for size in (1, 100, 1200, 30000):
        elements = _elements(rng, size)
        for start in range(0, size, 500):
            theirs.pfadd("from-redis", *elements[start:start + 500])
            ours.pfadd("from-brook", *elements[start:start + 500])
        made_by_redis, made_by_brook = theirs.get("from-redis"), ours.get("from-brook")
        assert made_by_redis == made_by_brook
        ours.set("copy", made_by_redis)
        theirs.set("copy", made_by_brook)
        _same(pair, "PFCOUNT", "copy")
        _same(pair, "GET", "copy")
        _same(pair, "PFADD", "copy", "one more", "and another")
        _same(pair, "GET", "copy")
        for client in pair:
            client.delete("from-redis", "from-brook", "copy")


def test_merges_identical(pair) -> None:
    rng = random.Random(11)
    sizes = {"s0": 0, "s1": 3, "s2": 400, "d1": 5000, "d2": 40000}
    for key, size in sizes.items():
        _same(pair, "PFADD", key)
        _add(pair, key, _elements(rng, size), 1000)
    _same(pair, "PFMERGE", "m1", "s1", "s2")  # sparse into a new sparse key
    _same(pair, "PFMERGE", "m2", "s2", "d1")  # a dense input: the result is dense
    _same(pair, "PFMERGE", "s1", "s2")  # into an existing sparse key
    _same(pair, "PFMERGE", "s0", "d2", "nosuchkey")
    _same(pair, "PFMERGE", "m3")  # no sources: an empty HLL
    _same(pair, "PFMERGE", "m4", "nosuchkey")
    _same(pair, "PFMERGE", "d1", "d2", "s2")
    _same(pair, "PFMERGE", "s2")  # the destination alone: its cache goes stale
    for key in ("m1", "m2", "m3", "m4", "s0", "s1", "s2", "d1"):
        _same(pair, "GET", key)
        _same(pair, "PFCOUNT", key)
        _same(pair, "GET", key)
    _same(pair, "PFCOUNT", "s1", "s2", "d1", "d2", "nosuchkey")


def test_pfdebug_identical(pair) -> None:
    rng = random.Random(13)
    _add(pair, "sparse", _elements(rng, 300), 50)
    _add(pair, "dense", _elements(rng, 9000), 1000)
    for sub in ("ENCODING", "DECODE", "decode", "GETREG", "encoding", "TODENSE", "todense",
                "DECODE", "nope"):
        for key in ("sparse", "dense", "missing"):
            _same(pair, "PFDEBUG", sub, key)
            _same(pair, "GET", key)
    _same(pair, "PFDEBUG", "GETREG", "dense", "extra")
    _same(pair, "PFDEBUG", "GETREG")
    _same(pair, "SET", "str", "x")
    _same(pair, "PFDEBUG", "GETREG", "str")
    _same(pair, "LPUSH", "list", "x")
    _same(pair, "PFDEBUG", "GETREG", "list")


# ---------------------------------------------------------------------------------------------
# Errors and corrupted values.
# ---------------------------------------------------------------------------------------------


def test_type_errors(pair) -> None:
    _same(pair, "SET", "str", "bar")
    _same(pair, "SET", "int", "12345")
    _same(pair, "LPUSH", "list", "x")
    _same(pair, "PFADD", "ok", "a")
    for key in ("str", "int", "list"):
        assert _same(pair, "PFADD", key, "a") in (("error", NOT_AN_HLL), ("error", WRONGTYPE))
        _same(pair, "PFCOUNT", key)
        _same(pair, "PFCOUNT", "ok", key)
        _same(pair, "PFMERGE", key, "ok")
        _same(pair, "PFMERGE", "ok", key)
        _same(pair, "PFMERGE", "dest", key)
        _same(pair, "EXISTS", "dest")
    for command in (("PFADD",), ("PFCOUNT",), ("PFMERGE",), ("PFSELFTEST", "x"),
                    ("PFDEBUG", "GETREG")):
        _same(pair, *command)


def _corruptions(base: bytes, newest: bool) -> list[bytes]:
    """Redis's corruption tests' values, and sparse opcodes that do not add up. Redis 7.0
    refused a sparse value with a VAL run past the last register everywhere; the newest
    merges and converts the registers before it (PFCOUNT of that key alone refuses it)."""
    header = base[:16]
    past_the_end = [header + b"\x7f\xfe\xfc\xfc", header + b"\x7f\xfe\xfc\xfc\x84",
                    header + b"\x7f\xfe\xfc\x00"] if newest else []
    return past_the_end + [
        base + b"hello",
        b"0123" + base[4:],
        base[:4] + b"x" + base[5:],
        header[:4] + b"\x00" + header[5:] + base[16:],
        header[:4] + b"\x00" + header[5:] + bytes(12287),
        header[:4] + b"\x00" + header[5:] + bytes(12289),
        header,
        header + b"\x7f\xff\x7f\xff",  # two XZEROs of 16384
        header + b"\x7f\xfe",  # 16383 registers
        header + b"\x7f",  # an XZERO cut short
        header + b"\x7f\xfe\xfc",  # 16383 zeros, then one register of 32
        header + b"\x00" * 10,
        header + b"\x40\x00" * 5 + b"\x7f",
        header + b"\xff" * 4096 + b"\x00",
        b"HYLL\x02" + bytes(11),
        b"HYL",
        b"",
    ]


def test_corrupted_values_refused_identically(pair, redis_process: ServerProcess) -> None:
    newest = redis_process.version >= (7, 2)
    rng = random.Random(17)
    _add(pair, "base", _elements(rng, 40), 10)
    sparse = pair[1].get("base")
    _add(pair, "dense", _elements(rng, 8000), 1000)
    dense = pair[1].get("dense")
    for value in _corruptions(sparse, newest) + _corruptions(dense, newest)[:4]:
        for command in (("PFCOUNT", "h"), ("PFADD", "h", "a", "b", "c", "d"),
                        ("PFCOUNT", "h", "base"), ("PFMERGE", "out", "h"),
                        ("PFMERGE", "h", "base"), ("PFDEBUG", "TODENSE", "h"),
                        ("PFDEBUG", "DECODE", "h"), ("PFDEBUG", "GETREG", "h")):
            _same(pair, "SET", "h", value)
            _same(pair, *command)
            _same(pair, "GET", "h")
            _same(pair, "EXISTS", "out")
            _same(pair, "DEL", "out")


def test_random_byte_corruption_fuzz(pair) -> None:
    """Redis's "Fuzzing dense/sparse encoding" test, on both servers at once."""
    rng = random.Random(19)
    for _ in range(60):
        size = rng.choice((5, 50, 300, 2000, 6000))
        _same(pair, "DEL", "h")
        _add(pair, "h", _elements(rng, size), 500)
        length = len(pair[1].get("h"))
        for _ in range(rng.randrange(1, 4)):
            position = rng.randrange(length)
            _same(pair, "SETRANGE", "h", position, bytes((rng.getrandbits(8),)))
        command = rng.choice((("PFCOUNT", "h"), ("PFADD", "h", *_elements(rng, 20)),
                              ("PFMERGE", "h", "h"), ("PFCOUNT", "h", "h")))
        _same(pair, *command)
        _same(pair, "GET", "h")


# ---------------------------------------------------------------------------------------------
# Differential fuzz.
# ---------------------------------------------------------------------------------------------


def test_differential_fuzz(pair) -> None:
    """Seeded random PF* commands over a few keys: every reply and every final value equal."""
    rng = random.Random(23)
    keys = ["a", "b", "c", "d"]
    pool = _elements(rng, 30000)
    for step in range(3000):
        roll = rng.random()
        key = rng.choice(keys)
        if roll < 0.55:
            count = rng.choice((0, 1, 1, 3, 10, 60, 400))
            command: tuple[object, ...] = ("PFADD", key, *rng.sample(pool, count))
        elif roll < 0.75:
            command = ("PFCOUNT", *rng.sample(keys, rng.randrange(1, 4)))
        elif roll < 0.85:
            command = ("PFMERGE", key, *rng.sample(keys, rng.randrange(0, 3)))
        elif roll < 0.9:
            command = ("PFDEBUG", rng.choice(("ENCODING", "DECODE", "TODENSE")), key)
        elif roll < 0.93:
            command = ("DEL", key)
        elif roll < 0.96:
            command = ("CONFIG", "SET", "hll-sparse-max-bytes",
                       str(rng.choice((50, 300, 1000, 3000, 6000))))
        else:
            command = ("GET", key)
        _same(pair, *command)
        if step % 200 == 0:
            for name in keys:
                _same(pair, "GET", name)
    for name in keys:
        _same(pair, "GET", name)


# ---------------------------------------------------------------------------------------------
# Each server alone: replies, events, WATCH, dirty.
# ---------------------------------------------------------------------------------------------


def _changes(client: redis.Redis) -> int:
    return int(client.info("persistence")["rdb_changes_since_last_save"])


def test_pfadd_replies_and_creation(r: redis.Redis) -> None:
    assert r.pfadd("h") == 1
    assert r.exists("h") == 1
    assert r.get("h") == b"HYLL\x01" + bytes(10) + b"\x80\x7f\xff"  # the cache: stale
    assert r.pfcount("h") == 0
    assert r.get("h") == b"HYLL\x01" + bytes(11) + b"\x7f\xff"
    assert r.pfadd("h") == 0
    assert r.pfadd("h", "a", "b", "c") == 1
    assert r.pfadd("h", "a", "b") == 0
    assert r.pfadd("h", "") == 1
    assert r.pfcount("h") == 4
    assert r.pfcount("missing") == 0
    assert r.type("h") == b"string"


def test_estimates_known_sets(r: redis.Redis) -> None:
    for size in (10, 1000, 100000):
        r.delete("h")
        for start in range(0, size, 5000):
            r.pfadd("h", *range(start, min(size, start + 5000)))
        estimate = r.pfcount("h")
        assert abs(estimate - size) <= max(1, size * 0.05)
    assert r.pfcount("h", "h") == r.pfcount("h")


def test_cache_and_dirty(r: redis.Redis) -> None:
    """PFCOUNT writes the cached count into the value (one change, not a keyspace event);
    a valid cache is read without a change; PFADD counts a change per changed register."""
    r.pfadd("h", "a", "b", "c")
    value = r.get("h")
    assert value[15] & 0x80  # the cache is stale
    before = _changes(r)
    assert r.pfcount("h") == 3
    assert _changes(r) == before + 1
    assert r.get("h")[8:16] == (3).to_bytes(8, "little")
    assert r.pfcount("h") == 3
    assert _changes(r) == before + 1
    assert r.pfadd("h", "d", "e") == 1
    assert _changes(r) == before + 3
    assert r.pfcount("h", "missing") == 5
    assert _changes(r) == before + 3
    assert r.pfadd("h", "d") == 0
    assert _changes(r) == before + 3


def test_pfcount_cache_update_touches_watch(server: ServerProcess) -> None:
    watcher, other = server.client(), server.client()
    watcher.pfadd("h", "a")
    pipe = watcher.pipeline()
    pipe.watch("h")
    other.pfcount("h")  # refreshes the cache: the value changed
    pipe.multi()
    pipe.set("x", 1)
    with pytest.raises(redis.WatchError):
        pipe.execute()
    pipe.reset()
    pipe.watch("h")
    other.pfcount("h")  # the cache is valid now: nothing written
    pipe.multi()
    pipe.set("x", 1)
    assert pipe.execute() == [True]
    watcher.close()
    other.close()


def test_keyspace_events(server: ServerProcess) -> None:
    client = server.client()
    client.config_set("notify-keyspace-events", "KEA")
    pubsub = client.pubsub()
    pubsub.psubscribe("__key*__:*")
    pubsub.get_message(timeout=1)
    client.pfadd("h", "a")
    client.pfadd("h", "a")  # no change: no event
    client.pfcount("h")  # a cache refresh: no event
    client.pfmerge("m", "h")
    client.execute_command("PFDEBUG", "TODENSE", "h")
    client.set("end", 1)
    events = []
    while True:
        message = pubsub.get_message(timeout=1)
        if message is None:
            break
        if message["type"] == "pmessage":
            events.append((message["channel"], message["data"]))
        if message["data"] == b"end":
            break
    assert events == [
        (b"__keyspace@0__:h", b"pfadd"), (b"__keyevent@0__:pfadd", b"h"),
        (b"__keyspace@0__:m", b"pfadd"), (b"__keyevent@0__:pfadd", b"m"),
        (b"__keyspace@0__:end", b"set"), (b"__keyevent@0__:set", b"end"),
    ]
    client.config_set("notify-keyspace-events", "")
    pubsub.close()
    client.close()


def test_pfdebug_errors(r: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="^The specified key does not exist$"):
        r.execute_command("PFDEBUG", "GETREG", "missing")
    r.pfadd("h", "a")
    with pytest.raises(redis.ResponseError, match="^Unknown PFDEBUG subcommand 'what'$"):
        r.execute_command("PFDEBUG", "what", "h")
    assert r.execute_command("PFDEBUG", "DECODE", "h").startswith(b"Z:")
    assert r.execute_command("PFDEBUG", "TODENSE", "h") == 1
    assert r.execute_command("PFDEBUG", "TODENSE", "h") == 0
    with pytest.raises(redis.ResponseError, match="^HLL encoding is not sparse$"):
        r.execute_command("PFDEBUG", "DECODE", "h")
    assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"dense"
    assert len(r.execute_command("PFDEBUG", "GETREG", "h")) == 16384


def test_errors_have_their_codes(r: redis.Redis) -> None:
    r.set("h", "not an hll")
    with pytest.raises(redis.ResponseError) as error:
        r.execute_command("PFCOUNT", "h")
    assert str(error.value) == NOT_AN_HLL
    r.set("h", b"HYLL\x01" + bytes(10) + b"\x80")  # no registers, and a stale cache
    with pytest.raises(redis.ResponseError) as error:
        r.execute_command("PFCOUNT", "h")
    assert str(error.value) == CORRUPTED
    stats = r.info("errorstats")
    assert "errorstat_WRONGTYPE" in stats and "errorstat_INVALIDOBJ" in stats


def test_pfselftest(r: redis.Redis) -> None:
    assert r.execute_command("PFSELFTEST") == b"OK"


def test_read_only_scripts_refuse_pfcount(r: redis.Redis) -> None:
    """PFCOUNT may write its cache (Redis flags it may_replicate): read-only scripts refuse it."""
    r.pfadd("h", "a")
    with pytest.raises(redis.ResponseError, match="^Write commands are not allowed from "
                                                  "read-only scripts"):
        r.eval_ro("return redis.call('pfcount', KEYS[1])", 1, "h")
    assert r.eval("return redis.call('pfcount', KEYS[1])", 1, "h") == 1
    info = r.execute_command("COMMAND", "INFO", "pfcount")["pfcount"]
    assert [flag.decode() if isinstance(flag, bytes) else flag
            for flag in info["flags"]] == ["readonly"]  # may_replicate is not shown
