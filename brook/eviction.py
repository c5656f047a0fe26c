"""maxmemory: the check before a command, key eviction and client eviction (Redis's evict.c).

:meth:`Evictor.perform` is Redis's ``performEvictions``, run by the dispatcher before a
command when ``maxmemory`` is set: below the limit it costs one comparison of the memory
estimate (:mod:`brook.memory`); above it, the allocators are read for an exact figure (at most
as often as keeps readings under 5% of the time), and with a policy other than ``noeviction``
keys are evicted until the estimate of what they freed covers the excess. ``False`` means
out of memory: commands flagged ``denyoom`` get ``-OOM``.

What counts against the limit is ``used_memory`` less what Redis does not count either
(``mem_not_counted_for_evict``): the AOF buffer. Brook's start-up footprint (the interpreter,
the modules, the command table: about 20 MB, ``used_memory_startup``) counts, as Redis's own
does, so ``used_memory`` stays within ``maxmemory`` as operators and their monitoring expect;
a limit must leave room for it.

Picking a key follows Redis: ``*-random`` take a random key of the next database (round
robin); ``*-lru``, ``*-lfu`` and ``volatile-ttl`` sample ``maxmemory-samples`` keys of every
database into a pool of the 16 best candidates and evict the best one still present. Idle
time is the keyspace's LRU clock (seconds, as Redis's); ``volatile-*`` sample the expiry
heap, whose entries are (deadline, key) pairs in a list, so a random one costs O(1).

LFU. Under an LFU policy each key's access field (brook/types/keytable.py) holds Redis's 24-bit
LFU field instead of an access time; the key table updates it on every access, so the
commands' paths pay no test for the policy in force.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING

from brook.config.notify_flags import NOTIFY_EVICTED
from brook.memory import key_bytes
from brook.notify import publish_event
from brook.types.keytable import LFU_INIT_VAL, idle_seconds, lfu_decayed

if TYPE_CHECKING:
    from brook.context import ServerContext
    from brook.keyspace import Database
    from brook.session import Session

OOM = "OOM command not allowed when used memory > 'maxmemory'."
POOL_SIZE = 16
_LFU_POLICIES = ("allkeys-lfu", "volatile-lfu")


def is_lfu(policy: str) -> bool:
    """Whether ``policy`` keeps LFU counters in the keys' access fields."""
    return policy in _LFU_POLICIES


# -- the check and key eviction ---------------------------------------------------------------

