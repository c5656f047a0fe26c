"""Connection options shared by every part of the connector, and the server probes.

Options come from Spark as strings (case-insensitive names): ``url``
(``redis://[user:password@]host:port/db``) or ``host``/``port``/``username``/``password``/``db``.
TLS: a ``rediss://`` URL or ``tls=true``, with ``tlsCaFile`` (the CAs that sign the server's
certificate), ``tlsCertFile``/``tlsKeyFile`` (a client certificate, for ``tls-auth-clients``)
and ``tlsCheckHostname`` (default true: the certificate must name the host).
``cluster`` (``auto``, ``true``, ``false``): whether the server is a Redis Cluster node, whose
streams are then read and written on the master that serves each (:mod:`brook.spark.shards`);
``auto`` asks the server. The connector talks plain RESP through redis-py, so it works against
Brook and real Redis.
"""

from __future__ import annotations

import dataclasses
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import redis

CLUSTER_MODES = ("auto", "true", "false")


class ConnectorError(ValueError):
    """A bad option or a server that cannot do what was asked; the message says which."""


@dataclass(frozen=True)
class ConnectionOptions:
    """Where the server is; picklable, so executors open their own connections."""

    url: str | None = None
    host: str = "127.0.0.1"
    port: int = 6379
    username: str | None = None
    password: str | None = None
    db: int = 0
    tls: bool = False
    tls_ca_file: str | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    tls_check_hostname: bool = True
    cluster: str = "auto"

    @classmethod
    def of(cls, options: Mapping[str, str]) -> ConnectionOptions:
        url = options.get("url")
        if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConnectorError(f"url must look like redis://[user:password@]host:port/db, "
                                 f"got {url!r}")
        tls = bool_option(options, "tls", False) or (url or "").startswith("rediss://")
        if tls and (url or "").startswith("unix://"):
            raise ConnectorError("option tls needs a TCP server, not a unix:// url")
        cert_file, key_file = options.get("tlsCertFile"), options.get("tlsKeyFile")
        if key_file is not None and cert_file is None:
            raise ConnectorError("option tlsKeyFile needs tlsCertFile")
        cluster = options.get("cluster", "auto").lower()
        if cluster not in CLUSTER_MODES:
            raise ConnectorError(f"option cluster must be auto, true or false, got {cluster!r}")
        return cls(url=url,
                   host=options.get("host", "127.0.0.1"),
                   port=_int_option(options, "port", 6379),
                   username=options.get("username"),
                   password=options.get("password"),
                   db=_int_option(options, "db", 0),
                   tls=tls,
                   tls_ca_file=options.get("tlsCaFile"),
                   tls_cert_file=cert_file,
                   tls_key_file=key_file,
                   tls_check_hostname=bool_option(options, "tlsCheckHostname", True),
                   cluster=cluster)

    def resolved(self) -> ConnectionOptions:
        """The same server with a ``redis://``/``rediss://`` URL taken apart into host, port,
        user, password and db, the fields a node's address replaces (:meth:`at`) and a bare
        socket needs (:class:`~brook.spark.wire.Wire`)."""
        if self.url is None or self.url.startswith("unix://"):
            return self
        url = urlparse(self.url)
        return dataclasses.replace(
            self, url=None, host=url.hostname or self.host, port=url.port or 6379,
            username=unquote(url.username) if url.username else None,
            password=unquote(url.password) if url.password else None,
            db=int(url.path.lstrip("/") or 0))

    def at(self, host: str, port: int) -> ConnectionOptions:
        """Another node of the same cluster: same credentials and TLS, its own address."""
        if self.url is not None and self.url.startswith("unix://"):
            raise ConnectorError("a cluster's nodes are reached over TCP, not a unix:// url")
        return dataclasses.replace(self.resolved(), host=host, port=port)

    def ssl_context(self) -> ssl.SSLContext | None:
        """The client side of TLS (None without TLS): the server's certificate must chain to
        ``tlsCaFile`` (the system's CAs without it) and, unless told otherwise, name the
        host."""
        if not self.tls:
            return None
        try:
            context = ssl.create_default_context(cafile=self.tls_ca_file)
            context.check_hostname = self.tls_check_hostname
            if self.tls_cert_file is not None:
                context.load_cert_chain(self.tls_cert_file, self.tls_key_file)
        except (OSError, ssl.SSLError) as err:
            raise ConnectorError(f"TLS options: {err}") from None
        return context

    def connect(self) -> redis.Redis:
        """A new client: RESP2, binary replies exactly as the server sends them (redis-py's
        reply parsers are switched off: XRANGE pages stay flat lists)."""
        # The read size is a connection setting: given to the pool, every redis-py from 5.0
        # takes it (Redis() itself only since 6).
        settings: dict[str, Any] = {"protocol": 2, "socket_read_size": 1 << 20}
        if self.tls:
            self.ssl_context()  # a bad file is a ConnectorError here, not deep in redis-py
            settings.update(connection_class=redis.SSLConnection, ssl_cert_reqs="required",
                            ssl_ca_certs=self.tls_ca_file, ssl_certfile=self.tls_cert_file,
                            ssl_keyfile=self.tls_key_file,
                            ssl_check_hostname=self.tls_check_hostname)
        if self.url is not None:
            pool = redis.ConnectionPool.from_url(self.url, **settings)
        else:
            pool = redis.ConnectionPool(host=self.host, port=self.port, username=self.username,
                                        password=self.password, db=self.db, **settings)
        client = redis.Redis(connection_pool=pool)
        client.response_callbacks.clear()
        return client


def _int_option(options: Mapping[str, str], name: str, default: int) -> int:
    value = options.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ConnectorError(f"option {name} must be an integer, got {value!r}") from None


def int_option(options: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    """An integer option at or above ``minimum``."""
    value = _int_option(options, name, default)
    if value < minimum:
        raise ConnectorError(f"option {name} must be >= {minimum}, got {value}")
    return value


def bool_option(options: Mapping[str, str], name: str, default: bool) -> bool:
    value = options.get(name)
    if value is None:
        return default
    if value.lower() in ("true", "1", "yes"):
        return True
    if value.lower() in ("false", "0", "no"):
        return False
    raise ConnectorError(f"option {name} must be true or false, got {value!r}")


def stream_names(options: Mapping[str, str]) -> list[str]:
    """The ``streams`` option: a comma-separated list of stream keys."""
    value = options.get("streams")
    names = [name.strip() for name in (value or "").split(",") if name.strip()]
    if not names:
        raise ConnectorError("option streams is required: a comma-separated list of stream keys")
    return list(dict.fromkeys(names))


IDMP_PROBE = "__brook_spark_idmp_probe__"


def supports_idmp(client: redis.Redis, probe: str = IDMP_PROBE) -> bool:
    """Does the server deduplicate XADD with IDMP (Brook, Redis >= 8.6)? Probed with an XADD
    that cannot create anything (NOMKSTREAM on a key that does not exist); in a cluster,
    ``probe`` must be a key of a slot the node serves."""
    try:
        client.execute_command("XADD", probe, "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v")
    except redis.ResponseError:
        return False
    return True
