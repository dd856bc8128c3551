"""Two processes deciding one run on one store, interleaved at the points where order matters.

A peer process (``decision_peer.py``) approves, rejects, resumes or rolls back a paused run and is held at a
chosen point (before its attempt takes the run, just after, before the attempt's last write) while this
process decides the same run; then it goes on. Over every pair of decisions and every point, on an SQLite
file and on PostgreSQL: exactly one decision is recorded and the other gets a clear error naming the run (a
decision that lost, unless the winner still holds the run, is told who won: "already answered by peer");
``pay`` runs at most once (and its revert at most once, only after it ran); the run ends completed or
rolled back, never stuck; a completed run's journal replays, and a later decision is refused, unrun.
(A signal against a resume or a park: ``test_signal_delivery.py``.)
"""

from __future__ import annotations

import collections

import pytest
from decision_peer import SCRIPT, decide, outcome, register
from examples import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from peer_process import Peer

from jupyter_sandbox import RunStateError, Sandbox, SandboxInterrupt
from jupyter_sandbox.errors import UnaddressedAnswer

DECISIONS = ("approve", "reject", "approve_by_id", "reject_rollback")
OPS = (*DECISIONS, "rollback")
# where the peer is when this process acts: before or after it entirely, or held inside its attempt
WHEN = ("peer_first", "peer_after", "claim", "claimed", "finish")
LOSER = ("RunBusyError", "RunStateError", "UnaddressedAnswer")  # (an answer by id to an interrupt answered meanwhile)


def interleave(sb: Sandbox, peer: Peer, run_id: str, peer_op: str, own_op: str, when: str) -> tuple[dict, dict]:
    """The peer's outcome and this process's, with this one acting at ``when`` in the peer's operation."""
    if when == "peer_after":
        own = outcome(sb, own_op, run_id)
        peer.send(op=peer_op, run=run_id)
        return peer.answer(), own
    peer.send(op=peer_op, run=run_id, hold=None if when == "peer_first" else when)
    first = peer.answer()
    if "held" not in first:  # done (or it never reached the point): this process acts after it
        return first, outcome(sb, own_op, run_id)
    try:
        own = outcome(sb, own_op, run_id)
    finally:
        peer.send(go=True)  # (even if this side failed: the peer must not take the next command for it)
    return peer.answer(), own


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request, tmp_path):
    """This process's Sandbox and a peer process, on one store (an SQLite file, then PostgreSQL)."""
    store = str(tmp_path / "runs.sqlite") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    effects = tmp_path / "effects.txt"
    effects.touch()
    sb = register(Sandbox(store, identity="own"), str(effects))
    peer = Peer("decision_peer.py", store, str(effects))
    yield sb, peer, effects
    peer.close()
    sb.close()


def _decided(result: dict) -> bool:
    return result["outcome"] in ("completed", "rolled_back")


