"""Pub/Sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB, SSUBSCRIBE,
SUNSUBSCRIBE, SPUBLISH; and the subscriber side of a connection.

A client's subscriptions are three insertion-ordered dicts on the client (``channels``,
``patterns``, ``shard_channels``, names to None); the server-wide audiences live in
:class:`brook.pubsub.Registry`. A client with any subscription is in *subscribed mode*: in RESP2
the connection then only runs the commands Redis allows there (``Client.execute``), PING answers
``["pong", message]``, and the client is of the ``pubsub`` class for CLIENT LIST/KILL and for
the output buffer limit.

Delivery. A subscriber's sink is the ``append`` of its ``pubsub_out`` list: a PUBLISH queues
the one encoded message there for each subscriber, and when the publisher's batch of requests
ends (``Client.flush`` -> ``Server.flush_subscribers``) each subscriber reached gets its queue
in one ``transport.write``, as Redis writes each client once per event loop iteration.

Slow subscribers. A subscriber that does not read makes its transport buffer grow. The
transport is told to call
``pause_writing`` when that buffer passes the ``client-output-buffer-limit pubsub`` soft limit
(the hard one when there is no soft limit), which costs the fan-out nothing. From then on the
client is *congested* and its limits are checked as Redis's ``checkClientOutputBufferLimits``
does, after every batch of publishes and once per cron tick (newer Redis's clientsCron check
too): at or above the hard limit, or at or above the
soft limit for more than soft-seconds, it is disconnected at once (its pending output dropped)
with Redis's log line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from brook.commands.introspection import help_reply
from brook.commands.registry import (
    COMMANDS,
    CommandError,
    command,
    container,
    subcommand_error,
)
from brook.connection import REPLY_ON, Pushed
from brook.glob import matcher
from brook.protocol import resp
from brook.pubsub import ARRAY, PUSH, Registry, Table

if TYPE_CHECKING:
    from brook.connection import Client
    from brook.server import Server

_PUBSUB = "pubsub noscript loading stale"
_PUBSUB_ACL = "@pubsub @slow"
_INTROSPECTION = "pubsub loading stale"
_HEADS = {2: b"*3\r\n", 3: b">3\r\n"}
Counter = Callable[["Client"], int]


# ---------------------------------------------------------------------------------------------
# Subscribed mode
# ---------------------------------------------------------------------------------------------


def is_subscribed(client: Client) -> bool:
    return bool(client.channels or client.patterns or client.shard_channels)


def _kind(client: Client) -> int:
    return ARRAY if client.protocol == 2 else PUSH


def _confirmation(client: Client, verb: bytes, name: bytes | None, count: int) -> bytes:
    """A (un)subscribe notification: ``[verb, name, count]``, a nil name when there was
    nothing to unsubscribe from; a push in RESP3."""
    shown = resp.null(client.protocol) if name is None else resp.bulk(name)
    return _HEADS[client.protocol] + resp.bulk(verb) + shown + resp.integer(count)


def _global_count(client: Client) -> int:
    """Redis's clientSubscriptionsCount: channels and patterns count together..."""
    return len(client.channels) + len(client.patterns)


def _shard_count(client: Client) -> int:
    """...and shard channels apart."""
    return len(client.shard_channels)


def _entered(client: Client) -> None:
    """The client has just entered subscribed mode."""
    apply_output_limits(client)
    client.refresh_mode()


def _left(client: Client) -> None:
    """The client has just left subscribed mode: a normal client again."""
    client.server.slow_subscribers.discard(client)
    client.obuf_soft_since = 0
    _set_limits(client, 0)
    client.refresh_mode()


def _subscribe(client: Client, names: list[bytes], mine: dict[bytes, None], table: Table,
               verb: bytes, count: Counter) -> bytes:
    registry: Registry = client.server.pubsub
    was_subscribed = is_subscribed(client)
    sink = client.pubsub_out.append
    kind = _kind(client)
    parts = []
    for name in names:
        if name not in mine:
            mine[name] = None
            registry.add(table, name, client, sink, kind)
        parts.append(_confirmation(client, verb, name, count(client)))
    if not was_subscribed:
        _entered(client)
    return Pushed(b"".join(parts))


