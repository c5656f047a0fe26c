"""ACL users and selectors, and the rule language that changes them (Redis's ACLSetUser and
ACLSetSelector, with the newest Redis's way of describing a user: the command rules as they
were typed, a later rule removing the earlier ones it overrides).

A user has flags, password hashes and selectors; the first selector is the *root* one, which
rules outside parentheses change. A selector allows commands (full names: ``config|get``),
keys (glob patterns, each for reading, writing or both) and Pub/Sub channels. A command runs
when one selector allows the command, all its keys and all its channels.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Final

from brook.commands.registry import COMMANDS, Command, command_named
from brook.glob import Matcher, matcher

__all__ = [
    "CATEGORIES", "READ", "WRITE", "AclRuleError", "Selector", "User", "all_commands",
    "category_commands", "merge_selectors", "password_hash",
]

READ: Final = 1
WRITE: Final = 2

# ACL CAT's order (Redis's ACLCommandCategories).
CATEGORIES: Final = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
    "connection", "transaction", "scripting",
)

# ACLSetUserStringError's texts, by the errno Redis sets.
NOT_FOUND: Final = "Unknown command or category name in ACL"
SYNTAX: Final = "Syntax error"
AFTER_ALL_KEYS: Final = (
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
    "have any effect. Try 'resetkeys' to start with an empty list of patterns")
AFTER_ALL_CHANNELS: Final = (
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
    "not have any effect. Try 'resetchannels' to start with an empty list of channels")
NO_SUCH_PASSWORD: Final = "The password you are trying to remove from the user does not exist"
BAD_HASH: Final = ("The password hash must be exactly 64 characters and contain only lowercase "
                   "hexadecimal characters")
SUBCOMMAND_FIRST_ARG: Final = "Allowing first-arg of a subcommand is not supported"

_HEX: Final = frozenset("0123456789abcdef")


class AclRuleError(Exception):
    """A rule that cannot be applied (its text is one of the messages above)."""


def password_hash(password: bytes) -> str:
    return hashlib.sha256(password).hexdigest()


# -- the command table, as rules see it -------------------------------------------------------

def all_commands() -> Iterator[Command]:
    """Every command and subcommand."""
    for cmd in COMMANDS.values():
        yield cmd
        yield from cmd.subcommands.values()


def category_commands(category: str) -> list[Command]:
    """The commands and subcommands in ``@category`` (without the ``@``)."""
    tag = "@" + category
    return [cmd for cmd in all_commands() if tag in cmd.acl_categories]


def _family(cmd: Command) -> list[Command]:
    """A command with its subcommands: allowing or denying a container does both."""
    return [cmd, *cmd.subcommands.values()]


# -- selectors ------------------------------------------------------------------------------

class Selector:
    """What one selector allows."""

    __slots__ = ("commands", "all_commands", "future_commands", "first_args", "rules",
                 "keys", "key_exact", "key_prefixes", "key_globs", "keys_read_write",
                 "all_keys", "channels", "all_channels")

    def __init__(self, all_channels: bool = False) -> None:
        self.commands: set[str] = set()  # full names of the allowed commands
        self.all_commands = False  # every command: the check is skipped
        # ``+@all``'s "commands to come" bit: the description starts with +@all while it is set.
        self.future_commands = False
        self.first_args: dict[str, set[bytes]] = {}  # +select|0: a command, for a first arg
        self.rules: list[str] = []  # the command rules as typed, lower-cased (+get, -@admin)
        self.keys: list[tuple[bytes, int]] = []  # (pattern, READ|WRITE)
        # The same patterns sorted for the check of every request (allows_key): literal keys,
        # ``prefix*`` patterns, and the other globs.
        self.key_exact: dict[bytes, int] = {}
        self.key_prefixes: list[tuple[bytes, int]] = []
        self.key_globs: list[tuple[Matcher, int]] = []
        # Every pattern allows reading and writing: what a request does to its key does not
        # matter (the check skips working it out).
        self.keys_read_write = True
        self.all_keys = False
        self.channels: list[bytes] = []
        self.all_channels = all_channels

    def copy(self) -> Selector:
        made = Selector()
        made.commands = set(self.commands)
        made.all_commands = self.all_commands
        made.future_commands = self.future_commands
        made.first_args = {name: set(args) for name, args in self.first_args.items()}
        made.rules = list(self.rules)
        made.keys = list(self.keys)
        made.key_exact = dict(self.key_exact)
        made.key_prefixes = list(self.key_prefixes)
        made.key_globs = list(self.key_globs)
        made.keys_read_write = self.keys_read_write
        made.all_keys = self.all_keys
        made.channels = list(self.channels)
        made.all_channels = self.all_channels
        return made

    @property
    def unrestricted(self) -> bool:
        return self.all_commands and self.all_keys and self.all_channels

    # -- rules ------------------------------------------------------------------------------

    def apply(self, op: str) -> None:
        """One selector rule (ACLSetSelector); raises AclRuleError."""
        lowered = op.lower()
        if lowered in ("allkeys", "~*"):
            self.all_keys = True
            self._set_keys([])
        elif lowered == "resetkeys":
            self.all_keys = False
            self._set_keys([])
        elif op.startswith(("~", "%")):
            self._add_key_pattern(op)
        elif lowered in ("allchannels", "&*"):
            self.all_channels = True
            self.channels = []
        elif lowered == "resetchannels":
            self.all_channels = False
            self.channels = []
        elif op.startswith("&"):
            if self.all_channels:
                raise AclRuleError(AFTER_ALL_CHANNELS)
            pattern = op[1:].encode("utf-8", "surrogateescape")
            if _has_space(pattern):
                raise AclRuleError(SYNTAX)
            if pattern not in self.channels:
                self.channels.append(pattern)
        elif lowered in ("allcommands", "+@all"):
            self.commands = {cmd.fullname for cmd in all_commands()}
            self.all_commands = self.future_commands = True
            self.first_args = {}
            self.rules = []
        elif lowered in ("nocommands", "-@all"):
            self.commands = set()
            self.all_commands = self.future_commands = False
            self.first_args = {}
            self.rules = []
        elif op.startswith(("+", "-")):
            self._command_rule(op[0] == "+", op[1:])
        else:
            raise AclRuleError(SYNTAX)

    def _add_key_pattern(self, op: str) -> None:
        if self.all_keys:
            raise AclRuleError(AFTER_ALL_KEYS)
        flags = READ | WRITE
        position = 1
        if op.startswith("%"):
            flags = 0
            while position < len(op) and op[position] != "~":
                letter = op[position].upper()
                if letter == "R" and not flags & READ:
                    flags |= READ
                elif letter == "W" and not flags & WRITE:
                    flags |= WRITE
                else:
                    raise AclRuleError(SYNTAX)
                position += 1
            if not flags:
                raise AclRuleError(SYNTAX)
            position += 1  # the "~" (Redis accepts "%R" without one: the empty pattern)
        pattern = op[position:].encode("utf-8", "surrogateescape")
        if _has_space(pattern):
            raise AclRuleError(SYNTAX)
        keys = list(self.keys)
        for index, (existing, existing_flags) in enumerate(keys):
            if existing == pattern:
                keys[index] = (pattern, existing_flags | flags)
                break
        else:
            keys.append((pattern, flags))
        self._set_keys(keys)

    def _set_keys(self, keys: list[tuple[bytes, int]]) -> None:
        """The key patterns, and the forms the check reads them in."""
        self.keys = keys
        self.key_exact, self.key_prefixes, self.key_globs = {}, [], []
        self.keys_read_write = all(flags == READ | WRITE for _, flags in keys)
        for pattern, flags in keys:
            if not _GLOB_SPECIALS.intersection(pattern):
                self.key_exact[pattern] = flags
            elif pattern.endswith(b"*") and not _GLOB_SPECIALS.intersection(pattern[:-1]):
                self.key_prefixes.append((pattern[:-1], flags))
            else:
                self.key_globs.append((matcher(pattern), flags))

    def allows_key(self, key: bytes, need: int) -> bool:
        """Whether a pattern with the ``need``-ed permissions (READ, WRITE) matches ``key``
        (``allkeys`` is checked by the caller)."""
        for prefix, flags in self.key_prefixes:
            # A slice and ==, not startswith: compiled, these two are native operations.
            if flags & need == need and key[:len(prefix)] == prefix:
                return True
        exact = self.key_exact.get(key)
        if exact is not None and exact & need == need:
            return True
        for match, flags in self.key_globs:  # noqa: SIM110 - a loop, not a generator, when compiled
            if flags & need == need and match(key):
                return True
        return False

    def _command_rule(self, allow: bool, name: str) -> None:
        if name.startswith("@"):
            category = name[1:].lower()
            if category not in CATEGORIES:
                raise AclRuleError(NOT_FOUND)
            for member in category_commands(category):
                self._set(_family(member), allow)
            self._note_rule(allow, "@" + category)
            return
        if not allow:
            denied = command_named(name)
            if denied is None or "|" in name and denied.parent is None:
                raise AclRuleError(NOT_FOUND)
            self._set(_family(denied), False)
            self._note_rule(False, denied.fullname)
            return
        if "|" not in name:
            allowed = COMMANDS.get(name.lower())
            if allowed is None:
                raise AclRuleError(NOT_FOUND)
            self._set(_family(allowed), True)
            self._note_rule(True, allowed.fullname)
            return
        parent_name, _, argument = name.rpartition("|")
        parent = command_named(parent_name)
        if parent is None:
            raise AclRuleError(NOT_FOUND)
        if parent.parent is not None:
            raise AclRuleError(SUBCOMMAND_FIRST_ARG)
        if not argument:
            raise AclRuleError(SYNTAX)
        if parent.subcommands:
            sub = parent.subcommands.get(argument.lower().encode())
            if sub is None:
                raise AclRuleError(NOT_FOUND)
            self._set([sub], True)
        else:
            # Redis's deprecated "first argument" form (+select|0): the command is allowed
            # when its first argument is this one.
            self.first_args.setdefault(parent.fullname, set()).add(
                argument.lower().encode("utf-8", "surrogateescape"))
        self._note_rule(True, name.lower())

    def _set(self, commands: list[Command], allow: bool) -> None:
        for cmd in commands:
            if allow:
                self.commands.add(cmd.fullname)
            else:
                self.commands.discard(cmd.fullname)
                self.all_commands = False
            self.first_args.pop(cmd.fullname, None)

    def _note_rule(self, allow: bool, body: str) -> None:
        """ACLUpdateCommandRules: the rule replaces the earlier ones about the same command (or
        its subcommands), and goes last."""
        below = body + "|"
        self.rules = [rule for rule in self.rules
                      if rule[1:] != body and not rule[1:].startswith(below)]
        self.rules.append(("+" if allow else "-") + body)

    # -- description ------------------------------------------------------------------------

    def describe_commands(self) -> str:
        head = "+@all" if self.future_commands else "-@all"
        return " ".join([head, *self.rules])

    def describe_keys(self) -> str:
        """GETUSER's ``keys``: ``~*``, the patterns, or an empty string."""
        if self.all_keys:
            return "~*"
        return " ".join(_key_text(pattern, flags) for pattern, flags in self.keys)

    def describe_channels(self) -> str:
        if self.all_channels:
            return "&*"
        return " ".join("&" + _text(pattern) for pattern in self.channels)

    def describe(self) -> str:
        """ACL LIST's form (ACLDescribeSelector)."""
        parts: list[str] = []
        if self.all_keys:
            parts.append("~*")
        else:
            parts.extend(_key_text(pattern, flags) for pattern, flags in self.keys)
        if self.all_channels:
            parts.append("&*")
        else:
            parts.append("resetchannels")
            parts.extend("&" + _text(pattern) for pattern in self.channels)
        parts.append(self.describe_commands())
        return " ".join(parts)


