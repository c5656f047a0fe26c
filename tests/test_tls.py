"""TLS: a TLS port beside the plain one, client certificates, protocols and ciphers, reloads by
CONFIG SET, replication over TLS; each against Brook and against real Redis (Debian's build
has TLS). The certificates are made by the tests (trustme): one CA signs the server's and a
client's, another CA signs a client certificate the server must refuse.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest
import redis
import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from tests.conftest import (
    ServerProcess,
    free_port,
    redis_binary,
    redis_cli,
    start_brook,
    start_redis,
)
from tests.support.frameworks import run_driver


@dataclass
class Certs:
    """PEM files: ``ca`` signed ``server`` and ``client``; ``stranger`` has its own CA."""

    ca: Path
    server: Path  # certificate and key in one file
    client: Path
    stranger: Path
    directory: Path


def issue(ca: trustme.CA, path: Path, *names: str) -> Path:
    ca.issue_cert(*names).private_key_and_cert_chain_pem.write_to_path(str(path))
    return path


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    directory = tmp_path_factory.mktemp("certs")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(directory / "ca.pem"))
    return Certs(
        ca=directory / "ca.pem",
        server=issue(ca, directory / "server.pem", "localhost", "127.0.0.1"),
        client=issue(ca, directory / "client.pem", "client"),
        stranger=issue(trustme.CA(), directory / "stranger.pem", "stranger"),
        directory=directory,
    )


def tls_args(certs: Certs, tls_port: int, *more: str) -> list[str]:
    return ["--tls-port", str(tls_port), "--tls-cert-file", str(certs.server),
            "--tls-key-file", str(certs.server), "--tls-ca-cert-file", str(certs.ca), *more]


def start(kind: str, tmp: Path, *args: str) -> ServerProcess:
    if kind == "brook":
        return start_brook(tmp, "--save", "", *args)
    if redis_binary() is None:
        pytest.skip("redis-server is not installed")
    return start_redis(tmp, "--repl-diskless-sync-delay", "0", *args)


@dataclass
class TlsServer:
    process: ServerProcess
    tls_port: int
    certs: Certs

    @property
    def kind(self) -> str:
        return self.process.kind

    def plain(self) -> redis.Redis:
        return self.process.client()

    def client(self, *, cert: Path | None = None, port: int | None = None,
               **kwargs: object) -> redis.Redis:
        """A redis-py client over TLS, trusting the test CA, with ``cert`` as its own."""
        if cert is not None:
            kwargs.update(ssl_certfile=str(cert), ssl_keyfile=str(cert))
        kwargs.setdefault("ssl_ca_certs", str(self.certs.ca))
        return redis.Redis(port=port or self.tls_port, ssl=True, socket_timeout=5, protocol=2,
                           **kwargs)

    def talks(self, **kwargs: object) -> bool:
        """Whether a new TLS client gets PONG."""
        client = self.client(**kwargs)
        try:
            return client.ping() is True
        except (redis.ConnectionError, redis.TimeoutError, ssl.SSLError, OSError):
            return False
        finally:
            client.close()

    def socket(self, context: ssl.SSLContext, port: int | None = None) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", port or self.tls_port), timeout=5)
        return context.wrap_socket(raw, server_hostname="localhost")


@pytest.fixture(scope="module", params=["brook", "redis"])
def tls_server(request: pytest.FixtureRequest, certs: Certs,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsServer]:
    tls_port = free_port()
    process = start(request.param, tmp_path_factory.mktemp(request.param),
                    *tls_args(certs, tls_port))
    yield TlsServer(process, tls_port, certs)
    process.stop()


@pytest.fixture
def server(tls_server: TlsServer) -> Iterator[TlsServer]:
    """The module's server, with the TLS settings a test changed set back afterwards."""
    admin = tls_server.plain()
    saved = {name: admin.config_get(name)[name] for name in (
        "tls-auth-clients", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
        "tls-session-caching", "tls-cert-file", "tls-key-file", "tls-port")}
    admin.flushall()
    yield tls_server
    admin.config_set("tls-port", saved.pop("tls-port"))
    tls_server.tls_port = int(admin.config_get("tls-port")["tls-port"])
    admin.config_set(*[item for pair in saved.items() for item in pair])
    admin.close()


