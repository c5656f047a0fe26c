"""A server's replication state, as master and as replica (Redis's replication.c).

As a master, the server's replication stream is its effect log (brook/persistence/effectlog.py):
each end-of-turn payload the AOF gets also goes to the backlog and to every online replica, so
the replicas see exactly what the AOF records (``XADD *`` with its ID, expiries as DEL...).
``master_repl_offset`` counts the stream's bytes; it moves only while a backlog exists, which
the first replica creates, with a new replication ID, as Redis does.

A replica (``REPLICAOF host port``) follows its master through a :class:`MasterLink`
(brook/replication/link.py): it applies the master's stream, counts the bytes applied as its
offset and keeps them in its own backlog, so that after a promotion (``REPLICAOF NO ONE``) the
other replicas resume from it with a partial resync: the master's ID becomes its ``replid2``.

Full resynchronisation sends Brook's own snapshot (docs/snapshot-format.md), written in memory
when PSYNC arrives: the offset it answers with is exactly the stream's length at that moment,
and everything the replica needs after it goes out as the stream.
"""

from __future__ import annotations

import io
import secrets
import time
from typing import TYPE_CHECKING, Final

from brook.persistence.dataset import write_dataset
from brook.persistence.loader import Replayer
from brook.protocol import resp
from brook.replication.backlog import Backlog
from brook.replication.link import MasterLink

if TYPE_CHECKING:
    from brook.blocking import Waiter
    from brook.context import ServerContext
    from brook.session import Session

NO_ID: Final = "0" * 40
DEMOTED: Final = ("UNBLOCKED force unblock from blocking operation, instance state changed "
                  "(master -> replica?)")
# Redis's keepalive on the stream (dbid -1: no SELECT), and its request for acknowledgements.
PING: Final = b"*1\r\n$4\r\nping\r\n"
GETACK: Final = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"


class Replica:
    """A replica connected to this master."""

    __slots__ = ("client", "port", "ip", "state", "ack_offset", "aof_offset", "ack_time",
                 "psync2", "pending")

    def __init__(self, client: Session, port: int, ip: str, psync2: bool) -> None:
        self.client = client
        self.port = port
        self.ip = ip
        self.state = "online"
        self.ack_offset = 0
        self.aof_offset = 0  # what it said is fsynced to its AOF (REPLCONF ACK ... FACK)
        self.ack_time = time.monotonic()
        self.psync2 = psync2
        # While it waits for a forked snapshot (state "wait_bgsave"): the stream since the
        # snapshot's offset, sent after it.
        self.pending: list[bytes] = []


