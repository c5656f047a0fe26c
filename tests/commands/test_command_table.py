"""The command table: COMMAND and its subcommands, declarations checked against real Redis,
and docs/commands.md generated from the same declarations."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import termios
import time

import pytest

from brook.acl.key_access import KEY_ACCESS
from brook.commands.key_specs import KEY_SPEC_FLAGS
from brook.docs import render_commands_markdown
from tests.conftest import ROOT, RawConnection


def _info_by_name(reply: list) -> dict[str, list]:
    return {entry[0].decode(): entry for entry in reply if entry}


def test_command_count_and_list(raw):
    count = raw.call("COMMAND", "COUNT")
    assert count == len(raw.call("COMMAND"))
    listed = raw.call("COMMAND", "LIST")  # commands and subcommands
    assert len([name for name in listed if b"|" not in name]) == count
    assert b"config|get" in listed


def test_command_info_of_get(raw):
    (info,) = raw.call("COMMAND", "INFO", "get")
    assert info[:7] == [b"get", 2, [b"readonly", b"fast"], 1, 1, 1, [b"@read", b"@string", b"@fast"]]


def test_command_info_unknown_is_nil(raw):
    assert raw.call("COMMAND", "INFO", "nosuchcommand", "ping")[0] is None


def test_command_getkeys(raw):
    assert raw.call("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == [b"a", b"b"]
    assert raw.call("COMMAND", "GETKEYS", "GET", "k") == [b"k"]


def test_command_getkeys_errors(raw):
    assert raw.request(b"COMMAND GETKEYS nosuch a\r\n") == b"-ERR Invalid command specified\r\n"
    assert raw.request(b"COMMAND GETKEYS GET a b\r\n") == (
        b"-ERR Invalid number of arguments specified for command\r\n"
    )
    assert raw.request(b"COMMAND GETKEYS PING x\r\n") == b"-ERR The command has no key arguments\r\n"


@pytest.mark.min_redis(7, 2)  # 7.0 answered with the arity error of COMMAND GETKEYS itself
def test_command_getkeys_too_few_arguments(raw):
    assert raw.request(b"COMMAND GETKEYS GET\r\n") == (
        b"-ERR Invalid number of arguments specified for command\r\n"
    )


def test_command_getkeysandflags(raw):
    def keys_and_flags(*request: str) -> object:
        return raw.call("COMMAND", "GETKEYSANDFLAGS", *request)

    assert keys_and_flags("SET", "k1", "v1") == [[b"k1", [b"OW", b"update"]]]
    assert keys_and_flags("SET", "k1", "v1", "GET") == [[b"k1", [b"RW", b"access", b"update"]]]
    assert keys_and_flags("MSET", "k1", "v1", "k2", "v2") == [
        [b"k1", [b"OW", b"update"]], [b"k2", [b"OW", b"update"]]]
    assert keys_and_flags("LMOVE", "k1", "k2", "LEFT", "RIGHT") == [
        [b"k1", [b"RW", b"access", b"delete"]], [b"k2", [b"RW", b"insert"]]]
    assert keys_and_flags("SORT", "k1", "STORE", "k2") == [
        [b"k1", [b"RO", b"access"]], [b"k2", [b"OW", b"update"]]]
    assert keys_and_flags("ZUNIONSTORE", "d", "2", "a", "b") == [
        [b"d", [b"OW", b"update"]], [b"a", [b"RO", b"access"]], [b"b", [b"RO", b"access"]]]
    assert keys_and_flags("EXISTS", "a") == [[b"a", [b"RO"]]]
    # BITFIELD reads only with nothing but complete GET and OVERFLOW operations.
    assert keys_and_flags("BITFIELD", "k", "GET", "u8", "0", "OVERFLOW", "WRAP") == [
        [b"k", [b"RO", b"access"]]]
    for writes in (("SET", "u8", "0", "1"), ("GET", "u8"), ("GET", "u8", "0", "INCRBY", "u8",
                                                           "0", "1")):
        assert keys_and_flags("BITFIELD", "k", *writes) == [
            [b"k", [b"RW", b"access", b"update"]]], writes


def test_command_getkeysandflags_resp3(raw):
    raw.call("HELLO", "3")
    assert raw.request(b"COMMAND GETKEYSANDFLAGS SET k1 v1\r\n") == (
        b"*1\r\n*2\r\n$2\r\nk1\r\n~2\r\n+OW\r\n+update\r\n")


def test_command_getkeys_lookup_as_the_dispatcher(raw):
    """The command is found as a request names it: a container's subcommand by the next
    argument (an unknown one is no command), a container alone has no keys."""
    assert raw.call("COMMAND", "GETKEYS", "MEMORY", "USAGE", "k") == [b"k"]
    assert raw.call("COMMAND", "GETKEYS", "XGROUP", "CREATE", "k", "g", "$") == [b"k"]
    assert raw.request(b"COMMAND GETKEYS XGROUP NOSUCH k\r\n") == (
        b"-ERR Invalid command specified\r\n")
    assert raw.request(b"COMMAND GETKEYS get|x k\r\n") == b"-ERR Invalid command specified\r\n"
    assert raw.request(b"COMMAND GETKEYS SPUBLISH ch m\r\n") == (
        b"-ERR The command has no key arguments\r\n")
    assert raw.request(b"COMMAND GETKEYSANDFLAGS ZINTERSTORE zz 1443677133621497600 a\r\n") == (
        b"-ERR Invalid arguments specified for command\r\n")


@pytest.mark.min_redis(7, 2)  # 7.0 answered with the arity error of COMMAND GETKEYS itself
def test_command_getkeys_of_a_container_alone(raw):
    assert raw.request(b"COMMAND GETKEYS CONFIG\r\n") == (
        b"-ERR The command has no key arguments\r\n")


def test_command_getkeys_of_commands_whose_keys_may_be_none(raw):
    assert raw.call("COMMAND", "GETKEYS", "EVAL", "return 1", "0") == []
    assert raw.call("COMMAND", "GETKEYS", "EVAL", "return 1", "1", "k") == [b"k"]
    keys = [f"key{i}" for i in range(260)]
    assert raw.call("COMMAND", "GETKEYS", "ZUNIONSTORE", "t", "260", *keys) == [
        b"t", *(k.encode() for k in keys)]


def test_command_info_of_unknown_subcommands_is_nil(raw):
    assert raw.call("COMMAND", "INFO", "get|key", "config|get|key", "config|nosuch") == [
        None, None, None]


@pytest.mark.parametrize("name", ["SET", "GET", "MSET", "LMOVE", "LPOP", "BLPOP", "PING",
                                  "MEMORY", "MEMORY|USAGE", "RENAME", "GEORADIUS_RO",
                                  "GEORADIUSBYMEMBER_RO", "GEOSEARCHSTORE"])
def test_command_info_without_movablekeys(raw, name):
    (info,) = raw.call("COMMAND", "INFO", name)
    assert b"movablekeys" not in info[2]


@pytest.mark.parametrize("name", ["ZUNIONSTORE", "XREAD", "EVAL", "SORT", "SORT_RO",
                                  "GEORADIUS", "GEORADIUSBYMEMBER"])
def test_command_info_with_movablekeys(raw, name):
    (info,) = raw.call("COMMAND", "INFO", name)
    assert b"movablekeys" in info[2]


def test_command_list_filters(raw):
    assert b"get" in raw.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "string")
    assert set(raw.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "hset*")) == {b"hset", b"hsetnx"}
    assert raw.call("COMMAND", "LIST", "FILTERBY", "MODULE", "x") == []


def test_command_list_pattern_is_a_redis_glob(raw):
    """Matched with Redis's glob rules, ignoring case, against commands and subcommands."""
    def listed(pattern: str) -> set[bytes]:
        return set(raw.call("COMMAND", "LIST", "FILTERBY", "PATTERN", pattern))

    assert listed("CONFIG|[g-s]et") == {b"config|get", b"config|set"}
    assert listed("config|*re*") >= {b"config|resetstat", b"config|rewrite"}
    assert listed("cl*help") >= {b"client|help"}
    assert listed("set") == {b"set"}
    assert listed("non_exists*") == set()


