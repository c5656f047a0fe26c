"""Streams in the append-only file: every write is persisted as effects that replay to the
exact state (t_stream.c's propagation), whatever the clock or the node sizes say at replay.

Real Brook processes with ``appendonly yes`` build rich stream state, restart on the same
directory and must answer XINFO STREAM FULL, XPENDING, XINFO GROUPS / CONSUMERS and XRANGE
as before. Delivery times are persisted exactly; a consumer's seen-time and active-time are
not (Redis does not persist them either): after a restart they are the load time, never
earlier than before, which is what the checks below accept.
"""

from __future__ import annotations

import time
from pathlib import Path

import hiredis
import pytest

from tests.conftest import RawConnection, ServerProcess, start_brook

AOF_ARGS = ("--appendonly", "yes", "--appendfsync", "always", "--stream-node-max-entries", "4")

Reply = object


def aof_commands(path: Path) -> list[list[bytes]]:
    reader = hiredis.Reader()
    reader.feed(path.read_bytes())
    commands = []
    while (command := reader.gets()) is not False:
        commands.append([command[0].upper(), *command[1:]])
    return commands


def restart(proc: ServerProcess, tmp_path: Path) -> ServerProcess:
    assert proc.stop() == 0
    return start_brook(tmp_path, *AOF_ARGS)


@pytest.fixture
def aof_server(tmp_path: Path):
    proc = start_brook(tmp_path, *AOF_ARGS)
    yield proc
    proc.stop()


class Conn(RawConnection):
    """A raw connection whose replies come back as hiredis decodes them (no redis-py
    post-processing), with errors raised."""

    def __call__(self, *args: bytes | str | int) -> Reply:
        reply = self.call(*args)
        if isinstance(reply, hiredis.ReplyError):
            raise AssertionError(f"{args!r}: {reply}")
        return reply


def as_map(pairs: Reply) -> dict[bytes, Reply]:
    assert isinstance(pairs, list)
    return dict(zip(pairs[0::2], pairs[1::2], strict=True))


# -- what a client can read about a stream --------------------------------------------------------


def full_info(conn: Conn, key: str) -> tuple[dict[bytes, Reply], dict[bytes, list[int]]]:
    """XINFO STREAM FULL without the consumers' seen/active times, and those times apart
    (group/consumer -> [seen-time, active-time])."""
    info = as_map(conn("XINFO", "STREAM", key, "FULL", "COUNT", "0"))
    times: dict[bytes, list[int]] = {}
    groups = []
    for raw_group in info[b"groups"]:  # type: ignore[union-attr]
        group = as_map(raw_group)
        consumers = []
        for raw_consumer in group[b"consumers"]:  # type: ignore[union-attr]
            consumer = as_map(raw_consumer)
            name = group[b"name"] + b"/" + consumer[b"name"]  # type: ignore[operator]
            times[name] = [consumer.pop(b"seen-time"), consumer.pop(b"active-time")]  # type: ignore[list-item]
            consumers.append(consumer)
        group[b"consumers"] = consumers
        groups.append(group)
    info[b"groups"] = groups
    return info, times


def pending(conn: Conn, key: str, group: bytes) -> tuple[list[Reply], list[int]]:
    """XPENDING's extended form without idle times, and the idle times apart."""
    rows = conn("XPENDING", key, group, "-", "+", "1000")
    assert isinstance(rows, list)
    return [row[:2] + row[3:] for row in rows], [row[2] for row in rows]


def consumers(conn: Conn, key: str, group: bytes) -> tuple[list[Reply], list[list[int]]]:
    """XINFO CONSUMERS: names and pending counts, and (idle, inactive) apart."""
    rows = [as_map(row) for row in conn("XINFO", "CONSUMERS", key, group)]  # type: ignore[union-attr]
    return ([[row[b"name"], row[b"pending"]] for row in rows],
            [[row[b"idle"], row[b"inactive"]] for row in rows])  # type: ignore[list-item]


def state(conn: Conn, keys: list[str]) -> tuple[dict[str, object], dict[str, object]]:
    """(what must be equal after a restart, the clock-dependent values apart)."""
    exact: dict[str, object] = {}
    clocked: dict[str, object] = {}
    for key in keys:
        info, times = full_info(conn, key)
        exact[key] = {"full": info, "range": conn("XRANGE", key, "-", "+"),
                      "groups": conn("XINFO", "GROUPS", key)}
        clocked[key] = {"times": times}
        for group in info[b"groups"]:  # type: ignore[union-attr]
            name = group[b"name"]
            exact[key][name], clocked[key][name] = pending(conn, key, name)  # type: ignore[index]
            exact[key][b"c:" + name], clocked[key][b"c:" + name] = consumers(conn, key, name)  # type: ignore[index]
    return exact, clocked


