"""Glob matching: brook.glob against a line-by-line transliteration of Redis's stringmatchlen,
plus KEYS / SCAN MATCH parity on tricky patterns against the real server."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brook import glob


def _char(byte: int) -> int:
    """A byte read through a C ``char`` (signed)."""
    return byte - 256 if byte >= 128 else byte


def _tolower(value: int) -> int:
    return value + 32 if 65 <= value <= 90 else value


def stringmatchlen(pattern: bytes, string: bytes, nocase: bool = False) -> bool:
    """Redis's util.c ``stringmatchlen``, transliterated statement by statement.

    Indices replace pointers; reading one past the end returns the C string terminator (0).
    """
    skip_longer = [False]
    return _impl(pattern, 0, len(pattern), string, 0, len(string), nocase, skip_longer, 0)


def _impl(pat: bytes, p: int, plen: int, s: bytes, si: int, slen: int, nocase: bool,
          skip_longer: list[bool], nesting: int) -> bool:
    def P(k: int = 0) -> int:  # pattern[k] as a C char; the terminator past the end
        return _char(pat[p + k]) if p + k < len(pat) else 0

    def S() -> int:
        return _char(s[si])

    if nesting > 1000:
        return False
    while plen and slen:
        c = P()
        if c == ord("*"):
            while plen and P(1) == ord("*"):
                p += 1
                plen -= 1
            if plen == 1:
                return True
            while slen:
                if _impl(pat, p + 1, plen - 1, s, si, slen, nocase, skip_longer, nesting + 1):
                    return True
                if skip_longer[0]:
                    return False
                si += 1
                slen -= 1
            skip_longer[0] = True
            return False
        elif c == ord("?"):
            si += 1
            slen -= 1
        elif c == ord("["):
            p += 1
            plen -= 1
            negate = P() == ord("^")
            if negate:
                p += 1
                plen -= 1
            match = False
            while True:
                if P() == ord("\\") and plen >= 2:
                    p += 1
                    plen -= 1
                    if P() == S():
                        match = True
                elif P() == ord("]"):
                    break
                elif plen == 0:
                    p -= 1
                    plen += 1
                    break
                elif plen >= 3 and P(1) == ord("-"):
                    start, end, ch = P(), P(2), S()
                    if start > end:
                        start, end = end, start
                    if nocase:
                        start, end, ch = _tolower(start), _tolower(end), _tolower(ch)
                    p += 2
                    plen -= 2
                    if start <= ch <= end:
                        match = True
                else:
                    if not nocase:
                        if P() == S():
                            match = True
                    elif _tolower(P()) == _tolower(S()):
                        match = True
                p += 1
                plen -= 1
            if negate:
                match = not match
            if not match:
                return False
            si += 1
            slen -= 1
        else:
            if c == ord("\\") and plen >= 2:
                p += 1
                plen -= 1
            if not nocase:
                if P() != S():
                    return False
            elif _tolower(P()) != _tolower(S()):
                return False
            si += 1
            slen -= 1
        p += 1
        plen -= 1
        if slen == 0:
            while P() == ord("*"):
                p += 1
                plen -= 1
            break
    return plen == 0 and slen == 0


# Patterns and subjects from a small alphabet rich in special characters and case/sign edges.
_ALPHABET = b"ab*?[]^-\\AZz\x00\x80\xff"
patterns = st.lists(st.sampled_from(_ALPHABET), max_size=12).map(bytes)
subjects = st.lists(st.sampled_from(b"abAZz]^-\\*?[\x00\x7f\x80\xfe\xff"), max_size=10).map(bytes)


@settings(max_examples=4000, deadline=None)
@given(patterns, subjects, st.booleans())
def test_matches_redis_transliteration(pattern: bytes, subject: bytes, nocase: bool) -> None:
    assert glob.matches(pattern, subject, nocase) == stringmatchlen(pattern, subject, nocase)


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=10), st.binary(max_size=8), st.booleans())
def test_matches_on_arbitrary_bytes(pattern: bytes, subject: bytes, nocase: bool) -> None:
    assert glob.matches(pattern, subject, nocase) == stringmatchlen(pattern, subject, nocase)


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        (b"h?llo", b"hello", True),
        (b"h*llo", b"heeeello", True),
        (b"h[ae]llo", b"hallo", True),
        (b"h[^e]llo", b"hello", False),
        (b"h[a-b]llo", b"hbllo", True),
        (b"[z-a]", b"m", True),  # reversed range
        (b"[a-]", b"]", True),  # the range swallows the closing bracket
        (b"[]", b"]", False),
        (b"[^]", b"x", True),
        (b"[abc", b"c", True),  # unterminated bracket
        (b"\\*", b"*", True),
        (b"\\*", b"a", False),
        (b"a\\", b"a\\", True),  # trailing backslash is literal
        (b"[\\]]", b"]", True),
        (b"[a-\xff]", b"\x10", True),  # signed chars: the range is -1..97
        (b"[a-\xff]", b"\xfe", False),
        (b"*", b"", False),  # the empty subject matches only the empty pattern
        (b"", b"", True),
        (b"a*", b"a", True),
    ],
)
def test_known_cases(pattern: bytes, subject: bytes, expected: bool) -> None:
    assert glob.matches(pattern, subject) is expected
    assert stringmatchlen(pattern, subject) is expected


def test_nocase() -> None:
    assert glob.matches(b"HeLLo", b"hello", nocase=True)
    assert glob.matches(b"[A-Z]", b"q", nocase=True)
    assert not glob.matches(b"[A-z]", b"[", nocase=True)  # ends folded after ordering
    assert glob.matches(b"[A-z]", b"[")
    assert not glob.matches(b"[\\A]", b"a", nocase=True)  # escaped bracket literal stays exact


def test_star_nesting_limit() -> None:
    needs_1000 = b"*a" * 1000
    needs_1001 = b"*a" * 1001
    subject = b"a" * 1001
    assert glob.matches(needs_1000, subject)
    assert not glob.matches(needs_1001, subject)
    assert glob.matches(needs_1001[1:] + b"*", subject)  # a trailing star does not nest


def test_many_stars_do_not_backtrack() -> None:
    """A pattern that makes naive backtracking explode finishes at once."""
    assert not glob.matches(b"*a" * 30 + b"b", b"a" * 5000)


# -- parity with the real server ------------------------------------------------------------------

TRICKY_KEYS = [
    b"hello", b"hallo", b"hxllo", b"hllo", b"heeeello", b"Hello", b"a*b", b"a?b", b"a]b",
    b"a\\b", b"]", b"^", b"-", b"\\", b"[", b"x\x80", b"x\xff", b"x\x10", b"x_", b"x`", b"",
    b"*", b"ab", b"abc",
]
TRICKY_PATTERNS = [
    b"*", b"**", b"h?llo", b"h*llo", b"h[ae]llo", b"h[^e]llo", b"h[a-b]llo", b"h[b-a]llo",
    b"[a-]", b"[]", b"[^]", b"[]a]*", b"a[*]b", b"a\\*b", b"a\\?b", b"a[\\]]b", b"a\\\\b",
    b"a\\", b"\\", b"[\\", b"[", b"[^", b"x[a-\xff]", b"x[\x80-\xff]", b"x[^a-z]", b"?",
    b"*[", b"[]-a]", b"[-]", b"a*b*c", b"*c", b"[a-c]b*", b"x[_-a]",
]


def test_keys_matches_like_redis(r) -> None:
    for key in TRICKY_KEYS:
        r.set(key, b"v")
    for pattern in TRICKY_PATTERNS:
        expected = sorted(k for k in TRICKY_KEYS if stringmatchlen(pattern, k))
        if pattern == b"*":
            expected = sorted(TRICKY_KEYS)  # KEYS * is "every key", even the empty one
        assert sorted(r.keys(pattern)) == expected, pattern


def test_scan_match_like_redis(r) -> None:
    for key in TRICKY_KEYS:
        r.set(key, b"v")
    for pattern in TRICKY_PATTERNS:
        expected = sorted(k for k in TRICKY_KEYS if stringmatchlen(pattern, k))
        if pattern == b"*":
            expected = sorted(TRICKY_KEYS)
        assert sorted(set(r.scan_iter(match=pattern, count=1000))) == expected, pattern


def test_star_nesting_limit_like_redis(r) -> None:
    subject = b"a" * 1001
    r.set(subject, 1)
    assert r.keys(b"*a" * 1000) == [subject]
    assert r.keys(b"*a" * 1001) == []
    assert r.keys((b"*a" * 1001)[1:] + b"*") == [subject]


def test_pathological_pattern_is_fast_enough_to_answer(r) -> None:
    r.set(b"a" * 3000, 1)
    assert r.keys(b"*a" * 40 + b"b") == []
