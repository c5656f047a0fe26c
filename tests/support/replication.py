"""A master and its replica as real processes, and the checks that say they are in sync:
shared by the replication tests (Brook beside Redis, and Brook following a real Redis)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from tests.conftest import RawConnection, ServerProcess, redis_binary, start_brook, start_redis


def wait_until(check: Callable[[], object], timeout: float = 15.0) -> None:
    """Poll until ``check`` holds (replication is asynchronous)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.05)


def start(kind: str, tmp: Path, *extra: str, config_file: Path | None = None) -> ServerProcess:
    if kind == "brook":
        return start_brook(tmp, "--save", "", *extra, config_file=config_file)
    if redis_binary() is None:
        pytest.skip("redis-server is not installed")
    # Redis's default diskless sync waits 5 s for more replicas: start at once instead.
    return start_redis(tmp, "--repl-diskless-sync-delay", "0", *extra, config_file=config_file)


def _info_lines(client: redis.Redis) -> list[str]:
    """INFO replication's lines as sent (redis-py would parse the values)."""
    raw = RawConnection(client.connection_pool.connection_kwargs["port"])
    try:
        text = raw.call("INFO", "replication")
    finally:
        raw.close()
    assert isinstance(text, bytes)
    return [line for line in text.decode().splitlines() if ":" in line]


def info_fields(client: redis.Redis) -> list[str]:
    return [line.split(":", 1)[0] for line in _info_lines(client)]


def info(client: redis.Redis) -> dict[str, str]:
    return dict(line.split(":", 1) for line in _info_lines(client))


def synced(master: redis.Redis, replica: redis.Redis) -> bool:
    """The replica is connected and has applied everything the master has sent, and the
    master counts it online (Redis marks a replica online only after its first
    acknowledgement, which may come after the replica reports its link up)."""
    ours, theirs = info(replica), info(master)
    listed = f",port={replica.connection_pool.connection_kwargs['port']},state=online,"
    return (ours.get("master_link_status") == "up"
            and ours["master_repl_offset"] == theirs["master_repl_offset"]
            and any(name.startswith("slave") and name[5:].isdigit() and listed in line
                    for name, line in theirs.items()))


class Pair:
    def __init__(self, master: ServerProcess, replica: ServerProcess) -> None:
        self.master_process = master
        self.replica_process = replica
        self.master = master.client()
        self.replica = replica.client()

    def sync(self, timeout: float = 15.0) -> None:
        wait_until(lambda: synced(self.master, self.replica), timeout)
