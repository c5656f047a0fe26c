"""Connection options shared by every part of the connector, and the server probes.

Options come from Spark as strings (case-insensitive names): ``url``
(``redis://[user:password@]host:port/db``) or ``host``/``port``/``username``/``password``/``db``.
The connector talks plain RESP through redis-py, so it works against Brook and real Redis.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis


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

    @classmethod
    def of(cls, options: Mapping[str, str]) -> ConnectionOptions:
        url = options.get("url")
        if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConnectorError(f"url must look like redis://[user:password@]host:port/db, "
                                 f"got {url!r}")
        return cls(url=url,
                   host=options.get("host", "127.0.0.1"),
                   port=_int_option(options, "port", 6379),
                   username=options.get("username"),
                   password=options.get("password"),
                   db=_int_option(options, "db", 0))

    def connect(self) -> redis.Redis:
        """A new client: RESP2, binary replies exactly as the server sends them (redis-py's
        reply parsers are switched off: XRANGE pages stay flat lists)."""
        # The read size is a connection setting: given to the pool, every redis-py from 5.0
        # takes it (Redis() itself only since 6).
        settings: dict[str, Any] = {"protocol": 2, "socket_read_size": 1 << 20}
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


def supports_idmp(client: redis.Redis) -> bool:
    """Does the server deduplicate XADD with IDMP (Brook, Redis >= 8.6)? Probed with an XADD
    that cannot create anything (NOMKSTREAM on a key that does not exist)."""
    probe = "__brook_spark_idmp_probe__"
    try:
        client.execute_command("XADD", probe, "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v")
    except redis.ResponseError:
        return False
    return True
