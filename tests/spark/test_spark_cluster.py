"""The PySpark connector against a Redis Cluster: three Brook masters joined by the real
``redis-cli --cluster create`` (and one cluster with a redis-server master among them), the
connector given one node's address only.

Batch reads take each stream from the master that serves it; the sink groups rows by master;
exactly-once holds across shards when a write or a micro-batch is replayed; the streaming
source reads streams on several shards; a resharding between planning and reading or writing
(a slot moved with CLUSTER SETSLOT and MIGRATE, as ``redis-cli --cluster reshard`` moves it)
is followed, not failed.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyarrow as pa
import pytest
from redis.crc import key_slot

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("Spark needs java on PATH", allow_module_level=True)

from pyspark.errors import PySparkException  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.types import MapType, StringType, StructField, StructType  # noqa: E402

from brook.spark import shards as shards_module  # noqa: E402
from brook.spark.connection import ConnectionOptions  # noqa: E402
from brook.spark.reader import BatchReader, RangePartition, read_partition  # noqa: E402
from brook.spark.rows import DEFAULT_SCHEMA, RowBuilder  # noqa: E402
from brook.spark.shards import Shards  # noqa: E402
from brook.spark.writer import _Sink  # noqa: E402
from tests.conftest import ServerProcess  # noqa: E402
from tests.support.cluster import ClusterNodes, node_id  # noqa: E402
from tests.support.spark import local_session  # noqa: E402

pytestmark = pytest.mark.timeout(600)  # the first query of a session starts Python workers

STREAMS = [f"s{i}" for i in range(12)]


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = local_session("brook-cluster-tests")
    yield session
    session.stop()


def _cluster(tmp_path_factory: pytest.TempPathFactory, kinds: list[str]
             ) -> Iterator[list[ServerProcess]]:
    started = ClusterNodes(tmp_path_factory.mktemp("cluster"))
    try:
        yield started.create(kinds)
    finally:
        started.stop()


@pytest.fixture(scope="module")
def brook_cluster(tmp_path_factory) -> Iterator[list[ServerProcess]]:
    yield from _cluster(tmp_path_factory, ["brook"] * 3)


@pytest.fixture(scope="module")
def mixed_cluster(tmp_path_factory) -> Iterator[list[ServerProcess]]:
    yield from _cluster(tmp_path_factory, ["brook", "brook", "redis"])


@pytest.fixture
def nodes(brook_cluster: list[ServerProcess]) -> list[ServerProcess]:
    """The three masters, emptied, every slot back where ``create`` put it."""
    _flush(brook_cluster)
    return brook_cluster


def _flush(cluster: list[ServerProcess]) -> None:
    for node in cluster:
        node.client().flushall()


def owner(cluster: list[ServerProcess], key: str) -> ServerProcess:
    """The master that serves ``key``, as the cluster says (CLUSTER SLOTS)."""
    slot = key_slot(key.encode())
    for first, last, master, *_ in cluster[0].client().execute_command("CLUSTER", "SLOTS"):
        if first <= slot <= last:
            return next(node for node in cluster if node.port == master[1])
    raise AssertionError(f"no master serves slot {slot}")


def fill(cluster: list[ServerProcess], streams: list[str], base: int = 30) -> dict[str, int]:
    """``base + 7 * i`` entries in the i-th stream, written on its owner; the lengths."""
    lengths = {}
    for i, stream in enumerate(streams):
        pipe = owner(cluster, stream).client().pipeline(transaction=False)
        lengths[stream] = base + 7 * i
        for n in range(lengths[stream]):
            pipe.xadd(stream, {"page": f"p{n % 3}", "n": str(n)}, id=f"{1_700_000_000_000 + n}-0")
        pipe.execute()
    return lengths


def move_slot(cluster: list[ServerProcess], key: str, to: ServerProcess,
              finish: bool = True) -> None:
    """Move ``key``'s slot to ``to`` the way ``redis-cli --cluster reshard`` does: IMPORTING
    and MIGRATING, MIGRATE of its keys, then (``finish``) SETSLOT NODE on every master."""
    slot = key_slot(key.encode())
    source = owner(cluster, key)
    to.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(source))
    source.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(to))
    keys = source.client().execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    if keys:
        source.client().execute_command("MIGRATE", "127.0.0.1", to.port, "", 0, 5000, "KEYS",
                                        *keys)
    if finish:
        for node in cluster:
            node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", node_id(to))


@contextmanager
def resharded(cluster: list[ServerProcess], key: str, finish: bool = True) -> Iterator[None]:
    """``key``'s slot moved to another Brook master (left mid-move unless ``finish``) for the
    block, then back to where it was, keys included."""
    source = owner(cluster, key)
    target = other_than(cluster, source)
    move_slot(cluster, key, target, finish)
    try:
        yield
    finally:
        slot = key_slot(key.encode())
        for node in cluster:
            node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", node_id(target))
        move_slot(cluster, key, source)


def other_than(cluster: list[ServerProcess], node: ServerProcess) -> ServerProcess:
    return next(other for other in cluster if other is not node and other.kind == "brook")


def _read(spark: SparkSession, node: ServerProcess, **options: object):
    reader = spark.read.format("brook").option("port", node.port)
    for name, value in options.items():
        reader = reader.option(name, str(value))
    return reader.load()


def test_the_streams_land_on_every_master(nodes):
    assert {owner(nodes, stream).port for stream in STREAMS} == {node.port for node in nodes}
    shards = Shards.discover(ConnectionOptions(port=nodes[0].port))
    assert shards.clustered
    assert all(shards.node_of(stream) == ("127.0.0.1", owner(nodes, stream).port)
               for stream in STREAMS)
    alone = Shards.discover(ConnectionOptions(port=nodes[0].port, cluster="false"))
    assert not alone.clustered and alone.node_of("s1") is None


# -- (a) batch reads --------------------------------------------------------------------------


def test_batch_read_takes_each_stream_from_its_master(spark, nodes):
    lengths = fill(nodes, STREAMS)
    options = {"port": str(nodes[1].port), "streams": ",".join(STREAMS),
               "partitionsPerStream": "2"}
    planned = BatchReader(options, StructType.fromDDL(DEFAULT_SCHEMA)).partitions()
    assert len(planned) == 2 * len(STREAMS)
    assert all(part.node == ("127.0.0.1", owner(nodes, part.stream).port) for part in planned)

    rows = _read(spark, nodes[1], streams=",".join(STREAMS), partitionsPerStream=2).collect()
    got = Counter(row.stream for row in rows)
    assert got == {stream: owner(nodes, stream).client().xlen(stream) for stream in STREAMS}
    assert got == lengths
    assert len({(row.stream, row.id) for row in rows}) == len(rows)  # each entry once
    assert _read(spark, nodes[2], streams="s3", startId="1700000000005",
                 endId="1700000000009").count() == 5


def test_a_partition_planned_before_a_resharding_follows_the_redirect(spark, nodes):
    fill(nodes, ["s1"])
    options = {"port": str(nodes[0].port), "streams": "s1"}
    reader = BatchReader(options, StructType.fromDDL(DEFAULT_SCHEMA))
    (partition,) = reader.partitions()
    before = owner(nodes, "s1")
    with resharded(nodes, "s1"):  # after planning: -MOVED at read time
        assert owner(nodes, "s1") is not before
        assert sum(batch.num_rows for batch in reader.read(partition)) == 30


def test_a_read_while_the_slot_is_mid_move_follows_the_ask(spark, nodes):
    fill(nodes, ["s2"])
    before = owner(nodes, "s2")
    rows = RowBuilder(StructType.fromDDL(DEFAULT_SCHEMA))
    partition = RangePartition("s2", "0-0", "18446744073709551615-18446744073709551615",
                               ("127.0.0.1", before.port))
    with resharded(nodes, "s2", finish=False):  # its keys moved; the source says -ASK
        read = read_partition(ConnectionOptions(port=before.port), rows, partition, 7)
        assert sum(batch.num_rows for batch in read) == 30


# -- (b), (c) the sink ----------------------------------------------------------------------------


def _targets(spark: SparkSession, rows: int, streams: int):
    return spark.range(rows).selectExpr(f"CONCAT('t', CAST(id % {streams} AS STRING)) AS target",
                                        "CAST(id AS STRING) AS n")


def _lengths(cluster: list[ServerProcess], streams: int) -> dict[str, int]:
    """Each target stream's length on its owner (0 where it is missing)."""
    return {f"t{i}": owner(cluster, f"t{i}").client().xlen(f"t{i}") for i in range(streams)}


