"""Whether a resolved request may run now: Redis's refusals in one ordered list, for every caller.

Redis decides this in several places -- processCommand for a client's request, execCommand
again for each queued command, scriptPrepareForRun and scriptCall for scripts, the re-check of a
served blocked client -- and their lists differ in what they check and how they word it. Brook
decides it here, once: :meth:`Admission.refusal` walks one list in Redis's order, and each entry
says which callers (*lanes*) it applies to and how that caller words it.

    entry              TOPLEVEL  QUEUED  WAITER  SCRIPT
    noscript                                       x     "This Redis command is not allowed..."
    stale replica                                  x     (before ACL, as scriptCall)
    auth                  x
    not in MULTI          x
    ACL                   x        x       x       x     worded per lane, logged per lane
    read-only script                               x
    OOM / MISCONF /       x                        x     a script that already wrote is never
     replication state                                   stopped halfway
    LOADING, busy,        x
     subscribed mode

A caller that skips a check does so by its lane (a replayed AOF or master stream is the REPLAY
lane: it is resolved, never refused), not by a copy of the list without the line. Resolution --
which command, and its arity -- comes before, from :func:`brook.commands.registry.resolve`.
The socket's fast path (:meth:`brook.dispatch.Dispatcher.run_batch`) is not a second list: it
runs a request itself only when nothing here could refuse it (``Session.slow`` is false, the
command resolves, the ACL allows it, memory is within the limit, and in cluster mode
:meth:`Admission.served_outright`: the cluster entry's quick "yes"), else it comes here.

Imports: the command table, sessions, ACL texts and the script flags; never the dispatcher,
the connection or the server module (the server is reached through the object given).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.acl.users import CHANNEL, COMMAND, KEY
from brook.cluster.routing import (
    CROSSSLOT,
    DOWN,
    DOWN_READ_ONLY,
    TRYAGAIN,
    UNBOUND,
    keys_served_outright,
    redirection,
    served_outright,
)
from brook.cluster.slots import key_slot
from brook.commands.registry import Command
from brook.eviction import OOM
from brook.memory import request_bytes
from brook.scripting.flags import (
    ALLOW_OOM,
    ALLOW_STALE,
    DENYOOM,
    DENYSTALE,
    NO_CLUSTER,
    NO_WRITES,
    WRITES,
)

if TYPE_CHECKING:
    from brook.cluster.state import ClusterState
    from brook.context import ServerContext
    from brook.session import Session

# The callers, as the list reads them.
TOPLEVEL: Final = 0  # a client's request (the socket, and EXEC itself)
QUEUED: Final = 1  # a command of a transaction, when EXEC runs it
WAITER: Final = 2  # a parked command, when it is served
SCRIPT: Final = 3  # redis.call / redis.pcall

# What a script run tells the SCRIPT lane (bits of ``script_state``).
SCRIPT_READ_ONLY: Final = 1  # no-writes, or an *_RO command
SCRIPT_WROTE: Final = 2  # it already wrote: it is never stopped halfway
SCRIPT_ALLOW_OOM: Final = 4  # allow-oom: denyoom commands run over maxmemory

_MULTI_FORBIDDEN: Final = "ERR Command not allowed inside a transaction"
_NOAUTH: Final = "NOAUTH Authentication required."
LOADING: Final = "LOADING Redis is loading the dataset in memory"
READONLY: Final = "READONLY You can't write against a read only replica."
MASTERDOWN: Final = ("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set "
                     "to 'no'.")
NOREPLICAS: Final = "NOREPLICAS Not enough good replicas to write."
BGSAVE_ERROR: Final = (
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    "RDB error.")
# What a RESP2 client in subscribed mode may run (Redis's processCommand check).
_SUBSCRIBED_MODE_COMMANDS: Final = frozenset({
    "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe",
    "punsubscribe", "quit", "reset",
})
_SUBSCRIBED_MODE_ERROR: Final = (
    "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
    "allowed in this context"
)
_ACL_CHANGED: Final = (
    "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
    "EXEC call. This command is no longer allowed for the following reason: ")
_ACL_REASONS: Final = {
    COMMAND: "no permission to execute the command or subcommand",
    KEY: "no permission to touch the specified keys",
    CHANNEL: "no permission to access one of the channels used as arguments",
}
# The ACL log's context of a denial, per lane.
_ACL_CONTEXT: Final = {TOPLEVEL: "toplevel", QUEUED: "multi", WAITER: "toplevel", SCRIPT: "lua"}


class Admission:
    """The one list of refusals, and the probes of the server's state it reads (which a
    script's start and INFO read too)."""

    def __init__(self, server: ServerContext) -> None:
        self.server = server
        self._exec = server.command_table[b"exec"]

    # -- the list ---------------------------------------------------------------------------

    def refusal(self, session: Session, cmd: Command, args: list[bytes], lane: int,
                script_state: int = 0) -> str | None:
        """Why ``cmd`` (resolved, with a valid arity) may not run now for this caller: the
        error to answer, or None. ``script_state``: the SCRIPT lane's run (SCRIPT_* bits)."""
        server = self.server
        if lane == SCRIPT:
            if "noscript" in cmd.flags and not server.scripting.deny_script_disabled:
                return "ERR This Redis command is not allowed from script"
            if "stale" not in cmd.flags and self.stale():
                return "ERR Can not execute the command on a stale replica"
        elif lane == TOPLEVEL:
            if not session.authenticated and not cmd.allowed_unauthenticated:
                return _NOAUTH
            if session.in_multi and not cmd.allowed_in_multi:
                return _MULTI_FORBIDDEN
        user = session.acl_user
        if user is not None:
            denial = server.acl.check(user, cmd, args)
            if denial is not None:
                context = _ACL_CONTEXT[lane]
                if lane == TOPLEVEL and session.in_multi:
                    context = "multi"
                message = server.acl_denied(session, cmd, args, denial, context)
                if lane == QUEUED:
                    return _ACL_CHANGED + _ACL_REASONS[denial.reason]
                if lane == SCRIPT:
                    return "ERR ACL failure in script: " + message.removeprefix("NOPERM ")
                return message
        if lane == SCRIPT:
            return self._script_command_refusal(session, cmd, script_state)
        if lane != TOPLEVEL:
            return None
        if server.cluster is not None and not session.replaying:
            refusal = self._cluster_refusal(session, cmd, args)
            if refusal is not None:
                return refusal
        # EXEC is judged by what it would run (Redis's mstate flags), a script command by
        # what its script declares (Redis's getCommandFlags).
        state_checks = server.replication_checks and not session.replaying
        if (server.config.maxmemory or server.aof_write_failed or not server.last_bgsave_ok
                or state_checks):
            needs = self._needs(cmd, args)
            if cmd is self._exec and session.in_multi:
                for each, queued_args in session.multi_queue:
                    needs |= self._needs(each, queued_args)
            if server.config.maxmemory and not session.replaying:
                # Redis's performEvictions before every command.
                out_of_memory = not server.evictor.perform()
                server.oom_before_command = out_of_memory
                if needs & DENYOOM:
                    if out_of_memory:
                        return OOM
                    server.memory.charge(request_bytes(args))
            if (needs & WRITES or cmd.name == "ping") and not session.replaying:
                refusal = self.disk_error()
                if refusal is not None:
                    return refusal
            if state_checks:
                refusal = self._replication_refusal(needs)
                if refusal is not None:
                    return refusal
        if server.tracking.count:  # Redis's trackingLimitUsedSlots before every command
            server.tracking.limit(server.config.tracking_table_max_keys)
        if server.loading and "loading" not in cmd.flags:
            return LOADING
        busy = server.script_busy
        if busy is not None and "allow_busy" not in cmd.flags:
            return busy.busy_error
        if (session.protocol == 2 and session.is_subscribed()
                and (cmd.parent or cmd).name not in _SUBSCRIBED_MODE_COMMANDS):
            session.last_cmd = cmd  # as Redis, which records it before its checks
            return _SUBSCRIBED_MODE_ERROR.format(cmd.fullname)
        return None

    def script_call_refusal(self, caller: Session, cmd: Command, args: list[bytes],
                            read_only: bool, wrote: bool, allow_oom: bool) -> str | None:
        """The SCRIPT lane for a run of a script (so scripting names no lane): ``read_only``
        no-writes or an *_RO command, ``wrote`` it already wrote, ``allow_oom`` its flag."""
        state = ((SCRIPT_READ_ONLY if read_only else 0) | (SCRIPT_WROTE if wrote else 0)
                 | (SCRIPT_ALLOW_OOM if allow_oom else 0))
        return self.refusal(caller, cmd, args, SCRIPT, state)

    def script_cluster_refusal(self, caller: Session, cmd: Command, args: list[bytes],
                               slot: int, cross_slot: bool) -> tuple[str | None, int]:
        """Redis's scriptVerifyClusterState for a command a script runs in cluster mode: its
        keys must be served here as the caller's own would be (the caller's READONLY and
        ASKING count) and, unless the script may cross slots (``cross_slot``: the
        allow-cross-slot-keys flag, or an EVAL without flags), lie in the run's ``slot``
        (its declared keys', or the first a command touched; -1 for none yet). Returns the
        refusal (None: run it) and the run's slot after it. What the master or the AOF sends
        is obeyed."""
        server = self.server
        cluster = server.cluster
        if cluster is None or caller.replaying:
            return None, slot
        keys = cmd.key_positions_of(args)
        if not keys:
            return None, slot
        config = server.config
        key_flags = cmd.key_flags
        message = redirection(
            cluster, keys, server.keyspace[0], cmd.is_write, caller.cluster_asking,
            caller.cluster_readonly, key_flags is not None and "not_key" in key_flags,
            config.cluster_allow_reads_when_down, config.cluster_allow_pubsubshard_when_down,
            config.cluster_preferred_endpoint_type)
        if message is not None:
            return _script_cluster_error(message, cmd), slot
        this_slot = key_slot(keys[0])
        if not cross_slot:
            if slot == -1:
                slot = this_slot
            elif slot != this_slot:
                return ("ERR Script attempted to access keys that do not hash to the same "
                        "slot"), slot
        return None, slot

    def _script_command_refusal(self, caller: Session, cmd: Command,
                                script_state: int) -> str | None:
        """The SCRIPT lane's state checks (Redis's scriptVerifyWriteCommandAllow and
        scriptVerifyOOM): a script that already wrote is never stopped halfway."""
        if script_state & SCRIPT_READ_ONLY and (cmd.is_write or "may_replicate" in cmd.flags):
            return "ERR Write commands are not allowed from read-only scripts."
        wrote = script_state & SCRIPT_WROTE
        if cmd.is_write and not wrote:
            if self.read_only_replica(caller):
                return READONLY
            refusal = self.disk_error()
            if refusal is not None:
                return refusal
            if self.short_of_replicas():
                return NOREPLICAS
        server = self.server
        if (cmd.is_denyoom and not script_state & SCRIPT_ALLOW_OOM and not wrote
                and server.oom_before_command and server.config.maxmemory
                and not caller.replaying):
            return OOM
        return None

    def served_outright(self, session: Session, cmd: Command, args: list[bytes]) -> bool:
        """The cluster entry's quick answer, for the fast path of a node in cluster mode: True
        when this request would pass it whatever else holds (no key, or keys in one slot this
        node serves outright in a cluster that is ok: brook.cluster.routing). False sends the
        request to :meth:`refusal`, which redirects it, refuses it or serves it after all --
        as it does a request after ASKING, which applies to that one command (ended by
        Dispatcher.execute)."""
        cluster = self.server.cluster
        assert cluster is not None
        return not session.cluster_asking and _keys_served_outright(cluster, cmd, args)

    def _cluster_refusal(self, session: Session, cmd: Command, args: list[bytes]) -> str | None:
        """Redis Cluster's redirections and refusals (-MOVED, -ASK, -CROSSSLOT, -TRYAGAIN,
        -CLUSTERDOWN), by the request's keys -- a transaction's, for EXEC -- as
        brook.cluster.routing decides them; a command without keys is always served, and one
        whose slot is served outright (the quick test) without building anything."""
        server = self.server
        cluster = server.cluster
        assert cluster is not None
        if cmd is self._exec:
            if not session.in_multi:
                return None
            commands = session.multi_queue
        elif _keys_served_outright(cluster, cmd, args):  # no key, or served here
            return None
        else:
            commands = [(cmd, args)]
        keys: list[bytes] = []
        write = shard_channels = False
        for each, each_args in commands:
            keys += each.key_positions_of(each_args)
            write = write or bool(self._needs(each, each_args) & WRITES)
            flags = each.key_flags
            shard_channels = shard_channels or (flags is not None and "not_key" in flags)
        config = server.config
        return redirection(
            cluster, keys, server.keyspace[0], write,
            session.cluster_asking or "asking" in cmd.flags, session.cluster_readonly,
            shard_channels, config.cluster_allow_reads_when_down,
            config.cluster_allow_pubsubshard_when_down, config.cluster_preferred_endpoint_type,
            migrate=cmd.name == "migrate")

    def _needs(self, cmd: Command, args: list[bytes]) -> int:
        """What a request asks of the server's state (:data:`WRITES`, :data:`DENYOOM`,
        :data:`DENYSTALE`): a script command's by the flags its script declares (Redis's
        scriptFlagsToCmdFlags), any other command's by its own flags."""
        if cmd.is_script:
            needs = self.server.scripting.declared_needs(cmd.name, args)
            if needs is not None:
                return needs
        return ((WRITES if cmd.is_write else 0) | (DENYOOM if cmd.is_denyoom else 0)
                | (0 if "stale" in cmd.flags else DENYSTALE))

    def _replication_refusal(self, needs: int) -> str | None:
        """Redis's NOREPLICAS (a master short of good replicas), READONLY and MASTERDOWN (a
        replica), in Redis's order; the master's own stream never meets them (replaying)."""
        server = self.server
        if not server.replication.is_replica:
            if needs & WRITES and self.short_of_replicas():
                return NOREPLICAS
            return None
        if needs & WRITES and server.config.replica_read_only:
            return READONLY
        if needs & DENYSTALE and self.stale():
            return MASTERDOWN
        return None

    # -- a script's start (Redis's scriptPrepareForRun) ------------------------------------

    def script_start_refusal(self, caller: Session, flags: tuple[str, ...] | None,
                             read_only_command: bool) -> str | None:
        """Why a script may not start, by the flags it declares (None: an EVAL script without
        a shebang, Redis's compatibility mode), with scriptPrepareForRun's texts. At the top
        level :meth:`refusal` judged the EVAL or FCALL by the same flags before; this catches
        what changed since (inside a transaction) and the read-only commands."""
        server = self.server
        if flags is None:
            return MASTERDOWN if self.stale() and not caller.replaying else None
        if NO_CLUSTER in flags and server.cluster is not None:
            return "ERR Can not run script on cluster, 'no-cluster' flag is set."
        if ALLOW_STALE not in flags and self.stale() and not caller.replaying:
            return ("MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to "
                    "'no' and 'allow-stale' flag is not set on the script.")
        if NO_WRITES not in flags:
            if self.read_only_replica(caller):
                return "READONLY Can not run script with write flag on readonly replica"
            if self._snapshot_failed() and not caller.replaying:
                return ("MISCONF Redis is configured to save RDB snapshots, but it's currently "
                        "unable to persist to disk. Writable scripts are blocked. Use "
                        "'no-writes' flag for read only scripts.")
            if server.aof_write_failed and not caller.replaying:
                aof = server.aof
                return ("MISCONF Redis is configured to persist data to AOF, but it's currently "
                        "unable to persist to disk. Writable scripts are blocked. Use "
                        "'no-writes' flag for read only scripts. AOF error: "
                        f"{aof.last_write_error if aof else ''}")
            if read_only_command:
                return "ERR Can not execute a script with write flag using *_ro command."
            if self.short_of_replicas() and not caller.replaying:
                return NOREPLICAS
            if (ALLOW_OOM not in flags and server.oom_before_command
                    and server.config.maxmemory and not caller.replaying):
                return ("OOM allow-oom flag is not set on the script, can not run it when used "
                        "memory > 'maxmemory'")
        return None

    # -- the server's state, as the checks read it -----------------------------------------

    def short_of_replicas(self) -> bool:
        """min-replicas-to-write is not met (Redis's checkGoodReplicasStatus failing)."""
        server = self.server
        config = server.config
        return bool(not server.replication.is_replica and config.min_replicas_to_write
                    and config.min_replicas_max_lag
                    and server.replication.good_replicas() < config.min_replicas_to_write)

    def stale(self) -> bool:
        """A replica cut off from its master that may not serve stale data."""
        server = self.server
        if not server.replication.is_replica or server.config.replica_serve_stale_data:
            return False
        link = server.replication.link
        return link is None or link.state != "connected"

    def read_only_replica(self, session: Session) -> bool:
        """Writes are refused here: a read-only replica, unless its master (or the AOF
        loader) sends them."""
        server = self.server
        return (server.replication.is_replica and server.config.replica_read_only
                and not session.replaying)

    def disk_error(self) -> str | None:
        """The MISCONF error while writes are refused for want of persistence (Redis's
        writeCommandsDeniedByDiskError: a failed snapshot with stop-writes-on-bgsave-error
        and save points, then an AOF that cannot be written), else None."""
        server = self.server
        if self._snapshot_failed():
            return BGSAVE_ERROR
        if server.aof_write_failed:
            aof = server.aof
            return ("MISCONF Errors writing to the AOF file: "
                    f"{aof.last_write_error if aof else ''}")
        return None

    def _snapshot_failed(self) -> bool:
        server = self.server
        config = server.config
        return bool(not server.last_bgsave_ok and config.stop_writes_on_bgsave_error
                    and config.save)


