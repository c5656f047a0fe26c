"""The errors of configuration values: a refused name or value, and a refused CONFIG SET.

Imports nothing of Brook: every module of :mod:`brook.config` raises these.
"""

from __future__ import annotations


class ConfigError(Exception):
    """An invalid parameter name or value (the message is Redis's reason text)."""


class ConfigSetError(ConfigError):
    """A CONFIG SET failure, already worded as Redis replies it (without the ``ERR``)."""

    @classmethod
    def about(cls, argument: str, reason: str) -> ConfigSetError:
        return cls(f"CONFIG SET failed (possibly related to argument '{argument}') - {reason}")
