"""Pub/Sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH, SPUBLISH, PUBSUB;
subscribed mode; RESET, QUIT and disconnection; CLIENT LIST and INFO; slow subscribers.

Every test using ``server`` runs against Brook and real Redis, on raw sockets, so the bytes on
the wire must be identical. Where Redis's order is its hash tables' (PUBSUB CHANNELS, unsubscribe
from everything, one message matching several patterns) the tests compare sets: Brook keeps
insertion order there.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator

import pytest
import redis

from brook import glob
from brook.pubsub import ARRAY, PUSH, Registry, as_push, message_frame, pattern_frame
from tests.conftest import ServerProcess, encode_request, error_text, help_footer
from tests.support.pubsub import Peer, frame

CANT = ("ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
        "are allowed in this context")
DEFAULT_PUBSUB_LIMIT = "pubsub 33554432 8388608 60"








@pytest.fixture
def peer(server: ServerProcess) -> Iterator:  # type: ignore[type-arg]
    opened: list[Peer] = []

    def make(resp3: bool = False) -> Peer:
        conn = Peer(server, resp3)
        opened.append(conn)
        return conn

    yield make
    for conn in opened:
        conn.close()


@pytest.fixture
def pubsub_limit(server: ServerProcess) -> Iterator[redis.Redis]:
    """A control client; the pubsub output buffer limit is put back to the default after."""
    client = server.client()
    yield client
    client.config_set("client-output-buffer-limit", DEFAULT_PUBSUB_LIMIT)
    client.close()


def wait_for(predicate, timeout: float = 10) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


def numsub(r: redis.Redis, *channels: str) -> list[int]:
    reply = r.execute_command("PUBSUB", "NUMSUB", *channels)
    return reply[1::2]


# ---------------------------------------------------------------------------------------------
# The registry alone (no sockets)
# ---------------------------------------------------------------------------------------------


def test_registry_delivers_one_frame_per_kind_and_counts_receivers():
    registry = Registry()
    got: dict[str, list[bytes]] = {"a": [], "b": [], "c": []}
    registry.add(registry.channels, b"ch", "a", got["a"].append, ARRAY)
    registry.add(registry.channels, b"ch", "b", got["b"].append, PUSH)
    registry.add(registry.patterns, b"c*", "a", got["a"].append, ARRAY)
    registry.add(registry.shard_channels, b"ch", "c", got["c"].append, ARRAY)
    receivers, own = registry.publish(b"ch", b"hi")
    assert (receivers, own) == (3, b"")
    plain = message_frame(b"message", b"ch", b"hi")
    assert got["a"] == [plain, pattern_frame(b"c*", b"ch", b"hi")]
    assert got["b"] == [as_push(plain)] and got["b"][0].startswith(b">3\r\n")
    assert got["c"] == []
    assert registry.spublish(b"ch", b"s") == (1, b"")
    assert got["c"] == [message_frame(b"smessage", b"ch", b"s")]
    assert sorted(registry.take_delivered()) == ["a", "b", "c"]
    assert registry.take_delivered() == []


def test_registry_keeps_the_publishers_copy_apart_and_forgets_empty_audiences():
    registry = Registry()
    others: list[bytes] = []
    registry.add(registry.channels, b"ch", "me", others.append, ARRAY)
    registry.add(registry.channels, b"ch", "you", others.append, ARRAY)
    receivers, own = registry.publish(b"ch", b"x", current="me")
    assert receivers == 2 and own == message_frame(b"message", b"ch", b"x") == others[0]
    assert len(others) == 1
    registry.change_kind(registry.channels, [b"ch"], "me", PUSH)
    assert registry.publish(b"ch", b"y", current="me")[1].startswith(b">3")
    registry.remove(registry.channels, b"ch", "me")
    registry.remove(registry.channels, b"ch", "you")
    assert registry.channels == {} and registry.count(registry.channels, b"ch") == 0


# ---------------------------------------------------------------------------------------------
# Confirmations
# ---------------------------------------------------------------------------------------------


def test_subscribe_confirms_each_channel_with_the_count(peer):
    sub = peer()
    sub.call_raw("SUBSCRIBE", "a", "b", "a", expected=(
        frame(b"*", b"subscribe", b"a", 1) + frame(b"*", b"subscribe", b"b", 2)
        + frame(b"*", b"subscribe", b"a", 2)))
    # Patterns count with channels; shard channels have their own count.
    sub.call_raw("PSUBSCRIBE", "h*", "h*", "x?", expected=(
        frame(b"*", b"psubscribe", b"h*", 3) + frame(b"*", b"psubscribe", b"h*", 3)
        + frame(b"*", b"psubscribe", b"x?", 4)))
    sub.call_raw("SSUBSCRIBE", "s1", "s2", expected=(
        frame(b"*", b"ssubscribe", b"s1", 1) + frame(b"*", b"ssubscribe", b"s2", 2)))
    sub.call_raw("UNSUBSCRIBE", "a", "zz", expected=(
        frame(b"*", b"unsubscribe", b"a", 3) + frame(b"*", b"unsubscribe", b"zz", 3)))
    sub.call_raw("PUNSUBSCRIBE", "x?", expected=frame(b"*", b"punsubscribe", b"x?", 2))
    sub.call_raw("SUNSUBSCRIBE", "s2", "nope", expected=(
        frame(b"*", b"sunsubscribe", b"s2", 1) + frame(b"*", b"sunsubscribe", b"nope", 1)))


@pytest.mark.parametrize("resp3", [False, True])
def test_unsubscribe_with_nothing_subscribed_sends_a_nil_channel(peer, resp3):
    sub = peer(resp3)
    head = b">" if resp3 else b"*"
    for verb in ("UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"):
        sub.call_raw(verb, expected=frame(head, verb.lower().encode(), None, 0))
    sub.call_raw("UNSUBSCRIBE", "x", expected=frame(head, b"unsubscribe", b"x", 0))
    # Not in subscribed mode afterwards.
    sub.call_raw("GET", "k", expected=b"$-1\r\n" if not resp3 else b"_\r\n")


def test_unsubscribe_all_of_each_kind(peer):
    sub = peer()
    sub.send("SUBSCRIBE", "a", "b", "c")
    sub.replies(3)
    sub.send("PSUBSCRIBE", "p1", "p2")
    sub.replies(2)
    sub.send("SSUBSCRIBE", "s")
    sub.reply()
    sub.send("UNSUBSCRIBE")
    got = sub.replies(3)
    assert sorted(reply[1] for reply in got) == [b"a", b"b", b"c"]  # type: ignore[index]
    assert sorted(reply[2] for reply in got) == [2, 3, 4]  # type: ignore[index]
    assert all(reply[0] == b"unsubscribe" for reply in got)  # type: ignore[index]
    sub.send("PUNSUBSCRIBE")
    got = sub.replies(2)
    assert sorted(reply[1] for reply in got) == [b"p1", b"p2"]  # type: ignore[index]
    assert [reply[2] for reply in got] == [1, 0]  # type: ignore[index]
    # Still subscribed to a shard channel: still in subscribed mode.
    assert error_text(sub.call("GET", "k")) == CANT.format("get")
    sub.call_raw("SUNSUBSCRIBE", expected=frame(b"*", b"sunsubscribe", b"s", 0))
    sub.call_raw("GET", "k", expected=b"$-1\r\n")


def test_resp3_confirmations_are_pushes(peer):
    sub = peer(resp3=True)
    sub.call_raw("SUBSCRIBE", "a", expected=frame(b">", b"subscribe", b"a", 1))
    sub.call_raw("PSUBSCRIBE", "a*", expected=frame(b">", b"psubscribe", b"a*", 2))
    sub.call_raw("SSUBSCRIBE", "s", expected=frame(b">", b"ssubscribe", b"s", 1))
    sub.call_raw("UNSUBSCRIBE", "a", expected=frame(b">", b"unsubscribe", b"a", 1))


def test_client_reply_off_still_gets_confirmations_and_messages(peer):
    sub, publisher = peer(), peer()
    sub.send("CLIENT", "REPLY", "OFF")
    sub.call_raw("SUBSCRIBE", "r", expected=frame(b"*", b"subscribe", b"r", 1))
    assert publisher.call("PUBLISH", "r", "v") == 1
    sub.expect(frame(b"*", b"message", b"r", b"v"))


def test_arity_errors(peer):
    conn = peer()
    for args, name in ((["SUBSCRIBE"], "subscribe"), (["PSUBSCRIBE"], "psubscribe"),
                       (["SSUBSCRIBE"], "ssubscribe"), (["PUBLISH", "a"], "publish"),
                       (["SPUBLISH", "a", "b", "c"], "spublish"), (["PUBSUB"], "pubsub")):
        assert error_text(conn.call(*args)) == f"ERR wrong number of arguments for '{name}' command"


# ---------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------


def test_message_shapes_resp2(peer):
    sub, publisher = peer(), peer()
    sub.send("SUBSCRIBE", "news")
    sub.reply()
    sub.send("PSUBSCRIBE", "n*")
    sub.reply()
    sub.send("SSUBSCRIBE", "shard")
    sub.reply()
    publisher.call_raw("PUBLISH", "news", "hello", expected=b":2\r\n")
    sub.expect(frame(b"*", b"message", b"news", b"hello")
               + frame(b"*", b"pmessage", b"n*", b"news", b"hello"))
    publisher.call_raw("PUBLISH", "nope", "x", expected=b":1\r\n")
    sub.expect(frame(b"*", b"pmessage", b"n*", b"nope", b"x"))
    publisher.call_raw("SPUBLISH", "shard", "bin\r\n\x00", expected=b":1\r\n")
    sub.expect(frame(b"*", b"smessage", b"shard", b"bin\r\n\x00"))
    publisher.call_raw("PUBLISH", "other", "x", expected=b":0\r\n")
    assert sub.silent()


def test_message_shapes_resp3_and_commands_in_between(peer):
    sub, publisher = peer(resp3=True), peer()
    sub.send("SUBSCRIBE", "news")
    sub.reply()
    sub.send("PSUBSCRIBE", "n*")
    sub.reply()
    sub.send("SSUBSCRIBE", "shard")
    sub.reply()
    # A RESP3 subscriber may run anything.
    sub.call_raw("SET", "k", "v", expected=b"+OK\r\n")
    sub.call_raw("GET", "k", expected=b"$1\r\nv\r\n")
    sub.call_raw("PING", expected=b"+PONG\r\n")
    publisher.call_raw("PUBLISH", "news", "hi", expected=b":2\r\n")
    sub.expect(frame(b">", b"message", b"news", b"hi")
               + frame(b">", b"pmessage", b"n*", b"news", b"hi"))
    publisher.call_raw("SPUBLISH", "shard", "s", expected=b":1\r\n")
    sub.expect(frame(b">", b"smessage", b"shard", b"s"))


def self_first(server: ServerProcess) -> bool:
    """Whether a client's messages from its own command come before that command's reply:
    Redis 7.0 writes them as they are made; Redis 7.2+ (and Brook) postpones them until
    after the top-level command's whole reply (EXEC's, EVAL's)."""
    return server.version < (7, 2)


