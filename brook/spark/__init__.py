"""A PySpark connector for Brook streams (and real Redis): batch and Structured Streaming
source, batch and streaming sink, registered under the short name ``brook``.

Installed with the ``[spark]`` extra. Nothing here is imported by the server: pyspark (and so
Java) is only needed by the programs that call :func:`register`.

Imports: nothing of the server's: it speaks to Brook (or Redis) over the wire, with redis-py.
"""

from __future__ import annotations

from typing import Any


def register(spark: Any) -> None:
    """Make ``spark.read/readStream/write/writeStream.format("brook")`` available, and turn on
    Python filter pushdown (off by default in Spark 4.x; the batch reader uses it to turn
    filters on the stream name, the ID and the time into key choice and XRANGE bounds)."""
    from brook.spark.source import BrookDataSource

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(BrookDataSource)


__all__ = ["register"]
