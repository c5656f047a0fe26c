"""``brook-server [config-file] [--name value ...]``, exactly like ``redis-server``."""

from __future__ import annotations

import asyncio
import sys

from brook.config import BROOK_VERSION, VERSION, Config, ConfigError, apply_directive, parse_arguments, read_config_file

USAGE = """Usage: brook-server [/path/to/brook.conf] [options]
       brook-server -v or --version
       brook-server -h or --help

Examples:
       brook-server (run the server with default config)
       brook-server /etc/brook/6379.conf
       brook-server --port 7777
       brook-server /etc/myredis.conf --loglevel verbose
"""


def _fatal(line_number: int | None, line: str, reason: str) -> None:
    sys.stderr.write(f"\n*** FATAL CONFIG FILE ERROR (Brook {BROOK_VERSION}) ***\n")
    if line_number is not None:
        sys.stderr.write(f"Reading the configuration file, at line {line_number}\n")
    sys.stderr.write(f">>> '{line}'\n{reason}\n")
    sys.exit(1)


def build_config(argv: list[str]) -> Config:
    """Defaults, then the file, then command-line flags (later ones win, as in Redis)."""
    config = Config()
    try:
        config_file, directives = parse_arguments(argv)
    except ConfigError as err:
        _fatal(None, " ".join(argv), str(err))
        raise
    if config_file is not None:
        config.config_file = config_file
        try:
            entries = read_config_file(config_file)
        except OSError as err:
            sys.stderr.write(f"Fatal error, can't open config file '{config_file}': {err.strerror}\n")
            sys.exit(1)
        except ConfigError as err:
            _fatal(None, config_file, str(err))
            raise
        for number, line, name, args in entries:
            try:
                apply_directive(config, name, args)
            except ConfigError as err:
                _fatal(number, line, str(err))
    for name, args in directives:
        try:
            apply_directive(config, name, args)
        except ConfigError as err:
            _fatal(None, f"{name} {' '.join(args)}".strip(), str(err))
    return config


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-v", "--version"):
        print(f"Brook server v={BROOK_VERSION} redis-compat={VERSION}")
        return
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return
    config = build_config(args)

    import uvloop  # imported late: --help and config errors need no event loop

    from brook.server import Server

    server = Server(config)
    try:
        uvloop.run(server.serve_forever())
    except OSError as err:
        server.log("warning", str(err))
        sys.exit(1)


if __name__ == "__main__":
    main()
