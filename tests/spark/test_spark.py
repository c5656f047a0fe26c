"""The PySpark connector against real servers: one local SparkSession for the module, Brook
(and real Redis for what must work there too) over TCP.

Batch reads (default and user schemas, ranges, partitions, pushdown), batch writes, the
streaming source (offsets, admission control, restarts, data loss, the consumer group) and the
streaming sink's exactly-once mode, checked by replaying a micro-batch the way Spark does after
a failure: the batch's commit record is removed and the query restarted from its checkpoint.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import redis

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("Spark needs java on PATH", allow_module_level=True)

from pyspark.errors import PySparkException  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.utils import StreamingQueryException  # noqa: E402

from brook.spark.connection import ConnectorError  # noqa: E402
from tests.conftest import ROOT, ServerProcess, _reset, free_port, start_brook  # noqa: E402
from tests.spark.faults import CuttingProxy  # noqa: E402
from tests.support.spark import local_session  # noqa: E402

pytestmark = pytest.mark.timeout(600)  # the first query of a session starts Python workers


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = local_session("brook-tests")
    yield session
    session.stop()


@pytest.fixture
def b(brook_process: ServerProcess) -> Iterator[redis.Redis]:
    _reset(brook_process)
    client = brook_process.client()
    yield client
    client.close()


def source(spark: SparkSession, port: int, **options: object):
    reader = spark.read.format("brook").option("port", port)
    for name, value in options.items():
        reader = reader.option(name, str(value))
    return reader


def fill(client: redis.Redis, key: str, count: int, start_ms: int = 1_700_000_000_000,
         per_ms: int = 1) -> list[bytes]:
    """``count`` entries ``page=p<i%3>, n=<i>`` with IDs from ``start_ms``."""
    pipe = client.pipeline(transaction=False)
    for i in range(count):
        pipe.xadd(key, {"page": f"p{i % 3}", "n": str(i)},
                  id=f"{start_ms + i // per_ms}-{i % per_ms}")
    return pipe.execute()


# -- batch reads ---------------------------------------------------------------------------------


def test_batch_read_default_schema(spark, r, server):
    ids = fill(r, "s", 5)
    rows = source(spark, server.port, streams="s").load().orderBy("id").collect()
    assert [row.id.encode() for row in rows] == ids
    assert rows[0].stream == "s"
    assert rows[0].ts == dt.datetime(2023, 11, 14, 22, 13, 20)  # the ID's ms (session in UTC)
    assert rows[2].fields == {"page": "p2", "n": "2"}


def test_batch_read_replaces_invalid_utf8_in_strings(spark, r, server):
    r.xadd("s", {b"page\xff": b"ho\xfeme", "n": "1"}, id="1-1")
    r.xadd("s", {"page": "caf\xe9".encode(), "n": b"\xc3"}, id="2-1")
    rows = source(spark, server.port, streams="s").load().orderBy("id").collect()
    assert [row.fields for row in rows] == [{"page\ufffd": "ho\ufffdme", "n": "1"},
                                            {"page": "café", "n": "\ufffd"}]
    typed = source(spark, server.port, streams="s").schema("_id STRING, n STRING").load()
    assert [row.n for row in typed.orderBy("_id").collect()] == ["1", "\ufffd"]


def test_batch_read_several_streams_ranges_and_partitions(spark, r, server):
    fill(r, "a", 1000, per_ms=7)
    fill(r, "b", 10, start_ms=1_800_000_000_000, per_ms=5)
    df = source(spark, server.port, streams="a, b", partitionsPerStream=4).load()
    assert df.rdd.getNumPartitions() == 5  # "b" spans too few milliseconds to split
    got = sorted((row.stream, row.id) for row in df.collect())
    assert len(got) == len(set(got)) == 1010  # every entry once, whatever the partition
    ranged = source(spark, server.port, streams="a", startId="1700000000010-3",
                    endId="1700000000020").load()
    ids = sorted(tuple(map(int, row.id.split("-"))) for row in ranged.collect())
    assert ids[0] == (1700000000010, 3) and ids[-1] == (1700000000020, 6)
    assert len(ids) == 4 + 10 * 7


def test_batch_read_user_schema_casts_by_field_name(spark, r, server):
    r.xadd("s", {"page": "home", "n": "7", "price": "1.5", "ok": "true"}, id="1-1")
    r.xadd("s", {"page": "cart", "n": "seven", "ok": "false"}, id="2-1")
    df = source(spark, server.port, streams="s").schema(
        "_id STRING, _stream STRING, _ts TIMESTAMP, page STRING, n INT, price DOUBLE, "
        "ok BOOLEAN, missing STRING").load()
    rows = [row.asDict() for row in df.orderBy("_id").collect()]
    assert rows == [
        {"_id": "1-1", "_stream": "s", "_ts": dt.datetime(1970, 1, 1, 0, 0, 0, 1000),
         "page": "home", "n": 7, "price": 1.5, "ok": True, "missing": None},
        {"_id": "2-1", "_stream": "s", "_ts": dt.datetime(1970, 1, 1, 0, 0, 0, 2000),
         "page": "cart", "n": None, "price": None, "ok": False, "missing": None},
    ]


def test_batch_read_pushes_filters_into_ranges(spark, r, server):
    fill(r, "a", 100)
    fill(r, "b", 100)
    df = source(spark, server.port, streams="a,b").load()
    selected = df.where("stream = 'b' AND id >= '1700000000090-0' AND "
                        "ts < timestamp'2023-11-14 22:13:20.095'")
    assert sorted(row.id for row in selected.collect()) == [
        f"17000000000{90 + i}-0" for i in range(5)]
    # What the reader was told: the stream filter selects the key, the bounds narrow XRANGE.
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, LessThan

    from brook.spark.reader import BatchReader
    from brook.spark.rows import DEFAULT_SCHEMA

    reader = BatchReader({"port": str(server.port), "streams": "a,b"},
                         spark.createDataFrame([], DEFAULT_SCHEMA).schema)
    left = list(reader.pushFilters([
        EqualTo(("stream",), "b"), GreaterThanOrEqual(("id",), "1700000000090-0"),
        LessThan(("ts",), dt.datetime(2023, 11, 14, 22, 13, 20, 95000, tzinfo=dt.UTC))]))
    assert [type(f).__name__ for f in left] == ["GreaterThanOrEqual", "LessThan"]
    (partition,) = reader.partitions()
    assert (partition.stream, partition.start, partition.end) == (
        "b", "1700000000089-18446744073709551615", "1700000000095-0")


def test_batch_read_of_missing_or_empty_stream(spark, r, server):
    assert source(spark, server.port, streams="nothing").load().count() == 0


def test_bad_options_are_clear_errors(spark, brook_process):
    with pytest.raises(PySparkException, match="option streams is required"):
        source(spark, brook_process.port).load().collect()
    with pytest.raises(PySparkException, match="not a stream ID"):
        source(spark, brook_process.port, streams="s", startId="yesterday").load().collect()


# -- batch writes --------------------------------------------------------------------------------


def test_batch_write_fixed_stream_and_fields(spark, b, brook_process):
    df = spark.createDataFrame([("home", 3, None), ("cart", 4, 2.5)],
                               "page STRING, n INT, price DOUBLE")
    (df.write.format("brook").option("port", brook_process.port).option("stream", "out")
     .mode("append").save())
    rows = [fields for _, fields in b.xrange("out")]
    assert sorted(rows, key=lambda f: f[b"page"]) == [
        {b"page": b"cart", b"n": b"4", b"price": b"2.5"}, {b"page": b"home", b"n": b"3"}]


def test_batch_write_stream_column_map_fields_and_trim(spark, b, brook_process):
    df = spark.createDataFrame(
        [(f"t{i % 2}", {"k": str(i)}) for i in range(10)], "target STRING, fields MAP<STRING,STRING>")
    (df.write.format("brook").option("port", brook_process.port).option("streamColumn", "target")
     .option("maxlen", "3").option("approximateTrim", "false").mode("append").save())
    assert b.xlen("t0") == b.xlen("t1") == 3
    assert all(set(fields) == {b"k"} for _, fields in b.xrange("t0"))


def test_batch_write_exactly_once_with_a_write_id(spark, b, brook_process):
    df = spark.range(25).selectExpr("CAST(id AS STRING) AS n")

    def write(write_id: str | None) -> None:
        writer = (df.write.format("brook").option("port", brook_process.port)
                  .option("stream", "once").option("deliveryGuarantee", "exactly-once"))
        if write_id is not None:
            writer = writer.option("writeId", write_id)
        writer.mode("append").save()

    write("job-1")
    write("job-1")  # the same write run again: nothing added twice
    assert b.xlen("once") == 25
    write("job-2")  # another write
    assert b.xlen("once") == 50
    info = b.execute_command("XINFO", "STREAM", "once")
    details = dict(zip(info[::2], info[1::2], strict=True))
    assert (details[b"idmp-maxsize"], details[b"iids-added"], details[b"iids-duplicates"]) == (
        10000, 50, 25)
    with pytest.raises(PySparkException, match="need the option writeId"):
        write(None)


def test_batch_round_trip_keeps_types_through_a_user_schema(spark, r, server):
    schema = ("name STRING, n INT, big LONG, price DOUBLE, ok BOOLEAN, day DATE, "
              "at TIMESTAMP, amount DECIMAL(10,2), raw BINARY")
    rows = [("a", 1, 2**40, 1.25, True, dt.date(2026, 11, 21),
             dt.datetime(2026, 11, 21, 10, 30, 0, 123000), Decimal("12.34"), b"\x00\xff"),
            ("b", -7, -1, -0.5, False, dt.date(1999, 1, 1), dt.datetime(1999, 1, 1),
             Decimal("-0.01"), b"")]
    df = spark.createDataFrame(rows, schema)
    (df.write.format("brook").option("port", server.port).option("stream", "typed")
     .mode("append").save())
    back = source(spark, server.port, streams="typed").schema(schema).load()
    got = sorted(tuple(row) for row in back.collect())
    expected = sorted(tuple(row) for row in df.select(*back.columns).collect())
    assert got == expected


# -- the streaming source ------------------------------------------------------------------------


def _stream_query(spark, server: ServerProcess, checkpoint: Path, sink_stream: str,
                  sink: dict[str, object] | None = None, **options: object):
    """Copy streams to ``sink_stream`` on the same server (exactly-once where it has IDMP);
    ``options`` go to the source, ``sink`` to the sink."""
    reader = spark.readStream.format("brook").option("port", server.port)
    for name, value in options.items():
        reader = reader.option(name, str(value))
    guarantee = "exactly-once" if server.kind == "brook" or server.version >= (8, 6) \
        else "at-least-once"
    writer = (reader.load().selectExpr("stream AS source", "id AS source_id", "fields['n'] AS n")
              .writeStream.format("brook").option("port", server.port)
              .option("stream", sink_stream).option("deliveryGuarantee", guarantee))
    for name, value in (sink or {}).items():
        writer = writer.option(name, str(value))
    return (writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
            .start())


def _run(query) -> list[int]:
    query.awaitTermination()
    return [progress["numInputRows"] for progress in query.recentProgress
            if progress["numInputRows"]]


def _forget_commit(checkpoint: Path, batch: int) -> None:
    """Make the checkpoint look as if the query died before committing ``batch``."""
    (checkpoint / "commits" / str(batch)).unlink()
    (checkpoint / "commits" / f".{batch}.crc").unlink(missing_ok=True)


def _copied(client: redis.Redis, key: str) -> list[tuple[bytes, bytes]]:
    return [(fields[b"source"], fields[b"source_id"]) for _, fields in client.xrange(key)]


def test_stream_admission_control_restart_and_group(spark, r, server, tmp_path):
    ids = fill(r, "in", 70)
    query = _stream_query(spark, server, tmp_path / "ck", "out", streams="in",
                          startingOffsets="earliest", maxEntriesPerTrigger=30, group="pipe")
    assert _run(query) == [30, 30, 10]
    assert [i for _, i in _copied(r, "out")] == ids
    # The group follows the pipeline: at the end of the last batch, nothing left to read.
    (group,) = r.execute_command("XINFO", "GROUPS", "in")
    info = dict(zip(group[::2], group[1::2], strict=True))
    assert (info[b"last-delivered-id"], info[b"entries-read"], info[b"lag"]) == (
        ids[69], 70, 0)
    # A restart goes on from the checkpoint: only the new entries are read.
    more = fill(r, "in", 5, start_ms=1_800_000_000_000)
    query = _stream_query(spark, server, tmp_path / "ck", "out", streams="in",
                          startingOffsets="earliest", maxEntriesPerTrigger=30, group="pipe")
    assert _run(query) == [5]
    assert [i for _, i in _copied(r, "out")] == ids + more


def test_stream_starting_offsets_latest_and_json(spark, r, server, tmp_path):
    old = fill(r, "x", 4)
    fill(r, "y", 4)
    query = _stream_query(spark, server, tmp_path / "latest", "o1", streams="x",
                          startingOffsets="latest")
    assert _run(query) == []  # nothing after the head at the start
    query = _stream_query(spark, server, tmp_path / "json", "o2", streams="x,y",
                          startingOffsets=json.dumps({"x": old[1].decode()}))
    _run(query)
    copied = _copied(r, "o2")
    assert [i for s, i in copied if s == b"x"] == old[2:]
    assert len([i for s, i in copied if s == b"y"]) == 4  # not in the JSON: from the start


def test_stream_fails_on_data_loss_unless_told_otherwise(spark, r, server, tmp_path):
    fill(r, "in", 10)
    options = {"streams": "in", "startingOffsets": "earliest"}
    _run(_stream_query(spark, server, tmp_path / "ck", "out", **options))
    newer = fill(r, "in", 10, start_ms=1_800_000_000_000)
    r.xtrim("in", maxlen=5, approximate=False)  # 5 unread entries trimmed away
    query = _stream_query(spark, server, tmp_path / "ck", "out", **options)
    with pytest.raises(StreamingQueryException, match="removed \\(trimmed\\) before they "
                                                      "were read"):
        query.awaitTermination()
    query = _stream_query(spark, server, tmp_path / "ck", "out", **options,
                          failOnDataLoss="false")
    assert _run(query) == [5]
    assert [i for _, i in _copied(r, "out")][-5:] == newer[5:]


def test_stream_sink_exactly_once_when_a_batch_is_replayed(spark, b, brook_process, tmp_path):
    """Spark replays a batch whose commit record is missing with the same offsets and batch
    ID; the sink's XADD IDMP makes the replay add nothing."""
    fill(b, "in", 40)
    checkpoint = tmp_path / "ck"
    options = {"streams": "in", "startingOffsets": "earliest", "maxEntriesPerTrigger": 25}
    assert _run(_stream_query(spark, brook_process, checkpoint, "out", **options)) == [25, 15]
    assert b.xlen("out") == 40
    _forget_commit(checkpoint, 1)
    assert _run(_stream_query(spark, brook_process, checkpoint, "out", **options)) == [15]
    assert b.xlen("out") == 40  # replayed, nothing added twice
    info = b.execute_command("XINFO", "STREAM", "out")
    assert dict(zip(info[::2], info[1::2], strict=True))[b"iids-duplicates"] == 15


