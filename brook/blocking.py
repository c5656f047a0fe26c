"""Parked clients: who waits on which key, and who is served when a key becomes ready.

Redis parks a client on every key its blocking command names and, when a write signals one of
those keys, re-runs the command of *every* client parked on it (seeds 000 and 002; since Redis
7.2 each of them re-executes in full). One XADD to a stream with N consumers of a group parked
on it therefore costs N command executions, of which one delivers the entry and N-1 find
nothing and park again: the thundering herd. Brook keeps Redis's visible behaviour and serves
from per-key queues instead:

* ``pops``: list pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) and sorted-set pops
  (BZPOPMIN, BZPOPMAX, BZMPOP) in arrival order. While the key has elements of the type a
  client pops, the longest-waiting such client runs its command; each run takes at least one
  element, so the work done is what was delivered (k new members serve at most k clients).
* ``groups``: XREADGROUP ``>`` readers, one FIFO per consumer group. While the group has entries
  it has not delivered, the first reader of that group runs its command and takes what its
  COUNT allows; k new entries serve at most k readers of each group. The other readers are not
  touched: no reply, no re-execution, their deadlines unchanged.
* ``readers``: plain XREAD readers in a heap ordered by the ID they read after. Every reader
  whose ID is below the stream's last ID wants the new entries, so they are popped and served;
  a reader waiting for an ID further ahead is not looked at.

A served client runs its own command again (``client.reprocessing``): the reply is exactly what
the command returns when it does not block, COUNT/MAXCOUNT/MAXSIZE and CLAIM included. A run
that still finds nothing returns None and the client stays where it is, so nobody ever gets an
empty reply before its deadline. Deadlines are event-loop timers set once at parking time.

Keys are signalled by :meth:`brook.keyspace.Database.signal_ready` (writes, deletions, type
changes, FLUSH, SWAPDB) and served by :meth:`Blocking.serve_ready`, which the dispatcher calls
after each command, as Redis's processCommand calls handleClientsBlockedOnKeys.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from mypy_extensions import trait

from brook.keyspace import TYPE_NAMES, Database, Keyspace
from brook.protocol import resp

if TYPE_CHECKING:
    import asyncio

    from brook.commands.registry import Command
    from brook.session import Session
    from brook.types.groups import Group
    from brook.types.stream import Stream

UNBLOCKED: Final = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
# The heap of plain readers is rebuilt when dead entries (readers served through another key,
# timed out or gone) outnumber the live ones by this much.
_HEAP_SLACK: Final = 64

POP, READ, GROUP, ZPOP = 0, 1, 2, 3  # what a waiter waits for (ZPOP: sorted-set pops)
# The type of value each kind of pop waits for: a waiter is served only by a key of its type
# (Redis's handleClientsBlockedOnKey); any other type leaves it parked.
_POPPED_TYPE: Final = {POP: "list", ZPOP: "zset"}


class Waiter:
    """One parked client: its command (run again when served), keys and deadline."""

    __slots__ = ("client", "cmd", "args", "db", "keys", "kind", "group", "claim", "afters",
                 "deadline", "timer", "seq", "active", "silent", "seconds", "on_timeout")

    def __init__(self, client: Session, cmd: Command, args: list[bytes], keys: list[bytes],
                 kind: int) -> None:
        self.client = client
        self.cmd = cmd
        self.args = args
        self.db: Database = client.db
        self.keys = keys
        self.kind = kind
        self.group: bytes | None = None  # XREADGROUP's group
        self.claim: int | None = None  # XREADGROUP CLAIM min-idle-time
        self.afters: list[int] = []  # XREAD: the ID read after, per key
        self.deadline = 0.0  # event-loop time; 0 = none
        self.timer: object | None = None
        self.seq = 0
        self.active = True
        self.silent = False  # CLIENT REPLY OFF/SKIP was in force when it parked
        self.seconds = 0.0  # time its runs took (commandstats, slow log when it ends)
        # The reply when its time is up (None: a null array); WAIT answers with its count.
        self.on_timeout: Callable[[], bytes] | None = None


class KeyWaiters:
    """The clients parked on one key of one database."""

    __slots__ = ("pops", "groups", "readers", "live_readers", "claimers", "claim_timer")

    def __init__(self) -> None:
        self.pops: OrderedDict[Waiter, None] = OrderedDict()
        self.groups: dict[bytes, OrderedDict[Waiter, None]] = {}
        self.readers: list[tuple[int, int, Waiter]] = []  # heap of (after ID, seq, waiter)
        self.live_readers = 0
        self.claimers = 0  # XREADGROUP CLAIM waiters among ``groups``
        self.claim_timer: object | None = None

    def __len__(self) -> int:
        return len(self.pops) + self.live_readers + sum(map(len, self.groups.values()))


def _first(queue: OrderedDict[Waiter, None]) -> Waiter:
    return next(iter(queue))


@trait
class WaiterLane:
    """What serving a parked client needs of the command path: the dispatcher's waiter lane
    (brook.dispatch implements it; declared here so that blocking imports nothing above it,
    and compiled calls through it stay native)."""

    def rerun(self, waiter: Waiter) -> bytes | None:
        """Run the parked command again: its reply, or None when it stays parked."""
        raise NotImplementedError

    def unblocked(self, waiter: Waiter) -> None:
        """The parked command is done: count it, once."""
        raise NotImplementedError

    def error_reply(self, message: str, cmd: Command | None, rejected: bool = False) -> bytes:
        """An error as the command path answers it (counted in errorstats)."""
        raise NotImplementedError


class Blocking:
    """Every parked client of the server, and the serving of ready keys."""

    def __init__(self, keyspace: Keyspace, lane: WaiterLane) -> None:
        self.keyspace = keyspace
        self.lane = lane
        self.ready = keyspace.ready
        # The server's event loop once it runs (timeouts and CLAIM timers are its timers).
        self.loop: asyncio.AbstractEventLoop | None = None
        self.parked = 0
        self._seq = itertools.count()

    # -- parking ------------------------------------------------------------------------------

    def park(self, waiter: Waiter, timeout_ms: int) -> None:
        """Register ``waiter`` on its keys; ``timeout_ms`` 0 waits forever."""
        client = waiter.client
        db = waiter.db
        waiter.seq = next(self._seq)
        for position, key in enumerate(waiter.keys):
            waiters = db.blocking.get(key)
            if waiters is None:
                waiters = db.blocking[key] = KeyWaiters()
            assert isinstance(waiters, KeyWaiters)
            if waiter.kind == POP or waiter.kind == ZPOP:
                waiters.pops[waiter] = None
            elif waiter.kind == GROUP:
                assert waiter.group is not None
                queue = waiters.groups.get(waiter.group)
                if queue is None:
                    queue = waiters.groups[waiter.group] = OrderedDict()
                queue[waiter] = None
                if waiter.claim is not None:
                    waiters.claimers += 1
                    self._arm_claim_timer(db, key, waiters)
            else:
                heapq.heappush(waiters.readers, (waiter.afters[position], waiter.seq, waiter))
                waiters.live_readers += 1
        loop = self.loop
        if timeout_ms and loop is not None:
            # The loop's clock is CLOCK_MONOTONIC cached per loop turn: read the real one.
            waiter.deadline = time.monotonic() + timeout_ms / 1000
            waiter.timer = loop.call_at(waiter.deadline, self._timed_out, waiter)
        client.blocked = waiter
        client.refresh_mode()  # what it sends meanwhile is held until it is served
        self.parked += 1

    def remove(self, waiter: Waiter) -> None:
        """Take a waiter off every key (served, timed out, unblocked, disconnected)."""
        if not waiter.active:
            return
        waiter.active = False
        self.parked -= 1
        if waiter.timer is not None:
            waiter.timer.cancel()  # type: ignore[attr-defined]
            waiter.timer = None
        db = waiter.db
        for key in waiter.keys:
            waiters = db.blocking.get(key)
            if not isinstance(waiters, KeyWaiters):
                continue
            if waiter.kind == POP or waiter.kind == ZPOP:
                waiters.pops.pop(waiter, None)
            elif waiter.kind == GROUP:
                queue = waiters.groups.get(waiter.group)  # type: ignore[arg-type]
                if queue is not None and queue.pop(waiter, False) is None:
                    if not queue:
                        del waiters.groups[waiter.group]  # type: ignore[arg-type]
                    if waiter.claim is not None:
                        waiters.claimers -= 1
            else:
                waiters.live_readers -= 1
                if len(waiters.readers) > 2 * waiters.live_readers + _HEAP_SLACK:
                    waiters.readers = [item for item in waiters.readers if item[2].active]
                    heapq.heapify(waiters.readers)
            if not len(waiters):
                if waiters.claim_timer is not None:
                    waiters.claim_timer.cancel()  # type: ignore[attr-defined]
                del db.blocking[key]
        if waiter.client.blocked is waiter:
            waiter.client.blocked = None

    def forget(self, client: Session) -> None:
        """The client disconnected or was killed while parked."""
        waiter = client.blocked
        if waiter is not None:
            self.remove(waiter)

    # -- unparking ----------------------------------------------------------------------------

    def answer(self, waiter: Waiter, reply: bytes) -> None:
        """Unpark with ``reply`` (the command is counted now, once), then let the client run
        what it sent while parked."""
        self.remove(waiter)
        self.lane.unblocked(waiter)
        client = waiter.client
        if not waiter.silent:
            client.out.append(reply)
        if client.postponed:  # what its command sent itself follows the reply
            client.out.append(client.take_postponed())
        client.unblocked()

    def fail(self, waiter: Waiter, message: str) -> None:
        self.answer(waiter, self.lane.error_reply(message, waiter.cmd))

    def _timed_out(self, waiter: Waiter) -> None:
        waiter.timer = None
        if not waiter.active:
            return
        loop = self.loop
        assert loop is not None
        if time.monotonic() < waiter.deadline:  # libuv timers have 1 ms steps: never early
            waiter.timer = loop.call_at(waiter.deadline + 0.0005, self._timed_out, waiter)
            return
        self.answer(waiter, self._timeout_reply(waiter))

    @staticmethod
    def _timeout_reply(waiter: Waiter) -> bytes:
        on_timeout = waiter.on_timeout
        return resp.null_array(waiter.client.protocol) if on_timeout is None else on_timeout()

    def unblock(self, client: Session, with_error: bool) -> bool:
        """CLIENT UNBLOCK: as if the timeout were reached, or with Redis's UNBLOCKED error."""
        waiter = client.blocked
        if waiter is None:
            return False
        if with_error:
            self.fail(waiter, UNBLOCKED)
        else:
            self.answer(waiter, self._timeout_reply(waiter))
        return True

    # -- serving ------------------------------------------------------------------------------

    def serve_ready(self) -> None:
        """Serve the clients parked on every signalled key, including keys that serving itself
        signals (a BLMOVE that pushes onto a key others wait on)."""
        ready = self.ready
        while ready:
            db, key = next(iter(ready))
            del ready[(db, key)]
            waiters = db.blocking.get(key)
            if not isinstance(waiters, KeyWaiters):
                continue
            value = db.data.get(key)
            if value is not None and db.expires and db.is_expired(key):
                value = None
            kind = TYPE_NAMES.get(type(value))
            if kind == "list":
                self._serve_pops(db, key, waiters, POP)
            elif kind == "zset":
                self._serve_pops(db, key, waiters, ZPOP)
            elif kind == "stream":
                self._serve_stream(db, key, waiters, value)  # type: ignore[arg-type]
            elif waiters.groups:
                # Gone or no longer a stream: group readers run their command again and get
                # what it says now (NOGROUP, WRONGTYPE), as Redis >= 7.2 re-executes them.
                for queue in list(waiters.groups.values()):
                    for waiter in list(queue):
                        self._run(waiter)

    def _run(self, waiter: Waiter) -> bool:
        """Run the parked command again; True when it replied (and the client left)."""
        reply = self.lane.rerun(waiter)
        if reply is None:
            return False
        self.answer(waiter, reply)
        return True

    def _serve_pops(self, db: Database, key: bytes, waiters: KeyWaiters, kind: int) -> None:
        """Longest waiting first among the pops of ``kind`` (list or sorted-set pops), while
        the key has elements of that type. A waiter that still cannot move (BLMOVEM EXACTLY n
        with fewer than n there) keeps its place and the next one gets its turn, as in
        Redis."""
        pops = waiters.pops
        wanted = _POPPED_TYPE[kind]
        passed: set[Waiter] = set()
        while True:
            value = db.data.get(key)
            if not value or TYPE_NAMES.get(type(value)) != wanted:
                return
            waiter = next((w for w in pops if w.kind == kind and w not in passed), None)
            if waiter is None:
                return
            if not self._run(waiter):
                passed.add(waiter)

    def _serve_stream(self, db: Database, key: bytes, waiters: KeyWaiters,
                      stream: Stream) -> None:
        if waiters.readers:
            self._serve_readers(waiters, stream)
        if waiters.groups:
            for name, queue in list(waiters.groups.items()):
                group = stream.group(name)
                if group is None:  # destroyed: its readers get NOGROUP from their command
                    for waiter in list(queue):
                        self._run(waiter)
                    continue
                while queue and _has_new(stream, group):
                    if not self._run(_first(queue)):
                        break
            if waiters.claimers:
                self._serve_claimers(db, key, waiters, stream)

    def _serve_readers(self, waiters: KeyWaiters, stream: Stream) -> None:
        """Every plain reader whose ID is below the last ID, oldest first."""
        last_id = stream.last_id
        unserved: list[tuple[int, int, Waiter]] = []
        # ``waiters.readers`` is read again each time: serving a reader may rebuild the heap.
        while waiters.readers and waiters.readers[0][0] < last_id:
            after, seq, waiter = heapq.heappop(waiters.readers)
            if not waiter.active:
                continue
            if not self._run(waiter):
                # The entries after its ID were deleted: nothing up to the last ID is for it.
                unserved.append((last_id, seq, waiter))
        for item in unserved:
            heapq.heappush(waiters.readers, item)

    def _serve_claimers(self, db: Database, key: bytes, waiters: KeyWaiters,
                        stream: Stream) -> None:
        """XREADGROUP CLAIM readers whose pending entries became claimable, in arrival order."""
        now_ms = db.keyspace.clock.now_ms()
        for name, queue in list(waiters.groups.items()):
            group = stream.group(name)
            if group is None or not len(group.pel):
                continue
            for waiter in [w for w in queue if w.claim is not None]:
                if waiter.active and _claimable(group, waiter.claim, now_ms):  # type: ignore[arg-type]
                    self._run(waiter)
        if waiters.claimers:
            self._arm_claim_timer(db, key, waiters)

    def _arm_claim_timer(self, db: Database, key: bytes, waiters: KeyWaiters) -> None:
        """Wake the CLAIM readers of ``key`` when its oldest pending entry reaches the
        smallest min-idle-time among them (a released entry is claimable at once)."""
        if waiters.claim_timer is not None:
            waiters.claim_timer.cancel()  # type: ignore[attr-defined]
            waiters.claim_timer = None
        stream = db.data.get(key)
        if TYPE_NAMES.get(type(stream)) != "stream" or self.loop is None:
            return
        due: int | None = None
        for name, queue in waiters.groups.items():
            group = stream.group(name)  # type: ignore[union-attr,attr-defined]
            idles = [w.claim for w in queue if w.claim is not None]
            if group is None or not idles or not len(group.pel):
                continue
            if group.nacked:
                when = 0
            else:
                index = group.idle_index()
                if not index:
                    continue
                when = index[0][0] + min(idles)  # type: ignore[type-var]
            due = when if due is None else min(due, when)
        if due is None:
            return
        delay = max((due - db.keyspace.clock.now_ms()) / 1000, 0.001)
        waiters.claim_timer = self.loop.call_later(delay, self._claim_due, db, key)

    def _claim_due(self, db: Database, key: bytes) -> None:
        waiters = db.blocking.get(key)
        if isinstance(waiters, KeyWaiters):
            waiters.claim_timer = None
            db.signal_ready(key)
            self.serve_ready()

    # -- introspection ------------------------------------------------------------------------

    def blocking_keys(self) -> tuple[int, int]:
        """INFO's total_blocking_keys and total_blocking_keys_on_nokey (keys with group
        readers, which a deletion unblocks)."""
        total = on_nokey = 0
        for db in self.keyspace.databases:
            total += len(db.blocking)
            on_nokey += sum(1 for waiters in db.blocking.values()
                            if isinstance(waiters, KeyWaiters) and waiters.groups)
        return total, on_nokey


