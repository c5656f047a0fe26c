"""Memory: what the allocators hold, measured; what one key holds, estimated.

Redis's ``used_memory`` is a counter its allocator wrapper keeps on every allocation. Python's
allocators keep such counts too, and reading them is cheaper and more exact than any sum the
value types could keep on their hot paths (a counter update per push and pop of every type, and
Python object headers the types cannot see). Two allocators hold everything Brook allocates,
values, client buffers, PELs, scripts (Lua's allocations go through ``malloc``) and the AOF
buffer alike:

* **pymalloc**, CPython's allocator for blocks of up to 512 bytes (almost every object):
  ``_PyObject_DebugMallocStats`` walks its pools and prints the bytes in allocated blocks. The
  walk is one pass over 16 KiB pools in C: about 0.05 ms for an empty server, 0.25 ms with a
  million keys.
* **glibc malloc** for everything larger: ``mallinfo2`` gives the bytes in chunks in use
  (``uordblks``) and in mmapped chunks (``hblkhd``).

Freed memory leaves both counts at once, while the process's resident set keeps it (pools and
heap pages are reused, not returned): ``used_memory`` falls as data is deleted and RSS does not,
which is what ``mem_fragmentation_ratio`` reports. Where the allocator statistics are missing
(another libc), the resident set is the reading, as before.

A reading costs a fraction of a millisecond, so it is taken by the cron, by INFO, and when the
maxmemory check needs an exact figure (:mod:`brook.eviction`); between readings, writes charge
an estimate of what they add and evictions credit an estimate of what they free
(:func:`key_bytes`), and the next reading replaces the estimate.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import itertools
import os
import random
import resource
import sys
import time
import types
from collections import deque

_ATOMS = (bytes, bytearray, str, int, float, bool, type(None), memoryview)
_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType)
# A key's entry in its database's table (brook/types/_keytable.c): a 16-byte header and the
# key's bytes, then a short string value's bytes or a pointer to the value's objects, in one
# block (allocated in 16-byte steps), and its slot (8 bytes at a load factor from 3/8 to 3/4).
# The pure build's dict pair costs more; the allocator readings see what either really takes.
ENTRY_HEADER_BYTES = 16
SLOT_BYTES = 16
EMBEDDED_MAX = 44  # the longest string value kept in the entry (Redis's embstr limit)
_MAX_DEPTH = 6


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


class AllocatorGauge:
    """Bytes allocated by pymalloc and malloc together (:meth:`read`), or the resident set
    where those statistics cannot be had (:attr:`exact` False)."""

    _PYMALLOC_LINE = b"# bytes in allocated blocks"

    def __init__(self) -> None:
        self.exact = False
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
            mallinfo2 = libc.mallinfo2
            mallinfo2.restype = _MallInfo2
            stats = ctypes.pythonapi._PyObject_DebugMallocStats
            stats.argtypes = [ctypes.c_void_p]
            stats.restype = ctypes.c_int
            open_memstream = libc.open_memstream
            open_memstream.restype = ctypes.c_void_p
            open_memstream.argtypes = [ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.POINTER(ctypes.c_size_t)]
            libc.fclose.argtypes = [ctypes.c_void_p]
            libc.free.argtypes = [ctypes.c_void_p]
            self._malloc_trim = libc.malloc_trim
            self._malloc_trim.argtypes = [ctypes.c_size_t]
        except (AttributeError, OSError):
            return
        self._libc = libc
        self._mallinfo2 = mallinfo2
        self._pymalloc_stats = stats
        self._open_memstream = open_memstream
        self.exact = True

    def read(self) -> int:
        if not self.exact:
            return resident_bytes()
        info = self._mallinfo2()
        return info.uordblks + info.hblkhd + self._pymalloc_bytes()

    def _pymalloc_bytes(self) -> int:
        """The bytes in pymalloc's allocated blocks, from its statistics report (0 when
        pymalloc is off, e.g. ``PYTHONMALLOC=malloc``: malloc then holds everything)."""
        report = self._pymalloc_report()
        start = report.find(self._PYMALLOC_LINE)
        if start < 0:
            return 0
        end = report.find(b"\n", start)
        return int(report[start:end].rpartition(b"=")[2].replace(b",", b"").strip() or 0)

    def _pymalloc_report(self) -> bytes:
        buffer = ctypes.c_char_p()
        size = ctypes.c_size_t()
        stream = self._open_memstream(ctypes.byref(buffer), ctypes.byref(size))
        if not stream:
            return b""
        try:
            self._pymalloc_stats(stream)
        finally:
            self._libc.fclose(stream)
        try:
            return ctypes.string_at(buffer, size.value)
        finally:
            self._libc.free(buffer)

    def report(self) -> bytes:
        """MEMORY MALLOC-STATS: pymalloc's report and malloc's counters."""
        info = self._mallinfo2()
        lines = [f"{name}: {getattr(info, name)}" for name, _ in _MallInfo2._fields_]
        return self._pymalloc_report() + b"\nmalloc (mallinfo2)\n" + "\n".join(lines).encode()

    def trim(self) -> bool:
        """MEMORY PURGE: give malloc's free pages back to the system."""
        return bool(self.exact and self._malloc_trim(0))


