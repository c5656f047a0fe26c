"""The differential RESP fuzzer's long run: one seeded stream of frames to Brook and to redis-server.

    python -m bench.fuzz [--frames 1000000] [--seed N] [--redis PATH] [--minutes M]
                         [--exclude known|FEATURE,...] [--report FILE] [--minimise N]

Starts its own Brook and redis-server (tests/conftest.py's ``start_brook``/``start_redis``;
``--redis`` picks the binary as ``BROOK_PARITY_REDIS`` does), then runs sessions of
tests/protocol/resp_fuzz.py's generator until ``--frames`` frames (or ``--minutes``) have gone by.
Every session starts from FLUSHALL on both servers and ends with a liveness check; a server
that stops answering is counted (crash: its process is gone; hang: it is there but silent),
recorded and restarted. A differing session whose bytes or writes hold the trigger of an open
finding (tests/protocol/resp_fuzz.py ``explain``) is counted under those findings, and the first one of
each finding alone is minimised as an example; any other difference is new: those are grouped by
their first differing replies (numbers and odd bytes masked) and the first ``--minimise`` groups
are minimised. Reproductions go to ``--report`` (default fuzz-report.txt) as they are found.
Prints progress every 30 s and a summary: frames, frames/s, sessions, differences (explained by
open findings, new), crashes, hangs, normalisations applied.

``--exclude known`` leaves out the generator features of the open findings (the CI skip list in
tests/protocol/resp_fuzz.py; empty while every finding is fixed); without it every feature runs.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tests.resp_fuzz import (
    FEATURES,
    SKIPPED_FEATURES,
    DifferentialRunner,
    Endpoint,
    FrameGenerator,
    ServerDown,
    Session,
    Verdict,
    explain,
    minimise,
    signature,
)

from tests.conftest import ServerProcess, start_brook, start_redis

PROGRESS_EVERY = 30.0  # seconds


@dataclass
class Group:
    """Sessions whose first differing replies look alike: probably one cause."""

    number: int
    first: int  # session index
    count: int = 0
    features: set[str] = field(default_factory=set)


@dataclass
class Tally:
    frames: int = 0
    sessions: int = 0
    differing: int = 0
    explained: collections.Counter[str] = field(default_factory=collections.Counter)
    examples: set[str] = field(default_factory=set)  # findings with a minimised example
    where: dict[str, list[int]] = field(default_factory=dict)  # first sessions of each
    crashes: int = 0
    hangs: int = 0
    normalised: collections.Counter[str] = field(default_factory=collections.Counter)
    groups: dict[str, Group] = field(default_factory=dict)


class Servers:
    """Brook and Redis for the run; restarted when one stops answering."""

    def __init__(self, workdir: Path, hang_timeout: float) -> None:
        self.workdir = workdir
        self.hang_timeout = hang_timeout
        self.procs = {"brook": start_brook(workdir), "redis": start_redis(workdir)}
        self.runner = DifferentialRunner(self.procs["brook"].port, self.procs["redis"].port,
                                         hang_timeout=hang_timeout)

    def version(self) -> str:
        return ".".join(map(str, self.procs["redis"].version))

    def restart(self, name: str) -> str:
        """Stop (kill if need be) and start ``name`` again; "crash" if it had exited."""
        proc = self.procs[name]
        kind = "crash" if proc.process.poll() is not None else "hang"
        proc.process.kill()
        proc.process.wait()
        self.runner.endpoints[name].close()
        fresh: ServerProcess = start_brook(self.workdir) if name == "brook" else start_redis(
            self.workdir)
        self.procs[name] = fresh
        self.runner.endpoints[name] = Endpoint(name, fresh.port, self.hang_timeout)
        return kind

    def stop(self) -> None:
        self.runner.close()
        for proc in self.procs.values():
            proc.stop()


def run(args: argparse.Namespace, report: TextIO) -> Tally:
    tally = Tally()
    exclude = _excluded(args.exclude)
    generator = FrameGenerator(args.seed, exclude=exclude)
    with tempfile.TemporaryDirectory(prefix="brook-fuzz-") as tmp:
        servers = Servers(Path(tmp), args.hang_timeout)
        print(f"seed {args.seed}, Redis {servers.version()}, excluded: "
              f"{', '.join(sorted(exclude)) or 'nothing'}", flush=True)
        report.write(f"# bench.fuzz: seed {args.seed}, Redis {servers.version()}, excluded: "
                     f"{', '.join(sorted(exclude)) or 'nothing'}\n\n")
        started = last = time.monotonic()
        deadline = started + args.minutes * 60 if args.minutes else float("inf")
        index = 0
        try:
            while tally.frames < args.frames and time.monotonic() < deadline:
                session = generator.session(index)
                _one_session(servers, session, index, tally, args, report)
                index += 1
                now = time.monotonic()
                if now - last >= PROGRESS_EVERY:
                    last = now
                    print(_line(tally, now - started), flush=True)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: stop here, still summarise
            print(f"interrupted in session {index}", flush=True)
        finally:
            servers.stop()
        tally_time = time.monotonic() - started
    print("done: " + _line(tally, tally_time))
    print(f"wall time {tally_time:.0f} s; normalised replies: "
          f"{dict(tally.normalised) or 'none'}; sentinels neither server answered: "
          f"{servers.runner.unanswered_sentinels}")
    print(f"differing sessions explained by open findings: {dict(tally.explained) or 'none'}")
    report.write("# explained by open findings (count: first sessions)\n" + "".join(
        f"{key}: {tally.explained[key]}: {firsts}\n" for key, firsts in tally.where.items()))
    for sig, group in tally.groups.items():
        print(f"  new D{group.number}: {group.count} sessions, first {group.first}, features "
              f"{', '.join(sorted(group.features))}: {sig[:150]}")
    return tally


def _one_session(servers: Servers, session: Session, index: int, tally: Tally,
                 args: argparse.Namespace, report: TextIO) -> None:
    tally.frames += len(session.frames)
    tally.sessions += 1
    try:
        verdict = servers.runner.run(session)
    except ServerDown as down:  # not answering before the session: restart, count no result
        for name in str(down).split(", "):
            servers.restart(name)
        return
    tally.normalised.update(verdict.normalised)
    hung = {name for name, fate in (("brook", verdict.brook.fate), ("redis", verdict.redis.fate))
            if fate == "hang"}
    for name in sorted(hung | set(verdict.down)):
        kind = servers.restart(name)
        if kind == "crash":
            tally.crashes += 1
        else:
            tally.hangs += 1
        report.write(f"## {kind} of {name} in session {index}\nwrites = {session.chunks()!r}\n\n")
        report.flush()
    if verdict.same:
        return
    tally.differing += 1
    known = explain(session)
    if known:
        key = "+".join(sorted(known))
        tally.explained[key] += 1
        firsts = tally.where.setdefault(key, [])
        if len(firsts) < 20:
            firsts.append(index)
        if len(known) == 1 and not known <= tally.examples:
            tally.examples |= known
            _write_minimal(servers, session, index, f"example of {min(known)}", verdict, report)
        return
    sig = signature(verdict)
    group = tally.groups.get(sig)
    if group is None:
        group = tally.groups[sig] = Group(len(tally.groups) + 1, index)
        if group.number <= args.minimise:
            _write_minimal(servers, session, index, f"new D{group.number}", verdict, report)
    group.count += 1
    group.features |= session.features


def _write_minimal(servers: Servers, session: Session, index: int, title: str,
                   verdict: Verdict, report: TextIO) -> None:
    """Minimise the session and write the reproduction (or why there is none)."""
    try:
        units, joined = minimise(servers.runner, session.chunks(), [f for _, f in session.frames])
        again = servers.runner.run_chunks([b"".join(units)] if joined else units,
                                          pause=not joined, pause_seconds=0.01)
    except ServerDown:
        return
    report.write(f"## {title}: session {index}, features "
                 f"{', '.join(sorted(session.features))}\n{verdict.detail[:600]}\n")
    if again.same:
        report.write("not reproduced after minimising (depends on timing)\n"
                     f"writes = {session.chunks()!r}\n\n")
    else:
        report.write(f"minimal ({'one write' if joined else 'separate writes'}): {units!r}\n"
                     f"brook ({again.brook.fate}): {again.brook.data[:1000]!r}\n"
                     f"redis ({again.redis.fate}): {again.redis.data[:1000]!r}\n\n")
    report.flush()


def _excluded(option: str) -> set[str]:
    if not option:
        return set()
    if option == "known":
        return set(SKIPPED_FEATURES)
    chosen = {name.strip() for name in option.split(",") if name.strip()}
    unknown = chosen - set(FEATURES)
    if unknown:
        sys.exit(f"unknown features {sorted(unknown)}; features: {', '.join(FEATURES)}")
    return chosen


def _line(tally: Tally, elapsed: float) -> str:
    new = tally.differing - sum(tally.explained.values())
    return (f"{tally.frames} frames, {tally.frames / max(elapsed, 1e-9):.0f} frames/s, "
            f"{tally.sessions} sessions, {tally.differing} differing sessions ({new} new, in "
            f"{len(tally.groups)} kinds), {tally.crashes} crashes, {tally.hangs} hangs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--redis", help="the redis-server binary (default: PATH's)")
    parser.add_argument("--minutes", type=float, default=0, help="stop after this long too")
    parser.add_argument("--exclude", default="", help="'known' or a comma-separated feature list")
    parser.add_argument("--report", default="fuzz-report.txt")
    parser.add_argument("--minimise", type=int, default=20,
                        help="how many kinds of difference to minimise")
    parser.add_argument("--hang-timeout", type=float, default=10.0)
    args = parser.parse_args(argv)
    if args.redis:
        os.environ["BROOK_PARITY_REDIS"] = args.redis  # start_redis reads it
    # SIGTERM ends the run as Ctrl-C does: servers stopped, temporary directory gone, summary.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with open(args.report, "w") as report:
        tally = run(args, report)
    print(f"report: {args.report}")
    new = tally.differing - sum(tally.explained.values())
    return 1 if new or tally.crashes or tally.hangs else 0


if __name__ == "__main__":
    sys.exit(main())
