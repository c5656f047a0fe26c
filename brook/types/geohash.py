"""Geohash arithmetic as Redis's geo commands use it: pure functions on plain numbers.

A geo member is a sorted-set member whose score is a 52-bit integer: the position's longitude
and latitude each cut into 26 bits (the cell of a 2**26 by 2**26 grid over longitudes -180..180
and latitudes -85.05112878..85.05112878, the Web Mercator limits) and interleaved, latitude
on the even bits and longitude on the odd ones. So cells that are near on the map are mostly
near in score order, and a search is a few score ranges (the cell around the centre at a
coarser step and its eight neighbours) followed by an exact distance filter.

Every value here is the one Redis computes, bit for bit: the same double operations in the
same order (``sin``/``cos``/``asin`` are the C library's, which Python calls too), the same
truncations where C converts a double to an integer, and the same quirks (a neighbour equal to
the one just searched is skipped; the first box is never compared). Distances are haversine
distances on a sphere of radius 6372797.560856 m.
"""

from __future__ import annotations

import math
from typing import Final, NamedTuple

LONG_MIN: Final = -180.0
LONG_MAX: Final = 180.0
LAT_MIN: Final = -85.05112878
LAT_MAX: Final = 85.05112878
STEP_MAX: Final = 26  # bits per coordinate in a stored score: 52 in all

EARTH_RADIUS: Final = 6372797.560856  # metres: the quadratic mean radius of WGS-84
MERCATOR_MAX: Final = 20037726.37
_DEG_TO_RAD: Final = math.pi / 180.0

_U64: Final = (1 << 64) - 1
_EVEN: Final = 0x5555555555555555
_ODD: Final = 0xAAAAAAAAAAAAAAAA

# Metres per unit of a distance argument (GEODIST's and the searches' M, KM, FT, MI).
UNITS: Final[dict[bytes, float]] = {b"m": 1.0, b"km": 1000.0, b"ft": 0.3048, b"mi": 1609.34}


class Area(NamedTuple):
    """The bounds of a geohash cell, in degrees."""

    lon_min: float
    lon_max: float
    lat_min: float
    lat_max: float


def valid_position(longitude: float, latitude: float) -> bool:
    """Whether a position can be indexed (the poles beyond the Mercator limits cannot)."""
    return LONG_MIN <= longitude <= LONG_MAX and LAT_MIN <= latitude <= LAT_MAX


# ---------------------------------------------------------------------------------------------
# Interleaving
# ---------------------------------------------------------------------------------------------


def _spread(value: int) -> int:
    """The 32 low bits of ``value`` moved to the even bit positions of a 64-bit word."""
    value &= 0xFFFFFFFF
    value = (value | (value << 16)) & 0x0000FFFF0000FFFF
    value = (value | (value << 8)) & 0x00FF00FF00FF00FF
    value = (value | (value << 4)) & 0x0F0F0F0F0F0F0F0F
    value = (value | (value << 2)) & 0x3333333333333333
    return (value | (value << 1)) & _EVEN


def _squeeze(value: int) -> int:
    """The inverse of :func:`_spread`: the even bits of ``value`` packed into 32 bits."""
    value &= _EVEN
    value = (value | (value >> 1)) & 0x3333333333333333
    value = (value | (value >> 2)) & 0x0F0F0F0F0F0F0F0F
    value = (value | (value >> 4)) & 0x00FF00FF00FF00FF
    value = (value | (value >> 8)) & 0x0000FFFF0000FFFF
    return (value | (value >> 16)) & 0xFFFFFFFF


def interleave(lat_cell: int, lon_cell: int) -> int:
    """Latitude bits on the even positions, longitude bits on the odd ones."""
    return (_spread(lat_cell) | (_spread(lon_cell) << 1)) & _U64


def deinterleave(bits: int) -> tuple[int, int]:
    """(latitude cell, longitude cell) of interleaved ``bits``."""
    return _squeeze(bits), _squeeze(bits >> 1)


# ---------------------------------------------------------------------------------------------
# Encoding and decoding
# ---------------------------------------------------------------------------------------------


def encode(longitude: float, latitude: float, step: int,
           lon_range: tuple[float, float] = (LONG_MIN, LONG_MAX),
           lat_range: tuple[float, float] = (LAT_MIN, LAT_MAX)) -> int:
    """The interleaved cell (``2 * step`` bits) holding a position inside the given ranges.
    A coordinate exactly at a range's top lands one past the last cell, as in Redis."""
    lat_offset = (latitude - lat_range[0]) / (lat_range[1] - lat_range[0])
    lon_offset = (longitude - lon_range[0]) / (lon_range[1] - lon_range[0])
    scale = float(1 << step)
    return interleave(int(lat_offset * scale), int(lon_offset * scale))


