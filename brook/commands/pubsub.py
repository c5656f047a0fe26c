"""Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB,
SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH.

A session's subscriptions are three insertion-ordered dicts on it (``channels``, ``patterns``,
``shard_channels``, names to None); the server-wide audiences live in
:class:`brook.pubsub.Registry`, and entering or leaving subscribed mode, output limits and slow
subscribers in :class:`brook.pubsub.Subscribers` (``server.subscribers``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.common import help_reply
from brook.commands.registry import (
    COMMANDS,
    CommandError,
    command,
    container,
    subcommand_error,
)
from brook.glob import matcher
from brook.protocol import resp
from brook.pubsub import Registry, Table, global_count, shard_count

if TYPE_CHECKING:
    from brook.session import Session

_PUBSUB = "pubsub noscript loading stale"
_PUBSUB_ACL = "@pubsub @slow"
_INTROSPECTION = "pubsub loading stale"


# ---------------------------------------------------------------------------------------------
# Subscribing
# ---------------------------------------------------------------------------------------------


@command("subscribe", arity=-2, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub", since="2.0.0",
         summary="Listens for messages published to channels.",
         complexity="O(N) where N is the number of channels to subscribe to.",
         syntax="channel [channel ...]")
def subscribe(client: Session, args: list[bytes]) -> bytes:
    return client.server.subscribers.subscribe(
        client, args[1:], client.channels, client.server.pubsub.channels,
        b"subscribe", global_count)


@command("unsubscribe", arity=-1, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub",
         since="2.0.0", summary="Stops listening to messages posted to channels.",
         complexity="O(N) where N is the number of channels to unsubscribe.",
         syntax="[channel [channel ...]]")
def unsubscribe(client: Session, args: list[bytes]) -> bytes:
    return client.server.subscribers.unsubscribe(
        client, args[1:], client.channels, client.server.pubsub.channels,
        b"unsubscribe", global_count)


@command("psubscribe", arity=-2, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub",
         since="2.0.0",
         summary="Listens for messages published to channels that match one or more patterns.",
         complexity="O(N) where N is the number of patterns to subscribe to.",
         syntax="pattern [pattern ...]")
def psubscribe(client: Session, args: list[bytes]) -> bytes:
    return client.server.subscribers.subscribe(
        client, args[1:], client.patterns, client.server.pubsub.patterns,
        b"psubscribe", global_count)


@command("punsubscribe", arity=-1, flags=_PUBSUB, acl=_PUBSUB_ACL, group="pubsub",
         since="2.0.0",
         summary="Stops listening to messages published to channels that match one or more "
                 "patterns.",
         complexity="O(N) where N is the number of patterns to unsubscribe.",
         syntax="[pattern [pattern ...]]")
def punsubscribe(client: Session, args: list[bytes]) -> bytes:
    return client.server.subscribers.unsubscribe(
        client, args[1:], client.patterns, client.server.pubsub.patterns,
        b"punsubscribe", global_count)


@command("ssubscribe", arity=-2, flags=_PUBSUB, keys=(1, -1, 1), acl=_PUBSUB_ACL,
         group="pubsub", since="7.0.0",
         summary="Listens for messages published to shard channels.",
         complexity="O(N) where N is the number of shard channels to subscribe to.",
         syntax="shardchannel [shardchannel ...]")
def ssubscribe(client: Session, args: list[bytes]) -> bytes:
    if client.in_exec:  # Redis's CLIENT_DENY_BLOCKING (SUBSCRIBE is exempted inside MULTI)
        raise CommandError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
    return client.server.subscribers.subscribe(
        client, args[1:], client.shard_channels,
        client.server.pubsub.shard_channels, b"ssubscribe", shard_count)


@command("sunsubscribe", arity=-1, flags=_PUBSUB, keys=(1, -1, 1), acl=_PUBSUB_ACL,
         group="pubsub", since="7.0.0",
         summary="Stops listening to messages posted to shard channels.",
         complexity="O(N) where N is the number of shard channels to unsubscribe.",
         syntax="[shardchannel [shardchannel ...]]")
def sunsubscribe(client: Session, args: list[bytes]) -> bytes:
    return client.server.subscribers.unsubscribe(
        client, args[1:], client.shard_channels,
        client.server.pubsub.shard_channels, b"sunsubscribe", shard_count)


# ---------------------------------------------------------------------------------------------
# Publishing
# ---------------------------------------------------------------------------------------------


def _published(current: Session, receivers: int, own: bytes) -> bytes:
    """The reply: the receiver count. The current client's own copies, when it listens too,
    wait in its ``postponed`` messages: Redis (7.2+) sends them after the top-level command's
    whole reply (EXEC's, EVAL's), even under CLIENT REPLY OFF/SKIP. The other subscribers'
    copies are written when the publisher's batch ends (``Client.flush`` in
    brook.connection)."""
    if own:
        current.postponed.append(own)
    return resp.integer(receivers)


def _propagate(client: Session, args: list[bytes], sharded: bool) -> None:
    """The message for the other servers' subscribers: in cluster mode over the bus (to
    every node, or to the shard's for SPUBLISH), otherwise to the replicas."""
    server = client.server
    cluster = server.cluster
    if cluster is None:
        server.propagate_to_replicas(client.db.index, args)
    elif cluster.bus is not None:
        cluster.bus.publish(args[1], args[2], sharded)