def test_batch_write_lands_every_row_once_on_the_owners(spark, nodes):
    (_targets(spark, 600, 30).write.format("brook").option("port", nodes[2].port)
     .option("streamColumn", "target").option("pipelineSize", 16).mode("append").save())
    assert _lengths(nodes, 30) == {f"t{i}": 20 for i in range(30)}
    assert {owner(nodes, f"t{i}").port for i in range(30)} == {node.port for node in nodes}
    seen = sorted(int(fields[b"n"]) for i in range(30)
                  for _, fields in owner(nodes, f"t{i}").client().xrange(f"t{i}"))
    assert seen == list(range(600))


def test_batch_write_exactly_once_replayed_adds_nothing_on_any_shard(spark, nodes):
    df = _targets(spark, 600, 30).repartition(3)

    def write(write_id: str) -> None:
        (df.write.format("brook").option("port", nodes[0].port)
         .option("streamColumn", "target").option("deliveryGuarantee", "exactly-once")
         .option("writeId", write_id).mode("append").save())

    write("job-1")
    write("job-1")  # the same write run again: nothing twice, whichever shard
    assert _lengths(nodes, 30) == {f"t{i}": 20 for i in range(30)}
    duplicates = 0
    for i in range(30):
        info = owner(nodes, f"t{i}").client().execute_command("XINFO", "STREAM", f"t{i}")
        duplicates += dict(zip(info[::2], info[1::2], strict=True))[b"iids-duplicates"]
    assert duplicates == 600
    write("job-2")  # another write
    assert _lengths(nodes, 30) == {f"t{i}": 40 for i in range(30)}


