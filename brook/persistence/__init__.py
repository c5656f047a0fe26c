"""Durability: the append-only file, snapshots and their loading.

Owns: the effect log a turn's writes are encoded into (:mod:`~brook.persistence.effectlog`,
:mod:`~brook.persistence.effects`), the AOF (:mod:`~brook.persistence.aof`), its replay
(:mod:`~brook.persistence.loader`, through the dispatcher's replay lane it declares as a
trait), rewriting (:mod:`~brook.persistence.rewrite`), Brook's snapshot format
(:mod:`~brook.persistence.snapshot`), Redis's RDB file (:mod:`~brook.persistence.rdbfile`), the
choice between them (:mod:`~brook.persistence.dataset`), ``brook-check-aof`` (:mod:`~brook.persistence.check`)
and the BGSAVE/BGREWRITEAOF children (:mod:`~brook.persistence.manager`).

Imports: the keyspace, the value types, the protocol, Redis's value codec
(:mod:`brook.rdb`), the command table and the function libraries, and the server's shared state (:mod:`brook.context`, which the manager reads);
never the dispatcher, admission or a connection (docs/architecture.md, Layers).
"""
