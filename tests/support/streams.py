"""Stream ID limits and the error text for an invalid ID."""

from __future__ import annotations

MAX = 18446744073709551615  # UINT64_MAX: the largest ms and seq of a stream ID
MAX_ID = f"{MAX}-{MAX}"
INVALID_ID = "Invalid stream ID specified as stream command argument"
