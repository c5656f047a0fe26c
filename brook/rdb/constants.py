"""RDB numbers (Redis's rdb.h): object types, string encodings, opcodes, versions."""

from __future__ import annotations

from typing import Final

# Object types.
TYPE_STRING: Final = 0
TYPE_LIST: Final = 1
TYPE_SET: Final = 2
TYPE_ZSET: Final = 3
TYPE_HASH: Final = 4
TYPE_ZSET_2: Final = 5  # scores as binary doubles
TYPE_MODULE_PRE_GA: Final = 6
TYPE_MODULE_2: Final = 7
TYPE_HASH_ZIPMAP: Final = 9
TYPE_LIST_ZIPLIST: Final = 10
TYPE_SET_INTSET: Final = 11
TYPE_ZSET_ZIPLIST: Final = 12
TYPE_HASH_ZIPLIST: Final = 13
TYPE_LIST_QUICKLIST: Final = 14
TYPE_STREAM_LISTPACKS: Final = 15
TYPE_HASH_LISTPACK: Final = 16
TYPE_ZSET_LISTPACK: Final = 17
TYPE_LIST_QUICKLIST_2: Final = 18
TYPE_STREAM_LISTPACKS_2: Final = 19
TYPE_SET_LISTPACK: Final = 20
TYPE_STREAM_LISTPACKS_3: Final = 21
TYPE_HASH_METADATA_PRE_GA: Final = 22
TYPE_HASH_LISTPACK_EX_PRE_GA: Final = 23
TYPE_HASH_METADATA: Final = 24
TYPE_HASH_LISTPACK_EX: Final = 25

# The RDB version that introduced each type Brook writes (what a reader must accept).
TYPE_VERSIONS: Final = {
    TYPE_STRING: 1, TYPE_LIST: 1, TYPE_SET: 1, TYPE_ZSET: 1, TYPE_HASH: 1, TYPE_ZSET_2: 8,
    TYPE_SET_INTSET: 2, TYPE_LIST_QUICKLIST_2: 10, TYPE_HASH_LISTPACK: 10,
    TYPE_ZSET_LISTPACK: 10, TYPE_STREAM_LISTPACKS_2: 10, TYPE_SET_LISTPACK: 11,
    TYPE_STREAM_LISTPACKS_3: 11,
}

# Quicklist v2 node containers.
CONTAINER_PLAIN: Final = 1
CONTAINER_PACKED: Final = 2

# Length prefixes and string encodings.
ENCVAL: Final = 3
ENC_INT8: Final = 0
ENC_INT16: Final = 1
ENC_INT32: Final = 2
ENC_LZF: Final = 3

# Opcodes of a whole RDB file (and of FUNCTION DUMP payloads).
OPCODE_FUNCTION2: Final = 245
OPCODE_EOF: Final = 255

# Versions: what Brook writes (see brook.rdb.payload) and the newest it reads (Redis 7.4+).
RDB_VERSION_WRITTEN: Final = 10
RDB_VERSION_READ: Final = 12
