"""SLOWLOG and LATENCY: what took long, and how long each command takes.

The slow log holds the commands that ran longer than ``slowlog-log-slower-than``; latency
events (``command``, ``expire-cycle``...) are the spikes above ``latency-monitor-threshold``;
LATENCY HISTOGRAM shows every command's run times, recorded by the dispatcher with its
commandstats (Command.record_latency).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from brook.commands.args import parse_int
from brook.commands.common import help_reply
from brook.commands.registry import (
    Command,
    CommandError,
    command,
    container,
    latency_index_range,
    subcommand_error,
)
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.context import ServerContext
    from brook.session import Session

_ADMIN = "admin noscript loading stale"
_ADMIN_ACL = "@admin @slow @dangerous"


# ---------------------------------------------------------------------------------------------
# SLOWLOG
# ---------------------------------------------------------------------------------------------

container("slowlog", group="server", acl="@slow", since="2.2.12",
          summary="A container for slow log commands.")


@command("slowlog|get", arity=-2, flags="admin loading stale", acl=_ADMIN_ACL, since="2.2.12",
         summary="Returns the slow log's entries.",
         complexity="O(N) where N is the number of entries returned", syntax="[count]")
def slowlog_get(client: Session, args: list[bytes]) -> bytes:
    slowlog = client.server.slowlog.entries
    count = 10
    if len(args) == 3:
        count = parse_int(args[2], "ERR count should be greater than or equal to -1")
        if count < -1:
            raise CommandError("ERR count should be greater than or equal to -1")
        if count == -1:
            count = len(slowlog)
    elif len(args) > 3:
        raise subcommand_error(args, "SLOWLOG")
    entries = []
    for entry in slowlog:
        if len(entries) >= count:
            break
        entries.append(
            resp.array([
                resp.integer(entry.id), resp.integer(entry.timestamp),
                resp.integer(entry.duration_us), resp.array_of_bulks(entry.args),
                resp.bulk(entry.addr.encode()), resp.bulk(entry.name),
            ])
        )
    return resp.array(entries)


@command("slowlog|len", arity=2, flags="admin loading stale", acl=_ADMIN_ACL, since="2.2.12",
         summary="Returns the number of entries in the slow log.", syntax="")
def slowlog_len(client: Session, args: list[bytes]) -> bytes:
    return resp.integer(len(client.server.slowlog.entries))


@command("slowlog|reset", arity=2, flags="admin loading stale", acl=_ADMIN_ACL, since="2.2.12",
         summary="Clears all entries from the slow log.",
         complexity="O(N) where N is the number of entries in the slowlog", syntax="")
def slowlog_reset(client: Session, args: list[bytes]) -> bytes:
    client.server.slowlog.entries.clear()
    return resp.OK


_SLOWLOG_HELP = [
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
]


@command("slowlog|help", arity=2, flags="loading stale", acl="@slow", since="6.2.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def slowlog_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _SLOWLOG_HELP)


# ---------------------------------------------------------------------------------------------
# LATENCY
# ---------------------------------------------------------------------------------------------

container("latency", group="server", acl="@slow", since="2.8.13",
          summary="A container for latency diagnostics commands.")


@command("latency|latest", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="2.8.13",
         summary="Returns the latest latency samples for all events.", syntax="")
def latency_latest(client: Session, args: list[bytes]) -> bytes:
    rows = []
    for name, event in client.server.latency_events.items():
        when, latest = event.samples[-1]
        rows.append(resp.array([
            resp.bulk(name.encode()), resp.integer(when), resp.integer(latest),
            resp.integer(event.max),
        ]))
    return resp.array(rows)


@command("latency|history", arity=3, flags=_ADMIN, acl=_ADMIN_ACL, since="2.8.13",
         summary="Returns timestamp-latency samples for an event.", syntax="event")
def latency_history(client: Session, args: list[bytes]) -> bytes:
    event = client.server.latency_events.get(args[2].decode("utf-8", "replace"))
    if event is None:
        return resp.EMPTY_ARRAY
    return resp.array([
        resp.array([resp.integer(when), resp.integer(latency)])
        for when, latency in event.samples
    ])


@command("latency|reset", arity=-2, flags=_ADMIN, acl=_ADMIN_ACL, since="2.8.13",
         summary="Resets the latency data for one or more events.", syntax="[event [event ...]]")
def latency_reset(client: Session, args: list[bytes]) -> bytes:
    events = client.server.latency_events
    if len(args) == 2:
        count = len(events)
        events.clear()
        return resp.integer(count)
    count = 0
    for arg in args[2:]:
        if events.pop(arg.decode("utf-8", "replace"), None) is not None:
            count += 1
    return resp.integer(count)


@command("latency|graph", arity=3, flags=_ADMIN, acl=_ADMIN_ACL, since="2.8.13",
         summary="Returns a latency graph for an event.", syntax="event")
def latency_graph(client: Session, args: list[bytes]) -> bytes:
    name = args[2].decode("utf-8", "replace")
    event = client.server.latency_events.get(name)
    if event is None:
        raise CommandError(f"ERR No samples available for event '{name}'")
    values = [latency for _, latency in event.samples]
    high, low = max(values), min(values)
    lines = [f"{name} - high {high} ms, low {low} ms (all time high {event.max} ms)", "-" * 80]
    now = int(time.time())
    for when, latency in event.samples:
        bar = "#" * max(1, latency * 60 // high if high else 1)
        lines.append(f"{now - when:>6}s ago {latency:>6} ms {bar}")
    return resp.encode(resp.Verbatim(("\n".join(lines) + "\n").encode()), client.protocol)


# LATENCY HISTOGRAM's levels: the histogram indices of 2**(10+k) ns, k = 0..20 (1 s is below
# the last), each shown as the microseconds its bucket reaches.
_LEVELS: Final = [((4 + k) << 7, latency_index_range((4 + k) << 7)[1] // 1000) for k in range(21)]


def _histogram(cmd: Command) -> resp.Map:
    """One command's runs: how many, and how many took at most each level's microseconds
    (cumulative; the levels that add none are left out, as in Redis)."""
    counts = sorted((cmd.latency_counts or {}).items())
    levels: dict[int, int] = {}
    total = position = 0
    for last_index, usec in _LEVELS:
        below = total
        while position < len(counts) and counts[position][0] <= last_index:
            total += counts[position][1]
            position += 1
        if total > below:
            levels[usec] = total
    return resp.Map({"calls": total, "histogram_usec": resp.Map(levels)})


def _with_histograms(commands: list[Command]) -> dict[str, resp.Map]:
    """Each command that ran, then its subcommands that ran."""
    found: dict[str, resp.Map] = {}
    for cmd in commands:
        for each in (cmd, *cmd.subcommands.values()):
            if each.latency_counts is not None:
                found[each.fullname] = _histogram(each)
    return found


@command("latency|histogram", arity=-2, flags="admin noscript loading stale",
         acl=_ADMIN_ACL, since="7.0.0",
         summary="Returns the cumulative distribution of latencies of a subset or all commands.",
         complexity="O(N) where N is the number of commands with latency information being "
                    "retrieved.", syntax="[command [command ...]]")
def latency_histogram(client: Session, args: list[bytes]) -> bytes:
    commands = client.server.commands
    if len(args) == 2:
        found = _with_histograms(list(commands.by_name.values()))
    else:
        named = [cmd for cmd in map(commands.named, args[2:]) if cmd is not None]
        found = {}
        for cmd in named:
            found.update(_with_histograms([cmd]))
    return resp.encode(resp.Map(found), client.protocol)


_DOCTOR_DISABLED = (
    "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
    'You may use "CONFIG SET latency-monitor-threshold <milliseconds>." in order to enable it. '
    "If we weren't in a deep space mission I'd suggest to take a look at "
    "https://redis.io/topics/latency-monitor.\n"
)
_DOCTOR_QUIET = (
    "Dave, no latency spike was observed during the lifetime of this Redis instance, not in "
    "the slightest bit. I honestly think you ought to sleep tonight.\n"
)


def _doctor_report(server: ServerContext) -> str:
    if server.config.latency_monitor_threshold <= 0:
        return _DOCTOR_DISABLED
    if not server.latency_events:
        return _DOCTOR_QUIET
    lines = [
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
        "about it, do you Dave?",
        "",
    ]
    for number, (name, event) in enumerate(server.latency_events.items(), start=1):
        values = [latency for _, latency in event.samples]
        average = sum(values) // len(values)
        deviation = sum(abs(v - average) for v in values) // len(values)
        lines.append(
            f"{number}. {name}: {len(values)} latency spikes (average {average}ms, mean "
            f"deviation {deviation}ms). Worst all time event {event.max}ms."
        )
    lines += ["", "I have no advice for you: these events are above the configured threshold.", ""]
    return "\n".join(lines)


@command("latency|doctor", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="2.8.13",
         summary="Returns a human-readable latency analysis report.", syntax="")
def latency_doctor(client: Session, args: list[bytes]) -> bytes:
    report = _doctor_report(client.server).encode()
    return resp.encode(resp.Verbatim(report), client.protocol)


_LATENCY_HELP = [
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the "
    "specified command names.",
    "    If no commands are specified then all histograms are replied.",
]


@command("latency|help", arity=2, flags="loading stale", acl="@slow", since="2.8.13",
         summary="Returns helpful text about the different subcommands.", syntax="")
def latency_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _LATENCY_HELP)