class Replication:
    def __init__(self, server: ServerContext) -> None:
        self.server = server
        self.replid = secrets.token_hex(20)
        self.replid2 = NO_ID
        self.second_repl_offset = -1
        self.offset = 0  # master_repl_offset
        self.backlog: Backlog | None = None
        self.replicas: list[Replica] = []
        self.no_replicas_since = time.monotonic()
        self.master_host: str | None = None
        self.master_port = 0
        self.link: MasterLink | None = None
        self.sync_full = 0
        self.sync_partial_ok = 0
        self.sync_partial_err = 0
        # WAIT and WAITAOF: (waiter, replicas, offset, local); ``local`` is WAITAOF's numlocal,
        # -1 for WAIT.
        self.waiters: list[tuple[Waiter, int, int, int]] = []
        # The offset a forked snapshot for replicas ends at, while its child runs, and
        # whether it is Redis's RDB file (what an rdb-only connection takes).
        self.forked_sync_offset: int | None = None
        self.forked_sync_rdb = False
        # REPLCONF rdb-only connections (redis-cli --rdb) waiting for a forked snapshot in
        # Redis's format; closed once it is sent, never replicas.
        self.rdb_only: list[Session] = []
        # Runs the master's stream on a replica; kept across links, as its SELECT state is.
        self.replayer: Replayer | None = None
        self._ticks = 0

    @property
    def is_replica(self) -> bool:
        return self.master_host is not None

    # -- the stream ---------------------------------------------------------------------------

    def feed(self, payload: bytes) -> None:
        """This master's stream grew by ``payload`` (the effect log's bytes of one turn)."""
        backlog = self.backlog
        if backlog is None or not payload:
            return
        backlog.append(payload)
        self.offset = backlog.offset
        for replica in self.replicas:
            if replica.state == "online":
                replica.client.push(payload)
            else:
                replica.pending.append(payload)

    def feed_from_master(self, payload: bytes) -> None:
        """A replica applied ``payload`` of its master's stream: it is its own stream too
        (its backlog, for sub-replicas and for the replicas of a promoted replica)."""
        backlog = self.backlog
        if backlog is None:
            backlog = self.backlog = Backlog(self.server.config.repl_backlog_size, self.offset)
        backlog.append(payload)
        self.offset = backlog.offset
        for replica in self.replicas:
            if replica.state == "online":
                replica.client.push(payload)
            else:
                replica.pending.append(payload)

    def write_offset(self) -> int:
        """Where this turn's effects end in the stream (WAIT's target for their client);
        without a backlog the turn adds one (see ``ServerContext.flush_effects``)."""
        buffered = self.server.effect_log.buffered_bytes()
        if self.backlog is None:
            return self.offset + (1 if buffered else 0)
        return self.offset + buffered

    # -- serving replicas -----------------------------------------------------------------------

    def psync(self, client: Session, replid: str, offset: int, port: int, ip: str,
              psync2: bool) -> bytes:
        """The reply to PSYNC: ``+CONTINUE`` and the backlog from ``offset``, or
        ``+FULLRESYNC`` and a snapshot; the client becomes a replica either way."""
        server = self.server
        server.flush_effects()  # what is pending belongs to the stream the replicas have
        backlog = self.backlog
        if backlog is not None and (
                replid.lower() == self.replid
                or replid.lower() == self.replid2 and offset <= self.second_repl_offset):
            missing = backlog.since(offset)
            if missing is not None:
                self.sync_partial_ok += 1
                self._attach(client, port, ip, psync2)
                head = b"+CONTINUE %s\r\n" % self.replid.encode() if psync2 else b"+CONTINUE\r\n"
                return head + missing
        if replid != "?":
            self.sync_partial_err += 1
        self.sync_full += 1
        if backlog is None:
            # The first replica: a new history starts here (Redis's changeReplicationId).
            self.replid = secrets.token_hex(20)
            self.replid2 = NO_ID
            self.second_repl_offset = -1
            self.backlog = Backlog(server.config.repl_backlog_size, self.offset)
            server.refresh_propagating()
        server.effect_log.force_select()  # the stream after the snapshot starts in db 0
        replica = self._attach(client, port, ip, psync2)
        persistence = server.persistence
        forked = self.forked_sync_offset
        if forked is not None:
            # A child is writing a snapshot for replicas already: this one gets it too,
            # with the stream since its offset (the backlog has it, unless it was trimmed).
            backlog = self.backlog
            missing = backlog.since(forked + 1) if backlog is not None else None
            if missing is not None:
                replica.state = "wait_bgsave"
                replica.pending = [missing] if missing else []
                return b"+FULLRESYNC %s %d\r\n" % (self.replid.encode(), forked)
        elif persistence.child_active() is None and server.loop is not None:
            # A forked child writes the snapshot while this server goes on (Redis forks
            # too); the stream from here on waits in the replica's ``pending``.
            persistence.bgsave(for_replicas=True)
            self.forked_sync_offset = self.offset
            self.forked_sync_rdb = server.config.snapshot_format == "rdb"
            replica.state = "wait_bgsave"
            return b"+FULLRESYNC %s %d\r\n" % (self.replid.encode(), self.offset)
        # Another child runs (a save, a rewrite): the snapshot is written here and now.
        snapshot = io.BytesIO()
        write_dataset(server.keyspace, snapshot, server.config,
                      server.scripting.functions.codes())
        data = snapshot.getvalue()
        return b"+FULLRESYNC %s %d\r\n$%d\r\n%s" % (self.replid.encode(), self.offset,
                                                    len(data), data)

    def rdb_only_sync(self, client: Session, head: bytes) -> None:
        """``REPLCONF rdb-only`` (redis-cli --rdb): after ``head``, the RDB file of the
        dataset, written by a forked child as a replica's is, and the connection closes."""
        client.is_replica = True  # what it sends is no longer served; its end reaches detach
        client.push(b"".join(client.out) + head)
        client.out.clear()
        self.rdb_only.append(client)
        self._fork_for_rdb_only()

    def _fork_for_rdb_only(self) -> None:
        """A snapshot for the rdb-only connections waiting, unless one they can take is on
        the way; while another child runs they wait for the next tick, as Redis waits for
        the next BGSAVE."""
        if not self.rdb_only or (self.forked_sync_offset is not None and self.forked_sync_rdb):
            return
        persistence = self.server.persistence
        if persistence.child_active() is None:
            persistence.bgsave(for_replicas=True, redis_file=True)
            self.forked_sync_offset = self.offset
            self.forked_sync_rdb = True

    def snapshot_ready(self, data: bytes | None) -> None:
        """The forked snapshot is written (None: it failed, and the waiting replicas are
        disconnected to try again): it goes to every replica waiting for it, then the
        stream they missed meanwhile, and to the rdb-only connections if it is Redis's
        file."""
        self.forked_sync_offset = None
        if self.forked_sync_rdb:
            for client in self.rdb_only:
                if data is None:
                    client.kill()
                else:
                    client.push(b"$%d\r\n" % len(data))
                    client.push(data)
                    client.close()
            self.rdb_only = []
        self.forked_sync_rdb = False
        for replica in self.replicas:
            if replica.state != "wait_bgsave":
                continue
            if data is None:
                replica.client.kill()
                continue
            client = replica.client
            client.push(b"$%d\r\n" % len(data))
            client.push(data)
            for piece in replica.pending:
                client.push(piece)
            replica.pending = []
            replica.state = "online"
            replica.ack_time = time.monotonic()
            self.server.log("notice", f"Synchronization with replica {replica.ip}:"
                                      f"{replica.port} succeeded")
        self._fork_for_rdb_only()

    def _attach(self, client: Session, port: int, ip: str, psync2: bool) -> Replica:
        client.is_replica = True
        replica = Replica(client, port, ip, psync2)
        self.replicas.append(replica)
        server = self.server
        server.log("notice", f"Replica {ip}:{port} asks for synchronization")
        return replica

    def detach(self, client: Session) -> None:
        """A replica's connection closed (or an rdb-only one's)."""
        self.replicas = [replica for replica in self.replicas if replica.client is not client]
        if client in self.rdb_only:
            self.rdb_only.remove(client)
        if not self.replicas:
            self.no_replicas_since = time.monotonic()

    def acknowledged(self, client: Session, offset: int, aof_offset: int | None) -> None:
        """REPLCONF ACK from a replica (with FACK, what its AOF has fsynced)."""
        for replica in self.replicas:
            if replica.client is client:
                replica.ack_offset = max(replica.ack_offset, offset)
                if aof_offset is not None:
                    replica.aof_offset = max(replica.aof_offset, aof_offset)
                replica.ack_time = time.monotonic()
        if self.waiters:
            self.serve_waiters()

    def acked_count(self, offset: int) -> int:
        return sum(1 for replica in self.replicas
                   if replica.state == "online" and replica.ack_offset >= offset)

    def aof_acked_count(self, offset: int) -> int:
        return sum(1 for replica in self.replicas
                   if replica.state == "online" and replica.aof_offset >= offset)

    # -- WAIT and WAITAOF ---------------------------------------------------------------------

    def wait_reply(self, replicas: int, offset: int, local: int) -> bytes | None:
        """The answer to a WAIT (``local`` -1) or a WAITAOF for ``offset``, None while it is
        not satisfied."""
        if local < 0:
            count = self.acked_count(offset)
            return resp.integer(count) if count >= replicas else None
        count = self.aof_acked_count(offset)
        fsynced = self.local_fsynced(offset)
        if count < replicas or fsynced < local:
            return None
        return self.waitaof_reply(fsynced, count)

    def wait_timeout_reply(self, offset: int, local: int) -> bytes:
        if local < 0:
            return resp.integer(self.acked_count(offset))
        return self.waitaof_reply(self.local_fsynced(offset), self.aof_acked_count(offset))

    @staticmethod
    def waitaof_reply(fsynced: int, replicas: int) -> bytes:
        return resp.array([resp.integer(fsynced), resp.integer(replicas)])

    def local_fsynced(self, offset: int) -> int:
        """1 when this server's AOF has fsynced its stream up to ``offset``."""
        aof = self.server.aof
        return int(aof is not None and aof.fsynced_offset >= offset)

    def wait(self, waiter: Waiter, replicas: int, offset: int, local: int = -1) -> None:
        """A WAIT or WAITAOF parked: the replicas are asked for their offsets now."""
        self.waiters.append((waiter, replicas, offset, local))
        self.send_control(GETACK)

    def send_control(self, payload: bytes) -> None:
        """Put a command of no database (PING, REPLCONF GETACK) on the stream, after what
        the turn has changed so far; the AOF does not get it."""
        self.server.flush_effects()
        self.feed(payload)

    def disconnect_blocked(self) -> None:
        """A new master to follow: every parked client (WAIT and WAITAOF too) gets
        ``-UNBLOCKED`` and is closed after it, as Redis's disconnectAllBlockedClients does;
        what it waited for may never come from this server now."""
        server = self.server
        for client in list(server.clients.values()):
            if client.blocked is not None:
                client.close()  # after the reply, which fail writes
                server.blocking.fail(client.blocked, DEMOTED)
        self.waiters = []

    def serve_waiters(self) -> None:
        """Answer the WAITs and WAITAOFs that acknowledgements or fsyncs satisfied."""
        blocking = self.server.blocking
        still = []
        for parked in self.waiters:
            waiter, wanted, offset, local = parked
            if not waiter.active:
                continue
            reply = self.wait_reply(wanted, offset, local)
            if reply is not None:
                blocking.answer(waiter, reply)
            else:
                still.append(parked)
        self.waiters = still

    # -- the cron ---------------------------------------------------------------------------

    def tick(self) -> None:
        """Once a second (Redis's replicationCron): keepalives, acknowledgements, timeouts."""
        self._ticks += 1
        server = self.server
        config = server.config
        now = time.monotonic()
        link = self.link
        if link is not None:
            link.tick(now)
        for replica in self.replicas:
            if replica.state == "wait_bgsave":
                replica.client.push(b"\n")  # Redis's keepalive while the snapshot is written
        for client in self.rdb_only:
            client.push(b"\n")
        self._fork_for_rdb_only()
        if self.replicas and not self.is_replica and self.backlog is not None:
            period = config.repl_ping_replica_period
            if period and self._ticks % period == 0:
                self.send_control(PING)
            for replica in list(self.replicas):
                if replica.state == "online" and now - replica.ack_time > config.repl_timeout:
                    server.log("warning", f"Disconnecting timedout replica: "
                                          f"{replica.ip}:{replica.port}")
                    replica.client.kill()
                    self.detach(replica.client)
        if (not self.replicas and self.backlog is not None and not self.is_replica
                and config.repl_backlog_ttl
                and now - self.no_replicas_since > config.repl_backlog_ttl):
            # Redis frees an unused backlog, and with it the history its ID named.
            self.backlog = None
            self.replid = secrets.token_hex(20)
            self.replid2 = NO_ID
            self.second_repl_offset = -1
            server.refresh_propagating()

    # -- roles --------------------------------------------------------------------------------

    def follow(self, host: str, port: int) -> None:
        """REPLICAOF host port: become (or stay) a replica, of this master now. Parked
        clients are disconnected with an error, as Redis's disconnectAllBlockedClients."""
        server = self.server
        if self.link is not None:
            self.link.stop()
        was_master = not self.is_replica
        self.master_host = host
        self.master_port = port
        server.config.replicaof = [host, str(port)]  # what CONFIG GET/REWRITE show
        if was_master:
            server.flush_effects()
        self.disconnect_blocked()
        server.refresh_propagating()
        server.refresh_replication_checks()
        self.link = MasterLink(server, host, port)
        self.link.start()
        server.log("notice", f"Connecting to MASTER {host}:{port}")

    def promote(self) -> None:
        """REPLICAOF NO ONE: a master again, whose history continues the one it followed:
        the old ID becomes replid2, so the other replicas resume with a partial resync."""
        if not self.is_replica:
            return
        server = self.server
        if self.link is not None:
            self.link.stop()
            self.link = None
        self.master_host = None
        self.master_port = 0
        server.config.replicaof = []
        self.replid2 = self.replid
        self.second_repl_offset = self.offset + 1
        self.replid = secrets.token_hex(20)
        self.disconnect_replicas()
        server.effect_log.force_select()
        self.no_replicas_since = time.monotonic()
        server.refresh_propagating()
        server.refresh_replication_checks()
        server.log("notice", "MASTER MODE enabled (user request from replicaof no one)")

    def disconnect_replicas(self) -> None:
        for replica in self.replicas:
            replica.client.kill()
        self.replicas = []
        self.no_replicas_since = time.monotonic()

    def reset_backlog(self, offset: int) -> None:
        """A replica's full synchronisation: its stream starts again at ``offset``."""
        self.offset = offset
        self.backlog = Backlog(self.server.config.repl_backlog_size, offset)
        self.forked_sync_offset = None  # a snapshot being written is of the old dataset
        if self.replayer is not None:
            self.replayer.client.db = self.server.keyspace[0]
            self.replayer.reset()

    def clear_id2(self) -> None:
        self.replid2 = NO_ID
        self.second_repl_offset = -1

    # -- introspection ------------------------------------------------------------------------

    def info(self) -> list[str]:
        """INFO replication, Redis's fields in Redis's order."""
        server = self.server
        config = server.config
        now = time.monotonic()
        lines = [f"role:{'slave' if self.is_replica else 'master'}"]
        link = self.link
        if self.is_replica and link is not None:
            connected = link.state == "connected"
            lines += [
                f"master_host:{self.master_host}",
                f"master_port:{self.master_port}",
                f"master_link_status:{'up' if connected else 'down'}",
                f"master_last_io_seconds_ago:{link.last_io_seconds(now)}",
                f"master_sync_in_progress:{int(link.state == 'sync')}",
                f"slave_read_repl_offset:{link.offset if link.synced else 1}",
                f"slave_repl_offset:{link.offset if link.synced else 1}",
            ]
            if link.state == "sync":
                lines += link.transfer_info(now)
            if not connected:
                down = link.down_since
                lines.append("master_link_down_since_seconds:"
                             f"{int(now - down) if down else -1}")
            lines += [
                f"slave_priority:{config.replica_priority}",
                f"slave_read_only:{int(config.replica_read_only)}",
                f"replica_announced:{int(config.replica_announced)}",
            ]
        lines.append(f"connected_slaves:{len(self.replicas)}")
        if config.min_replicas_to_write and config.min_replicas_max_lag:
            lines.append(f"min_slaves_good_slaves:{self.good_replicas()}")
        for index, replica in enumerate(self.replicas):
            lag = int(now - replica.ack_time) if replica.state == "online" else 0
            lines.append(f"slave{index}:ip={replica.ip},port={replica.port},"
                         f"state={replica.state},offset={replica.ack_offset},lag={lag}")
        backlog = self.backlog
        lines += [
            "master_failover_state:no-failover",
            f"master_replid:{self.replid}",
            f"master_replid2:{self.replid2}",
            f"master_repl_offset:{self.offset}",
            f"second_repl_offset:{self.second_repl_offset}",
            f"repl_backlog_active:{int(backlog is not None)}",
            f"repl_backlog_size:{config.repl_backlog_size}",
            f"repl_backlog_first_byte_offset:"
            f"{backlog.first_byte_offset if backlog is not None else 0}",
            f"repl_backlog_histlen:{backlog.histlen if backlog is not None else 0}",
        ]
        return lines

    def good_replicas(self) -> int:
        lag = self.server.config.min_replicas_max_lag
        now = time.monotonic()
        return sum(1 for replica in self.replicas
                   if replica.state == "online" and now - replica.ack_time <= lag)

    def role_reply(self, protocol: int) -> bytes:
        """ROLE."""
        link = self.link
        if self.is_replica and link is not None:
            return resp.array([
                resp.bulk(b"slave"), resp.bulk((self.master_host or "").encode()),
                resp.integer(self.master_port), resp.bulk(link.state.encode()),
                resp.integer(link.offset if link.synced else -1)])
        listed = [resp.array([resp.bulk(replica.ip.encode()), resp.bulk(b"%d" % replica.port),
                              resp.bulk(b"%d" % replica.ack_offset)])
                  for replica in self.replicas if replica.state == "online"]
        return resp.array([resp.bulk(b"master"), resp.integer(self.offset),
                           resp.array(listed)])
