"""What several command families share and none of them owns: the reply of every ``X HELP``,
the check of the commands an ``enable-*`` setting protects (DEBUG, MODULE LOAD, protected
configs in CONFIG SET) and the rule for client names (HELLO SETNAME, CLIENT SETNAME).

It registers no command. It imports only the command table (registry) and the protocol, so
that any family may import it without importing another family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.commands.registry import CommandError, text
from brook.protocol import resp

if TYPE_CHECKING:
    from brook.session import Session

_HELP_FOOTER = ("HELP", "    Print this help.")
BAD_CLIENT_NAME = "ERR Client names cannot contain spaces, newlines or special characters."


def help_reply(args: list[bytes], lines: list[str]) -> bytes:
    """The reply of every ``X HELP`` (Redis's addReplyHelp): a heading naming the command as
    the client typed it, upper-cased, the command's own lines, and the HELP entry."""
    heading = f"{text(args[0]).upper()} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    return resp.array([resp.simple(line) for line in (heading, *lines, *_HELP_FOOTER)])


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


def check_client_name(name: bytes) -> None:
    """Names are printable ASCII without spaces, so CLIENT LIST stays parseable."""
    for byte in name:
        if byte < 0x21 or byte > 0x7E:
            raise CommandError(BAD_CLIENT_NAME)
