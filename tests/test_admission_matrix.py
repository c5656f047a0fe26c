"""Every refusal × every caller: what each caller answers when a request may not run.

Brook decides each refusal in one place (:mod:`brook.admission`, after
:func:`brook.commands.registry.resolve`); Redis words the same refusal differently for a
client's request, a queued command, a script's ``redis.pcall`` and a function's, and never
refuses what its AOF or its master sends. One table, :data:`CASES`, holds what Redis answers
for each (refusal, caller) and is checked twice:

- **sans-IO**: Brook's dispatcher in this process, sessions that are never connected, every
  caller including the ones a client cannot reach (the AOF loader's replay, a replica applying
  its master's stream, a served waiter);
- **over TCP**, the callers a client can reach, against Brook and real Redis (the ``server``
  fixture runs both), which is what makes the table Redis's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import hiredis
import pytest

from brook.config.store import Config
from brook.persistence.loader import AofError, apply_master_stream
from brook.server import Server
from brook.session import Session
from tests.conftest import RawConnection, ServerProcess

Request = tuple[str, ...]

SCRIPT = "return redis.pcall(unpack(ARGV))"
LIBRARY = ("#!lua name=matrix\n"
           "redis.register_function('relay', function(keys, args) "
           "return redis.pcall(unpack(args)) end)")
EXECABORT = "-EXECABORT Transaction discarded because of previous errors."
RAN = "ran"  # the replay lanes: the request was applied


@dataclass(frozen=True)
class Case:
    """One refusal: how to bring the server into the state that refuses it, the request, and
    what each caller answers (None: that caller does not meet this refusal)."""

    name: str
    request: Request
    setup: tuple[Request, ...] = ()
    user: str | None = None  # the acting client authenticates as this user first
    before: tuple[Request, ...] = ()  # what the acting client sends first
    undo: tuple[Request, ...] = ()
    socket: str | None = None
    queued: tuple[str, str] | None = None  # (the reply to the queued request, EXEC's reply)
    script: str | None = None
    function: str | None = None
    loader: str | None = None
    replica: str | None = None
    min_redis: tuple[int, ...] = field(default=(7, 0))
    in_process: bool = True  # False: its state needs the event loop (a replica's link)


_ACL_SET = ("ACL", "SETUSER", "u", "on", "nopass", "+@all", "-set", "~*", "&*")
_ACL_KEY = ("ACL", "SETUSER", "u", "on", "nopass", "+@all", "~a*", "&*")
_OOM = "-OOM command not allowed when used memory > 'maxmemory'."
_NOREPLICAS = "-NOREPLICAS Not enough good replicas to write."
_READONLY = "-READONLY You can't write against a read only replica."
_MASTERDOWN = ("-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to "
               "'no'.")

CASES = [
    Case("unknown command", ("NOSUCHCMD", "a"),
         socket="-ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' ",
         queued=("-ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' ",
                 EXECABORT),
         script="-ERR Unknown Redis command called from script",
         function="-ERR Unknown Redis command called from script",
         loader="Unknown command 'NOSUCHCMD' reading the append only file",
         replica="skipped"),
    Case("unknown subcommand", ("CONFIG", "NOSUCH"),
         socket="-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.",
         queued=("-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.", EXECABORT),
         script="-ERR Unknown Redis command called from script",
         function="-ERR Unknown Redis command called from script",
         loader="Unknown command 'CONFIG' reading the append only file",
         replica="skipped"),
    Case("wrong arity", ("GET",),
         socket="-ERR wrong number of arguments for 'get' command",
         queued=("-ERR wrong number of arguments for 'get' command", EXECABORT),
         script="-ERR Wrong number of args calling Redis command from script",
         function="-ERR Wrong number of args calling Redis command from script",
         loader="Wrong number of arguments for 'get' reading the append only file",
         replica="skipped"),
    # (Redis 7.0 words ACL denials otherwise: "this user has no permissions...")
    Case("command denied by ACL", ("SET", "k", "v"), setup=(_ACL_SET,), user="u",
         min_redis=(7, 2),
         socket="-NOPERM User u has no permissions to run the 'set' command",
         queued=("-NOPERM User u has no permissions to run the 'set' command", EXECABORT),
         script="-ERR ACL failure in script: User u has no permissions to run the 'set' command",
         function="-ERR ACL failure in script: User u has no permissions to run the 'set' "
                  "command",
         loader=RAN, replica=RAN),
    Case("key denied by ACL", ("SET", "b", "v"), setup=(_ACL_KEY,), user="u",
         min_redis=(7, 2),
         socket="-NOPERM No permissions to access a key",
         queued=("-NOPERM No permissions to access a key", EXECABORT),
         script="-ERR ACL failure in script: No permissions to access a key",
         function="-ERR ACL failure in script: No permissions to access a key",
         loader=RAN, replica=RAN),
    Case("not enough good replicas", ("SET", "k", "v"),
         setup=(("CONFIG", "SET", "min-replicas-to-write", "1"),),
         undo=(("CONFIG", "SET", "min-replicas-to-write", "0"),),
         socket=_NOREPLICAS, queued=(_NOREPLICAS, EXECABORT),
         script=_NOREPLICAS,
         function=_NOREPLICAS,  # a function declares no no-writes: FCALL is refused itself
         loader=RAN, replica=RAN),
    Case("over maxmemory", ("SET", "k", "v"),
         setup=(("CONFIG", "SET", "maxmemory-policy", "noeviction"),
                ("CONFIG", "SET", "maxmemory", "1")),
         undo=(("CONFIG", "SET", "maxmemory", "0"),),
         socket=_OOM, queued=(_OOM, EXECABORT),
         script=_OOM,
         function=_OOM,  # a function without allow-oom is denyoom: FCALL is refused itself
         loader=RAN, replica=RAN),
    Case("not authenticated", ("GET", "k"),
         setup=(("CONFIG", "SET", "requirepass", "pw"),),
         undo=(("CONFIG", "SET", "requirepass", ""),),
         socket="-NOAUTH Authentication required.",
         script="-NOAUTH Authentication required.",  # EVAL itself is refused
         function="-NOAUTH Authentication required."),
    Case("subscribed mode (RESP2)", ("GET", "k"), before=(("SUBSCRIBE", "ch"),),
         socket="-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                "QUIT / RESET are allowed in this context",
         script="-ERR Can't execute 'eval': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                "QUIT / RESET are allowed in this context",
         function="-ERR Can't execute 'fcall': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                  "QUIT / RESET are allowed in this context"),
    # A replica whose master cannot be reached (port 1): writes refused, reads stale.
    Case("read-only replica", ("SET", "k", "v"),
         setup=(("REPLICAOF", "127.0.0.1", "1"),), undo=(("REPLICAOF", "NO", "ONE"),),
         socket=_READONLY, queued=(_READONLY, EXECABORT), script=_READONLY, function=_READONLY,
         in_process=False),
    Case("stale replica", ("GET", "k"),
         setup=(("CONFIG", "SET", "replica-serve-stale-data", "no"),
                ("REPLICAOF", "127.0.0.1", "1")),
         undo=(("REPLICAOF", "NO", "ONE"), ("CONFIG", "SET", "replica-serve-stale-data", "yes")),
         socket=_MASTERDOWN, queued=(_MASTERDOWN, EXECABORT), script=_MASTERDOWN,
         function=_READONLY,  # a function declares writes: READONLY comes first
         in_process=False),
    Case("a command scripts may not run", ("SAVE",),
         script="-ERR This Redis command is not allowed from script",
         function="-ERR This Redis command is not allowed from script"),
    Case("a command transactions may not queue", ("SAVE",),
         queued=("-ERR Command not allowed inside a transaction", EXECABORT)),
]
IDS = [case.name for case in CASES]


def describe(reply: object) -> str:
    """A decoded reply as the table writes it."""
    if isinstance(reply, hiredis.ReplyError):
        return f"-{reply}"
    if isinstance(reply, bytes):
        return f"${reply.decode('utf-8', 'replace')}"
    if isinstance(reply, int):
        return f":{reply}"
    if isinstance(reply, list):
        return "[" + ", ".join(map(describe, reply)) + "]"
    return repr(reply)


# -- the callers, in-process ----------------------------------------------------------------

class InProcess:
    """A Brook server that never listens: requests go straight to its dispatcher, and what
    they make ready is served after each, as the connection does."""

    def __init__(self) -> None:
        self.server = Server(Config())
        self.admin = Session(self.server)

    def session(self) -> Session:
        return Session(self.server)

    def call(self, session: Session, *args: str) -> str:
        reply = self.server.dispatcher.execute(session, [a.encode() for a in args])
        self.server.blocking.serve_ready()
        if reply is None:
            return "None"
        reader = hiredis.Reader()
        reader.feed(reply or b"")
        return describe(reader.gets())

    def prepare(self, case: Case) -> Session:
        for request in case.setup:
            assert _ok(self.call(self.admin, *request))
        acting = self.session()
        if case.user is not None:
            assert _ok(self.call(acting, "AUTH", case.user, "any"))
        for request in case.before:
            self.call(acting, *request)
        return acting


@pytest.fixture
def brook_in_process() -> Iterator[InProcess]:
    yield InProcess()


def _ok(reply: str) -> bool:
    return reply in ("$OK", "+OK")


@pytest.mark.parametrize("case", [c for c in CASES if c.socket and c.in_process],
                         ids=lambda c: c.name)
def test_in_process_socket(brook_in_process: InProcess, case: Case) -> None:
    brook = brook_in_process
    acting = brook.prepare(case)
    assert brook.call(acting, *case.request) == case.socket


@pytest.mark.parametrize("case", [c for c in CASES if c.queued and c.in_process],
                         ids=lambda c: c.name)
def test_in_process_queued(brook_in_process: InProcess, case: Case) -> None:
    brook = brook_in_process
    acting = brook.prepare(case)
    assert _ok(brook.call(acting, "MULTI"))
    assert case.queued is not None
    assert (brook.call(acting, *case.request), brook.call(acting, "EXEC")) == case.queued


@pytest.mark.parametrize("case", [c for c in CASES if c.script and c.in_process],
                         ids=lambda c: c.name)
def test_in_process_script(brook_in_process: InProcess, case: Case) -> None:
    brook = brook_in_process
    acting = brook.prepare(case)
    assert brook.call(acting, "EVAL", SCRIPT, "0", *case.request) == case.script


@pytest.mark.parametrize("case", [c for c in CASES if c.function and c.in_process],
                         ids=lambda c: c.name)
def test_in_process_function(brook_in_process: InProcess, case: Case) -> None:
    brook = brook_in_process
    assert brook.call(brook.admin, "FUNCTION", "LOAD", LIBRARY) == "$matrix"
    acting = brook.prepare(case)
    assert brook.call(acting, "FCALL", "relay", "0", *case.request) == case.function


@pytest.mark.parametrize("case", [c for c in CASES if c.loader and c.in_process],
                         ids=lambda c: c.name)
def test_in_process_aof_replay(brook_in_process: InProcess, case: Case) -> None:
    """The AOF is never refused (what it holds already ran): only what cannot be resolved
    stops the load."""
    brook = brook_in_process
    brook.prepare(case)
    replayer = brook.server.make_replayer()
    argv = [a.encode() for a in case.request]
    if case.loader == RAN:
        replayer.run(argv, 0)
        assert brook.call(brook.admin, "EXISTS", case.request[1]) == ":1"
    else:
        with pytest.raises(AofError) as failure:
            replayer.run(argv, 0)
        assert str(failure.value) == case.loader


@pytest.mark.parametrize("case", [c for c in CASES if c.replica and c.in_process],
                         ids=lambda c: c.name)
def test_in_process_master_stream(brook_in_process: InProcess, case: Case,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A replica applies what its master sent, whatever its own state; what it cannot resolve
    is logged and skipped (the master ran it)."""
    brook = brook_in_process
    brook.prepare(case)
    capsys.readouterr()
    reader = hiredis.Reader()
    payload = hiredis.pack_command(case.request)
    reader.feed(payload)
    used = apply_master_stream(brook.server.make_replayer(), reader.gets, [])
    assert used == len(payload)
    logged = capsys.readouterr().out  # the server's log (no logfile: standard output)
    if case.replica == RAN:
        assert brook.call(brook.admin, "EXISTS", case.request[1]) == ":1"
        assert "failed to apply" not in logged
    else:
        assert "This replica failed to apply a command from its master" in logged


