"""Clusters of several nodes talking over the cluster bus: built by the real
``redis-cli --cluster``, used by redis-py's RedisCluster, with Brook and redis-server nodes
side by side -- slots moved between them both ways, a failed master replaced by its replica
whatever either is, a forgotten node gone -- and a bus port that takes garbage without
harm."""

from __future__ import annotations

import socket
import struct
import time

import pytest
import redis

from tests.conftest import redis_cli, whole_error
from tests.support.cluster import (
    ClusterNodes,
    agreed,
    cli_cluster,
    cluster_client,
    cluster_info,
    cluster_nodes,
    kill,
    logs,
    myself,
    node_id,
    wait_replicated,
    wait_until,
)


def _fill(client: redis.RedisCluster, count: int) -> dict[str, str]:
    written = {f"key:{i}": f"value:{i}" for i in range(count)}
    pipe = client.pipeline()
    for key, value in written.items():
        pipe.set(key, value)
    assert all(pipe.execute())
    return written


def _read_all(client: redis.RedisCluster, written: dict[str, str]) -> dict[str, str]:
    pipe = client.pipeline()
    for key in written:
        pipe.get(key)
    return dict(zip(written, pipe.execute(), strict=True))


def test_redis_cli_builds_a_cluster_of_brook_nodes_that_cluster_clients_use(
        cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook"] * 3)
    for node in nodes:
        info = cluster_info(node)
        assert (info["cluster_slots_assigned"], info["cluster_known_nodes"],
                info["cluster_size"]) == ("16384", "3", "3")
        assert int(info["cluster_stats_messages_ping_sent"]) > 0
        assert int(info["cluster_stats_messages_pong_received"]) > 0
    assert "[OK] All 16384 slots covered." in cli_cluster(nodes[0], "check",
                                                         f"127.0.0.1:{nodes[0].port}")
    client = cluster_client(nodes[1])
    written = _fill(client, 300)
    assert _read_all(client, written) == written
    assert all(node.client().dbsize() > 50 for node in nodes)  # spread over the three
    assert sum(node.client().dbsize() for node in nodes) == 300
    # Each node's epochs agree with what redis-cli assigned, as every node sees it.
    epochs = {fields[0]: fields[6] for fields in cluster_nodes(nodes[0])}
    assert sorted(epochs.values()) == ["1", "2", "3"]
    assert all({fields[0]: fields[6] for fields in cluster_nodes(node)} == epochs
               for node in nodes)
    links = nodes[0].client(protocol=3).execute_command("CLUSTER", "LINKS")
    assert sorted((link[b"direction"], link[b"node"].decode()) for link in links) == sorted(
        (direction, node_id(node)) for node in nodes[1:] for direction in (b"to", b"from"))


@pytest.mark.parametrize("first_master", ["brook", "redis"])
def test_redis_cli_builds_three_masters_with_a_replica_each(cluster: ClusterNodes,
                                                           first_master: str) -> None:
    nodes = cluster.create([first_master] + ["brook"] * 5, replicas=1)
    masters, replicas = nodes[:3], nodes[3:]
    master_of = {node_id(replica): myself(replica)[3] for replica in replicas}
    assert sorted(master_of.values()) == sorted(node_id(master) for master in masters)
    assert all("slave" in myself(replica)[2] for replica in replicas)
    output = cli_cluster(nodes[0], "check", f"127.0.0.1:{nodes[0].port}")
    assert "[OK] All 16384 slots covered." in output
    assert output.count("1 slaves.") == 3
    written = _fill(cluster_client(nodes[1]), 300)
    for master in masters:
        replica = next(node for node in replicas if master_of[node_id(node)] == node_id(master))
        wait_replicated(master, replica)
        assert replica.client().dbsize() == master.client().dbsize() > 0
        # READONLY: the replica answers reads of its master's slots itself.
        reader = replica.client(decode_responses=True, single_connection_client=True)
        key = master.client(decode_responses=True).randomkey()
        with pytest.raises(redis.ResponseError) as info:
            reader.get(key)
        assert whole_error(info.value).startswith("MOVED ")
        assert reader.execute_command("READONLY") is True
        assert reader.get(key) == written[key]
        assert "flags=r " in reader.execute_command("CLIENT", "INFO")
    shards = nodes[1].client(protocol=3).execute_command("CLUSTER", "SHARDS")
    assert sorted(len(shard[b"nodes"]) for shard in shards) == [2, 2, 2]
    assert _read_all(cluster_client(replicas[0]), written) == written


def test_publish_reaches_subscribers_on_every_node_and_spublish_the_shard(
        cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "redis", "brook"])
    replica = cluster.add_replica(nodes, nodes[0], "brook")
    subscribers = []
    for node in nodes:
        pubsub = node.client(decode_responses=True).pubsub()
        pubsub.subscribe("news")
        subscribers.append(pubsub)
    for pubsub in subscribers:
        assert pubsub.get_message(timeout=5)["type"] == "subscribe"
    assert nodes[1].client().publish("news", "hello") == 1  # its own subscriber only
    for pubsub in subscribers:
        message = pubsub.get_message(timeout=5)
        assert message is not None and message["data"] == "hello"
    # A shard channel of the first master's: its replica's subscriber hears SPUBLISH.
    channel = next(f"ch{i}" for i in range(1000)
                   if nodes[0].client().execute_command("CLUSTER", "KEYSLOT", f"ch{i}") < 5000)
    shard = replica.client(decode_responses=True).pubsub()
    shard.ssubscribe(channel)
    assert shard.get_sharded_message(timeout=5)["type"] == "ssubscribe"
    assert nodes[0].client().execute_command("SPUBLISH", channel, "sharded") == 0
    message = shard.get_sharded_message(timeout=5)
    assert message is not None and message["data"] == "sharded"
    # redis-py's RedisCluster: its pub/sub and its sharded pub/sub, on whichever node.
    client = cluster_client(nodes[2])
    listener = client.pubsub()
    listener.subscribe("news")
    assert listener.get_message(timeout=5)["type"] == "subscribe"
    listener.ssubscribe(channel)
    assert listener.get_sharded_message(timeout=5)["type"] == "ssubscribe"
    assert client.publish("news", "again") >= 1
    assert client.spublish(channel, "again, sharded") >= 1
    heard = [listener.get_message(timeout=5), listener.get_sharded_message(timeout=5)]
    assert [(m["type"], m["data"]) for m in heard if m] == [
        ("message", "again"), ("smessage", "again, sharded")]


