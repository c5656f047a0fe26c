"""One virtualenv per job framework, shared by the framework tests and ``bench.frameworks``.

    python -m bench.envs [NAME ...]   # make (or check) the environments, print their versions

Every framework gets ``.bench-envs/<name>/`` with its newest release and whatever its own
requirements resolve to, redis-py included, and nothing of the project's: in one environment
for all of them, arq's ``redis<6`` would hold redis-py back for every framework (and for the
rest of the suite), and kombu 5.7, which needs redis-py >= 6.1, could not be installed at
all. Where a framework declares its Redis dependencies as an extra (``celery[redis]``,
``dramatiq[redis]``, ``saq[redis]``, ``huey[redis]``), the extra is what is asked for, so
its own bounds on redis-py are the only ones.

An environment is made on first use and reused while its stamp names the same requirements;
delete the directory (or all of ``.bench-envs/``) for newer releases. A lock file per
environment lets two processes (two test runs, a test run and the bench) ask for the same
one at once: the second waits and then reuses what the first made. The stamp also records
what pip resolved (``pip freeze``), so that a run can say which releases it met.

Only the standard library is imported here: the framework tests import this module in the
project's environment, the bench in its own.
"""

from __future__ import annotations

import argparse
import fcntl
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV_ROOT = ROOT / ".bench-envs"
INSTALL_TIMEOUT = 900  # seconds for one environment's pip install (downloads on a clean clone)

# What each environment installs: the framework as its users do, with no version bounds.
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "rq": ("rq",),
    "celery": ("celery[redis]",),
    "dramatiq": ("dramatiq[redis]",),
    "arq": ("arq",),
    "bullmq": ("bullmq",),
    # saq 0.26 imports typing_extensions without declaring it
    "saq": ("saq[redis]", "typing_extensions"),
    "huey": ("huey[redis]",),
    "taskiq": ("taskiq", "taskiq-redis"),
}

# Whose versions a run reports: the framework's own distributions and the redis-py it got.
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "rq": ("rq", "redis"),
    "celery": ("celery", "kombu", "redis"),
    "dramatiq": ("dramatiq", "redis"),
    "arq": ("arq", "redis"),
    "bullmq": ("bullmq", "redis"),
    "saq": ("saq", "redis"),
    "huey": ("huey", "redis"),
    "taskiq": ("taskiq", "taskiq-redis", "redis"),
}

class EnvFailure(subprocess.SubprocessError):
    """An environment could not be made: the message ends with what pip said."""


REQUIREMENTS_STAMP = ".requirements"  # the requirements the environment was made with
FREEZE_STAMP = ".freeze"  # pip freeze of the environment once made


def _wanted(name: str, requirements: Sequence[str] | None) -> str:
    return "\n".join(REQUIREMENTS[name] if requirements is None else requirements) + "\n"


def is_current(name: str, requirements: Sequence[str] | None = None,
               root: Path = ENV_ROOT) -> bool:
    """Whether ``root/<name>/`` is made, with these requirements (no need to wait for it)."""
    env = root / name
    stamp = env / REQUIREMENTS_STAMP
    return ((env / "bin" / "python").exists() and (env / FREEZE_STAMP).exists()
            and stamp.exists() and stamp.read_text() == _wanted(name, requirements))


def _step(command: list[str], timeout: float | None = None) -> str:
    """Run one step of making an environment; its output, or EnvFailure with its end."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise EnvFailure(f"{' '.join(command)}: no end after {timeout:.0f} s") from exc
    if done.returncode != 0:
        said = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
        raise EnvFailure(f"{' '.join(command)} exited with {done.returncode}:\n{said}")
    return done.stdout


def framework_python(name: str, requirements: Sequence[str] | None = None,
                     root: Path = ENV_ROOT) -> Path:
    """The python of ``root/<name>/``, made first if its stamp does not name
    ``requirements`` (by default the framework's entry in ``REQUIREMENTS``)."""
    wanted = _wanted(name, requirements)
    env = root / name
    python = env / "bin" / "python"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{name}.lock", "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if is_current(name, requirements, root):
            return python
        print(f"{name}: creating {env.relative_to(root.parent)} with "
              f"{', '.join(wanted.split())}", file=sys.stderr, flush=True)
        (env / REQUIREMENTS_STAMP).unlink(missing_ok=True)
        _step([sys.executable, "-m", "venv", "--clear", str(env)])
        _step([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               *wanted.split()], timeout=INSTALL_TIMEOUT)
        freeze = _step([str(python), "-m", "pip", "freeze", "--all"])
        (env / FREEZE_STAMP).write_text(freeze)
        (env / REQUIREMENTS_STAMP).write_text(wanted)  # last: a half-made env is remade
    return python


def prepare(names: Iterable[str], root: Path = ENV_ROOT) -> dict[str, Path | BaseException]:
    """Each framework's python, the environments made side by side (pip mostly waits on
    downloads); where one could not be made, the error instead."""
    names = list(dict.fromkeys(names))

    def make(name: str) -> Path | BaseException:
        try:
            return framework_python(name, root=root)
        except (subprocess.SubprocessError, OSError) as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(len(names), 1)) as pool:
        return dict(zip(names, pool.map(make, names), strict=True))


def _canonical(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def versions(name: str, root: Path = ENV_ROOT) -> str:
    """``"celery 5.7.0, kombu 5.7.0, redis 8.1.0"``: the releases the environment holds
    (from its freeze stamp) of the distributions a run reports."""
    pinned = {}
    for line in (root / name / FREEZE_STAMP).read_text().splitlines():
        distribution, equals, version = line.partition("==")
        if equals:
            pinned[_canonical(distribution)] = version.strip()
    return ", ".join(f"{dist} {pinned.get(_canonical(dist), '?')}"
                     for dist in DISTRIBUTIONS[name])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", default=list(REQUIREMENTS),
                        help="frameworks, from: " + ",".join(REQUIREMENTS))
    options = parser.parse_args(argv)
    if unknown := set(options.names) - set(REQUIREMENTS):
        sys.exit(f"unknown frameworks: {', '.join(sorted(unknown))}")
    failed = False
    for name, made in prepare(options.names).items():
        if isinstance(made, BaseException):
            failed = True
            print(f"{name}: not made: {made}")
        else:
            print(f"{name}: {versions(name)}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
