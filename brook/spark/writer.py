"""The sink: ``df.write.format("brook")`` and ``writeStream.format("brook")``.

Each task turns its Arrow batches into pipelined XADDs. The target stream is fixed (``stream``)
or read per row (``streamColumn``); the fields are the other columns (or the entries of a
``fields`` map column); ``maxlen``/``minid`` trim as the entries go in.

Exactly-once (``deliveryGuarantee=exactly-once``, the default for streaming writes) uses XADD
IDMP: the producer ID names the query, the batch, the partition and a block of 10,000 rows, the
idempotent ID is the row's position in the block. A micro-batch that Spark replays after a
failure has the same batch ID and the same rows in each partition, so every XADD of the replay
returns the entry the first attempt added and adds nothing. The sink raises each target
stream's ``IDMP-MAXSIZE`` to 10,000 (one block never evicts its own IDs) and
``IDMP-DURATION`` to ``idmpDuration`` seconds (default 3600: how long after a failure a replay
is still recognised) with XCFGSET, once, when they are lower. Servers without IDMP (Redis
before 8.6) get at-least-once only: asking them for exactly-once is an error saying so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import hiredis
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import MapType, StructType

from brook.spark import ids
from brook.spark.connection import (
    ConnectionOptions,
    ConnectorError,
    bool_option,
    int_option,
    supports_idmp,
)
from brook.spark.wire import Wire, encode

EXACTLY_ONCE = "exactly-once"
AT_LEAST_ONCE = "at-least-once"
IDMP_BLOCK = 10_000  # rows per IDMP producer: Redis's largest IDMP-MAXSIZE
DEFAULT_IDMP_DURATION = 3600
DEFAULT_PIPELINE = 1000


@dataclass
class WriteResult(WriterCommitMessage):
    """What one task wrote: how many entries."""

    entries: int


class _Sink:
    """The options and the per-task write loop shared by the batch and streaming writers."""

    def __init__(self, options: Mapping[str, str], schema: StructType, streaming: bool) -> None:
        self.connection = ConnectionOptions.of(options)
        self.stream = options.get("stream")
        self.stream_column = options.get("streamColumn")
        if (self.stream is None) == (self.stream_column is None):
            raise ConnectorError("the brook sink needs exactly one of the options stream "
                                 "(one target stream) or streamColumn (a column naming it)")
        names = [field.name for field in schema.fields]
        if self.stream_column is not None and self.stream_column not in names:
            raise ConnectorError(f"streamColumn {self.stream_column!r} is not a column "
                                 f"(columns: {', '.join(names)})")
        self.map_column = next((field.name for field in schema.fields
                                if field.name == "fields" and isinstance(field.dataType, MapType)),
                               None)
        self.columns = [name for name in names if name != self.stream_column]
        if not self.columns:
            raise ConnectorError("nothing to write: a stream entry needs at least one field")
        self.trim: list[str] = []
        approx = ["~"] if bool_option(options, "approximateTrim", True) else []
        if options.get("maxlen") is not None:
            self.trim = ["MAXLEN", *approx, str(int_option(options, "maxlen", 0, 0))]
        if options.get("minid") is not None:
            if self.trim:
                raise ConnectorError("options maxlen and minid cannot be used together")
            self.trim = ["MINID", *approx, ids.fmt(ids.parse(options["minid"]))]
        default = EXACTLY_ONCE if streaming else AT_LEAST_ONCE
        self.guarantee = options.get("deliveryGuarantee", default).lower()
        if self.guarantee not in (EXACTLY_ONCE, AT_LEAST_ONCE):
            raise ConnectorError(f"deliveryGuarantee must be {EXACTLY_ONCE} or {AT_LEAST_ONCE}, "
                                 f"got {self.guarantee!r}")
        self.idmp_duration = int_option(options, "idmpDuration", DEFAULT_IDMP_DURATION, 1)
        self.pipeline = int_option(options, "pipelineSize", DEFAULT_PIPELINE, 1)
        # Fault injection for tests of recovery: the first task of the query (or write) that
        # has written this many rows fails, once (0 = never).
        self.fail_after = int_option(options, "testFailAfterRows", 0, 0)
        if self.guarantee == EXACTLY_ONCE:
            self.check_idmp()

    def check_idmp(self) -> None:
        """Exactly-once needs XADD IDMP: fail at planning, with the reason, if it is missing."""
        client = self.connection.connect()
        try:
            if not supports_idmp(client):
                raise ConnectorError(
                    "deliveryGuarantee=exactly-once needs XADD IDMP (Brook, or Redis 8.6 or "
                    "newer); this server does not support it. Use "
                    "deliveryGuarantee=at-least-once, or a server that has it.")
        finally:
            client.close()

    def write(self, batches: Iterator[pa.RecordBatch], task: tuple[str, str],
              exactly_once: bool) -> WriteResult:
        """XADD every row of ``batches``, ``pipelineSize`` commands per write; exactly-once,
        each XADD carries IDMP ``<task>:<block>`` ``<row in block>`` (``task``: this piece of
        work, named the same on every attempt, and the write or query it belongs to)."""
        producer = task[0] if exactly_once else None
        wire = Wire(self.connection)
        configured: set[bytes] = set()
        trim = b"".join(b"$%d\r\n%b\r\n" % (len(a), a.encode()) for a in self.trim)
        written = 0
        try:
            for batch in batches:
                keys = self._targets(batch)
                bodies, nfields = self._bodies(batch)
                low, rows = 0, batch.num_rows
                while low < rows:
                    high = min(low + self.pipeline, rows)
                    due = self.fail_after - written  # rows until an injected failure
                    if self.fail_after and 0 < due < high - low:
                        high = low + due
                    commands = []
                    for i in range(low, high):
                        key, count = keys[i], nfields[i]
                        if not count:
                            raise ConnectorError("a row has no non-null field to write; a "
                                                 "stream entry needs at least one")
                        idmp = b""
                        if producer is not None:
                            if key not in configured:
                                self._configure_idmp(wire, key)
                                configured.add(key)
                            block, position = divmod(written + i - low, IDMP_BLOCK)
                            pid = f"{producer}:{block}".encode()
                            iid = b"%d" % position
                            idmp = b"$4\r\nIDMP\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (
                                len(pid), pid, len(iid), iid)
                        argc = 3 + len(self.trim) + (3 if idmp else 0) + 2 * count
                        commands.append(
                            b"*%d\r\n$4\r\nXADD\r\n$%d\r\n%b\r\n%b%b$1\r\n*\r\n%b"
                            % (argc, len(key), key, trim, idmp, bodies[i]))
                    wire.sock.sendall(b"".join(commands))
                    self._check(keys[low:high], wire.replies(len(commands)))
                    written += high - low
                    if written == self.fail_after and self._fail_now(wire, task[1]):
                        raise RuntimeError(f"injected failure after {written} rows (option "
                                           f"testFailAfterRows)")
                    low = high
        finally:
            wire.close()
        return WriteResult(written)

    @staticmethod
    def _check(keys: list[bytes], replies: list[object]) -> None:
        """Every XADD of a pipeline must have returned its new ID."""
        for key, reply in zip(keys, replies, strict=True):
            if type(reply) is not bytes:
                raise ConnectorError(f"XADD to {key.decode('utf-8', 'replace')} failed: {reply}")

    @staticmethod
    def _fail_now(wire: Wire, scope: str) -> bool:
        """Whether the injected failure is still to happen (it happens once per scope)."""
        return wire.call("SET", f"__brook_spark_failed__:{scope}", 1, "NX") == b"OK"

    def _configure_idmp(self, wire: Wire, key: bytes) -> None:
        """Raise the stream's IDMP limits to what exactly-once needs (creating the stream,
        empty, if it does not exist yet: XCFGSET needs one)."""
        if not wire.call("EXISTS", key):
            wire.sock.sendall(encode("XGROUP", "CREATE", key, "__brook_spark__", "$",
                                     "MKSTREAM") + encode("XGROUP", "DESTROY", key,
                                                          "__brook_spark__"))
            for reply in wire.replies(2):  # an empty stream, no entry and no group left
                if isinstance(reply, hiredis.ReplyError) and "BUSYGROUP" not in str(reply):
                    raise ConnectorError(f"cannot create stream {key!r}: {reply}")
        info = wire.call("XINFO", "STREAM", key)
        details = dict(zip(info[::2], info[1::2], strict=True))  # type: ignore[index]
        maxsize = int(details.get(b"idmp-maxsize", 0))
        duration = int(details.get(b"idmp-duration", 0))
        if maxsize < IDMP_BLOCK or duration < self.idmp_duration:
            wire.call("XCFGSET", key, "IDMP-DURATION", max(self.idmp_duration, duration),
                      "IDMP-MAXSIZE", IDMP_BLOCK)

    def _targets(self, batch: pa.RecordBatch) -> list[bytes]:
        if self.stream_column is None:
            return [self.stream.encode()] * batch.num_rows  # type: ignore[union-attr]
        column = batch.column(batch.schema.get_field_index(self.stream_column))
        out = []
        for value in _texts(column):
            if value is None:
                raise ConnectorError(f"streamColumn {self.stream_column!r} is null in a row")
            out.append(value)
        return out

    def _bodies(self, batch: pa.RecordBatch) -> tuple[list[bytes], list[int]]:
        """Each row's fields, RESP-encoded and joined (``$len field $len value ...``, nulls
        left out), and how many fields each row has. Encoded column by column."""
        rows = batch.num_rows
        columns: list[list[bytes]] = []
        counts: list[int] | None = None
        constant = 0  # fields every row has (columns without nulls)
        for name in self.columns:
            column = batch.column(batch.schema.get_field_index(name))
            if name == self.map_column:
                encoded, per_row = _encode_maps(column.to_pylist())
                counts = per_row if counts is None else list(map(sum, zip(counts, per_row, strict=True)))
                columns.append(encoded)
                continue
            key = name.encode()
            head = b"$%d\r\n%b\r\n" % (len(key), key)
            values = _texts(column)
            if column.null_count:
                columns.append([b"" if v is None else b"%b$%d\r\n%b\r\n" % (head, len(v), v)
                                for v in values])
                present = [int(v is not None) for v in values]
                counts = present if counts is None else list(map(sum, zip(counts, present, strict=True)))
            else:
                columns.append([b"%b$%d\r\n%b\r\n" % (head, len(v), v) for v in values])
                constant += 1
        bodies = list(map(b"".join, zip(*columns, strict=True))) if columns else [b""] * rows
        if counts is None:
            return bodies, [constant] * rows
        return bodies, [constant + n for n in counts]


def _encode_maps(maps: list) -> tuple[list[bytes], list[int]]:
    """A map column's rows, encoded as field/value pairs (null keys or values left out)."""
    encoded, counts = [], []
    for pairs in maps:
        parts = []
        for field, value in pairs or ():
            if field is not None and value is not None:
                name, data = _bytes(field), _bytes(value)
                parts.append(b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(name), name, len(data),
                                                                   data))
        encoded.append(b"".join(parts))
        counts.append(len(parts))
    return encoded, counts


