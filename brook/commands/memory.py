"""MEMORY: USAGE, STATS, DOCTOR, PURGE, MALLOC-STATS, HELP (Redis's object.c memoryCommand).

Figures come from :mod:`brook.memory`: the allocators' reading for the server, the sampled
estimate of a key's objects for USAGE (Redis samples nested values the same way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.args import parse_int
from brook.commands.common import help_reply
from brook.commands.memory_breakdown import memory_breakdown
from brook.commands.registry import CommandError, command, container
from brook.memory import ENTRY_HEADER_BYTES, SLOT_BYTES, key_bytes, resident_bytes
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

_SYNTAX = "ERR syntax error"
# A key's share of its database's table beyond the key and the value (brook/memory.py).
KEY_OVERHEAD = ENTRY_HEADER_BYTES + SLOT_BYTES
_HELP = [
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
]
_EMPTY = (
    "Hi Sam, this instance is empty or is using very little memory, my issues detector can't "
    "be used in these conditions. Please, leave for your mission on Earth and fill it with "
    "some data. The new Sam and I will be back to our programming as soon as I finished "
    "rebooting."
)
_HEALTHY = ("Hi Sam, I can't find any memory issue in your instance. I can only account for "
            "what occurs on this base.")

container("memory", acl="@slow", group="server", since="4.0.0",
          summary="A container for memory diagnostics commands.")


@command("memory|usage", arity=-3, flags="readonly", keys=(2, 2, 1), acl="@read @slow",
         group="server", since="4.0.0", complexity="O(N) where N is the number of samples.",
         summary="Estimates the memory usage of a key.", syntax="key [SAMPLES count]")
def memory_usage(client: Session, args: list[bytes]) -> bytes:
    samples = 5
    position = 3
    while position < len(args):
        if args[position].lower() == b"samples" and position + 1 < len(args):
            samples = parse_int(args[position + 1])
            if samples < 0:
                raise CommandError(_SYNTAX)
            position += 2
        else:
            raise CommandError(_SYNTAX)
    value = client.db.data.get(args[2])  # as Redis's dbFind: no expiry check, no access
    if value is None:
        return resp.null(client.protocol)
    return resp.integer(key_bytes(args[2], value, samples))


@command("memory|stats", arity=2, acl="@slow", group="server", since="4.0.0",
         summary="Returns details about memory usage.", syntax="")
def memory_stats(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    memory = server.memory
    breakdown = memory_breakdown(server)
    used, rss, startup = breakdown.used, breakdown.rss, breakdown.startup
    clients, aof_buffer = breakdown.clients, breakdown.aof_buffer
    overhead, dataset = breakdown.overhead, breakdown.dataset
    scripting = server.scripting
    keys = sum(len(db.data) for db in server.keyspace.databases)
    fields: dict[str, object] = {
        "peak.allocated": max(memory.peak, used),
        "total.allocated": used,
        "startup.allocated": startup,
        "replication.backlog": 0,
        "clients.slaves": 0,
        "clients.normal": clients,
        "cluster.links": 0,
        "aof.buffer": aof_buffer,
        "lua.caches": scripting.scripts.body_bytes,
        "functions.caches": sum(len(code) for code in scripting.functions.codes()),
    }
    for db in server.keyspace.databases:
        if db.data:
            fields[f"db.{db.index}"] = {"overhead.hashtable.main": KEY_OVERHEAD * len(db.data),
                                        "overhead.hashtable.expires": 40 * len(db.expires)}
    fields.update({
        "overhead.total": overhead,
        "keys.count": keys,
        "keys.bytes-per-key": (used - startup) // keys if keys else 0,
        "dataset.bytes": dataset,
        "dataset.percentage": resp.Double(dataset * 100 / (used - startup)
                                          if used > startup else 0.0),
        "peak.percentage": resp.Double(used * 100 / memory.peak if memory.peak else 100.0),
        "allocator.allocated": used,
        "allocator.resident": rss,
        "fragmentation": resp.Double(rss / used if used else 0.0),
        "fragmentation.bytes": rss - used,
    })
    return resp.encode(resp.Map(fields), client.protocol)


@command("memory|doctor", arity=2, acl="@slow", group="server", since="4.0.0",
         summary="Outputs a memory problems report.", syntax="")
def memory_doctor(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    used = server.used_memory()
    if used - server.memory.startup < 5 * 1024 * 1024:
        report = _EMPTY
    else:
        report = _HEALTHY
        rss = resident_bytes()
        if rss > 1.4 * used and rss - used > 10 * 1024 * 1024:
            report = ("Sam, I detected a few issues in this Brook instance memory implants:\n\n"
                      " * High process RSS overhead: This instance has RSS memory overhead "
                      f"greater than 1.4 ({rss / used:.2f}): memory freed by deletions is kept "
                      "by the allocators for reuse. MEMORY PURGE returns what malloc can give "
                      "back.\n\nI'm here to keep you safe, Sam. I want to help you.\n")
    return resp.encode(resp.Verbatim(report.encode()), client.protocol)


@command("memory|purge", arity=2, acl="@slow", group="server", since="4.0.0",
         summary="Asks the allocator to release memory.", syntax="")
def memory_purge(client: Session, args: list[bytes]) -> bytes:
    client.server.memory.gauge.trim()
    return resp.OK


@command("memory|malloc-stats", arity=2, acl="@slow", group="server", since="4.0.0",
         complexity="Depends on how much memory is allocated, could be slow",
         summary="Returns the allocator statistics.", syntax="")
def memory_malloc_stats(client: Session, args: list[bytes]) -> bytes:
    gauge = client.server.memory.gauge
    text = gauge.report() if gauge.exact else b"Stats not supported for the current allocator"
    return resp.encode(resp.Verbatim(text), client.protocol)


@command("memory|help", arity=2, flags="loading stale", acl="@slow", group="server",
         since="4.0.0", summary="Returns helpful text about the different subcommands.",
         syntax="")
def memory_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _HELP)