def test_resp3_subscriber_publishing_to_itself(server, peer):
    sub = peer(resp3=True)
    sub.call_raw("SUBSCRIBE", "a", expected=frame(b">", b"subscribe", b"a", 1))
    push = frame(b">", b"message", b"a", b"x")
    sub.call_raw("PUBLISH", "a", "x",
                 expected=push + b":1\r\n" if self_first(server) else b":1\r\n" + push)
    # Pipelined: every reply and push in order.
    sub.sock.sendall(encode_request("PING") + encode_request("PUBLISH", "a", "y") + encode_request("PING", "z"))
    push = frame(b">", b"message", b"a", b"y")
    sub.expect(b"+PONG\r\n" + (push + b":1\r\n" if self_first(server) else b":1\r\n" + push)
               + b"$1\r\nz\r\n")
    sub.call_raw("SSUBSCRIBE", "s", expected=frame(b">", b"ssubscribe", b"s", 1))
    push = frame(b">", b"smessage", b"s", b"q")
    sub.call_raw("SPUBLISH", "s", "q",
                 expected=push + b":1\r\n" if self_first(server) else b":1\r\n" + push)


def test_publish_to_self_inside_multi(server, peer):
    """Redis 7.2+: the messages follow EXEC's whole array; 7.0 put them inside it, each in
    front of its PUBLISH's reply."""
    sub = peer(resp3=True)
    sub.call_raw("SUBSCRIBE", "foo", expected=frame(b">", b"subscribe", b"foo", 1))
    sub.call_raw("MULTI", expected=b"+OK\r\n")
    for args in (("PING", "abc"), ("PUBLISH", "foo", "bar"), ("SPUBLISH", "foo", "x"),
                 ("PUBLISH", "foo", "vaz"), ("PING", "def")):
        sub.call_raw(*args, expected=b"+QUEUED\r\n")
    bar, vaz = frame(b">", b"message", b"foo", b"bar"), frame(b">", b"message", b"foo", b"vaz")
    if self_first(server):
        expected = (b"*5\r\n$3\r\nabc\r\n" + bar + b":1\r\n:0\r\n" + vaz + b":1\r\n"
                    + b"$3\r\ndef\r\n")
    else:
        expected = b"*5\r\n$3\r\nabc\r\n:1\r\n:0\r\n:1\r\n$3\r\ndef\r\n" + bar + vaz
    sub.call_raw("EXEC", expected=expected)
    assert sub.silent()


