"""Command families, one module each; importing a module registers its commands.

Owns: the handlers (``handler(session, args) -> reply bytes``), one module per family listed in
:data:`FAMILIES`, and beside them the modules that register no command: the table
(:mod:`~brook.commands.registry`, below every family), key specs, shared argument parsing
(:mod:`~brook.commands.args` and the ``*_args`` modules) and shared value access
(``*_values``, :mod:`~brook.commands.stream_access`, :mod:`~brook.commands.common`).

Imports: the session, the keyspace, the value types, the subsystems (blocking, pubsub, notify,
persistence's effects, scripting, acl, rdb), the server's shared state (:mod:`brook.context`)
and the protocol; never the dispatcher, a connection or the composition root, and no family
imports another (tests/test_layers.py).
"""

from __future__ import annotations

import importlib

from brook.commands import registry

FAMILIES = (
    "connection",
    "acl",
    "transactions",
    "introspection",
    "config_cmd",
    "info",
    "server",
    "debug",
    "monitoring",
    "memory",
    "clients",
    "keys",
    "scan",
    "strings",
    "bitops",
    "hll",
    "lcs",
    "hashes",
    "lists",
    "list_blocking",
    "sets",
    "zsets",
    "zset_algebra",
    "geo",
    "sort",
    "streams",
    "stream_groups",
    "pubsub",
    "restore",
    "dump",
    "persistence",
    "scripting",
    "replication",
    "cluster",
    "modules",
)


def load_all() -> None:
    """Import every family so that its ``@command`` declarations fill the table."""
    for family in FAMILIES:
        importlib.import_module(f"brook.commands.{family}")


__all__ = ["FAMILIES", "load_all", "registry"]
