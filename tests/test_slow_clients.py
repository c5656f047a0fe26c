"""Slow and idle clients (slowloris): thousands of connections that trickle a request one byte
at a time, stop in the middle of one or never send anything must not hold up anybody else's
replies; ``timeout`` closes exactly the connections Redis closes; ``maxclients`` holds under a
flood of connections.

Every test starts its own server (Brook, then real Redis) in a temporary directory, so that
client counts and the server's open file descriptors are exact and the session's shared servers
never see thousands of sockets. No test asserts that something happens within a wall-clock
bound: replies are checked for correctness and completion, the one latency comparison is a
loose ratio of medians taken on the same server within the same test, and the timeout tests
rely only on Redis's documented minimum (nobody is closed before ``timeout`` seconds of
idleness). ``python -m bench.slowloris`` measures the figures.

What Redis 7.0 does, and Brook must do (src/timeout.c ``clientsCronHandleTimeout``,
src/networking.c ``readQueryFromClient``, ``writeToClient``, ``acceptCommonHandler``):

* A client is closed when ``now - lastinteraction > timeout`` (whole seconds), unless it is
  blocked (BLPOP, XREAD BLOCK, with or without a command timeout), subscribed (channels,
  patterns or shard channels; RESP2 or RESP3) or a MONITOR (a "slave" to Redis).
* ``lastinteraction`` is refreshed by every read that returns bytes, complete request or not:
  a client that trickles one byte per second with ``timeout 2`` is never closed. It is also
  refreshed by every write of a reply.
* A connection over ``maxclients`` (counting every connected client) is sent
  ``-ERR max number of clients reached`` and closed; it counts in ``rejected_connections``
  and not in ``total_connections_received``.
"""

from __future__ import annotations

import os
import resource
import selectors
import socket
import statistics
import time
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import (
    RawConnection,
    ServerProcess,
    encode_request,
    exchange,
    redis_binary,
    start_brook,
    start_redis,
)

CROWD = 2_000  # slow connections in the slowloris test
CONNECT_BATCH = 200  # connections opened before waiting for the server to accept them
TRICKLE_PER_REQUEST = 20  # one-byte sends to slow clients before each normal request
NORMAL_SAMPLES = 300  # normal round trips measured without and with the idle crowd
# Idle connections cost a server nothing per request: the normal client's median round trip
# with 2,000 of them connected stays within this factor of the median without (measured on
# the same server a moment earlier). Very loose on purpose: it catches per-request work that
# grows with the number of connections, not noise of a shared machine.
IDLE_CROWD_FACTOR = 10
MAX_CLIENTS_REACHED = b"-ERR max number of clients reached\r\n"
DEADLINE = 20.0  # seconds before a wait for the server is declared hung (never a threshold)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def raise_fd_limit() -> tuple[int, int]:
    """Soft RLIMIT_NOFILE := hard (servers started afterwards inherit it); returns the old."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return soft, hard


@pytest.fixture
def fresh(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[ServerProcess]:
    """A server of its own (``brook`` or ``redis``, parametrised) that must still be running
    when the test ends: a crash under slow clients fails the test even if its checks passed."""
    kind = getattr(request, "param", "brook")
    if kind == "redis" and redis_binary() is None:
        pytest.skip("redis-server is not installed")
    previous = raise_fd_limit()
    tmp = tmp_path_factory.mktemp(kind)
    proc = start_brook(tmp) if kind == "brook" else start_redis(tmp)
    try:
        yield proc
    finally:
        alive = proc.process.poll() is None
        proc.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, previous)
    assert alive, f"{kind} exited during the test:\n{proc.log()[-3000:]}"


BOTH = pytest.mark.parametrize("fresh", ["brook", "redis"], indirect=True)


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    """Poll ``predicate``; the deadline only turns a hung server into a failure (a
    TimeoutError, not the assertion a behaviour check makes)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(0.01)


def info(conn: RawConnection, section: str) -> dict[str, str]:
    reply = conn.call("INFO", section)
    assert isinstance(reply, bytes), reply
    pairs = (line.partition(":") for line in reply.decode().splitlines())
    return {key: value for key, sep, value in pairs if sep}


def connected_clients(conn: RawConnection) -> int:
    return int(info(conn, "clients")["connected_clients"])


