"""strings commands (being written)."""
