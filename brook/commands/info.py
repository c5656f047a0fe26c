"""INFO: the report's sections (server, clients, memory, ..., keyspace) and their fields.

INFO's field names and formats are Redis's exactly, because monitoring tools, client libraries
and redis-benchmark parse them. Each section reads the parts of the server it reports on; it
imports the command table (registry), the memory reading it shares with MEMORY STATS
(memory_breakdown), and lower layers: no other family.
"""

from __future__ import annotations

import os
import platform
import resource
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from brook.acl.users import AUTH, CHANNEL, COMMAND, KEY
from brook.build import BUILD
from brook.commands.memory_breakdown import memory_breakdown
from brook.commands.registry import command, latency_at_percentile
from brook.protocol import resp
from brook.version import BROOK_VERSION, VERSION

if TYPE_CHECKING:
    from brook.context import ServerContext
    from brook.session import Session


def bytes_to_human(n: int) -> str:
    """Redis's bytesToHuman: ``1015.65K``, ``6.60M``."""
    if n < 1024:
        return f"{n}B"
    for power, suffix in enumerate("KMGTP", start=1):
        if n < 1024 ** (power + 1) or suffix == "P":
            return f"{n / 1024 ** power:.2f}{suffix}"
    raise AssertionError("unreachable")


def _total_system_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def _section_server(server: ServerContext) -> list[str]:
    now = time.time()
    uptime = int(time.monotonic() - server.started_monotonic)
    config = server.config
    uname = platform.uname()
    lines = [
        f"redis_version:{VERSION}",
        f"brook_version:{BROOK_VERSION}",
        f"brook_build:{BUILD}",
        "redis_git_sha1:00000000",
        "redis_git_dirty:0",
        "redis_build_id:0",
        "redis_mode:standalone",
        f"os:{uname.system} {uname.release} {uname.machine}",
        "arch_bits:64",
        "monotonic_clock:POSIX clock_gettime",
        "multiplexing_api:epoll",
        "atomicvar_api:c11-builtin",
        "gcc_version:0.0.0",
        f"process_id:{server.pid}",
        f"process_supervised:{config.supervised if config.supervised != 'auto' else 'no'}",
        f"run_id:{server.run_id}",
        f"tcp_port:{config.port or config.tls_port}",
        f"server_time_usec:{int(now * 1_000_000)}",
        f"uptime_in_seconds:{uptime}",
        f"uptime_in_days:{uptime // 86400}",
        f"hz:{config.hz}",
        f"configured_hz:{config.hz}",
        f"lru_clock:{int(now) & ((1 << 24) - 1)}",
        f"executable:{config.executable}",
        f"config_file:{config.config_file or ''}",
        "io_threads_active:0",
        *server.listener_lines(),
    ]
    return lines


def _section_clients(server: ServerContext) -> list[str]:
    clients = server.clients.values()
    watching = sum(1 for c in clients if c.watched)
    watched_keys = sum(len(db.watchers) for db in server.keyspace.databases)
    blocking_keys, blocking_on_nokey = server.blocking.blocking_keys()
    in_timeout = sum(1 for c in clients if c.blocked is not None and c.blocked.deadline)
    subscribers = sum(1 for c in clients if c.channels or c.patterns or c.shard_channels)
    return [
        f"connected_clients:{len(server.clients)}",
        "cluster_connections:0",
        f"maxclients:{server.config.maxclients}",
        "client_recent_max_input_buffer:0",
        "client_recent_max_output_buffer:0",
        f"blocked_clients:{server.blocking.parked}",
        f"tracking_clients:{server.tracking.count}",
        f"pubsub_clients:{subscribers}",
        f"watching_clients:{watching}",
        f"clients_in_timeout_table:{in_timeout}",
        f"total_watched_keys:{watched_keys}",
        f"total_blocking_keys:{blocking_keys}",
        f"total_blocking_keys_on_nokey:{blocking_on_nokey}",
    ]