def test_command_list_errors_and_acl_categories(raw):
    for request in (b"COMMAND LIST bad_arg\r\n", b"COMMAND LIST FILTERBY bad_arg\r\n",
                    b"COMMAND LIST FILTERBY bad_arg bad_arg2\r\n",
                    b"COMMAND LIST FILTERBY PATTERN a b\r\n"):
        assert raw.request(request) == b"-ERR syntax error\r\n", request
    assert raw.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "non_existing_category") == []
    scripting = raw.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "SCRIPTING")
    assert b"eval" in scripting and b"script|kill" in scripting and b"set" not in scripting


def test_command_count_docs_and_info_agree(raw):
    count = raw.call("COMMAND", "COUNT")
    assert len(raw.call("COMMAND", "DOCS")) == 2 * count
    assert len(raw.call("COMMAND", "INFO")) == count


def test_command_docs_shape(raw):
    docs = raw.call("COMMAND", "DOCS", "set")
    # RESP2: a flat name/doc list; each doc a flat key/value list.
    assert docs[0] == b"set"
    fields = dict(zip(docs[1][::2], docs[1][1::2], strict=True))
    assert fields[b"group"] == b"string"
    assert fields[b"since"] == b"1.0.0"
    names = [dict(zip(arg[::2], arg[1::2], strict=True))[b"name"] for arg in fields[b"arguments"]]
    assert names[:2] == [b"key", b"value"]


