"""Failure injection from the test side: a TCP proxy between a client and a server that cuts
every connection once a given number of XADD commands has passed through it.

The Spark sink is pointed at the proxy by its ``url`` option, so a write dies mid-batch
exactly as it would when the network or the server goes away: the first commands reached the
server, the rest never did. Nothing in the production code knows about it.
"""

from __future__ import annotations

import contextlib
import socket
import threading

_XADD = b"$4\r\nXADD\r\n"


class CuttingProxy:
    """Forwards 127.0.0.1:<port> to the server; :meth:`cut_after` arms one cut."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.budget: int | None = None  # XADDs still allowed through before the cut
        self.cut = threading.Event()  # set once the cut has happened
        self.hold = False
        self.held = threading.Event()  # a writer is stopped at the limit (hold mode)
        self.released = threading.Event()
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def cut_after(self, xadds: int, hold: bool = False) -> None:
        """Let ``xadds`` more XADD commands through (all connections together), then close
        every connection; until :meth:`heal`, later connections are cut at their first XADD
        too (a task retried meanwhile fails as well). With ``hold``, the connection that
        reached the limit stops there (``held`` is set) until :meth:`release`: the writer is
        stuck mid-batch, for the test to kill it."""
        with self.lock:
            self.budget = xadds
            self.hold = hold
            self.cut.clear()
            self.held.clear()
            self.released.clear()

    def heal(self) -> None:
        """Everything passes again."""
        with self.lock:
            self.budget = None

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.released.set()
        self.listener.close()
        self._drop_all()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            with self.lock:
                self.pairs.append((client, upstream))
            threading.Thread(target=self._pump_requests, args=(client, upstream),
                             daemon=True).start()
            threading.Thread(target=self._pump_replies, args=(upstream, client),
                             daemon=True).start()

    def _pump_requests(self, client: socket.socket, upstream: socket.socket) -> None:
        while True:
            try:
                data = client.recv(1 << 16)
            except OSError:
                return
            if not data:
                with contextlib.suppress(OSError):
                    upstream.shutdown(socket.SHUT_WR)
                return
            with self.lock:
                allowed = self._allowed(data)
            try:
                upstream.sendall(data[:allowed])
            except OSError:
                return
            if allowed < len(data):
                if self.hold:
                    self.held.set()
                    self.released.wait()
                self._drop_all()
                return

    def _allowed(self, data: bytes) -> int:
        """How much of ``data`` may pass: all of it, or up to the first command past the
        budget (then the cut is due). Called with the lock held."""
        if self.budget is None:
            return len(data)
        at = data.find(_XADD)
        while at >= 0:
            if self.budget == 0:
                return data.rfind(b"*", 0, at)  # the start of that command
            self.budget -= 1
            at = data.find(_XADD, at + len(_XADD))
        return len(data)

    def _pump_replies(self, upstream: socket.socket, client: socket.socket) -> None:
        while True:
            try:
                data = upstream.recv(1 << 16)
                if not data:
                    break
                client.sendall(data)
            except OSError:
                break
        client.close()
        upstream.close()

    def _drop_all(self) -> None:
        """Cut: each client's connection dies at once; the server gets an orderly end of what
        was forwarded (so it runs every command that got through, as after a real cut)."""
        with self.lock:
            doomed, self.pairs = self.pairs, []
            self.cut.set()
        for client, upstream in doomed:
            for sock, how in ((upstream, socket.SHUT_WR), (client, socket.SHUT_RDWR)):
                with contextlib.suppress(OSError):
                    sock.shutdown(how)
            client.close()
