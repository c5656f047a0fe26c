"""Server administration: CONFIG, INFO, TIME, LASTSAVE, DEBUG, SHUTDOWN, MONITOR, SLOWLOG,
LATENCY.

INFO's field names and formats are Redis's exactly, because monitoring tools, client libraries
and redis-benchmark parse them.
"""

from __future__ import annotations

import os
import platform
import re
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brook.acl.users import AUTH, CHANNEL, COMMAND, KEY
from brook.build import BUILD
from brook.commands.args import parse_int
from brook.commands.introspection import help_reply
from brook.commands.registry import (
    COMMANDS,
    NO_SUCH_KEY,
    SYNTAX_ERROR,
    Command,
    CommandError,
    command,
    container,
    latency_at_percentile,
    subcommand_error,
)
from brook.config.errors import ConfigError, ConfigSetError
from brook.keyspace import ENCODINGS, now_us
from brook.memory import resident_bytes
from brook.protocol import resp
from brook.version import BROOK_VERSION, VERSION

if TYPE_CHECKING:
    from brook.server import Server
    from brook.session import Session

_ADMIN = "admin noscript loading stale"
_ADMIN_ACL = "@admin @slow @dangerous"


def protected_action_allowed(setting: str, client: Session) -> bool:
    """``yes``, or ``local`` from a loopback/Unix connection (enable-debug-command,
    enable-module-command and enable-protected-configs)."""
    return setting == "yes" or (setting == "local" and client.is_local())


def protected_command_error(name: str, setting: str) -> CommandError:
    """Redis's refusal of a protected command (DEBUG, MODULE LOAD...) its setting forbids."""
    return CommandError(
        f'ERR {name} command not allowed. If the {setting} option is set to "local", you can '
        "run it from a local connection, otherwise you need to set this option in the "
        "configuration file, and then restart the server.")


# ---------------------------------------------------------------------------------------------
# CONFIG
# ---------------------------------------------------------------------------------------------

container("config", group="server", acl="@slow", since="2.0.0",
          summary="A container for server configuration commands.")


@command("config|get", arity=-3, flags=_ADMIN, acl=_ADMIN_ACL, since="2.0.0",
         summary="Returns the effective values of configuration parameters.",
         complexity="O(N) when N is the number of configuration parameters provided",
         syntax="parameter [parameter ...]")
def config_get(client: Session, args: list[bytes]) -> bytes:
    # Several patterns may match one parameter: it is replied once, under the first name seen.
    found: dict[str, tuple[str, str]] = {}
    for pattern in args[2:]:
        matches = client.server.config.matching(pattern.decode("utf-8", "surrogateescape"))
        for name, value in matches.items():
            found.setdefault(name.lower(), (name, value))
    return resp.encode(resp.Map(dict(found.values())), client.protocol)


@command("config|set", arity=-4, flags=_ADMIN, acl=_ADMIN_ACL, since="2.0.0",
         summary="Sets configuration parameters in-flight.",
         complexity="O(N) when N is the number of configuration parameters provided",
         syntax="parameter value [parameter value ...]")
def config_set(client: Session, args: list[bytes]) -> bytes:
    if len(args) % 2:
        raise CommandError(SYNTAX_ERROR)
    texts = [a.decode("utf-8", "surrogateescape") for a in args[2:]]
    pairs = list(zip(texts[::2], texts[1::2], strict=True))
    config = client.server.config
    try:
        config.set_many(pairs, protected_action_allowed(config.enable_protected_configs, client))
    except ConfigSetError as err:
        raise CommandError(f"ERR {err}")
    return resp.OK


@command("config|resetstat", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="2.0.0",
         summary="Resets the server's statistics.", syntax="")
def config_resetstat(client: Session, args: list[bytes]) -> bytes:
    client.server.reset_stats()
    return resp.OK


@command("config|rewrite", arity=2, flags=_ADMIN, acl=_ADMIN_ACL, since="2.8.0",
         summary="Persists the effective configuration to file.", syntax="")
def config_rewrite(client: Session, args: list[bytes]) -> bytes:
    server = client.server
    try:
        server.config.rewrite()
    except ConfigError as err:
        server.log("warning", f"CONFIG REWRITE failed: {err}")
        raise CommandError(f"ERR {err}")
    server.log("notice", "CONFIG REWRITE executed with success.")
    return resp.OK


_CONFIG_HELP = [
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
]


@command("config|help", arity=2, flags="loading stale", acl="@slow", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def config_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _CONFIG_HELP)


# ---------------------------------------------------------------------------------------------
# INFO
# ---------------------------------------------------------------------------------------------


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


def _section_server(server: Server) -> list[str]:
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
        *server.listening.info_lines(config.bind, config.port),
    ]
    return lines


def _section_clients(server: Server) -> list[str]:
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


@dataclass(frozen=True)
class MemoryBreakdown:
    """One reading of the allocators, split as INFO memory and MEMORY STATS report it: the
    overhead is the start-up reading plus the clients' buffers and the AOF buffer, the dataset
    the rest."""

    used: int
    rss: int
    startup: int
    clients: int
    aof_buffer: int

    @property
    def overhead(self) -> int:
        return min(self.used, self.startup + self.clients + self.aof_buffer)

    @property
    def dataset(self) -> int:
        return self.used - self.overhead