def test_resp2_subscribing_and_publishing_to_self_inside_multi(server, peer):
    """A RESP2 client subscribes inside the transaction, so its PUBLISH runs (subscribed mode
    is checked when a command is queued); the message is a RESP2 array."""
    sub = peer()
    sub.call_raw("MULTI", expected=b"+OK\r\n")
    sub.call_raw("SUBSCRIBE", "foo", expected=b"+QUEUED\r\n")
    sub.call_raw("PUBLISH", "foo", "bar", expected=b"+QUEUED\r\n")
    confirmation = frame(b"*", b"subscribe", b"foo", 1)
    message = frame(b"*", b"message", b"foo", b"bar")
    if self_first(server):
        expected = b"*2\r\n" + confirmation + message + b":1\r\n"
    else:
        expected = b"*2\r\n" + confirmation + b":1\r\n" + message
    sub.call_raw("EXEC", expected=expected)
    assert error_text(sub.call("PUBLISH", "foo", "x")) == CANT.format("publish")


def test_publish_to_self_inside_script(server, peer):
    """Redis 7.2+: after EVAL's (and FCALL's) reply; 7.0 sent them as the script ran."""
    sub = peer(resp3=True)
    sub.call_raw("SUBSCRIBE", "foo", expected=frame(b">", b"subscribe", b"foo", 1))
    script = ("redis.call('ping', 'abc') redis.call('publish', 'foo', 'bar') "
              "redis.call('publish', 'foo', 'vaz') redis.call('ping', 'def') return 'bla'")
    pushes = frame(b">", b"message", b"foo", b"bar") + frame(b">", b"message", b"foo", b"vaz")
    reply = b"$3\r\nbla\r\n"
    sub.call_raw("EVAL", script, 0,
                 expected=pushes + reply if self_first(server) else reply + pushes)
    library = ("#!lua name=selfpush\n"
               "redis.register_function('pub', function(keys, args) "
               "redis.call('publish', 'foo', args[1]) return 7 end)")
    sub.call_raw("FUNCTION", "LOAD", "REPLACE", library, expected=b"$8\r\nselfpush\r\n")
    push = frame(b">", b"message", b"foo", b"fn")
    try:
        sub.call_raw("FCALL", "pub", 0, "fn",
                     expected=push + b":7\r\n" if self_first(server) else b":7\r\n" + push)
    finally:
        sub.call_raw("FUNCTION", "DELETE", "selfpush", expected=b"+OK\r\n")


