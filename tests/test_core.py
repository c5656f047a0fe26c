"""Smoke tests of the core: connection, dispatch, errors (parity with Redis)."""

from __future__ import annotations


def test_ping(r, raw):
    assert r.ping() is True
    assert raw.request(b"PING hello\r\n") == b"$5\r\nhello\r\n"


def test_unknown_command(raw):
    assert raw.request(b"foo bar baz\r\n") == (
        b"-ERR unknown command 'foo', with args beginning with: 'bar' 'baz' \r\n"
    )
