"""Geo commands: positions kept as sorted-set scores (GEOADD, GEOPOS, GEODIST, GEOHASH) and the
searches (GEOSEARCH, GEOSEARCHSTORE and the deprecated GEORADIUS family), as geo.c does them.

A geo key is an ordinary sorted set whose scores are 52-bit geohashes
(:mod:`brook.types.geohash` holds the arithmetic). GEOADD is ZADD with the positions turned into
scores: it runs ZADD's own handler on the rewritten request, so its replies, keyspace event
(``zadd``) and errors are ZADD's, and it persists as that ZADD, as Redis propagates it.

A search reads the score ranges of the centre cell and its neighbours, keeps the members
inside the shape (COUNT ... ANY stops as soon as it has enough), then sorts by distance: ASC
or DESC, ASC by default with COUNT, otherwise the order the ranges were read in. Ties come out
as in Redis: a stable sort (glibc's qsort is a merge sort), or Redis's partial quicksort
(:mod:`brook.types.partial_sort`) when COUNT keeps fewer results than were found. The
arguments are checked in geo.c's order (the source key's type first, then the centre and
shape, the options left to right, their combinations last), so a bad request gets the error
Redis gives it. A STORE destination is written as ZUNIONSTORE writes one (a new sorted set,
or its deletion when nothing was found); STORE commands are deterministic and persist as sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.commands.args import parse_int
from brook.commands.registry import COMMANDS, NOT_FLOAT, SYNTAX_ERROR, CommandError, command, text
from brook.commands.zset_add import run_zadd
from brook.commands.zset_args import read_zset, score_reply, to_double
from brook.notify import ZSET, stored
from brook.persistence.effects import propagate
from brook.protocol import resp
from brook.types.geohash import (
    UNITS,
    Matcher,
    Shape,
    distance,
    format_distance,
    geohash_string,
    position_of,
    score_of,
    score_ranges,
    valid_position,
)
from brook.types.partial_sort import partial_sort
from brook.types.zset import SortedSet, key_score, score_prefix

if TYPE_CHECKING:
    from brook.session import Session

BAD_UNIT: Final = "ERR unsupported unit provided. please use M, KM, FT, MI"
NOT_A_MEMBER: Final = "ERR could not decode requested zset member"

# How a search names its centre and shape (geo.c's flags).
_BY_COORDS, _BY_MEMBER, _NO_STORE, _SEARCH, _SEARCH_STORE = 1, 2, 4, 8, 16
_UNSORTED, _ASC, _DESC = 0, 1, 2
_LLONG: Final = 1 << 63


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------


def _double(arg: bytes, error: str = NOT_FLOAT) -> float:
    """getDoubleFromObject: the whole argument a number (no NaN), else ``error``."""
    value = to_double(arg)
    if value is None or value != value:
        raise CommandError(error)
    return value


def _position(args: list[bytes], at: int) -> tuple[float, float]:
    """extractLongLatOrReply: a longitude and a latitude, both numbers, inside the limits."""
    longitude = _double(args[at])
    latitude = _double(args[at + 1])
    if not valid_position(longitude, latitude):
        raise CommandError(f"ERR invalid longitude,latitude pair {longitude:f},{latitude:f}")
    return longitude, latitude


def _unit(arg: bytes) -> float:
    """The metres in one unit of a distance argument."""
    metres = UNITS.get(arg.lower())
    if metres is None:
        raise CommandError(BAD_UNIT)
    return metres


def _radius(args: list[bytes], at: int) -> tuple[float, float]:
    """extractDistanceOrReply: (radius, metres per unit) of ``radius unit``."""
    radius = _double(args[at], "ERR need numeric radius")
    if radius < 0:
        raise CommandError("ERR radius cannot be negative")
    return radius, _unit(args[at + 1])


def _box(args: list[bytes], at: int) -> tuple[float, float, float]:
    """extractBoxOrReply: (width, height, metres per unit) of ``width height unit``."""
    width = _double(args[at], "ERR need numeric width")
    height = _double(args[at + 1], "ERR need numeric height")
    if height < 0 or width < 0:
        raise CommandError("ERR height or width cannot be negative")
    return width, height, _unit(args[at + 2])


def _member_position(zset: SortedSet, member: bytes) -> tuple[float, float]:
    score = zset.score(member)
    if score is None:
        raise CommandError(NOT_A_MEMBER)
    return position_of(score)


def _hash_reply(score: float) -> bytes:
    """WITHHASH: the score as C's ``(long long)`` makes it (truncated; LLONG_MIN past it)."""
    return resp.integer(int(score) if -_LLONG <= score < _LLONG else -_LLONG)