def test_unsubscribe_inside_multi_then_publish_to_self(server, peer):
    """(Un)subscribe confirmations are those commands' replies: they stay in place inside
    EXEC's array; a later PUBLISH's message follows its reply (7.2+)."""
    sub = peer(resp3=True)
    sub.send("SUBSCRIBE", "foo", "bar", "baz")
    sub.expect(frame(b">", b"subscribe", b"foo", 1) + frame(b">", b"subscribe", b"bar", 2)
               + frame(b">", b"subscribe", b"baz", 3))
    sub.call_raw("MULTI", expected=b"+OK\r\n")
    for args in (("PING", "abc"), ("UNSUBSCRIBE", "bar"), ("UNSUBSCRIBE", "baz"),
                 ("PING", "def")):
        sub.call_raw(*args, expected=b"+QUEUED\r\n")
    sub.call_raw("EXEC", expected=b"*4\r\n$3\r\nabc\r\n"
                 + frame(b">", b"unsubscribe", b"bar", 2)
                 + frame(b">", b"unsubscribe", b"baz", 1) + b"$3\r\ndef\r\n")
    push = frame(b">", b"message", b"foo", b"vaz")
    sub.call_raw("PUBLISH", "foo", "vaz",
                 expected=push + b":1\r\n" if self_first(server) else b":1\r\n" + push)


def test_publish_to_self_under_client_reply_off(server, peer):
    """The reply is silenced; the message, a push, is sent all the same."""
    sub = peer(resp3=True)
    sub.call_raw("SUBSCRIBE", "foo", expected=frame(b">", b"subscribe", b"foo", 1))
    sub.send("CLIENT", "REPLY", "OFF")
    sub.call_raw("PUBLISH", "foo", "bar", expected=frame(b">", b"message", b"foo", b"bar"))
    sub.send("CLIENT", "REPLY", "ON")
    sub.expect(b"+OK\r\n")


def test_publish_counts_every_way_a_message_arrives(peer, r):
    first, second = peer(), peer()
    first.send("SUBSCRIBE", "dd")
    first.reply()
    first.send("PSUBSCRIBE", "d*", "?d", "dd", "x*")
    first.replies(4)
    second.send("PSUBSCRIBE", "d*")
    second.reply()
    assert r.publish("dd", "v") == 5
    got = first.replies(4)
    assert got[0] == [b"message", b"dd", b"v"]
    assert sorted(got[1:]) == [[b"pmessage", p, b"dd", b"v"] for p in (b"?d", b"d*", b"dd")]
    assert second.reply() == [b"pmessage", b"d*", b"dd", b"v"]
    assert r.publish("zz", "v") == 0


def test_shard_and_plain_channels_are_separate(peer, r):
    plain, shard = peer(), peer()
    plain.send("SUBSCRIBE", "c")
    plain.reply()
    plain.send("PSUBSCRIBE", "*")
    plain.reply()
    shard.send("SSUBSCRIBE", "c")
    shard.reply()
    assert r.execute_command("SPUBLISH", "c", "s") == 1  # patterns never see shard messages
    assert shard.reply() == [b"smessage", b"c", b"s"]
    assert plain.silent()
    assert r.publish("c", "p") == 2
    assert plain.replies(2) == [[b"message", b"c", b"p"], [b"pmessage", b"*", b"c", b"p"]]
    assert shard.silent()


def test_large_and_binary_messages(peer, r):
    sub = peer()
    sub.send("SUBSCRIBE", b"\x00\xff chan")
    sub.reply()
    payload = os.urandom(300_000)
    assert r.publish(b"\x00\xff chan", payload) == 1
    sub.expect(frame(b"*", b"message", b"\x00\xff chan", payload))


