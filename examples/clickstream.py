"""End-to-end example: click events -> Brook -> Spark Structured Streaming -> Brook + Parquet.

    make example            # or: python examples/clickstream.py [--port 6390] [--events 20000]

1. A Brook server is started (or ``--port`` points at a running one).
2. A generator writes click events ``{page, user}`` into the stream ``clicks``; each entry's ID
   is its event time (a burst covering ``--minutes`` minutes of clicks).
3. A Structured Streaming job reads ``clicks`` with the ``brook`` source, counts clicks per page
   per minute of event time with a one-minute watermark, and writes each finished minute to the
   stream ``page-counts`` (exactly-once) and to Parquet files. It runs with
   ``Trigger.AvailableNow`` on ``local[2]`` and keeps its progress in a checkpoint, so running it
   again only processes new clicks.
4. A consumer group ``dashboard`` reads ``page-counts`` with XREADGROUP and acknowledges.

On a cluster the same job runs unchanged with ``spark-submit --master <cluster>`` and the
``--url`` of a Brook server the executors can reach (the source and the sink get only that
URL): reads and writes happen in the executors, the driver only plans offsets. Without
spark-submit (or ``--master``) it runs on ``local[2]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

PAGES = ["home", "search", "product", "cart", "checkout"]


def start_brook(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "brook", "--port", str(port), "--save", ""],
                              cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            redis.Redis(port=port).ping()
            return server, port
        except redis.ConnectionError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("Brook did not start")


def generate(client: redis.Redis, events: int, minutes: int) -> None:
    """``events`` clicks spread over ``minutes`` minutes of event time, ending now."""
    now = int(time.time() * 1000)
    start = now - minutes * 60_000
    last = client.xinfo_stream("clicks")["last-generated-id"] if client.exists("clicks") else b"0-0"
    start = max(start, int(last.split(b"-")[0]) + 1)
    step = max((now - start) // events, 1)
    pipe = client.pipeline(transaction=False)
    for i in range(events):
        page = PAGES[(i * 7 + i // 13) % len(PAGES)]
        pipe.xadd("clicks", {"page": page, "user": f"u{i % 97}"}, id=f"{start + i * step}-0")
        if len(pipe) >= 1000:
            pipe.execute()
    pipe.execute()
    print(f"generator: {events} clicks in 'clicks' over {minutes} minutes of event time")


def run_job(url: str, output: Path, master: str | None) -> None:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as f

    import brook.spark

    builder = SparkSession.builder.appName("clickstream")
    # spark-submit starts the JVM first and hands its port over: its --master then applies.
    if master is not None or "PYSPARK_GATEWAY_PORT" not in os.environ:
        builder = builder.master(master or "local[2]")
    spark = (builder.config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    print(f"job: Spark master {spark.sparkContext.master}")
    spark.sparkContext.setLogLevel("ERROR")
    brook.spark.register(spark)
    def per_minute_counts(group: str | None):  # type: ignore[no-untyped-def]
        reader = (spark.readStream.format("brook").option("url", url).option("streams", "clicks")
                  .option("startingOffsets", "earliest").option("maxEntriesPerTrigger", 5000))
        if group is not None:  # the group shows this query's lag in XINFO GROUPS
            reader = reader.option("group", group)
        clicks = reader.schema("page STRING, user STRING, _ts TIMESTAMP").load()
        return (clicks.withWatermark("_ts", "1 minute")
                .groupBy(f.window("_ts", "1 minute").alias("minute"), "page").count()
                .select(f.col("minute.start").alias("minute"), "page", "count"))

    # Two queries, one per destination, each with its own checkpoint, run one after the other.
    (per_minute_counts("spark-clickstream").writeStream.format("brook").option("url", url)
     .option("stream", "page-counts").outputMode("append")
     .option("checkpointLocation", str(output / "checkpoint-brook"))
     .trigger(availableNow=True).start().awaitTermination())
    (per_minute_counts(None).writeStream.format("parquet").option("path", str(output / "parquet"))
     .outputMode("append").option("checkpointLocation", str(output / "checkpoint-parquet"))
     .trigger(availableNow=True).start().awaitTermination())
    rows = spark.read.parquet(str(output / "parquet")).count()
    print(f"job: finished minutes written to 'page-counts' and {rows} rows to "
          f"{output / 'parquet'}")
    spark.stop()


def dashboard(client: redis.Redis) -> None:
    """The consumer group: read every per-minute count, print it, acknowledge it."""
    with contextlib.suppress(redis.ResponseError):  # exists: it goes on where it stopped
        client.xgroup_create("page-counts", "dashboard", id="0", mkstream=True)
    total = 0
    while True:
        reply = client.xreadgroup("dashboard", "screen-1", {"page-counts": ">"}, count=100)
        if not reply:
            break
        for entry_id, fields in reply[0][1]:
            minute = fields[b"minute"].decode()
            print(f"  {minute}  {fields[b'page'].decode():<9} {int(fields[b'count']):>5}")
            client.xack("page-counts", "dashboard", entry_id)
            total += 1
    lag = client.xinfo_groups("clicks")
    print(f"dashboard: {total} per-minute counts read and acknowledged; the job's group on "
          f"'clicks': lag {lag[0]['lag'] if lag else 'n/a'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running Brook server, redis://host:port/db (default: "
                        "start one)")
    parser.add_argument("--port", type=int, help="a running Brook server on 127.0.0.1")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, or local[2])")
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--minutes", type=int, default=5)
    parser.add_argument("--output", type=Path, help="Parquet and checkpoints (default: temp)")
    options = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="brook-clickstream-"))
    output = options.output or workdir / "output"
    server = None
    url = options.url
    if url is None and options.port is not None:
        url = f"redis://127.0.0.1:{options.port}/0"
    if url is None:
        server, port = start_brook(workdir)
        url = f"redis://127.0.0.1:{port}/0"
        print(f"brook: started on port {port}")
    try:
        client = redis.Redis.from_url(url, decode_responses=False)
        generate(client, options.events, options.minutes)
        run_job(url, output, options.master)
        dashboard(client)
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        if options.output is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