def context(certs: Certs, *, cert: Path | None = None,
            version: ssl.TLSVersion | None = None) -> ssl.SSLContext:
    """A client context trusting the test CA, pinned to one TLS version when asked."""
    made = ssl.create_default_context(cafile=str(certs.ca))
    if cert is not None:
        made.load_cert_chain(str(cert))
    if version is not None:
        made.minimum_version = made.maximum_version = version
    return made


# -- connections ------------------------------------------------------------------------------


def test_the_tls_port_serves_beside_the_plain_one(server: TlsServer) -> None:
    secure = server.client(cert=server.certs.client)
    assert secure.set("over", "tls") is True
    assert server.plain().get("over") == b"tls"
    assert secure.xadd("s", {"f": "v"}, id="1-1") == b"1-1"
    assert secure.xrange("s") == [(b"1-1", {b"f": b"v"})]
    secure.close()


def test_redis_cli_over_tls(server: TlsServer) -> None:
    certs = server.certs
    common = ["--tls", "--cacert", str(certs.ca), "--cert", str(certs.client),
              "--key", str(certs.client)]
    done = redis_cli(server.tls_port, *common, "SET", "k", "from-cli")
    assert done.stdout == b"OK\n"
    assert redis_cli(server.tls_port, *common, "GET", "k").stdout == b"from-cli\n"


def test_what_each_tls_auth_clients_mode_accepts(server: TlsServer) -> None:
    """Without a certificate, with one the CA signed, with one of another CA."""
    certs = server.certs
    admin = server.plain()
    seen = {}
    for mode in ("yes", "optional", "no"):
        admin.config_set("tls-auth-clients", mode)
        seen[mode] = (server.talks(), server.talks(cert=certs.client),
                      server.talks(cert=certs.stranger))
    assert seen == {
        "yes": (False, True, False),
        "optional": (True, True, False),
        "no": (True, True, True),
    }


def test_plain_bytes_on_the_tls_port_are_refused_and_hurt_nothing(server: TlsServer) -> None:
    with socket.create_connection(("127.0.0.1", server.tls_port), timeout=5) as raw:
        raw.sendall(b"*1\r\n$4\r\nPING\r\n")
        received = b""
        try:
            while chunk := raw.recv(4096):
                received += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    assert b"PONG" not in received
    assert server.talks(cert=server.certs.client)


def test_a_corrupted_record_closes_only_its_connection(server: TlsServer) -> None:
    certs = server.certs
    other = server.client(cert=certs.client)
    assert other.set("kept", "1") is True
    tls = server.socket(context(certs, cert=certs.client))
    tls.sendall(b"*1\r\n$4\r\nPING\r\n")
    assert tls.recv(64) == b"+PONG\r\n"
    # Bytes that are not a TLS record, sent under the TLS layer: the server must drop this
    # connection, not crash and not disturb the other client.
    raw = socket.socket(fileno=tls.fileno())
    raw.sendall(b"\x17\x03\x03\x00\x10" + b"\x00" * 16)
    raw.detach()
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        tls.sendall(b"*1\r\n$4\r\nPING\r\n")
        if not tls.recv(64):
            raise ConnectionError("closed")
    tls.close()
    assert other.get("kept") == b"1"


def test_a_stalled_handshake_does_not_hold_other_clients(server: TlsServer) -> None:
    with socket.create_connection(("127.0.0.1", server.tls_port), timeout=5):
        assert server.talks(cert=server.certs.client)


