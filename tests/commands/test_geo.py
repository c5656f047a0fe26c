"""Geo commands, checked against real Redis (after Redis's tests/unit/geo.tcl): GEOADD's scores
bit for bit (ZSCORE reads them), its options and errors; GEOPOS, GEODIST in every unit,
GEOHASH's strings; the searches (GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and
their _RO forms) with every option, their reply shapes in RESP2 and RESP3, the order of their
argument checks and errors, the edges of the map (the Mercator latitude limits, the 180th
meridian), STORE and STOREDIST results; keyspace events, WATCH, the AOF effects (GEOADD is
written as the ZADD it becomes) and COMMAND's key positions. A seeded differential run compares
the raw replies of random searches over random points with real Redis's.

Coordinates are replies of doubles: Redis 8.0 writes them as every double (the shortest text
that reads back, a RESP3 double), 7.0 wrote 17 decimals (``13.36138933897018433``). Brook
follows the newest Redis, so their exact text is checked against Redis >= 8.0 and their values
against 7.0. Distances are written with four decimals in every version.
"""

from __future__ import annotations

import contextlib
import random
import socket
import time
from pathlib import Path

import hiredis
import pytest
import redis

from tests.conftest import WRONGTYPE, ServerProcess, error_of, run, start_brook
from tests.support.aof import AOF_ARGS, aof_commands, effects_match_redis
from tests.support.events import both