def _idmp(client: redis.Redis, key: str) -> tuple[int, int, int, int]:
    info = client.execute_command("XINFO", "STREAM", key)
    details = dict(zip(info[::2], info[1::2], strict=True))
    return tuple(details[name] for name in (  # type: ignore[return-value]
        b"idmp-duration", b"idmp-maxsize", b"iids-tracked", b"iids-duplicates"))


def test_a_restart_asking_for_a_longer_window_keeps_the_history(spark, b, brook_process,
                                                                  tmp_path):
    """XCFGSET forgets a stream's deduplication history (Redis's rule), so the sink changes
    the settings of a stream with no history only: a query restarted with a larger
    idmpDuration still recognises the replay of its unfinished batch."""
    fill(b, "in", 40)
    checkpoint = tmp_path / "ck"
    options = {"streams": "in", "startingOffsets": "earliest", "maxEntriesPerTrigger": 25}
    assert _run(_stream_query(spark, brook_process, checkpoint, "out", **options)) == [25, 15]
    assert _idmp(b, "out") == (3600, 10000, 40, 0)  # a new stream: set up for the sink
    _forget_commit(checkpoint, 1)
    longer = {"idmpDuration": 7200}
    assert _run(_stream_query(spark, brook_process, checkpoint, "out", longer,
                              **options)) == [15]
    assert b.xlen("out") == 40
    assert _idmp(b, "out") == (3600, 10000, 40, 15)  # the history is in use: left alone
    # A stream whose history is empty gets the longer window.
    b.xadd("fresh", {"f": "v"})
    assert _run(_stream_query(spark, brook_process, tmp_path / "ck2", "fresh", longer,
                              **options)) == [25, 15]
    assert _idmp(b, "fresh")[:3] == (7200, 10000, 40)


