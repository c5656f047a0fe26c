"""Replication (brook/replication/) and failover with real Redis Sentinel."""
