"""The hash value type: a dict of field -> value that remembers its Redis encoding.

Redis keeps a small hash as a listpack and converts it to a hash table once it has more than
``hash-max-listpack-entries`` fields or a field or value longer than ``hash-max-listpack-value``
bytes, and never converts back. A Python dict serves both cases equally well, so the encoding
is only a flag here, kept so that OBJECT ENCODING (and tests relying on it) see what Redis
would report.
"""

from __future__ import annotations


class Hash(dict[bytes, bytes]):
    """A hash value; ``is_hashtable`` is True once Redis would have converted it."""

    __slots__ = ("is_hashtable",)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.is_hashtable = False

    def copy(self) -> Hash:  # type: ignore[override]
        """A copy with the same encoding (COPY and friends)."""
        duplicate = Hash(self)
        duplicate.is_hashtable = self.is_hashtable
        return duplicate

    @property
    def encoding(self) -> str:
        return "hashtable" if self.is_hashtable else "listpack"

    def convert_to(self, encoding: str) -> bool:
        """BROOK.RESTORE-ENCODING: only ``hashtable`` is a conversion Redis makes."""
        if encoding != "hashtable":
            return False
        self.is_hashtable = True
        return True

    def check_size(self, max_entries: int) -> None:
        """Convert after an insertion made the hash longer than the listpack limit."""
        if not self.is_hashtable and len(self) > max_entries:
            self.is_hashtable = True

    def check_lengths(self, items: list[bytes], max_length: int) -> None:
        """Convert when any field or value about to be stored exceeds the listpack limit."""
        if not self.is_hashtable and items and max(map(len, items)) > max_length:
            self.is_hashtable = True
