"""What each command does to its keys, for ACL key permissions.

Redis's key specifications say, per group of keys, whether a command reads them (ACCESS: the
``%R~`` permission) and whether it inserts, deletes or updates them (the ``%W~`` permission);
a key spec with neither (EXISTS, TYPE, the ``*LEN`` commands) is allowed by any pattern that
matches. Written here as ``R``, ``W``, ``RW`` or ``-``; two values are the first key's and the
other keys' (``COPY src dst``: ``R W``). These are the flags COMMAND INFO shows
(tests/test_command_table.py compares them with real Redis). SET and BITFIELD depend on their
arguments (:func:`key_needs`).
"""

from __future__ import annotations

from typing import Final

from brook.acl.rules import READ, WRITE
from brook.commands.registry import Command

__all__ = ["KEY_ACCESS", "key_needs", "needs_of", "single_key"]

_FLAGS: Final = {"R": READ, "W": WRITE, "RW": READ | WRITE, "-": 0}
_BITFIELD_READS: Final = frozenset({b"get", b"overflow"})

KEY_ACCESS: Final[dict[str, str]] = {
    "append": "W",
    "bitcount": "R",
    "bitfield": "RW",
    "bitfield_ro": "R",
    "bitop": "W R",
    "bitpos": "R",
    "blmove": "RW W",
    "blmpop": "RW",
    "blpop": "RW",
    "brpop": "RW",
    "brpoplpush": "RW W",
    "bzmpop": "RW",
    "bzpopmax": "RW",
    "bzpopmin": "RW",
    "copy": "R W",
    "decr": "RW",
    "decrby": "RW",
    "del": "W",
    "dump": "R",
    "eval": "RW",
    "eval_ro": "R",
    "evalsha": "RW",
    "evalsha_ro": "R",
    "exists": "-",
    "expire": "W",
    "expireat": "W",
    "expiretime": "R",
    "fcall": "RW",
    "fcall_ro": "R",
    "geoadd": "W",
    "geodist": "R",
    "geohash": "R",
    "geopos": "R",
    "georadius": "R W",
    "georadius_ro": "R",
    "georadiusbymember": "R W",
    "georadiusbymember_ro": "R",
    "geosearch": "R",
    "geosearchstore": "W R",
    "get": "R",
    "getbit": "R",
    "getdel": "RW",
    "getex": "RW",
    "getrange": "R",
    "getset": "RW",
    "hdel": "W",
    "hexists": "-",
    "hexpire": "W",
    "hexpireat": "W",
    "hexpiretime": "R",
    "hget": "R",
    "hgetall": "R",
    "hincrby": "RW",
    "hincrbyfloat": "RW",
    "hkeys": "R",
    "hlen": "-",
    "hmget": "R",
    "hmset": "W",
    "hpersist": "W",
    "hpexpire": "W",
    "hpexpireat": "W",
    "hpexpiretime": "R",
    "hpttl": "R",
    "hrandfield": "R",
    "hscan": "R",
    "hset": "W",
    "hsetnx": "W",
    "hstrlen": "-",
    "httl": "R",
    "hvals": "R",
    "incr": "RW",
    "incrby": "RW",
    "incrbyfloat": "RW",
    "lcs": "R",
    "lindex": "R",
    "linsert": "W",
    "llen": "-",
    "lmove": "RW W",
    "lmpop": "RW",
    "lpop": "RW",
    "lpos": "R",
    "lpush": "W",
    "lpushx": "W",
    "lrange": "R",
    "lrem": "W",
    "lset": "W",
    "ltrim": "W",
    "memory|usage": "-",
    "mget": "R",
    "migrate": "RW",
    "move": "RW",
    "mset": "W",
    "msetnx": "W",
    "object|encoding": "-",
    "object|freq": "-",
    "object|idletime": "-",
    "object|refcount": "-",
    "persist": "W",
    "pexpire": "W",
    "pexpireat": "W",
    "pexpiretime": "R",
    "pfadd": "W",
    "pfcount": "R",
    "pfdebug": "R",
    "pfmerge": "RW R",
    "psetex": "W",
    "pttl": "R",
    "rename": "RW W",
    "renamenx": "RW W",
    "restore": "W",
    "restore-asking": "W",
    "rpop": "RW",
    "rpoplpush": "RW W",
    "rpush": "W",
    "rpushx": "W",
    "sadd": "W",
    "scard": "-",
    "sdiff": "R",
    "sdiffstore": "W R",
    "set": "RW",
    "setbit": "RW",
    "setex": "W",
    "setnx": "W",
    "setrange": "W",
    "sinter": "R",
    "sintercard": "R",
    "sinterstore": "W R",
    "sismember": "-",
    "smembers": "R",
    "smismember": "R",
    "smove": "RW W",
    "sort": "R W",
    "sort_ro": "R",
    "spop": "RW",
    "spublish": "-",
    "srandmember": "R",
    "srem": "W",
    "sscan": "R",
    "ssubscribe": "-",
    "strlen": "-",
    "substr": "R",
    "sunion": "R",
    "sunionstore": "W R",
    "sunsubscribe": "-",
    "touch": "-",
    "ttl": "R",
    "type": "-",
    "unlink": "W",
    "watch": "-",
    "xack": "W",
    "xadd": "W",
    "xautoclaim": "W",
    "xclaim": "W",
    "xdel": "W",
    "xgroup|create": "W",
    "xgroup|createconsumer": "W",
    "xgroup|delconsumer": "W",
    "xgroup|destroy": "W",
    "xgroup|setid": "W",
    "xinfo|consumers": "R",
    "xinfo|groups": "R",
    "xinfo|stream": "R",
    "xlen": "-",
    "xpending": "R",
    "xrange": "R",
    "xread": "R",
    "xreadgroup": "R",
    "xrevrange": "R",
    "xsetid": "W",
    "xtrim": "W",
    "zadd": "W",
    "zcard": "-",
    "zcount": "R",
    "zdiff": "R",
    "zdiffstore": "W R",
    "zincrby": "RW",
    "zinter": "R",
    "zintercard": "R",
    "zinterstore": "W R",
    "zlexcount": "R",
    "zmpop": "RW",
    "zmscore": "R",
    "zpopmax": "RW",
    "zpopmin": "RW",
    "zrandmember": "R",
    "zrange": "R",
    "zrangebylex": "R",
    "zrangebyscore": "R",
    "zrangestore": "W R",
    "zrank": "R",
    "zrem": "W",
    "zremrangebylex": "W",
    "zremrangebyrank": "W",
    "zremrangebyscore": "W",
    "zrevrange": "R",
    "zrevrangebylex": "R",
    "zrevrangebyscore": "R",
    "zrevrank": "R",
    "zscan": "R",
    "zscore": "R",
    "zunion": "R",
    "zunionstore": "W R",
}



