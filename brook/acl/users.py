"""The users of a server, the checks a command goes through, and the ACL log.

The check (Redis's ACLCheckAllUserCommandPerm): each selector in turn, the first that allows
the command, its keys (by what the command does to each, see key_access.py) and its channels
lets it run. When none does, the denial reported is the worst one (a channel over a key over
the command), the later argument on a tie.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Final

from brook.acl.key_access import key_needs, needs_of, single_key
from brook.acl.rules import (
    NOT_FOUND,
    READ,
    WRITE,
    AclRuleError,
    Selector,
    User,
    merge_selectors,
)
from brook.commands.registry import Command
from brook.glob import matches

__all__ = ["COMMAND", "KEY", "CHANNEL", "AUTH", "Acl", "AclFileError", "Denial", "LogEntry",
           "read_acl_file", "write_acl_file"]

# Denial reasons, in the order Redis ranks them (ACL_DENIED_CMD < _KEY < _CHANNEL).
COMMAND: Final = 1
KEY: Final = 2
CHANNEL: Final = 4
AUTH: Final = 8

REASON_NAMES: Final = {COMMAND: "command", KEY: "key", CHANNEL: "channel", AUTH: "auth"}

# Commands whose arguments are Pub/Sub channels: (first channel argument, all that follow,
# patterns, which must equal an ACL pattern rather than match it).
_CHANNEL_ARGUMENTS: Final = {
    "subscribe": (True, False), "ssubscribe": (True, False), "psubscribe": (True, True),
    "publish": (False, False), "spublish": (False, False),
}

_LOG_GROUP_WINDOW_MS: Final = 60_000
_LOG_GROUP_SCAN: Final = 10


class AclFileError(Exception):
    """An ACL file that cannot be loaded or saved (the message is Redis's)."""


@dataclass
class Denial:
    reason: int
    index: int  # the argument denied (0: the command)


@dataclass
class LogEntry:
    """One ACL LOG entry (several identical denials within a minute are counted in one)."""

    reason: str
    context: str
    object: bytes
    username: bytes
    client_info: bytes
    entry_id: int
    created_ms: int
    updated_ms: int = 0
    count: int = 1


@dataclass
class Acl:
    """The users (``default`` always among them), the log and its counters."""

    users: dict[str, User] = field(default_factory=dict)
    log: list[LogEntry] = field(default_factory=list)  # newest first
    next_entry_id: int = 0
    denied: dict[int, int] = field(default_factory=lambda: dict.fromkeys(REASON_NAMES, 0))

    def __post_init__(self) -> None:
        self.users["default"] = _default_user()

    @property
    def default(self) -> User:
        return self.users["default"]

    def default_is_open(self) -> bool:
        """A new connection is authenticated (the default user is on and needs no password)."""
        default = self.default
        return default.nopass and default.enabled

    def authenticate(self, username: bytes, password: bytes) -> User | None:
        """The user these credentials open, or None (Redis's ACLCheckUserCredentials)."""
        user = self.users.get(username.decode("utf-8", "surrogateescape"))
        if user is None or not user.check_password(password):
            return None
        return user

    def set_default_password(self, password: str) -> None:
        """``requirepass``: the default user's only password, or nopass when empty."""
        default = self.default
        default.apply("resetpass", False)
        default.apply(">" + password if password else "nopass", False)

    def sorted_users(self) -> list[User]:
        """The users in ACL LIST's order (byte-wise by name)."""
        return sorted(self.users.values(),
                      key=lambda user: user.name.encode("utf-8", "surrogateescape"))

    def list_lines(self) -> list[str]:
        """ACL LIST, ACL SAVE's and CONFIG REWRITE's lines."""
        return [f"user {user.name} {user.describe()}" for user in self.sorted_users()]

    def replace_users(self, users: dict[str, User]) -> list[User]:
        """ACL LOAD: these users now (an existing user object takes its new rules, so its
        clients keep it); the users gone are returned (their clients must go)."""
        gone = [user for name, user in self.users.items() if name not in users]
        replaced: dict[str, User] = {}
        for name, user in users.items():
            existing = self.users.get(name)
            if existing is not None:
                existing.replace_with(user)
                replaced[name] = existing
            else:
                replaced[name] = user
        self.users = replaced
        return gone

    # -- SETUSER ----------------------------------------------------------------------------

    def set_user(self, name: str, ops: list[str], pubsub_default_all: bool) -> User:
        """Create or change a user; all rules apply, or none (raises AclRuleError with the
        failing rule in ``args[1]``)."""
        existing = self.users.get(name)
        working = existing.copy() if existing is not None else User(name, pubsub_default_all)
        for op in ops:
            try:
                working.apply(op, pubsub_default_all)
            except AclRuleError as err:
                raise AclRuleError(str(err), op) from err
        if existing is None:
            self.users[name] = working
            return working
        existing.replace_with(working)
        return existing

    # -- the check --------------------------------------------------------------------------

    def check(self, user: User, cmd: Command, args: list[bytes]) -> Denial | None:
        """None when ``user`` may run this request, else what it may not touch."""
        selectors = user.selectors
        if len(selectors) == 1:  # the usual user: its root selector alone
            return _check_selector(selectors[0], cmd, args)
        worst: Denial | None = None
        for selector in selectors:
            denial = _check_selector(selector, cmd, args)
            if denial is None:
                return None
            if worst is None or denial.reason > worst.reason or (
                    denial.reason == worst.reason and denial.index > worst.index):
                worst = denial
        return worst

    @staticmethod
    def allows_channel(user: User, channel: bytes, literal: bool) -> bool:
        """Whether some selector of ``user`` lets it use ``channel`` (a pattern subscription,
        ``literal``, must be one of the ACL's patterns exactly)."""
        for selector in user.selectors:
            if selector.all_channels:
                return True
            if literal:
                if channel in selector.channels:
                    return True
            elif any(matches(pattern, channel) for pattern in selector.channels):
                return True
        return False

    # -- the log ----------------------------------------------------------------------------

    def add_log(self, reason: int, context: str, obj: bytes, username: bytes,
                client_info: bytes, max_len: int) -> None:
        """Redis's addACLLogEntry: a denial like one of the ten newest within a minute of
        its last update adds to its count and moves it to the head."""
        self.denied[reason] += 1
        now = int(time.time() * 1000)
        name = REASON_NAMES[reason]
        for position, entry in enumerate(self.log[:_LOG_GROUP_SCAN]):
            if (entry.reason == name and entry.context == context and entry.object == obj
                    and entry.username == username
                    and abs(entry.updated_ms - now) <= _LOG_GROUP_WINDOW_MS):
                entry.count += 1
                entry.client_info = client_info
                entry.updated_ms = now
                self.log.insert(0, self.log.pop(position))
                return
        self.log.insert(0, LogEntry(name, context, obj, username, client_info,
                                    self.next_entry_id, now, now))
        self.next_entry_id += 1
        del self.log[max_len:]


def _check_selector(selector: Selector, cmd: Command, args: list[bytes]) -> Denial | None:
    if not selector.all_commands and not cmd.allowed_unauthenticated and (
            cmd.fullname not in selector.commands):
        first_args = selector.first_args.get(cmd.fullname)
        at = 2 if cmd.parent is not None else 1
        if not first_args or len(args) <= at or args[at].lower() not in first_args:
            return Denial(COMMAND, 0)
    # (``key_flags`` is None for all but a few commands: the tuple compare is left to those.)
    if not selector.all_keys and (cmd.key_flags is None or cmd.key_flags != ("not_key",)):
        if single_key(cmd):
            index = cmd.first_key
            if index < len(args):
                need = READ | WRITE if selector.keys_read_write else needs_of(cmd, args)[0]
                if not selector.allows_key(args[index], need):
                    return Denial(KEY, index)
        else:
            for index, need in key_needs(cmd, args):
                if not selector.allows_key(args[index], need):
                    return Denial(KEY, index)
    if not selector.all_channels:
        shape = _CHANNEL_ARGUMENTS.get(cmd.fullname) if cmd.is_pubsub else None
        if shape is not None:
            every, literal = shape
            for index in range(1, len(args) if every else min(2, len(args))):
                channel = args[index]
                if literal:
                    allowed = channel in selector.channels
                else:
                    allowed = any(matches(pattern, channel) for pattern in selector.channels)
                if not allowed:
                    return Denial(CHANNEL, index)
    return None


def _default_user() -> User:
    default = User("default")
    for rule in ("on", "nopass", "~*", "&*", "+@all"):
        default.apply(rule, False)
    return default


def read_acl_file(path: str, pubsub_default_all: bool) -> dict[str, User]:
    """The users of an ACL file (``user <name> <rule> ...`` lines, Redis's ACLLoadFromFile:
    words split on single spaces, no comments); every error of the file in one message,
    as Redis reports them, and no user when there is one."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except OSError as unreadable:
        raise AclFileError(
            f"Error loading ACLs, opening file '{path}': {unreadable.strerror}") from None
    errors: list[str] = []
    users: dict[str, User] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(" \t\r\n")
        if not line:
            continue
        words = line.split(" ")
        if words[0] != "user" or len(words) < 2 or not words[1]:
            errors.append(f"{path}:{number} should start with user keyword followed by the "
                          "username. ")
            continue
        name = words[1]
        if any(char.isspace() or char == "\0" for char in name):
            errors.append(f"'{path}:{number}: username '{name}' contains invalid characters. ")
            continue
        if name in users:
            errors.append(f"WARNING: Duplicate user '{name}' found on line {number}. ")
            continue
        rules, unclosed = merge_selectors([word.strip("\t\r\n") for word in words[2:]])
        if unclosed is not None:
            errors.append(f"{path}:{number}: Unmatched parenthesis in selector definition. ")
            continue
        user = User(name, pubsub_default_all)
        for rule in rules:
            try:
                user.apply(rule, pubsub_default_all)
            except AclRuleError as err:
                if str(err) == NOT_FOUND:
                    errors.append(f"{path}:{number}: Error in applying operation '{rule}': "
                                  f"{err}. ")
                    continue
                errors.append(f"{path}:{number}: {err}. ")
                break
        users[name] = user
    if errors:
        raise AclFileError("".join(errors) + "WARNING: ACL errors detected, no change to the "
                           "previously active ACL rules was performed")
    users.setdefault("default", _default_user())
    return users


def write_acl_file(path: str, lines: list[str]) -> None:
    """ACL SAVE: ACL LIST's lines, in a file written aside and renamed over the old one (a
    crash leaves the old file or the new one, whole)."""
    text = "".join(line + "\n" for line in lines)
    temporary = f"{path}.tmp-{os.getpid()}-{int(time.time() * 1000)}"
    try:
        with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise AclFileError(str(err)) from err