def open_fds(proc: ServerProcess) -> int | None:
    """The server process's open file descriptors (Linux), to find leaked sockets."""
    try:
        return len(os.listdir(f"/proc/{proc.process.pid}/fd"))
    except OSError:
        return None


def wait_fds(proc: ServerProcess, expected: int | None) -> None:
    if expected is not None:
        wait_until(lambda: open_fds(proc) == expected,
                   f"the server's open fds to return to {expected} (now {open_fds(proc)})")


def drain(sock: socket.socket) -> tuple[bytes, bool]:
    """What the server has sent so far, and whether it has closed the connection, without
    waiting."""
    data = b""
    saved = sock.gettimeout()
    sock.setblocking(False)  # a socket with a timeout would wait for it, even for MSG_DONTWAIT
    try:
        while True:
            try:
                chunk = sock.recv(1 << 16)
            except BlockingIOError:
                return data, False
            except ConnectionResetError:
                return data, True
            if not chunk:
                return data, True
            data += chunk
    finally:
        sock.settimeout(saved)


def read_exactly(sock: socket.socket, size: int) -> bytes:
    sock.settimeout(DEADLINE)
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return data + b"<CLOSED>"
        data += chunk
    return data


def connect_many(port: int, count: int, control: RawConnection, base: int) -> list[socket.socket]:
    """``count`` connections, opened in batches that the server accepts before the next (a
    full accept queue drops SYNs, which costs a one-second retransmit)."""
    socks: list[socket.socket] = []
    while len(socks) < count:
        for _ in range(min(CONNECT_BATCH, count - len(socks))):
            sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socks.append(sock)
        expected = base + len(socks)
        wait_until(lambda: connected_clients(control) >= expected,  # noqa: B023 - called now
                   f"{expected} connected clients")
    return socks


class NormalClient:
    """A well-behaved client: SET, GET and XADD round trips, each reply checked, each timed."""

    def __init__(self, port: int) -> None:
        self.conn = RawConnection(port)
        self.count = 0
        self.last_id = (0, 0)

    def round_trip(self) -> float:
        """One request and its reply (checked); returns the round trip in seconds."""
        index = self.count
        self.count += 1
        kind = index % 3
        if kind == 0:
            request: tuple[bytes | str | int, ...] = ("SET", f"normal:{index}", f"value:{index}")
        elif kind == 1:
            request = ("GET", f"normal:{index - 1}")
        else:
            request = ("XADD", "normal:stream", "MAXLEN", "~", 1000, "*", "n", index)
        started = time.perf_counter()
        reply = self.conn.call(*request, timeout=DEADLINE)
        elapsed = time.perf_counter() - started
        if kind == 0:
            assert reply == b"OK", reply
        elif kind == 1:
            assert reply == f"value:{index - 1}".encode(), reply
        else:
            assert isinstance(reply, bytes), reply
            ms, _, seq = reply.partition(b"-")
            entry_id = (int(ms), int(seq))
            assert entry_id > self.last_id, (reply, self.last_id)
            self.last_id = entry_id
        return elapsed


# ---------------------------------------------------------------------------------------------
# (a) A slowloris crowd does not hold up a normal client
# ---------------------------------------------------------------------------------------------


def trickled_request(index: int) -> bytes:
    """What trickler ``index`` sends one byte at a time: a multibulk or an inline SET."""
    if index % 2:
        return b"SET slow:%d t%d\r\n" % (index, index)
    return encode_request("SET", f"slow:{index}", f"t{index}")


def partial_request(index: int) -> tuple[bytes, bytes]:
    """A SET cut at one of five places (inside the count line, after the command's bulk header,
    inside the key, after the value's bulk header, between CR and LF): sent at once, then
    nothing until the test completes it."""
    request = encode_request("SET", f"part:{index}", f"p{index}")
    cut = (3, 8, 20, len(request) - 4, len(request) - 1)[index % 5]
    return request[:cut], request[cut:]


def skip_without_fds_for_the_crowd() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < CROWD + 200:
        pytest.skip(f"RLIMIT_NOFILE hard limit {soft} is below the {CROWD + 200} this test needs")


