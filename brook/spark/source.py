"""The ``brook`` data source: what Spark instantiates for ``format("brook")``."""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from brook.spark.reader import BatchReader
from brook.spark.rows import DEFAULT_SCHEMA
from brook.spark.stream_reader import StreamReader
from brook.spark.writer import BatchWriter, StreamWriter


class BrookDataSource(DataSource):
    """Brook (or Redis) streams as a Spark source and sink; options are in the README."""

    @classmethod
    def name(cls) -> str:
        return "brook"

    def schema(self) -> str:
        return DEFAULT_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        return BatchReader(self.options, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802
        return StreamReader(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return BatchWriter(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        return StreamWriter(self.options, schema)
