"""The compiled build's arrays of bulk strings in C (brook/protocol/_bulks.c) against what the
pure build does: hiredis's ``pack_command``, and for the framing check, encoding the request
again and comparing it with the bytes it came from."""

from __future__ import annotations

import random

import hiredis
import pytest

bulks = pytest.importorskip("brook.protocol._bulks", reason="the pure build has no C twin")


def _random_request(rng: random.Random) -> list[bytes]:
    pieces = [b"", b"+inf", b"(1", b"=x", b"\r\n", b"$3\r\nabc\r\n", b"*2\r\n", b"\x00\xff"]
    return [bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 5, 12, 300))))
            if rng.random() < 0.6 else rng.choice(pieces)
            for _ in range(rng.choice((0, 1, 2, 3, 7, 40)))]


def _framed_end_twin(data: bytes, position: int, request: object) -> int:
    if type(request) is not list:
        return -1
    try:
        encoded = hiredis.pack_command(tuple(request))
    except TypeError:
        return -1
    if any(type(element) is not bytes for element in request):
        return -1  # pack_command writes ints and strs as bulk strings; a request never has them
    return position + len(encoded) if data.startswith(encoded, position) else -1


def test_pack_bulks_writes_what_pack_command_writes() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        request = _random_request(rng)
        assert bulks.pack_bulks(request) == hiredis.pack_command(tuple(request))
        assert bulks.pack_bulks(tuple(request)) == hiredis.pack_command(tuple(request))
    with pytest.raises(TypeError):
        bulks.pack_bulks([b"a", bytearray(b"b")])
    with pytest.raises(TypeError):
        bulks.pack_bulks([b"a", 1])


def test_framed_end_agrees_with_encoding_again() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        request = _random_request(rng)
        encoded = hiredis.pack_command(tuple(request))
        before = bytes(rng.randrange(256) for _ in range(rng.choice((0, 3))))
        data = before + encoded + rng.choice((b"", b"*1\r\n$4\r\nPING\r\n"))
        cases = [(data, request)]
        if encoded:  # a byte changed, the data cut short, a length written another way
            spot = rng.randrange(len(encoded))
            changed = bytearray(data)
            changed[len(before) + spot] ^= 0x20
            cases += [(bytes(changed), request), (data[:len(before) + spot], request)]
        if request:
            cases.append((data.replace(b"$%d\r\n" % len(request[0]),
                                       b"$0%d\r\n" % len(request[0]), 1), request))
            cases.append((data, request[:-1]))
        for candidate, asked in cases:
            for kind in (bytes, bytearray):
                assert bulks.framed_end(kind(candidate), len(before), asked) == \
                    _framed_end_twin(candidate, len(before), asked), (candidate, asked)


def test_framed_end_refuses_what_is_not_a_list_of_bytes() -> None:
    data = b"*2\r\n$3\r\nSET\r\n$1\r\n5\r\n"
    assert bulks.framed_end(data, 0, [b"SET", b"5"]) == len(data)
    assert bulks.framed_end(data, 0, [b"SET", 5]) == -1
    assert bulks.framed_end(data, 0, (b"SET", b"5")) == -1
    assert bulks.framed_end(data, 0, [b"SET", [b"5"]]) == -1
    assert bulks.framed_end(b"*2\r\n$3\r\nSET\r\n+5\r\n", 0, [b"SET", b"5"]) == -1
    assert bulks.framed_end(data, len(data) + 1, [b"SET", b"5"]) == -1
    assert bulks.framed_end(data, -1, [b"SET", b"5"]) == -1
