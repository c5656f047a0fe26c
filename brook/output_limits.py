"""Client output buffer limits (``client-output-buffer-limit <class> <hard> <soft> <seconds>``).

A client that does not read makes its transport's buffer grow. The connection is told
(``pause_writing``) when that buffer passes its class's soft limit (the hard one when there is
no soft limit), which costs the writers nothing. From then on the session is *congested* (in
:attr:`OutputLimits.slow`) and its limits are checked as Redis's
``checkClientOutputBufferLimits`` does, after every batch of publishes and once per cron tick:
at or above the hard limit, or at or above the soft limit for more than ``seconds``, it is
disconnected at once and its pending output dropped.

The class is Redis's: ``pubsub`` for a client in subscribed mode, ``normal`` otherwise
(``replica`` is accepted and kept for replication). A congested normal client also stops being
read until it catches up, so a client that pipelines large replies and never reads holds at
most about a limit's worth of memory; with no limit for its class (``normal 0 0 0``, the
default) that pause is all that happens, as it was before limits applied: the server never
buffers without bound for it. A subscriber is not paused, as in Redis: it may still send
commands, and its limits decide.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brook.config.store import Config
    from brook.session import Session


class OutputLimits:
    """The congested sessions and what their class's limits do to them. Given what it uses:
    the configuration, the server's clients, its log and the counter of disconnections."""

    def __init__(self, config: Config, clients: Mapping[int, Session],
                 log: Callable[[str, str], None], count_disconnection: Callable[[], None]) -> None:
        self.config = config
        self.clients = clients
        self.log = log
        self.count_disconnection = count_disconnection
        self.slow: set[Session] = set()

    def limits(self, session: Session) -> tuple[int, int, int]:
        """(hard, soft, soft seconds) of the session's class."""
        return self.config.client_output_buffer_limit[session.client_type()]

    def apply(self, session: Session) -> None:
        """Have the connection told once its unsent output reaches the soft limit (the hard
        one without a soft limit); called when a client connects or changes class."""
        self.slow.discard(session)
        session.obuf_soft_since = 0
        hard, soft, _ = self.limits(session)
        session.set_write_limits(soft or hard)

    def limits_changed(self) -> None:
        """CONFIG SET client-output-buffer-limit: every client gets the new thresholds."""
        for session in list(self.clients.values()):
            self.apply(session)

    def limited(self, session: Session) -> bool:
        hard, soft, _ = self.limits(session)
        return bool(hard or soft)

    def congested(self, session: Session) -> None:
        """The session's unsent output passed the threshold (its ``pause_writing``)."""
        self.slow.add(session)
        self.enforce(session)

    def relieved(self, session: Session) -> None:
        """The peer read enough to bring the buffer back under the threshold."""
        self.slow.discard(session)
        session.obuf_soft_since = 0

    def check_slow(self) -> None:
        """After each batch of publishes and every cron tick: disconnect the congested
        sessions that are over their limits."""
        for session in list(self.slow):
            self.enforce(session)

    def enforce(self, session: Session) -> None:
        """Redis's checkClientOutputBufferLimits (whole-second soft timer)."""
        if session.closing:
            self.slow.discard(session)
            return
        hard, soft, soft_seconds = self.limits(session)
        used = (session.write_buffer_size() + sum(map(len, session.pubsub_out))
                + sum(map(len, session.out)))
        reached = bool(hard) and used >= hard
        if soft and used >= soft:
            now = int(time.time())
            if not session.obuf_soft_since:
                session.obuf_soft_since = now
            elif now - session.obuf_soft_since > soft_seconds:
                reached = True
        else:
            session.obuf_soft_since = 0
        if reached:
            self._disconnect(session)

    def _disconnect(self, session: Session) -> None:
        """Close now and drop what it has not read: its registry entries go when the
        connection is lost, so this is safe in the middle of a fan-out."""
        line = session.info_line(time.time()).decode("utf-8", "replace")
        self.log("warning", f"Client {line} scheduled to be closed ASAP for overcoming of "
                            "output buffer limits.")
        self.count_disconnection()
        self.slow.discard(session)
        session.abort()