@command("publish", arity=3, flags="pubsub loading stale fast", acl="@pubsub @fast",
         group="pubsub", since="2.0.0", summary="Posts a message to a channel.",
         complexity="O(N+M) where N is the number of clients subscribed to the receiving "
                    "channel and M is the total number of subscribed patterns (by any client).",
         syntax="channel message")
def publish(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    current = server.current_client or client  # a script's caller for the script's PUBLISH
    receivers, own = server.pubsub.publish(args[1], args[2], current)
    _propagate(client, args, sharded=False)
    return _published(current, receivers, own)


@command("spublish", arity=3, flags="pubsub loading stale fast", keys=(1, 1, 1),
         acl="@pubsub @fast", group="pubsub", since="7.0.0",
         summary="Post a message to a shard channel",
         complexity="O(N) where N is the number of clients subscribed to the receiving shard "
                    "channel.",
         syntax="shardchannel message")
def spublish(client: Session, args: list[bytes]) -> bytes:
    """Without cluster mode a shard channel is just a second namespace of channels."""
    server = client.server
    current = server.current_client or client
    receivers, own = server.pubsub.spublish(args[1], args[2], current)
    _propagate(client, args, sharded=True)
    return _published(current, receivers, own)


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
def pubsub_channels(client: Session, args: list[bytes]) -> bytes:
    return _names(client.server.pubsub.channels, args)


@command("pubsub|numsub", arity=-2, flags=_INTROSPECTION, acl=_PUBSUB_ACL, since="2.8.0",
         summary="Returns a count of subscribers to channels.",
         complexity="O(N) for the NUMSUB subcommand, where N is the number of requested "
                    "channels",
         syntax="[channel [channel ...]]")
def pubsub_numsub(client: Session, args: list[bytes]) -> bytes:
    registry: Registry = client.server.pubsub
    return _counts(registry, registry.channels, args[2:])


@command("pubsub|numpat", arity=2, flags=_INTROSPECTION, acl=_PUBSUB_ACL, since="2.8.0",
         summary="Returns a count of unique pattern subscriptions.", syntax="")
def pubsub_numpat(client: Session, args: list[bytes]) -> bytes:
    return resp.integer(len(client.server.pubsub.patterns))


@command("pubsub|shardchannels", arity=-2, flags=_INTROSPECTION, acl=_PUBSUB_ACL,
         since="7.0.0", summary="Returns the active shard channels.",
         complexity="O(N) where N is the number of active shard channels, and assuming "
                    "constant time pattern matching (relatively short shard channels).",
         syntax="[pattern]")
def pubsub_shardchannels(client: Session, args: list[bytes]) -> bytes:
    return _names(client.server.pubsub.shard_channels, args)


@command("pubsub|shardnumsub", arity=-2, flags=_INTROSPECTION, acl=_PUBSUB_ACL,
         since="7.0.0", summary="Returns the count of subscribers of shard channels.",
         complexity="O(N) for the SHARDNUMSUB subcommand, where N is the number of requested "
                    "shard channels",
         syntax="[shardchannel [shardchannel ...]]")
def pubsub_shardnumsub(client: Session, args: list[bytes]) -> bytes:
    registry: Registry = client.server.pubsub
    return _counts(registry, registry.shard_channels, args[2:])


_PUBSUB_HELP = [
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
]


@command("pubsub|help", arity=2, flags="loading stale", acl="@slow", since="6.2.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def pubsub_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _PUBSUB_HELP)


# Shard channels sit where keys do in the request (cluster routing hashes them), but they name
# no key of the keyspace: their key spec is NOT_KEY, and COMMAND GETKEYS says there are none.
for _name in ("ssubscribe", "sunsubscribe", "spublish"):
    COMMANDS[_name].key_flags = ("not_key",)
