"""Durability: the append-only file, snapshots and their loading."""
