"""``sb.resume(run_id, value, answers={id: ...})``: the value and the answer by id must agree on the interrupt
they both reach; when they differ it is a ``RunStateError`` before anything is recorded, neither one winning."""

from __future__ import annotations

import json

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, RunStateError, Sandbox, SandboxInterrupt


@pytest.fixture(scope="module")
def sb():
    with Sandbox() as sandbox:

        @sandbox.action
        def ask(question, resume=None):
            if resume is None:
                raise ActionInterrupt(data={"question": question})
            return resume.value

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