def test_acl_users_log_in_over_tls(server: TlsServer) -> None:
    admin = server.plain()
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~a*", "+@all")
    try:
        certs = server.certs
        alice = redis.Redis.from_url(
            f"rediss://alice:pw@127.0.0.1:{server.tls_port}/0", ssl_ca_certs=str(certs.ca),
            ssl_certfile=str(certs.client), ssl_keyfile=str(certs.client), protocol=2)
        assert alice.execute_command("ACL", "WHOAMI") == b"alice"
        with pytest.raises(redis.exceptions.NoPermissionError):
            alice.set("b", "1")
        alice.close()
    finally:
        admin.execute_command("ACL", "DELUSER", "alice")
        admin.execute_command("ACL", "LOG", "RESET")  # the refused SET's entry


def test_an_rq_worker_over_tls_as_an_acl_user(
        server: TlsServer, framework_envs: dict[str, Path | BaseException],
        tmp_path: Path) -> None:
    """RQ's real worker, given a ``rediss://user:password@`` URL with the CA and a client
    certificate, runs jobs with a user allowed RQ's keys and channels only. RQ runs in its
    own environment (``tests.support.frameworks``): the jobs are enqueued and the worker
    started there, and what they did is read back here."""
    admin = server.plain()
    admin.execute_command("ACL", "LOG", "RESET")
    admin.execute_command("ACL", "SETUSER", "rq", "on", ">pw", "~rq:*", "&rq:*", "+@all")
    certs = server.certs
    query = urlencode({"ssl_ca_certs": certs.ca, "ssl_certfile": certs.client,
                       "ssl_keyfile": certs.client})
    url = f"rediss://rq:pw@127.0.0.1:{server.tls_port}/0?{query}"
    try:
        run = run_driver(framework_envs, "rq", "url_burst", server.tls_port, tmp_path,
                         "--url", url)
        assert run["statuses"] == ["finished"] * 10
        assert run["values"] == [i + 100 for i in range(10)]
        assert admin.execute_command("ACL", "LOG") == []  # nothing was refused on the way
    finally:
        admin.execute_command("ACL", "DELUSER", "rq")
        admin.execute_command("ACL", "LOG", "RESET")
        admin.flushall()


# -- protocols, ciphers, sessions --------------------------------------------------------------


def test_tls_protocols_limit_the_versions(server: TlsServer) -> None:
    certs = server.certs
    admin = server.plain()
    admin.config_set("tls-protocols", "TLSv1.2")
    with server.socket(context(certs, cert=certs.client,
                               version=ssl.TLSVersion.TLSv1_2)) as tls:
        assert tls.version() == "TLSv1.2"
    with pytest.raises((ssl.SSLError, OSError)):
        server.socket(context(certs, cert=certs.client, version=ssl.TLSVersion.TLSv1_3))
    admin.config_set("tls-protocols", "tlsv1.3")  # case-insensitive, as in Redis
    with server.socket(context(certs, cert=certs.client)) as tls:
        assert tls.version() == "TLSv1.3"


def test_tls_ciphers_and_ciphersuites_choose_the_cipher(server: TlsServer) -> None:
    certs = server.certs
    admin = server.plain()
    admin.config_set("tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256")
    with server.socket(context(certs, cert=certs.client)) as tls:
        assert tls.cipher()[0] == "TLS_CHACHA20_POLY1305_SHA256"
    admin.config_set("tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256")
    with server.socket(context(certs, cert=certs.client,
                               version=ssl.TLSVersion.TLSv1_2)) as tls:
        assert tls.cipher()[0] == "ECDHE-ECDSA-AES128-GCM-SHA256"


def test_session_caching_lets_clients_resume(server: TlsServer) -> None:
    """TLS 1.2 without tickets: a session resumes only from the server's session cache. (The
    second connection is made while the first is open, as a pool's are: Redis frees a
    connection's session without a TLS shutdown, which takes it out of the cache.)"""
    certs = server.certs
    client_context = context(certs, cert=certs.client, version=ssl.TLSVersion.TLSv1_2)
    client_context.options |= ssl.OP_NO_TICKET

    def resumes() -> bool:
        with server.socket(client_context) as first:
            raw = socket.create_connection(("127.0.0.1", server.tls_port), timeout=5)
            with client_context.wrap_socket(raw, server_hostname="localhost",
                                            session=first.session) as second:
                return second.session_reused

    assert resumes()
    server.plain().config_set("tls-session-caching", "no")
    assert not resumes()