def _in_random_order(batches: Iterator) -> Iterator:
    import random

    import pyarrow as pa

    batches = list(batches)
    if batches:
        table = pa.Table.from_batches(batches)
        order = list(range(table.num_rows))
        random.shuffle(order)
        yield from table.take(order).to_batches()


def _shuffled_copy(spark, brook_process: ServerProcess, sink_url: str, checkpoint: Path):
    """``in`` -> ``out`` through a shuffle, then each partition's rows in a random order (as a
    shuffle's fetch order may change): a replayed batch holds the same rows per partition,
    in another order."""
    return (spark.readStream.format("brook").option("port", brook_process.port)
            .option("streams", "in").option("startingOffsets", "earliest")
            .option("maxEntriesPerTrigger", 150).load()
            .selectExpr("fields['n'] AS n").repartition(2, "n")
            .mapInArrow(_in_random_order, "n STRING")
            .writeStream.format("brook").option("url", sink_url).option("stream", "out")
            .option("pipelineSize", 10).option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True).start())


def test_shuffled_batch_replayed_in_another_order_is_exactly_once(spark, b, brook_process,
                                                                    tmp_path):
    """The sink's connection is cut mid-batch three times (a proxy lets 60, 120, then 180
    XADDs through); every restart replays the batch with its rows in another order. In the
    end every row is in the stream exactly once."""
    fill(b, "in", 300)
    checkpoint = tmp_path / "ck"
    proxy = CuttingProxy(brook_process.port)
    try:
        for budget in (60, 120, 180):
            proxy.cut_after(budget)
            with pytest.raises(StreamingQueryException):
                _shuffled_copy(spark, brook_process, proxy.url, checkpoint).awaitTermination()
            assert proxy.cut.is_set()
            proxy.heal()
        assert 0 < b.xlen("out") < 300  # each attempt died mid-batch
        _run(_shuffled_copy(spark, brook_process, proxy.url, checkpoint))
    finally:
        proxy.close()
    copied = [fields for _, fields in b.xrange("out")]
    assert all(list(fields) == [b"n"] for fields in copied)
    counts = Counter(int(fields[b"n"]) for fields in copied)
    missing = [n for n in range(300) if n not in counts]
    twice = sorted(n for n, count in counts.items() if count > 1)
    assert (missing, twice) == ([], [])
    assert len(copied) == 300