def memory_breakdown(server: Server) -> MemoryBreakdown:
    used = server.used_memory()
    return MemoryBreakdown(
        used=used, rss=resident_bytes(), startup=min(server.memory.startup, used),
        clients=sum(client.memory_bytes() for client in server.clients.values()),
        aof_buffer=server.evictor.not_counted())


def _section_memory(server: Server) -> list[str]:
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


def _scripting_memory(server: Server) -> list[str]:
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


def _section_persistence(server: Server) -> list[str]:
    return server.persistence.info()


def _section_stats(server: Server) -> list[str]:
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


def _section_replication(server: Server) -> list[str]:
    return server.replication.info()


def _seconds(value: float) -> str:
    return f"{int(value)}.{int(round((value - int(value)) * 1e6)):06d}"


def _section_cpu(server: Server) -> list[str]:
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


def _commands_with_stats() -> list[Command]:
    found: list[Command] = []
    for cmd in COMMANDS.values():
        for entry in (cmd, *cmd.subcommands.values()):
            if entry.calls or entry.failed_calls or entry.rejected_calls:
                found.append(entry)
    return found


def _section_commandstats(server: Server) -> list[str]:
    lines = []
    for cmd in _commands_with_stats():
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


def _section_latencystats(server: Server) -> list[str]:
    """Each command's run times at latency-tracking-info-percentiles, in microseconds."""
    config = server.config
    if not config.latency_tracking:
        return []
    lines = []
    for cmd in COMMANDS.values():
        for entry in (cmd, *cmd.subcommands.values()):
            counts = entry.latency_counts
            if counts is not None:
                values = ",".join(
                    f"p{_percentile_label(p)}={latency_at_percentile(counts, p) / 1000:.3f}"
                    for p in config.latency_tracking_info_percentiles)
                lines.append(f"latency_percentiles_usec_{entry.fullname}:{values}")
    return lines


def _section_errorstats(server: Server) -> list[str]:
    return [f"errorstat_{code}:count={count}" for code, count in sorted(server.errorstats.items())]


