"""Generate ``docs/commands.md`` from the command declarations: ``python -m brook.docs``.

The same declarations feed COMMAND INFO/DOCS, so the documentation cannot drift from the code
(a test compares the committed file with this output).
"""

from __future__ import annotations

import sys

from brook import commands
from brook.commands.registry import COMMANDS, Command


def render_commands_markdown() -> str:
    """Every supported command with its syntax, grouped as Redis groups them."""
    commands.load_all()
    groups: dict[str, list[Command]] = {}
    for cmd in COMMANDS.values():
        groups.setdefault(cmd.group, []).append(cmd)
    lines = [
        "# Supported commands",
        "",
        "Generated from the command declarations by `make docs` (`python -m brook.docs`); do not",
        "edit by hand. Syntax follows the Redis documentation: `[x]` optional, `a | b`",
        "alternatives, `...` repetition.",
        "",
    ]
    for group in sorted(groups):
        lines.append(f"## {group}")
        lines.append("")
        lines.append("| command | syntax | since | summary |")
        lines.append("|---|---|---|---|")
        for cmd in sorted(groups[group], key=lambda c: c.name):
            entries = [cmd] if cmd.handler is not None or not cmd.subcommands else []
            entries += sorted(cmd.subcommands.values(), key=lambda c: c.name)
            for entry in entries:
                shown = entry.fullname.replace("|", " ").upper()
                syntax = f"{shown} {entry.syntax}".strip().replace("|", "\\|")
                lines.append(f"| {shown} | `{syntax}` | {entry.since} | {entry.summary} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render_commands_markdown())