def test_brook_and_redis_nodes_in_one_cluster_move_slots_both_ways(
        cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "redis", "brook"])
    brook, real, other = nodes
    client = cluster_client(brook)
    written = _fill(client, 1000)
    for source, target in ((brook, real), (real, other)):
        cli_cluster(brook, "reshard", f"127.0.0.1:{brook.port}", "--cluster-from",
                    node_id(source), "--cluster-to", node_id(target), "--cluster-slots", "500")
        wait_until(lambda: agreed(nodes), "the nodes agree after resharding",
                   timeout=30)
    assert _read_all(cluster_client(other), written) == written
    assert sum(node.client().dbsize() for node in nodes) == 1000
    output = cli_cluster(real, "check", f"127.0.0.1:{real.port}")
    assert "[OK] All nodes agree about slots configuration." in output
    assert "[OK] All 16384 slots covered." in output
    # The epochs: whoever imported a slot bumped its own, and all nodes see the same.
    epochs = {fields[0]: int(fields[6]) for fields in cluster_nodes(real)}
    assert len(set(epochs.values())) == 3
    assert all({fields[0]: int(fields[6]) for fields in cluster_nodes(node)} == epochs
               for node in nodes)


@pytest.mark.parametrize(("master_kind", "replica_kind"),
                         [("brook", "brook"), ("redis", "brook"), ("brook", "redis")])
