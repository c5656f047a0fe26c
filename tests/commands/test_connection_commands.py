"""PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET (parity with Redis)."""

from __future__ import annotations

import pytest
import redis

from tests.conftest import RawConnection


def test_echo_is_binary_safe(r):
    value = b"\x00\r\n\xff" * 10
    assert r.echo(value) == value


def test_select(raw):
    assert raw.request(b"SELECT 15\r\n") == b"+OK\r\n"
    assert raw.request(b"SELECT 16\r\n") == b"-ERR DB index is out of range\r\n"
    assert raw.request(b"SELECT -1\r\n") == b"-ERR DB index is out of range\r\n"
    assert raw.request(b"SELECT x\r\n") == b"-ERR value is not an integer or out of range\r\n"


def test_databases_are_separate(server):
    a = server.client(db=0)
    b = server.client(db=3)
    a.set("k", "zero")
    b.set("k", "three")
    assert a.get("k") == b"zero"
    assert b.get("k") == b"three"


@pytest.mark.parametrize(
    ("request_line", "reply"),
    [
        (b"HELLO 4\r\n", b"-NOPROTO unsupported protocol version\r\n"),
        (b"HELLO 1\r\n", b"-NOPROTO unsupported protocol version\r\n"),
        (b"HELLO abc\r\n", b"-ERR Protocol version is not an integer or out of range\r\n"),
        (b"HELLO 3 SETNAME\r\n", b"-ERR Syntax error in HELLO option 'SETNAME'\r\n"),
        (b"HELLO 3 FOO\r\n", b"-ERR Syntax error in HELLO option 'FOO'\r\n"),
        (b"HELLO 3 AUTH default\r\n", b"-ERR Syntax error in HELLO option 'AUTH'\r\n"),
        (b'HELLO 3 SETNAME "a b"\r\n',
         b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"),
        (b"AUTH x\r\n",
         b"-ERR AUTH <password> called without any password configured for the default user. "
         b"Are you sure your configuration is correct?\r\n"),
        (b"AUTH a b\r\n", b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"),
        (b"AUTH a b c\r\n", b"-ERR syntax error\r\n"),
        (b"QUIT extra\r\n", b"+OK\r\n<CLOSED>"),
        (b"RESET x\r\n", b"-ERR wrong number of arguments for 'reset' command\r\n"),
    ],
)
def test_connection_errors(raw, request_line, reply):
    assert raw.request(request_line, until=b"\r\n" if not reply.endswith(b"<CLOSED>") else b"<CLOSED>") == reply


def _hello_fields(reply: dict) -> dict:
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in reply.items()}


def test_hello_reply_shape(r):
    fields = _hello_fields(r.execute_command("HELLO", "3"))
    assert fields["proto"] == 3
    assert fields["server"] == b"redis"
    assert fields["mode"] == b"standalone"
    assert fields["role"] == b"master"
    assert fields["modules"] == []
    assert isinstance(fields["id"], int)
    assert set(fields) == {"server", "version", "proto", "id", "mode", "role", "modules"}


def test_hello_setname(server):
    client = server.client()
    client.execute_command("HELLO", "2", "SETNAME", "worker-1")
    assert client.client_getname() == "worker-1"


def test_resp3_client_works(r3):
    r3.set("k", "v")
    assert r3.get("k") == b"v"
    r3.hset("h", mapping={"a": "1", "b": "2"})
    assert r3.hgetall("h") == {b"a": b"1", b"b": b"2"}


def test_requirepass_flow(server):
    admin = server.client()
    admin.config_set("requirepass", "pw")
    try:
        conn = RawConnection(server.port)
        assert conn.request(b"GET k\r\n") == b"-NOAUTH Authentication required.\r\n"
        assert conn.request(b"AUTH wrong\r\n") == (
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
        )
        assert conn.request(b"AUTH pw\r\n") == b"+OK\r\n"
        assert conn.request(b"PING\r\n") == b"+PONG\r\n"
        assert conn.request(b"RESET\r\n") == b"+RESET\r\n"
        assert conn.request(b"PING\r\n") == b"-NOAUTH Authentication required.\r\n"
        assert conn.request(b"HELLO 2 AUTH default pw\r\n").startswith(b"*14\r\n")
        assert conn.request(b"PING\r\n") == b"+PONG\r\n"
        conn.close()
        with pytest.raises(redis.AuthenticationError):
            server.client(password="bad").ping()
        assert server.client(password="pw").ping() is True
    finally:
        server.client(password="pw").config_set("requirepass", "")


@pytest.mark.min_redis(7, 2)  # 7.0 says "the HELLO AUTH <user> <pass> option"
def test_hello_before_auth(server):
    admin = server.client()
    admin.config_set("requirepass", "pw")
    try:
        conn = RawConnection(server.port)
        assert conn.request(b"HELLO 3\r\n") == (
            b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            b"HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
            b"select the RESP protocol version at the same time\r\n"
        )
    finally:
        server.client(password="pw").config_set("requirepass", "")


def test_unauthenticated_clients_get_tight_protocol_limits(server):
    admin = server.client()
    admin.config_set("requirepass", "pw")
    try:
        conn = RawConnection(server.port)
        assert conn.request(b"*11\r\n", until=b"<CLOSED>") == (
            b"-ERR Protocol error: unauthenticated multibulk length\r\n<CLOSED>"
        )
        conn = RawConnection(server.port)
        assert conn.request(b"*1\r\n$16385\r\n", until=b"<CLOSED>") == (
            b"-ERR Protocol error: unauthenticated bulk length\r\n<CLOSED>"
        )
    finally:
        server.client(password="pw").config_set("requirepass", "")


def test_reset_restores_defaults(raw):
    raw.request(b"SELECT 2\r\nHELLO 3\r\nMULTI\r\n", timeout=0.3)
    assert raw.request(b"RESET\r\n") == b"+RESET\r\n"
    assert raw.request(b"GET x\r\n") == b"$-1\r\n"  # RESP2 again, not in MULTI
    assert raw.request(b"CLIENT INFO\r\n").split(b" db=")[1].startswith(b"0 ")


def _client_info(raw: RawConnection) -> dict[bytes, bytes]:
    line = raw.call("CLIENT", "INFO").strip()  # type: ignore[union-attr]
    return dict(item.split(b"=", 1) for item in line.split(b" "))


def test_reset_clears_the_connections_state(server, raw):
    """Redis's clearClientConnectionState: database, RESP version, name, MULTI and WATCH,
    subscriptions, CLIENT REPLY, NO-EVICT and NO-TOUCH."""
    raw.call("CLIENT", "SETNAME", "someone")
    raw.call("SELECT", "3")
    raw.call("WATCH", "w")
    server.client().set("w", "changed")  # the WATCH would fail an EXEC
    assert raw.call("RESET") == b"RESET"
    info = _client_info(raw)
    assert (info[b"name"], info[b"db"], info[b"flags"]) == (b"", b"0", b"N")
    assert raw.call("MULTI") == b"OK"
    assert raw.call("SET", "w", "mine") == b"QUEUED"
    assert raw.call("EXEC") == [b"OK"]


def test_reset_ends_reply_off_and_subscriptions(raw):
    raw.send(b"CLIENT REPLY OFF\r\nPING\r\n")
    assert raw.request(b"RESET\r\n") == b"+RESET\r\n"
    assert raw.request(b"PING\r\n") == b"+PONG\r\n"
    raw.call("SUBSCRIBE", "ch")
    raw.call("PSUBSCRIBE", "p*")
    assert raw.request(b"RESET\r\n") == b"+RESET\r\n"
    assert raw.request(b"PING\r\n") == b"+PONG\r\n"  # no longer subscribed
    info = _client_info(raw)
    assert (info[b"sub"], info[b"psub"], info[b"flags"]) == (b"0", b"0", b"N")


def test_reset_ends_monitor(server, raw):
    assert raw.call("MONITOR") == b"OK"
    assert raw.request(b"RESET\r\n") == b"+RESET\r\n"
    server.client().set("k", "v")
    assert raw.request(b"PING\r\n") == b"+PONG\r\n"  # no MONITOR line came


@pytest.mark.min_redis(7, 2)  # 7.0 kept NO-EVICT
def test_reset_keeps_the_library_name_and_ends_no_evict_and_no_touch(raw):
    raw.call("CLIENT", "SETINFO", "lib-name", "redis.py")
    raw.call("CLIENT", "NO-EVICT", "ON")
    raw.call("CLIENT", "NO-TOUCH", "ON")
    assert raw.call("RESET") == b"RESET"
    info = _client_info(raw)
    assert (info[b"lib-name"], info[b"flags"]) == (b"redis.py", b"N")

