"""SORT and SORT_RO: the elements of a list, set or sorted set, sorted, looked up, stored.

Mirrors Redis's ``sortCommandGeneric`` (sort.c) step by step, because its edge cases are what
clients and Redis's own tests rely on:

* options are parsed before the key is looked up, so a syntax error wins over WRONGTYPE;
* ``BY`` with a pattern that has no ``*`` means "do not sort": a list or sorted set keeps its
  own order (``DESC`` walks it backwards), a set is sorted ALPHA anyway when the result is
  stored, so that what the AOF replays is deterministic;
* numeric sorting reads each weight as Redis's ``fast_float_strtod`` does (the whole string,
  no spaces, no hex, ``inf`` accepted, NaN refused); a missing weight counts as 0; equal
  weights are ordered by the elements' bytes, so the result is deterministic;
* ``GET #`` is the element, ``GET pat*`` a string key, ``GET pat*->field`` a hash field, and a
  pattern with no ``*`` finds nothing (nil, or an empty string in a stored list);
* ``STORE`` writes a list (deleting the destination when the result is empty) and answers its
  length.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from brook import keyspace
from brook.commands.args import parse_int
from brook.commands.registry import COMMANDS, SYNTAX_ERROR, WRONGTYPE, CommandError, command
from brook.notify import LIST, stored
from brook.protocol import resp
from brook.types.hash import Hash
from brook.types.lists import ListValue

if TYPE_CHECKING:
    from brook.keyspace import Database
    from brook.session import Session

_NOT_A_DOUBLE = "ERR One or more scores can't be converted into double"

# What fast_float's from_chars accepts (Redis >= 8 reads SORT weights with it): an optional
# minus, digits with an optional fraction, an optional exponent; or inf/infinity/nan.
_FAST_FLOAT = re.compile(
    rb"-?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf(?:inity)?|nan))"
)


class _Options:
    """What the request asks for, parsed before anything is looked up."""

    __slots__ = ("desc", "alpha", "start", "count", "store", "by", "dont_sort", "gets")

    def __init__(self) -> None:
        self.desc = False
        self.alpha = False
        self.start = 0
        self.count = -1
        self.store: bytes | None = None
        self.by: bytes | None = None
        self.dont_sort = False
        self.gets: list[bytes] = []


def _parse_options(args: list[bytes], readonly: bool) -> _Options:
    options = _Options()
    j, argc = 2, len(args)
    while j < argc:
        word = args[j].lower()
        left = argc - j - 1
        if word == b"asc":
            options.desc = False
        elif word == b"desc":
            options.desc = True
        elif word == b"alpha":
            options.alpha = True
        elif word == b"limit" and left >= 2:
            options.start = parse_int(args[j + 1])
            options.count = parse_int(args[j + 2])
            j += 2
        elif word == b"store" and left >= 1 and not readonly:
            options.store = args[j + 1]
            j += 1
        elif word == b"by" and left >= 1:
            options.by = args[j + 1]
            options.dont_sort = b"*" not in _c_string(args[j + 1])
            j += 1
        elif word == b"get" and left >= 1:
            options.gets.append(args[j + 1])
            j += 1
        else:
            raise CommandError(SYNTAX_ERROR)
        j += 1
    return options


def _c_string(value: bytes) -> bytes:
    """What C string functions see of a value: the bytes before its first NUL."""
    end = value.find(b"\0")
    return value if end < 0 else value[:end]


def lookup_by_pattern(db: Database, pattern: bytes, element: bytes) -> bytes | None:
    """Redis's lookupKeyByPattern: ``#`` is the element; the first ``*`` is replaced by it;
    ``->field`` after the ``*`` reads that field of a hash. Anything else finds nothing."""
    if pattern == b"#":
        return element
    star = _c_string(pattern).find(b"*")
    if star < 0:
        return None
    arrow = _c_string(pattern).find(b"->", star + 1)
    field = None
    if arrow >= 0 and arrow + 2 < len(_c_string(pattern)):
        field = pattern[arrow + 2:]
        name = pattern[:star] + element + pattern[star + 1:arrow]
    else:
        name = pattern[:star] + element + pattern[star + 1:]
    value = db.lookup_read(name)
    if value is None:
        return None
    if field is not None:
        return value.get(field) if type(value) is Hash else None  # type: ignore[attr-defined]
    if type(value) is bytes:
        return value
    return bytes(value) if type(value) is bytearray else None


def _weight(value: bytes | None) -> float | None:
    """A numeric weight (0 for a missing one); None when it is not a double."""
    if value is None:
        return 0.0
    text = _c_string(value)
    if not text:
        return 0.0  # fast_float consumes nothing and the end pointer is at the NUL
    found = _FAST_FLOAT.fullmatch(text)
    if found is None:
        return None
    weight = float(text)
    return None if weight != weight else weight


def _elements(value: object, options: _Options,
              in_script: bool) -> tuple[list[bytes], int, int]:
    """The elements to sort (or already in output order) and the [start, end] window."""
    kind = keyspace.TYPE_NAMES.get(type(value)) if value is not None else "list"
    if kind == "zset":
        elements = [member for member, _score in value.items()]  # type: ignore[attr-defined]
    elif kind in ("list", "set"):
        elements = list(value) if value is not None else []  # type: ignore[call-overload]
    else:
        raise CommandError(WRONGTYPE)
    if options.dont_sort and kind == "set" and (options.store is not None or in_script):
        # The set's own order is not reproducible: sort it so the stored list (or what a
        # script does with the reply) is.
        options.dont_sort, options.alpha, options.by = False, True, None
    length = len(elements)
    start = min(max(options.start, 0), length)
    count = min(max(options.count, -1), length)
    end = length - 1 if count < 0 else start + count - 1
    if start >= length:
        start, end = length - 1, length - 2
    end = min(end, length - 1)
    if options.dont_sort and kind in ("list", "zset") and options.desc:
        elements.reverse()
    return elements, start, end


def _sorted(db: Database, elements: list[bytes], options: _Options) -> list[bytes]:
    by = options.by
    if options.alpha:
        if by is None:
            return sorted(elements, reverse=options.desc)
        # Elements whose weight key is missing sort first; equal weights keep no set order.
        keyed = [(w is not None, w or b"", e) for e in elements
                 for w in (lookup_by_pattern(db, by, e),)]
        keyed.sort(key=lambda item: (item[0], item[1]), reverse=options.desc)
        return [element for _, _, element in keyed]
    weights = []
    for element in elements:
        weight = _weight(lookup_by_pattern(db, by, element) if by is not None else element)
        if weight is None:
            raise CommandError(_NOT_A_DOUBLE)
        weights.append((weight, element))
    weights.sort(reverse=options.desc)
    return [element for _, element in weights]


def _sort(client: Session, args: list[bytes], readonly: bool) -> bytes:
    options = _parse_options(args, readonly)
    db = client.db
    elements, start, end = _elements(db.lookup_read(args[1]), options, client.in_script)
    if not options.dont_sort:
        elements = _sorted(db, elements, options)
    window = elements[start:end + 1] if end >= start else []
    if options.gets:
        output: list[bytes | None] = [lookup_by_pattern(db, pattern, element)
                                      for element in window for pattern in options.gets]
    else:
        output = list(window)
    if options.store is None:
        return resp.array_of_bulks_or_nulls(output, client.protocol)
    destination = options.store
    stored(client, destination,
           ListValue(b"" if item is None else item for item in output) if output else None,
           LIST, b"sortstore", len(output))
    return resp.integer(len(output))


def sort_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """Redis's sortGetKeys: the sorted key and the last STORE destination, skipping the
    arguments of LIMIT, GET and BY so that a key named "store" is not taken for the option."""
    positions = [1]
    store = None
    skips = {b"limit": 2, b"get": 1, b"by": 1}
    i = 2
    while i < argc:
        word = args[i].lower()
        if word in skips:
            i += skips[word]
        elif word == b"store" and i + 1 < argc:
            store = i + 1
            i += 1
        i += 1
    if store is not None:
        positions.append(store)
    return positions


@command(
    "sort", arity=-2, flags="write denyoom movablekeys", keys=(1, 1, 1),
    acl="@write @set @sortedset @list @slow @dangerous", group="generic", since="1.0.0",
    summary="Sorts the elements in a list, a set, or a sorted set, optionally storing the "
    "result.",
    complexity="O(N+M*log(M)) where N is the number of elements in the list or set to sort, "
    "and M the number of returned elements. When the elements are not sorted, complexity is "
    "O(N).",
    syntax="key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] "
    "[ASC | DESC] [ALPHA] [STORE destination]",
)
def sort(client: Session, args: list[bytes]) -> bytes:
    return _sort(client, args, readonly=False)


@command(
    "sort_ro", arity=-2, flags="readonly movablekeys", keys=(1, 1, 1),
    acl="@read @set @sortedset @list @slow @dangerous", group="generic", since="7.0.0",
    summary="Returns the sorted elements of a list, a set, or a sorted set.",
    complexity="O(N+M*log(M)) where N is the number of elements in the list or set to sort, "
    "and M the number of returned elements. When the elements are not sorted, complexity is "
    "O(N).",
    syntax="key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] "
    "[ASC | DESC] [ALPHA]",
)
def sort_ro(client: Session, args: list[bytes]) -> bytes:
    return _sort(client, args, readonly=True)


COMMANDS["sort"].find_keys = sort_key_positions
