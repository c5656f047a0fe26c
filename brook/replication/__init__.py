"""Replication: a master's replicas and their stream, and a replica's link to its master.

Owns: :mod:`~brook.replication.state` (role, replication IDs and offsets, the replicas, WAIT),
:mod:`~brook.replication.backlog` (the backlog partial resynchronisation reads) and
:mod:`~brook.replication.link` (a replica's connection, handshake and stream apply, through the
AOF loader's replayer).

Imports: persistence (the AOF encoder, the loader, snapshots) and the protocol; never the
dispatcher or a connection. The state and the link read the server's shared state
(:mod:`brook.context`; docs/architecture.md, Layers).
"""
