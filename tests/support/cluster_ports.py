"""Ports for cluster-mode servers: Redis refuses a port whose bus port (10,000 above) would
pass 65,535, and both must be free (the benchmarks' helper, one for both)."""

from __future__ import annotations

from bench.run import free_cluster_port

__all__ = ["free_cluster_port"]
