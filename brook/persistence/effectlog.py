"""The effect log: what changed the dataset, encoded once for everything that follows it.

Every change reaches the effect log as commands (brook/persistence/effects.py says which:
effects, not requests) encoded as RESP, with ``SELECT`` whenever the database changes and a
command's several effects wrapped in ``MULTI``/``EXEC``, as Redis's replication stream and AOF
are. At the end of each event-loop turn the server takes the log's bytes (:meth:`take`) and
hands the same payload to the append-only file and to the replication backlog, so the AOF and
the replicas see one stream (Redis's ``propagateNow`` feeds both from one call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from brook.persistence.aof import encode_command, select_command

__all__ = ["EffectLog"]

_MULTI: Final = b"*1\r\n$5\r\nMULTI\r\n"
_EXEC: Final = b"*1\r\n$4\r\nEXEC\r\n"
_SELECT_PREFIX: Final = b"*2\r\n$6\r\nSELECT"


class EffectLog:
    """Encoded effects not yet taken, and the state the encoding depends on."""

    def __init__(self) -> None:
        self.buffer: list[bytes] = []
        self.size = 0  # bytes in ``buffer`` (WAIT reads it after every write: not summed)
        self.selected_db = -1  # the database the stream's last SELECT chose (-1: none yet)
        self.transaction: list[bytes] | None = None  # effects of the EXEC or script being run
        # Pieces of ``buffer`` (or ``transaction``) for the replicas only, not the AOF: PUBLISH
        # (Redis propagates it with PROPAGATE_REPL, so replicas' subscribers get it too).
        self.replication_only: list[bytes] = []

    def feed(self, db_index: int, commands: Sequence[list[bytes]]) -> None:
        """Append the effects of one command run in database ``db_index``."""
        target = self.transaction if self.transaction is not None else self.buffer
        start = len(target)
        if db_index != self.selected_db:
            target.append(select_command(db_index))
            self.selected_db = db_index
        if len(commands) > 1 and self.transaction is None:
            # Several effects of one command replay all or not at all, as Redis wraps them.
            target.append(_MULTI)
            target.extend(map(encode_command, commands))
            target.append(_EXEC)
        else:
            for argv in commands:
                target.append(encode_command(argv))
        if target is self.buffer:
            self.size += sum(map(len, target[start:]))

    def feed_replication_only(self, db_index: int, command: list[bytes]) -> None:
        """Append a command that the replicas run and the AOF leaves out."""
        self.feed(db_index, (command,))
        target = self.transaction if self.transaction is not None else self.buffer
        self.replication_only.append(target[-1])

    def feed_encoded(self, db_index: int, payload: bytes) -> None:
        """Append one command a hot path encoded itself (see ``aof.encode_xadd``)."""
        transaction = self.transaction
        target = transaction if transaction is not None else self.buffer
        if db_index != self.selected_db:
            selected = select_command(db_index)
            target.append(selected)
            self.selected_db = db_index
            if transaction is None:
                self.size += len(selected)
        target.append(payload)
        if transaction is None:
            self.size += len(payload)

    def begin_transaction(self) -> None:
        """EXEC (or a script) starts: its effects are collected, then go out as one
        MULTI ... EXEC."""
        self.transaction = []

    def end_transaction(self) -> None:
        effects = self.transaction
        self.transaction = None
        if not effects:
            return
        commands = sum(1 for part in effects if not part.startswith(_SELECT_PREFIX))
        if commands > 1:
            self.buffer.append(_MULTI)
            self.buffer.extend(effects)
            self.buffer.append(_EXEC)
            self.size += len(_MULTI) + len(_EXEC)
        else:
            self.buffer.extend(effects)
        self.size += sum(map(len, effects))

    def force_select(self) -> None:
        """The next effect starts with a SELECT (a new reader of the stream starts here: a
        rewritten AOF, a replica after its full synchronisation)."""
        self.selected_db = -1

    def buffered_bytes(self) -> int:
        return self.size

    def take(self) -> tuple[bytes, bytes]:
        """The bytes fed since the last call, for the replicas and for the AOF (the same
        object unless replicas-only commands were fed; empty: nothing changed)."""
        buffer = self.buffer
        if not buffer:
            return b"", b""
        payload = b"".join(buffer) if len(buffer) > 1 else buffer[0]
        aof_payload = payload
        if self.replication_only:
            left_out = {id(piece) for piece in self.replication_only}
            aof_payload = b"".join(piece for piece in buffer if id(piece) not in left_out)
            if self.transaction is None:  # (else some may still be in the transaction)
                self.replication_only = []
        buffer.clear()
        self.size = 0
        return payload, aof_payload