def _unsubscribe(client: Client, names: list[bytes], mine: dict[bytes, None], table: Table,
                 verb: bytes, count: Counter, notify: bool = True) -> bytes:
    """Unsubscribe from ``names``, or from everything of this kind when none are given."""
    registry: Registry = client.server.pubsub
    was_subscribed = is_subscribed(client)
    everything = not names
    if everything:
        names = list(mine)
    parts = []
    for name in names:
        if name in mine:
            del mine[name]
            registry.remove(table, name, client)
        if notify:
            parts.append(_confirmation(client, verb, name, count(client)))
    if notify and everything and not names:
        parts.append(_confirmation(client, verb, None, count(client)))
    if was_subscribed and not is_subscribed(client):
        _left(client)
    return Pushed(b"".join(parts))


def unsubscribe_all(client: Client) -> None:
    """RESET, QUIT, CLIENT KILL, disconnection: drop every subscription, telling nobody."""
    if not is_subscribed(client):
        return
    registry: Registry = client.server.pubsub
    _unsubscribe(client, [], client.channels, registry.channels, b"", _global_count, False)
    _unsubscribe(client, [], client.patterns, registry.patterns, b"", _global_count, False)
    _unsubscribe(client, [], client.shard_channels, registry.shard_channels, b"", _shard_count,
                 False)


def protocol_changed(client: Client) -> None:
    """HELLO switched a subscribed client's protocol: its messages change framing."""
    registry: Registry = client.server.pubsub
    kind = _kind(client)
    registry.change_kind(registry.channels, client.channels, client, kind)
    registry.change_kind(registry.patterns, client.patterns, client, kind)
    registry.change_kind(registry.shard_channels, client.shard_channels, client, kind)
    client.refresh_mode()


# ---------------------------------------------------------------------------------------------
# Slow subscribers: client-output-buffer-limit pubsub
# ---------------------------------------------------------------------------------------------


def apply_output_limits(client: Client) -> None:
    """Have the transport call ``pause_writing`` once its buffer reaches the soft limit (the
    hard one without a soft limit); Redis compares with ``>=``, asyncio pauses above ``high``.
    ``low`` equal to ``high`` resumes as soon as it is below again, when Redis forgets the time
    the soft limit was first reached."""
    hard, soft, _ = client.server.config.client_output_buffer_limit["pubsub"]
    _set_limits(client, soft or hard)


def _set_limits(client: Client, threshold: int) -> None:
    """Pause at ``threshold`` bytes; 0: asyncio's defaults, as every connection starts."""
    transport = client.transport
    if transport is None or transport.is_closing():
        return
    try:
        if threshold:
            transport.set_write_buffer_limits(high=threshold - 1, low=threshold - 1)
        else:
            transport.set_write_buffer_limits()
    except RuntimeError:  # the handle is already closed: nothing will be written any more
        pass


def output_limits_changed(server: Server) -> None:
    """CONFIG SET client-output-buffer-limit: every subscriber gets the new thresholds."""
    for client in list(server.clients.values()):
        if is_subscribed(client):
            apply_output_limits(client)


def congested(client: Client) -> None:
    """The subscriber's transport buffer passed the threshold (its ``pause_writing``)."""
    client.server.slow_subscribers.add(client)
    enforce_output_limit(client)


def check_slow_subscribers(server: Server) -> None:
    """After each batch of publishes and every cron tick: disconnect the congested clients
    that are over their limits."""
    for client in list(server.slow_subscribers):
        enforce_output_limit(client)


def enforce_output_limit(client: Client) -> None:
    """Redis's checkClientOutputBufferLimits for the pubsub class (whole-second soft timer)."""
    transport = client.transport
    if transport is None or client.closing or not is_subscribed(client):
        client.server.slow_subscribers.discard(client)
        return
    hard, soft, soft_seconds = client.server.config.client_output_buffer_limit["pubsub"]
    used = (transport.get_write_buffer_size() + sum(map(len, client.pubsub_out))
            + sum(map(len, client.out)))
    reached = bool(hard) and used >= hard
    if soft and used >= soft:
        now = int(time.time())
        if not client.obuf_soft_since:
            client.obuf_soft_since = now
        elif now - client.obuf_soft_since > soft_seconds:
            reached = True
    else:
        client.obuf_soft_since = 0
    if reached:
        _disconnect_slow(client)


def _disconnect_slow(client: Client) -> None:
    """Close now and drop what it has not read (``abort``): its registry entries go with
    ``connection_lost``, so this is safe in the middle of a fan-out."""
    # Imported here: clients imports commands.connection, which imports this module.
    from brook.commands.clients import client_line

    server = client.server
    line = client_line(client, time.time()).decode("utf-8", "replace")
    server.log("warning", f"Client {line} scheduled to be closed ASAP for overcoming of output "
                          "buffer limits.")
    server.stats["client_output_buffer_limit_disconnections"] += 1
    server.slow_subscribers.discard(client)
    client.closing = client.slow = True
    assert client.transport is not None
    client.transport.abort()


