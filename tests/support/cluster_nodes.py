"""One node in cluster mode, Brook or Redis, started the same way, and the requests the
cluster tests pipeline to it byte for byte."""

from __future__ import annotations

import time
from pathlib import Path

import redis

from tests.conftest import RawConnection, ServerProcess, Spawn, encode_request, reply_end
from tests.support.cluster_ports import free_cluster_port

PHANTOM = "f" * 40  # a master known only from nodes.conf: its bus never answers
ME = "a" * 40


def start_node(spawn: Spawn, tmp_path: Path, nodes_conf: str | None = None,
               port: int | None = None) -> ServerProcess:
    """A node with its own nodes.conf (``nodes_conf``'s text, else a new node), whose
    cluster-node-timeout (a minute) keeps a phantom from being suspected during a test."""
    path = tmp_path / f"nodes-{time.monotonic_ns()}.conf"
    if nodes_conf is not None:
        path.write_text(nodes_conf)
    proc = spawn("--cluster-enabled", "yes", "--cluster-config-file", str(path),
                 "--cluster-node-timeout", "60000", "--save", "",
                 port=port or free_cluster_port())
    if proc.kind == "redis":
        text = proc.client().info("server")["redis_version"]
        proc.version = tuple(int(part) for part in str(text).split("."))
    return proc


def two_nodes(port: int, phantom_port: int) -> str:
    """nodes.conf (as Redis 7.0 writes it): this node serving slots 0-8191, the phantom the
    rest."""
    return (f"{ME} 127.0.0.1:{port}@{port + 10000} myself,master - 0 0 1 connected 0-8191\n"
            f"{PHANTOM} 127.0.0.1:{phantom_port}@{phantom_port + 10000} master - 0 0 2 "
            f"connected 8192-16383\n"
            "vars currentEpoch 2 lastVoteEpoch 0\n")


def cluster_info(r: redis.Redis) -> dict[str, str]:
    """CLUSTER INFO's fields, as the server wrote them."""
    text = r.execute_command("CLUSTER", "INFO")
    if isinstance(text, bytes):
        text = text.decode()
    return dict(line.split(":", 1) for line in text.splitlines() if line)


def wait_ok(r: redis.Redis) -> None:
    """A master waits two seconds after its start before its state is ok (Redis's
    CLUSTER_WRITABLE_DELAY)."""
    deadline = time.monotonic() + 30
    while cluster_info(r)["cluster_state"] != "ok":
        assert time.monotonic() < deadline, "the cluster state never became ok"
        time.sleep(0.05)


def pipelined(raw: RawConnection, requests: list[tuple[bytes | str | int, ...]]
              ) -> list[bytes]:
    """Send every request in one write (so the server reads them as one batch, or as few)
    and return each one's raw reply."""
    raw.send(b"".join(encode_request(*request) for request in requests))
    raw.sock.settimeout(10)
    data = b""
    replies: list[bytes] = []
    start = 0
    while len(replies) < len(requests):
        end = reply_end(data, start)
        if end is None:
            chunk = raw.sock.recv(1 << 20)
            assert chunk, f"connection closed after {replies!r}"
            data += chunk
            continue
        replies.append(data[start:end])
        start = end
    assert start == len(data), f"extra data: {data[start:]!r}"
    return replies