# A user with rules to check from the start (a session of an unrestricted user is told of a
# change by the server, which lists only connected clients).
_WAITER_USER = ("ACL", "SETUSER", "u", "on", "nopass", "+@all", "-set", "~*", "&*")


def test_in_process_served_waiter(brook_in_process: InProcess) -> None:
    """A parked command is checked again when it is served: its user's rules may have
    changed while it waited (Redis 7.2+)."""
    brook = brook_in_process
    admin = brook.admin
    brook.call(admin, *_WAITER_USER)
    waiting = brook.session()
    brook.call(waiting, "AUTH", "u", "any")
    assert brook.call(waiting, "BLPOP", "l", "0") == "None"  # parked: no reply yet
    brook.call(admin, "ACL", "SETUSER", "u", "-blpop")
    assert brook.call(admin, "LPUSH", "l", "x") == ":1"
    reader = hiredis.Reader()
    reader.feed(b"".join(waiting.out))
    assert describe(reader.gets()) == ("-NOPERM User u has no permissions to run the 'blpop' "
                                       "command")
    assert brook.call(admin, "LLEN", "l") == ":1"  # the refused waiter took nothing


# -- the callers a client reaches, over TCP, on Brook and on Redis --------------------------

class OverTcp:
    def __init__(self, server: ServerProcess) -> None:
        self.process = server
        self.admin = RawConnection(server.port)
        self.opened = [self.admin]

    def connection(self) -> RawConnection:
        conn = RawConnection(self.process.port)
        self.opened.append(conn)
        return conn

    @staticmethod
    def call(conn: RawConnection, *args: str) -> str:
        return describe(conn.call(*args))

    def prepare(self, case: Case) -> RawConnection:
        for request in case.setup:
            self.call(self.admin, *request)
        acting = self.connection()
        if case.user is not None:
            self.call(acting, "AUTH", case.user, "any")
        for request in case.before:
            self.call(acting, *request)
        return acting

    def close(self, case: Case) -> None:
        for request in case.undo:
            self.call(self.admin, *request)
        for conn in self.opened:
            conn.sock.close()