def _keys_served_outright(cluster: ClusterState, cmd: Command, args: list[bytes]) -> bool:
    """routing's quick test on the keys the command table locates in ``args``: a key spec's
    walked in place, a keyword's (find_keys) listed."""
    find_keys = cmd.find_keys
    if find_keys is not None:
        return keys_served_outright(cluster, args, find_keys(len(args), args))
    first = cmd.first_key
    if first <= 0:
        return True
    return served_outright(cluster, args, first, cmd.last_key_at(len(args)), cmd.key_step)


def _script_cluster_error(message: str, cmd: Command) -> str:
    """What a script's command gets instead of a redirection (scriptVerifyClusterState's
    words): a script cannot follow -MOVED, so the words say why it was refused."""
    if message == DOWN_READ_ONLY:
        return ("ERR Script attempted to execute a write command while the cluster is down "
                "and readonly")
    if message == DOWN:
        return "ERR Script attempted to execute a command while the cluster is down"
    if message == CROSSSLOT:
        return (f"ERR Command '{cmd.fullname}' in script attempted to access keys that don't "
                "hash to the same slot")
    if message == TRYAGAIN:
        return (f"ERR Unable to execute command '{cmd.fullname}' in script because undeclared "
                "keys were accessed during rehashing of the slot")
    if message == UNBOUND:
        return "ERR Script attempted to access a slot not served"
    return "ERR Script attempted to access a non local key in a cluster node"  # MOVED, ASK
