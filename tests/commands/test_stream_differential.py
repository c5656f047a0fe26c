"""Differential property test: random sequences of stream commands run against Brook and real
Redis side by side; every reply, and the stream's contents and metadata after every step, must
be identical.

This complements the model test of the pure structure (test_stream_type.py): here the whole
path is exercised (argument parsing, error texts, reply encoding) with tiny node limits set by
CONFIG SET, so that node sealing, approximate trimming of whole nodes and LIMIT all show.
"""

from __future__ import annotations

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ServerProcess, _reset

FIELDS = st.sampled_from([
    ["a", "1"], ["a", "2", "b", "3"], ["b", "x"], ["a", ""], ["", "v"], ["a", "1", "a", "2"],
])
MS = st.integers(0, 40)
SEQ = st.sampled_from(["0", "1", "2", "18446744073709551615", "*"])
ID = st.one_of(
    st.builds(lambda ms, seq: f"{ms}-{seq}", MS, st.sampled_from(["0", "1", "2", "7"])),
    st.builds(str, MS),
    st.sampled_from(["-", "+", "0-0", "bad", "18446744073709551615-18446744073709551615"]),
)
RANGE_ID = st.one_of(ID, st.builds(lambda i: "(" + i, ID))
THRESHOLD = st.one_of(st.builds(str, st.integers(0, 12)), st.builds(str, MS))
TRIM = st.tuples(
    st.sampled_from(["MAXLEN", "MINID"]),
    st.sampled_from([[], ["="], ["~"]]),
    THRESHOLD,
    st.sampled_from([[], [], ["LIMIT", "0"], ["LIMIT", "1"], ["LIMIT", "3"]]),
)


def _trim_args(trim: tuple[str, list[str], str, list[str]]) -> list[str]:
    strategy, operator, threshold, limit = trim
    return [strategy, *operator, threshold, *limit]


COMMANDS = st.one_of(
    st.builds(lambda ms, seq, f: ["XADD", "s", f"{ms}-{seq}", *f], MS, SEQ, FIELDS),
    st.builds(lambda ids: ["XDEL", "s", *ids], st.lists(ID, min_size=1, max_size=4)),
    st.builds(lambda trim: ["XTRIM", "s", *_trim_args(trim)], TRIM),
    st.builds(lambda i: ["XSETID", "s", i], ID),
    st.builds(lambda i, n, m: ["XSETID", "s", i, "ENTRIESADDED", n, "MAXDELETEDID", m],
              ID, st.sampled_from(["0", "3", "50"]), ID),
    st.builds(lambda a, b, c: ["XRANGE", "s", a, b, "COUNT", c], RANGE_ID, RANGE_ID,
              st.sampled_from(["0", "1", "3", "-1"])),
    st.builds(lambda a, b: ["XREVRANGE", "s", a, b], RANGE_ID, RANGE_ID),
    # XREAD's "+" is newer than the parity server (7.4): tested in test_streams.py.
    st.builds(lambda i, c: ["XREAD", "COUNT", c, "STREAMS", "s", i], ID.filter(lambda i: i != "+"),
              st.sampled_from(["0", "1", "2"])),
    st.builds(lambda n: ["CONFIG", "SET", "stream-node-max-entries", n],
              st.sampled_from(["1", "2", "3", "100"])),
    st.builds(lambda n: ["CONFIG", "SET", "stream-node-max-bytes", n],
              st.sampled_from(["0", "30", "4096"])),
    st.just(["DEL", "s"]),
    # Consumer groups: two groups, three consumers, so that PELs are shared and moved.
    st.builds(lambda g, i, mk: ["XGROUP", "CREATE", "s", g, i, *mk], st.sampled_from(["g", "h"]),
              st.one_of(ID, st.just("$")), st.sampled_from([[], ["MKSTREAM"]])),
    st.builds(lambda g, i: ["XGROUP", "SETID", "s", g, i], st.sampled_from(["g", "h"]),
              st.one_of(ID, st.just("$"))),
    st.builds(lambda g: ["XGROUP", "DESTROY", "s", g], st.sampled_from(["g", "h"])),
    st.builds(lambda c: ["XGROUP", "DELCONSUMER", "s", "g", c], st.sampled_from(["a", "b"])),
    st.builds(lambda g, c, n, noack, i: ["XREADGROUP", "GROUP", g, c, "COUNT", n, *noack,
                                         "STREAMS", "s", i],
              st.sampled_from(["g", "g", "h"]), st.sampled_from(["a", "b", "c"]),
              st.sampled_from(["1", "2", "5"]), st.sampled_from([[], [], ["NOACK"]]),
              st.one_of(st.just(">"), st.just(">"), st.just("0"), ID.filter(lambda i: i != "+"))),
    st.builds(lambda g, ids: ["XACK", "s", g, *ids], st.sampled_from(["g", "h"]),
              st.lists(ID, min_size=1, max_size=3)),
    st.builds(lambda c, ids, opts: ["XCLAIM", "s", "g", c, "0", *ids, *opts],
              st.sampled_from(["a", "b", "c"]), st.lists(ID, min_size=1, max_size=3),
              st.sampled_from([["JUSTID"], ["JUSTID", "FORCE"], ["RETRYCOUNT", "3", "JUSTID"]])),
    st.builds(lambda c, i, n: ["XAUTOCLAIM", "s", "g", c, "0", i, "COUNT", n, "JUSTID"],
              st.sampled_from(["a", "b", "c"]), st.sampled_from(["0", "-", "(1-0", "3"]),
              st.sampled_from(["1", "2", "10"])),
)

