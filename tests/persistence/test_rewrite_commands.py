"""The AOF rewrite (brook.persistence.rewrite): replaying its commands into an empty server
reproduces every database exactly, as the inspection commands see it.

In process (tests/support/states.py): servers built but never listening, the clock frozen; the
rich state and the comparison are shared with the snapshot tests.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brook.persistence.aof import encode_command
from brook.persistence.rewrite import ITEMS_PER_CMD, rewrite_commands
from tests.support.states import (
    T0,
    Clock,
    build_rich_state,
    inspect,
    new_client,
    parse,
    random_stream_operations,
    rewrite_round_trip,
    run,
)

# ---------------------------------------------------------------------------------------------
# The rich state
# ---------------------------------------------------------------------------------------------








# ---------------------------------------------------------------------------------------------
# Inspection
# ---------------------------------------------------------------------------------------------








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
