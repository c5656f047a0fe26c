"""Replication: a master's replicas and their stream, and a replica's link to its master."""
