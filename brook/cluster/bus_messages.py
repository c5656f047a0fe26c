"""The cluster bus's messages, byte for byte as Redis 7 frames them (cluster_legacy.h's
clusterMsg): a 2,256-byte header -- signature ``RCmb``, total length, protocol version 1, the
sender's ports, type, epochs, replication offset, name, slots bitmap, master, IP, flags and
state, all integers big-endian -- then the type's data: for PING, PONG and MEET the gossip
sections (104 bytes each) and the extensions (hostname, human node name, forgotten node,
shard ID), each 8-byte aligned.

:func:`decode` checks a message as Redis's clusterProcessPacket does before using it (the
length each type implies, the extensions' padding) and raises :class:`BusMessageError` for
one it would drop; the caller drops it too.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Final

from brook.cluster.slots import SLOTS

SIGNATURE: Final = b"RCmb"
PROTOCOL_VERSION: Final = 1
NAME_BYTES: Final = 40
IP_BYTES: Final = 46  # NET_IP_STR_LEN

# Message types (CLUSTERMSG_TYPE_*).
PING: Final = 0
PONG: Final = 1
MEET: Final = 2
FAIL: Final = 3
PUBLISH: Final = 4
FAILOVER_AUTH_REQUEST: Final = 5
FAILOVER_AUTH_ACK: Final = 6
UPDATE: Final = 7
MFSTART: Final = 8
MODULE: Final = 9
PUBLISHSHARD: Final = 10
TYPE_NAMES: Final = ("ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack",
                     "update", "mfstart", "module", "publishshard")

# mflags[0] bits.
FLAG0_PAUSED: Final = 1
FLAG0_FORCEACK: Final = 2
FLAG0_EXT_DATA: Final = 4

# Ping extension types.
EXT_HOSTNAME: Final = 0
EXT_HUMAN_NODENAME: Final = 1
EXT_FORGOTTEN_NODE: Final = 2
EXT_SHARDID: Final = 3

# sig, totlen, ver, port, type, count, currentEpoch, configEpoch, offset, sender, myslots,
# slaveof, myip, extensions, notused1, pport, cport, flags, state, mflags
_HEADER: Final = struct.Struct(f">4sIHHHHQQQ{NAME_BYTES}s{SLOTS // 8}s{NAME_BYTES}s"
                               f"{IP_BYTES}sH30sHHHB3s")
HEADER_BYTES: Final = _HEADER.size  # 2256
_GOSSIP: Final = struct.Struct(f">{NAME_BYTES}sII{IP_BYTES}sHHHHH")  # 104 bytes
_EXTENSION: Final = struct.Struct(">IHH")
_PUBLISH: Final = struct.Struct(">II")
_UPDATE: Final = struct.Struct(f">Q{NAME_BYTES}s{SLOTS // 8}s")
_MODULE: Final = struct.Struct(">QIB")
_NO_NAME: Final = bytes(NAME_BYTES)


class BusMessageError(ValueError):
    """A message Redis would drop (the text says why)."""


@dataclass
class Gossip:
    """What the sender knows of another node (clusterMsgDataGossip)."""

    name: str
    ping_sent: int  # seconds
    pong_received: int  # seconds
    ip: str
    port: int
    cport: int
    flags: int
    pport: int = 0


@dataclass
class Message:
    type: int
    sender: str
    port: int = 0
    cport: int = 0
    pport: int = 0
    current_epoch: int = 0
    config_epoch: int = 0
    offset: int = 0
    slots: bytes = bytes(SLOTS // 8)  # bit j of byte j // 8 (low bit first): slot j
    master: str | None = None  # slaveof: the sender's master, for a replica
    ip: str = ""  # "" lets the receiver take the address of the connection
    flags: int = 0
    state_ok: bool = False
    mflags: bytes = bytes(3)
    gossip: list[Gossip] = field(default_factory=list)
    extensions: list[tuple[int, bytes]] = field(default_factory=list)  # (type, data)
    data: bytes = b""  # the data of the other types, as it came

    def has_slot(self, slot: int) -> bool:
        return bool(self.slots[slot >> 3] & (1 << (slot & 7)))


def slots_bitmap(slots: list[int]) -> bytes:
    bitmap = bytearray(SLOTS // 8)
    for slot in slots:
        bitmap[slot >> 3] |= 1 << (slot & 7)
    return bytes(bitmap)


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("latin-1")


def _field(text: str, size: int) -> bytes:
    return text.encode("latin-1")[:size].ljust(size, b"\0")


def encode(message: Message) -> bytes:
    """The message as Redis frames it; extensions set mflags[0]'s EXT_DATA bit."""
    body = [_GOSSIP.pack(_field(g.name, NAME_BYTES), g.ping_sent, g.pong_received,
                         _field(g.ip, IP_BYTES), g.port, g.cport, g.flags, g.pport, 0)
            for g in message.gossip]
    for kind, data in message.extensions:
        padded = data.ljust((len(data) + 7) // 8 * 8, b"\0")
        body.append(_EXTENSION.pack(_EXTENSION.size + len(padded), kind, 0) + padded)
    body.append(message.data)
    payload = b"".join(body)
    mflags = bytearray(message.mflags)
    if message.extensions:
        mflags[0] |= FLAG0_EXT_DATA
    count = len(message.gossip) if message.type in (PING, PONG, MEET) else 0
    header = _HEADER.pack(
        SIGNATURE, HEADER_BYTES + len(payload), PROTOCOL_VERSION, message.port, message.type,
        count, message.current_epoch, message.config_epoch, message.offset,
        _field(message.sender, NAME_BYTES), message.slots,
        _NO_NAME if message.master is None else _field(message.master, NAME_BYTES),
        _field(message.ip, IP_BYTES), len(message.extensions), bytes(30), message.pport,
        message.cport, message.flags, 0 if message.state_ok else 1, bytes(mflags))
    return header + payload


def frame_length(head: bytes) -> int | None:
    """The total length a message announces, once its first 8 bytes are in (None before);
    :class:`BusMessageError` if they are not a message's."""
    if len(head) < 8:
        return None
    if head[:4] != SIGNATURE:
        raise BusMessageError("bad signature")
    total: int = struct.unpack_from(">I", head, 4)[0]
    if total < HEADER_BYTES:
        raise BusMessageError(f"message of {total} bytes, shorter than a header")
    return total


def decode(data: bytes) -> Message:
    """One whole message (``frame_length`` bytes)."""
    if len(data) < HEADER_BYTES:
        raise BusMessageError("message shorter than a header")
    (signature, total, version, port, kind, count, current_epoch, config_epoch, offset, sender,
     slots, master, ip, extensions, _unused, pport, cport, flags, state,
     mflags) = _HEADER.unpack_from(data)
    if signature != SIGNATURE:
        raise BusMessageError("bad signature")
    if total != len(data):
        raise BusMessageError(f"length {total} announced, {len(data)} given")
    if version != PROTOCOL_VERSION:
        raise BusMessageError(f"protocol version {version}")
    message = Message(kind, _text(sender), port, cport, pport, current_epoch, config_epoch,
                      offset, slots, None if master == _NO_NAME else _text(master), _text(ip),
                      flags, state == 0, mflags)
    at = HEADER_BYTES
    if kind in (PING, PONG, MEET):
        end = at + count * _GOSSIP.size
        if end > total:
            raise BusMessageError(f"{count} gossip sections do not fit in {total} bytes")
        for _ in range(count):
            (name, ping_sent, pong_received, gossip_ip, gossip_port, gossip_cport, gossip_flags,
             gossip_pport, _) = _GOSSIP.unpack_from(data, at)
            message.gossip.append(Gossip(_text(name), ping_sent, pong_received, _text(gossip_ip),
                                         gossip_port, gossip_cport, gossip_flags, gossip_pport))
            at += _GOSSIP.size
        if mflags[0] & FLAG0_EXT_DATA:
            for _ in range(extensions):
                if total - at < _EXTENSION.size:
                    raise BusMessageError("extension past the end")
                length, ext_type, _ = _EXTENSION.unpack_from(data, at)
                if length % 8 or length < _EXTENSION.size:
                    raise BusMessageError(f"extension of {length} bytes without padding")
                if total - at < length:
                    raise BusMessageError("extension past the end")
                message.extensions.append((ext_type, data[at + _EXTENSION.size:at + length]))
                at += length
        if at != total:
            raise BusMessageError(f"{total} bytes, {at} expected")
        return message
    expected = _expected_length(kind, data)
    if expected is not None and expected != total:
        raise BusMessageError(f"{TYPE_NAMES[kind]} of {total} bytes, {expected} expected")
    message.data = data[HEADER_BYTES:]
    return message


def _expected_length(kind: int, data: bytes) -> int | None:
    """What a message of another type must measure (None: a type Redis takes as it is)."""
    if kind == FAIL:
        return HEADER_BYTES + NAME_BYTES
    if kind in (PUBLISH, PUBLISHSHARD):
        if len(data) < HEADER_BYTES + _PUBLISH.size:
            return HEADER_BYTES + _PUBLISH.size
        channel, text = _PUBLISH.unpack_from(data, HEADER_BYTES)
        return HEADER_BYTES + _PUBLISH.size + channel + text
    if kind in (FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK, MFSTART):
        return HEADER_BYTES
    if kind == UPDATE:
        return HEADER_BYTES + _UPDATE.size
    if kind == MODULE:
        if len(data) < HEADER_BYTES + _MODULE.size:
            return HEADER_BYTES + _MODULE.size
        length = _MODULE.unpack_from(data, HEADER_BYTES)[1]
        return HEADER_BYTES + _MODULE.size + length
    return None


def text_extension(kind: int, text: str) -> tuple[int, bytes]:
    """A hostname or human node name extension: the text and its terminating zero."""
    return kind, text.encode("latin-1") + b"\0"


def decode_text_extension(data: bytes) -> str:
    return _text(data)
