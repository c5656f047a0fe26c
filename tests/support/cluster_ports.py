"""Ports for cluster-mode servers: Redis refuses a port whose bus port (10,000 above) would
pass 65,535, and both must be free."""

from __future__ import annotations

import random
import socket


def free_cluster_port() -> int:
    """A free port below 55,536 with its bus port free too."""
    while True:
        port = random.randrange(20000, 55535)
        with socket.socket() as first, socket.socket() as second:
            try:
                first.bind(("127.0.0.1", port))
                second.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