SICILY = ("13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
BAD_UNIT = "unsupported unit provided. please use M, KM, FT, MI"


def coordinates_match(server: ServerProcess, got: object, expected: list[bytes]) -> bool:
    """A GEOPOS/WITHCOORD pair: the exact text from Redis 8.0 on, the values before."""
    if server.kind == "brook" or server.version >= (8, 0):
        return got == expected
    assert isinstance(got, list) and len(got) == 2
    return all(abs(float(a) - float(b)) < 1e-12 for a, b in zip(got, expected, strict=True))


# ---------------------------------------------------------------------------------------------
# GEOADD
# ---------------------------------------------------------------------------------------------


def test_geoadd_scores_are_redis_geohashes(r):
    assert run(r, "GEOADD", "Sicily", *SICILY) == 2
    assert run(r, "ZRANGE", "Sicily", 0, -1, "WITHSCORES") == [
        b"Palermo", b"3479099956230698", b"Catania", b"3479447370796909"]
    assert run(r, "TYPE", "Sicily") == b"zset"


def test_geoadd_at_the_limits_of_the_map(r):
    assert run(r, "GEOADD", "poles", "-180", "85.05112878", "nw", "180", "85.05112878", "ne",
               "-180", "-85.05112878", "sw", "180", "-85.05112878", "se", 0, 0, "origin") == 5
    assert run(r, "ZRANGE", "poles", 0, -1, "WITHSCORES") == [
        b"sw", b"0", b"origin", b"3377699720527872", b"nw", b"4503599627370496",
        b"se", b"9007199254740992", b"ne", b"13510798882111488"]
    for longitude, latitude in (("180.0000001", 0), ("-180.0000001", 0), (0, "85.05112879"),
                                (0, "-85.05112879"), (0, 90), ("inf", 0), (0, "-inf")):
        message = error_of(r, "GEOADD", "poles", longitude, latitude, "x")
        assert message.startswith("invalid longitude,latitude pair "), message
    assert error_of(r, "GEOADD", "k", 200, 100, "x") == (
        "invalid longitude,latitude pair 200.000000,100.000000")
    assert error_of(r, "GEOADD", "k", "-181.5", "1e-3", "x") == (
        "invalid longitude,latitude pair -181.500000,0.001000")
    assert run(r, "EXISTS", "k") == 0


def test_geoadd_options(r):
    run(r, "GEOADD", "Sicily", *SICILY)
    moved = ("13.361389", "39.115556", "Palermo")
    assert run(r, "GEOADD", "Sicily", *moved, "15.087269", "37.502669", "Catania") == 0
    assert run(r, "GEOADD", "Sicily", "CH", "13.361389", "40", "Palermo", "1", "1", "new") == 2
    assert run(r, "GEOADD", "Sicily", "NX", "1", "1", "Palermo", "2", "2", "other") == 1
    assert run(r, "GEOADD", "Sicily", "XX", "1", "1", "Palermo", "2", "2", "absent") == 0
    assert run(r, "ZSCORE", "Sicily", "absent") is None
    assert run(r, "GEOADD", "Sicily", "XX", "CH", "1", "2", "Palermo", "2", "2", "x") == 1
    assert run(r, "GEOADD", "Sicily", "ch", "nx", "1", "3", "Palermo", "3", "3", "y") == 1
    assert run(r, "GEOADD", "Sicily", "CH", "CH", "XX", "1", "2", "Palermo") == 0
    assert run(r, "GEOADD", "nokey", "XX", "1", "1", "a") == 0
    assert run(r, "EXISTS", "nokey") == 0
    assert run(r, "ZSCORE", "Sicily", "Palermo") == b"3378080408407459"


def test_geoadd_errors(r):
    run(r, "GEOADD", "Sicily", *SICILY)
    for request in (("XX", "NX", 1, 1, "a"), ("NX", "XX", 1, 1, "a"), ("GT", 1, 1, "a"),
                    ("LT", 1, 1, "a"), ("INCR", 1, 1, "a"), (1, 1, "a", 2), (1, 1, "a", 2, 2),
                    ("CH", 1, 1), ("NX", "NX", "CH"), ("XX", "NX", "CH")):
        assert error_of(r, "GEOADD", "Sicily", *request) == "syntax error", request
    assert error_of(r, "GEOADD", "Sicily", "x", 1, "a") == "value is not a valid float"
    assert error_of(r, "GEOADD", "Sicily", 1, "nan", "a") == "value is not a valid float"
    assert error_of(r, "GEOADD", "Sicily", " 1", 1, "a") == "value is not a valid float"
    assert error_of(r, "GEOADD", "Sicily", 1, 1, "a", 2, "y", "b") == (
        "value is not a valid float")
    assert run(r, "ZCARD", "Sicily") == 2  # nothing added by a request that fails
    assert error_of(r, "GEOADD", "Sicily", 1, 1) == (
        "wrong number of arguments for 'geoadd' command")
    run(r, "SET", "str", "x")
    assert error_of(r, "GEOADD", "str", 1, 1, "a") == WRONGTYPE
    assert error_of(r, "GEOADD", "str", 1, 100, "a").startswith("invalid longitude")


# ---------------------------------------------------------------------------------------------
# GEOPOS, GEODIST, GEOHASH
# ---------------------------------------------------------------------------------------------


def test_geopos(server, r):
    run(r, "GEOADD", "Sicily", *SICILY)
    palermo, catania, missing = run(r, "GEOPOS", "Sicily", "Palermo", "Catania", "nosuch")
    assert coordinates_match(server, palermo, [b"13.361389338970184", b"38.1155563954963"])
    assert coordinates_match(server, catania, [b"15.087267458438873", b"37.50266842333162"])
    assert missing is None
    assert run(r, "GEOPOS", "Sicily") == []
    assert run(r, "GEOPOS", "nokey", "a", "b") == [None, None]
    run(r, "SET", "str", "x")
    assert error_of(r, "GEOPOS", "str", "a") == WRONGTYPE


@pytest.mark.min_redis(8, 0)
def test_geopos_of_the_edges_writes_shortest_doubles(r):
    run(r, "GEOADD", "poles", "-180", "85.05112878", "nw", "180", "-85.05112878", "se",
        0, 0, "origin")
    assert run(r, "GEOPOS", "poles", "nw", "se", "origin") == [
        [b"-179.99999731779099", b"85.05112878"], [b"180", b"-85.05112751263943"],
        [b"2.682209014892578e-6", b"1.2673605809254695e-6"]]


def test_geopos_of_scores_geoadd_never_makes(server, r):
    """ZADD can give a geo key any score: it decodes as Redis casts it to 64 bits."""
    run(r, "ZADD", "z", "-1", "neg", "1.5", "frac", "1e300", "huge", "-inf", "ninf",
        "18446744073709551615", "top")
    replies = run(r, "GEOPOS", "z", "neg", "frac", "huge", "ninf", "top")
    expected = [[b"180", b"85.05112878"], [b"-179.99999731779099", b"-85.05112497791825"],
                [b"-179.99999731779099", b"-85.05112751263943"],
                [b"180", b"-85.05112751263943"], [b"-179.99999731779099", b"-85.05112751263943"]]
    for got, wanted in zip(replies, expected, strict=True):
        assert coordinates_match(server, got, wanted), (got, wanted)


def test_geopos_resp3(server, r3):
    run(r3, "GEOADD", "Sicily", *SICILY)
    (palermo, missing) = run(r3, "GEOPOS", "Sicily", "Palermo", "nosuch")
    assert missing is None
    assert palermo[0] == pytest.approx(13.361389338970184, abs=1e-12)
    assert palermo[1] == pytest.approx(38.1155563954963, abs=1e-12)


def test_geodist_units(r):
    run(r, "GEOADD", "Sicily", *SICILY)
    assert run(r, "GEODIST", "Sicily", "Palermo", "Catania") == b"166274.1516"
    for unit, expected in (("m", b"166274.1516"), ("KM", b"166.2742"), ("ft", b"545518.8700"),
                           ("Mi", b"103.3182")):
        assert run(r, "GEODIST", "Sicily", "Palermo", "Catania", unit) == expected
    assert run(r, "GEODIST", "Sicily", "Palermo", "Palermo") == b"0.0000"
    assert run(r, "GEODIST", "Sicily", "Palermo", "nosuch") is None
    assert run(r, "GEODIST", "Sicily", "nosuch", "Palermo", "km") is None
    assert run(r, "GEODIST", "nokey", "a", "b") is None


def test_geodist_across_the_map(r):
    run(r, "GEOADD", "poles", "-180", "85.05112878", "nw", "180", "85.05112878", "ne",
        "-180", "-85.05112878", "sw", "180", "-85.05112878", "se", 0, 0, "origin",
        "0.000001", "0.000001", "near", "0.0001", "0.0001", "far")
    assert run(r, "GEODIST", "poles", "nw", "ne", "km") == b"0.0000"
    assert run(r, "GEODIST", "poles", "nw", "sw", "km") == b"18919.8446"
    assert run(r, "GEODIST", "poles", "sw", "ne") == b"18919844.5891"
    # Both in the same cell of the grid: the same decoded position.
    assert run(r, "GEODIST", "poles", "origin", "near") == b"0.0000"
    assert run(r, "GEODIST", "poles", "origin", "far", "ft") == b"50.4269"


def test_geodist_errors(r):
    run(r, "GEOADD", "Sicily", *SICILY)
    assert error_of(r, "GEODIST", "Sicily", "Palermo", "Catania", "yards") == BAD_UNIT
    assert error_of(r, "GEODIST", "nokey", "a", "b", "yards") == BAD_UNIT  # before the key
    assert error_of(r, "GEODIST", "Sicily", "Palermo", "Catania", "km", "x") == "syntax error"
    run(r, "SET", "str", "x")
    assert error_of(r, "GEODIST", "str", "a", "b") == WRONGTYPE
    assert error_of(r, "GEODIST", "str", "a", "b", "xx") == BAD_UNIT


def test_geodist_resp3_is_a_bulk_string(r3):
    run(r3, "GEOADD", "Sicily", *SICILY)
    assert run(r3, "GEODIST", "Sicily", "Palermo", "Catania", "km") == b"166.2742"
    assert run(r3, "GEODIST", "Sicily", "Palermo", "nosuch") is None


def test_geohash(r):
    run(r, "GEOADD", "Sicily", *SICILY)
    run(r, "GEOADD", "poles", "-180", "85.05112878", "nw", "180", "-85.05112878", "se",
        0, 0, "origin")
    assert run(r, "GEOHASH", "Sicily", "Palermo", "Catania", "nosuch") == [
        b"sqc8b49rny0", b"sqdtr74hyu0", None]
    assert run(r, "GEOHASH", "poles", "nw", "se", "origin") == [
        b"bp05b5048p0", b"00bh0hbj200", b"s0000000000"]
    assert run(r, "GEOHASH", "Sicily") == []
    assert run(r, "GEOHASH", "nokey", "a") == [None]
    run(r, "SET", "str", "x")
    assert error_of(r, "GEOHASH", "str", "a") == WRONGTYPE


# ---------------------------------------------------------------------------------------------
# Searches
# ---------------------------------------------------------------------------------------------

PLACES = ("-73.9454966", "40.747533", "lic market", "-73.9733487", "40.7648057", "central park n/q/r",
          "-73.9903085", "40.7362513", "union square", "-74.0131604", "40.7126674", "wtc one",
          "-73.7858139", "40.6428986", "jfk", "-73.9375699", "40.7498929", "q4",
          "-73.9564142", "40.7480973", "4545")


@pytest.fixture
def nyc(r):
    run(r, "GEOADD", "nyc", *PLACES)
    return r


def test_georadius_sorted_and_unsorted(nyc):
    r = nyc
    assert run(r, "GEORADIUS", "nyc", "-73.9798091", "40.7598464", 3, "km", "ASC") == [
        b"central park n/q/r", b"4545", b"union square"]
    assert run(r, "GEORADIUS_RO", "nyc", "-73.9798091", "40.7598464", 3, "km", "asc") == [
        b"central park n/q/r", b"4545", b"union square"]
    assert run(r, "GEOSEARCH", "nyc", "FROMLONLAT", "-73.9798091", "40.7598464", "BYRADIUS",
               3, "km", "DESC") == [b"union square", b"4545", b"central park n/q/r"]
    # No order asked for: the order the cells were read in.
    assert run(r, "GEORADIUS", "nyc", "-73.9798091", "40.7598464", 3, "km") == [
        b"central park n/q/r", b"4545", b"union square"]


def test_search_withdist_withhash_withcoord(server, nyc):
    r = nyc
    reply = run(r, "GEORADIUS", "nyc", "-73.9798091", "40.7598464", 3, "km", "WITHDIST",
                "WITHHASH", "WITHCOORD", "ASC")
    assert [item[:3] for item in reply] == [
        [b"central park n/q/r", b"0.7750", 1791875761332224],
        [b"4545", b"2.3651", 1791875796750882],
        [b"union square", b"2.7697", 1791875485187452]]
    assert coordinates_match(server, reply[0][3], [b"-73.97334784269333", b"40.76480639569882"])
    assert coordinates_match(server, reply[2][3], [b"-73.99031013250351", b"40.73625022711771"])
    assert run(r, "GEOSEARCH", "nyc", "FROMLONLAT", "-73.9798091", "40.7598464", "BYRADIUS",
               3, "km", "WITHDIST", "ASC") == [
        [b"central park n/q/r", b"0.7750"], [b"4545", b"2.3651"], [b"union square", b"2.7697"]]
    # Repeated options count once; the reply order is member, dist, hash, coord.
    assert run(r, "GEORADIUS", "nyc", "-73.9798091", "40.7598464", 10, "km", "WITHHASH",
               "WITHDIST", "WITHDIST", "COUNT", 1) == [
        [b"central park n/q/r", b"0.7750", 1791875761332224]]


def test_search_resp3_shapes(server, r3):
    run(r3, "GEOADD", "nyc", *PLACES)
    reply = run(r3, "GEOSEARCH", "nyc", "FROMMEMBER", "4545", "BYBOX", 4, 4, "km", "ASC",
                "WITHCOORD", "WITHDIST", "WITHHASH", "COUNT", 2)
    assert [item[:3] for item in reply] == [
        [b"4545", b"0.0000", 1791875796750882], [b"lic market", b"0.9220", 1791875804419201]]
    assert reply[0][3] == [pytest.approx(-73.9564123749733, abs=1e-12),
                           pytest.approx(40.748097513816454, abs=1e-12)]
    if server.kind == "brook" or server.version >= (8, 0):  # RESP3 doubles
        assert reply[0][3] == [-73.9564123749733, 40.748097513816454]
    assert run(r3, "GEOSEARCH", "nyc", "FROMMEMBER", "4545", "BYBOX", 4, 4, "km", "ASC") == [
        b"4545", b"lic market", b"q4", b"central park n/q/r"]
    assert run(r3, "GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYBOX", 4, 4, "km") == []


def test_georadiusbymember_and_frommember(nyc):
    r = nyc
    assert run(r, "GEORADIUSBYMEMBER", "nyc", "wtc one", 7, "km") == [
        b"wtc one", b"union square", b"central park n/q/r", b"4545", b"lic market"]
    assert run(r, "GEORADIUSBYMEMBER_RO", "nyc", "wtc one", 7, "km", "ASC") == [
        b"wtc one", b"union square", b"4545", b"central park n/q/r", b"lic market"]
    assert run(r, "GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYRADIUS", 7, "km",
               "WITHDIST", "DESC") == run(r, "GEORADIUSBYMEMBER", "nyc", "wtc one", 7, "km",
                                          "WITHDIST", "DESC")
    assert run(r, "GEORADIUSBYMEMBER", "nyc", "wtc one", 7, "km", "WITHDIST", "DESC") == [
        [b"lic market", b"6.8969"], [b"central park n/q/r", b"6.7000"], [b"4545", b"6.1975"],
        [b"union square", b"3.2544"], [b"wtc one", b"0.0000"]]


def test_count_and_any(nyc):
    r = nyc
    at = ("-73.9798091", "40.7598464")
    assert run(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", 3) == [
        b"central park n/q/r", b"4545", b"union square"]
    assert run(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", 2, "DESC") == [
        b"wtc one", b"q4"]
    assert run(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", 100) == [
        b"central park n/q/r", b"4545", b"union square", b"lic market", b"q4", b"wtc one"]
    # ANY: the first found, in reading order unless an order is asked for.
    assert run(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", 3, "ANY") == [
        b"wtc one", b"union square", b"central park n/q/r"]
    assert run(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", 3, "ANY", "ASC") == [
        b"central park n/q/r", b"union square", b"wtc one"]
    assert run(r, "GEOSEARCH", "nyc", "FROMLONLAT", *at, "BYRADIUS", 10, "km", "ANY",
               "COUNT", 2, "DESC") == [b"wtc one", b"union square"]
    assert error_of(r, "GEORADIUS", "nyc", *at, 10, "km", "ANY") == (
        "the ANY argument requires COUNT argument")
    assert error_of(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT") == "syntax error"
    assert error_of(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", 0) == "COUNT must be > 0"
    assert error_of(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", -1) == "COUNT must be > 0"
    assert error_of(r, "GEORADIUS", "nyc", *at, 10, "km", "COUNT", "x") == (
        "value is not an integer or out of range")


def test_equally_distant_members_come_in_redis_order(r):
    """A full sort keeps ties in reading order (glibc's merge sort); with COUNT below the
    results found, Redis's partial quicksort decides, and is followed step by step."""
    run(r, "GEOADD", "d", *[x for name in "abcdefgh" for x in (1, 1, name)],
        2, 2, "x", "1.5", "1.5", "y")
    assert run(r, "GEOSEARCH", "d", "FROMLONLAT", 1, 1, "BYRADIUS", 500, "km", "ASC") == [
        b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"y", b"x"]
    assert run(r, "GEOSEARCH", "d", "FROMLONLAT", 2, 2, "BYRADIUS", 500, "km", "DESC") == [
        b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"y", b"x"]
    assert run(r, "GEOSEARCH", "d", "FROMLONLAT", 1, 1, "BYRADIUS", 500, "km", "ASC", "COUNT",
               3) == [b"a", b"b", b"c"]
    assert run(r, "GEOSEARCH", "d", "FROMLONLAT", 1, 1, "BYRADIUS", 500, "km", "DESC",
               "COUNT", 4) == [b"x", b"y", b"c", b"d"]
    assert run(r, "GEOSEARCH", "d", "FROMLONLAT", 2, 2, "BYRADIUS", 500, "km", "ASC", "COUNT",
               5) == [b"x", b"y", b"c", b"d", b"e"]
    many = [x for i in range(300) for x in (1 + (i % 7) / 100, 1, f"m{i}")]
    run(r, "GEOADD", "many", *many)
    reply = run(r, "GEOSEARCH", "many", "FROMLONLAT", 1, 1, "BYRADIUS", 50, "km", "ASC",
                "COUNT", 60)
    assert len(reply) == 60
    assert reply[:12] == [b"m98", b"m119", b"m126", b"m133", b"m14", b"m140", b"m147", b"m154",
                          b"m161", b"m168", b"m175", b"m182"]


def test_units_of_searches(nyc):
    r = nyc
    at = ("-73.9798091", "40.7598464")
    for radius, unit in ((3000, "m"), (3, "KM"), ("9842.52", "ft"), ("1.86412", "mi")):
        assert run(r, "GEORADIUS", "nyc", *at, radius, unit, "WITHDIST", "ASC", "COUNT",
                   1) == [[b"central park n/q/r",
                           {"m": b"775.0164", "KM": b"0.7750", "ft": b"2542.7046",
                            "mi": b"0.4816"}[unit]]]
    assert error_of(r, "GEORADIUS", "nyc", *at, 3, "yd") == BAD_UNIT
    assert error_of(r, "GEOSEARCH", "nyc", "FROMLONLAT", *at, "BYBOX", 1, 1, "yd") == BAD_UNIT


def test_box_search(nyc):
    r = nyc
    assert run(r, "GEOSEARCH", "nyc", "FROMLONLAT", "-73.9798091", "40.7598464", "BYBOX", 6, 6,
               "km", "ASC") == [b"central park n/q/r", b"4545", b"union square", b"lic market"]
    assert run(r, "GEOSEARCH", "nyc", "FROMLONLAT", "-73.9798091", "40.7598464", "BYBOX", 14,
               2, "km", "ASC") == [b"central park n/q/r"]
    assert run(r, "GEOSEARCH", "nyc", "FROMLONLAT", "-73.9798091", "40.7598464", "BYBOX", 2,
               14, "km", "ASC") == [b"central park n/q/r", b"union square"]
    assert run(r, "GEOSEARCH", "nyc", "FROMMEMBER", "jfk", "BYBOX", 0, 0, "m") == [b"jfk"]
    assert run(r, "GEOSEARCH", "nyc", "FROMMEMBER", "jfk", "BYRADIUS", 0, "m") == [b"jfk"]


def test_the_box_spans_the_180th_meridian(r):
    run(r, "GEOADD", "points", "179.5", "36", "point1", "-179.5", "36", "point2")
    assert run(r, "GEOSEARCH", "points", "FROMLONLAT", 179, 36, "BYBOX", 400, 400, "km",
               "ASC") == [b"point1", b"point2"]
    assert run(r, "GEOSEARCH", "points", "FROMLONLAT", -179, 36, "BYBOX", 400, 400, "km",
               "ASC") == [b"point2", b"point1"]
    # A circle on the meridian reads the cells of its own side only (as Redis).
    assert run(r, "GEORADIUS", "points", 180, 36, 60, "km", "WITHDIST", "ASC") == [
        [b"point1", b"44.9918"]]


def test_searches_near_the_poles(r):
    run(r, "GEOADD", "polar", "45", "65", "n1", "-135", "85.05", "n2", "45", "85.05", "n3")
    assert run(r, "GEORADIUSBYMEMBER", "polar", "n1", 5000, "km", "ASC") == [
        b"n1", b"n3", b"n2"]
    assert run(r, "GEOSEARCH", "polar", "FROMLONLAT", 0, "85.05112878", "BYRADIUS", 100, "km",
               "WITHDIST", "ASC") == []
    assert run(r, "GEOSEARCH", "polar", "FROMLONLAT", 0, "85.05112878", "BYRADIUS", 1000,
               "km", "WITHDIST", "ASC") == [[b"n3", b"420.8929"]]
    assert run(r, "GEOSEARCH", "polar", "FROMLONLAT", 0, "-85.05112878", "BYBOX", 20000,
               20000, "km", "ASC") == []
    assert run(r, "GEOSEARCH", "polar", "FROMLONLAT", 0, "-85.05112878", "BYBOX", 40000,
               40000, "km", "ASC") == [b"n1", b"n3", b"n2"]


def test_huge_radius_finds_everything_once(nyc):
    """Redis issue #2767: neighbouring cells that are the same cell are read once."""
    r = nyc
    assert run(r, "GEORADIUS", "nyc", 1, 1, 7150, "km") == []
    assert sorted(run(r, "GEORADIUS", "nyc", "-73.9", "40.7", 7150, "km")) == sorted(
        name.encode() for name in PLACES[2::3])
    assert len(run(r, "GEORADIUS", "nyc", 0, 0, "inf", "km")) == 7
    assert len(run(r, "GEOSEARCH", "nyc", "FROMLONLAT", 0, 0, "BYBOX", "inf", "inf",
                   "km")) == 7


def test_search_argument_errors(nyc):
    r = nyc
    search = ("GEOSEARCH", "nyc")
    for request, message in (
        ((*search, "FROMMEMBER", "jfk", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "m"),
         "syntax error"),
        ((*search, "FROMLONLAT", 0, 0, "FROMMEMBER", "jfk", "BYRADIUS", 1, "m"),
         "syntax error"),
        ((*search, "BYRADIUS", 1, "m", "WITHDIST", "ASC"),
         "exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH"),
        (("geoSearch", "nyc", "FROMMEMBER", "jfk", "WITHDIST", "ASC", "WITHHASH"),
         "exactly one of BYRADIUS and BYBOX can be specified for geoSearch"),
        ((*search, "FROMMEMBER", "jfk", "BYRADIUS", 1, "m", "BYBOX", 1, 1, "m"),
         "syntax error"),
        ((*search, "FROMMEMBER", "jfk", "BYBOX", 1, 1, "m", "BYRADIUS", 1, "m"),
         "syntax error"),
        ((*search, "FROMMEMBER", "nosuch", "BYRADIUS", 1, "m"),
         "could not decode requested zset member"),
        ((*search, "FROMLONLAT", 200, 0, "BYRADIUS", 1, "m"),
         "invalid longitude,latitude pair 200.000000,0.000000"),
        ((*search, "FROMLONLAT", "x", 0, "BYRADIUS", 1, "m"), "value is not a valid float"),
        ((*search, "FROMMEMBER", "jfk", "BYRADIUS", "x", "m"), "need numeric radius"),
        ((*search, "FROMMEMBER", "jfk", "BYRADIUS", -1, "m"), "radius cannot be negative"),
        ((*search, "FROMMEMBER", "jfk", "BYBOX", "x", 1, "m"), "need numeric width"),
        ((*search, "FROMMEMBER", "jfk", "BYBOX", 1, "x", "m"), "need numeric height"),
        ((*search, "FROMMEMBER", "jfk", "BYBOX", 1, -1, "m"),
         "height or width cannot be negative"),
        ((*search, "FROMMEMBER", "jfk", "BYBOX", -1, "x", "m"), "need numeric height"),
        ((*search, "FROMMEMBER", "jfk", "ASC", "BYRADIUS", 1), "syntax error"),
        ((*search, "FROMMEMBER", "jfk", "BYRADIUS", 1, "m", "STORE", "d"), "syntax error"),
        ((*search, "FROMMEMBER", "jfk", "BYRADIUS", 1, "m", "STOREDIST"), "syntax error"),
        ((*search, "FROMMEMBER", "jfk", "BYRADIUS", 1, "m", "nosuchoption"), "syntax error"),
        (("GEORADIUS", "nyc", 0, 0, 1, "m", "FROMMEMBER", "jfk"), "syntax error"),
        (("GEORADIUS", "nyc", 0, 0, 1, "m", "BYBOX", 1, 1, "m"), "syntax error"),
        (("GEORADIUS", "nyc", 0, 0, 1, "m", "STORE"), "syntax error"),
        (("GEORADIUS_RO", "nyc", 0, 0, 1, "m", "STORE", "d"), "syntax error"),
        (("GEORADIUSBYMEMBER_RO", "nyc", "jfk", 1, "m", "STOREDIST", "d"), "syntax error"),
        (("GEORADIUS", "nyc", 0, 0, 1, "m", "STORE", "d", "WITHDIST"),
         "STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
         "options"),
        (("GEORADIUSBYMEMBER", "nyc", "jfk", 1, "m", "WITHCOORD", "STOREDIST", "d"),
         "STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
         "options"),
        (("GEOSEARCHSTORE", "d", "nyc", "FROMMEMBER", "jfk", "BYRADIUS", 1, "m", "WITHHASH"),
         "GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (("GEOSEARCHSTORE", "d", "nyc", "FROMMEMBER", "jfk", "BYRADIUS", 1, "m", "STORE",
          "x"), "syntax error"),
        (("GEORADIUS", "nyc", 0, 100, 1, "m"),
         "invalid longitude,latitude pair 0.000000,100.000000"),
        (("GEORADIUS", "nyc", 0, 0, "x", "m"), "need numeric radius"),
        (("GEORADIUSBYMEMBER", "nyc", "nosuch", "x", "m"),
         "could not decode requested zset member"),
        (("GEORADIUSBYMEMBER", "nyc", "jfk", -1, "m"), "radius cannot be negative"),
    ):
        assert error_of(r, *request) == message, request
    for name, arity in (("GEOSEARCH", 7), ("GEOSEARCHSTORE", 8), ("GEORADIUS", 6),
                        ("GEORADIUSBYMEMBER", 5), ("GEOHASH", 2), ("GEOPOS", 2),
                        ("GEODIST", 4)):
        assert error_of(r, name, *["x"] * (arity - 2)) == (
            f"wrong number of arguments for '{name.lower()}' command")


def test_wrongtype_and_missing_keys(r):
    run(r, "SET", "str", "x")
    for request in (("GEOSEARCH", "str", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "m"),
                    ("GEOSEARCH", "str", "FROMLONLAT", 0, 100, "BYRADIUS", 1, "m"),
                    ("GEOSEARCHSTORE", "d", "str", "FROMMEMBER", "a", "BYRADIUS", 1, "m"),
                    ("GEORADIUS", "str", 0, 0, 1, "m"), ("GEORADIUS", "str", 0, 0, "x", "x"),
                    ("GEORADIUSBYMEMBER", "str", "a", 1, "m"),
                    ("GEORADIUS_RO", "str", 0, 0, 1, "m"),
                    ("GEORADIUSBYMEMBER_RO", "str", "a", 1, "m")):
        assert error_of(r, *request) == WRONGTYPE, request
    # A missing key: arguments are still checked, a BYMEMBER radius is not read at all.
    assert run(r, "GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYBOX", 1, 1, "m") == []
    assert run(r, "GEORADIUS", "nokey", 0, 0, 1, "m", "WITHDIST") == []
    assert run(r, "GEORADIUSBYMEMBER", "nokey", "a", -1, "m") == []
    assert run(r, "GEORADIUSBYMEMBER", "nokey", "a", "x", "x", "COUNT", 1) == []
    assert error_of(r, "GEORADIUS", "nokey", 0, 0, 1, "yd") == BAD_UNIT
    assert error_of(r, "GEOSEARCH", "nokey", "FROMMEMBER", "a", "ASC", "ASC", "ASC") == (
        "exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH")
    assert error_of(r, "GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", 1, "m", "ANY") == (
        "the ANY argument requires COUNT argument")


def scored(server: ServerProcess, reply: list[bytes]) -> list[object]:
    """A WITHSCORES reply; scores as text from Redis 7.2 on (7.0 wrote ``%.17g``), else as
    numbers."""
    if server.kind == "brook" or server.version >= (7, 2):
        return reply
    return [float(x) if i % 2 else x for i, x in enumerate(reply)]


def test_store_and_storedist(server, nyc):
    r = nyc
    at = ("-73.9798091", "40.7598464")
    assert run(r, "GEORADIUS", "nyc", *at, 3, "km", "STORE", "points") == 3
    assert run(r, "ZRANGE", "points", 0, -1, "WITHSCORES") == [
        b"union square", b"1791875485187452", b"central park n/q/r", b"1791875761332224",
        b"4545", b"1791875796750882"]
    assert run(r, "GEORADIUS", "nyc", *at, 3, "km", "STOREDIST", "dists", "DESC",
               "COUNT", 2) == 2
    assert scored(server, run(r, "ZRANGE", "dists", 0, -1, "WITHSCORES")) == scored(server, [
        b"4545", b"2.3651170851181265", b"union square", b"2.769665579719509"])
    assert run(r, "GEORADIUSBYMEMBER", "nyc", "wtc one", 3500, "m", "STOREDIST", "d2") == 2
    assert scored(server, run(r, "ZRANGE", "d2", 0, -1, "WITHSCORES")) == scored(server, [
        b"wtc one", b"0", b"union square", b"3254.395457335749"])
    assert run(r, "GEOSEARCHSTORE", "d3", "nyc", "FROMMEMBER", "wtc one", "BYRADIUS", 3500, "m",
               "STOREDIST") == 2
    assert run(r, "ZRANGE", "d3", 0, -1, "WITHSCORES") == run(r, "ZRANGE", "d2", 0, -1,
                                                               "WITHSCORES")
    assert run(r, "GEOSEARCHSTORE", "d4", "nyc", "FROMMEMBER", "wtc one", "BYBOX", 7, 7, "km",
               "COUNT", 1, "ASC") == 1
    assert run(r, "ZRANGE", "d4", 0, -1, "WITHSCORES") == [b"wtc one", b"1791873972053020"]
    # The last STORE or STOREDIST wins.
    assert run(r, "GEORADIUS", "nyc", *at, 3, "km", "STORE", "a", "STOREDIST", "b") == 3
    assert run(r, "EXISTS", "a", "b") == 1
    assert float(run(r, "ZSCORE", "b", "4545")) == 2.3651170851181265
    # The destination is replaced, whatever it held; an empty result deletes it.
    run(r, "SET", "str", "x")
    run(r, "EXPIRE", "str", 100)
    assert run(r, "GEOSEARCHSTORE", "str", "nyc", "FROMLONLAT", *at, "BYRADIUS", 1, "km") == 1
    assert run(r, "TYPE", "str") == b"zset"
    assert run(r, "TTL", "str") == -1
    assert run(r, "GEOSEARCHSTORE", "str", "nyc", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km") == 0
    assert run(r, "EXISTS", "str") == 0
    run(r, "SET", "str", "x")
    assert run(r, "GEORADIUS", "nokey", 0, 0, 1, "km", "STORE", "str") == 0
    assert run(r, "EXISTS", "str") == 0
    run(r, "SET", "str", "x")
    assert run(r, "GEOSEARCHSTORE", "str", "nokey", "FROMMEMBER", "a", "BYBOX", 1, 1,
               "km") == 0
    assert run(r, "EXISTS", "str") == 0


def test_store_encoding_follows_the_listpack_limits(r):
    run(r, "GEOADD", "g", *[str(x) for i in range(200) for x in (i / 100, i / 100, f"m{i}")])
    assert run(r, "GEOSEARCHSTORE", "small", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 100, "km",
               "COUNT", 10) == 10
    assert run(r, "OBJECT", "ENCODING", "small") == b"listpack"
    assert run(r, "GEOSEARCHSTORE", "big", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 1000,
               "km") == 200
    assert run(r, "OBJECT", "ENCODING", "big") == b"skiplist"
    assert run(r, "ZRANGE", "big", 0, -1, "WITHSCORES") == run(r, "ZRANGE", "g", 0, -1,
                                                                "WITHSCORES")


def test_searches_over_a_skiplist(r):
    members = [str(x) for i in range(300) for x in (i / 10 - 15, i / 20, f"p{i}")]
    run(r, "GEOADD", "big", *members)
    assert run(r, "OBJECT", "ENCODING", "big") == b"skiplist"
    reply = run(r, "GEOSEARCH", "big", "FROMLONLAT", 0, 7, "BYBOX", 500, 300, "km", "ASC",
                "COUNT", 5, "WITHDIST")
    assert reply == [[b"p148", b"49.6637"], [b"p147", b"51.1033"], [b"p149", b"51.2538"],
                     [b"p146", b"55.3368"], [b"p150", b"55.6132"]]


# ---------------------------------------------------------------------------------------------
# Events, WATCH, persistence, the command table
# ---------------------------------------------------------------------------------------------


def test_keyspace_events(r, listen):  # noqa: F811
    collected = listen("KEA")
    run(r, "GEOADD", "g", *SICILY)
    run(r, "GEOADD", "g", *SICILY)  # nothing changed: no event
    run(r, "GEOADD", "g", "XX", 1, 1, "nosuch")
    run(r, "GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", 500, "km")
    run(r, "GEORADIUS", "g", 15, 37, 500, "km", "STORE", "d2")
    run(r, "GEORADIUSBYMEMBER", "g", "Palermo", 500, "km", "STOREDIST", "d2")
    run(r, "GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km")
    run(r, "GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km")
    run(r, "GEORADIUS", "nokey", 0, 0, 1, "km", "STORE", "d2")
    assert collected() == [
        *both("g", "zadd"), *both("d", "geosearchstore"), *both("d2", "georadiusstore"),
        *both("d2", "georadiusstore"), *both("d", "del"), *both("d2", "del")]


def test_new_key_events(r, listen):  # noqa: F811
    collected = listen("KEn")
    run(r, "GEOADD", "g", *SICILY)
    run(r, "GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", 500, "km")
    run(r, "GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", 500, "km")
    assert collected() == [*both("g", "new"), *both("d", "new")]


def test_watch_sees_geo_writes(server):
    r = server.client()
    other = server.client()
    run(r, "GEOADD", "w", *SICILY)
    for change, aborted in ((("GEOADD", "w", *SICILY), False),
                            (("GEOADD", "w", "XX", 1, 1, "nosuch"), False),
                            (("GEOSEARCH", "w", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km"),
                             False),
                            (("GEORADIUS", "nokey", 15, 37, 1, "km", "STORE", "w"), True),
                            (("GEOADD", "w", 1, 1, "new"), True),
                            (("GEOSEARCHSTORE", "w", "w", "FROMLONLAT", 15, 37, "BYRADIUS",
                              500, "km"), True)):
        if not run(other, "EXISTS", "w"):
            run(other, "GEOADD", "w", *SICILY)
        pipe = r.pipeline()
        pipe.watch("w")
        other.execute_command(*change)
        pipe.multi()
        pipe.zcard("w")
        if aborted:
            with pytest.raises(redis.WatchError):
                pipe.execute()
        else:
            assert pipe.execute() == [run(other, "ZCARD", "w")], change
    r.close()
    other.close()


AOF_SEQUENCE = [
    ("GEOADD", "g", *SICILY),
    ("GEOADD", "g", *SICILY),  # no change: not written
    ("GEOADD", "g", "ch", "XX", "13", "38", "Palermo", "1", "1", "absent"),
    ("GEOADD", "g", "NX", "13", "38", "Palermo", "2", "2", "other"),
    ("GEOADD", "g", "200", "2", "bad"),
    ("GEOSEARCH", "g", "FROMLONLAT", 15, 37, "BYRADIUS", 500, "km"),
    ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 15, 37, "BYRADIUS", 500, "km", "STOREDIST"),
    ("GEORADIUS", "g", 15, 37, 500, "km", "STORE", "d2"),
    ("GEORADIUS", "g", 15, 37, 500, "km"),
    ("GEORADIUSBYMEMBER", "g", "Palermo", 1, "m", "STORE", "d3"),
    ("GEORADIUS", "g", 0, 0, 1, "m", "STORE", "d2"),  # nothing found: d2 is deleted
    ("GEORADIUS", "g", 0, 0, 1, "m", "STORE", "d2"),  # nothing to delete: not written
    ("EVAL", "return redis.call('GEOADD', KEYS[1], 1, 1, 'lua')", 1, "g"),
    ("MULTI",), ("GEOADD", "g", "CH", 2, 2, "multi"), ("EXEC",),
]


def _aof_effects(proc: ServerProcess, directory: Path) -> list[list[bytes]]:
    client = proc.client()
    for request in AOF_SEQUENCE:
        with contextlib.suppress(redis.ResponseError):
            client.execute_command(*request)
    client.close()
    time.sleep(0.2)
    files = sorted(directory.glob("appendonlydir/*.incr.aof"))
    commands = aof_commands(files[-1] if files else directory / "appendonly.aof")
    return [command for command in commands if command[0] != b"SELECT"]


def test_the_aof_holds_what_redis_propagates(tmp_path: Path) -> None:
    """GEOADD as the ZADD it becomes (its options, the scores as integers), only when it
    changed something; the STORE forms as sent; an empty result's deletion as the command."""
    expected = effects_match_redis(tmp_path, _aof_effects)
    assert expected[0] == [b"ZADD", b"g", b"3479099956230698", b"Palermo",
                           b"3479447370796909", b"Catania"]
    assert expected[1:3] == [
        [b"ZADD", b"g", b"ch", b"XX", b"3479065152021743", b"Palermo", b"3377822707026402",
         b"absent"],
        [b"ZADD", b"g", b"NX", b"3479065152021743", b"Palermo", b"3378191666521995",
         b"other"]]
    assert expected[3:7] == [
        [b"GEOSEARCHSTORE", b"d", b"g", b"FROMLONLAT", b"15", b"37", b"BYRADIUS", b"500",
         b"km", b"STOREDIST"],
        [b"GEORADIUS", b"g", b"15", b"37", b"500", b"km", b"STORE", b"d2"],
        [b"GEORADIUSBYMEMBER", b"g", b"Palermo", b"1", b"m", b"STORE", b"d3"],
        [b"GEORADIUS", b"g", b"0", b"0", b"1", b"m", b"STORE", b"d2"]]
    assert expected[7:] == [  # from a script and a transaction (one write: no MULTI) too
        [b"ZADD", b"g", b"3377822707026402", b"lua"],
        [b"ZADD", b"g", b"CH", b"3378191666521995", b"multi"]]


def test_geo_survives_a_restart(tmp_path: Path) -> None:
    proc = start_brook(tmp_path, *AOF_ARGS)
    try:
        r = proc.client()
        run(r, "GEOADD", "g", *SICILY)
        run(r, "GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", 500, "km",
            "STOREDIST")
        before = [run(r, "ZRANGE", key, 0, -1, "WITHSCORES") for key in ("g", "d")]
        r.close()
        assert proc.stop() == 0
        proc = start_brook(tmp_path, *AOF_ARGS)
        r = proc.client()
        assert [run(r, "ZRANGE", key, 0, -1, "WITHSCORES") for key in ("g", "d")] == before
        assert run(r, "GEODIST", "g", "Palermo", "Catania", "km") == b"166.2742"
        r.close()
    finally:
        proc.stop()


def test_command_info_and_getkeys(r):
    info = {entry[0]: entry for entry in run(r, "COMMAND", "INFO", "GEORADIUS",
                                             "GEORADIUSBYMEMBER", "GEORADIUS_RO",
                                             "GEOSEARCHSTORE", "GEOADD")}
    assert info[b"georadius"][1:6] == [-6, [b"write", b"denyoom", b"movablekeys"], 1, 1, 1]
    assert info[b"georadiusbymember"][1:6] == [-5, [b"write", b"denyoom", b"movablekeys"], 1,
                                               1, 1]
    assert info[b"georadius_ro"][1:6] == [-6, [b"readonly"], 1, 1, 1]
    assert info[b"geosearchstore"][1:6] == [-8, [b"write", b"denyoom"], 1, 2, 1]
    assert info[b"geoadd"][6] == [b"@write", b"@geo", b"@slow"]
    assert info[b"georadius"][8] == [
        [b"flags", [b"RO", b"access"], b"begin_search",
         [b"type", b"index", b"spec", [b"index", 1]], b"find_keys",
         [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]],
        [b"flags", [b"OW", b"update"], b"begin_search",
         [b"type", b"keyword", b"spec", [b"keyword", b"STORE", b"startfrom", 6]], b"find_keys",
         [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]],
        [b"flags", [b"OW", b"update"], b"begin_search",
         [b"type", b"keyword", b"spec", [b"keyword", b"STOREDIST", b"startfrom", 6]],
         b"find_keys",
         [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]]

    def keys(*request: object) -> object:
        return run(r, "COMMAND", "GETKEYS", *request)

    assert keys("GEORADIUS", "k", 0, 0, 1, "m") == [b"k"]
    assert keys("GEORADIUS", "k", 0, 0, 1, "m", "store", "d") == [b"k", b"d"]
    assert keys("GEORADIUS", "k", 0, 0, 1, "m", "STOREDIST", "e", "STORE", "d") == [
        b"k", b"d", b"e"]
    assert keys("GEORADIUS", "k", 0, 0, 1, "m", "STORE") == [b"k"]
    assert keys("GEORADIUSBYMEMBER", "k", "m", 1, "store", "d") == [b"k"]  # from 5 on
    assert keys("GEORADIUSBYMEMBER", "k", "m", 1, "m", "store", "d") == [b"k", b"d"]
    assert keys("GEORADIUS_RO", "k", 0, 0, 1, "m", "store", "d") == [b"k"]
    assert keys("GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", 1, "m") == [
        b"d", b"s"]
    assert run(r, "COMMAND", "GETKEYSANDFLAGS", "GEORADIUS", "k", 0, 0, 1, "m", "STORE",
               "d") == [[b"k", [b"RO", b"access"]], [b"d", [b"OW", b"update"]]]


def test_slowlog_and_commandstats_name_geoadd(r):
    r.config_set("slowlog-log-slower-than", 0)
    r.execute_command("SLOWLOG", "RESET")
    r.execute_command("CONFIG", "RESETSTAT")
    run(r, "GEOADD", "g", *SICILY)
    entry = r.execute_command("SLOWLOG", "GET", 1)[0]
    assert entry[3] == [b"GEOADD", b"g", *[x.encode() for x in SICILY]]
    stats = r.info("commandstats")
    assert stats["cmdstat_geoadd"]["calls"] == 1
    assert "cmdstat_zadd" not in stats


# ---------------------------------------------------------------------------------------------
# Differential: random points, random searches, raw replies compared with real Redis's
# ---------------------------------------------------------------------------------------------


class _Raw:
    """One connection whose replies are read as the bytes the server sent."""

    def __init__(self, proc: ServerProcess, protocol: int) -> None:
        self.sock = socket.create_connection((proc.host, proc.port), timeout=10)
        if protocol == 3:
            self.call("HELLO", "3")

    def call(self, *args: object) -> bytes:
        parts = [str(a).encode() if not isinstance(a, bytes) else a for a in args]
        self.sock.sendall(b"*%d\r\n" % len(parts) + b"".join(
            b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        reader = hiredis.Reader()
        received = b""
        while True:
            chunk = self.sock.recv(1 << 16)
            assert chunk
            received += chunk
            reader.feed(chunk)
            if reader.gets() is not False:
                return received

    def close(self) -> None:
        self.sock.close()


def _point(rng: random.Random) -> tuple[str, str]:
    """A position, often near a few centres (dense searches) and sometimes at the edges."""
    kind = rng.random()
    if kind < 0.1:
        return (rng.choice(["-180", "180", "179.9999", "-179.9999"]),
                f"{rng.uniform(-85.05112878, 85.05112878):.6f}")
    if kind < 0.15:
        return f"{rng.uniform(-180, 180):.6f}", rng.choice(["85.05112878", "-85.05112878",
                                                             "85", "-85", "0"])
    if kind < 0.6:
        lon, lat = rng.choice([(13.4, 38.1), (-73.98, 40.75), (179.8, -16.5), (0.0, 0.0)])
        return f"{lon + rng.gauss(0, 1):.6f}", f"{max(-85, min(85, lat + rng.gauss(0, 1))):.6f}"
    return f"{rng.uniform(-180, 180):.7f}", f"{rng.uniform(-85.05, 85.05):.7f}"


def _search(rng: random.Random, members: int, with_coord: bool) -> list[object]:
    kind = rng.choice(["GEOSEARCH", "GEORADIUS", "GEORADIUSBYMEMBER", "GEOSEARCHSTORE",
                       "GEORADIUS_RO"])
    unit = rng.choice(["m", "km", "ft", "mi", "KM"])
    scale = {"m": 1000.0, "km": 1.0, "KM": 1.0, "ft": 3280.84, "mi": 0.621371}[unit]
    size = f"{rng.choice([0.5, 5, 50, 300, 2000, 12000]) * rng.random() * scale:.3f}"
    member = f"m{rng.randrange(members + 2)}"  # sometimes one that is not there
    lon, lat = _point(rng)
    options: list[object] = []
    for option in ("WITHDIST", "WITHHASH", "WITHCOORD"):
        if rng.random() < 0.4 and kind != "GEOSEARCHSTORE" and (
                option != "WITHCOORD" or with_coord):
            options.append(option)
    if rng.random() < 0.6:
        options.append(rng.choice(["ASC", "DESC"]))
    if rng.random() < 0.4:
        options += ["COUNT", rng.randint(1, 8)]
        if rng.random() < 0.3:
            options.append("ANY")
    if rng.random() < 0.2 and "COUNT" not in options:
        rng.shuffle(options)
    if kind == "GEORADIUS":
        request: list[object] = [kind, "pts", lon, lat, size, unit, *options]
        if rng.random() < 0.2 and not {"WITHDIST", "WITHHASH", "WITHCOORD"} & set(options):
            request += [rng.choice(["STORE", "STOREDIST"]), "dst"]
        return request
    if kind == "GEORADIUS_RO":
        return [kind, "pts", lon, lat, size, unit, *options]
    if kind == "GEORADIUSBYMEMBER":
        return [kind, "pts", member, size, unit, *options]
    source = ["FROMMEMBER", member] if rng.random() < 0.5 else ["FROMLONLAT", lon, lat]
    shape = (["BYRADIUS", size, unit] if rng.random() < 0.5 else
             ["BYBOX", size, f"{float(size) * rng.uniform(0.2, 3):.3f}", unit])
    if kind == "GEOSEARCH":
        return [kind, "pts", *source, *shape, *options]
    return [kind, "dst", "pts", *source, *shape, *options,
            *(["STOREDIST"] if rng.random() < 0.5 else [])]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_searches_match_redis(brook_process, redis_process, seed):
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    rng = random.Random(seed)
    with_coord = redis_process.version >= (8, 0)  # 7.0 wrote coordinates with 17 decimals
    newest_doubles = redis_process.version >= (7, 2)
    members = rng.choice([20, 100, 400])
    points = [x for i in range(members) for x in (*_point(rng), f"m{i}")]
    sides = []
    for proc in (brook_process, redis_process):
        proc.client().flushall()
        sides.append((_Raw(proc, 2), _Raw(proc, 3)))
    try:
        for brook_side, redis_side in ((sides[0][0], sides[1][0]),):
            for at in range(0, len(points), 90):
                chunk = points[at:at + 90]
                assert brook_side.call("GEOADD", "pts", *chunk) == redis_side.call(
                    "GEOADD", "pts", *chunk)
        for step in range(300):
            request = _search(rng, members, with_coord)
            protocol = rng.choice([0, 1])
            mine = sides[0][protocol].call(*request)
            theirs = sides[1][protocol].call(*request)
            assert mine == theirs, (step, request, protocol)
            if request[0] in ("GEOSEARCHSTORE", "GEORADIUS") and b"dst" in [
                    str(a).encode() for a in request]:
                stored = [hiredis.Reader(), hiredis.Reader()]
                for reader, side in zip(stored, sides, strict=True):
                    reader.feed(side[0].call("ZRANGE", "dst", 0, -1, "WITHSCORES"))
                mine, theirs = (reader.gets() for reader in stored)
                if not newest_doubles:  # 7.0 wrote scores with %.17g
                    mine = [float(x) if i % 2 else x for i, x in enumerate(mine)]
                    theirs = [float(x) if i % 2 else x for i, x in enumerate(theirs)]
                assert mine == theirs, (step, request)
        for member in range(0, members, 7):
            for command in (("GEOPOS", "pts", f"m{member}"), ("GEOHASH", "pts", f"m{member}"),
                            ("GEODIST", "pts", f"m{member}", f"m{member + 1}", "km")):
                if command[0] == "GEOPOS" and not with_coord:
                    continue
                assert sides[0][0].call(*command) == sides[1][0].call(*command), command
        assert sides[0][0].call("ZRANGE", "pts", 0, -1, "WITHSCORES") == sides[1][0].call(
            "ZRANGE", "pts", 0, -1, "WITHSCORES")
    finally:
        for pair in sides:
            for side in pair:
                side.close()