def _section_memory(server: ServerContext) -> list[str]:
    """Redis's memory fields. ``used_memory`` is what the allocators hold now (brook.memory)."""
    breakdown = memory_breakdown(server)
    used, rss, startup = breakdown.used, breakdown.rss, breakdown.startup
    clients, aof_buffer = breakdown.clients, breakdown.aof_buffer
    overhead, dataset = breakdown.overhead, breakdown.dataset
    peak = max(server.memory.peak, used)
    system = _total_system_memory()
    config = server.config
    return [
        f"used_memory:{used}",
        f"used_memory_human:{bytes_to_human(used)}",
        f"used_memory_rss:{rss}",
        f"used_memory_rss_human:{bytes_to_human(rss)}",
        f"used_memory_peak:{peak}",
        f"used_memory_peak_human:{bytes_to_human(peak)}",
        f"used_memory_peak_perc:{used * 100 / peak if peak else 100:.2f}%",
        f"used_memory_overhead:{overhead}",
        f"used_memory_startup:{startup}",
        f"used_memory_dataset:{dataset}",
        f"used_memory_dataset_perc:{dataset * 100 / (used - startup) if used > startup else 0:.2f}%",
        f"allocator_allocated:{used}",
        f"allocator_resident:{rss}",
        f"total_system_memory:{system}",
        f"total_system_memory_human:{bytes_to_human(system)}",
        *_scripting_memory(server),
        f"maxmemory:{config.maxmemory}",
        f"maxmemory_human:{bytes_to_human(config.maxmemory)}",
        f"maxmemory_policy:{config.maxmemory_policy}",
        f"mem_fragmentation_ratio:{rss / used if used else 0:.2f}",
        f"mem_fragmentation_bytes:{rss - used}",
        f"mem_not_counted_for_evict:{server.evictor.not_counted()}",
        "mem_clients_slaves:0",
        f"mem_clients_normal:{clients}",
        f"mem_aof_buffer:{aof_buffer}",
        "mem_allocator:libc",
        "lazyfree_pending_objects:0",
        "lazyfreed_objects:0",
    ]


def _scripting_memory(server: ServerContext) -> list[str]:
    """Redis 7's script and function figures: interpreter memory (Lua's own count) and the
    cached bodies."""
    scripting = server.scripting
    vm_eval = scripting.eval_lua.memory()
    vm_functions = scripting.functions_lua.memory()
    scripts_eval = scripting.scripts.body_bytes
    functions = sum(len(code) for code in scripting.functions.codes())
    libraries, function_count = scripting.functions.counts()
    return [
        f"used_memory_lua:{vm_eval}",
        f"used_memory_vm_eval:{vm_eval}",
        f"used_memory_lua_human:{bytes_to_human(vm_eval)}",
        f"used_memory_scripts_eval:{scripts_eval}",
        f"number_of_cached_scripts:{len(scripting.scripts)}",
        f"number_of_functions:{function_count}",
        f"number_of_libraries:{libraries}",
        f"used_memory_vm_functions:{vm_functions}",
        f"used_memory_vm_total:{vm_eval + vm_functions}",
        f"used_memory_vm_total_human:{bytes_to_human(vm_eval + vm_functions)}",
        f"used_memory_functions:{functions}",
        f"used_memory_scripts:{scripts_eval + functions}",
        f"used_memory_scripts_human:{bytes_to_human(scripts_eval + functions)}",
    ]


def _section_persistence(server: ServerContext) -> list[str]:
    return server.persistence.info()


