"""Batch reads: ``spark.read.format("brook")``.

Each stream's ID range is cut into several partitions by milliseconds (``ids.split``), so a
large stream is read by several executors at once; each partition pages through its range with
``XRANGE key (start end COUNT readCount`` and yields one Arrow batch per page. Filters on the
stream name, the ID and the timestamp are pushed into the key selection and the XRANGE bounds.
In a Redis Cluster every partition names the master that serves its stream, so executors read
from the owners directly; the planning probes go to the owners too (:mod:`brook.spark.shards`).
"""

from __future__ import annotations

import datetime as dt
import gc
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
import redis
from pyspark.sql.datasource import (
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StructType

from brook.spark import ids
from brook.spark.connection import ConnectionOptions, ConnectorError, int_option, stream_names
from brook.spark.ids import StreamId
from brook.spark.rows import RowBuilder
from brook.spark.shards import Commands, Node, NodeClients

DEFAULT_READ_COUNT = 10_000  # entries per XRANGE page (and per Arrow batch)
ENTRIES_PER_PARTITION = 250_000  # the automatic split of a stream into partitions
MAX_AUTO_PARTITIONS = 16


@dataclass
class RangePartition(InputPartition):
    """Entries of ``stream`` with IDs in ``(start, end]``, read from ``node`` (the master that
    serves the stream in a cluster; None: the configured server)."""

    stream: str
    start: str
    end: str
    node: Node | None

    def __init__(self, stream: str, start: str, end: str, node: Node | None = None) -> None:
        super().__init__((stream, start, end, node))
        self.stream, self.start, self.end, self.node = stream, start, end, node


def read_pages(client: redis.Redis, stream: str, start: StreamId, end: StreamId,
               count: int, asking: bool = False) -> Iterator[list]:
    """XRANGE pages of ``(start, end]``, in order; deterministic for a given range as long as
    nothing in it is deleted. The request for the next page goes out as soon as a page has
    arrived, so the server reads it while the caller turns the current one into Arrow.
    ``asking``: each XRANGE goes after ASKING (the node is importing the stream's slot)."""
    connection = client.connection_pool.get_connection()
    end_text = ids.fmt(end)

    outstanding = False

    def request(after: StreamId) -> None:
        nonlocal outstanding
        if asking:
            connection.send_command("ASKING")
        connection.send_command("XRANGE", stream, "(" + ids.fmt(after), end_text, "COUNT", count)
        outstanding = True

    try:
        request(start)
        while True:
            if asking:
                connection.read_response()  # ASKING's OK
            page = _without_collection(connection)
            outstanding = False
            last = ids.parse(page[-1][0]) if page else end
            more = len(page) == count and last < end
            if more:
                request(last)
            if page:
                yield page
            if not more:
                return
    finally:
        if outstanding:  # abandoned with a reply on its way: that connection is spoiled
            connection.disconnect()
        client.connection_pool.release(connection)


def _without_collection(connection: redis.connection.AbstractConnection) -> list:
    """The next reply, parsed with the cycle collector paused. hiredis makes about ten
    container objects an entry, and CPython's collector, run every 700 of them, walked the
    young ones again and again: 40% of a worker's CPU per entry. A reply holds no cycles, so
    the pause leaves nothing uncollected."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return connection.read_response()
    finally:
        if paused:
            gc.enable()


def read_partition(connection: ConnectionOptions, rows: RowBuilder, partition: RangePartition,
                   count: int) -> Iterator[pa.RecordBatch]:
    """The Arrow batches of one partition (runs on an executor), read from its node. A node
    that no longer serves the stream (a resharding since planning) answers -MOVED or -ASK:
    the read goes on once from the node named there, after the last entry already given."""
    node, asking = partition.node, False
    after, end = ids.parse(partition.start), ids.parse(partition.end)
    for followed in (False, True):
        client = (connection if node is None else connection.at(*node)).connect()
        try:
            for page in read_pages(client, partition.stream, after, end, count, asking):
                after = ids.parse(page[-1][0])
                yield rows.batch(partition.stream, page)
            return
        except redis.exceptions.AskError as redirect:  # MovedError is one too
            if followed:
                raise
            node = (redirect.host, int(redirect.port))
            asking = not isinstance(redirect, redis.exceptions.MovedError)
        finally:
            client.close()


class _Bounds:
    """What the pushed filters allow: stream names, an inclusive ID interval, and the
    millisecond bounds of string comparisons on ``id`` (applied per stream, see
    :meth:`BatchReader._push_id`)."""

    def __init__(self, low: StreamId, high: StreamId) -> None:
        self.streams: set[str] | None = None
        self.low, self.high = low, high
        self.id_low: StreamId = ids.ZERO
        self.id_high: StreamId = ids.MAX
        self.id_widths: set[int] = set()  # millisecond widths of the id literals

    def only_streams(self, names: Iterable[str]) -> None:
        names = set(names)
        self.streams = names if self.streams is None else self.streams & names

    def at_least(self, low: StreamId) -> None:
        self.low = max(self.low, low)

    def at_most(self, high: StreamId) -> None:
        self.high = min(self.high, high)

    def for_stream(self, first: StreamId, last: StreamId) -> tuple[StreamId, StreamId]:
        """The stream's ``[first, last]`` narrowed by the ``id`` comparisons, when all its IDs
        have the literals' millisecond width (then string order is ID order on the ms)."""
        widths = {len(str(first[0])), len(str(last[0]))}
        if len(self.id_widths) != 1 or widths != self.id_widths:
            return first, last
        return max(first, self.id_low), min(last, self.id_high)


_DAY_MS = 86_400_000


def _ms_range(value: object) -> tuple[int, int] | None:
    """Milliseconds since the epoch that a pushed timestamp literal may mean: exact for an
    aware datetime; a naive one (a session-local wall time) is widened by a day each way,
    which keeps the bound safe whatever the time zone (Spark checks the filter again)."""
    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is not None:
        ms = int(value.timestamp() * 1000)
        return ms, ms
    ms = int(value.replace(tzinfo=dt.UTC).timestamp() * 1000)
    return ms - _DAY_MS, ms + _DAY_MS


class BatchReader(DataSourceReader):
    """Reads ``streams`` between ``startId`` and ``endId`` (inclusive, ``-``/``+`` default)."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.connection = ConnectionOptions.of(options)
        self.streams = stream_names(options)
        self.bounds = _Bounds(ids.parse(options.get("startId", "-")),
                              ids.parse(options.get("endId", "+"), ids.U64_MAX))
        self.read_count = int_option(options, "readCount", DEFAULT_READ_COUNT, 1)
        self.partitions_per_stream = int_option(options, "partitionsPerStream", 0, 0)
        self.rows = RowBuilder(schema)
        names = [field.name for field in schema.fields]
        default = self.rows.default
        self.stream_column = "stream" if default else ("_stream" if "_stream" in names else None)
        self.id_column = "id" if default else ("_id" if "_id" in names else None)
        self.ts_column = "ts" if default else ("_ts" if "_ts" in names else None)

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:  # noqa: N802 (Spark's name)
        """Stream-name filters select keys (Spark need not check them again); ID and time
        comparisons narrow the XRANGE bounds and are still checked by Spark, whose string
        order for ``id`` differs from the stream's ID order."""
        for condition in filters:
            column = condition.attribute[0] if len(condition.attribute) == 1 else None
            if column is not None and column == self.stream_column:
                if isinstance(condition, EqualTo) and isinstance(condition.value, str):
                    self.bounds.only_streams([condition.value])
                    continue
                if isinstance(condition, In) and all(isinstance(v, str)
                                                     for v in condition.value):
                    self.bounds.only_streams(condition.value)
                    continue
            elif column is not None and column == self.ts_column:
                self._push_time(condition)
            elif column is not None and column == self.id_column:
                self._push_id(condition)
            yield condition

    def _push_time(self, condition: Filter) -> None:
        span = _ms_range(getattr(condition, "value", None))
        if span is None:
            return
        low, high = max(span[0], 0), max(span[1], 0)
        if isinstance(condition, (GreaterThan, GreaterThanOrEqual, EqualTo)):
            self.bounds.at_least((low, 0))
        if isinstance(condition, (LessThan, LessThanOrEqual, EqualTo)):
            self.bounds.at_most((high, ids.U64_MAX))

    def _push_id(self, condition: Filter) -> None:
        """Spark compares ``id`` as a string. With the stream's IDs all of one millisecond
        width (true for clock IDs), string order agrees with ID order on the milliseconds, so
        the millisecond of the literal bounds the range; the sequence part is left to Spark."""
        value = getattr(condition, "value", None)
        if isinstance(condition, EqualTo) and isinstance(value, str):
            try:
                exact = ids.parse(value)
            except ConnectorError:
                return
            if ids.fmt(exact) == value:  # the canonical spelling: an exact ID
                self.bounds.at_least(exact)
                self.bounds.at_most(exact)
            return
        if not isinstance(value, str):
            return
        try:
            ms = ids.parse(value)[0]
        except ConnectorError:
            return
        if isinstance(condition, (GreaterThan, GreaterThanOrEqual)):
            self.bounds.id_low = max(self.bounds.id_low, (ms, 0))
        elif isinstance(condition, (LessThan, LessThanOrEqual)):
            self.bounds.id_high = min(self.bounds.id_high, (ms, ids.U64_MAX))
        else:
            return
        self.bounds.id_widths.add(len(str(ms)))

    def partitions(self) -> list[RangePartition]:
        clients = NodeClients(self.connection)
        try:
            out: list[RangePartition] = []
            for stream in self.streams:
                if self.bounds.streams is not None and stream not in self.bounds.streams:
                    continue
                spans = clients.run(stream, lambda client, stream=stream:
                                    self._stream_spans(client, stream))
                node = clients.node_of(stream)
                out += [RangePartition(stream, lo, hi, node) for lo, hi in spans]
            return out or [RangePartition(self.streams[0], "0-0", "0-0")]  # an empty read
        finally:
            clients.close()

    def _stream_spans(self, client: Commands, stream: str) -> list[tuple[str, str]]:
        """The ``(start, end]`` ID ranges the stream's partitions read."""
        low, high = self.bounds.low, self.bounds.high
        if low > high:
            return []
        first = client.execute_command("XRANGE", stream, ids.fmt(low), ids.fmt(high), "COUNT", 1)
        last = client.execute_command("XREVRANGE", stream, ids.fmt(high), ids.fmt(low),
                                      "COUNT", 1)
        if not first or not last:
            return []
        first_id, last_id = ids.parse(first[0][0]), ids.parse(last[0][0])
        first_id, last_id = self.bounds.for_stream(first_id, last_id)
        if first_id > last_id:
            return []
        parts = self.partitions_per_stream
        if not parts:
            length = client.execute_command("XLEN", stream)
            parts = min(MAX_AUTO_PARTITIONS, max(1, -(-length // ENTRIES_PER_PARTITION)))
        start = ids.predecessor(first_id)
        return [(ids.fmt(lo), ids.fmt(hi)) for lo, hi in ids.split(start, last_id, parts)]

    def read(self, partition: RangePartition) -> Iterator[pa.RecordBatch]:
        if partition.start == partition.end:
            return iter(())
        return read_partition(self.connection, self.rows, partition, self.read_count)
