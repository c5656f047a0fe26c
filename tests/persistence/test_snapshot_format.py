"""Snapshots (brook.persistence.snapshot): a keyspace written and loaded back is identical to
the inspection commands, node layout included; damaged files are refused with SnapshotError.

Uses the rich state, frozen clock and inspection helpers of the rewrite tests.
"""

from __future__ import annotations

import io
import os
import pickle
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brook.persistence.snapshot import MAGIC, SnapshotError, load_snapshot, write_snapshot
from tests.support.states import (
    Clock,
    build_rich_state,
    inspect,
    new_client,
    random_stream_operations,
    run,
)


def snapshot_round_trip(source, path: Path):  # noqa: ANN001, ANN201
    write_snapshot(source.server.keyspace, path)
    copy = new_client()
    load_snapshot(copy.server.keyspace, path)
    return copy


@pytest.fixture
def rich(clock: Clock):  # noqa: ANN201, F811
    source = new_client()
    build_rich_state(source, clock)
    return source


def test_snapshot_reproduces_a_rich_state_exactly(rich, tmp_path: Path) -> None:  # noqa: ANN001
    before = inspect(rich)
    copy = snapshot_round_trip(rich, tmp_path / "dump.brook")
    assert inspect(copy) == before
    assert not list(tmp_path.glob("*.tmp"))  # the temporary file was renamed


def test_loaded_state_keeps_behaving_the_same(rich, tmp_path: Path) -> None:  # noqa: ANN001
    """Appends continue the open tail node, claims serve released entries first, dedup works,
    lists keep their ends: the next commands answer alike on both servers."""
    copy = snapshot_round_trip(rich, tmp_path / "dump.brook")
    copy.session.last_interaction = rich.session.last_interaction  # the clock XADD * reads
    script = [
        [b"XADD", b"s", b"*", b"tail", b"4"],
        [b"XADD", b"s-idmp", b"IDMP", b"p1", b"iid6", b"*", b"k", b"again"],
        [b"XREADGROUP", b"GROUP", b"g1", b"zed", b"COUNT", b"3", b"CLAIM", b"0", b"STREAMS",
         b"s", b">"],
        [b"XDEL", b"s", b"1100-0", b"1200-1"],
        [b"XINFO", b"STREAM", b"s"],
        [b"LPOP", b"l-ends", b"40"],
        [b"RPOP", b"l-long", b"200"],
        [b"LRANGE", b"l-long", b"5000", b"5010"],
        [b"HSET", b"h-small", b"c", b"3"],
        [b"OBJECT", b"ENCODING", b"h-shrunk"],
        [b"XAUTOCLAIM", b"s", b"g1", b"yan", b"0", b"0", b"COUNT", b"5"],
    ]
    for command in script:
        assert copy.execute(command) == rich.execute(command), command
    assert inspect(copy) == inspect(rich)


def test_snapshot_to_a_file_object_and_from_bytes(rich) -> None:  # noqa: ANN001
    buffer = io.BytesIO()
    write_snapshot(rich.server.keyspace, buffer)
    data = buffer.getvalue()
    assert data.startswith(MAGIC)
    copy = new_client()
    loaded = load_snapshot(copy.server.keyspace, data)
    assert loaded == sum(len(db.data) for db in rich.server.keyspace.databases)
    assert inspect(copy) == inspect(rich)


def test_expired_keys_are_not_written(clock: Clock, tmp_path: Path) -> None:  # noqa: F811
    source = new_client()
    run(source, "SET", "soon", "v", "PX", "10")
    run(source, "SET", "later", "v", "PX", "10000")
    clock.advance(20)
    copy = snapshot_round_trip(source, tmp_path / "dump.brook")
    assert set(copy.server.keyspace[0].data) == {b"later"}
    assert inspect(copy) == inspect(source)