_GLOB_SPECIALS: Final = frozenset(b"*?[]\\")


def _key_text(pattern: bytes, flags: int) -> str:
    prefix = "~" if flags == READ | WRITE else ("%R~" if flags == READ else "%W~")
    return prefix + _text(pattern)


def _text(pattern: bytes) -> str:
    return pattern.decode("utf-8", "surrogateescape")


def _has_space(pattern: bytes) -> bool:
    return any(byte in b" \t\n\r\x0b\x0c\x00" for byte in pattern)


# -- users ----------------------------------------------------------------------------------

class User:
    """A user: its flags, password hashes and selectors (the root one first)."""

    __slots__ = ("name", "enabled", "nopass", "sanitize", "passwords", "selectors")

    def __init__(self, name: str, pubsub_default_all: bool = False) -> None:
        self.name = name
        self.enabled = False
        self.nopass = False
        self.sanitize: str = "sanitize-payload"  # or "skip-sanitize-payload"
        self.passwords: list[str] = []  # SHA-256 hex digests, in the order they were added
        self.selectors: list[Selector] = [Selector(pubsub_default_all)]

    @property
    def root(self) -> Selector:
        return self.selectors[0]

    @property
    def unrestricted(self) -> bool:
        """Every command, key and channel (the default user): nothing to check."""
        return self.root.unrestricted

    def copy(self) -> User:
        made = User(self.name)
        made.enabled = self.enabled
        made.nopass = self.nopass
        made.sanitize = self.sanitize
        made.passwords = list(self.passwords)
        made.selectors = [selector.copy() for selector in self.selectors]
        return made

    def replace_with(self, other: User) -> None:
        """Take ``other``'s rules (a SETUSER applied to a copy, which succeeded): connected
        clients hold this object and see the change on their next command."""
        self.enabled = other.enabled
        self.nopass = other.nopass
        self.sanitize = other.sanitize
        self.passwords = other.passwords
        self.selectors = other.selectors

    def check_password(self, password: bytes) -> bool:
        if not self.enabled:
            return False
        return self.nopass or password_hash(password) in self.passwords

    # -- rules ------------------------------------------------------------------------------

    def apply(self, op: str, pubsub_default_all: bool) -> None:
        """One user rule (ACLSetUser); raises AclRuleError."""
        lowered = op.lower()
        if not op:
            return
        if lowered == "on":
            self.enabled = True
        elif lowered == "off":
            self.enabled = False
        elif lowered in ("skip-sanitize-payload", "sanitize-payload"):
            self.sanitize = lowered
        elif lowered == "nopass":
            self.nopass = True
            self.passwords = []
        elif lowered == "resetpass":
            self.nopass = False
            self.passwords = []
        elif op.startswith(">"):
            digest = password_hash(op[1:].encode("utf-8", "surrogateescape"))
            if digest not in self.passwords:
                self.passwords.append(digest)
            self.nopass = False
        elif op.startswith("#"):
            digest = _checked_hash(op[1:])
            if digest not in self.passwords:
                self.passwords.append(digest)
            self.nopass = False
        elif op.startswith("<"):
            self._remove_password(password_hash(op[1:].encode("utf-8", "surrogateescape")))
        elif op.startswith("!"):
            self._remove_password(_checked_hash(op[1:]))
        elif op.startswith("(") and op.endswith(")"):
            selector = Selector(pubsub_default_all)
            for part in split_selector(op[1:-1]):
                if part.lower() in _USER_ONLY:
                    raise AclRuleError(SYNTAX)
                selector.apply(part)
            self.selectors.append(selector)
        elif lowered == "clearselectors":
            del self.selectors[1:]
        elif lowered == "reset":
            for rule in ("resetpass", "resetkeys", "resetchannels",
                         "allchannels" if pubsub_default_all else "", "off",
                         "sanitize-payload", "clearselectors", "-@all"):
                self.apply(rule, pubsub_default_all)
        else:
            self.root.apply(op)

    def _remove_password(self, digest: str) -> None:
        if digest not in self.passwords:
            raise AclRuleError(NO_SUCH_PASSWORD)
        self.passwords.remove(digest)

    # -- description ------------------------------------------------------------------------

    def flags(self) -> list[str]:
        """GETUSER's flags, in Redis's order."""
        found = ["on" if self.enabled else "off"]
        if self.nopass:
            found.append("nopass")
        found.append(self.sanitize)
        return found

    def describe(self) -> str:
        """ACL LIST's line after ``user <name> `` (ACLDescribeUser)."""
        parts = self.flags()
        parts.extend("#" + digest for digest in self.passwords)
        parts.append(self.root.describe())
        parts.extend(f"({selector.describe()})" for selector in self.selectors[1:])
        return " ".join(parts)


_USER_ONLY: Final = frozenset({
    "on", "off", "nopass", "resetpass", "reset", "clearselectors", "skip-sanitize-payload",
    "sanitize-payload",
})


def _checked_hash(text: str) -> str:
    if len(text) != 64 or not set(text) <= _HEX:
        raise AclRuleError(BAD_HASH)
    return text


def merge_selectors(words: list[str]) -> tuple[list[str], str | None]:
    """Rules from words: a selector spread over several words (``(~a`` ... ``+get)``) is one
    rule (Redis's ACLMergeSelectorArguments). Also the word that opened a selector never
    closed (None: all closed)."""
    rules: list[str] = []
    opened: list[str] | None = None
    for word in words:
        if opened is not None:
            opened.append(word)
            if word.endswith(")"):
                rules.append(" ".join(opened))
                opened = None
        elif word.startswith("(") and not word.endswith(")"):
            opened = [word]
        else:
            rules.append(word)
    return rules, None if opened is None else opened[0]


def split_selector(text: str) -> list[str]:
    """The rules inside a selector's parentheses (Redis splits them as a config line)."""
    return text.split()
