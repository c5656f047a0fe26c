"""Limits and isolation: maxclients, proto-max-bulk-len, client-query-buffer-limit, idle
timeout, requirepass, and that one misbehaving client never affects another.

Every test runs against Brook and real Redis; settings are changed with CONFIG SET, so these also
check that the settings take effect on a running server.
"""

from __future__ import annotations

import socket
import time

import pytest
import redis

from tests.conftest import RawConnection, ServerProcess, encode_request, exchange


def wait_closed(conn: RawConnection, timeout: float) -> bool:
    """Whether the server closes ``conn`` within ``timeout`` seconds (replies are ignored)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if conn.read(timeout=0.2).endswith(b"<CLOSED>"):
            return True
    return False


def connected_clients(r: redis.Redis) -> int:
    return r.info("clients")["connected_clients"]


# ---------------------------------------------------------------------------------------------
# maxclients
# ---------------------------------------------------------------------------------------------


def test_maxclients(server: ServerProcess, r: redis.Redis):
    r.ping()
    limit = connected_clients(r) + 1
    rejected_before = r.info("stats")["rejected_connections"]
    r.config_set("maxclients", str(limit))
    try:
        admitted = RawConnection(server.port)
        assert exchange(admitted, b"PING\r\n") == b"+PONG\r\n"
        refused = RawConnection(server.port)
        assert refused.read(timeout=5) == b"-ERR max number of clients reached\r\n<CLOSED>"
        assert exchange(admitted, b"PING\r\n") == b"+PONG\r\n"
        assert r.info("stats")["rejected_connections"] == rejected_before + 1
        admitted.close()
        deadline = time.monotonic() + 5
        while connected_clients(r) >= limit and time.monotonic() < deadline:
            time.sleep(0.02)
        again = RawConnection(server.port)
        assert exchange(again, b"PING\r\n") == b"+PONG\r\n"
        again.close()
    finally:
        r.config_set("maxclients", "10000")


# ---------------------------------------------------------------------------------------------
# Request size limits
# ---------------------------------------------------------------------------------------------


def test_proto_max_bulk_len(server: ServerProcess, r: redis.Redis):
    r.config_set("proto-max-bulk-len", "1mb")
    bystander = RawConnection(server.port)
    exchange(bystander, b"SET before 1\r\n")
    conn = RawConnection(server.port)
    conn.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (1024 * 1024 + 1))
    assert conn.read(timeout=5) == b"-ERR Protocol error: invalid bulk length\r\n<CLOSED>"
    # A bulk of exactly the limit is accepted.
    value = b"v" * (1024 * 1024)
    assert exchange(bystander, encode_request(b"SET", b"k", value)) == b"+OK\r\n"
    assert r.strlen("k") == len(value)
    r.config_set("proto-max-bulk-len", "512mb")
    big = b"w" * (2 * 1024 * 1024)
    assert exchange(bystander, encode_request(b"SET", b"big", big)) == b"+OK\r\n"
    assert exchange(bystander, b"GET before\r\n") == b"$1\r\n1\r\n"


def _push_until_closed(conn: RawConnection, header: bytes, total: int) -> bool:
    """Send ``header`` then ``total`` bytes of payload; True when the server hung up."""
    try:
        conn.send(header)
        sent = 0
        while sent < total:
            conn.send(b"x" * 65536)
            sent += 65536
    except (BrokenPipeError, ConnectionResetError):
        return True
    return wait_closed(conn, 5)


def test_client_query_buffer_limit(server: ServerProcess, r: redis.Redis):
    r.config_set("client-query-buffer-limit", "1mb")
    bystander = RawConnection(server.port)
    conn = RawConnection(server.port)
    assert _push_until_closed(conn, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n", 3_000_000)
    assert exchange(bystander, b"PING\r\n") == b"+PONG\r\n"
    r.config_set("client-query-buffer-limit", "1gb")
    value = b"y" * 3_000_000
    assert exchange(bystander, encode_request(b"SET", b"k", value)) == b"+OK\r\n"


# ---------------------------------------------------------------------------------------------
# Idle timeout
# ---------------------------------------------------------------------------------------------


def test_idle_clients_are_closed(server: ServerProcess, r: redis.Redis):
    idle = RawConnection(server.port)
    exchange(idle, b"PING\r\n")
    monitor = RawConnection(server.port)
    assert exchange(monitor, b"MONITOR\r\n") == b"+OK\r\n"
    busy = RawConnection(server.port)
    r.config_set("timeout", "1")
    started = time.monotonic()
    closed = False
    while time.monotonic() - started < 6 and not closed:
        assert exchange(busy, b"ECHO alive\r\n") == b"$5\r\nalive\r\n"
        closed = idle.read(timeout=0.3).endswith(b"<CLOSED>")
    assert closed
    assert time.monotonic() - started >= 0.9
    # ``r`` was idle too (redis-py before 6 does not reconnect by itself): the busy connection
    # turns the timeout off.
    assert exchange(busy, b"CONFIG SET timeout 0\r\n") == b"+OK\r\n"
    assert not monitor.read(timeout=0.2).endswith(b"<CLOSED>")
    assert exchange(busy, b"PING\r\n") == b"+PONG\r\n"


def test_no_timeout_by_default(server: ServerProcess, r: redis.Redis):
    assert r.config_get("timeout") == {"timeout": "0"}
    conn = RawConnection(server.port)
    time.sleep(1.2)
    assert exchange(conn, b"PING\r\n") == b"+PONG\r\n"


# ---------------------------------------------------------------------------------------------
# requirepass, AUTH, HELLO AUTH
# ---------------------------------------------------------------------------------------------

NOAUTH = b"-NOAUTH Authentication required.\r\n"
WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


def test_requirepass(server: ServerProcess, r: redis.Redis):
    r.ping()
    r.config_set("requirepass", "pw")
    try:
        # Connections made before the password was set stay authenticated, as in Redis.
        assert r.ping()
        conn = RawConnection(server.port)
        assert exchange(conn, b"PING\r\n") == NOAUTH
        assert exchange(conn, b"GET k\r\n") == NOAUTH
        assert exchange(conn, b"AUTH wrong\r\n") == WRONGPASS
        assert exchange(conn, b"AUTH default wrong\r\n") == WRONGPASS
        assert exchange(conn, b"AUTH nobody pw\r\n") == WRONGPASS
        assert exchange(conn, b"AUTH pw\r\n") == b"+OK\r\n"
        assert exchange(conn, b"PING\r\n") == b"+PONG\r\n"
        other = RawConnection(server.port)
        assert exchange(other, b"AUTH default pw\r\n") == b"+OK\r\n"
        assert exchange(other, b"PING\r\n") == b"+PONG\r\n"
        client = server.client(password="pw")
        assert client.ping()
        client.close()
    finally:
        r.config_set("requirepass", "")
    fresh = RawConnection(server.port)
    assert exchange(fresh, b"PING\r\n") == b"+PONG\r\n"


def test_removing_the_password_authenticates_waiting_clients(server: ServerProcess, r: redis.Redis):
    r.config_set("requirepass", "pw")
    try:
        waiting = RawConnection(server.port)
        assert exchange(waiting, b"PING\r\n") == NOAUTH
    finally:
        r.config_set("requirepass", "")
    assert exchange(waiting, b"PING\r\n") == b"+PONG\r\n"


def test_hello_auth(server: ServerProcess, r: redis.Redis):
    r.config_set("requirepass", "pw")
    try:
        conn = RawConnection(server.port)
        assert exchange(conn, b"HELLO 3\r\n").startswith(
            b"-NOAUTH HELLO must be called with the client already authenticated"
        )
        assert exchange(conn, b"HELLO 3 AUTH default wrong\r\n") == WRONGPASS
        reply = exchange(conn, b"HELLO 3 AUTH default pw SETNAME authed\r\n")
        assert reply.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n")
        assert exchange(conn, b"CLIENT GETNAME\r\n") == b"$6\r\nauthed\r\n"
    finally:
        r.config_set("requirepass", "")


@pytest.mark.min_redis(7, 2)  # 7.0 authenticated with each AUTH pair as it came
def test_hello_reads_every_option_before_it_authenticates(server: ServerProcess,
                                                          r: redis.Redis):
    """The last AUTH pair is the one tried, and a bad option anywhere (a client name with a
    space) refuses the whole HELLO: nothing is authenticated, named or switched."""
    r.config_set("requirepass", "pw")
    try:
        conn = RawConnection(server.port)
        assert exchange(conn, b"HELLO 2 AUTH default pw AUTH default wrong\r\n") == WRONGPASS
        assert exchange(conn, b'HELLO 3 AUTH default pw SETNAME "a b"\r\n') == (
            b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n")
        assert exchange(conn, b"PING\r\n").startswith(b"-NOAUTH")
        reply = exchange(conn, b"HELLO 2 AUTH default wrong AUTH default pw\r\n")
        assert reply.startswith(b"*14\r\n$6\r\nserver\r\n")
        assert exchange(conn, b"PING\r\n") == b"+PONG\r\n"
    finally:
        r.config_set("requirepass", "")


@pytest.mark.min_redis(7, 2)
def test_hello_noauth_text(server: ServerProcess, r: redis.Redis):
    r.config_set("requirepass", "pw")
    try:
        conn = RawConnection(server.port)
        assert exchange(conn, b"HELLO 3\r\n") == (
            b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            b"HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
            b"select the RESP protocol version at the same time\r\n"
        )
    finally:
        r.config_set("requirepass", "")


def test_auth_without_password_configured(raw: RawConnection):
    assert exchange(raw, b"AUTH foo\r\n") == (
        b"-ERR AUTH <password> called without any password configured for the default user. "
        b"Are you sure your configuration is correct?\r\n"
    )
    assert exchange(raw, b"AUTH default anything\r\n") == b"+OK\r\n"
    assert exchange(raw, b"AUTH default\r\n") == (
        b"-ERR AUTH <password> called without any password configured for the default user. "
        b"Are you sure your configuration is correct?\r\n"
    )


def test_unauthenticated_request_size_limits(server: ServerProcess, r: redis.Redis):
    r.config_set("requirepass", "pw")
    try:
        conn = RawConnection(server.port)
        conn.send(b"*11\r\n")
        assert conn.read(timeout=5) == (
            b"-ERR Protocol error: unauthenticated multibulk length\r\n<CLOSED>"
        )
        conn = RawConnection(server.port)
        conn.send(b"*2\r\n$4\r\nAUTH\r\n$16385\r\n")
        assert conn.read(timeout=5) == b"-ERR Protocol error: unauthenticated bulk length\r\n<CLOSED>"
    finally:
        r.config_set("requirepass", "")


def test_requirepass_is_never_shown_by_monitor_or_slowlog(server: ServerProcess, r: redis.Redis):
    r.config_set("slowlog-log-slower-than", "0")
    r.config_set("requirepass", "topsecret")
    try:
        entries = r.execute_command("SLOWLOG", "GET", "-1")
        assert all(b"topsecret" not in arg for entry in entries for arg in entry[3])
    finally:
        r.config_set("requirepass", "")


# ---------------------------------------------------------------------------------------------
# Isolation: one client's trouble never reaches another
# ---------------------------------------------------------------------------------------------


def test_protocol_error_only_closes_that_client(server: ServerProcess):
    steady = RawConnection(server.port)
    assert exchange(steady, b"MULTI\r\n") == b"+OK\r\n"
    assert exchange(steady, b"SET a 1\r\n") == b"+QUEUED\r\n"
    steady.send(b"*2\r\n$3\r\nGET\r\n$1")  # a request cut in the middle
    broken = RawConnection(server.port)
    broken.send(b"*1\r\n$x\r\n")
    assert broken.read(timeout=5) == b"-ERR Protocol error: invalid bulk length\r\n<CLOSED>"
    other = RawConnection(server.port)
    other.send(b"*abc\r\n")
    assert other.read(timeout=5) == b"-ERR Protocol error: invalid multibulk length\r\n<CLOSED>"
    assert exchange(steady, b"\r\na\r\n") == b"+QUEUED\r\n"
    assert exchange(steady, b"EXEC\r\n") == b"*2\r\n+OK\r\n$1\r\n1\r\n"


def test_disconnects_mid_request_and_mid_reply(server: ServerProcess, r: redis.Redis):
    r.ping()
    baseline = connected_clients(r)
    for payload in (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nabc", b"*2\r\n$4\r\nEC", b"PIN"):
        conn = RawConnection(server.port)
        conn.send(payload)
        conn.close()
    # A client that vanishes with a large pipeline of unread replies.
    r.set("big", b"z" * 100_000)
    greedy = RawConnection(server.port)
    greedy.send(b"GET big\r\n" * 200)
    greedy.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    greedy.close()
    watcher = RawConnection(server.port)
    assert exchange(watcher, b"WATCH big\r\n") == b"+OK\r\n"
    assert exchange(watcher, b"MULTI\r\n") == b"+OK\r\n"
    watcher.close()
    assert r.set("big", "changed")
    assert r.get("k") is None
    assert r.ping()
    deadline = time.monotonic() + 5
    while connected_clients(r) > baseline and time.monotonic() < deadline:
        time.sleep(0.02)
    assert connected_clients(r) == baseline


@pytest.mark.parametrize("count", [50])
def test_many_clients_at_once(server: ServerProcess, r: redis.Redis, count: int):
    r.ping()
    baseline = connected_clients(r)
    conns = [RawConnection(server.port) for _ in range(count)]
    for index, conn in enumerate(conns):
        conn.send(encode_request(b"SET", b"key:%d" % index, b"%d" % index))
    for conn in conns:
        assert conn.read(until=b"\r\n", timeout=5) == b"+OK\r\n"
    assert connected_clients(r) == baseline + count
    for conn in conns:
        conn.close()
    assert r.get("key:49") == b"49"
