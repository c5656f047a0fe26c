"""CLUSTER, ASKING, READONLY and READWRITE: Redis Cluster's commands on this node's view of
the cluster (brook.cluster). Without ``cluster-enabled`` every one answers as Redis does then.
Every subcommand is declared as Redis declares it (COMMAND, ACL categories, scripts and MULTI
see the same table)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from brook.cluster.node import FAIL, MASTER, MYSELF, REPLICA, ClusterNode, random_name
from brook.cluster.routing import endpoint
from brook.cluster.slot_keys import count_keys_in_slot, keys_in_slot
from brook.cluster.slots import SLOTS, key_slot
from brook.cluster.state import ClusterState
from brook.commands.args import parse_int
from brook.commands.common import help_reply
from brook.commands.registry import SYNTAX_ERROR, CommandError, command, container
from brook.protocol import resp
from brook.protocol.requests import parse_strict_int

if TYPE_CHECKING:
    from brook.cluster.bus import ClusterBus
    from brook.session import Session

DISABLED: Final = "ERR This instance has cluster support disabled"
_ADMIN_FLAGS: Final = "admin stale no_async_loading"
_ADMIN_ACL: Final = "@admin @slow @dangerous"
_NODES: Final = "O(N) where N is the total number of Cluster nodes"
_SLOTS: Final = "O(N) where N is the total number of hash slot arguments"
_RANGES: Final = ("O(N) where N is the total number of the slots between the start slot and "
                  "end slot arguments.")
_REPLICAS: Final = "O(N) where N is the number of replicas."
_BAD_SLOT: Final = "ERR Invalid or out of range slot"
_HELP: Final = [
    "COUNTKEYSINSLOT <slot>", "    Return the number of keys in <slot>.",
    "GETKEYSINSLOT <slot> <count>", "    Return key names stored by current node in a slot.",
    "INFO", "    Return information about the cluster.",
    "KEYSLOT <key>", "    Return the hash slot for <key>.",
    "MYID", "    Return the node id.",
    "MYSHARDID", "    Return the node's shard id.",
    "NODES", "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> "
    "<slot> ...",
    "REPLICAS <node-id>", "    Return <node-id> replicas.",
    "SLOTS", "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "ADDSLOTS <slot> [<slot> ...]", "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH", "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>", "    Return number of failure reports for <node-id>.",
    "DELSLOTS <slot> [<slot> ...]", "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current "
    "node.",
    "FAILOVER [FORCE|TAKEOVER]", "    Promote current replica node to being a master.",
    "FORGET <node-id>", "    Remove a node from the cluster.",
    "FLUSHSLOTS", "    Delete current node own slots information.",
    "MEET <ip> <port> [<bus-port>]", "    Connect nodes into a working cluster.",
    "REPLICATE <node-id>", "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]", "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>", "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "SAVECONFIG", "    Force saving cluster configuration on disk.",
    "LINKS", "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes "
    "of a link",
]

container("cluster", group="cluster", acl="@slow", since="3.0.0",
          summary="A container for Redis Cluster commands.")

# (name, arity, flags, acl, since, summary, complexity, syntax), as Redis declares them.
_SUBCOMMANDS: Final = (
    ("addslots", -3, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0", "Assigns new hash slots to a node.",
     _SLOTS, "slot [slot ...]"),
    ("addslotsrange", -4, _ADMIN_FLAGS, _ADMIN_ACL, "7.0.0",
     "Assigns new hash slot ranges to a node.", _RANGES,
     "start-slot end-slot [start-slot end-slot ...]"),
    ("bumpepoch", 2, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0", "Advances the cluster config epoch.",
     "O(1)", ""),
    ("count-failure-reports", 3, "admin stale", _ADMIN_ACL, "3.0.0",
     "Returns the number of active failure reports active for a node.",
     "O(N) where N is the number of failure reports", "node-id"),
    ("countkeysinslot", 3, "stale", "@slow", "3.0.0",
     "Returns the number of keys in a hash slot.", "O(1)", "slot"),
    ("delslots", -3, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0", "Sets hash slots as unbound for a node.",
     _SLOTS, "slot [slot ...]"),
    ("delslotsrange", -4, _ADMIN_FLAGS, _ADMIN_ACL, "7.0.0",
     "Sets hash slot ranges as unbound for a node.", _RANGES,
     "start-slot end-slot [start-slot end-slot ...]"),
    ("failover", -2, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0",
     "Forces a replica to perform a manual failover of its master.", "O(1)",
     "[FORCE | TAKEOVER]"),
    ("flushslots", 2, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0",
     "Deletes all slots information from a node.", "O(1)", ""),
    ("forget", 3, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0", "Removes a node from the nodes table.",
     "O(1)", "node-id"),
    ("getkeysinslot", 4, "stale", "@slow", "3.0.0", "Returns the key names in a hash slot.",
     "O(N) where N is the number of requested keys", "slot count"),
    ("help", 2, "loading stale", "@slow", "5.0.0",
     "Returns helpful text about the different subcommands.", "O(1)", ""),
    ("info", 2, "stale", "@slow", "3.0.0", "Returns information about the state of a node.",
     "O(1)", ""),
    ("keyslot", 3, "stale", "@slow", "3.0.0", "Returns the hash slot for a key.",
     "O(N) where N is the number of bytes in the key", "key"),
    ("links", 2, "stale", "@slow", "7.0.0",
     "Returns a list of all TCP links to and from peer nodes.", _NODES, ""),
    ("meet", -4, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0",
     "Forces a node to handshake with another node.", "O(1)", "ip port [cluster-bus-port]"),
    ("myid", 2, "stale", "@slow", "3.0.0", "Returns the ID of a node.", "O(1)", ""),
    ("myshardid", 2, "stale", "@slow", "7.2.0", "Returns the shard ID of a node.", "O(1)", ""),
    ("nodes", 2, "stale", "@slow", "3.0.0", "Returns the cluster configuration for a node.",
     _NODES, ""),
    ("replicas", 3, "admin stale", _ADMIN_ACL, "5.0.0",
     "Lists the replica nodes of a master node.", _REPLICAS, "node-id"),
    ("replicate", 3, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0",
     "Configure a node as replica of a master node.", "O(1)", "node-id"),
    ("reset", -2, "admin stale noscript", _ADMIN_ACL, "3.0.0", "Resets a node.",
     "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side "
     "effect.", "[HARD | SOFT]"),
    ("saveconfig", 2, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0",
     "Forces a node to save the cluster configuration to disk.", "O(1)", ""),
    ("set-config-epoch", 3, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0",
     "Sets the configuration epoch for a new node.", "O(1)", "config-epoch"),
    ("setslot", -4, _ADMIN_FLAGS, _ADMIN_ACL, "3.0.0", "Binds a hash slot to a node.", "O(1)",
     "slot <IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE>"),
    ("shards", 2, "loading stale", "@slow", "7.0.0",
     "Returns the mapping of cluster slots to shards.", _NODES, ""),
    ("slaves", 3, "admin stale", _ADMIN_ACL, "3.0.0", "Lists the replica nodes of a master node.",
     _REPLICAS, "node-id"),
    ("slots", 2, "loading stale", "@slow", "3.0.0",
     "Returns the mapping of cluster slots to nodes.", _NODES, ""),
)



# -- the handlers -------------------------------------------------------------------------------

def _cluster(client: Session) -> ClusterState:
    cluster = client.server.cluster
    if cluster is None:
        raise CommandError(DISABLED)
    return cluster


def _changed(client: Session, cluster: ClusterState) -> None:
    cluster.settle(client.server.log)


def _slot(arg: bytes) -> int:
    """getSlotOrReply."""
    slot = parse_int(arg, _BAD_SLOT)
    if not 0 <= slot < SLOTS:
        raise CommandError(_BAD_SLOT)
    return slot


def _node(cluster: ClusterState, name: bytes, error: str = "ERR Unknown node %s") -> ClusterNode:
    node = cluster.node(name)
    if node is None:
        raise CommandError(error % name.decode("utf-8", "replace"))
    return node


def _help(client: Session, args: list[bytes]) -> bytes:
    _cluster(client)
    return help_reply(args, _HELP)


def _myid(client: Session, args: list[bytes]) -> bytes:
    return resp.bulk(_cluster(client).myself.name.encode())


def _myshardid(client: Session, args: list[bytes]) -> bytes:
    return resp.bulk(_cluster(client).myself.shard_id.encode())


def _info(client: Session, args: list[bytes]) -> bytes:
    return resp.encode(resp.Verbatim(_cluster(client).info_text().encode()), client.protocol)


def _nodes(client: Session, args: list[bytes]) -> bytes:
    text = _cluster(client).nodes_text()
    return resp.encode(resp.Verbatim(text.encode("latin-1")), client.protocol)


def _keyslot(client: Session, args: list[bytes]) -> bytes:
    _cluster(client)
    return resp.integer(key_slot(args[2]))


def _countkeysinslot(client: Session, args: list[bytes]) -> bytes:
    _cluster(client)
    slot = parse_int(args[2])
    if not 0 <= slot < SLOTS:
        raise CommandError("ERR Invalid slot")
    return resp.integer(count_keys_in_slot(client.server.keyspace[0], slot))


def _getkeysinslot(client: Session, args: list[bytes]) -> bytes:
    _cluster(client)
    slot = parse_int(args[2])
    count = parse_int(args[3])
    if not 0 <= slot < SLOTS or count < 0:
        raise CommandError("ERR Invalid slot or number of keys")
    return resp.array_of_bulks(keys_in_slot(client.server.keyspace[0], slot, count))


def _node_entry(client: Session, node: ClusterNode) -> list[object]:
    """A node in CLUSTER SLOTS (addNodeToNodeReply)."""
    preferred = client.server.config.cluster_preferred_endpoint_type
    extra = resp.Map()
    if preferred != "ip":
        extra[b"ip"] = node.ip.encode()
    if preferred != "hostname" and node.hostname:
        extra[b"hostname"] = node.hostname.encode()
    where: object = None if preferred == "unknown-endpoint" else \
        endpoint(node, preferred).encode()
    return [where, node.port, node.name.encode(), extra]


def _slots(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    reply = []
    for first, last, node in cluster.runs():
        entry: list[object] = [first, last, _node_entry(client, node)]
        entry += [_node_entry(client, replica) for replica in node.replicas
                  if not replica.failed and replica.repl_offset]
        reply.append(entry)
    return resp.encode(reply, client.protocol)


def _shard_node(client: Session, cluster: ClusterState, node: ClusterNode) -> resp.Map:
    """A node in CLUSTER SHARDS (addNodeDetailsToShardReply)."""
    server = client.server
    details = resp.Map()
    details[b"id"] = node.name.encode()
    if node.port:
        details[b"port"] = node.port
    if node.tls_port:
        details[b"tls-port"] = node.tls_port
    details[b"ip"] = node.ip.encode()
    details[b"endpoint"] = endpoint(node, server.config.cluster_preferred_endpoint_type).encode()
    if node.hostname:
        details[b"hostname"] = node.hostname.encode()
    offset = server.replication.offset if node is cluster.myself else node.repl_offset
    details[b"role"] = b"replica" if node.flags & REPLICA else b"master"
    details[b"replication-offset"] = offset
    details[b"health"] = (b"fail" if node.failed
                          else b"loading" if node.flags & REPLICA and offset == 0
                          else b"online")
    return details


def _shards(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    shards: dict[str, list[ClusterNode]] = {}
    for node in cluster.nodes.values():
        shards.setdefault(node.shard_id, []).append(node)
    reply = []
    for members in shards.values():
        master = next((node.master or node for node in members if not node.failed), None)
        runs: list[int] = []
        if master is not None:
            for first, last in master.ranges():
                runs += (first, last)
        shard = resp.Map()
        shard[b"slots"] = runs
        shard[b"nodes"] = [_shard_node(client, cluster, node) for node in members]
        reply.append(shard)
    return resp.encode(reply, client.protocol)


def _replicas(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    node = _node(cluster, args[2])
    if node.flags & REPLICA:
        raise CommandError("ERR The specified node is not a master")
    return resp.array_of_bulks([cluster.describe(replica).encode() for replica in node.replicas])


def _slot_assignment(client: Session, args: list[bytes], ranges: bool) -> bytes:
    """ADDSLOTS, DELSLOTS and their RANGE forms: every slot checked before any changes
    (checkSlotAssignmentsOrReply)."""
    cluster = _cluster(client)
    delete = args[1].lower().startswith(b"del")
    if ranges:
        if len(args) % 2 == 1:
            raise CommandError(f"ERR wrong number of arguments for "
                               f"'cluster|{args[1].decode().lower()}' command")
        pairs = []
        for start_arg, end_arg in zip(args[2::2], args[3::2], strict=True):
            start, end = _slot(start_arg), _slot(end_arg)
            if start > end:
                raise CommandError(f"ERR start slot number {start} is greater than end slot "
                                   f"number {end}")
            pairs.append((start, end))
    else:
        slots = [_slot(arg) for arg in args[2:]]
        pairs = [(slot, slot) for slot in slots]
    chosen: set[int] = set()
    for start, end in pairs:
        for slot in range(start, end + 1):
            owner = cluster.owners[slot]
            if delete and owner is None:
                raise CommandError(f"ERR Slot {slot} is already unassigned")
            if not delete and owner is not None:
                raise CommandError(f"ERR Slot {slot} is already busy")
            if slot in chosen:
                raise CommandError(f"ERR Slot {slot} specified multiple times")
            chosen.add(slot)
    for slot in sorted(chosen):
        cluster.set_importing(slot, None)
        if delete:
            cluster.del_slot(slot)
        else:
            cluster.add_slot(slot, cluster.myself)
    _changed(client, cluster)
    return resp.OK


def _addslots(client: Session, args: list[bytes]) -> bytes:
    return _slot_assignment(client, args, ranges=False)


def _addslotsrange(client: Session, args: list[bytes]) -> bytes:
    return _slot_assignment(client, args, ranges=True)


def _flushslots(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    if len(client.server.keyspace[0]):
        raise CommandError("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
    for slot in cluster.slots_of(cluster.myself):
        cluster.del_slot(slot)
    _changed(client, cluster)
    return resp.OK


def _setslot(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    myself = cluster.myself
    if myself.flags & REPLICA:
        raise CommandError("ERR Please use SETSLOT only with masters.")
    slot = _slot(args[2])
    action = args[3].lower()
    if action in (b"migrating", b"importing") and len(args) == 5:
        if action == b"migrating" and cluster.owners[slot] is not myself:
            raise CommandError(f"ERR I'm not the owner of hash slot {slot}")
        if action == b"importing" and cluster.owners[slot] is myself:
            raise CommandError(f"ERR I'm already the owner of hash slot {slot}")
        node = _node(cluster, args[4], "ERR I don't know about node %s")
        if node.flags & REPLICA:
            raise CommandError("ERR Target node is not a master")
        if action == b"migrating":
            cluster.set_migrating(slot, node)
        else:
            cluster.set_importing(slot, node)
    elif action == b"stable" and len(args) == 4:
        cluster.set_importing(slot, None)
        cluster.set_migrating(slot, None)
    elif action == b"node" and len(args) == 5:
        node = _node(cluster, args[4])
        if node.flags & REPLICA:
            raise CommandError("ERR Target node is not a master")
        holds_keys = count_keys_in_slot(client.server.keyspace[0], slot) > 0
        if cluster.owners[slot] is myself and node is not myself and holds_keys:
            raise CommandError(f"ERR Can't assign hashslot {slot} to a different node while I "
                               "still hold keys for this hash slot.")
        if not holds_keys:
            cluster.set_migrating(slot, None)
        was_mine = cluster.owners[slot] is myself
        cluster.del_slot(slot)
        cluster.add_slot(slot, node)
        bus = cluster.bus
        if (was_mine and node is not myself and myself.numslots == 0
                and client.server.config.cluster_allow_replica_migration and bus is not None):
            client.server.log("notice", "Configuration change detected. Reconfiguring myself "
                                        f"as a replica of {node.name} ()")
            bus.set_master(node)
        if node is myself and slot in cluster.importing_from:
            if _bump_epoch(cluster):
                client.server.log("notice", f"configEpoch updated after importing slot {slot}")
            cluster.set_importing(slot, None)
            if bus is not None:
                bus.pong_all()  # the others learn the new owner at once
    else:
        raise CommandError("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try "
                           "CLUSTER HELP")
    _changed(client, cluster)
    return resp.OK


def _bump_epoch(cluster: ClusterState) -> bool:
    """clusterBumpConfigEpochWithoutConsensus: a new epoch unless this node's is already the
    greatest (and not 0)."""
    myself = cluster.myself
    greatest = max([cluster.current_epoch]
                   + [node.config_epoch for node in cluster.nodes.values()])
    if myself.config_epoch and myself.config_epoch == greatest:
        return False
    cluster.current_epoch += 1
    myself.config_epoch = cluster.current_epoch
    return True


def _bumpepoch(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    bumped = _bump_epoch(cluster)
    if bumped:
        _changed(client, cluster)
    return resp.simple(f"{'BUMPED' if bumped else 'STILL'} {cluster.myself.config_epoch}")


def _saveconfig(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    try:
        cluster.save()
    except OSError as failure:
        raise CommandError(f"ERR error saving the cluster node config: {failure.strerror}"
                           ) from None
    return resp.OK


def _set_config_epoch(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    epoch = parse_int(args[2])
    if epoch < 0:
        raise CommandError(f"ERR Invalid config epoch specified: {epoch}")
    if len(cluster.nodes) > 1:
        raise CommandError("ERR The user can assign a config epoch only when the node does not "
                           "know any other node.")
    if cluster.myself.config_epoch:
        raise CommandError("ERR Node config epoch is already non-zero")
    cluster.myself.config_epoch = epoch
    cluster.current_epoch = max(cluster.current_epoch, epoch)
    _changed(client, cluster)
    return resp.OK


def _bus(cluster: ClusterState) -> ClusterBus:
    bus = cluster.bus
    if bus is None:  # only before start-up ends
        raise CommandError("ERR The cluster bus is not started yet")
    return bus


def _forget(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    node = cluster.node(args[2])
    if node is None:
        if cluster.is_forgotten(args[2].decode("latin-1")):
            return resp.OK  # a peer's gossip forgot it already
        raise CommandError(f"ERR Unknown node {args[2].decode('utf-8', 'replace')}")
    if node is cluster.myself:
        raise CommandError("ERR I tried hard but I can't forget myself...")
    if cluster.myself.flags & REPLICA and cluster.myself.master is node:
        raise CommandError("ERR Can't forget my master!")
    _bus(cluster).forget(node)
    _changed(client, cluster)
    return resp.OK


def _replicate(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    node = _node(cluster, args[2])
    if node is cluster.myself:
        raise CommandError("ERR Can't replicate myself")
    if node.flags & REPLICA:
        raise CommandError("ERR I can only replicate a master, not a replica.")
    myself = cluster.myself
    if myself.flags & MASTER and (myself.numslots or len(client.server.keyspace[0])):
        raise CommandError("ERR To set a master the node must be empty and without assigned "
                           "slots.")
    _bus(cluster).set_master(node)
    _changed(client, cluster)
    return resp.OK


def _count_failure_reports(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    return resp.integer(cluster.failure_reports(_node(cluster, args[2])))


def _failover(client: Session, args: list[bytes]) -> bytes:
    """CLUSTER FAILOVER [FORCE|TAKEOVER]: the election at once (FORCE), after the master
    paused and sent its offset (none), or the slots taken without one (TAKEOVER)."""
    cluster = _cluster(client)
    force = takeover = False
    if len(args) == 3:
        option = args[2].lower()
        if option == b"force":
            force = True
        elif option == b"takeover":
            force = takeover = True
        else:
            raise CommandError(SYNTAX_ERROR)
    myself = cluster.myself
    master = myself.master
    if myself.flags & MASTER:
        raise CommandError("ERR You should send CLUSTER FAILOVER to a replica")
    if master is None:
        raise CommandError("ERR I'm a replica but my master is unknown to me")
    bus = _bus(cluster)
    if not force and (master.flags & FAIL or not master.linked):
        raise CommandError("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
    bus.failover.start_manual(force)
    server = client.server
    if takeover:
        server.log("notice", "Taking over the master (user request).")
        _bump_epoch(cluster)
        bus.failover.replace_master()
    elif force:
        server.log("notice", "Forced failover user request accepted.")
    else:
        server.log("notice", "Manual failover user request accepted.")
    return resp.OK


def _meet(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    port = parse_strict_int(args[3])
    if port is None:
        raise CommandError("ERR Invalid base port specified: " + args[3].decode("utf-8",
                                                                                 "replace"))
    bus_port = port + 10000
    if len(args) == 5:
        given = parse_strict_int(args[4])
        if given is None:
            raise CommandError("ERR Invalid bus port specified: " + args[4].decode("utf-8",
                                                                                    "replace"))
        bus_port = given
    if not _bus(cluster).start_handshake(args[2].decode("latin-1"), port, bus_port):
        raise CommandError("ERR Invalid node address specified: "
                           f"{args[2].decode('utf-8', 'replace')}:"
                           f"{args[3].decode('utf-8', 'replace')}")
    return resp.OK


def _reset(client: Session, args: list[bytes]) -> bytes:
    cluster = _cluster(client)
    hard = False
    if len(args) == 3:
        mode = args[2].lower()
        if mode not in (b"hard", b"soft"):
            raise CommandError(SYNTAX_ERROR)
        hard = mode == b"hard"
    if cluster.myself.flags & MASTER and len(client.db):
        raise CommandError("ERR CLUSTER RESET can't be called with master nodes containing keys")
    for slot in range(SLOTS):
        cluster.del_slot(slot)
    cluster.clear_moves()
    myself = cluster.myself
    myself.flags = MYSELF | MASTER
    myself.master = None
    if hard:
        cluster.current_epoch = cluster.last_vote_epoch = 0
        myself.config_epoch = 0
        myself.name, myself.shard_id = random_name(), random_name()
        cluster.nodes = {myself.name: myself}
    _changed(client, cluster)
    return resp.OK


def _links(client: Session, args: list[bytes]) -> bytes:
    """A map per bus link, outbound ("to") then inbound ("from") for each node."""
    cluster = _cluster(client)
    bus = cluster.bus
    entries: list[object] = []
    for node in cluster.nodes.values():
        for link in [] if bus is None else bus.links_of(node):
            entries.append(resp.Map({
                "direction": b"from" if link.inbound else b"to",
                "node": node.name.encode(), "create-time": link.created,
                "events": b"r" if link.connected else b"",
                "send-buffer-allocated": 0, "send-buffer-used": 0}))
    return resp.encode(entries, client.protocol)


_HANDLERS: Final[dict[str, Callable[[Session, list[bytes]], bytes]]] = {
    "addslots": _addslots, "addslotsrange": _addslotsrange, "bumpepoch": _bumpepoch,
    "count-failure-reports": _count_failure_reports, "countkeysinslot": _countkeysinslot,
    "delslots": _addslots, "delslotsrange": _addslotsrange, "failover": _failover,
    "flushslots": _flushslots, "forget": _forget, "getkeysinslot": _getkeysinslot,
    "help": _help, "info": _info, "keyslot": _keyslot, "links": _links, "meet": _meet,
    "myid": _myid, "myshardid": _myshardid, "nodes": _nodes, "replicas": _replicas,
    "replicate": _replicate, "reset": _reset, "saveconfig": _saveconfig,
    "set-config-epoch": _set_config_epoch, "setslot": _setslot, "shards": _shards,
    "slaves": _replicas, "slots": _slots,
}

for _name, _arity, _flags, _acl, _since, _summary, _complexity, _syntax in _SUBCOMMANDS:
    command(f"cluster|{_name}", arity=_arity, flags=_flags, acl=_acl, since=_since,
            summary=_summary, complexity=_complexity, syntax=_syntax)(_HANDLERS[_name])


@command("asking", arity=1, flags="fast", acl="@fast @connection", group="cluster",
         since="3.0.0", summary="Signals that a cluster client is following an -ASK redirect.",
         complexity="O(1)", syntax="")
def asking(client: Session, args: list[bytes]) -> bytes:
    _cluster(client)
    client.cluster_asking = True
    return resp.OK


@command("readonly", arity=1, flags="loading stale fast", acl="@fast @connection",
         group="cluster", since="3.0.0",
         summary="Enables read-only queries for a connection to a Redis Cluster replica node.",
         complexity="O(1)", syntax="")
def readonly(client: Session, args: list[bytes]) -> bytes:
    _cluster(client)
    client.cluster_readonly = True
    return resp.OK


@command("readwrite", arity=1, flags="loading stale fast", acl="@fast @connection",
         group="cluster", since="3.0.0",
         summary="Enables read-write queries for a connection to a Reids Cluster replica node.",
         complexity="O(1)", syntax="")
def readwrite(client: Session, args: list[bytes]) -> bytes:
    _cluster(client)
    client.cluster_readonly = False
    return resp.OK
