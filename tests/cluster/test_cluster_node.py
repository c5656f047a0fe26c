"""One node in cluster mode, against a redis-server node built the same way: the CLUSTER
commands that need no bus, nodes.conf, and the routing of every request by its keys' slot
(-MOVED, -ASK, -TRYAGAIN, -CROSSSLOT, -CLUSTERDOWN), with a second node that exists only in
nodes.conf (a master serving the other half of the slots, whose bus never answers: both
servers wait ``cluster-node-timeout`` before suspecting it)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from tests.conftest import (
    RawConnection,
    ServerProcess,
    Spawn,
    call,
    error_of,
    redis_cli,
    run,
    since,
    whole_error,
)
from tests.support.cluster_nodes import (
    ME,
    PHANTOM,
    cluster_info,
    start_node,
    two_nodes,
    wait_ok,
)
from tests.support.cluster_ports import free_cluster_port


def _refusal(r: redis.Redis, *args: str) -> str:
    """The whole error text (redis-py takes MOVED, ASK, TRYAGAIN, CLUSTERDOWN and CROSSSLOT
    out of the message)."""
    with pytest.raises(redis.ResponseError) as info:
        run(r, *args)
    return whole_error(info.value)


@pytest.fixture
def node(spawn: Spawn, tmp_path: Path) -> Callable[..., ServerProcess]:
    def start(nodes_conf: str | None = None, port: int | None = None) -> ServerProcess:
        return start_node(spawn, tmp_path, nodes_conf, port)
    return start


def test_cluster_commands_need_cluster_mode(r: redis.Redis) -> None:
    for args in (("ASKING",), ("READONLY",), ("READWRITE",), ("CLUSTER", "INFO"),
                 ("CLUSTER", "KEYSLOT", "x")):
        assert error_of(r, *args) == "This instance has cluster support disabled"


def test_a_new_node_serves_nothing_until_it_has_slots(node: Callable[..., ServerProcess]
                                                      ) -> None:
    proc = node()
    r = proc.client(decode_responses=True)
    line = r.execute_command("CLUSTER", "NODES")
    assert re.fullmatch(rf"([0-9a-f]{{40}}) :{proc.port}@{proc.port + 10000} myself,master - 0 "
                        r"0 0 connected\n", line)
    assert line.startswith(r.execute_command("CLUSTER", "MYID"))
    info = cluster_info(r)
    # (cluster_size is 0 on the newest Redis, 1 on 7.0, until the first state update after
    # the two seconds a master waits.)
    assert (info["cluster_state"], info["cluster_slots_assigned"],
            info["cluster_known_nodes"]) == ("fail", "0", "1")
    assert _refusal(r, "GET", "foo") == "CLUSTERDOWN Hash slot not served"
    assert r.ping()
    assert r.info("cluster") == {"cluster_enabled": 1}
    assert error_of(r, "SELECT", "1") == "SELECT is not allowed in cluster mode"
    assert r.execute_command("SELECT", "0")


def test_one_node_with_every_slot_serves_every_key(node: Callable[..., ServerProcess]) -> None:
    proc = node()
    r = proc.client(decode_responses=True)
    assert r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383") == "OK"
    wait_ok(r)
    info = cluster_info(r)
    assert (info["cluster_slots_assigned"], info["cluster_slots_ok"], info["cluster_size"],
            info["cluster_current_epoch"], info["cluster_my_epoch"]) == ("16384", "16384", "1", "0", "0")
    assert r.set("foo", "bar")
    assert r.get("foo") == "bar"
    assert _refusal(r, "MSET", "a", "1", "b", "2") == \
        "CROSSSLOT Keys in request don't hash to the same slot"
    assert r.mset({"{t}a": "1", "{t}b": "2"})
    myid = r.execute_command("CLUSTER", "MYID")
    assert r.execute_command("CLUSTER", "SLOTS") == [[0, 16383, ["", proc.port, myid, []]]]
    assert r.execute_command("CLUSTER", "NODES") == \
        f"{myid} :{proc.port}@{proc.port + 10000} myself,master - 0 0 0 connected 0-16383\n"
    for key, slot in (("foo", 12182), ("{user1000}.following", 3443),
                      ("{user1000}.followers", 3443), ("foo{}{bar}", 8363),
                      ("foo{{bar}}zap", 4015), ("foo{bar}{zap}", 5061), ("", 0)):
        assert r.execute_command("CLUSTER", "KEYSLOT", key) == slot, key
    assert r.execute_command("CLUSTER", "COUNTKEYSINSLOT", "12182") == 1
    assert r.execute_command("CLUSTER", "GETKEYSINSLOT", "12182", "10") == ["foo"]
    assert sorted(r.execute_command("CLUSTER", "GETKEYSINSLOT", "8363", "0")) == []
    assert r.execute_command("CLUSTER", "LINKS") == []
    for command in ("ASKING", "READONLY", "READWRITE"):
        assert r.execute_command(command) is True  # (redis-py's reading of +OK)


def test_slot_commands_refuse_what_redis_refuses(node: Callable[..., ServerProcess]) -> None:
    proc = node()
    r = proc.client(decode_responses=True)
    myid = r.execute_command("CLUSTER", "MYID")
    assert r.execute_command("CLUSTER", "ADDSLOTS", "5", "7") == "OK"
    cases = [
        (("CLUSTER", "ADDSLOTS", "5"), "Slot 5 is already busy"),
        (("CLUSTER", "ADDSLOTS", "6", "6"), "Slot 6 specified multiple times"),
        (("CLUSTER", "ADDSLOTS", "16384"), "Invalid or out of range slot"),
        (("CLUSTER", "ADDSLOTS", "x"), "Invalid or out of range slot"),
        (("CLUSTER", "ADDSLOTS", "8", "99999"), "Invalid or out of range slot"),
        (("CLUSTER", "DELSLOTS", "6"), "Slot 6 is already unassigned"),
        (("CLUSTER", "DELSLOTSRANGE", "10", "5"),
         "start slot number 10 is greater than end slot number 5"),
        (("CLUSTER", "ADDSLOTSRANGE", "4", "6"), "Slot 5 is already busy"),
        (("CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"),
         "wrong number of arguments for 'cluster|addslotsrange' command"),
        (("CLUSTER", "COUNTKEYSINSLOT", "99999"), "Invalid slot"),
        (("CLUSTER", "COUNTKEYSINSLOT", "x"), "value is not an integer or out of range"),
        (("CLUSTER", "GETKEYSINSLOT", "1", "-1"), "Invalid slot or number of keys"),
        (("CLUSTER", "KEYSLOT",), "wrong number of arguments for 'cluster|keyslot' command"),
        (("CLUSTER", "SETSLOT", "5", "migrating", "abc"), "I don't know about node abc"),
        (("CLUSTER", "SETSLOT", "5", "importing", myid),
         "I'm already the owner of hash slot 5"),
        (("CLUSTER", "SETSLOT", "6", "migrating", myid), "I'm not the owner of hash slot 6"),
        (("CLUSTER", "SETSLOT", "5", "node", "abc"), "Unknown node abc"),
        (("CLUSTER", "SETSLOT", "5", "bogus"),
         "Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"),
        (("CLUSTER", "SETSLOT", "99999", "stable"), "Invalid or out of range slot"),
        (("CLUSTER", "SET-CONFIG-EPOCH", "-1"), "Invalid config epoch specified: -1"),
        (("CLUSTER", "REPLICAS", "abc"), "Unknown node abc"),
        (("CLUSTER", "COUNT-FAILURE-REPORTS", "abc"), "Unknown node abc"),
        (("CLUSTER", "FORGET", myid), "I tried hard but I can't forget myself..."),
        (("CLUSTER", "FORGET", "abc"), "Unknown node abc"),
        (("CLUSTER", "REPLICATE", myid), "Can't replicate myself"),
        (("CLUSTER", "FAILOVER"), "You should send CLUSTER FAILOVER to a replica"),
        (("CLUSTER", "FAILOVER", "bogus"), "syntax error"),
        (("CLUSTER", "RESET", "bogus"), "syntax error"),
        (("CLUSTER", "MEET", "127.0.0.1", "x"),
         since(proc, (7, 2), "Invalid base port specified: x",
               "Invalid TCP base port specified: x")),
    ]
    for args, expected in cases:
        assert error_of(r, *args) == expected, args
    assert r.execute_command("CLUSTER", "SETSLOT", "5", "migrating", myid) == "OK"
    assert r.execute_command("CLUSTER", "SETSLOT", "5", "stable") == "OK"
    assert r.execute_command("CLUSTER", "REPLICAS", myid) == []
    assert r.execute_command("CLUSTER", "COUNT-FAILURE-REPORTS", myid) == 0
    assert r.execute_command("CLUSTER", "BUMPEPOCH") == "BUMPED 1"
    assert r.execute_command("CLUSTER", "BUMPEPOCH") == "STILL 1"
    assert error_of(r, "CLUSTER", "SET-CONFIG-EPOCH", "5") == \
        "Node config epoch is already non-zero"
    assert r.execute_command("CLUSTER", "SAVECONFIG") == "OK"
    r.execute_command("CLUSTER", "ADDSLOTS", "5474")
    r.config_set("cluster-require-full-coverage", "no")
    wait_ok(r)
    assert r.set("{user}x", "1")  # slot 5474
    assert error_of(r, "CLUSTER", "FLUSHSLOTS") == "DB must be empty to perform CLUSTER FLUSHSLOTS."
    assert error_of(r, "CLUSTER", "RESET") == \
        "CLUSTER RESET can't be called with master nodes containing keys"
    r.delete("{user}x")
    assert r.execute_command("CLUSTER", "FLUSHSLOTS") == "OK"
    assert cluster_info(r)["cluster_slots_assigned"] == "0"
    assert r.execute_command("CLUSTER", "ADDSLOTS", "1") == "OK"
    assert r.execute_command("CLUSTER", "RESET", "HARD") == "OK"
    assert r.execute_command("CLUSTER", "MYID") != myid
    info = cluster_info(r)
    assert (info["cluster_slots_assigned"], info["cluster_current_epoch"]) == ("0", "0")


def test_requests_for_another_nodes_slots_are_redirected(node: Callable[..., ServerProcess],
                                                          tmp_path: Path) -> None:
    port, phantom_port = free_cluster_port(), free_cluster_port()
    proc = node(nodes_conf=two_nodes(port, phantom_port), port=port)
    r = proc.client(decode_responses=True)
    assert r.execute_command("CLUSTER", "MYID") == ME
    wait_ok(r)
    lines = r.execute_command("CLUSTER", "NODES").splitlines()
    mine = next(line for line in lines if line.startswith(ME))
    theirs = next(line for line in lines if line.startswith(PHANTOM)).split()
    assert mine == f"{ME} 127.0.0.1:{port}@{port + 10000} myself,master - 0 0 1 connected 0-8191"
    assert theirs[:4] == [PHANTOM, f"127.0.0.1:{phantom_port}@{phantom_port + 10000}",
                          "master", "-"]
    assert theirs[6:] == ["2", "disconnected", "8192-16383"]
    assert r.execute_command("CLUSTER", "SLOTS") == [
        [0, 8191, ["127.0.0.1", port, ME, []]],
        [8192, 16383, ["127.0.0.1", phantom_port, PHANTOM, []]]]
    info = cluster_info(r)
    assert (info["cluster_known_nodes"], info["cluster_size"], info["cluster_current_epoch"],
            info["cluster_my_epoch"]) == ("2", "2", "2", "1")
    moved = f"MOVED 12182 127.0.0.1:{phantom_port}"
    assert _refusal(r, "GET", "foo") == moved  # slot 12182
    assert _refusal(r, "SET", "foo", "1") == moved
    assert r.set("{user}x", "1")  # slot 5474: here
    # A transaction: a redirected command fails it; an EXEC whose commands span two slots
    # is refused as it is, and discarded.
    raw = RawConnection(proc.port)
    assert call(raw, "MULTI") == b"+OK\r\n"
    assert call(raw, "SET", "{user}y", "2") == b"+QUEUED\r\n"
    assert call(raw, "GET", "foo") == b"-" + moved.encode() + b"\r\n"
    assert call(raw, "EXEC") == \
        b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    assert call(raw, "MULTI") == b"+OK\r\n"
    assert call(raw, "SET", "{user}y", "2") == b"+QUEUED\r\n"
    assert call(raw, "SET", "{b}a", "1") == b"+QUEUED\r\n"  # slot 3300, also here
    assert call(raw, "EXEC") == b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"
    assert call(raw, "EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert r.get("{user}y") is None
    # A slot migrating to the phantom: keys still here are served, missing ones ASK there,
    # a mix of both cannot be served now.
    assert r.execute_command("CLUSTER", "SETSLOT", "5474", "MIGRATING", PHANTOM) == "OK"
    assert r.get("{user}x") == "1"
    assert _refusal(r, "GET", "{user}z") == f"ASK 5474 127.0.0.1:{phantom_port}"
    assert _refusal(r, "MGET", "{user}x", "{user}z") == \
        "TRYAGAIN Multiple keys request during rehashing of slot"
    assert f"[5474->-{PHANTOM}]" in r.execute_command("CLUSTER", "NODES")
    assert r.execute_command("CLUSTER", "SETSLOT", "5474", "STABLE") == "OK"
    # A slot being imported from the phantom: served only after ASKING, for one command.
    assert r.execute_command("CLUSTER", "SETSLOT", "12182", "IMPORTING", PHANTOM) == "OK"
    assert f"[12182-<-{PHANTOM}]" in r.execute_command("CLUSTER", "NODES")
    assert _refusal(r, "GET", "foo") == moved
    with r.pipeline(transaction=False) as pipe:
        pipe.execute_command("ASKING").get("foo").get("foo")
        replies = pipe.execute(raise_on_error=False)
    assert replies[:2] == [True, None]  # (redis-py reads ASKING's +OK as True)
    assert whole_error(replies[2]) == moved
    with r.pipeline(transaction=False) as pipe:
        pipe.execute_command("ASKING").mget("foo", "{foo}2")
        replies = pipe.execute(raise_on_error=False)
    assert whole_error(replies[1]) == "TRYAGAIN Multiple keys request during rehashing of slot"
    # Sharded Pub/Sub routes by channel.
    assert _refusal(r, "SPUBLISH", "foo", "m") == moved
    assert r.execute_command("SPUBLISH", "{user}c", "m") == 0


def test_a_script_runs_only_commands_on_keys_served_here_in_one_slot(
        node: Callable[..., ServerProcess]) -> None:
    """A script cannot follow a redirection: a command it runs on a key of another node,
    or (unless it may cross slots) of another slot than its first keys', fails in the
    script with words that say so; a legacy EVAL without flags may cross slots here."""
    port, phantom_port = free_cluster_port(), free_cluster_port()
    proc = node(nodes_conf=two_nodes(port, phantom_port), port=port)
    r = proc.client(decode_responses=True)
    wait_ok(r)

    def script(body: str, *keys: str) -> object:
        return r.eval(body, len(keys), *keys)

    def refused(body: str, *keys: str) -> str:
        """The error a script returns (the one its ``redis.pcall`` got, word for word)."""
        with pytest.raises(redis.ResponseError) as info:
            script(body, *keys)
        return str(info.value)

    # "foo" is slot 12182 (the phantom's); {user}x 5474 and {b}a 3300 are both here.
    non_local = "Script attempted to access a non local key in a cluster node"
    assert refused("return redis.pcall('GET', 'foo')") == non_local
    assert refused("#!lua\nreturn redis.pcall('GET', 'foo')") == non_local
    assert refused("return redis.call('GET', 'foo')").startswith(non_local + " script: ")
    assert script("redis.call('SET', '{user}x', 1) return redis.call('SET', '{b}a', 2)") \
        == "OK"  # no flags: Redis's compatibility mode may cross slots
    other_slot = "Script attempted to access keys that do not hash to the same slot"
    assert refused("#!lua\nredis.call('SET', '{user}x', 1) "
                   "return redis.pcall('SET', '{b}a', 2)") == other_slot
    assert refused("#!lua\nreturn redis.pcall('GET', '{b}a')", "{user}x") == other_slot
    assert script("#!lua flags=allow-cross-slot-keys\nredis.call('SET', '{user}x', 1) "
                  "return redis.call('SET', '{b}a', 2)") == "OK"
    assert refused("return redis.pcall('MSET', '{user}x', 1, '{b}a', 2)") == since(
        proc, (7, 2), "Command 'mset' in script attempted to access keys that don't hash to "
        "the same slot", non_local)
    assert script("#!lua\nreturn redis.call('GET', '{user}y')", "{user}x") is None


def test_nodes_conf_keeps_the_node_across_restarts(node: Callable[..., ServerProcess],
                                                   tmp_path: Path) -> None:
    proc = node()
    r = proc.client(decode_responses=True)
    r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "100")
    r.execute_command("CLUSTER", "BUMPEPOCH")
    before = r.execute_command("CLUSTER", "NODES")
    files = list(tmp_path.glob("nodes-*.conf"))
    assert len(files) == 1
    saved = files[0].read_text()
    proc.stop()
    again = node(nodes_conf=saved)
    assert again.client(decode_responses=True).execute_command(
        "CLUSTER", "NODES") == before.replace(f":{proc.port}@{proc.port + 10000}",
                                              f":{again.port}@{again.port + 10000}")


def test_redis_py_cluster_client_works_against_one_node(node: Callable[..., ServerProcess]
                                                         ) -> None:
    """redis-py's RedisCluster discovers the slots (CLUSTER SLOTS, with this node's IP
    unknown yet: "" means the address the client used), then routes by itself: commands,
    a pipeline, a transaction on one hash tag and sharded Pub/Sub."""
    proc = node()
    proc.client().execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    wait_ok(proc.client(decode_responses=True))
    client = redis.RedisCluster(host="127.0.0.1", port=proc.port, decode_responses=True)
    try:
        assert client.set("foo", "1")
        assert client.incr("foo") == 2
        assert client.mset_nonatomic({"a": "1", "b": "2"}) == [True, True]  # one MSET a slot
        assert client.mget_nonatomic(["a", "b", "foo"]) == ["1", "2", "2"]
        with client.pipeline() as pipe:
            pipe.set("p1", "x").get("p1").xadd("{q}s", {"f": "v"}).xlen("{q}s")
            replies = pipe.execute()
        assert (replies[0], replies[1], replies[3]) == (True, "x", 1)
        pubsub = client.pubsub()
        pubsub.ssubscribe("{q}channel")
        assert pubsub.get_sharded_message(timeout=5)["type"] == "ssubscribe"
        assert client.spublish("{q}channel", "hello") == 1
        message = pubsub.get_sharded_message(timeout=5)
        assert message is not None and message["data"] == "hello"
        pubsub.close()
    finally:
        client.close()


def test_redis_cli_checks_and_follows_a_node(node: Callable[..., ServerProcess]) -> None:
    """redis-cli's cluster tooling reads the node as it reads Redis's: --cluster check finds
    every slot covered and nothing open, --cluster info counts the keys, and -c follows the
    slots (here all on one node)."""
    proc = node()
    r = proc.client(decode_responses=True)
    r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    wait_ok(r)
    address = f"127.0.0.1:{proc.port}"
    assert redis_cli(proc.port, "-c", "SET", "foo", "bar").stdout == b"OK\n"
    assert redis_cli(proc.port, "-c", "GET", "foo").stdout == b"bar\n"
    check = subprocess.run(["redis-cli", "--cluster", "check", address], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "[OK] All nodes agree about slots configuration." in check.stdout
    assert "[OK] All 16384 slots covered." in check.stdout
    assert "[WARNING]" not in check.stdout
    info = subprocess.run(["redis-cli", "--cluster", "info", address], capture_output=True,
                          text=True, timeout=60)
    assert "-> 1 keys | 16384 slots | 0 slaves." in info.stdout
    assert "[OK] 1 keys in 1 masters." in info.stdout
