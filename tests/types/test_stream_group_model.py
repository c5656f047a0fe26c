"""Consumer groups on Brook: the seeds' two-consumer scenario, and a property test that runs
random group operations and checks the invariants of the pending entries lists after each one.

The parity of every reply with real Redis is tested elsewhere (test_stream_groups.py, and the
differential test); this file checks what must hold whatever the sequence: the group's PEL is
exactly the disjoint union of its consumers' PELs plus the entries released with XNACK, every
count that reports it agrees, and ``>`` never delivers an entry twice.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import RawConnection, ServerProcess

CONSUMERS = ("a", "b", "c")


def test_one_message_goes_to_exactly_one_consumer_of_a_group(r):
    """Seeds 000/002: C1 and C2 read the same group; one XADD reaches exactly one of them."""
    r.xgroup_create("s", "g", "$", mkstream=True)
    assert r.xreadgroup("g", "c1", {"s": ">"}) == []
    assert r.xreadgroup("g", "c2", {"s": ">"}) == []
    entry_id = r.xadd("s", {"job": "1"})
    first = r.xreadgroup("g", "c1", {"s": ">"})
    second = r.xreadgroup("g", "c2", {"s": ">"})
    assert first == [[b"s", [(entry_id, {b"job": b"1"})]]]
    assert second == []
    assert r.xpending("s", "g")["consumers"] == [{"name": b"c1", "pending": 1}]


def _pel(client: RawConnection, consumer: str | None = None) -> list[tuple[bytes, bytes, int]]:
    """(id, owner, deliveries) of the group's PEL, or of one consumer's."""
    args = ["XPENDING", "s", "g", "-", "+", "100000"] + ([consumer] if consumer else [])
    return [(row[0], row[1], row[3]) for row in client.call(*args)]


def _check_invariants(client: RawConnection) -> None:
    group_pel = _pel(client)
    ids = [entry_id for entry_id, _, _ in group_pel]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split(b"-"))))
    union: list[tuple[bytes, bytes, int]] = []
    infos = {c[b"name"]: c for c in (
        dict(zip(row[::2], row[1::2], strict=True))
        for row in client.call("XINFO", "CONSUMERS", "s", "g"))}
    for name in infos:
        own = _pel(client, name.decode())
        assert all(owner == name for _, owner, _ in own)
        assert infos[name][b"pending"] == len(own)
        union += own
    released = [row for row in group_pel if row[1] == b""]
    # Disjoint union: every record once, in exactly one consumer or in the released area.
    assert sorted(union + released) == sorted(group_pel)
    assert len({entry_id for entry_id, _, _ in union + released}) == len(group_pel)
    summary = client.call("XPENDING", "s", "g")
    assert summary[0] == len(group_pel)
    if group_pel:
        assert (summary[1], summary[2]) == (group_pel[0][0], group_pel[-1][0])
        owned = {name: int(count) for name, count in summary[3] or []}
        assert owned == {name: info[b"pending"] for name, info in infos.items()
                         if info[b"pending"]}
    info = client.call("XINFO", "STREAM", "s", "FULL")
    full = dict(zip(info[::2], info[1::2], strict=True))
    (group,) = [dict(zip(g[::2], g[1::2], strict=True)) for g in full[b"groups"]]
    assert group[b"pel-count"] == len(group_pel)
    assert group[b"nacked-count"] == len(released)
    groups = client.call("XINFO", "GROUPS", "s")
    assert dict(zip(groups[0][::2], groups[0][1::2], strict=True))[b"pending"] == len(group_pel)


OPERATIONS = st.one_of(
    st.builds(lambda n: ["XADD", "s", "*", "n", str(n)], st.integers(0, 9)),
    st.builds(lambda c, n, noack: ["XREADGROUP", "GROUP", "g", c, "COUNT", str(n), *noack,
                                   "STREAMS", "s", ">"],
              st.sampled_from(CONSUMERS), st.integers(1, 3), st.sampled_from([[], [], ["NOACK"]])),
    st.builds(lambda c: ["XREADGROUP", "GROUP", "g", c, "STREAMS", "s", "0"],
              st.sampled_from(CONSUMERS)),
    st.builds(lambda c, n: ["XREADGROUP", "GROUP", "g", c, "COUNT", str(n), "CLAIM", "0",
                            "STREAMS", "s", ">"], st.sampled_from(CONSUMERS), st.integers(1, 3)),
    st.builds(lambda k: ["XACK", "s", "g", *k], st.lists(st.integers(0, 30), min_size=1,
                                                          max_size=3)),
    st.builds(lambda c, k: ["XCLAIM", "s", "g", c, "0", *k, "JUSTID"],
              st.sampled_from(CONSUMERS), st.lists(st.integers(0, 30), min_size=1, max_size=3)),
    st.builds(lambda c, n: ["XAUTOCLAIM", "s", "g", c, "0", "0", "COUNT", str(n)],
              st.sampled_from(CONSUMERS), st.integers(1, 4)),
    st.builds(lambda mode, k, force: ["XNACK", "s", "g", mode, "IDS", str(len(k)), *k, *force],
              st.sampled_from(["SILENT", "FAIL", "FATAL"]),
              st.lists(st.integers(0, 30), min_size=1, max_size=3),
              st.sampled_from([[], ["FORCE"]])),
    st.builds(lambda k: ["XDEL", "s", *k], st.lists(st.integers(0, 30), min_size=1,
                                                     max_size=2)),
    st.builds(lambda c: ["XGROUP", "DELCONSUMER", "s", "g", c], st.sampled_from(CONSUMERS)),
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), steps=st.integers(5, 50))
def test_group_invariants_hold_after_every_operation(brook: ServerProcess, data: st.DataObject,
                                                      steps: int) -> None:
    client = RawConnection(brook.port)
    client.call("DEL", "s")
    client.call("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    added: list[bytes] = []
    delivered: set[bytes] = set()
    try:
        for _ in range(steps):
            command = [str(a) for a in data.draw(OPERATIONS)]
            # In ID positions an integer stands for the n-th entry added so far (or, past the
            # end, for an ID that is not in the stream).
            command = [added[int(a)].decode() if _is_id_slot(command, i) and int(a) < len(added)
                       else a for i, a in enumerate(command)]
            reply = client.call(*command)
            if command[0] == "XADD":
                added.append(reply)  # type: ignore[arg-type]
            elif command[0] == "XREADGROUP" and command[-1] == ">" and isinstance(reply, list):
                # New entries: plain pairs, or [id, fields, 0, 0] next to claimed ones.
                new = [item[0] for item in reply[0][1] if len(item) == 2 or item[2:] == [0, 0]]
                assert not delivered.intersection(new), "an entry went out twice by >"
                delivered.update(new)
            _check_invariants(client)
    finally:
        client.close()


def _is_id_slot(command: list[str], index: int) -> bool:
    """Which arguments of a drawn command are entry IDs (the integers to translate)."""
    name = command[0]
    if name == "XACK":
        return index >= 3
    if name == "XCLAIM":
        return 5 <= index < len(command) - 1
    if name == "XNACK":
        return index >= 6 and command[index] != "FORCE"
    if name == "XDEL":
        return index >= 2
    return False