def _coordinates_reply(score: float, proto: int) -> bytes:
    longitude, latitude = position_of(score)
    return b"*2\r\n" + score_reply(longitude, proto) + score_reply(latitude, proto)


# ---------------------------------------------------------------------------------------------
# GEOADD, GEOPOS, GEODIST, GEOHASH
# ---------------------------------------------------------------------------------------------

_GEOADD_OPTIONS: Final = (b"nx", b"xx", b"ch")


@command(
    "geoadd", arity=-5, flags="write denyoom", keys=(1, 1, 1), acl="@write @geo @slow",
    group="geo", since="3.2.0",
    summary="Adds one or more members to a geospatial index. The key is created if it doesn't "
    "exist.",
    complexity="O(log(N)) for each item added, where N is the number of elements in the "
    "sorted set.",
    syntax="key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]",
)
def geoadd(client: Session, args: list[bytes]) -> bytes:
    """ZADD of the positions' scores: the options (NX, XX, CH) are passed on as sent."""
    first = 2
    seen: set[bytes] = set()
    while first < len(args) and args[first].lower() in _GEOADD_OPTIONS:
        seen.add(args[first].lower())
        first += 1
    if (len(args) - first) % 3 or {b"nx", b"xx"} <= seen:
        raise CommandError(SYNTAX_ERROR)
    request = [b"zadd", *args[1:first]]
    for at in range(first, len(args), 3):
        request.append(b"%d" % score_of(*_position(args, at)))
        request.append(args[at + 2])
    server = client.server
    dirty = server.dirty
    reply = run_zadd(client, request)
    if server.dirty != dirty:
        propagate(client, request)
    return reply


@command(
    "geopos", arity=-2, flags="readonly", keys=(1, 1, 1), acl="@read @geo @slow", group="geo",
    since="3.2.0",
    summary="Returns the longitude and latitude of members from a geospatial index.",
    complexity="O(1) for each member requested.",
    syntax="key [member [member ...]]",
)
def geopos(client: Session, args: list[bytes]) -> bytes:
    zset = read_zset(client.db, args[1])
    proto = client.protocol
    replies = []
    for member in args[2:]:
        score = None if zset is None else zset.score(member)
        replies.append(resp.null_array(proto) if score is None
                       else _coordinates_reply(score, proto))
    return resp.array(replies)


@command(
    "geodist", arity=-4, flags="readonly", keys=(1, 1, 1), acl="@read @geo @slow", group="geo",
    since="3.2.0", summary="Returns the distance between two members of a geospatial index.",
    syntax="key member1 member2 [M | KM | FT | MI]",
)
def geodist(client: Session, args: list[bytes]) -> bytes:
    """The unit is checked first, then the key; a missing member gives a null."""
    metres = 1.0
    if len(args) == 5:
        metres = _unit(args[4])
    elif len(args) > 5:
        raise CommandError(SYNTAX_ERROR)
    zset = read_zset(client.db, args[1])
    proto = client.protocol
    if zset is None:
        return resp.null(proto)
    first = zset.score(args[2])
    second = zset.score(args[3])
    if first is None or second is None:
        return resp.null(proto)
    found = distance(*position_of(first), *position_of(second))
    return resp.bulk(format_distance(found / metres))


