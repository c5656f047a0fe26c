"""The one command pipeline: every request, whoever asks for it, runs through here.

    request ─► execute: resolution (registry.resolve), then admission's one list of
                  │       refusals (brook.admission), then MULTI queueing
                  │       (a rejection is Redis's error and changes nothing)
                  ▼
              call ─► invoke: handler ─► error as reply ─► effects persisted
                  │
                  ▼
              account: commandstats, slow log; MONITOR
                  │
                  ▼
              reply (bytes), or None: parked (brook.blocking serves it through rerun, and
              unblocked counts it once)

Callers: the connection (:meth:`run_batch` for the requests of a read, :meth:`execute` for one
request of the exact parser), EXEC (:meth:`call` for each queued command), served blocking
waiters (:meth:`rerun`, :meth:`unblocked`), scripts (:meth:`call` after admission's SCRIPT
lane), the AOF loader and a replica's master stream (:meth:`replay`). It is sans-IO: a :class:`brook.session.Session` in, reply bytes and effects
out, so tests drive it without sockets.

Commandstats and the slow log. Redis times every command. Timing costs about a fifth of a
PING's dispatch here, so a command Redis flags ``fast`` (O(1), O(log N)) run by
:meth:`run_batch` is not timed on its own: the batch's fast commands are counted and share the
batch's time left over by the others (one clock read per timed command, one per batch).
A parked command is counted when it is unblocked, with the time its runs took, as Redis does.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from brook.admission import QUEUED, TOPLEVEL, WAITER, Admission
from brook.blocking import WaiterLane
from brook.cluster.routing import is_redirection
from brook.commands.registry import (
    NO_COMMAND,
    NO_SUBCOMMAND,
    WRONG_ARITY,
    Command,
    CommandError,
    resolve,
    text,
)
from brook.context import CommandPath
from brook.protocol import resp
from brook.protocol.requests import is_request
from brook.session import REPLY_ON, REPLY_SKIP, REPLY_SKIP_NEXT, Pushed

if TYPE_CHECKING:
    from brook.blocking import Waiter
    from brook.context import ServerContext
    from brook.session import Session

_perf = time.perf_counter

# Commands a client in MULTI runs at once instead of queueing (Redis's processCommand list).
_MULTI_IMMEDIATE: Final = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})
# The replies one read may produce before the rest of it waits for them to be written.
REPLY_BUDGET: Final = 1 << 20

def unknown_command_error(args: list[bytes]) -> str:
    """Redis's text: the name and up to about 128 bytes of quoted arguments, each followed by
    a space (C strings: each stops at a NUL)."""
    shown = ""
    size = 0
    for arg in args[1:]:
        if size >= 128:
            break
        quoted = "'%s' " % text(arg, 128 - size)
        size += len(quoted.encode("utf-8", "surrogateescape"))
        shown += quoted
    return f"ERR unknown command '{text(args[0], 128)}', with args beginning with: {shown}"


def arity_error(cmd: Command) -> str:
    return f"ERR wrong number of arguments for '{cmd.fullname}' command"


class Dispatcher(WaiterLane, CommandPath):
    """Runs commands for sessions: checks, handler, errors, persistence, stats, MONITOR. The
    lanes other parts call it through are declared where they are used: a served waiter's
    (blocking.WaiterLane), the AOF loader's and a replica's (persistence.loader.ReplayLane),
    and EXEC's and scripts' (context.CommandPath, which the server's parts see)."""

    def __init__(self, server: ServerContext) -> None:
        self.server = server
        self.table = server.command_table
        self._exec = self.table[b"exec"]
        self.admission = Admission(server)
        self.slowlog = server.slowlog
        self.monitors = server.monitors

    # -- a read's worth of requests (the connection's hot path) -----------------------------

    def run_batch(self, session: Session,
                  next_request: Callable[[], object]) -> tuple[int, int, list[bytes] | None, bool]:
        """Run the requests ``next_request`` returns (hiredis ``Reader.gets``: a request, or
        False when no complete one is left) in order, appending replies to ``session.out``.

        Returns how many requests were taken, their elements in all, the last one, and
        whether the batch stopped at a malformed request: one the reader cannot parse or
        whose elements are not all byte strings, which never runs (the caller's exact parser
        reports it). The batch also stops when a command parks the session or closes it.
        The caller keeps from the reader what it would read as a request of bytes although Redis
        would not (see brook.connection)."""
        server = self.server
        table = self.table
        slowlog = self.slowlog
        slowlog_threshold = slowlog.threshold
        # slowlog-log-slower-than 0 logs every command, in order: each fast one is timed too.
        share_fast_time = slowlog_threshold > 0.0
        out = session.out
        ready = server.keyspace.ready
        # maxmemory: while the estimate is within the limit, writes stay on this path (the
        # read's bytes are charged by the connection); over it, each goes through execute,
        # whose check evicts or refuses. A read can overshoot by what it writes, Redis by a
        # command.
        over_limit = False
        # Cluster mode: a request stays here only if routing's quick test says its keys are in
        # a slot served here outright (Admission.served_outright); any other goes through
        # execute, whose routing redirects or refuses it.
        cluster_mode = server.cluster is not None
        admission = self.admission
        if server.config.maxmemory:
            over_limit = not server.evictor.within_limit()
            if not over_limit:
                server.oom_before_command = False
        perf = _perf
        started = clock = perf()
        timed = 0.0  # time of the commands timed on their own
        fast_cmd: Command | None = None  # the (usually only) fast command kind of this batch
        fast_calls = 0
        fast_others: dict[Command, int] | None = None
        fast_request: list[bytes] | None = None
        taken = arguments = out_size = 0
        last: list[bytes] | None = None
        last_cmd: Command | None = None
        malformed = False
        while True:
            try:
                request = next_request()
            except Exception:  # the reader's protocol error
                malformed = True
                break
            if request is False:
                break
            if not is_request(request):  # an element of another type, or no array at all
                malformed = True
                break
            taken += 1
            arguments += len(request)  # type: ignore[arg-type]
            last = request  # type: ignore[assignment]
            if not request:
                continue  # "*0": nothing to run, as in Redis
            cmd = table.get(request[0])  # type: ignore[index]
            if (
                session.slow
                or cmd is None
                or cmd.handler is None
                or not cmd.min_args <= len(request) <= cmd.max_args  # type: ignore[arg-type]
                or over_limit and cmd.may_write
                or cluster_mode
                and not admission.served_outright(session, cmd, request)  # type: ignore[arg-type]
                # ACL: a denied request goes to execute, which checks it again and refuses it.
                or session.acl_user is not None
                and server.acl.check(session.acl_user, cmd, request) is not None  # type: ignore[arg-type]
            ):
                if session.closing:  # QUIT, or a protocol error: nothing more runs
                    taken -= 1
                    break
                last_cmd = None  # execute records it itself
                if not clock:
                    clock = perf()
                reply = self.execute(session, request)  # type: ignore[arg-type]
                now = perf()
                timed += now - clock  # execute timed it (or rejected it) itself
                clock = now
            else:
                # An admitted command of a fast session (no check of execute applies to it:
                # see Session.refresh_mode). This is invoke and account, written out: a call
                # per request is a tenth of a small command's cost here.
                last_cmd = cmd
                fast = cmd.is_fast and share_fast_time
                if not fast and not clock:
                    clock = perf()
                dirty = server.dirty
                try:
                    reply = cmd.handler(session, request)  # type: ignore[arg-type]
                except CommandError as err:
                    reply = self.error_reply(err.message, cmd)
                except Exception as bug:  # a bug must cost one reply, never the server
                    # (a name of its own: mypyc types ``err`` as CommandError above)
                    reply = self.internal_error(session, cmd, bug)
                if server.propagating and (server.dirty != dirty or session.effects is not None):
                    self.persist(session, request, reply is not None)  # type: ignore[arg-type]
                if fast:  # not timed one by one: charged at the end of the batch
                    if cmd is fast_cmd:
                        fast_calls += 1
                    elif fast_cmd is None:
                        fast_cmd, fast_calls = cmd, 1
                    else:
                        if fast_others is None:
                            fast_others = {}
                        fast_others[cmd] = fast_others.get(cmd, 0) + 1
                    fast_request = request  # type: ignore[assignment]
                    clock = 0.0  # stale: the next timed command reads the clock first
                else:
                    now = perf()
                    elapsed = now - clock
                    clock = now
                    timed += elapsed
                    if reply is None:
                        self.parked(session, elapsed)
                    else:  # account, written out as invoke is above
                        cmd.calls += 1
                        cmd.seconds += elapsed
                        if server.config.latency_tracking:
                            cmd.record_latency(elapsed)
                        if elapsed > slowlog_threshold:
                            slowlog.add(session, cmd, request, elapsed)  # type: ignore[arg-type]
            if reply is not None:
                out.append(reply)
                out_size += len(reply)
                if out_size > REPLY_BUDGET:
                    # Replies are piling up faster than they leave: the rest of the read waits
                    # until these are written (brook.connection), so one read cannot make the
                    # server hold more than a budget's worth of replies.
                    session.output_full = True
                    if ready:
                        server.blocking.serve_ready()
                    break
            elif session.blocked is not None:
                break  # parked: its later requests wait until it is served
            if ready:
                server.blocking.serve_ready()
        if last_cmd is not None:
            session.last_cmd = last_cmd
        if fast_cmd is not None:
            self._charge_fast(session, fast_cmd, fast_calls, fast_others,
                              perf() - started - timed, fast_request)
        return taken, arguments, last, malformed

    def _charge_fast(self, session: Session, cmd: Command, calls: int,
                     others: dict[Command, int] | None, seconds: float,
                     request: list[bytes] | None) -> None:
        """Credit the untimed fast commands of a batch with their calls and time (shared in
        proportion to calls). One fast command alone gets its exact time, and the slow log."""
        seconds = max(seconds, 0.0)
        tracking = self.server.config.latency_tracking
        if others is None:
            cmd.calls += calls
            cmd.seconds += seconds
            if tracking:
                cmd.record_latency(seconds / calls, calls)
            if calls == 1 and request is not None and seconds > self.slowlog.threshold:
                self.slowlog.add(session, cmd, request, seconds)
            return
        others[cmd] = others.get(cmd, 0) + calls
        total = sum(others.values())
        for each, count in others.items():
            each.calls += count
            each.seconds += seconds * count / total
            if tracking:
                each.record_latency(seconds / total, count)

    # -- one request with every check (Redis's processCommand) -----------------------------

    def execute(self, session: Session, args: list[bytes]) -> bytes | None:
        """Run one request with every check of Redis's processCommand; returns the reply
        (None: parked, or silenced by CLIENT REPLY)."""
        if not session.cluster_asking:
            return self._execute(session, args)
        reply = self._execute(session, args)
        # ASKING lasts one command, or the transaction it precedes (Redis's resetClient).
        if not session.in_multi and args[0].lower() != b"asking":
            session.cluster_asking = False
        return reply

    def _execute(self, session: Session, args: list[bytes]) -> bytes | None:
        cmd, found = resolve(self.table, args)
        if found == NO_COMMAND:
            return self._reject(session, unknown_command_error(args), None)
        assert cmd is not None
        if found == NO_SUBCOMMAND:
            return self._reject(
                session,
                "ERR unknown subcommand '%s'. Try %s HELP."
                % (text(args[1], 128), cmd.name.upper()),
                None,
            )
        message = (arity_error(cmd) if found == WRONG_ARITY
                   else self.admission.refusal(session, cmd, args, TOPLEVEL))
        if message is not None:
            return self._reject(session, message, cmd)
        if session.in_multi and self._queue(session, cmd, args):
            return self._apply_reply_mode(session, resp.QUEUED)
        server = self.server
        outer, server.current_client = server.current_client, session
        try:
            reply = self.call(session, cmd, args)
        finally:
            server.current_client = outer
        if session.tracking_caching:
            self._caching_used(session, cmd)
        if reply is None:  # parked: the reply mode in force now applies to its reply
            if session.blocked is not None:
                session.blocked.silent = session.reply_mode != REPLY_ON
            self._apply_reply_mode(session, None)
            if session.postponed:
                session.out.append(session.take_postponed())
            return None
        reply = self._apply_reply_mode(session, reply)
        if session.postponed:
            # What the command sent its own client comes after its whole reply (Redis 7.2+),
            # even under CLIENT REPLY OFF/SKIP, as pushes are. Only subscribed sessions get
            # any, and they never take run_batch's fast path.
            pushes = session.take_postponed()
            return Pushed(pushes) if reply is None else reply + pushes
        return reply

    @staticmethod
    def _queue(session: Session, cmd: Command, args: list[bytes]) -> bool:
        """Inside MULTI: queue the command for EXEC, unless it is one MULTI runs at once."""
        if (cmd.parent or cmd).name in _MULTI_IMMEDIATE:
            return False
        session.multi_queue.append((cmd, args))
        session.multi_bytes += sum(map(len, args))
        session.last_cmd = cmd
        return True

    # -- replaying the AOF or a master's stream ---------------------------------------------

    def replay(self, session: Session, args: list[bytes]) -> tuple[Command | None, int]:
        """Apply a request of the AOF or of a master's replication stream on ``session`` (a
        ``replaying`` one): resolved, never refused (what was written there already ran),
        queued inside MULTI as a client's request is, its reply discarded. Returns the
        resolution (:data:`~brook.commands.registry.RESOLVED` when it ran; the caller words a
        failure). A bug raises: starting from a diverged dataset would be worse."""
        cmd, found = resolve(self.table, args)
        if found:
            return cmd, found
        assert cmd is not None
        if session.in_multi and self._queue(session, cmd, args):
            return cmd, found
        shortcut = cmd.replay_shortcut
        applied = False
        if shortcut is not None and not session.in_multi:
            try:
                applied = shortcut(session, args)
            except CommandError:
                applied = False  # it changed nothing: the handler answers it
        if applied:
            if self.server.propagating:  # a replica's own AOF, as the handler's run would
                self.persist(session, args)
        else:
            self.call(session, cmd, args)
        session.out.clear()
        session.effects = None
        return cmd, found

    def _reject(self, session: Session, message: str, cmd: Command | None) -> bytes | None:
        """Refuse a request: inside MULTI the transaction will abort; a refused EXEC discards
        it now (Redis's rejectCommand and execCommandAbort)."""
        if session.in_multi:
            if cmd is not None and cmd is self._exec:
                session.discard_transaction()
                if not is_redirection(message):  # (a redirection is answered as it is)
                    message = f"EXECABORT Transaction discarded because of: {message}"
            else:
                session.multi_error = True
        if session.tracking_caching:
            self._caching_used(session, cmd)
        return self._apply_reply_mode(session, self.error_reply(message, cmd, rejected=True))

    @staticmethod
    def _caching_used(session: Session, cmd: Command | None) -> None:
        """CLIENT CACHING applies to the next command, or the next transaction, only (a CLIENT
        command between them keeps it), as Redis's resetClient."""
        if not session.in_multi and (cmd is None or (cmd.parent or cmd).name != "client"):
            session.tracking_caching = False

    @staticmethod
    def _apply_reply_mode(session: Session, reply: bytes | None) -> bytes | None:
        mode = session.reply_mode
        if mode == REPLY_ON:
            return reply
        if mode == REPLY_SKIP_NEXT:
            session.reply_mode = REPLY_SKIP
        elif mode == REPLY_SKIP:
            session.reply_mode = REPLY_ON
            session.refresh_mode()
        return reply if type(reply) is Pushed else None

    # -- running an admitted command --------------------------------------------------------

    def call(self, session: Session, cmd: Command, args: list[bytes]) -> bytes | None:
        """Run a command that passed every check: :meth:`invoke`, then commandstats, the slow
        log and MONITOR."""
        server = self.server
        session.last_cmd = cmd
        # CLIENT NO-TOUCH (such sessions always come through execute): a read-only command
        # leaves the access times of the keys it names as they were (TOUCH excepted).
        # Restoring them here keeps every lookup on the hot path free of a NO-TOUCH check.
        saved_access = None
        if session.no_touch and not cmd.is_write and cmd.name != "touch":
            data = session.db.data
            saved_access = {key: data.access(key) for key in cmd.key_positions_of(args)}
        started = _perf()
        reply = self.invoke(session, cmd, args)
        if server.tracking.count and "readonly" in cmd.flags:
            # Client-side caching: the keys it read are cached by the client it serves.
            server.tracking.remember(cmd, args)
        if saved_access is not None:
            session.db.restore_access(saved_access)
        if self.monitors.clients and not session.reprocessing and not session.replaying:
            # After the command, as Redis: a SELECT shows its new database. A parked command
            # is shown once, when it is first run.
            self.monitors.feed(session, cmd, args)
        elapsed = _perf() - started
        if reply is None or session.reprocessing:
            self.parked(session, elapsed)
            return reply
        self.account(session, cmd, args, elapsed)
        return reply

    def call_queued(self, session: Session, cmd: Command, args: list[bytes]) -> bytes | None:
        """A command of a transaction, run by EXEC: admission's QUEUED lane first (the user's
        rules may have changed since it was queued: the refused one gets its error in its
        slot, the others run), then :meth:`call`."""
        if session.acl_user is not None:
            message = self.admission.refusal(session, cmd, args, QUEUED)
            if message is not None:
                return resp.error(message)
        return self.call(session, cmd, args)

    @staticmethod
    def parked(session: Session, elapsed: float) -> None:
        """A run of a parked command: its time is counted once, when it is unblocked."""
        waiter = session.blocked
        if waiter is not None:
            waiter.seconds += elapsed

    def invoke(self, session: Session, cmd: Command, args: list[bytes]) -> bytes | None:
        """What every run of a command does: the handler, its error as a reply, and what it
        changed persisted (None: it parked)."""
        server = self.server
        dirty = server.dirty
        try:
            reply = cmd.handler(session, args)  # type: ignore[misc]
        except CommandError as err:
            reply = self.error_reply(err.message, cmd)
        except Exception as bug:  # a bug must cost one reply, never the server
            # (a name of its own: mypyc types ``err`` as CommandError above)
            reply = self.internal_error(session, cmd, bug)
        if server.propagating and (server.dirty != dirty or session.effects is not None):
            self.persist(session, args, reply is not None)
        return reply

    def account(self, session: Session, cmd: Command, args: list[bytes],
                elapsed: float) -> None:
        """Commandstats and the slow log for one finished command (not for replayed ones)."""
        if session.replaying:
            return
        cmd.calls += 1
        cmd.seconds += elapsed
        if self.server.config.latency_tracking:
            cmd.record_latency(elapsed)
        if elapsed > self.slowlog.threshold:
            self.slowlog.add(session, cmd, args, elapsed)

    def persist(self, session: Session, request: list[bytes], replied: bool = True) -> None:
        """Record what a command changed: its declared effects, else the request itself. A
        command that parked persists only the effects it declared (a consumer it created):
        its request is not what happened."""
        effects = session.effects
        session.effects = None
        server = self.server
        if not server.propagating:
            return
        if effects is None:
            encoded = session.encoded_effect
            if encoded is not None:
                session.encoded_effect = None
                server.effect_log.feed_encoded(session.db.index, encoded)
            elif replied:
                server.effect_log.feed(session.db.index, (request,))
        elif effects:
            server.effect_log.feed(session.db.index, effects)
        session.woff = server.replication.write_offset()  # what WAIT(AOF) waits for

    # -- parked commands (brook.blocking) ---------------------------------------------------

    def rerun(self, waiter: Waiter) -> bytes | None:
        """Run a parked command again to serve it; None: it still finds nothing."""
        session = waiter.client
        # The user's rules may have changed while it waited (Redis 7.2+ checks again).
        message = self.admission.refusal(session, waiter.cmd, waiter.args, WAITER)
        if message is not None:
            return self.error_reply(message, waiter.cmd, rejected=True)
        session.reprocessing = True
        server = self.server
        outer, server.current_client = server.current_client, session
        try:
            return self.call(session, waiter.cmd, waiter.args)
        finally:
            session.reprocessing = False
            server.current_client = outer

    def unblocked(self, waiter: Waiter) -> None:
        """A parked command ended (served, timed out, unblocked, failed): count it once, with
        the time its runs took, and enter it in the slow log, as Redis's updateStatsOnUnblock."""
        self.account(waiter.client, waiter.cmd, waiter.args, waiter.seconds)

    # -- a script's checks (the SCRIPT lane of admission) ------------------------------------

    def script_call_refusal(self, caller: Session, cmd: Command, args: list[bytes],
                            read_only: bool, wrote: bool, allow_oom: bool) -> str | None:
        return self.admission.script_call_refusal(caller, cmd, args, read_only, wrote,
                                                  allow_oom)

    def script_cluster_refusal(self, caller: Session, cmd: Command, args: list[bytes],
                               slot: int, cross_slot: bool) -> tuple[str | None, int]:
        return self.admission.script_cluster_refusal(caller, cmd, args, slot, cross_slot)

    def script_start_refusal(self, caller: Session, flags: tuple[str, ...] | None,
                             read_only_command: bool) -> str | None:
        return self.admission.script_start_refusal(caller, flags, read_only_command)

    # -- error replies ----------------------------------------------------------------------

    def error_reply(self, message: str, cmd: Command | None, rejected: bool = False) -> bytes:
        """Encode an error reply and count it (errorstats, failed/rejected calls)."""
        self.server.count_error(message.split(" ", 1)[0])
        if cmd is not None:
            if rejected:
                cmd.rejected_calls += 1
            else:
                cmd.failed_calls += 1
        return resp.error(message)

    def internal_error(self, session: Session, cmd: Command, err: Exception) -> bytes:
        if session.replaying:
            raise err  # the AOF loader stops: starting with a diverged dataset would be worse
        self.server.log("warning", f"Internal error in {cmd.fullname}: {traceback.format_exc()}")
        return self.error_reply(
            f"ERR internal error in '{cmd.fullname}': {type(err).__name__}", cmd
        )
