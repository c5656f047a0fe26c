"""Clients parked on keys (BLPOP, BZPOPMIN, XREAD BLOCK ...) whose slot is no longer served
here (cluster.c's clusterRedirectBlockedClientIfNeeded): once a second each gets the error it
would get if it sent its command now -- ``-MOVED`` to the slot's new owner, ``-CLUSTERDOWN``
when the slot has none or the cluster is down -- so that it does not wait forever for a
write that will happen on another node."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.cluster.node import REPLICA
from brook.cluster.routing import DOWN, UNBOUND, moved
from brook.cluster.slots import key_slot

if TYPE_CHECKING:
    from brook.cluster.state import ClusterState
    from brook.context import ServerContext


def redirect_parked(server: ServerContext, cluster: ClusterState) -> None:
    me = cluster.myself
    preferred = server.config.cluster_preferred_endpoint_type
    for client in list(server.clients.values()):
        waiter = client.blocked
        if waiter is None or not waiter.keys:
            continue  # WAIT and the like: no key to move
        if not cluster.ok:
            server.blocking.fail(waiter, DOWN)
            continue
        slot = key_slot(waiter.keys[0])  # a parked command's keys share one slot
        owner = cluster.owners[slot]
        if (client.cluster_readonly and not waiter.cmd.is_write and me.flags & REPLICA
                and me.master is owner):
            owner = me
        if owner is me or slot in cluster.importing_from:
            continue
        server.blocking.fail(waiter, UNBOUND if owner is None else moved(slot, owner, preferred))
