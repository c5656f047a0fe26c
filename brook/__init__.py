"""Brook: a message-queue server that speaks the Redis protocol."""

from brook.version import BROOK_VERSION as __version__

__all__ = ["__version__"]
