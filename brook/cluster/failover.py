"""Replica promotion (cluster_legacy.c's clusterHandleSlaveFailover and its helpers): a
replica whose master is FAIL waits a moment -- longer the further behind the other replicas
it is -- then asks the masters for their votes in a new epoch; with a majority it takes its
master's slots under that epoch and tells everyone. A master votes once per epoch, for a
replica of a failed master, and not twice for replicas of one master within two node
timeouts. CLUSTER FAILOVER runs the same election at once (FORCE: the master is not asked;
a manual failover: once this replica has all its paused master wrote), or takes the slots
without one (TAKEOVER)."""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Final

from brook.cluster import bus_messages as bus
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
)
from brook.cluster.slots import bitmap_slots
from brook.cluster.state import now_ms

if TYPE_CHECKING:
    from brook.cluster.bus import ClusterBus
    from brook.cluster.bus_messages import Message

MANUAL_TIMEOUT_MS: Final = 5000  # CLUSTER_MF_TIMEOUT
MIGRATION_DELAY_MS: Final = 5000  # CLUSTER_SLAVE_MIGRATION_DELAY: orphaned this long first


class Failover:
    """This node's election, when it is a replica, and its votes, when a master."""

    def __init__(self, link: ClusterBus) -> None:
        self.bus = link
        self.auth_time = 0  # ms: when the election may start (or started)
        self.auth_count = 0  # votes received
        self.auth_sent = False
        self.auth_rank = 0
        self.auth_epoch = 0
        self.manual_end = 0  # ms: a manual failover runs until then (0: none)
        self.manual_can_start = False
        self.manual_master_offset = -1  # the paused master's offset, once it sent it

    # -- the replica's side ---------------------------------------------------------------

    def reset_manual(self) -> None:
        self.manual_end = 0
        self.manual_can_start = False
        self.manual_master_offset = -1

    def start_manual(self, force: bool) -> None:
        """CLUSTER FAILOVER [FORCE]: FORCE starts at once; otherwise the master is asked to
        pause its writers and send its offset (MFSTART)."""
        self.reset_manual()
        self.manual_end = now_ms() + MANUAL_TIMEOUT_MS
        if force:
            self.manual_can_start = True
            return
        master = self.bus.state.myself.master
        if master is not None:
            self.bus.send_to(master, self.bus.header(bus.MFSTART))

    def master_offset(self, sender: ClusterNode, message: Message) -> None:
        """The paused master's offset, as its PINGs carry it during a manual failover."""
        me = self.bus.state.myself
        if (self.manual_end and me.flags & REPLICA and me.master is sender
                and message.mflags[0] & bus.FLAG0_PAUSED and self.manual_master_offset == -1):
            self.manual_master_offset = message.offset
            self.bus.server.log("notice", "Received replication offset for paused master "
                                          f"manual failover: {message.offset}")

    def cron(self) -> None:
        me = self.bus.state.myself
        if self.manual_end and now_ms() > self.manual_end:
            self.reset_manual()
            self.bus.server.log("warning", "Manual failover timed out.")
        if not me.flags & REPLICA:
            return
        if (self.manual_end and not self.manual_can_start and self.manual_master_offset != -1
                and self.bus.server.replication.offset == self.manual_master_offset):
            self.manual_can_start = True
            self.bus.server.log("notice", "All master replication stream processed, manual "
                                          "failover can start.")
        self.elect()
        self.migrate()

    def _data_age_ms(self) -> int:
        """How long this replica has been without news of its master."""
        link = self.bus.server.replication.link
        if link is None:
            return 1 << 40
        now = time.monotonic()
        since = link.last_io if link.state == "connected" else (link.down_since or link.last_io)
        return int((now - since) * 1000)

    def _rank(self) -> int:
        """How many other replicas of the master have more of its stream."""
        me = self.bus.state.myself
        master = me.master
        if master is None:
            return 0
        mine = self.bus.server.replication.offset
        return sum(1 for replica in master.replicas if replica is not me
                   and not replica.flags & NOFAILOVER and replica.repl_offset > mine)

    def elect(self) -> None:
        """clusterHandleSlaveFailover."""
        server = self.bus.server
        config = server.config
        state = self.bus.state
        me = state.myself
        master = me.master
        now = now_ms()
        timeout = config.cluster_node_timeout
        manual = bool(self.manual_end and self.manual_can_start)
        auth_timeout = max(timeout * 2, 2000)
        auth_retry = auth_timeout * 2
        if (master is None or (not master.flags & FAIL and not manual)
                or (config.cluster_replica_no_failover and not manual)
                or master.numslots == 0):
            return
        data_age = self._data_age_ms()
        if data_age > timeout:
            data_age -= timeout
        factor = config.cluster_replica_validity_factor
        if (factor and not manual
                and data_age > config.repl_ping_replica_period * 1000 + timeout * factor):
            return
        auth_age = now - self.auth_time
        if auth_age > auth_retry:
            self.auth_time = now + 500 + random.randrange(500)
            self.auth_count = 0
            self.auth_sent = False
            self.auth_rank = self._rank()
            self.auth_time += self.auth_rank * 1000
            if self.manual_end:
                self.auth_time = now
                self.auth_rank = 0
            server.log("notice", f"Start of election delayed for {self.auth_time - now} "
                                 f"milliseconds (rank #{self.auth_rank}, offset "
                                 f"{server.replication.offset}).")
            self.bus.pong_shard()
            return
        if not self.auth_sent and not self.manual_end:
            rank = self._rank()
            if rank > self.auth_rank:
                self.auth_time += (rank - self.auth_rank) * 1000
                self.auth_rank = rank
        if now < self.auth_time or auth_age > auth_timeout:
            return
        if not self.auth_sent:
            state.current_epoch += 1
            self.auth_epoch = state.current_epoch
            server.log("notice", f"Starting a failover election for epoch {self.auth_epoch}.")
            request = self.bus.header(bus.FAILOVER_AUTH_REQUEST)
            if self.manual_end:
                request.mflags = bytes((request.mflags[0] | bus.FLAG0_FORCEACK, 0, 0))
            self.bus.broadcast(request)
            self.auth_sent = True
            self.bus.changed()
            return
        if self.auth_count >= state.size // 2 + 1:
            server.log("notice", "Failover election won: I'm the new master.")
            if me.config_epoch < self.auth_epoch:
                me.config_epoch = self.auth_epoch
                server.log("notice", f"configEpoch set to {me.config_epoch} after successful "
                                     "failover")
            self.replace_master()

    def migrate(self) -> None:
        """Replica migration (clusterCron's count, then clusterHandleSlaveMigration): a
        master left without a working replica -- one that had some -- gets one from the
        master with the most, if that one keeps ``cluster-migration-barrier`` others; of
        those replicas the one with the smallest name moves, once the orphan has waited."""
        state = self.bus.state
        config = self.bus.server.config
        me = state.myself
        mine = me.master
        if mine is None or not config.cluster_allow_replica_migration:
            return
        orphans = most = alongside = 0
        for node in state.nodes.values():
            if node.flags & (MYSELF | NOADDR | HANDSHAKE) or not node.flags & MASTER:
                continue
            if node.flags & FAIL:
                continue
            working = _working_replicas(node)
            if working == 0 and node.numslots and node.flags & MIGRATE_TO:
                orphans += 1
            most = max(most, working)
            if node is mine:
                alongside = working
        if not (orphans and most >= 2 and alongside == most) or not state.ok:
            return
        if sum(1 for replica in mine.replicas
               if not replica.flags & (FAIL | PFAIL)) <= config.cluster_migration_barrier:
            return
        now = now_ms()
        candidate = me
        target: ClusterNode | None = None
        for node in state.nodes.values():
            working = _working_replicas(node) if node.flags & MASTER else 0
            if (not node.flags & (REPLICA | FAIL) and node.flags & MIGRATE_TO
                    and working == 0):
                if target is None and node.numslots:
                    target = node
                node.orphaned_time = node.orphaned_time or now
            else:
                node.orphaned_time = 0
            if working == most:
                for replica in node.replicas:
                    if replica.name < candidate.name:
                        candidate = replica
        if (target is not None and candidate is me
                and now - target.orphaned_time > MIGRATION_DELAY_MS):
            self.bus.server.log("notice", f"Migrating to orphaned master {target.name}")
            self.bus.set_master(target)
            self.bus.changed()

    def replace_master(self) -> None:
        """clusterFailoverReplaceYourMaster: a master, with the old master's slots, and
        everyone told."""
        state = self.bus.state
        me = state.myself
        old = me.master
        if me.flags & MASTER or old is None:
            return
        state.set_node_as_master(me)
        self.bus.server.replication.promote()
        for slot in state.slots_of(old):
            state.del_slot(slot)
            state.add_slot(slot, me)
        self.bus.changed()
        self.bus.pong_all()
        self.reset_manual()

    def vote_received(self, sender: ClusterNode, message: Message) -> None:
        if (sender.flags & MASTER and sender.numslots
                and message.current_epoch >= self.auth_epoch):
            self.auth_count += 1

    # -- the master's side ----------------------------------------------------------------

    def vote(self, node: ClusterNode, request: Message) -> None:
        """clusterSendFailoverAuthIfNeeded: an ACK when every condition holds."""
        server = self.bus.server
        state = self.bus.state
        me = state.myself
        if me.flags & REPLICA or me.numslots == 0:
            return
        if request.current_epoch < state.current_epoch:
            return
        if state.last_vote_epoch == state.current_epoch:
            return
        master = node.master
        force = request.mflags[0] & bus.FLAG0_FORCEACK
        if node.flags & MASTER or master is None or (not master.flags & FAIL and not force):
            return
        now = now_ms()
        if now - master.voted_time < server.config.cluster_node_timeout * 2:
            return
        for slot in bitmap_slots(request.slots):
            owner = state.owners[slot]
            if owner is not None and owner.config_epoch > request.config_epoch:
                return
        state.last_vote_epoch = state.current_epoch
        master.voted_time = now
        self.bus.changed()
        self.bus.send_to(node, self.bus.header(bus.FAILOVER_AUTH_ACK))
        server.log("notice", f"Failover auth granted to {node.name} () for epoch "
                             f"{state.current_epoch}")


def _working_replicas(master: ClusterNode) -> int:
    return sum(1 for replica in master.replicas if not replica.flags & FAIL)
