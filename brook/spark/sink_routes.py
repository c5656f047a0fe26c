"""Where a sink task sends each row: a bare connection per master, rows grouped by the node
that serves their stream, and what to do when a node says the map is stale.

A node answers ``-MOVED <slot> <host:port>`` for a key it no longer serves (a resharding since
the map was read): that XADD did not run, and the node it names is the owner, so the row is
sent there. ``-ASK`` means the slot is being moved right now and this key is already on the
other side; the sink waits for the move to finish and reads the map again rather than writing
behind ASKING, because its exactly-once preparation of a stream (WATCH, MULTI) cannot run on
a node that is still importing the slot. Resending is safe: a redirected XADD added nothing,
and with IDMP a repeated one would add nothing either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from brook.spark.connection import ConnectionOptions, ConnectorError
from brook.spark.shards import Node, Shards
from brook.spark.wire import Redirected, Wire

T = TypeVar("T")
SETTLE_SECONDS = 30.0  # how long a slot may stay mid-move (-ASK) before the write fails
MAX_MOVES = 16  # rounds of -MOVED in one task: more means the nodes disagree


class Routes:
    """The task's map and its open connections, one per node."""

    def __init__(self, options: ConnectionOptions) -> None:
        self.shards = Shards.discover(options)
        self.moved: dict[bytes, Node] = {}  # what -MOVED said, newer than the map
        self.wires: dict[Node | None, Wire] = {}
        self.deadline: float | None = None
        self.moves = 0

    def node_of(self, key: bytes) -> Node | None:
        moved = self.moved.get(key)
        return moved if moved is not None else self.shards.node_of(key)

    def wire(self, node: Node | None) -> Wire:
        if node not in self.wires:
            self.wires[node] = Wire(self.shards.options_for(node))
        return self.wires[node]

    def group(self, keys: list[bytes], rows: list[int]) -> dict[Node | None, list[int]]:
        """``rows`` (positions in ``keys``) by the node that serves their stream."""
        if not self.shards.clustered and not self.moved:
            return {None: rows}
        nodes = {key: self.node_of(key) for key in dict.fromkeys(keys[row] for row in rows)}
        out: dict[Node | None, list[int]] = {}
        for row in rows:
            out.setdefault(nodes[keys[row]], []).append(row)
        return out

    def redirected(self, key: bytes, redirect: Redirected) -> None:
        """Note a redirect of ``key``; :meth:`settle` before sending again."""
        if redirect.ask:
            self.deadline = self.deadline or time.monotonic() + SETTLE_SECONDS
        else:
            self.moved[key] = (redirect.host, redirect.port)

    def settle(self, asked: bool) -> None:
        """Read the map again (after a short wait while a slot is mid-move)."""
        if asked:
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise ConnectorError(f"a slot stayed mid-move (-ASK) for {SETTLE_SECONDS:.0f} "
                                     f"s; is a resharding stuck? (redis-cli --cluster fix)")
            time.sleep(0.1)
        else:
            self.moves += 1
            if self.moves > MAX_MOVES:
                raise ConnectorError(f"still redirected (-MOVED) after {MAX_MOVES} rounds: "
                                     f"the cluster's nodes disagree on who serves a slot")
        self.shards = self.shards.refresh()

    def run(self, key: bytes, action: Callable[[Wire], T]) -> T:
        """``action`` on the connection to ``key``'s node, again on the new owner after a
        redirect."""
        while True:
            try:
                return action(self.wire(self.node_of(key)))
            except Redirected as redirect:
                self.redirected(key, redirect)
                self.settle(redirect.ask)

    def close(self) -> None:
        for wire in self.wires.values():
            wire.close()
        self.wires.clear()
