"""Stream IDs as the connector handles them: ``(ms, seq)`` int pairs, formatted ``"ms-seq"``.

Offsets are the ID of the last entry a batch includes; ranges are ``(start, end]`` and are read
with ``XRANGE key (start end``, so a replayed batch reads exactly the same entries.
"""

from __future__ import annotations

from brook.spark.connection import ConnectorError

U64_MAX = (1 << 64) - 1
StreamId = tuple[int, int]
ZERO: StreamId = (0, 0)
MAX: StreamId = (U64_MAX, U64_MAX)


def parse(text: str | bytes, missing_seq: int = 0) -> StreamId:
    """``"ms-seq"`` (or ``"ms"``, with ``missing_seq``), ``-`` or ``+``."""
    if isinstance(text, bytes):
        text = text.decode()
    if text == "-":
        return ZERO
    if text == "+":
        return MAX
    ms, dash, seq = text.partition("-")
    try:
        parsed = int(ms), int(seq) if dash else missing_seq
    except ValueError:
        raise ConnectorError(f"not a stream ID: {text!r}") from None
    if not (0 <= parsed[0] <= U64_MAX and 0 <= parsed[1] <= U64_MAX):
        raise ConnectorError(f"not a stream ID: {text!r}")
    return parsed


def fmt(entry_id: StreamId) -> str:
    return f"{entry_id[0]}-{entry_id[1]}"


def successor(entry_id: StreamId) -> StreamId | None:
    """The smallest ID above ``entry_id`` (None above the largest)."""
    ms, seq = entry_id
    if seq < U64_MAX:
        return ms, seq + 1
    if ms < U64_MAX:
        return ms + 1, 0
    return None


def predecessor(entry_id: StreamId) -> StreamId:
    """The exclusive start that includes ``entry_id`` (0-0 itself cannot be an entry)."""
    ms, seq = entry_id
    if seq:
        return ms, seq - 1
    if ms:
        return ms - 1, U64_MAX
    return ZERO


def split(start: StreamId, end: StreamId, parts: int) -> list[tuple[StreamId, StreamId]]:
    """Cut the range ``(start, end]`` into up to ``parts`` consecutive ``(lo, hi]`` ranges of
    equal milliseconds, so that partitions of one stream read in parallel."""
    if parts <= 1 or end[0] - start[0] < parts:
        return [(start, end)]
    step = (end[0] - start[0]) // parts
    bounds = [start] + [(start[0] + step * i, U64_MAX) for i in range(1, parts)] + [end]
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]