def assert_clock_not_earlier(before: dict[str, object], after: dict[str, object]) -> None:
    """Delivery times are exact, so idle times only grew; a consumer's seen/active time is
    the load time at worst (never earlier), and one that was never active still is not."""
    for key, parts in before.items():
        for name, value in parts.items():  # type: ignore[attr-defined]
            later = after[key][name]  # type: ignore[index]
            if name == "times":
                for consumer, (seen, active) in value.items():
                    seen2, active2 = later[consumer]
                    assert seen2 >= seen, consumer
                    # Reads with NOACK leave no record to restore activity from (as in Redis).
                    assert active2 == -1 if active == -1 else active2 == -1 or active2 >= active
            elif name.startswith(b"c:"):
                for (_idle, inactive), (idle2, inactive2) in zip(value, later, strict=True):
                    assert idle2 >= 0
                    assert inactive2 == -1 if inactive == -1 else inactive2 >= -1
            else:
                for idle, idle2 in zip(value, later, strict=True):
                    assert idle2 >= idle if idle >= 0 else idle2 == idle


def entry_id(reply: Reply) -> bytes:
    assert isinstance(reply, bytes), reply
    return reply


def ids_of(read: Reply) -> list[bytes]:
    """The entry IDs of an XREADGROUP reply (RESP2, one stream)."""
    assert isinstance(read, list), read
    return [entry[0] for entry in read[0][1]]


# -- the tests ------------------------------------------------------------------------------------


