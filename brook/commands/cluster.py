"""CLUSTER: Brook runs as a single server, never in cluster mode. Every subcommand is declared
as Redis declares it (COMMAND, ACL categories, scripts and MULTI see the same table) and
answers as Redis does with ``cluster-enabled no``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.commands.registry import CommandError, command, container

if TYPE_CHECKING:
    from brook.session import Session

DISABLED: Final = "ERR This instance has cluster support disabled"
_ADMIN_FLAGS: Final = "admin stale no_async_loading"
_ADMIN_ACL: Final = "@admin @slow @dangerous"
_NODES: Final = "O(N) where N is the total number of Cluster nodes"
_SLOTS: Final = "O(N) where N is the total number of hash slot arguments"
_RANGES: Final = ("O(N) where N is the total number of the slots between the start slot and "
                  "end slot arguments.")
_REPLICAS: Final = "O(N) where N is the number of replicas."

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


def cluster_disabled(client: Session, args: list[bytes]) -> bytes:
    """Every CLUSTER subcommand of a server not in cluster mode."""
    raise CommandError(DISABLED)


for _name, _arity, _flags, _acl, _since, _summary, _complexity, _syntax in _SUBCOMMANDS:
    command(f"cluster|{_name}", arity=_arity, flags=_flags, acl=_acl, since=_since,
            summary=_summary, complexity=_complexity, syntax=_syntax)(cluster_disabled)
