"""The hand-written C of the compiled core, or None for each function this build lacks.

setup.py builds the modules with the compiled core (docs/architecture.md, "Hand-written C");
the pure build, or a machine whose compiler failed, has none of them, and every caller then
runs the function's Python twin, which does the same:

- ``appended_size``: :func:`brook.types.lpsize.appended_size` of the IDs' deltas;
- ``seal_node``: :func:`brook.types.stream_node._seal_blob`;
- ``pack_node``: :func:`brook.types.stream_node._pack_sealed_resp`;
- ``node_listpack``: :func:`brook.types.stream_node.decode`, then
  :func:`brook.rdb.encode._stream_node` (a sealed node as Redis's stream listpack);
- ``plain_id`` / ``plain_ids``: :func:`brook.commands.stream_args.read_plain_id`;
- ``next_auto_id``: :func:`brook.commands.stream_args.next_auto_id_text`;
- ``KeyTable``: :class:`brook.types.keytable.KeyTable`;
- ``MemberSet``: :class:`brook.types.member_set.MemberSet` (a set's members);
- ``SortedKeys``: a sorted set's order keys, packed (:mod:`brook.types.zset_native`); its twins
  are :mod:`brook.types.zset_pure`'s ``SortedList`` for a skiplist and pickled ``bytes`` for a
  listpack;
- ``incr_by_float`` / ``timeout_millis``: :func:`brook.types.long_double.incr_by_float_twin`
  and :func:`~brook.types.long_double.timeout_millis_twin`, built only where C's long double
  is the x87 format the twins emulate (its own ``try`` below: elsewhere the others still load).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from brook.types import keytable, member_set

if TYPE_CHECKING:
    from brook.types import _sorted_keys

appended_size: Callable[[int, int, list[bytes], list[bytes], int], int] | None
seal_node: Callable[[int, list[bytes], list[int], list[list[bytes] | None]],
                    tuple[bytes, int]] | None
pack_node: Callable[[bytes, int, int], tuple[bytes, list[int], list[int], list[int]]] | None
node_listpack: Callable[[bytes, int, int, bytes], tuple[int, int, bytes] | None] | None
plain_id: Callable[[bytes], int] | None
plain_ids: Callable[[list[bytes]], list[int] | None] | None
next_auto_id: Callable[[int, int], tuple[int, bytes]] | None
KeyTable: type[keytable.KeyTable] | None
MemberSet: type[member_set.MemberSet] | None
SortedKeys: type[_sorted_keys.SortedKeys] | None
incr_by_float: Callable[[bytes | bytearray | None, bytes], bytes | int] | None
timeout_millis: Callable[[bytes], int | None] | None

try:
    from brook.types import (
        _keytable,
        _lp_size,
        _member_set,
        _node_listpack,
        _node_seal,
        _resp_pack,
        _sorted_keys,
        _stream_ids,
    )
    appended_size = _lp_size.appended_size
    seal_node = _node_seal.seal_node
    pack_node = _resp_pack.pack_node
    node_listpack = _node_listpack.node_listpack
    plain_id = _stream_ids.plain_id
    plain_ids = _stream_ids.plain_ids
    next_auto_id = _stream_ids.next_auto_id
    KeyTable = _keytable.KeyTable  # type: ignore[assignment]  # the twin's methods, in C
    MemberSet = _member_set.MemberSet  # type: ignore[assignment]  # the twin's methods, in C
    SortedKeys = _sorted_keys.SortedKeys
except ImportError:
    appended_size = seal_node = pack_node = node_listpack = None
    plain_id = plain_ids = next_auto_id = None
    KeyTable = MemberSet = SortedKeys = None

try:
    from brook.types import _long_double
    incr_by_float = _long_double.incr_by_float
    timeout_millis = _long_double.timeout_millis
except ImportError:
    incr_by_float = timeout_millis = None
