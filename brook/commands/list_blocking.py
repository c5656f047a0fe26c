"""Blocking list pops: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE and BLMPOP.

Each is its non-blocking form (:mod:`brook.commands.list_pops`) plus a timeout in seconds with
decimals. With nothing to pop the client parks (:mod:`brook.blocking`) on every key it names;
a push serves the longest-waiting client of the key first, one run of its command per pop, so
each pushed element goes to exactly one client. BLMOVE/BRPOPLPUSH run as one command when
served, so the move is atomic; the destination push can serve clients parked there in turn.
Inside MULTI nothing blocks: the reply is the non-blocking form's nil.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook import blocking
from brook.commands.list_args import (
    blmpop_key_positions,
    parse_direction,
    parse_how_many,
    parse_mpop_args,
)
from brook.commands.list_pops import move_reply, movem_reply, mpop_reply, pop_reply
from brook.commands.registry import COMMANDS, command
from brook.commands.timeouts import parse_timeout
from brook.persistence.effects import propagate
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session


def _pop(client: Session, args: list[bytes], name: str, left: bool) -> bytes | None:
    timeout = parse_timeout(args[-1], seconds=True, now_ms=client.clock.now_ms())
    keys = args[1:-1]
    for key in keys:
        reply = pop_reply(client, key, left)
        if reply is not None:
            return reply
    return blocking.block(client, COMMANDS[name], args, keys, blocking.POP, timeout)


@command(
    "blpop", arity=-3, flags="write blocking", keys=(1, -2, 1),
    acl="@write @list @slow @blocking", group="list", since="2.0.0",
    summary="Removes and returns the first element in a list. Blocks until an element is "
    "available otherwise. Deletes the list if the last element was popped.",
    complexity="O(N) where N is the number of provided keys.",
    syntax="key [key ...] timeout",
)
def blpop(client: Session, args: list[bytes]) -> bytes | None:
    return _pop(client, args, "blpop", True)


@command(
    "brpop", arity=-3, flags="write blocking", keys=(1, -2, 1),
    acl="@write @list @slow @blocking", group="list", since="2.0.0",
    summary="Removes and returns the last element in a list. Blocks until an element is "
    "available otherwise. Deletes the list if the last element was popped.",
    complexity="O(N) where N is the number of provided keys.",
    syntax="key [key ...] timeout",
)
def brpop(client: Session, args: list[bytes]) -> bytes | None:
    return _pop(client, args, "brpop", False)


def _move(client: Session, args: list[bytes], name: str, from_left: bool, to_left: bool,
          timeout: int, effect: list[bytes]) -> bytes | None:
    """BRPOPLPUSH/BLMOVE: persisted as ``effect``, the non-blocking form, as Redis does."""
    reply = move_reply(client, args[1], args[2], from_left, to_left)
    if reply is not None:
        propagate(client, effect)
        return reply
    return blocking.block(client, COMMANDS[name], args, [args[1]], blocking.POP, timeout,
                          null=resp.null(client.protocol))


@command(
    "brpoplpush", arity=4, flags="write denyoom blocking", keys=(1, 2, 1),
    acl="@write @list @slow @blocking", group="list", since="2.2.0",
    summary="Pops an element from a list, pushes it to another list and returns it. Block "
    "until an element is available otherwise. Deletes the list if the last element was popped.",
    complexity="O(1)",
    syntax="source destination timeout",
)
def brpoplpush(client: Session, args: list[bytes]) -> bytes | None:
    timeout = parse_timeout(args[3], seconds=True, now_ms=client.clock.now_ms())
    return _move(client, args, "brpoplpush", False, True, timeout,
                 [b"RPOPLPUSH", args[1], args[2]])


@command(
    "blmove", arity=6, flags="write denyoom blocking", keys=(1, 2, 1),
    acl="@write @list @slow @blocking", group="list", since="6.2.0",
    summary="Pops an element from a list, pushes it to another list and returns it. Blocks "
    "until an element is available otherwise. Deletes the list if the last element was moved.",
    complexity="O(1)",
    syntax="source destination LEFT | RIGHT LEFT | RIGHT timeout",
)
def blmove(client: Session, args: list[bytes]) -> bytes | None:
    from_left = parse_direction(args[3])
    to_left = parse_direction(args[4])
    timeout = parse_timeout(args[5], seconds=True, now_ms=client.clock.now_ms())
    return _move(client, args, "blmove", from_left, to_left, timeout, [b"LMOVE", *args[1:5]])


@command(
    "blmovem", arity=-6, flags="write denyoom blocking", keys=(1, 2, 1),
    acl="@write @list @slow @blocking", group="list", since="8.10.0",
    summary="Moves up to (or exactly) a number of elements from one list to another and "
    "returns them. Blocks until the elements are available otherwise. Deletes the source list "
    "if it becomes empty.",
    complexity="O(N) where N is the number of elements moved.",
    syntax="source destination LEFT | RIGHT LEFT | RIGHT [COUNT count | EXACTLY exactly "
    "OBO | BULK] timeout",
)
def blmovem(client: Session, args: list[bytes]) -> bytes | None:
    """LMOVEM that waits: with EXACTLY n, until the source holds n elements (a push that
    leaves it shorter does not serve it, and the next waiter gets its turn)."""
    from_left = parse_direction(args[3])
    to_left = parse_direction(args[4])
    how = parse_how_many(args, 5, len(args) - 1)
    timeout = parse_timeout(args[-1], seconds=True, now_ms=client.clock.now_ms())
    reply = movem_reply(client, args[1], args[2], from_left, to_left, how)
    if reply is not None:
        return reply
    return blocking.block(client, COMMANDS["blmovem"], args, [args[1]], blocking.POP, timeout)


@command(
    "blmpop", arity=-5, flags="write blocking movablekeys", acl="@write @list @slow @blocking",
    group="list", since="7.0.0",
    summary="Pops the first element from one of multiple lists. Blocks until an element is "
    "available otherwise. Deletes the list if the last element was popped.",
    complexity="O(N+M) where N is the number of provided keys and M is the number of elements "
    "returned.",
    syntax="timeout numkeys key [key ...] LEFT | RIGHT [COUNT count]",
)
def blmpop(client: Session, args: list[bytes]) -> bytes | None:
    keys, left, count = parse_mpop_args(args, 3)
    timeout = parse_timeout(args[1], seconds=True,
                            now_ms=client.clock.now_ms())  # after the rest, as Redis
    reply = mpop_reply(client, keys, left, count)
    if reply is not None:
        return reply
    return blocking.block(client, COMMANDS["blmpop"], args, keys, blocking.POP, timeout)


COMMANDS["blmpop"].find_keys = blmpop_key_positions
