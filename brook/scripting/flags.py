"""Script flags: what a script (``#!lua flags=...``) or a function (``flags={...}``) declares
it may do. The dispatcher's checks read them as a command's flags (Redis's
scriptFlagsToCmdFlags), the engine while the script runs."""

from __future__ import annotations

from typing import Final

NO_WRITES: Final = "no-writes"
ALLOW_OOM: Final = "allow-oom"
ALLOW_STALE: Final = "allow-stale"
NO_CLUSTER: Final = "no-cluster"
ALLOW_CROSS_SLOT: Final = "allow-cross-slot-keys"
# The flags a shebang or a function may name, in Redis's order (scripts_flags_def).
SCRIPT_FLAGS: Final = (NO_WRITES, ALLOW_OOM, ALLOW_STALE, NO_CLUSTER, ALLOW_CROSS_SLOT)

# What a request asks of the server's state, as the dispatcher's checks read it: Redis's
# CMD_WRITE, CMD_DENYOOM, and the absence of CMD_STALE.
WRITES: Final = 1
DENYOOM: Final = 2
DENYSTALE: Final = 4


def needs_of(flags: tuple[str, ...]) -> int:
    """The needs of a script that declares ``flags`` (Redis's scriptFlagsToCmdFlags:
    no-writes implies allow-oom)."""
    writes = NO_WRITES not in flags
    return ((WRITES if writes else 0) | (DENYOOM if writes and ALLOW_OOM not in flags else 0)
            | (0 if ALLOW_STALE in flags else DENYSTALE))
