"""Wire protocol: RESP reply encoders and the exact request parser (no I/O here)."""