def test_stream_group_lag_follows_the_pipeline(spark, r, server, tmp_path):
    """The group's lag is what the pipeline has not processed yet: 0 once it has caught up,
    the new entries after more arrive (lag counted by Redis's rules: exact here, no
    deletions), 0 again after the next run."""
    fill(r, "in", 30)
    options = {"streams": "in", "startingOffsets": "earliest", "maxEntriesPerTrigger": 20,
               "group": "pipe"}

    def lag() -> tuple[int, int]:
        (group,) = r.execute_command("XINFO", "GROUPS", "in")
        info = dict(zip(group[::2], group[1::2], strict=True))
        return info[b"entries-read"], info[b"lag"]

    assert _run(_stream_query(spark, server, tmp_path / "ck", "out", **options)) \
        == [20, 10]
    assert lag() == (30, 0)
    fill(r, "in", 7, start_ms=1_800_000_000_000)
    assert lag() == (30, 7)
    assert _run(_stream_query(spark, server, tmp_path / "ck", "out", **options)) \
        == [7]
    assert lag() == (37, 0)


def test_stream_sink_at_least_once_duplicates_a_replay(spark, b, brook_process, tmp_path):
    """The same replay without IDMP writes the batch again: what at-least-once means."""
    fill(b, "in", 40)
    checkpoint = tmp_path / "ck"

    def query():
        return (spark.readStream.format("brook").option("port", brook_process.port)
                .option("streams", "in").option("startingOffsets", "earliest")
                .option("maxEntriesPerTrigger", 25).load().select("id")
                .writeStream.format("brook").option("port", brook_process.port)
                .option("stream", "out").option("deliveryGuarantee", "at-least-once")
                .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
                .start())

    assert _run(query()) == [25, 15]
    _forget_commit(checkpoint, 1)
    assert _run(query()) == [15]
    assert b.xlen("out") == 55


