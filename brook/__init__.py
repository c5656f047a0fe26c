"""Brook: a message-queue server that speaks the Redis protocol.

Each package's docstring says what it owns and what it may import; the layers they make, from
the composition root (:mod:`brook.server`) down to the protocol, are drawn in
docs/architecture.md and checked from the source by tests/test_layers.py.
"""

from brook.version import BROOK_VERSION as __version__

__all__ = ["__version__"]