def align52(bits: int, step: int) -> int:
    """A cell of ``step`` bits per coordinate as the 52-bit score of its first position."""
    return (bits << (52 - step * 2)) & _U64


def score_of(longitude: float, latitude: float) -> int:
    """The score GEOADD stores for a (valid) position."""
    return align52(encode(longitude, latitude, STEP_MAX), STEP_MAX)


def decode(bits: int, step: int,
           lon_range: tuple[float, float] = (LONG_MIN, LONG_MAX),
           lat_range: tuple[float, float] = (LAT_MIN, LAT_MAX)) -> Area:
    """The bounds of an interleaved cell of ``step`` bits per coordinate."""
    lat_cell, lon_cell = deinterleave(bits)
    lat_scale = lat_range[1] - lat_range[0]
    lon_scale = lon_range[1] - lon_range[0]
    cells = float(1 << step)
    return Area(
        lon_range[0] + (lon_cell / cells) * lon_scale,
        lon_range[0] + ((lon_cell + 1) / cells) * lon_scale,
        lat_range[0] + (lat_cell / cells) * lat_scale,
        lat_range[0] + ((lat_cell + 1) / cells) * lat_scale,
    )


def _as_uint64(score: float) -> int:
    """C's ``(uint64_t)score`` as x86-64 code computes it, for any score a sorted set may
    hold (ZADD can give a geo key scores GEOADD never makes)."""
    if score != score or score <= -9.223372036854775808e18:
        return 1 << 63
    if score < 9.223372036854775808e18:
        return int(score) & _U64
    if score < 1.8446744073709552e19:
        return int(score)
    return 0


_CELLS: Final = float(1 << STEP_MAX)
_LAT_SCALE: Final = LAT_MAX - LAT_MIN
_LON_SCALE: Final = LONG_MAX - LONG_MIN


def _latitude(bits: int) -> float:
    """The latitude of a stored position's cell centre (decode's bounds, averaged, clamped)."""
    cell = _squeeze(bits)
    middle = ((LAT_MIN + (cell / _CELLS) * _LAT_SCALE)
              + (LAT_MIN + ((cell + 1) / _CELLS) * _LAT_SCALE)) / 2
    return LAT_MIN if middle < LAT_MIN else LAT_MAX if middle > LAT_MAX else middle


def _longitude(bits: int) -> float:
    cell = _squeeze(bits >> 1)
    middle = ((LONG_MIN + (cell / _CELLS) * _LON_SCALE)
              + (LONG_MIN + ((cell + 1) / _CELLS) * _LON_SCALE)) / 2
    return LONG_MIN if middle < LONG_MIN else LONG_MAX if middle > LONG_MAX else middle


def position_of(score: float) -> tuple[float, float]:
    """(longitude, latitude) of a stored score: the centre of its cell, kept within limits."""
    bits = _as_uint64(score)
    return _longitude(bits), _latitude(bits)


_ALPHABET: Final = b"0123456789bcdefghjkmnpqrstuvwxyz"


def geohash_string(score: float) -> bytes:
    """GEOHASH's 11 characters: the position re-encoded with the standard geohash ranges
    (latitudes -90..90), 52 bits in base 32, and a last character that is always ``0``."""
    longitude, latitude = position_of(score)
    bits = encode(longitude, latitude, STEP_MAX, (-180.0, 180.0), (-90.0, 90.0))
    chars = [_ALPHABET[(bits >> (52 - (i + 1) * 5)) & 0x1F] for i in range(10)]
    return bytes(chars) + b"0"


# ---------------------------------------------------------------------------------------------
# Distances
# ---------------------------------------------------------------------------------------------


def _cos(radians: float) -> float:
    """C's cos: NaN for an infinite angle (Python's raises)."""
    return math.cos(radians) if math.isfinite(radians) else math.nan


def _asin(value: float) -> float:
    """C's asin: NaN outside [-1, 1] (the haversine of antipodes may round just above 1)."""
    return math.asin(value) if -1.0 <= value <= 1.0 else math.nan


def latitude_distance(lat1: float, lat2: float) -> float:
    """Metres between two latitudes on one meridian."""
    return EARTH_RADIUS * abs(lat2 * _DEG_TO_RAD - lat1 * _DEG_TO_RAD)