@BOTH
def test_slowloris_crowd_does_not_hold_up_a_normal_client(fresh: ServerProcess) -> None:
    skip_without_fds_for_the_crowd()
    control = RawConnection(fresh.port)
    normal = NormalClient(fresh.port)
    wait_until(lambda: connected_clients(control) == 2, "the start-up probes to disconnect")
    fds_before = open_fds(fresh)

    baseline = [normal.round_trip() for _ in range(NORMAL_SAMPLES)]

    crowd = connect_many(fresh.port, CROWD, control, 2)
    tricklers, partials, silent = crowd[0::3], crowd[1::3], crowd[2::3]
    for index, sock in enumerate(partials):
        sock.sendall(partial_request(index)[0])
    with_idle_crowd = [normal.round_trip() for _ in range(NORMAL_SAMPLES)]

    # Every trickler sends its request one byte per visit, round-robin, TRICKLE_PER_REQUEST
    # one-byte sends before each normal request: each normal request arrives behind that many
    # reads from slow clients, and every trickler is mid-request for most of the phase.
    requests = [trickled_request(index) for index in range(len(tricklers))]
    sent = [0] * len(tricklers)
    unfinished = list(range(len(tricklers)))
    turn = 0
    while_trickling: list[float] = []
    while unfinished:
        for _ in range(TRICKLE_PER_REQUEST):
            if not unfinished:
                break
            turn %= len(unfinished)
            index = unfinished[turn]
            tricklers[index].send(requests[index][sent[index]:sent[index] + 1])
            sent[index] += 1
            if sent[index] == len(requests[index]):
                unfinished.pop(turn)
            else:
                turn += 1
        while_trickling.append(normal.round_trip())

    # Every slow client was served too, exactly once, once its request was complete.
    for sock in tricklers:
        assert read_exactly(sock, 5) == b"+OK\r\n"
    for index, sock in enumerate(partials):
        assert drain(sock) == (b"", False), "a partial request was answered or closed"
        sock.sendall(partial_request(index)[1])
        assert read_exactly(sock, 5) == b"+OK\r\n"
    for sock in silent:
        assert drain(sock) == (b"", False)
        sock.sendall(b"PING\r\n")
        assert read_exactly(sock, 7) == b"+PONG\r\n"
    keys = [f"slow:{i}" for i in range(len(tricklers))] + [f"part:{i}" for i in range(len(partials))]
    values = [f"t{i}".encode() for i in range(len(tricklers))]
    values += [f"p{i}".encode() for i in range(len(partials))]
    assert control.call("MGET", *keys, timeout=DEADLINE) == values
    assert connected_clients(control) == 2 + CROWD

    for sock in crowd:
        sock.close()
    wait_until(lambda: connected_clients(control) == 2, "the crowd's connections to be freed")
    wait_fds(fresh, fds_before)
    assert normal.round_trip() >= 0

    base, idle, trickling = (statistics.median(s) * 1e6
                             for s in (baseline, with_idle_crowd, while_trickling))
    print(f"\n{fresh.kind}: normal client median round trip {base:.0f} µs alone, {idle:.0f} µs "
          f"beside {CROWD} idle connections, {trickling:.0f} µs behind "
          f"{TRICKLE_PER_REQUEST} one-byte reads each ({len(while_trickling)} requests)")
    assert idle <= IDLE_CROWD_FACTOR * base, (base, idle)


# ---------------------------------------------------------------------------------------------
# (b) timeout
# ---------------------------------------------------------------------------------------------


TRICKLE_INTERVAL = 0.25  # seconds between one-byte sends of the timeout test's tricklers
STALLED_AFTER = 1.0  # seconds after the timeout is set when the stalled trickler stops
NEVER_COMPLETE = b"*2\r\n$4\r\nECHO\r\n$100\r\n"  # a header, then a 100-byte bulk trickled