def test_a_corrupted_byte_is_caught_by_the_checksum(rich, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "dump.brook"
    write_snapshot(rich.server.keyspace, path)
    data = bytearray(path.read_bytes())
    for position in (len(MAGIC) + 20, len(data) // 2, len(data) - 20):
        damaged = bytearray(data)
        damaged[position] ^= 0x40
        path.write_bytes(damaged)
        target = new_client()
        with pytest.raises(SnapshotError, match="checksum"):
            load_snapshot(target.server.keyspace, path)
        assert not any(db.data for db in target.server.keyspace.databases)


@pytest.mark.parametrize("keep", [0, 10, 40, 1000, -1])
def test_a_truncated_file_is_refused(rich, tmp_path: Path, keep: int) -> None:  # noqa: ANN001
    path = tmp_path / "dump.brook"
    write_snapshot(rich.server.keyspace, path)
    data = path.read_bytes()
    path.write_bytes(data[:keep] if keep >= 0 else data[:-1])
    with pytest.raises(SnapshotError):
        load_snapshot(new_client().server.keyspace, path)


def test_bad_magic_version_and_missing_file(rich, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "dump.brook"
    write_snapshot(rich.server.keyspace, path)
    data = path.read_bytes()
    path.write_bytes(b"REDIS0011" + data[9:])
    with pytest.raises(SnapshotError, match="magic"):
        load_snapshot(new_client().server.keyspace, path)
    path.write_bytes(data[:14] + (99).to_bytes(2, "little") + data[16:])
    with pytest.raises(SnapshotError, match="version 99"):
        load_snapshot(new_client().server.keyspace, path)
    with pytest.raises(SnapshotError, match="cannot read"):
        load_snapshot(new_client().server.keyspace, tmp_path / "missing")


def test_a_snapshot_with_more_databases_than_configured(rich, tmp_path: Path) -> None:  # noqa: ANN001
    from brook.keyspace import Keyspace

    path = tmp_path / "dump.brook"
    write_snapshot(rich.server.keyspace, path)
    with pytest.raises(SnapshotError, match="database 5"):
        load_snapshot(Keyspace(2), path)


def test_a_list_chunk_cannot_run_code(clock: Clock) -> None:  # noqa: F811
    """A chunk that refers to a global (here ``os.system``) is refused, checksum or not."""
    source = new_client()
    run(source, "RPUSH", "l", *[f"e{i}" for i in range(1000)])
    value = source.server.keyspace[0].data[b"l"]
    count, _ = value.data[0]
    value.data[0] = (count, pickle.dumps(os.system))  # what a crafted file could hold
    buffer = io.BytesIO()
    write_snapshot(source.server.keyspace, buffer)
    with pytest.raises(SnapshotError, match="global"):
        load_snapshot(new_client().server.keyspace, buffer.getvalue())


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 250))
def test_random_streams_round_trip_through_a_snapshot(clock: Clock, tmp_path: Path,  # noqa: F811
                                                      seed: int, steps: int) -> None:
    source = new_client()
    random_stream_operations(source, clock, seed, steps)
    buffer = io.BytesIO()
    write_snapshot(source.server.keyspace, buffer)
    copy = new_client()
    load_snapshot(copy.server.keyspace, buffer.getvalue())
    copy.session.last_interaction = source.session.last_interaction  # the clock XADD * reads
    assert inspect(copy) == inspect(source)
    for command in ([b"XADD", b"r1", b"*", b"f", b"v"], [b"XTRIM", b"r2", b"MAXLEN", b"3"],
                    [b"XREADGROUP", b"GROUP", b"ga", b"c9", b"STREAMS", b"r1", b">"]):
        assert copy.execute(command) == source.execute(command)
    assert inspect(copy) == inspect(source)


def test_one_million_stream_entries_load_fast(tmp_path: Path) -> None:
    """The snapshot stores sealed nodes as they are: 1M entries load in well under seconds."""
    source = new_client()
    stream_key = b"big"
    run(source, "XADD", stream_key, "1-1", "field", "value-0")
    stream = source.server.keyspace[0].data[stream_key]
    for i in range(2, 1_000_001):
        stream.append(1 << 64 | i, [b"field", b"value-%d" % i])
    stream_path = tmp_path / "big.brook"
    started = time.perf_counter()
    write_snapshot(source.server.keyspace, stream_path)
    wrote = time.perf_counter() - started
    copy = new_client()
    started = time.perf_counter()
    load_snapshot(copy.server.keyspace, stream_path)
    loaded = time.perf_counter() - started
    print(f"1M entries: write {wrote:.3f}s, load {loaded:.3f}s, "
          f"{stream_path.stat().st_size / 1e6:.1f} MB")
    assert loaded < 3.0
    assert run(copy, "XLEN", stream_key) == 1_000_000
    assert run(copy, "XRANGE", stream_key, "1-500000", "1-500001") == run(
        source, "XRANGE", stream_key, "1-500000", "1-500001")
    assert run(copy, "XINFO", "STREAM", stream_key) == run(source, "XINFO", "STREAM", stream_key)
