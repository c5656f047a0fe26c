"""The cluster bus (cluster_legacy.c): the links to the other nodes, the messages this node
sends on them and what it makes of those it receives.

A node PINGs the others (one chosen at random every second, and any it has not heard from in
half the node timeout), each message carrying its view of itself -- slots, epochs, role --
and gossip about a few other nodes; a node silent for longer than the node timeout is
suspected (PFAIL), and becomes FAIL when a majority of the masters reports it so. Slots move
to whoever claims them under a newer config epoch. MEET introduces a node: it is kept in
handshake under a random name until its first PONG gives its real one.

The cluster's facts live in :class:`~brook.cluster.state.ClusterState`; this module does the
talking, and what a message means for the rest of the server (follow a new master, drop
the keys of a lost slot, deliver a PUBLISH) goes through the server's parts.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import socket
import struct
from typing import TYPE_CHECKING, Final

from brook.cluster import bus_messages as bus
from brook.cluster.bus_messages import Gossip, Message
from brook.cluster.failover import Failover
from brook.cluster.links import BusLink
from brook.cluster.node import (
    EXTENSIONS_SUPPORTED,
    FAIL,
    HANDSHAKE,
    MASTER,
    MEET,
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
from brook.cluster.parked import redirect_parked
from brook.cluster.slot_keys import count_keys_in_slot, delete_keys_in_slot
from brook.cluster.slots import bitmap_slots, bitmap_without
from brook.cluster.state import ClusterState, now_ms

if TYPE_CHECKING:
    from brook.context import ServerContext

FORGET_SECONDS: Final = 60  # CLUSTER_BLACKLIST_TTL: a forgotten node is not re-learnt before
FAIL_UNDO_MULT: Final = 2  # a master's FAIL is cleared after this many node timeouts
_FORGOTTEN: Final = struct.Struct(f">{bus.NAME_BYTES}sQ")
_PUBLISH: Final = struct.Struct(">II")
_UPDATE: Final = struct.Struct(f">Q{bus.NAME_BYTES}s2048s")


class ClusterBus:
    """One node's side of the bus: a listener on the bus port, an outbound link to every
    node with an address, and the ten-times-a-second cron (clusterCron)."""

    def __init__(self, server: ServerContext, state: ClusterState) -> None:
        self.server = server
        self.state = state
        self.outbound: dict[ClusterNode, BusLink] = {}
        self.inbound: dict[ClusterNode, BusLink] = {}
        self.unnamed: set[BusLink] = set()  # inbound links whose sender is not known yet
        self._servers: list[asyncio.base_events.Server] = []
        self._iteration = 0
        self._pings_sent = 0
        self.failover = Failover(self)

    # -- the listener ---------------------------------------------------------------------

    async def listen(self, sockets: list[socket.socket]) -> None:
        """Serve the bus port on ``sockets`` (bound by the server's listeners)."""
        for sock in sockets:
            self._servers.append(await asyncio.start_server(self._accept, sock=sock))

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = BusLink(None, inbound=True, created=now_ms())
        link.attach(reader, writer)
        link.on_close = self._forget_link
        self.unnamed.add(link)
        link.start(self._receive)

    def close(self) -> None:
        for listener in self._servers:
            listener.close()
        for link in [*self.outbound.values(), *self.inbound.values(), *self.unnamed]:
            link.close()

    # -- links ----------------------------------------------------------------------------

    def _connect(self, node: ClusterNode) -> None:
        link = BusLink(node, inbound=False, created=now_ms())
        link.on_close = self._forget_link
        self.outbound[node] = link
        asyncio.get_running_loop().create_task(self._open(link, node))

    async def _open(self, link: BusLink, node: ClusterNode) -> None:
        timeout = max(self.server.config.cluster_node_timeout, 1000) / 1000
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(node.ip, node.cport), timeout)
        except (TimeoutError, OSError):
            if node.ping_sent == 0:
                node.ping_sent = now_ms()  # no PONG will come: failure detection runs
            link.close()
            return
        if link.closed:
            writer.close()
            return
        link.attach(reader, writer)
        node.linked = True
        pending = node.ping_sent
        self.send_ping(link, bus.MEET if node.flags & MEET else bus.PING)
        if pending:
            node.ping_sent = pending  # the PING lost with the old link is still unanswered
        node.flags &= ~MEET
        link.start(self._receive)

    def _forget_link(self, link: BusLink) -> None:
        self.unnamed.discard(link)
        node = link.node
        if node is None:
            return
        table = self.inbound if link.inbound else self.outbound
        if table.get(node) is link:
            del table[node]
            if not link.inbound:
                node.linked = False

    def links_of(self, node: ClusterNode) -> list[BusLink]:
        return [link for link in (self.outbound.get(node), self.inbound.get(node))
                if link is not None]

    def _delete_node(self, node: ClusterNode) -> None:
        for link in self.links_of(node):
            link.close()
        self.state.del_node(node)

    # -- sending --------------------------------------------------------------------------

    def _send(self, link: BusLink | None, message: Message) -> None:
        if link is None or not link.connected:
            return
        link.send(bus.encode(message))
        kind = bus.TYPE_NAMES[message.type]
        sent = self.state.messages_sent
        sent[kind] = sent.get(kind, 0) + 1

    def broadcast(self, message: Message) -> None:
        """To every node linked and past its handshake (clusterBroadcastMessage)."""
        frame = bus.encode(message)
        kind = bus.TYPE_NAMES[message.type]
        sent = self.state.messages_sent
        for node, link in self.outbound.items():
            if node.flags & (MYSELF | HANDSHAKE) or not link.connected:
                continue
            link.send(frame)
            sent[kind] = sent.get(kind, 0) + 1

    def header(self, kind: int) -> Message:
        """clusterBuildMessageHdr: myself as the others must see it -- a replica sends its
        master's slots and config epoch."""
        state = self.state
        me = state.myself
        master = me.master if me.flags & REPLICA and me.master is not None else me
        config = self.server.config
        return Message(kind, me.name, port=me.port, cport=me.cport, pport=me.tls_port,
                       current_epoch=state.current_epoch, config_epoch=master.config_epoch,
                       offset=self.server.replication.offset, slots=bytes(master.slots),
                       master=me.master.name if me.master is not None else None,
                       ip=config.cluster_announce_ip, flags=me.flags, state_ok=state.ok,
                       mflags=bytes((bus.FLAG0_EXT_DATA, 0, 0)))

    def send_ping(self, link: BusLink, kind: int) -> None:
        """A PING, PONG or MEET with gossip about a tenth of the nodes (at least three) and
        every node suspected failing (clusterSendPing)."""
        state = self.state
        self._pings_sent += 1
        stamp = self._pings_sent
        nodes = list(state.nodes.values())
        fresh = len(nodes) - 2
        wanted = min(max(len(nodes) // 10, 3), fresh)
        message = self.header(kind)
        if not link.inbound and kind == bus.PING and link.node is not None:
            link.node.ping_sent = now_ms()
        gossip = message.gossip
        tries = wanted * 3
        while fresh > 0 and len(gossip) < wanted and tries > 0:
            tries -= 1
            node = random.choice(nodes)
            if node.flags & MYSELF or node is link.node or node.flags & PFAIL:
                continue
            if node.flags & (HANDSHAKE | NOADDR) or (not node.linked and not node.numslots):
                fresh -= 1
                continue
            if node.gossiped_in == stamp:
                continue
            node.gossiped_in = stamp
            fresh -= 1
            gossip.append(_gossip(node))
        gossip.extend(_gossip(node) for node in nodes
                      if node.flags & PFAIL and not node.flags & (HANDSHAKE | NOADDR))
        if link.node is not None and link.node.flags & EXTENSIONS_SUPPORTED:
            message.extensions = self._extensions()
        self._send(link, message)

    def _extensions(self) -> list[tuple[int, bytes]]:
        """Hostname and human node name (when set), the nodes forgotten lately, the shard."""
        state = self.state
        me = state.myself
        found: list[tuple[int, bytes]] = []
        if me.hostname:
            found.append(bus.text_extension(bus.EXT_HOSTNAME, me.hostname))
        if me.human_nodename:
            found.append(bus.text_extension(bus.EXT_HUMAN_NODENAME, me.human_nodename))
        now = int(now_ms() / 1000)
        for name, until in state.forgotten.items():
            if until >= now:
                found.append((bus.EXT_FORGOTTEN_NODE,
                              _FORGOTTEN.pack(name.encode("latin-1"), until - now)))
        found.append((bus.EXT_SHARDID, me.shard_id.encode("latin-1")))
        return found

    def pong_all(self) -> None:
        """A PONG to every node: news of a change in myself travels at once
        (clusterBroadcastPong)."""
        for node, link in list(self.outbound.items()):
            if link.connected and not node.flags & (MYSELF | HANDSHAKE):
                self.send_ping(link, bus.PONG)

    def pong_shard(self) -> None:
        """A PONG to the other replicas of myself's master: an election's offset known."""
        master = self.state.myself.master
        for node, link in list(self.outbound.items()):
            if (link.connected and node.master is master and master is not None
                    and not node.flags & (MYSELF | HANDSHAKE)):
                self.send_ping(link, bus.PONG)

    def send_to(self, node: ClusterNode, message: Message) -> None:
        self._send(self.outbound.get(node), message)

    def send_fail(self, node: ClusterNode) -> None:
        message = self.header(bus.FAIL)
        message.data = node.name.encode("latin-1")
        self.broadcast(message)

    def send_update(self, link: BusLink | None, node: ClusterNode) -> None:
        message = self.header(bus.UPDATE)
        message.data = _UPDATE.pack(node.config_epoch, node.name.encode("latin-1"),
                                    bytes(node.slots))
        self._send(link, message)

    def publish(self, channel: bytes, text: bytes, sharded: bool) -> None:
        """PUBLISH goes to every node; SPUBLISH to the nodes of this shard."""
        message = self.header(bus.PUBLISHSHARD if sharded else bus.PUBLISH)
        message.data = _PUBLISH.pack(len(channel), len(text)) + channel + text
        if not sharded:
            self.broadcast(message)
            return
        shard = self.state.myself.shard_id
        for node, link in self.outbound.items():
            if node.shard_id == shard and not node.flags & (MYSELF | HANDSHAKE):
                self._send(link, message)

    # -- MEET, REPLICATE, FORGET ----------------------------------------------------------

    def start_handshake(self, ip: str, port: int, cport: int) -> bool:
        """CLUSTER MEET: a node in handshake, under a random name, at that address; False
        when the address is not one (clusterStartHandshake's EINVAL)."""
        try:
            normal = str(ipaddress.ip_address(ip))
        except ValueError:
            return False
        if not (0 < port <= 65535 and 0 < cport <= 65535):
            return False
        for node in self.state.nodes.values():
            if (node.flags & HANDSHAKE and node.ip.lower() == normal.lower()
                    and node.port == port and node.cport == cport):
                return True  # one is under way already
        node = ClusterNode(random_name(), HANDSHAKE | MEET)
        node.ip, node.port, node.cport = normal, port, cport
        self.state.add_node(node)
        return True

    def set_master(self, master: ClusterNode) -> None:
        """clusterSetMaster: myself replicates ``master``."""
        state = self.state
        me = state.myself
        if me.flags & MASTER:
            state.clear_moves()
        state.set_replica_of(me, master)
        self.server.replication.follow(master.ip, master.port)

    def forget(self, node: ClusterNode) -> None:
        for link in self.links_of(node):
            link.close()
        self.state.forget(node, FORGET_SECONDS)

    # -- the cron -------------------------------------------------------------------------

    def cron(self) -> None:
        """Ten times a second: links (re)opened, handshakes timed out, PINGs sent, silent
        nodes suspected, a replica's replication started (clusterCron)."""
        state = self.state
        config = self.server.config
        timeout = config.cluster_node_timeout
        self._iteration += 1
        now = now_ms()
        handshake_timeout = max(timeout, 1000)
        for node in list(state.nodes.values()):
            if node.flags & (MYSELF | NOADDR):
                continue
            if node.flags & HANDSHAKE and now - node.created > handshake_timeout:
                self._delete_node(node)
                continue
            if node not in self.outbound and node.ip:
                self._connect(node)
        if self._iteration % 10 == 0:
            self._ping_oldest()
            redirect_parked(self.server, state)
        update = False
        for node in list(state.nodes.values()):
            if node.flags & (MYSELF | NOADDR | HANDSHAKE):
                continue
            now = now_ms()
            link = self.outbound.get(node)
            ping_delay = now - node.ping_sent
            data_delay = now - node.data_received
            if (link is not None and link.connected and now - link.created > timeout
                    and node.ping_sent and ping_delay > timeout / 2
                    and data_delay > timeout / 2):
                link.close()  # silent for too long: reconnect, maybe the link is at fault
                link = None
            if (link is not None and link.connected and node.ping_sent == 0
                    and now - node.pong_received > timeout / 2):
                self.send_ping(link, bus.PING)
                continue
            if node.ping_sent == 0:
                continue
            if min(ping_delay, data_delay) > timeout and not node.flags & (PFAIL | FAIL):
                node.flags |= PFAIL
                update = True
                if state.myself.flags & MASTER and state.size == 1:
                    self._mark_failing_if_needed(node)
        me = state.myself
        replication = self.server.replication
        if (me.flags & REPLICA and not replication.is_replica and me.master is not None
                and me.master.ip and not me.master.flags & NOADDR):
            replication.follow(me.master.ip, me.master.port)
        self.failover.cron()
        if update or not state.ok:
            state.update_state()

    def _ping_oldest(self) -> None:
        """Of five nodes picked at random, PING the one heard from least lately."""
        nodes = list(self.state.nodes.values())
        chosen: ClusterNode | None = None
        for _ in range(5):
            node = random.choice(nodes)
            link = self.outbound.get(node)
            if link is None or not link.connected or node.ping_sent:
                continue
            if node.flags & (MYSELF | HANDSHAKE):
                continue
            if chosen is None or node.pong_received < chosen.pong_received:
                chosen = node
        if chosen is not None:
            self.send_ping(self.outbound[chosen], bus.PING)

    # -- receiving ------------------------------------------------------------------------

    def _receive(self, link: BusLink, message: Message) -> None:
        try:
            self._process(link, message)
        except Exception as failure:  # a bug here must not take the node down
            self.server.log("warning", f"Cluster bus message not processed: {failure!r}")

    def _sender(self, link: BusLink, message: Message) -> ClusterNode | None:
        """getNodeFromLinkAndMsg: the link's node, or the node the message names (which an
        inbound link then belongs to)."""
        node = link.node
        if node is not None and not node.flags & HANDSHAKE:
            return node
        sender = self.state.nodes.get(message.sender)
        if sender is not None and link.inbound and link.node is None:
            old = self.inbound.get(sender)
            if old is not None and old is not link:
                old.close()
            link.node = sender
            self.unnamed.discard(link)
            self.inbound[sender] = link
        return sender

    def _process(self, link: BusLink, message: Message) -> None:
        """clusterProcessPacket."""
        state = self.state
        kind = message.type
        if kind < len(bus.TYPE_NAMES):
            name = bus.TYPE_NAMES[kind]
            state.messages_received[name] = state.messages_received.get(name, 0) + 1
        now = now_ms()
        sender = self._sender(link, message)
        changed = False
        if sender is not None:
            if message.mflags[0] & bus.FLAG0_EXT_DATA:
                sender.flags |= EXTENSIONS_SUPPORTED
            sender.data_received = now
            if not sender.flags & HANDSHAKE:
                if message.current_epoch > state.current_epoch:
                    state.current_epoch = message.current_epoch
                    changed = True
                if message.config_epoch > sender.config_epoch:
                    sender.config_epoch = message.config_epoch
                    changed = True
                sender.repl_offset = message.offset
                self.failover.master_offset(sender, message)
        if kind in (bus.PING, bus.PONG, bus.MEET):
            changed = self._process_ping(link, message, sender) or changed
        elif kind == bus.FAIL:
            changed = self._process_fail(message, sender) or changed
        elif sender is None:
            pass  # the other types are taken from a known node only
        elif kind in (bus.PUBLISH, bus.PUBLISHSHARD):
            self._deliver(message)
        elif kind == bus.UPDATE:
            changed = self._process_update(message, sender) or changed
        elif kind == bus.FAILOVER_AUTH_REQUEST:
            self.failover.vote(sender, message)
        elif kind == bus.FAILOVER_AUTH_ACK:
            self.failover.vote_received(sender, message)
        if changed:
            self.changed()

    def _process_ping(self, link: BusLink, message: Message,
                      sender: ClusterNode | None) -> bool:
        state = self.state
        me = state.myself
        kind = message.type
        changed = False
        if kind in (bus.PING, bus.MEET):
            if ((kind == bus.MEET or not me.ip) and not self.server.config.cluster_announce_ip
                    and link.local_ip and link.local_ip != me.ip):
                me.ip = link.local_ip
                self.server.log("notice", f"IP address for this node updated to {me.ip}")
                changed = True
            if sender is None and kind == bus.MEET:
                node = ClusterNode(random_name(), HANDSHAKE)
                node.ip = message.ip or link.peer_ip
                node.port, node.tls_port, node.cport = message.port, message.pport, message.cport
                state.add_node(node)
                changed = True
                self._process_gossip(message, None)
            self.send_ping(link, bus.PONG)
        if not link.inbound and link.node is not None:
            node = link.node
            if node.flags & HANDSHAKE:
                if sender is not None:
                    self._update_address(sender, link, message)
                    self._delete_node(node)  # we know it under its name already
                    return True
                state.rename_node(node, message.sender)
                node.flags &= ~HANDSHAKE
                node.flags |= message.flags & (MASTER | REPLICA)
                changed = True
            elif node.name != message.sender:
                node.flags |= NOADDR
                node.ip, node.port, node.tls_port, node.cport = "", 0, 0, 0
                link.close()
                return True
        if sender is not None:
            sender.flags = (sender.flags & ~NOFAILOVER) | (message.flags & NOFAILOVER)
            if (kind == bus.PING and not sender.flags & HANDSHAKE
                    and self._update_address(sender, link, message)):
                changed = True
        if not link.inbound and kind == bus.PONG and link.node is not None:
            node = link.node
            node.pong_received = now_ms()
            node.ping_sent = 0
            if node.flags & PFAIL:
                node.flags &= ~PFAIL
                changed = True
            elif node.flags & FAIL:
                changed = self._clear_failure_if_needed(node) or changed
        if sender is None:
            return changed
        changed = self._process_role(sender, message) or changed
        sender_master = sender if sender.flags & MASTER else sender.master
        dirty = sender_master is not None and bytes(sender_master.slots) != message.slots
        if sender.flags & MASTER and dirty:
            self._update_slots(sender, message.config_epoch, message.slots)
            changed = True
        if dirty:
            for slot in bitmap_slots(bitmap_without(message.slots, sender.slots)):
                owner = state.owners[slot]
                if owner is None:
                    continue
                if owner.config_epoch > message.config_epoch:
                    self.send_update(self.outbound.get(sender), owner)
                    break
        if (me.flags & MASTER and sender.flags & MASTER
                and message.config_epoch == me.config_epoch):
            changed = self._epoch_collision(sender) or changed
        self._process_gossip(message, sender)
        return self._process_extensions(message, sender) or changed

    def _process_role(self, sender: ClusterNode, message: Message) -> bool:
        """A master that turned replica, or a replica that changed masters."""
        state = self.state
        if message.master is None:
            return state.set_node_as_master(sender)
        changed = False
        master = state.nodes.get(message.master)
        if sender.flags & MASTER:
            if master is not None and master.shard_id == sender.shard_id:
                if sender.config_epoch <= message.config_epoch:
                    for slot in state.slots_of(sender):  # its replica took over
                        state.del_slot(slot)
                        state.add_slot(slot, master)
                    state.set_node_as_master(master)
                    master.config_epoch = message.config_epoch
            else:
                for slot in state.slots_of(sender):
                    state.del_slot(slot)
            sender.flags = (sender.flags & ~(MASTER | MIGRATE_TO)) | REPLICA
            changed = True
        if master is not None and sender.master is not master:
            state.set_replica_of(sender, master)
            changed = True
        return changed

    def _update_slots(self, sender: ClusterNode, epoch: int, bitmap: bytes) -> None:
        state = self.state
        db = self.server.keyspace[0]
        follow, dirty = state.update_slots_config_with(
            sender, epoch, bitmap, lambda slot: count_keys_in_slot(db, slot) > 0)
        if follow is not None:
            self.server.log("notice", "Configuration change detected. Reconfiguring myself "
                                      f"as a replica of {follow.name} ()")
            self.set_master(follow)
            return
        for slot in dirty:
            delete_keys_in_slot(self.server, slot)

    def _update_address(self, node: ClusterNode, link: BusLink, message: Message) -> bool:
        """nodeUpdateAddressIfNeeded: the address a node PINGs us from (or announces) is
        where we reach it; True if it changed."""
        if self.outbound.get(node) is link:
            return False
        ip = message.ip or link.peer_ip
        if not ip:
            return False
        if (node.port, node.tls_port, node.cport, node.ip) == (
                message.port, message.pport, message.cport, ip):
            return False
        node.ip, node.port, node.tls_port, node.cport = ip, message.port, message.pport, \
            message.cport
        old = self.outbound.get(node)
        if old is not None:
            old.close()
        node.flags &= ~NOADDR
        self.server.log("notice", f"Address updated for node {node.name} (), now "
                                  f"{node.ip}:{node.port}")
        me = self.state.myself
        if me.flags & REPLICA and me.master is node:
            self.server.replication.follow(node.ip, node.port)
        return True

    def _epoch_collision(self, sender: ClusterNode) -> bool:
        """Two masters with one config epoch: the one with the smaller name takes a new
        epoch (clusterHandleConfigEpochCollision)."""
        state = self.state
        me = state.myself
        if sender.name <= me.name:
            return False
        state.current_epoch += 1
        me.config_epoch = state.current_epoch
        self.server.log("verbose", f"WARNING: configEpoch collision with node {sender.name} "
                                   f"(). configEpoch set to {me.config_epoch}")
        return True

    def _process_gossip(self, message: Message, sender: ClusterNode | None) -> None:
        """clusterProcessGossipSection."""
        state = self.state
        if any(not is_name(entry.name.encode("latin-1")) for entry in message.gossip):
            self.server.log("warning", "Node gossiped nodes with invalid IDs.")
            return
        now = now_ms()
        for entry in message.gossip:
            node = state.nodes.get(entry.name)
            if node is None:
                if (sender is not None and not entry.flags & NOADDR
                        and not state.is_forgotten(entry.name)):
                    node = ClusterNode(entry.name, entry.flags)
                    node.ip, node.port, node.tls_port, node.cport = (
                        entry.ip, entry.port, entry.pport, entry.cport)
                    state.add_node(node)
                continue
            if node.flags & MYSELF:
                continue
            failing = entry.flags & (FAIL | PFAIL)
            if sender is not None and sender.flags & MASTER:
                if failing:
                    node.fail_reports[sender.name] = now
                    self._mark_failing_if_needed(node)
                else:
                    node.fail_reports.pop(sender.name, None)
            if not failing and node.ping_sent == 0 and state.failure_reports(node) == 0:
                pong = entry.pong_received * 1000
                if node.pong_received < pong <= now + 500:
                    node.pong_received = pong
            if (node.flags & (FAIL | PFAIL) and not entry.flags & NOADDR and not failing
                    and (node.ip.lower(), node.port, node.tls_port, node.cport)
                    != (entry.ip.lower(), entry.port, entry.pport, entry.cport)):
                old = self.outbound.get(node)
                if old is not None:
                    old.close()
                node.ip, node.port, node.tls_port, node.cport = (
                    entry.ip, entry.port, entry.pport, entry.cport)
                node.flags &= ~NOADDR

    def _process_extensions(self, message: Message, sender: ClusterNode) -> bool:
        state = self.state
        me = state.myself
        hostname = human = ""
        shard: str | None = None
        changed = False
        for kind, data in message.extensions:
            if kind == bus.EXT_HOSTNAME:
                hostname = bus.decode_text_extension(data)
            elif kind == bus.EXT_HUMAN_NODENAME:
                human = bus.decode_text_extension(data)
            elif kind == bus.EXT_FORGOTTEN_NODE and len(data) >= _FORGOTTEN.size:
                raw, ttl = _FORGOTTEN.unpack_from(data)
                forgotten = state.nodes.get(raw.decode("latin-1"))
                if (forgotten is not None and forgotten is not me
                        and not (me.flags & REPLICA and me.master is forgotten)):
                    for link in self.links_of(forgotten):
                        link.close()
                    state.forget(forgotten, ttl)
                    changed = True
            elif kind == bus.EXT_SHARDID and len(data) >= bus.NAME_BYTES:
                shard = data[:bus.NAME_BYTES].decode("latin-1")
        if sender.hostname != hostname or sender.human_nodename != human:
            sender.hostname, sender.human_nodename = hostname, human
            changed = True
        if shard is None:
            shard = (sender.master or sender).shard_id
        return state.update_shard_id(sender, shard) or changed

    def _process_fail(self, message: Message, sender: ClusterNode | None) -> bool:
        if sender is None:
            return False
        failing = self.state.nodes.get(message.data[:bus.NAME_BYTES].decode("latin-1"))
        if failing is None or failing.flags & (FAIL | MYSELF):
            return False
        self.server.log("notice", f"FAIL message received from {sender.name} () about "
                                  f"{failing.name} ()")
        failing.flags = (failing.flags & ~PFAIL) | FAIL
        failing.fail_time = now_ms()
        return True

    def _process_update(self, message: Message, sender: ClusterNode) -> bool:
        epoch, raw, slots = _UPDATE.unpack_from(message.data)
        node = self.state.nodes.get(raw.decode("latin-1"))
        if node is None or node.config_epoch >= epoch:
            return False
        if node.flags & REPLICA:
            self.state.set_node_as_master(node)
        node.config_epoch = epoch
        self._update_slots(node, epoch, slots)
        return True

    def _deliver(self, message: Message) -> None:
        channel_length, text_length = _PUBLISH.unpack_from(message.data)
        start = _PUBLISH.size
        channel = message.data[start:start + channel_length]
        text = message.data[start + channel_length:start + channel_length + text_length]
        pubsub = self.server.pubsub
        if message.type == bus.PUBLISHSHARD:
            pubsub.spublish(channel, text)
        else:
            pubsub.publish(channel, text)

    # -- failures -------------------------------------------------------------------------

    def _mark_failing_if_needed(self, node: ClusterNode) -> None:
        """PFAIL becomes FAIL when a majority of the masters says so (counting myself, a
        master); the FAIL is broadcast so that every node agrees at once."""
        state = self.state
        if not node.flags & PFAIL or node.flags & FAIL:
            return
        failures = state.failure_reports(node) + (1 if state.myself.flags & MASTER else 0)
        if failures < state.size // 2 + 1:
            return
        self.server.log("notice", f"Marking node {node.name} () as failing (quorum reached).")
        node.flags = (node.flags & ~PFAIL) | FAIL
        node.fail_time = now_ms()
        self.send_fail(node)
        self.changed()

    def _clear_failure_if_needed(self, node: ClusterNode) -> bool:
        """A FAIL node reachable again: a replica or a master without slots at once, a
        master with slots when nobody took them over in time (clearNodeFailureIfNeeded)."""
        if node.flags & REPLICA or node.numslots == 0:
            node.flags &= ~FAIL
            return True
        timeout = self.server.config.cluster_node_timeout
        if node.flags & MASTER and now_ms() - node.fail_time > timeout * FAIL_UNDO_MULT:
            node.flags &= ~FAIL
            return True
        return False

    def changed(self) -> None:
        self.state.settle(self.server.log)


def _gossip(node: ClusterNode) -> Gossip:
    return Gossip(node.name, node.ping_sent // 1000, node.pong_received // 1000, node.ip,
                  node.port, node.cport, node.flags, node.tls_port)