def _section_stats(server: ServerContext) -> list[str]:
    stats = server.stats
    keyspace = server.keyspace
    input_kbps, output_kbps = server.instantaneous_kbps()
    return [
        f"total_connections_received:{stats['total_connections_received']}",
        f"total_commands_processed:{server.total_commands()}",
        f"instantaneous_ops_per_sec:{server.instantaneous_ops_per_sec()}",
        f"total_net_input_bytes:{server.net_input_bytes}",
        f"total_net_output_bytes:{server.net_output_bytes}",
        "total_net_repl_input_bytes:0",
        "total_net_repl_output_bytes:0",
        f"instantaneous_input_kbps:{input_kbps:.2f}",
        f"instantaneous_output_kbps:{output_kbps:.2f}",
        "instantaneous_input_repl_kbps:0.00",
        "instantaneous_output_repl_kbps:0.00",
        f"rejected_connections:{stats['rejected_connections']}",
        f"sync_full:{server.replication.sync_full}",
        f"sync_partial_ok:{server.replication.sync_partial_ok}",
        f"sync_partial_err:{server.replication.sync_partial_err}",
        f"expired_keys:{keyspace.expired_keys}",
        "expired_stale_perc:0.00",
        "expired_time_cap_reached_count:0",
        f"evicted_keys:{server.evictor.evicted_keys}",
        f"evicted_clients:{server.evictor.evicted_clients}",
        *server.evictor.exceeded_time_fields(),
        f"evicted_scripts:{server.scripting.scripts.evicted}",
        f"keyspace_hits:{keyspace.hits}",
        f"keyspace_misses:{keyspace.misses}",
        f"pubsub_channels:{len(server.pubsub.channels)}",
        f"pubsub_patterns:{len(server.pubsub.patterns)}",
        f"pubsubshard_channels:{len(server.pubsub.shard_channels)}",
        f"latest_fork_usec:{stats['latest_fork_usec']}",
        f"total_forks:{stats['total_forks']}",
        f"migrate_cached_sockets:{len(server.migrate_sockets.cached)}",
        f"tracking_total_keys:{len(server.tracking.table)}",
        f"tracking_total_items:{server.tracking.items}",
        f"tracking_total_prefixes:{len(server.tracking.prefixes)}",
        "unexpected_error_replies:0",
        f"total_error_replies:{stats['total_error_replies']}",
        "dump_payload_sanitizations:0",
        "client_query_buffer_limit_disconnections:"
        f"{stats['client_query_buffer_limit_disconnections']}",
        "client_output_buffer_limit_disconnections:"
        f"{stats['client_output_buffer_limit_disconnections']}",
        *(f"acl_access_denied_{name}:{server.acl.denied[reason]}"
          for name, reason in (("auth", AUTH), ("cmd", COMMAND), ("key", KEY),
                               ("channel", CHANNEL))),
    ]


def _section_replication(server: ServerContext) -> list[str]:
    return server.replication.info()


def _seconds(value: float) -> str:
    return f"{int(value)}.{int(round((value - int(value)) * 1e6)):06d}"


def _section_cpu(server: ServerContext) -> list[str]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    thread = resource.getrusage(getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF))
    return [
        f"used_cpu_sys:{_seconds(own.ru_stime)}",
        f"used_cpu_user:{_seconds(own.ru_utime)}",
        f"used_cpu_sys_children:{_seconds(children.ru_stime)}",
        f"used_cpu_user_children:{_seconds(children.ru_utime)}",
        f"used_cpu_sys_main_thread:{_seconds(thread.ru_stime)}",
        f"used_cpu_user_main_thread:{_seconds(thread.ru_utime)}",
    ]


def _section_commandstats(server: ServerContext) -> list[str]:
    lines = []
    for cmd in server.commands.every():
        if not (cmd.calls or cmd.failed_calls or cmd.rejected_calls):
            continue
        usec = int(cmd.seconds * 1e6)
        per_call = usec / cmd.calls if cmd.calls else 0.0
        lines.append(
            f"cmdstat_{cmd.fullname}:calls={cmd.calls},usec={usec},usec_per_call={per_call:.2f},"
            f"rejected_calls={cmd.rejected_calls},failed_calls={cmd.failed_calls}"
        )
    return lines