@BOTH
def test_timeout_closes_idle_and_stalled_clients_as_redis_does(fresh: ServerProcess) -> None:
    control = RawConnection(fresh.port)

    def client(*requests: bytes, replies: int = 1) -> RawConnection:
        conn = RawConnection(fresh.port)
        for request in requests:
            assert exchange(conn, request, replies) != b""
        return conn

    # Closed by the timeout: idle, stopped mid-request, idle in MULTI, no longer subscribed,
    # and a trickler that stops sending.
    closing = {
        "connected, silent": RawConnection(fresh.port),
        "partial request, then silent": RawConnection(fresh.port),
        "idle inside MULTI": client(b"MULTI\r\n"),
        "unsubscribed": client(b"SUBSCRIBE gone\r\n", b"UNSUBSCRIBE\r\n"),
        "trickler that stops": RawConnection(fresh.port),
    }
    closing["partial request, then silent"].send(b"*2\r\n$4\r\nECHO\r\n$5\r\nab")
    # Kept: a trickler whose request never completes (every read counts as an interaction),
    # blocked clients with and without a command timeout, subscribers, a MONITOR.
    kept = {
        "trickler": RawConnection(fresh.port),
        "BLPOP 0": RawConnection(fresh.port),
        "BLPOP 60": RawConnection(fresh.port),
        "XREAD BLOCK 0": RawConnection(fresh.port),
        "SUBSCRIBE": client(b"SUBSCRIBE news\r\n"),
        "PSUBSCRIBE": client(b"PSUBSCRIBE ne*\r\n"),
        "SSUBSCRIBE": client(b"SSUBSCRIBE shard\r\n"),
        "RESP3 SUBSCRIBE": client(b"HELLO 3\r\n", b"SUBSCRIBE news\r\n"),
        "MONITOR": client(b"MONITOR\r\n"),
    }
    kept["BLPOP 0"].send(b"BLPOP queue 0\r\n")
    kept["BLPOP 60"].send(b"BLPOP other 60\r\n")
    kept["XREAD BLOCK 0"].send(b"XREAD BLOCK 0 STREAMS events $\r\n")
    wait_until(lambda: info(control, "clients")["blocked_clients"] == "3", "3 blocked clients")
    stopping = closing["trickler that stops"]
    for conn in (kept["trickler"], stopping):
        conn.send(NEVER_COMPLETE)
    for conn in (*closing.values(), *kept.values()):
        drain(conn.sock)

    assert exchange(control, b"CONFIG SET timeout 1\r\n") == b"+OK\r\n"
    started = time.monotonic()
    next_byte = started
    closed_at: dict[str, float] = {}
    trickled = 0  # payload bytes the kept trickler has sent
    while len(closed_at) < len(closing):
        now = time.monotonic()
        elapsed = now - started
        if elapsed > DEADLINE:
            raise TimeoutError(f"not closed after {DEADLINE:.0f} s: {set(closing) - set(closed_at)}")
        if now >= next_byte:
            next_byte = now + TRICKLE_INTERVAL
            kept["trickler"].send(b"x")
            trickled += 1
            if elapsed < STALLED_AFTER:
                stopping.send(b"x")
        assert exchange(control, b"PING\r\n") == b"+PONG\r\n"  # an active client is kept
        for name, conn in closing.items():
            if name not in closed_at and drain(conn.sock)[1]:
                closed_at[name] = elapsed
        time.sleep(0.05)
    # None went before it had been idle for the timeout (1 s; the stalled trickler's clock
    # starts at its last byte). By the time the stalled one went, the kept trickler's request
    # had been incomplete for longer than the timeout: a partial request is no idleness.
    assert min(closed_at.values()) >= 0.9, closed_at
    assert closed_at["trickler that stops"] >= STALLED_AFTER + 0.9, closed_at
    for name, conn in kept.items():
        assert not drain(conn.sock)[1], f"{name} was closed"

    # The kept clients still work: the blocked ones are served, subscribers get messages.
    assert exchange(control, b"LPUSH queue job\r\n") == b":1\r\n"
    assert kept["BLPOP 0"].read(b"job\r\n", 5) == b"*2\r\n$5\r\nqueue\r\n$3\r\njob\r\n"
    assert exchange(control, b"LPUSH other job2\r\n") == b":1\r\n"
    assert kept["BLPOP 60"].read(b"job2\r\n", 5) == b"*2\r\n$5\r\nother\r\n$4\r\njob2\r\n"
    assert exchange(control, b"XADD events 1-1 f v\r\n") == b"$3\r\n1-1\r\n"
    assert kept["XREAD BLOCK 0"].read(b"v\r\n", 5) == (
        b"*1\r\n*2\r\n$6\r\nevents\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert exchange(control, b"PUBLISH news hi\r\n") == b":3\r\n"
    assert kept["SUBSCRIBE"].read(b"hi\r\n", 5) == b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n"
    assert kept["RESP3 SUBSCRIBE"].read(b"hi\r\n", 5) == (
        b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n")
    assert kept["PSUBSCRIBE"].read(b"hi\r\n", 5) == (
        b"*4\r\n$8\r\npmessage\r\n$3\r\nne*\r\n$4\r\nnews\r\n$2\r\nhi\r\n")
    assert exchange(control, b"SPUBLISH shard hey\r\n") == b":1\r\n"
    assert kept["SSUBSCRIBE"].read(b"hey\r\n", 5) == (
        b"*3\r\n$8\r\nsmessage\r\n$5\r\nshard\r\n$3\r\nhey\r\n")
    assert b'"PUBLISH" "news" "hi"' in kept["MONITOR"].read(b'"hey"', 5)
    # The trickler's request completes and is answered.
    assert exchange(kept["trickler"], b"x" * (100 - trickled) + b"\r\n") == (
        b"$100\r\n" + b"x" * 100 + b"\r\n")
    assert exchange(control, b"CONFIG SET timeout 0\r\n") == b"+OK\r\n"


@BOTH
def test_a_reply_after_a_long_block_restarts_the_idle_clock(fresh: ServerProcess) -> None:
    control = RawConnection(fresh.port)
    idle, popper, reader, expiring = (RawConnection(fresh.port) for _ in range(4))
    popper.send(b"BLPOP jobs 0\r\n")
    reader.send(b"XREAD BLOCK 0 STREAMS feed $\r\n")
    expiring.send(b"BLPOP nothing 3.4\r\n")  # answered nil by its own timeout
    wait_until(lambda: info(control, "clients")["blocked_clients"] == "3", "3 blocked clients")
    assert exchange(control, b"CONFIG SET timeout 3\r\n") == b"+OK\r\n"

    def keep_control_busy(seconds: float) -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            assert exchange(control, b"PING\r\n") == b"+PONG\r\n"
            time.sleep(0.2)

    keep_control_busy(3.5)  # blocked for longer than the timeout: exempt, as in Redis
    assert exchange(control, b"LPUSH jobs j\r\n") == b":1\r\n"
    assert exchange(control, b"XADD feed 1-1 f v\r\n") == b"$3\r\n1-1\r\n"
    assert popper.read(b"j\r\n", 5) == b"*2\r\n$4\r\njobs\r\n$1\r\nj\r\n"
    assert reader.read(b"v\r\n", 5).endswith(b"$1\r\nf\r\n$1\r\nv\r\n")
    assert expiring.read(b"\r\n", 5) == b"*-1\r\n"
    # Redis closes a client when more than `timeout` (3) whole seconds passed since its last
    # read or write: each reply was written less than 2 s before these checks.
    keep_control_busy(2.0)
    if not drain(idle.sock)[1]:  # the check never ran: no evidence either way
        raise RuntimeError("an idle client was not closed: the timeout check did not run")
    for name, conn in (("BLPOP", popper), ("XREAD", reader), ("expired BLPOP", expiring)):
        assert not drain(conn.sock)[1], f"the {name} client was closed after its reply"
        assert exchange(conn, b"PING\r\n") == b"+PONG\r\n"
    assert exchange(control, b"CONFIG SET timeout 0\r\n") == b"+OK\r\n"


@BOTH
def test_an_idle_crowd_times_out_a_slice_at_a_time(fresh: ServerProcess) -> None:
    skip_without_fds_for_the_crowd()
    control = RawConnection(fresh.port)
    normal = RawConnection(fresh.port)
    wait_until(lambda: connected_clients(control) == 2, "the start-up probes to disconnect")
    crowd = connect_many(fresh.port, CROWD, control, 2)
    # One request each, all at once: the whole crowd's idle clocks start together.
    for sock in crowd:
        sock.sendall(b"PING\r\n")
    for sock in crowd:
        assert read_exactly(sock, 7) == b"+PONG\r\n"
    control.close()
    assert exchange(normal, b"CONFIG SET timeout 1\r\n") == b"+OK\r\n"
    selector = selectors.DefaultSelector()
    for sock in crowd:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    # Between two consecutive replies to the normal client, how many of the crowd were closed?
    closed = largest = 0
    deadline = time.monotonic() + DEADLINE
    while closed < CROWD // 2:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {closed} of {CROWD} idle clients were closed")
        assert exchange(normal, b"PING\r\n") == b"+PONG\r\n"
        burst = 0
        for key, _ in selector.select(0):
            assert drain(key.fileobj)[1]  # type: ignore[arg-type]
            selector.unregister(key.fileobj)
            burst += 1
        closed += burst
        largest = max(largest, burst)
    selector.close()
    assert exchange(normal, b"CONFIG SET timeout 0\r\n") == b"+OK\r\n"
    for sock in crowd:
        sock.close()
    print(f"\n{fresh.kind}: at most {largest} of {CROWD} idle clients closed between two "
          "replies to another client")
    # Half the crowd or more went in one go, with no reply to anybody else in between.
    assert largest < CROWD // 2, f"{largest} of {CROWD} idle clients closed in one go"


# ---------------------------------------------------------------------------------------------
# (c) maxclients under a flood
# ---------------------------------------------------------------------------------------------


MAXCLIENTS = 100
FLOOD = 300
FLOOD_BATCH = 50


@BOTH
def test_maxclients_holds_under_a_flood(fresh: ServerProcess) -> None:
    control = RawConnection(fresh.port)
    wait_until(lambda: connected_clients(control) == 1, "the start-up probes to disconnect")
    assert exchange(control, b"CONFIG SET maxclients %d\r\n" % MAXCLIENTS) == b"+OK\r\n"
    fds_before = open_fds(fresh)
    rejected_before = int(info(control, "stats")["rejected_connections"])
    admitted = MAXCLIENTS - 1  # the control connection counts

    flood: list[socket.socket] = []
    for batch in range(FLOOD // FLOOD_BATCH):
        for _ in range(FLOOD_BATCH):
            flood.append(socket.create_connection(("127.0.0.1", fresh.port), timeout=DEADLINE))
        # The connected client is served throughout.
        key = b"during:%d" % batch
        assert exchange(control, encode_request("SET", key, batch)) == b"+OK\r\n"
        assert exchange(control, encode_request("GET", key)) == b"$1\r\n%d\r\n" % batch
    rejected = FLOOD - admitted
    wait_until(lambda: int(info(control, "stats")["rejected_connections"])
               == rejected_before + rejected, f"{rejected} rejected connections")
    assert connected_clients(control) == MAXCLIENTS

    # The first ones in are admitted; every later one is told why and closed.
    for index, sock in enumerate(flood):
        expected = (b"", False) if index < admitted else (MAX_CLIENTS_REACHED, True)
        assert drain(sock) == expected, index
    for sock in flood[:admitted]:
        sock.sendall(b"PING\r\n")
    for sock in flood[:admitted]:
        assert read_exactly(sock, 7) == b"+PONG\r\n"

    for sock in flood:
        sock.close()
    wait_until(lambda: connected_clients(control) == 1, "the flood's connections to be freed")
    # Room again: as many new clients as the limit allows, and the limit still holds.
    again = [RawConnection(fresh.port) for _ in range(admitted)]
    for conn in again:
        assert exchange(conn, b"PING\r\n") == b"+PONG\r\n"
    refused = RawConnection(fresh.port)
    assert refused.read(timeout=5) == MAX_CLIENTS_REACHED + b"<CLOSED>"
    for conn in (*again, refused):
        conn.close()
    wait_until(lambda: connected_clients(control) == 1, "the second wave to be freed")
    wait_fds(fresh, fds_before)
    assert exchange(control, b"CONFIG SET maxclients 10000\r\n") == b"+OK\r\n"


@BOTH
def test_refused_connections_are_not_counted_as_received(fresh: ServerProcess) -> None:
    control = RawConnection(fresh.port)
    wait_until(lambda: connected_clients(control) == 1, "the start-up probes to disconnect")
    assert exchange(control, b"CONFIG SET maxclients 1\r\n") == b"+OK\r\n"
    stats = info(control, "stats")
    refused = RawConnection(fresh.port)
    assert refused.read(timeout=5) == MAX_CLIENTS_REACHED + b"<CLOSED>"
    after = info(control, "stats")
    assert int(after["rejected_connections"]) == int(stats["rejected_connections"]) + 1
    assert after["total_connections_received"] == stats["total_connections_received"]
    assert exchange(control, b"CONFIG SET maxclients 10000\r\n") == b"+OK\r\n"
