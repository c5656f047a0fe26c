"""Cluster mode on the command path's fast path: a node answers pipelined requests (read as
one batch) byte for byte as a redis-server node does, and a change of the slots -- from
another connection, or earlier in the same batch -- applies to the very next request of a
connection that was served on the fast path, never a stale "served here"."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from brook.cluster.node import MASTER, ClusterNode, random_name
from brook.cluster.routing import keys_served_outright, redirection, served_outright
from brook.cluster.slots import key_slot
from brook.cluster.state import ClusterState
from brook.config.store import Config
from tests.conftest import RawConnection, Spawn
from tests.support.cluster_nodes import (
    PHANTOM,
    pipelined,
    start_node,
    two_nodes,
    wait_ok,
)
from tests.support.cluster_ports import free_cluster_port

CROSSSLOT = b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"
UNBOUND = b"-CLUSTERDOWN Hash slot not served\r\n"
DOWN = b"-CLUSTERDOWN The cluster is down\r\n"
TRYAGAIN = b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n"
OK = b"+OK\r\n"
NIL = b"$-1\r\n"


def _bulk(value: str) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value.encode())


def _check(raw: RawConnection, cases: list[tuple[tuple[str, ...], bytes]]) -> None:
    """Send every request of ``cases`` in one write; each must get its reply."""
    replies = pipelined(raw, [request for request, _ in cases])
    for (request, expected), reply in zip(cases, replies, strict=True):
        assert reply == expected, request


class _Keys:
    """Database 0 as routing sees it: which keys are here."""

    def __init__(self, here: set[bytes]) -> None:
        self.here = here

    def present(self, key: bytes) -> bool:
        return key in self.here


def test_the_quick_test_says_yes_only_where_routing_serves() -> None:
    """The fast path's one question (routing.served_outright) never says yes where
    routing.redirection would redirect or refuse, whatever the session and the command: a
    quick yes is the general path's None. Random slot owners, moves, cluster states and keys
    (hash tags, an empty tag, keys in several slots)."""
    rng = random.Random(7)
    state = ClusterState(Config())
    me, other = state.myself, ClusterNode(random_name(), MASTER)
    state.nodes[other.name] = other
    tags = [b"{a}", b"{b}", b"{c}", b"{}", b""]
    keys = [tag + name for tag in tags for name in (b"x", b"y", b"z")]
    slots = sorted({key_slot(key) for key in keys})
    for slot in slots:
        owner = rng.choice([me, me, other, None])
        if owner is not None:
            state.add_slot(slot, owner)
        if owner is me and rng.random() < 0.3:
            state.set_migrating(slot, other)
        elif owner is other and rng.random() < 0.3:
            state.set_importing(slot, other)
    here = _Keys({key for key in keys if rng.random() < 0.5})
    served = 0
    for _ in range(3000):
        state.ok = rng.random() < 0.8
        request = [b"CMD", *rng.sample(keys, rng.randint(1, 3))]
        quick = served_outright(state, request, 1, len(request) - 1, 1)
        assert quick == keys_served_outright(state, request, list(range(1, len(request))))
        if not quick:
            continue
        served += 1
        for flags in itertools.product((False, True), repeat=5):
            write, asking, readonly, shard_channels, migrate = flags
            assert redirection(state, request[1:], here, write, asking, readonly,
                               shard_channels, False, False, "ip", migrate) is None, request
    assert served > 100  # (the draw did exercise the yes)
    assert served_outright(state, [b"PING"], 1, 0, 1)  # no key: nothing to route


def test_pipelined_requests_on_a_node_with_every_slot(spawn: Spawn, tmp_path: Path) -> None:
    proc = start_node(spawn, tmp_path)
    r = proc.client(decode_responses=True)
    assert r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383") == "OK"
    wait_ok(r)
    raw = RawConnection(proc.port)
    keys = [f"key:{i}" for i in range(300)]
    cases: list[tuple[tuple[str, ...], bytes]] = []
    cases += [(("SET", key, f"v{key}"), OK) for key in keys]
    cases += [(("GET", key), _bulk(f"v{key}")) for key in keys]
    cases += [
        (("MSET", "{t}a", "1", "{t}b", "2"), OK),  # one slot, by the hash tag
        (("MSET", "a", "1", "b", "2"), CROSSSLOT),
        (("MSET", "{}a", "1", "{}b", "2"), CROSSSLOT),  # an empty tag: the whole key hashes
        (("MGET", "{t}a", "{t}b"), b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
        (("EXISTS", "{t}a", "{t}b", "{t}missing"), b":2\r\n"),
        (("EXISTS", "a", "b"), CROSSSLOT),
        (("EVAL", "return redis.call('GET', KEYS[1])", "1", "{t}a"), _bulk("1")),
        (("EVAL", "return 1", "2", "a", "b"), CROSSSLOT),
        (("ASKING",), OK),
        (("GET", "{t}b"), _bulk("2")),  # ASKING changes nothing for a slot served here
        (("ASKING",), OK),
        (("MSET", "a", "1", "b", "2"), CROSSSLOT),
        (("PING",), b"+PONG\r\n"),
        (("MULTI",), OK),
        (("SET", "{t}c", "3"), b"+QUEUED\r\n"),
        (("GET", "{t}a"), b"+QUEUED\r\n"),
        (("EXEC",), b"*2\r\n+OK\r\n$1\r\n1\r\n"),
        (("DBSIZE",), b":303\r\n"),
        (("GET", keys[0]), _bulk(f"v{keys[0]}")),
    ]
    _check(raw, cases)
    raw.close()


def test_slot_changes_apply_to_the_very_next_request(spawn: Spawn, tmp_path: Path) -> None:
    """DELSLOTS, ADDSLOTS, SETSLOT MIGRATING / IMPORTING / STABLE and a cluster going down,
    sent on another connection or earlier in the same batch, each seen by the next request
    of a connection whose earlier requests were served on the fast path."""
    port, phantom_port = free_cluster_port(), free_cluster_port()
    proc = start_node(spawn, tmp_path, nodes_conf=two_nodes(port, phantom_port), port=port)
    r = proc.client(decode_responses=True)
    wait_ok(r)
    # One unbound slot must not take the cluster down, for now.
    r.config_set("cluster-require-full-coverage", "no")
    here = f"127.0.0.1:{phantom_port}"
    ask = f"-ASK 5474 {here}\r\n".encode()
    moved = f"-MOVED 12182 {here}\r\n".encode()
    raw = RawConnection(proc.port)
    # {user}: slot 5474, {b}: slot 3300, both here; foo: slot 12182, the phantom's.
    _check(raw, [(("SET", "{user}x", "1"), OK), (("SET", "{b}a", "1"), OK),
                 (("GET", "{user}x"), _bulk("1")), (("GET", "foo"), moved)])

    # From another connection.
    assert r.execute_command("CLUSTER", "DELSLOTS", "3300") == "OK"
    _check(raw, [(("GET", "{b}a"), UNBOUND), (("SET", "{b}a", "2"), UNBOUND),
                 (("GET", "{user}x"), _bulk("1"))])
    assert r.execute_command("CLUSTER", "ADDSLOTS", "3300") == "OK"
    _check(raw, [(("GET", "{b}a"), _bulk("1"))])
    assert r.execute_command("CLUSTER", "SETSLOT", "5474", "MIGRATING", PHANTOM) == "OK"
    _check(raw, [(("GET", "{user}x"), _bulk("1")),  # still here
                 (("GET", "{user}z"), ask),  # missing: asked there
                 (("MGET", "{user}x", "{user}z"), TRYAGAIN),
                 (("SET", "{user}z", "1"), ask)])
    assert r.execute_command("CLUSTER", "SETSLOT", "5474", "STABLE") == "OK"
    _check(raw, [(("GET", "{user}z"), NIL)])
    assert r.execute_command("CLUSTER", "SETSLOT", "12182", "IMPORTING", PHANTOM) == "OK"
    _check(raw, [(("GET", "foo"), moved),
                 (("ASKING",), OK), (("GET", "foo"), NIL),  # for one command only
                 (("GET", "foo"), moved),
                 (("ASKING",), OK), (("PING",), b"+PONG\r\n"), (("GET", "foo"), moved)])

    # Earlier in the same batch, on the same connection.
    _check(raw, [
        (("SET", "{b}a", "3"), OK),
        (("CLUSTER", "DELSLOTS", "3300"), OK),
        (("GET", "{b}a"), UNBOUND),
        (("CLUSTER", "ADDSLOTS", "3300"), OK),
        (("GET", "{b}a"), _bulk("3")),
        (("CLUSTER", "SETSLOT", "5474", "MIGRATING", PHANTOM), OK),
        (("GET", "{user}nothing"), ask),
        (("CLUSTER", "SETSLOT", "5474", "STABLE"), OK),
        (("GET", "{user}nothing"), NIL),
    ])

    # The cluster going down: every key refused, keyless commands still served.
    r.config_set("cluster-require-full-coverage", "yes")
    assert r.execute_command("CLUSTER", "DELSLOTS", "3300") == "OK"
    _check(raw, [(("GET", "{user}x"), DOWN), (("GET", "{b}a"), UNBOUND),
                 (("PING",), b"+PONG\r\n")])
    raw.close()
