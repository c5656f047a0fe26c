"""The flags of each command's key specifications, as Redis's command table declares them.

COMMAND GETKEYSANDFLAGS reports, for each key of a request, what the command does to it: one of
RO (read only), RW (read and write), OW (overwrite: the old value is not read), RM (remove) and
the operation's kind: access (its value is returned or used), update, insert, delete; ``not_key``
marks arguments that are channels, not keys (the sharded Pub/Sub commands). A command with two
entries gives the first key's flags and the other keys' (``LMOVE src dst``, ``SORT k STORE d``).
SET and BITFIELD depend on their arguments (``variable_flags``: :func:`flags_of_keys`).
tests/commands/test_command_table.py compares this table with real Redis's key specs.
"""

from __future__ import annotations

from typing import Final

KEY_SPEC_FLAGS: Final[dict[str, tuple[str, ...]]] = {
    "append": ("RW insert",),
    "bitcount": ("RO access",),
    "bitfield": ("RW access update variable_flags",),
    "bitfield_ro": ("RO access",),
    "bitop": ("OW update", "RO access"),
    "bitpos": ("RO access",),
    "blmove": ("RW access delete", "RW insert"),
    "blmpop": ("RW access delete",),
    "blpop": ("RW access delete",),
    "brpop": ("RW access delete",),
    "brpoplpush": ("RW access delete", "RW insert"),
    "bzmpop": ("RW access delete",),
    "bzpopmax": ("RW access delete",),
    "bzpopmin": ("RW access delete",),
    "copy": ("RO access", "OW update"),
    "decr": ("RW access update",),
    "decrby": ("RW access update",),
    "del": ("RM delete",),
    "dump": ("RO access",),
    "eval": ("RW access update",),
    "eval_ro": ("RO access",),
    "evalsha": ("RW access update",),
    "evalsha_ro": ("RO access",),
    "exists": ("RO",),
    "expire": ("RW update",),
    "expireat": ("RW update",),
    "expiretime": ("RO access",),
    "fcall": ("RW access update",),
    "fcall_ro": ("RO access",),
    "geoadd": ("RW update",),
    "geodist": ("RO access",),
    "geohash": ("RO access",),
    "geopos": ("RO access",),
    "georadius": ("RO access", "OW update"),
    "georadius_ro": ("RO access",),
    "georadiusbymember": ("RO access", "OW update"),
    "georadiusbymember_ro": ("RO access",),
    "geosearch": ("RO access",),
    "geosearchstore": ("OW update", "RO access"),
    "get": ("RO access",),
    "getbit": ("RO access",),
    "getdel": ("RW access delete",),
    "getex": ("RW access update",),
    "getrange": ("RO access",),
    "getset": ("RW access update",),
    "hdel": ("RW delete",),
    "hexists": ("RO",),
    "hexpire": ("RW update",),
    "hexpireat": ("RW update",),
    "hexpiretime": ("RO access",),
    "hget": ("RO access",),
    "hgetall": ("RO access",),
    "hincrby": ("RW access update",),
    "hincrbyfloat": ("RW access update",),
    "hkeys": ("RO access",),
    "hlen": ("RO",),
    "hmget": ("RO access",),
    "hmset": ("RW update",),
    "hpersist": ("RW update",),
    "hpexpire": ("RW update",),
    "hpexpireat": ("RW update",),
    "hpexpiretime": ("RO access",),
    "hpttl": ("RO access",),
    "hrandfield": ("RO access",),
    "hscan": ("RO access",),
    "hset": ("RW update",),
    "hsetnx": ("RW insert",),
    "hstrlen": ("RO",),
    "httl": ("RO access",),
    "hvals": ("RO access",),
    "incr": ("RW access update",),
    "incrby": ("RW access update",),
    "incrbyfloat": ("RW access update",),
    "lcs": ("RO access",),
    "lindex": ("RO access",),
    "linsert": ("RW insert",),
    "llen": ("RO",),
    "lmove": ("RW access delete", "RW insert"),
    "lmpop": ("RW access delete",),
    "lpop": ("RW access delete",),
    "lpos": ("RO access",),
    "lpush": ("RW insert",),
    "lpushx": ("RW insert",),
    "lrange": ("RO access",),
    "lrem": ("RW delete",),
    "lset": ("RW update",),
    "ltrim": ("RW delete",),
    "memory|usage": ("RO",),
    "mget": ("RO access",),
    "migrate": ("RW access delete", "RW access delete incomplete"),
    "move": ("RW access update",),
    "mset": ("OW update",),
    "msetnx": ("OW insert",),
    "object|encoding": ("RO",),
    "object|freq": ("RO",),
    "object|idletime": ("RO",),
    "object|refcount": ("RO",),
    "persist": ("RW update",),
    "pexpire": ("RW update",),
    "pexpireat": ("RW update",),
    "pexpiretime": ("RO access",),
    "pfadd": ("RW insert",),
    "pfcount": ("RW access",),
    "pfdebug": ("RW access",),
    "pfmerge": ("RW access insert", "RO access"),
    "psetex": ("OW update",),
    "pttl": ("RO access",),
    "rename": ("RW access delete", "OW update"),
    "renamenx": ("RW access delete", "OW insert"),
    "restore": ("OW update",),
    "restore-asking": ("OW update",),
    "rpop": ("RW access delete",),
    "rpoplpush": ("RW access delete", "RW insert"),
    "rpush": ("RW insert",),
    "rpushx": ("RW insert",),
    "sadd": ("RW insert",),
    "scard": ("RO",),
    "sdiff": ("RO access",),
    "sdiffstore": ("OW update", "RO access"),
    "set": ("RW access update variable_flags",),
    "setbit": ("RW access update",),
    "setex": ("OW update",),
    "setnx": ("OW insert",),
    "setrange": ("RW update",),
    "sinter": ("RO access",),
    "sintercard": ("RO access",),
    "sinterstore": ("OW update", "RO access"),
    "sismember": ("RO",),
    "smembers": ("RO access",),
    "smismember": ("RO access",),
    "smove": ("RW access delete", "RW insert"),
    "sort": ("RO access", "OW update"),
    "sort_ro": ("RO access",),
    "spop": ("RW access delete",),
    "spublish": ("not_key",),
    "srandmember": ("RO access",),
    "srem": ("RW delete",),
    "sscan": ("RO access",),
    "ssubscribe": ("not_key",),
    "strlen": ("RO",),
    "substr": ("RO access",),
    "sunion": ("RO access",),
    "sunionstore": ("OW update", "RO access"),
    "sunsubscribe": ("not_key",),
    "touch": ("RO",),
    "ttl": ("RO access",),
    "type": ("RO",),
    "unlink": ("RM delete",),
    "watch": ("RO",),
    "xack": ("RW update",),
    "xadd": ("RW update",),
    "xautoclaim": ("RW delete",),
    "xclaim": ("RW update",),
    "xdel": ("RW delete",),
    "xgroup|create": ("RW insert",),
    "xgroup|createconsumer": ("RW insert",),
    "xgroup|delconsumer": ("RW delete",),
    "xgroup|destroy": ("RW delete",),
    "xgroup|setid": ("RW update",),
    "xinfo|consumers": ("RO access",),
    "xinfo|groups": ("RO access",),
    "xinfo|stream": ("RO access",),
    "xlen": ("RO",),
    "xpending": ("RO access",),
    "xrange": ("RO access",),
    "xread": ("RO access",),
    "xreadgroup": ("RO access",),
    "xrevrange": ("RO access",),
    "xsetid": ("RW update",),
    "xtrim": ("RW delete",),
    "zadd": ("RW update",),
    "zcard": ("RO",),
    "zcount": ("RO access",),
    "zdiff": ("RO access",),
    "zdiffstore": ("OW update", "RO access"),
    "zincrby": ("RW access update",),
    "zinter": ("RO access",),
    "zintercard": ("RO access",),
    "zinterstore": ("OW update", "RO access"),
    "zlexcount": ("RO access",),
    "zmpop": ("RW access delete",),
    "zmscore": ("RO access",),
    "zpopmax": ("RW access delete",),
    "zpopmin": ("RW access delete",),
    "zrandmember": ("RO access",),
    "zrange": ("RO access",),
    "zrangebylex": ("RO access",),
    "zrangebyscore": ("RO access",),
    "zrangestore": ("OW update", "RO access"),
    "zrank": ("RO access",),
    "zrem": ("RW delete",),
    "zremrangebylex": ("RW delete",),
    "zremrangebyrank": ("RW delete",),
    "zremrangebyscore": ("RW delete",),
    "zrevrange": ("RO access",),
    "zrevrangebylex": ("RO access",),
    "zrevrangebyscore": ("RO access",),
    "zrevrank": ("RO access",),
    "zscan": ("RO access",),
    "zscore": ("RO access",),
    "zunion": ("RO access",),
    "zunionstore": ("OW update", "RO access"),
}

