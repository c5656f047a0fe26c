"""Stream consumer groups: parity with Redis for XGROUP, XREADGROUP, XACK, XACKDEL, XPENDING,
XCLAIM, XAUTOCLAIM, XNACK and the group parts of XINFO, including error texts, RESP2/RESP3
shapes, lag bookkeeping and what deleting, renaming or copying the key does to groups.

Expected values come from the real ``redis-server`` (7.0.15 here) wherever it has the feature.
Behaviour added later is marked ``min_redis`` and its expected replies come from the Redis test
suite (``tests/unit/type/stream-cgroups.tcl`` and ``stream.tcl`` of the 8.x line), the redis/docs
pages and the string tables of newer ``t_stream.c``; each such value carries a comment naming
its source. Where Redis changed a reply after 7.0, ``since()`` picks the reply of the version under
test (Brook reports version 99, the newest).

No test measures time: idle times are only checked to be non-negative integers, and where an
exact value matters it is set with XCLAIM's IDLE/TIME options first.
"""

from __future__ import annotations

import pytest
import redis

from tests.conftest import (
    NOT_INTEGER,
    WRONGTYPE,
    ServerProcess,
    call,
    error_of,
    help_footer,
    run,
    since,
)
from tests.support.streams import INVALID_ID, MAX, MAX_ID

NOGROUP_READ = "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option"
NOGROUP = "NOGROUP No such key '{}' or consumer group '{}'"
NOGROUP_XGROUP = "NOGROUP No such consumer group '{}' for key name '{}'"
BUSYGROUP = "BUSYGROUP Consumer Group name already exists"
KEY_REQUIRED = ("The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
                "want to use the MKSTREAM option to create an empty stream automatically.")
XGROUP_SYNTAX = "unknown subcommand or wrong number of arguments for '{}'. Try XGROUP HELP."
ENTRIESREAD_NEGATIVE = "value for ENTRIESREAD must be positive or -1"
MEANINGLESS = ("The {0} ID is meaningless in the context of XREADGROUP: you want to read the "
               "history of this consumer by specifying a proper ID, or use the > ID to get new "
               "messages. The {0} ID would just return an empty result set.")
MISSING_GROUP = "Missing GROUP option for XREADGROUP"
COUNT_POSITIVE = "COUNT must be > 0"
EMPTY_PEL = [0, None, None, None]  # XPENDING's summary of an empty PEL
# XINFO STREAM FULL group fields, in order, except "nacked-count", which 8.8 adds at a position
# this suite could not verify (stream-cgroups.tcl reads it with dict get only).
FULL_GROUP_FIELDS = [b"name", b"last-delivered-id", b"entries-read", b"lag", b"pel-count",
                     b"pending", b"consumers"]
LLONG_MAX = 9223372036854775807
# A delivery time far in the past (2001-09-09), set with XCLAIM TIME so that idle times and the
# delivery times XINFO STREAM FULL prints are known without measuring anything.
OLD = 1000000000000

XGROUP_HELP = [
    b"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    b"CREATE <key> <groupname> <id|$> [option]",
    b"    Create a new consumer group. Options are:",
    b"    * MKSTREAM",
    b"      Create the empty stream if it does not exist.",
    b"    * ENTRIESREAD entries_read",
    b"      Set the group's entries_read counter (internal use).",
    b"CREATECONSUMER <key> <groupname> <consumer>",
    b"    Create a new consumer in the specified group.",
    b"DELCONSUMER <key> <groupname> <consumer>",
    b"    Remove the specified consumer.",
    b"DESTROY <key> <groupname>",
    b"    Remove the specified group.",
    b"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    b"    Set the current group ID and entries_read counter.",
    b"HELP",
]


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def as_dict(pairs: object) -> dict[bytes, object]:
    """A RESP2 flat name/value list as a dict (order kept)."""
    assert isinstance(pairs, list)
    return dict(zip(pairs[::2], pairs[1::2], strict=True))


def groups(r: redis.Redis, key: str) -> list[dict[bytes, object]]:
    """XINFO GROUPS, one dict per group."""
    reply = run(r, "XINFO", "GROUPS", key)
    assert isinstance(reply, list)
    return [as_dict(group) for group in reply]


def group(r: redis.Redis, key: str, name: str) -> dict[bytes, object]:
    """One group's XINFO GROUPS fields."""
    found = [g for g in groups(r, key) if g[b"name"] == name.encode()]
    assert len(found) == 1
    return found[0]


def lag(r: redis.Redis, key: str, name: str) -> tuple[object, object]:
    """A group's (entries-read, lag)."""
    info = group(r, key, name)
    return info[b"entries-read"], info[b"lag"]


def consumers(r: redis.Redis, key: str, name: str) -> list[dict[bytes, object]]:
    """XINFO CONSUMERS, one dict per consumer."""
    reply = run(r, "XINFO", "CONSUMERS", key, name)
    assert isinstance(reply, list)
    return [as_dict(consumer) for consumer in reply]


def owned(r: redis.Redis, key: str, name: str) -> dict[bytes, object]:
    """Consumer name -> its pending count, from XINFO CONSUMERS."""
    return {c[b"name"]: c[b"pending"] for c in consumers(r, key, name)}


def full_groups(r: redis.Redis, key: str, *extra: str) -> list[dict[bytes, object]]:
    """The groups part of XINFO STREAM FULL, with each consumer as a dict too."""
    info = as_dict(run(r, "XINFO", "STREAM", key, "FULL", *extra))
    reply = info[b"groups"]
    assert isinstance(reply, list)
    result = []
    for raw_group in reply:
        one = as_dict(raw_group)
        one[b"consumers"] = [as_dict(c) for c in one[b"consumers"]]  # type: ignore[union-attr]
        result.append(one)
    return result


def read(r: redis.Redis, name: str, consumer: str, key: str, last: str = ">",
         *options: str) -> object:
    """XREADGROUP GROUP name consumer [options] STREAMS key last."""
    return run(r, "XREADGROUP", "GROUP", name, consumer, *options, "STREAMS", key, last)


def entry(i: int, value: str | None = None) -> list[object]:
    """The entry ``i-0`` as the ``five`` fixture (and ``add``) wrote it."""
    return [f"{i}-0".encode(), [b"f", (value or f"v{i}").encode()]]


def add(r: redis.Redis, key: str, *numbers: int) -> None:
    """Entries ``i-0`` with field f = v<i>, in one round trip."""
    with r.pipeline(transaction=False) as pipe:
        for i in numbers:
            pipe.execute_command("XADD", key, f"{i}-0", "f", f"v{i}")
        pipe.execute()


def pel(r: redis.Redis, key: str, name: str, *extra: str) -> list[tuple[bytes, bytes, int]]:
    """XPENDING key group - + 100 [consumer] without the idle times: (id, owner, deliveries)."""
    reply = run(r, "XPENDING", key, name, "-", "+", "100", *extra)
    assert isinstance(reply, list)
    for item in reply:
        assert isinstance(item[2], int) and item[2] >= -1
    return [(item[0], item[1], item[3]) for item in reply]


def server_ms(r: redis.Redis) -> int:
    """The server clock in milliseconds (TIME), for delivery times set relative to it."""
    seconds, micros = r.time()
    return seconds * 1000 + micros // 1000


def consumer_info_fields(server: ServerProcess) -> list[bytes]:
    """XINFO CONSUMERS field names: 7.2 added "inactive" (docs xinfo-consumers.md history)."""
    return [b"name", b"pending", b"idle"] + ([b"inactive"] if server.version >= (7, 2) else [])


def full_consumer_fields(server: ServerProcess) -> list[bytes]:
    """XINFO STREAM FULL consumer fields: 7.2 added "active-time" (docs xinfo-stream.md
    history; field order from the 7.2+ t_stream.c xinfoReplyWithStreamInfo)."""
    return ([b"name", b"seen-time"] + ([b"active-time"] if server.version >= (7, 2) else [])
            + [b"pel-count", b"pending"])




@pytest.fixture
def five(r: redis.Redis) -> redis.Redis:
    """Stream s with 1-0 ... 5-0 (f = v1 ... v5) and group g at 0."""
    add(r, "s", 1, 2, 3, 4, 5)
    assert run(r, "XGROUP", "CREATE", "s", "g", "0") == b"OK"
    return r


# ---------------------------------------------------------------------------------------------
# XGROUP CREATE / SETID / DESTROY / CREATECONSUMER / DELCONSUMER / HELP
# ---------------------------------------------------------------------------------------------


def test_xgroup_create_and_busygroup(r):
    add(r, "s", 1, 2, 3)
    assert run(r, "XGROUP", "CREATE", "s", "g", "$") == b"OK"
    assert error_of(r, "XGROUP", "CREATE", "s", "g", "0") == BUSYGROUP
    assert error_of(r, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == BUSYGROUP
    # Names are binary and case-sensitive; the empty name is a name.
    assert run(r, "XGROUP", "CREATE", "s", "G", "0") == b"OK"
    assert run(r, "XGROUP", "CREATE", "s", "", "2") == b"OK"
    assert run(r, "XGROUP", "CREATE", "s", b"g\x00\xff", MAX_ID) == b"OK"
    # An incomplete ID means seq 0; lowercase subcommands and options work.
    assert run(r, "xgroup", "create", "s", "low", "3", "mkstream", "mkstream") == b"OK"
    # Groups come back sorted by name (bytewise).
    assert [(g[b"name"], g[b"last-delivered-id"]) for g in groups(r, "s")] == [
        (b"", b"2-0"), (b"G", b"0-0"), (b"g", b"3-0"), (b"g\x00\xff", MAX_ID.encode()),
        (b"low", b"3-0")]
    assert as_dict(run(r, "XINFO", "STREAM", "s"))[b"groups"] == 5


def test_xgroup_create_needs_the_key_unless_mkstream(r):
    assert error_of(r, "XGROUP", "CREATE", "s", "g", "$") == KEY_REQUIRED
    assert error_of(r, "XGROUP", "CREATE", "s", "g", "bad") == KEY_REQUIRED  # key first
    assert r.exists("s") == 0
    # MKSTREAM: the ID and options are still checked before the stream is made.
    assert error_of(r, "XGROUP", "CREATE", "s", "g", "bad", "MKSTREAM") == INVALID_ID
    assert error_of(r, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM", "ENTRIESREAD",
                    "x") == NOT_INTEGER
    assert error_of(r, "XGROUP", "CREATE", "s", "g", "0", "BOGUS", "MKSTREAM") == \
        XGROUP_SYNTAX.format("CREATE")
    assert r.exists("s") == 0
    assert run(r, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == b"OK"
    assert r.type("s") == b"stream"
    assert r.xlen("s") == 0
    info = as_dict(run(r, "XINFO", "STREAM", "s"))
    assert (info[b"length"], info[b"last-generated-id"], info[b"groups"]) == (0, b"0-0", 1)
    assert groups(r, "s") == [{b"name": b"g", b"consumers": 0, b"pending": 0,
                               b"last-delivered-id": b"0-0", b"entries-read": None, b"lag": 0}]
    # The stream outlives its last entry and its groups.
    assert run(r, "XGROUP", "DESTROY", "s", "g") == 1
    assert (r.exists("s"), groups(r, "s")) == (1, [])


@pytest.mark.parametrize(("args", "message"), [
    (["g", "-"], INVALID_ID),
    (["g", "+"], INVALID_ID),
    (["g", ">"], INVALID_ID),
    (["g", "*"], INVALID_ID),
    (["g", "(2"], INVALID_ID),
    (["g", "1-x"], INVALID_ID),
    (["new", "0", "BAD"], XGROUP_SYNTAX.format("CREATE")),
    (["new", "0", "ENTRIESREAD"], XGROUP_SYNTAX.format("CREATE")),
    (["new", "0", "ENTRIESREAD", "1", "ENTRIESREAD", "2"], XGROUP_SYNTAX.format("CREATE")),
    (["new", "0", "MKSTREAM", "ENTRIESREAD", "1", "EXTRA"], XGROUP_SYNTAX.format("CREATE")),
    (["new", "0", "ENTRIESREAD", "x"], NOT_INTEGER),
    (["new", "0", "ENTRIESREAD", "9223372036854775808"], NOT_INTEGER),
    (["new", "0", "ENTRIESREAD", "-2"], ENTRIESREAD_NEGATIVE),
    # Options are parsed before the group is looked at: an existing name still gets these.
    (["g", "0", "ENTRIESREAD", "-5"], ENTRIESREAD_NEGATIVE),
    (["g", "bad"], INVALID_ID),
])
def test_xgroup_create_errors(r, args, message):
    add(r, "s", 1)
    run(r, "XGROUP", "CREATE", "s", "g", "0")
    assert error_of(r, "XGROUP", "CREATE", "s", *args) == message
    assert [g[b"name"] for g in groups(r, "s")] == [b"g"]


def test_xgroup_subcommand_is_echoed_as_typed(r):
    add(r, "s", 1)
    run(r, "XGROUP", "CREATE", "s", "g", "0")
    assert error_of(r, "XGROUP", "create", "s", "h", "0", "bad") == XGROUP_SYNTAX.format("create")
    assert error_of(r, "XGROUP", "SetId", "s", "g", "0", "bad") == XGROUP_SYNTAX.format("SetId")
    assert error_of(r, "XGROUP", "SETID", "s", "g", "0", "MKSTREAM") == \
        XGROUP_SYNTAX.format("SETID")
    assert error_of(r, "XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD") == \
        XGROUP_SYNTAX.format("SETID")
    assert error_of(r, "XGROUP", "FOO", "s", "g") == "unknown subcommand 'FOO'. Try XGROUP HELP."
    assert error_of(r, "XGROUP", "foo") == "unknown subcommand 'foo'. Try XGROUP HELP."


def test_xgroup_help(server, r, raw):
    expected = [*XGROUP_HELP, help_footer(server)]
    assert run(r, "XGROUP", "HELP") == expected
    assert run(r, "xgroup", "help") == expected
    # stream.tcl "XGROUP HELP should not have unexpected options".
    assert error_of(r, "XGROUP", "HELP", "x") == "wrong number of arguments for 'xgroup|help' command"
    reply = call(raw, "XGROUP", "HELP")
    assert reply.startswith(b"*17\r\n+XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands")
    assert reply.endswith(b"+HELP\r\n+" + help_footer(server) + b"\r\n")


@pytest.mark.parametrize("args", [
    [], ["CREATE"], ["CREATE", "s"], ["CREATE", "s", "g"], ["SETID", "s", "g"],
    ["DESTROY", "s"], ["DESTROY", "s", "g", "x"], ["CREATECONSUMER", "s", "g"],
    ["CREATECONSUMER", "s", "g", "c", "d"], ["DELCONSUMER", "s", "g"],
    ["DELCONSUMER", "s", "g", "c", "d"],
])
def test_xgroup_arity(r, args):
    name = f"xgroup|{args[0].lower()}" if args else "xgroup"
    assert error_of(r, "XGROUP", *args) == f"wrong number of arguments for '{name}' command"


@pytest.mark.parametrize("args", [
    ["CREATE", "str", "g", "$"], ["CREATE", "str", "g", "$", "MKSTREAM"],
    ["CREATE", "str", "g", "bad"],  # the type is checked before the ID is parsed
    ["SETID", "str", "g", "$"], ["DESTROY", "str", "g"], ["CREATECONSUMER", "str", "g", "c"],
    ["DELCONSUMER", "str", "g", "c"],
])
def test_xgroup_wrong_type(r, args):
    r.set("str", "x")
    assert error_of(r, "XGROUP", *args) == WRONGTYPE
    assert r.get("str") == b"x"


@pytest.mark.parametrize("args", [
    ["SETID", "nokey", "g", "$"], ["DESTROY", "nokey", "g"],
    ["CREATECONSUMER", "nokey", "g", "c"], ["DELCONSUMER", "nokey", "g", "c"],
])
def test_xgroup_subcommands_need_the_key(r, args):
    assert error_of(r, "XGROUP", *args) == KEY_REQUIRED
    assert r.exists("nokey") == 0


def test_xgroup_setid(five):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "2")
    assert run(r, "XGROUP", "SETID", "s", "g", "4") == b"OK"
    assert group(r, "s", "g")[b"last-delivered-id"] == b"4-0"
    assert read(r, "g", "c", "s") == [[b"s", [entry(5)]]]
    assert run(r, "XGROUP", "SETID", "s", "g", "$") == b"OK"
    assert read(r, "g", "c", "s") is None
    # "-" and "+" are accepted here (unlike in CREATE): the smallest and the largest ID.
    assert run(r, "XGROUP", "SETID", "s", "g", "+") == b"OK"
    assert group(r, "s", "g")[b"last-delivered-id"] == MAX_ID.encode()
    assert run(r, "XGROUP", "SETID", "s", "g", "-") == b"OK"
    assert group(r, "s", "g")[b"last-delivered-id"] == b"0-0"
    # Moving the ID touches neither the PEL nor the consumers.
    assert pel(r, "s", "g") == [(b"1-0", b"c", 1), (b"2-0", b"c", 1), (b"5-0", b"c", 1)]
    assert owned(r, "s", "g") == {b"c": 3}


def test_xgroup_setid_errors(five):
    r = five
    assert error_of(r, "XGROUP", "SETID", "s", "g", "bad") == INVALID_ID
    assert error_of(r, "XGROUP", "SETID", "s", "g", ">") == INVALID_ID
    assert error_of(r, "XGROUP", "SETID", "s", "g", "(1") == INVALID_ID
    # The group is looked up before the ID is parsed, the options before both.
    assert error_of(r, "XGROUP", "SETID", "s", "nog", "bad") == NOGROUP_XGROUP.format("nog", "s")
    assert error_of(r, "XGROUP", "SETID", "s", "nog", "0") == NOGROUP_XGROUP.format("nog", "s")
    assert error_of(r, "XGROUP", "SETID", "s", "g", "bad", "ENTRIESREAD", "x") == NOT_INTEGER
    assert error_of(r, "XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-2") == \
        ENTRIESREAD_NEGATIVE
    assert group(r, "s", "g")[b"last-delivered-id"] == b"0-0"


def test_xgroup_setid_back_redelivers_and_reassigns(five):
    # stream-cgroups.tcl "PEL NACK reassignment after XGROUP SETID event": entries already
    # pending are delivered again by ">", move to the reading consumer and restart at one
    # delivery.
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    read(r, "g", "c1", "s", "0")  # history reads count as deliveries: now 2 each
    assert pel(r, "s", "g") == [(b"1-0", b"c1", 2), (b"2-0", b"c1", 2)]
    run(r, "XGROUP", "SETID", "s", "g", "0")
    assert read(r, "g", "c2", "s", ">", "COUNT", "3") == [[b"s", [entry(1), entry(2), entry(3)]]]
    assert pel(r, "s", "g") == [(b"1-0", b"c2", 1), (b"2-0", b"c2", 1), (b"3-0", b"c2", 1)]
    assert owned(r, "s", "g") == {b"c1": 0, b"c2": 3}
    assert read(r, "g", "c1", "s", "0") == [[b"s", []]]


def test_xgroup_destroy(five):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "2")
    run(r, "XGROUP", "CREATE", "s", "other", "$")
    assert run(r, "XGROUP", "DESTROY", "s", "g") == 1
    assert run(r, "XGROUP", "DESTROY", "s", "g") == 0
    assert run(r, "XGROUP", "DESTROY", "s", "nog") == 0
    assert [g[b"name"] for g in groups(r, "s")] == [b"other"]
    assert as_dict(run(r, "XINFO", "STREAM", "s"))[b"groups"] == 1
    assert error_of(r, "XPENDING", "s", "g") == NOGROUP.format("s", "g")
    assert run(r, "XACK", "s", "g", "1-0") == 0
    # A group created again under the same name starts from nothing.
    run(r, "XGROUP", "CREATE", "s", "g", "0")
    assert run(r, "XPENDING", "s", "g") == [0, None, None, None]
    assert consumers(r, "s", "g") == []
    assert read(r, "g", "c", "s", "0") == [[b"s", []]]
    assert read(r, "g", "c", "s", ">", "COUNT", "1") == [[b"s", [entry(1)]]]
    assert r.xlen("s") == 5


