"""ACL users and permissions, against Brook and real Redis.

Brook follows the newest Redis where versions differ (descriptions keep the command rules as
typed, users carry ``sanitize-payload``, shorter -NOPERM texts): those expectations are checked
exactly against Brook and a Redis of 7.2 or later (``BROOK_PARITY_REDIS``), and Redis 7.0's
own texts are checked against 7.0.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

from tests.conftest import RawConnection, ServerProcess, redis_binary, start_brook, start_redis


def newest(server: ServerProcess) -> bool:
    """Brook, or a Redis that describes users as the newest does."""
    return server.kind == "brook" or server.version >= (7, 2)


def error_of(client: redis.Redis, *args: object) -> str:
    with pytest.raises(redis.ResponseError) as caught:
        client.execute_command(*args)
    return str(caught.value)


def noperm(client: redis.Redis, *args: object) -> str:
    with pytest.raises(redis.exceptions.NoPermissionError) as caught:
        client.execute_command(*args)
    return str(caught.value)


def as_user(server: ServerProcess, name: str, password: str) -> redis.Redis:
    """A client logged in as ``name`` (without redis-py's CLIENT SETINFO, which the user's
    rules may not allow: a ``DriverInfo`` of no name or version where redis-py has it,
    ``lib_name`` and ``lib_version``, deprecated there, where it has not)."""
    try:
        from redis.driver_info import DriverInfo
    except ImportError:
        return server.client(username=name, password=password, lib_name=None, lib_version=None)
    return server.client(username=name, password=password,
                         driver_info=DriverInfo(name=None, lib_version=None))


# -- the rule language -------------------------------------------------------------------

DESCRIBED = [
    (["+@all", "-@dangerous", "+flushall", "-get", "+set"],
     "+@all -@dangerous +flushall -get +set"),
    (["+@all", "-get", "+get"], "+@all +get"),
    (["-@all", "+config|get", "+config"], "-@all +config"),
    (["-@all", "+config", "+config|get", "-config|set"], "-@all +config +config|get -config|set"),
    (["-@all", "+select|0", "+select|1", "-select"], "-@all -select"),
    (["-@all", "+@read", "-@read", "+GET", "+Config|GET"], "-@all -@read +get +config|get"),
    (["-@all", "+@hash", "+get", "-hget", "+@hash"], "-@all +get -hget +@hash"),
    (["-@all", "+HGET", "+hget", "+hGeT"], "-@all +hget"),
]


@pytest.mark.parametrize(("rules", "described"), DESCRIBED)
def test_command_rules_are_described_as_typed(server: ServerProcess, rules: list[str],
                                              described: str) -> None:
    if not newest(server):
        pytest.skip("Redis 7.0 rebuilds the rules from its bitmap")
    r = server.client()
    assert r.execute_command("ACL", "SETUSER", "alice", "reset", *rules) == b"OK"
    user = dict(zip(*[iter(r.execute_command("ACL", "GETUSER", "alice"))] * 2, strict=True))
    assert user[b"commands"] == described.encode()


def test_list_and_getuser(server: ServerProcess) -> None:
    r = server.client()
    r.execute_command("ACL", "SETUSER", "bob", "on", ">secret", "~k*", "%R~r*", "%W~w*",
                      "&ch*", "-@all", "+get", "(~sel* +set)")
    r.execute_command("ACL", "SETUSER", "anna")
    listed = r.execute_command("ACL", "LIST")
    assert r.execute_command("ACL", "USERS") == [b"anna", b"bob", b"default"]
    digest = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
    reply = r.execute_command("ACL", "GETUSER", "bob")
    user = dict(zip(reply[::2], reply[1::2], strict=True))
    assert user[b"passwords"] == [digest.encode()]
    assert user[b"keys"] == b"~k* %R~r* %W~w*"
    assert user[b"channels"] == b"&ch*"
    assert len(user[b"selectors"]) == 1
    if newest(server):
        assert listed == [
            b"user anna off sanitize-payload resetchannels -@all",
            f"user bob on sanitize-payload #{digest} ~k* %R~r* %W~w* resetchannels &ch* "
            "-@all +get "
            "(~sel* resetchannels -@all +set)".encode(),
            b"user default on nopass sanitize-payload ~* &* +@all",
        ]
        assert user[b"flags"] == [b"on", b"sanitize-payload"]
        assert user[b"commands"] == b"-@all +get"
        assert user[b"selectors"] == [[b"commands", b"-@all +set", b"keys", b"~sel*",
                                       b"channels", b""]]
    else:
        assert listed[0] == b"user anna off resetchannels -@all"
        assert user[b"flags"] == [b"on"]
    assert r.execute_command("ACL", "GETUSER", "nobody") is None


SETUSER_ERRORS = [
    ("+nosuchcmd", "Unknown command or category name in ACL"),
    ("+@nosuchcat", "Unknown command or category name in ACL"),
    ("+config|nosuch", "Unknown command or category name in ACL"),
    ("-select|0", "Unknown command or category name in ACL"),
    ("garbage", "Syntax error"),
    ("%X~foo", "Syntax error"),
    ("%RR~foo", "Syntax error"),
    ("+config|", "Syntax error"),
    ("+config|get|foo", "Allowing first-arg of a subcommand is not supported"),
    ("#abc", "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters"),
    ("<notthere", "The password you are trying to remove from the user does not exist"),
]


@pytest.mark.parametrize(("rule", "message"), SETUSER_ERRORS)
def test_setuser_errors_change_nothing(server: ServerProcess, rule: str, message: str) -> None:
    r = server.client()
    r.execute_command("ACL", "SETUSER", "carol", "on", "~x")
    before = r.execute_command("ACL", "GETUSER", "carol")
    assert error_of(r, "ACL", "SETUSER", "carol", "~y", rule) == (
        f"Error in ACL SETUSER modifier '{rule}': {message}")
    assert r.execute_command("ACL", "GETUSER", "carol") == before


def test_setuser_argument_errors(server: ServerProcess) -> None:
    r = server.client()
    assert error_of(r, "ACL", "SETUSER", "dave", "~*", "~foo") == (
        "Error in ACL SETUSER modifier '~foo': Adding a pattern after the * pattern (or the "
        "'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start "
        "with an empty list of patterns")
    assert error_of(r, "ACL", "SETUSER", "dave", "&*", "&foo") == (
        "Error in ACL SETUSER modifier '&foo': Adding a pattern after the * pattern (or the "
        "'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to "
        "start with an empty list of channels")
    assert error_of(r, "ACL", "SETUSER", "da ve") == (
        "Usernames can't contain spaces or null characters")
    assert error_of(r, "ACL", "SETUSER", "dave", "(~foo", "+get") == (
        "Unmatched parenthesis in acl selector starting at '(~foo'.")
    assert error_of(r, "ACL", "DELUSER", "default") == "The 'default' user cannot be removed"
    assert r.execute_command("ACL", "USERS") == [b"default"]


# -- what a user may do --------------------------------------------------------------------

def test_a_user_can_do_exactly_what_its_rules_allow(server: ServerProcess) -> None:
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "app", "on", ">pw", "~k*", "%R~r*", "%W~w*",
                          "&news.*", "+@all", "-flushall", "-@dangerous")
    app = as_user(server, "app", "pw")
    assert app.execute_command("ACL", "WHOAMI") == b"app"
    assert app.set("k1", "v") and app.get("k1") == b"v"
    assert app.get("r1") is None  # read-only pattern: reads ...
    key_denied = ("No permissions to access a key" if newest(server) else
                  "this user has no permissions to access one of the keys used as arguments")
    assert noperm(app, "SET", "r1", "v") == key_denied  # ... but no writes
    assert app.set("w1", "v")  # write-only pattern: SET without GET writes only
    assert noperm(app, "GET", "w1") == key_denied
    assert noperm(app, "SET", "w1", "v", "GET") == key_denied  # SET ... GET reads too
    assert app.exists("r1", "w1") == 1  # EXISTS reads no value: any pattern will do
    admin.set("r1", "x")
    assert app.copy("r1", "w2")  # reads the source, writes the destination
    assert noperm(app, "COPY", "w1", "r2") == key_denied
    assert noperm(app, "GET", "other") == key_denied
    command_denied = ("User app has no permissions to run the 'flushall' command"
                      if newest(server) else
                      "this user has no permissions to run the 'flushall' command")
    assert noperm(app, "FLUSHALL") == command_denied
    assert "'config|set' command" in noperm(app, "CONFIG", "SET", "hz", "10")
    assert app.publish("news.today", "hi") == 0
    channel_denied = ("No permissions to access a channel" if newest(server) else
                      "this user has no permissions to access one of the channels used as "
                      "arguments")
    assert noperm(app, "PUBLISH", "sports", "hi") == channel_denied
    # A pattern must be one of the ACL's, literally.
    assert noperm(app, "PSUBSCRIBE", "news.t*") == channel_denied
    listener = as_user(server, "app", "pw").pubsub()
    listener.psubscribe("news.*")
    assert listener.get_message(timeout=5)["type"] == "psubscribe"
    listener.close()
    app.close()


def test_dryrun(server: ServerProcess) -> None:
    r = server.client()
    r.execute_command("ACL", "SETUSER", "erin", "on", "~k*", "&c", "+get", "+publish")
    assert r.execute_command("ACL", "DRYRUN", "erin", "GET", "k1") == b"OK"
    prefix = "User erin" if newest(server) else "This user"
    assert r.execute_command("ACL", "DRYRUN", "erin", "SET", "k1", "v") == (
        f"{prefix} has no permissions to run the 'set' command".encode())
    assert r.execute_command("ACL", "DRYRUN", "erin", "GET", "x") == (
        f"{prefix} has no permissions to access the 'x' key".encode())
    assert r.execute_command("ACL", "DRYRUN", "erin", "PUBLISH", "d", "m") == (
        f"{prefix} has no permissions to access the 'd' channel".encode())
    assert error_of(r, "ACL", "DRYRUN", "nobody", "GET", "k") == "User 'nobody' not found"
    assert error_of(r, "ACL", "DRYRUN", "erin", "NOSUCH", "k") == "Command 'NOSUCH' not found"
    assert error_of(r, "ACL", "DRYRUN", "erin", "GET") == (
        "wrong number of arguments for 'get' command")
    # A container alone is the container, with too few arguments; an unknown subcommand is
    # no command at all (Redis's lookupCommand).
    assert error_of(r, "ACL", "DRYRUN", "erin", "CONFIG") == (
        "wrong number of arguments for 'config' command")
    assert error_of(r, "ACL", "DRYRUN", "erin", "CONFIG", "NOSUCH") == (
        "Command 'CONFIG' not found")


def test_auth(server: ServerProcess) -> None:
    admin = server.client()
    with pytest.raises(redis.AuthenticationError,
                       match="^AUTH <password> called without any password configured for the "
                             "default user. Are you sure your configuration is correct\\?$"):
        admin.execute_command("AUTH", "x")
    admin.execute_command("ACL", "SETUSER", "frank", "on", ">one", ">two", "+@all", "~*")
    raw = RawConnection(server.port)
    assert raw.call("AUTH", "frank", "two") == b"OK"
    assert raw.call("ACL", "WHOAMI") == b"frank"
    assert str(raw.call("AUTH", "frank", "three")) == (
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert raw.call("ACL", "WHOAMI") == b"frank"  # a failed AUTH changes nothing
    raw.close()
    wrong = "^invalid username-password pair or user is disabled.$"  # (-WRONGPASS)
    admin.execute_command("ACL", "SETUSER", "frank", "off")
    with pytest.raises(redis.AuthenticationError, match=wrong):
        server.client().execute_command("AUTH", "frank", "one")
    with pytest.raises(redis.AuthenticationError, match=wrong):
        server.client().execute_command("AUTH", "nobody", "one")


def test_deluser_disconnects_its_clients(server: ServerProcess) -> None:
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "gina", "on", "nopass", "+@all", "~*")
    doomed = as_user(server, "gina", "any")
    assert doomed.ping()
    assert admin.execute_command("ACL", "DELUSER", "gina", "nobody") == 1
    with pytest.raises(redis.ConnectionError):
        doomed.execute_command("PING")


def test_the_log_records_denials(server: ServerProcess) -> None:
    admin = server.client()
    admin.execute_command("ACL", "LOG", "RESET")
    admin.execute_command("ACL", "SETUSER", "hank", "on", ">pw", "~k*", "+get")
    hank = as_user(server, "hank", "pw")
    for _ in range(2):
        with pytest.raises(redis.exceptions.NoPermissionError):
            hank.execute_command("GET", "secret")
    with pytest.raises(redis.exceptions.NoPermissionError):
        hank.execute_command("SET", "k1", "v")
    with pytest.raises(redis.AuthenticationError):
        server.client().execute_command("AUTH", "hank", "bad")
    entries = [dict(zip(entry[::2], entry[1::2], strict=True))
               for entry in admin.execute_command("ACL", "LOG")]
    summary = [(e[b"count"], e[b"reason"], e[b"context"], e[b"object"], e[b"username"])
               for e in entries]
    assert summary == [
        (1, b"auth", b"toplevel", b"AUTH", b"hank"),
        (1, b"command", b"toplevel", b"set", b"hank"),
        (2, b"key", b"toplevel", b"secret", b"hank"),
    ]
    assert b"cmd=get" in entries[2][b"client-info"]
    assert len(admin.execute_command("ACL", "LOG", "1")) == 1
    assert admin.execute_command("ACL", "LOG", "RESET") == b"OK"
    assert admin.execute_command("ACL", "LOG") == []
    hank.close()


def test_cat_genpass_whoami_help(server: ServerProcess) -> None:
    r = server.client()
    categories = r.execute_command("ACL", "CAT")
    assert categories[:3] == [b"keyspace", b"read", b"write"] and len(categories) == 21
    assert b"get" in r.execute_command("ACL", "CAT", "STRING")
    assert error_of(r, "ACL", "CAT", "nosuch") == "Unknown category 'nosuch'"
    assert len(r.execute_command("ACL", "GENPASS")) == 64
    assert len(r.execute_command("ACL", "GENPASS", "5")) == 2
    assert error_of(r, "ACL", "GENPASS", "0") == (
        "ACL GENPASS argument must be the number of bits for the output password, a positive "
        "number up to 4096")
    assert r.execute_command("ACL", "WHOAMI") == b"default"
    assert r.execute_command("ACL", "HELP")[0] == (
        b"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    assert error_of(r, "ACL", "LOAD").startswith(
        "This Redis instance is not configured to use an ACL file.")


def test_transactions_and_scripts_are_checked(server: ServerProcess) -> None:
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "ivy", "on", ">pw", "~k*", "+@all", "-flushdb")
    raw = RawConnection(server.port)
    assert raw.call("AUTH", "ivy", "pw") == b"OK"
    assert raw.call("MULTI") == b"OK"
    assert raw.call("SET", "k1", "v") == b"QUEUED"
    assert str(raw.call("FLUSHDB")).startswith("NOPERM")  # refused when queued ...
    assert str(raw.call("EXEC")) == (  # ... so the transaction aborts
        "EXECABORT Transaction discarded because of previous errors.")
    assert admin.get("k1") is None
    script = "return redis.call('get', KEYS[1])"
    assert raw.call("EVAL", script, 1, "k1") is None
    reply = str(raw.call("EVAL", "return redis.call('get', 'other')", 0))
    if newest(server):
        assert reply.startswith("ERR ACL failure in script: No permissions to access a key "
                                "script: ")
    else:
        assert reply.startswith("ERR The user executing the script can't access at least one "
                                "of the keys mentioned in the command arguments script: ")
    assert str(raw.call("EVAL", script, 1, "other")).startswith("NOPERM")  # its own KEYS
    entries = [dict(zip(entry[::2], entry[1::2], strict=True))
               for entry in admin.execute_command("ACL", "LOG")]
    assert [(e[b"reason"], e[b"context"], e[b"object"]) for e in entries] == [
        (b"key", b"toplevel", b"other"), (b"key", b"lua", b"other"),
        (b"command", b"multi", b"flushdb")]
    raw.close()


def test_rules_changed_apply_to_connected_clients(server: ServerProcess) -> None:
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "jack", "on", ">pw", "~*", "+@all")
    jack = as_user(server, "jack", "pw")
    assert jack.set("k", "v")
    admin.execute_command("ACL", "SETUSER", "jack", "-set")
    assert "'set' command" in noperm(jack, "SET", "k", "v")  # still connected, new rules
    assert jack.get("k") == b"v"
    jack.close()


def test_requirepass_is_the_default_user_s_password(server: ServerProcess) -> None:
    admin = server.client()
    admin.config_set("requirepass", "topsecret")
    reply = admin.execute_command("ACL", "GETUSER", "default")
    user = dict(zip(reply[::2], reply[1::2], strict=True))
    assert b"nopass" not in user[b"flags"]
    assert user[b"passwords"] == [
        b"53336a676c64c1396553b2b7c92f38126768827c93b64d9142069c10eda7a721"]
    raw = RawConnection(server.port)
    assert str(raw.call("GET", "k")) == "NOAUTH Authentication required."
    assert raw.call("AUTH", "default", "topsecret") == b"OK"
    assert raw.call("ACL", "WHOAMI") == b"default"
    raw.close()
    admin.config_set("requirepass", "")


def test_acl_pubsub_default_and_log_length(server: ServerProcess) -> None:
    admin = server.client()
    admin.config_set("acl-pubsub-default", "allchannels")
    admin.execute_command("ACL", "SETUSER", "kim")
    reply = admin.execute_command("ACL", "GETUSER", "kim")
    assert dict(zip(reply[::2], reply[1::2], strict=True))[b"channels"] == b"&*"
    assert error_of(admin, "ACL", "SETUSER", "kim", "&news") == (
        "Error in ACL SETUSER modifier '&news': Adding a pattern after the * pattern (or the "
        "'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to "
        "start with an empty list of channels")
    admin.config_set("acllog-max-len", "2")
    admin.execute_command("ACL", "SETUSER", "kim", "on", ">pw", "-@all")
    kim = as_user(server, "kim", "pw")
    for command in ("GET", "EXISTS", "DEL"):
        with pytest.raises(redis.exceptions.NoPermissionError):
            kim.execute_command(command, "k")
    logged = [dict(zip(e[::2], e[1::2], strict=True))[b"object"]
              for e in admin.execute_command("ACL", "LOG")]
    assert logged == [b"del", b"exists"]
    kim.close()


def test_exec_checks_again_and_subscribers_lose_their_connection(server: ServerProcess) -> None:
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "lee", "on", ">pw", "~*", "&news.*", "+@all")
    raw = RawConnection(server.port)
    assert raw.call("AUTH", "lee", "pw") == b"OK"
    assert raw.call("MULTI") == b"OK"
    assert raw.call("SET", "a", "1") == b"QUEUED"
    assert raw.call("GET", "a") == b"QUEUED"
    admin.execute_command("ACL", "SETUSER", "lee", "-set")
    replies = raw.call("EXEC")
    assert isinstance(replies, list)
    assert [None if reply is None else str(reply) for reply in replies] == [
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
        "EXEC call. This command is no longer allowed for the following reason: no permission "
        "to execute the command or subcommand", None]
    raw.close()
    listener = as_user(server, "lee", "pw").pubsub()
    listener.subscribe("news.today")
    assert listener.get_message(timeout=5)["type"] == "subscribe"
    admin.execute_command("ACL", "SETUSER", "lee", "&sports")  # more: it stays
    assert admin.publish("news.today", "one") == 1
    admin.execute_command("ACL", "SETUSER", "lee", "resetchannels", "&sports")
    assert admin.publish("news.today", "two") == 0  # closed during SETUSER
    listener.close()


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_acl_file_save_and_load(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "users.acl"
    path.write_text("user default on nopass ~* &* +@all\n")
    if kind == "redis" and redis_binary() is None:
        pytest.skip("redis-server is not installed")
    start = start_brook if kind == "brook" else start_redis
    process = start(tmp_path, "--aclfile", str(path))
    try:
        admin = process.client()
        admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~a*", "+get")
        assert admin.execute_command("ACL", "SAVE") == b"OK"
        saved = path.read_text().splitlines()
        assert [line.split()[1] for line in saved] == ["alice", "default"]
        assert saved[0].startswith("user alice on ") and " ~a* resetchannels -@all +get" in saved[0]
        alice = as_user(process, "alice", "pw")
        assert alice.get("a1") is None
        path.write_text("user bob on nopass ~* +@all\nuser default on nopass ~* &* +@all\n")
        assert admin.execute_command("ACL", "LOAD") == b"OK"
        assert admin.execute_command("ACL", "USERS") == [b"bob", b"default"]
        with pytest.raises(redis.ConnectionError):  # alice is gone, and so is her connection
            alice.get("a1")
        path.write_text("user carol on garbage\nnotauser\n\nuser bob on +nosuch\n")
        assert error_of(admin, "ACL", "LOAD") == (
            f"{path}:1: Syntax error. {path}:2 should start with user keyword followed by the "
            f"username. {path}:4: Error in applying operation '+nosuch': Unknown command or "
            "category name in ACL. WARNING: ACL errors detected, no change to the previously "
            "active ACL rules was performed")
        assert admin.execute_command("ACL", "USERS") == [b"bob", b"default"]
        path.unlink()
        assert error_of(admin, "ACL", "LOAD") == (
            f"Error loading ACLs, opening file '{path}': No such file or directory")
    finally:
        process.stop()


@pytest.mark.parametrize("kind", ["brook", "redis"])
def test_users_in_the_config_file_and_config_rewrite(kind: str, tmp_path: Path) -> None:
    config = tmp_path / "server.conf"
    config.write_text("# users\nuser alice on >pw ~a* +get\nport 0\n")
    if kind == "redis" and redis_binary() is None:
        pytest.skip("redis-server is not installed")
    start = start_brook if kind == "brook" else start_redis
    process = start(tmp_path, config_file=config)
    try:
        alice = as_user(process, "alice", "pw")
        assert alice.get("a1") is None
        admin = process.client()
        admin.execute_command("ACL", "SETUSER", "bob", "on", "nopass", "~*", "+@all")
        assert admin.config_rewrite()
        lines = config.read_text().splitlines()
        users = [line for line in lines if line.startswith("user ")]
        assert [line.split()[1] for line in users] == ["alice", "bob", "default"]
        assert lines[1] == users[0]  # in place of the old line; the others are appended
        assert users[0].startswith("user alice on ")
        alice.close()
    finally:
        process.stop()
    process = start(tmp_path, config_file=config)
    try:
        assert process.client().execute_command("ACL", "USERS") == [b"alice", b"bob",
                                                                    b"default"]
    finally:
        process.stop()


USERS = {
    "producer": ("~events", "+xadd", "+ping"),
    "consumer": ("%R~events", "~pending:*", "+xreadgroup", "+xack", "+xgroup|create", "+get",
                 "+set"),
    "dashboard": ("%R~*", "+@read", "-keys", "&alerts", "+subscribe"),
    "ops": ("~*", "&*", "+@all", "-@dangerous", "+config|get"),
}

REQUESTS = [
    ("XADD", "events", "*", "n", "1"),
    ("XADD", "other", "*", "n", "1"),
    ("XGROUP", "CREATE", "events", "g", "0", "MKSTREAM"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "events", ">"),
    ("XACK", "events", "g", "0-1"),
    ("GET", "pending:1"),
    ("SET", "pending:1", "x"),
    ("GET", "events"),
    ("XRANGE", "events", "-", "+"),
    ("KEYS", "*"),
    ("FLUSHALL",),
    ("CONFIG", "GET", "maxmemory"),
    ("CONFIG", "SET", "maxmemory", "0"),
    ("PUBLISH", "alerts", "x"),
    ("SUBSCRIBE", "alerts"),
    ("SUBSCRIBE", "news"),
    ("PING",),
    ("DEBUG", "SLEEP", "0"),
]


def outcome(raw: RawConnection, request: tuple[str, ...]) -> str:
    """ok, or which denial (the wording differs between Redis versions; the kind may not)."""
    reply = raw.call(*request)
    text = str(reply)
    if not text.startswith("NOPERM"):
        return "ok"
    if "command" in text:
        return "command"
    return "key" if "key" in text else "channel"


def test_each_user_can_do_exactly_what_its_rules_allow(server: ServerProcess) -> None:
    """Several users, each with the rules of one job, try the same requests: what is allowed
    and what is refused (and why) must be Redis's, user by user."""
    admin = server.client()
    for name, rules in USERS.items():
        admin.execute_command("ACL", "SETUSER", name, "on", ">pw", *rules)
    seen: dict[str, list[str]] = {}
    for name in USERS:
        admin.flushall()
        raw = RawConnection(server.port)
        assert raw.call("AUTH", name, "pw") == b"OK"
        results = []
        for request in REQUESTS:
            results.append(outcome(raw, request))
            if request[0] == "SUBSCRIBE" and results[-1] == "ok":
                raw.close()  # out of subscribed mode: a new connection for the rest
                raw = RawConnection(server.port)
                raw.call("AUTH", name, "pw")
        raw.close()
        seen[name] = results
    assert seen == {
        "producer": ["ok", "key", "command", "command", "command", "command", "command",
                     "command", "command", "command", "command", "command", "command",
                     "command", "command", "command", "ok", "command"],
        # XGROUP CREATE and XACK write the stream (a %R~ pattern refuses them); XREADGROUP
        # and GET only read it, by Redis's key specs.
        "consumer": ["command", "command", "key", "ok", "key", "ok", "ok", "ok", "command",
                     "command", "command", "command", "command", "command", "command",
                     "command", "command", "command"],
        "dashboard": ["command", "command", "command", "command", "command", "ok", "command",
                      "ok", "ok", "command", "command", "command", "command", "command", "ok",
                      "channel", "command", "command"],
        "ops": ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "command", "command",
                "ok", "command", "ok", "ok", "ok", "ok", "command"],
    }


@pytest.mark.min_redis(7, 2)  # 7.0 serves the parked command whatever the rules are now
def test_a_parked_command_is_checked_again_when_served(server: ServerProcess) -> None:
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "mia", "on", ">pw", "~*", "+@all")
    raw = RawConnection(server.port)
    assert raw.call("AUTH", "mia", "pw") == b"OK"
    raw.send(b"*3\r\n$5\r\nBLPOP\r\n$4\r\njobs\r\n$1\r\n0\r\n")
    wait = 0
    while admin.info("clients")["blocked_clients"] != 1 and wait < 100:
        time.sleep(0.02)
        wait += 1
    admin.execute_command("ACL", "SETUSER", "mia", "resetkeys", "~other")
    admin.rpush("jobs", "j1")
    assert raw.read(until=b"\r\n", timeout=5) == b"-NOPERM No permissions to access a key\r\n"
    assert admin.lrange("jobs", 0, -1) == [b"j1"]  # the element stays
    raw.close()