# Where each key spec begins, for the commands whose keys Redis describes with several specs
# that COMMAND INFO shows one by one: an argument index, or a keyword searched for from an
# index on (GEORADIUS ... STORE key). Each spec is one key; the first has the first flags of
# KEY_SPEC_FLAGS, the others the last.
KEY_SPEC_BEGINS: Final[dict[str, tuple[int | tuple[str, int], ...]]] = {
    "georadius": (1, ("STORE", 6), ("STOREDIST", 6)),
    "georadiusbymember": (1, ("STORE", 5), ("STOREDIST", 5)),
    "geosearchstore": (1, 2),
}

# Redis's order of the flags in a reply (addReplyFlagsForKeyArgs).
_ORDER: Final = ("RW", "RO", "OW", "RM", "access", "update", "insert", "delete", "not_key",
                 "incomplete", "variable_flags")


def set_reads(args: list[bytes]) -> bool:
    """Whether SET reads its key: only with GET (Redis's setGetKeys)."""
    return any(arg.lower() == b"get" for arg in args[3:])


def bitfield_reads_only(args: list[bytes]) -> bool:
    """Whether BITFIELD only reads: nothing but complete GET and OVERFLOW operations (Redis's
    bitfieldGetKeys; anything else, a malformed one too, counts as a write)."""
    position = 2
    while position < len(args):
        operation = args[position].lower()
        remaining = len(args) - position - 1
        if operation == b"get" and remaining >= 2:
            position += 3
        elif operation == b"overflow" and remaining >= 1:
            position += 2
        else:
            return False
    return True