# XINFO STREAM fields that describe Brook's node index rather than Redis's radix tree.
IMPLEMENTATION_FIELDS = {b"radix-tree-keys", b"radix-tree-nodes"}


# Error texts that changed after Redis 7.0 (the installed parity server may be older): Brook
# speaks the newest version, so these are compared by meaning.
_SAME_MEANING = {
    "The ID specified in XSETID is smaller than current max_deleted_entry_id": "smaller",
    "The ID specified in XSETID is smaller than the target stream top item": "smaller",
    # 7.0 answered "ms-*" after seq 2^64-1 with the wrong text (no element is large here).
    "Elements are too large to be stored": "not-greater",
    "The ID specified in XADD is equal or smaller than the target stream top item":
        "not-greater",
}


def _raw(client: redis.Redis, *args: str) -> object:
    """A reply without redis-py's parsing (its XCLAIM/XAUTOCLAIM callbacks cannot read the
    JUSTID forms)."""
    connection = client.connection_pool.get_connection()
    try:
        connection.send_command(*args)
        return connection.read_response()
    finally:
        client.connection_pool.release(connection)


def _reply(client: redis.Redis, command: list[str]) -> object:
    try:
        if command[0] in ("XCLAIM", "XAUTOCLAIM"):
            return _raw(client, *command)
        return client.execute_command(*command)
    except redis.ResponseError as err:
        text = str(err)
        return ("error", _SAME_MEANING.get(text, text))


def _fragile_groups(client: redis.Redis) -> set[bytes]:
    """Groups whose lag bookkeeping Redis changed after 7.0 (8.0 PRs #13338, #13473, #13958):
    the group is behind the first entry or a tombstone, or the stream is empty. From then on
    the installed 7.0 server and Brook (newest behaviour) may count differently."""
    if not client.exists("s"):
        return set()
    info = client.xinfo_stream("s")
    first = _id_key(info["recorded-first-entry-id"].decode())
    deleted = _id_key(info["max-deleted-entry-id"].decode())
    fragile = set()
    for group in client.xinfo_groups("s"):
        last = _id_key(group["last-delivered-id"].decode())
        if not info["length"] or last < first or last < deleted:
            fragile.add(group["name"])
    return fragile


