"""The pops and moves the plain list commands and their blocking forms share: each returns the
reply bytes, or None when there is nothing to pop, so BLPOP, BLMOVE, BLMOVEM and BLMPOP
(:mod:`brook.commands.list_blocking`) run exactly the code LPOP, LMOVE, LMOVEM and LMPOP
(:mod:`brook.commands.lists`) run. It registers no command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.list_args import HowMany
from brook.commands.list_values import (
    bulks,
    elements_added,
    elements_removed,
    take,
    write_list,
    write_list_or_create,
)
from brook.persistence.effects import propagate
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session


def pop_reply(client: Session, key: bytes, left: bool) -> bytes | None:
    """BLPOP/BRPOP's pop: ``*2 key element``, or None when ``key`` holds no list.

    Raises CommandError(WRONGTYPE) when the key holds another type."""
    db = client.db
    found = write_list(db, key)
    if found is None:
        return None
    element = found.popleft() if left else found.pop()
    elements_removed(client, db, key, found, 1, b"lpop" if left else b"rpop")
    propagate(client, [b"LPOP" if left else b"RPOP", key])  # BLPOP/BRPOP persist as pops
    return b"*2\r\n" + resp.bulk(key) + resp.bulk(element)


def move_reply(client: Session, source: bytes, destination: bytes, from_left: bool,
               to_left: bool) -> bytes | None:
    """LMOVE: pop from ``source``, push onto ``destination``, reply with the element (a bulk
    string); None when ``source`` holds no list.

    As Redis's lmoveGenericCommand: the source's type is checked first and the destination's
    only once there is an element to move. The destination is pushed before the source is
    found empty, so moving within one list (rotation) never deletes it."""
    db = client.db
    found = write_list(db, source)
    if found is None:
        return None
    target = write_list(db, destination)
    element = found.popleft() if from_left else found.pop()
    if target is None:
        target = write_list_or_create(client, destination)
    if to_left:
        target.appendleft(element)
    else:
        target.append(element)
    elements_added(client, db, destination, 0, b"lpush" if to_left else b"rpush")
    elements_removed(client, db, source, found, 1, b"lpop" if from_left else b"rpop")
    return resp.bulk(element)


def movem_reply(client: Session, source: bytes, destination: bytes, from_left: bool,
                to_left: bool, how: HowMany) -> bytes | None:
    """LMOVEM: the moved elements in destination order (left to right), None when nothing
    moves (no source, or fewer than EXACTLY elements).

    As Redis 8.10: the source's type is checked first, the shortfall next, then the
    destination's type, all before anything moves. Every element is popped before any is
    pushed, so a move within one list takes the batch out first. OBO pushes them one by one
    in pop order; BULK pushes the batch keeping the order it had in the source."""
    db = client.db
    found = write_list(db, source)
    if found is None or (how.exactly and len(found) < how.count):
        return None
    target = found if destination == source else write_list(db, destination)
    popped = take(found, from_left, min(how.count, len(found)))
    if how.one_by_one:
        arranged = popped[::-1] if to_left else popped
    else:
        arranged = popped if from_left else popped[::-1]
    if target is None:
        target = write_list_or_create(client, destination)
    if to_left:
        target.extendleft(arranged[::-1])
    else:
        target.extend(arranged)
    elements_added(client, db, destination, 0, b"lpush" if to_left else b"rpush")
    elements_removed(client, db, source, found, len(popped), b"lpop" if from_left else b"rpop")
    if client.server.propagating:  # what moved, as plain pops and pushes
        propagate(
            client,
            [b"LPOP" if from_left else b"RPOP", source, b"%d" % len(popped)],
            [b"LPUSH", destination, *arranged[::-1]] if to_left
            else [b"RPUSH", destination, *arranged],
        )
    return resp.array_of_bulks(arranged)


def mpop_reply(client: Session, keys: list[bytes], left: bool, count: int) -> bytes | None:
    """LMPOP: ``*2 key *n elements`` from the first key holding a list, or None when none
    does. A key of another type met before that is Redis's WRONGTYPE."""
    db = client.db
    for key in keys:
        found = write_list(db, key)
        if found is None:
            continue
        items = take(found, left, count)
        elements_removed(client, db, key, found, len(items), b"lpop" if left else b"rpop")
        propagate(client, [b"LPOP" if left else b"RPOP", key, b"%d" % len(items)])
        return b"*2\r\n" + resp.bulk(key) + bulks(items)
    return None