def test_xgroup_createconsumer(five, server):
    r = five
    assert run(r, "XGROUP", "CREATECONSUMER", "s", "g", "alice") == 1
    assert run(r, "XGROUP", "CREATECONSUMER", "s", "g", "alice") == 0
    assert run(r, "XGROUP", "CREATECONSUMER", "s", "g", "Alice") == 1
    assert run(r, "XGROUP", "CREATECONSUMER", "s", "g", "") == 1
    assert run(r, "XGROUP", "CREATECONSUMER", "s", "g", b"b\x00\xff") == 1
    assert error_of(r, "XGROUP", "CREATECONSUMER", "s", "nog", "c") == \
        NOGROUP_XGROUP.format("nog", "s")
    # Consumers are listed by name, bytewise; a new one owns nothing.
    assert owned(r, "s", "g") == {b"": 0, b"Alice": 0, b"alice": 0, b"b\x00\xff": 0}
    assert [list(c) for c in consumers(r, "s", "g")] == [consumer_info_fields(server)] * 4
    assert group(r, "s", "g")[b"consumers"] == 4
    # An existing consumer created by a read counts too (stream-cgroups.tcl CREATECONSUMER).
    read(r, "g", "bob", "s", ">", "COUNT", "1")
    assert run(r, "XGROUP", "CREATECONSUMER", "s", "g", "bob") == 0
    assert owned(r, "s", "g")[b"bob"] == 1


def test_xgroup_delconsumer_returns_its_pending_count(five):
    r = five
    read(r, "g", "alice", "s", ">", "COUNT", "2")
    read(r, "g", "bob", "s", ">", "COUNT", "1")
    run(r, "XGROUP", "CREATECONSUMER", "s", "g", "carol")
    assert run(r, "XGROUP", "DELCONSUMER", "s", "g", "alice") == 2
    assert run(r, "XGROUP", "DELCONSUMER", "s", "g", "alice") == 0
    assert run(r, "XGROUP", "DELCONSUMER", "s", "g", "carol") == 0
    assert run(r, "XGROUP", "DELCONSUMER", "s", "g", "nobody") == 0
    # The deleted consumer's entries leave the group PEL too; the group's position stays.
    assert run(r, "XPENDING", "s", "g") == [1, b"3-0", b"3-0", [[b"bob", b"1"]]]
    assert owned(r, "s", "g") == {b"bob": 1}
    info = group(r, "s", "g")
    assert (info[b"consumers"], info[b"pending"], info[b"last-delivered-id"]) == (1, 1, b"3-0")
    assert error_of(r, "XGROUP", "DELCONSUMER", "s", "nog", "bob") == \
        NOGROUP_XGROUP.format("nog", "s")
    assert read(r, "g", "bob", "s") == [[b"s", [entry(4), entry(5)]]]


# ---------------------------------------------------------------------------------------------
# XREADGROUP
# ---------------------------------------------------------------------------------------------


def test_xreadgroup_delivers_new_entries_and_records_them(five):
    r = five
    assert read(r, "g", "c1", "s", ">", "COUNT", "2") == [[b"s", [entry(1), entry(2)]]]
    assert pel(r, "s", "g") == [(b"1-0", b"c1", 1), (b"2-0", b"c1", 1)]
    assert read(r, "g", "c2", "s") == [[b"s", [entry(3), entry(4), entry(5)]]]
    assert read(r, "g", "c2", "s") is None  # nothing new
    assert read(r, "g", "c1", "s") is None
    info = group(r, "s", "g")
    assert (info[b"last-delivered-id"], info[b"pending"], info[b"consumers"]) == (b"5-0", 5, 2)
    assert owned(r, "s", "g") == {b"c1": 2, b"c2": 3}
    add(r, "s", 6)
    assert read(r, "g", "c1", "s") == [[b"s", [entry(6)]]]
    # Deleted entries are skipped by ">".
    add(r, "s", 7, 8)
    r.xdel("s", "7-0")
    assert read(r, "g", "c1", "s") == [[b"s", [entry(8)]]]


@pytest.mark.parametrize(("count", "expected"), [
    ("1", [1]), ("3", [1, 2, 3]), ("0", [1, 2, 3, 4, 5]), ("-1", [1, 2, 3, 4, 5]),
    ("-9223372036854775808", [1, 2, 3, 4, 5]), ("10", [1, 2, 3, 4, 5]),
])
def test_xreadgroup_count(five, count, expected):
    # COUNT 0 and below mean no limit, for new entries and for history alike.
    assert read(five, "g", "c", "s", ">", "COUNT", count) == [[b"s", [entry(i) for i in expected]]]
    assert read(five, "g", "c", "s", "0", "COUNT", count) == [
        [b"s", [entry(i) for i in expected]]]


def test_xreadgroup_history_replays_the_consumers_own_pel(five):
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "3")
    read(r, "g", "c2", "s", ">", "COUNT", "1")
    # The ID is exclusive; only c1's own entries; COUNT applies.
    assert read(r, "g", "c1", "s", "0") == [[b"s", [entry(1), entry(2), entry(3)]]]
    assert read(r, "g", "c1", "s", "1-0") == [[b"s", [entry(2), entry(3)]]]
    assert read(r, "g", "c1", "s", "1") == [[b"s", [entry(2), entry(3)]]]
    assert read(r, "g", "c1", "s", "0-1", "COUNT", "1") == [[b"s", [entry(1)]]]
    assert read(r, "g", "c1", "s", "1-0", "COUNT", "1") == [[b"s", [entry(2)]]]
    assert read(r, "g", "c1", "s", "3-0") == [[b"s", []]]
    assert read(r, "g", "c2", "s", "0") == [[b"s", [entry(4)]]]
    # Each replay is a delivery: counts went up by one per read that returned the entry.
    assert pel(r, "s", "g") == [(b"1-0", b"c1", 3), (b"2-0", b"c1", 5), (b"3-0", b"c1", 4),
                                (b"4-0", b"c2", 2)]
    # Replays do not move the group: ">" still starts after 4-0.
    assert read(r, "g", "c1", "s") == [[b"s", [entry(5)]]]
    # An acknowledged entry is no longer in the history.
    run(r, "XACK", "s", "g", "1-0", "3-0")
    assert read(r, "g", "c1", "s", "0") == [[b"s", [entry(2), entry(5)]]]


def _dirty(r: redis.Redis) -> int:
    return int(r.info("persistence")["rdb_changes_since_last_save"])


@pytest.mark.min_redis(7, 4)
def test_xreadgroup_dirty_counts_new_entries_not_history(r):
    # stream-cgroups.tcl "XREADGROUP of multiple entries changes dirty by one" and "XREADGROUP
    # from PEL does not change dirty" (Redis 7.4+; 7.0 counted history reads): a history read
    # changes only delivery counts and times.
    for n in range(1, 5):
        r.xadd("x", {"data": n}, id=f"{n}-0")
    run(r, "XGROUP", "CREATE", "x", "g1", "0")
    run(r, "XGROUP", "CREATECONSUMER", "x", "g1", "Alice")
    before = _dirty(r)
    assert len(read(r, "g1", "Alice", "x", ">", "COUNT", "2")[0][1]) == 2
    assert _dirty(r) == before + 1
    before = _dirty(r)
    assert len(read(r, "g1", "Alice", "x", "0", "COUNT", "2")[0][1]) == 2
    assert read(r, "g1", "Alice", "x", "9000", "COUNT", "2") == [[b"x", []]]
    assert _dirty(r) == before
    # A new consumer is created even for a history read, and that counts.
    assert read(r, "g1", "noconsumer", "x", "0", "COUNT", "2") == [[b"x", []]]
    assert _dirty(r) == before + 1


@pytest.mark.min_redis(7, 2)
def test_active_time_only_for_reads_into_the_pel(five):
    # active-time (XINFO CONSUMERS "inactive") is the last read that added entries to the PEL:
    # a NOACK read or a history read leaves it as it was.
    r = five
    read(r, "g", "quiet", "s", ">", "NOACK", "COUNT", "2")
    assert consumers(r, "s", "g")[0][b"inactive"] == -1
    read(r, "g", "quiet", "s", "0")
    assert consumers(r, "s", "g")[0][b"inactive"] == -1
    read(r, "g", "quiet", "s", ">", "COUNT", "1")
    assert consumers(r, "s", "g")[0][b"inactive"] >= 0
    group = as_dict(as_dict(run(r, "XINFO", "STREAM", "s", "FULL"))[b"groups"][0])
    consumer = as_dict(group[b"consumers"][0])
    assert consumer[b"active-time"] == consumer[b"seen-time"]  # the same read set both


