"""What this node knows of the cluster (cluster_legacy.c's clusterState): the nodes, which
node serves each slot, the slots being migrated or imported, the epochs, and whether the
cluster is up; kept in ``cluster-config-file`` (nodes.conf) in Redis's format."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

from brook.cluster.node import (
    FAIL,
    HANDSHAKE,
    MASTER,
    MIGRATE_TO,
    MYSELF,
    NOADDR,
    NOFAILOVER,
    PFAIL,
    REPLICA,
    ClusterNode,
    is_name,
    random_name,
)
from brook.cluster.slots import SLOTS, bitmap_slots, bitmap_without

if TYPE_CHECKING:
    from brook.cluster.bus import ClusterBus

WRITABLE_DELAY_MS: Final = 2000  # a restarted master waits this long before serving
MIN_REJOIN_DELAY_MS: Final = 500
MAX_REJOIN_DELAY_MS: Final = 5000
_FLAGS_BY_NAME: Final = {"myself": MYSELF, "master": MASTER, "slave": REPLICA, "fail?": PFAIL,
                         "fail": FAIL, "handshake": HANDSHAKE, "noaddr": NOADDR,
                         "nofailover": NOFAILOVER, "noflags": 0}


class ClusterConfigError(ValueError):
    """nodes.conf cannot be loaded (the message says why, in Redis's words)."""


class ClusterOptions(Protocol):
    """The configuration the cluster state reads (the server's config)."""

    port: int
    cluster_config_file: str
    cluster_node_timeout: int
    cluster_require_full_coverage: bool
    cluster_announce_ip: str
    cluster_announce_port: int
    cluster_announce_bus_port: int
    cluster_announce_hostname: str
    cluster_announce_human_nodename: str
    cluster_port: int


def now_ms() -> int:
    return int(time.time() * 1000)


class ClusterState:
    def __init__(self, config: ClusterOptions) -> None:
        self.config = config
        self.myself = ClusterNode(random_name(), MYSELF | MASTER)
        self.nodes: dict[str, ClusterNode] = {self.myself.name: self.myself}
        self.owners: list[ClusterNode | None] = [None] * SLOTS
        self.assigned = 0  # slots with an owner
        self.migrating_to: dict[int, ClusterNode] = {}
        self.importing_from: dict[int, ClusterNode] = {}
        # 1 for a slot myself serves outright (owned, neither migrating nor importing): the
        # command path's quick test; changed only through the methods below.
        self.served_here = bytearray(SLOTS)
        self.current_epoch = 0
        self.last_vote_epoch = 0
        self.ok = False  # cluster_state: ok / fail
        self.size = 0  # masters serving at least one slot
        self.bus: ClusterBus | None = None  # the talking to the other nodes, once started
        self.forgotten: dict[str, int] = {}  # node forgotten -> until when (unix seconds)
        self.messages_sent: dict[str, int] = {}
        self.messages_received: dict[str, int] = {}
        self._first_update_ms = 0
        self._minority_since_ms = 0
        self._synced: tuple[object, ...] = ()  # what the last fsynced nodes.conf promised
        self.announce()

    def announce(self) -> None:
        """Myself's addresses from the configuration (cluster-announce-*, port, cluster-port)."""
        config = self.config
        me = self.myself
        me.port = config.cluster_announce_port or config.port
        me.cport = (config.cluster_announce_bus_port or config.cluster_port
                    or config.port + 10000)
        if config.cluster_announce_ip:
            me.ip = config.cluster_announce_ip
        me.hostname = config.cluster_announce_hostname
        me.human_nodename = config.cluster_announce_human_nodename

    # -- slots ------------------------------------------------------------------------------

    def _refresh_served(self, slot: int) -> None:
        self.served_here[slot] = (self.owners[slot] is self.myself
                                  and slot not in self.migrating_to
                                  and slot not in self.importing_from)

    def add_slot(self, slot: int, node: ClusterNode) -> None:
        if self.owners[slot] is not None:
            return
        self.owners[slot] = node
        node.slots[slot >> 3] |= 1 << (slot & 7)
        node.numslots += 1
        self.assigned += 1
        self._refresh_served(slot)

    def del_slot(self, slot: int) -> None:
        """The slot unbound (clusterDelSlot); an import of it goes on."""
        owner = self.owners[slot]
        if owner is None:
            return
        self.owners[slot] = None
        owner.slots[slot >> 3] &= ~(1 << (slot & 7))
        owner.numslots -= 1
        self.assigned -= 1
        self._refresh_served(slot)

    def set_migrating(self, slot: int, node: ClusterNode | None) -> None:
        """The slot migrates to ``node`` (None: no longer)."""
        if node is None:
            self.migrating_to.pop(slot, None)
        else:
            self.migrating_to[slot] = node
        self._refresh_served(slot)

    def set_importing(self, slot: int, node: ClusterNode | None) -> None:
        """The slot is imported from ``node`` (None: no longer)."""
        if node is None:
            self.importing_from.pop(slot, None)
        else:
            self.importing_from[slot] = node
        self._refresh_served(slot)

    def clear_moves(self) -> None:
        """No slot migrating or importing (CLUSTER RESET)."""
        moving = set(self.migrating_to) | set(self.importing_from)
        self.migrating_to.clear()
        self.importing_from.clear()
        for slot in moving:
            self._refresh_served(slot)

    def become_myself(self, node: ClusterNode) -> None:
        """``node`` is this node (nodes.conf's ``myself`` line): the quick test recomputed."""
        self.myself = node
        for slot in range(SLOTS):
            self._refresh_served(slot)

    def slots_of(self, node: ClusterNode) -> list[int]:
        return bitmap_slots(node.slots)

    def runs(self) -> list[tuple[int, int, ClusterNode]]:
        """(first, last, node) of each run of consecutive slots one node serves."""
        found: list[tuple[int, int, ClusterNode]] = []
        for slot, owner in enumerate(self.owners):
            if owner is None:
                continue
            if found and found[-1][2] is owner and found[-1][1] == slot - 1:
                found[-1] = (found[-1][0], slot, owner)
            else:
                found.append((slot, slot, owner))
        return found

    def node(self, name: bytes) -> ClusterNode | None:
        return self.nodes.get(name.decode("latin-1"))

    # -- nodes ------------------------------------------------------------------------------

    def add_node(self, node: ClusterNode) -> None:
        self.nodes[node.name] = node

    def rename_node(self, node: ClusterNode, name: str) -> None:
        """A handshake node takes the name its first PONG gives (clusterRenameNode)."""
        self.nodes.pop(node.name, None)
        node.name = name
        self.nodes[name] = node

    def del_node(self, node: ClusterNode) -> None:
        """clusterDelNode: its slots unbound, the moves to or from it ended, its reports of
        others' failures dropped, and out of its master's replicas."""
        for slot, owner in enumerate(self.owners):
            if self.importing_from.get(slot) is node:
                self.set_importing(slot, None)
            if self.migrating_to.get(slot) is node:
                self.set_migrating(slot, None)
            if owner is node:
                self.del_slot(slot)
        for other in self.nodes.values():
            other.fail_reports.pop(node.name, None)
        if node.master is not None:
            _remove_replica(node.master, node)
        for replica in node.replicas:
            if replica.master is node:
                replica.master = None
        self.nodes.pop(node.name, None)

    def forget(self, node: ClusterNode, seconds: int) -> None:
        """CLUSTER FORGET (or a peer's forgotten-node extension): gone, and not taken back
        from gossip for ``seconds``."""
        self.forgotten[node.name] = int(time.time()) + seconds
        self.del_node(node)

    def is_forgotten(self, name: str) -> bool:
        now = int(time.time())
        for expired in [name for name, until in self.forgotten.items() if until < now]:
            del self.forgotten[expired]
        return name in self.forgotten

    def set_node_as_master(self, node: ClusterNode) -> bool:
        """A node believed a replica acts as a master (clusterSetNodeAsMaster); True if that
        changed anything."""
        if node.flags & MASTER:
            return False
        if node.master is not None:
            _remove_replica(node.master, node)
            if node is not self.myself:
                node.flags |= MIGRATE_TO
        node.flags = (node.flags & ~REPLICA) | MASTER
        node.master = None
        return True

    def set_replica_of(self, node: ClusterNode, master: ClusterNode) -> None:
        """``node`` replicates ``master`` (and is in its shard)."""
        if node.master is master:
            return
        if node.master is not None:
            _remove_replica(node.master, node)
        node.flags = (node.flags & ~(MASTER | MIGRATE_TO)) | REPLICA
        node.master = master
        master.replicas.append(node)
        master.flags |= MIGRATE_TO  # it had a replica: one may migrate to it if orphaned
        node.shard_id = master.shard_id

    def update_shard_id(self, node: ClusterNode, shard: str) -> bool:
        """``node`` is in ``shard`` (updateShardId), and so is its master, or so are its
        replicas: a node too old to send its shard id (Redis 7.0) takes the one its
        master's or replica's gossip carries, so CLUSTER SHARDS keeps them together."""
        if node.shard_id == shard:
            return False
        node.shard_id = shard
        if node.master is None:
            for replica in node.replicas:
                replica.shard_id = shard
        else:
            node.master.shard_id = shard
        return True

    def failure_reports(self, node: ClusterNode) -> int:
        """The masters that said, within twice the node timeout, that ``node`` fails."""
        oldest = now_ms() - self.config.cluster_node_timeout * 2
        for reporter in [name for name, when in node.fail_reports.items() if when < oldest]:
            del node.fail_reports[reporter]
        return len(node.fail_reports)

    def update_slots_config_with(self, sender: ClusterNode, epoch: int, bitmap: bytes,
                                 holds_keys: Callable[[int], bool]
                                 ) -> tuple[ClusterNode | None, list[int]]:
        """clusterUpdateSlotsConfigWith: the slots ``sender`` claims under ``epoch`` are
        its when they are unowned or owned under an older epoch (a slot being imported here
        is left to the operator). Returns the master myself should now follow (the sender
        took every slot of myself's shard) and the slots lost with keys still here."""
        myself = self.myself
        if sender is myself:
            return None, []
        current = myself if myself.flags & MASTER else myself.master
        new_master: ClusterNode | None = None
        dirty: list[int] = []
        for slot in bitmap_slots(bitmap_without(bitmap, sender.slots)):
            owner = self.owners[slot]
            if slot in self.importing_from:
                continue
            if owner is None or owner.config_epoch < epoch:
                if owner is myself and holds_keys(slot):
                    dirty.append(slot)
                if owner is current and owner is not None:
                    new_master = sender
                self.del_slot(slot)
                self.add_slot(slot, sender)
        if new_master is not None and current is not None and current.numslots == 0:
            return new_master, []
        master = myself.master
        if master is not None and master.master is not None and master.master is not myself:
            return master.master, []  # a replica of a replica follows the grandmaster
        return None, dirty

    # -- state ------------------------------------------------------------------------------

    def update_state(self) -> None:
        """ok or fail (clusterUpdateState): every slot served by a node not failing (with
        cluster-require-full-coverage), and a majority of the masters that serve slots
        reachable; a restarted master, and one back from a minority, wait before serving."""
        now = now_ms()
        if self._first_update_ms == 0:
            self._first_update_ms = now
        me = self.myself
        if me.is_master and not self.ok and now - self._first_update_ms < WRITABLE_DELAY_MS:
            return
        ok = not self.config.cluster_require_full_coverage or (
            self.assigned == SLOTS
            and not any(node.flags & FAIL and node.numslots for node in self.nodes.values()))
        self.size = 0
        reachable = 0
        for node in self.nodes.values():
            if node.is_master and node.numslots:
                self.size += 1
                if not node.flags & (FAIL | PFAIL):
                    reachable += 1
        if reachable < self.size // 2 + 1:
            ok = False
            self._minority_since_ms = now
        if ok != self.ok:
            rejoin_delay = min(max(self.config.cluster_node_timeout, MIN_REJOIN_DELAY_MS),
                               MAX_REJOIN_DELAY_MS)
            if ok and me.is_master and now - self._minority_since_ms < rejoin_delay:
                return
            self.ok = ok

    def settle(self, log: Callable[[str, str], None]) -> None:
        """What Redis does before its next sleep after a change: the state updated and
        nodes.conf saved (a failure to save is logged, and the node goes on)."""
        self.update_state()
        try:
            self.save(fsync=self._promises() != self._synced)
        except OSError as failure:
            log("warning", f"Could not save the cluster configuration: {failure}")

    # -- CLUSTER NODES and nodes.conf -------------------------------------------------------

    def describe(self, node: ClusterNode, for_file: bool = False) -> str:
        """One line of CLUSTER NODES (clusterGenNodeDescription); ``for_file`` adds the aux
        fields nodes.conf keeps (tls-port, nodename, shard-id)."""
        address = f"{node.ip}:{node.port}@{node.cport}"
        if node.hostname:
            address += "," + node.hostname
        if for_file:
            if not node.hostname:
                address += ","
            address += f",tls-port={node.tls_port}"
            if node.human_nodename:
                address += f",nodename={node.human_nodename}"
            address += f",shard-id={node.shard_id}"
        master = node.master.name if node.master is not None else "-"
        link = "connected" if node.linked or node.flags & MYSELF else "disconnected"
        parts = [node.name, address, node.flag_names(), master, str(node.ping_sent),
                 str(node.pong_received), str(node.epoch()), link]
        parts += [str(first) if first == last else f"{first}-{last}"
                  for first, last in node.ranges()]
        if node.flags & MYSELF:
            for slot in sorted(self.migrating_to.keys() | self.importing_from.keys()):
                target = self.migrating_to.get(slot)
                if target is not None:
                    parts.append(f"[{slot}->-{target.name}]")
                    continue
                source = self.importing_from.get(slot)
                if source is not None:
                    parts.append(f"[{slot}-<-{source.name}]")
        return " ".join(parts)

    def nodes_text(self, for_file: bool = False) -> str:
        """CLUSTER NODES: a line per node (but those in handshake, for the file)."""
        return "".join(self.describe(node, for_file) + "\n" for node in self.nodes.values()
                       if not (for_file and node.flags & HANDSHAKE))

    def _promises(self) -> tuple[object, ...]:
        """What this node must not forget in a crash, as Redis fsyncs nodes.conf for it:
        the epochs (a vote given twice in one epoch could elect two masters) and its own
        role. Slot moves are not among them: the epochs order them again after a restart."""
        me = self.myself
        return (self.current_epoch, self.last_vote_epoch, me.config_epoch, me.flags & MASTER,
                me.master.name if me.master is not None else None)

    def save(self, fsync: bool = True) -> None:
        """nodes.conf rewritten atomically: a temporary file renamed over it, fsynced first
        when asked (Redis syncs only what its epochs and votes depend on: a SETSLOT that
        waited for the disk would make resharding a slot a disk write's latency)."""
        text = self.nodes_text(for_file=True) + (
            f"vars currentEpoch {self.current_epoch} lastVoteEpoch {self.last_vote_epoch}\n")
        path = self.config.cluster_config_file
        temp = f"{path}.tmp-{os.getpid()}-{now_ms()}"
        with open(temp, "w", encoding="latin-1") as out:
            out.write(text)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temp, path)
        if fsync:
            self._synced = self._promises()

    def load(self) -> bool:
        """Read nodes.conf if there is one (False: none, this node starts afresh);
        :class:`ClusterConfigError` if it cannot be read."""
        path = self.config.cluster_config_file
        try:
            with open(path, encoding="latin-1") as handle:
                text = handle.read()
        except FileNotFoundError:
            return False
        if not text.strip():
            return False
        self.nodes = {}
        self.owners = [None] * SLOTS
        self.assigned = 0
        myself: ClusterNode | None = None
        for line in text.splitlines():
            fields = line.split()
            if not fields:
                continue
            if fields[0] == "vars":
                for name, value in zip(fields[1::2], fields[2::2], strict=False):
                    if name == "currentEpoch":
                        self.current_epoch = int(value)
                    elif name == "lastVoteEpoch":
                        self.last_vote_epoch = int(value)
                continue
            node = self._load_line(fields)
            if node.flags & MYSELF:
                myself = node
        if myself is None:
            raise ClusterConfigError("Unrecoverable error: corrupted cluster config file "
                                     f"\"{path}\".")
        self.become_myself(myself)
        self.announce()
        return True

    def _load_line(self, fields: list[str]) -> ClusterNode:
        if len(fields) < 8 or not is_name(fields[0].encode("latin-1")):
            raise ClusterConfigError("Unrecoverable error: corrupted cluster config file "
                                     f"\"{' '.join(fields)}\".")
        node = self._node_named(fields[0])
        address, *aux = fields[1].split(",")
        node.hostname = aux[0] if aux else ""
        for item in aux[1:]:
            name, _, value = item.partition("=")
            if name == "shard-id":
                node.shard_id = value
            elif name == "nodename":
                node.human_nodename = value
            elif name == "tls-port":
                node.tls_port = int(value)
            elif name == "tcp-port":
                node.port = int(value)
        host, _, ports = address.rpartition(":")
        port, _, bus_port = ports.partition("@")
        node.ip = host
        node.port = node.port or int(port)
        node.cport = int(bus_port) if bus_port else node.port + 10000
        flags = 0
        for name in fields[2].split(","):
            if name not in _FLAGS_BY_NAME:
                raise ClusterConfigError("Unknown flag in redis cluster config file")
            flags |= _FLAGS_BY_NAME[name]
        node.flags = flags
        if fields[3] != "-":
            master = self._node_named(fields[3])
            node.master = master
            node.shard_id = master.shard_id
            master.replicas.append(node)
        node.ping_sent = now_ms() if int(fields[4]) else 0
        node.pong_received = now_ms() if int(fields[5]) else 0
        node.config_epoch = int(fields[6])
        for item in fields[8:]:
            if item.startswith("["):
                slot_text, arrow, other = item[1:-1].partition("->-")
                if not arrow:
                    slot_text, _, other = item[1:-1].partition("-<-")
                    self.set_importing(int(slot_text), self._node_named(other))
                else:
                    self.set_migrating(int(slot_text), self._node_named(other))
                continue
            first, _, last = item.partition("-")
            for slot in range(int(first), int(last or first) + 1):
                self.add_slot(slot, node)
        return node

    def _node_named(self, name: str) -> ClusterNode:
        node = self.nodes.get(name)
        if node is None:
            node = self.nodes[name] = ClusterNode(name, 0)
        return node

    # -- CLUSTER INFO -----------------------------------------------------------------------

    def info_text(self) -> str:
        assigned = pfail = fail = 0
        for owner in self.owners:
            if owner is None:
                continue
            assigned += 1
            if owner.flags & FAIL:
                fail += 1
            elif owner.flags & PFAIL:
                pfail += 1
        me = self.myself
        lines = [f"cluster_state:{'ok' if self.ok else 'fail'}",
                 f"cluster_slots_assigned:{assigned}",
                 f"cluster_slots_ok:{assigned - pfail - fail}",
                 f"cluster_slots_pfail:{pfail}",
                 f"cluster_slots_fail:{fail}",
                 f"cluster_known_nodes:{len(self.nodes)}",
                 f"cluster_size:{self.size}",
                 f"cluster_current_epoch:{self.current_epoch}",
                 f"cluster_my_epoch:{me.epoch()}"]
        for kind, count in self.messages_sent.items():
            lines.append(f"cluster_stats_messages_{kind}_sent:{count}")
        lines.append(f"cluster_stats_messages_sent:{sum(self.messages_sent.values())}")
        for kind, count in self.messages_received.items():
            lines.append(f"cluster_stats_messages_{kind}_received:{count}")
        lines.append(f"cluster_stats_messages_received:{sum(self.messages_received.values())}")
        lines.append("total_cluster_links_buffer_limit_exceeded:0")
        return "".join(line + "\r\n" for line in lines)


def _remove_replica(master: ClusterNode, replica: ClusterNode) -> None:
    """clusterNodeRemoveSlave: a master left without replicas takes none by migration."""
    if replica in master.replicas:
        master.replicas.remove(replica)
        if not master.replicas:
            master.flags &= ~MIGRATE_TO
