"""Redis's RDB value codec: the bytes Redis writes for one value, in DUMP payloads and RDB files.

Layers inside: :mod:`~brook.rdb.constants` (type and opcode numbers), :mod:`~brook.rdb.crc64`
and :mod:`~brook.rdb.lzf` (checksum and compression), :mod:`~brook.rdb.strings` (lengths,
strings, doubles), :mod:`~brook.rdb.containers` (listpack, ziplist, intset, zipmap),
then :mod:`~brook.rdb.decode` (RDB object -> Brook value) and :mod:`~brook.rdb.encode`
(Brook value -> RDB object), and :mod:`~brook.rdb.payload` (DUMP's footer: version and CRC).
Values are Brook's own (:mod:`brook.types`); nothing here knows commands or clients.

Imports: :mod:`brook.types` and :mod:`brook.protocol` only.
"""