def _sink(port: int, guarantee: str) -> _Sink:
    schema = StructType([StructField("target", StringType()),
                         StructField("fields", MapType(StringType(), StringType()))])
    return _Sink({"port": str(port), "streamColumn": "target",
                  "deliveryGuarantee": guarantee}, schema, streaming=False)


def _rows_for_four_streams() -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{"target": f"t{i % 4}", "fields": {"n": str(i)}} for i in range(40)],
        pa.schema([("target", pa.string()), ("fields", pa.map_(pa.string(), pa.string()))]))


@pytest.mark.parametrize("guarantee", ["at-least-once", "exactly-once"])
def test_a_write_after_a_resharding_resends_to_the_new_owner(nodes, monkeypatch, guarantee):
    """The task reads the map, then a slot moves: the XADDs (or the exactly-once preparation)
    the old owner redirects go to the new one, and nothing is written twice."""
    mover = owner(nodes, "t1")
    mover.client().xadd("t1", {"old": "1"})
    sink = _sink(nodes[0].port, guarantee)
    discover = Shards.discover.__func__  # type: ignore[attr-defined]
    maps: list[Shards] = []

    def then_reshard(cls, options):  # the task's first map, then the slot moves
        found = discover(cls, options)
        maps.append(found)
        if len(maps) == 1:
            stack.enter_context(resharded(nodes, "t1"))
        return found

    batch = _rows_for_four_streams()
    with ExitStack() as stack:
        monkeypatch.setattr(shards_module.Shards, "discover", classmethod(then_reshard))
        written = sink.write(iter([batch]), None if guarantee == "at-least-once" else "job:0")
        monkeypatch.undo()
        assert written.entries == 40 and len(maps) == 2  # read again after the redirect
        new_owner = owner(nodes, "t1")
        assert new_owner is not mover
        assert new_owner.client().xlen("t1") == 11  # the old entry moved, the rows once
        assert _lengths(nodes, 4) == {"t0": 10, "t1": 11, "t2": 10, "t3": 10}


