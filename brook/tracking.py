"""Server-assisted client-side caching (Redis's tracking.c): CLIENT TRACKING's bookkeeping and
the invalidation messages it sends.

Default mode. A tracking client's read-only commands leave their keys in :attr:`Tracking.table`
(key -> the ids of the clients that read it, like Redis's TrackingTable: keys by name alone,
whatever their database). The first change to such a key (a write, an expiry, an eviction)
sends each of those clients one ``invalidate`` message and forgets the key: a client hears of a
key again only after it reads it again. A FLUSHALL or FLUSHDB sends every tracking client a
null invalidation ("everything") and empties the table. ``tracking-table-max-keys`` bounds
the table: keys over it are invalidated as if they had changed (:meth:`Tracking.limit`).

Broadcast mode (BCAST). No keys are remembered: a change to any key that starts with one of the
client's prefixes is collected per prefix and sent, deduplicated and in key order, once the
event loop turn ends (Redis sends them before it sleeps).

Delivery (Redis's sendTrackingMessage). To the client itself as a RESP3 push, or to the client
named by REDIRECT: a push if it speaks RESP3, else a Pub/Sub ``message`` on
``__redis__:invalidate`` when it is subscribed (nothing otherwise). A redirect target that has
gone marks the client's redirect broken and, in RESP3, tells it with a
``tracking-redir-broken`` push. What a client's own command makes it receive waits in its
``postponed`` messages and follows the command's reply, as Redis (7.2+) does; everything else
goes the way Pub/Sub messages to other clients go (:meth:`brook.pubsub.Registry.deliver_to`).

Cost. While no key is tracked and no prefix is broadcast, every database's ``tracking`` is None
(:meth:`brook.keyspace.Keyspace.track_changes`): a write pays one falsy test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from brook.protocol import resp

if TYPE_CHECKING:
    from brook.commands.registry import Command
    from brook.keyspace import Keyspace
    from brook.pubsub import Registry
    from brook.session import Session

# The channel a RESP2 redirect target hears invalidations on.
CHANNEL: Final = b"__redis__:invalidate"
_PUSH_HEAD: Final = b">2\r\n$10\r\ninvalidate\r\n"
_MESSAGE_HEAD: Final = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
_BROKEN_HEAD: Final = b">2\r\n$21\r\ntracking-redir-broken\r\n"
# Scripts whose own reads do not count (the commands they run do): Redis's exceptions.
_READ_ONLY_SCRIPTS: Final = frozenset({"eval_ro", "evalsha_ro", "fcall_ro"})


class Broadcast:
    """One BCAST prefix: its clients and the keys changed since the last broadcast, each with
    the client that changed it last (None: an expiry or no client), for NOLOOP."""

    __slots__ = ("clients", "keys")

    def __init__(self) -> None:
        self.clients: dict[Session, None] = {}
        self.keys: dict[bytes, Session | None] = {}


class Tracking:
    """The tracking table, the BCAST prefixes, and sending invalidations."""

    def __init__(self, clients: Mapping[int, Session], keyspace: Keyspace, registry: Registry,
                 current: Callable[[], Session | None],
                 executing: Callable[[], Session | None],
                 later: Callable[[Callable[[], object]], object]) -> None:
        self.clients = clients  # id -> connected client (REDIRECT targets, flush)
        self.keyspace = keyspace
        self.registry = registry
        self.current = current  # the client whose command is running, if any
        # The session running the command that writes: a script's own session while a script
        # runs (Redis's executing client), so BCAST's NOLOOP does not hide a script's writes.
        self.executing = executing
        self.later = later  # run a callable once the event loop turn ends
        self.table: dict[bytes, dict[int, None]] = {}
        self.items = 0  # client ids across the table (INFO tracking_total_items)
        self.prefixes: dict[bytes, Broadcast] = {}
        self.count = 0  # clients with tracking on (INFO tracking_clients)
        self.broadcast_due = False
        self.over_limit_runs = 0  # limit() runs in a row that stayed over the limit

    # -- turning it on and off (CLIENT TRACKING, RESET, disconnection) --------------------

    def enable(self, client: Session, redirect: int, bcast: bool, optin: bool, optout: bool,
               noloop: bool, prefixes: list[bytes]) -> None:
        """Redis's enableTracking: options already checked by the command."""
        if not client.tracking:
            self.count += 1
            client.tracking = True
            client.refresh_mode()
        client.tracking_broken_redirect = False
        client.tracking_redirect = redirect
        client.tracking_bcast = bcast
        client.tracking_optin = optin
        client.tracking_optout = optout
        client.tracking_noloop = noloop
        if bcast:
            for prefix in prefixes or [b""]:
                state = self.prefixes.get(prefix)
                if state is None:
                    state = self.prefixes[prefix] = Broadcast()
                state.clients[client] = None
                client.tracking_prefixes[prefix] = None
        self._watch_changes()

    def disable(self, client: Session) -> None:
        """Redis's disableTracking. The keys it read stay in the table (Redis cleans them
        lazily): a later change finds the client not tracking and skips it."""
        for prefix in client.tracking_prefixes:
            state = self.prefixes[prefix]
            del state.clients[client]
            if not state.clients:
                del self.prefixes[prefix]
        client.tracking_prefixes = {}
        if client.tracking:
            self.count -= 1
            client.tracking = False
            client.tracking_bcast = client.tracking_optin = client.tracking_optout = False
            client.tracking_noloop = client.tracking_caching = False
            client.tracking_broken_redirect = False
            client.refresh_mode()
        self._watch_changes()

    def _watch_changes(self) -> None:
        """Have the databases report changed keys exactly while anything may need them."""
        wanted = self.invalidate if self.table or self.prefixes else None
        if (self.keyspace.tracking is None) != (wanted is None):
            self.keyspace.track_changes(wanted)

    # -- remembering reads ----------------------------------------------------------------

    def remember(self, cmd: Command, args: list[bytes]) -> None:
        """A read-only command ran (Dispatcher.call): the keys it named are now cached by the
        client whose request it serves (a script's caller for the script's commands)."""
        client = self.current()
        if client is None or not client.tracking or client.tracking_bcast:
            return
        if cmd.name in _READ_ONLY_SCRIPTS and cmd.parent is None:
            return
        caching = client.tracking_caching
        if (client.tracking_optin and not caching) or (client.tracking_optout and caching):
            return
        if cmd.is_pubsub:  # shard channels: keys by their key specs, never cached
            return
        keys = cmd.key_positions_of(args)
        if not keys:
            return
        table = self.table
        was_empty = not table
        client_id = client.id
        for key in keys:
            ids = table.get(key)
            if ids is None:
                ids = table[key] = {}
            if client_id not in ids:
                ids[client_id] = None
                self.items += 1
        if was_empty:
            self._watch_changes()

    # -- changes --------------------------------------------------------------------------

    def invalidate(self, key: bytes, by_expiry: bool = False) -> None:
        """``key`` changed (Redis's trackingInvalidateKey): its readers are told once and it
        is forgotten; BCAST prefixes collect it for the next broadcast."""
        if self.prefixes:
            self._collect(key, None if by_expiry else self.executing())
        current = self.current()
        ids = self.table.pop(key, None)
        if ids is None:
            return
        self.items -= len(ids)
        if not self.table:
            self._watch_changes()
        payload = b"*1\r\n$%d\r\n%s\r\n" % (len(key), key)
        clients = self.clients
        for client_id in ids:
            target = clients.get(client_id)
            if target is None or not target.tracking or target.tracking_bcast:
                continue
            if target.tracking_noloop and target is current:
                continue  # NOLOOP: not of its own changes
            self.send(target, payload)

    def flushed(self, own_first: bool = False) -> None:
        """FLUSHALL/FLUSHDB (Redis's trackingInvalidateKeysOnFlush): every tracking client
        hears that everything changed (a null), and the table is emptied. ``own_first``: the
        flushing client's own message precedes its reply (see brook.commands.keys)."""
        if self.count:
            for client in list(self.clients.values()):
                if client.tracking:
                    self.send(client, resp.null(client.protocol), own_first)
        if self.table:
            self.table = {}
            self.items = 0
            self._watch_changes()

    def limit(self, max_keys: int) -> None:
        """Keep the table within ``tracking-table-max-keys`` (0: no limit), invalidating keys
        as if they changed; each run that stays over the limit tries harder next time, as
        Redis's trackingLimitUsedSlots (which walks randomly; the oldest keys go here)."""
        table = self.table
        if not max_keys or len(table) <= max_keys:
            self.over_limit_runs = 0
            return
        effort = 100 * (self.over_limit_runs + 1)
        while effort and table:
            effort -= 1
            self._evict(next(iter(table)))
            if len(table) <= max_keys:
                self.over_limit_runs = 0
                return
        self.over_limit_runs += 1

    def _evict(self, key: bytes) -> None:
        """A key leaves the table for want of room: its readers are told, whoever runs."""
        ids = self.table.pop(key)
        self.items -= len(ids)
        payload = b"*1\r\n$%d\r\n%s\r\n" % (len(key), key)
        for client_id in ids:
            target = self.clients.get(client_id)
            if target is not None and target.tracking and not target.tracking_bcast:
                self.send(target, payload)
        if not self.table:
            self._watch_changes()

    # -- broadcasting ---------------------------------------------------------------------

    def _collect(self, key: bytes, writer: Session | None) -> None:
        for prefix, state in self.prefixes.items():
            if key.startswith(prefix):
                state.keys[key] = writer
                if not self.broadcast_due:
                    self.broadcast_due = True
                    self.later(self.broadcast)

    def broadcast(self) -> None:
        """Send each prefix's changed keys to its clients, in key order (Redis's
        trackingBroadcastInvalidationMessages); a NOLOOP client does not get its own."""
        self.broadcast_due = False
        for state in self.prefixes.values():
            if not state.keys:
                continue
            keys = sorted(state.keys.items())
            state.keys = {}
            common = _array(key for key, _ in keys)
            for client in list(state.clients):
                if client.tracking_noloop:
                    theirs = [key for key, writer in keys if writer is not client]
                    if theirs:
                        self.send(client, _array(theirs))
                else:
                    self.send(client, common)

    # -- delivery -------------------------------------------------------------------------

    def send(self, client: Session, payload: bytes, own_first: bool = False) -> None:
        """Send the invalidation of ``payload`` (an array of keys, or a null) on behalf of
        tracking ``client`` (Redis's sendTrackingMessage)."""
        target = client
        if client.tracking_redirect:
            target = self.clients.get(client.tracking_redirect)  # type: ignore[assignment]
            if target is None:
                client.tracking_broken_redirect = True
                if client.protocol > 2:
                    self._deliver(client, client,
                                  _BROKEN_HEAD + resp.integer(client.tracking_redirect),
                                  own_first)
                return
            if target.protocol > 2:
                frame = _PUSH_HEAD + payload
            elif target.is_subscribed():
                frame = _MESSAGE_HEAD + payload
            else:
                return
        elif client.protocol > 2:
            frame = _PUSH_HEAD + payload
        else:
            return  # RESP2 has no room for it on the client's own connection
        self._deliver(client, target, frame, own_first)

    def _deliver(self, client: Session, target: Session, frame: bytes,
                 own_first: bool = False) -> None:
        """Where a message goes depends on who runs: the running client's own invalidations
        follow its command's reply; one reaching the running client for another client's
        keys goes out at once, before its reply, as in Redis; the rest is written with the
        turn's other Pub/Sub traffic."""
        current = self.current()
        if target is current and current is not None:
            if client is current and not own_first:
                current.postponed.append(frame)
            else:
                current.out.append(frame)
            return
        self.registry.deliver_to(target, target.pubsub_out.append, frame)


def _array(keys: object) -> bytes:
    """A RESP array of bulk strings."""
    items = [b"$%d\r\n%s\r\n" % (len(key), key) for key in keys]  # type: ignore[attr-defined]
    return b"*%d\r\n" % len(items) + b"".join(items)
