"""A node of the cluster as this node knows it (cluster_legacy.h's clusterNode): its name, its
addresses, its role, its epoch and how many slots it serves."""

from __future__ import annotations

import secrets
import time
from typing import Final

from brook.cluster.slots import bitmap_runs

NAME_LENGTH: Final = 40

# Flags, with Redis's values (they travel in the bus's header) and CLUSTER NODES's names in
# Redis's order.
MASTER: Final = 1
REPLICA: Final = 2
PFAIL: Final = 4
FAIL: Final = 8
MYSELF: Final = 16
HANDSHAKE: Final = 32
NOADDR: Final = 64
MEET: Final = 128
MIGRATE_TO: Final = 256
NOFAILOVER: Final = 512
EXTENSIONS_SUPPORTED: Final = 1024
_FLAG_NAMES: Final = ((MYSELF, "myself"), (MASTER, "master"), (REPLICA, "slave"),
                      (PFAIL, "fail?"), (FAIL, "fail"), (HANDSHAKE, "handshake"),
                      (NOADDR, "noaddr"), (NOFAILOVER, "nofailover"))


def _now_ms() -> int:
    return int(time.time() * 1000)


def random_name() -> str:
    """A node or shard ID: 40 random hex characters."""
    return secrets.token_hex(NAME_LENGTH // 2)


def is_name(text: bytes) -> bool:
    """Whether ``text`` can be a node ID (verifyClusterNodeId: 40 lower-case hex digits)."""
    return len(text) == NAME_LENGTH and all(c in b"0123456789abcdef" for c in text)


class ClusterNode:
    __slots__ = ("name", "shard_id", "ip", "port", "tls_port", "cport", "hostname",
                 "human_nodename", "flags", "master", "replicas", "config_epoch", "ping_sent",
                 "pong_received", "repl_offset", "numslots", "linked", "created",
                 "data_received", "fail_time", "fail_reports", "voted_time", "gossiped_in",
                 "slots", "orphaned_time", "_ranges")

    def __init__(self, name: str, flags: int) -> None:
        self.name = name
        self.shard_id = random_name()
        self.ip = ""  # learnt from the peers (or cluster-announce-ip); "" until then
        self.port = 0
        self.tls_port = 0
        self.cport = 0
        self.hostname = ""
        self.human_nodename = ""
        self.flags = flags
        self.master: ClusterNode | None = None
        self.replicas: list[ClusterNode] = []
        self.config_epoch = 0
        self.ping_sent = 0  # ms
        self.pong_received = 0  # ms
        self.repl_offset = 0
        self.numslots = 0
        self.slots = bytearray(2048)  # the slots it serves, as the bus's bitmap has them
        self._ranges: tuple[bytes, list[tuple[int, int]]] = (bytes(2048), [])
        self.orphaned_time = 0  # ms: since when it has served slots with no working replica
        self.linked = False  # a bus link to it is up
        self.created = _now_ms()  # a handshake node lives node-timeout from here
        self.data_received = 0  # ms: any message from it proves it alive
        self.fail_time = 0  # ms: when it was flagged FAIL
        self.fail_reports: dict[str, int] = {}  # master that says it fails -> when (ms)
        self.voted_time = 0  # ms: when this node last voted for one of its replicas
        self.gossiped_in = 0  # the PING that last named it (not twice in one message)

    def ranges(self) -> list[tuple[int, int]]:
        """(first, last) runs of the slots it serves; kept until its bitmap changes, since
        CLUSTER NODES and each nodes.conf save describe every node, and slots rarely move."""
        seen, runs = self._ranges
        if seen != self.slots:
            runs = bitmap_runs(self.slots)
            self._ranges = (bytes(self.slots), runs)
        return runs

    @property
    def is_master(self) -> bool:
        return bool(self.flags & MASTER)

    @property
    def failed(self) -> bool:
        return bool(self.flags & FAIL)

    def flag_names(self) -> str:
        """CLUSTER NODES's flags field (representClusterNodeFlags)."""
        names = [name for flag, name in _FLAG_NAMES if self.flags & flag]
        return ",".join(names) if names else "noflags"

    def epoch(self) -> int:
        """The config epoch CLUSTER NODES shows: a replica shows its master's."""
        master = self.master
        return master.config_epoch if self.flags & REPLICA and master is not None \
            else self.config_epoch
