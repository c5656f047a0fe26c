"""Redis Cluster: hash slots, the node table, nodes.conf and the routing of requests.

A node in cluster mode (``cluster-enabled yes``) owns some of the 16,384 hash slots; a request
whose keys hash to a slot it does not serve is answered with Redis's redirections (``-MOVED``,
``-ASK``) or refusals (``-CROSSSLOT``, ``-TRYAGAIN``, ``-CLUSTERDOWN``), decided by
:mod:`brook.cluster.routing` as one entry of the command path's list of refusals
(brook.admission). docs/cluster.md says what is built and what is not yet.

Imports: only its own modules; the command path reaches the keyspace for it (whether a key of
a migrating slot is here) through an object it is given (:class:`routing.KeyPresence`).
"""
