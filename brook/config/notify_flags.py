"""The keyspace-event classes (``notify-keyspace-events``): Redis's flag bits, the letters
that name them, and how the letters are read and printed back.

The flags belong to keyspace notifications (:mod:`brook.notify` publishes by them); they live
here, below the parameter table, because the table parses the parameter with them and the
configuration layer may import nothing above it. May import only :mod:`brook.config.errors`.
"""

from __future__ import annotations

from typing import Final

from brook.config.errors import ConfigError

NOTIFY_KEYSPACE: Final = 1 << 0  # K
NOTIFY_KEYEVENT: Final = 1 << 1  # E
NOTIFY_GENERIC: Final = 1 << 2  # g
NOTIFY_STRING: Final = 1 << 3  # $
NOTIFY_LIST: Final = 1 << 4  # l
NOTIFY_SET: Final = 1 << 5  # s
NOTIFY_HASH: Final = 1 << 6  # h
NOTIFY_ZSET: Final = 1 << 7  # z
NOTIFY_EXPIRED: Final = 1 << 8  # x
NOTIFY_EVICTED: Final = 1 << 9  # e
NOTIFY_STREAM: Final = 1 << 10  # t
NOTIFY_KEY_MISS: Final = 1 << 11  # m
NOTIFY_MODULE: Final = 1 << 12  # d
NOTIFY_NEW: Final = 1 << 13  # n
NOTIFY_ALL: Final = (
    NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET
    | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE
)
_NOTIFY_CLASSES: Final = {
    "g": NOTIFY_GENERIC, "$": NOTIFY_STRING, "l": NOTIFY_LIST, "s": NOTIFY_SET,
    "h": NOTIFY_HASH, "z": NOTIFY_ZSET, "x": NOTIFY_EXPIRED, "e": NOTIFY_EVICTED,
    "t": NOTIFY_STREAM, "d": NOTIFY_MODULE, "n": NOTIFY_NEW,
}
_NOTIFY_OTHERS: Final = {"K": NOTIFY_KEYSPACE, "E": NOTIFY_KEYEVENT, "m": NOTIFY_KEY_MISS}


def parse_keyspace_events(text: str, current: object = None) -> int:
    """The bit set of ``notify-keyspace-events`` letters (Redis's keyspaceEventsStringToFlags)."""
    flags = 0
    for char in text:
        if char == "A":
            flags |= NOTIFY_ALL
        elif char in _NOTIFY_CLASSES:
            flags |= _NOTIFY_CLASSES[char]
        elif char in _NOTIFY_OTHERS:
            flags |= _NOTIFY_OTHERS[char]
        else:
            raise ConfigError("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
    return flags


def render_keyspace_events(flags: object) -> str:
    value = int(flags)  # type: ignore[call-overload]
    if value & NOTIFY_ALL == NOTIFY_ALL:
        text = "A"
    else:
        text = "".join(char for char, bit in _NOTIFY_CLASSES.items() if value & bit)
    return text + "".join(char for char, bit in _NOTIFY_OTHERS.items() if value & bit)