def test_xreadgroup_history_of_deleted_entries(five, raw):
    # stream-cgroups.tcl "XREADGROUP history reporting of deleted entries. Bug #5570": an
    # entry deleted while pending comes back as [id, nil] and is not counted as delivered.
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "3")
    r.xdel("s", "2-0")
    assert read(r, "g", "c", "s", "0") == [[b"s", [entry(1), [b"2-0", None], entry(3)]]]
    assert read(r, "g", "c", "s", "0") == [[b"s", [entry(1), [b"2-0", None], entry(3)]]]
    assert pel(r, "s", "g") == [(b"1-0", b"c", 3), (b"2-0", b"c", 1), (b"3-0", b"c", 3)]
    # Trimming away pending entries leaves them in the PEL the same way.
    run(r, "XADD", "s", "MAXLEN", "1", "6-0", "f", "v6")
    assert read(r, "g", "c", "s", "0") == [[b"s", [[b"1-0", None], [b"2-0", None],
                                                    [b"3-0", None]]]]
    assert run(r, "XPENDING", "s", "g")[0] == 3
    # On the wire: a null array in RESP2, a null in RESP3.
    assert call(raw, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", "0") == (
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*-1\r\n")
    call(raw, "HELLO", "3")
    assert call(raw, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", "0") == (
        b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n_\r\n")


def test_xreadgroup_noack(five):
    r = five
    assert read(r, "g", "c", "s", ">", "NOACK", "COUNT", "2") == [[b"s", [entry(1), entry(2)]]]
    assert run(r, "XPENDING", "s", "g") == [0, None, None, None]
    info = group(r, "s", "g")
    assert (info[b"last-delivered-id"], info[b"entries-read"], info[b"lag"]) == (b"2-0", 2, 3)
    assert owned(r, "s", "g") == {b"c": 0}  # the consumer exists all the same
    # NOACK does not apply to history reads: they still count deliveries.
    read(r, "g", "c", "s", ">", "COUNT", "1")
    assert read(r, "g", "c", "s", "0", "NOACK") == [[b"s", [entry(3)]]]
    assert pel(r, "s", "g") == [(b"3-0", b"c", 2)]
    assert read(r, "g", "c", "s", ">", "NOACK", "NOACK") == [[b"s", [entry(4), entry(5)]]]
    assert pel(r, "s", "g") == [(b"3-0", b"c", 2)]


def test_xreadgroup_creates_the_consumer(r, server):
    add(r, "s", 1)
    run(r, "XGROUP", "CREATE", "s", "g", "$")
    # 7.0 creates a consumer only when the read is served (new entries, or a history read);
    # from 7.2 every XREADGROUP creates it (stream-cgroups.tcl "XREADGROUP propagates new
    # consumer to replica" case 1, and "Consumer seen-time and active-time").
    assert read(r, "g", "idle", "s") is None
    assert read(r, "g", "noack", "s", ">", "NOACK") is None
    assert read(r, "g", "history", "s", "0") == [[b"s", []]]
    expected = [b"history", b"idle", b"noack"] if server.version >= (7, 2) else [b"history"]
    assert list(owned(r, "s", "g")) == expected
    add(r, "s", 2)
    assert read(r, "g", "reader", "s") == [[b"s", [entry(2)]]]
    assert owned(r, "s", "g")[b"reader"] == 1


def test_xreadgroup_several_streams(r):
    add(r, "s", 1, 2)
    add(r, "t", 1)
    run(r, "XGROUP", "CREATE", "s", "g", "0")
    run(r, "XGROUP", "CREATE", "t", "g", "$")
    run(r, "XGROUP", "CREATE", "u", "g", "$", "MKSTREAM")
    # Streams with nothing new are left out of the reply; nothing at all is a null reply.
    assert run(r, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "t", "s", "u",
               ">", ">", ">") == [[b"s", [entry(1)]]]
    assert run(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", "u", ">", ">") is None
    add(r, "t", 2)
    add(r, "u", 1)
    assert run(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "u", "s", "t", ">", ">", ">") == [
        [b"u", [entry(1)]], [b"s", [entry(2)]], [b"t", [entry(2)]]]
    # History reads always answer for their stream, even with nothing pending.
    run(r, "XGROUP", "CREATE", "s", "h", "$")
    run(r, "XGROUP", "CREATE", "t", "h", "$")
    assert run(r, "XREADGROUP", "GROUP", "h", "c", "STREAMS", "s", "t", "0", ">") == [
        [b"s", []]]
    assert run(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", "s", "0", "1") == [
        [b"t", [entry(2)]], [b"s", [entry(2)]]]
    assert pel(r, "s", "g") == [(b"1-0", b"c", 1), (b"2-0", b"c", 2)]


def test_xreadgroup_same_stream_twice(r):
    add(r, "t", 1)
    run(r, "XGROUP", "CREATE", "t", "g", "0")
    # The second ">" finds nothing left; two history reads both deliver.
    assert run(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", "t", ">", ">") == [
        [b"t", [entry(1)]]]
    assert run(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", "t", "0", "0") == [
        [b"t", [entry(1)]], [b"t", [entry(1)]]]
    assert pel(r, "t", "g") == [(b"1-0", b"c", 3)]


def test_xreadgroup_explicit_maximal_id_reads_like_greater_than(five):
    # Redis stores ">" as UINT64_MAX-UINT64_MAX, so that ID typed out reads new entries; the
    # incomplete form (seq 0) is an ordinary history position.
    assert read(five, "g", "c", "s", str(MAX)) == [[b"s", []]]
    assert read(five, "g", "c", "s", MAX_ID, "COUNT", "2") == [[b"s", [entry(1), entry(2)]]]
    assert pel(five, "s", "g") == [(b"1-0", b"c", 1), (b"2-0", b"c", 1)]


def test_xreadgroup_nogroup(five):
    r = five
    add(r, "t", 1)
    assert error_of(r, "XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">") == \
        NOGROUP_READ.format("s", "nog")
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", "0") == \
        NOGROUP_READ.format("nokey", "g")
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", ">") == \
        NOGROUP_READ.format("t", "g")
    assert error_of(r, "XREADGROUP", "GROUP", "", "c", "STREAMS", "s", ">") == \
        NOGROUP_READ.format("s", "")
    # Every key is checked before anything is read: s is not consumed.
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "nokey", ">", ">") == \
        NOGROUP_READ.format("nokey", "g")
    assert run(r, "XPENDING", "s", "g") == [0, None, None, None]
    assert consumers(r, "s", "g") == []
    # The group lookup comes before the ID is parsed.
    assert error_of(r, "XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", "bad") == \
        NOGROUP_READ.format("s", "nog")
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", "$") == \
        NOGROUP_READ.format("nokey", "g")


def test_xreadgroup_special_ids(five, server):
    r = five
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$") == \
        MEANINGLESS.format("$")
    # 7.4 gave "+" its own message (t_stream.c string table of 7.4, where XREAD learnt "+").
    plus = since(server, (7, 4), MEANINGLESS.format("+"), INVALID_ID)
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+") == plus
    assert pel(r, "s", "g") == []


@pytest.mark.parametrize("last", [
    "-", "bad", "(1-0", "1-", "-123", "abc-def", "--", "123-abc", ">>", "*", "1-*", "",
])
def test_xreadgroup_invalid_ids(five, last):
    assert error_of(five, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", last) == INVALID_ID


def test_xreadgroup_unbalanced(five, server):
    # 7.0 reused XREAD's text; 7.2 names the command and the ID it wants (t_stream.c 7.2+
    # "Unbalanced '%s' list of streams: for each stream key an ID or '%c' must be specified.";
    # stream-cgroups.tcl "XREAD and XREADGROUP against wrong parameter").
    message = since(
        server, (7, 2),
        "Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be "
        "specified.",
        "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
    for args in (["s", "t", ">"], ["s", "t", "u", ">", ">"], ["s", ">", "t"]):
        assert error_of(five, "XREADGROUP", "GROUP", "g", "c", "STREAMS", *args) == message
    assert error_of(five, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s") == \
        message
    assert error_of(five, "XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s") == message


@pytest.mark.parametrize(("args", "message"), [
    ([], "wrong number of arguments for 'xreadgroup' command"),
    (["GROUP", "g", "c", "STREAMS", "s"], "wrong number of arguments for 'xreadgroup' command"),
    (["GROUP", "g", "c", "STREAMS"], "wrong number of arguments for 'xreadgroup' command"),
    (["GROUP", "g", "STREAMS", "s", ">"], "wrong number of arguments for 'xreadgroup' command"),
    (["STREAMS", "s", ">"], "wrong number of arguments for 'xreadgroup' command"),
    (["g", "c", "STREAMS", "s", ">"], "wrong number of arguments for 'xreadgroup' command"),
    (["GROUP", "g", "c", "s", ">"], "wrong number of arguments for 'xreadgroup' command"),
    (["COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"], MISSING_GROUP),
    (["COUNT", "1", "NOACK", "NOACK", "STREAMS", "s", ">"], MISSING_GROUP),
    (["GROUPS", "g", "c", "STREAMS", "s", ">"], "syntax error"),
    (["GROUP", "g", "c", "STREAM", "s", ">"], "syntax error"),
    (["GROUP", "g", "c", "BAD", "STREAMS", "s", ">"], "syntax error"),
    (["GROUP", "g", "c", "TIMEOUT", "1000", "STREAMS", "s", ">"], "syntax error"),
    (["GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">"], NOT_INTEGER),
    (["GROUP", "g", "c", "COUNT", "1.5", "STREAMS", "s", ">"], NOT_INTEGER),
    (["GROUP", "g", "c", "COUNT", "18446744073709551616", "STREAMS", "s", ">"], NOT_INTEGER),
    (["GROUP", "g", "c", "COUNT", "x", "STREAMS", "nokey", ">"], NOT_INTEGER),
    (["GROUP", "g", "c", "BLOCK", "x", "STREAMS", "s", ">"],
     "timeout is not an integer or out of range"),
    (["GROUP", "g", "c", "BLOCK", "18446744073709551616", "STREAMS", "s", ">"],
     "timeout is not an integer or out of range"),
    (["GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"], "timeout is negative"),
])
def test_xreadgroup_syntax_errors(five, args, message):
    assert error_of(five, "XREADGROUP", *args) == message
    assert run(five, "XPENDING", "s", "g") == [0, None, None, None]


def test_xreadgroup_last_group_option_wins(five):
    r = five
    assert run(r, "XREADGROUP", "GROUP", "nog", "x", "GROUP", "g", "c", "COUNT", "1", "STREAMS",
               "s", ">") == [[b"s", [entry(1)]]]
    assert list(owned(r, "s", "g")) == [b"c"]


def test_xreadgroup_wrong_type(five):
    r = five
    r.set("str", "x")
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">") == WRONGTYPE
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", "bad") == WRONGTYPE
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "str", ">", ">") == \
        WRONGTYPE
    # Keys are checked in order: a missing one before a string stops at NOGROUP.
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", "str", ">", ">") == \
        NOGROUP_READ.format("nokey", "g")
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", "nokey", ">", ">") == \
        WRONGTYPE
    assert run(r, "XPENDING", "s", "g") == [0, None, None, None]


def test_xreadgroup_raw_replies(five, raw):
    assert call(raw, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">") == (
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n")
    assert call(raw, "XREADGROUP", "GROUP", "h", "c", "STREAMS", "s", ">") == (
        b"-NOGROUP No such key 's' or consumer group 'h' in XREADGROUP with GROUP option\r\n")
    run(five, "XGROUP", "SETID", "s", "g", "$")
    assert call(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == b"*-1\r\n"
    assert call(raw, "XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", "0") == (
        b"*1\r\n*2\r\n$1\r\ns\r\n*0\r\n")


def test_xreadgroup_resp3(five, r3, raw):
    # RESP3 answers with a map keyed by stream name; nothing new is a plain null.
    assert run(r3, "XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">") == {
        b"s": [entry(1), entry(2)]}
    call(raw, "HELLO", "3")
    assert call(raw, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", "0") == (
        b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n")
    run(r3, "XGROUP", "SETID", "s", "g", "$")
    assert call(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == b"_\r\n"


def test_xreadgroup_block_answers_at_once_when_it_can(five):
    # Waiting is tested in test_blocking.py; these calls must not wait at all.
    r = five
    assert read(r, "g", "c", "s", ">", "BLOCK", "0", "COUNT", "1") == [[b"s", [entry(1)]]]
    # With an ID other than ">", BLOCK is ignored and an empty history is an empty list
    # (stream-cgroups.tcl "Blocking XREADGROUP will ignore BLOCK if ID is not >").
    assert read(r, "g", "c", "s", "0", "BLOCK", "0") == [[b"s", [entry(1)]]]
    assert read(r, "g", "c", "s", "1-0", "BLOCK", "0") == [[b"s", []]]
    assert read(r, "g", "other", "s", "0", "BLOCK", "0") == [[b"s", []]]


def test_xreadgroup_in_multi(five, raw):
    # stream-cgroups.tcl "XREADGROUP from PEL inside MULTI".
    assert raw.call("MULTI") == b"OK"
    for command in (["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"],
                    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"],
                    ["XPENDING", "s", "g"], ["XACK", "s", "g", "1-0"], ["XPENDING", "s", "g"]):
        assert raw.call(*command) == b"QUEUED"
    assert raw.call("EXEC") == [[[b"s", [entry(1)]]], [[b"s", [entry(1)]]],
                                [1, b"1-0", b"1-0", [[b"c", b"1"]]], 1, EMPTY_PEL]


# ---------------------------------------------------------------------------------------------
# XACK
# ---------------------------------------------------------------------------------------------


def test_xack(five):
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "3")
    read(r, "g", "c2", "s", ">", "COUNT", "1")
    # Unknown IDs and repeats are not counted; incomplete IDs mean seq 0.
    assert run(r, "XACK", "s", "g", "1-0", "9-9", "1-0") == 1
    assert run(r, "XACK", "s", "g", "1-0") == 0
    assert run(r, "XACK", "s", "g", "2", "4-0", "0-0") == 2
    assert run(r, "XPENDING", "s", "g") == [1, b"3-0", b"3-0", [[b"c1", b"1"]]]
    assert owned(r, "s", "g") == {b"c1": 1, b"c2": 0}  # the consumer stays
    assert read(r, "g", "c2", "s", "0") == [[b"s", []]]
    # Acking is per group, and an acked entry stays in the stream.
    run(r, "XGROUP", "CREATE", "s", "h", "0")
    read(r, "g", "x", "s")
    read(r, "h", "x", "s", ">", "COUNT", "1")
    assert run(r, "XACK", "s", "h", "1-0", "5-0") == 1
    assert pel(r, "s", "g", "x") == [(b"5-0", b"x", 1)]
    assert r.xlen("s") == 5


def test_xack_errors(five):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "2")
    # Every ID is parsed before anything is acked.
    assert error_of(r, "XACK", "s", "g", "1-0", "bad") == INVALID_ID
    for bad in ("-", "+", ">", "$", "*", "(1-0", "1-*"):
        assert error_of(r, "XACK", "s", "g", bad) == INVALID_ID
    assert run(r, "XPENDING", "s", "g")[0] == 2
    # A missing key or group acks nothing, without even looking at the IDs.
    assert run(r, "XACK", "s", "nog", "1-0") == 0
    assert run(r, "XACK", "nokey", "g", "1-0") == 0
    assert run(r, "XACK", "nokey", "g", "bad") == 0
    assert run(r, "XACK", "s", "nog", "bad") == 0
    r.set("str", "x")
    assert error_of(r, "XACK", "str", "g", "1-0") == WRONGTYPE
    assert error_of(r, "XACK", "s", "g") == "wrong number of arguments for 'xack' command"
    assert error_of(r, "XACK", "s") == "wrong number of arguments for 'xack' command"


def test_xack_raw_reply(five, raw):
    read(five, "g", "c", "s")
    assert call(raw, "XACK", "s", "g", "1-0", "2-0", "9-0") == b":2\r\n"


# ---------------------------------------------------------------------------------------------
# XPENDING
# ---------------------------------------------------------------------------------------------


def test_xpending_summary(five, raw):
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    read(r, "g", "c2", "s", ">", "COUNT", "1")
    read(r, "g", "a0", "s", ">", "COUNT", "1")
    run(r, "XGROUP", "CREATECONSUMER", "s", "g", "zz")
    # Consumers without pending entries are left out; counts are bulk strings, by name.
    assert run(r, "XPENDING", "s", "g") == [
        4, b"1-0", b"4-0", [[b"a0", b"1"], [b"c1", b"2"], [b"c2", b"1"]]]
    assert call(raw, "XPENDING", "s", "g") == (
        b"*4\r\n:4\r\n$3\r\n1-0\r\n$3\r\n4-0\r\n*3\r\n*2\r\n$2\r\na0\r\n$1\r\n1\r\n"
        b"*2\r\n$2\r\nc1\r\n$1\r\n2\r\n*2\r\n$2\r\nc2\r\n$1\r\n1\r\n")


def test_xpending_summary_of_an_empty_pel(r, raw):
    run(r, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert run(r, "XPENDING", "s", "g") == [0, None, None, None]
    assert run(r, "XPENDING", "s", "g", "-", "+", "10") == []
    assert call(raw, "XPENDING", "s", "g") == b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    call(raw, "HELLO", "3")
    assert call(raw, "XPENDING", "s", "g") == b"*4\r\n:0\r\n_\r\n_\r\n_\r\n"
    assert call(raw, "XPENDING", "s", "g", "-", "+", "10") == b"*0\r\n"


def test_xpending_extended(five, raw):
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    read(r, "g", "c2", "s", ">", "COUNT", "1")
    read(r, "g", "c1", "s", "0")  # a second delivery of 1-0 and 2-0
    reply = run(r, "XPENDING", "s", "g", "-", "+", "10")
    assert [(e[0], e[1], e[3]) for e in reply] == [(b"1-0", b"c1", 2), (b"2-0", b"c1", 2),
                                                   (b"3-0", b"c2", 1)]
    assert all(isinstance(e[2], int) and e[2] >= 0 for e in reply)
    assert pel(r, "s", "g", "c2") == [(b"3-0", b"c2", 1)]
    assert pel(r, "s", "g", "nobody") == []
    assert [e[0] for e in run(r, "XPENDING", "s", "g", "-", "+", "2")] == [b"1-0", b"2-0"]
    # Entries are [id (bulk), consumer (bulk), idle (integer), deliveries (integer)].
    run(r, "XCLAIM", "s", "g", "c2", "0", "3-0", "IDLE", "7", "JUSTID")
    wire = call(raw, "XPENDING", "s", "g", "3", "3", "1")
    assert wire.startswith(b"*1\r\n*4\r\n$3\r\n3-0\r\n$2\r\nc2\r\n:") and wire.endswith(b"\r\n:1\r\n")


@pytest.mark.parametrize(("start", "end", "expected"), [
    ("-", "+", [1, 2, 3, 4]),
    ("(1-0", "(4-0", [2, 3]),
    ("(1", "+", [2, 3, 4]),
    ("-", "(4", [1, 2, 3, 4]),  # "(4" as an end excludes only 4-UINT64_MAX
    ("2", "3", [2, 3]),
    ("+", "-", []),
    ("(0-0", f"({MAX_ID}", [1, 2, 3, 4]),
    ("5", "+", []),
])
def test_xpending_ranges(five, start, end, expected):
    read(five, "g", "c", "s", ">", "COUNT", "4")
    assert [e[0] for e in run(five, "XPENDING", "s", "g", start, end, "10")] == [
        f"{i}-0".encode() for i in expected]


@pytest.mark.parametrize("count", ["0", "-1", "-9223372036854775808"])
def test_xpending_count_zero_or_negative(five, count):
    read(five, "g", "c", "s")
    assert run(five, "XPENDING", "s", "g", "-", "+", count) == []
    assert run(five, "XPENDING", "s", "g", "IDLE", "0", "-", "+", count, "c") == []


def test_xpending_idle_filter(five):
    # stream-cgroups.tcl "XPENDING with IDLE"; idle times are set with XCLAIM IDLE, and the
    # thresholds sit far from them.
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    read(r, "g", "c2", "s", ">", "COUNT", "2")
    run(r, "XCLAIM", "s", "g", "c1", "0", "1-0", "IDLE", "600000", "JUSTID")
    run(r, "XCLAIM", "s", "g", "c2", "0", "4-0", "IDLE", "600000", "JUSTID")
    assert run(r, "XPENDING", "s", "g", "IDLE", "99999999", "-", "+", "10") == []
    assert [e[0] for e in run(r, "XPENDING", "s", "g", "IDLE", "300000", "-", "+", "10")] == [
        b"1-0", b"4-0"]
    assert [e[0] for e in run(r, "XPENDING", "s", "g", "idle", "300000", "-", "+", "10",
                              "c2")] == [b"4-0"]
    # COUNT counts the entries that pass the filter.
    assert [e[0] for e in run(r, "XPENDING", "s", "g", "IDLE", "300000", "-", "+", "1")] == [
        b"1-0"]
    for minimum in ("0", "-1"):
        assert len(run(r, "XPENDING", "s", "g", "IDLE", minimum, "-", "+", "10")) == 4
    assert run(r, "XPENDING", "s", "g", "IDLE", "300000", "(1-0", "(4-0", "10") == []


@pytest.mark.parametrize(("args", "message"), [
    (["-", "+"], "syntax error"),
    (["-"], "syntax error"),
    (["IDLE", "10"], "syntax error"),
    (["IDLE", "10", "-", "+"], "syntax error"),
    (["IDLE", "10", "-", "+", "10", "c", "extra"], "syntax error"),
    (["-", "+", "10", "c", "x", "y", "z"], "syntax error"),
    (["-", "+", "x"], NOT_INTEGER),
    (["-", "+", "9223372036854775808"], NOT_INTEGER),
    (["IDLE", "x", "-", "+", "10"], NOT_INTEGER),
    (["bad", "+", "10"], INVALID_ID),
    (["-", "bad", "10"], INVALID_ID),
    (["(", "+", "10"], INVALID_ID),
    (["(-", "+", "10"], INVALID_ID),
    (["-", "(+", "10"], INVALID_ID),
    ([f"({MAX_ID}", "+", "10"], "invalid start ID for the interval"),
    (["-", "(0-0", "10"], "invalid end ID for the interval"),
])
def test_xpending_errors(five, args, message):
    read(five, "g", "c", "s")
    assert error_of(five, "XPENDING", "s", "g", *args) == message


def test_xpending_ignores_up_to_two_extra_arguments(five):
    # Redis accepts 6 to 9 arguments and only reads the consumer at position 7 (or 9 with
    # IDLE): anything after the consumer without IDLE is ignored.
    read(five, "g", "c", "s", ">", "COUNT", "2")
    read(five, "g", "d", "s", ">", "COUNT", "1")
    assert [e[0] for e in run(five, "XPENDING", "s", "g", "-", "+", "10", "c", "junk")] == [
        b"1-0", b"2-0"]
    assert [e[0] for e in run(five, "XPENDING", "s", "g", "-", "+", "10", "d", "x", "y")] == [
        b"3-0"]
    assert [e[0] for e in run(five, "XPENDING", "s", "g", "-", "+", "9223372036854775807")] == [
        b"1-0", b"2-0", b"3-0"]


def test_xpending_nogroup_and_wrong_type(five):
    r = five
    assert error_of(r, "XPENDING", "s", "nog") == NOGROUP.format("s", "nog")
    assert error_of(r, "XPENDING", "s", "nog", "-", "+", "10") == NOGROUP.format("s", "nog")
    assert error_of(r, "XPENDING", "nokey", "g") == NOGROUP.format("nokey", "g")
    r.set("str", "x")
    assert error_of(r, "XPENDING", "str", "g") == WRONGTYPE
    assert error_of(r, "XPENDING", "str", "g", "-", "+", "10") == WRONGTYPE
    # The range is parsed first.
    assert error_of(r, "XPENDING", "str", "g", "-", "bad", "10") == INVALID_ID
    assert error_of(r, "XPENDING", "nokey", "g", "-", "+", "x") == NOT_INTEGER
    assert error_of(r, "XPENDING", "s") == "wrong number of arguments for 'xpending' command"


# ---------------------------------------------------------------------------------------------
# XCLAIM
# ---------------------------------------------------------------------------------------------


def test_xclaim_transfers_ownership(five):
    # stream-cgroups.tcl "XCLAIM can claim PEL items from another consumer" and "XCLAIM
    # without JUSTID increments delivery count".
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "3")
    assert run(r, "XCLAIM", "s", "g", "c2", "0", "1-0", "3-0", "9-0") == [entry(1), entry(3)]
    assert pel(r, "s", "g") == [(b"1-0", b"c2", 2), (b"2-0", b"c1", 1), (b"3-0", b"c2", 2)]
    assert owned(r, "s", "g") == {b"c1": 1, b"c2": 2}
    # JUSTID: IDs only, and no delivery is counted.
    assert run(r, "XCLAIM", "s", "g", "c3", "0", "1-0", "JUSTID") == [b"1-0"]
    assert pel(r, "s", "g", "c3") == [(b"1-0", b"c3", 2)]
    # Claiming for the owner itself is allowed and counts (stream-cgroups.tcl "XCLAIM same
    # consumer").
    assert run(r, "XCLAIM", "s", "g", "c3", "0", "1-0") == [entry(1)]
    assert pel(r, "s", "g", "c3") == [(b"1-0", b"c3", 3)]
    # Entries not in the PEL are ignored; the group's position does not move.
    assert run(r, "XCLAIM", "s", "g", "c3", "0", "4-0", "5-0") == []
    assert group(r, "s", "g")[b"last-delivered-id"] == b"3-0"


def test_xclaim_min_idle_time(five):
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    run(r, "XCLAIM", "s", "g", "c1", "0", "1-0", "IDLE", "500000", "JUSTID")
    assert run(r, "XCLAIM", "s", "g", "c2", "900000", "1-0", "2-0") == []
    assert run(r, "XCLAIM", "s", "g", "c2", "400000", "1-0", "2-0", "JUSTID") == [b"1-0"]
    assert pel(r, "s", "g") == [(b"1-0", b"c2", 1), (b"2-0", b"c1", 1)]
    # Claiming reset the idle time, so the same threshold now fails; a negative one is 0.
    assert run(r, "XCLAIM", "s", "g", "c3", "400000", "1-0") == []
    assert run(r, "XCLAIM", "s", "g", "c3", "-100", "1-0", "JUSTID") == [b"1-0"]


def test_xclaim_idle_time_and_retrycount_options(five):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "2")
    assert run(r, "XCLAIM", "s", "g", "c", "0", "1-0", "RETRYCOUNT", "7", "JUSTID") == [b"1-0"]
    assert pel(r, "s", "g") == [(b"1-0", b"c", 7), (b"2-0", b"c", 1)]
    # RETRYCOUNT wins over the increment; -1 means "not given".
    assert run(r, "XCLAIM", "s", "g", "c", "0", "1-0", "RETRYCOUNT", "3") == [entry(1)]
    assert run(r, "XCLAIM", "s", "g", "c", "0", "2-0", "RETRYCOUNT", "-1") == [entry(2)]
    assert pel(r, "s", "g") == [(b"1-0", b"c", 3), (b"2-0", b"c", 2)]
    # TIME sets the delivery time itself: XINFO STREAM FULL prints it.
    run(r, "XCLAIM", "s", "g", "c", "0", "1-0", "TIME", str(OLD), "JUSTID")
    assert full_groups(r, "s")[0][b"pending"][0] == [b"1-0", b"c", OLD, 3]
    before = server_ms(r)
    idle = run(r, "XPENDING", "s", "g", "1-0", "1-0", "1")[0][2]
    assert isinstance(idle, int) and idle >= before - OLD
    # Lowercase options, any order, repeats; the last IDLE/TIME wins.
    assert run(r, "XCLAIM", "s", "g", "c", "0", "1-0", "justid", "time", str(OLD + 1), "idle",
               "600000", "retrycount", "9", "FORCE", "FORCE", "JUSTID") == [b"1-0"]
    [item] = run(r, "XPENDING", "s", "g", "1-0", "1-0", "1")
    assert item[3] == 9 and 600000 <= item[2] < 10**12


@pytest.mark.parametrize("option", [
    ["TIME", "99999999999999"],  # in the future
    ["IDLE", "-5"],  # after now
    ["IDLE", "999999999999999"],  # before the epoch
])
def test_xclaim_out_of_range_times_mean_now(five, option):
    # t_stream.c: a delivery time below 0 or after now becomes now, rather than an error.
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "1")
    run(r, "XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "600000", "JUSTID")
    assert run(r, "XCLAIM", "s", "g", "c", "0", "1-0", *option, "JUSTID") == [b"1-0"]
    assert run(r, "XPENDING", "s", "g", "IDLE", "300000", "-", "+", "10") == []


def test_xclaim_force(five):
    r = five
    run(r, "XGROUP", "CREATE", "s", "h", "$")
    # FORCE makes PEL entries for stream entries nobody read, ignoring min-idle-time; the
    # new entry counts one delivery, plus one unless JUSTID.
    assert run(r, "XCLAIM", "s", "h", "c", "99999", "2-0", "FORCE") == [entry(2)]
    assert run(r, "XCLAIM", "s", "h", "c", "0", "3-0", "FORCE", "JUSTID") == [b"3-0"]
    # IDs that are not in the stream are still ignored.
    assert run(r, "XCLAIM", "s", "h", "c", "0", "9-9", "FORCE") == []
    assert pel(r, "s", "h") == [(b"2-0", b"c", 2), (b"3-0", b"c", 1)]
    info = group(r, "s", "h")
    assert (info[b"pending"], info[b"last-delivered-id"]) == (2, b"5-0")
    # On an entry already pending, FORCE changes nothing special.
    assert run(r, "XCLAIM", "s", "h", "d", "0", "2-0", "FORCE", "JUSTID") == [b"2-0"]
    assert pel(r, "s", "h") == [(b"2-0", b"d", 2), (b"3-0", b"c", 1)]


def test_xclaim_drops_deleted_entries_from_the_pel(five):
    # stream-cgroups.tcl "XCLAIM with XDEL" and "XCLAIM with trimming".
    r = five
    read(r, "g", "Alice", "s", ">", "COUNT", "4")
    r.xdel("s", "2-0")
    assert run(r, "XCLAIM", "s", "g", "Bob", "0", "1-0", "2-0", "3-0") == [entry(1), entry(3)]
    assert pel(r, "s", "g", "Alice") == [(b"4-0", b"Alice", 1)]
    assert pel(r, "s", "g") == [(b"1-0", b"Bob", 2), (b"3-0", b"Bob", 2), (b"4-0", b"Alice", 1)]
    run(r, "XTRIM", "s", "MAXLEN", "1")
    assert run(r, "XCLAIM", "s", "g", "Bob", "0", "4-0", "JUSTID") == []
    assert run(r, "XCLAIM", "s", "g", "Bob", "0", "1-0", "FORCE") == []
    assert pel(r, "s", "g") == [(b"3-0", b"Bob", 2)]
    assert run(r, "XPENDING", "s", "g")[0] == 1


def test_xclaim_lastid(five):
    r = five
    run(r, "XGROUP", "CREATE", "s", "h", "0")
    # LASTID moves the group forward only; claiming nothing still applies it.
    assert run(r, "XCLAIM", "s", "h", "c", "0", "9-9", "LASTID", "2-0") == []
    assert group(r, "s", "h")[b"last-delivered-id"] == b"2-0"
    assert run(r, "XCLAIM", "s", "h", "c", "0", "9-9", "LASTID", "1-0") == []
    assert group(r, "s", "h")[b"last-delivered-id"] == b"2-0"
    assert read(r, "h", "c", "s") == [[b"s", [entry(3), entry(4), entry(5)]]]
    assert lag(r, "s", "h") == (5, 0)


@pytest.mark.parametrize(("args", "message"), [
    (["x", "1-0"], "Invalid min-idle-time argument for XCLAIM"),
    (["1.5", "1-0"], "Invalid min-idle-time argument for XCLAIM"),
    # The first argument that is not an ID starts the options: its text is echoed.
    (["0", "bad"], "Unrecognized XCLAIM option 'bad'"),
    (["0", "1-0", "bad", "2-0"], "Unrecognized XCLAIM option 'bad'"),
    (["0", "1-0", "IDLE"], "Unrecognized XCLAIM option 'IDLE'"),
    (["0", "1-0", "justid", "lastid"], "Unrecognized XCLAIM option 'lastid'"),
    (["0", "1-0", "JUSTID", "2-0"], "Unrecognized XCLAIM option '2-0'"),
    (["0", "1-0", "IDLE", "x"], "Invalid IDLE option argument for XCLAIM"),
    (["0", "1-0", "TIME", "x"], "Invalid TIME option argument for XCLAIM"),
    (["0", "1-0", "RETRYCOUNT", "x"], "Invalid RETRYCOUNT option argument for XCLAIM"),
    (["0", "1-0", "LASTID", "bad"], INVALID_ID),
    (["0"], "wrong number of arguments for 'xclaim' command"),
])
def test_xclaim_errors(five, args, message):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "2")
    assert error_of(r, "XCLAIM", "s", "g", "d", *args) == message
    assert pel(r, "s", "g") == [(b"1-0", b"c", 1), (b"2-0", b"c", 1)]


def test_xclaim_nogroup_is_checked_first(five):
    r = five
    assert error_of(r, "XCLAIM", "s", "nog", "c", "0", "1-0") == NOGROUP.format("s", "nog")
    assert error_of(r, "XCLAIM", "nokey", "g", "c", "0", "1-0") == NOGROUP.format("nokey", "g")
    assert error_of(r, "XCLAIM", "s", "nog", "c", "x", "bad") == NOGROUP.format("s", "nog")
    r.set("str", "x")
    assert error_of(r, "XCLAIM", "str", "g", "c", "x", "1-0") == WRONGTYPE


def test_xclaim_and_xautoclaim_create_the_consumer(five, server):
    # 7.0 creates the consumer only when something is claimed; 7.2+ t_stream.c creates it
    # before claiming (and sets its seen-time) whatever the outcome.
    r = five
    assert run(r, "XCLAIM", "s", "g", "xc", "0", "9-9") == []
    assert run(r, "XAUTOCLAIM", "s", "g", "xa", "0", "0") == [b"0-0", [], []]
    expected = [b"xa", b"xc"] if server.version >= (7, 2) else []
    assert list(owned(r, "s", "g")) == expected


# ---------------------------------------------------------------------------------------------
# XAUTOCLAIM
# ---------------------------------------------------------------------------------------------


def test_xautoclaim_iterates_with_a_cursor(five):
    # stream-cgroups.tcl "XAUTOCLAIM as an iterator".
    r = five
    read(r, "g", "c1", "s")
    assert run(r, "XAUTOCLAIM", "s", "g", "c2", "0", "-", "COUNT", "2") == [
        b"3-0", [entry(1), entry(2)], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c2", "0", "3-0", "COUNT", "2") == [
        b"5-0", [entry(3), entry(4)], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c2", "0", "5-0", "COUNT", "2") == [
        b"0-0", [entry(5)], []]
    assert pel(r, "s", "g") == [(f"{i}-0".encode(), b"c2", 2) for i in range(1, 6)]
    # The start may be exclusive or incomplete; "+" and IDs past the PEL find nothing.
    assert run(r, "XAUTOCLAIM", "s", "g", "c3", "0", "(1-0", "COUNT", "1", "JUSTID") == [
        b"3-0", [b"2-0"], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c3", "0", "4", "JUSTID") == [
        b"0-0", [b"4-0", b"5-0"], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c3", "0", "+") == [b"0-0", [], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c3", "0", "6-0") == [b"0-0", [], []]
    # JUSTID did not count deliveries.
    assert pel(r, "s", "g", "c3") == [(b"2-0", b"c3", 2), (b"4-0", b"c3", 2), (b"5-0", b"c3", 2)]


def test_xautoclaim_purges_deleted_entries(five):
    # stream-cgroups.tcl "XAUTOCLAIM with XDEL", "... with XDEL and count" and "XCLAIM with
    # trimming" (the XAUTOCLAIM one): deleted entries leave the PEL and are listed third; they
    # use up COUNT.
    r = five
    read(r, "g", "Alice", "s", ">", "COUNT", "3")
    r.xdel("s", "1-0", "2-0")
    assert run(r, "XAUTOCLAIM", "s", "g", "Bob", "0", "0-0", "COUNT", "1") == [
        b"2-0", [], [b"1-0"]]
    assert run(r, "XAUTOCLAIM", "s", "g", "Bob", "0", "2-0", "COUNT", "1") == [
        b"3-0", [], [b"2-0"]]
    assert run(r, "XAUTOCLAIM", "s", "g", "Bob", "0", "3-0", "COUNT", "1") == [
        b"0-0", [entry(3)], []]
    assert pel(r, "s", "g", "Alice") == []
    read(r, "g", "Alice", "s", ">", "COUNT", "2")
    run(r, "XTRIM", "s", "MAXLEN", "1")
    # With JUSTID the deleted ones are reported the same way.
    assert run(r, "XAUTOCLAIM", "s", "g", "Bob", "0", "0-0", "JUSTID") == [
        b"0-0", [b"5-0"], [b"3-0", b"4-0"]]
    assert pel(r, "s", "g") == [(b"5-0", b"Bob", 1)]


def test_xautoclaim_min_idle_time(five):
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "3")
    run(r, "XCLAIM", "s", "g", "c1", "0", "2-0", "IDLE", "500000", "JUSTID")
    assert run(r, "XAUTOCLAIM", "s", "g", "c2", "99999999", "0") == [b"0-0", [], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c2", "400000", "0") == [b"0-0", [entry(2)], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c2", "400000", "0") == [b"0-0", [], []]
    assert run(r, "XAUTOCLAIM", "s", "g", "c2", "-5", "0", "JUSTID", "JUSTID") == [
        b"0-0", [b"1-0", b"2-0", b"3-0"], []]


@pytest.mark.parametrize(("args", "message"), [
    (["0", "0", "COUNT", "0"], COUNT_POSITIVE),
    (["0", "0", "COUNT", "-1"], COUNT_POSITIVE),
    (["0", "0", "COUNT", "x"], COUNT_POSITIVE),
    # stream-cgroups.tcl "XAUTOCLAIM with out of range count": above LONG_MAX / 16.
    (["0", "0", "COUNT", "8070450532247928833"], COUNT_POSITIVE),
    (["0", "0", "COUNT", "1152921504606846976"], COUNT_POSITIVE),
    (["0", "0", "COUNT"], "syntax error"),
    (["0", "0", "BOGUS"], "syntax error"),
    (["x", "0"], "Invalid min-idle-time argument for XAUTOCLAIM"),
    (["0", "bad"], INVALID_ID),
    (["0", "(-"], INVALID_ID),
    (["0", f"({MAX_ID}"], "invalid start ID for the interval"),
    (["0"], "wrong number of arguments for 'xautoclaim' command"),
])
def test_xautoclaim_errors(five, args, message):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "1")
    assert error_of(r, "XAUTOCLAIM", "s", "g", "d", *args) == message
    # Arguments are checked before the key and the group.
    assert error_of(r, "XAUTOCLAIM", "nokey", "nog", "d", *args) == message
    assert pel(r, "s", "g") == [(b"1-0", b"c", 1)]


def test_xautoclaim_nogroup_and_wrong_type(five):
    r = five
    assert error_of(r, "XAUTOCLAIM", "s", "nog", "c", "0", "0") == NOGROUP.format("s", "nog")
    assert error_of(r, "XAUTOCLAIM", "nokey", "g", "c", "0", "0") == NOGROUP.format("nokey", "g")
    r.set("str", "x")
    assert error_of(r, "XAUTOCLAIM", "str", "g", "c", "0", "0") == WRONGTYPE


def test_xautoclaim_raw_replies(five, raw):
    read(five, "g", "c", "s", ">", "COUNT", "2")
    five.xdel("s", "1-0")
    assert call(raw, "XAUTOCLAIM", "s", "g", "c", "0", "0") == (
        b"*3\r\n$3\r\n0-0\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n"
        b"*1\r\n$3\r\n1-0\r\n")
    call(raw, "HELLO", "3")
    assert call(raw, "XAUTOCLAIM", "s", "g", "c", "0", "0", "JUSTID") == (
        b"*3\r\n$3\r\n0-0\r\n*1\r\n$3\r\n2-0\r\n*0\r\n")


# ---------------------------------------------------------------------------------------------
# XINFO GROUPS / CONSUMERS / STREAM FULL
# ---------------------------------------------------------------------------------------------


def test_xinfo_groups(five, raw):
    r = five
    run(r, "XGROUP", "CREATE", "s", "a", "2-0")
    run(r, "XGROUP", "CREATE", "s", "z", "$")
    read(r, "g", "alice", "s", ">", "COUNT", "1")
    read(r, "g", "bob", "s", ">", "NOACK", "COUNT", "1")
    run(r, "XGROUP", "CREATECONSUMER", "s", "g", "carol")
    assert run(r, "XINFO", "GROUPS", "s") == [
        # An ID in the middle of the stream has no known position: entries-read and lag nil.
        [b"name", b"a", b"consumers", 0, b"pending", 0, b"last-delivered-id", b"2-0",
         b"entries-read", None, b"lag", None],
        [b"name", b"g", b"consumers", 3, b"pending", 1, b"last-delivered-id", b"2-0",
         b"entries-read", 2, b"lag", 3],
        # "$" is the last entry: the lag is known to be 0 though entries-read is not.
        [b"name", b"z", b"consumers", 0, b"pending", 0, b"last-delivered-id", b"5-0",
         b"entries-read", None, b"lag", 0]]
    call(raw, "HELLO", "3")
    assert call(raw, "XINFO", "GROUPS", "s").startswith(
        b"*3\r\n%6\r\n$4\r\nname\r\n$1\r\na\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n"
        b"$17\r\nlast-delivered-id\r\n$3\r\n2-0\r\n$12\r\nentries-read\r\n_\r\n$3\r\nlag\r\n_\r\n")


def test_xinfo_groups_errors(r):
    add(r, "s", 1)
    assert run(r, "XINFO", "GROUPS", "s") == []
    assert error_of(r, "XINFO", "GROUPS", "nokey") == "no such key"
    r.set("str", "x")
    assert error_of(r, "XINFO", "GROUPS", "str") == WRONGTYPE
    assert error_of(r, "XINFO", "GROUPS") == "wrong number of arguments for 'xinfo|groups' command"
    assert error_of(r, "XINFO", "GROUPS", "s", "x") == \
        "wrong number of arguments for 'xinfo|groups' command"


def test_xinfo_consumers(five, server, raw):
    r = five
    read(r, "g", "bob", "s", ">", "COUNT", "2")
    read(r, "g", "alice", "s", ">", "COUNT", "1")
    run(r, "XGROUP", "CREATECONSUMER", "s", "g", "carol")
    reply = consumers(r, "s", "g")
    assert [(c[b"name"], c[b"pending"]) for c in reply] == [
        (b"alice", 1), (b"bob", 2), (b"carol", 0)]
    assert all(list(c) == consumer_info_fields(server) for c in reply)
    assert all(isinstance(c[b"idle"], int) and c[b"idle"] >= 0 for c in reply)
    run(r, "XGROUP", "CREATE", "s", "empty", "0")
    assert consumers(r, "s", "empty") == []
    call(raw, "HELLO", "3")
    fields = len(consumer_info_fields(server))
    assert call(raw, "XINFO", "CONSUMERS", "s", "g").startswith(
        b"*3\r\n%%%d\r\n$4\r\nname\r\n$5\r\nalice\r\n$7\r\npending\r\n:1\r\n$4\r\nidle\r\n:"
        % fields)


def test_xinfo_consumers_errors(five):
    r = five
    assert error_of(r, "XINFO", "CONSUMERS", "s", "nog") == NOGROUP_XGROUP.format("nog", "s")
    assert error_of(r, "XINFO", "CONSUMERS", "nokey", "g") == "no such key"
    r.set("str", "x")
    assert error_of(r, "XINFO", "CONSUMERS", "str", "g") == WRONGTYPE
    message = "wrong number of arguments for 'xinfo|consumers' command"
    assert error_of(r, "XINFO", "CONSUMERS", "s") == message
    assert error_of(r, "XINFO", "CONSUMERS", "s", "g", "x") == message


@pytest.mark.min_redis(7, 2)
def test_xinfo_consumers_inactive(five):
    # docs xinfo-consumers.md (7.2): "inactive" counts from the last successful interaction and
    # is -1 before the first one; stream-cgroups.tcl "Consumer seen-time and active-time".
    r = five
    run(r, "XGROUP", "CREATECONSUMER", "s", "g", "fresh")
    run(r, "XGROUP", "SETID", "s", "g", "$")
    assert read(r, "g", "tried", "s") is None  # an attempt: seen, not active
    run(r, "XGROUP", "SETID", "s", "g", "0")
    read(r, "g", "reader", "s", ">", "COUNT", "1")
    info = {c[b"name"]: c for c in consumers(r, "s", "g")}
    assert info[b"fresh"][b"inactive"] == -1
    assert info[b"tried"][b"inactive"] == -1
    assert isinstance(info[b"reader"][b"inactive"], int) and info[b"reader"][b"inactive"] >= 0
    assert all(isinstance(c[b"idle"], int) and c[b"idle"] >= 0 for c in info.values())
    full = {c[b"name"]: c for c in full_groups(r, "s")[0][b"consumers"]}
    assert (full[b"fresh"][b"active-time"], full[b"tried"][b"active-time"]) == (-1, -1)
    assert full[b"reader"][b"active-time"] > OLD
    assert all(c[b"seen-time"] > OLD for c in full.values())


def test_xinfo_stream_full_groups(five, server):
    r = five
    run(r, "XGROUP", "CREATE", "s", "h", "$")
    read(r, "g", "alice", "s", ">", "COUNT", "2")
    read(r, "g", "bob", "s", ">", "COUNT", "1")
    run(r, "XGROUP", "CREATECONSUMER", "s", "g", "carol")
    # Known delivery times, so the PEL parts can be compared whole.
    run(r, "XCLAIM", "s", "g", "alice", "0", "1-0", "2-0", "TIME", str(OLD), "JUSTID")
    run(r, "XCLAIM", "s", "g", "bob", "0", "3-0", "TIME", str(OLD + 5), "RETRYCOUNT", "4",
        "JUSTID")
    info = full_groups(r, "s")
    assert [[k for k in g if k != b"nacked-count"] for g in info] == [FULL_GROUP_FIELDS] * 2
    g, h = info
    assert (g[b"name"], g[b"last-delivered-id"], g[b"entries-read"], g[b"lag"],
            g[b"pel-count"]) == (b"g", b"3-0", 3, 2, 3)
    assert g[b"pending"] == [[b"1-0", b"alice", OLD, 1], [b"2-0", b"alice", OLD, 1],
                             [b"3-0", b"bob", OLD + 5, 4]]
    assert [c[b"name"] for c in g[b"consumers"]] == [b"alice", b"bob", b"carol"]
    assert all(list(c) == full_consumer_fields(server) for c in g[b"consumers"])
    assert [(c[b"pel-count"], c[b"pending"]) for c in g[b"consumers"]] == [
        (2, [[b"1-0", OLD, 1], [b"2-0", OLD, 1]]), (1, [[b"3-0", OLD + 5, 4]]), (0, [])]
    assert all(isinstance(c[b"seen-time"], int) and c[b"seen-time"] > OLD
               for c in g[b"consumers"])
    assert (h[b"name"], h[b"last-delivered-id"], h[b"entries-read"], h[b"lag"], h[b"pel-count"],
            h[b"pending"], h[b"consumers"]) == (b"h", b"5-0", None, 0, 0, [], [])
    if server.version >= (8, 8):  # stream-cgroups.tcl XNACK tests: "nacked-count" per group
        assert (g[b"nacked-count"], h[b"nacked-count"]) == (0, 0)
    # COUNT limits the stream entries and each PEL list alike; 0 means everything.
    limited = full_groups(r, "s", "COUNT", "1")[0]
    assert limited[b"pending"] == [[b"1-0", b"alice", OLD, 1]]
    assert limited[b"pel-count"] == 3
    assert limited[b"consumers"][0][b"pending"] == [[b"1-0", OLD, 1]]
    assert len(full_groups(r, "s", "COUNT", "0")[0][b"pending"]) == 3
    assert as_dict(run(r, "XINFO", "STREAM", "s"))[b"groups"] == 2


def test_xinfo_stream_full_resp3(five, r3):
    read(five, "g", "c", "s", ">", "COUNT", "1")
    run(five, "XCLAIM", "s", "g", "c", "0", "1-0", "TIME", str(OLD), "JUSTID")
    info = run(r3, "XINFO", "STREAM", "s", "FULL")
    assert isinstance(info, dict)
    [g] = info[b"groups"]
    assert isinstance(g, dict) and g[b"pending"] == [[b"1-0", b"c", OLD, 1]]
    assert g[b"entries-read"] == 1
    [c] = g[b"consumers"]
    assert isinstance(c, dict) and c[b"pending"] == [[b"1-0", OLD, 1]]
    run(five, "XGROUP", "CREATE", "s", "h", "2-0")
    assert run(r3, "XINFO", "GROUPS", "s")[1] == {
        b"name": b"h", b"consumers": 0, b"pending": 0, b"last-delivered-id": b"2-0",
        b"entries-read": None, b"lag": None}


# ---------------------------------------------------------------------------------------------
# entries-read and lag
# ---------------------------------------------------------------------------------------------


def test_lag_sanity(five):
    # stream-cgroups.tcl "Consumer group read counter and lag sanity".
    r = five
    assert lag(r, "s", "g") == (None, 5)
    read(r, "g", "c11", "s", ">", "COUNT", "1")
    assert lag(r, "s", "g") == (1, 4)
    read(r, "g", "c12", "s", ">", "COUNT", "10")
    assert lag(r, "s", "g") == (5, 0)
    add(r, "s", 6)
    assert lag(r, "s", "g") == (5, 1)


def test_lag_in_empty_streams(r):
    # stream-cgroups.tcl "Consumer group read counter and lag in empty streams".
    run(r, "XGROUP", "CREATE", "x", "g1", "0", "MKSTREAM")
    assert lag(r, "x", "g1") == (None, 0)
    run(r, "XADD", "x", "1-0", "data", "a")
    r.xdel("x", "1-0")
    assert lag(r, "x", "g1") == (None, 0)


def test_lag_with_xdel(r):
    # stream-cgroups.tcl "Consumer group lag with XDELs".
    add(r, "x", 1, 2, 3, 4, 5)
    r.xdel("x", "3-0")
    run(r, "XGROUP", "CREATE", "x", "g1", "0")
    run(r, "XGROUP", "CREATE", "x", "g2", "0")
    assert lag(r, "x", "g1") == (None, None)
    for _ in range(3):
        read(r, "g1", "c11", "x", ">", "COUNT", "1")
        assert lag(r, "x", "g1") == (None, None)
    read(r, "g1", "c11", "x", ">", "COUNT", "1")
    assert lag(r, "x", "g1") == (5, 0)
    add(r, "x", 6)
    assert lag(r, "x", "g1") == (5, 1)
    run(r, "XTRIM", "x", "MINID", "=", "3-0")
    assert (lag(r, "x", "g1"), lag(r, "x", "g2")) == ((5, 1), (None, 3))
    run(r, "XTRIM", "x", "MINID", "=", "5-0")
    assert (lag(r, "x", "g1"), lag(r, "x", "g2")) == ((5, 1), (None, 2))


def test_lag_of_a_group_before_the_first_entry(r):
    # With no tombstone after the first entry, a group at 0-0 knows how far behind it is.
    add(r, "x", 1, 2, 3)
    r.xdel("x", "1-0")
    run(r, "XGROUP", "CREATE", "x", "g", "0")
    assert lag(r, "x", "g") == (None, 2)
    # A position past the last ID is unknown.
    run(r, "XGROUP", "SETID", "x", "g", "99-0")
    assert lag(r, "x", "g") == (None, None)
    run(r, "XGROUP", "SETID", "x", "g", "$")
    assert lag(r, "x", "g") == (None, 0)


def test_lag_with_a_tombstone_after_the_last_id(r, server):
    # stream-cgroups.tcl "Consumer Group Lag with XDELs and tombstone after the last_id of
    # consume group"; Redis 7.0 answered 2, (2, 1) before PR #13338 (merged 2024-06).
    run(r, "XGROUP", "CREATE", "x", "g1", "$", "MKSTREAM")
    add(r, "x", 1)
    read(r, "g1", "alice", "x")
    add(r, "x", 2, 3)
    r.xdel("x", "2-0")
    assert lag(r, "x", "g1") == (1, None)
    r.xdel("x", "1-0")
    fixed = server.version >= (8, 0)
    assert lag(r, "x", "g1") == (1, 1 if fixed else 2)
    read(r, "g1", "alice", "x")
    assert lag(r, "x", "g1") == ((3, 0) if fixed else (2, 1))


def test_lag_with_xtrim(r, server):
    # stream-cgroups.tcl "Consumer group lag with XTRIM"; Redis 7.0 kept the stale counter
    # (values in the else branches) before PRs #13473 and #13958 (merged 2024-08, 2025-04).
    fixed = server.version >= (8, 0)
    run(r, "XGROUP", "CREATE", "x", "mygroup", "$", "MKSTREAM")
    add(r, "x", 1, 2, 3, 4, 5)
    read(r, "mygroup", "alice", "x", ">", "COUNT", "1")
    assert lag(r, "x", "mygroup") == (1, 4)
    run(r, "XTRIM", "x", "MAXLEN", "1")
    assert as_dict(run(r, "XINFO", "STREAM", "x"))[b"max-deleted-entry-id"] == b"0-0"
    assert lag(r, "x", "mygroup") == (1, 1 if fixed else 4)
    read(r, "mygroup", "alice", "x")
    assert lag(r, "x", "mygroup") == ((5, 0) if fixed else (2, 3))
    add(r, "x", 6)
    assert lag(r, "x", "mygroup") == ((5, 1) if fixed else (2, 4))
    run(r, "XTRIM", "x", "MAXLEN", "0")
    assert lag(r, "x", "mygroup")[1] == (0 if fixed else 4)


def test_entriesread_option(r, server):
    # stream-cgroups.tcl "XGROUP CREATE: with ENTRIESREAD parameter". Redis 7.0 took any value
    # and reported a negative lag; later Redis caps it at entries-added (stream-cgroups.tcl
    # "XGROUP CREATE/SETID with ENTRIESREAD larger than stream entries should cap the value",
    # issue #14257; the exact 8.2 patch release is not verified).
    capped = server.version >= (8, 2)
    for i in range(1, 5):
        run(r, "XADD", "x", f"1-{i}", "f", str(i))
    run(r, "XGROUP", "CREATE", "x", "g0", "$", "ENTRIESREAD", "0")
    run(r, "XGROUP", "CREATE", "x", "g3", "$", "ENTRIESREAD", "3")
    run(r, "XGROUP", "CREATE", "x", "big", "$", "ENTRIESREAD", "9999")
    run(r, "XGROUP", "CREATE", "x", "mid", "1-2", "ENTRIESREAD", "2")
    run(r, "XGROUP", "CREATE", "x", "unknown", "1-2", "ENTRIESREAD", "-1")
    assert lag(r, "x", "g0") == (0, 4)
    assert lag(r, "x", "g3") == (3, 1)
    assert lag(r, "x", "big") == ((4, 0) if capped else (9999, -9995))
    assert lag(r, "x", "mid") == (2, 2)
    assert lag(r, "x", "unknown") == (None, None)
    # Reads count on from the given value.
    read(r, "mid", "c", "x")
    assert lag(r, "x", "mid") == (4, 0)
    run(r, "XGROUP", "SETID", "x", "mid", "1-1", "ENTRIESREAD", "1")
    assert lag(r, "x", "mid") == (1, 3)
    run(r, "XGROUP", "SETID", "x", "mid", "0", "ENTRIESREAD", "-1")
    assert lag(r, "x", "mid") == (None, 4)
    run(r, "XGROUP", "SETID", "x", "mid", "$", "ENTRIESREAD", "99")
    assert lag(r, "x", "mid") == ((4, 0) if capped else (99, -95))


# ---------------------------------------------------------------------------------------------
# The key's life: DEL, FLUSHDB, SET, RENAME, COPY, trimming
# ---------------------------------------------------------------------------------------------


def test_deleting_the_key_drops_its_groups(five):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "2")
    r.delete("s")
    assert error_of(r, "XPENDING", "s", "g") == NOGROUP.format("s", "g")
    assert error_of(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == \
        NOGROUP_READ.format("s", "g")
    add(r, "s", 7)
    assert groups(r, "s") == []
    run(r, "XGROUP", "CREATE", "s", "g", "0")
    assert consumers(r, "s", "g") == []
    assert run(r, "XPENDING", "s", "g") == [0, None, None, None]
    assert read(r, "g", "c", "s") == [[b"s", [entry(7)]]]
    # Overwriting with another type drops them as well.
    r.set("s", "x")
    r.delete("s")
    run(r, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert lag(r, "s", "g") == (None, 0)
    assert consumers(r, "s", "g") == []


def test_flushdb_drops_groups(five):
    r = five
    read(r, "g", "c", "s")
    r.flushdb()
    run(r, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    assert groups(r, "s") == [{b"name": b"g", b"consumers": 0, b"pending": 0,
                               b"last-delivered-id": b"0-0", b"entries-read": None, b"lag": 0}]


def test_expiry_drops_groups(five):
    r = five
    read(r, "g", "c", "s")
    assert r.pexpireat("s", 1) is True  # a time in the past deletes at once
    assert r.exists("s") == 0
    run(r, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    assert consumers(r, "s", "g") == []


def test_rename_keeps_groups(five):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "1")
    assert r.rename("s", "t") is True
    assert run(r, "XPENDING", "t", "g") == [1, b"1-0", b"1-0", [[b"c", b"1"]]]
    assert error_of(r, "XPENDING", "s", "g") == NOGROUP.format("s", "g")
    assert read(r, "g", "c", "t", ">", "COUNT", "1") == [[b"t", [entry(2)]]]
    assert lag(r, "t", "g") == (2, 3)
    # Renaming over a stream with groups replaces them.
    add(r, "u", 1)
    run(r, "XGROUP", "CREATE", "u", "other", "0")
    r.rename("u", "t")
    assert [g[b"name"] for g in groups(r, "t")] == [b"other"]


def test_copy_copies_groups_independently(five):
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "1")
    assert r.copy("s", "d") is True
    assert read(r, "g", "c", "d", ">", "COUNT", "1") == [[b"d", [entry(2)]]]
    run(r, "XACK", "d", "g", "1-0")
    run(r, "XGROUP", "CREATECONSUMER", "d", "g", "extra")
    assert run(r, "XPENDING", "s", "g") == [1, b"1-0", b"1-0", [[b"c", b"1"]]]
    assert run(r, "XPENDING", "d", "g") == [1, b"2-0", b"2-0", [[b"c", b"1"]]]
    assert (lag(r, "s", "g"), lag(r, "d", "g")) == ((1, 4), (2, 3))
    assert list(owned(r, "s", "g")) == [b"c"]
    run(r, "XGROUP", "DESTROY", "d", "g")
    assert [g[b"name"] for g in groups(r, "s")] == [b"g"]
    assert read(r, "g", "c", "s", "0") == [[b"s", [entry(1)]]]


def test_trimming_keeps_pel_references(five):
    # Without a policy (and before Redis 8.2), trimming and XDEL leave the PEL alone
    # (docs xadd.md: KEEPREF is the default).
    r = five
    read(r, "g", "c", "s", ">", "COUNT", "4")
    run(r, "XADD", "s", "MAXLEN", "2", "6-0", "f", "v6")
    assert r.xlen("s") == 2
    assert run(r, "XPENDING", "s", "g") == [4, b"1-0", b"4-0", [[b"c", b"4"]]]
    assert read(r, "g", "c", "s") == [[b"s", [entry(5), entry(6)]]]
    assert read(r, "g", "c", "s", "2-0") == [[b"s", [[b"3-0", None], [b"4-0", None], entry(5),
                                                    entry(6)]]]


# ---------------------------------------------------------------------------------------------
# KEEPREF / DELREF / ACKED with groups, XACKDEL (Redis 8.2)
# ---------------------------------------------------------------------------------------------


def two_groups_read_both(r: redis.Redis) -> None:
    """mystream with 1-0 and 2-0, read by group1/consumer1 and group2/consumer2 (the setup of
    the stream-cgroups.tcl XACKDEL tests and the stream.tcl XDELEX tests)."""
    run(r, "XADD", "mystream", "1-0", "f", "v")
    run(r, "XADD", "mystream", "2-0", "f", "v")
    run(r, "XGROUP", "CREATE", "mystream", "group1", "0")
    run(r, "XGROUP", "CREATE", "mystream", "group2", "0")
    read(r, "group1", "consumer1", "mystream")
    read(r, "group2", "consumer2", "mystream")


@pytest.mark.min_redis(8, 2)
def test_xackdel_keepref(r):
    # stream-cgroups.tcl "XACKDEL with KEEPREF".
    two_groups_read_both(r)
    assert run(r, "XACKDEL", "mystream", "group1", "KEEPREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert r.xlen("mystream") == 0
    assert run(r, "XPENDING", "mystream", "group1") == EMPTY_PEL
    assert run(r, "XPENDING", "mystream", "group2") == [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]
    assert run(r, "XACKDEL", "mystream", "group2", "KEEPREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert run(r, "XPENDING", "mystream", "group2") == EMPTY_PEL


@pytest.mark.min_redis(8, 2)
def test_xackdel_default_policy_is_keepref(r):
    # docs xackdel.md: "If no option is specified, KEEPREF is used by default".
    two_groups_read_both(r)
    assert run(r, "XACKDEL", "mystream", "group1", "IDS", "1", "1-0") == [1]
    assert run(r, "XPENDING", "mystream", "group2")[0] == 2
    assert run(r, "XRANGE", "mystream", "-", "+") == [[b"2-0", [b"f", b"v"]]]


@pytest.mark.min_redis(8, 2)
def test_xackdel_delref(r):
    # stream-cgroups.tcl "XACKDEL with DELREF option acknowledges will remove entry from all
    # PELs".
    two_groups_read_both(r)
    assert run(r, "XACKDEL", "mystream", "group1", "DELREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert r.xlen("mystream") == 0
    assert run(r, "XPENDING", "mystream", "group1") == EMPTY_PEL
    assert run(r, "XPENDING", "mystream", "group2") == EMPTY_PEL
    assert run(r, "XACKDEL", "mystream", "group2", "DELREF", "IDS", "2", "1-0", "2-0") == [-1, -1]


@pytest.mark.min_redis(8, 2)
def test_xackdel_acked(r):
    # stream-cgroups.tcl "XACKDEL with ACKED option only deletes messages acknowledged by all
    # groups": 2 = acknowledged here but still referenced elsewhere.
    two_groups_read_both(r)
    assert run(r, "XACKDEL", "mystream", "group1", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    assert r.xlen("mystream") == 2
    assert run(r, "XPENDING", "mystream", "group1") == EMPTY_PEL
    assert run(r, "XPENDING", "mystream", "group2") == [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]
    assert run(r, "XACKDEL", "mystream", "group2", "ACKED", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert r.xlen("mystream") == 0


@pytest.mark.min_redis(8, 2)
def test_xackdel_missing_key_or_group(r):
    # stream-cgroups.tcl "XACKDEL should return empty array when key doesn't exist or group
    # doesn't exist" and "... IDs exceeding STREAMID_STATIC_VECTOR_LEN".
    assert run(r, "XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]
    run(r, "XADD", "s", "1-0", "f", "v")
    assert run(r, "XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]
    run(r, "XGROUP", "CREATE", "s", "g", "$")
    ids = [f"{i}-1" for i in range(50)]
    assert run(r, "XACKDEL", "s", "g", "IDS", "50", *ids) == [-1] * 50
    assert r.xlen("s") == 1


@pytest.mark.min_redis(8, 2)
@pytest.mark.parametrize(("args", "message"), [
    # stream-cgroups.tcl "XACKDEL IDS parameter validation" and "KEEPREF/DELREF/ACKED
    # parameter validation".
    (["IDS", "abc", "1-1"], "Number of IDs must be a positive integer"),
    (["IDS", "0", "1-1"], "Number of IDs must be a positive integer"),
    (["IDS", "-5", "1-1"], "Number of IDs must be a positive integer"),
    (["IDS", "3", "1-1", "2-2"], "The `numids` parameter must match the number of arguments"),
    (["IDS", "1", "1-1", "2-2"], "syntax error"),
    (["KEEPREF", "DELREF", "IDS", "1", "1-1"], "syntax error"),
    (["KEEPREF", "ACKED", "IDS", "1", "1-1"], "syntax error"),
    (["DELREF", "ACKED", "IDS", "1", "1-1"], "syntax error"),
])
def test_xackdel_errors(r, args, message):
    run(r, "XADD", "s", "1-0", "f", "v")
    run(r, "XGROUP", "CREATE", "s", "g", "0")
    assert error_of(r, "XACKDEL", "s", "g", *args) == message


@pytest.mark.min_redis(8, 2)
def test_xackdel_arity(r):
    # stream-cgroups.tcl "XACKDEL wrong number of args".
    for args in ([], ["s"], ["s", "g"]):
        assert error_of(r, "XACKDEL", *args) == "wrong number of arguments for 'xackdel' command"


@pytest.mark.min_redis(8, 2)
def test_xdelex_policies_with_groups(r):
    # stream.tcl "XDELEX with KEEPREF" and "XDELEX with DELREF option acknowledges will remove
    # entry from all PELs".
    two_groups_read_both(r)
    assert run(r, "XDELEX", "mystream", "KEEPREF", "IDS", "1", "1-0") == [1]
    assert run(r, "XPENDING", "mystream", "group1") == [2, b"1-0", b"2-0", [[b"consumer1", b"2"]]]
    assert run(r, "XDELEX", "mystream", "DELREF", "IDS", "1", "2-0") == [1]
    assert r.xlen("mystream") == 0
    assert run(r, "XPENDING", "mystream", "group1") == [1, b"1-0", b"1-0", [[b"consumer1", b"1"]]]
    assert run(r, "XPENDING", "mystream", "group2") == [1, b"1-0", b"1-0", [[b"consumer2", b"1"]]]


@pytest.mark.min_redis(8, 2)
def test_xdelex_acked_waits_for_every_group(r):
    # stream.tcl "XDELEX with ACKED option only deletes messages acknowledged by all groups":
    # a group that has not read an entry yet also holds it.
    run(r, "XADD", "mystream", "1-0", "f", "v")
    run(r, "XADD", "mystream", "2-0", "f", "v")
    for name in ("group1", "group2", "group3"):
        run(r, "XGROUP", "CREATE", "mystream", name, "0")
    read(r, "group1", "consumer1", "mystream")
    read(r, "group2", "consumer2", "mystream")
    run(r, "XACK", "mystream", "group1", "1-0", "2-0")
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    run(r, "XACK", "mystream", "group2", "1-0", "2-0")
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    read(r, "group3", "consumer3", "mystream")
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    assert r.xlen("mystream") == 2
    run(r, "XACK", "mystream", "group3", "1-0", "2-0")
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert r.xlen("mystream") == 0


@pytest.mark.min_redis(8, 2)
def test_xdelex_acked_and_a_new_group(r):
    # stream.tcl "XDELEX with ACKED option won't delete messages when new consumer groups are
    # created".
    add(r, "mystream", 1, 2, 3)
    run(r, "XGROUP", "CREATE", "mystream", "group1", "0")
    read(r, "group1", "consumer1", "mystream")
    assert run(r, "XACK", "mystream", "group1", "1-0", "2-0", "3-0") == 3
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "1", "1-0") == [1]
    run(r, "XGROUP", "CREATE", "mystream", "group2", "0")
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "1", "2-0") == [2]
    read(r, "group2", "consumer1", "mystream")
    assert run(r, "XACK", "mystream", "group2", "2-0", "3-0") == 2
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "2", "2-0", "3-0") == [1, 1]


@pytest.mark.min_redis(8, 2)
def test_xgroup_destroy_releases_acked_references(r):
    # stream-cgroups.tcl "XGROUP DESTROY removes all consumer group references" and "XGROUP
    # DESTROY correctly manage min_cgroup_last_id cache".
    for j in range(5):
        run(r, "XADD", "mystream", f"{j}-1", "item", str(j))
    run(r, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    read(r, "mygroup", "consumer1", "mystream")
    ids = [f"{j}-1" for j in range(5)]
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "5", *ids) == [2] * 5
    run(r, "XGROUP", "DESTROY", "mystream", "mygroup")
    assert run(r, "XDELEX", "mystream", "ACKED", "IDS", "5", *ids) == [1] * 5
    assert r.xlen("mystream") == 0
    add(r, "other", 1, 2, 3, 4, 5)
    run(r, "XGROUP", "CREATE", "other", "group1", "1-0")
    run(r, "XGROUP", "CREATE", "other", "group2", "3-0")
    assert run(r, "XDELEX", "other", "ACKED", "IDS", "1", "1-0") == [1]
    assert run(r, "XDELEX", "other", "ACKED", "IDS", "1", "2-0") == [2]
    run(r, "XGROUP", "DESTROY", "other", "group1")
    assert run(r, "XDELEX", "other", "ACKED", "IDS", "1", "2-0") == [1]


@pytest.mark.min_redis(8, 2)
def test_xadd_acked_and_delref_with_groups(r):
    # stream.tcl "XADD with MAXLEN option and ACKED option" and "... and DELREF option".
    add(r, "mystream", 1, 2, 3, 4, 5)
    run(r, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    run(r, "XADD", "mystream", "MAXLEN", "=", "1", "ACKED", "6-0", "f", "v")
    assert r.xlen("mystream") == 6  # nothing read yet: nothing may go
    read(r, "mygroup", "consumer1", "mystream", ">", "COUNT", "1")
    run(r, "XACK", "mystream", "mygroup", "1-0")
    run(r, "XADD", "mystream", "MAXLEN", "=", "1", "ACKED", "7-0", "f", "v")
    assert r.xlen("mystream") == 6
    reply = read(r, "mygroup", "consumer1", "mystream")
    run(r, "XACK", "mystream", "mygroup", *[e[0] for e in reply[0][1]])
    run(r, "XADD", "mystream", "MAXLEN", "=", "1", "ACKED", "*", "f", "v")
    assert r.xlen("mystream") == 1
    r.delete("mystream")
    add(r, "mystream", 1, 2, 3, 4, 5)
    run(r, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    read(r, "mygroup", "consumer1", "mystream", ">", "COUNT", "1")
    run(r, "XADD", "mystream", "MAXLEN", "=", "1", "DELREF", "*", "f", "v")
    assert r.xlen("mystream") == 1
    assert run(r, "XPENDING", "mystream", "mygroup") == EMPTY_PEL


@pytest.mark.min_redis(8, 2)
def test_xtrim_approx_acked_and_delref(r, set_config):
    # stream.tcl "XTRIM with approx and ACKED deletes entries correctly" and "... DELREF ...":
    # with ACKED, a node holding an unacked entry is skipped, not a stop.
    set_config("stream-node-max-entries", 2)
    add(r, "mystream", 1, 2, 3, 4, 5)
    run(r, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    read(r, "mygroup", "consumer1", "mystream")
    run(r, "XACK", "mystream", "mygroup", "1-0", "2-0", "4-0")
    assert run(r, "XTRIM", "mystream", "MINID", "~", "6-0", "ACKED") == 3
    assert run(r, "XRANGE", "mystream", "-", "+") == [[b"3-0", [b"f", b"v3"]],
                                                      [b"5-0", [b"f", b"v5"]]]
    r.delete("mystream")
    add(r, "mystream", 1, 2, 3, 4)
    run(r, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    read(r, "mygroup", "consumer1", "mystream")
    assert run(r, "XTRIM", "mystream", "MINID", "~", "5-0", "DELREF") == 4
    assert r.xlen("mystream") == 0
    assert run(r, "XPENDING", "mystream", "mygroup") == EMPTY_PEL


# ---------------------------------------------------------------------------------------------
# XREADGROUP CLAIM (Redis 8.4)
# ---------------------------------------------------------------------------------------------


def claim_read(r: redis.Redis, consumer: str, min_idle: str, *options: str,
               key: str = "s") -> list[list[object]]:
    """XREADGROUP GROUP g consumer [options] CLAIM min_idle STREAMS key >: the entries."""
    reply = run(r, "XREADGROUP", "GROUP", "g", consumer, *options, "CLAIM", min_idle,
                "STREAMS", key, ">")
    assert isinstance(reply, list) and len(reply) == 1 and reply[0][0] == key.encode()
    return reply[0][1]


def claimed(item: list[object], index: int, count: int) -> None:
    """A claimed entry: [id, fields, idle ms, deliveries before this claim]."""
    assert item[:2] == entry(index)
    assert isinstance(item[2], int) and item[2] >= 0
    assert item[3] == count


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_reply_shape(five, raw):
    # stream-cgroups.tcl "XREADGROUP CLAIM with min-idle-time equal to zero", "... message
    # response format" and "... field types are correct": claimed entries first with their
    # idle time and previous delivery count, then new entries with 0 and 0.
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    items = claim_read(r, "c2", "0", "COUNT", "3")
    claimed(items[0], 1, 1)
    claimed(items[1], 2, 1)
    assert items[2] == entry(3) + [0, 0]
    assert pel(r, "s", "g") == [(b"1-0", b"c2", 2), (b"2-0", b"c2", 2), (b"3-0", b"c2", 1)]
    assert owned(r, "s", "g") == {b"c1": 0, b"c2": 3}
    wire = call(raw, "XREADGROUP", "GROUP", "g", "c3", "COUNT", "1", "CLAIM", "0", "STREAMS",
                "s", ">")
    assert wire.startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n"
                           b"$2\r\nv1\r\n:") and wire.endswith(b"\r\n:2\r\n")


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_new_entries_from_full_nodes(r):
    # Every new entry of a CLAIM read has its own [id, fields, 0, 0], also when it comes from
    # a full (sealed) node and several fields.
    for i in range(1, 251):
        run(r, "XADD", "s", f"{i}-0", "a", str(i), "b", "x")
    run(r, "XGROUP", "CREATE", "s", "g", "0")
    reply = run(r, "XREADGROUP", "GROUP", "g", "c", "COUNT", "220", "CLAIM", "5", "STREAMS",
                "s", ">")
    assert reply[0][1] == [[f"{i}-0".encode(), [b"a", str(i).encode(), b"b", b"x"], 0, 0]
                           for i in range(1, 221)]


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_takes_the_longest_idle_first(five):
    # stream-cgroups.tcl "XREADGROUP CLAIM verify claiming order" (delivery times set with
    # XCLAIM TIME, as there).
    r = five
    read(r, "g", "c1", "s")
    now = server_ms(r)
    # 5-0 keeps the time of the read: far below both thresholds however slow the test runs.
    for i, back in ((1, 200000), (2, 500000), (3, 400000), (4, 20000)):
        run(r, "XCLAIM", "s", "g", "c1", "0", f"{i}-0", "TIME", str(now - back), "JUSTID")
    assert [e[0] for e in claim_read(r, "c2", "100000", "COUNT", "10")] == [
        b"2-0", b"3-0", b"1-0"]
    assert [e[0] for e in claim_read(r, "c2", "10000", "COUNT", "10")] == [b"4-0"]
    assert run(r, "XREADGROUP", "GROUP", "g", "c2", "CLAIM", "9223372036854775807", "STREAMS",
               "s", ">") is None


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_count_covers_both_parts(five):
    # docs xreadgroup.md "The CLAIM option": COUNT bounds claimed and new entries together;
    # stream-cgroups.tcl "XREADGROUP CLAIM with COUNT limit" / "... with different position".
    # Entries delivered within the same millisecond have no defined claim order (a time index
    # in 8.4, a list in 8.6+), so only the split between claimed and new entries is checked.
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    assert [e[0] for e in claim_read(r, "c2", "0", "COUNT", "1")] == [b"1-0"]
    second = claim_read(r, "c2", "0", "COUNT", "3")
    assert sorted(e[0] for e in second[:2]) == [b"1-0", b"2-0"]
    assert second[2] == entry(3) + [0, 0]
    # CLAIM may come before GROUP, and more than once.
    reply = run(r, "XREADGROUP", "CLAIM", "0", "GROUP", "g", "c3", "COUNT", "10", "CLAIM", "0",
                "STREAMS", "s", ">")
    items = reply[0][1]
    assert sorted(e[0] for e in items[:3]) == [b"1-0", b"2-0", b"3-0"]
    assert items[3:] == [entry(4) + [0, 0], entry(5) + [0, 0]]
    assert pel(r, "s", "g", "c3") == [(b"1-0", b"c3", 4), (b"2-0", b"c3", 3), (b"3-0", b"c3", 2),
                                      (b"4-0", b"c3", 1), (b"5-0", b"c3", 1)]


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_with_noack(five):
    # stream-cgroups.tcl "XREADGROUP CLAIM with NOACK and pending messages": NOACK keeps new
    # entries out of the PEL but claimed ones stay pending.
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "1")
    assert [e[0] for e in claim_read(r, "c1", "0", "NOACK", "COUNT", "2")] == [b"1-0", b"2-0"]
    assert pel(r, "s", "g") == [(b"1-0", b"c1", 2)]
    assert [e[0] for e in claim_read(r, "c1", "0", "NOACK")] == [b"1-0", b"3-0", b"4-0", b"5-0"]
    assert pel(r, "s", "g") == [(b"1-0", b"c1", 3)]


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_is_ignored_for_history_reads(five):
    # stream-cgroups.tcl "XREADGROUP CLAIM with specific ID": plain two-element entries.
    read(five, "g", "c1", "s", ">", "COUNT", "2")
    assert run(five, "XREADGROUP", "GROUP", "g", "c1", "CLAIM", "0", "STREAMS", "s", "0") == [
        [b"s", [entry(1), entry(2)]]]


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_skips_deleted_and_dropped_entries(five):
    # stream-cgroups.tcl "XREADGROUP CLAIM when pending messages get trimmed" and "... after
    # consumer deleted with pending messages".
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    read(r, "g", "c2", "s", ">", "COUNT", "1")
    run(r, "XGROUP", "DELCONSUMER", "s", "g", "c2")
    run(r, "XTRIM", "s", "MINID", "2")
    # 1-0 is gone from the stream and 3-0 from the PEL: 2-0 is claimed, then 4-0 and 5-0 new.
    assert [e[0] for e in claim_read(r, "c3", "0")] == [b"2-0", b"4-0", b"5-0"]


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_several_streams(r):
    # stream-cgroups.tcl "XREADGROUP CLAIM with multiple streams".
    for key, first in (("a", 1), ("b", 3)):
        add(r, key, first, first + 1)
        run(r, "XGROUP", "CREATE", key, "g", "0")
    run(r, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "a", "b", ">", ">")
    reply = run(r, "XREADGROUP", "GROUP", "g", "c1", "CLAIM", "0", "STREAMS", "a", "b", ">",
                ">")
    assert [(k, [(e[0], e[3]) for e in items]) for k, items in reply] == [
        (b"a", [(b"1-0", 1), (b"2-0", 0)]), (b"b", [(b"3-0", 1), (b"4-0", 0)])]


@pytest.mark.min_redis(8, 4)
def test_xreadgroup_claim_errors(five):
    # stream-cgroups.tcl "XREADGROUP CLAIM with not integer / negative integer for
    # min-idle-time", "... with different position" and "XREAD with CLAIM option". Those
    # tests match the texts by prefix only, so that is all this checks.
    r = five
    for value in ("test", "5.5", "+10", "-0", "10e"):
        message = error_of(r, "XREADGROUP", "GROUP", "g", "c", "CLAIM", value, "STREAMS", "s",
                           ">")
        assert message.startswith("min-idle-time is not an integer"), value
    for value in ("-10", "-42"):
        message = error_of(r, "XREADGROUP", "GROUP", "g", "c", "CLAIM", value, "STREAMS", "s",
                           ">")
        assert message.startswith("min-idle-time must be a positive integer"), value
    assert error_of(r, "XREADGROUP", "GROUP", "g", "CLAIM", "50", "c", "STREAMS", "s", ">") == \
        "syntax error"
    assert error_of(r, "XREAD", "COUNT", "2", "CLAIM", "10", "STREAMS", "s", "0").startswith(
        "The CLAIM option is only supported")
    assert run(r, "XPENDING", "s", "g") == EMPTY_PEL


# ---------------------------------------------------------------------------------------------
# XNACK (Redis 8.8)
# ---------------------------------------------------------------------------------------------


@pytest.mark.min_redis(8, 8)
def test_xnack_modes(five):
    # stream-cgroups.tcl "XNACK SILENT mode delivery_count behavior", "... FAIL mode keeps
    # delivery_count unchanged", "... FATAL mode sets delivery_count to max": a released entry
    # has no owner (empty name) and an idle time of -1.
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "3")
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0") == 1
    assert run(r, "XNACK", "s", "g", "SILENT", "IDS", "1", "2-0") == 1
    assert run(r, "XNACK", "s", "g", "FATAL", "IDS", "1", "3-0") == 1
    assert run(r, "XPENDING", "s", "g", "-", "+", "10") == [
        [b"1-0", b"", -1, 1], [b"2-0", b"", -1, 0], [b"3-0", b"", -1, LLONG_MAX]]
    # SILENT stops at 0; it counts down from higher values.
    assert run(r, "XNACK", "s", "g", "SILENT", "IDS", "1", "2-0") == 1
    for _ in range(3):
        run(r, "XCLAIM", "s", "g", "c1", "0", "1-0")
    assert run(r, "XNACK", "s", "g", "SILENT", "IDS", "1", "1-0") == 1
    assert run(r, "XPENDING", "s", "g", "-", "+", "2") == [[b"1-0", b"", -1, 3],
                                                           [b"2-0", b"", -1, 0]]
    # XINFO STREAM FULL shows delivery time 0 and the empty owner ("XNACK ordering").
    assert full_groups(r, "s")[0][b"pending"][:2] == [[b"1-0", b"", 0, 3], [b"2-0", b"", 0, 0]]


@pytest.mark.min_redis(8, 8)
def test_xnack_releases_from_the_consumer(five):
    # stream-cgroups.tcl "XNACK releases entries and removes from consumer PEL" and "XNACK
    # effect on consumer state and XINFO CONSUMERS".
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    read(r, "g", "c2", "s", ">", "COUNT", "1")
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "3-0") == 1
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0") == 1
    assert pel(r, "s", "g", "c1") == [(b"2-0", b"c1", 1)]
    assert pel(r, "s", "g", "c2") == []
    assert owned(r, "s", "g") == {b"c1": 1, b"c2": 0}
    assert group(r, "s", "g")[b"consumers"] == 2
    # History reads no longer include them ("XNACK XREADGROUP pending read excludes NACKed
    # entries").
    assert read(r, "g", "c1", "s", "0") == [[b"s", [entry(2)]]]
    full = full_groups(r, "s")[0]
    assert (full[b"nacked-count"], full[b"pel-count"]) == (2, 3)


@pytest.mark.min_redis(8, 8)
def test_xnack_return_count(five):
    # stream-cgroups.tcl "XNACK return count and edge cases".
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "3")
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "9-9") == 0
    assert run(r, "XNACK", "s", "g", "SILENT", "IDS", "3", "1-0", "2-0", "3-0") == 3
    run(r, "XCLAIM", "s", "g", "c1", "0", "1-0", "2-0", "3-0")
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "5", "1-0", "9-9", "2-0", "8-8", "3-0") == 3
    run(r, "XCLAIM", "s", "g", "c1", "0", "1-0")
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "1-0") == 2
    assert run(r, "XPENDING", "s", "g", "-", "+", "1") == [[b"1-0", b"", -1, 2]]
    run(r, "XACK", "s", "g", "1-0", "2-0", "3-0")
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0") == 0


@pytest.mark.min_redis(8, 8)
def test_xnack_retrycount_and_force(five):
    # stream-cgroups.tcl "XNACK RETRYCOUNT overrides delivery_count", "XNACK FORCE behavior",
    # "XNACK FORCE + RETRYCOUNT combination", "XNACK flexible IDS position".
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "1")
    assert run(r, "XNACK", "s", "g", "FATAL", "IDS", "1", "1-0", "RETRYCOUNT", "42") == 1
    assert run(r, "XPENDING", "s", "g", "-", "+", "1") == [[b"1-0", b"", -1, 42]]
    assert run(r, "XNACK", "s", "g", "FAIL", "RETRYCOUNT", "0", "IDS", "1", "1-0") == 1
    assert run(r, "XPENDING", "s", "g", "-", "+", "1") == [[b"1-0", b"", -1, 0]]
    # FORCE creates released entries for stream entries nobody holds, not for missing ones.
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "2-0", "FORCE") == 1
    assert run(r, "XNACK", "s", "g", "SILENT", "FORCE", "IDS", "1", "3-0") == 1
    assert run(r, "XNACK", "s", "g", "FATAL", "IDS", "1", "4-0", "RETRYCOUNT", "99",
               "FORCE") == 1
    assert run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "9-9", "FORCE") == 0
    assert run(r, "XPENDING", "s", "g", "-", "+", "10") == [
        [b"1-0", b"", -1, 0], [b"2-0", b"", -1, 0], [b"3-0", b"", -1, 0], [b"4-0", b"", -1, 99]]
    # Released entries can be claimed whatever the min-idle-time.
    assert run(r, "XCLAIM", "s", "g", "c2", "99999", "2-0") == [entry(2)]
    assert pel(r, "s", "g", "c2") == [(b"2-0", b"c2", 1)]
    assert run(r, "XAUTOCLAIM", "s", "g", "c3", "99999", "0", "JUSTID") == [
        b"0-0", [b"1-0", b"3-0", b"4-0"], []]


@pytest.mark.min_redis(8, 8)
def test_xnack_entries_are_claimed_first_in_release_order(five):
    # stream-cgroups.tcl "XNACK re-NACK moves entry to end of NACK zone" (CLAIM walks the
    # released entries first, in the order they were released).
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "3")
    run(r, "XNACK", "s", "g", "FAIL", "IDS", "3", "1-0", "2-0", "3-0")
    run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0")
    assert full_groups(r, "s")[0][b"nacked-count"] == 3
    order = [claim_read(r, "c2", "0", "COUNT", "1")[0][0] for _ in range(3)]
    assert order == [b"2-0", b"3-0", b"1-0"]


@pytest.mark.min_redis(8, 8)
def test_xnack_and_delconsumer(five):
    # stream-cgroups.tcl "XNACK XGROUP DELCONSUMER works when group PEL has NACKed entries".
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    run(r, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0")
    assert run(r, "XGROUP", "DELCONSUMER", "s", "g", "c1") == 1
    assert run(r, "XPENDING", "s", "g", "-", "+", "10") == [[b"1-0", b"", -1, 1]]
    assert full_groups(r, "s")[0][b"nacked-count"] == 1
    assert run(r, "XCLAIM", "s", "g", "c2", "0", "1-0") == [entry(1)]


@pytest.mark.min_redis(8, 8)
def test_xnack_errors(five):
    # stream-cgroups.tcl "XNACK argument and error validation". Texts the test matches only
    # by prefix are checked by prefix.
    r = five
    read(r, "g", "c1", "s", ">", "COUNT", "2")
    message = "wrong number of arguments for 'xnack' command"
    for args in ([], ["s"], ["s", "g"], ["s", "g", "SILENT"], ["s", "g", "SILENT", "IDS"],
                 ["s", "g", "SILENT", "IDS", "1"], ["s", "g", "FAIL", "RETRYCOUNT"]):
        assert error_of(r, "XNACK", *args) == message
    assert error_of(r, "XNACK", "nokey", "g", "SILENT", "IDS", "1", "1-0").startswith("NOGROUP")
    assert error_of(r, "XNACK", "s", "nog", "SILENT", "IDS", "1", "1-0").startswith("NOGROUP")
    r.set("str", "x")
    assert error_of(r, "XNACK", "str", "g", "FAIL", "IDS", "1", "1-0") == WRONGTYPE
    exact = [
        (["BADMODE", "IDS", "1", "1-0"], "mode must be SILENT, FAIL, or FATAL"),
        (["SILENT", "FORCE", "RETRYCOUNT", "5"], "syntax error, expected IDS keyword"),
        (["SILENT", "IDS", "2", "1-0"], "number of IDs doesn't match numids"),
        (["FAIL", "IDS", "1", "not-a-valid-id"], INVALID_ID),
        (["FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "abc"], NOT_INTEGER),
        (["FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "99999999999999999999"], NOT_INTEGER),
        (["FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1"], "Invalid RETRYCOUNT value, must be >= 0"),
    ]
    for args, text in exact:
        assert error_of(r, "XNACK", "s", "g", *args) == text, args
    for args in (["SILENT", "IDS", "abc", "1-0"], ["SILENT", "IDS", "0", "1-0"],
                 ["SILENT", "IDS", "-1", "1-0"]):
        assert error_of(r, "XNACK", "s", "g", *args).startswith(
            "numids must be a positive integer"), args
    for args in (["FAIL", "BADOPT", "IDS", "1", "1-0"], ["FAIL", "IDS", "1", "1-0", "BADOPT"],
                 ["FAIL", "FATAL", "IDS", "1", "1-0"], ["SILENT", "NOTIDS", "1", "1-0"],
                 ["FAIL", "IDS", "1", "1-0", "RETRYCOUNT"], ["FAIL", "IDS", "1", "1-0", "2-0"]):
        assert error_of(r, "XNACK", "s", "g", *args).startswith(
            "Unrecognized XNACK option"), args
    assert pel(r, "s", "g") == [(b"1-0", b"c1", 1), (b"2-0", b"c1", 1)]


# ---------------------------------------------------------------------------------------------
# MAXCOUNT with XREADGROUP (Redis 8.10)
# ---------------------------------------------------------------------------------------------


@pytest.mark.min_redis(8, 10)
def test_xreadgroup_maxcount_leaves_the_rest_undelivered(r):
    # docs xreadgroup.md / notes on PR #15282: MAXCOUNT caps the whole reply, streams are
    # filled in the order given, and an entry that does not fit is neither sent nor pending.
    for key in ("s1", "s2", "s3"):
        add(r, key, 1, 2, 3)
        run(r, "XGROUP", "CREATE", key, "g", "0")
    reply = run(r, "XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "MAXCOUNT", "3", "STREAMS",
                "s1", "s2", "s3", ">", ">", ">")
    assert reply == [[b"s1", [entry(1), entry(2)]], [b"s2", [entry(1)]]]
    assert [run(r, "XPENDING", key, "g")[0] for key in ("s1", "s2", "s3")] == [2, 1, 0]
    assert group(r, "s2", "g")[b"last-delivered-id"] == b"1-0"
    assert run(r, "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "100", "STREAMS", "s2", "s3",
               ">", ">") == [[b"s2", [entry(2), entry(3)]], [b"s3", [entry(1), entry(2),
                                                                       entry(3)]]]
