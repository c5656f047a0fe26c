"""A replica's link to its master: the handshake, the synchronisation, then the stream.

Redis's replica side (syncWithMaster, readSyncBulkPayload): ``PING``; then, written together,
``AUTH`` (with ``masterauth``/``masteruser``), ``REPLCONF listening-port``, ``REPLCONF
ip-address`` (with ``replica-announce-ip``) and ``REPLCONF capa eof capa psync2``; then
``PSYNC <replid> <offset>``, where the ID and offset are what this server last had (a new
master's own history, or the stream it followed), so a master that knows them answers
``+CONTINUE`` and only the missing bytes follow. Otherwise ``+FULLRESYNC`` and a snapshot
(``$<length>`` or Redis's diskless ``$EOF:<mark>`` framing) replace the whole dataset.

The stream's commands run through the AOF loader's replayer (the one path commands from a
file take), with expiry paused while they run: a key the master still has is never expired by
its replica. Their bytes count as the replica's offset and go to its own backlog. ``REPLCONF
GETACK`` is answered with ``REPLCONF ACK <offset>`` (not counting the GETACK, as Redis), and an
ACK goes out every second. A lost link is retried with PSYNC at once, then every second.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Final

import hiredis

from brook.persistence.aof import encode_command
from brook.persistence.dataset import SnapshotError, load_dataset
from brook.persistence.loader import AofError, apply_master_stream
from brook.protocol.framing import FramedGets, may_hold_other_elements

if TYPE_CHECKING:
    from brook.context import ServerContext

_READ_SIZE: Final = 1 << 16
_EOF_MARK_LENGTH: Final = 40
_HANDSHAKE_ERRORS_OK: Final = (b"-NOAUTH", b"-NOPERM", b"-ERR operation not permitted")


class LinkError(Exception):
    """The link failed; it is retried."""


class MasterLink:
    """The connection to ``host:port`` and what it has applied."""

    def __init__(self, server: ServerContext, host: str, port: int) -> None:
        self.server = server
        self.host = host
        self.port = port
        self.state = "connect"  # ROLE's: connect, connecting, handshake, sync, connected
        self.synced = False  # a synchronisation happened: ``offset`` means something
        self.last_io = time.monotonic()
        self.down_since = 0.0
        self.transfer_size = -1  # the snapshot being received: its size (-1: EOF-marked) ...
        self.transfer_read = 0  # ... the bytes read of it so far
        self.transfer_last_io = 0.0
        self.writer: asyncio.StreamWriter | None = None
        self.stopped = False
        self.task: asyncio.Task[None] | None = None

    # -- life -------------------------------------------------------------------------------

    def start(self) -> None:
        loop = self.server.loop
        if loop is not None:
            self.task = loop.create_task(self._run())

    def stop(self) -> None:
        self.stopped = True
        self._close()
        if self.task is not None:
            self.task.cancel()
            self.task = None

    @property
    def address(self) -> str:
        """The master's ``ip:port``, as CLIENT KILL ADDR names it."""
        return f"{self.host}:{self.port}"

    def cut(self) -> None:
        """CLIENT KILL of the master client: the link is closed and, as after any lost link,
        made again at once with PSYNC, which continues where it stopped."""
        self._close()

    def _close(self) -> None:
        writer = self.writer
        self.writer = None
        if writer is not None:
            writer.close()

    async def _run(self) -> None:
        server = self.server
        while not self.stopped:
            try:
                await self._session()
            except (TimeoutError, OSError, LinkError, asyncio.IncompleteReadError) as err:
                if not self.stopped:
                    server.log("warning", f"Error condition on socket for SYNC with "
                                          f"{self.host}:{self.port}: {err or type(err).__name__}")
            except Exception as err:  # noqa: BLE001 - a link that stops silently is worse
                if self.stopped:
                    return
                server.log("warning", f"Replication with {self.host}:{self.port} failed: "
                                      f"{type(err).__name__}: {err}")
                self.state = "connect"
                self._close()
                await asyncio.sleep(1)
                continue
            self._close()
            if self.stopped:
                return
            was_connected = self.state == "connected"
            if was_connected or not self.down_since:
                self.down_since = time.monotonic()
            self.state = "connect"
            # A link that worked is retried at once (a partial resync picks up where it
            # stopped); a master that cannot be reached, every second.
            await asyncio.sleep(0 if was_connected else 1)

    def tick(self, now: float) -> None:
        """Once a second: an ACK, and the repl-timeout check."""
        if self.state == "connected":
            if now - self.last_io > self.server.config.repl_timeout:
                self.server.log("warning", "MASTER timeout: no data nor PING received...")
                self._close()
                return
            self.send_ack()

    def send_ack(self) -> None:
        """``REPLCONF ACK <offset>``, with ``FACK <offset>`` (what the AOF has fsynced, for
        the master's WAITAOF) when this replica has an AOF."""
        writer = self.writer
        if writer is not None:
            ack = [b"REPLCONF", b"ACK", b"%d" % self.offset]
            aof = self.server.aof
            if aof is not None:
                ack += [b"FACK", b"%d" % aof.fsynced_offset]
            writer.write(encode_command(ack))

    @property
    def offset(self) -> int:
        """The bytes of the master's stream applied (the replica's stream is those bytes)."""
        return self.server.replication.offset

    def last_io_seconds(self, now: float) -> int:
        return int(now - self.last_io) if self.state == "connected" else -1

    # -- one connection -----------------------------------------------------------------------

    async def _session(self) -> None:
        server = self.server
        config = server.config
        timeout = config.repl_timeout
        self.state = "connecting"
        # tls-replication: the master's port is its TLS port, reached with the client context.
        tls = server.tls.client if config.tls_replication and server.tls is not None else None
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, ssl=tls), timeout)
        self.writer = writer
        self.state = "handshake"
        writer.write(encode_command([b"PING"]))
        reply = await asyncio.wait_for(reader.readline(), timeout)
        if not reply.startswith(b"+") and not reply.startswith(_HANDSHAKE_ERRORS_OK):
            raise LinkError(f"Error reply to PING from master: {reply.strip()!r}")
        expected: list[bytes] = []
        if config.masterauth:
            auth = [b"AUTH", config.masterauth.encode()]
            if config.masteruser:
                auth.insert(1, config.masteruser.encode())
            writer.write(encode_command(auth))
            expected.append(b"AUTH")
        port = config.replica_announce_port or (
            config.tls_port if config.tls_replication else config.port)
        writer.write(encode_command([b"REPLCONF", b"listening-port", b"%d" % port]))
        expected.append(b"REPLCONF")
        if config.replica_announce_ip:
            writer.write(encode_command([b"REPLCONF", b"ip-address",
                                         config.replica_announce_ip.encode()]))
            expected.append(b"REPLCONF")
        writer.write(encode_command([b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]))
        expected.append(b"REPLCONF")
        for sent in expected:
            reply = await asyncio.wait_for(reader.readline(), timeout)
            if sent == b"AUTH" and reply.startswith(b"-"):
                raise LinkError(f"Unable to AUTH to MASTER: {reply.strip()!r}")
        replication = server.replication
        writer.write(encode_command([b"PSYNC", replication.replid.encode(),
                                     b"%d" % (replication.offset + 1)]))
        reply = await self._line(reader, timeout)
        if reply.startswith(b"+FULLRESYNC"):
            parts = reply.split()
            if len(parts) != 3:
                raise LinkError(f"Bad FULLRESYNC reply: {reply!r}")
            self.state = "sync"
            self.transfer_size, self.transfer_read = -1, 0
            self.transfer_last_io = time.monotonic()
            data = await self._payload(reader, timeout)
            self._load(data, parts[1].decode(), int(parts[2]))
            self.send_ack()  # a diskless master starts the stream at the first ACK
        elif reply.startswith(b"+CONTINUE"):
            parts = reply.split()
            if len(parts) == 2 and parts[1].decode() != replication.replid:
                # The master's history has a new ID that continues ours (it was promoted).
                replication.replid2 = replication.replid
                replication.second_repl_offset = replication.offset + 1
                replication.replid = parts[1].decode()
            self.synced = True
        else:
            raise LinkError(f"Unexpected reply to PSYNC from master: {reply.strip()!r}")
        self.state = "connected"
        self.down_since = 0.0
        self.last_io = time.monotonic()
        server.log("notice", "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization."
                   if reply.startswith(b"+CONTINUE") else
                   "MASTER <-> REPLICA sync: Finished with success")
        await self._stream(reader)

    async def _line(self, reader: asyncio.StreamReader, timeout: float) -> bytes:
        """The next line, skipping the bare newlines a master sends while it prepares."""
        while True:
            line = await asyncio.wait_for(reader.readline(), timeout)
            if not line:
                raise LinkError("connection lost")
            if line.strip():
                if line.startswith(b"-"):
                    raise LinkError(f"MASTER aborted replication with an error: "
                                    f"{line.strip().decode('utf-8', 'replace')}")
                return line.rstrip(b"\r\n")

    async def _payload(self, reader: asyncio.StreamReader, timeout: float) -> bytes:
        header = await self._line(reader, timeout)
        if not header.startswith(b"$"):
            raise LinkError(f"Bad protocol from MASTER, the first byte is not '$': {header!r}")
        if header.startswith(b"$EOF:"):
            mark = header[5:]
            if len(mark) != _EOF_MARK_LENGTH:
                raise LinkError("Bad EOF mark from MASTER")
            return await self._payload_until(reader, mark, timeout)
        size = int(header[1:])
        self.transfer_size = size
        received = bytearray()
        while len(received) < size:
            # repl-timeout bounds the wait for each read, not the whole transfer (Redis's).
            data = await asyncio.wait_for(reader.read(min(_READ_SIZE, size - len(received))),
                                          timeout)
            if not data:
                raise LinkError("connection lost")
            received += data
            self.transfer_read = len(received)
            self.transfer_last_io = time.monotonic()
        return bytes(received)

    async def _payload_until(self, reader: asyncio.StreamReader, mark: bytes,
                             timeout: float) -> bytes:
        """A diskless payload: everything up to the mark that ends it, read as it comes
        (the stream reader's ``readuntil`` stops at 64 KiB). A master sends nothing after the
        mark until this replica's first ACK, so the mark ends the bytes read, as Redis's
        replica checks it."""
        received = bytearray()
        while not received.endswith(mark):
            data = await asyncio.wait_for(reader.read(_READ_SIZE), timeout)
            if not data:
                raise LinkError("connection lost")
            received += data
            self.transfer_read = len(received)
            self.transfer_last_io = time.monotonic()
        del received[-len(mark):]
        return bytes(received)

    def transfer_info(self, now: float) -> list[str]:
        """INFO replication's master_sync_* lines, while a snapshot is received."""
        size, read = self.transfer_size, self.transfer_read
        percent = read / size * 100 if size else 0.0
        return [
            f"master_sync_total_bytes:{size}",
            f"master_sync_read_bytes:{read}",
            f"master_sync_left_bytes:{size - read}",
            f"master_sync_perc:{percent:.2f}",
            f"master_sync_last_io_seconds_ago:{int(now - self.transfer_last_io)}",
        ]

    def _load(self, data: bytes, replid: str, offset: int) -> None:
        """Replace the dataset with the master's snapshot (nothing awaits meanwhile, so no
        client sees it half loaded)."""
        server = self.server
        keyspace = server.keyspace
        for db in keyspace.databases:
            server.dirty += db.clear()
        server.tracking.flushed()  # caching clients learn that everything changed
        libraries: list[bytes] = []
        try:
            load_dataset(keyspace, data, server.config, libraries)
        except SnapshotError as err:
            raise LinkError(f"Failed trying to load the MASTER synchronization: {err}") from err
        server.scripting.functions.flush()
        server.scripting.functions.load_libraries(libraries)
        replication = server.replication
        replication.disconnect_replicas()  # they follow a history that just ended
        replication.replid = replid
        replication.clear_id2()
        replication.reset_backlog(offset)
        self.synced = True
        server.persistence.synced_from_master()

    async def _stream(self, reader: asyncio.StreamReader) -> None:
        server = self.server
        replication = server.replication
        clock = server.keyspace.clock
        replayer = replication.replayer
        if replayer is None:
            replayer = replication.replayer = server.make_replayer()
        parser = hiredis.Reader()
        # Received and not yet applied: the applied requests' bytes are taken from here (the
        # parser keeps a request cut between reads until it is whole).
        pending = bytearray()
        acks: list[int] = []
        while True:
            data = await reader.read(_READ_SIZE)
            if not data:
                raise LinkError("Connection with master lost.")
            self.last_io = time.monotonic()
            parser.feed(data)
            pending += data
            clock.loading = True  # the master decides what expires
            next_request = parser.gets
            if may_hold_other_elements(pending):
                next_request = FramedGets(pending, next_request)
            try:
                used = apply_master_stream(replayer, next_request, acks)
            except (hiredis.ProtocolError, AofError) as err:
                raise LinkError(f"Bad protocol from MASTER: {err}") from err
            finally:
                clock.loading = False
            fed = 0
            for position in acks:  # answered at the offset before each GETACK
                if position > fed:
                    replication.feed_from_master(bytes(pending[fed:position]))
                    fed = position
                self.send_ack()
            acks.clear()
            if used > fed:
                replication.feed_from_master(bytes(pending[fed:used]))
            del pending[:used]
            server.blocking.serve_ready()
            server.flush_effects()  # this replica's AOF
            if server.pubsub.delivered:
                server.flush_subscribers()


