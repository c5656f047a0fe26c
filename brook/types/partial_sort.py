"""The partial sort Redis uses for the first N results of a geo search (pqsort.c).

When a search keeps fewer results than it found (COUNT), Redis sorts only as much as it must:
a quicksort (Bentley and McIlroy's: the pivot a median of three, or of three medians of three
from 41 elements up, moved to the front; a three-way partition that gathers the elements equal
to the pivot at both ends and swaps them into the middle; insertion sort below 7 elements) that
only goes on into the parts overlapping the wanted ranks. Which of several equally distant
members come first is whatever this algorithm leaves there, so it is followed step by step; a
stable sort would order ties differently.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def partial_sort(items: list[T], keys: list[float], first: int, last: int,
                 descending: bool) -> None:
    """Sort ``items`` in place by ``keys`` (kept in step with them) so that ranks ``first``
    .. ``last`` hold what Redis's pqsort leaves there (ascending, or descending: the
    comparison negated)."""

    def compare(i: int, j: int) -> int:
        x, y = keys[i], keys[j]
        result = 1 if x > y else 0 if x == y else -1
        return -result if descending else result

    def swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]

    def swap_runs(i: int, j: int, count: int) -> None:
        for offset in range(count):
            swap(i + offset, j + offset)

    def median_of_three(a: int, b: int, c: int) -> int:
        if compare(a, b) < 0:
            return b if compare(b, c) < 0 else (c if compare(a, c) < 0 else a)
        return b if compare(b, c) > 0 else (a if compare(a, c) < 0 else c)

    def wanted(low: int, size: int) -> bool:
        """Whether ranks ``low`` .. ``low + size - 1`` overlap the wanted ones."""
        return not (last < low or first > low + size - 1)

    def sort(base: int, size: int) -> None:
        while True:
            if size < 7:
                for m in range(base + 1, base + size):
                    at = m
                    while at > base and compare(at - 1, at) > 0:
                        swap(at, at - 1)
                        at -= 1
                return
            middle = base + size // 2
            if size > 7:
                low, high = base, base + size - 1
                if size > 40:
                    step = size // 8
                    low = median_of_three(low, low + step, low + 2 * step)
                    middle = median_of_three(middle - step, middle, middle + step)
                    high = median_of_three(high - 2 * step, high - step, high)
                middle = median_of_three(low, middle, high)
            swap(base, middle)
            pa = pb = base + 1
            pc = pd = base + size - 1
            while True:
                while pb <= pc:
                    result = compare(pb, base)
                    if result > 0:
                        break
                    if result == 0:
                        swap(pa, pb)
                        pa += 1
                    pb += 1
                while pb <= pc:
                    result = compare(pc, base)
                    if result < 0:
                        break
                    if result == 0:
                        swap(pc, pd)
                        pd -= 1
                    pc -= 1
                if pb > pc:
                    break
                swap(pb, pc)
                pb += 1
                pc -= 1
            end = base + size
            run = min(pa - base, pb - pa)
            swap_runs(base, pb - run, run)
            run = min(pd - pc, end - pd - 1)
            swap_runs(pb, end - run, run)
            smaller = pb - pa
            if smaller > 1 and wanted(base, smaller):
                sort(base, smaller)
            larger = pd - pc
            if larger <= 1:
                return
            base, size = end - larger, larger
            if not wanted(base, size):
                return

    sort(0, len(items))


__all__ = ["partial_sort"]
