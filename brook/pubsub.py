"""Pub/Sub channels and patterns: who listens to what, and delivering a message to them.

Pure bookkeeping, no sockets. A subscriber is any hashable object; with it the registry keeps
its *sink*, the callable that takes the bytes of a message (a connection passes the ``append``
of its queue of unsent messages), and its *kind*, which says how messages are framed for it: ``ARRAY`` (RESP2, the
message is a ``*3`` array) or ``PUSH`` (RESP3, a ``>3`` push). The two framings differ in the
first byte only.

Publishing encodes the message once per kind present and calls every sink with that same bytes
object: the fan-out loop does nothing per subscriber but the call. Like Redis, a channel's
subscribers are served first, then every pattern that matches (Redis's ``stringmatchlen``, from
:mod:`brook.glob`); a subscriber reached both ways gets the message once per way and counts once
per way in the number of receivers.

The audiences a publish reached are remembered in :attr:`Registry.delivered` until the caller
takes them (:meth:`Registry.take_delivered`): a connection's sink only queues the message, and
the server writes each reached subscriber's queue once at the end of the publisher's batch, so
16 pipelined PUBLISHes cost each subscriber one socket write, not 16 (Redis writes once per event
loop iteration for the same reason). ``on_delivery`` is called when ``delivered`` stops being
empty, so the server can also schedule that write for publishes made outside any client's
batch (keyspace events of the expiry cycle).

:class:`Subscribers` is the connection side: a session entering and leaving subscribed mode,
its subscriptions dropped when it goes, its framing changed by HELLO, and the output buffer
limits of slow subscribers.

The publishing subscriber itself (a RESP3 client publishing to a channel it listens to, any
client inside MULTI/EXEC, a script's caller) is not written to directly: its messages are handed
back to the caller, which puts them where Redis (7.2+) puts them, after the command's own reply
(the session's ``postponed`` messages).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Final

from brook.glob import Matcher, matcher
from brook.protocol import resp
from brook.session import Pushed

if TYPE_CHECKING:
    from brook.output_limits import OutputLimits
    from brook.session import Session

Sink = Callable[[bytes], object]
ARRAY, PUSH = 0, 1  # subscriber kinds: RESP2 arrays, RESP3 pushes


class Audience:
    """The subscribers of one channel or pattern, as ``subscriber -> sink``, one dict per kind."""

    __slots__ = ("by_kind", "match")

    def __init__(self, match: Matcher | None = None) -> None:
        self.by_kind: tuple[dict[Hashable, Sink], dict[Hashable, Sink]] = ({}, {})
        self.match = match  # patterns only: the compiled glob

    def __len__(self) -> int:
        return len(self.by_kind[0]) + len(self.by_kind[1])

    def __contains__(self, subscriber: Hashable) -> bool:
        return subscriber in self.by_kind[0] or subscriber in self.by_kind[1]


Table = dict[bytes, Audience]


def message_frame(kind: bytes, channel: bytes, message: bytes) -> bytes:
    """``message`` / ``smessage`` as a RESP2 array (``kind`` is the first element)."""
    return b"*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(kind), kind, len(channel), channel, len(message), message)


def pattern_frame(pattern: bytes, channel: bytes, message: bytes) -> bytes:
    """``pmessage`` as a RESP2 array."""
    return b"*4\r\n$8\r\npmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(pattern), pattern, len(channel), channel, len(message), message)


def as_push(frame: bytes) -> bytes:
    """The RESP3 framing of a RESP2 array frame: the same bytes after the type byte."""
    return b">" + frame[1:]


class Registry:
    """Channels, patterns and shard channels with their audiences.

    Audiences exist only while they have subscribers, so ``len(channels)`` is Redis's
    ``pubsub_channels`` and ``len(patterns)`` its ``pubsub_patterns`` (distinct patterns).
    """

    def __init__(self, on_delivery: Callable[[], object] | None = None) -> None:
        self.on_delivery = on_delivery
        self.channels: Table = {}
        self.patterns: Table = {}
        self.shard_channels: Table = {}
        # Audiences reached since the last take_delivered(), in order, each once.
        self.delivered: dict[Audience, None] = {}

    # -- subscriptions --------------------------------------------------------------------------

    def add(self, table: Table, name: bytes, subscriber: Hashable, sink: Sink, kind: int) -> None:
        """Add a subscriber to a channel or pattern (the caller checks it was not already)."""
        audience = table.get(name)
        if audience is None:
            audience = table[name] = Audience(matcher(name) if table is self.patterns else None)
        audience.by_kind[kind][subscriber] = sink

    def remove(self, table: Table, name: bytes, subscriber: Hashable) -> None:
        """Remove a subscriber; an audience left empty goes, as in Redis (no unbounded growth
        from clients that come and go on ever new channels)."""
        audience = table.get(name)
        if audience is None:
            return
        for sinks in audience.by_kind:
            sinks.pop(subscriber, None)
        if not len(audience):
            del table[name]

    def change_kind(self, table: Table, names: Iterable[bytes], subscriber: Hashable,
                    kind: int) -> None:
        """The subscriber switched protocol (HELLO while subscribed): move it to ``kind``."""
        for name in names:
            arrays, pushes = table[name].by_kind
            sink = arrays.pop(subscriber, None) or pushes.pop(subscriber)
            table[name].by_kind[kind][subscriber] = sink

    def take_delivered(self) -> list[Hashable]:
        """The subscribers reached since the last call (each once), and forget them."""
        if not self.delivered:
            return []
        audiences, self.delivered = self.delivered, {}
        if len(audiences) == 1:
            (audience,) = audiences
            arrays, pushes = audience.by_kind
            return [*arrays, *pushes]
        reached: dict[Hashable, None] = {}
        for audience in audiences:
            for sinks in audience.by_kind:
                reached.update(dict.fromkeys(sinks))
        return list(reached)

    def deliver_to(self, subscriber: Hashable, sink: Sink, frame: bytes) -> None:
        """A message for one client alone (a tracking invalidation): queued with its sink and
        written with the turn's other messages, as a publish's are."""
        if not self.delivered and self.on_delivery is not None:
            self.on_delivery()
        audience = Audience()
        audience.by_kind[ARRAY][subscriber] = sink
        self.delivered[audience] = None
        sink(frame)

    def count(self, table: Table, name: bytes) -> int:
        audience = table.get(name)
        return 0 if audience is None else len(audience)

    # -- publishing -----------------------------------------------------------------------------

    def publish(self, channel: bytes, message: bytes,
                current: Hashable | None = None) -> tuple[int, bytes]:
        """PUBLISH: deliver to the channel's subscribers and every matching pattern's.

        Returns the number of receivers and what ``current`` (the publishing subscriber)
        receives, which the caller sends itself.
        """
        own: list[bytes] = []
        receivers = 0
        delivered = self.delivered
        audience = self.channels.get(channel)
        if not delivered and self.on_delivery is not None:
            self.on_delivery()
        if audience is not None:
            delivered[audience] = None
            receivers = _deliver(audience, message_frame(b"message", channel, message),
                                 current, own)
        for pattern, audience in self.patterns.items():
            if audience.match(channel):  # type: ignore[misc]
                delivered[audience] = None
                receivers += _deliver(audience, pattern_frame(pattern, channel, message),
                                      current, own)
        return receivers, b"".join(own)

    def spublish(self, channel: bytes, message: bytes,
                 current: Hashable | None = None) -> tuple[int, bytes]:
        """SPUBLISH: shard channels only; patterns never see shard messages."""
        audience = self.shard_channels.get(channel)
        if audience is None:
            return 0, b""
        if not self.delivered and self.on_delivery is not None:
            self.on_delivery()
        self.delivered[audience] = None
        own: list[bytes] = []
        receivers = _deliver(audience, message_frame(b"smessage", channel, message),
                             current, own)
        return receivers, b"".join(own)


def _deliver(audience: Audience, frame: bytes, current: Hashable | None,
             own: list[bytes]) -> int:
    """Call every sink of an audience with the frame of its kind; returns the audience size."""
    arrays, pushes = audience.by_kind
    if current is not None and current in audience:
        return _deliver_around(audience, frame, current, own)
    if arrays:
        for write in arrays.values():
            write(frame)
    if pushes:
        push = as_push(frame)
        for write in pushes.values():
            write(push)
    return len(arrays) + len(pushes)


def _deliver_around(audience: Audience, frame: bytes, current: Hashable,
                    own: list[bytes]) -> int:
    """As :func:`_deliver`, with the publisher's own copy kept for the caller."""
    for kind, sinks in enumerate(audience.by_kind):
        encoded = frame if kind == ARRAY else as_push(frame)
        for subscriber, write in sinks.items():
            if subscriber is current:
                own.append(encoded)
            else:
                write(encoded)
    return len(audience)


