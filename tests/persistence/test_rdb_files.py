"""Redis's RDB file (brook/persistence/rdbfile.py): redis-server starts from Brook's dump.rdb
and Brook from redis-server's, compared key by key in every database (values, TTLs, encodings
where both define them, stream groups, PELs and consumers, FUNCTION libraries);
redis-check-rdb finds Brook's file clean; a damaged file is refused whole, whatever byte is
damaged.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from brook.config.store import Config
from brook.keyspace import Keyspace
from brook.persistence.rdbfile import RdbFileError, load_rdb, module_name
from brook.rdb import strings
from brook.rdb.crc64 import crc64
from tests.conftest import ServerProcess, redis_binary, run_refused_brook, start_brook, start_redis
from tests.support.datasets import VALUES, client_view, comparable, fill_every_kind


@pytest.fixture
def real_redis_binary() -> str:
    binary = redis_binary()
    if binary is None:
        pytest.skip("redis-server is not installed")
    return binary


@pytest.fixture
def servers() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for proc in started:
        proc.stop()


def test_redis_starts_from_brooks_file(tmp_path: Path, real_redis_binary: str,
                                       servers: list[ServerProcess]) -> None:
    brook_dir, redis_dir = tmp_path / "brook", tmp_path / "redis"
    brook_dir.mkdir()
    redis_dir.mkdir()
    brook = start_brook(brook_dir, "--save", "")
    servers.append(brook)
    b = brook.client()
    keys = fill_every_kind(b)
    before = client_view(b, keys)
    assert b.save()
    dump = brook_dir / "dump.rdb"
    assert dump.read_bytes().startswith(b"REDIS0010")
    checker = str(Path(real_redis_binary).with_name("redis-check-rdb"))
    check = subprocess.run([checker, str(dump)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "RDB looks OK" in check.stdout
    shutil.copy(dump, redis_dir / "dump.rdb")
    real = start_redis(redis_dir, "--dbfilename", "dump.rdb", "--dir", str(redis_dir))
    servers.append(real)
    rr = real.client()
    assert rr.dbsize() == len(keys[0])
    after = client_view(rr, keys)
    assert comparable(after, real.version) == comparable(before, real.version)
    assert rr.fcall("rdbfn", 0) == 7


def test_brook_starts_from_redis_file(tmp_path: Path, real_redis_binary: str,
                                      servers: list[ServerProcess]) -> None:
    redis_dir, brook_dir = tmp_path / "redis", tmp_path / "brook"
    redis_dir.mkdir()
    brook_dir.mkdir()
    real = start_redis(redis_dir, "--dir", str(redis_dir))
    servers.append(real)
    rr = real.client()
    keys = fill_every_kind(rr)
    before = client_view(rr, keys)
    assert rr.save()
    shutil.copy(redis_dir / "dump.rdb", brook_dir / "dump.rdb")
    brook = start_brook(brook_dir, "--save", "")
    servers.append(brook)
    b = brook.client()
    assert b.dbsize() == len(keys[0])
    after = client_view(b, keys)
    assert comparable(after, real.version) == comparable(before, real.version)
    assert b.fcall("rdbfn", 0) == 7
    # and back: what Brook saves of it, Redis loads again alike
    assert b.save()
    again_dir = tmp_path / "again"
    again_dir.mkdir()
    shutil.copy(brook_dir / "dump.rdb", again_dir / "dump.rdb")
    again = start_redis(again_dir, "--dir", str(again_dir))
    servers.append(again)
    assert comparable(client_view(again.client(), keys), real.version) == \
        comparable(before, real.version)


def test_either_format_loads_whatever_the_setting_says(tmp_path: Path,
                                                       servers: list[ServerProcess]) -> None:
    """snapshot-format rdb (the default) writes Redis's file, brook Brook's snapshot; either
    kind loads whatever the setting says."""
    brook = start_brook(tmp_path, "--save", "", "--snapshot-format", "brook")
    servers.append(brook)
    b = brook.client()
    keys = fill_every_kind(b)
    before = client_view(b, keys)
    assert b.save()
    assert (tmp_path / "dump.rdb").read_bytes().startswith(b"BROOK-SNAPSHOT")
    b.config_set("snapshot-format", "rdb")
    assert b.execute_command("DEBUG", "RELOAD")
    assert client_view(b, keys) == before
    assert (tmp_path / "dump.rdb").read_bytes().startswith(b"REDIS0010")
    b.config_set("snapshot-format", "brook")
    assert b.execute_command("DEBUG", "RELOAD")
    assert client_view(b, keys) == before


# -- damaged files ----------------------------------------------------------------------------


def _config() -> Config:
    return Config()


@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A Brook RDB file with a key of each kind and a TTL."""
    tmp = tmp_path_factory.mktemp("small")
    brook = start_brook(tmp, "--save", "", "--rdbcompression", "no")
    try:
        b = brook.client()
        for name in ("string-short", "list-small", "set-intset", "set-listpack",
                     "zset-listpack", "hash-listpack"):
            VALUES[name](b, name)
        b.xadd("stream", {"f": "v"}, id="1-1")
        b.xgroup_create("stream", "g", "0")
        b.xreadgroup("g", "c", {"stream": ">"})
        b.pexpire("string-short", 900_000)
        b.save()
        return (tmp / "dump.rdb").read_bytes()
    finally:
        brook.stop()


