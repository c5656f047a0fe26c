"""EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT, TTL/PTTL/EXPIRETIME/PEXPIRETIME, PERSIST, and lazy and
active expiry (parity with Redis)."""

from __future__ import annotations

import time

import pytest
import redis

LLONG_MAX = 2**63 - 1
LLONG_MIN = -(2**63)


def wait_until(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def expired_keys(r: redis.Redis) -> int:
    return int(r.info("stats")["expired_keys"])


# -- setting a TTL ----------------------------------------------------------------------------------


def test_expire_sets_ttl(r) -> None:
    r.set("k", "v")
    assert r.expire("k", 100) is True
    assert r.ttl("k") == 100
    assert 99_000 < r.pttl("k") <= 100_000
    assert r.pexpire("k", 5000) is True
    assert 4000 < r.pttl("k") <= 5000
    assert r.ttl("k") == 5


def test_expireat_and_pexpireat(r) -> None:
    r.set("k", "v")
    at = int(time.time()) + 1000
    assert r.expireat("k", at) is True
    assert r.expiretime("k") == at
    assert r.execute_command("PEXPIRETIME", "k") == at * 1000
    assert r.pexpireat("k", at * 1000 + 123) is True
    assert r.execute_command("PEXPIRETIME", "k") == at * 1000 + 123
    assert r.expiretime("k") == at  # rounded to the nearest second


def test_expire_missing_key(r) -> None:
    for command in ("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"):
        assert r.execute_command(command, "nokey", 100) == 0
    assert r.exists("nokey") == 0


def test_time_in_the_past_deletes_the_key(r) -> None:
    cases = [("EXPIRE", 0), ("EXPIRE", -5), ("PEXPIRE", -1), ("EXPIREAT", 1), ("PEXPIREAT", 1),
             ("PEXPIREAT", 0), ("PEXPIRE", LLONG_MIN), ("EXPIREAT", -(LLONG_MAX // 1000))]
    for command, when in cases:
        r.set("k", "v")
        assert r.execute_command(command, "k", when) == 1, (command, when)
        assert r.exists("k") == 0, (command, when)


def test_deletion_by_past_expire_is_not_an_expiry(r) -> None:
    """Redis counts a DEL-like deletion, not an expired key, when EXPIRE's time has passed."""
    before = expired_keys(r)
    r.set("k", "v")
    r.expire("k", -1)
    assert expired_keys(r) == before


def test_expire_rejects_non_integers(raw) -> None:
    raw.request(b"SET k v\r\n")
    error = b"-ERR value is not an integer or out of range\r\n"
    for value in (b"abc", b"1.5", b"", b" 1", b"1e3", b"99999999999999999999"):
        raw.send(b"*3\r\n$6\r\nEXPIRE\r\n$1\r\nk\r\n$%d\r\n%s\r\n" % (len(value), value))
        assert raw.read(until=b"\r\n") == error, value
    assert raw.request(b"EXPIRE nokey abc\r\n") == error


def test_expire_overflow(raw) -> None:
    raw.request(b"SET k v\r\n")
    cases = {
        b"EXPIRE k 9223372036854775807": b"expire",
        b"EXPIRE k 9223372036854775": b"expire",  # fits *1000, overflows with now added
        b"EXPIRE k 9223372036854776": b"expire",
        b"EXPIRE k -9223372036854776": b"expire",
        b"EXPIRE k -9223372036854775808": b"expire",
        b"PEXPIRE k 9223372036854775807": b"pexpire",
        b"EXPIREAT k 9223372036854776": b"expireat",
        b"EXPIREAT k -9223372036854776": b"expireat",
    }
    for request, name in cases.items():
        assert raw.request(request + b"\r\n") == (
            b"-ERR invalid expire time in '%s' command\r\n" % name
        ), request
    # The overflow check comes before the key lookup.
    assert raw.request(b"PEXPIRE nokey 9223372036854775807\r\n") == (
        b"-ERR invalid expire time in 'pexpire' command\r\n"
    )
    # The largest representable deadlines are accepted.
    assert raw.request(b"PEXPIREAT k 9223372036854775807\r\n") == b":1\r\n"
    assert raw.request(b"PEXPIRETIME k\r\n") == b":9223372036854775807\r\n"
    assert raw.request(b"EXPIRETIME k\r\n") == b":9223372036854776\r\n"
    assert raw.request(b"EXPIREAT k 9223372036854775\r\n") == b":1\r\n"
    assert raw.request(b"PEXPIRETIME k\r\n") == b":9223372036854775000\r\n"


def test_expire_option_errors(raw) -> None:
    raw.request(b"SET k v\r\n")
    nx_error = b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"
    gt_lt_error = b"-ERR GT and LT options at the same time are not compatible\r\n"
    assert raw.request(b"EXPIRE k 100 NX XX\r\n") == nx_error
    assert raw.request(b"EXPIRE k 100 NX GT\r\n") == nx_error
    assert raw.request(b"PEXPIRE k 100 lt nx\r\n") == nx_error
    assert raw.request(b"EXPIRE k 100 GT LT\r\n") == gt_lt_error
    assert raw.request(b"EXPIREAT k 100 xx gt lt\r\n") == gt_lt_error
    assert raw.request(b"EXPIRE k 100 FOO\r\n") == b"-ERR Unsupported option FOO\r\n"
    # Options are checked before the time and before the key.
    assert raw.request(b"EXPIRE k abc foo\r\n") == b"-ERR Unsupported option foo\r\n"
    assert raw.request(b"EXPIRE nokey abc NX XX\r\n") == nx_error
    assert raw.request(b"EXPIRE k\r\n") == b"-ERR wrong number of arguments for 'expire' command\r\n"
    # Repeating a compatible option is fine.
    assert raw.request(b"EXPIRE k 100 NX NX\r\n") == b":1\r\n"


def test_nx_and_xx(r) -> None:
    r.set("k", "v")
    assert r.expire("k", 100, xx=True) is False  # no TTL yet
    assert r.ttl("k") == -1
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert r.ttl("k") == 100
    assert r.expire("k", 300, xx=True) is True
    assert r.ttl("k") == 300


def test_gt_and_lt_treat_no_ttl_as_infinite(r) -> None:
    r.set("k", "v")
    assert r.expire("k", 100, gt=True) is False  # nothing is greater than infinity
    assert r.ttl("k") == -1
    assert r.expire("k", 100, lt=True) is True  # anything is less than infinity
    assert r.expire("k", 50, gt=True) is False
    assert r.expire("k", 200, gt=True) is True
    assert r.ttl("k") == 200
    assert r.expire("k", 300, lt=True) is False
    assert r.expire("k", 100, lt=True) is True
    assert r.ttl("k") == 100
    deadline = r.execute_command("PEXPIRETIME", "k")
    assert r.pexpireat("k", deadline, gt=True) is False  # equal is not greater...
    assert r.pexpireat("k", deadline, lt=True) is False  # ...nor less
    assert r.pexpireat("k", deadline + 1, gt=True) is True
    assert r.execute_command("EXPIRE", "k", 1000, "XX", "GT") == 1
    assert r.execute_command("EXPIRE", "k", 2000, "XX", "LT") == 0


def test_lt_with_past_time_deletes_gt_does_not(r) -> None:
    r.set("k", "v")
    assert r.expire("k", -1, gt=True) is False
    assert r.exists("k") == 1
    assert r.expire("k", -1, lt=True) is True
    assert r.exists("k") == 0


# -- reading a TTL ----------------------------------------------------------------------------------


def test_ttl_family_missing_and_persistent(raw) -> None:
    raw.request(b"SET k v\r\n")
    for command in (b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME"):
        assert raw.request(command + b" nokey\r\n") == b":-2\r\n"
        assert raw.request(command + b" k\r\n") == b":-1\r\n"


def test_ttl_rounds_to_nearest_second(r) -> None:
    r.set("k", "v", px=1600)
    assert r.ttl("k") == 2
    r.set("k", "v", px=1400)
    assert r.ttl("k") == 1
    r.set("k", "v", px=400)
    assert r.ttl("k") == 0


def test_ttl_of_hash_and_other_types(r) -> None:
    r.hset("h", "f", "v")
    assert r.ttl("h") == -1
    assert r.expire("h", 50) is True
    assert r.ttl("h") == 50
    r.hset("h", "g", "w")  # modifying a hash keeps its TTL
    assert r.ttl("h") == 50


def test_set_clears_ttl(r) -> None:
    r.set("k", "v", ex=100)
    r.set("k", "w")
    assert r.ttl("k") == -1


def test_persist(r) -> None:
    assert r.persist("nokey") is False
    r.set("k", "v")
    assert r.persist("k") is False
    r.expire("k", 100)
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False


def test_persist_on_expired_key(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("k", "v", px=1)
    time.sleep(0.01)
    assert r.persist("k") is False
    assert r.exists("k") == 0


# -- lazy and active expiry --------------------------------------------------------------------------


def test_lazy_expiry_on_access(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    before = expired_keys(r)
    r.set("k", "v", px=20)
    r.hset("h", "f", "v")
    r.pexpire("h", 20)
    time.sleep(0.05)
    assert r.dbsize() == 2  # still stored: nobody looked and the cycle is off
    assert r.get("k") is None
    assert r.hget("h", "f") is None
    assert r.dbsize() == 0
    assert expired_keys(r) == before + 2


@pytest.mark.parametrize("access", ["TTL", "PTTL", "EXISTS", "TYPE", "EXPIRETIME"])
def test_expired_key_is_gone_for_every_reader(r, access: str) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("k", "v", px=1)
    time.sleep(0.01)
    reply = r.execute_command(access, "k")
    assert reply in (-2, 0, b"none", "none")
    assert r.dbsize() == 0


def test_active_expiry_removes_keys_nobody_reads(r) -> None:
    before = expired_keys(r)
    pipe = r.pipeline(transaction=False)
    for i in range(500):
        pipe.set(f"short:{i}", i, px=50)
    pipe.set("long", 1, ex=100)
    pipe.set("forever", 1)
    pipe.execute()
    assert r.dbsize() == 502
    assert wait_until(lambda: r.dbsize() == 2)
    assert sorted(r.keys()) == [b"forever", b"long"]
    assert expired_keys(r) == before + 500


def test_active_expiry_in_every_database(server) -> None:
    clients = [server.client(db=index) for index in (0, 3, 15)]
    for client in clients:
        for i in range(50):
            client.set(f"k{i}", i, px=30)
    assert wait_until(lambda: all(c.dbsize() == 0 for c in clients))


def test_active_expiry_can_be_disabled(r) -> None:
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(20):
        r.set(f"k{i}", i, px=20)
    time.sleep(0.3)
    assert r.dbsize() == 20
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    assert wait_until(lambda: r.dbsize() == 0)


def test_refreshed_ttl_is_honoured(r) -> None:
    """The active cycle follows the current deadline, not an earlier one."""
    r.set("k", "v", px=30)
    r.pexpire("k", 100_000)
    r.set("j", "v", ex=100)
    r.pexpire("j", 30)
    assert wait_until(lambda: r.exists("j") == 0)
    time.sleep(0.1)
    assert r.exists("k") == 1
    r.persist("k")
    time.sleep(0.05)
    assert r.exists("k") == 1


def test_many_repeated_expires_stay_correct(r) -> None:
    """Refreshing one TTL many times (stale deadlines pile up internally) changes nothing."""
    r.set("k", "v")
    pipe = r.pipeline(transaction=False)
    for i in range(3000):
        pipe.pexpire("k", 100_000 + i)
    pipe.execute()
    assert 100_000 < r.pttl("k") <= 103_000
    r.pexpire("k", 30)
    assert wait_until(lambda: r.exists("k") == 0)


def test_key_recreated_without_ttl_survives_old_deadline(r) -> None:
    r.set("k", "v", px=30)
    r.delete("k")
    r.set("k", "again")
    time.sleep(0.15)
    assert r.get("k") == b"again"


# -- transactions ------------------------------------------------------------------------------------


def test_expire_inside_multi(r) -> None:
    r.set("k", "v")
    with r.pipeline() as pipe:
        pipe.expire("k", 100)
        pipe.ttl("k")
        pipe.persist("k")
        pipe.ttl("k")
        assert pipe.execute() == [True, 100, True, -1]


def test_expire_invalidates_watch(server) -> None:
    r = server.client()
    r.set("k", "v")
    with r.pipeline() as pipe:
        pipe.watch("k")
        server.client().expire("k", 100)
        pipe.multi()
        pipe.get("k")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_expire_on_missing_key_does_not_invalidate_watch(server) -> None:
    r = server.client()
    with r.pipeline() as pipe:
        pipe.watch("k")
        server.client().expire("k", 100)
        pipe.multi()
        pipe.get("k")
        assert pipe.execute() == [None]


def test_persist_invalidates_watch(server) -> None:
    r = server.client()
    r.set("k", "v", ex=100)
    with r.pipeline() as pipe:
        pipe.watch("k")
        server.client().persist("k")
        pipe.multi()
        pipe.get("k")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_watched_key_expiring_fails_exec(server) -> None:
    r = server.client()
    r.set("k", "v", px=30)
    with r.pipeline() as pipe:
        pipe.watch("k")
        time.sleep(0.1)
        pipe.multi()
        pipe.get("k")
        with pytest.raises(redis.WatchError):
            pipe.execute()
