"""The server's own small commands: its clock (TIME), its last save (LASTSAVE), its end
(SHUTDOWN) and the feed of every request it runs (MONITOR).

CONFIG, INFO and DEBUG have their own modules (config_cmd, info, debug). This module imports
the command table (registry), the keyspace's clock and the protocol: no other family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.registry import SYNTAX_ERROR, CommandError, command
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

_ADMIN = "admin noscript loading stale"
_ADMIN_ACL = "@admin @slow @dangerous"


# ---------------------------------------------------------------------------------------------
# TIME, LASTSAVE
# ---------------------------------------------------------------------------------------------


@command("time", arity=1, flags="loading stale fast", acl="@fast", group="server", since="2.6.0",
         summary="Returns the server time.", syntax="")
def time_(client: Session, args: list[bytes]) -> bytes:
    micros = client.clock.now_us()  # a script's commands see the time it started, as in Redis
    return resp.array_of_bulks([b"%d" % (micros // 1_000_000), b"%d" % (micros % 1_000_000)])


@command("lastsave", arity=1, flags="loading stale fast", acl="@admin @fast @dangerous",
         group="server", summary="Returns the Unix timestamp of the last successful save to disk.",
         syntax="")
def lastsave(client: Session, args: list[bytes]) -> bytes:
    return resp.integer(client.server.last_save_time)


# ---------------------------------------------------------------------------------------------
# SHUTDOWN, MONITOR
# ---------------------------------------------------------------------------------------------


@command("shutdown", arity=-1, flags="admin noscript loading stale no-multi allow-busy",
         acl=_ADMIN_ACL, group="server",
         summary="Synchronously saves the database(s) to disk and shuts down the Redis server.",
         complexity="O(N) when saving, where N is the total number of keys in all databases "
         "when saving data, otherwise O(1)",
         syntax="[NOSAVE | SAVE] [NOW] [FORCE] [ABORT]")
def shutdown(client: Session, args: list[bytes]) -> bytes:
    options = {a.lower() for a in args[1:]}
    if not options <= {b"nosave", b"save", b"now", b"force", b"abort"}:
        raise CommandError(SYNTAX_ERROR)
    if (b"abort" in options and len(args) > 2) or {b"save", b"nosave"} <= options:
        raise CommandError(SYNTAX_ERROR)
    if b"abort" in options:
        # Brook has no replicas to wait for: a shutdown never stays pending.
        raise CommandError("ERR No shutdown in progress.")
    save = True if b"save" in options else False if b"nosave" in options else None
    client.close()  # no reply: the connection just ends, as with Redis
    if not client.server.shutdown(save=save, force=b"force" in options):
        client.closing = False
        client.refresh_mode()
        raise CommandError("ERR Errors trying to SHUTDOWN. Check logs.")
    return b""


@command("monitor", arity=1, flags=_ADMIN, acl=_ADMIN_ACL, group="server",
         summary="Listens for all requests received by the server in real-time.",
         complexity="", syntax="")
def monitor(client: Session, args: list[bytes]) -> bytes:
    if client.is_monitor:
        return b""  # already monitoring: Redis ignores the repeated request
    client.server.add_monitor(client)
    return resp.OK
