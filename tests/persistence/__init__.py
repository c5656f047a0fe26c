"""Durability (brook/persistence/): the AOF, rewrites, snapshots, crashes and replays."""
