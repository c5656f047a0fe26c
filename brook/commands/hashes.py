"""hashes commands (being written)."""
