"""Which node serves a stream: the one configured server, or in a Redis Cluster the master
that ``CLUSTER SLOTS`` names for the key's slot (CRC16 of the key or of its ``{hash tag}``).

The connector routes by itself rather than through redis-py's ``RedisCluster``: a partition
reads over one raw connection and the sink pipelines bare RESP (:mod:`brook.spark.wire`), so
all they need is an address per stream. The map is plain data, carried by partitions and
tasks; a node that answers ``-MOVED`` or ``-ASK`` says it is stale (a resharding), and the
caller reads it again or follows the redirect.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import redis
from redis.crc import key_slot

from brook.spark.connection import ConnectionOptions, ConnectorError

Node = tuple[str, int]  # a master's (host, port)
T = TypeVar("T")


class Commands(Protocol):
    """What the probes use of a client: a redis-py client, or one that says ASKING first."""

    def execute_command(self, *args: Any) -> Any: ...


@dataclass(frozen=True)
class Shards:
    """The slot ranges and their masters; none for a server that is not a cluster node, whose
    every key lives on the configured server (``node_of`` is then None)."""

    options: ConnectionOptions
    ranges: tuple[tuple[int, int, Node], ...] = ()  # (first slot, last slot, master), sorted
    starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "starts", tuple(first for first, _, _ in self.ranges))

    @classmethod
    def discover(cls, options: ConnectionOptions) -> Shards:
        """Ask the configured server (any node of a cluster, a replica too)."""
        client = options.connect()
        try:
            if not _is_cluster(client, options.cluster):
                return cls(options)
            return cls(options, _slot_ranges(client, options.host))
        finally:
            client.close()

    @property
    def clustered(self) -> bool:
        return bool(self.ranges)

    def refresh(self) -> Shards:
        """The map read again, after a redirect said this one is stale."""
        return Shards.discover(self.options)

    def node_of(self, key: str | bytes) -> Node | None:
        if not self.ranges:
            return None
        slot = key_slot(key.encode() if isinstance(key, str) else key)
        at = bisect.bisect_right(self.starts, slot) - 1
        if at < 0 or slot > self.ranges[at][1]:
            raise ConnectorError(f"no node serves slot {slot} (of key {key!r}): the cluster "
                                 f"is not ready or is being changed")
        return self.ranges[at][2]

    def options_for(self, node: Node | None) -> ConnectionOptions:
        """How to reach ``node`` (None: the configured server)."""
        return self.options if node is None else self.options.at(*node)

    def masters(self) -> list[Node | None]:
        if not self.ranges:
            return [None]
        return list(dict.fromkeys(node for _, _, node in self.ranges))

    def key_on(self, node: Node | None, prefix: str) -> str:
        """A key ``node`` serves: ``prefix`` with the first hash tag that lands in its slots
        (a probe must reach the node it means, not get redirected)."""
        if node is None:
            return prefix
        for tag in range(1 << 16):
            key = f"{prefix}{{{tag}}}"
            if self.node_of(key) == node:
                return key
        raise ConnectorError(f"no key found for node {node}")  # pragma: no cover


def _is_cluster(client: redis.Redis, mode: str) -> bool:
    """``cluster`` = ``true``/``false`` as told; ``auto``: ``INFO cluster`` says
    ``cluster_enabled:1`` (a server that refuses INFO, say to an ACL user, counts as not
    a cluster: set ``cluster=true`` there)."""
    if mode != "auto":
        return mode == "true"
    try:
        text = client.execute_command("INFO", "cluster")
    except redis.ResponseError:
        return False
    if isinstance(text, bytes):
        text = text.decode()
    return "cluster_enabled:1" in str(text).split()


def _slot_ranges(client: redis.Redis, default_host: str) -> tuple[tuple[int, int, Node], ...]:
    try:
        reply = client.execute_command("CLUSTER", "SLOTS")
    except redis.ResponseError as err:
        raise ConnectorError(f"option cluster=true, but CLUSTER SLOTS failed: {err}") from None
    ranges = []
    for first, last, master, *_replicas in reply:
        host = master[0].decode() if isinstance(master[0], bytes) else str(master[0])
        # An empty or "?" endpoint: the node does not know its own address; the configured
        # host is the one that reached it.
        ranges.append((int(first), int(last), (host if host not in ("", "?") else default_host,
                                               int(master[1]))))
    if not ranges:
        raise ConnectorError("the cluster serves no slots yet")
    return tuple(sorted(ranges))


class NodeClients:
    """The driver's redis-py clients, one per master, opened when first needed, so that each
    stream's probes (first and last IDs, lengths, consumer groups) go to the node that serves
    it. Picklable: a copy has no open clients."""

    def __init__(self, options: ConnectionOptions) -> None:
        self.options = options
        self._shards: Shards | None = None
        self._open: dict[Node | None, redis.Redis] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_open": {}}

    @property
    def shards(self) -> Shards:
        if self._shards is None:
            self._shards = Shards.discover(self.options)
        return self._shards

    def node_of(self, key: str) -> Node | None:
        return self.shards.node_of(key)

    def client(self, node: Node | None) -> redis.Redis:
        if node not in self._open:
            self._open[node] = self.shards.options_for(node).connect()
        return self._open[node]

    def run(self, key: str, action: Callable[[Commands], T]) -> T:
        """``action`` on the client of ``key``'s node. On a redirect (a resharding since the
        map was read) the map is read again and ``action`` runs once more on the new owner;
        while the slot is still moving (``-ASK``), with ASKING before each command."""
        try:
            return action(self.client(self.node_of(key)))
        except redis.exceptions.AskError as redirect:
            if not self.shards.clustered:
                raise ConnectorError(
                    f"the server redirected {key!r} to another node ({redirect}): it is a "
                    f"cluster node, and option cluster={self.options.cluster} told the "
                    f"connector otherwise") from None
            self._shards = self.shards.refresh()
            if isinstance(redirect, redis.exceptions.MovedError):
                return action(self.client(self.node_of(key)))
            return action(Asking(self.client((redirect.host, int(redirect.port)))))

    def close(self) -> None:
        for client in self._open.values():
            client.close()
        self._open.clear()


class Asking:
    """A client whose every command goes out after ASKING, on the same connection: how a
    node importing a slot serves a key that has already moved to it."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def execute_command(self, *args: Any) -> Any:
        pipe = self.client.pipeline(transaction=False)
        pipe.execute_command("ASKING")
        pipe.execute_command(*args)
        return pipe.execute()[1]
