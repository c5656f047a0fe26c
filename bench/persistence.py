"""Durability benchmarks, Brook and Redis side by side in one run.

    python -m bench.persistence [--repeat 3] [--requests 500000] [--entries 1000000]

1. ``XADD s * field value`` under redis-benchmark at ``-P 16`` (50 clients), on fresh servers:
   Brook without AOF, Brook with ``appendonly yes, appendfsync everysec``, Redis with the same
   AOF settings (and Redis without, for reference). Alternating, medians of ``--repeat`` runs.
   Targets: Brook AOF ≥ 0.4× Redis AOF, and Brook AOF ≥ 0.8× Brook without AOF. Both with
   ``appendfsync always`` too, for information.
2. Start-up time with ``--entries`` stream entries (three fields each, the readings shape of
   the other stream benchmarks): from the AOF and from the snapshot (Redis: its RDB), measured
   from the process start to the first reply that is not ``-LOADING``, minus the same time for
   an empty dataset (the interpreter's own start-up).
3. The snapshot formats (``--skip-formats`` to leave out): ``--entries`` stream entries, and
   as many string keys, saved (SAVE, timed at the client) and loaded at start-up by Brook
   writing Redis's RDB file (``snapshot-format rdb``, the default), Brook writing its own
   snapshot (``snapshot-format brook``) and Redis; and Brook starting from the file Redis
   wrote (the way in from Redis). Targets: RDB load and save ≤ 2× Redis's.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.run import free_port, machine_description, run_benchmark

AOF_ON = ["--appendonly", "yes", "--appendfsync", "everysec"]
AOF_OFF = ["--appendonly", "no"]
AOF_ALWAYS = ["--appendonly", "yes", "--appendfsync", "always"]
FILL_BATCH = 1000


def _command(kind: str, port: int, args: list[str]) -> list[str]:
    if kind == "brook":
        return [sys.executable, "-m", "brook", "--port", str(port), "--save", "", *args]
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is required (make redis installs it)")
    return [binary, "--port", str(port), "--save", "", *args]


def _request(sock: socket.socket, payload: bytes, replies: int) -> bytes:
    sock.sendall(payload)
    data = b""
    while data.count(b"\r\n") < replies:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        data += chunk
    return data


def _encode(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


class Server:
    """One server process in its own directory."""

    def __init__(self, kind: str, workdir: Path, args: list[str]) -> None:
        self.kind = kind
        self.workdir = workdir
        self.args = args
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start and wait until it answers (not -LOADING); returns the seconds that took."""
        started = time.monotonic()
        self.process = subprocess.Popen(
            _command(self.kind, self.port, self.args), cwd=self.workdir,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = started + 600
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.kind} exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                    while True:
                        reply = _request(sock, b"*1\r\n$6\r\nDBSIZE\r\n", 1)
                        if reply.startswith(b":"):
                            return time.monotonic() - started
                        time.sleep(0.002)
            except OSError:
                time.sleep(0.002)
        raise RuntimeError(f"{self.kind} did not start")

    def call(self, *args: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", self.port), timeout=600) as sock:
            return _request(sock, _encode(*args), 1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=600)


def xadd_rows(repeat: int, requests: int) -> dict[str, list[float]]:
    setups = {
        "brook (no AOF)": ("brook", AOF_OFF),
        "brook (AOF everysec)": ("brook", AOF_ON),
        "redis (no AOF)": ("redis", AOF_OFF),
        "redis (AOF everysec)": ("redis", AOF_ON),
        "brook (AOF always)": ("brook", AOF_ALWAYS),
        "redis (AOF always)": ("redis", AOF_ALWAYS),
    }
    results: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(repeat):
        for name, (kind, args) in setups.items():
            with tempfile.TemporaryDirectory(prefix="bench-persist-") as tmp:
                server = Server(kind, Path(tmp), args)
                server.start()
                try:
                    rps = run_benchmark(server.port, "xadd", 16, requests)
                finally:
                    server.stop()
                results[name].append(rps)
                print(f"  xadd -P 16 {name:<22} {rps:>12,.0f} rps", flush=True)
    return results


def fill(server: Server, entries: int) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=600) as sock:
        done = 0
        while done < entries:
            batch = min(FILL_BATCH, entries - done)
            payload = b"".join(
                _encode(b"XADD", b"readings", b"*", b"sensor", b"%d" % ((done + i) % 64),
                        b"temp", b"%d.%d" % (20 + (done + i) % 10, i % 10),
                        b"status", b"ok")
                for i in range(batch)
            )
            _request(sock, payload, 2 * batch)  # a bulk reply per XADD: two CRLFs
            done += batch


def startup_rows(entries: int) -> dict[str, float]:
    """Seconds to load ``entries`` entries, per server and file kind."""
    results: dict[str, float] = {}
    for kind in ("brook", "redis"):
        for source in ("aof", "snapshot"):
            args = AOF_ON if source == "aof" else AOF_OFF
            with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
                server = Server(kind, Path(tmp), args)
                empty = server.start()
                fill(server, entries)
                if source == "snapshot":
                    server.call(b"SAVE")
                with contextlib.suppress(ConnectionError):  # SHUTDOWN just closes it
                    server.call(b"SHUTDOWN", b"NOSAVE" if source == "aof" else b"SAVE")
                assert server.process is not None
                server.process.wait(timeout=600)
                loaded = server.start()
                try:
                    length = server.call(b"XLEN", b"readings")
                    assert length == b":%d\r\n" % entries, length
                finally:
                    server.stop()
            results[f"{kind} {source}"] = loaded - empty
            print(f"  load {entries:,} entries: {kind} from {source}: {loaded - empty:.2f} s "
                  f"(start-up {loaded:.2f} s, empty {empty:.2f} s)", flush=True)
    return results