# -- TLS and ACL users --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_brook(tmp_path_factory) -> Iterator[tuple[ServerProcess, int, Path]]:
    """A Brook with a TLS port that wants client certificates, and a user with a password:
    (the server, its TLS port, the directory of the CA's and the client's PEM files)."""
    trustme = pytest.importorskip("trustme")
    tmp = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp / "ca.pem"))
    ca.issue_cert("localhost").private_key_and_cert_chain_pem.write_to_path(
        str(tmp / "server.pem"))
    ca.issue_cert("spark").private_key_and_cert_chain_pem.write_to_path(str(tmp / "client.pem"))
    tls_port = free_port()
    process = start_brook(tmp, "--tls-port", str(tls_port), "--tls-cert-file",
                          str(tmp / "server.pem"), "--tls-key-file", str(tmp / "server.pem"),
                          "--tls-ca-cert-file", str(tmp / "ca.pem"))
    process.client().execute_command("ACL", "SETUSER", "pipeline", "on", ">s3cret",
                                     "~clicks*", "~counts*", "+@all")
    yield process, tls_port, tmp
    process.stop()


def test_batch_read_and_write_over_tls_as_an_acl_user(spark, tls_brook):
    """A rediss:// URL with a user, the CA file and a client certificate: the executors open
    their own TLS connections with them (the reader through redis-py, the sink's own wire)."""
    process, tls_port, certs = tls_brook
    fill(process.client(), "clicks", 20)
    url = f"rediss://pipeline:s3cret@localhost:{tls_port}/0"
    tls = {"tlsCaFile": str(certs / "ca.pem"), "tlsCertFile": str(certs / "client.pem")}
    rows = source(spark, tls_port, url=url, streams="clicks", **tls).load()
    counts = rows.groupBy("fields.page").count().withColumnRenamed("page", "p")
    writer = counts.selectExpr("p AS page", "CAST(count AS STRING) AS n").write.format("brook")
    for name, value in {"url": url, "stream": "counts", **tls}.items():
        writer = writer.option(name, value)
    writer.mode("append").save()
    written = sorted((f[b"page"], f[b"n"]) for _, f in process.client().xrange("counts"))
    assert written == [(b"p0", b"7"), (b"p1", b"7"), (b"p2", b"6")]
    with pytest.raises(PySparkException, match="NOPERM"):  # the user's keys only
        writer = counts.write.format("brook")
        for name, value in {"url": url, "stream": "elsewhere", **tls}.items():
            writer = writer.option(name, value)
        writer.mode("append").save()
    with pytest.raises((PySparkException, ConnectorError), match="certificate verify failed"):
        source(spark, tls_port, url=url, streams="clicks",
               tlsCertFile=str(certs / "client.pem")).load().collect()  # no CA: not trusted


