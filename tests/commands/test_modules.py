"""MODULE: a server with no modules, as Redis answers for one (Brook loads none). Parity tests;
the loads are tried on servers started with ``enable-module-command yes``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import ServerProcess, start_brook, start_redis

PROTECTED = ('MODULE command not allowed. If the enable-module-command option is set to "local", '
             "you can run it from a local connection, otherwise you need to set this option in "
             "the configuration file, and then restart the server.")


def test_module_list_is_empty(r: redis.Redis) -> None:
    assert r.execute_command("MODULE", "LIST") == []


@pytest.mark.parametrize("command", [
    ("MODULE", "LOAD", "/nonexistent/module.so"),
    ("MODULE", "LOAD", "/nonexistent/module.so", "arg"),
    ("MODULE", "LOADEX", "/nonexistent/module.so", "CONFIG", "a", "b"),
    ("MODULE", "UNLOAD", "nosuchmodule"),
])
def test_loading_is_refused_by_default(r: redis.Redis, command: tuple[str, ...]) -> None:
    with pytest.raises(redis.ResponseError, match="^" + PROTECTED.replace("(", r"\(")):
        r.execute_command(*command)


@pytest.mark.parametrize("command, message", [
    (("MODULE", "NOSUCH"), "unknown subcommand 'NOSUCH'. Try MODULE HELP."),
    (("MODULE", "LOAD"), "wrong number of arguments for 'module|load' command"),
    (("MODULE", "UNLOAD", "a", "b"), "wrong number of arguments for 'module|unload' command"),
    (("MODULE", "LIST", "x"), "wrong number of arguments for 'module|list' command"),
])
def test_bad_subcommands(r: redis.Redis, command: tuple[str, ...], message: str) -> None:
    with pytest.raises(redis.ResponseError) as info:
        r.execute_command(*command)
    assert str(info.value).lower() == message.lower()


@pytest.fixture(params=["brook", "redis"])
def allowing(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of either kind that lets clients run MODULE LOAD and UNLOAD."""
    start = start_brook if request.param == "brook" else start_redis
    try:
        proc = start(tmp_path, "--enable-module-command", "yes")
    except FileNotFoundError:
        pytest.skip("redis-server is not installed")
    yield proc
    proc.stop()


def test_a_load_fails_and_names_the_log(allowing: ServerProcess) -> None:
    client = allowing.client()
    for command in (("MODULE", "LOAD", "/nonexistent/module.so"),
                    ("MODULE", "LOADEX", "/nonexistent/module.so", "ARGS", "x")):
        with pytest.raises(redis.ResponseError,
                           match=r"^Error loading the extension\. Please check the server logs\.$"):
            client.execute_command(*command)
    with pytest.raises(redis.ResponseError,
                       match="^Error unloading module: no such module with that name$"):
        client.execute_command("MODULE", "UNLOAD", "nosuchmodule")
    assert client.execute_command("MODULE", "LIST") == []
    assert "/nonexistent/module.so" in allowing.log()
