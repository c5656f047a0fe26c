"""Fixtures: real server processes on free ports, real clients.

* ``server`` is parametrized: a test that uses it (or ``r``, ``r3``, ``raw``) runs once against
  Brook and once against ``redis-server`` when it is installed, so any difference in replies or
  error text is a failing test (the parity suite).
* ``brook`` is Brook alone, for behaviour Redis has no equivalent of (our config, logs).
* The real Redis is ``redis-server`` on PATH (CI: Debian's 7.0). ``BROOK_PARITY_REDIS`` names
  another build (``BROOK_PARITY_REDIS=/path/to/redis-server make test``), to check against a
  newer Redis the behaviour Brook follows (a development build reports no version:
  ``BROOK_PARITY_REDIS_VERSION`` gives it); a test whose Redis behaviour changed after 7.0 is
  marked ``min_redis(major, minor)`` or asks ``server.version``. Unset, PATH's is used (CI);
  set to something that is not an executable file, the run stops at once (nothing skipped).
* Every test gets empty databases (FLUSHALL) and default settings for what tests change.
"""

from __future__ import annotations

import importlib
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hiredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ServerProcess:
    """A running server process (Brook or Redis) and how to reach it."""

    kind: str  # "brook" | "redis"
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    version: tuple[int, ...] = (99,)
    defaults: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def client(self, **kwargs: object) -> redis.Redis:
        """A redis-py client; RESP2 unless ``protocol=3`` is asked for (redis-py 8 defaults
        to RESP3, and most of our users' clients speak RESP2). It sends each command once
        unless ``retry`` says otherwise: redis-py 6 and later send a command again, up to ten
        times, after a connection error, and a refused AUTH counts as one, so a test's one
        command would reach the server eleven times."""
        kwargs.setdefault("protocol", 2)
        kwargs.setdefault("retry", Retry(NoBackoff(), 0))
        return redis.Redis(host=self.host, port=self.port, socket_timeout=10, **kwargs)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def wait_for_port(port: int, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not start on port {port}:\n{log_path.read_text()}")


def start_brook(tmp: Path, *extra: str, port: int | None = None,
                config_file: Path | None = None) -> ServerProcess:
    """A Brook server; ``config_file`` (which comes first on the command line, as Redis
    wants it) gives it a file for CONFIG REWRITE."""
    port = port or free_port()
    log_path = tmp / f"brook-{port}.log"
    handle = open(log_path, "wb")  # noqa: SIM115 - kept open for the process's lifetime
    first = [str(config_file)] if config_file is not None else []
    process = subprocess.Popen(
        [sys.executable, "-m", "brook", *first, "--port", str(port), "--enable-debug-command",
         "yes", *extra],
        stdout=handle, stderr=subprocess.STDOUT, cwd=tmp,
    )
    wait_for_port(port, process, log_path)
    return ServerProcess("brook", port, process, log_path)


def run_refused_brook(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """A Brook server that is expected to refuse to start, run to its exit. Not
    :func:`start_brook`: PING is answered while the dataset loads (as Redis does), so a server
    that fails its load may look started first."""
    return subprocess.run(
        [sys.executable, "-m", "brook", "--port", str(free_port()), *extra],
        cwd=tmp, capture_output=True, text=True, timeout=60,
    )


def native_module(name: str) -> Any:
    """A hand-written C module of the compiled core (brook.types._*): required when the suite
    tests the compiled build (make test), skipped when the pure one."""
    if os.environ.get("BROOK_EXPECT_BUILD") == "compiled":
        return importlib.import_module(name)
    return pytest.importorskip(name)


def redis_binary() -> str | None:
    """The real Redis the parity tests run against: ``BROOK_PARITY_REDIS`` or PATH's."""
    chosen = os.environ.get("BROOK_PARITY_REDIS")
    if chosen:
        if not (os.path.isfile(chosen) and os.access(chosen, os.X_OK)):
            # Not FileNotFoundError, which means "no Redis: skip its runs"; a build asked for
            # by name that is not there stops the session (checked in pytest_configure).
            raise pytest.UsageError(f"BROOK_PARITY_REDIS={chosen} is not an executable file")
        return chosen
    return shutil.which("redis-server")


def start_redis(tmp: Path, *extra: str, config_file: Path | None = None) -> ServerProcess:
    binary = redis_binary()
    if binary is None:
        raise FileNotFoundError("redis-server")
    port = free_port()
    log_path = tmp / f"redis-{port}.log"
    handle = open(log_path, "wb")  # noqa: SIM115
    first = [str(config_file)] if config_file is not None else []
    process = subprocess.Popen(
        [binary, *first, "--port", str(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1", "--enable-debug-command", "yes",
         *extra],
        stdout=handle, stderr=subprocess.STDOUT, cwd=tmp,
    )
    wait_for_port(port, process, log_path)
    info = redis.Redis(port=port).info("server")
    version = tuple(int(x) for x in re.findall(r"\d+", str(info["redis_version"]))[:3])
    if version == (255, 255, 255):
        # A development build says no version: BROOK_PARITY_REDIS_VERSION does (e.g. "8.0"
        # for the line that became 8.0), else it counts as 8.0.
        stated = os.environ.get("BROOK_PARITY_REDIS_VERSION", "8.0")
        version = tuple(int(x) for x in stated.split("."))
    return ServerProcess("redis", port, process, log_path, version=version)


@pytest.fixture(scope="session")
def brook_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = start_brook(tmp_path_factory.mktemp("brook"))
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def redis_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess | None]:
    try:
        proc = start_redis(tmp_path_factory.mktemp("redis"))
    except FileNotFoundError:
        yield None
        return
    yield proc
    proc.stop()


# Settings that tests may change with CONFIG SET; restored after every test.
_RESTORED_SETTINGS = ("maxclients", "timeout", "slowlog-log-slower-than", "slowlog-max-len",
                      "proto-max-bulk-len", "client-query-buffer-limit", "requirepass",
                      "hash-max-listpack-entries", "hash-max-listpack-value", "hz",
                      "set-max-intset-entries", "set-max-listpack-entries",
                      "set-max-listpack-value", "zset-max-listpack-entries",
                      "zset-max-listpack-value", "busy-reply-threshold", "maxmemory",
                      "maxmemory-policy", "maxmemory-samples", "maxmemory-clients",
                      "lfu-log-factor", "lfu-decay-time", "client-output-buffer-limit",
                      "acl-pubsub-default", "acllog-max-len")


def _reset(proc: ServerProcess) -> None:
    client = proc.client()
    try:
        if not proc.defaults:
            for name in _RESTORED_SETTINGS:
                proc.defaults.update({k.decode() if isinstance(k, bytes) else k:
                                      v.decode() if isinstance(v, bytes) else v
                                      for k, v in client.config_get(name).items()})
        client.config_set("requirepass", "")
    except redis.AuthenticationError:
        client = proc.client(password="pw")
        client.config_set("requirepass", "")
    for name, value in proc.defaults.items():
        client.config_set(name, value)
    client.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    # ACL users a test made go, the default user is Redis's again, and so is the log.
    users = [name for name in client.execute_command("ACL", "USERS") if name != b"default"]
    if users:
        client.execute_command("ACL", "DELUSER", *users)
    client.execute_command("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*",
                           "+@all")
    client.execute_command("ACL", "LOG", "RESET")
    client.flushall()
    client.function_flush()
    client.script_flush()
    client.config_resetstat()
    client.slowlog_reset()
    client.close()


@pytest.fixture(params=["brook", "redis"])
def server(
    request: pytest.FixtureRequest,
    brook_process: ServerProcess,
    redis_process: ServerProcess | None,
) -> ServerProcess:
    """The server under test: each test using it runs against Brook and against real Redis."""
    if request.param == "redis":
        if redis_process is None:
            pytest.skip("redis-server is not installed")
        proc = redis_process
        marker = request.node.get_closest_marker("min_redis")
        if marker is not None and proc.version < tuple(marker.args):
            pytest.skip(f"needs Redis >= {marker.args}, have {proc.version}")
    else:
        proc = brook_process
    if request.node.get_closest_marker("brook_only") and proc.kind != "brook":
        pytest.skip("Brook-specific behaviour")
    _reset(proc)
    return proc


@pytest.fixture
def brook(brook_process: ServerProcess) -> ServerProcess:
    """Brook alone (for behaviour that has no Redis counterpart)."""
    _reset(brook_process)
    return brook_process


@pytest.fixture
def r(server: ServerProcess) -> Iterator[redis.Redis]:
    """A redis-py client (RESP2) that returns bytes."""
    client = server.client()
    yield client
    client.close()


@pytest.fixture
def r3(server: ServerProcess) -> Iterator[redis.Redis]:
    """A redis-py client speaking RESP3."""
    client = server.client(protocol=3)
    yield client
    client.close()


def encode_request(*args: bytes | str | int) -> bytes:
    """A request as a client encodes it (an array of bulk strings)."""
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


# Redis's error texts that many tests compare with.
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INTEGER = "value is not an integer or out of range"


def error_text(reply: object) -> str:
    """The text of an error reply hiredis parsed."""
    assert isinstance(reply, hiredis.ReplyError), reply
    return str(reply)


def whole_error(error: redis.RedisError) -> str:
    """An error reply's whole text, as redis-py raised it: for the errors it has a class for
    (MASTERDOWN, NOPERM, WRONGPASS...), redis-py 8 moves the code out of the message into
    ``status_code`` (redis-py 5 left MASTERDOWN in the message)."""
    code = getattr(error, "status_code", None)
    return f"{code} {error}" if code else str(error)


def call(raw: RawConnection, *args: bytes | str | int) -> bytes:
    """Send one command and return its complete raw reply."""
    raw.send(encode_request(*args))
    data = b""
    raw.sock.settimeout(5)
    while True:
        chunk = raw.sock.recv(65536)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
        end = reply_end(data)
        if end is not None:
            assert end == len(data), f"extra data: {data!r}"
            return data


def exchange(conn: RawConnection, payload: bytes, replies: int = 1, timeout: float = 5) -> bytes:
    """Send ``payload`` and return the raw bytes of the next ``replies`` complete replies (or
    what arrived before the peer closed or ``timeout`` passed), without a fixed wait."""
    reader = hiredis.Reader()
    conn.send(payload)
    received = b""
    complete = 0
    deadline = time.monotonic() + timeout
    while complete < replies:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        conn.sock.settimeout(remaining)
        try:
            chunk = conn.sock.recv(1 << 20)
        except TimeoutError:
            break
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return received + b"<CLOSED>"
        received += chunk
        reader.feed(chunk)
        while complete < replies and reader.gets() is not False:
            complete += 1
    return received


def reply_end(data: bytes, pos: int = 0) -> int | None:
    """Where the one RESP2/RESP3 value starting at ``pos`` ends; None while it is incomplete.
    A bulk string whose length does not land on its CRLF is a framing error (ValueError)."""
    if pos >= len(data):
        return None
    line_end = data.find(b"\r\n", pos)
    if line_end < 0:
        return None
    kind, head, after = data[pos:pos + 1], data[pos + 1:line_end], line_end + 2
    if kind in (b"+", b"-", b":", b"_", b",", b"#", b"("):
        return after
    if kind in (b"$", b"=", b"!"):
        size = int(head)
        if size < 0:
            return after
        end = after + size
        if len(data) < end + 2:
            return None
        if data[end:end + 2] != b"\r\n":
            raise ValueError(f"a bulk of {size} bytes is not followed by CRLF at {end}: {data!r}")
        return end + 2
    if kind in (b"*", b"~", b">", b"%"):
        size = int(head)
        for _ in range(max(size, 0) * (2 if kind == b"%" else 1)):
            found = reply_end(data, after)
            if found is None:
                return None
            after = found
        return after
    raise ValueError(f"no RESP type {kind!r} at {pos}: {data!r}")


def run(r: redis.Redis, *args: bytes | str | int) -> object:
    """A command's reply as redis-py parses it, without its per-command conversions."""
    connection = r.connection_pool.get_connection()
    try:
        connection.send_command(*args)
        return connection.read_response()
    finally:
        r.connection_pool.release(connection)


def error_of(r: redis.Redis, *args: bytes | str | int) -> str:
    """The error text a command gets (it must get one)."""
    with pytest.raises(redis.ResponseError) as info:
        run(r, *args)
    return str(info.value)


def stats_of(r: redis.Redis) -> tuple[dict[str, tuple[int, int, int]], dict[str, int], int]:
    """(calls, rejected, failed) by command, error counts by code, total error replies."""
    commands = {name.removeprefix("cmdstat_"): (row["calls"], row["rejected_calls"],
                                                 row["failed_calls"])
                for name, row in r.info("commandstats").items()}
    commands.pop("config|resetstat", None)
    errors = {name.removeprefix("errorstat_"): row["count"]
              for name, row in r.info("errorstats").items()}
    return commands, errors, r.info("stats")["total_error_replies"]


class RawConnection:
    """A plain socket, for checking exact bytes on the wire."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)

    def send(self, payload: bytes) -> None:
        self.sock.sendall(payload)

    def read(self, until: bytes | None = None, timeout: float = 0.5) -> bytes:
        """Read until ``until`` has arrived, the peer closes (b"<CLOSED>" is appended) or
        ``timeout`` passes without data."""
        self.sock.settimeout(timeout)
        data = b""
        try:
            while until is None or until not in data:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return data + b"<CLOSED>"
                data += chunk
        except TimeoutError:
            pass
        except ConnectionResetError:
            return data + b"<CLOSED>"
        return data

    def call(self, *args: bytes | str | int, timeout: float = 5) -> object:
        """Send one command and return its reply decoded by hiredis, without the reply
        post-processing redis-py applies (errors come back as ``hiredis.ReplyError`` values)."""
        encoded = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        self.send(b"*%d\r\n" % len(encoded)
                  + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in encoded))
        reader = hiredis.Reader()
        self.sock.settimeout(timeout)
        while True:
            reply = reader.gets()
            if reply is not False:
                return reply
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            reader.feed(chunk)

    def request(self, payload: bytes, until: bytes | None = None, timeout: float = 0.5) -> bytes:
        self.send(payload)
        return self.read(until, timeout)

    def close(self) -> None:
        self.sock.close()


def help_footer(server: ServerProcess) -> bytes:
    """The last line of every HELP reply: Redis 7.2 changed "Prints this help." to "Print"."""
    return b"    Print this help." if server.version >= (7, 2) else b"    Prints this help."


@pytest.fixture
def raw(server: ServerProcess) -> Iterator[RawConnection]:
    conn = RawConnection(server.port)
    yield conn
    conn.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "min_redis(*version): skip the real-Redis run below this version")
    config.addinivalue_line("markers", "brook_only: run only against Brook")
    redis_binary()  # a mistyped BROOK_PARITY_REDIS stops the run before any test
    import brook
    from brook.build import BUILD, stale_modules

    expected = os.environ.get("BROOK_EXPECT_BUILD")
    if expected and expected != BUILD:  # e.g. a compiled tree earlier on sys.path than the pure one
        pytest.exit(f"BROOK_EXPECT_BUILD={expected}, but this session imported the {BUILD} build "
                    f"from {Path(brook.__file__).parent}", 2)

    stale = stale_modules()
    if stale:  # the tests would run the compiled old code, not the source under test
        pytest.exit(f"compiled modules older than their source, run `make build`: {stale}", 2)


# The job frameworks' environments (tests.support.frameworks): made once the tests are
# collected, if any test asks for them, so that no test's timeout includes pip's downloads.
_framework_envs: dict[str, Path | BaseException] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    from bench.envs import is_current, prepare
    from tests.support.frameworks import ENVS_FIXTURE, FRAMEWORKS

    if session.config.option.collectonly or not any(
            ENVS_FIXTURE in getattr(item, "fixturenames", ()) for item in session.items):
        return
    missing = [name for name in FRAMEWORKS if not is_current(name)]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if missing and reporter is not None:
        reporter.write_line(f"making the environments of {', '.join(missing)} in .bench-envs/")
    _framework_envs.update(prepare(FRAMEWORKS))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Which releases the framework tests ran."""
    from bench.envs import versions

    made = [name for name, python in _framework_envs.items() if isinstance(python, Path)]
    if made:
        terminalreporter.write_line("framework environments (.bench-envs/): " + "; ".join(
            f"{name}: {versions(name)}" for name in made))


@pytest.fixture(scope="session")
def framework_envs() -> dict[str, Path | BaseException]:
    """Each job framework's python, or why its environment could not be made
    (``tests.support.frameworks.run_driver`` fails the test then)."""
    from bench.envs import prepare
    from tests.support.frameworks import FRAMEWORKS

    if not _framework_envs:  # collected without the hook's knowing (a plugin's doing): now
        _framework_envs.update(prepare(FRAMEWORKS))
    return _framework_envs


def redis_cli(port: int, *args: str, stdin: bytes | None = None,
              timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
    """Run the real redis-cli against a server."""
    binary = shutil.which("redis-cli")
    if binary is None:
        pytest.skip("redis-cli is not installed")
    return subprocess.run(
        [binary, "-p", str(port), *args], input=stdin, capture_output=True, timeout=timeout
    )


os.environ.setdefault("PYTHONUNBUFFERED", "1")


# -- fixtures and helpers that several test files share -----------------------------------

def server_argv(kind: str, *args: str) -> list[str]:
    """The command line that starts a Brook or Redis server with ``args``."""
    if kind == "brook":
        return [sys.executable, "-m", "brook", *args]
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    return [binary, *args]


def since(server: ServerProcess, version: tuple[int, ...], newer: str, older: str) -> str:
    """A reply that Redis changed in ``version``: the text of the server under test."""
    return newer if server.version >= version else older


@pytest.fixture
def set_config(r: redis.Redis) -> Iterator[Callable[[str, object], None]]:
    """CONFIG SET that is undone after the test (the server fixture does not reset stream
    settings such as stream-node-max-entries)."""
    saved: dict[str, bytes] = {}

    def setter(name: str, value: object) -> None:
        if name not in saved:
            reply = run(r, "CONFIG", "GET", name)
            assert isinstance(reply, list) and len(reply) == 2
            saved[name] = reply[1]
        assert run(r, "CONFIG", "SET", name, str(value)) == b"OK"

    yield setter
    for name, value in saved.items():
        run(r, "CONFIG", "SET", name, value)


@pytest.fixture
def listen(server) -> Iterator:  # type: ignore[no-untyped-def]
    """``listen(flags)``: a subscriber to every keyspace and keyevent channel of every
    database, with ``flags`` set; returns a function that collects what arrived."""
    admin = server.client()
    subscriber = server.client()
    pubsub = subscriber.pubsub()

    def start(flags: str):  # type: ignore[no-untyped-def]
        admin.config_set("notify-keyspace-events", flags)
        pubsub.psubscribe("__key*__:*")
        assert pubsub.get_message(timeout=5)["type"] == "psubscribe"

        def collected(wait: float = 0.2) -> list[tuple[bytes, bytes]]:
            events: list[tuple[bytes, bytes]] = []
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                message = pubsub.get_message(timeout=0.05)
                if message is not None and message["type"] == "pmessage":
                    events.append((message["channel"], message["data"]))
            return events

        return collected

    yield start
    admin.config_set("notify-keyspace-events", "")
    pubsub.close()
    subscriber.close()
    admin.close()


Spawn = Callable[..., ServerProcess]


def _spawn_factory(kind: str, tmp: Path) -> tuple[Spawn, list[ServerProcess]]:
    started: list[ServerProcess] = []

    def spawn(
        *args: str, config_file: Path | None = None, port: int | None = None,
        fd_limit: int | None = None,
    ) -> ServerProcess:
        port = port or free_port()
        log_path = tmp / f"{kind}-{port}.log"
        handle = open(log_path, "wb")  # noqa: SIM115 - kept open for the process's lifetime
        leading = [str(config_file)] if config_file is not None else []
        extra = ["--bind", "127.0.0.1"] if kind == "redis" else []
        argv = server_argv(
            kind, *leading, "--port", str(port), "--enable-debug-command", "yes", *extra, *args
        )
        def limit_files() -> None:
            if fd_limit is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

        process = subprocess.Popen(
            argv, stdout=handle, stderr=subprocess.STDOUT, cwd=tmp, preexec_fn=limit_files
        )
        wait_for_port(port, process, log_path)
        proc = ServerProcess(kind, port, process, log_path)
        started.append(proc)
        return proc

    return spawn, started


@pytest.fixture(params=["brook", "redis"])
def spawn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Spawn]:
    """Start private servers (Brook, then Redis) with custom flags; stopped after the test."""
    if request.param == "redis" and shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    factory, started = _spawn_factory(request.param, tmp_path)
    yield factory
    for proc in started:
        proc.stop()


@pytest.fixture
def spawn_brook(tmp_path: Path) -> Iterator[Spawn]:
    """Private Brook servers only (behaviour Redis has no counterpart for)."""
    factory, started = _spawn_factory("brook", tmp_path)
    yield factory
    for proc in started:
        proc.stop()


@pytest.fixture
def restore_config(r: redis.Redis) -> Iterator[Callable[..., None]]:
    """``restore_config("name", ...)``: put these parameters back after the test."""
    saved: dict[str, str] = {}

    def remember(*names: str) -> None:
        for name in names:
            saved.update(r.config_get(name))

    yield remember
    for name, value in saved.items():
        r.config_set(name, value)


def reexecuted(server: ServerProcess) -> bool:
    """Does this server run a parked command again when its key changes (Redis >= 7.2)?"""
    return server.kind == "brook" or server.version >= (7, 2)


class Waiting:
    """A client that sends a (blocking) command and later checks what, if anything, came."""

    def __init__(self, server: ServerProcess, resp3: bool = False) -> None:
        import socket

        self.sock = socket.create_connection((server.host, server.port), timeout=10)
        self.reader = hiredis.Reader()
        if resp3:
            self.send("HELLO", "3")
            self.reply()

    def send(self, *args: bytes | str | int) -> None:
        self.sock.sendall(encode_request(*args))

    def send_raw(self, payload: bytes) -> None:
        self.sock.sendall(payload)

    def reply(self, timeout: float = 10) -> object:
        """The next reply (errors as hiredis.ReplyError values)."""
        self.sock.settimeout(timeout)
        while True:
            reply = self.reader.gets()
            if reply is not False:
                return reply
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            self.reader.feed(chunk)

    def raw(self, timeout: float = 10) -> bytes:
        self.sock.settimeout(timeout)
        return self.sock.recv(1 << 20)

    def nothing(self, wait: float = 0.2) -> bool:
        """True when no byte arrives within ``wait`` seconds."""
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(1 << 20)
        except TimeoutError:
            return True
        self.reader.feed(data)
        return False

    def call(self, *args: bytes | str | int) -> object:
        self.send(*args)
        return self.reply()

    def client_id(self) -> int:
        return int(self.call("CLIENT", "ID"))  # type: ignore[call-overload]

    def close(self) -> None:
        self.sock.close()


def parked(r: redis.Redis, count: int, timeout: float = 10) -> None:
    """Wait until exactly ``count`` clients are parked."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if r.info("clients")["blocked_clients"] == count:
            return
        time.sleep(0.005)
    raise AssertionError(f"expected {count} parked clients, have "
                         f"{r.info('clients')['blocked_clients']}")


@pytest.fixture
def waiting(server: ServerProcess):  # type: ignore[no-untyped-def]
    opened: list[Waiting] = []

    def make(resp3: bool = False) -> Waiting:
        client = Waiting(server, resp3)
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()
