"""Server-assisted client-side caching: CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO, and
the invalidation messages (to the client itself in RESP3, redirected to another client as a
push or as a Pub/Sub message on ``__redis__:invalidate``).

Every test using ``server`` runs against Brook and real Redis on raw sockets, so the bytes on
the wire, and their order around the replies, must be identical. Redis 7.2 moved a client's
own invalidations after its command's reply (before, they came first): those tests need 7.2.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import hiredis
import pytest
import redis
from redis._parsers import _RESP3Parser
from redis.cache import CacheConfig

from tests.conftest import ServerProcess
from tests.support.pubsub import Peer, bulk

CHANNEL = b"__redis__:invalidate"
OK = b"+OK\r\n"
SWITCH = "tracking for this client, and then re-enabling it with a different mode."


def keys_array(*keys: bytes) -> bytes:
    return b"*%d\r\n" % len(keys) + b"".join(bulk(key) for key in keys)


def invalidate(*keys: bytes) -> bytes:
    """The RESP3 push for ``keys``."""
    return b">2\r\n$10\r\ninvalidate\r\n" + keys_array(*keys)


INVALIDATE_ALL = b">2\r\n$10\r\ninvalidate\r\n_\r\n"  # a flush, to a RESP3 client


def message(payload: bytes) -> bytes:
    """What a RESP2 redirect target subscribed to the channel gets."""
    return b"*3\r\n$7\r\nmessage\r\n" + bulk(CHANNEL) + payload


@pytest.fixture
def peers(server: ServerProcess) -> Iterator[list[Peer]]:
    """Raw clients of the server under test, closed after the test (tracking ends with them)."""
    opened: list[Peer] = []

    def peer(resp3: bool = False) -> Peer:
        opened.append(Peer(server, resp3))
        return opened[-1]

    yield peer  # type: ignore[misc]
    for each in opened:
        each.close()
    client = server.client()
    client.config_set("tracking-table-max-keys", 1000000)
    client.close()


def client_id(peer: Peer) -> int:
    value = peer.call("CLIENT", "ID")
    assert isinstance(value, int)
    return value


def error(peer: Peer, *args: bytes | str | int) -> str:
    reply = peer.call(*args)
    assert isinstance(reply, hiredis.ReplyError), reply
    return str(reply)


def info_field(peer: Peer, field: str) -> str:
    text = peer.call("INFO", "everything")
    assert isinstance(text, bytes)
    for line in text.decode().splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    raise AssertionError(f"no {field} in INFO")


# -- options and their errors ---------------------------------------------------------------


def test_tracking_option_errors(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    other = client_id(peers())
    assert error(c, "CLIENT", "TRACKING", "maybe") == "ERR syntax error"
    assert error(c, "CLIENT", "TRACKING", "on", "what") == "ERR syntax error"
    assert error(c, "CLIENT", "TRACKING", "on", "REDIRECT") == "ERR syntax error"
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX") == "ERR syntax error"
    assert error(c, "CLIENT", "TRACKING", "on", "REDIRECT", "x") == (
        "ERR value is not an integer or out of range")
    assert error(c, "CLIENT", "TRACKING", "on", "REDIRECT", 999999) == (
        "ERR The client ID you want redirect to does not exist")
    assert error(c, "CLIENT", "TRACKING", "off", "REDIRECT", 0) == (
        "ERR The client ID you want redirect to does not exist")
    assert error(c, "CLIENT", "TRACKING", "on", "REDIRECT", other, "REDIRECT", other) == (
        "ERR A client can only redirect to a single other client")
    assert error(c, "CLIENT", "TRACKING", "on", "PREFIX", "a") == (
        "ERR PREFIX option requires BCAST mode to be enabled")
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "OPTIN") == (
        "ERR OPTIN and OPTOUT are not compatible with BCAST")
    assert error(c, "CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT") == (
        "ERR You can't specify both OPTIN mode and OPTOUT mode")
    # Options of OFF are parsed (and REDIRECT's target checked), then ignored.
    assert c.call("CLIENT", "TRACKING", "off", "BCAST", "OPTIN", "PREFIX", "x") == b"OK"
    assert c.call("CLIENT", "TRACKING", "on", "OPTIN") == b"OK"
    assert error(c, "CLIENT", "TRACKING", "on", "OPTOUT") == (
        "ERR You can't switch OPTIN/OPTOUT mode before disabling " + SWITCH)
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST") == (
        "ERR You can't switch BCAST mode on/off before disabling " + SWITCH)
    assert c.call("CLIENT", "TRACKING", "on", "OPTIN", "NOLOOP") == b"OK"
    assert c.call("CLIENT", "TRACKING", "off") == b"OK"
    assert c.call("CLIENT", "TRACKING", "on", "BCAST") == b"OK"
    assert error(c, "CLIENT", "TRACKING", "on") == (
        "ERR You can't switch BCAST mode on/off before disabling " + SWITCH)
    # RESP2 without REDIRECT is allowed, as Redis allows it (it just hears nothing).
    assert c.call("CLIENT", "TRACKING", "off") == b"OK"
    assert c.call("CLIENT", "TRACKING", "on") == b"OK"


def test_prefix_overlaps(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    overlap = "Prefixes for a single client must not overlap."
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO") == (
        f"ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. {overlap}")
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO", "PREFIX", "FOOBAR") == (
        f"ERR Prefix 'FOO' overlaps with another provided prefix 'FOOBAR'. {overlap}")
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR") == b"OK"
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FO") == (
        f"ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. {overlap}")
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "BARB") == (
        f"ERR Prefix 'BARB' overlaps with an existing prefix 'BAR'. {overlap}")
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO") == (
        f"ERR Prefix 'FOO' overlaps with an existing prefix 'FOO'. {overlap}")
    # Adding a prefix that overlaps none works; the set is reported sorted.
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "AB") == b"OK"
    assert c.call("CLIENT", "TRACKINGINFO") == [
        b"flags", [b"on", b"bcast"], b"redirect", 0, b"prefixes", [b"AB", b"BAR", b"FOO"]]


def test_caching_errors(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    not_tracking = ("ERR CLIENT CACHING can be called only when the client is in tracking mode "
                    "with OPTIN or OPTOUT mode enabled")
    assert error(c, "CLIENT", "CACHING", "yes") == not_tracking
    assert error(c, "CLIENT", "CACHING") == (
        "ERR wrong number of arguments for 'client|caching' command")
    c.call("CLIENT", "TRACKING", "on")
    assert error(c, "CLIENT", "CACHING", "yes") == (
        "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
    assert error(c, "CLIENT", "CACHING", "no") == (
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
    assert error(c, "CLIENT", "CACHING", "maybe") == "ERR syntax error"


def test_getredir_and_trackinginfo(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    target = peers()
    target_id = client_id(target)
    assert c.call("CLIENT", "GETREDIR") == -1
    assert c.call("CLIENT", "TRACKINGINFO") == [
        b"flags", [b"off"], b"redirect", -1, b"prefixes", []]
    c.call("CLIENT", "TRACKING", "on")
    assert c.call("CLIENT", "GETREDIR") == 0
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id, "OPTIN", "NOLOOP")
    assert c.call("CLIENT", "GETREDIR") == target_id
    assert c.call("CLIENT", "TRACKINGINFO") == [
        b"flags", [b"on", b"optin", b"noloop"], b"redirect", target_id, b"prefixes", []]
    c.call("CLIENT", "CACHING", "yes")
    assert c.call("CLIENT", "TRACKINGINFO") == [
        b"flags", [b"on", b"optin", b"caching-yes", b"noloop"], b"redirect", target_id,
        b"prefixes", []]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTOUT")
    c.call("CLIENT", "CACHING", "no")
    assert c.call("CLIENT", "TRACKINGINFO")[1] == [b"on", b"optout", b"caching-no"]  # type: ignore[index]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST")
    assert c.call("CLIENT", "TRACKINGINFO") == [
        b"flags", [b"on", b"bcast"], b"redirect", 0, b"prefixes", [b""]]
    assert c.call("CLIENT", "TRACKING", "off") == b"OK"
    assert c.call("CLIENT", "GETREDIR") == -1


def test_trackinginfo_resp3_shape(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "NOLOOP")
    c.call_raw("CLIENT", "TRACKINGINFO", expected=(
        b"%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n"
        b"$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*1\r\n$1\r\na\r\n"))


def test_client_list_flags_and_redir(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    target = peers()
    target_id = client_id(target)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id)
    line = c.call("CLIENT", "INFO")
    assert b" flags=t " in line and b" redir=%d " % target_id in line  # type: ignore[operator]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST")
    assert b" flags=tB " in c.call("CLIENT", "INFO")  # type: ignore[operator]
    c.call("CLIENT", "TRACKING", "off")
    line = c.call("CLIENT", "INFO")
    assert b" flags=N " in line and b" redir=-1 " in line  # type: ignore[operator]


# -- invalidations ----------------------------------------------------------------------------


def test_resp3_invalidation_once_per_read(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    writer.call("MSET", "a", "1", "b", "1")
    c.call("CLIENT", "TRACKING", "on")
    c.call_raw("MGET", "a", "b", expected=b"*2\r\n$1\r\n1\r\n$1\r\n1\r\n")
    writer.call("INCR", "a")
    c.expect(invalidate(b"a"))
    writer.call("INCR", "a")  # not read again: nothing
    writer.call("DEL", "b")
    c.expect(invalidate(b"b"))
    assert c.silent()
    c.call_raw("GET", "a", expected=b"$1\r\n3\r\n")
    writer.call("EXPIRE", "a", 100)  # a new TTL is a change
    c.expect(invalidate(b"a"))
    c.call("GET", "a")
    writer.call("PERSIST", "a")
    c.expect(invalidate(b"a"))


def test_writes_of_every_kind_invalidate(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    writer.call("HSET", "h", "f", "1")
    writer.call("RPUSH", "l", "x")
    writer.call("ZADD", "z", "1", "m")
    writer.call("SADD", "s", "m")
    writer.call("XADD", "x", "1-1", "f", "v")
    c.call("CLIENT", "TRACKING", "on")
    for read in (("HGET", "h", "f"), ("LRANGE", "l", 0, -1), ("ZSCORE", "z", "m"),
                 ("SMEMBERS", "s"), ("XRANGE", "x", "-", "+"), ("GET", "missing")):
        c.call(*read)
    writer.call("HDEL", "h", "f")
    c.expect(invalidate(b"h"))
    writer.call("LPOP", "l")
    c.expect(invalidate(b"l"))
    writer.call("ZINCRBY", "z", "2", "m")
    c.expect(invalidate(b"z"))
    writer.call("SMOVE", "s", "s2", "m")
    c.expect(invalidate(b"s"))
    writer.call("XTRIM", "x", "MAXLEN", 0)
    c.expect(invalidate(b"x"))
    writer.call("SET", "missing", "now")
    c.expect(invalidate(b"missing"))
    assert c.silent()


@pytest.mark.min_redis(7, 2)
def test_own_write_invalidation_follows_the_reply(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on")
    c.call("HSET", "h", "f", "1")
    c.call("HGET", "h", "f")
    c.call_raw("HDEL", "h", "f", expected=b":1\r\n" + invalidate(b"h"))
    # In a transaction, after EXEC's whole reply.
    c.call("MSET", "a", "1", "b", "2")
    c.call("GET", "a")
    c.call("MULTI")
    c.call("INCR", "a")
    c.call("GET", "b")
    c.call_raw("EXEC", expected=b"*2\r\n:2\r\n$1\r\n2\r\n" + invalidate(b"a"))
    # A script's write: after the script's reply.
    c.call("GET", "b")
    c.call_raw("EVAL", "redis.call('set', KEYS[1], 'x') return 1", 1, "b",
               expected=b":1\r\n" + invalidate(b"b"))


def test_noloop(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on", "NOLOOP")
    c.call("MSET", "a", "1", "b", "1")
    c.call("MGET", "a", "b")
    c.call_raw("SET", "a", "2", expected=OK)  # its own write: not told, and forgotten
    writer.call("SET", "a", "3")
    writer.call("SET", "b", "3")
    c.expect(invalidate(b"b"))
    assert c.silent()
    # A script's write counts as the caller's own.
    c.call("GET", "a")
    c.call_raw("EVAL", "return redis.call('set', KEYS[1], '2')", 1, "a", expected=OK)
    writer.call("SET", "a", "4")
    assert c.silent()


def test_redirect_to_resp2_subscriber(peers) -> None:  # type: ignore[no-untyped-def]
    target = peers()
    target_id = client_id(target)
    target.call("SUBSCRIBE", CHANNEL)
    c = peers()
    writer = peers()
    assert c.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id) == b"OK"
    writer.call("MSET", "a", "1", "b", "1")
    c.call("GET", "a")
    writer.call("INCR", "b")  # not read: nothing
    c.call("INCR", "a")  # its own write goes to the target too
    target.expect(message(keys_array(b"a")))
    assert target.silent()
    c.call("GET", "a")
    writer.call("FLUSHALL")
    target.expect(message(b"$-1\r\n"))
    assert c.silent()


def test_redirect_to_resp2_client_not_subscribed_hears_nothing(peers) -> None:  # type: ignore[no-untyped-def]
    target = peers()
    c = peers()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", client_id(target))
    c.call("GET", "a")
    c.call("SET", "a", "1")
    target.call_raw("PING", expected=b"+PONG\r\n")


def test_redirect_to_resp3_client(peers) -> None:  # type: ignore[no-untyped-def]
    target = peers(resp3=True)
    target_id = client_id(target)
    resp2 = peers()
    resp3 = peers(resp3=True)
    writer = peers()
    resp2.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id)
    resp3.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id)
    writer.call("MSET", "a", "1", "b", "1")
    resp2.call("GET", "a")
    resp3.call("GET", "b")
    writer.call("INCR", "a")
    writer.call("INCR", "b")
    target.expect(invalidate(b"a") + invalidate(b"b"))
    # A flush: the null of each tracking client's own protocol.
    resp2.call("GET", "a")
    writer.call("FLUSHDB")
    first, second = target.reply(), target.reply()
    assert [first, second] == [[b"invalidate", None], [b"invalidate", None]]
    assert resp3.silent() and resp2.silent()


def test_switching_to_resp3_after_enabling(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    writer = peers()
    c.call("CLIENT", "TRACKING", "on")
    c.call("GET", "a")
    c.call("HELLO", 3)
    writer.call("SET", "a", "1")
    c.expect(invalidate(b"a"))


def test_broken_redirect(peers) -> None:  # type: ignore[no-untyped-def]
    target = peers()
    target_id = client_id(target)
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id)
    writer.call("SET", "a", "1")
    c.call("GET", "a")
    target.call("QUIT")
    assert target.closed()
    time.sleep(0.1)
    writer.call("SET", "a", "2")
    c.expect(b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % target_id)
    assert c.call("CLIENT", "TRACKINGINFO") == {
        b"flags": [b"on", b"broken_redirect"], b"redirect": target_id, b"prefixes": []}
    assert b" flags=tR " in c.call("CLIENT", "INFO")  # type: ignore[operator]


def test_broken_redirect_under_client_reply_off(peers) -> None:  # type: ignore[no-untyped-def]
    target = peers()
    target_id = client_id(target)
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id)
    c.call("GET", "a")
    c.send("CLIENT", "REPLY", "OFF")
    target.call("QUIT")
    assert target.closed()
    time.sleep(0.1)
    writer.call("SET", "a", "2")
    c.expect(b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % target_id)
    c.call_raw("CLIENT", "REPLY", "ON", expected=OK)


def test_bcast_prefixes(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    everything = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "PREFIX", "b:")
    everything.call("CLIENT", "TRACKING", "on", "BCAST")
    writer.call("MSET", "a:2", "1", "a:1", "1", "b:1", "1", "c:1", "1", "a:2", "2")
    c.expect(invalidate(b"a:1", b"a:2"))  # once each, in key order
    c.expect(invalidate(b"b:1"))
    assert c.silent()
    got = everything.reply()
    assert got[0] == b"invalidate"  # type: ignore[index]
    assert info_field(writer, "tracking_total_prefixes") == "3"
    assert info_field(writer, "tracking_clients") == "2"


def test_bcast_noloop_and_expiry(peers) -> None:  # type: ignore[no-untyped-def]
    target = peers()
    target_id = client_id(target)
    target.call("SUBSCRIBE", CHANNEL)
    c = peers()
    writer = peers()
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", target_id, "NOLOOP")
    c.call("SET", "mine", "1")
    writer.call("SET", "theirs", "1")
    target.expect(message(keys_array(b"theirs")))
    # Its own key expiring is not its own change.
    c.call("SET", "mykey", "v", "PX", 1)
    c.call("SET", "mykeyotherkey", "v")
    target.expect(message(keys_array(b"mykey")))
    assert target.silent()


def test_bcast_noloop_hides_no_script_write(peers) -> None:  # type: ignore[no-untyped-def]
    """In BCAST mode a script's writes are the script's, not its caller's (Redis's executing
    client): NOLOOP does not hide them; a transaction's are the client's own."""
    c = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on", "BCAST", "NOLOOP")
    c.call_raw("EVAL", "redis.call('set', KEYS[1], '1') return 1", 1, "by-script",
               expected=b":1\r\n")
    c.expect(invalidate(b"by-script"))
    c.call("MULTI")
    c.call("SET", "by-transaction", "1")
    c.call_raw("EXEC", expected=b"*1\r\n+OK\r\n")
    assert c.silent()


def test_after_switching_to_bcast_older_keys_are_not_sent(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on")
    c.call("GET", "key1")
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "other")
    writer.call("INCR", "key1")
    assert c.silent()


def test_optin_and_optout(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    writer.call("MSET", "a", "1", "b", "1", "c", "1")
    c.call("CLIENT", "TRACKING", "on", "OPTIN")
    c.call("GET", "a")  # not cached
    c.call("CLIENT", "CACHING", "yes")
    c.call("GET", "b")  # cached
    c.call("GET", "c")  # CACHING applied to one command only
    writer.call("MSET", "a", "2", "b", "2", "c", "2")
    c.expect(invalidate(b"b"))
    assert c.silent()
    # CACHING yes before MULTI covers the whole transaction.
    c.call("CLIENT", "CACHING", "yes")
    c.call("MULTI")
    c.call("GET", "a")
    c.call("GET", "c")
    c.call("EXEC")
    writer.call("MSET", "a", "3", "c", "3")
    c.expect(invalidate(b"a") + invalidate(b"c"))
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTOUT")
    c.call("GET", "a")  # cached
    c.call("CLIENT", "CACHING", "no")
    c.call("GET", "b")  # not cached
    writer.call("MSET", "a", "4", "b", "4")
    c.expect(invalidate(b"a"))
    assert c.silent()


@pytest.mark.min_redis(7, 2)
def test_expiry_active_and_lazy(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on")
    c.call("SET", "soon", "v", "PX", 50)
    c.call("GET", "soon")
    c.expect(invalidate(b"soon"))  # the active cycle
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        c.call("MSET", "x", "1", "y", "2")
        c.call("PEXPIRE", "y", 50)
        c.call("GET", "y")
        time.sleep(0.1)
        # Lazily expired by its own read: after the whole reply.
        c.call_raw("MGET", "x", "y", expected=b"*2\r\n$1\r\n1\r\n_\r\n" + invalidate(b"y"))
    finally:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)


def test_eviction_invalidation_precedes_the_next_reply(peers) -> None:  # type: ignore[no-untyped-def]
    """A key evicted before a command runs is invalidated before that command's reply."""
    c = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on")
    used = int(info_field(c, "used_memory")) - int(info_field(c, "mem_not_counted_for_evict"))
    c.call("CONFIG", "SET", "maxmemory", used + 100 * 1024)
    c.call("CONFIG", "SET", "maxmemory-policy", "volatile-random")
    try:
        c.call("SETEX", "volatile-key", 10000, "x")
        c.call("GET", "volatile-key")
        c.send("SETBIT", "big-key", 1600000, 0)  # 200 KB over the limit
        c.send("GETBIT", "big-key", 0)
        c.expect(b":0\r\n" + invalidate(b"volatile-key") + b":0\r\n")
    finally:
        c.call("CONFIG", "SET", "maxmemory", 0)