# -- real Redis ------------------------------------------------------------------------------


@pytest.fixture
def real(redis_process: ServerProcess | None) -> Iterator[redis.Redis]:
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    _reset(redis_process)
    client = redis_process.client()
    yield client
    client.close()


def test_real_redis_without_idmp_refuses_exactly_once(spark, real, redis_process):
    if redis_process.version >= (8, 6):
        pytest.skip("this Redis has IDMP")
    df = spark.range(3)
    with pytest.raises((PySparkException, ConnectorError), match="needs XADD IDMP"):
        (df.write.format("brook").option("port", redis_process.port).option("stream", "copy")
         .option("deliveryGuarantee", "exactly-once").mode("append").save())


EXAMPLE = ROOT / "examples" / "clickstream.py"


def _check_example_output(done: subprocess.CompletedProcess) -> None:
    """Every finished minute reached Parquet and the results stream, the dashboard group
    read them all, and the job's group on the input has nothing left to read."""
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    written = next(line for line in lines if line.startswith("job: finished"))
    read = next(line for line in lines if line.startswith("dashboard:"))
    rows = int(written.split(" and ")[1].split()[0])
    assert rows >= 5  # the watermark has closed one whole minute at least: its five pages
    assert read.startswith(f"dashboard: {rows} per-minute counts") and read.endswith("lag 0")
    counts = [int(line.split()[-1]) for line in lines if line.startswith("  ")]
    assert len(counts) == rows and sum(counts) <= 3000


