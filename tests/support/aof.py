"""The append-only file as tests read it: servers started with it on, its commands, and
whether Brook writes the same effects as Redis."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import hiredis
import pytest

from tests.conftest import ServerProcess, start_brook, start_redis

AOF_ARGS = ("--appendonly", "yes", "--appendfsync", "always")


def aof_commands(path: Path) -> list[list[bytes]]:
    reader = hiredis.Reader()
    reader.feed(path.read_bytes())
    commands = []
    while (command := reader.gets()) is not False:
        commands.append([command[0].upper(), *command[1:]])  # names as clients spelled them
    return commands


def restart(proc: ServerProcess, tmp_path: Path, *extra: str) -> ServerProcess:
    assert proc.stop() == 0
    return start_brook(tmp_path, *AOF_ARGS, *extra)


def effects_match_redis(tmp_path: Path,
                        effects: Callable[[ServerProcess, Path], list[list[bytes]]]
                        ) -> list[list[bytes]]:
    """``effects(server, its directory)`` on a real Redis and then on Brook, both with
    AOF_ARGS: Brook's must equal Redis's, which are returned for the caller's own checks."""
    (tmp_path / "redis").mkdir()
    (tmp_path / "brook").mkdir()
    try:
        redis_proc = start_redis(tmp_path / "redis", *AOF_ARGS)
    except FileNotFoundError:
        pytest.skip("redis-server is not installed")
    try:
        expected = effects(redis_proc, tmp_path / "redis")
    finally:
        redis_proc.stop()
    brook = start_brook(tmp_path / "brook", *AOF_ARGS)
    try:
        assert effects(brook, tmp_path / "brook") == expected
    finally:
        brook.stop()
    return expected

