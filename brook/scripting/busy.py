"""Other clients while a script runs past ``busy-reply-threshold`` (Redis's
processEventsWhileBlocked).

The event loop is inside the script's call, so it cannot read sockets itself. The script's
hook calls :func:`serve_while_busy`, which polls the connected clients' sockets without
waiting, reads what arrived and hands it to each connection as the loop would: their commands
run through the dispatcher, which answers ``-BUSY`` to everything but the ``allow-busy``
commands (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE...), and their replies are written at
once. The script's own client is left alone (Redis's protectClient). Connections accepted
while the script runs wait in the listen backlog until it ends.
"""

from __future__ import annotations

import os
import select
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brook.server import Server
    from brook.session import Session

_READ_SIZE = 65536


def serve_while_busy(server: Server, caller: Session) -> None:
    """Serve every client with input waiting, once, without blocking."""
    if server.loading:
        return
    by_fd = {client.fd: client for client in list(server.clients.values())
             if client is not caller and client.fd >= 0 and not client.closed}
    if not by_fd:
        return
    try:
        readable, _, _ = select.select(list(by_fd), [], [], 0)
    except (OSError, ValueError):
        return
    for fd in readable:
        client = by_fd[fd]
        try:
            data = os.read(fd, _READ_SIZE)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            continue
        if not data:
            continue  # the peer closed: the event loop sees it (EOF stays readable)
        client.data_received(data)
        server.flush_effects()
        client.flush()
    if server.shutdown_requested():
        os._exit(0)  # SHUTDOWN NOSAVE stops a script that cannot be killed, as in Redis