def test_flush_invalidates_everything(peers, server: ServerProcess) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on")
    c.call("GET", "a")
    writer.call("FLUSHALL")
    c.expect(INVALIDATE_ALL)
    writer.call("FLUSHDB", "ASYNC")  # every tracking client, whatever it read
    c.expect(INVALIDATE_ALL)
    writer.call("SET", "a", "1")  # the table was emptied
    assert c.silent()
    assert info_field(writer, "tracking_total_keys") == "0"


@pytest.mark.min_redis(7, 2)
def test_own_flush_in_transaction_follows_exec(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on")
    c.call("MULTI")
    c.call("FLUSHDB")
    c.call_raw("EXEC", expected=b"*1\r\n+OK\r\n" + INVALIDATE_ALL)
    c.call_raw("FLUSHALL", "ASYNC", expected=OK + INVALIDATE_ALL)


@pytest.mark.min_redis(7, 2)
def test_debug_reload_invalidates_everything(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    other = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on")
    other.call("CLIENT", "TRACKING", "on")
    c.call_raw("DEBUG", "RELOAD", expected=OK + INVALIDATE_ALL)
    other.expect(INVALIDATE_ALL)


@pytest.mark.min_redis(8, 0)
def test_own_sync_flush_reply_follows_invalidation(peers) -> None:  # type: ignore[no-untyped-def]
    """Redis 8.0 frees a synchronous FLUSHALL in the background and replies when done."""
    c = peers(resp3=True)
    c.call("CLIENT", "TRACKING", "on")
    c.call_raw("FLUSHALL", expected=INVALIDATE_ALL + OK)
    c.call_raw("FLUSHDB", "SYNC", expected=INVALIDATE_ALL + OK)


def test_scripts_track_what_their_commands_read(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on")
    writer.call("MSET", "k1", "1", "k2", "1", "k3", "1")
    c.call("EVAL", "redis.call('set', 'k3', 'bar')", 2, "k1", "k2")
    writer.call("MSET", "k2", "2", "k1", "2")
    assert c.silent()
    c.call("EVAL", "redis.call('get', 'k2')", 2, "k1", "k2")
    writer.call("MSET", "k2", "3", "k3", "3")
    c.expect(invalidate(b"k2"))


@pytest.mark.min_redis(7, 2)
def test_read_only_scripts_track_what_their_commands_read(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on")
    writer.call("MSET", "k1", "1", "k2", "1", "k3", "1")
    c.call("EVAL_RO", "redis.call('ping')", 2, "k1", "k2")
    writer.call("MSET", "k2", "4", "k1", "4")
    assert c.silent()
    c.call("EVAL_RO", "redis.call('get', 'k2')", 2, "k1", "k2")
    writer.call("MSET", "k2", "5", "k3", "5")
    c.expect(invalidate(b"k2"))


def test_swapdb_and_other_databases(peers) -> None:  # type: ignore[no-untyped-def]
    """Keys are tracked by name: a write of the same name in another database invalidates;
    SWAPDB does not."""
    c = peers(resp3=True)
    writer = peers()
    c.call("CLIENT", "TRACKING", "on")
    c.call("GET", "a")
    writer.call("SWAPDB", 0, 1)
    assert c.silent()
    writer.call("SELECT", 5)
    writer.call("SET", "a", "1")
    c.expect(invalidate(b"a"))


def test_unblocked_blmove_gets_invalidation_after_reply(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers(resp3=True)
    writer = peers()
    writer.call("RPUSH", "dst", "a")
    c.call("CLIENT", "TRACKING", "on")
    c.call("LRANGE", "dst", 0, -1)
    c.send("BLMOVE", "src", "dst", "LEFT", "LEFT", 0)
    time.sleep(0.1)
    writer.call("RPUSH", "src", "foo")
    c.expect(bulk(b"foo") + invalidate(b"dst"))


def test_reset_and_disconnection_clear_tracking(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    c.call("CLIENT", "SETNAME", "test-client")
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p")
    assert c.call("RESET") == b"RESET"
    line = c.call("CLIENT", "LIST")
    assert b"name= " in line and b"flags=N " in line  # type: ignore[operator]
    assert c.call("CLIENT", "TRACKINGINFO") == [
        b"flags", [b"off"], b"redirect", -1, b"prefixes", []]
    other = peers()
    assert info_field(other, "tracking_clients") == "0"
    assert info_field(other, "tracking_total_prefixes") == "0"
    d = peers()
    d.call("CLIENT", "TRACKING", "on", "BCAST")
    assert info_field(other, "tracking_clients") == "1"
    d.close()
    time.sleep(0.1)
    assert info_field(other, "tracking_clients") == "0"


def test_info_fields(peers) -> None:  # type: ignore[no-untyped-def]
    c = peers()
    b = peers()
    writer = peers()
    c.call("CLIENT", "TRACKING", "on")
    b.call("CLIENT", "TRACKING", "on")
    c.call("MGET", "k1", "k2")
    b.call("GET", "k1")
    assert info_field(writer, "tracking_total_keys") == "2"
    assert info_field(writer, "tracking_total_items") == "3"
    assert info_field(writer, "tracking_clients") == "2"
    writer.call("SET", "k1", "x")
    assert info_field(writer, "tracking_total_keys") == "1"
    assert info_field(writer, "tracking_total_items") == "1"


def test_tracking_table_max_keys(peers) -> None:  # type: ignore[no-untyped-def]
    target = peers()
    target_id = client_id(target)
    target.call("SUBSCRIBE", CHANNEL)
    c = peers()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", target_id)
    for i in range(250):
        c.call("GET", f"key{i}")
    c.call("CONFIG", "SET", "tracking-table-max-keys", 1)
    got = set()
    for _ in range(249):
        reply = target.reply()
        got.update(reply[2])  # type: ignore[index]
    assert len(got) == 249
    target.call_raw("PING", expected=b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
    assert info_field(c, "tracking_total_keys") == "1"


@pytest.mark.min_redis(7, 2)
def test_table_limit_applies_before_a_queued_command(peers) -> None:  # type: ignore[no-untyped-def]
    """Redis's #11715: the limit is enforced as a command arrives, queued or not."""
    admin = peers()
    admin.call("CONFIG", "SET", "tracking-table-max-keys", 2)
    admin.call("DEBUG", "PAUSE-CRON", 1)
    try:
        c = peers(resp3=True)
        c.call("CLIENT", "TRACKING", "on")
        c.call("MGET", "1{tag}", "2{tag}")
        c.call("MULTI")
        admin.call("CONFIG", "SET", "tracking-table-max-keys", 1)
        c.send("PING")
        pushed = c.reply()
        assert pushed in ([b"invalidate", [b"1{tag}"]], [b"invalidate", [b"2{tag}"]])
        assert c.reply() == b"QUEUED"
        c.call_raw("EXEC", expected=b"*1\r\n+PONG\r\n")
    finally:
        admin.call("DEBUG", "PAUSE-CRON", 0)


# -- redis-py's client-side cache -----------------------------------------------------------


@pytest.mark.min_redis(7, 4)  # redis-py enables its cache for Redis 7.4 and later only
def test_redis_py_client_side_cache(server: ServerProcess,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """redis-py's own cache: a key cached, changed by another client, invalidated, read
    again with its new value; a flush empties the cache. redis-py reads pushes while it checks
    for invalidations only with its Python parser (with hiredis installed it never passes
    ``push_request`` on and waits for a reply that is not coming), so the test asks for it."""
    monkeypatch.setattr(redis.connection, "HIREDIS_AVAILABLE", False)
    pool = redis.ConnectionPool(host=server.host, port=server.port, protocol=3,
                                cache_config=CacheConfig(), parser_class=_RESP3Parser)
    cached = redis.Redis(connection_pool=pool)
    other = server.client()
    try:
        other.set("cached", "first")
        assert cached.get("cached") == b"first"
        cache = cached.get_cache()
        assert cache is not None and cache.size == 1
        assert cached.get("cached") == b"first"  # from the cache
        other.set("cached", "second")
        time.sleep(0.05)
        assert cached.get("cached") == b"second"  # the invalidation was taken first
        assert cache.size == 1
        other.flushall()
        time.sleep(0.05)
        assert cached.get("cached") is None
        assert cache.size == 0
    finally:
        cached.close()
        pool.disconnect()
        other.close()

