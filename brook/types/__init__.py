"""Pure data structures for the value types (no RESP, sockets or clients here)."""
