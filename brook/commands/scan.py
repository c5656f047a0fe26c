"""SCAN family (being written)."""
