"""Structured Streaming source: ``spark.readStream.format("brook")``.

An offset is ``{stream: "ms-seq"}``, the ID of the last entry a batch includes; a batch reads
``(start, end]`` per stream with XRANGE, so a batch replayed after a failure returns the same
rows (as long as nothing in the range was deleted in between). Reading happens in the
executors; the driver only finds where each batch ends and, with the ``group`` option, moves
that consumer group along after each committed batch so ``XINFO GROUPS`` shows the pipeline's lag.
In a Redis Cluster each stream's offsets come from the master that serves it, and its
partitions are read there (:mod:`brook.spark.shards`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping

import pyarrow as pa
import redis
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from brook.spark import ids
from brook.spark.connection import (
    ConnectionOptions,
    ConnectorError,
    bool_option,
    int_option,
    stream_names,
)
from brook.spark.ids import StreamId
from brook.spark.reader import DEFAULT_READ_COUNT, RangePartition, read_partition
from brook.spark.rows import RowBuilder
from brook.spark.shards import Commands, NodeClients

log = logging.getLogger("brook.spark")

Offset = dict[str, str]
_COUNT_CAP = 1_000_000  # entries counted after a commit point to give XGROUP SETID ENTRIESREAD


class DataLossError(ConnectorError):
    """Entries were removed from a stream before the query read them."""


def head(client: Commands, stream: str) -> StreamId:
    """ID of the stream's last entry (0-0 when it is empty or missing)."""
    last = client.execute_command("XREVRANGE", stream, "+", "-", "COUNT", 1)
    return ids.parse(last[0][0]) if last else ids.ZERO