def flags_of_keys(name: str, is_write: bool, args: list[bytes], count: int) -> list[list[str]]:
    """The flags of each of the ``count`` keys a request ``args`` names, in key order."""
    if name == "set":
        # SET ... GET reads the old value; without GET the value is overwritten unread.
        return [["RW", "access", "update"] if set_reads(args) else ["OW", "update"]] * count
    if name == "bitfield":
        return [["RO", "access"] if bitfield_reads_only(args) else ["RW", "access", "update"]
                ] * count
    declared = KEY_SPEC_FLAGS.get(name)
    if declared is None:
        declared = ("RW access update",) if is_write else ("RO access",)
    first, rest = declared[0], declared[-1]
    return [_ordered(first if i == 0 else rest) for i in range(count)]


def spec_flags(name: str, spec: int) -> list[str]:
    """The flags of a command's ``spec``-th key spec (KEY_SPEC_BEGINS), in Redis's order."""
    declared = KEY_SPEC_FLAGS[name]
    return _ordered(declared[0] if spec == 0 else declared[-1])


def _ordered(flags: str) -> list[str]:
    words = flags.split()
    return [flag for flag in _ORDER if flag in words]


def has_keys(name: str) -> bool:
    """Whether the command has a key spec that is not ``not_key``."""
    declared = KEY_SPEC_FLAGS.get(name)
    return declared is None or any("not_key" not in flags for flags in declared)