# ---------------------------------------------------------------------------------------------
# Subscribing
# ---------------------------------------------------------------------------------------------


@command("subscribe", arity=-2, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub", since="2.0.0",
         summary="Listens for messages published to channels.",
         complexity="O(N) where N is the number of channels to subscribe to.",
         syntax="channel [channel ...]")
def subscribe(client: Client, args: list[bytes]) -> bytes:
    return _subscribe(client, args[1:], client.channels, client.server.pubsub.channels,
                      b"subscribe", _global_count)


@command("unsubscribe", arity=-1, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub",
         since="2.0.0", summary="Stops listening to messages posted to channels.",
         complexity="O(N) where N is the number of channels to unsubscribe.",
         syntax="[channel [channel ...]]")
def unsubscribe(client: Client, args: list[bytes]) -> bytes:
    return _unsubscribe(client, args[1:], client.channels, client.server.pubsub.channels,
                        b"unsubscribe", _global_count)


@command("psubscribe", arity=-2, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub",
         since="2.0.0",
         summary="Listens for messages published to channels that match one or more patterns.",
         complexity="O(N) where N is the number of patterns to subscribe to.",
         syntax="pattern [pattern ...]")
def psubscribe(client: Client, args: list[bytes]) -> bytes:
    return _subscribe(client, args[1:], client.patterns, client.server.pubsub.patterns,
                      b"psubscribe", _global_count)


@command("punsubscribe", arity=-1, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub",
         since="2.0.0",
         summary="Stops listening to messages published to channels that match one or more "
                 "patterns.",
         complexity="O(N) where N is the number of patterns to unsubscribe.",
         syntax="[pattern [pattern ...]]")
def punsubscribe(client: Client, args: list[bytes]) -> bytes:
    return _unsubscribe(client, args[1:], client.patterns, client.server.pubsub.patterns,
                        b"punsubscribe", _global_count)


@command("ssubscribe", arity=-2, flags=_PUBSUB, keys=(1, -1, 1), acl=_PUBSUB_ACL,
         group="pubsub", since="7.0.0",
         summary="Listens for messages published to shard channels.",
         complexity="O(N) where N is the number of shard channels to subscribe to.",
         syntax="shardchannel [shardchannel ...]")
def ssubscribe(client: Client, args: list[bytes]) -> bytes:
    if client.in_exec:  # Redis's CLIENT_DENY_BLOCKING (SUBSCRIBE is exempted inside MULTI)
        raise CommandError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
    return _subscribe(client, args[1:], client.shard_channels,
                      client.server.pubsub.shard_channels, b"ssubscribe", _shard_count)


@command("sunsubscribe", arity=-1, flags=_PUBSUB, keys=(1, -1, 1), acl=_PUBSUB_ACL,
         group="pubsub", since="7.0.0",
         summary="Stops listening to messages posted to shard channels.",
         complexity="O(N) where N is the number of shard channels to unsubscribe.",
         syntax="[shardchannel [shardchannel ...]]")
def sunsubscribe(client: Client, args: list[bytes]) -> bytes:
    return _unsubscribe(client, args[1:], client.shard_channels,
                        client.server.pubsub.shard_channels, b"sunsubscribe", _shard_count)


# ---------------------------------------------------------------------------------------------
# Publishing
# ---------------------------------------------------------------------------------------------


def _published(client: Client, receivers: int, own: bytes) -> bytes:
    """The reply: the receiver count, after the publisher's own copies when it listens too
    (Redis appends them to its output during the command, before the reply; inside EXEC they
    land inside the EXEC array, as in Redis). Under CLIENT REPLY OFF/SKIP the copies still go,
    as pushes do in Redis. The other subscribers' copies are written when the publisher's
    batch ends (``Client.flush``)."""
    reply = resp.integer(receivers)
    if not own:
        return reply
    if client.reply_mode != REPLY_ON:
        client.out.append(own)
        return reply
    return own + reply


@command("publish", arity=3, flags="pubsub loading stale fast", acl="@pubsub @fast",
         group="pubsub", since="2.0.0", summary="Posts a message to a channel.",
         complexity="O(N+M) where N is the number of clients subscribed to the receiving "
                    "channel and M is the total number of subscribed patterns (by any client).",
         syntax="channel message")
def publish(client: Client, args: list[bytes]) -> bytes:
    receivers, own = client.server.pubsub.publish(args[1], args[2], client)
    return _published(client, receivers, own)


