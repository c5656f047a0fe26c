"""What a write command persists: its effects, not the command itself.

The dispatcher persists a write command as it was sent when it changed the dataset
(``server.dirty`` moved), exactly as Redis's ``call()`` propagates. A command whose request
would not replay to the same state (``XADD *``, ``EXPIRE`` relative, blocking pops,
XREADGROUP...) says what to persist instead with :func:`propagate`, like Redis's
``alsoPropagate`` plus ``preventCommandPropagation``; :func:`suppress` persists nothing.

Handlers test ``client.server.propagating`` before building the effect commands, so the
common case with persistence off costs one attribute read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brook.session import Session

__all__ = ["propagate", "suppress"]

def propagate(client: Session, *commands: list[bytes]) -> None:
    """Persist ``commands`` (argument lists, run in the client's current database) instead of
    the request; several calls accumulate in order. Nothing happens with persistence off."""
    if not client.server.propagating:
        return
    effects = client.effects
    if effects is None:
        client.effects = list(commands)
    else:
        effects.extend(commands)


def suppress(client: Session) -> None:
    """Persist nothing for this request even though it counted as a change."""
    if client.server.propagating and client.effects is None:
        client.effects = []