def test_a_sound_file_loads_in_process(small_file: bytes) -> None:
    keyspace = Keyspace(16)
    libraries: list[bytes] = []
    aux: dict[bytes, bytes] = {}
    assert load_rdb(keyspace, small_file, _config(), libraries, aux) == 7
    assert aux[b"redis-bits"] == b"64"
    assert keyspace[0].expires.get(b"string-short") is not None


def test_every_truncation_is_refused_and_stores_nothing(small_file: bytes) -> None:
    for size in range(len(small_file)):
        keyspace = Keyspace(16)
        with pytest.raises(RdbFileError):
            load_rdb(keyspace, small_file[:size], _config(), [])
        assert not keyspace[0].data, size


def test_every_changed_byte_is_refused_by_the_checksum(small_file: bytes) -> None:
    for at in range(len(small_file) - 8):
        damaged = bytearray(small_file)
        damaged[at] ^= 0x5A
        keyspace = Keyspace(16)
        with pytest.raises(RdbFileError):
            load_rdb(keyspace, bytes(damaged), _config(), [])
        assert not keyspace[0].data, at


def test_changed_bytes_without_a_checksum_never_crash(small_file: bytes) -> None:
    """With the checksum zeroed (rdbchecksum no wrote it), a changed byte is either caught by
    the parser or loads as some other well-formed data: never another exception."""
    body = small_file[:-8]
    for at in range(9, len(body)):
        for flip in (0x01, 0x80, 0xFF):
            damaged = bytearray(body)
            damaged[at] ^= flip
            keyspace = Keyspace(16)
            try:
                load_rdb(keyspace, bytes(damaged) + bytes(8), _config(), [])
            except RdbFileError:
                assert not any(db.data for db in keyspace.databases), at


