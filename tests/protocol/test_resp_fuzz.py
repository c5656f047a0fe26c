"""The differential RESP fuzzer in CI: fixed seeds, a bounded number of sessions, Brook against
the real redis-server (tests/protocol/resp_fuzz.py builds and runs them; ``python -m bench.fuzz`` is the
long run). Any difference in reply bytes or in whether the server closed the connection fails,
as does a server that stops answering (crash) or a session that never ends (hang).

Every Brook bug the fuzzer has found (tests/protocol/resp_fuzz.py ``FINDINGS``) is fixed, and its
shortest reproduction runs here as a regression test. While a new finding is open, CI leaves
out the generator features that reach it (``SKIPPED_FEATURES`` there, empty now).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import ServerProcess, _reset
from tests.protocol.resp_fuzz import (
    FEATURES,
    FINDINGS,
    NORMALISATIONS,
    SKIPPED_FEATURES,
    DifferentialRunner,
    Finding,
    FrameGenerator,
    Outcome,
    compare,
    cuts_before_star,
    encode_multibulk,
    predict,
    reply_owners,
)

SEEDS = (1, 2, 3)
SESSIONS = 300  # per seed: about 3,500 frames, a few seconds


@pytest.fixture
def runner(brook_process: ServerProcess,
           redis_process: ServerProcess | None) -> Iterator[DifferentialRunner]:
    """Both session servers with default settings, empty; left empty, our connections closed."""
    if redis_process is None:
        pytest.skip("redis-server is not installed")
    _reset(brook_process)
    _reset(redis_process)
    fuzz = DifferentialRunner(brook_process.port, redis_process.port, hang_timeout=10)
    yield fuzz
    fuzz.reset()
    fuzz.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_brook_answers_fuzzed_sessions_as_redis_does(runner: DifferentialRunner, seed: int):
    generator = FrameGenerator(seed, exclude=SKIPPED_FEATURES)
    differences, hangs = [], []
    for index in range(SESSIONS):
        session = generator.session(index)
        verdict = runner.run(session)
        assert not verdict.down, f"{verdict.down} stopped answering after session {index}"
        if "hang" in (verdict.brook.fate, verdict.redis.fate):
            hangs.append((index, verdict.brook.fate, verdict.redis.fate))
        if not verdict.same:
            differences.append((index, verdict.detail, session.chunks()))
    assert not hangs, f"seed {seed}: sessions that never ended: {hangs}"
    assert not differences, (f"seed {seed}: {len(differences)} differences; the first, "
                             f"{_short(differences[0])}")


def _short(item: object) -> str:
    text = repr(item)
    return text if len(text) < 1500 else text[:1500] + "..."


def test_every_cut_of_a_pipeline(runner: DifferentialRunner):
    """One pipeline of every kind of frame, in two writes cut at each byte."""
    pipeline = (encode_multibulk([b"SET", b"k", b"\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"])
                + encode_multibulk([b"HELLO", b"3"]) + encode_multibulk([b"GET", b"k"])
                + b"*0\r\n*-1\r\n" + encode_multibulk([b"MULTI"])
                + encode_multibulk([b"SADD", b"s", b"b", b"a"]) + encode_multibulk([b"EXEC"])
                + b'ECHO "a\\x41\\n" \'b c\'\r\n' + b"\n\r\nPING\n" + b"*1\r\n$4\r\nPING\r\n")
    skipped = cuts_before_star(pipeline, list(range(1, len(pipeline))))
    for cut in range(1, len(pipeline)):
        if cut in skipped:  # F3
            continue
        verdict = runner.run_chunks([pipeline[:cut], pipeline[cut:]], pause=True,
                                    pause_seconds=0.002)
        assert verdict.same, f"cut after {pipeline[:cut]!r}: {verdict.detail}"
        assert verdict.brook.fate == "open"


@pytest.mark.parametrize("finding", FINDINGS, ids=[f.name[:2] for f in FINDINGS])
def test_fixed_findings_stay_fixed(runner: DifferentialRunner, finding: Finding):
    # Writes 0.2 s apart: F3 needs them read apart.
    verdict = runner.run_chunks(list(finding.writes), pause=True, pause_seconds=0.2)
    assert verdict.same, verdict.detail


# -- the generator and the comparison on their own -------------------------------------------------


def test_sessions_depend_only_on_seed_and_index():
    first = [FrameGenerator(5).session(i) for i in range(50)]
    again = FrameGenerator(5)
    assert [again.session(i) for i in reversed(range(50))][::-1] == first
    assert [FrameGenerator(6).session(i) for i in range(50)] != first
    for session in first:
        assert b"".join(session.chunks()) == session.stream


def test_every_feature_is_generated():
    generator = FrameGenerator(11)
    seen: set[str] = set()
    for index in range(1500):
        seen |= generator.session(index).features
    assert seen == set(FEATURES)


# What leaving out the features that once reached F1-F3 must keep out of every stream.
_ODD_BYTES = {"echoed_bytes", "nul", "header_cr_nul", "cut_before_star"}


def test_excluded_features_stay_out():
    generator = FrameGenerator(12, exclude=_ODD_BYTES)
    for index in range(400):
        session = generator.session(index)
        assert not session.features & _ODD_BYTES
        stream = session.stream
        assert b"\x00" not in stream
        assert not any(byte > 127 for byte in stream)
        assert all(stream[i + 1:i + 2] == b"\n" for i in range(len(stream)) if stream[i] == 13)
        assert not cuts_before_star(stream, session.cuts)


def test_unknown_features_are_refused():
    with pytest.raises(ValueError):
        FrameGenerator(1, exclude=["no-such-feature"])


def test_prediction_and_reply_owners():
    stream = (encode_multibulk([b"MULTI"]) + encode_multibulk([b"SMEMBERS", b"s"])
              + encode_multibulk([b"GET"]) + encode_multibulk([b"EXEC"]) + b"PING\r\n")
    prediction = predict(stream)
    assert prediction.end == "idle" and len(prediction.requests) == 5
    # GET without its key is not queued: it is an arity error.
    assert reply_owners(prediction.requests, False) == [b"MULTI", b"SMEMBERS", b"GET",
                                                        [b"SMEMBERS"], b"PING"]
    assert predict(b"*2\r\n$4\r\nECHO\r\n$3\r\nab").end == "partial"
    assert predict(b"PING\r\n*1\r\n$x\r\n").end == "error"
    assert predict(b"QUIT\r\nPING\r\n").end == "quit"


def test_normalisations_apply_only_to_their_commands():
    members = b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    swapped = b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"
    smembers = predict(encode_multibulk([b"SMEMBERS", b"s"]))
    lrange = predict(encode_multibulk([b"LRANGE", b"l", b"0", b"-1"]))
    verdict = compare(Outcome(members, "open"), Outcome(swapped, "open"), smembers)
    assert verdict.same and verdict.normalised == ["smembers-order"]
    assert not compare(Outcome(members, "open"), Outcome(swapped, "open"), lrange).same
    assert not compare(Outcome(members, "open"), Outcome(members, "closed"), smembers).same
    hello = predict(encode_multibulk([b"HELLO", b"3"]))
    ours = b"%2\r\n$7\r\nversion\r\n$5\r\n7.4.0\r\n$2\r\nid\r\n:7\r\n"
    theirs = b"%2\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$2\r\nid\r\n:42\r\n"
    assert compare(Outcome(ours, "open"), Outcome(theirs, "open"), hello).same
    other = b"%2\r\n$7\r\nversion\r\n$5\r\n7.4.0\r\n$4\r\nmode\r\n$7\r\ncluster\r\n"
    assert not compare(Outcome(other, "open"), Outcome(theirs, "open"), hello).same
    assert {rule.name for rule in NORMALISATIONS} == {
        "hello-version-and-id", "smembers-order", "hgetall-order"}
