"""CONFIG: GET, SET, RESETSTAT, REWRITE and HELP, over the parameter table of brook.config.

The parameters' meaning, parsing and apply steps live in brook.config; this module only turns
requests into calls on it and its errors into Redis's replies. It imports the command table
(registry), the shared helpers (common), brook.config and the protocol: no other family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.common import help_reply, protected_action_allowed
from brook.commands.registry import SYNTAX_ERROR, CommandError, command, container
from brook.config.errors import ConfigError, ConfigSetError
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

_ADMIN = "admin noscript loading stale"
_ADMIN_ACL = "@admin @slow @dangerous"

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