def test_a_write_while_the_slot_is_mid_move_waits_for_the_move(nodes):
    """-ASK: the stream's keys are already on the importing node; the sink waits for the
    move to end (here 0.5 s later) and writes there, exactly once."""
    mover = owner(nodes, "t2")
    target = other_than(nodes, mover)
    mover.client().xadd("t2", {"old": "1"})
    sink = _sink(nodes[0].port, "exactly-once")
    slot = key_slot(b"t2")

    def finish() -> None:
        for node in nodes:
            node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", node_id(target))

    with resharded(nodes, "t2", finish=False):
        timer = threading.Timer(0.5, finish)
        timer.start()
        started = time.monotonic()
        written = sink.write(iter([_rows_for_four_streams()]), "job:0")
        timer.join()
        assert written.entries == 40 and time.monotonic() - started >= 0.4
        assert owner(nodes, "t2") is target
        assert _lengths(nodes, 4) == {"t0": 10, "t1": 10, "t2": 11, "t3": 10}


# -- (d) the streaming source -------------------------------------------------------------------


def _forget_commit(checkpoint: Path, batch: int) -> None:
    """Make the checkpoint look as if the query died before committing ``batch``."""
    (checkpoint / "commits" / str(batch)).unlink()
    (checkpoint / "commits" / f".{batch}.crc").unlink(missing_ok=True)


def test_streaming_source_reads_every_shard_and_a_replay_is_exactly_once(spark, nodes,
                                                                         tmp_path):
    streams = STREAMS[:6]
    lengths = fill(nodes, streams, base=10)  # 10, 17, ... 45: 165 in all
    total = sum(lengths.values())
    assert len({owner(nodes, stream).port for stream in streams}) == 3
    checkpoint = tmp_path / "ck"

    def run() -> list[int]:
        query = (spark.readStream.format("brook").option("port", nodes[0].port)
                 .option("streams", ",".join(streams)).option("startingOffsets", "earliest")
                 .option("maxEntriesPerTrigger", 100).option("group", "pipeline").load()
                 .selectExpr("stream AS source", "id AS source_id")
                 .writeStream.format("brook").option("port", nodes[0].port)
                 .option("stream", "copy").option("checkpointLocation", str(checkpoint))
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]

    assert run() == [100, total - 100]
    copy = owner(nodes, "copy").client()
    copied = Counter(fields[b"source"].decode() for _, fields in copy.xrange("copy"))
    assert copied == lengths
    _forget_commit(checkpoint, 1)
    assert run() == [total - 100]  # the last batch replayed: nothing added twice
    assert copy.xlen("copy") == total
    for stream in streams:  # the group moved along on each stream's own master
        group = owner(nodes, stream).client().xinfo_groups(stream)[0]
        assert (group["name"], group["lag"]) == (b"pipeline", 0)


# -- (e) a cluster with a real Redis master -----------------------------------------------------


def test_a_cluster_with_a_redis_master_reads_and_writes_at_least_once(spark, mixed_cluster):
    _flush(mixed_cluster)
    lengths = fill(mixed_cluster, STREAMS)
    assert {owner(mixed_cluster, s).kind for s in STREAMS} == {"brook", "redis"}
    rows = _read(spark, mixed_cluster[0], streams=",".join(STREAMS)).collect()
    assert Counter(row.stream for row in rows) == lengths

    (_targets(spark, 300, 30).write.format("brook").option("port", mixed_cluster[2].port)
     .option("streamColumn", "target").option("deliveryGuarantee", "at-least-once")
     .mode("append").save())
    assert _lengths(mixed_cluster, 30) == {f"t{i}": 10 for i in range(30)}
    assert "redis" in {owner(mixed_cluster, f"t{i}").kind for i in range(30)}

    # Exactly-once needs IDMP on every master: refused at planning, naming the node.
    with pytest.raises(PySparkException, match="needs XADD IDMP"):
        (_targets(spark, 10, 3).write.format("brook").option("port", mixed_cluster[0].port)
         .option("streamColumn", "target").option("deliveryGuarantee", "exactly-once")
         .option("writeId", "w").mode("append").save())


def test_cluster_option_is_checked(spark, nodes):
    with pytest.raises(PySparkException, match="option cluster must be auto, true or false"):
        _read(spark, nodes[0], streams="s1", cluster="maybe").count()
    # Told it is not a cluster, the connector asks the node it was given, which redirects.
    stranger = next(s for s in STREAMS if owner(nodes, s) is not nodes[0])
    fill(nodes, [stranger])
    with pytest.raises(PySparkException, match="it is a cluster node, and option cluster=false"):
        _read(spark, nodes[0], streams=stranger, cluster="false").count()
