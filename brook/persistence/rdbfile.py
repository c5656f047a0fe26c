"""Redis's RDB file: the whole dataset in the format every Redis tool reads (rdb.c's rdbSaveRio
and rdbLoadRioWithLoadingCtx).

A file is ``REDIS`` and four digits of version, aux fields (``redis-ver``, ``ctime``...), the
FUNCTION libraries (``FUNCTION2`` opcodes), then per non-empty database ``SELECTDB`` and
``RESIZEDB`` and its keys, each an optional ``EXPIRETIME_MS``, the value's type, the key and the
value as :mod:`brook.rdb` encodes it; then ``EOF`` and the CRC-64 of everything before it (zero
when ``rdbchecksum`` is off, which readers take as "not computed").

Brook writes version 10 (Redis 7.0's) with only the types it defines, so a redis-server from 7.0
to the newest starts from Brook's file, and reads every version up to 12 (the newest Redis's),
with each opcode those versions define: idle time and LFU frequency are read and dropped,
``SLOT_INFO`` skipped, module values and module aux data refused with the module's name (Brook
has no modules), and the pre-release function format refused as Redis refuses it.

Loading checks the checksum first and builds every value before it stores any, so a file
that is corrupt anywhere is refused with :class:`RdbFileError` and the keyspace is unchanged.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable
from typing import BinaryIO, Final, Protocol

from brook.keyspace import Database, Keyspace
from brook.persistence.snapshot import (
    SnapshotError,
    Writer,
    restore_stream_extras,
    stream_extras,
)
from brook.rdb import constants as c
from brook.rdb import strings as s
from brook.rdb.crc64 import crc64
from brook.rdb.decode import Limits, RdbError, load_object, load_type
from brook.rdb.encode import Options, dump_object
from brook.rdb.strings import Reader
from brook.types.stream import Stream
from brook.version import VERSION

__all__ = ["MAGIC", "RdbFileError", "RdbOptions", "load_rdb", "write_rdb"]

MAGIC: Final = b"REDIS"
_VERSION_WRITTEN: Final = c.RDB_VERSION_WRITTEN
_CHECKSUM_SINCE: Final = 5  # files of version 5 and later end with the CRC-64
_U64: Final = struct.Struct("<Q")
_I32: Final = struct.Struct("<i")
_EXPIRE_OPCODE: Final = bytes((252,))  # OPCODE_EXPIRETIME_MS
_STRING_TYPE: Final = bytes((c.TYPE_STRING,))
_KEYS_PER_PUT: Final = 1024
# The aux field after a stream that carries what RDB 10 cannot hold of it (the key, then
# brook.persistence.snapshot's stream_extras); Redis skips aux fields it does not know.
STREAM_EXTRAS: Final = b"brook-stream-extras"

# Opcodes of a whole file (rdb.h).
OPCODE_SLOT_INFO: Final = 244
OPCODE_FUNCTION_PRE_GA: Final = 246
OPCODE_MODULE_AUX: Final = 247
OPCODE_IDLE: Final = 248
OPCODE_FREQ: Final = 249
OPCODE_AUX: Final = 250
OPCODE_RESIZEDB: Final = 251
OPCODE_EXPIRETIME_MS: Final = 252
OPCODE_EXPIRETIME: Final = 253
OPCODE_SELECTDB: Final = 254
TYPE_MODULE_PRE_GA: Final = 6
TYPE_MODULE_2: Final = 7
# A module type's ID is its 9-character name in 6-bit characters of this set, then 10 bits of
# encoding version (module.c's moduleTypeNameByID).
_MODULE_NAME_CHARS: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


class RdbFileError(ValueError):
    """The file is not an RDB file Brook can load (the message says why)."""


class RdbOptions(Options, Limits, Protocol):
    """The configuration an RDB file is written and read with (the server's config)."""

    rdbchecksum: bool
    snapshot_format: str


def _aux(name: bytes, value: bytes) -> bytes:
    return bytes((OPCODE_AUX,)) + s.string(name, False) + s.string(value, False)


def write_rdb(keyspace: Keyspace, out: BinaryIO, options: RdbOptions,
              libraries: Iterable[bytes] = (), aux: Iterable[tuple[bytes, bytes]] = (),
              after_key: object = None) -> None:
    """Write the dataset of ``keyspace`` and the FUNCTION ``libraries`` (their code) to ``out``
    as an RDB file (not closed). ``aux`` adds fields after Redis's own (a replication ID, say);
    ``after_key`` is called after each key when given (``rdb-key-save-delay``). Keys already
    expired are left out; the keyspace must not change until this returns."""
    now = keyspace.clock.now_ms()
    w = Writer(out, crc64)
    w.put(MAGIC + b"%04d" % _VERSION_WRITTEN)
    w.put(_aux(b"redis-ver", VERSION.encode()))
    w.put(_aux(b"redis-bits", b"64"))
    w.put(_aux(b"ctime", b"%d" % int(time.time())))
    w.put(_aux(b"used-mem", b"0"))
    for name, value in aux:
        w.put(_aux(name, value))
    w.put(_aux(b"aof-base", b"0"))
    for code in libraries:
        w.put(bytes((c.OPCODE_FUNCTION2,)) + s.string(code, False))
    compress = options.rdbcompression
    for db in keyspace.databases:
        if not db.data:
            continue
        keys = list(db.data)
        # The sizes are hints for the reader's tables, as Redis's (expired keys included).
        w.put(bytes((OPCODE_SELECTDB,)) + s.length(db.index) + bytes((OPCODE_RESIZEDB,))
              + s.length(len(keys)) + s.length(len(db.expires)))
        for first in range(0, len(keys), _KEYS_PER_PUT):
            w.put(_key_records(keys[first:first + _KEYS_PER_PUT], db, now, options, compress,
                               after_key))
    w.put(bytes((c.OPCODE_EOF,)))
    w.flush()
    out.write(_U64.pack(w.crc if options.rdbchecksum else 0))


def _key_records(keys: list[bytes], db: Database, now: int, options: RdbOptions,
                 compress: bool, after_key: object) -> bytes:
    """The records of the ``keys`` not expired at ``now``, each an optional expiry, the type
    byte, the key and the object, and after a stream what RDB 10 cannot hold of it; one bytes
    for many keys, so the writer's checksum and buffer see a few large pieces."""
    data = db.data
    expires = db.expires
    parts: list[bytes] = []
    append = parts.append
    for key in keys:
        deadline = expires.get(key)
        if deadline is not None:
            if deadline <= now:
                continue
            append(_EXPIRE_OPCODE)
            append(_U64.pack(deadline))
        value = data[key]
        kind = type(value)
        if kind is bytes:
            append(_STRING_TYPE)
            append(s.string(key, compress))
            append(s.string(value, compress))  # type: ignore[arg-type]
        else:
            body, _version = dump_object(value, options)
            append(body[:1])
            append(s.string(key, compress))
            append(body[1:])
            if kind is Stream:
                extras = stream_extras(value)  # type: ignore[arg-type]
                if extras is not None:
                    append(_aux(STREAM_EXTRAS, s.plain_string(key) + extras))
        if after_key is not None:
            after_key()  # type: ignore[operator]
    return b"".join(parts)


def module_name(module_id: int) -> str:
    """The name of a module type from its 64-bit ID."""
    module_id >>= 10
    name = []
    for _ in range(9):
        name.append(_MODULE_NAME_CHARS[module_id & 63])
        module_id >>= 6
    return bytes(reversed(name)).decode()


def version_of(data: bytes) -> int:
    """The RDB version in a file's header (:class:`RdbFileError` if it is none)."""
    digits = data[5:9]
    if not data.startswith(MAGIC) or len(digits) != 4 or not digits.isdigit():
        raise RdbFileError("Wrong signature trying to load DB from file")
    return int(digits)


def load_rdb(keyspace: Keyspace, data: bytes, limits: RdbOptions,
             libraries: list[bytes], aux: dict[bytes, bytes] | None = None,
             after_key: object = None) -> int:
    """Fill ``keyspace`` from the RDB file ``data``; the number of keys loaded. The FUNCTION
    libraries' code goes to ``libraries``, the aux fields to ``aux`` when given. Loaded keys
    replace existing ones; on :class:`RdbFileError` nothing was stored. ``after_key`` is
    called after each key is stored when given (``key-load-delay``)."""
    version = version_of(data)
    if version < 1 or version > c.RDB_VERSION_READ:
        raise RdbFileError(f"Can't handle RDB format version {version}")
    end = len(data)
    if version >= _CHECKSUM_SINCE:
        if end < 9 + 1 + 8:
            raise RdbFileError("Short read or OOM loading DB. Unrecoverable error, aborting now.")
        end -= 8
        expected = _U64.unpack_from(data, end)[0]
        if expected and limits.rdbchecksum and crc64(memoryview(data)[:end]) != expected:
            raise RdbFileError("Wrong RDB checksum. Aborting now.")
    reader = Reader(data, 9, end)
    try:
        loaded = _read(reader, keyspace, limits, libraries, {} if aux is None else aux)
    except RdbError as error:
        raise RdbFileError(f"Short read or OOM loading DB ({error}). Unrecoverable error, "
                           "aborting now.") from None
    if reader.pos != end:
        raise RdbFileError("data after the end of the RDB file")
    databases = len(keyspace)
    for index, _key, _value, _deadline in loaded:
        if index >= databases:
            raise RdbFileError(f"FATAL: Data file was created with a Redis server configured "
                               f"to handle more than {databases} databases. Exiting")
    for index, key, value, deadline in loaded:
        db = keyspace[index]
        db.delete(key)
        db.data[key] = value  # a new key: its access field starts afresh
        if deadline is not None:
            db.set_expire(key, deadline)
        if after_key is not None:
            after_key()  # type: ignore[operator]
    return len(loaded)


_Loaded = list[tuple[int, bytes, object, int | None]]


def _read(r: Reader, keyspace: Keyspace, limits: RdbOptions, libraries: list[bytes],
          aux: dict[bytes, bytes]) -> _Loaded:
    """Every key of the file (database, key, value, deadline), until its EOF opcode."""
    now = keyspace.clock.now_ms()
    loaded: _Loaded = []
    index = 0
    deadline: int | None = None
    while True:
        kind = r.byte()
        if kind == c.OPCODE_EOF:
            return loaded
        if kind == OPCODE_EXPIRETIME_MS:
            deadline = r.millisecond_time()
            continue
        if kind == OPCODE_EXPIRETIME:
            deadline = _I32.unpack(r.take(4))[0] * 1000
            continue
        if kind == OPCODE_IDLE:
            r.length()
            continue
        if kind == OPCODE_FREQ:
            r.byte()
            continue
        if kind == OPCODE_SELECTDB:
            index = r.length()
            continue
        if kind == OPCODE_RESIZEDB:
            r.length()
            r.length()
            continue
        if kind == OPCODE_SLOT_INFO:
            r.length()
            r.length()
            r.length()
            continue
        if kind == OPCODE_AUX:
            name = r.string()
            field = r.string()
            if name == STREAM_EXTRAS:
                _restore_extras(loaded, field)
            else:
                aux[name] = field
            continue
        if kind == OPCODE_MODULE_AUX:
            raise RdbFileError("The RDB file contains AUX module data I can't load: no "
                               f"matching module '{module_name(r.length())}'")
        if kind == c.OPCODE_FUNCTION2:
            libraries.append(r.string())
            continue
        if kind == OPCODE_FUNCTION_PRE_GA:
            raise RdbFileError("Pre-release function format not supported.")
        r.pos -= 1
        kind = load_type(r)
        key = r.string()
        if kind in (TYPE_MODULE_PRE_GA, TYPE_MODULE_2):
            raise RdbFileError("The RDB file contains module data I can't load: no matching "
                               f"module type '{module_name(r.length())}'")
        value = load_object(kind, r, limits, now)
        if value is not None:  # None: a hash whose fields had all expired
            loaded.append((index, key, value, deadline))
        deadline = None


def _restore_extras(loaded: _Loaded, value: bytes) -> None:
    """Apply a stream's extras to the stream loaded just before them."""
    field = Reader(value)
    key = field.string()
    if not loaded or loaded[-1][1] != key or type(loaded[-1][2]) is not Stream:
        raise RdbFileError(f"{STREAM_EXTRAS.decode()} for a key that is not the stream just "
                           "loaded")
    try:
        restore_stream_extras(loaded[-1][2], value[field.pos:])  # type: ignore[arg-type]
    except SnapshotError as err:
        raise RdbFileError(str(err)) from None