@settings(max_examples=scaled(12), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(peer_op=st.sampled_from(OPS), own_op=st.sampled_from(OPS), when=st.sampled_from(WHEN))
@example(peer_op="approve", own_op="approve", when="claimed")
@example(peer_op="approve", own_op="rollback", when="finish")
@example(peer_op="rollback", own_op="approve", when="claimed")
@example(peer_op="approve_by_id", own_op="reject", when="claim")
@example(peer_op="reject_rollback", own_op="reject_rollback", when="peer_first")  # the second once "won" too
@example(peer_op="reject_rollback", own_op="approve", when="claim")  # the late rejection once undid the approval
def test_two_processes_deciding_one_run_record_one_decision_and_run_nothing_twice(shared, peer_op, own_op, when):
    sb, peer, effects = shared
    before = collections.Counter(effects.read_text().split())
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(SCRIPT)
    run_id = info.value.run_id
    results = interleave(sb, peer, run_id, peer_op, own_op, when)
    ran = collections.Counter(effects.read_text().split()) - before
    run = sb.run(run_id)
    answers = [e for e in run.entries if e["kind"] == "answer"]
    rejections = [e for e in run.entries if e["kind"] == "rollback" and e.get("rejected")]  # reject_rollback's

    for result in results:  # every loser says why, naming the run
        assert _decided(result) or (result["outcome"] in LOSER and run_id in result["message"]), result
    decisions = [r for r, op in zip(results, (peer_op, own_op), strict=True) if op in DECISIONS and _decided(r)]
    assert len(answers) + len(rejections) == len(decisions) <= 1, (results, answers)  # exactly one decision wins
    if peer_op in DECISIONS and own_op in DECISIONS:
        assert len(decisions) == 1, results
        winner = "peer" if _decided(results[0]) else "own"
        for lost in (r for r in results if not _decided(r) and r["outcome"] != "RunBusyError"):
            assert f"was already answered by {winner} via api at " in lost["message"], (results, winner)
    assert ran["pay"] <= 1 and ran["refund"] <= ran["pay"], ran  # nothing runs twice; a revert only after
    assert run.status in ("completed", "rolled_back"), (run.status, results)
    if run.status == "rolled_back":
        assert ran["refund"] == ran["pay"]
        assert [e["kind"] for e in run.entries].count("rollback") == 1  # rolled back once
        return
    approved = answers[0]["approved"]
    assert ran["pay"] == int(approved) and ran["refund"] == 0
    assert run.output == ({"paid": 5} if approved else {"rejected": "pay was rejected"})
    assert sb.check(run_id).deterministic  # the journal replays
    with pytest.raises(RunStateError, match="is completed"):  # a late third decision is refused, unrun
        sb.resume(run_id, True)
    assert collections.Counter(effects.read_text().split()) - before == ran


@pytest.mark.parametrize(
    ("won", "lost", "said"),
    [
        ("approve", "approve", "approved"),
        ("reject", "approve", "rejected"),
        ("approve", "reject_rollback", "approved"),
        ("approve_by_id", "reject", "approved"),
        ("reject_rollback", "approve_by_id", "rejected and rolled back"),
    ],
)
def test_an_answer_that_lost_the_race_is_told_who_won_how_and_when_and_changes_nothing(tmp_path, won, lost, said):
    store, effects = str(tmp_path / "runs.sqlite"), str(tmp_path / "effects.txt")
    ada, bob = (register(Sandbox(store, identity=who), effects) for who in ("ada", "bob"))
    with pytest.raises(SandboxInterrupt) as info:
        ada.eval(SCRIPT)
    run_id = info.value.run_id
    assert outcome(ada, won, run_id)["outcome"] in ("completed", "rolled_back")
    before = ada.run(run_id)
    with pytest.raises(RunStateError) as refused:  # (the class it always was: the message says more)
        decide(bob, lost, run_id)
    message, answered = str(refused.value), refused.value.answered
    assert message.startswith(f"run {run_id}: interrupt {run_id}:0 ('pay') was already answered by ada via api at ")
    assert f" UTC: {said}" in message and "not recorded" in message and "no open interrupt" not in message
    assert answered["id"] == f"{run_id}:0" and answered["by"] == "ada" and answered["via"] == "api"
    assert answered["approved"] is won.startswith("approve") and isinstance(answered["answered_at"], float)
    assert refused.value.to_dict()["answered"] == answered
    after = bob.run(run_id)  # the loser recorded nothing
    assert (after.status, after.entries, after.output) == (before.status, before.entries, before.output)
    bob.close()
    ada.close()


def test_an_answer_by_id_to_an_interrupt_answered_meanwhile_names_that_answer_and_the_one_still_open(tmp_path):
    store, effects = str(tmp_path / "runs.sqlite"), str(tmp_path / "effects.txt")
    ada, bob = (register(Sandbox(store, identity=who), effects) for who in ("ada", "bob"))
    with pytest.raises(SandboxInterrupt) as info:
        ada.eval("await actions.pay({total: 1}); return await actions.pay({total: 2})")
    run_id = info.value.run_id
    with pytest.raises(SandboxInterrupt):  # ada approves the first; the run asks for the second
        ada.resume(run_id, answers={f"{run_id}:0": True}, channel="card")
    with pytest.raises(UnaddressedAnswer) as refused:  # bob's card still showed the first
        bob.resume(run_id, answers={f"{run_id}:0": False}, channel="card")
    assert str(refused.value).startswith(
        f"run {run_id}: interrupt {run_id}:0 ('pay') was already answered by ada via card at "
    )
    assert f"Open interrupts: 'pay' at position 1 (id {run_id}:1)" in str(refused.value)
    assert refused.value.answered["approved"] is True and refused.value.unaddressed == [f"id '{run_id}:0'"]
    assert [e["by"] for e in bob.run(run_id).entries if e["kind"] == "answer"] == ["ada"]
    bob.close()
    ada.close()


@pytest.mark.parametrize("lost", ["approve", "reject", "approve_by_id"])
def test_a_decision_held_before_its_claim_while_another_decides_and_the_run_asks_again_is_told_who_won(shared, lost):
    # The peer's answer is admitted (its interrupt open), then held; this process approves, and the run pauses
    # at its second call. The peer then claims the run: its answer reaches nothing and it is told so.
    sb, peer, effects = shared
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("const a = await actions.pay({total: 5}); return [a, await actions.pay({total: 6})]")
    run_id = info.value.run_id
    peers, own = interleave(sb, peer, run_id, lost, "approve", "claim")
    assert own["outcome"] == "SandboxInterrupt", own  # approved; the run asks for the second call
    assert peers["outcome"] == "RunStateError", peers
    assert peers["message"].startswith(f"run {run_id}: interrupt {run_id}:0 ('pay') was already answered by own ")
    assert (
        "UTC: approved. This answer was not recorded; the run went on without it and is interrupted"
        in (peers["message"])
    )
    run = sb.run(run_id)
    assert [(e["id"], e["by"]) for e in run.entries if e["kind"] == "answer"] == [(f"{run_id}:0", "own")]
    assert [p["id"] for p in run.pending] == [f"{run_id}:1"] and effects.read_text().split() == ["pay"]
    assert sb.resume(run_id, True).output == [{"paid": 5}, {"paid": 6}]  # the run still waits, answerable