def _bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat().encode()
    return str(value).encode()


def _texts(column: pa.Array) -> list[bytes | None]:
    """A column's values as the bytes stored in the stream (None for nulls)."""
    kind = column.type
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return column.to_pylist()
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return [None if v is None else v.encode() for v in column.to_pylist()]
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind) or pa.types.is_decimal(kind):
        return [None if v is None else v.encode() for v in
                pc.cast(column, pa.string()).to_pylist()]
    if pa.types.is_floating(kind):  # Python's repr, as Spark's CAST(double AS STRING): 5.0
        return [None if v is None else repr(v).encode() for v in column.to_pylist()]
    return [None if v is None else _bytes(v) for v in column.to_pylist()]


def _task_key(write_id: str | None) -> tuple[str, str]:
    """This task's piece of work, the same on every attempt (the IDMP producer): the
    streaming query, micro-batch and partition, or for a batch write the ``writeId`` option
    and the partition; and the query or write it is part of."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise ConnectorError("the brook sink must run inside a Spark task")
    if write_id is not None:
        return f"spark-write:{write_id}:{context.partitionId()}", f"spark-write:{write_id}"
    query = context.getLocalProperty("sql.streaming.queryId")
    batch = context.getLocalProperty("streaming.sql.batchId")
    if query is None or batch is None:  # at-least-once batch write without writeId
        stage = f"spark-stage:{context.stageId()}"
        return f"{stage}:{context.partitionId()}:{context.attemptNumber()}", stage
    return f"spark:{query}:{batch}:{context.partitionId()}", f"spark:{query}"


class BatchWriter(DataSourceArrowWriter):
    """``df.write``: at-least-once by default. Exactly-once needs ``writeId``, a name for this
    write: running the same write again (same ``writeId``, same rows per partition), for
    instance after a failed job, adds nothing twice."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.sink = _Sink(options, schema, streaming=False)
        self.write_id = options.get("writeId")
        if self.sink.guarantee == EXACTLY_ONCE and not self.write_id:
            raise ConnectorError("exactly-once batch writes need the option writeId: a name "
                                 "for this write, the same when it is run again")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        exactly_once = self.sink.guarantee == EXACTLY_ONCE
        return self.sink.write(iterator, _task_key(self.write_id if exactly_once else None),
                               exactly_once)


class StreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.sink = _Sink(options, schema, streaming=True)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        return self.sink.write(iterator, _task_key(None), self.sink.guarantee == EXACTLY_ONCE)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """Nothing to finish: every entry is in the stream once the tasks return."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """The entries of tasks that did finish stay: with exactly-once, the replay of the
        batch recognises them; with at-least-once they may appear twice, as promised."""
