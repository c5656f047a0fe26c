"""CLIENT commands (being written)."""
