"""``brook-server [config-file] [--name value ...]``, exactly like ``redis-server``.

The command-line options are turned into configuration lines appended after the file, as Redis
does, so an error in either is reported the same way: Redis's FATAL CONFIG FILE ERROR block on
stderr, naming the line, and exit status 1.
"""

from __future__ import annotations

import os
import sys
import time

import uvloop

from brook.config.file import FatalConfigError, Loader, options_text
from brook.config.store import Config
from brook.server import Server
from brook.version import BROOK_VERSION, VERSION

USAGE = """Usage: ./brook-server [/path/to/brook.conf] [options] [-]
       ./brook-server - (read config from stdin)
       ./brook-server -v or --version
       ./brook-server -h or --help

Examples:
       ./brook-server (run the server with default conf)
       echo 'maxmemory 128mb' | ./brook-server -
       ./brook-server /etc/brook/6379.conf
       ./brook-server --port 7777
       ./brook-server /etc/mybrook.conf --loglevel verbose -
       ./brook-server /etc/mybrook.conf --loglevel verbose

Every redis.conf directive Brook knows may be given as --name value.
"""


def early_log(message: str) -> None:
    """A log line written before the server exists (role ``C``, as Redis's start-up lines)."""
    now = time.time()
    stamp = time.strftime("%d %b %Y %H:%M:%S", time.localtime(now))
    sys.stdout.write(f"{os.getpid()}:C {stamp}.{int(now * 1000) % 1000:03d} # {message}\n")
    sys.stdout.flush()


def _fatal(err: FatalConfigError) -> None:
    sys.stderr.write(f"\n*** FATAL CONFIG FILE ERROR (Brook {BROOK_VERSION}) ***\n")
    sys.stderr.write(f"Reading the configuration file, at line {err.line_number}\n")
    sys.stderr.write(f">>> '{err.line}'\n{err.reason}\n")
    sys.stderr.flush()
    sys.exit(1)


def build_config(argv: list[str]) -> Config:
    """Defaults, then the file (or stdin), then command-line options: later lines win."""
    config = Config()
    options = argv
    text = ""
    if argv and (not argv[0].startswith("-") or argv[0] == "-"):
        source, options = argv[0], argv[1:]
        if source == "-":
            text = sys.stdin.read()
        else:
            config.config_file = os.path.abspath(source)
            try:
                with open(source, encoding="utf-8", errors="surrogateescape") as handle:
                    text = handle.read()
            except OSError as err:
                early_log(f"Fatal error, can't open config file '{source}': {err.strerror}")
                sys.exit(1)
    if options and options[-1] == "-":
        options = options[:-1]
        text += sys.stdin.read()
    if options:
        text += "\n" + options_text(options)
    try:
        Loader(config).load_text(text)
    except FatalConfigError as err:
        _fatal(err)
    return config


def daemonize() -> None:
    """Detach from the terminal like Redis's ``daemonize yes`` (the parent exits at once)."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-v", "--version"):
        print(f"Brook server v={BROOK_VERSION} redis-compat={VERSION} bits=64")
        return
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return
    config = build_config(args)
    if config.daemonize:
        daemonize()

    server = Server(config)
    try:
        uvloop.run(server.serve_forever())
    except OSError as err:
        server.log("warning", str(err))
        sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    main()
