"""RESP and framing (brook/protocol/): exact replies, malformed frames, the fuzzer."""
