"""One reading of the server's memory, split into overhead and dataset: the figures INFO
memory and MEMORY STATS both report, computed in one place so that they agree.

It registers no command; it imports only brook.memory (the allocators' reading), so that both
families (info, memory) may import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from brook.memory import resident_bytes

if TYPE_CHECKING:
    from brook.context import ServerContext


@dataclass(frozen=True)
class MemoryBreakdown:
    """One reading of the allocators, split as INFO memory and MEMORY STATS report it: the
    overhead is the start-up reading plus the clients' buffers and the AOF buffer, the dataset
    the rest."""

    used: int
    rss: int
    startup: int
    clients: int
    aof_buffer: int

    @property
    def overhead(self) -> int:
        return min(self.used, self.startup + self.clients + self.aof_buffer)

    @property
    def dataset(self) -> int:
        return self.used - self.overhead


def memory_breakdown(server: ServerContext) -> MemoryBreakdown:
    used = server.used_memory()
    return MemoryBreakdown(
        used=used, rss=resident_bytes(), startup=min(server.memory.startup, used),
        clients=sum(client.memory_bytes() for client in server.clients.values()),
        aof_buffer=server.evictor.not_counted())
