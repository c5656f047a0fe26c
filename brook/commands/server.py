"""Server commands: CONFIG, DEBUG, SLOWLOG (first versions; see the issue notes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.args import parse_int
from brook.commands.registry import CommandError, command, container
from brook.config import PARAMETERS_BY_NAME, ConfigError
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.connection import Client

container("config", group="server", acl="@slow", since="2.0.0",
          summary="A container for server configuration commands.")


@command("config|get", arity=-3, flags="admin noscript loading stale", acl="@admin @slow @dangerous",
         since="2.0.0", summary="Returns the effective values of configuration parameters.",
         complexity="O(N) when N is the number of configuration parameters provided",
         syntax="parameter [parameter ...]")
def config_get(client: Client, args: list[bytes]) -> bytes:
    found: dict[str, str] = {}
    for pattern in args[2:]:
        found.update(client.server.config.matching(pattern.decode("utf-8", "replace")))
    return resp.encode(resp.Map(found), client.protocol)


@command("config|set", arity=-4, flags="admin noscript loading stale", acl="@admin @slow @dangerous",
         since="2.0.0", summary="Sets configuration parameters in-flight.",
         complexity="O(N) when N is the number of configuration parameters provided",
         syntax="parameter value [parameter value ...]")
def config_set(client: Client, args: list[bytes]) -> bytes:
    pairs = args[2:]
    if len(pairs) % 2:
        raise CommandError("ERR wrong number of arguments for 'config|set' command")
    config = client.server.config
    seen: set[str] = set()
    updates: list[tuple[str, str]] = []
    for i in range(0, len(pairs), 2):
        name = pairs[i].decode("utf-8", "replace").lower()
        param = PARAMETERS_BY_NAME.get(name)
        if param is None:
            raise CommandError(
                f"ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
            )
        if param.name in seen:
            raise CommandError(
                f"ERR CONFIG SET failed (possibly related to argument '{name}') - duplicate parameter"
            )
        seen.add(param.name)
        updates.append((name, pairs[i + 1].decode("utf-8", "replace")))
    # Validate everything before applying anything, so a failed CONFIG SET changes nothing.
    previous = {name: config.get(name) for name, _ in updates}
    try:
        for name, value in updates:
            config.set(name, value)
    except ConfigError as err:
        for old_name, old_value in previous.items():
            config.set(old_name, old_value, at_startup=True)
        raise CommandError(
            f"ERR CONFIG SET failed (possibly related to argument '{name}') - {err}"
        )
    return resp.OK


@command("config|resetstat", arity=2, flags="admin noscript loading stale",
         acl="@admin @slow @dangerous", since="2.0.0", summary="Resets the server's statistics.",
         syntax="")
def config_resetstat(client: Client, args: list[bytes]) -> bytes:
    client.server.reset_stats()
    return resp.OK


container("debug", arity=-2, group="server", acl="@admin @slow @dangerous", since="1.0.0",
          flags="admin noscript loading stale", summary="A container for debugging commands.")

_DEBUG_DISABLED = (
    'ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you '
    "can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server."
)


def _check_debug_allowed(client: Client) -> None:
    if client.server.config.enable_debug_command == "no":  # type: ignore[attr-defined]
        raise CommandError(_DEBUG_DISABLED)


@command("debug|set-active-expire", arity=3, flags="admin noscript loading stale",
         acl="@admin @slow @dangerous", summary="Enables or disables the active expire cycle.",
         syntax="0|1")
def debug_set_active_expire(client: Client, args: list[bytes]) -> bytes:
    _check_debug_allowed(client)
    client.server.keyspace.active_expire_enabled = bool(parse_int(args[2]))
    return resp.OK


container("slowlog", group="server", acl="@slow", since="2.2.12",
          summary="A container for slow log commands.")


@command("slowlog|reset", arity=2, flags="admin loading stale", acl="@admin @slow @dangerous",
         since="2.2.12", summary="Clears all entries from the slow log.", syntax="")
def slowlog_reset(client: Client, args: list[bytes]) -> bytes:
    client.server.slowlog.clear()
    return resp.OK