@command("spublish", arity=3, flags="pubsub loading stale fast", keys=(1, 1, 1),
         acl="@pubsub @fast", group="pubsub", since="7.0.0",
         summary="Post a message to a shard channel",
         complexity="O(N) where N is the number of clients subscribed to the receiving shard "
                    "channel.",
         syntax="shardchannel message")
def spublish(client: Client, args: list[bytes]) -> bytes:
    """Without cluster mode a shard channel is just a second namespace of channels."""
    receivers, own = client.server.pubsub.spublish(args[1], args[2], client)
    return _published(client, receivers, own)


# ---------------------------------------------------------------------------------------------
# PUBSUB introspection
# ---------------------------------------------------------------------------------------------

container("pubsub", acl="@slow", group="pubsub", since="2.8.0",
          summary="A container for Pub/Sub commands.")


def _names(table: Table, args: list[bytes]) -> bytes:
    """PUBSUB CHANNELS / SHARDCHANNELS: the active names, those matching the pattern if given
    (matched as Redis does, so ``*`` leaves out the empty channel name)."""
    if len(args) > 3:
        raise subcommand_error(args, "PUBSUB")
    if len(args) == 2:
        return resp.array_of_bulks(table)
    match = matcher(args[2])
    return resp.array_of_bulks(name for name in table if match(name))


def _counts(registry: Registry, table: Table, names: list[bytes]) -> bytes:
    parts = [resp.bulk(name) + resp.integer(registry.count(table, name)) for name in names]
    return b"*%d\r\n%s" % (2 * len(names), b"".join(parts))


@command("pubsub|channels", arity=-2, flags=_INTROSPECTION, acl=_PUBSUB_ACL, since="2.8.0",
         summary="Returns the active channels.",
         complexity="O(N) where N is the number of active channels, and assuming constant "
                    "time pattern matching (relatively short channels and patterns)",
         syntax="[pattern]")
def pubsub_channels(client: Client, args: list[bytes]) -> bytes:
    return _names(client.server.pubsub.channels, args)


@command("pubsub|numsub", arity=-2, flags=_INTROSPECTION, acl=_PUBSUB_ACL, since="2.8.0",
         summary="Returns a count of subscribers to channels.",
         complexity="O(N) for the NUMSUB subcommand, where N is the number of requested "
                    "channels",
         syntax="[channel [channel ...]]")
def pubsub_numsub(client: Client, args: list[bytes]) -> bytes:
    registry: Registry = client.server.pubsub
    return _counts(registry, registry.channels, args[2:])


@command("pubsub|numpat", arity=2, flags=_INTROSPECTION, acl=_PUBSUB_ACL, since="2.8.0",
         summary="Returns a count of unique pattern subscriptions.", syntax="")
def pubsub_numpat(client: Client, args: list[bytes]) -> bytes:
    return resp.integer(len(client.server.pubsub.patterns))


@command("pubsub|shardchannels", arity=-2, flags=_INTROSPECTION, acl=_PUBSUB_ACL,
         since="7.0.0", summary="Returns the active shard channels.",
         complexity="O(N) where N is the number of active shard channels, and assuming "
                    "constant time pattern matching (relatively short shard channels).",
         syntax="[pattern]")
def pubsub_shardchannels(client: Client, args: list[bytes]) -> bytes:
    return _names(client.server.pubsub.shard_channels, args)


@command("pubsub|shardnumsub", arity=-2, flags=_INTROSPECTION, acl=_PUBSUB_ACL,
         since="7.0.0", summary="Returns the count of subscribers of shard channels.",
         complexity="O(N) for the SHARDNUMSUB subcommand, where N is the number of requested "
                    "shard channels",
         syntax="[shardchannel [shardchannel ...]]")
def pubsub_shardnumsub(client: Client, args: list[bytes]) -> bytes:
    registry: Registry = client.server.pubsub
    return _counts(registry, registry.shard_channels, args[2:])


_PUBSUB_HELP = [
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
]


@command("pubsub|help", arity=2, flags="loading stale", acl="@slow", since="6.2.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def pubsub_help(client: Client, args: list[bytes]) -> bytes:
    return help_reply(_PUBSUB_HELP)


# Shard channels sit where keys do in the request (cluster routing hashes them), but they name
# no key of the keyspace: their key spec is NOT_KEY, and COMMAND GETKEYS says there are none.
for _name in ("ssubscribe", "sunsubscribe", "spublish"):
    COMMANDS[_name].key_flags = ("not_key",)
