"""MODULE: Brook loads no Redis modules (they are C libraries built against Redis's own
internals). The command is declared as Redis declares it, so that clients and tools that ask
which modules a server has (``MODULE LIST``, as client libraries and consoles do at connect)
get Redis's answer for a server with none, and a load gets Redis's refusal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.commands.common import help_reply, protected_action_allowed, protected_command_error
from brook.commands.registry import CommandError, command, container, text
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

_LOAD_FAILED: Final = "ERR Error loading the extension. Please check the server logs."
_ADMIN: Final = "admin noscript no_async_loading protected"
_ADMIN_ACL: Final = "@admin @slow @dangerous"
_HELP: Final = [
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and "
    "optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
]

container("module", group="server", acl="@slow", since="4.0.0",
          summary="A container for module commands.")


@command("module|help", arity=2, flags="loading stale", acl="@slow", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def module_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _HELP)


@command("module|list", arity=2, flags="admin noscript", acl=_ADMIN_ACL, since="4.0.0",
         summary="Returns all loaded modules.",
         complexity="O(N) where N is the number of loaded modules.", syntax="")
def module_list(client: Session, args: list[bytes]) -> bytes:
    return resp.array([])


@command("module|load", arity=-3, flags=_ADMIN, acl=_ADMIN_ACL, since="4.0.0",
         summary="Loads a module.", complexity="O(1)", syntax="path [arg [arg ...]]")
def module_load(client: Session, args: list[bytes]) -> bytes:
    return _refuse_load(client, args[2])


@command("module|loadex", arity=-3, flags=_ADMIN, acl=_ADMIN_ACL, since="7.0.0",
         summary="Loads a module using extended parameters.", complexity="O(1)",
         syntax="path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]")
def module_loadex(client: Session, args: list[bytes]) -> bytes:
    return _refuse_load(client, args[2])


@command("module|unload", arity=3, flags=_ADMIN, acl=_ADMIN_ACL, since="4.0.0",
         summary="Unloads a module.", complexity="O(1)", syntax="name")
def module_unload(client: Session, args: list[bytes]) -> bytes:
    _check_allowed(client)
    message = "no such module with that name"
    client.server.log("warning", f"Error unloading module {text(args[2])}: {message}")
    raise CommandError(f"ERR Error unloading module: {message}")


def _refuse_load(client: Session, path: bytes) -> bytes:
    """What Redis answers when the library cannot be loaded, with the reason in the log."""
    _check_allowed(client)
    client.server.log("warning", f"Module {text(path)} failed to load: Brook does not load "
                      "Redis modules")
    raise CommandError(_LOAD_FAILED)


def _check_allowed(client: Session) -> None:
    """enable-module-command (default no) guards LOAD, LOADEX and UNLOAD, as in Redis."""
    if not protected_action_allowed(client.server.config.enable_module_command, client):
        raise protected_command_error("MODULE", "enable-module-command")