def build(conn: Conn, blocked: Conn) -> None:
    """Every kind of stream write, on streams s (groups), i (IDMP), z (XSETID), t (trims)."""
    # Explicit, ms-* and * IDs; approximate and exact trims, with LIMIT and policies.
    conn("XADD", "s", "1-1", "f", "explicit")
    assert conn("XADD", "s", "1-*", "f", "seq") == b"1-2"
    assert conn("XADD", "s", "2-*", "f", "seq") == b"2-0"
    for n in range(20):
        conn("XADD", "s", "*", "n", n)
    conn("XADD", "s", "MAXLEN", "~", "17", "*", "n", "approx")  # whole nodes only
    conn("XADD", "s", "MINID", "~", "1-0", "LIMIT", "10", "*", "n", "noop-trim")
    conn("XTRIM", "s", "MAXLEN", "~", "14")
    conn("XADD", "s", "NOMKSTREAM", "*", "n", "nomk")
    assert conn("XADD", "missing", "NOMKSTREAM", "*", "n", "1") is None
    ids = [e[0] for e in conn("XRANGE", "s", "-", "+")]  # type: ignore[union-attr]
    conn("XDEL", "s", ids[5])

    conn("XGROUP", "CREATE", "s", "g1", "0")
    conn("XGROUP", "CREATE", "s", "g2", "$")
    conn("XGROUP", "CREATE", "s", "g3", ids[3], "ENTRIESREAD", "2")
    conn("XGROUP", "CREATECONSUMER", "s", "g3", "idle-one")
    conn("XGROUP", "CREATECONSUMER", "s", "g3", "gone")
    conn("XGROUP", "DELCONSUMER", "s", "g3", "gone")
    alice = ids_of(conn("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "4", "STREAMS", "s", ">"))
    bob = ids_of(conn("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "s", ">"))
    conn("XREADGROUP", "GROUP", "g1", "carol", "NOACK", "COUNT", "2", "STREAMS", "s", ">")
    conn("XREADGROUP", "GROUP", "g1", "alice", "STREAMS", "s", "0")  # own PEL: counts grow
    conn("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "1", "STREAMS", "s", alice[0])
    conn("XREADGROUP", "GROUP", "g3", "idle-one", "COUNT", "2", "STREAMS", "s", ">")
    # Nothing new: the consumer is created all the same.
    conn("XREADGROUP", "GROUP", "g2", "nobody", "STREAMS", "s", ">")
    conn("XACK", "s", "g1", alice[1])
    conn("XCLAIM", "s", "g1", "bob", "0", alice[2], "IDLE", "5000", "RETRYCOUNT", "7")
    conn("XCLAIM", "s", "g1", "dave", "0", alice[3], "TIME", int(time.time() * 1000) - 60_000)
    conn("XCLAIM", "s", "g1", "dave", "0", bob[0], "JUSTID", "LASTID", ids[12])
    conn("XDEL", "s", bob[1])  # pending, then deleted: XAUTOCLAIM drops it
    conn("XAUTOCLAIM", "s", "g1", "erin", "0", bob[0], "COUNT", "3")
    conn("XNACK", "s", "g1", "FAIL", "IDS", "1", bob[2])
    conn("XNACK", "s", "g1", "FATAL", "IDS", "1", alice[0])
    conn("XREADGROUP", "GROUP", "g1", "frank", "CLAIM", "0", "COUNT", "1", "STREAMS", "s", ">")

    # A reader parked on g2, served by a later XADD.
    blocked.send(b"*9\r\n$10\r\nXREADGROUP\r\n$5\r\nGROUP\r\n$2\r\ng2\r\n$6\r\nwaiter\r\n"
                 b"$5\r\nBLOCK\r\n$5\r\n10000\r\n$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n>\r\n")
    deadline = time.monotonic() + 5
    while b"waiter" not in b"".join(
            as_map(c)[b"name"] for c in conn("XINFO", "CONSUMERS", "s", "g2")):  # type: ignore[misc, union-attr]
        assert time.monotonic() < deadline
        time.sleep(0.01)
    served = conn("XADD", "s", "*", "n", "wakes")
    assert served in blocked.read(until=served)
    conn("XADD", "s", "*", "n", "after")

    # Trims that keep what groups still need, approximate with LIMIT.
    for n in range(12):
        conn("XADD", "t", f"{n + 1}-0", "n", n)
    conn("XGROUP", "CREATE", "t", "g", "0")
    conn("XREADGROUP", "GROUP", "g", "c", "COUNT", "6", "STREAMS", "t", ">")
    conn("XACK", "t", "g", "2-0", "3-0", "4-0")
    conn("XADD", "t", "ACKED", "MAXLEN", "~", "0", "LIMIT", "2", "*", "n", "acked")
    conn("XTRIM", "t", "MAXLEN", "~", "1", "DELREF")
    conn("XDELEX", "t", "DELREF", "IDS", "1", "1-0")

    # Idempotent production.
    conn("XADD", "i", "*", "f", "first")
    conn("XCFGSET", "i", "IDMP-DURATION", "300", "IDMP-MAXSIZE", "3")
    original = conn("XADD", "i", "IDMP", "p1", "a", "*", "f", "1")
    assert conn("XADD", "i", "IDMP", "p1", "a", "*", "f", "2") == original
    auto = conn("XADD", "i", "IDMPAUTO", "p2", "*", "x", "1", "y", "2")
    assert conn("XADD", "i", "IDMPAUTO", "p2", "*", "y", "2", "x", "1") == auto
    for n in range(4):  # over IDMP-MAXSIZE: the oldest of p1 are forgotten
        conn("XADD", "i", "IDMP", "p1", f"b{n}", "*", "f", n)

    # Metadata set directly.
    conn("XADD", "z", "1-0", "a", "b")
    conn("XSETID", "z", "99-0", "ENTRIESADDED", "10", "MAXDELETEDID", "50-0")
    conn("XGROUP", "CREATE", "z", "g", "$")
    conn("XGROUP", "CREATE", "z", "doomed", "0")
    conn("XGROUP", "DESTROY", "z", "doomed")
    conn("XGROUP", "SETID", "z", "g", "$", "ENTRIESREAD", "7")


KEYS = ["s", "t", "i", "z"]


def test_stream_state_survives_a_restart(aof_server, tmp_path):
    conn, blocked = Conn(aof_server.port), Conn(aof_server.port)
    build(conn, blocked)
    before, clock_before = state(conn, KEYS)
    conn.close()
    blocked.close()
    proc = restart(aof_server, tmp_path)
    try:
        conn = Conn(proc.port)
        after, clock_after = state(conn, KEYS)
        assert after == before
        assert_clock_not_earlier(clock_before, clock_after)
        assert conn("EXISTS", "missing") == 0
        # A second restart replays the same file to the same state again.
        conn.close()
        proc = restart(proc, tmp_path)
        conn = Conn(proc.port)
        assert state(conn, KEYS)[0] == before
        conn.close()
    finally:
        proc.stop()


def test_the_aof_holds_no_generated_ids_nor_approximate_trims(aof_server, tmp_path):
    conn, blocked = Conn(aof_server.port), Conn(aof_server.port)
    build(conn, blocked)
    conn.close()
    blocked.close()
    aof_server.stop()
    commands = aof_commands(tmp_path / "appendonly.aof")
    names = {command[0] for command in commands}
    # Reads and claims are persisted as their effects, never as themselves.
    assert not names & {b"XREADGROUP", b"XAUTOCLAIM"}
    for command in commands:
        assert b"*" not in command and b"~" not in command, command
        assert not any(arg.endswith(b"-*") for arg in command), command
        assert b"IDMPAUTO" not in command and b"LIMIT" not in command, command
    assert [b"XGROUP", b"CREATE", b"s", b"g2", b"$"] not in commands
    claims = [c for c in commands if c[0] == b"XCLAIM"]
    assert claims and all(c[6] == b"TIME" and b"FORCE" in c and b"LASTID" in c for c in claims)


def test_idempotent_ids_still_deduplicate_after_a_restart(aof_server, tmp_path):
    conn = Conn(aof_server.port)
    first = conn("XADD", "i", "IDMP", "p", "req-1", "*", "f", "v")
    auto = conn("XADD", "i", "IDMPAUTO", "q", "*", "a", "1")
    assert conn("XADD", "i", "IDMP", "p", "req-1", "*", "f", "other") == first
    conn.close()
    proc = restart(aof_server, tmp_path)
    try:
        conn = Conn(proc.port)
        info = as_map(conn("XINFO", "STREAM", "i"))
        assert (info[b"iids-added"], info[b"iids-duplicates"], info[b"pids-tracked"]) == (2, 1, 2)
        assert conn("XADD", "i", "IDMP", "p", "req-1", "*", "f", "again") == first
        assert conn("XADD", "i", "IDMPAUTO", "q", "*", "a", "1") == auto
        assert conn("XLEN", "i") == 2
        assert as_map(conn("XINFO", "STREAM", "i"))[b"iids-duplicates"] == 3
        conn.close()
    finally:
        proc.stop()


def test_writes_that_change_nothing_are_not_persisted(aof_server, tmp_path):
    conn = Conn(aof_server.port)
    conn("XADD", "s", "1-0", "f", "v")
    conn("XGROUP", "CREATE", "s", "g", "0")
    conn("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    conn("XCFGSET", "s", "IDMP-MAXSIZE", "5")
    path = tmp_path / "appendonly.aof"
    size = path.stat().st_size
    conn("XACK", "s", "g", "9-0")
    conn("XACKDEL", "s", "g", "IDS", "1", "9-0")
    conn("XDEL", "s", "9-0")
    conn("XDELEX", "s", "DELREF", "IDS", "1", "9-0")
    conn("XTRIM", "s", "MINID", "0-1")
    conn("XCFGSET", "s", "IDMP-MAXSIZE", "5")
    conn("XCLAIM", "s", "g", "c", "100000", "1-0")  # not idle enough
    conn("XAUTOCLAIM", "s", "g", "c", "100000", "0-0")
    conn("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")  # nothing new
    conn("XGROUP", "CREATECONSUMER", "s", "g", "c")
    conn("XGROUP", "DELCONSUMER", "s", "g", "nobody")
    conn("XGROUP", "DESTROY", "s", "nogroup")
    assert conn("XADD", "nothing", "NOMKSTREAM", "*", "f", "v") is None
    assert path.stat().st_size == size
    conn.close()


def test_consumers_created_by_reads_that_find_nothing_survive(aof_server, tmp_path):
    conn, blocked = Conn(aof_server.port), Conn(aof_server.port)
    conn("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    conn("XREADGROUP", "GROUP", "g", "plain", "STREAMS", "s", ">")
    conn("XCLAIM", "s", "g", "claimer", "0", "1-0")
    conn("XAUTOCLAIM", "s", "g", "autoclaimer", "0", "0-0")
    # Parked, then timed out: the consumer it created stays.
    assert blocked.call("XREADGROUP", "GROUP", "g", "parked", "BLOCK", "50",
                        "STREAMS", "s", ">") is None
    names = sorted(as_map(c)[b"name"] for c in conn("XINFO", "CONSUMERS", "s", "g"))  # type: ignore[union-attr]
    assert names == [b"autoclaimer", b"claimer", b"parked", b"plain"]
    # The next command of the client that parked is persisted as itself.
    blocked("SET", "after-parking", "1")
    conn.close()
    blocked.close()
    proc = restart(aof_server, tmp_path)
    try:
        conn = Conn(proc.port)
        consumers = [as_map(c) for c in conn("XINFO", "CONSUMERS", "s", "g")]  # type: ignore[union-attr]
        assert sorted(c[b"name"] for c in consumers) == names
        assert all(c[b"inactive"] == -1 for c in consumers)
        assert conn("GET", "after-parking") == b"1"
        conn.close()
    finally:
        proc.stop()


def test_blocked_group_reads_served_later_are_persisted_once(aof_server, tmp_path):
    conn, blocked = Conn(aof_server.port), Conn(aof_server.port)
    conn("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    blocked.send(b"*9\r\n$10\r\nXREADGROUP\r\n$5\r\nGROUP\r\n$1\r\ng\r\n$1\r\nw\r\n"
                 b"$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n>\r\n")
    deadline = time.monotonic() + 5
    while not conn("XINFO", "CONSUMERS", "s", "g"):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    served = entry_id(conn("XADD", "s", "*", "f", "v"))
    assert served in blocked.read(until=served)
    before = state(conn, ["s"])[0]
    conn.close()
    blocked.close()
    aof_server.stop()
    commands = aof_commands(tmp_path / "appendonly.aof")
    assert [c[:4] for c in commands if c[0] == b"XGROUP"][1:] == [
        [b"XGROUP", b"CREATECONSUMER", b"s", b"g"], [b"XGROUP", b"SETID", b"s", b"g"]]
    assert len([c for c in commands if c[0] == b"XCLAIM"]) == 1
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        conn = Conn(proc.port)
        assert state(conn, ["s"])[0] == before
        conn.close()
    finally:
        proc.stop()


def test_stream_effects_inside_a_transaction(aof_server, tmp_path):
    conn = Conn(aof_server.port)
    conn("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    conn("MULTI")
    conn("XADD", "s", "*", "f", "1")
    conn("XADD", "s", "MAXLEN", "~", "1", "*", "f", "2")
    conn("XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s", ">")
    conn("XREADGROUP", "GROUP", "g", "d", "BLOCK", "100", "STREAMS", "s", ">")  # nothing left
    replies = conn("EXEC")
    assert isinstance(replies, list) and replies[3] is None
    before = state(conn, ["s"])[0]
    conn.close()
    proc = restart(aof_server, tmp_path)
    try:
        conn = Conn(proc.port)
        assert state(conn, ["s"])[0] == before
        conn.close()
    finally:
        proc.stop()
    commands = aof_commands(tmp_path / "appendonly.aof")
    names = [c[0] for c in commands]
    assert names[names.index(b"MULTI"):] == [
        b"MULTI", b"XADD", b"XADD", b"XGROUP", b"XCLAIM", b"XCLAIM", b"XGROUP", b"XGROUP",
        b"EXEC"]


def _resp(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def test_replayed_xadds_take_every_form_as_sent(tmp_path):
    """The loader runs plain explicit-ID XADDs by the handler's fast path and everything else
    through the dispatcher: creation, sealing, non-canonical and 19-digit IDs, options, IDs
    not above the last one, another type under the key and a key with a TTL in the database
    all end as when the commands first ran."""
    big = b"1234567890123456789"
    commands = [
        (b"XADD", b"s", b"5-1", b"a", b"1"),  # creates the stream: the general path
        (b"XADD", b"s", b"5-2", b"a", b"2", b"b", b"3"),
        (b"xadd", b"s", b"0006-01", b"a", b"4"),  # not canonical: replied in Redis's form
        (b"XADD", b"s", b"6-1", b"a", b"5"),  # not above the last ID: an error, no change
        (b"XADD", b"s", b"7-0", b"a", b"6"),
        (b"XADD", b"s", big + b"-0", b"a", b"7"),  # 19 digits: the general parser
        (b"XADD", b"s", b"MAXLEN", b"10", big + b"-1", b"a", b"8"),
        (b"SET", b"str", b"x"),
        (b"XADD", b"str", b"1-1", b"a", b"9"),  # WRONGTYPE: nothing changes
        (b"XADD", b"t", b"1-1", b"f", b"v"),
        (b"SET", b"ttl", b"y", b"PX", b"100000000"),
        (b"XADD", b"t", b"2-0", b"f", b"w"),  # a database with TTLs: the general path
        (b"XADD", b"t", b"3-0", b"f", b"x"),
    ]
    (tmp_path / "appendonly.aof").write_bytes(b"".join(_resp(*c) for c in commands))
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        conn = Conn(proc.port)
        assert conn("XRANGE", "s", "-", "+") == [
            [b"5-1", [b"a", b"1"]], [b"5-2", [b"a", b"2", b"b", b"3"]], [b"6-1", [b"a", b"4"]],
            [b"7-0", [b"a", b"6"]], [big + b"-0", [b"a", b"7"]], [big + b"-1", [b"a", b"8"]]]
        info = conn("XINFO", "STREAM", "s")
        assert info[info.index(b"entries-added") + 1] == 6
        assert conn("GET", "str") == b"x"
        assert conn("XRANGE", "t", "-", "+") == [
            [b"1-1", [b"f", b"v"]], [b"2-0", [b"f", b"w"]], [b"3-0", [b"f", b"x"]]]
        conn.close()
    finally:
        proc.stop()