# Declarations that follow a Redis newer than the one installed for the parity run.
NEWER_THAN_INSTALLED_REDIS = {
    "command|getkeys",  # arity -3 since Redis 7.2 (was -4), so GETKEYS can report a bad arity
    "command|getkeysandflags",
    "zrank",  # arity -3 since Redis 7.2 (was 3): WITHSCORE
    "zrevrank",
}

# Commands whose flags changed since the installed Redis (7.0); the rest of their entry must match.
FLAGS_CHANGED_SINCE_INSTALLED_REDIS = {
    # Redis 7.2 dropped noscript from the blocking commands: from a script they run without
    # blocking (they answer as if their timeout had passed).
    "blmove", "blpop", "brpop", "brpoplpush", "bzpopmax", "bzpopmin",
    # may_replicate: the script's effects replicate (shown in COMMAND since 7.2).
    "eval", "evalsha", "fcall",
    # Redis 7.2 let scripts call WAIT (not noscript), 7.4 flagged it blocking (and @blocking).
    "wait",
}

# Commands whose ACL categories changed since the installed Redis (7.0).
CATEGORIES_CHANGED_SINCE_INSTALLED_REDIS = {"wait"}


@pytest.mark.brook_only
def test_every_declaration_matches_real_redis(server, redis_process):
    """Arity, flags, key positions and ACL categories of each command Redis also has."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    ours = _info_by_name(RawConnection(server.port).call("COMMAND"))
    theirs = _info_by_name(RawConnection(redis_process.port).call("COMMAND"))
    differences = []
    for name, entry in sorted(ours.items()):
        reference = theirs.get(name)
        if reference is None:
            continue  # newer than the installed Redis
        mine = (entry[1], sorted(entry[2]), entry[3:6], sorted(entry[6]))
        real = (reference[1], sorted(reference[2]), reference[3:6], sorted(reference[6]))
        if name in NEWER_THAN_INSTALLED_REDIS:  # the arity changed since; the rest must match
            mine, real = mine[1:], real[1:]
        if name in FLAGS_CHANGED_SINCE_INSTALLED_REDIS:
            mine, real = (mine[0], *mine[2:]), (real[0], *real[2:])
        if name in CATEGORIES_CHANGED_SINCE_INSTALLED_REDIS:
            mine, real = mine[:-1], real[:-1]
        if mine != real:
            differences.append(f"{name}: brook {mine} != redis {real}")
        our_subs = _info_by_name(entry[9])
        for sub_name, sub in _info_by_name(reference[9]).items():
            if sub_name in our_subs and sub_name not in NEWER_THAN_INSTALLED_REDIS:
                mine_sub = (our_subs[sub_name][1], our_subs[sub_name][3:6])
                if mine_sub != (sub[1], sub[3:6]):
                    differences.append(f"{sub_name}: brook {mine_sub} != redis {(sub[1], sub[3:6])}")
    assert differences == []


def _access(spec: list) -> str:
    """A Redis key spec's flags as brook/acl/key_access.py writes them."""
    fields = dict(zip(spec[::2], spec[1::2], strict=True))
    flags = {flag.decode().upper() for flag in fields[b"flags"]}
    text = ("R" if "ACCESS" in flags else "") + (
        "W" if flags & {"INSERT", "DELETE", "UPDATE"} else "")
    return text or "-"


