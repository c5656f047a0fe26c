"""The server's persistence: what is loaded at start, the AOF's life, snapshots, rewrites.

One object per server. The server calls :meth:`Persistence.startup` once its listeners are open
(clients that connect during the load get ``-LOADING``), :meth:`tick` from its cron and
:meth:`shutdown` when it stops; commands reach the AOF through the dispatcher
(``Dispatcher.persist``).

BGSAVE and BGREWRITEAOF fork, as Redis does: the child sees the dataset frozen at the fork
(copy-on-write) and writes it while the parent keeps serving. During a rewrite the parent also
keeps every change in a rewrite buffer, appended to the child's file before it replaces the
AOF, so no write accepted meanwhile is lost. One child runs at a time; a rewrite asked for
during a BGSAVE is scheduled for when it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING

from brook.persistence.aof import AppendOnlyFile, encode_command
from brook.persistence.dataset import SnapshotError, load_dataset, write_dataset
from brook.persistence.loader import AofError, load_file
from brook.persistence.rewrite import rewrite_commands
from brook.scripting.functions import FunctionError

if TYPE_CHECKING:
    from brook.context import ServerContext

__all__ = ["Persistence", "PersistenceError"]

_BGSAVE_RETRY_DELAY = 5  # seconds before save points retry a failed BGSAVE (Redis's delay)
_REWRITE_BATCH = 1 << 20  # bytes of encoded commands per write while rewriting


class PersistenceError(Exception):
    """The server cannot start with the data it has (the message is logged before exit)."""


class _Child:
    """A forked saver: its pid, what it writes and when it started."""

    def __init__(self, kind: str, pid: int, path: str, dirty_at_fork: int,
                 for_replicas: bool = False) -> None:
        self.kind = kind  # "rdb" (snapshot) or "aof" (rewrite)
        self.for_replicas = for_replicas  # a snapshot for replicas' full synchronisation
        self.pid = pid
        self.path = path  # the temporary file it writes
        self.dirty_at_fork = dirty_at_fork
        self.started = time.monotonic()


def write_rewrite(server: ServerContext, path: str) -> None:
    """Write the commands that rebuild the whole dataset to ``path`` and fsync it."""
    with open(path, "wb") as out:
        batch: list[bytes] = []
        size = 0
        for command in rewrite_commands(server.keyspace,
                                        libraries=server.scripting.functions.codes()):
            encoded = encode_command(command)
            batch.append(encoded)
            size += len(encoded)
            if size >= _REWRITE_BATCH:
                out.write(b"".join(batch))
                batch.clear()
                size = 0
        out.write(b"".join(batch))
        out.flush()
        os.fsync(out.fileno())


class Persistence:
    def __init__(self, server: ServerContext) -> None:
        self.server = server
        self.loading_started = 0.0
        self.loading_total_bytes = 0
        self.child: _Child | None = None
        self.rewrite_scheduled = False
        self.bgsave_scheduled = False
        self.last_bgsave_try = 0.0
        self.last_bgsave_seconds = -1
        self.last_rewrite_seconds = -1
        self.last_rewrite_ok = True
        self.rewrites = 0
        self.rewrite_failures = 0  # consecutive failed rewrites
        self.last_load_keys = 0  # keys loaded from the last snapshot
        self.last_load_expired = 0
        # The file start-up loads and whether it is the AOF (plan_startup).
        self.startup_load: tuple[str, bool] | None = None

    # -- start-up ---------------------------------------------------------------------------

    def plan_startup(self) -> None:
        """Decide what start-up loads (the AOF when enabled, as Redis prefers it, else the
        snapshot) and mark the server loading *before* the listeners open: opening a second
        listener yields to the event loop, and a client accepted by the first one meanwhile
        must be told LOADING, never served from the still empty dataset."""
        config = self.server.config
        aof_path = config.appendfilename
        if config.appendonly and os.path.exists(aof_path) and os.path.getsize(aof_path) > 0:
            self.startup_load = (aof_path, True)
        elif os.path.exists(config.dbfilename):
            self.startup_load = (config.dbfilename, False)
        else:
            return
        self._begin_loading(os.path.getsize(self.startup_load[0]))

    async def startup(self) -> None:
        """Load what :meth:`plan_startup` chose, then open the AOF. An AOF that does not
        exist yet starts as a rewrite of what the snapshot held, so the AOF alone always
        describes the whole dataset."""
        planned, self.startup_load = self.startup_load, None
        try:
            if planned is not None:
                path, is_aof = planned
                if is_aof:
                    await self._load_aof(path)
                else:
                    self._load_snapshot(path)
        finally:
            if self.server.loading:
                self._end_loading()
        if planned is not None and planned[1]:
            self.open_aof(planned[0])
        elif self.server.config.appendonly:
            self.enable_aof()

    async def _load_aof(self, path: str) -> None:
        server = self.server
        try:
            result = await load_file(server.make_replayer(), path,
                                     server.config.aof_load_truncated, server.log)
        except AofError as err:
            raise PersistenceError(str(err)) from err
        server.log("notice", f"DB loaded from append only file: {result.seconds:.3f} seconds")

    def _load_snapshot(self, path: str) -> None:
        server = self.server
        started = time.monotonic()
        libraries: list[bytes] = []
        try:
            self.last_load_keys = load_dataset(server.keyspace, path, server.config, libraries,
                                               server.config.key_load_delay)
            server.scripting.functions.load_libraries(libraries)
        except FunctionError as err:
            raise PersistenceError(f"Fatal error loading the functions of {path}: {err}") from err
        except SnapshotError as err:
            raise PersistenceError(
                f"Fatal error loading the snapshot {path}: {err}. Brook reads Redis's RDB files "
                "(versions 1 to 12) and its own snapshot format (docs/snapshot-format.md)."
            ) from err
        server.log("notice", f"DB loaded from disk: {time.monotonic() - started:.3f} seconds")

    def _begin_loading(self, total_bytes: int) -> None:
        server = self.server
        server.loading = True
        self.loading_started = time.time()
        self.loading_total_bytes = total_bytes
        server.keyspace.clock.loading = True
        for client in server.clients.values():
            client.refresh_mode()

    def _end_loading(self) -> None:
        server = self.server
        server.loading = False
        server.keyspace.clock.loading = False
        for client in server.clients.values():
            client.refresh_mode()

    def open_aof(self, path: str) -> None:
        server = self.server
        server.attach_aof(AppendOnlyFile(path, server.config.appendfsync))

    def enable_aof(self) -> None:
        """Start an AOF that holds the current dataset (start-up with no AOF yet, CONFIG SET
        appendonly yes): written at once, then appended to."""
        path = self.server.config.appendfilename
        temp = f"temp-rewriteaof-{os.getpid()}.aof"
        write_rewrite(self.server, temp)
        os.replace(temp, path)
        _fsync_directory(path)
        self.open_aof(path)

    def synced_from_master(self) -> None:
        """A replica loaded its master's snapshot: an open AOF starts again from it, as
        Redis restarts the AOF after a full synchronisation."""
        if self.server.aof is not None:
            self.disable_aof()
            self.enable_aof()

    def disable_aof(self) -> None:
        """CONFIG SET appendonly no: sync and close the file; a running rewrite is dropped."""
        server = self.server
        if self.child is not None and self.child.kind == "aof":
            self._kill_child()
        aof = server.aof
        if aof is not None:
            aof.close()
        server.attach_aof(None)

    # -- snapshots --------------------------------------------------------------------------

    def save(self) -> None:
        """SAVE: write the snapshot now, in the foreground. Raises OSError on failure."""
        server = self.server
        started = time.monotonic()
        try:
            write_dataset(server.keyspace, server.config.dbfilename, server.config,
                          server.scripting.functions.codes(), server.config.rdb_key_save_delay)
        except OSError as err:  # Redis's rdbSave: the background status stays as it was
            server.log("warning", f"Failed saving the DB: {err.strerror or err}")
            raise
        server.log("notice", "DB saved on disk")
        self._saved(server.dirty, time.monotonic() - started)

    def _saved(self, dirty_at_start: int, seconds: float) -> None:
        server = self.server
        server.dirty -= dirty_at_start
        server.last_save_time = int(time.time())
        server.rdb_saves += 1
        self._bgsave_status(True)
        self.last_bgsave_seconds = int(seconds)

    def _bgsave_status(self, ok: bool) -> None:
        """Record how the last snapshot went: while it failed, clients take the general path,
        where writes may be refused (MISCONF, stop-writes-on-bgsave-error)."""
        server = self.server
        if ok == server.last_bgsave_ok:
            return
        server.last_bgsave_ok = ok
        for client in server.clients.values():
            client.refresh_mode()

    def bgsave(self, for_replicas: bool = False, redis_file: bool = False) -> None:
        """Fork a child that writes the snapshot. The caller checked no child runs.
        ``for_replicas``: the snapshot goes to the replicas waiting for a full
        synchronisation, not to the dump file (Redis's diskless sync leaves none either);
        ``redis_file``: in Redis's RDB format whatever ``snapshot-format`` says."""
        server = self.server
        temp = f"temp-{os.getpid()}.brook"
        if not for_replicas:
            self.last_bgsave_try = time.monotonic()
        pid = self._fork()
        if pid == 0:
            code = 1
            try:
                write_dataset(server.keyspace, temp, server.config,
                              server.scripting.functions.codes(),
                              server.config.rdb_key_save_delay, redis_file)
                code = 0
            finally:
                os._exit(code)
        self.child = _Child("rdb", pid, temp, server.dirty, for_replicas)
        server.log("notice", f"Background saving started by pid {pid}"
                   + (" for replication" if for_replicas else ""))

    # -- AOF rewrite ------------------------------------------------------------------------

    def bgrewriteaof(self) -> None:
        """Fork a child that writes the rewritten AOF; changes from now on are kept in the
        rewrite buffer until it is done. The caller checked no child runs."""
        server = self.server
        aof = server.aof
        if aof is not None:
            server.flush_effects()  # what is buffered is in memory already: the child writes it
            aof.rewrite_buffer = []
            server.effect_log.force_select()  # the buffer starts with a SELECT of its own
        temp = f"temp-rewriteaof-bg-{os.getpid()}.aof"
        pid = self._fork()
        if pid == 0:
            code = 1
            try:
                write_rewrite(server, temp)
                code = 0
            finally:
                os._exit(code)
        self.child = _Child("aof", pid, temp, server.dirty)
        self.rewrite_scheduled = False
        server.log("notice", f"Background append only file rewriting started by pid {pid}")

    def _rewrite_done(self, child: _Child) -> None:
        """Append what was written meanwhile, then swap the files."""
        server = self.server
        aof = server.aof
        path = server.config.appendfilename
        if aof is not None:
            server.flush_effects()
            pending = b"".join(aof.rewrite_buffer or [])
            aof.rewrite_buffer = None
            with open(child.path, "ab") as out:
                out.write(pending)
                out.flush()
                os.fsync(out.fileno())
        os.replace(child.path, path)
        _fsync_directory(path)
        if aof is not None:
            aof.reopen(path)
        self.rewrites += 1
        self.rewrite_failures = 0
        self.last_rewrite_ok = True
        self.last_rewrite_seconds = int(time.monotonic() - child.started)
        server.log("notice", "Background AOF rewrite finished successfully")

    # -- children ---------------------------------------------------------------------------

    def child_active(self) -> str | None:
        return None if self.child is None else self.child.kind

    def _fork(self) -> int:
        """Fork a saver, timing the fork in the parent as Redis does (INFO latest_fork_usec,
        total_forks, the ``fork`` latency event)."""
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            # The child only writes a file: no signal handlers, no event loop, no fsync thread.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return pid
        fork_usec = int((time.perf_counter() - started) * 1e6)
        stats = self.server.stats
        stats["total_forks"] += 1
        stats["latest_fork_usec"] = fork_usec
        self.server.latency_add("fork", fork_usec // 1000)
        return pid

    def _reap(self) -> None:
        child = self.child
        if child is None:
            return
        try:
            pid, status = os.waitpid(child.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = child.pid, 1 << 8
        if pid == 0:
            return
        self.child = None
        ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        server = self.server
        if child.for_replicas:
            self._snapshot_for_replicas(child.path, ok)
        elif child.kind == "rdb":
            if ok:
                try:
                    os.replace(child.path, server.config.dbfilename)
                except OSError as err:
                    ok = False
                    server.log("warning", f"Error moving temp DB file on the final "
                                          f"destination: {err.strerror or err}")
            if ok:
                server.log("notice", "Background saving terminated with success")
                self._saved(child.dirty_at_fork, time.monotonic() - child.started)
            else:
                self._bgsave_status(False)
                server.log("warning", "Background saving error")
                _remove(child.path)
        else:
            if ok:
                try:
                    self._rewrite_done(child)
                except OSError as err:
                    ok = False
                    server.log("warning", f"Background AOF rewrite failed: {err}")
            if not ok:
                self.last_rewrite_ok = False
                self.rewrite_failures += 1
                if server.aof is not None:
                    server.aof.rewrite_buffer = None
                server.log("warning", "Background AOF rewrite terminated with error")
                _remove(child.path)

    def _snapshot_for_replicas(self, path: str, ok: bool) -> None:
        data: bytes | None = None
        if ok:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError as err:
                self.server.log("warning", f"Reading the snapshot for replicas: {err}")
        _remove(path)
        self.server.replication.snapshot_ready(data)

    def _kill_child(self) -> None:
        child = self.child
        if child is None:
            return
        with contextlib.suppress(OSError):
            os.kill(child.pid, 9)
            os.waitpid(child.pid, 0)
        _remove(child.path)
        if child.kind == "aof" and self.server.aof is not None:
            self.server.aof.rewrite_buffer = None
        self.child = None
        if child.for_replicas:
            self.server.replication.snapshot_ready(None)

    # -- cron -------------------------------------------------------------------------------

    def tick(self) -> None:
        server = self.server
        aof = server.aof
        if aof is not None:
            if server.aof_write_failed:
                server.flush_effects()  # retry the write that failed
            aof.tick(server.replication.offset)
            server.check_aof_status()  # a background fsync may have failed
        self._reap()
        if self.child is not None:
            return
        if self.rewrite_scheduled:
            self.bgrewriteaof()
            return
        now = time.monotonic()
        config = server.config
        if self.bgsave_scheduled or (
            server.dirty and config.save
            and (server.last_bgsave_ok or now - self.last_bgsave_try > _BGSAVE_RETRY_DELAY)
            and any(server.dirty >= changes and time.time() - server.last_save_time >= seconds
                    for seconds, changes in config.save)
        ):
            self.bgsave_scheduled = False
            self.bgsave()
            return
        if aof is not None and config.auto_aof_rewrite_percentage:
            base = aof.base_size or 1
            growth = (aof.size - base) * 100 // base
            if aof.size >= config.auto_aof_rewrite_min_size and \
                    growth >= config.auto_aof_rewrite_percentage:
                server.log("notice", f"Starting automatic rewriting of AOF on {growth}% growth")
                self.bgrewriteaof()

    # -- shutdown ---------------------------------------------------------------------------

    def shutdown(self, save: bool) -> None:
        """Stop a running child, save the snapshot when asked, flush and fsync the AOF."""
        self._kill_child()
        if save:
            self.save()
        aof = self.server.aof
        if aof is not None:
            self.server.log("notice", "Calling fsync() on the AOF file.")
            aof.close()
            self.server.attach_aof(None)

    def fsync_policy_changed(self) -> None:
        aof = self.server.aof
        if aof is not None:
            aof.fsync_policy = self.server.config.appendfsync

    # -- INFO -------------------------------------------------------------------------------

    def info(self) -> list[str]:
        """The persistence section, with Redis's field names."""
        server = self.server
        child = self.child
        now = time.monotonic()
        lines = ["loading:1" if server.loading else "loading:0", "async_loading:0"]
        if server.loading:
            lines += [
                f"loading_start_time:{int(self.loading_started)}",
                f"loading_total_bytes:{self.loading_total_bytes}",
            ]
        rdb_child = child is not None and child.kind == "rdb"
        aof_child = child is not None and child.kind == "aof"
        aof = server.aof
        lines += [
            "current_cow_peak:0",
            "current_cow_size:0",
            "current_cow_size_age:0",
            "current_fork_perc:0.00",
            "current_save_keys_processed:0",
            "current_save_keys_total:0",
            f"rdb_changes_since_last_save:{server.dirty}",
            f"rdb_bgsave_in_progress:{int(rdb_child)}",
            f"rdb_last_save_time:{server.last_save_time}",
            f"rdb_last_bgsave_status:{'ok' if server.last_bgsave_ok else 'err'}",
            f"rdb_last_bgsave_time_sec:{self.last_bgsave_seconds}",
            "rdb_current_bgsave_time_sec:"
            f"{int(now - child.started) if rdb_child and child else -1}",
            f"rdb_saves:{server.rdb_saves}",
            "rdb_last_cow_size:0",
            f"rdb_last_load_keys_expired:{self.last_load_expired}",
            f"rdb_last_load_keys_loaded:{self.last_load_keys}",
            f"aof_enabled:{int(aof is not None)}",
            f"aof_rewrite_in_progress:{int(aof_child)}",
            f"aof_rewrite_scheduled:{int(self.rewrite_scheduled)}",
            f"aof_last_rewrite_time_sec:{self.last_rewrite_seconds}",
            "aof_current_rewrite_time_sec:"
            f"{int(now - child.started) if aof_child and child else -1}",
            f"aof_last_bgrewrite_status:{'ok' if self.last_rewrite_ok else 'err'}",
            f"aof_rewrites:{self.rewrites}",
            f"aof_rewrites_consecutive_failures:{self.rewrite_failures}",
            f"aof_last_write_status:{'ok' if aof is None or aof.last_write_ok else 'err'}",
            "aof_last_cow_size:0",
            "module_fork_in_progress:0",
            "module_fork_last_cow_size:0",
        ]
        if aof is not None:
            lines += [
                f"aof_current_size:{aof.size}",
                f"aof_base_size:{aof.base_size}",
                f"aof_pending_rewrite:{int(self.rewrite_scheduled)}",
                f"aof_buffer_length:{sum(map(len, aof.pending))}",
                f"aof_pending_bio_fsync:{int(aof.fsync_pending())}",
                f"aof_delayed_fsync:{aof.delayed_fsyncs}",
            ]
        return lines


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _fsync_directory(path: str) -> None:
    """Make a rename durable: fsync the directory that holds ``path``."""
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
