"""HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST.

An HLL is a string value in Redis's representation (brook.types.hll), read and written through
brook.commands.strings' path, so GET, SET, DUMP and the rest see the same bytes as in Redis. A
command that changes one edits the value in place, as a ``bytearray`` (like SETBIT).

What Redis propagates, Brook does: the request itself whenever it counted a change. That
includes PFCOUNT of one key when it refreshed the cached cardinality in the value (a WATCH
signal and a change, but no keyspace event), and PFDEBUG GETREG/TODENSE when they converted a
sparse value to dense (a change only, no signal).
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Final

from brook.commands.registry import CommandError, command
from brook.commands.string_values import string_value
from brook.notify import STRING, created, written
from brook.protocol import resp
from brook.types import hll

if TYPE_CHECKING:
    from brook.session import Session

NOT_AN_HLL: Final = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPTED: Final = "INVALIDOBJ Corrupted HLL object detected"
NO_SUCH_KEY: Final = "ERR The specified key does not exist"
NOT_SPARSE: Final = "ERR HLL encoding is not sparse"


def _checked(value: bytes | bytearray) -> bytes | bytearray:
    """An existing string accepted as an HLL (Redis's isHLLObjectOrReply)."""
    if not hll.is_hll(value):
        raise CommandError(NOT_AN_HLL)
    return value


def _writable(client: Session, key: bytes, value: bytes | bytearray) -> bytearray:
    """The value at ``key`` as a bytearray stored in place of a bytes one (its TTL kept)."""
    if type(value) is bytearray:
        return value  # type: ignore[return-value]
    writable = bytearray(value)
    client.db.data[key] = writable
    return writable


@command(
    "pfadd", arity=-2, flags="write denyoom fast", keys=(1, 1, 1),
    acl="@write @hyperloglog @fast", group="hyperloglog", since="2.8.9",
    summary="Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
    complexity="O(1) to add every element.", syntax="key [element [element ...]]",
)
def pfadd(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    key = args[1]
    found = string_value(db, key)
    server = client.server
    changed = 0
    if found is None:
        value = hll.new_hll()
        db.data[key] = value
        created(client, key)
        changed = 1
    else:
        value = _writable(client, key, _checked(found))
    before = len(value)
    added, intact = hll.add(value, args[2:], server.config.hll_sparse_max_bytes)
    if len(value) > before:
        server.memory.charge(len(value) - before)
    if not intact:
        raise CommandError(CORRUPTED)
    changed += added
    if changed:
        hll.invalidate_cache(value)
        written(client, key, STRING, b"pfadd", changed)
    return resp.ONE if changed else resp.ZERO


@command(
    "pfcount", arity=-2, flags="readonly may_replicate", keys=(1, -1, 1),
    acl="@read @hyperloglog @slow", group="hyperloglog", since="2.8.9",
    summary="Returns the approximated cardinality of the set(s) observed by the HyperLogLog "
    "key(s).",
    complexity="O(1) with a very small average constant time when called with a single key. "
    "O(N) with N being the number of keys, and much bigger constant times, when called with "
    "multiple keys.",
    syntax="key [key ...]",
)
def pfcount(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    if len(args) > 2:  # the cardinality of the union, never cached
        union = bytearray(hll.REGISTERS)
        for key in args[1:]:
            found = string_value(db, key, counted=True)
            if found is None:
                continue
            if not hll.merge_into(union, _checked(found)):
                raise CommandError(CORRUPTED)
        return resp.integer(hll.count_raw(bytes(union)))
    key = args[1]
    found = string_value(db, key, counted=True)
    if found is None:
        return resp.ZERO
    value = _writable(client, key, _checked(found))
    cached = hll.cached_count(value)
    if cached is not None:
        return resp.integer(cached)
    histo = hll.histogram(value)
    if histo is None:
        raise CommandError(CORRUPTED)
    cardinality = hll.estimate(histo)
    hll.set_cached_count(value, cardinality)
    written(client, key)  # the cache is part of the value: WATCH sees it, replicas get it
    return resp.integer(cardinality)


@command(
    "pfmerge", arity=-2, flags="write denyoom", keys=(1, -1, 1),
    acl="@write @hyperloglog @slow", group="hyperloglog", since="2.8.9",
    summary="Merges one or more HyperLogLog values into a single key.",
    complexity="O(N) to merge N HyperLogLogs, but with high constant times.",
    syntax="destkey [sourcekey [sourcekey ...]]",
)
def pfmerge(client: Session, args: list[bytes]) -> bytes:
    db = client.db
    maximum = bytearray(hll.REGISTERS)
    use_dense = False
    for key in args[1:]:  # the destination is one of the inputs
        found = string_value(db, key, counted=True)
        if found is None:
            continue
        if _checked(found)[4] == hll.DENSE:
            use_dense = True
        if not hll.merge_into(maximum, found):
            raise CommandError(CORRUPTED)
    destination = args[1]
    found = string_value(db, destination)
    if found is None:
        value = hll.new_hll()
        db.data[destination] = value
        created(client, destination)
    else:
        value = _writable(client, destination, found)
    before = len(value)
    if use_dense and not hll.to_dense(value):
        raise CommandError(CORRUPTED)
    hll.set_raw(value, maximum, client.server.config.hll_sparse_max_bytes)
    if len(value) > before:
        client.server.memory.charge(len(value) - before)
    hll.invalidate_cache(value)
    written(client, destination, STRING, b"pfadd")  # a mass add, as Redis names it
    return resp.OK


@command(
    "pfdebug", arity=3, flags="write denyoom admin", keys=(2, 2, 1),
    acl="@write @hyperloglog @admin @slow @dangerous", group="hyperloglog", since="2.8.9",
    summary="Internal commands for debugging HyperLogLog values.", complexity="N/A",
    syntax="subcommand key",
)
def pfdebug(client: Session, args: list[bytes]) -> bytes:
    subcommand = args[1].split(b"\0", 1)[0]  # as Redis's C string comparison sees it
    key = args[2]
    found = string_value(client.db, key)
    if found is None:
        raise CommandError(NO_SUCH_KEY)
    value = _writable(client, key, _checked(found))
    name = subcommand.lower()
    server = client.server
    if name == b"getreg":
        if value[4] == hll.SPARSE:
            if not hll.to_dense(value):
                raise CommandError(CORRUPTED)
            server.dirty += 1  # the new encoding propagates (no WATCH signal, as in Redis)
        raw = hll.raw_registers(value) or b""
        return resp.array([resp.integer(register) for register in raw])
    if name == b"decode":
        if value[4] != hll.SPARSE:
            raise CommandError(NOT_SPARSE)
        return resp.bulk(hll.decode_sparse(value))
    if name == b"encoding":
        return resp.simple("dense" if value[4] == hll.DENSE else "sparse")
    if name == b"todense":
        if value[4] != hll.SPARSE:
            return resp.ZERO
        if not hll.to_dense(value):
            raise CommandError(CORRUPTED)
        server.dirty += 1
        return resp.ONE
    raise CommandError(
        f"ERR Unknown PFDEBUG subcommand '{subcommand.decode('utf-8', 'replace')}'")


# PFSELFTEST's sizes: Redis checks 1000 rounds of register writes and 10 million additions;
# Brook checks the same properties on fewer, to answer in well under a second.
_SELFTEST_ROUNDS: Final = 5
_SELFTEST_ELEMENTS: Final = 100_000
_RELATIVE_ERROR: Final = 1.04 / 128  # 1.04 / sqrt(16384)


@command(
    "pfselftest", arity=1, flags="admin", acl="@hyperloglog @admin @slow @dangerous",
    group="hyperloglog", since="2.8.9",
    summary="An internal command for testing HyperLogLog values.", complexity="N/A",
)
def pfselftest(client: Session, args: list[bytes]) -> bytes:
    failure = _selftest(client.server.config.hll_sparse_max_bytes)
    if failure:
        raise CommandError(f"TESTFAILED {failure}")
    return resp.OK


def _selftest(sparse_max_bytes: int) -> str:
    """Redis's PFSELFTEST checks: registers keep what is written, sparse and dense agree, and
    the estimate stays within six standard errors at each power of ten."""
    rng = random.Random()
    for _ in range(_SELFTEST_ROUNDS):
        raw = bytes(rng.getrandbits(6) for _ in range(hll.REGISTERS))
        dense = bytearray(hll.DENSE_SIZE)
        dense[:5] = b"HYLL\x00"
        hll.set_raw(dense, raw, sparse_max_bytes)
        back = hll.raw_registers(dense) or b""
        if back != raw:
            index = next(i for i in range(hll.REGISTERS) if back[i] != raw[i])
            return f"Register {index} should be {raw[index]} but is {back[index]}"
    dense = bytearray(b"HYLL" + bytes(hll.DENSE_SIZE - 4))
    sparse = hll.new_hll()
    seed = rng.getrandbits(64)
    checkpoint = 1
    for j in range(1, _SELFTEST_ELEMENTS + 1):
        element = (j ^ seed).to_bytes(8, "little")
        hll.add(dense, [element], sparse_max_bytes)
        hll.add(sparse, [element], sparse_max_bytes)
        if j != checkpoint:
            continue
        if j < sparse_max_bytes // 2 and sparse[4] != hll.SPARSE:
            return "sparse encoding not used"
        estimate = hll.estimate(hll.histogram(dense) or [])
        if estimate != hll.estimate(hll.histogram(sparse) or []):
            return "dense/sparse disagree"
        allowed = 1 if j == 10 else math.ceil(_RELATIVE_ERROR * 6 * checkpoint)
        if abs(checkpoint - estimate) > allowed:
            return f"Too big error. card:{checkpoint} abserr:{abs(checkpoint - estimate)}"
        checkpoint *= 10
    return ""