# ---------------------------------------------------------------------------------------------
# Subscribers: subscribed mode and slow subscribers
# ---------------------------------------------------------------------------------------------

_HEADS: Final = {2: b"*3\r\n", 3: b">3\r\n"}
Counter = Callable[["Session"], int]


def global_count(session: Session) -> int:
    """Redis's clientSubscriptionsCount: channels and patterns count together..."""
    return len(session.channels) + len(session.patterns)


def shard_count(session: Session) -> int:
    """...and shard channels apart."""
    return len(session.shard_channels)


def _kind(session: Session) -> int:
    return ARRAY if session.protocol == 2 else PUSH


def _confirmation(session: Session, verb: bytes, name: bytes | None, count: int) -> bytes:
    """A (un)subscribe notification: ``[verb, name, count]``, a nil name when there was
    nothing to unsubscribe from; a push in RESP3."""
    shown = resp.null(session.protocol) if name is None else resp.bulk(name)
    return _HEADS[session.protocol] + resp.bulk(verb) + shown + resp.integer(count)


class Subscribers:
    """Sessions in subscribed mode: their subscriptions.

    A session with any subscription is in *subscribed mode*: in RESP2 the dispatcher then only
    runs the commands Redis allows there, and the client is of the ``pubsub`` class for CLIENT
    LIST/KILL and for the output buffer limit (brook.output_limits).

    Delivery. A subscriber's sink is the ``append`` of its ``pubsub_out`` list: a PUBLISH
    queues the one encoded message there for each subscriber, and when the publisher's batch
    ends the server writes each reached subscriber's queue at once.
    """

    def __init__(self, output_limits: OutputLimits, registry: Registry) -> None:
        self.output_limits = output_limits
        self.registry = registry

    # -- subscribing ----------------------------------------------------------------------

    def subscribe(self, session: Session, names: list[bytes], mine: dict[bytes, None],
                  table: Table, verb: bytes, count: Counter) -> bytes:
        was_subscribed = session.is_subscribed()
        sink = session.pubsub_out.append
        kind = _kind(session)
        parts = []
        for name in names:
            if name not in mine:
                mine[name] = None
                self.registry.add(table, name, session, sink, kind)
            parts.append(_confirmation(session, verb, name, count(session)))
        if not was_subscribed:  # now of the pubsub class
            self.output_limits.apply(session)
            session.refresh_mode()
        return Pushed(b"".join(parts))

    def unsubscribe(self, session: Session, names: list[bytes], mine: dict[bytes, None],
                    table: Table, verb: bytes, count: Counter, notify: bool = True) -> bytes:
        """Unsubscribe from ``names``, or from everything of this kind when none are given."""
        was_subscribed = session.is_subscribed()
        everything = not names
        if everything:
            names = list(mine)
        parts = []
        for name in names:
            if name in mine:
                del mine[name]
                self.registry.remove(table, name, session)
            if notify:
                parts.append(_confirmation(session, verb, name, count(session)))
        if notify and everything and not names:
            parts.append(_confirmation(session, verb, None, count(session)))
        if was_subscribed and not session.is_subscribed():
            self._left(session)
        return Pushed(b"".join(parts))

    def _left(self, session: Session) -> None:
        """The session has just left subscribed mode: a normal client again."""
        self.output_limits.apply(session)
        session.refresh_mode()

    def drop(self, session: Session) -> None:
        """The session is going (QUIT, CLIENT KILL, disconnection): no channel or pattern may
        keep a reference to it, and nothing more is sent to it."""
        self.unsubscribe_all(session)
        self.output_limits.relieved(session)
        session.pubsub_out.clear()

    def unsubscribe_all(self, session: Session) -> None:
        """Drop every subscription, telling nobody (RESET, and :meth:`drop`)."""
        if session.is_subscribed():
            registry = self.registry
            self.unsubscribe(session, [], session.channels, registry.channels, b"",
                             global_count, False)
            self.unsubscribe(session, [], session.patterns, registry.patterns, b"",
                             global_count, False)
            self.unsubscribe(session, [], session.shard_channels, registry.shard_channels, b"",
                             shard_count, False)

    def protocol_changed(self, session: Session) -> None:
        """HELLO switched a subscribed session's protocol: its messages change framing."""
        registry = self.registry
        kind = _kind(session)
        registry.change_kind(registry.channels, session.channels, session, kind)
        registry.change_kind(registry.patterns, session.patterns, session, kind)
        registry.change_kind(registry.shard_channels, session.shard_channels, session, kind)
        session.refresh_mode()
