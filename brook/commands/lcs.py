"""LCS: the longest common subsequence of two string keys (Redis 7.0).

The subsequence, its length (LEN) or its match ranges (IDX, with MINMATCHLEN and
WITHMATCHLEN) are computed by brook.types.lcs. Like Redis, a command whose table of lengths
would need more than proto-max-bulk-len bytes (4 per cell) is refused rather than run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from brook.commands.args import parse_int
from brook.commands.registry import SYNTAX_ERROR, CommandError, command
from brook.protocol import resp
from brook.types.lcs import longest_common_subsequence

if TYPE_CHECKING:
    from brook.session import Session

NOT_STRINGS: Final = "ERR The specified keys must contain string values"
LEN_AND_IDX: Final = "ERR If you want both the length and indexes, please just use IDX."
TOO_LONG: Final = "ERR String too long for LCS"
TABLE_TOO_BIG: Final = ("ERR Insufficient memory, transient memory for LCS exceeds "
                        "proto-max-bulk-len")
_UINT32_MAX: Final = (1 << 32) - 1


def _operand(client: Session, key: bytes) -> bytes | bytearray:
    value = client.db.lookup_read(key)
    if value is None:
        return b""
    if type(value) is bytes or type(value) is bytearray:
        return value  # type: ignore[return-value]
    raise CommandError(NOT_STRINGS)


@command(
    "lcs", arity=-3, flags="readonly", keys=(1, 2, 1), acl="@read @string @slow",
    group="string", since="7.0.0", summary="Finds the longest common substring.",
    complexity="O(N*M) where N and M are the lengths of s1 and s2, respectively",
    syntax="key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]",
)
def lcs(client: Session, args: list[bytes]) -> bytes:
    # Both keys are looked up (and type-checked) before the options are read, as in Redis.
    first = _operand(client, args[1])
    second = _operand(client, args[2])
    want_len = want_idx = with_match_len = False
    min_match_len = 0
    position = 3
    while position < len(args):
        option = args[position].split(b"\0", 1)[0].lower()
        if option == b"idx":
            want_idx = True
        elif option == b"len":
            want_len = True
        elif option == b"withmatchlen":
            with_match_len = True
        elif option == b"minmatchlen" and position + 1 < len(args):
            min_match_len = max(parse_int(args[position + 1]), 0)
            position += 1
        else:
            raise CommandError(SYNTAX_ERROR)
        position += 1
    if want_len and want_idx:
        raise CommandError(LEN_AND_IDX)
    if len(first) >= _UINT32_MAX - 1 or len(second) >= _UINT32_MAX - 1:
        raise CommandError(TOO_LONG)
    if (len(first) + 1) * (len(second) + 1) * 4 > client.server.config.proto_max_bulk_len:
        raise CommandError(TABLE_TOO_BIG)
    found = longest_common_subsequence(bytes(first), bytes(second), with_text=not want_len)
    if want_idx:
        matches = [
            [[m.a_start, m.a_end], [m.b_start, m.b_end], m.length] if with_match_len
            else [[m.a_start, m.a_end], [m.b_start, m.b_end]]
            for m in found.matches if m.length >= min_match_len
        ]
        return resp.encode(resp.Map({"matches": matches, "len": found.length}), client.protocol)
    if want_len:
        return resp.integer(found.length)
    return resp.bulk(found.text)