def _section_keyspace(server: Server) -> list[str]:
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
_SECTIONS: list[tuple[str, bool, str, Callable[[Server], list[str]]]] = [
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
    ("cluster", True, "Cluster", lambda server: ["cluster_enabled:0"]),
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


def info_text(server: Server, args: list[bytes]) -> str:
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


# ---------------------------------------------------------------------------------------------
# TIME, LASTSAVE
# ---------------------------------------------------------------------------------------------


@command("time", arity=1, flags="loading stale fast", acl="@fast", group="server", since="2.6.0",
         summary="Returns the server time.", syntax="")
def time_(client: Session, args: list[bytes]) -> bytes:
    micros = now_us()  # a script's commands see the time it started, as in Redis
    return resp.array_of_bulks([b"%d" % (micros // 1_000_000), b"%d" % (micros % 1_000_000)])


@command("lastsave", arity=1, flags="loading stale fast", acl="@admin @fast @dangerous",
         group="server", summary="Returns the Unix timestamp of the last successful save to disk.",
         syntax="")
def lastsave(client: Session, args: list[bytes]) -> bytes:
    return resp.integer(client.server.last_save_time)


# ---------------------------------------------------------------------------------------------
# DEBUG
# ---------------------------------------------------------------------------------------------



_C_INTEGER_PREFIX = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_C_DOUBLE_PREFIX = re.compile(
    rb"[ \t\n\v\f\r]*([+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
    rb"|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


def c_atoi(arg: bytes) -> int:
    """C's ``atoi``: the leading integer of the argument, 0 when there is none."""
    found = _C_INTEGER_PREFIX.match(arg)
    return int(found.group(1)) if found else 0


def c_strtod(arg: bytes) -> float:
    """C's ``strtod`` without an end pointer: the leading number, 0.0 when there is none."""
    found = _C_DOUBLE_PREFIX.match(arg)
    return float(found.group(1)) if found else 0.0


def _debug_sleep(client: Session, args: list[bytes]) -> bytes:
    seconds = c_strtod(args[2])
    if seconds > 0 and seconds != float("inf"):
        time.sleep(seconds)  # blocks the whole server, which is the point of DEBUG SLEEP
    return resp.OK


def _debug_set_active_expire(client: Session, args: list[bytes]) -> bytes:
    client.server.keyspace.active_expire_enabled = bool(c_atoi(args[2]))
    return resp.OK


def _debug_set_disable_deny_scripts(client: Session, args: list[bytes]) -> bytes:
    """Let scripts run commands flagged ``noscript`` (Redis's test knob)."""
    client.server.scripting.deny_script_disabled = bool(c_atoi(args[2]))
    return resp.OK


def _string_encoding(value: object) -> str:
    if isinstance(value, bytes):
        if len(value) <= 20 and parse_int_or_none(value) is not None:
            return "int"
        return "embstr" if len(value) <= 44 else "raw"
    return "raw"


def parse_int_or_none(value: bytes) -> int | None:
    try:
        return parse_int(value)
    except CommandError:
        return None


def _serialized_length(value: object) -> int:
    """An estimate of the RDB size of a value (DEBUG OBJECT's serializedlength)."""
    if isinstance(value, bytes | bytearray):
        number = parse_int_or_none(bytes(value)) if len(value) <= 20 else None
        if number is not None and -(2**31) <= number < 2**31:
            return 2 if -128 <= number < 128 else 3 if -32768 <= number < 32768 else 5
        size = len(value)
        return size + (1 if size < 64 else 2 if size < 16384 else 5)
    try:
        return len(value)  # type: ignore[arg-type]
    except TypeError:
        return 1


def _debug_object(client: Session, args: list[bytes]) -> bytes:
    value = client.db.data.get(args[2])  # as Redis: an expired key not yet deleted is there
    if value is None:
        raise CommandError(NO_SUCH_KEY)
    encoder = ENCODINGS.get(type(value))
    encoding = encoder(value) if encoder is not None else _string_encoding(value)
    # The key's access field as it is (Redis's o->lru: LFU data under an LFU policy), read
    # without counting as an access.
    field = client.db.data.access(args[2]) or 0
    return resp.simple(
        f"Value at:0x{id(value):x} refcount:1 encoding:{encoding} "
        f"serializedlength:{_serialized_length(value)} lru:{field} "
        f"lru_seconds_idle:{client.db.idle_seconds(args[2])}"
    )


def _debug_log(client: Session, args: list[bytes]) -> bytes:
    client.server.log("warning", f"DEBUG LOG: {args[2].decode('utf-8', 'replace')}")
    return resp.OK


_PROTOCOL_REPLIES: dict[bytes, tuple[bytes, bytes]] = {
    # type: (RESP2 reply, RESP3 reply), as Redis's DEBUG PROTOCOL sends them
    b"string": (b"$11\r\nHello World\r\n", b"$11\r\nHello World\r\n"),
    b"integer": (b":12345\r\n", b":12345\r\n"),
    b"double": (b"$5\r\n3.141\r\n", b",3.141\r\n"),
    b"bignum": (
        b"$37\r\n1234567999999999999999999999999999999\r\n",
        b"(1234567999999999999999999999999999999\r\n",
    ),
    b"null": (b"$-1\r\n", b"_\r\n"),
    b"array": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
    b"set": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    b"map": (
        b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
        b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n",
    ),
    b"attrib": (
        b"$39\r\nSome real reply following the attribute\r\n",
        b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
        b"$39\r\nSome real reply following the attribute\r\n",
    ),
    b"push": (
        b"-ERR RESP2 is not supported by this command\r\n",
        b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n",
    ),
    b"verbatim": (
        b"$25\r\nThis is a verbatim\nstring\r\n",
        b"=29\r\ntxt:This is a verbatim\nstring\r\n",
    ),
    b"true": (b":1\r\n", b"#t\r\n"),
    b"false": (b":0\r\n", b"#f\r\n"),
}


def _debug_protocol(client: Session, args: list[bytes]) -> bytes:
    replies = _PROTOCOL_REPLIES.get(args[2].lower())
    if replies is None:
        raise CommandError(
            "ERR Wrong protocol type name. Please use one of the following: "
            "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"
        )
    if args[2].lower() == b"push" and client.protocol == 2:
        raise CommandError("ERR RESP2 is not supported by this command")
    return replies[0] if client.protocol == 2 else replies[1]


# name -> (exact argument count, handler)
_DEBUG_SUBCOMMANDS: dict[bytes, tuple[int, Callable[[Session, list[bytes]], bytes]]] = {
    b"sleep": (3, _debug_sleep),
    b"set-active-expire": (3, _debug_set_active_expire),
    b"set-disable-deny-scripts": (3, _debug_set_disable_deny_scripts),
    b"object": (3, _debug_object),
    b"log": (3, _debug_log),
    b"protocol": (3, _debug_protocol),
}

_DEBUG_HELP = [
    "LOG <message>",
    "    Write <message> to the server log.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SET-DISABLE-DENY-SCRIPTS <0|1>",
    "    Setting it to 1 allows scripts to run commands flagged noscript (such as",
    "    blocking ones, which then do not block).",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
]


@command("debug", arity=-2, flags=_ADMIN, acl=_ADMIN_ACL, group="server",
         summary="A container for debugging commands.", complexity="Depends on subcommand.",
         syntax="")
def debug(client: Session, args: list[bytes]) -> bytes:
    """One command whose first argument picks the action, as in Redis (not a container)."""
    if not protected_action_allowed(client.server.config.enable_debug_command, client):
        raise protected_command_error("DEBUG", "enable-debug-command")
    name = args[1].lower()
    if name == b"help" and len(args) == 2:
        return help_reply(args, _DEBUG_HELP)
    entry = _DEBUG_SUBCOMMANDS.get(name)
    if entry is None or entry[0] != len(args):
        raise subcommand_error(args, "DEBUG")
    return entry[1](client, args)


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