# -- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value"), [
    ("tls-cert-file", "/nonexistent/cert.pem"),
    ("tls-key-file", "/nonexistent/key.pem"),
    ("tls-ca-cert-file", "/nonexistent/ca.pem"),
    ("tls-protocols", "TLSv1.2 SSLv3"),
    ("tls-ciphers", "NO-SUCH-CIPHER"),
    ("tls-ciphersuites", "TLS_NO_SUCH_SUITE"),
    ("tls-dh-params-file", "/nonexistent/dh.pem"),
])
def test_a_bad_tls_setting_is_refused_and_changes_nothing(server: TlsServer, name: str,
                                                          value: str) -> None:
    admin = server.plain()
    before = admin.config_get(name)[name]
    with pytest.raises(redis.ResponseError) as caught:
        admin.config_set(name, value)
    assert str(caught.value) == (
        f"CONFIG SET failed (possibly related to argument '{name}') - Unable to update TLS "
        "configuration. Check server logs.")
    assert admin.config_get(name)[name] == before
    assert server.talks(cert=server.certs.client)


def test_enum_and_bool_tls_settings_are_checked(server: TlsServer) -> None:
    admin = server.plain()
    with pytest.raises(redis.ResponseError) as caught:
        admin.config_set("tls-auth-clients", "maybe")
    assert str(caught.value) == (
        "CONFIG SET failed (possibly related to argument 'tls-auth-clients') - argument(s) "
        "must be one of the following: no, yes, optional")


def test_a_new_certificate_serves_new_connections(server: TlsServer,
                                                  tmp_path: Path) -> None:
    """Certificate renewal: CONFIG SET of the (same or a new) file path reloads it; clients
    already connected keep their session."""
    certs = server.certs
    admin = server.plain()
    connected = server.client(cert=certs.client)
    assert connected.set("before", "1") is True
    new_ca = trustme.CA()
    new_ca.cert_pem.write_to_path(str(tmp_path / "new-ca.pem"))
    renewed = issue(new_ca, tmp_path / "renewed.pem", "localhost", "127.0.0.1")
    admin.config_set("tls-cert-file", str(renewed), "tls-key-file", str(renewed))
    assert not server.talks(cert=certs.client)  # the old CA no longer matches
    assert server.talks(cert=certs.client, ssl_ca_certs=str(tmp_path / "new-ca.pem"))
    assert connected.get("before") == b"1"
    # The same path, with new contents: setting it again reloads it (Redis's volatile
    # configs are applied even when the value is unchanged).
    issue(trustme.CA(), renewed, "localhost")
    admin.config_set("tls-cert-file", str(renewed))
    assert not server.talks(cert=certs.client, ssl_ca_certs=str(tmp_path / "new-ca.pem"))
    connected.close()


def test_tls_port_moves_with_config_set(server: TlsServer) -> None:
    admin = server.plain()
    old_port, new_port = server.tls_port, free_port()
    admin.config_set("tls-port", new_port)
    assert admin.config_get("tls-port") == {"tls-port": str(new_port)}
    deadline = time.monotonic() + 5
    while not server.talks(cert=server.certs.client, port=new_port):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert not server.talks(cert=server.certs.client, port=old_port)
    with pytest.raises(redis.ResponseError) as caught:
        admin.config_set("tls-port", server.process.port)  # taken by the plain port
    assert str(caught.value) == (
        "CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on "
        "this port. Check server logs.")
    assert server.talks(cert=server.certs.client, port=new_port)
    admin.config_set("tls-port", 0)
    assert not server.talks(cert=server.certs.client, port=new_port)


