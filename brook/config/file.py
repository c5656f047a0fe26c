"""Start-up configuration: a redis.conf-style file and ``--name value`` flags applied to a
:class:`~brook.config.store.Config` with Redis's start-up rules (``include``, ``user`` lines,
several ``save`` lines adding up, ``dir`` changing directory at once), and the FATAL CONFIG
FILE ERROR a bad line is.

May import the modules of :mod:`brook.config` and the request parser's line splitter. Runs
once, before the server exists, so it is not compiled.
"""

from __future__ import annotations

import os

from brook.config.errors import ConfigError
from brook.config.parameters import lookup
from brook.config.store import Config
from brook.config.values import parse_save, quote
from brook.protocol.requests import split_inline_args


class FatalConfigError(Exception):
    """A start-up configuration error, reported as Redis's FATAL CONFIG FILE ERROR block."""

    def __init__(self, line_number: int, line: str, reason: str) -> None:
        super().__init__(reason)
        self.line_number = line_number
        self.line = line
        self.reason = reason


def options_text(options: list[str]) -> str:
    """The command-line options as Redis turns them into config lines (main() in server.c):
    ``--port 6380 --save 900 1`` becomes ``port "6380"\\nsave "900" "1"``."""
    text = ""
    has_value = True
    for position, arg in enumerate(options):
        if has_value and arg.startswith("--"):
            if text:
                text += "\n"
            text += arg[2:] + " "
            if len(arg.split()) == 1:
                has_value = False
                following = options[position + 1] if position + 1 < len(options) else None
                if arg.lower() == "--save" and (following is None or following.startswith("--")):
                    # "--save" alone (or followed by another option) means: no save points.
                    text += '""'
                    has_value = True
            else:
                has_value = True
        else:
            text += quote(arg) + " "
            has_value = True
    return text


class Loader:
    """Applies configuration text line by line with Redis's start-up rules."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.save_seen = False  # several "save" lines add up; the first one replaces the default

    def load_file(self, path: str) -> None:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            self.load_text(handle.read())

    def load_text(self, text: str) -> None:
        for number, raw in enumerate(text.split("\n"), start=1):
            line = raw.strip(" \t\r\n")
            if not line or line.startswith("#"):
                continue
            words = split_inline_args(line.encode("utf-8", "surrogateescape"))
            if words is None:
                raise FatalConfigError(number, line, "Unbalanced quotes in configuration line")
            if not words:
                continue
            args = [w.decode("utf-8", "surrogateescape") for w in words]
            try:
                self.apply(args[0], args[1:])
            except ConfigError as err:
                raise FatalConfigError(number, line, str(err))

    def apply(self, name: str, args: list[str]) -> None:
        lowered = name.lower()
        if lowered == "include" and len(args) == 1:
            try:
                self.load_file(args[0])
            except OSError as err:
                raise ConfigError(f"Fatal error, can't open config file '{args[0]}': {err.strerror}")
            return
        if lowered == "user" and args:
            if any(line[0] == args[0] for line in self.config.user_lines):
                raise ConfigError(f"Error in user declaration '{args[0]}': Duplicate user found. "
                                  "A user can only be defined once in config files")
            self.config.user_lines.append(args)
            return
        param = lookup(lowered)
        if param is None:
            raise ConfigError("Bad directive or wrong number of arguments")
        if not param.multi_arg and len(args) != 1:
            raise ConfigError("wrong number of arguments")
        text = " ".join(args)
        if param.name == "save":
            points = parse_save(text, None)
            self.config.save = (self.config.save if self.save_seen else []) + points
            self.save_seen = True
            return
        self.config.set(param.name, text, at_startup=True)
        if param.name == "dir":
            try:
                os.chdir(self.config.dir)
            except OSError as err:
                raise ConfigError(f"Can't chdir to '{self.config.dir}': {err.strerror}")
