"""Whether this node serves a request, or which redirection or refusal it gets (cluster.c's
getNodeByQuery and clusterRedirectClient): all keys of the request -- or of the whole
transaction, for EXEC -- must hash to one slot, served here (or being imported here, after
ASKING; or by this replica's master, after READONLY, for a read).

Two questions, one answer. :func:`redirection` decides every case. :func:`served_outright`
is the command path's quick test, asked of every request of a fast session: it says yes only
when :func:`redirection` would let the request through whatever the session and the command
-- its keys all hash to one slot this node serves outright (``ClusterState.served_here``:
owned, neither migrating nor importing) in a cluster that is ok -- and no otherwise, never a
refusal of its own: a "no" goes to :func:`redirection`, which words it (or serves it after
all: a READONLY read on a replica, ASKING for a slot being imported). Compiled (setup.py):
in cluster mode it runs for every request."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Protocol

from brook.cluster.node import REPLICA, ClusterNode
from brook.cluster.slots import key_slot
from brook.cluster.state import ClusterState

CROSSSLOT: Final = "CROSSSLOT Keys in request don't hash to the same slot"
TRYAGAIN: Final = "TRYAGAIN Multiple keys request during rehashing of slot"
DOWN: Final = "CLUSTERDOWN The cluster is down"
DOWN_READ_ONLY: Final = "CLUSTERDOWN The cluster is down and only accepts read commands"
UNBOUND: Final = "CLUSTERDOWN Hash slot not served"
# What a redirected EXEC answers as it is (Redis discards the transaction without EXECABORT).
_PREFIXES: Final = ("MOVED ", "ASK ", "CROSSSLOT ", "TRYAGAIN ", "CLUSTERDOWN ")


class KeyPresence(Protocol):
    """What routing asks of database 0 while a slot moves (the keyspace's Database)."""

    def present(self, key: bytes) -> bool:
        """The key is here and not expired (looked at, not touched nor expired)."""
        ...


def is_redirection(message: str) -> bool:
    return message.startswith(_PREFIXES)


def endpoint(node: ClusterNode, preferred: str) -> str:
    """Where a client should go (clusterNodePreferredEndpoint)."""
    if preferred == "hostname":
        return node.hostname or "?"
    if preferred == "unknown-endpoint":
        return ""
    return node.ip


def served_outright(cluster: ClusterState, args: list[bytes], first: int, last: int,
                    step: int) -> bool:
    """Whether the keys ``args[first]``, ``args[first + step]`` ... up to ``args[last]`` all
    hash to one slot this node serves outright in a cluster that is ok (True too when there
    is no key: nothing to route). False: ask :func:`redirection`."""
    if first > last:
        return True
    if not cluster.ok:
        return False
    slot = key_slot(args[first])
    if not cluster.served_here[slot]:
        return False
    index = first + step
    while index <= last:  # (a range with a variable step is a generic call, compiled)
        if key_slot(args[index]) != slot:
            return False
        index += step
    return True


def keys_served_outright(cluster: ClusterState, args: list[bytes],
                         positions: list[int]) -> bool:
    """:func:`served_outright` for the keys at ``positions`` (the commands that find their
    keys by a keyword or a count: EVAL, XREADGROUP ...)."""
    count = len(positions)
    if not count:
        return True
    if not cluster.ok:
        return False
    slot = key_slot(args[positions[0]])
    if not cluster.served_here[slot]:
        return False
    index = 1
    while index < count:
        if key_slot(args[positions[index]]) != slot:
            return False
        index += 1
    return True


def redirection(cluster: ClusterState, keys: Iterable[bytes], keys_here: KeyPresence,
                write: bool, asking: bool, readonly: bool, shard_channels: bool,
                allow_reads_when_down: bool, allow_pubsubshard_when_down: bool,
                preferred_endpoint: str, migrate: bool = False) -> str | None:
    """The error for a request whose key arguments (of every command, for EXEC) are
    ``keys``, or None when this node serves it. ``keys_here`` says whether a key is here
    (asked only while its slot moves); ``write``: a write command (or a transaction with
    one); ``shard_channels``: the "keys" are sharded Pub/Sub channels; ``migrate``: MIGRATE,
    which moves keys of an open slot from here whatever they are."""
    myself = cluster.myself
    first: bytes | None = None
    slot = 0
    owner: ClusterNode | None = None
    migrating = importing = multiple = False
    missing = present = 0
    for key in keys:
        this_slot = key_slot(key)
        if first is None:
            first, slot = key, this_slot
            owner = cluster.owners[slot]
            if owner is None:
                return UNBOUND
            if owner is myself and slot in cluster.migrating_to:
                migrating = True
            elif slot in cluster.importing_from:
                importing = True
        else:
            if this_slot != slot:
                return CROSSSLOT
            if importing and not multiple and key != first:
                multiple = True
        if (migrating or importing) and not shard_channels:
            if keys_here.present(key):
                present += 1
            else:
                missing += 1
    if owner is None:  # no key at all
        return None
    if not cluster.ok:
        if shard_channels:
            if not allow_pubsubshard_when_down:
                return DOWN
        elif not allow_reads_when_down:
            return DOWN
        elif write:
            return DOWN_READ_ONLY
    if (migrating or importing) and migrate:
        return None
    if migrating and missing:
        if present:
            return TRYAGAIN
        return _redirect("ASK", slot, cluster.migrating_to[slot], preferred_endpoint)
    if importing and asking:
        return TRYAGAIN if multiple and missing else None
    if ((readonly or shard_channels) and not write and myself.flags & REPLICA
            and myself.master is owner):
        return None
    if owner is not myself:
        return _redirect("MOVED", slot, owner, preferred_endpoint)
    return None


def _redirect(kind: str, slot: int, node: ClusterNode, preferred: str) -> str:
    return f"{kind} {slot} {endpoint(node, preferred)}:{node.port}"


def moved(slot: int, node: ClusterNode, preferred: str) -> str:
    """``MOVED <slot> <endpoint>:<port>``: the slot is ``node``'s now."""
    return _redirect("MOVED", slot, node, preferred)