def test_many_publishes_in_one_pipeline_arrive_in_order(peer, server):
    subs = [peer() for _ in range(3)]
    for sub in subs:
        sub.send("SUBSCRIBE", "seq")
        sub.reply()
    publisher = peer()
    publisher.sock.sendall(b"".join(encode_request("PUBLISH", "seq", i) for i in range(200)))
    assert publisher.replies(200) == [3] * 200
    for sub in subs:
        assert sub.replies(200) == [[b"message", b"seq", b"%d" % i] for i in range(200)]


# ---------------------------------------------------------------------------------------------
# Patterns: Redis's glob (stringmatchlen)
# ---------------------------------------------------------------------------------------------

PATTERNS = [
    b"*", b"h?llo", b"h*llo", b"h[ae]llo", b"h[^e]llo", b"h[a-b]llo", b"h[b-a]llo",
    b"h\\*llo", b"h\\?llo", b"hello\\", b"h[", b"h[a-", b"[]", b"[^]", b"a*b*c", b"*o",
    b"h[\\]]llo", b"[a-]", b"\\", b"**", b"?", b"",
]
CHANNELS = [
    b"hello", b"hallo", b"hxllo", b"hbllo", b"h*llo", b"h?llo", b"hllo", b"heeello",
    b"hello\\", b"h[", b"h", b"]", b"-", b"a", b"abc", b"aXbYc", b"ac", b"h]llo", b"\\",
    b"x", b"", b"HELLO",
]


def test_pattern_matching_is_redis_glob(peer, r):
    sub = peer()
    sub.send("PSUBSCRIBE", *PATTERNS)
    sub.replies(len(PATTERNS))
    for channel in CHANNELS:
        expected = sorted(p for p in PATTERNS if glob.matches(p, channel))
        assert r.publish(channel, b"m") == len(expected), channel
        got = sub.replies(len(expected)) if expected else []
        assert sorted(reply[1] for reply in got) == expected, channel  # type: ignore[index]
        assert all(reply[2] == channel for reply in got)  # type: ignore[index]
    assert sub.silent()


def test_pubsub_channels_with_a_pattern(peer, r):
    sub = peer()
    sub.send("SUBSCRIBE", "news.tech", "news.art", "weather", "")
    sub.replies(4)
    sub2 = peer()
    sub2.send("SSUBSCRIBE", "s.one", "s.two")
    sub2.replies(2)
    assert sorted(r.execute_command("PUBSUB", "CHANNELS")) == [
        b"", b"news.art", b"news.tech", b"weather"]
    assert sorted(r.execute_command("PUBSUB", "CHANNELS", "news.*")) == [b"news.art", b"news.tech"]
    assert sorted(r.execute_command("PUBSUB", "CHANNELS", "*")) == [
        b"news.art", b"news.tech", b"weather"]  # '*' does not match the empty name
    assert r.execute_command("PUBSUB", "CHANNELS", "[^nw]*") == []
    assert sorted(r.execute_command("PUBSUB", "SHARDCHANNELS")) == [b"s.one", b"s.two"]
    assert r.execute_command("PUBSUB", "SHARDCHANNELS", "*one") == [b"s.one"]


# ---------------------------------------------------------------------------------------------
# PUBSUB introspection
# ---------------------------------------------------------------------------------------------


def test_pubsub_numsub_numpat_shardnumsub(peer, raw):
    first, second = peer(), peer()
    first.send("SUBSCRIBE", "a", "b")
    first.replies(2)
    second.send("SUBSCRIBE", "a")
    second.reply()
    first.send("PSUBSCRIBE", "p*", "q*")
    first.replies(2)
    second.send("PSUBSCRIBE", "p*")
    second.reply()
    second.send("SSUBSCRIBE", "s")
    second.reply()
    assert raw.request(encode_request("PUBSUB", "NUMSUB", "a", "b", "zz")) == (
        b"*6\r\n$1\r\na\r\n:2\r\n$1\r\nb\r\n:1\r\n$2\r\nzz\r\n:0\r\n")
    assert raw.request(encode_request("PUBSUB", "NUMSUB")) == b"*0\r\n"
    assert raw.request(encode_request("PUBSUB", "NUMPAT")) == b":2\r\n"  # distinct patterns
    assert raw.request(encode_request("PUBSUB", "SHARDNUMSUB", "s", "a")) == (
        b"*4\r\n$1\r\ns\r\n:1\r\n$1\r\na\r\n:0\r\n")
    assert raw.request(encode_request("PUBSUB", "SHARDNUMSUB")) == b"*0\r\n"


