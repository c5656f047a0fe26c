"""The longest common subsequence of two strings, as Redis's LCS command finds it.

Redis fills the classic (len(a)+1) x (len(b)+1) table of LCS lengths and walks it back from the
end. Filling that table cell by cell in Python would cost a second per million cells, so each
row is computed at once as a bit vector (Hyyrö's bit-parallel LCS): row ``i`` is an int whose
bit ``j`` is clear exactly where ``LCS(a[:i], b[:j+1])`` is one more than
``LCS(a[:i], b[:j])``, so ``LCS(i, j) = j - popcount(row_i & (2**j - 1))``. A row costs a few
big-int operations over len(b) bits, and the rows take an eighth of the bytes of one uint32
table cell each.

The walk back must choose as Redis does where both directions keep the length (it moves left,
``j - 1``, unless going up is strictly longer), since that decides which subsequence and which
match ranges come out.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Match", "LcsResult", "longest_common_subsequence"]


class Match(NamedTuple):
    """One run of consecutive matched bytes: inclusive ranges in ``a`` and in ``b``."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int

    @property
    def length(self) -> int:
        return self.a_end - self.a_start + 1


class LcsResult(NamedTuple):
    length: int
    text: bytes
    matches: list[Match]  # from the end of the strings to their start, as Redis lists them


def _rows(a: bytes, b: bytes) -> list[int]:
    """The bit-vector rows 0..len(a) (row 0: no byte of ``a`` yet, nothing matched)."""
    all_ones = (1 << len(b)) - 1
    positions: dict[int, int] = {}
    for j, byte in enumerate(b):
        positions[byte] = positions.get(byte, 0) | (1 << j)
    row = all_ones
    rows = [row]
    for byte in a:
        matched = row & positions.get(byte, 0)
        row = ((row + matched) | (row - matched)) & all_ones
        rows.append(row)
    return rows


def longest_common_subsequence(a: bytes, b: bytes, with_text: bool) -> LcsResult:
    """The LCS length, and when ``with_text`` the subsequence itself and its match ranges."""
    rows = _rows(a, b)

    def length(i: int, j: int) -> int:
        return j - (rows[i] & ((1 << j) - 1)).bit_count()

    total = length(len(a), len(b))
    if not with_text:
        return LcsResult(total, b"", [])
    text = bytearray(total)
    matches: list[Match] = []
    filled = total
    i, j = len(a), len(b)
    run: list[int] | None = None  # [a_start, a_end, b_start, b_end] of the run being walked
    while i > 0 and j > 0:
        close = False
        if a[i - 1] == b[j - 1]:
            filled -= 1
            text[filled] = a[i - 1]
            if run is None:
                run = [i - 1, i - 1, j - 1, j - 1]
            elif run[0] == i and run[2] == j:  # contiguous with the run: extend it back
                run[0] -= 1
                run[2] -= 1
            else:
                close = True
            if run[0] == 0 or run[2] == 0:
                close = True
            i -= 1
            j -= 1
        else:
            if length(i - 1, j) > length(i, j - 1):
                i -= 1
            else:
                j -= 1
            if run is not None:
                close = True
        if close and run is not None:
            matches.append(Match(run[0], run[1], run[2], run[3]))
            run = None
    return LcsResult(total, bytes(text), matches)