@pytest.fixture
def tcp(server: ServerProcess) -> Iterator[OverTcp]:
    over = OverTcp(server)
    yield over


def _run_over_tcp(tcp: OverTcp, case: Case, caller: Callable[[RawConnection], str]) -> str:
    if tcp.process.version < case.min_redis:
        pytest.skip(f"needs Redis >= {case.min_redis}")
    try:
        return caller(tcp.prepare(case))
    finally:
        tcp.close(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.socket], ids=lambda c: c.name)
def test_socket(tcp: OverTcp, case: Case) -> None:
    assert _run_over_tcp(tcp, case, lambda conn: tcp.call(conn, *case.request)) == case.socket


@pytest.mark.parametrize("case", [c for c in CASES if c.queued], ids=lambda c: c.name)
def test_queued(tcp: OverTcp, case: Case) -> None:
    def run(conn: RawConnection) -> str:
        assert _ok(tcp.call(conn, "MULTI"))
        return repr((tcp.call(conn, *case.request), tcp.call(conn, "EXEC")))

    assert _run_over_tcp(tcp, case, run) == repr(case.queued)


@pytest.mark.parametrize("case", [c for c in CASES if c.script], ids=lambda c: c.name)
def test_script(tcp: OverTcp, case: Case) -> None:
    reply = _run_over_tcp(tcp, case,
                          lambda conn: tcp.call(conn, "EVAL", SCRIPT, "0", *case.request))
    assert reply == case.script


@pytest.mark.parametrize("case", [c for c in CASES if c.function], ids=lambda c: c.name)
def test_function(tcp: OverTcp, case: Case) -> None:
    tcp.call(tcp.admin, "FUNCTION", "LOAD", LIBRARY)
    reply = _run_over_tcp(tcp, case,
                          lambda conn: tcp.call(conn, "FCALL", "relay", "0", *case.request))
    assert reply == case.function


@pytest.mark.min_redis(7, 2)
def test_served_waiter(tcp: OverTcp) -> None:
    admin = tcp.admin
    tcp.call(admin, *_WAITER_USER)
    waiting = tcp.connection()
    tcp.call(waiting, "AUTH", "u", "any")
    waiting.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0\r\n")
    assert waiting.read(timeout=0.3) == b""  # parked
    tcp.call(admin, "ACL", "SETUSER", "u", "-blpop")
    assert tcp.call(admin, "LPUSH", "l", "x") == ":1"
    assert waiting.read(b"\r\n", timeout=5) == (b"-NOPERM User u has no permissions to run "
                                                b"the 'blpop' command\r\n")
    assert tcp.call(admin, "LLEN", "l") == ":1"
    tcp.close(Case("waiter", ()))