def distance(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """The haversine distance in metres (one meridian: the cheaper latitude difference)."""
    v = math.sin((lon2 * _DEG_TO_RAD - lon1 * _DEG_TO_RAD) / 2)
    if v == 0.0:
        return latitude_distance(lat1, lat2)
    lat1r = lat1 * _DEG_TO_RAD
    lat2r = lat2 * _DEG_TO_RAD
    u = math.sin((lat2r - lat1r) / 2)
    a = u * u + math.cos(lat1r) * math.cos(lat2r) * v * v
    return 2.0 * EARTH_RADIUS * _asin(math.sqrt(a))


class Shape(NamedTuple):
    """A search area around (``longitude``, ``latitude``): a circle of radius ``width``
    (``height`` None) or an axis-aligned box, both in a unit of ``conversion`` metres (kept
    apart, as Redis multiplies them at different points)."""

    longitude: float
    latitude: float
    conversion: float
    width: float
    height: float | None


class Matcher:
    """Which candidates of one search lie inside its shape, and how far from its centre, as
    Redis's geoWithinShape decides: a circle compares the haversine distance with the radius;
    a box checks the latitude difference, then the distance along the candidate's parallel.
    What depends on the centre alone is computed once (the same operations on the same
    values: the same results).
    A circle first drops candidates whose latitude alone puts them farther than the radius
    (with a margin far above rounding), before decoding their longitude and the haversine;
    not those nearly opposite in latitude, whose haversine term may round above 1 and give
    Redis's NaN distance (which no radius excludes)."""

    __slots__ = ("shape", "lon_r", "lat_r", "cos_lat", "limit", "half_width", "half_height",
                 "lat_band")

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.lon_r = shape.longitude * _DEG_TO_RAD
        self.lat_r = shape.latitude * _DEG_TO_RAD
        self.cos_lat = _cos(self.lat_r)
        self.limit = shape.width * shape.conversion
        self.half_width = shape.width * shape.conversion / 2
        self.half_height = (0.0 if shape.height is None
                            else shape.height * shape.conversion / 2)
        self.lat_band = self.limit * (1 + 1e-9) + 1.0

    def distance_of(self, score: float) -> float | None:
        """The distance in metres to the centre of the member at ``score``, None outside."""
        bits = int(score) if 0.0 <= score < 9.223372036854775808e18 else _as_uint64(score)
        latitude = _latitude(bits)
        lat_r = latitude * _DEG_TO_RAD
        lat_gap = EARTH_RADIUS * abs(self.lat_r - lat_r)
        if self.shape.height is None:
            if lat_gap > self.lat_band and abs(self.lat_r + lat_r) > 1e-3:
                return None
            found = self._from_centre(_longitude(bits) * _DEG_TO_RAD, lat_r, lat_gap)
            return None if found > self.limit else found
        if lat_gap > self.half_height:
            return None
        lon_r = _longitude(bits) * _DEG_TO_RAD
        v = math.sin((self.lon_r - lon_r) / 2)
        if v != 0.0:
            cos_lat = math.cos(lat_r)
            along = 2.0 * EARTH_RADIUS * _asin(math.sqrt(cos_lat * cos_lat * v * v))
            if along > self.half_width:
                return None
        return self._from_centre(lon_r, lat_r, lat_gap)

    def _from_centre(self, lon_r: float, lat_r: float, lat_gap: float) -> float:
        """distance(centre, point) with the centre's terms already computed."""
        v = math.sin((lon_r - self.lon_r) / 2)
        if v == 0.0:
            return lat_gap
        u = math.sin((lat_r - self.lat_r) / 2)
        a = u * u + self.cos_lat * math.cos(lat_r) * v * v
        return 2.0 * EARTH_RADIUS * _asin(math.sqrt(a))


# ---------------------------------------------------------------------------------------------
# The areas a search covers
# ---------------------------------------------------------------------------------------------


def _estimate_step(range_meters: float, latitude: float) -> int:
    """The cell size (bits per coordinate) whose cells are about as large as the search."""
    if range_meters == 0:
        return STEP_MAX
    step = 1
    while range_meters < MERCATOR_MAX:
        range_meters *= 2
        step += 1
    step -= 2
    if latitude > 66 or latitude < -66:
        step -= 1
        if latitude > 80 or latitude < -80:
            step -= 1
    return min(max(step, 1), STEP_MAX)


def _bounding_box(shape: Shape) -> tuple[float, float, float, float]:
    """(min lon, min lat, max lon, max lat) around the shape, the longitudes taken at the
    parallel farther from the equator."""
    conversion = shape.conversion
    half_height = conversion * (shape.width if shape.height is None else shape.height / 2)
    half_width = conversion * (shape.width if shape.height is None else shape.width / 2)
    lat_delta = (half_height / EARTH_RADIUS) / _DEG_TO_RAD
    top = ((half_width / EARTH_RADIUS) / _cos((shape.latitude + lat_delta) * _DEG_TO_RAD)
           ) / _DEG_TO_RAD
    bottom = ((half_width / EARTH_RADIUS) / _cos((shape.latitude - lat_delta) * _DEG_TO_RAD)
              ) / _DEG_TO_RAD
    lon_delta = bottom if shape.latitude < 0 else top
    return (shape.longitude - lon_delta, shape.latitude - lat_delta,
            shape.longitude + lon_delta, shape.latitude + lat_delta)


def _moved(bits: int, step: int, east: int, north: int) -> int:
    """The cell ``east`` and ``north`` (each -1, 0 or 1) of a cell, wrapping around."""
    if east:
        lon = bits & _ODD
        filler = _EVEN >> (64 - step * 2)
        if east > 0:
            lon = lon + filler + 1
        else:
            lon = (lon | filler) - (filler + 1)
        bits = ((lon & (_ODD >> (64 - step * 2))) | (bits & _EVEN)) & _U64
    if north:
        lat = bits & _EVEN
        filler = _ODD >> (64 - step * 2)
        if north > 0:
            lat = lat + filler + 1
        else:
            lat = (lat | filler) - (filler + 1)
        bits = ((lat & (_EVEN >> (64 - step * 2))) | (bits & _ODD)) & _U64
    return bits


# The neighbours in the order Redis searches them (after the centre cell): N, S, E, W, NE, NW,
# SE, SW as (east, north) moves.
_NEIGHBOURS: Final = ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1))
_NORTH, _SOUTH, _EAST, _WEST = 0, 1, 2, 3
_DROPPED_BY_SIDE: Final = {  # which neighbours an edge of the search excludes
    "south": (1, 7, 6), "north": (0, 4, 5), "west": (3, 7, 5), "east": (2, 6, 4)}


