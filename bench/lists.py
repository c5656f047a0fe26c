"""List rows for ``bench.run`` that redis-benchmark has no ``-t`` test for.

* ``lindex_mid``: LINDEX of the middle of a 1,000-element list (a packed chunk on Brook, not a
  loose end);
* ``brpop``: BRPOP of a list filled beforehand with more elements than the run pops, so that no
  client ever parks: the blocking command's own path, as a worker draining a backlog meets it.

Both lists hold redis-benchmark's own element (``xxx``), written identically to both servers.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.streams import Connection, CustomTest, encode

KEY = b"mylist"
_PER_PUSH = 1000


def _filled(elements: int) -> Callable[[int], None]:
    def prepare(port: int) -> None:
        with Connection(port) as conn:
            conn.check("DEL", KEY)
            pushes = -(-elements // _PER_PUSH)
            conn.pipeline(encode("RPUSH", KEY, *[b"xxx"] * _PER_PUSH) * pushes, pushes)
    return prepare


def custom_tests(requests: int) -> dict[str, CustomTest]:
    return {
        "lindex_mid": CustomTest(("LINDEX", "mylist", "500"), _filled(_PER_PUSH)),
        "brpop": CustomTest(("BRPOP", "mylist", "0"), _filled(requests + _PER_PUSH)),
    }
