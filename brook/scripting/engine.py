"""Running scripts: the one place a Lua script or function meets the command pipeline.

A script is a client like any other: ``redis.call`` runs its command on the engine's own
:class:`~brook.session.Session` through the dispatcher (``Dispatcher.call``: the handler,
errors, effects to the AOF, commandstats, MONITOR), after the checks Redis's ``scriptCall``
makes: the command exists and has the right arity, is allowed from scripts (not ``noscript``),
is no write in a read-only script, and the server can take writes. The session never parks:
blocking commands answer as with timeout 0 (``in_exec``).

A run (:class:`ScriptRun`) is atomic: nothing else runs until it ends, and its effects reach
the AOF as one MULTI/EXEC (a script's effects, never the script: replay and rewrite are exact).
Blocked clients are served and notifications delivered after it, by the connection, as after
any command.

Past ``busy-reply-threshold`` the time-limit hook (every 100,000 Lua instructions) lets other
clients in (``serve_others``, brook.while_busy): they get ``-BUSY`` except for SCRIPT KILL, FUNCTION KILL,
SHUTDOWN NOSAVE and the other ``allow-busy`` commands. SCRIPT KILL makes the next hook raise
an error no ``pcall`` can keep, as long as the script has not written.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from brook.cluster.slots import key_slot
from brook.commands.registry import NO_SUBCOMMAND, WRONG_ARITY, find_command, resolve
from brook.protocol import resp
from brook.scripting.cache import ScriptCache, ScriptCacheError, shebang_flags
from brook.scripting.cache import sha1hex as script_sha
from brook.scripting.flags import ALLOW_CROSS_SLOT, ALLOW_OOM, NO_WRITES, needs_of
from brook.scripting.functions import Functions
from brook.scripting.replies import truncate
from brook.scripting.runtime import Interpreter, ScriptCallError
from brook.session import Session

if TYPE_CHECKING:
    from brook.commands.registry import Command
    from brook.context import ServerContext

BUSY_EVAL = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
BUSY_FUNCTION = ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.")
KILLED = b"ERR Script killed by user with SCRIPT KILL..."
_LOG_LEVELS = ("debug", "verbose", "notice", "warning")


class ScriptError(Exception):
    """A script may not start (flags against the server's state): the message is the reply."""


class ScriptRun:
    """One running script or function: who asked, what it may do, what it did."""

    __slots__ = ("caller", "name", "eval_mode", "read_only", "allow_oom", "write_dirty",
                 "started", "timed_out", "killed", "load_deadline", "command", "slot",
                 "cross_slot")

    def __init__(self, caller: Session, command: list[bytes], name: bytes, eval_mode: bool,
                 read_only: bool, allow_oom: bool = False, cross_slot: bool = True) -> None:
        self.caller = caller
        self.command = command  # the EVAL or FCALL that runs it (FUNCTION STATS, stats)
        self.name = name
        self.eval_mode = eval_mode
        self.read_only = read_only
        self.allow_oom = allow_oom  # the allow-oom flag: denyoom commands run over maxmemory
        # Cluster mode: the slot its commands' keys must share (its declared keys', else the
        # first one touched; -1 none yet), unless it may cross slots.
        self.slot = _declared_slot(command)
        self.cross_slot = cross_slot
        self.write_dirty = False  # it ran a write command: SCRIPT KILL can no longer stop it
        self.started = time.monotonic()
        self.timed_out = False
        self.killed = False
        self.load_deadline = 0.0  # FUNCTION LOAD: when its top-level code times out

    @property
    def busy_error(self) -> str:
        return BUSY_EVAL if self.eval_mode else BUSY_FUNCTION


_RAND48_A, _RAND48_C, _RAND48_MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1


class Rand48:
    """Redis's ``math.random`` generator (rand.c: the 48-bit linear congruence of drand48):
    the same sequence on every platform, one state for the whole server."""

    def __init__(self) -> None:
        self.state = 0x1234ABCD330E

    def seed(self, value: int) -> None:
        self.state = ((value & 0xFFFFFFFF) << 16 | 0x330E) & _RAND48_MASK

    def next(self) -> int:
        self.state = (_RAND48_A * self.state + _RAND48_C) & _RAND48_MASK
        return self.state >> 17


class Engine:
    """The scripting state of a server: the interpreters, the script session, the run."""

    def __init__(self, server: ServerContext, serve_others: Callable[[Session], None]) -> None:
        self.server = server
        # Past busy-reply-threshold: serve the other clients once, without blocking (they get
        # -BUSY); the server provides it, as it owns the connections.
        self.serve_others = serve_others
        session = Session(server)
        session.authenticated = True
        session.in_exec = True  # Redis's CLIENT_DENY_BLOCKING: blocking commands never park
        session.in_script = True
        session.addr = "lua"
        session.id = 0
        self.session = session
        self.run: ScriptRun | None = None
        self.rand = Rand48()
        self.deny_script_disabled = False  # DEBUG SET-DISABLE-DENY-SCRIPTS
        self.eval_lua = Interpreter(self)
        self.scripts = ScriptCache(self.eval_lua)
        self.functions = Functions(self)
        self.memory_limit_changed()

    def flush_scripts(self) -> None:
        """SCRIPT FLUSH: a new EVAL interpreter, as Redis's scriptingReset (library settings
        such as cjson's go back to their defaults; the random generator is the server's)."""
        evicted = self.scripts.evicted
        self.eval_lua = Interpreter(self)
        self.scripts = ScriptCache(self.eval_lua)
        self.scripts.evicted = evicted
        self.memory_limit_changed()

    def memory_limit_changed(self) -> None:
        limit = self.server.config.lua_max_memory
        self.eval_lua.set_memory_limit(limit)
        self.functions_lua.set_memory_limit(limit)

    @property
    def functions_lua(self) -> Interpreter:
        return self.functions.interpreter

    # -- what a script command declares --------------------------------------------------------

    def declared_flags(self, name: str, args: list[bytes]) -> tuple[str, ...] | None:
        """The flags the script or function an EVAL/EVALSHA/FCALL request names declares (None:
        none known, an EVAL script without a shebang), as Redis's evalGetCommandFlags and
        fcallGetCommandFlags find them before the command runs."""
        if name.startswith("fcall"):
            function = self.functions.find(args[1]) if len(args) > 1 else None
            return function.flags if function is not None else None
        if len(args) < 2:
            return None
        by_sha = name.startswith("evalsha")
        if by_sha and len(args[1]) != 40:
            return None
        script = self.scripts.scripts.get(args[1].lower() if by_sha else script_sha(args[1]))
        if script is not None:
            return script.flags
        if by_sha:
            return None
        try:
            return shebang_flags(args[1])[0]
        except ScriptCacheError:
            return None

    def declared_needs(self, name: str, args: list[bytes]) -> int | None:
        """What a script command asks of the server's state (the dispatcher's WRITES,
        DENYOOM and DENYSTALE bits) by the flags its script declares, as Redis's
        scriptFlagsToCmdFlags; None: it declares none (the command's own flags apply)."""
        flags = self.declared_flags(name, args)
        return None if flags is None else needs_of(flags)

    # -- running ------------------------------------------------------------------------------

    def start(self, caller: Session, command: list[bytes], name: bytes,
              flags: tuple[str, ...] | None, read_only_command: bool,
              eval_mode: bool) -> ScriptRun:
        """Redis's scriptPrepareForRun: refuse a script whose flags the server's state forbids
        (``flags`` None: an EVAL script without a shebang, Redis's compatibility mode), by
        the dispatcher's checks."""
        refusal = self.server.dispatcher.script_start_refusal(caller, flags,
                                                                        read_only_command)
        if refusal is not None:
            raise ScriptError(refusal)
        read_only = read_only_command or (flags is not None and NO_WRITES in flags)
        allow_oom = flags is not None and ALLOW_OOM in flags
        cross_slot = flags is None or ALLOW_CROSS_SLOT in flags
        return ScriptRun(caller, command, name, eval_mode, read_only, allow_oom, cross_slot)

    def loading_run(self, name: bytes) -> ScriptRun:
        """The run of a library's top-level code (FUNCTION LOAD): it may call no command, so
        no state of the server refuses it."""
        return ScriptRun(self.session, [], name, eval_mode=False, read_only=True)

    def execute(self, interpreter: Interpreter, run: ScriptRun, function: Any,
                arguments: tuple[Any, ...], eval_mode: bool = False) -> bytes:
        """Run ``function`` as ``run``, its effects one transaction; the reply for the
        caller. ``arguments``: FCALL's keys and args tables, or EVAL's KEYS and ARGV lists
        (``eval_mode``)."""
        server = self.server
        session = self.session
        caller = run.caller
        session.db = caller.db
        session.protocol = 2
        session.replaying = caller.replaying
        effect_log = server.effect_log
        own_transaction = server.propagating and effect_log.transaction is None
        if own_transaction:
            effect_log.begin_transaction()
        self.run = run
        hooked = server.config.busy_reply_threshold > 0 and not caller.replaying
        # Time stands still while a script runs (Redis's command time snapshot): TIME, XADD's
        # IDs and expiry all see the instant it started, or its transaction's.
        clock = server.keyspace.clock
        outer = clock.freeze(clock.now_us())
        try:
            if eval_mode:
                ok, result = interpreter.run_eval(hooked, function, *arguments)
            else:
                ok, result = interpreter.run(hooked, function, *arguments)
        finally:
            clock.freeze(outer)
            self.run = None
            if run.timed_out:
                server.end_busy()
            if own_transaction:
                effect_log.end_transaction()
        if ok:
            writer = interpreter.writer
            reply = writer.encode(result, caller.protocol, session.protocol)
            for code in writer.errors:
                server.count_error(code)
            self._count_failures(run, bool(writer.errors) + writer.counted_errors)
            return reply
        return self.error_reply(run, result)

    def _count_failures(self, run: ScriptRun, failures: int) -> None:
        """A script that replies with errors is a failed call of its EVAL or FCALL: once for
        the errors counted now, once for each one counted when a command replied it (Redis's
        afterErrorReply)."""
        if not failures or run.caller.replaying:
            return
        cmd = find_command(self.server.command_table, run.command)
        if cmd is not None:
            cmd.failed_calls += failures

    def error_reply(self, run: ScriptRun, error: Any) -> bytes:
        """The reply of a failed run: the error's text, and where in the script it happened."""
        message, source, line, counted = _error_fields(error)
        if message is None:
            message = b"ERR execution failure"
        text = message.decode("utf-8", "surrogateescape")
        if source is not None and line is not None:
            text += " script: %s, on %s:%s." % (
                run.name.decode("utf-8", "replace"), source.decode("utf-8", "replace"),
                line if type(line) is not float else int(line))
        if not counted:
            self.server.count_error(text.split(" ", 1)[0])
        self._count_failures(run, 1)
        return resp.error(text)

    # -- the Lua side's callbacks (brook.scripting.runtime.Host) ------------------------------

    def _interpreter(self) -> Interpreter:
        run = self.run
        return self.eval_lua if run is None or run.eval_mode else self.functions_lua

    def _fail(self, message: bytes) -> ScriptCallError:
        """An error raised in Lua as Redis's luaPushError+luaError raise it."""
        interpreter = self._interpreter()
        interpreter.lift_memory_limit()
        return ScriptCallError(interpreter.error_table(message))

    def call(self, *args: Any) -> Any:
        """redis.call: the reply as a Lua value; an error reply is raised."""
        reply, error = self._run_command(args)
        if error is not None:
            raise ScriptCallError(error)
        return reply

    def pcall(self, *args: Any) -> Any:
        """redis.pcall: the reply as a Lua value, an error reply as its ``{err=...}`` table."""
        reply, error = self._run_command(args)
        return reply if error is None else error

    def call_packed(self, raise_error: bool, count: int, table: Any) -> Any:
        """redis.call/pcall with many arguments, handed over as one Lua table."""
        args = tuple(table[i] for i in range(1, count + 1))
        return self.call(*args) if raise_error else self.pcall(*args)

    def _run_command(self, args: tuple[Any, ...]) -> tuple[Any, Any]:
        run = self.run
        interpreter = self._interpreter()
        interpreter.lift_memory_limit()
        if run is None:
            return None, interpreter.error_table(
                b"redis.call/pcall can only be called inside a script invocation")
        if not args:
            return None, interpreter.error_table(
                b"Please specify at least one argument for this redis lib call")
        argv = _command_argv(args)
        if argv is None:
            return None, interpreter.error_table(_BAD_ARGUMENT)
        message = self._refusal(run, argv)
        if type(message) is bytes:
            # Counted in errorstats when it was refused (Redis's scriptCall), not again when
            # the script fails with it.
            error = interpreter.error_table(message)
            error[b"ignore_error_stats_update"] = True
            return None, error
        cmd: Command = message  # type: ignore[assignment]
        if cmd.is_write:
            run.write_dirty = True
        reply = self.server.dispatcher.call(self.session, cmd, argv)
        if reply is None:
            return None, interpreter.error_table(b"ERR the command did not reply")
        return interpreter.reader.to_lua(reply)

    def _refusal(self, run: ScriptRun, argv: list[bytes]) -> Command | bytes:
        """The command to run, or why it may not run from this script: the resolution's
        failures worded as scriptCall words them, then admission's SCRIPT lane."""
        cmd, found = resolve(self.server.command_table, argv)
        if cmd is None or found == NO_SUBCOMMAND:
            return self._rejected(None, b"Unknown Redis command called from script")
        if found == WRONG_ARITY:
            return self._rejected(cmd, b"Wrong number of args calling Redis command from script")
        refusal = self.server.dispatcher.script_call_refusal(
            run.caller, cmd, argv, run.read_only, run.write_dirty, run.allow_oom)
        if refusal is None and self.server.cluster is not None:
            refusal, run.slot = self.server.dispatcher.script_cluster_refusal(
                run.caller, cmd, argv, run.slot, run.cross_slot)
        if refusal is not None:
            return self._rejected(cmd, b"-" + refusal.encode("utf-8", "surrogateescape"))
        return cmd

    def _rejected(self, cmd: Command | None, message: bytes) -> bytes:
        self.server.dispatcher.error_reply(
            (message[1:] if message.startswith(b"-") else b"ERR " + message).decode(),
            cmd, rejected=True)
        return message

    def interrupt(self) -> bytes | None:
        """The hook, every 100,000 instructions: past the threshold other clients are served;
        a message ends the script (SCRIPT KILL, a FUNCTION LOAD timeout)."""
        run = self.run
        if run is None:
            return None
        self._interpreter().restore_memory_limit()
        if run.load_deadline:
            if time.monotonic() > run.load_deadline:
                self._interpreter().lift_memory_limit()
                return b"ERR FUNCTION LOAD timeout"
            return None
        server = self.server
        if not run.timed_out:
            elapsed = (time.monotonic() - run.started) * 1000
            if elapsed < server.config.busy_reply_threshold:
                return None
            run.timed_out = True
            server.log("warning",
                       f"Slow script detected: still in execution after {int(elapsed)} "
                       "milliseconds. You can try killing the script using the "
                       f"{'SCRIPT KILL' if run.eval_mode else 'FUNCTION KILL'} command. "
                       f"Script name is: {run.name.decode('utf-8', 'replace')}.")
            server.begin_busy(run)
        self.serve_others(run.caller)
        if run.killed:
            server.log("notice", "Lua script killed by user with SCRIPT KILL.")
            self._interpreter().lift_memory_limit()
            return KILLED
        return None

    def kill(self, eval_mode: bool) -> str | None:
        """SCRIPT KILL / FUNCTION KILL: None when the running script will stop, else the
        error to reply."""
        run = self.run
        if run is None or not run.timed_out:
            return "NOTBUSY No scripts in execution right now."
        if run.write_dirty:
            return ("UNKILLABLE Sorry the script already executed write commands against the "
                    "dataset. You can either wait the script termination or kill the server "
                    "in a hard way using the SHUTDOWN NOSAVE command.")
        if eval_mode and not run.eval_mode:
            return BUSY_FUNCTION
        if not eval_mode and run.eval_mode:
            return BUSY_EVAL
        run.killed = True
        return None

    def sha1hex(self, *args: Any) -> bytes:
        if len(args) != 1:
            raise self._fail(b"wrong number of arguments")
        value = args[0]
        text = value if type(value) is bytes else _number_argument(value) if type(value) in (
            int, float) else b""
        self._interpreter().lift_memory_limit()
        return hashlib.sha1(text).hexdigest().encode()

    def log(self, *args: Any) -> None:
        if len(args) < 2:
            raise self._fail(b"redis.log() requires two arguments or more.")
        level = _number(args[0])
        if level is None:
            raise self._fail(b"First argument must be a number (log level).")
        index = truncate(level)
        if not 0 <= index < len(_LOG_LEVELS):
            raise self._fail(b"Invalid log level.")
        parts = [arg if type(arg) is bytes else _lua_tostring(arg) for arg in args[1:]
                 if type(arg) in (bytes, int, float)]
        self.server.log(_LOG_LEVELS[index], b" ".join(parts).decode("utf-8", "replace"))

    def setresp(self, *args: Any) -> None:
        if len(args) != 1:
            raise self._fail(b"redis.setresp() requires one argument.")
        version = _number(args[0])
        if version not in (2, 3):
            raise self._fail(b"RESP version must be 2 or 3.")
        self.session.protocol = int(version)  # type: ignore[arg-type]

    def set_repl(self, *args: Any) -> None:
        """Accepted, as Redis 7 accepts it; a script's effects always persist whole."""
        if len(args) != 1:
            raise self._fail(b"redis.set_repl() requires one argument.")
        flags = _number(args[0])
        if flags is None or int(flags) & ~3:
            raise self._fail(b"Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                             b"REPL_ALL or REPL_NONE.")

    def acl_check_cmd(self, *args: Any) -> bool:
        """redis.acl_check_cmd: whether the script's user may run this command with these
        arguments, by the ACL check every command meets (nothing is logged)."""
        run = self.run
        if not args:
            raise self._fail(b"Please specify at least one argument for this redis lib call")
        argv = _command_argv(args)
        if argv is None:
            raise self._fail(_BAD_ARGUMENT)
        cmd = find_command(self.server.command_table, argv)
        if cmd is None:
            raise self._fail(b"Invalid command passed to redis.acl_check_cmd()")
        self._interpreter().lift_memory_limit()
        user = run.caller.user if run is not None else None
        if user is None or user.unrestricted:
            return True
        return self.server.acl.check(user, cmd, argv) is None

    def random(self, *args: Any) -> float:
        from_generator = self.rand.next()
        fraction = (from_generator % 0x7FFFFFFF) / 0x7FFFFFFF
        if not args:
            return fraction
        if len(args) == 1:
            upper = _lua_int(args[0], 1)
            if upper < 1:
                raise _arg_error(1, "interval is empty")
            return float(int(fraction * upper) + 1)
        if len(args) == 2:
            lower, upper = _lua_int(args[0], 1), _lua_int(args[1], 2)
            if lower > upper:
                raise _arg_error(2, "interval is empty")
            return float(int(fraction * (upper - lower + 1)) + lower)
        raise ScriptCallError(b"wrong number of arguments")

    def randomseed(self, *args: Any) -> None:
        self.rand.seed(_lua_int(args[0] if args else None, 1))

    # -- memory ---------------------------------------------------------------------------------

    def memory(self) -> int:
        """Bytes held by the EVAL interpreter (INFO's used_memory_lua)."""
        return self.eval_lua.memory()


def _declared_slot(command: list[bytes]) -> int:
    """The slot of an EVAL's or FCALL's first declared key (``command[2]`` keys from
    ``command[3]``), where the caller's routing put the run; -1 without keys."""
    if len(command) < 4 or not command[2].isdigit() or int(command[2]) == 0:
        return -1
    return key_slot(command[3])


def _error_fields(error: Any) -> tuple[bytes | None, bytes | None, Any, bool]:
    """(message, source, line, already counted) of an error value from the handler."""
    if type(error) is bytes:
        return b"ERR " + error, None, None, False
    try:
        message = error[b"err"]
        source = error[b"source"]
        line = error[b"line"]
        counted = bool(error[b"ignore_error_stats_update"])
    except Exception:  # not a table: a value the handler could not describe
        return None, None, None, False
    if type(message) is not bytes:
        message = None
    if type(source) is not bytes:
        source = None
    if type(line) not in (int, float):
        line = None
    return message, source, line, counted


_HALF_LLONG = (1 << 62) - 1
_BAD_ARGUMENT = b"Lua redis lib command arguments must be strings or integers"


def _command_argv(args: tuple[Any, ...]) -> list[bytes] | None:
    """A redis lib call's arguments as a request (Redis's luaArgsToRedisArgv); None when one
    is neither a string nor a number."""
    argv: list[bytes] = []
    for arg in args:
        kind = type(arg)
        if kind is bytes:
            argv.append(arg)
        elif kind is int or kind is float:
            argv.append(_number_argument(arg))
        else:
            return None
    return argv


def _number_argument(number: float | int) -> bytes:
    """A Lua number as a command argument: an integer when it is one within LLONG_MAX/2,
    else the shortest round-trip digits (Redis's double2ll, then fpconv_dtoa)."""
    if type(number) is int:
        if -_HALF_LLONG <= number <= _HALF_LLONG:
            return b"%d" % number
        return resp.format_double(float(number))
    if number == 0:
        return b"0"  # -0.0 too: double2ll takes it
    return resp.format_double(number)


def _number(value: Any) -> float | None:
    """lua_isnumber/lua_tonumber: a number, or a string that reads as one."""
    if type(value) in (int, float):
        return value
    if type(value) is bytes:
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _lua_tostring(number: float | int) -> bytes:
    """Lua 5.1's tostring of a number (%.14g)."""
    return (b"%.14g" % number) if type(number) is float else b"%d" % number


def _lua_int(value: Any, position: int) -> int:
    """luaL_checkint: a number (or numeric string), truncated."""
    if type(value) is bytes:
        try:
            value = float(value)
        except ValueError:
            value = None
    if type(value) not in (int, float):
        raise _arg_error(position, "number expected, got "
                         + ("no value" if value is None else "string"))
    return truncate(value)


def _arg_error(position: int, message: str) -> Exception:
    """luaL_argerror's text, raised as a plain string error (a C function has no line)."""
    return ScriptCallError(f"bad argument #{position} to 'random' ({message})".encode())
