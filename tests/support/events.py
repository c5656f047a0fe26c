"""Keyspace notifications as tests expect them: (channel, message) pairs (the ``listen``
fixture in conftest collects what a server published)."""

from __future__ import annotations

Events = list[tuple[bytes, bytes]]


def space(key: str, event: str, db: int = 0) -> tuple[bytes, bytes]:
    return (f"__keyspace@{db}__:{key}".encode(), event.encode())


def event(name: str, key: str, db: int = 0) -> tuple[bytes, bytes]:
    return (f"__keyevent@{db}__:{name}".encode(), key.encode())


def both(key: str, name: str, db: int = 0) -> Events:
    return [space(key, name, db), event(name, key, db)]