class Evictor:
    """The server's maxmemory state: the candidate pool and the counters INFO shows."""

    def __init__(self, server: ServerContext) -> None:
        self.server = server
        self.pool: list[tuple[int, int, bytes]] = []  # (score, db index, key), best last
        self.next_db = 0
        self.evicted_keys = 0
        self.evicted_clients = 0
        self.exceeded_since = 0.0  # when the limit was last found exceeded (0: it is not)
        self.exceeded_seconds = 0.0

    def reset_stats(self) -> None:
        self.evicted_keys = self.evicted_clients = 0
        self.exceeded_seconds = 0.0

    def not_counted(self) -> int:
        """``mem_not_counted_for_evict``: the effects not yet written, and what a failed AOF
        write left."""
        server = self.server
        aof = server.aof
        return server.effect_log.buffered_bytes() + (
            sum(map(len, aof.pending)) if aof is not None else 0)

    def within_limit(self) -> bool:
        """Whether the estimate is within ``maxmemory`` (no reading, no eviction): the fast
        path's test, once per read."""
        server = self.server
        return server.memory.used() - self.not_counted() <= server.config.maxmemory

    def excess(self) -> int:
        """Bytes over ``maxmemory`` (0: within it). The estimate decides unless it says over
        and a reading may be taken (see MemoryAccount.may_measure), as Redis's
        getMaxmemoryState reads its counter."""
        server = self.server
        limit = server.config.maxmemory
        memory = server.memory
        used = memory.used() - self.not_counted()
        if used <= limit:
            return 0
        if memory.may_measure():  # deletions since the reading are only seen by a new one
            used = memory.measure() - self.not_counted()
        return max(0, used - limit)

    def perform(self) -> bool:
        """Redis's performEvictions: False when memory is over the limit and could not be
        freed (commands that add memory are then refused). Nothing happens while a file is
        loaded or a busy script yields, nor on a replica that ignores maxmemory: its keys go
        by its master's DELs (Redis's isSafeToPerformEvictions)."""
        server = self.server
        if server.loading or server.script_busy is not None or (
                server.replication.is_replica and server.config.replica_ignore_maxmemory):
            return True
        excess = self.excess()
        if not excess:
            self._exceeded(False)
            return True
        if server.config.maxmemory_policy == "noeviction":
            self._exceeded(True)
            return False
        started = time.perf_counter()
        budget = _time_limit(server.config.maxmemory_eviction_tenacity)
        freed = evicted = 0
        ok = True
        while freed < excess:
            picked = self._pick()
            if picked is None:
                ok = False
                break
            freed += self._evict(*picked)
            evicted += 1
            if evicted % 16 == 0 and time.perf_counter() - started > budget:
                break  # the cron goes on; meanwhile commands run (Redis's EVICT_RUNNING)
        # (each eviction credited the estimate as it removed its key: see removed)
        elapsed_ms = int((time.perf_counter() - started) * 1000)
        if elapsed_ms:
            server.latency_add("eviction-cycle", elapsed_ms)
        self._exceeded(not ok)
        return ok

    def _exceeded(self, exceeded: bool) -> None:
        """``total_eviction_exceeded_time`` / ``current_eviction_exceeded_time``."""
        if exceeded:
            if not self.exceeded_since:
                self.exceeded_since = time.monotonic()
        elif self.exceeded_since:
            self.exceeded_seconds += time.monotonic() - self.exceeded_since
            self.exceeded_since = 0.0

    def exceeded_time_fields(self) -> list[str]:
        """INFO stats: milliseconds spent over the limit, in all and in the current stretch."""
        current = time.monotonic() - self.exceeded_since if self.exceeded_since else 0.0
        return [f"total_eviction_exceeded_time:{int((self.exceeded_seconds + current) * 1000)}",
                f"current_eviction_exceeded_time:{int(current * 1000)}"]

    def watch_removals(self) -> None:
        """While maxmemory is set, every key removed credits the estimate (:meth:`removed`);
        without a limit nothing reads the estimate between readings."""
        self.server.keyspace.on_removed = self.removed if self.server.config.maxmemory else None

    def removed(self, key: bytes, value: object) -> None:
        """A key is being removed: what it holds leaves the estimate now (Redis's counter
        falls at the free; the next reading replaces the estimate)."""
        self.server.memory.credit(key_bytes(key, value))

    def _evict(self, db: Database, key: bytes) -> int:
        """Delete ``key`` as an eviction: its estimated size, the ``evicted`` event, a DEL in
        the AOF; WATCHers and parked clients learn of it as of any deletion."""
        if db.data.get(key) is None:
            return 0
        memory = self.server.memory
        credited = memory.pending  # the removal credits the key's size (see removed)
        if db.is_expired(key):
            db.expire_key(key)  # already dead: it expires (and counts) as such
            return credited - memory.pending
        db.delete(key)
        size = credited - memory.pending
        self.evicted_keys += 1
        server = self.server
        if server.config.notify_keyspace_events & NOTIFY_EVICTED:
            publish_event(server.config, server.pubsub, b"evicted", key, db.index)
        if server.propagating:
            server.effect_log.feed(db.index, ([b"DEL", key],))
        return size

    def _pick(self) -> tuple[Database, bytes] | None:
        policy = self.server.config.maxmemory_policy
        if policy.endswith("-random"):
            return self._random_pick(policy.startswith("volatile"))
        return self._pool_pick(policy)

    def _random_pick(self, volatile: bool) -> tuple[Database, bytes] | None:
        databases = self.server.keyspace.databases
        for _ in range(len(databases)):
            self.next_db = (self.next_db + 1) % len(databases)
            db = databases[self.next_db]
            key = _random_volatile(db) if volatile else db.random_key()
            if key is not None:
                return db, key
        return None

    def _pool_pick(self, policy: str) -> tuple[Database, bytes] | None:
        server = self.server
        databases = server.keyspace.databases
        volatile = policy.startswith("volatile")
        samples = server.config.maxmemory_samples
        pool = self.pool
        while True:
            total = 0
            for db in databases:
                count = len(db.expires) if volatile else len(db.data)
                if not count:
                    continue
                total += count
                self._populate(db, policy, volatile, samples)
            if not total:
                return None
            while pool:
                _score, index, key = pool.pop()
                db = databases[index]
                if key in (db.expires if volatile else db.data):
                    return db, key
            # every candidate was a ghost (deleted since it was sampled): sample again

    def _populate(self, db: Database, policy: str, volatile: bool, samples: int) -> None:
        """Redis's evictionPoolPopulate: score ``samples`` keys of ``db`` into the pool."""
        data = db.data
        if volatile:
            keys = [key for key in (_random_volatile(db) for _ in range(samples))
                    if key is not None]
        elif len(data) <= samples:
            keys = data.keys()
        else:
            keys = [key for key in (data.random_key() for _ in range(samples))
                    if key is not None]
        keyspace = db.keyspace
        clock = keyspace.lru_clock
        pool = self.pool
        for key in set(keys):
            if policy.endswith("-lru"):
                field = data.access(key)
                score = 0 if field is None else idle_seconds(field, clock)
            elif policy.endswith("-lfu"):
                field = data.access(key)
                score = 255 - (LFU_INIT_VAL if field is None else lfu_decayed(
                    field, clock, keyspace.lfu_decay_time))
            else:  # volatile-ttl: the sooner the deadline, the better the candidate
                deadline = db.expires.get(key)
                if deadline is None:
                    continue
                score = -deadline
            entry = (score, db.index, key)
            if entry in pool:
                continue
            if len(pool) >= POOL_SIZE:
                if score <= pool[0][0]:
                    continue  # worse than the worst candidate of a full pool
                pool.pop(0)
            position = 0
            while position < len(pool) and pool[position][0] < score:
                position += 1
            pool.insert(position, entry)

    # -- client eviction ------------------------------------------------------------------

    def evict_clients(self) -> None:
        """``maxmemory-clients``: while the clients' buffers together exceed it, disconnect
        the client holding most (never one with CLIENT NO-EVICT on), as Redis's evictClients."""
        server = self.server
        limit = server.config.maxmemory_clients
        if limit < 0:  # a percentage of maxmemory
            limit = server.config.maxmemory * -limit // 100
        if not limit:
            return
        usage = {client: client.memory_bytes() for client in server.clients.values()
                 if not client.no_evict and not client.closing}
        total = sum(usage.values())
        for client in sorted(usage, key=usage.__getitem__, reverse=True):
            if total <= limit:
                break
            total -= usage[client]
            self._evict_client(client)

    def _evict_client(self, client: Session) -> None:
        server = self.server
        line = client.info_line(time.time()).decode("utf-8", "replace")
        server.log("verbose", f"Evicting client: {line}")
        self.evicted_clients += 1
        client.kill()


def _random_volatile(db: Database) -> bytes | None:
    """A random key with a TTL, from the expiry heap (stale entries are skipped)."""
    heap = db.expire_heap
    expires = db.expires
    if not expires:
        return None
    for _ in range(16):
        deadline, key = heap[random.randrange(len(heap))]
        if expires.get(key) == deadline:
            return key
    return next(iter(expires))


def _time_limit(tenacity: int) -> float:
    """Redis's evictionTimeLimitUs, in seconds: 50 µs per step of tenacity up to 10, then 15%
    more per step; 100: no limit."""
    if tenacity <= 10:
        return 50e-6 * tenacity
    if tenacity < 100:
        return 500e-6 * 1.15 ** (tenacity - 10)
    return float("inf")
