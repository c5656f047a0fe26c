"""The Spark connector's throughput, against Brook and real Redis in one run.

    python -m bench.spark [--entries 1000000] [--repeat 2] [--servers brook,redis] [--cluster]
    python -m bench.spark --shards [--entries 600000] [--repeat 2]

Rows (local[2], and with ``--cluster`` again on a standalone cluster of two one-core workers
started from the pyspark package; each server filled with the same sensor readings as the
stream benchmark):

* batch read: ``spark.read.format("brook") ... .count()`` of the whole stream (entries/s);
* streaming source: ``maxEntriesPerTrigger=200000``, ``Trigger.AvailableNow``, ``noop`` sink
  (rows/s over the whole query, first batch included);
* sink: a cached 3-column DataFrame (string, double, long) of the same size written to a new
  stream, at-least-once and (where the server has IDMP) exactly-once (rows/s).

Also prints the connector's own ceiling in one process (no Spark): XRANGE pages to Arrow, and
Arrow to pipelined XADDs, so the figures say where the time goes.

``--shards`` instead measures the batch read of ``--entries`` entries in 12 streams (keys over
every slot) from a 3-master Brook cluster, each partition read from its stream's master, and
the same data from a one-master Brook cluster (the same connector path, one node), local[2];
rows/s each and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.cluster import Nodes
from bench.run import SERVERS, markdown_table, print_row, start_targets, stop_targets
from bench.spark_cluster import standalone_cluster
from bench.streams import KEY, Connection, encode, fill, sensor_batches, sensor_readings

TRIGGER_ROWS = 200_000
SHARD_STREAMS = [f"sensors-{i}" for i in range(12)]


def _session(master: str = "local[2]"):  # type: ignore[no-untyped-def]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter
    from pyspark.sql import SparkSession

    import brook.spark

    spark = (SparkSession.builder.master(master).appName("brook-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    brook.spark.register(spark)
    return spark


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _has_idmp(port: int) -> bool:
    from brook.spark.connection import ConnectionOptions, supports_idmp

    client = ConnectionOptions(port=port).connect()
    try:
        return supports_idmp(client)
    finally:
        client.close()


def _in_process(port: int, entries: int, idmp: bool) -> tuple[float, float, float | None]:
    """(XRANGE pages -> Arrow entries/s, Arrow -> XADD rows/s, the same exactly-once) in this
    process, no Spark."""
    import pyarrow as pa
    from pyspark.sql.types import (
        DoubleType,
        LongType,
        MapType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    from brook.spark import ids
    from brook.spark.connection import ConnectionOptions
    from brook.spark.reader import RangePartition, read_partition
    from brook.spark.rows import RowBuilder
    from brook.spark.writer import _Sink

    read_schema = StructType([StructField("stream", StringType()), StructField("id", StringType()),
                              StructField("ts", TimestampType()),
                              StructField("fields", MapType(StringType(), StringType()))])
    everything = RangePartition(KEY.decode(), ids.fmt(ids.ZERO), ids.fmt(ids.MAX))
    read_seconds = _timed(lambda: sum(batch.num_rows for batch in read_partition(
        ConnectionOptions(port=port), RowBuilder(read_schema), everything, 10_000)))
    rows = min(entries, 200_000)
    batch = pa.RecordBatch.from_arrays(
        [pa.array([str(i) for i in range(rows)]), pa.array([i * 0.5 for i in range(rows)]),
         pa.array([i % 100 for i in range(rows)], pa.int64())], names=["sensor", "temp", "hum"])
    write_schema = StructType([StructField("sensor", StringType()),
                               StructField("temp", DoubleType()), StructField("hum", LongType())])
    sink = _Sink({"port": str(port), "stream": "bench-out", "deliveryGuarantee": "at-least-once"},
                 write_schema, False)
    slices = [batch.slice(i, 10_000) for i in range(0, rows, 10_000)]
    write_seconds = _timed(lambda: sink.write(iter(slices), None))
    once_seconds = None
    if idmp:
        once = _Sink({"port": str(port), "stream": "bench-once",
                      "deliveryGuarantee": "exactly-once"}, write_schema, False)
        once_seconds = _timed(lambda: once.write(iter(slices), "bench:0"))
    return (entries / read_seconds, rows / write_seconds,
            rows / once_seconds if once_seconds else None)


def _measure(spark, targets: list, options: argparse.Namespace, workdir: str,  # type: ignore[no-untyped-def]
             record: Callable[[str, str, float], None], where: str) -> None:
    """Every Spark row, on each server, with ``spark`` (``where`` names its master)."""
    source = spark.range(options.entries).selectExpr(
        "CAST(id AS STRING) AS sensor", "id * 0.5 AS temp", "id % 100 AS hum").cache()
    source.count()
    for target in targets:
        reader = spark.read.format("brook").option("port", target.port).option(
            "streams", KEY.decode())
        reader.load().count()  # warm the Python workers
        for _ in range(options.repeat):
            seconds = _timed(lambda reader=reader: reader.load().count())
            record(f"batch read, count(), {where} (entries/s)", target.name,
                   options.entries / seconds)
            checkpoint = Path(workdir) / f"ck-{target.name}-{time.time()}"
            query = (spark.readStream.format("brook").option("port", target.port)
                     .option("streams", KEY.decode())
                     .option("startingOffsets", "earliest")
                     .option("maxEntriesPerTrigger", TRIGGER_ROWS).load()
                     .writeStream.format("noop").trigger(availableNow=True)
                     .option("checkpointLocation", str(checkpoint)).start())
            seconds = _timed(query.awaitTermination)
            record(f"streaming source, {TRIGGER_ROWS:,} per trigger, {where} (rows/s)",
                   target.name, options.entries / seconds)
            modes = ["at-least-once"] + (["exactly-once"] if _has_idmp(target.port) else [])
            for mode in modes:
                stream = f"out-{mode}-{time.time()}"
                writer = (source.write.format("brook").option("port", target.port)
                          .option("stream", stream).option("deliveryGuarantee", mode)
                          .option("writeId", stream).mode("append"))
                seconds = _timed(writer.save)
                record(f"sink, {mode}, {where} (rows/s)", target.name,
                       options.entries / seconds)
    source.unpersist()


def _fill_shards(port: int, per_stream: int) -> dict[int, int]:
    """``per_stream`` sensor readings in each of :data:`SHARD_STREAMS`, written on the master
    that serves it; how many streams each master got."""
    from brook.spark.connection import ConnectionOptions
    from brook.spark.shards import Shards

    shards = Shards.discover(ConnectionOptions(port=port))
    spread: dict[int, int] = {}
    for stream in SHARD_STREAMS:
        node = shards.node_of(stream)
        target = node[1] if node is not None else port
        spread[target] = spread.get(target, 0) + 1
        conn = Connection(target)
        parts = []
        for sensor, temp, hum in sensor_readings(per_stream):
            parts.append(encode("XADD", stream, "*", "sensor", sensor, "temp", temp, "hum", hum))
            if len(parts) == 1000:
                conn.pipeline(b"".join(parts), len(parts))
                parts = []
        if parts:
            conn.pipeline(b"".join(parts), len(parts))
        conn.close()
    return spread


def shard_read(options: argparse.Namespace) -> None:
    """The ``--shards`` rows: the batch read from three masters and from one."""
    per_stream = options.entries // len(SHARD_STREAMS)
    total = per_stream * len(SHARD_STREAMS)
    rates: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory() as workdir:
        spark = _session()
        try:
            for masters in (3, 1):
                nodes = Nodes("brook", Path(workdir) / f"masters-{masters}")
                try:
                    port = nodes.create(masters)[0]
                    spread = _fill_shards(port, per_stream)
                    print(f"{masters} master(s): streams per master {sorted(spread.values())}")
                    reader = spark.read.format("brook").option("port", port).option(
                        "streams", ",".join(SHARD_STREAMS))
                    assert reader.load().count() == total  # also warms the Python workers
                    rates[masters] = [total / _timed(lambda r=reader: r.load().count())
                                      for _ in range(options.repeat)]
                finally:
                    nodes.stop()
        finally:
            spark.stop()
    three, one = (statistics.median(rates[k]) for k in (3, 1))
    print(f"\nSpark batch read, {len(SHARD_STREAMS)} streams x {per_stream:,} entries, "
          f"local[2], medians of {options.repeat}\n")
    print("| Brook masters | rows/s |\n|---:|---:|")
    print(f"| 3 | {three:,.0f} |\n| 1 | {one:,.0f} |")
    print(f"\n3 masters / 1 master: {three / one:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--cluster", action="store_true",
                        help="also run the Spark rows on a standalone cluster of two workers")
    parser.add_argument("--shards", action="store_true",
                        help="only the batch read from a 3-master Brook cluster against one")
    options = parser.parse_args()
    if options.shards:
        shard_read(options)
        return
    servers = tuple(options.servers.split(","))
    results: dict[str, dict[str, list[float]]] = {}

    def record(label: str, name: str, value: float) -> None:
        results.setdefault(label, {server: [] for server in servers})[name].append(value)

    with tempfile.TemporaryDirectory() as workdir:
        targets = start_targets(Path(workdir), ["--save", ""], servers)
        try:
            for target in targets:
                conn = Connection(target.port)
                fill(conn, sensor_batches(options.entries))
                conn.close()
            spark = _session()
            try:
                _measure(spark, targets, options, workdir, record, "local[2]")
            finally:
                spark.stop()
            if options.cluster:
                with standalone_cluster(Path(workdir) / "cluster") as master:
                    spark = _session(master)
                    try:
                        _measure(spark, targets, options, workdir, record, "cluster 2x1")
                    finally:
                        spark.stop()
            for target in targets:
                read_rate, write_rate, once_rate = _in_process(
                    target.port, options.entries, _has_idmp(target.port))
                record("  in one process: XRANGE -> Arrow (entries/s)", target.name, read_rate)
                record("  in one process: Arrow -> XADD (rows/s)", target.name, write_rate)
                if once_rate is not None:
                    record("  in one process: Arrow -> XADD IDMP (rows/s)", target.name,
                           once_rate)
        finally:
            stop_targets(targets)
    for label, row in results.items():
        print_row(label, {name: values for name, values in row.items() if values})
    complete = {label: row for label, row in results.items() if all(row.values())}
    print(f"\nSpark connector, {options.entries:,} entries, medians of "
          f"{options.repeat} (in-process rows: one pass)\n")
    print(markdown_table(complete, "measure", ""))
    for label, row in results.items():
        if not all(row.values()):
            only = {name: statistics.median(v) for name, v in row.items() if v}
            print(f"| {label} | " + " | ".join(f"{n}: {v:,.0f}" for n, v in only.items()) + " |")


if __name__ == "__main__":
    main()