def test_a_damaged_dump_file_stops_brook_with_the_reason(tmp_path: Path, small_file: bytes
                                                         ) -> None:
    damaged = bytearray(small_file)
    damaged[len(damaged) // 2] ^= 0xFF
    (tmp_path / "dump.rdb").write_bytes(bytes(damaged))
    done = run_refused_brook(tmp_path)
    assert done.returncode != 0
    assert "Wrong RDB checksum" in done.stdout + done.stderr
    (tmp_path / "dump.rdb").write_bytes(b"REDIS0013" + small_file[9:])
    done = run_refused_brook(tmp_path)
    assert "Can't handle RDB format version 13" in done.stdout + done.stderr


def _file(*records: bytes, version: int = 10) -> bytes:
    data = b"REDIS%04d" % version + b"".join(records) + b"\xff"
    return data + crc64(data).to_bytes(8, "little")


def test_module_data_is_refused_with_the_modules_name() -> None:
    # "ReJSON-RL" is RedisJSON's type name: its ID is the name in 6-bit characters, then 10 bits
    # of encoding version.
    charset = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    module_id = 0
    for char in b"ReJSON-RL":
        module_id = module_id << 6 | charset.index(char)
    module_id = module_id << 10 | 3
    assert module_name(module_id) == "ReJSON-RL"
    value = bytes((7,)) + strings.string(b"doc") + b"\x81" + module_id.to_bytes(8, "big")
    with pytest.raises(RdbFileError, match="no matching module type 'ReJSON-RL'"):
        load_rdb(Keyspace(16), _file(value), _config(), [])
    aux = bytes((247,)) + b"\x81" + module_id.to_bytes(8, "big")
    with pytest.raises(RdbFileError, match="AUX module data .* 'ReJSON-RL'"):
        load_rdb(Keyspace(16), _file(aux), _config(), [])


def test_the_older_opcodes_are_read() -> None:
    """Seconds expiry (EXPIRETIME), idle time, LFU frequency, slot info and aux fields of any
    name are read (what they carry is dropped where Brook has no use for it)."""
    far = (2**31 - 1).to_bytes(4, "little")
    records = [
        bytes((250,)) + strings.string(b"lua") + strings.string(b"return 1"),
        bytes((254, 1, 251, 2, 1)),
        bytes((253,)) + far + bytes((0,)) + strings.string(b"k1") + strings.string(b"v1"),
        bytes((248, 5, 0)) + strings.string(b"k2") + strings.string(b"v2"),
        bytes((249, 9, 0)) + strings.string(b"k3") + strings.string(b"v3"),
        bytes((244, 3, 2, 1)),
    ]
    keyspace = Keyspace(16)
    assert load_rdb(keyspace, _file(*records), _config(), []) == 3
    assert keyspace[1].data[b"k2"] == b"v2"
    assert keyspace[1].expires[b"k1"] == (2**31 - 1) * 1000


# -- redis-cli --rdb and --functions-rdb -------------------------------------------------------


def test_redis_cli_rdb_and_functions_rdb_give_files_redis_loads(
        tmp_path: Path, real_redis_binary: str, servers: list[ServerProcess]) -> None:
    """redis-cli asks with REPLCONF rdb-only 1 (and rdb-filter-only functions) then SYNC: the
    connection gets the file and closes, and no replica is left attached."""
    brook_dir = tmp_path / "brook"
    brook_dir.mkdir()
    brook = start_brook(brook_dir, "--save", "")
    servers.append(brook)
    b = brook.client()
    keys = fill_every_kind(b)
    before = client_view(b, keys)
    for option, name in (("--rdb", "all.rdb"), ("--functions-rdb", "functions.rdb")):
        done = subprocess.run(["redis-cli", "-p", str(brook.port), option, str(tmp_path / name)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Transfer finished with success" in done.stdout + done.stderr
    assert b.info("replication")["connected_slaves"] == 0
    for name, expected_keys in (("all.rdb", len(keys[0])), ("functions.rdb", 0)):
        target = tmp_path / name.replace(".rdb", "")
        target.mkdir()
        shutil.copy(tmp_path / name, target / "dump.rdb")
        real = start_redis(target, "--dir", str(target))
        servers.append(real)
        rr = real.client()
        assert rr.dbsize() == expected_keys
        assert rr.function_list(withcode=True) == b.function_list(withcode=True)
        if expected_keys:
            assert comparable(client_view(rr, keys), real.version) == \
                comparable(before, real.version)


def test_replconf_rdb_options_refuse_what_redis_refuses(r: redis.Redis) -> None:
    assert r.execute_command("REPLCONF", "rdb-only", "1") == b"OK"
    assert r.execute_command("REPLCONF", "rdb-only", "0") == b"OK"
    assert r.execute_command("REPLCONF", "rdb-filter-only", "") == b"OK"
    assert r.execute_command("REPLCONF", "rdb-filter-only", "functions") == b"OK"
    with pytest.raises(redis.ResponseError) as error:
        r.execute_command("REPLCONF", "rdb-only", "2")
    assert str(error.value) == "value is out of range, value must between 0 and 1"
    with pytest.raises(redis.ResponseError) as error:
        r.execute_command("REPLCONF", "rdb-filter-only", "functions keys")
    assert str(error.value) == "Unsupported rdb-filter-only option: keys"


def test_redis_cli_rdb_gets_redis_file_from_a_fork_after_a_running_save(
        tmp_path: Path, real_redis_binary: str, servers: list[ServerProcess]) -> None:
    """The file of ``redis-cli --rdb`` is written by a forked child, as a replica's is, so
    the server goes on serving; it is Redis's file whatever ``snapshot-format`` says, and
    while another child saves, it waits for that one to end (as Redis waits for the next
    BGSAVE)."""
    brook_dir = tmp_path / "brook"
    brook_dir.mkdir()
    brook = start_brook(brook_dir, "--save", "", "--snapshot-format", "brook",
                        "--rdb-key-save-delay", "1000")  # a millisecond per key
    servers.append(brook)
    b = brook.client()
    b.mset({f"key:{number}": number for number in range(400)})
    forks = b.info("stats")["total_forks"]
    assert b.bgsave()
    fetch = subprocess.Popen(["redis-cli", "-p", str(brook.port), "--rdb",
                              str(tmp_path / "all.rdb")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert b.set("served", "while the file is written")
        output, _ = fetch.communicate(timeout=60)
    finally:
        fetch.kill()
    assert fetch.returncode == 0, output
    assert b.info("stats")["total_forks"] == forks + 2  # the BGSAVE, then the file's own
    assert (brook_dir / "dump.rdb").read_bytes()[:5] != b"REDIS"  # the BGSAVE: Brook's format
    data = (tmp_path / "all.rdb").read_bytes()
    assert data.startswith(b"REDIS")
    target = tmp_path / "redis"
    target.mkdir()
    (target / "dump.rdb").write_bytes(data)
    real = start_redis(target, "--dir", str(target))
    servers.append(real)
    assert real.client().mget("key:0", "key:399") == [b"0", b"399"]
    assert b.info("replication")["connected_slaves"] == 0
