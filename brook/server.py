"""The server: listeners, clients, periodic jobs, statistics and shutdown.

One event-loop thread runs every command, as in Redis: no locks, a deterministic order.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import secrets
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable

from brook import commands
from brook.commands.registry import COMMANDS, Command
from brook.config import BROOK_VERSION, VERSION, Config
from brook.connection import Client
from brook.keyspace import Keyspace
from brook.protocol import resp

_LOG_MARKS = {"debug": ".", "verbose": "-", "notice": "*", "warning": "#"}
_LOG_LEVELS = {"debug": 0, "verbose": 1, "notice": 2, "warning": 3, "nothing": 4}

DENIED = (
    b"-DENIED Redis is running in protected mode because protected mode is enabled and no "
    b"password is set for the default user. In this mode connections are only accepted from "
    b"the loopback interface. If you want to connect from external computers to Redis you may "
    b"adopt one of the following solutions: 1) Just disable protected mode sending the command "
    b"'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "
    b"the same host the server is running, however MAKE SURE Redis is not publicly accessible "
    b"from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    b"Alternatively you can just disable the protected mode by editing the Redis configuration "
    b"file, and setting the protected mode option to 'no', and then restarting the server. 3) "
    b"If you started the server manually just for testing, restart it with the "
    b"'--protected-mode no' option. 4) Set up an authentication password for the default user. "
    b"NOTE: You only need to do one of the above things in order for the server to start "
    b"accepting connections from the outside.\r\n"
)
MAX_CLIENTS_REACHED = b"-ERR max number of clients reached\r\n"


class SlowlogEntry:
    __slots__ = ("id", "timestamp", "duration_us", "args", "addr", "name")

    def __init__(self, entry_id: int, duration_us: int, args: list[bytes], client: Client) -> None:
        self.id = entry_id
        self.timestamp = int(time.time())
        self.duration_us = duration_us
        # Redis keeps at most 32 arguments, each cut to 128 bytes, so huge requests stay cheap.
        kept = [a if len(a) <= 128 else a[:128] + b"... (%d more bytes)" % (len(a) - 128)
                for a in args[:32]]
        if len(args) > 32:
            kept[-1] = b"... (%d more arguments)" % (len(args) - 31)
        self.args = kept
        self.addr = client.addr
        self.name = client.name


class Server:
    """Process-wide state shared by all clients."""

    def __init__(self, config: Config) -> None:
        commands.load_all()
        self.config = config
        self.keyspace = Keyspace(config.databases)
        self.command_table = commands.registry.lookup_table()
        self.clients: dict[int, Client] = {}
        self.next_client_id = 1
        self.monitors: list[Client] = []
        self.run_id = secrets.token_hex(20)
        self.started = time.time()
        self.started_monotonic = time.monotonic()
        self.pid = os.getpid()
        self.dirty = 0  # changes since the last save (INFO persistence)
        self.stats: dict[str, int] = {}
        self.errorstats: dict[str, int] = {}
        self.reset_stats()
        self.slowlog: deque[SlowlogEntry] = deque(maxlen=max(config.slowlog_max_len, 0) or None)
        self.slowlog_next_id = 0
        self.slowlog_threshold = float("inf")
        self.ops_samples: deque[tuple[float, int]] = deque(maxlen=16)
        self.latency_events: dict[str, list[tuple[int, int]]] = {}
        self.listeners: list[asyncio.AbstractServer] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.shutdown_event: asyncio.Event | None = None
        self.shutdown_hooks: list[Callable[[], None]] = []
        self.log_file = None
        self.config.listeners.append(self._config_changed)
        self._config_changed("slowlog-log-slower-than")

    # -- configuration ----------------------------------------------------------------------------

    def _config_changed(self, name: str) -> None:
        config = self.config
        if name == "slowlog-log-slower-than":
            threshold = config.slowlog_log_slower_than
            self.slowlog_threshold = float("inf") if threshold < 0 else threshold / 1e6
        elif name == "slowlog-max-len":
            self.slowlog = deque(self.slowlog, maxlen=max(config.slowlog_max_len, 0))
        elif name == "requirepass":
            for client in self.clients.values():
                client.refresh_mode()

    # -- clients ----------------------------------------------------------------------------------

    def admit(self, client: Client, peer: object) -> bytes | None:
        """Accept a new connection or return the refusal to write before closing it."""
        self.stats["total_connections_received"] += 1
        if len(self.clients) >= self.config.maxclients:
            self.stats["rejected_connections"] += 1
            return MAX_CLIENTS_REACHED
        if self.config.protected_mode and not self.config.requirepass and not _is_loopback(peer):
            self.stats["rejected_connections"] += 1
            return DENIED
        client.id = self.next_client_id
        self.next_client_id += 1
        self.clients[client.id] = client
        return None

    def forget(self, client: Client) -> None:
        """A connection ended: drop every reference the server holds to it."""
        if self.clients.pop(client.id, None) is None:
            return
        client.unwatch_all()
        if client.is_monitor:
            self.remove_monitor(client)

    def add_monitor(self, client: Client) -> None:
        client.is_monitor = True
        self.monitors.append(client)
        for other in self.clients.values():
            other.refresh_mode()

    def remove_monitor(self, client: Client) -> None:
        client.is_monitor = False
        if client in self.monitors:
            self.monitors.remove(client)
        for other in self.clients.values():
            other.refresh_mode()

    def feed_monitors(self, client: Client, args: list[bytes]) -> None:
        """Send a MONITOR line: ``+<time> [<db> <addr>] "arg" ...``, arguments quoted as Redis does."""
        now = time.time()
        line = b'+%.6f [%d %s] %s\r\n' % (
            now, client.db.index, client.addr.encode(), b" ".join(quote_arg(a) for a in args)
        )
        for monitor in self.monitors:
            if monitor is not client:
                monitor.push(line)

    # -- replies and statistics ------------------------------------------------------------------

    def reset_stats(self) -> None:
        self.stats = {
            "total_connections_received": 0,
            "rejected_connections": 0,
            "total_error_replies": 0,
            "keyspace_hits": 0,
            "keyspace_misses": 0,
        }
        self.errorstats = {}
        self.net_input_bytes = 0
        self.net_output_bytes = 0
        self.stat_reset_time = time.time()
        for cmd in COMMANDS.values():
            cmd.reset_stats()

    def count_error(self, code: str) -> None:
        self.stats["total_error_replies"] += 1
        self.errorstats[code] = self.errorstats.get(code, 0) + 1

    def error_reply(self, message: str, cmd: Command | None, rejected: bool = False) -> bytes:
        """Encode an error reply and count it (errorstats, failed/rejected calls)."""
        code = message.split(" ", 1)[0]
        self.count_error(code)
        if cmd is not None:
            if rejected:
                cmd.rejected_calls += 1
            else:
                cmd.failed_calls += 1
        return resp.error(message)

    def internal_error(self, cmd: Command, err: Exception) -> bytes:
        self.log("warning", f"Internal error in {cmd.fullname}: {traceback.format_exc()}")
        return self.error_reply(f"ERR internal error in '{cmd.fullname}': {type(err).__name__}", cmd)

    def slowlog_add(self, client: Client, args: list[bytes], elapsed: float) -> None:
        if not self.slowlog.maxlen and self.slowlog.maxlen is not None:
            return
        self.slowlog.appendleft(
            SlowlogEntry(self.slowlog_next_id, int(elapsed * 1e6), args, client)
        )
        self.slowlog_next_id += 1

    def total_commands(self) -> int:
        total = 0
        for cmd in COMMANDS.values():
            total += cmd.calls
            for sub in cmd.subcommands.values():
                total += sub.calls
        return total

    # -- logging ---------------------------------------------------------------------------------

    def log(self, level: str, message: str) -> None:
        if _LOG_LEVELS[level] < _LOG_LEVELS.get(self.config.loglevel, 2):
            return
        now = time.time()
        stamp = time.strftime("%d %b %Y %H:%M:%S", time.localtime(now))
        line = f"{self.pid}:M {stamp}.{int(now * 1000) % 1000:03d} {_LOG_MARKS[level]} {message}\n"
        target = self.log_file or sys.stdout
        target.write(line)
        target.flush()

    # -- running ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the listeners (the server then runs until :meth:`shutdown`)."""
        self.loop = asyncio.get_running_loop()
        self.shutdown_event = asyncio.Event()
        if self.config.logfile:
            self.log_file = open(self.config.logfile, "a", encoding="utf-8")  # noqa: SIM115
        config = self.config
        for address in config.bind:
            optional = address.startswith("-")
            host = address.lstrip("-")
            if host == "*":
                host = "0.0.0.0"
            try:
                listener = await self.loop.create_server(
                    lambda: Client(self), host, config.port,
                    backlog=max(config.tcp_backlog, 511), reuse_address=True,
                )
            except OSError as err:
                if optional:
                    continue
                raise OSError(f"Could not create server TCP listening socket {host}:{config.port}: {err}")
            self.listeners.append(listener)
            if config.port == 0:  # an ephemeral port: use the same one for the other addresses
                config.port = listener.sockets[0].getsockname()[1]
        if not self.listeners:
            raise OSError("Failed listening on any address")
        if config.pidfile:
            with open(config.pidfile, "w", encoding="utf-8") as handle:
                handle.write(f"{self.pid}\n")
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, self._on_signal, sig)
        self.log(
            "notice",
            f"Brook {BROOK_VERSION} (Redis {VERSION} protocol) started, port {config.port}, "
            f"pid {self.pid}",
        )
        self.log("notice", "Ready to accept connections tcp")
        self.loop.create_task(self._cron())

    async def serve_forever(self) -> None:
        await self.start()
        assert self.shutdown_event is not None
        await self.shutdown_event.wait()

    def _on_signal(self, sig: int) -> None:
        name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
        self.log("warning", f"Received {name} scheduling shutdown...")
        self.shutdown()

    def shutdown(self) -> None:
        """Stop accepting, close every client, run shutdown hooks (persistence), then exit."""
        if self.shutdown_event is None or self.shutdown_event.is_set():
            return
        self.log("warning", "User requested shutdown...")
        for hook in self.shutdown_hooks:
            hook()
        for listener in self.listeners:
            listener.close()
        for client in list(self.clients.values()):
            client.kill()
        if self.config.pidfile:
            try:
                os.unlink(self.config.pidfile)
            except OSError:
                pass
        self.log("warning", "Brook is now ready to exit, bye bye...")
        self.shutdown_event.set()

    async def _cron(self) -> None:
        """Periodic work, ``hz`` times a second: active expiry, idle timeouts, ops/sec samples."""
        while self.shutdown_event is not None and not self.shutdown_event.is_set():
            period = 1.0 / max(self.config.hz, 1)
            await asyncio.sleep(period)
            self.keyspace.active_expire_cycle(period * 0.25)
            self._close_idle_clients()
            self.ops_samples.append((time.monotonic(), self.total_commands()))

    def _close_idle_clients(self) -> None:
        timeout = self.config.timeout
        if not timeout:
            return
        limit = time.time() - timeout
        for client in list(self.clients.values()):
            if client.last_interaction < limit and not client.is_monitor:
                self.log("verbose", "Closing idle client")
                client.kill()

    def instantaneous_ops_per_sec(self) -> int:
        if len(self.ops_samples) < 2:
            return 0
        (t0, c0), (t1, c1) = self.ops_samples[0], self.ops_samples[-1]
        return int((c1 - c0) / (t1 - t0)) if t1 > t0 else 0


def _is_loopback(peer: object) -> bool:
    if not isinstance(peer, tuple):
        return True  # unix socket
    try:
        return ipaddress.ip_address(peer[0]).is_loopback
    except ValueError:
        return False


_REPR_ESCAPES = {
    ord("\\"): b"\\\\", ord('"'): b'\\"', ord("\n"): b"\\n", ord("\r"): b"\\r",
    ord("\t"): b"\\t", 7: b"\\a", 8: b"\\b",
}


def quote_arg(arg: bytes) -> bytes:
    """Redis's ``sdscatrepr``: a double-quoted string with C escapes and \\xHH for the rest."""
    parts = [b'"']
    for byte in arg:
        escaped = _REPR_ESCAPES.get(byte)
        if escaped is not None:
            parts.append(escaped)
        elif 32 <= byte < 127:
            parts.append(bytes((byte,)))
        else:
            parts.append(b"\\x%02x" % byte)
    parts.append(b'"')
    return b"".join(parts)
