"""A rollback of a paused run decides its open interrupt (the run never resumes), so the ``approvers`` policy
that an answer passes must allow it too: else ``AnswerRefused`` and nothing recorded. A rollback of a run
with nothing open decides nothing and is not asked."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import AnswerRefused, Sandbox, SandboxInterrupt

CHANNELS = ["api", "card", "magic", "mcp:cursor", "tool"]


def sandbox(allowed: set[str]) -> Sandbox:
    sb = Sandbox(identity="ada@lab", approvers=lambda who, via, interrupt: via in allowed)
    sb.action(lambda n: n, name="book", approval=True, revert=lambda n, result: None)
    return sb


def paused(sb: Sandbox) -> str:
    with pytest.raises(SandboxInterrupt) as it:
        sb.eval("return await actions.book(1)")
    return it.value.run_id


@settings(max_examples=scaled(10), deadline=None)
@given(allowed=st.sets(st.sampled_from(CHANNELS)), channel=st.sampled_from(CHANNELS))
def test_a_rollback_of_a_paused_run_passes_the_approvers_policy_as_an_answer_does(allowed, channel):
    with sandbox(allowed) as sb:
        run_id = paused(sb)
        before = len(sb.run(run_id).entries)
        if channel in allowed:
            sb.rollback(run_id, channel=channel)
            assert sb.status(run_id) == "rolled_back"
            return
        with pytest.raises(AnswerRefused, match="approvers policy"):
            sb.rollback(run_id, channel=channel)
        with pytest.raises(AnswerRefused):  # the same verdict as an answer through that channel
            sb.resume(run_id, False, channel=channel)
        assert len(sb.run(run_id).entries) == before and sb.status(run_id) == "paused"


def test_a_rollback_of_a_finished_run_is_not_an_answer_and_is_not_asked():
    with sandbox(set()) as sb:
        sb.action(lambda n: n, name="note", revert=lambda n, result: None)
        run = sb.eval("return await actions.note(1)")
        assert [item["input"] for item in sb.rollback(run.run_id).reverted] == [1]
