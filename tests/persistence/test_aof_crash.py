"""Crash tests: ``kill -9`` in the middle of a sustained load, then restart from the AOF.

Several clients write at once (XADD, XREADGROUP + XACK, LPUSH) and record what the server
acknowledged. After the kill and a restart on the same directory, everything acknowledged
must be there and nothing acknowledged as acked may be pending again. A killed process loses
nothing the kernel already has; what ``appendfsync`` adds is protection against the machine
itself failing, which a test cannot simulate, so both policies must lose nothing here.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from pathlib import Path

import pytest
import redis

from tests.conftest import ServerProcess, start_brook


class Load:
    """Writers running against one server until it dies, recording acknowledgements."""

    def __init__(self, proc: ServerProcess, generation: int) -> None:
        self.proc = proc
        self.generation = generation
        self.added: list[bytes] = []  # XADD IDs acknowledged
        self.pushed: list[bytes] = []  # LPUSH values acknowledged
        self.acked: list[bytes] = []  # IDs whose XACK was acknowledged
        self.threads = [
            threading.Thread(target=self._guard, args=(self._producer, 0), daemon=True),
            threading.Thread(target=self._guard, args=(self._producer, 1), daemon=True),
            threading.Thread(target=self._guard, args=(self._pusher,), daemon=True),
            threading.Thread(target=self._guard, args=(self._consumer, "c1"), daemon=True),
            threading.Thread(target=self._guard, args=(self._consumer, "c2"), daemon=True),
        ]

    def start(self) -> None:
        """Start the writers and return once the server has acknowledged an XADD and an LPUSH:
        on a busy machine threads and connections can take longer to start than the random
        pause before the kill, which must fall in the middle of the load."""
        for thread in self.threads:
            thread.start()
        deadline = time.monotonic() + 30
        while not (self.added and self.pushed) and time.monotonic() < deadline:
            time.sleep(0.01)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=30)

    def _guard(self, body, *args) -> None:
        # The server was killed: the writer stops with its connection.
        with contextlib.suppress(redis.ConnectionError, redis.TimeoutError, OSError):
            body(*args)

    def _client(self) -> redis.Redis:
        return self.proc.client()

    def _producer(self, which: int) -> None:
        r = self._client()
        i = 0
        while True:
            entry_id = r.xadd("s", {"g": self.generation, "p": which, "n": i})
            self.added.append(entry_id)
            i += 1

    def _pusher(self) -> None:
        r = self._client()
        i = 0
        while True:
            value = f"{self.generation}:{i}".encode()
            r.lpush("q", value)
            self.pushed.append(value)
            i += 1

    def _consumer(self, name: str) -> None:
        r = self._client()
        while True:
            reply = r.xreadgroup("g", name, {"s": ">"}, count=5, block=100)
            for _stream, entries in reply or []:
                ids = [entry_id for entry_id, _fields in entries]
                if ids:
                    r.xack("s", "g", *ids)
                    self.acked.extend(ids)


def _verify(proc: ServerProcess, loads: list[Load]) -> None:
    r = proc.client()
    r.response_callbacks.clear()  # XPENDING as the server sends it
    present = {entry_id for entry_id, _ in r.xrange("s")}
    queue = set(r.lrange("q", 0, -1))
    pending = {
        row[0] for row in r.execute_command("XPENDING", "s", "g", "-", "+", 1_000_000)
    }
    for load in loads:
        assert set(load.added) <= present, "an acknowledged XADD is missing"
        assert set(load.pushed) <= queue, "an acknowledged LPUSH is missing"
        assert not set(load.acked) & pending, "an acknowledged XACK is pending again"


@pytest.mark.parametrize("policy, rounds", [("always", 20), ("everysec", 3)])
def test_kill_9_under_load_loses_nothing_acknowledged(tmp_path: Path, policy: str,
                                                       rounds: int) -> None:
    args = ("--appendonly", "yes", "--appendfsync", policy)
    proc = start_brook(tmp_path, *args)
    proc.client().xgroup_create("s", "g", id="$", mkstream=True)
    loads: list[Load] = []
    rng = random.Random(20261121)
    try:
        for generation in range(rounds):
            load = Load(proc, generation)
            loads.append(load)
            load.start()
            time.sleep(rng.uniform(0.2, 0.6))
            proc.process.send_signal(signal.SIGKILL)
            proc.process.wait(timeout=10)
            load.join()
            assert load.added and load.pushed, "the load did not run"
            proc = start_brook(tmp_path, *args)  # the file must always load
            _verify(proc, loads)
    finally:
        proc.stop()
    assert sum(len(load.acked) for load in loads) > 0