def _has_new(stream: Stream, group: Group) -> bool:
    """The group may have entries it never delivered. When the newest ones were deleted the
    reader's run finds nothing and it stays parked, so no exact (costlier) test is needed."""
    return stream.last_id > group.last_id and stream.length > 0


def _claimable(group: Group, min_idle: int, now_ms: int) -> bool:
    if group.nacked:
        return True
    index = group.idle_index()
    return bool(index) and index[0][0] <= now_ms - min_idle


def block(client: Session, cmd: Command, args: list[bytes], keys: list[bytes], kind: int,
          timeout_ms: int, *, group: bytes | None = None, claim: int | None = None,
          afters: list[int] | None = None, null: bytes | None = None) -> bytes | None:
    """What a blocking command returns when there is nothing for it yet.

    Inside MULTI/EXEC it does not block: ``null`` (or a null array) is the reply. When the
    parked command is being run again (``client.reprocessing``) it stays parked: None. Else the
    client parks and None tells the connection to hold its later requests.
    """
    if client.reprocessing:
        return None
    if client.in_exec:
        return null if null is not None else resp.null_array(client.protocol)
    # Counted, when it is unblocked, on this server's instance of the command.
    waiter = Waiter(client, client.server.commands.instance_of(cmd), args, keys, kind)
    waiter.group = group
    waiter.claim = claim
    if afters is not None:
        waiter.afters = afters
    client.server.blocking.park(waiter, timeout_ms)
    return None


def pending_changed(db: Database, key: bytes) -> None:
    """Entries became pending or were released (XREADGROUP, XNACK): CLAIM readers parked on
    ``key`` may have something to claim now or later."""
    waiters = db.blocking.get(key)
    if isinstance(waiters, KeyWaiters) and waiters.claimers:
        db.signal_ready(key)