def _state(client: redis.Redis, tainted: set[bytes] = frozenset()) -> tuple[object, ...]:
    """Everything observable about the stream and its groups that does not depend on time:
    entries both ways, XINFO's metadata, each group's counters and lag, and its PEL (owner
    and delivery count)."""
    if not client.exists("s"):
        return ("absent",)
    info = client.execute_command("XINFO", "STREAM", "s", "FULL")
    fields = dict(zip(info[::2], info[1::2], strict=True))
    # Per-consumer details of FULL gained fields in 7.2 and carry times: compared below instead.
    kept = {key: value for key, value in fields.items() if key not in IMPLEMENTATION_FIELDS
            and key != b"groups" and not key.startswith((b"idmp", b"pids", b"iids"))}
    groups = client.xinfo_groups("s")
    for group in groups:
        # Since 7.2 XREADGROUP/XCLAIM/XAUTOCLAIM create the consumer even when they get nothing.
        del group["consumers"]
        if group["name"] in tainted:
            del group["lag"], group["entries-read"]
    pels = [(group["name"], client.xpending("s", group["name"]),
             [(p["message_id"], p["consumer"], p["times_delivered"])
              for p in client.xpending_range("s", group["name"], "-", "+", 1000)])
            for group in groups]
    return (client.xrange("s"), client.xrevrange("s"), client.xlen("s"), kept, groups, pels)


def _id_key(text: str) -> tuple[int, int] | None:
    ms, _, seq = text.partition("-")
    if not ms.isdigit() or (seq and not seq.isdigit()):
        return None
    return int(ms), int(seq or 0)


def _below_max_deleted(client: redis.Redis, command: list[str]) -> bool:
    """XSETID below max-deleted-entry-id: an error since Redis 7.2 (PR #11444), accepted by
    the 7.0 parity server."""
    if command[0] != "XSETID" or not client.exists("s"):
        return False
    target = _id_key(command[2])
    info = client.execute_command("XINFO", "STREAM", "s")
    fields = dict(zip(info[::2], info[1::2], strict=True))
    deleted = _id_key(fields[b"max-deleted-entry-id"].decode())
    return target is not None and deleted is not None and target < deleted


@pytest.fixture
def pair(brook_process: ServerProcess,
         redis_process: ServerProcess | None) -> tuple[redis.Redis, redis.Redis]:
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    return brook_process.client(), redis_process.client()


def _appends(clock: list[int]) -> st.SearchStrategy[list[str]]:
    """XADDs whose IDs mostly grow (``clock`` is the next millisecond), so that streams get
    long enough for several nodes, with or without trimming options."""
    def build(jump: int, seq: str, trim: tuple | None, fields: list[str]) -> list[str]:
        clock[0] += jump
        options = _trim_args(trim) if trim is not None else []
        return ["XADD", "s", *options, f"{clock[0]}-{seq}", *fields]
    return st.builds(build, st.sampled_from([0, 0, 1, 2]), st.sampled_from(["*", "*", "5"]),
                     st.one_of(st.none(), st.none(), TRIM), FIELDS)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), steps=st.integers(5, 60))
def test_random_stream_commands_match_redis(
    pair: tuple[redis.Redis, redis.Redis],
    brook_process: ServerProcess,
    redis_process: ServerProcess,
    data: st.DataObject,
    steps: int,
) -> None:
    clock = [1]
    appends = _appends(clock)
    commands = [data.draw(st.one_of(appends, appends, COMMANDS)) for _ in range(steps)]
    if data.draw(st.booleans()):  # most group commands need the group: often start with it
        commands.insert(0, ["XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"])
    brook, real = pair
    for proc in (brook_process, redis_process):
        _reset(proc)
    for client in (brook, real):
        client.config_set("stream-node-max-entries", 3)
    try:
        tainted: set[bytes] = set()
        for step, command in enumerate(commands):
            if _below_max_deleted(brook, command):
                continue  # Redis 7.0 accepted it; 7.2+ refuses it as Brook does
            ours, theirs = _reply(brook, command), _reply(real, command)
            assert ours == theirs, f"step {step}: {command}"
            if command[:2] in (["XGROUP", "CREATE"], ["XGROUP", "SETID"]):
                tainted.discard(command[3].encode())  # a fresh counter on both sides
            if command[0] == "DEL":
                tainted.clear()
            tainted |= _fragile_groups(brook)
            assert _state(brook, tainted) == _state(real, tainted), f"after step {step}: {command}"
    finally:
        for client in (brook, real):
            client.config_set("stream-node-max-entries", 100)
            client.config_set("stream-node-max-bytes", 4096)
