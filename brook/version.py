"""The versions Brook reports: its own, and the Redis version whose behaviour clients should
assume (HELLO, INFO, ``redis.REDIS_VERSION`` in scripts). Imports nothing."""

from __future__ import annotations

from typing import Final

VERSION: Final = "7.4.0"  # the Redis version whose behaviour clients should assume (HELLO, INFO)
BROOK_VERSION: Final = "0.1.0"
