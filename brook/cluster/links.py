"""A connection of the cluster bus (cluster_legacy.h's clusterLink): the bytes only. A node
keeps an outbound link to every node it knows, on which it sends its PINGs, and accepts
inbound links, on which it answers; a message whose frame is wrong closes the link, as
Redis's clusterReadHandler does, and nothing else is taken from it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable
from typing import Final

from brook.cluster.bus_messages import BusMessageError, Message, decode, frame_length
from brook.cluster.node import ClusterNode

_HEAD: Final = 8  # signature and total length: enough to know a frame's size
MAX_MESSAGE_BYTES: Final = 1 << 30  # a frame announcing more is a broken peer


class BusLink:
    """One bus connection: ``node`` is the peer once known (an inbound link learns it from
    the first message whose sender it knows)."""

    __slots__ = ("node", "inbound", "created", "_reader", "_writer", "_task", "closed",
                 "peer_ip", "local_ip", "on_close")

    def __init__(self, node: ClusterNode | None, inbound: bool, created: int) -> None:
        self.node = node
        self.inbound = inbound
        self.created = created  # ms
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self.closed = False
        self.peer_ip = ""
        self.local_ip = ""
        self.on_close: Callable[[BusLink], None] | None = None

    @property
    def connected(self) -> bool:
        return self._writer is not None and not self.closed

    def attach(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = writer.get_extra_info("peername")
        local = writer.get_extra_info("sockname")
        self.peer_ip = _ip(peer)
        self.local_ip = _ip(local)

    def start(self, on_message: Callable[[BusLink, Message], None]) -> None:
        self._task = asyncio.get_running_loop().create_task(self._read(on_message))

    def send(self, frame: bytes) -> None:
        if self._writer is None or self.closed:
            return
        self._writer.write(frame)

    def close(self) -> None:
        """Closed at once (freeClusterLink); the owner forgets the link in ``on_close``."""
        if self.closed:
            return
        self.closed = True
        if self._writer is not None:
            self._writer.close()
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        if self.on_close is not None:
            self.on_close(self)

    async def _read(self, on_message: Callable[[BusLink, Message], None]) -> None:
        reader = self._reader
        assert reader is not None
        try:
            while not self.closed:
                head = await reader.readexactly(_HEAD)
                total = frame_length(head)
                assert total is not None
                if total > MAX_MESSAGE_BYTES:
                    break
                frame = head + await reader.readexactly(total - _HEAD)
                try:
                    message = decode(frame)
                except BusMessageError:
                    continue  # Redis drops a message of the wrong length, keeps the link
                on_message(self, message)
        except (BusMessageError, asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.close()


def _ip(address: object) -> str:
    if isinstance(address, tuple) and address:
        return str(address[0])
    return ""