def first(client: Commands, stream: str) -> StreamId | None:
    found = client.execute_command("XRANGE", stream, "-", "+", "COUNT", 1)
    return ids.parse(found[0][0]) if found else None


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Options: ``streams``, ``startingOffsets`` (``earliest`` | ``latest`` | JSON
    ``{"stream": "id"}``), ``maxEntriesPerTrigger``, ``failOnDataLoss`` (true),
    ``group``, ``readCount``, ``partitionsPerStream``."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.connection = ConnectionOptions.of(options)
        self.streams = stream_names(options)
        self.rows = RowBuilder(schema)
        self.starting = options.get("startingOffsets", "latest")
        self.max_entries = int_option(options, "maxEntriesPerTrigger", 0, 0)
        self.fail_on_data_loss = bool_option(options, "failOnDataLoss", True)
        self.group = options.get("group") or None
        self.read_count = int_option(options, "readCount", DEFAULT_READ_COUNT, 1)
        self.partitions_per_stream = int_option(options, "partitionsPerStream", 1, 1)
        self._starting_offsets()  # reject a bad startingOffsets at planning
        self._frozen: dict[str, StreamId] | None = None
        self._moved: dict[str, str] = {}  # where the group was last moved, per stream
        # The driver's clients (one per master); a pickled copy has none: executors open
        # their own connections.
        self._clients = NodeClients(self.connection)

    def _head(self, stream: str) -> StreamId:
        return self._clients.run(stream, lambda client: head(client, stream))

    def _starting_offsets(self) -> dict[str, str | None]:
        """``startingOffsets`` per stream: an ID, or None for "latest"."""
        mode = self.starting.strip()
        if mode.lower() == "earliest":
            return dict.fromkeys(self.streams, "0-0")
        if mode.lower() == "latest":
            return dict.fromkeys(self.streams, None)
        try:
            given = json.loads(mode)
        except ValueError:
            given = None
        if not isinstance(given, dict):
            raise ConnectorError("startingOffsets must be earliest, latest or a JSON object "
                                 f'like {{"stream": "1700000000000-0"}}, got {self.starting!r}')
        out: dict[str, str | None] = {}
        for stream in self.streams:
            value = given.get(stream, "earliest")
            if not isinstance(value, str):
                raise ConnectorError(f"startingOffsets for {stream} must be a string ID")
            if value in ("earliest", "-"):
                out[stream] = "0-0"
            elif value in ("latest", "$"):
                out[stream] = None
            else:
                out[stream] = ids.fmt(ids.parse(value))
        return out

    # -- offsets (driver) -------------------------------------------------------------------

    def initialOffset(self) -> Offset:  # noqa: N802 (Spark's names)
        return {stream: given if given is not None else ids.fmt(self._head(stream))
                for stream, given in self._starting_offsets().items()}

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        return ReadMaxRows(self.max_entries) if self.max_entries else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self._frozen = {stream: self._head(stream) for stream in self.streams}

    def _heads(self) -> dict[str, StreamId]:
        if self._frozen is not None:
            return self._frozen
        return {stream: self._head(stream) for stream in self.streams}

    def reportLatestOffset(self) -> Offset:  # noqa: N802
        return {stream: ids.fmt(entry_id) for stream, entry_id in self._heads().items()}

    def latestOffset(self, start: Offset, limit: ReadLimit) -> Offset:  # noqa: N802
        """Where the next batch ends: every stream's head, or with ``ReadMaxRows`` the
        last of the first ``max_rows`` entries after ``start``, shared between streams."""
        self._move_group(start)  # Spark asks only once the batch ending at start is done
        heads = self._heads()
        starts = {stream: ids.parse(start.get(stream, "0-0")) for stream in self.streams}
        ends = {stream: max(starts[stream], heads[stream]) for stream in self.streams}
        if isinstance(limit, ReadMaxRows):
            ends = self._limited(starts, ends, limit.max_rows)
        return {stream: ids.fmt(ends[stream]) for stream in self.streams}

    def _limited(self, starts: dict[str, StreamId], heads: dict[str, StreamId],
                 budget: int) -> dict[str, StreamId]:
        """Ends that admit at most ``budget`` entries in all: an equal share per stream
        first, then what the quieter streams left over, in stream order."""
        ends = dict(starts)
        pending = [stream for stream in self.streams if heads[stream] > starts[stream]]
        share = max(budget // max(len(pending), 1), 1)
        for first_pass in (True, False):
            for stream in list(pending):
                quota = min(share, budget) if first_pass else budget
                if quota <= 0:
                    break
                args = ("XRANGE", stream, "(" + ids.fmt(ends[stream]), ids.fmt(heads[stream]),
                        "COUNT", quota)
                page = self._clients.run(stream, lambda client, args=args:
                                         client.execute_command(*args))
                if page:
                    ends[stream] = ids.parse(page[-1][0])
                    budget -= len(page)
                if len(page) < quota or ends[stream] >= heads[stream]:
                    pending.remove(stream)
        return ends

    # -- batches ----------------------------------------------------------------------------

    def partitions(self, start: Offset, end: Offset) -> list[RangePartition]:
        out: list[RangePartition] = []
        for stream in self.streams:
            low = ids.parse(start.get(stream, "0-0"))
            high = ids.parse(end.get(stream, ids.fmt(low)))
            if high <= low:
                continue
            self._check_loss(stream, low)
            node = self._clients.node_of(stream)
            out += [RangePartition(stream, ids.fmt(lo), ids.fmt(hi), node)
                    for lo, hi in ids.split(low, high, self.partitions_per_stream)]
        return out

    def _check_loss(self, stream: str, start: StreamId) -> None:
        """Entries after ``start`` (the last one read) that were trimmed away before this
        batch: the stream now begins after ``start`` (or is empty) although the batch has
        entries to read. Conservative: it also fires when ``start`` itself was the only
        entry trimmed."""
        if start == ids.ZERO:
            return  # "earliest": whatever was trimmed before the query began is not lost
        oldest = self._clients.run(stream, lambda client: first(client, stream))
        if oldest is not None and oldest <= ids.successor(start):  # type: ignore[operator]
            return
        message = (f"stream {stream}: entries after {ids.fmt(start)} were removed (trimmed) "
                   f"before they were read; the stream now starts at "
                   f"{ids.fmt(oldest) if oldest else 'nothing'}. Set failOnDataLoss=false to "
                   f"skip what is gone and go on.")
        if self.fail_on_data_loss:
            raise DataLossError(message)
        log.warning(message)

    def read(self, partition: RangePartition) -> Iterator[pa.RecordBatch]:
        return read_partition(self.connection, self.rows, partition, self.read_count)

    def commit(self, end: Offset) -> None:
        """Spark has finished the batch ending at ``end``."""
        self._move_group(end)

    def _move_group(self, done: Offset) -> None:
        """With ``group``, move that consumer group to what the pipeline has processed, so
        its lag is the pipeline's lag. Spark reports a finished batch through ``commit`` only
        when it plans the next one, but it asks ``latestOffset`` from the end of the last
        finished batch every trigger: both move the group (once per new position)."""
        if self.group is None:
            return
        group = self.group
        for stream in self.streams:
            if stream not in done or self._moved.get(stream) == done[stream]:
                continue
            position = ids.parse(done[stream])
            self._clients.run(stream, lambda client, stream=stream, position=position:
                              move_group(client, stream, group, position))
            self._moved[stream] = done[stream]

    def stop(self) -> None:
        self._clients.close()


def move_group(client: Commands, stream: str, group: str, position: StreamId) -> None:
    """``XGROUP SETID`` (creating the group if needed) with the exact ENTRIESREAD when the
    entries after ``position`` can be counted cheaply, so the group's lag is exact."""
    exists = client.execute_command("EXISTS", stream)
    info = client.execute_command("XINFO", "STREAM", stream) if exists else None
    if info is None:
        return
    details = dict(zip(info[::2], info[1::2], strict=True))
    added = details.get(b"entries-added")
    after = 0
    cursor = position
    while added is not None:
        page = client.execute_command("XRANGE", stream, "(" + ids.fmt(cursor), "+", "COUNT",
                                      10_000)
        after += len(page)
        if len(page) < 10_000:
            break
        cursor = ids.parse(page[-1][0])
        if after >= _COUNT_CAP:
            added = None  # too far behind to count: let the server estimate
    extra = ["ENTRIESREAD", int(added) - after] if added is not None else []
    try:
        client.execute_command("XGROUP", "SETID", stream, group, ids.fmt(position), *extra)
    except redis.ResponseError as err:
        if "NOGROUP" not in str(err):
            raise
        client.execute_command("XGROUP", "CREATE", stream, group, ids.fmt(position), *extra)