@pytest.mark.parametrize("kind", ["brook", "redis"])
@pytest.mark.parametrize(("args", "logged"), [
    (["--tls-cert-file", ""], "No tls-cert-file configured!"),
    (["--tls-ca-cert-file", ""],
     "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
     "tls-replication or tls-auth-clients are enabled!"),
    (["--tls-protocols", "TLSv9"], "Invalid tls-protocols specified."),
])
def test_a_bad_tls_configuration_stops_the_start(kind: str, args: list[str], logged: str,
                                                 certs: Certs, tmp_path: Path) -> None:
    if kind == "redis" and redis_binary() is None:
        pytest.skip("redis-server is not installed")
    binary = [sys.executable, "-m", "brook"] if kind == "brook" else [str(redis_binary())]
    done = subprocess.run(
        [*binary, "--port", str(free_port()), *tls_args(certs, free_port()), *args],
        capture_output=True, text=True, timeout=20, cwd=tmp_path)
    assert done.returncode == 1
    assert logged in done.stdout + done.stderr
    assert "Failed to configure TLS. Check logs for more info." in done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_an_encrypted_key_needs_its_password(kind: str, certs: Certs, tmp_path: Path) -> None:
    pem = certs.server.read_bytes()
    key = load_pem_private_key(pem, password=None)
    encrypted = key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(b"secret"))
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(encrypted)
    tls_port = free_port()
    args = [*tls_args(certs, tls_port, "--tls-auth-clients", "no"), "--tls-key-file",
            str(key_file)]
    if kind == "redis" and redis_binary() is None:
        pytest.skip("redis-server is not installed")
    binary = [sys.executable, "-m", "brook"] if kind == "brook" else [str(redis_binary())]
    refused = subprocess.run([*binary, "--port", str(free_port()), *args],
                             capture_output=True, text=True, timeout=20, cwd=tmp_path)
    assert refused.returncode == 1
    process = start(kind, tmp_path, *args, "--tls-key-file-pass", "secret")
    try:
        served = TlsServer(process, tls_port, certs)
        assert served.talks()
        assert served.plain().config_get("tls-key-file-pass") == {
            "tls-key-file-pass": "secret"}
    finally:
        process.stop()


def test_tls_settings_read_as_redis_s(brook_process: ServerProcess,
                                      redis_process: ServerProcess | None) -> None:
    """CONFIG GET tls-* on servers without TLS: the same names and defaults."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    assert brook_process.client().config_get("tls-*") == (
        redis_process.client().config_get("tls-*"))


# -- replication -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["brook", "redis"])
@pytest.mark.parametrize("client_cert", [False, True])
def test_a_replica_follows_its_master_over_tls(kind: str, client_cert: bool, certs: Certs,
                                               tmp_path: Path) -> None:
    """tls-replication: the replica reaches its master's TLS port with a certificate the
    master accepts (``tls-client-cert-file``, or else its server certificate), and announces
    its own TLS port."""
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    master_tls, replica_tls = free_port(), free_port()
    master = start(kind, tmp_path / "master", *tls_args(certs, master_tls))
    own = ["--tls-client-cert-file", str(certs.client), "--tls-client-key-file",
           str(certs.client)] if client_cert else []
    replica = start(kind, tmp_path / "replica",
                    *tls_args(certs, replica_tls, "--tls-replication", "yes", *own))
    try:
        source, copy = master.client(), replica.client()
        source.xadd("s", {"f": "v"}, id="1-1")
        assert copy.replicaof("127.0.0.1", master_tls) == b"OK"
        deadline = time.monotonic() + 15
        while copy.info("replication")["master_link_status"] != "up":
            assert time.monotonic() < deadline, replica.log()
            time.sleep(0.05)
        source.xadd("s", {"f": "w"}, id="2-1")
        assert source.wait(1, 5000) == 1
        assert copy.xrange("s") == [(b"1-1", {b"f": b"v"}), (b"2-1", {b"f": b"w"})]
        assert source.info("replication")["slave0"]["port"] == replica_tls
    finally:
        replica.stop()
        master.stop()