@pytest.mark.brook_only
def test_acl_key_access_matches_real_redis_key_specs(server, redis_process):
    """What ACL key permissions a command's keys need (%R~, %W~): KEY_ACCESS against the
    flags of real Redis's key specs, first key and the others."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    theirs = _info_by_name(RawConnection(redis_process.port).call("COMMAND"))
    entries = dict(theirs)
    for entry in theirs.values():
        entries.update(_info_by_name(entry[9]))
    differences = []
    for name, declared in sorted(KEY_ACCESS.items()):
        reference = entries.get(name)
        if reference is None or not reference[8]:
            continue  # newer than the installed Redis
        kinds = [_access(spec) for spec in reference[8]]
        real = kinds[0] if set(kinds) == {kinds[0]} else f"{kinds[0]} {kinds[-1]}"
        if declared != real:
            differences.append(f"{name}: brook {declared} != redis {real}")
    assert differences == []


# Key specs whose flags Redis corrected after 7.0 (SINTERSTORE's destination: RW, then OW).
KEY_SPECS_CHANGED_SINCE_7_0 = {"sinterstore"}


@pytest.mark.brook_only
def test_key_spec_flags_match_real_redis(server, redis_process):
    """COMMAND GETKEYSANDFLAGS's table against the flags of real Redis's key specs: the
    first key's and the last spec's (SORT's are its key's and STORE's)."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    theirs = _info_by_name(RawConnection(redis_process.port).call("COMMAND"))
    entries = dict(theirs)
    for entry in theirs.values():
        entries.update(_info_by_name(entry[9]))
    differences = []
    for name, declared in sorted(KEY_SPEC_FLAGS.items()):
        reference = entries.get(name)
        if reference is None or not reference[8] or name in KEY_SPECS_CHANGED_SINCE_7_0:
            continue  # newer than the installed Redis
        specs = [" ".join(flag.decode() for flag in dict(zip(spec[::2], spec[1::2],
                                                             strict=True))[b"flags"])
                 for spec in reference[8]]
        real = (specs[0], specs[2] if name == "sort" else specs[-1])
        if (declared[0], declared[-1]) != real:
            differences.append(f"{name}: brook {declared} != redis {real}")
    assert differences == []


def _help_entries(lines: list[bytes]) -> list[list[bytes]]:
    """A HELP reply's entries: a line naming a subcommand and the indented lines after it."""
    entries: list[list[bytes]] = []
    for line in lines[1:]:
        if line.startswith(b" ") and entries:
            entries[-1].append(line)
        else:
            entries.append([line])
    return entries


@pytest.mark.brook_only
def test_help_replies_match_real_redis(server, redis_process):
    """Every container's HELP says what the newest Redis's says, for the subcommands Brook
    has (CLIENT has no CACHING, PAUSE, UNPAUSE or TRACKING)."""
    if redis_process is None or redis_process.version < (7, 2):
        pytest.skip("the HELP texts Brook follows are Redis 7.2's and later")
    ours = RawConnection(server.port)
    theirs = RawConnection(redis_process.port)
    differences = []
    for name in ours.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "*|help"):
        container_name = name.split(b"|")[0]
        subcommands = {sub.split(b"|")[1].upper() for sub in ours.call(
            "COMMAND", "LIST", "FILTERBY", "PATTERN", container_name + b"|*")}
        mine = ours.call(container_name, "HELP")
        real = theirs.call(container_name, "HELP")
        if not isinstance(real, list):  # CLUSTER HELP without cluster support: an error
            if str(mine) != str(real):
                differences.append(container_name.decode())
            continue
        kept = [line for entry in _help_entries(real)
                if entry[0].split(b" ")[0] in subcommands
                or not entry[0].split(b" ")[0].replace(b"-", b"").isalpha()  # "(no subcommand)"
                for line in entry]
        if mine != [real[0], *kept]:
            differences.append(container_name.decode())
    assert differences == []


