"""Other clients while a script runs past ``busy-reply-threshold`` (Redis's
processEventsWhileBlocked).

The event loop is inside the script's call, so it cannot read sockets itself. The script's
hook calls the engine's ``serve_others``, which the server wires to :func:`serve_while_busy`:
it polls the connected clients' sockets without
waiting, reads what arrived and hands it to each connection as the loop would: their commands
run through the dispatcher, which answers ``-BUSY`` to everything but the ``allow-busy``
commands (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE...), and their replies are written at
once. The script's own client is left alone (Redis's protectClient). Connections accepted
while the script runs wait in the listen backlog until it ends.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from brook.connection import Client

if TYPE_CHECKING:
    from brook.session import Session

_READ_SIZE = 65536


def serve_while_busy(clients: Iterable[Session], caller: Session,
                     flush_effects: Callable[[], None],
                     shutdown_requested: Callable[[], bool]) -> None:
    """Serve every client with input waiting, once, without blocking: their commands'
    effects are written (``flush_effects``) before their replies, as after any turn."""
    by_fd = {client.fd: client for client in list(clients)
             if isinstance(client, Client) and client is not caller and client.fd >= 0
             and not client.closed}
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
        flush_effects()
        client.flush()
    if shutdown_requested():
        os._exit(0)  # SHUTDOWN NOSAVE stops a script that cannot be killed, as in Redis