def test_the_clickstream_example_runs_end_to_end(tmp_path):
    """examples/clickstream.py as a user runs it (its own server and Spark session)."""
    done = subprocess.run([sys.executable, str(EXAMPLE), "--events", "3000", "--minutes", "3",
                           "--output", str(tmp_path)], capture_output=True, text=True,
                          timeout=500)
    _check_example_output(done)
    assert "job: Spark master local[2]" in done.stdout


def test_the_example_submitted_to_a_standalone_cluster(b, brook_process, tmp_path):
    """A master and two workers from the pyspark package; the example submitted with
    spark-submit, reaching Brook by the url option only. Both workers ran executors."""
    from bench.spark_cluster import spark_env, spark_submit, standalone_cluster

    url = f"redis://127.0.0.1:{brook_process.port}/0"
    with standalone_cluster(tmp_path / "cluster", workers=2) as master:
        done = subprocess.run(
            [spark_submit(), "--master", master, "--conf", "spark.executor.memory=1g",
             "--conf", f"spark.pyspark.python={sys.executable}", str(EXAMPLE), "--url", url,
             "--events", "3000", "--minutes", "3", "--output", str(tmp_path / "out")],
            env=spark_env(), capture_output=True, text=True, timeout=600)
    _check_example_output(done)
    assert f"job: Spark master {master}" in done.stdout
    for worker in ("worker-0", "worker-1"):
        assert list((tmp_path / "cluster" / worker).glob("app-*/*/stderr")), worker


# -- the driver killed (-9) mid-batch and between commit steps -----------------------------------


def _driver(brook_process: ServerProcess, sink_url: str, checkpoint: Path, log: Path,
            *extra: str) -> subprocess.Popen:
    """tests/spark/spark_job.py in its own process group (the JVM and Python workers die with it)."""
    script = Path(__file__).parent / "spark_job.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, str(script), "--source-port", str(brook_process.port),
             "--sink-url", sink_url, "--checkpoint", str(checkpoint), *extra],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def _wait_for(condition, what: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 240
    while not condition():
        assert process.poll() is None, f"the driver ended before {what}: {log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"no {what} in time"
        time.sleep(0.05)


def test_killed_driver_mid_batch_and_in_commit_then_restart_is_exactly_once(b, brook_process,
                                                                              tmp_path):
    """The driver process is killed twice: while the sink is stuck mid-batch (a proxy holds
    its connection after 150 XADDs), then while it commits the replayed batch (all its rows
    written, the commit record not). The third run finishes: every row exactly once, and
    the group shows what Spark committed at every point."""
    fill(b, "in", 400)
    checkpoint, log = tmp_path / "ck", tmp_path / "driver.log"
    proxy = CuttingProxy(brook_process.port)

    def group() -> tuple[int, int]:
        (info,) = b.execute_command("XINFO", "GROUPS", "in")
        details = dict(zip(info[::2], info[1::2], strict=True))
        return details[b"entries-read"], details[b"lag"]

    try:
        proxy.cut_after(150, hold=True)  # the planning probe, batch 0, half of batch 1
        driver = _driver(brook_process, proxy.url, checkpoint, log)
        _wait_for(proxy.held.is_set, "stuck sink", driver, log)
        _kill(driver)
        proxy.release()
        proxy.heal()
        assert 100 < b.xlen("out") < 200
        assert group() == (100, 300)  # batch 0 committed, batch 1 not
        held = tmp_path / "held"
        driver = _driver(brook_process, proxy.url, checkpoint, log,
                         "--hold-commit", "1", "--held", str(held))
        _wait_for(held.exists, "commit of batch 1", driver, log)
        _kill(driver)
        assert b.xlen("out") == 200  # batch 1 replayed in another order: nothing twice
        assert not (checkpoint / "commits" / "1").exists()
        assert group() == (100, 300)
        driver = _driver(brook_process, proxy.url, checkpoint, log)
        assert driver.wait(timeout=300) == 0, log.read_text()[-3000:]
    finally:
        proxy.close()
    counts = Counter(int(fields[b"n"]) for _, fields in b.xrange("out"))
    assert sorted(counts) == list(range(400))
    assert set(counts.values()) == {1}
    assert group() == (400, 0)
