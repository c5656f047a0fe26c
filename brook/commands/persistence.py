"""SAVE, BGSAVE and BGREWRITEAOF: the commands of brook.persistence (DEBUG RELOAD is one of
DEBUG's actions, in commands/debug.py).

Replies and errors are Redis 7.0's. One background child runs at a time, as in Redis: a
rewrite asked for during a BGSAVE is scheduled, a BGSAVE during a rewrite needs SCHEDULE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.registry import SYNTAX_ERROR, CommandError, command
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

_ADMIN = "admin noscript no-async-loading"
_ADMIN_ACL = "@admin @slow @dangerous"


@command("save", arity=1, flags=_ADMIN + " no-multi", acl=_ADMIN_ACL, group="server",
         summary="Synchronously saves the database(s) to disk.",
         complexity="O(N) where N is the total number of keys in all databases", syntax="")
def save(client: Session, args: list[bytes]) -> bytes:
    persistence = client.server.persistence
    if persistence.child_active() == "rdb":
        raise CommandError("ERR Background save already in progress")
    try:
        persistence.save()
    except OSError as err:
        raise CommandError(f"ERR {err.strerror or err}") from err
    return resp.OK


@command("bgsave", arity=-1, flags=_ADMIN, acl=_ADMIN_ACL, group="server",
         summary="Asynchronously saves the database(s) to disk.",
         complexity="O(1)", syntax="[SCHEDULE]")
def bgsave(client: Session, args: list[bytes]) -> bytes:
    schedule = False
    if len(args) > 1:
        if len(args) == 2 and args[1].lower() == b"schedule":
            schedule = True
        else:
            raise CommandError(SYNTAX_ERROR)
    persistence = client.server.persistence
    active = persistence.child_active()
    if active == "rdb":
        raise CommandError("ERR Background save already in progress")
    if active is not None:
        if not schedule:
            raise CommandError(
                "ERR Another child process is active (AOF?): can't BGSAVE right now. Use "
                "BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."
            )
        persistence.bgsave_scheduled = True
        return resp.simple("Background saving scheduled")
    persistence.bgsave()
    return resp.simple("Background saving started")


@command("bgrewriteaof", arity=1, flags=_ADMIN, acl=_ADMIN_ACL, group="server",
         summary="Asynchronously rewrites the append-only file to disk.",
         complexity="O(1)", syntax="")
def bgrewriteaof(client: Session, args: list[bytes]) -> bytes:
    persistence = client.server.persistence
    active = persistence.child_active()
    if active == "aof":
        raise CommandError("ERR Background append only file rewriting already in progress")
    if active is not None:
        persistence.rewrite_scheduled = True
        return resp.simple("Background append only file rewriting scheduled")
    persistence.bgrewriteaof()
    return resp.simple("Background append only file rewriting started")

