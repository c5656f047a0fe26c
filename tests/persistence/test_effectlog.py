"""The effect log counts the bytes it holds as it grows (WAIT reads the count after every
write), and the count is what :meth:`take` hands out."""

from __future__ import annotations

from brook.persistence.aof import encode_command
from brook.persistence.effectlog import EffectLog


def test_the_byte_count_follows_every_way_of_feeding() -> None:
    log = EffectLog()
    assert log.buffered_bytes() == 0 and log.take() == (b"", b"")
    log.feed(0, ([b"SET", b"k", b"v"],))
    log.feed(3, ([b"DEL", b"a"], [b"DEL", b"b"]))  # a SELECT, then MULTI ... EXEC
    log.feed_encoded(3, encode_command([b"XADD", b"s", b"1-1", b"f", b"v"]))
    log.feed_encoded(5, encode_command([b"XADD", b"s", b"1-2", b"f", b"v"]))
    log.begin_transaction()
    log.feed(5, ([b"INCR", b"n"],))
    log.feed_encoded(1, encode_command([b"XADD", b"t", b"1-1", b"f", b"v"]))
    assert log.buffered_bytes() == len(b"".join(log.buffer))  # the transaction waits
    log.end_transaction()
    counted = log.buffered_bytes()
    payload, aof_payload = log.take()
    assert counted == len(payload) > 0 and aof_payload is payload
    assert payload.count(b"MULTI") == 2 and payload.count(b"SELECT") == 4
    assert log.buffered_bytes() == 0


def test_commands_for_replicas_only_are_counted_and_left_out_of_the_aof() -> None:
    """PUBLISH goes to the replicas and not to the AOF: also inside a transaction, and its
    SELECT stays in both (the AOF's later commands depend on it)."""
    log = EffectLog()
    log.feed(0, ([b"SET", b"k", b"v"],))
    log.feed_replication_only(2, [b"PUBLISH", b"ch", b"hello"])
    log.begin_transaction()
    log.feed_replication_only(2, [b"PUBLISH", b"ch", b"again"])
    log.feed(2, ([b"INCR", b"n"],))
    log.end_transaction()
    counted = log.buffered_bytes()
    payload, aof_payload = log.take()
    assert counted == len(payload)
    assert payload.count(b"PUBLISH") == 2 and b"PUBLISH" not in aof_payload
    assert aof_payload == b"".join([
        encode_command([b"SELECT", b"0"]), encode_command([b"SET", b"k", b"v"]), encode_command([b"SELECT", b"2"]),
        encode_command([b"MULTI"]), encode_command([b"INCR", b"n"]),
        encode_command([b"EXEC"])])
    log.feed(2, ([b"SET", b"k", b"v"],))
    assert log.take() == (encode_command([b"SET", b"k", b"v"]),) * 2
