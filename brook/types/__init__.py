"""Pure data structures for the value types (no RESP, sockets or clients here).

Owns: each value type (strings are ``bytes``; :mod:`~brook.types.lists`, :mod:`~brook.types.hash`,
:mod:`~brook.types.set`, :mod:`~brook.types.zset`, :mod:`~brook.types.stream` on
:mod:`~brook.types.stream_node`, with :mod:`~brook.types.groups` and :mod:`~brook.types.pel`),
the key table (:mod:`~brook.types.keytable` and its C twin) and the numeric and encoding helpers
values share (long doubles, listpack sizes, bits, geohash, HyperLogLog, LCS).

Imports: :mod:`brook.protocol.requests` only; the keyspace declares which types it stores.
"""