@command(
    "geohash", arity=-2, flags="readonly", keys=(1, 1, 1), acl="@read @geo @slow", group="geo",
    since="3.2.0", summary="Returns members from a geospatial index as geohash strings.",
    complexity="O(1) for each member requested.",
    syntax="key [member [member ...]]",
)
def geohash(client: Session, args: list[bytes]) -> bytes:
    zset = read_zset(client.db, args[1])
    scores = [None if zset is None else zset.score(member) for member in args[2:]]
    return resp.array_of_bulks_or_nulls(
        [None if score is None else geohash_string(score) for score in scores], client.protocol)


# ---------------------------------------------------------------------------------------------
# Searches
# ---------------------------------------------------------------------------------------------


class _Search:
    """A parsed search request (georadiusGeneric's arguments)."""

    __slots__ = ("any", "center", "count", "dist", "hash", "coord", "radius", "box",
                 "sort", "store", "storedist")

    def __init__(self) -> None:
        self.center: tuple[float, float] | None = None
        self.radius: tuple[float, float] | None = None  # radius, metres per unit
        self.box: tuple[float, float, float] | None = None  # width, height, metres per unit
        self.dist = self.hash = self.coord = self.any = self.storedist = False
        self.sort = _UNSORTED
        self.count = 0
        self.store: bytes | None = None

    def shape(self) -> Shape:
        assert self.center is not None
        longitude, latitude = self.center
        if self.box is not None:
            width, height, metres = self.box
            return Shape(longitude, latitude, metres, width, height)
        assert self.radius is not None
        radius, metres = self.radius
        return Shape(longitude, latitude, metres, radius, None)


