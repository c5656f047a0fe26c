"""The cluster bus's messages (brook/cluster/bus_messages.py) against a real redis-server's bus:
a MEET Brook encodes is taken by Redis (which then lists the sender, in handshake, at the
ports the message gave), and the PONG Redis answers decodes to what Redis says of itself and
encodes back to the same bytes. And every message type, cut or padded wrongly, is refused as
Redis drops it."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from brook.cluster.bus_messages import (
    EXT_FORGOTTEN_NODE,
    EXT_HOSTNAME,
    EXT_SHARDID,
    FAIL,
    HEADER_BYTES,
    MEET,
    PING,
    PONG,
    PUBLISH,
    UPDATE,
    BusMessageError,
    Gossip,
    Message,
    decode,
    decode_text_extension,
    encode,
    frame_length,
    slots_bitmap,
    text_extension,
)
from brook.cluster.node import MASTER, MYSELF
from tests.conftest import Spawn
from tests.support.cluster_ports import free_cluster_port

FAKE = "b" * 40


def _read_message(sock: socket.socket) -> bytes:
    data = b""
    total = None
    deadline = time.monotonic() + 10
    while total is None or len(data) < total:
        assert time.monotonic() < deadline, "no whole message from the bus"
        chunk = sock.recv(65536)
        assert chunk, "the bus closed the link"
        data += chunk
        if total is None:
            total = frame_length(data)
    return data[:total]


def test_every_kind_of_message_round_trips() -> None:
    ping = Message(PING, FAKE, port=7000, cport=17000, current_epoch=5, config_epoch=3,
                   offset=12345, slots=slots_bitmap([0, 7, 8, 16383]), master="c" * 40,
                   ip="10.0.0.1", flags=MASTER, state_ok=True,
                   gossip=[Gossip("d" * 40, 1, 2, "10.0.0.2", 7001, 17001, MASTER, 0)],
                   extensions=[text_extension(EXT_HOSTNAME, "node-1.example"),
                               (EXT_SHARDID, b"e" * 40),
                               (EXT_FORGOTTEN_NODE, b"f" * 40 + (60).to_bytes(8, "big"))])
    data = encode(ping)
    assert len(data) == HEADER_BYTES + 104 + (8 + 16) + (8 + 40) + (8 + 48)
    back = decode(data)
    assert back.has_slot(0) and back.has_slot(7) and back.has_slot(16383)
    assert not back.has_slot(1)
    assert decode_text_extension(back.extensions[0][1]) == "node-1.example"
    assert encode(back) == data
    for kind, payload in ((FAIL, b"g" * 40), (UPDATE, (9).to_bytes(8, "big") + b"h" * 40
                                              + bytes(2048)),
                          (PUBLISH, (2).to_bytes(4, "big") + (5).to_bytes(4, "big") + b"chhello")):
        message = Message(kind, FAKE, data=payload)
        assert decode(encode(message)).data == payload


def test_malformed_messages_are_refused() -> None:
    data = encode(Message(PING, FAKE, gossip=[Gossip("d" * 40, 0, 0, "", 1, 2, 0)],
                          extensions=[(EXT_SHARDID, b"e" * 40)]))
    for cut in range(HEADER_BYTES - 1, len(data), 7):
        with pytest.raises(BusMessageError):
            decode(data[:cut])
    with pytest.raises(BusMessageError):
        decode(b"XXXX" + data[4:])
    with pytest.raises(BusMessageError):
        frame_length(b"RCmb\0\0\0\x10")  # shorter than a header
    unpadded = bytearray(data)
    at = HEADER_BYTES + 104
    unpadded[at:at + 4] = (8 + 41).to_bytes(4, "big")
    with pytest.raises(BusMessageError):
        decode(bytes(unpadded))
    with pytest.raises(BusMessageError):
        decode(encode(Message(FAIL, FAKE, data=b"short")))
    other_version = bytearray(data)
    other_version[8:10] = (2).to_bytes(2, "big")
    with pytest.raises(BusMessageError):
        decode(bytes(other_version))


def test_redis_takes_brooks_meet_and_its_pong_decodes_to_what_it_says(spawn: Spawn,
                                                                       tmp_path: Path) -> None:
    proc = spawn("--cluster-enabled", "yes", "--cluster-config-file",
                 str(tmp_path / "nodes.conf"), "--save", "", port=free_cluster_port())
    if proc.kind != "redis":
        pytest.skip("Brook's side of the bus is not built yet (docs/cluster.md)")
    r = proc.client(decode_responses=True)
    r.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "99")
    redis_id = r.execute_command("CLUSTER", "MYID")
    fake_port = free_cluster_port()
    meet = Message(MEET, FAKE, port=fake_port, cport=fake_port + 10000, flags=MASTER,
                   extensions=[(EXT_SHARDID, b"e" * 40)])
    with socket.create_connection(("127.0.0.1", proc.port + 10000), timeout=10) as bus:
        bus.sendall(encode(meet))
        raw = _read_message(bus)
    pong = decode(raw)
    assert (pong.type, pong.sender, pong.port, pong.cport) == (
        PONG, redis_id, proc.port, proc.port + 10000)
    assert pong.flags & (MASTER | MYSELF) == MASTER | MYSELF
    assert [slot for slot in range(200) if pong.has_slot(slot)] == list(range(100))
    assert pong.master is None
    assert encode(pong) == raw
    deadline = time.monotonic() + 10
    while True:
        lines = r.execute_command("CLUSTER", "NODES").splitlines()
        met = [line for line in lines if f":{fake_port}@{fake_port + 10000}" in line]
        if met:
            break
        assert time.monotonic() < deadline, lines
        time.sleep(0.05)
    assert "handshake" in met[0].split()[2]
