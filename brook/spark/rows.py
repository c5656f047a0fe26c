"""Stream entries to Arrow record batches, in the exact Arrow schema Spark expects.

Two shapes: the default schema (one row per entry: ``stream``, ``id``, ``ts`` — the ID's
milliseconds as a timestamp — and ``fields`` as a string map), or a user schema whose columns
are taken from the fields by name and cast to the declared type, plus the metadata columns
``_stream``, ``_id`` and ``_ts``. A value that cannot be cast, or a missing field, is null.
Strings are decoded as UTF-8 (invalid bytes replaced); declare a column BINARY for raw bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

DEFAULT_SCHEMA = "stream STRING, id STRING, ts TIMESTAMP, fields MAP<STRING, STRING>"
DEFAULT_COLUMNS = ["stream", "id", "ts", "fields"]
METADATA_COLUMNS = ("_stream", "_id", "_ts")

# One entry as XRANGE returns it through redis-py: (b"ms-seq", [field, value, ...]).
Entry = tuple[bytes, Sequence[bytes]]


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def _ms(entry_id: bytes) -> int:
    return int(entry_id.split(b"-", 1)[0])


class RowBuilder:
    """Builds the record batches of one schema (picklable: it travels to the executors)."""

    def __init__(self, schema: StructType) -> None:
        self.schema = schema
        self.default = [field.name for field in schema.fields] == DEFAULT_COLUMNS and \
            _is_default(schema)
        self._arrow: pa.Schema | None = None

    def __getstate__(self) -> dict:
        return {"schema": self.schema, "default": self.default}

    def __setstate__(self, state: dict) -> None:
        self.schema = state["schema"]
        self.default = state["default"]
        self._arrow = None

    @property
    def arrow_schema(self) -> pa.Schema:
        if self._arrow is None:
            self._arrow = to_arrow_schema(self.schema, timezone="UTC")
        return self._arrow

    def batch(self, stream: str, entries: list[Entry]) -> pa.RecordBatch:
        """The rows of ``entries`` (all from ``stream``)."""
        schema = self.arrow_schema
        if self.default:
            arrays = [
                pa.array([stream] * len(entries), pa.string()),
                pa.array([_text(entry_id) for entry_id, _ in entries], pa.string()),
                pa.array([_ms(entry_id) * 1000 for entry_id, _ in entries], schema.field(2).type),
                pa.array([[(_text(row[i]), _text(row[i + 1])) for i in range(0, len(row), 2)]
                          for _, row in entries], schema.field(3).type),
            ]
            return pa.RecordBatch.from_arrays(arrays, schema=schema)
        rows = [dict(zip(row[::2], row[1::2], strict=True)) for _, row in entries]
        arrays = []
        for field in schema:
            if field.name == "_stream":
                column = pa.array([stream] * len(entries), pa.string())
            elif field.name == "_id":
                column = pa.array([_text(entry_id) for entry_id, _ in entries], pa.string())
            elif field.name == "_ts":
                column = pa.array([_ms(entry_id) for entry_id, _ in entries], pa.int64())
                if pa.types.is_timestamp(field.type):
                    column = pa.array([_ms(entry_id) * 1000 for entry_id, _ in entries],
                                      field.type)
            else:
                key = field.name.encode()
                values = [row.get(key) for row in rows]
                if pa.types.is_binary(field.type):
                    column = pa.array(values, pa.binary())
                else:
                    column = pa.array([None if v is None else _text(v) for v in values],
                                      pa.string())
            arrays.append(_cast(column, field.type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _is_default(schema: StructType) -> bool:
    from pyspark.sql.types import MapType, StringType, TimestampType

    types = [field.dataType for field in schema.fields]
    return (isinstance(types[0], StringType) and isinstance(types[1], StringType)
            and isinstance(types[2], TimestampType) and isinstance(types[3], MapType)
            and isinstance(types[3].keyType, StringType)
            and isinstance(types[3].valueType, StringType))


def _cast(column: pa.Array, target: pa.DataType) -> pa.Array:
    """``column`` as ``target``; values that do not convert become null."""
    if column.type == target:
        return column
    try:
        return pc.cast(column, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    out = []
    for value in column:
        try:
            out.append(pc.cast(pa.array([value.as_py()], column.type), target)[0].as_py())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            out.append(None)
    return pa.array(out, target)