def test_a_failed_master_is_replaced_by_its_replica_and_rejoins_as_one(
        cluster: ClusterNodes, master_kind: str, replica_kind: str) -> None:
    nodes = cluster.create([master_kind, "brook", "redis"])
    master = nodes[0]
    replica = cluster.add_replica(nodes, master, replica_kind)
    client = cluster_client(nodes[1])
    written = _fill(client, 500)
    wait_replicated(master, replica)  # what the replica has is what must survive
    slots_before = " ".join(myself(master)[8:])
    kill(master)
    survivors = nodes[1:]
    try:
        wait_until(lambda: "master" in myself(replica)[2], "the replica's promotion")
        wait_until(lambda: all(cluster_info(node)["cluster_state"] == "ok"
                               for node in survivors), "the cluster ok again")
    except AssertionError as failure:
        raise AssertionError("\n".join([str(failure), *logs(nodes)])) from None
    assert " ".join(myself(replica)[8:]) == slots_before
    for node in survivors:
        line = next(fields for fields in cluster_nodes(node) if fields[0] == node_id(replica))
        assert "master" in line[2] and " ".join(line[8:]) == slots_before
    epochs = [int(fields[6]) for fields in cluster_nodes(replica)]
    assert int(myself(replica)[6]) == max(epochs)  # the election's new epoch
    assert _read_all(cluster_client(replica), written) == written
    # The old master comes back and follows the node that took its place.
    back = cluster.restart(master)
    wait_until(lambda: myself(back)[3] == node_id(replica), "the old master a replica")
    wait_until(lambda: back.client().info("replication").get("master_link_status") == "up",
               "the old master in sync")
    assert back.client().dbsize() == replica.client().dbsize()
    wait_until(lambda: agreed([*survivors, back]), "every node agrees again")


@pytest.mark.parametrize(("option", "master_kind"),
                         [("FORCE", "brook"), ("TAKEOVER", "brook"), ("", "redis")])
def test_cluster_failover_on_a_brook_replica_swaps_it_with_its_master(
        cluster: ClusterNodes, option: str, master_kind: str) -> None:
    """FORCE and TAKEOVER whatever the master; without an option the master pauses its
    writers and sends its offset first (a Redis master: a Brook one does not pause yet)."""
    nodes = cluster.create([master_kind, "redis", "brook"])
    master = nodes[0]
    replica = cluster.add_replica(nodes, master, "brook")
    client = cluster_client(master)
    written = _fill(client, 200)
    wait_replicated(master, replica)
    command = ["CLUSTER", "FAILOVER", *([option] if option else [])]
    assert replica.client().execute_command(*command) == b"OK"
    wait_until(lambda: "master" in myself(replica)[2], "the replica's promotion")
    wait_until(lambda: myself(master)[3] == node_id(replica), "the master a replica")
    wait_until(lambda: agreed(nodes), "every node agrees")
    assert _read_all(cluster_client(nodes[1]), written) == written


def test_redis_cli_rebalances_onto_a_new_master_and_fixes_an_open_slot(
        cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "redis", "brook"])
    written = _fill(cluster_client(nodes[0]), 400)
    extra = cluster.start("brook")
    cli_cluster(nodes[0], "add-node", f"127.0.0.1:{extra.port}", f"127.0.0.1:{nodes[0].port}")
    nodes.append(extra)
    wait_until(lambda: agreed(nodes), "the new node known to all")
    cli_cluster(nodes[0], "rebalance", f"127.0.0.1:{nodes[0].port}",
                "--cluster-use-empty-masters")
    wait_until(lambda: agreed(nodes), "the nodes agree after rebalancing")
    counts = [int(cluster_info(node)["cluster_slots_assigned"]) for node in nodes]
    assert counts == [16384] * 4
    served = [sum(int(part.split("-")[-1]) - int(part.split("-")[0]) + 1
                  for part in myself(node)[8:] if not part.startswith("["))
              for node in nodes]
    assert sum(served) == 16384 and min(served) >= 4000  # about a quarter each
    assert extra.client().dbsize() > 50  # its keys came with its slots
    # A resharding left half done (the slot open on both sides): fix closes it.
    source, target = nodes[0], nodes[1]
    slot = int(myself(source)[8].split("-")[0])
    target.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(source))
    source.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(target))
    done = redis_cli(source.port, "--cluster", "check", f"127.0.0.1:{source.port}")
    assert f"[WARNING] Node 127.0.0.1:{source.port} has slots in migrating state {slot}" \
        in done.stdout.decode()
    cli_cluster(source, "fix", f"127.0.0.1:{source.port}")
    wait_until(lambda: agreed(nodes), "the nodes agree after the fix")
    output = cli_cluster(source, "check", f"127.0.0.1:{source.port}")
    assert "[OK] All nodes agree about slots configuration." in output
    assert all("[" not in " ".join(myself(node)[8:]) for node in nodes)  # nothing open
    assert _read_all(cluster_client(extra), written) == written


