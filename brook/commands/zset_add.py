"""ZADD's work (zaddGenericCommand): its NX / XX / GT / LT / CH / INCR options, the pairs,
every check in Redis's order, then the key. ZADD and ZINCRBY (:mod:`brook.commands.zsets`) run
it, and so does GEOADD (:mod:`brook.commands.geo`), which rewrites itself into a ZADD.

It registers no command, so the geo commands import it, not the sorted-set family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.registry import SYNTAX_ERROR, WRONGTYPE, CommandError
from brook.commands.zset_args import NAN_SCORE, parse_score, score_reply
from brook.notify import ZSET, created, written
from brook.protocol import resp
from brook.types.zset import SortedSet, key_score

if TYPE_CHECKING:
    from brook.session import Session

_NX, _XX, _GT, _LT, INCR, _CH = 1, 2, 4, 8, 16, 32
_ZADD_OPTIONS = {b"nx": _NX, b"xx": _XX, b"gt": _GT, b"lt": _LT, b"incr": INCR, b"ch": _CH}


def zadd_generic(client: Session, args: list[bytes], flags: int) -> bytes:
    """zaddGenericCommand: options, pairs, their compatibility, every score, then the key."""
    position = 2
    while position < len(args):
        option = _ZADD_OPTIONS.get(args[position].lower())
        if option is None:
            break
        flags |= option
        position += 1
    elements, odd = divmod(len(args) - position, 2)
    if odd or not elements:
        raise CommandError(SYNTAX_ERROR)
    if flags & _NX and flags & _XX:
        raise CommandError("ERR XX and NX options at the same time are not compatible")
    if (flags & _NX and flags & (_GT | _LT)) or (flags & _GT and flags & _LT):
        raise CommandError("ERR GT, LT, and/or NX options at the same time are not compatible")
    incr = flags & INCR
    if incr and elements > 1:
        raise CommandError("ERR INCR option supports a single increment-element pair")
    scores = [parse_score(args[i]) for i in range(position, len(args), 2)]
    db = client.db
    key = args[1]
    zset = db.lookup(key)
    config = client.server.config
    if zset is None:
        if flags & _XX:
            return resp.null(client.protocol) if incr else resp.ZERO
        zset = SortedSet.create(elements, len(args[position + 1]), config)
        created(client, key)
        db.data[key] = zset
    elif type(zset) is not SortedSet:
        raise CommandError(WRONGTYPE)
    else:
        zset.prepare(elements, 0, config)
    if elements > 1:
        zset.loosen()  # one unpacking of a listpack for all the pairs
    # zsetAdd for each pair. A NaN from INCR (one pair only, so nothing changed yet) is
    # Redis's error.
    added = updated = processed = 0
    score = 0.0
    try:
        for i, new_score in enumerate(scores):
            member = args[position + 1 + 2 * i]
            old = zset.find(member)
            if old is None:
                if flags & _XX:
                    continue
                zset.add(member, new_score, config, None)
                added += 1
                processed += 1
                score = new_score
                continue
            if flags & _NX:
                continue
            current = key_score(old)
            if incr:
                new_score += current
                if new_score != new_score:
                    raise CommandError(NAN_SCORE)
            if (flags & _LT and new_score >= current) or (flags & _GT and new_score <= current):
                continue
            processed += 1
            score = new_score
            if new_score != current:
                zset.add(member, new_score, config, old)
                updated += 1
    finally:
        if elements > 1:
            zset.tighten()
    if added or updated:
        written(client, key, ZSET, b"zincr" if incr else b"zadd", added + updated, True)
    if incr:
        return score_reply(score, client.protocol) if processed else resp.null(client.protocol)
    return resp.integer(added + updated if flags & _CH else added)


def run_zadd(client: Session, args: list[bytes]) -> bytes:
    """A ZADD request's work and reply (GEOADD runs the ZADD it rewrites itself into)."""
    return zadd_generic(client, args, 0)
