"""A Spark driver for the kill tests, run as its own process so a test can kill it (-9).

It copies stream ``in`` (source on ``--source-port``, consumer group ``pipe``) to stream ``out``
(sink at ``--sink-url``) through a shuffle whose partitions come in a random order, 100
entries per micro-batch, until what was there at the start is copied. With ``--hold-commit N``
the sink is wrapped (here, on the test side) so that committing batch N stops: the file
``--held`` appears and the driver waits there to be killed, every row of the batch written
and its commit record not.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

import brook.spark
from brook.spark.source import BrookDataSource
from brook.spark.writer import StreamWriter


def in_random_order(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    batches = list(batches)
    if batches:
        table = pa.Table.from_batches(batches)
        order = list(range(table.num_rows))
        random.shuffle(order)
        yield from table.take(order).to_batches()


def held_sink(batch: int, marker: str) -> type[BrookDataSource]:
    """The brook sink, but its commit of ``batch`` never returns (after writing ``marker``)."""

    class HeldWriter(StreamWriter):
        def commit(self, messages, batchId):  # noqa: N803 (Spark's name)
            if batchId == batch:
                Path(marker).write_text(str(batchId))
                while True:
                    time.sleep(1)
            super().commit(messages, batchId)

    class HeldSink(BrookDataSource):
        @classmethod
        def name(cls) -> str:
            return "brook-held"

        def streamWriter(self, schema, overwrite):  # noqa: N802
            return HeldWriter(self.options, schema)

    return HeldSink


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-port", type=int, required=True)
    parser.add_argument("--sink-url", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--hold-commit", type=int)
    parser.add_argument("--held")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master(args.master).appName("brook-kill-test")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    brook.spark.register(spark)
    sink = "brook"
    if args.hold_commit is not None:
        spark.dataSource.register(held_sink(args.hold_commit, args.held))
        sink = "brook-held"
    query = (spark.readStream.format("brook").option("port", args.source_port)
             .option("streams", "in").option("startingOffsets", "earliest")
             .option("maxEntriesPerTrigger", 100).option("group", "pipe").load()
             .selectExpr("fields['n'] AS n").repartition(2, "n")
             .mapInArrow(in_random_order, "n STRING")
             .writeStream.format(sink).option("url", args.sink_url).option("stream", "out")
             .option("pipelineSize", 10).option("checkpointLocation", args.checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
