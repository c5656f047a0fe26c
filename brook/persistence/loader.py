"""Replaying an append-only file into the keyspace at start-up.

The file is read in large chunks and parsed with hiredis; each command runs through the
dispatcher's replay lane (:meth:`brook.dispatch.Dispatcher.replay`) on a session that is never
connected, as Redis's fake AOF client does. MULTI ... EXEC blocks are queued on that session as
a client's are and applied together by EXEC, so a transaction cut by a crash is dropped whole.

A file that ends inside a command (a crash mid-write) is loaded up to the last complete command
and, with ``aof-load-truncated yes``, truncated there with a warning. Anything else that is not
a RESP array of bulk strings is corruption: loading stops and the server refuses to start,
naming the offset, as Redis does. The load yields to the event loop regularly, so clients that
connect meanwhile get ``-LOADING``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NoReturn

import hiredis
from mypy_extensions import trait

from brook.commands.registry import WRONG_ARITY
from brook.persistence.aof import encoded_size
from brook.protocol.framing import line_feeds_of, valid_prefix
from brook.protocol.requests import ProtocolError, is_request

if TYPE_CHECKING:
    from brook.commands.registry import Command
    from brook.session import Session

__all__ = ["AofError", "LoadResult", "ReplayLane", "Replayer", "apply_master_stream",
           "load_file"]

# Bytes fed to hiredis at a time: it moves its unread buffer after every reply it returns,
# which with 1 MiB feeds was two thirds of replaying an AOF of XADDs.
_CHUNK: Final = 1 << 14
_YIELD_EVERY: Final = 0.05  # seconds of loading between turns of the event loop
_PROGRESS_EVERY: Final = 2.0  # seconds between progress lines in the log


class AofError(Exception):
    """The file cannot be loaded (corruption, an unknown command); the message says where."""


class LoadResult:
    """What a load found."""

    def __init__(self) -> None:
        self.commands = 0
        self.loaded_bytes = 0  # the valid prefix: everything up to the last complete command
        self.seconds = 0.0


def apply_master_stream(replayer: Replayer, next_request: Callable[[], Any],
                        acks: list[int]) -> int:
    """Run the complete commands ``next_request`` (a hiredis reader's ``gets``, framed by
    :mod:`brook.protocol.framing`) returns of a master's replication stream; returns
    the bytes they took (the replica's offset moves by them). Where a ``REPLCONF GETACK``
    was, the bytes before it go to ``acks``: the replica answers with its offset there, not
    counting the GETACK, as Redis. PING is only counted. A command that fails is logged (the
    master ran it: the replica cannot refuse it). Compiled, with hiredis parsing: a replica
    applies its master's writes at AOF-replay cost."""
    used = 0
    while True:
        try:
            argv = next_request()
        except ProtocolError as framing_error:  # (a name of its own: see test_compiled_source)
            raise AofError(f"Bad protocol from MASTER: {framing_error}") from framing_error
        if argv is False:
            return used
        if not argv or not is_request(argv):
            raise AofError("Bad protocol from MASTER: not a command")
        size = encoded_size(argv)
        first = argv[0]
        if len(first) == 8 and first.lower() == b"replconf":
            if len(argv) >= 2 and argv[1].lower() == b"getack":
                acks.append(used)
        elif len(first) != 4 or first.lower() != b"ping":
            try:
                replayer.run(argv, 0)
            except AofError as err:
                replayer.log("warning", "== CRITICAL == This replica failed to apply a "
                                        f"command from its master: {err}")
        used += size


@trait
class ReplayLane:
    """What replaying needs of the command path: the dispatcher's replay lane (brook.dispatch
    implements it; declared here so that persistence imports nothing above it, and compiled
    calls through it stay native)."""

    def replay(self, session: Session, args: list[bytes]) -> tuple[Command | None, int]:
        """Resolve and run one request as a replayed write: the command it resolved and
        registry.resolve's outcome."""
        raise NotImplementedError


class Replayer:
    """Applies a file's (or a master's) requests on a detached session (``client``, which
    the caller makes), through the dispatcher's replay lane; words what it cannot apply as
    Redis's loader does."""

    def __init__(self, lane: ReplayLane, client: Session,
                 log: Callable[[str, str], None]) -> None:
        self.lane = lane
        self.log = log
        self.client = client
        self.client.authenticated = True
        self.client.replaying = True
        self.multi_at = 0  # index of the command that opened the session's MULTI

    @property
    def in_transaction(self) -> bool:
        """Inside MULTI ... EXEC (a file that ends here was cut by a crash)."""
        return self.client.in_multi

    def reset(self) -> None:
        """Forget a transaction left open (a new master stream starts)."""
        self.client.discard_transaction()

    def run(self, argv: list[bytes], index: int) -> None:
        """Apply the ``index``-th request of the file (0-based)."""
        client = self.client
        opened = not client.in_multi
        try:
            cmd, found = self.lane.replay(client, argv)
        except Exception as err:
            name = argv[0].decode("utf-8", "replace").lower()
            raise AofError(f"Error replaying '{name}' from the append only file: "
                           f"{err!r}") from err
        if found == WRONG_ARITY and cmd is not None:
            raise AofError(f"Wrong number of arguments for '{cmd.fullname}' reading the append "
                           "only file")
        if found:
            name = argv[0].decode("utf-8", "replace")
            raise AofError(f"Unknown command '{name}' reading the append only file")
        if opened and client.in_multi:
            self.multi_at = index


async def load_file(replayer: Replayer, path: str, truncate_ok: bool,
                    log: Callable[[str, str], None]) -> LoadResult:
    """Replay ``path`` through ``replayer``. Raises AofError when it cannot be loaded."""
    result = LoadResult()
    started = time.monotonic()
    size = os.path.getsize(path)
    reader = hiredis.Reader()
    last_yield = last_progress = started
    complete = 0  # commands parsed completely
    # hiredis also accepts simple strings ("+x") where bulk strings belong: the file's line
    # feeds, counted at C speed, are those of its requests (framing.line_feeds_of) unless
    # values hold some or an element is no bulk string; then the exact scan judges.
    arguments = 0
    line_feeds = 0
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            if not chunk:
                break
            reader.feed(chunk)
            result.loaded_bytes += len(chunk)
            line_feeds += chunk.count(b"\n")
            while True:
                try:
                    argv = reader.gets()
                except hiredis.ProtocolError:
                    _fail_at(path, complete)
                if argv is False:
                    break
                if not argv or not is_request(argv):
                    _fail_at(path, complete)
                replayer.run(argv, complete)
                complete += 1
                arguments += len(argv)
            now = time.monotonic()
            if now - last_yield >= _YIELD_EVERY:
                if now - last_progress >= _PROGRESS_EVERY:
                    done = 100 * result.loaded_bytes // max(size, 1)
                    log("notice", f"Loading the append only file: {done}% "
                        f"({result.loaded_bytes} of {size} bytes, {complete} commands)")
                    last_progress = now
                await asyncio.sleep(0)
                last_yield = time.monotonic()
    result.commands = complete
    if not reader.has_data() and line_feeds != line_feeds_of(complete, arguments):
        with open(path, "rb") as handle:
            _commands, valid, reason = valid_prefix(handle.read())
        if reason is not None:
            raise AofError(_bad_format(path, valid, reason))
    if reader.has_data() or replayer.in_transaction:
        # The file ends inside a command, or inside MULTI ... EXEC: keep the complete prefix.
        with open(path, "rb") as handle:
            data = handle.read()
        commands, valid, reason = valid_prefix(data)
        if reason not in (None, "truncated"):
            raise AofError(_bad_format(path, valid))
        if replayer.in_transaction:  # drop the open MULTI and what follows it
            valid = valid_prefix(data, replayer.multi_at)[1]
        if not truncate_ok:
            raise AofError(
                f"Unexpected end of file reading the append only file {path}. You can: "
                "1) Make a backup of your AOF file, then use brook-check-aof --fix <filename>. "
                "2) Alternatively you can set the 'aof-load-truncated' configuration option to "
                "yes and restart the server."
            )
        log("warning", "!!! Warning: short read while loading the AOF file "
            f"{os.path.basename(path)}!!!")
        log("warning", f"AOF {os.path.basename(path)} loaded anyway because "
            "aof-load-truncated is enabled")
        with open(path, "r+b") as handle:
            handle.truncate(valid)
            os.fsync(handle.fileno())
        result.loaded_bytes = valid
    result.seconds = time.monotonic() - started
    return result


def _fail_at(path: str, complete: int) -> NoReturn:
    """Locate the first bad command and raise (the slow scan runs only on this path)."""
    with open(path, "rb") as handle:
        data = handle.read()
    _commands, valid, reason = valid_prefix(data)
    if reason is None or reason == "truncated":  # hiredis disagreed: report where we are
        raise AofError(_bad_format(path, valid))
    raise AofError(_bad_format(path, valid, reason))


def _bad_format(path: str, offset: int, reason: str | None = None) -> str:
    detail = f" ({reason})" if reason else ""
    return (
        f"Bad file format reading the append only file {path} at offset {offset}{detail}: "
        "make a backup of your AOF file, then use brook-check-aof --fix <filename> only if "
        "the damage is a truncated tail"
    )