# KEY_ACCESS as flags: (the first key's, the others').
_NEEDS: Final[dict[str, tuple[int, int]]] = {
    name: (_FLAGS[access.split()[0]], _FLAGS[access.split()[-1]])
    for name, access in KEY_ACCESS.items()
}


def key_needs(cmd: Command, args: list[bytes]) -> list[tuple[int, int]]:
    """(argument index, READ|WRITE needed) for each key of a request."""
    positions = cmd.key_positions(len(args), args)
    if not positions:
        return []
    first, rest = needs_of(cmd, args)
    return [(index, first if number == 0 else rest) for number, index in enumerate(positions)]


def single_key(cmd: Command) -> bool:
    """Whether the command's one key is at a fixed place (most commands): the check then
    reads it and its need directly, without key_needs' list."""
    first_key = cmd.first_key
    return first_key > 0 and first_key == cmd.last_key and cmd.find_keys is None


def needs_of(cmd: Command, args: list[bytes]) -> tuple[int, int]:
    """What the request's first key needs, and what its other keys need."""
    name = cmd.fullname
    if name == "set":
        # Only SET ... GET reads the key (Redis's setGetKeys).
        need = WRITE | (READ if len(args) > 3 and _set_reads(args) else 0)
        return need, need
    if name == "bitfield" and _bitfield_reads_only(args):
        return READ, READ
    needs = _NEEDS.get(name)
    if needs is None:
        need = READ | WRITE if cmd.is_write else READ
        return need, need
    return needs


def _set_reads(args: list[bytes]) -> bool:
    return any(arg.lower() == b"get" for arg in args[3:])


def _bitfield_reads_only(args: list[bytes]) -> bool:
    """BITFIELD with only GET and OVERFLOW operations (Redis's bitfieldGetKeys)."""
    position = 2
    while position < len(args):
        operation = args[position].lower()
        if operation not in _BITFIELD_READS:
            return False
        position += 3 if operation == b"get" else 2
    return True