def score_ranges(shape: Shape) -> list[tuple[int, int]]:
    """The score ranges [low, high) a search reads, in Redis's order: the centre cell and the
    neighbours still needed, at a step where the cells cover the shape."""
    min_lon, min_lat, max_lon, max_lat = _bounding_box(shape)
    if shape.height is None:
        radius = shape.width
    else:
        radius = math.sqrt((shape.width / 2) * (shape.width / 2)
                           + (shape.height / 2) * (shape.height / 2))
    radius *= shape.conversion
    step = _estimate_step(radius, shape.latitude)
    centre = encode(shape.longitude, shape.latitude, step)
    neighbours = [_moved(centre, step, east, north) for east, north in _NEIGHBOURS]
    north = decode(neighbours[_NORTH], step)
    south = decode(neighbours[_SOUTH], step)
    east = decode(neighbours[_EAST], step)
    west = decode(neighbours[_WEST], step)
    if step > 1 and (north.lat_max < max_lat or south.lat_min > min_lat
                     or east.lon_max < max_lon or west.lon_min > min_lon):
        step -= 1
        centre = encode(shape.longitude, shape.latitude, step)
        neighbours = [_moved(centre, step, east, north) for east, north in _NEIGHBOURS]
    area = decode(centre, step)
    searched: list[int | None] = [centre, *neighbours]
    if step >= 2:
        dropped: list[int] = []
        if area.lat_min < min_lat:
            dropped += _DROPPED_BY_SIDE["south"]
        if area.lat_max > max_lat:
            dropped += _DROPPED_BY_SIDE["north"]
        if area.lon_min < min_lon:
            dropped += _DROPPED_BY_SIDE["west"]
        if area.lon_max > max_lon:
            dropped += _DROPPED_BY_SIDE["east"]
        for index in dropped:
            searched[index + 1] = None
    ranges: list[tuple[int, int]] = []
    previous: int | None = None  # the last neighbour searched (the centre is not compared)
    for position, bits in enumerate(searched):
        if bits is None:
            continue
        if previous is not None and bits == previous:
            continue
        ranges.append((align52(bits, step), align52(bits + 1, step)))
        if position:
            previous = bits
    return ranges


def format_distance(value: float) -> bytes:
    """A distance as Redis replies it: rounded to four decimals (half to even, as llrint). A
    NaN (the haversine of antipodes can round to one) or a value past 64 bits is llrint's
    LLONG_MIN, as Redis prints it."""
    product = value * 10000.0
    if not -9.223372036854775808e18 <= product < 9.223372036854775808e18:
        return b"-922337203685477.5808"
    scaled = round(product)
    sign = b"-" if scaled < 0 else b""
    whole, fraction = divmod(abs(scaled), 10000)
    return b"%s%d.%04d" % (sign, whole, fraction)


__all__ = ["EARTH_RADIUS", "LAT_MAX", "LAT_MIN", "LONG_MAX", "LONG_MIN", "STEP_MAX", "UNITS",
           "Area", "Matcher", "Shape", "align52", "decode", "deinterleave", "distance",
           "encode", "format_distance", "geohash_string", "interleave", "latitude_distance",
           "position_of", "score_of", "score_ranges", "valid_position"]
