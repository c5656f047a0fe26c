"""What a write tells the rest of the server, and keyspace notifications (Redis's notify.c).

:func:`written` is the one call a command makes after it changed a key: the keyspace's signals
(WATCH, HSCAN index, parked clients: :meth:`brook.keyspace.Database.modified`), the keyspace
event, and the dirty counter that persistence and save points follow.

A write command calls :func:`notify` with the event's class (g, $, l, h, t, x...), its name
(``set``, ``lpush``, ``xadd``...) and the key. When the class is enabled, the event is published
on ``__keyspace@<db>__:<key>`` (message: the event) if ``K`` is set and on
``__keyevent@<db>__:<event>`` (message: the key) if ``E`` is set, through the ordinary Pub/Sub
registry, so subscribers get them like any PUBLISH. With notifications off (the default) the
cost is one integer test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.config.notify_flags import (
    NOTIFY_EXPIRED,
    NOTIFY_GENERIC,
    NOTIFY_HASH,
    NOTIFY_KEYEVENT,
    NOTIFY_KEYSPACE,
    NOTIFY_LIST,
    NOTIFY_NEW,
    NOTIFY_SET,
    NOTIFY_STREAM,
    NOTIFY_STRING,
    NOTIFY_ZSET,
)

if TYPE_CHECKING:
    from brook.config.store import Config
    from brook.keyspace import Database
    from brook.pubsub import Registry
    from brook.session import Session

__all__ = ["GENERIC", "STRING", "LIST", "SET", "HASH", "ZSET", "STREAM", "EXPIRED", "NEW",
           "created", "creating", "emptied", "expired", "notify", "publish_event", "stored",
           "written"]

GENERIC: Final = NOTIFY_GENERIC
STRING: Final = NOTIFY_STRING
LIST: Final = NOTIFY_LIST
SET: Final = NOTIFY_SET
HASH: Final = NOTIFY_HASH
ZSET: Final = NOTIFY_ZSET
STREAM: Final = NOTIFY_STREAM
EXPIRED: Final = NOTIFY_EXPIRED
NEW: Final = NOTIFY_NEW


def written(client: Session, key: bytes, event_class: int = 0, event: bytes = b"",
            changes: int = 1, ready: bool = False) -> None:
    """``client``'s command changed ``key`` in its database: signal it (``ready``: parked
    clients may have something now, see :meth:`~brook.keyspace.Database.modified`), publish
    ``event`` when its class is enabled (none without a class: XACK, XCLAIM...), and count
    ``changes`` towards ``dirty``. The hottest writers pass ``ready`` by position: a keyword
    argument makes the call measurably dearer."""
    db = client.db
    if db.field_indexes or db.watchers or db.blocking or db.tracking:
        db.modified(key, ready)
    server = client.server
    if server.config.notify_keyspace_events & event_class:
        notify(client, event_class, event, key)
    server.dirty += changes


def created(client: Session, key: bytes, db_index: int | None = None) -> None:
    """A command is adding ``key`` to a database where it was absent (Redis's dbAdd): the
    ``new`` event (class ``n``, Redis 7.0+, not part of ``A``). Called as the key is stored,
    so it comes before the command's own event, as in Redis."""
    if client.server.config.notify_keyspace_events & NOTIFY_NEW:
        notify(client, NOTIFY_NEW, b"new", key, db_index)


def creating(client: Session, key: bytes) -> None:
    """Before a store that replaces whatever ``key`` holds (SET, MSET, a *STORE): the ``new``
    event when it holds nothing. The lookup (which expires a stale key, as Redis's setKey
    does) is made only while the class is enabled."""
    if client.server.config.notify_keyspace_events & NOTIFY_NEW and client.db.lookup(key) is None:
        notify(client, NOTIFY_NEW, b"new", key)


def emptied(client: Session, key: bytes) -> None:
    """A command took the last element of ``key``'s value: Redis keeps no empty collections,
    so the key goes (event ``del``)."""
    client.db.delete(key)
    notify(client, GENERIC, b"del", key)


def stored(client: Session, destination: bytes, value: object, event_class: int,
           event: bytes, changes: int = 1) -> None:
    """A *STORE command's result: ``value`` replaces whatever ``destination`` held (its TTL
    too); an empty result (or None) deletes it instead (event ``del``, when it existed)."""
    db = client.db
    if value:
        creating(client, destination)
        db.set(destination, value)
        written(client, destination, event_class, event, changes)
    elif db.delete(destination):
        written(client, destination, GENERIC, b"del")


def notify(client: Session, event_class: int, event: bytes, key: bytes,
           db_index: int | None = None) -> None:
    """Publish ``event`` on ``key`` when its class is enabled (``db_index``: another database
    than the client's, for MOVE and COPY ... DB)."""
    server = client.server
    if server.config.notify_keyspace_events & event_class:
        current = server.current_client or client  # a script's caller, for its commands
        own = publish_event(server.config, server.pubsub, event, key,
                            client.db.index if db_index is None else db_index, current)
        if own:  # the writer listens to its own events: they follow its reply (Redis 7.2+)
            current.postponed.append(own)


def expired(config: Config, pubsub: Registry, current: Session | None, db: Database,
            key: bytes) -> None:
    """``Keyspace.on_expired``: the ``expired`` event (class ``x``). A key found expired by
    a command (lazily): the client running it (``current``) gets its copy after the reply
    (Redis 7.2+); the active cycle runs between commands."""
    if config.notify_keyspace_events & NOTIFY_EXPIRED:
        own = publish_event(config, pubsub, b"expired", key, db.index, current)
        if own and current is not None:
            current.postponed.append(own)


def publish_event(config: Config, pubsub: Registry, event: bytes, key: bytes, db_index: int,
                  current: Session | None = None) -> bytes:
    """Publish on the enabled channels; returns what ``current`` itself receives."""
    flags = config.notify_keyspace_events
    own = b""
    if flags & NOTIFY_KEYSPACE:
        own += pubsub.publish(b"__keyspace@%d__:%s" % (db_index, key), event, current)[1]
    if flags & NOTIFY_KEYEVENT:
        own += pubsub.publish(b"__keyevent@%d__:%s" % (db_index, event), key, current)[1]
    return own
