"""Replaying an append-only file into the keyspace at start-up.

The file is read in large chunks and parsed with hiredis; each command runs through the
dispatcher (:meth:`brook.dispatch.Dispatcher.call`) on a session that is never connected, as
Redis's fake AOF client does. MULTI ... EXEC blocks are
buffered and applied together, so a transaction cut by a crash is dropped whole.

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
from typing import TYPE_CHECKING, Final, NoReturn

import hiredis

from brook.commands.registry import Command, CommandError
from brook.commands.streams import append_explicit
from brook.persistence.aof import encoded_size
from brook.protocol.requests import is_request, parse_strict_int
from brook.session import Session

if TYPE_CHECKING:
    from brook.server import Server

__all__ = ["AofError", "LoadResult", "apply_master_stream", "load_file", "valid_prefix"]

# Bytes fed to hiredis at a time: it moves its unread buffer after every reply it returns,
# which with 1 MiB feeds was two thirds of replaying an AOF of XADDs.
_CHUNK: Final = 1 << 14
_XADD: Final = (b"XADD", b"xadd")  # the AOF's spelling, and the usual one of clients
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


def apply_master_stream(replayer: Replayer, reader: hiredis.Reader, acks: list[int]) -> int:
    """Run the complete commands ``reader`` holds of a master's replication stream; returns
    the bytes they took (the replica's offset moves by them). Where a ``REPLCONF GETACK``
    was, the bytes before it go to ``acks``: the replica answers with its offset there, not
    counting the GETACK, as Redis. PING is only counted. A command that fails is logged (the
    master ran it: the replica cannot refuse it). Compiled, with hiredis parsing: a replica
    applies its master's writes at AOF-replay cost."""
    used = 0
    while True:
        argv = reader.gets()
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
                replayer.server.log("warning", "== CRITICAL == This replica failed to apply a "
                                               f"command from its master: {err}")
        used += size


def valid_prefix(data: bytes, limit: int = -1, start: int = 0) -> tuple[int, int, str | None]:
    """Scan ``data`` as RESP arrays of bulk strings: (commands, bytes) of its longest complete
    prefix, and the reason it stops there (None at a clean end, ``"truncated"`` when the data
    ends inside a command, otherwise a description of the corruption). With ``limit`` the scan
    stops after that many commands; ``start`` is where the scan begins (offsets stay absolute)."""
    pos = start
    end = len(data)
    commands = 0
    while pos < end and commands != limit:
        start = pos
        if data[pos] != 0x2A:  # '*'
            return commands, start, f"expected '*', got {data[pos:pos + 1]!r}"
        count, newline = _length_line(data, pos)
        if newline < 0:
            return commands, start, "truncated"
        if count is None or count < 1:
            return commands, start, "invalid array length"
        pos = newline + 2
        for _ in range(count):
            if pos >= end:
                return commands, start, "truncated"
            if data[pos] != 0x24:  # '$'
                return commands, start, f"expected '$', got {data[pos:pos + 1]!r}"
            size, newline = _length_line(data, pos)
            if newline < 0:
                return commands, start, "truncated"
            if size is None or size < 0:
                return commands, start, "invalid bulk length"
            pos = newline + 2 + size
            if pos + 2 > end:
                return commands, start, "truncated"
            if data[pos:pos + 2] != b"\r\n":
                return commands, start, "bulk string not terminated by CRLF"
            pos += 2
        commands += 1
    return commands, pos, None


def _length_line(data: bytes, pos: int) -> tuple[int | None, int]:
    """The number of the ``*n`` / ``$n`` line at ``pos`` (None when it is not one, read
    strictly as the request parser reads it) and where the line ends (-1: no CRLF yet)."""
    newline = data.find(b"\r\n", pos)
    if newline < 0:
        return None, -1
    return parse_strict_int(data[pos + 1:newline]), newline


class Replayer:
    """Runs the file's commands on a detached session."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.dispatcher = server.dispatcher
        self.client = Session(server)
        self.client.authenticated = True
        self.client.replaying = True
        self.table = server.command_table
        self.transaction: list[tuple[Command, list[bytes]]] | None = None
        self.multi_at = 0  # index of the command that opened ``transaction``

    def resolve(self, argv: list[bytes]) -> Command:
        cmd = self.table.get(argv[0]) or self.table.get(argv[0].lower())
        if cmd is None:
            name = argv[0].decode("utf-8", "replace")
            raise AofError(f"Unknown command '{name}' reading the append only file")
        if cmd.subcommands and len(argv) >= 2:
            sub = cmd.subcommands.get(argv[1].lower())
            if sub is not None:
                cmd = sub
        if cmd.handler is None or not cmd.min_args <= len(argv) <= cmd.max_args:
            raise AofError(
                f"Wrong number of arguments for '{cmd.fullname}' reading the append only file"
            )
        return cmd

    def run(self, argv: list[bytes], index: int) -> None:
        """Run the ``index``-th command of the file (0-based)."""
        if (self.transaction is None and len(argv) >= 5 and len(argv) & 1
                and argv[0] in _XADD and self._xadd(argv)):
            return
        name = argv[0].lower()
        if name == b"multi":
            self.transaction = []
            self.multi_at = index
            return
        if name == b"exec":
            queued = self.transaction or []
            self.transaction = None
            for cmd, args in queued:
                self._call(cmd, args)
            return
        cmd = self.resolve(argv)
        if self.transaction is not None:
            self.transaction.append((cmd, argv))
        else:
            self._call(cmd, argv)

    def _xadd(self, argv: list[bytes]) -> bool:
        """An XADD with a plain explicit ID, what a stream's AOF is made of: run by the
        handler's fast path directly, without the resolution, the dispatcher and the reply
        around it (4,000 instructions of a replayed XADD), whose statistics, MONITOR feed and
        persistence a replayed command skips anyway. False, having changed nothing, when it
        does not apply: the general path then runs it, with its replies and error counts."""
        client = self.client
        try:
            done = append_explicit(client, argv) >= 0
        except CommandError:
            return False
        except Exception as err:
            raise AofError(f"Error replaying 'xadd' from the append only file: {err!r}") from err
        client.out.clear()
        client.effects = None
        return done

    def _call(self, cmd: Command, argv: list[bytes]) -> None:
        """A failed command changed nothing, as when it first ran; a bug stops the load
        (starting with a diverged dataset would be worse)."""
        client = self.client
        try:
            self.dispatcher.call(client, cmd, argv)
        except Exception as err:
            raise AofError(f"Error replaying '{cmd.fullname}' from the append only file: "
                           f"{err!r}") from err
        client.out.clear()
        client.effects = None


async def load_file(server: Server, path: str, truncate_ok: bool,
                    log: Callable[[str, str], None]) -> LoadResult:
    """Replay ``path`` into ``server``'s keyspace. Raises AofError when it cannot be loaded."""
    result = LoadResult()
    started = time.monotonic()
    size = os.path.getsize(path)
    replayer = Replayer(server)
    reader = hiredis.Reader()
    last_yield = last_progress = started
    complete = 0  # commands parsed completely
    # hiredis also accepts simple strings ("+x") where bulk strings belong: a file of bulk
    # strings only has exactly one CRLF per array header and two per argument (unless values
    # hold CRLFs), so the counts, kept at C speed, decide whether an exact scan must judge.
    arguments = 0
    crlfs = 0
    previous_last = 0  # the last byte of the previous chunk (a CRLF may straddle chunks)
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            if not chunk:
                break
            reader.feed(chunk)
            result.loaded_bytes += len(chunk)
            crlfs += chunk.count(b"\r\n") + (previous_last == 0x0D and chunk[0] == 0x0A)
            previous_last = chunk[-1]
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
    if not reader.has_data() and crlfs != complete + 2 * arguments:
        with open(path, "rb") as handle:
            _commands, valid, reason = valid_prefix(handle.read())
        if reason is not None:
            raise AofError(_bad_format(path, valid, reason))
    if reader.has_data() or replayer.transaction is not None:
        # The file ends inside a command, or inside MULTI ... EXEC: keep the complete prefix.
        with open(path, "rb") as handle:
            data = handle.read()
        commands, valid, reason = valid_prefix(data)
        if reason not in (None, "truncated"):
            raise AofError(_bad_format(path, valid))
        if replayer.transaction is not None:  # drop the open MULTI and what follows it
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
