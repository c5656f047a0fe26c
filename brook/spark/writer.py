"""The sink: ``df.write.format("brook")`` and ``writeStream.format("brook")``.

Each task turns its Arrow batches into pipelined XADDs. The target stream is fixed (``stream``)
or read per row (``streamColumn``); the fields are the other columns (or the entries of a
``fields`` map column); ``maxlen``/``minid`` trim as the entries go in.

Exactly-once (``deliveryGuarantee=exactly-once``, the default for streaming writes) uses XADD
IDMP with IDs that do not depend on the order of the rows (:mod:`brook.spark.idempotency`):
the producer ID names the query, the batch, the partition and a block; the idempotent ID is a
digest of the row's fields. A micro-batch that Spark replays after a failure has the same batch
ID and the same rows in each partition, in any order, so every XADD of the replay that the
first attempt had sent returns that attempt's entry and adds nothing. A stream that has no
deduplication history yet gets ``IDMP-MAXSIZE`` 10,000 and ``IDMP-DURATION`` ``idmpDuration``
seconds (default 3600: how long after a failure a replay is still recognised) with XCFGSET; one
that has history keeps its settings, as XCFGSET would forget it. Servers without IDMP (Redis
before 8.6) get at-least-once only: asking them for exactly-once is an error saying so.

In a Redis Cluster the rows are grouped by the master that serves their stream and each group
is pipelined to it (:mod:`brook.spark.sink_routes`); a stream lives on one node, so its IDMP
producers and iids are the same as on a single server.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import hiredis
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import MapType, StructType

from brook.spark import idempotency, ids
from brook.spark.connection import (
    IDMP_PROBE,
    ConnectionOptions,
    ConnectorError,
    bool_option,
    int_option,
    supports_idmp,
)
from brook.spark.shards import Shards
from brook.spark.sink_routes import Routes
from brook.spark.wire import Redirected, Wire, encode, redirect_of

EXACTLY_ONCE = "exactly-once"
AT_LEAST_ONCE = "at-least-once"
IDMP_BLOCK = 10_000  # rows per IDMP producer: Redis's largest IDMP-MAXSIZE
DEFAULT_IDMP_DURATION = 3600
DEFAULT_PIPELINE = 1000

log = logging.getLogger("brook.spark")


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
        if self.guarantee == EXACTLY_ONCE:
            self.check_idmp()

    def check_idmp(self) -> None:
        """Exactly-once needs XADD IDMP: fail at planning, with the reason, if it is missing
        (on any master of a cluster: each serves some of the streams)."""
        shards = Shards.discover(self.connection)
        for node in shards.masters():
            client = shards.options_for(node).connect()
            try:
                if not supports_idmp(client, shards.key_on(node, IDMP_PROBE)):
                    where = "this server does" if node is None else f"node {node[0]}:{node[1]} does"
                    raise ConnectorError(
                        "deliveryGuarantee=exactly-once needs XADD IDMP (Brook, or Redis 8.6 "
                        f"or newer); {where} not support it. Use "
                        "deliveryGuarantee=at-least-once, or a server that has it.")
            finally:
                client.close()

    def write(self, batches: Iterator[pa.RecordBatch], producer: str | None) -> WriteResult:
        """XADD every row of ``batches``, ``pipelineSize`` commands per round trip. With a
        ``producer`` (exactly-once: this piece of work, named the same on every attempt), the
        whole partition is read first, as its rows' IDs depend on all of them
        (:mod:`brook.spark.idempotency`); at-least-once writes each batch as it comes."""
        routes = Routes(self.connection)
        try:
            if producer is None:
                written = 0
                for batch in batches:
                    keys = self._targets(batch)
                    bodies, counts = self._bodies(batch)
                    self._deliver(routes, keys, bodies, counts, None)
                    written += len(keys)
                return WriteResult(written)
            keys, bodies, counts = [], [], []
            for batch in batches:
                keys += self._targets(batch)
                more_bodies, more_counts = self._bodies(batch)
                bodies += more_bodies
                counts += more_counts
            iids = idempotency.row_ids(keys, bodies)
            sizes = {key: routes.run(key, lambda wire, key=key: self._prepare_idmp(wire, key))
                     for key in dict.fromkeys(keys)}
            placed = idempotency.blocks(keys, iids, sizes)
            heads: dict[int, bytes] = {}  # block -> the encoded "IDMP <producer>:<block>"
            for block in set(placed):
                pid = b"%b:%d" % (producer.encode(), block)
                heads[block] = b"$4\r\nIDMP\r\n$%d\r\n%b\r\n" % (len(pid), pid)
            options = [b"%b$%d\r\n%b\r\n" % (heads[block], len(iid), iid)
                       for block, iid in zip(placed, iids, strict=True)]
            self._deliver(routes, keys, bodies, counts, options)
            return WriteResult(len(keys))
        finally:
            routes.close()

    def _deliver(self, routes: Routes, keys: list[bytes], bodies: list[bytes],
                 counts: list[int], idmp: list[bytes] | None) -> None:
        """Each node's rows pipelined to it; the rows a node redirected (it no longer serves
        their stream) go again, to the owner, until none is left (with ``idmp``, after the
        stream is made ready for exactly-once there too; the rows keep their IDMP options)."""
        rows = list(range(len(keys)))
        while True:
            again: list[int] = []
            asked = False
            for node, picked in routes.group(keys, rows).items():
                if len(picked) == len(keys):  # one node, every row: no copies
                    sub_keys, sub_bodies, sub_counts, sub_idmp = keys, bodies, counts, idmp
                else:
                    sub_keys = [keys[i] for i in picked]
                    sub_bodies = [bodies[i] for i in picked]
                    sub_counts = [counts[i] for i in picked]
                    sub_idmp = None if idmp is None else [idmp[i] for i in picked]
                failed = self._send(routes.wire(node), sub_keys, sub_bodies, sub_counts,
                                    sub_idmp)
                for position, redirect in failed:
                    routes.redirected(sub_keys[position], redirect)
                    asked = asked or redirect.ask
                    again.append(picked[position])
            if not again:
                return
            routes.settle(asked)
            rows = sorted(again)
            if idmp is not None:
                for key in dict.fromkeys(keys[row] for row in rows):
                    routes.run(key, lambda wire, key=key: self._prepare_idmp(wire, key))

    def _send(self, wire: Wire, keys: list[bytes], bodies: list[bytes], counts: list[int],
              idmp: list[bytes] | None) -> list[tuple[int, Redirected]]:
        """The XADDs of these rows, pipelined; ``idmp``: each row's encoded IDMP option.
        Returns the rows a cluster node redirected (positions in ``keys``): not written."""
        trim = b"".join(b"$%d\r\n%b\r\n" % (len(a), a.encode()) for a in self.trim)
        argc = 3 + len(self.trim) + (3 if idmp is not None else 0)
        redirected: list[tuple[int, Redirected]] = []
        for low in range(0, len(keys), self.pipeline):
            high = min(low + self.pipeline, len(keys))
            commands = []
            for i in range(low, high):
                key, count = keys[i], counts[i]
                if not count:
                    raise ConnectorError("a row has no non-null field to write; a stream "
                                         "entry needs at least one")
                option = b"" if idmp is None else idmp[i]
                commands.append(b"*%d\r\n$4\r\nXADD\r\n$%d\r\n%b\r\n%b%b$1\r\n*\r\n%b"
                                % (argc + 2 * count, len(key), key, trim, option, bodies[i]))
            wire.sock.sendall(b"".join(commands))
            redirected += self._check(keys, low, wire.replies(len(commands)))
        return redirected

    @staticmethod
    def _check(keys: list[bytes], low: int, replies: list[object]
               ) -> list[tuple[int, Redirected]]:
        """Every XADD of a pipeline (rows from ``low``) must have returned its new ID, or been
        redirected by a cluster node (returned, with the row's position)."""
        redirected = []
        for position, reply in enumerate(replies, low):
            if type(reply) is not bytes:
                redirect = redirect_of(reply)
                if redirect is None:
                    key = keys[position].decode("utf-8", "replace")
                    raise ConnectorError(f"XADD to {key} failed: {reply}")
                redirected.append((position, redirect))
        return redirected

    def _prepare_idmp(self, wire: Wire, key: bytes) -> int:
        """Make the stream ready for exactly-once writes; returns the block size to use (its
        IDMP-MAXSIZE). XCFGSET forgets every producer's history (Redis 8.6's rule), so it is
        sent only to a stream that has none: a new stream (created empty here, XCFGSET needs
        one) or one whose IDs have all expired. The check and the change are one transaction
        (WATCH): another task that writes meanwhile makes it start over. A stream whose
        history is in use keeps its settings; a shorter window than asked is logged."""
        while True:
            wire.call("WATCH", key)
            info = _stream_info(wire, key)
            if info is None:
                steps = [("XGROUP", "CREATE", key, "__brook_spark__", "$", "MKSTREAM"),
                         ("XGROUP", "DESTROY", key, "__brook_spark__")]
                maxsize = duration = 0
            elif int(info.get(b"iids-tracked", 0)):
                wire.call("UNWATCH")
                maxsize = int(info[b"idmp-maxsize"])
                duration = int(info[b"idmp-duration"])
                if duration < self.idmp_duration:
                    log.warning(
                        "stream %s keeps idempotent IDs %d s, less than idmpDuration=%d: "
                        "changing it (XCFGSET) would forget the IDs that recognise a replay, "
                        "so the sink leaves it", key.decode("utf-8", "replace"), duration,
                        self.idmp_duration)
                return maxsize
            else:
                steps = []
                maxsize = int(info.get(b"idmp-maxsize", 0))
                duration = int(info.get(b"idmp-duration", 0))
            if maxsize < IDMP_BLOCK or duration < self.idmp_duration:
                steps.append(("XCFGSET", key, "IDMP-DURATION", max(self.idmp_duration, duration),
                              "IDMP-MAXSIZE", IDMP_BLOCK))
            if not steps:
                wire.call("UNWATCH")
                return maxsize
            wire.sock.sendall(b"".join(encode(*step) for step in
                                       [("MULTI",), *steps, ("EXEC",)]))
            *queued, done = wire.replies(len(steps) + 2)
            moved = next(filter(None, map(redirect_of, queued)), None)
            if moved is not None:
                raise moved  # the slot moved after WATCH: the caller asks the new owner
            if done is None:
                continue  # the stream changed since WATCH: look again
            failed = [reply for reply in (*queued, *done)  # type: ignore[misc]
                      if isinstance(reply, hiredis.ReplyError)]
            if failed:
                raise ConnectorError(f"cannot prepare stream {key!r} for exactly-once "
                                     f"writes: {failed[0]}")
            return IDMP_BLOCK

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


def _stream_info(wire: Wire, key: bytes) -> dict[bytes, object] | None:
    """XINFO STREAM as a dict, None when the key does not exist."""
    wire.sock.sendall(encode("XINFO", "STREAM", key))
    (reply,) = wire.replies(1)
    if isinstance(reply, hiredis.ReplyError):
        if "no such key" in str(reply):
            return None
        raise redirect_of(reply) or ConnectorError(f"XINFO STREAM {key!r} failed: {reply}")
    return dict(zip(reply[::2], reply[1::2], strict=True))  # type: ignore[index]


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


def _producer(write_id: str | None) -> str:
    """This task's piece of work, named the same on every attempt (the IDMP producer, before
    the block number): the streaming query, micro-batch and partition, or for a batch write
    the ``writeId`` option and the partition. Never the attempt: a replay must match."""
    context = TaskContext.get()
    if context is None:
        raise ConnectorError("the brook sink must run inside a Spark task")
    if write_id is not None:
        return f"spark-write:{write_id}:{context.partitionId()}"
    query = context.getLocalProperty("sql.streaming.queryId")
    batch = context.getLocalProperty("streaming.sql.batchId")
    if query is None or batch is None:
        raise ConnectorError("exactly-once streaming writes need Spark's query and batch IDs")
    return f"spark:{query}:{batch}:{context.partitionId()}"


class BatchWriter(DataSourceArrowWriter):
    """``df.write``: at-least-once by default. Exactly-once needs ``writeId``, a name for this
    write: running the same write again (same ``writeId``, same rows per partition, in any
    order), for instance after a failed job, adds nothing twice."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.sink = _Sink(options, schema, streaming=False)
        self.write_id = options.get("writeId")
        if self.sink.guarantee == EXACTLY_ONCE and not self.write_id:
            raise ConnectorError("exactly-once batch writes need the option writeId: a name "
                                 "for this write, the same when it is run again")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        exactly_once = self.sink.guarantee == EXACTLY_ONCE
        return self.sink.write(iterator, _producer(self.write_id) if exactly_once else None)


class StreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.sink = _Sink(options, schema, streaming=True)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        exactly_once = self.sink.guarantee == EXACTLY_ONCE
        return self.sink.write(iterator, _producer(None) if exactly_once else None)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """Nothing to finish: every entry is in the stream once the tasks return."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """The entries of tasks that did finish stay: with exactly-once, the replay of the
        batch recognises them; with at-least-once they may appear twice, as promised."""
