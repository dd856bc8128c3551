"""``sb.resume(run_id, value, answers={id: ...})``: the value and the answer by id must agree on the interrupt
they both reach; when they differ it is a ``RunStateError`` before anything is recorded, neither one winning.
A question's answers agree when they are the same JSON; an approval's when they state the same decision, in
whichever form (``True``, ``Approve()``, ``{"approved": true}``)."""

from __future__ import annotations

import json

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import (
    ActionError,
    ActionInterrupt,
    Approve,
    Edit,
    Reject,
    RunStateError,
    Sandbox,
    SandboxInterrupt,
)


@pytest.fixture(scope="module")
def sb():
    with Sandbox() as sandbox:

        @sandbox.action
        def ask(question, resume=None):
            if resume is None:
                raise ActionInterrupt(data={"question": question})
            return resume.value

        sandbox.action(lambda order: order, name="pay", approval=True)
        yield sandbox


def paused(sb: Sandbox) -> SandboxInterrupt:
    with pytest.raises(SandboxInterrupt) as it:
        sb.eval("return await actions.ask('which?')")
    return it.value


SAFE = st.integers(min_value=-(2**53), max_value=2**53)  # integers the script reads back exactly
ANSWERS = st.one_of(st.booleans(), SAFE, st.text(max_size=20), st.lists(SAFE, max_size=3))


@settings(max_examples=scaled(20), deadline=None)
@given(value=ANSWERS, by_id=ANSWERS)
def test_a_value_and_an_answer_by_id_for_the_same_interrupt_must_agree(sb, value, by_id):
    it = paused(sb)
    before = len(sb.run(it.run_id).entries)
    if json.dumps(value) == json.dumps(by_id):  # the same JSON (False is not 0)
        assert sb.resume(it.run_id, value, answers={it.interrupt.id: by_id}).output == value
        return
    with pytest.raises(RunStateError, match="differently") as refused:
        sb.resume(it.run_id, value, answers={it.interrupt.id: by_id})
    assert refused.value.run_id == it.run_id
    assert len(sb.run(it.run_id).entries) == before  # nothing recorded: the run still waits
    assert sb.resume(it.run_id, by_id).output == by_id


REASONS = st.none() | st.sampled_from(["too much", "no"])
EDITS = st.integers(min_value=0, max_value=3)
# Each form of a decision beside what it means, written out here: ("approve",), ("edit", input), ("reject", reason).
DECISIONS = st.one_of(
    st.sampled_from([(True, ("approve",)), (Approve(), ("approve",)), ({"approved": True}, ("approve",))]),
    st.sampled_from([(False, ("reject", None)), ({"approved": False}, ("reject", None))]),
    REASONS.map(lambda r: (Reject(r), ("reject", r))),
    REASONS.map(lambda r: ({"approved": False, "reason": r} if r else {"approved": False}, ("reject", r))),
    EDITS.map(lambda n: (Edit(n), ("edit", n))),
    EDITS.map(lambda n: ({"approved": True, "input": n}, ("edit", n))),
)


@settings(max_examples=scaled(25), deadline=None)
@given(value=DECISIONS, by_id=DECISIONS)
def test_a_value_and_an_answer_by_id_for_an_approval_agree_when_they_state_the_same_decision(sb, value, by_id):
    (value, meaning), (by_id, by_id_meaning) = value, by_id
    with pytest.raises(SandboxInterrupt) as it:
        sb.eval("return await actions.pay(9)")
    run_id, interrupt_id = it.value.run_id, it.value.interrupt.id
    before = len(sb.run(run_id).entries)
    if meaning != by_id_meaning:
        with pytest.raises(RunStateError, match="differently"):
            sb.resume(run_id, value, answers={interrupt_id: by_id})
        assert len(sb.run(run_id).entries) == before  # nothing recorded: the run still waits
        return
    if meaning[0] == "reject":
        with pytest.raises(ActionError, match="rejected"):
            sb.resume(run_id, value, answers={interrupt_id: by_id})
    else:
        assert sb.resume(run_id, value, answers={interrupt_id: by_id}).output == (
            9 if meaning == ("approve",) else meaning[1]
        )