def _parse(args: list[bytes], zset: SortedSet | None, source: int, flags: int) -> _Search:
    """The centre, shape and options of a search, checked in geo.c's order."""
    search = _Search()
    searching = bool(flags & _SEARCH)
    if flags & _BY_COORDS:
        base = 6
        search.center = _position(args, 2)
        search.radius = _radius(args, 4)
    elif flags & _BY_MEMBER:
        base = 5
        if zset is not None:  # without a key nothing more is read: the reply is empty anyway
            search.center = _member_position(zset, args[2])
            search.radius = _radius(args, 3)
    else:
        base = source + 1
        if flags & _SEARCH_STORE:
            search.store = args[1]
    from_member = from_position = False
    argc = len(args)
    position = base
    while position < argc:
        word = args[position].lower()
        left = argc - position - 1  # arguments after this one
        if word == b"withdist":
            search.dist = True
        elif word == b"withhash":
            search.hash = True
        elif word == b"withcoord":
            search.coord = True
        elif word == b"any":
            search.any = True
        elif word == b"asc":
            search.sort = _ASC
        elif word == b"desc":
            search.sort = _DESC
        elif word == b"count" and left >= 1:
            search.count = parse_int(args[position + 1])
            if search.count <= 0:
                raise CommandError("ERR COUNT must be > 0")
            position += 1
        elif word in (b"store", b"storedist") and left >= 1 and not flags & (_NO_STORE | _SEARCH):
            search.store = args[position + 1]
            search.storedist = word == b"storedist"
            position += 1
        elif word == b"storedist" and flags & _SEARCH_STORE:
            search.storedist = True
        elif word == b"frommember" and left >= 1 and searching and not from_position:
            if zset is not None:
                search.center = _member_position(zset, args[position + 1])
            from_member = True
            position += 1
        elif word == b"fromlonlat" and left >= 2 and searching and not from_member:
            search.center = _position(args, position + 1)
            from_position = True
            position += 2
        elif word == b"byradius" and left >= 2 and searching and search.box is None:
            search.radius = _radius(args, position + 1)
            position += 2
        elif word == b"bybox" and left >= 3 and searching and search.radius is None:
            search.box = _box(args, position + 1)
            position += 3
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 1
    if search.store is not None and (search.dist or search.hash or search.coord):
        name = "GEOSEARCHSTORE" if flags & _SEARCH_STORE else "STORE option in GEORADIUS"
        raise CommandError(
            f"ERR {name} is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
    if searching and not (from_member or from_position):
        raise CommandError("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for "
                           + text(args[0]))
    if searching and search.radius is None and search.box is None:
        raise CommandError("ERR exactly one of BYRADIUS and BYBOX can be specified for "
                           + text(args[0]))
    if search.any and not search.count:
        raise CommandError("ERR the ANY argument requires COUNT argument")
    return search


def _found(zset: SortedSet, shape: Shape, limit: int) -> list[tuple[float, float, bytes]]:
    """(distance in metres, score, member) of the members inside the shape, range by range
    in score order; with ``limit`` (COUNT ... ANY) the search stops once it has that many."""
    order = zset.order
    distance_of = Matcher(shape).distance_of
    found: list[tuple[float, float, bytes]] = []
    for low, high in score_ranges(shape):
        if limit and len(found) >= limit:
            break
        start, stop = zset.span(score_prefix(float(low)), score_prefix(float(high)))
        for key in order[start:stop]:
            score = key_score(key)
            metres = distance_of(score)
            if metres is not None:
                found.append((metres, score, key[8:]))
            if limit and len(found) >= limit:
                break
    return found


def _search(client: Session, args: list[bytes], source: int, flags: int) -> bytes:
    """georadiusGeneric: every search command."""
    zset = read_zset(client.db, args[source])
    search = _parse(args, zset, source, flags)
    if zset is None:
        if search.store is not None:
            stored(client, search.store, None, ZSET, b"")
            return resp.ZERO
        return resp.EMPTY_ARRAY
    count = search.count
    order = search.sort
    if count and order == _UNSORTED and not search.any:
        order = _ASC  # the nearest COUNT
    shape = search.shape()
    found = _found(zset, shape, count if search.any else 0)
    if not found and search.store is None:
        return resp.EMPTY_ARRAY
    if order != _UNSORTED:
        if count and count < len(found):  # pqsort: only as far as the first COUNT
            partial_sort(found, [point[0] for point in found], 0, count - 1, order == _DESC)
            del found[count:]
        else:  # qsort (glibc's is a stable merge sort)
            found.sort(key=lambda point: point[0], reverse=order == _DESC)
    elif count:
        del found[count:]
    metres = shape.conversion
    if search.store is not None:
        return _store(client, search, [(member, dist / metres if search.storedist else score)
                                       for dist, score, member in found], flags)
    proto = client.protocol
    options = search.dist + search.hash + search.coord
    replies = []
    for dist, score, member in found:
        reply = resp.bulk(member)
        if options:
            reply = b"*%d\r\n%s" % (options + 1, reply)
            if search.dist:
                reply += resp.bulk(format_distance(dist / metres))
            if search.hash:
                reply += _hash_reply(score)
            if search.coord:
                reply += _coordinates_reply(score, proto)
        replies.append(reply)
    return resp.array(replies)


def _store(client: Session, search: _Search, pairs: list[tuple[bytes, float]], flags: int
           ) -> bytes:
    """The result as a new sorted set at the destination (nothing found: its deletion)."""
    result = None
    if pairs:
        result = SortedSet.restore(pairs, "skiplist")
        result.fit(client.server.config)
    event = b"geosearchstore" if flags & _SEARCH else b"georadiusstore"
    assert search.store is not None
    stored(client, search.store, result, ZSET, event, len(pairs))
    return resp.integer(len(pairs))


_SEARCH_COMPLEXITY: Final = (
    "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "
    "around the shape provided as the filter and M is the number of items inside the shape")
_RADIUS_COMPLEXITY: Final = (
    "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
    "area delimited by center and radius and M is the number of items inside the index.")
_OPTIONS: Final = "[WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]"
_AREA: Final = ("<FROMMEMBER member | FROMLONLAT longitude latitude> "
                "<BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>>")


@command(
    "georadius", arity=-6, flags="write denyoom movablekeys", keys=(1, 1, 1),
    acl="@write @geo @slow", group="geo", since="3.2.0",
    summary="Queries a geospatial index for members within a distance from a coordinate, "
    "optionally stores the result.",
    complexity=_RADIUS_COMPLEXITY,
    syntax=f"key longitude latitude radius <M | KM | FT | MI> {_OPTIONS} "
    "[STORE key | STOREDIST key]",
)
def georadius(client: Session, args: list[bytes]) -> bytes:
    return _search(client, args, 1, _BY_COORDS)


@command(
    "georadius_ro", arity=-6, flags="readonly", keys=(1, 1, 1), acl="@read @geo @slow",
    group="geo", since="3.2.10",
    summary="Returns members from a geospatial index that are within a distance from a "
    "coordinate.",
    complexity=_RADIUS_COMPLEXITY,
    syntax=f"key longitude latitude radius <M | KM | FT | MI> {_OPTIONS}",
)
def georadius_ro(client: Session, args: list[bytes]) -> bytes:
    return _search(client, args, 1, _BY_COORDS | _NO_STORE)


@command(
    "georadiusbymember", arity=-5, flags="write denyoom movablekeys", keys=(1, 1, 1),
    acl="@write @geo @slow", group="geo", since="3.2.0",
    summary="Queries a geospatial index for members within a distance from a member, "
    "optionally stores the result.",
    complexity=_RADIUS_COMPLEXITY,
    syntax=f"key member radius <M | KM | FT | MI> {_OPTIONS} [STORE key | STOREDIST key]",
)
def georadiusbymember(client: Session, args: list[bytes]) -> bytes:
    return _search(client, args, 1, _BY_MEMBER)


@command(
    "georadiusbymember_ro", arity=-5, flags="readonly", keys=(1, 1, 1),
    acl="@read @geo @slow", group="geo", since="3.2.10",
    summary="Returns members from a geospatial index that are within a distance from a member.",
    complexity=_RADIUS_COMPLEXITY,
    syntax=f"key member radius <M | KM | FT | MI> {_OPTIONS}",
)
def georadiusbymember_ro(client: Session, args: list[bytes]) -> bytes:
    return _search(client, args, 1, _BY_MEMBER | _NO_STORE)


@command(
    "geosearch", arity=-7, flags="readonly", keys=(1, 1, 1), acl="@read @geo @slow",
    group="geo", since="6.2.0",
    summary="Queries a geospatial index for members inside an area of a box or a circle.",
    complexity=_SEARCH_COMPLEXITY,
    syntax=f"key {_AREA} [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]",
)
def geosearch(client: Session, args: list[bytes]) -> bytes:
    return _search(client, args, 1, _SEARCH)


@command(
    "geosearchstore", arity=-8, flags="write denyoom", keys=(1, 2, 1), acl="@write @geo @slow",
    group="geo", since="6.2.0",
    summary="Queries a geospatial index for members inside an area of a box or a circle, "
    "optionally stores the result.",
    complexity=_SEARCH_COMPLEXITY,
    syntax=f"destination source {_AREA} [ASC | DESC] [COUNT count [ANY]] [STOREDIST]",
)
def geosearchstore(client: Session, args: list[bytes]) -> bytes:
    return _search(client, args, 2, _SEARCH | _SEARCH_STORE)


def _georadius_keys(argc: int, args: list[bytes]) -> list[int]:
    return _store_keys(argc, args, 6)


def _georadiusbymember_keys(argc: int, args: list[bytes]) -> list[int]:
    return _store_keys(argc, args, 5)


def _store_keys(argc: int, args: list[bytes], first_option: int) -> list[int]:
    """GEORADIUS/GEORADIUSBYMEMBER's key specs: the source, then the key after the first
    STORE and the one after the first STOREDIST from the options on (both when both are
    given, as COMMAND GETKEYS reports them)."""
    found = [1]
    for keyword in (b"store", b"storedist"):
        for at in range(first_option, argc - 1):
            if args[at].lower() == keyword:
                found.append(at + 1)
                break
    return found


COMMANDS["georadius"].find_keys = _georadius_keys
COMMANDS["georadiusbymember"].find_keys = _georadiusbymember_keys