def test_docs_commands_md_is_generated_from_the_table():
    committed = (ROOT / "docs" / "commands.md").read_text()
    assert committed == render_commands_markdown(), "run `make docs` to regenerate docs/commands.md"


def _redis_cli_session(port: int, typed: bytes) -> bytes:
    """Run redis-cli interactively in a pseudo-terminal, type, and return what it drew."""
    binary = shutil.which("redis-cli")
    if binary is None:
        pytest.skip("redis-cli is not installed")
    pid, fd = pty.fork()
    if pid == 0:  # the child: become redis-cli on the terminal
        os.execv(binary, [binary, "-p", str(port)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))

    def pump(seconds: float, stop: bytes | None = None) -> bytes:
        # linenoise asks the terminal for the cursor position (ESC[6n): answer each query.
        drawn = b""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and (stop is None or stop not in drawn):
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                drawn += chunk
                for _ in range(chunk.count(b"\x1b[6n")):
                    os.write(fd, b"\x1b[1;1R")
        return drawn

    try:
        output = pump(5, stop=b"> ")
        for byte in typed:
            os.write(fd, bytes([byte]))
            output += pump(0.05)
        output += pump(1.0)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return output


def test_redis_cli_interactive_hints_and_replies(server):
    drawn = _redis_cli_session(server.port, b"SET k ")
    assert b"value" in drawn  # the hint for the next argument, built from COMMAND DOCS
    drawn = _redis_cli_session(server.port, b"ECHO hello\r")
    assert b'"hello"' in drawn


def test_redis_cli_pipe_mode(server):
    result = subprocess.run(
        [shutil.which("redis-cli") or "redis-cli", "-p", str(server.port)],
        input=b"SET a 1\nINCR a\nGET a\n", capture_output=True, timeout=10,
    )
    assert result.stdout == b"OK\n2\n2\n"


@pytest.mark.parametrize("request_", [
    b"COMMAND GETKEYS SPUBLISH ch msg\r\n",
    b"COMMAND GETKEYS SSUBSCRIBE a b\r\n",
    b"COMMAND GETKEYS SUNSUBSCRIBE a b\r\n",
])
def test_shard_channels_are_not_keys(raw, request_):
    assert raw.request(request_) == b"-ERR The command has no key arguments\r\n"


def test_shard_channel_key_specs_are_not_key(raw):
    for name in ("spublish", "ssubscribe", "sunsubscribe"):
        (info,) = raw.call("COMMAND", "INFO", name)
        spec = dict(zip(info[8][0][::2], info[8][0][1::2], strict=True))
        assert spec[b"flags"] == [b"not_key"]