def _percentile_label(percentile: float) -> str:
    """A percentile as Redis names it (``%f`` without trailing zeros): 50, 99, 99.9."""
    return f"{percentile:f}".rstrip("0").rstrip(".")


def _section_latencystats(server: ServerContext) -> list[str]:
    """Each command's run times at latency-tracking-info-percentiles, in microseconds."""
    config = server.config
    if not config.latency_tracking:
        return []
    lines = []
    for entry in server.commands.every():
        counts = entry.latency_counts
        if counts is not None:
            values = ",".join(
                f"p{_percentile_label(p)}={latency_at_percentile(counts, p) / 1000:.3f}"
                for p in config.latency_tracking_info_percentiles)
            lines.append(f"latency_percentiles_usec_{entry.fullname}:{values}")
    return lines


def _section_errorstats(server: ServerContext) -> list[str]:
    return [f"errorstat_{code}:count={count}" for code, count in sorted(server.errorstats.items())]


def _section_keyspace(server: ServerContext) -> list[str]:
    lines = []
    for db in server.keyspace.databases:
        if db.data:
            lines.append(
                f"db{db.index}:keys={len(db.data)},expires={len(db.expires)},"
                f"avg_ttl={_average_ttl(db.expires)},subexpiry=0"
            )
    return lines


_TTL_SAMPLE = 128


def _average_ttl(expires: dict[bytes, int]) -> int:
    """An estimate from a bounded sample of deadlines, like Redis's (INFO stays cheap)."""
    if not expires:
        return 0
    now_ms = int(time.time() * 1000)
    total = counted = 0
    for deadline in expires.values():
        if deadline > now_ms:
            total += deadline - now_ms
            counted += 1
        if counted >= _TTL_SAMPLE:
            break
    return total // counted if counted else 0


# (name, in the default set, title, lines): Redis's order.
_SECTIONS: list[tuple[str, bool, str, Callable[[ServerContext], list[str]]]] = [
    ("server", True, "Server", _section_server),
    ("clients", True, "Clients", _section_clients),
    ("memory", True, "Memory", _section_memory),
    ("persistence", True, "Persistence", _section_persistence),
    ("stats", True, "Stats", _section_stats),
    ("replication", True, "Replication", _section_replication),
    ("cpu", True, "CPU", _section_cpu),
    ("modules", True, "Modules", lambda server: []),
    ("commandstats", False, "Commandstats", _section_commandstats),
    ("errorstats", True, "Errorstats", _section_errorstats),
    ("latencystats", False, "Latencystats", _section_latencystats),
    ("cluster", True, "Cluster",
     lambda server: [f"cluster_enabled:{0 if server.cluster is None else 1}"]),
    ("keyspace", True, "Keyspace", _section_keyspace),
]


def _requested_sections(args: list[bytes]) -> set[str]:
    if not args:
        return {name for name, default, _, _ in _SECTIONS if default}
    wanted: set[str] = set()
    for arg in args:
        name = arg.decode("utf-8", "replace").lower()
        if name == "default":
            wanted.update(n for n, default, _, _ in _SECTIONS if default)
        elif name in ("all", "everything"):
            wanted.update(n for n, _, _, _ in _SECTIONS)
        else:
            wanted.add(name)
    return wanted


def info_text(server: ServerContext, args: list[bytes]) -> str:
    """The INFO report: requested sections in Redis's order, separated by a blank line."""
    wanted = _requested_sections(args)
    parts = []
    for name, _, title, lines in _SECTIONS:
        if name in wanted:
            parts.append("".join(f"{line}\r\n" for line in [f"# {title}", *lines(server)]))
    return "\r\n".join(parts)


@command("info", arity=-1, flags="loading stale", acl="@slow @dangerous", group="server",
         summary="Returns information and statistics about the server.",
         complexity="O(1)", syntax="[section [section ...]]")
def info(client: Session, args: list[bytes]) -> bytes:
    text = info_text(client.server, args[1:]).encode()
    return resp.encode(resp.Verbatim(text), client.protocol)

