"""The dramatiq broker and actors of the framework tests.

dramatiq's Redis broker does everything through one Lua script (``dispatch``: enqueue, fetch,
ack, nack, requeue, with a heartbeat and occasional maintenance on every call) and probes the
Lua stack once with another (``maxstack``), so no message moves without EVALSHA.

The worker runs ``dramatiq tests.frameworks.dramatiq_app:broker`` and gets a broker for the port
in ``BROOK_TEST_PORT``; the driver (``tests.frameworks.dramatiq_driver``, in dramatiq's
environment with the same port) sends through the same broker, by actor name
(``broker.get_actor("add")``). Results come back through the Results middleware (a Redis
list per message); the actors that must show how often they ran count their runs in a Redis
key as well.
"""

from __future__ import annotations

import os
import time

import redis
from dramatiq import actor
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import CurrentMessage
from dramatiq.results import Results
from dramatiq.results.backends import RedisBackend


def create_broker(port: int) -> RedisBroker:
    """A Redis broker on ``port`` with results stored on the same server, and its actors."""
    client = redis.Redis(port=port)
    broker = RedisBroker(client=client)
    broker.add_middleware(Results(backend=RedisBackend(client=client)))
    broker.add_middleware(CurrentMessage())

    def add(a: int, b: int) -> int:
        return a + b

    def stamp() -> int:
        """When the actor ran, in dramatiq's milliseconds: a delayed message must not run
        before the ``eta`` its broker gave it."""
        return int(time.time() * 1000)

    def flaky(key: str, succeed_on: int) -> dict[str, int]:
        """Fails until its ``succeed_on``-th run; the Retries middleware sends it again
        (through the delay queue) after a short backoff each time."""
        runs = int(client.incr(key))
        if runs < succeed_on:
            raise RuntimeError(f"run {runs} fails")
        message = CurrentMessage.get_current_message()
        assert message is not None
        return {"runs": runs, "retries": int(message.options.get("retries", 0))}

    def doomed(key: str) -> None:
        """Always fails: once its retries are spent the broker dead-letters it (``nack``)
        and the Results middleware stores the failure."""
        runs = int(client.incr(key))
        raise ValueError(f"run {runs} fails")

    options = {"broker": broker, "store_results": True}
    actor(add, **options)
    actor(stamp, **options)
    actor(flaky, max_retries=5, min_backoff=100, max_backoff=200, **options)
    actor(doomed, max_retries=1, min_backoff=100, max_backoff=200, **options)
    return broker


broker_port = int(os.environ.get("BROOK_TEST_PORT", "6379"))
broker = create_broker(broker_port)
