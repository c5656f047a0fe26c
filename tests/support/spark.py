"""The local SparkSession the connector's tests share: two cores, no UI, UTC, this
interpreter for the Python workers, the ``brook`` source registered."""

from __future__ import annotations

import os
import sys
from typing import Any


def local_session(app: str) -> Any:
    """A new (or the running) ``local[2]`` session; the caller stops it."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter
    from pyspark.sql import SparkSession

    import brook.spark

    session = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.python.filterPushdown.enabled", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    brook.spark.register(session)
    return session