def test_pubsub_errors_and_help(server, raw):
    assert raw.request(encode_request("PUBSUB", "FOO")) == (
        b"-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n")
    assert raw.request(encode_request("PUBSUB", "CHANNELS", "a", "b")) == (
        b"-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. "
        b"Try PUBSUB HELP.\r\n")
    assert raw.request(encode_request("PUBSUB", "shardchannels", "a", "b")) == (
        b"-ERR unknown subcommand or wrong number of arguments for 'shardchannels'. "
        b"Try PUBSUB HELP.\r\n")
    assert raw.request(encode_request("PUBSUB", "NUMPAT", "x")) == (
        b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n")
    assert raw.request(encode_request("PUBSUB", "HELP", "x")) == (
        b"-ERR wrong number of arguments for 'pubsub|help' command\r\n")
    help_text = raw.call("PUBSUB", "HELP")
    assert help_text[0] == b"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_text[-2:] == [b"HELP", help_footer(server)]
    assert len(help_text) == 14


# ---------------------------------------------------------------------------------------------
# Subscribed mode (RESP2)
# ---------------------------------------------------------------------------------------------


def test_resp2_subscribed_mode_allows_only_some_commands(peer):
    sub = peer()
    sub.send("SUBSCRIBE", "a")
    sub.reply()
    for args, name in ((["GET", "k"], "get"), (["CLIENT", "ID"], "client|id"),
                       (["config", "get", "x"], "config|get"), (["MULTI"], "multi"),
                       (["HELLO", "3"], "hello"), (["PUBLISH", "a", "b"], "publish"),
                       (["PUBSUB", "NUMPAT"], "pubsub|numpat"), (["CLIENT", "REPLY", "OFF"],
                                                                 "client|reply")):
        sub.call_raw(*args, expected=b"-" + CANT.format(name).encode() + b"\r\n")
    # Unknown commands and wrong arities are reported first, as usual.
    assert error_text(sub.call("FOO")) == "ERR unknown command 'FOO', with args beginning with: "
    assert error_text(sub.call("GET")) == "ERR wrong number of arguments for 'get' command"
    # Allowed: the (un)subscribe family and PING.
    sub.call_raw("PSUBSCRIBE", "x", expected=frame(b"*", b"psubscribe", b"x", 2))
    sub.call_raw("SSUBSCRIBE", "y", expected=frame(b"*", b"ssubscribe", b"y", 1))
    sub.call_raw("PING", expected=b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")


def test_rejected_commands_count_as_errors(peer, r):
    errors = r.info("errorstats").get("errorstat_ERR", {}).get("count", 0)
    sub = peer()
    sub.send("SUBSCRIBE", "a")
    sub.reply()
    sub.call("GET", "k")
    stats = r.info("commandstats")["cmdstat_get"]
    assert stats["rejected_calls"] == 1 and stats["calls"] == 0
    assert r.info("errorstats")["errorstat_ERR"]["count"] == errors + 1


def test_ping_in_subscribed_mode(peer):
    sub = peer()
    sub.call_raw("PING", expected=b"+PONG\r\n")
    sub.send("SUBSCRIBE", "a")
    sub.reply()
    sub.call_raw("PING", expected=b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
    sub.call_raw("PING", "hi", expected=b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n")
    sub.call_raw("ping", "a", "b", expected=b"-ERR wrong number of arguments for 'ping' command\r\n")
    sub.sock.sendall(b"PING\r\n")  # inline, too
    sub.expect(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
    sub.call_raw("UNSUBSCRIBE", expected=frame(b"*", b"unsubscribe", b"a", 0))
    sub.call_raw("PING", expected=b"+PONG\r\n")


def test_hello_switches_a_subscriber_between_modes(peer, r):
    sub = peer(resp3=True)
    sub.call_raw("SUBSCRIBE", "a", expected=frame(b">", b"subscribe", b"a", 1))
    sub.call_raw("PING", expected=b"+PONG\r\n")
    assert sub.call("HELLO", "2")[0] == b"server"  # type: ignore[index]
    assert error_text(sub.call("GET", "k")) == CANT.format("get")
    sub.call_raw("PING", expected=b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
    assert r.publish("a", "m") == 1
    sub.expect(frame(b"*", b"message", b"a", b"m"))


def test_hello_3_inside_exec_turns_messages_into_pushes(peer, r):
    conn = peer()
    conn.call_raw("MULTI", expected=b"+OK\r\n")
    conn.call_raw("SUBSCRIBE", "a", expected=b"+QUEUED\r\n")
    conn.call_raw("HELLO", "3", expected=b"+QUEUED\r\n")
    reply = conn.call("EXEC")
    assert reply[0] == [b"subscribe", b"a", 1]  # type: ignore[index]
    conn.call_raw("GET", "k", expected=b"_\r\n")  # RESP3: anything goes
    assert r.publish("a", "m") == 1
    conn.expect(frame(b">", b"message", b"a", b"m"))


def test_subscribe_inside_multi(server, peer, r):
    conn = peer()
    conn.call_raw("MULTI", expected=b"+OK\r\n")
    for args in (["SUBSCRIBE", "z", "y"], ["SSUBSCRIBE", "s"], ["PUBLISH", "z", "hey"],
                 ["PING"]):
        conn.call_raw(*args, expected=b"+QUEUED\r\n")
    message = frame(b"*", b"message", b"z", b"hey")  # to itself: after EXEC's array (7.2+)
    conn.call_raw("EXEC", expected=(
        b"*4\r\n" + frame(b"*", b"subscribe", b"z", 1) + frame(b"*", b"subscribe", b"y", 2)
        + b"-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n"
        + (message if self_first(server) else b"") + b":1\r\n"
        + b"*2\r\n$4\r\npong\r\n$0\r\n\r\n" + (b"" if self_first(server) else message)))
    assert error_text(conn.call("GET", "k")) == CANT.format("get")
    assert r.publish("y", "v") == 1
    conn.expect(frame(b"*", b"message", b"y", b"v"))


def test_reset_leaves_subscribed_mode(peer, r):
    sub = peer(resp3=True)
    sub.send("SUBSCRIBE", "a")
    sub.reply()
    sub.send("PSUBSCRIBE", "a*")
    sub.reply()
    sub.send("SSUBSCRIBE", "s")
    sub.reply()
    sub.call_raw("RESET", expected=b"+RESET\r\n")  # no unsubscribe notifications
    assert numsub(r, "a") == [0]
    assert r.execute_command("PUBSUB", "NUMPAT") == 0
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "s") == [b"s", 0]
    sub.call_raw("GET", "k", expected=b"$-1\r\n")  # back to RESP2, not subscribed
    assert r.publish("a", "x") == 0
    assert sub.silent()
    # RESET is allowed in RESP2 subscribed mode too.
    sub.send("SUBSCRIBE", "b")
    sub.reply()
    sub.call_raw("RESET", expected=b"+RESET\r\n")
    sub.call_raw("PING", expected=b"+PONG\r\n")


def test_quit_in_subscribed_mode(peer, r):
    sub = peer()
    sub.send("SUBSCRIBE", "a")
    sub.reply()
    sub.send("QUIT")
    assert sub.reply() == b"OK"
    assert sub.closed()
    wait_for(lambda: numsub(r, "a") == [0])


# ---------------------------------------------------------------------------------------------
# Cleanup, CLIENT LIST, INFO, idle timeout
# ---------------------------------------------------------------------------------------------


def test_disconnected_subscribers_leave_no_trace(peer, r):
    subs = [peer(resp3=bool(i % 2)) for i in range(20)]
    for index, sub in enumerate(subs):
        sub.send("SUBSCRIBE", "shared", f"own{index}")
        sub.replies(2)
        sub.send("PSUBSCRIBE", "sh*", f"p{index}*")
        sub.replies(2)
        sub.send("SSUBSCRIBE", "shard")
        sub.reply()
    assert numsub(r, "shared", "own3") == [20, 1]
    assert r.execute_command("PUBSUB", "NUMPAT") == 21
    assert r.publish("shared", "x") == 40
    stats = r.info("stats")
    assert (stats["pubsub_channels"], stats["pubsub_patterns"], stats["pubsubshard_channels"]) \
        == (21, 21, 1)
    for sub in subs:
        sub.close()
    wait_for(lambda: r.execute_command("PUBSUB", "NUMPAT") == 0)
    wait_for(lambda: numsub(r, "shared", "own3") == [0, 0])
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "shard") == [b"shard", 0]
    assert r.execute_command("PUBSUB", "CHANNELS") == []
    stats = r.info("stats")
    assert (stats["pubsub_channels"], stats["pubsub_patterns"], stats["pubsubshard_channels"]) \
        == (0, 0, 0)
    assert r.publish("shared", "x") == 0


def test_client_list_and_kill_by_type(peer, r):
    sub = peer()
    sub.send("SUBSCRIBE", "a", "b")
    sub.replies(2)
    sub.send("PSUBSCRIBE", "p")
    sub.reply()
    sub.send("SSUBSCRIBE", "s")
    sub.reply()
    lines = [line for line in r.execute_command("CLIENT", "LIST").splitlines() if line]
    fields = [dict(item.split(b"=", 1) for item in line.split(b" ")) for line in lines]
    mine = next(f for f in fields if f[b"sub"] == b"2")
    assert (mine[b"psub"], mine[b"ssub"], mine[b"flags"]) == (b"1", b"1", b"P")
    assert mine[b"cmd"] == b"ssubscribe"
    listed = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").splitlines()
    assert [line.split(b" ", 1)[0] for line in listed if line] == [b"id=" + mine[b"id"]]
    assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 1
    assert sub.closed()
    wait_for(lambda: numsub(r, "a") == [0])


def test_rejected_command_is_the_last_command(peer, r):
    sub = peer()
    sub.send("SUBSCRIBE", "a")
    sub.reply()
    sub.call("MULTI")
    lines = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").splitlines()
    assert b" cmd=multi " in lines[0]


@pytest.mark.min_redis(7, 4)
def test_info_pubsub_clients(peer, r):
    assert r.info("clients")["pubsub_clients"] == 0
    first, second = peer(), peer(resp3=True)
    first.send("SUBSCRIBE", "a")
    first.reply()
    second.send("PSUBSCRIBE", "b*")
    second.reply()
    assert r.info("clients")["pubsub_clients"] == 2
    first.call("UNSUBSCRIBE")
    assert r.info("clients")["pubsub_clients"] == 1


def test_idle_timeout_spares_subscribers(peer, server, r):
    sub, idle = peer(), peer()
    sub.send("SUBSCRIBE", "a")
    sub.reply()
    idle.call("PING")
    r.config_set("timeout", "1")
    try:
        assert idle.closed(timeout=5)
        assert not sub.closed(timeout=1.5)
        sub.call_raw("PING", expected=b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
    finally:
        r.config_set("timeout", "0")


# ---------------------------------------------------------------------------------------------
# Slow subscribers: client-output-buffer-limit pubsub
# ---------------------------------------------------------------------------------------------


def _never_reading(server: ServerProcess, channel: str) -> socket.socket:
    """A subscriber that never reads (a small receive buffer, so the server's fills fast)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((server.host, server.port))
    sock.sendall(encode_request("SUBSCRIBE", channel))
    return sock


def _server_rss(server: ServerProcess) -> int:
    with open(f"/proc/{server.process.pid}/statm", "rb") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_slow_subscriber_is_disconnected_at_the_hard_limit(peer, server, pubsub_limit):
    r = pubsub_limit
    r.config_set("client-output-buffer-limit", "pubsub 2mb 1mb 60")
    stuck = _never_reading(server, "firehose")
    healthy = peer()
    healthy.send("SUBSCRIBE", "firehose")
    healthy.reply()
    wait_for(lambda: numsub(r, "firehose") == [2])
    rss_before = _server_rss(server)
    payload = b"x" * 64 * 1024
    published = 0
    try:
        while published < 2000:
            receivers = r.publish("firehose", payload)
            published += 1
            assert healthy.reply() == [b"message", b"firehose", payload]
            if receivers == 1:
                break
        else:
            raise AssertionError("the slow subscriber was never disconnected")
        # Some 2 MB (plus what the kernel buffers) got through before the limit hit.
        assert 16 < published < 200
        wait_for(lambda: numsub(r, "firehose") == [1])
        pubsub_clients = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").splitlines()
        assert len([line for line in pubsub_clients if line]) == 1
        # The healthy subscriber and everybody else carry on.
        assert r.publish("firehose", "after") == 1
        assert healthy.reply() == [b"message", b"firehose", b"after"]
        # The dropped output does not stay in the server.
        assert _server_rss(server) < rss_before + 8 * 1024 * 1024
        assert "scheduled to be closed ASAP for overcoming of output buffer limits." in server.log()
    finally:
        stuck.close()


@pytest.mark.min_redis(7, 4)
def test_output_buffer_disconnections_are_counted(server, pubsub_limit):
    r = pubsub_limit
    before = r.info("stats")["client_output_buffer_limit_disconnections"]
    r.config_set("client-output-buffer-limit", "pubsub 256kb 0 0")
    stuck = _never_reading(server, "c")
    try:
        wait_for(lambda: numsub(r, "c") == [1])
        for _ in range(500):
            if r.publish("c", b"y" * 32 * 1024) == 0:
                break
        wait_for(lambda: r.info("stats")["client_output_buffer_limit_disconnections"]
                 == before + 1)
    finally:
        stuck.close()


def test_slow_subscriber_over_the_soft_limit_for_too_long(server, pubsub_limit):
    r = pubsub_limit
    r.config_set("client-output-buffer-limit", "pubsub 0 256kb 1")
    stuck = _never_reading(server, "soft")
    try:
        wait_for(lambda: numsub(r, "soft") == [1])
        # Over the soft limit: allowed for one (whole) second.
        sent = 0
        while sent < 8 * 1024 * 1024:
            r.publish("soft", b"z" * 64 * 1024)
            sent += 64 * 1024
            if _output_of(r, "soft") >= 256 * 1024:
                break
        assert numsub(r, "soft") == [1]
        time.sleep(2.2)
        r.publish("soft", "one more")  # Redis checks when output is added
        wait_for(lambda: numsub(r, "soft") == [0])
    finally:
        stuck.close()


def _output_of(r: redis.Redis, channel: str) -> int:
    """omem of the (only) pubsub client; 0 once it is gone."""
    for line in r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").splitlines():
        fields = dict(item.split(b"=", 1) for item in line.split(b" ") if b"=" in item)
        return int(fields[b"omem"])
    return 0


def test_limits_follow_config_set(peer, server, pubsub_limit):
    """A subscriber that was subscribed before the limit changed gets the new one."""
    r = pubsub_limit
    stuck = _never_reading(server, "late")
    try:
        wait_for(lambda: numsub(r, "late") == [1])
        r.config_set("client-output-buffer-limit", "pubsub 512kb 0 0")
        for _ in range(400):
            if r.publish("late", b"w" * 32 * 1024) == 0:
                break
        wait_for(lambda: numsub(r, "late") == [0])
    finally:
        stuck.close()
