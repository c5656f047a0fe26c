"""The value types as data structures (brook/types/): driven in process, checked against
models and Redis's encodings."""
