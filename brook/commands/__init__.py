"""Command families, one module each; importing a module registers its commands."""

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