def resident_bytes() -> int:
    """The process's resident set (``used_memory_rss``)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class MemoryAccount:
    """``used_memory``: the last reading plus what happened since (:meth:`charge` /
    :meth:`credit`), its peak and the reading at start-up."""

    __slots__ = ("gauge", "measured", "pending", "peak", "startup", "measured_at",
                 "measure_seconds")

    def __init__(self) -> None:
        self.gauge = AllocatorGauge()
        self.measured = 0
        self.pending = 0  # estimated change since the reading
        self.peak = 0
        self.startup = 0
        self.measured_at = 0.0  # monotonic time of the reading
        self.measure_seconds = 0.0  # what the last reading took

    def measure(self) -> int:
        """Read the allocators now: the exact figure replaces the estimate."""
        started = time.perf_counter()
        used = self.gauge.read()
        self.measure_seconds = time.perf_counter() - started
        self.measured = used
        self.pending = 0
        self.measured_at = time.monotonic()
        if used > self.peak:
            self.peak = used
        return used

    def used(self) -> int:
        """The best figure without a reading."""
        used = self.measured + self.pending
        return used if used > 0 else 0

    def charge(self, nbytes: int) -> None:
        self.pending += nbytes

    def credit(self, nbytes: int) -> None:
        self.pending -= nbytes

    def may_measure(self) -> bool:
        """Whether a reading now keeps readings under 5% of the time (a reading of a large
        heap takes milliseconds; the limit check asks for one on every write over the limit)."""
        return time.monotonic() - self.measured_at >= 20 * self.measure_seconds


def request_bytes(args: list[bytes]) -> int:
    """What a write request may add to the dataset: its bytes plus an object header per
    argument (the estimate charged until the next reading)."""
    return sum(map(len, args)) + 48 * len(args)


def key_bytes(key: bytes, value: object, samples: int = 5) -> int:
    """MEMORY USAGE: the key's entry and slot, and its value (:func:`value_bytes`) unless the
    entry holds it."""
    if type(value) is bytes and len(value) <= EMBEDDED_MAX:
        return _blocks(ENTRY_HEADER_BYTES + len(key) + len(value)) + SLOT_BYTES
    return (_blocks(ENTRY_HEADER_BYTES + len(key) + 8) + SLOT_BYTES
            + value_bytes(value, samples))


def _blocks(size: int) -> int:
    """An allocation's size in the allocator's 16-byte steps."""
    return (size + 15) & ~15


def value_bytes(value: object, samples: int = 5) -> int:
    """The bytes a value's objects hold, walking what it references. A collection larger than
    ``samples`` is estimated from ``samples`` of its elements, as Redis's MEMORY USAGE does
    (0: every element). Objects met twice count once; classes and functions not at all."""
    return _size(value, samples, set(), 0)


def _size(value: object, samples: int, seen: set[int], depth: int) -> int:
    size = sys.getsizeof(value)
    if type(value) in _ATOMS or depth >= _MAX_DEPTH:
        return size
    identity = id(value)
    if identity in seen:
        return 0
    seen.add(identity)
    picked, total = _sample(value, samples)
    if not picked:
        return size
    nested = 0
    for child in picked:
        if not isinstance(child, _SHARED):
            nested += _size(child, samples, seen, depth + 1)
    return size + nested * total // len(picked)


def _sample(value: object, samples: int) -> tuple[list[object], int]:
    """Up to ``samples`` of the objects ``value`` references, and how many there are."""
    if isinstance(value, dict):
        total = len(value)
        items = value.items() if not samples or total <= samples else itertools.islice(
            value.items(), samples)
        picked = [part for pair in items for part in pair]
        return picked, 2 * total
    if isinstance(value, (set, frozenset)):
        total = len(value)
        return list(value if not samples else itertools.islice(value, samples)), total
    if isinstance(value, (list, tuple, deque)):
        total = len(value)
        if not samples or total <= samples:
            return list(value), total
        return [value[index] for index in sorted(random.sample(range(total), samples))], total
    referents = gc.get_referents(value)
    total = len(referents)
    if samples and total > samples:
        referents = random.sample(referents, samples)
    return referents, total
