"""``brook-check-aof [--fix] <file>``: verify an append-only file, repair a truncated tail.

Like ``redis-check-aof``: the file is scanned as RESP arrays of bulk strings; a file that ends
inside a command (a crash mid-write) or inside an unfinished MULTI can be cut back to the last
complete command (or the last complete transaction) with ``--fix``, after confirmation unless
``--yes`` is given. Damage in the middle is reported with its offset and never "fixed": cutting
there would silently drop everything after it.

Exit status: 0 when the file is valid (or was fixed), 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys

from brook.protocol.framing import valid_prefix

__all__ = ["check", "main", "main_exit"]


def _open_multi_start(data: bytes, valid: int) -> int | None:
    """The offset of a MULTI left open at the end of ``data[:valid]``, or None."""
    pos = 0
    open_at: int | None = None
    while pos < valid:
        commands, end, _reason = valid_prefix(data, 1, pos)
        if not commands:
            break
        name = _command_name(data, pos)
        if name == b"multi":
            open_at = pos
        elif name == b"exec":
            open_at = None
        pos = end
    return open_at


def _command_name(data: bytes, pos: int) -> bytes:
    header_end = data.index(b"\r\n", pos)
    bulk_end = data.index(b"\r\n", header_end + 2)
    start = bulk_end + 2
    size = int(data[header_end + 3:bulk_end])
    return data[start:start + size].lower()


def check(path: str) -> tuple[int, int, str | None]:
    """(commands, valid bytes, problem): ``problem`` is None for a valid file, ``"truncated"``
    for a fixable tail, otherwise a description of the corruption."""
    with open(path, "rb") as handle:
        data = handle.read()
    commands, valid, reason = valid_prefix(data)
    if reason is None or reason == "truncated":
        multi = _open_multi_start(data, valid)
        if multi is not None:
            return commands, multi, "truncated"
    return commands, valid, reason


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="brook-check-aof", description="Check an append-only file; --fix cuts a "
        "truncated tail back to the last complete command.")
    parser.add_argument("--fix", action="store_true", help="truncate a damaged tail")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask before fixing")
    parser.add_argument("file")
    options = parser.parse_args(argv)
    try:
        size = os.path.getsize(options.file)
        commands, valid, problem = check(options.file)
    except OSError as err:
        print(f"Cannot open file {options.file}: {err.strerror}", file=sys.stderr)
        return 1
    if problem is None:
        print(f"AOF analyzed: filename={options.file}, size={size}, ok_up_to={valid}, "
              f"ok_up_to_line={commands}, diff={size - valid}")
        print("AOF is valid")
        return 0
    print(f"AOF analyzed: filename={options.file}, size={size}, ok_up_to={valid}, "
          f"ok_up_to_line={commands}, diff={size - valid}")
    if problem != "truncated":
        print(f"AOF {options.file} is corrupted at offset {valid}: {problem}. It is not a "
              "truncated tail; brook-check-aof does not cut it (everything after would be "
              "lost). Restore a backup or repair the file by hand.")
        return 1
    if not options.fix:
        print(f"AOF {options.file} is not valid. Use the --fix option to try fixing it.")
        return 1
    if not options.yes:
        answer = input(f"This will shrink the AOF {options.file} from {size} bytes, with "
                       f"{size - valid} bytes, to {valid} bytes\nContinue? [y/N]: ")
        if not answer.lower().startswith("y"):
            print("Aborting...")
            return 1
    with open(options.file, "r+b") as handle:
        handle.truncate(valid)
        os.fsync(handle.fileno())
    print("Successfully truncated AOF " + options.file)
    return 0


def main_exit() -> None:
    """The console-script entry point: the exit status is :func:`main`'s result."""
    sys.exit(main())


if __name__ == "__main__":
    main_exit()