def fill_strings(server: Server, keys: int) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=600) as sock:
        done = 0
        while done < keys:
            batch = min(FILL_BATCH, keys - done)
            pairs: list[bytes] = []
            for i in range(done, done + batch):
                pairs += [b"key:%012d" % i, b"value:%d" % (i * 7919)]
            _request(sock, _encode(b"MSET", *pairs), 1)
            done += batch


_FORMATS = {
    "brook (RDB file)": ("brook", ["--snapshot-format", "rdb"]),
    "brook (own snapshot)": ("brook", ["--snapshot-format", "brook"]),
    "redis": ("redis", []),
}


def format_rows(entries: int) -> dict[str, dict[str, tuple[float, float, int]]]:
    """Per dataset and writer: (seconds to SAVE, seconds to load at start-up, file bytes);
    and Brook loading the file Redis wrote ("brook from redis's file": no save time)."""
    datasets = {"stream": fill, "strings": fill_strings}
    results: dict[str, dict[str, tuple[float, float, int]]] = {}
    for dataset, filler in datasets.items():
        rows = results[dataset] = {}
        redis_file: bytes | None = None
        for name, (kind, extra) in _FORMATS.items():
            with tempfile.TemporaryDirectory(prefix="bench-format-") as tmp:
                server = Server(kind, Path(tmp), [*AOF_OFF, *extra])
                empty = server.start()
                filler(server, entries)
                started = time.monotonic()
                server.call(b"SAVE")
                saved = time.monotonic() - started
                server.stop()
                assert server.process is not None
                server.process.wait(timeout=600)
                dump = Path(tmp) / "dump.rdb"
                size = dump.stat().st_size
                if kind == "redis":
                    redis_file = dump.read_bytes()
                loaded = server.start() - empty
                server.stop()
            rows[name] = (saved, loaded, size)
            print(f"  {dataset} {entries:,}: {name}: SAVE {saved:.2f} s, load {loaded:.2f} s, "
                  f"{size / 1e6:.1f} MB", flush=True)
        assert redis_file is not None
        with tempfile.TemporaryDirectory(prefix="bench-format-") as tmp:
            (Path(tmp) / "dump.rdb").write_bytes(redis_file)
            server = Server("brook", Path(tmp), AOF_OFF)
            loaded = server.start()
            server.stop()
            empty_dir = Path(tmp) / "empty"
            empty_dir.mkdir()
            empty_server = Server("brook", empty_dir, AOF_OFF)
            empty = empty_server.start()
            empty_server.stop()
        rows["brook from redis's file"] = (0.0, loaded - empty, len(redis_file))
        print(f"  {dataset} {entries:,}: brook from redis's file: load {loaded - empty:.2f} s",
              flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=500_000)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--skip-xadd", action="store_true")
    parser.add_argument("--skip-startup", action="store_true")
    parser.add_argument("--skip-formats", action="store_true")
    options = parser.parse_args()
    print(f"Machine: {machine_description()}")
    if not options.skip_xadd:
        rows = xadd_rows(options.repeat, options.requests)
        medians = {name: statistics.median(values) for name, values in rows.items()}
        print(f"\nXADD -P 16, 50 clients, {options.requests:,} requests, "
              f"medians of {options.repeat}:\n")
        print("| server | rps |\n|---|---:|")
        for name, value in medians.items():
            print(f"| {name} | {value:,.0f} |")
        brook_aof = medians["brook (AOF everysec)"]
        print(f"\nBrook AOF / Redis AOF: {brook_aof / medians['redis (AOF everysec)']:.2f} "
              "(target ≥ 0.4)")
        print(f"Brook AOF / Brook without: {brook_aof / medians['brook (no AOF)']:.2f} "
              "(target ≥ 0.8)")
        print(f"appendfsync always, Brook / Redis: {medians['brook (AOF always)'] / medians['redis (AOF always)']:.2f}")
    if not options.skip_startup:
        loads = startup_rows(options.entries)
        print(f"\nStart-up with {options.entries:,} stream entries (seconds of loading):\n")
        print("| file | Brook | Redis | Brook/Redis |\n|---|---:|---:|---:|")
        for source in ("aof", "snapshot"):
            brook, redis = loads[f"brook {source}"], loads[f"redis {source}"]
            print(f"| {source} | {brook:.2f} | {redis:.2f} | {brook / max(redis, 1e-3):.1f} |")
    if not options.skip_formats:
        formats = format_rows(options.entries)
        print(f"\nSnapshot formats, {options.entries:,} stream entries or string keys (SAVE "
              "timed at the client, load = start-up minus an empty start-up):\n")
        print("| dataset | writer | SAVE s | load s | MB | SAVE / Redis | load / Redis |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for dataset, rows in formats.items():
            redis_save, redis_load, _ = rows["redis"]
            for name, (saved, loaded, size) in rows.items():
                save_ratio = f"{saved / max(redis_save, 1e-3):.1f}" if saved else ""
                print(f"| {dataset} | {name} | {saved:.2f} | {loaded:.2f} | {size / 1e6:.1f} "
                      f"| {save_ratio} | {loaded / max(redis_load, 1e-3):.1f} |")


if __name__ == "__main__":
    main()