def test_a_node_deleted_with_redis_cli_is_forgotten_by_every_node(
        cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "redis", "brook"])
    extra = cluster.start("brook")
    cli_cluster(nodes[0], "add-node", f"127.0.0.1:{extra.port}", f"127.0.0.1:{nodes[0].port}")
    wait_until(lambda: agreed([*nodes, extra]), "the new node known to all")
    gone = node_id(extra)
    cli_cluster(nodes[0], "del-node", f"127.0.0.1:{nodes[0].port}", gone)
    wait_until(lambda: agreed(nodes), "the others agree without it")
    time.sleep(2)  # gossip goes on: nobody learns it again from another node
    for node in nodes:
        assert all(fields[0] != gone for fields in cluster_nodes(node))
    assert nodes[0].client().execute_command("CLUSTER", "FORGET", gone) == b"OK"


def test_garbage_on_the_bus_port_closes_that_link_only(cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "brook", "redis"])
    target = nodes[0]
    bus_port = target.port + 10000
    frames = [
        b"GET / HTTP/1.1\r\n\r\n",  # not a bus message
        b"RCmb" + struct.pack(">I", 8),  # shorter than a header
        b"RCmb" + struct.pack(">I", 4000) + b"\x00\x01" + bytes(100),  # cut short
        b"RCmb" + struct.pack(">I", 2256) + bytes(2248),  # version 0: ignored
    ]
    for frame in frames:
        with socket.create_connection(("127.0.0.1", bus_port), timeout=5) as sock:
            sock.sendall(frame)
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(5)
            assert sock.recv(100) == b""  # closed, nothing answered
    assert target.client().ping()
    wait_until(lambda: agreed(nodes), "the cluster unharmed")


def test_a_replica_migrates_to_a_master_left_without_one(cluster: ClusterNodes) -> None:
    nodes = cluster.create(["brook", "brook", "redis"])
    first, second = nodes[0], nodes[1]
    spares = [cluster.add_replica(nodes, first, "brook") for _ in range(2)]
    lonely = cluster.add_replica(nodes, second, "brook")
    gone = node_id(lonely)
    kill(lonely)
    living = [node for node in nodes if node is not lonely]
    try:
        wait_until(lambda: sum(myself(spare)[3] == node_id(second) for spare in spares) == 1,
                   "a replica of the first master moved to the second", timeout=60)
    except AssertionError as failure:
        raise AssertionError("\n".join([str(failure), *logs(living)])) from None
    moved = next(spare for spare in spares if myself(spare)[3] == node_id(second))
    assert node_id(moved) == min(node_id(spare) for spare in spares)  # the smallest name
    wait_until(lambda: moved.client().info("replication").get("master_port") == second.port,
               "its replication follows")
    for node in living:
        line = next(fields for fields in cluster_nodes(node) if fields[0] == gone)
        assert "fail" in line[2].split(",")


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_a_client_parked_on_a_slot_that_moves_is_told_where_it_went(
        cluster: ClusterNodes, kind: str) -> None:
    nodes = cluster.create([kind, "brook", "redis"])
    here, there = nodes[0], nodes[1]
    client = here.client()
    key = next(f"q{i}" for i in range(10000)
               if client.execute_command("CLUSTER", "KEYSLOT", f"q{i}") < 5000)
    slot = client.execute_command("CLUSTER", "KEYSLOT", key)
    parked = here.client()
    connection = parked.connection_pool.get_connection()
    connection.send_command("BLPOP", key, "0")
    wait_until(lambda: client.info("clients")["blocked_clients"] == 1, "the client parked")
    for node in nodes:  # an empty slot handed over, as redis-cli's last resharding step
        node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", node_id(there))
    with pytest.raises(redis.ResponseError) as info:
        connection.read_response()
    assert whole_error(info.value) == f"MOVED {slot} 127.0.0.1:{there.port}"
    assert client.info("clients")["blocked_clients"] == 0
