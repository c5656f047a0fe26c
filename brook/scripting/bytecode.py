"""Lua 5.1 bytecode (``string.dump`` images) rewritten: scripts compiled without tail calls,
chunks stripped of their debug information.

In Redis every library function is a C function, and a C function called in tail position
(``return cjson.decode(x)``) still has the script's frame under it: its errors read
"user_script:1: ..." and name it as the script spelled it. A Lua function called that way
replaces the script's frame, and both are lost. A script compiled with its tail calls turned
into plain calls keeps that frame. Lua 5.1 compiles ``return f(x)`` to
``TAILCALL A B 0; RETURN A 0``: as ``CALL A B 0; RETURN A 0`` it returns the same values.
What changes: unbounded tail recursion in a script stops at Lua's 20000-call limit.
"""

from __future__ import annotations

_OP_MASK = 0x3F
_OP_CALL = 28
_OP_TAILCALL = 29


class _Chunk:
    """A reader over a ``string.dump`` image (Lua 5.1 format, sizes from its header)."""

    def __init__(self, image: bytearray, tail_calls_as_calls: bool = True) -> None:
        if image[:5] != b"\x1bLua\x51" or image[6] != 1:
            raise ValueError("not a little-endian Lua 5.1 chunk")
        self.image = image
        self.int_size, self.size_t_size = image[7], image[8]
        self.number_size = image[10]
        self.at = 12
        self.tail_calls_as_calls = tail_calls_as_calls
        # Where each function's debug information is: (from, to) in the image.
        self.debug_parts: list[tuple[int, int]] = []

    def integer(self, size: int) -> int:
        value = int.from_bytes(self.image[self.at:self.at + size], "little")
        self.at += size
        return value

    def skip_string(self) -> None:
        length = self.integer(self.size_t_size)
        self.at += length

    def function(self) -> None:
        """Walk one function prototype, turning its tail calls into calls (unless told not
        to) and noting where its debug information is (:attr:`debug_parts`)."""
        self.skip_string()  # source
        self.at += 2 * self.int_size + 4  # line defined, last line, nups, params, vararg, stack
        for _ in range(self.integer(self.int_size)):
            if self.tail_calls_as_calls and self.image[self.at] & _OP_MASK == _OP_TAILCALL:
                self.image[self.at] = (self.image[self.at] & ~_OP_MASK) | _OP_CALL
            self.at += 4
        for _ in range(self.integer(self.int_size)):
            kind = self.integer(1)
            if kind == 1:
                self.at += 1
            elif kind == 3:
                self.at += self.number_size
            elif kind == 4:
                self.skip_string()
        for _ in range(self.integer(self.int_size)):
            self.function()
        debug_from = self.at
        lines = self.integer(self.int_size)  # line info
        self.at += lines * self.int_size
        for _ in range(self.integer(self.int_size)):  # local variables
            self.skip_string()
            self.at += 2 * self.int_size
        for _ in range(self.integer(self.int_size)):  # upvalue names
            self.skip_string()
        self.debug_parts.append((debug_from, self.at))


def without_tail_calls(image: bytes) -> bytes:
    """A ``string.dump`` image with every tail call (in all nested functions) made a call."""
    chunk = _Chunk(bytearray(image))
    chunk.function()
    return bytes(chunk.image)


def without_debug_information(image: bytes) -> bytes:
    """A ``string.dump`` image without line numbers, local and upvalue names (what Lua 5.2's
    stripped dumps leave out): half of a chunk's memory, for code whose errors never name its
    own lines."""
    chunk = _Chunk(bytearray(image), tail_calls_as_calls=False)
    chunk.function()
    none = bytes(3 * chunk.int_size)  # no lines, no locals, no upvalue names
    parts: list[bytes | bytearray] = []
    start = 0
    for debug_from, debug_to in chunk.debug_parts:
        parts += [chunk.image[start:debug_from], none]
        start = debug_to
    parts.append(chunk.image[start:])
    return b"".join(parts)
