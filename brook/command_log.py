"""What the dispatcher records of the commands it runs: the slow log and MONITOR's feed.

Both show a command as Redis does: secrets redacted (AUTH, HELLO AUTH, MIGRATE's credentials,
sensitive CONFIG SET values, ACL users and rules), arguments quoted as ``sdscatrepr`` quotes
them (MONITOR), long argument lists and values shortened (the slow log). The dispatcher owns
one :class:`SlowLog` and one :class:`Monitors`; the SLOWLOG and MONITOR commands read them.

Imports: the command table, the configuration's table (which CONFIG SET values are secret),
sessions for typing.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from brook.commands.registry import Command
from brook.config.parameters import lookup as lookup_parameter

if TYPE_CHECKING:
    from brook.config.store import Config
    from brook.session import Session

SLOWLOG_MAX_ARGS: Final = 32
SLOWLOG_MAX_ARG_LEN: Final = 128
REDACTED: Final = b"(redacted)"


class SlowlogEntry:
    __slots__ = ("id", "timestamp", "duration_us", "args", "addr", "name")

    def __init__(self, entry_id: int, duration_us: int, args: list[bytes], client: Session) -> None:
        self.id = entry_id
        self.timestamp = int(time.time())
        self.duration_us = duration_us
        kept = [
            a if len(a) <= SLOWLOG_MAX_ARG_LEN
            else a[:SLOWLOG_MAX_ARG_LEN] + b"... (%d more bytes)" % (len(a) - SLOWLOG_MAX_ARG_LEN)
            for a in args[:SLOWLOG_MAX_ARGS]
        ]
        if len(args) > SLOWLOG_MAX_ARGS:
            kept[-1] = b"... (%d more arguments)" % (len(args) - SLOWLOG_MAX_ARGS + 1)
        self.args = kept
        self.addr = client.addr
        self.name = client.name


class SlowLog:
    """The slow log (at most ``slowlog-max-len`` entries, newest first) and the threshold the
    dispatcher times commands against: the lower of the slow log's and the latency monitor's,
    so one comparison per timed command decides whether either wants it."""

    __slots__ = ("config", "entries", "next_id", "threshold", "log_seconds", "latency_add")

    def __init__(self, config: Config, latency_add: Callable[[str, int], None]) -> None:
        self.config = config
        self.entries: deque[SlowlogEntry] = deque()
        self.next_id = 0
        self.threshold = float("inf")
        self.log_seconds = float("inf")
        self.latency_add = latency_add  # the latency monitor's "command" events
        self.update_thresholds()

    def update_thresholds(self) -> None:
        """slowlog-log-slower-than or latency-monitor-threshold changed."""
        slower_than = self.config.slowlog_log_slower_than
        self.log_seconds = float("inf") if slower_than < 0 else slower_than / 1e6
        latency_ms = self.config.latency_monitor_threshold
        latency_seconds = latency_ms / 1e3 if latency_ms > 0 else float("inf")
        self.threshold = min(self.log_seconds, latency_seconds)

    def trim(self) -> None:
        """slowlog-max-len or slowlog-log-slower-than changed: Redis trims the log after each
        command while it is on, so a lower limit takes effect once the CONFIG SET that set it
        has succeeded. A log turned off (a limit of 0, a threshold below 0) stays as it is:
        Redis 7.2+ trims it only while on."""
        max_len = self.config.slowlog_max_len
        if self.config.slowlog_log_slower_than < 0:
            return
        while max_len and len(self.entries) > max_len:
            self.entries.pop()

    def add(self, client: Session, cmd: Command, args: list[bytes], elapsed: float) -> None:
        """A command ran longer than :attr:`threshold`: record it in the slow log and/or as a
        latency sample, whichever thresholds it reached."""
        if "skip_slowlog" in cmd.flags:
            return  # EXEC: the commands it ran are logged one by one
        max_len = self.config.slowlog_max_len
        if elapsed >= self.log_seconds and max_len:
            entries = self.entries
            entries.appendleft(SlowlogEntry(self.next_id, int(elapsed * 1e6),
                                            redact(cmd, args), client))
            self.next_id += 1
            while len(entries) > max_len:
                entries.pop()
        threshold_ms = self.config.latency_monitor_threshold
        latency_ms = int(elapsed * 1000)
        if threshold_ms > 0 and latency_ms >= threshold_ms:
            self.latency_add("fast-command" if "fast" in cmd.flags else "command", latency_ms)


class Monitors:
    """The clients in MONITOR mode, and the line each command is shown to them as."""

    __slots__ = ("clients",)

    def __init__(self) -> None:
        self.clients: list[Session] = []

    def feed(self, client: Session, cmd: Command, args: list[bytes],
             explicit: bool = False) -> None:
        """Send a MONITOR line: ``+<time> [<db> <addr>] "arg" ...``, arguments quoted as Redis
        does. Administrative commands are never shown and secrets are redacted, as in Redis.
        ``skip_monitor`` commands (EVAL, FCALL) show themselves, ``explicit``ly, before the
        commands they run."""
        if "admin" in cmd.flags or ("skip_monitor" in cmd.flags and not explicit):
            return
        line = b'+%.6f [%d %s] %s\r\n' % (
            time.time(), client.db.index, client.addr.encode(),
            b" ".join(quote_arg(a) for a in redact(cmd, args)),
        )
        for monitor in self.clients:
            if monitor is not client:
                monitor.push(line)


def redact(cmd: Command, args: list[bytes]) -> list[bytes]:
    """Hide secrets from the slow log and MONITOR as Redis does: AUTH's arguments, HELLO's
    AUTH pair, MIGRATE's AUTH/AUTH2 credentials, sensitive CONFIG SET values and the users and
    rules of ACL SETUSER, GETUSER and DELUSER become ``(redacted)``."""
    if cmd.name == "auth":
        return [args[0]] + [REDACTED] * (len(args) - 1)
    if cmd.fullname in ("acl|setuser", "acl|deluser", "acl|getuser"):
        return args[:2] + [REDACTED] * (len(args) - 2)
    if cmd.name == "hello":
        shown = list(args)
        position = 2
        while position < len(args):
            option = args[position].lower()
            if option == b"auth" and position + 2 < len(args):
                shown[position + 1] = shown[position + 2] = REDACTED
                position += 3
            else:
                position += 2 if option == b"setname" else 1
        return shown
    if cmd.name == "migrate":  # AUTH password, AUTH2 username password
        shown = list(args)
        position = 6
        while position < len(args):
            option = args[position].lower()
            if option == b"keys":
                break
            width = 1 if option == b"auth" else 2 if option == b"auth2" else 0
            shown[position + 1:position + 1 + width] = [REDACTED] * len(
                shown[position + 1:position + 1 + width])
            position += 1 + width
        return shown
    if cmd.fullname == "config|set":
        shown = list(args)
        for index in range(2, len(args) - 1, 2):
            param = lookup_parameter(args[index].decode("utf-8", "replace"))
            if param is not None and param.sensitive:
                shown[index + 1] = REDACTED
        return shown
    return args


_REPR_ESCAPES: Final = {
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
