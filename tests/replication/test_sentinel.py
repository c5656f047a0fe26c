"""Automatic failover of Brook by real Redis Sentinel (Debian's ``redis-sentinel``).

A Brook master with two Brook replicas and three sentinels (bench/failover.py's
:class:`Cluster`). Producers write through redis-py's ``Sentinel`` (XADD, then ``WAIT 1``) and
a consumer-group worker reads and acknowledges through it, while the master is killed with
SIGKILL, several times in a row: each time Sentinel promotes a replica, the clients follow it,
and the killed server, restarted, rejoins as a replica. Then every entry acknowledged by
``WAIT 1`` must be in the stream, every entry must have been processed, the group's PEL must
be consistent, and the three servers and their config files must agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.failover import Cluster, sentinel_command, wait_for
from tests.support.queue_load import GROUP, STREAM, Load, assert_nothing_lost

pytestmark = pytest.mark.skipif(sentinel_command() is None,
                                reason="redis-sentinel is not installed")

ROUNDS = 3


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    made = Cluster("brook", tmp_path)
    try:
        made.start()
        yield made
    finally:
        made.stop()


def test_sigkill_of_the_master_under_load_loses_nothing_acknowledged(cluster: Cluster) -> None:
    first = cluster.client(cluster.master_port())
    first.xgroup_create(STREAM, GROUP, id="$", mkstream=True)
    wait_for(cluster.settled, 30, "the group replicated")
    load = Load(cluster)
    load.start()
    try:
        for _ in range(ROUNDS):
            load.wait_for_acknowledged(200)
            old = cluster.master_port()
            cluster.kill(old)
            wait_for(lambda old=old: cluster.master_port() != old, 60, "a promotion")
            load.wait_for_acknowledged(200)  # the clients found the new master
            cluster.start_server(old)
            wait_for(lambda old=old: cluster.follows(old, cluster.master_port()), 60,
                     "the killed master rejoining as a replica")
    finally:
        load.stop()
    assert_nothing_lost(cluster, load)
