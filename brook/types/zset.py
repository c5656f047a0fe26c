"""The sorted-set value type: ``SortedSet`` is this build's class, chosen once at import.

The compiled build's (:mod:`brook.types.zset_native`) is the C ``SortedKeys`` itself, the pure
build's (:mod:`brook.types.zset_pure`) keeps Python containers; both are
:class:`~brook.types.zset_base.SortedSetBase`, which is what callers type-check against. The
order keys and encodings they share are :mod:`brook.types.zset_order`'s, named here too so
that callers import one module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brook.types import native
from brook.types.zset_order import (
    AFTER_ALL,
    ENCODING_NAMES,
    LISTPACK,
    SKIPLIST,
    ZsetLimits,
    after_score,
    key_score,
    order_key,
    score_prefix,
)

__all__ = ["AFTER_ALL", "ENCODING_NAMES", "LISTPACK", "SKIPLIST", "SortedSet", "ZsetLimits",
           "after_score", "key_score", "order_key", "score_prefix"]

if TYPE_CHECKING:
    from brook.types.zset_base import SortedSetBase as SortedSet
elif native.SortedKeys is None:
    from brook.types.zset_pure import PureSortedSet as SortedSet
else:
    from brook.types.zset_native import NativeSortedSet as SortedSet
