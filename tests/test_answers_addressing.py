"""An answer must reach an open interrupt: one addressed to nothing is refused, listing the open ones.

Refused before the run is claimed: nothing runs, nothing is recorded, the run stays as it was, and the
right answer still resumes it afterwards. (``Sandbox.resume(run_id, value)`` answers the only open
interrupt; with none open it is refused too, unless it repeats the run's last recorded answer: a retried
resume after the answer was recorded still finishes.)
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, Resume, RunStateError, Sandbox, SandboxInterrupt
from jupyter_sandbox.errors import InvalidValue, RunParked, UnaddressedAnswer

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)

SOURCE = "await actions.work(1); const a = await actions.ask('first'); await actions.work(2); return a"


@pytest.fixture
def sb(new_sandbox):
    sandbox = new_sandbox()
    sandbox.calls = []

    @sandbox.action
    def work(x):
        sandbox.calls.append(x)
        return x

    @sandbox.action
    def ask(question, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"question": question})
        return resume.value

    return sandbox


def pause(sb, source=SOURCE, **kwargs):
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source, **kwargs)
    return info.value


def unchanged(sb, it):
    """Nothing ran or was recorded, and the run still waits at the same interrupt."""
    assert sb.calls == [1]
    assert sb.run(it.run_id).status == "interrupted"
    assert len(sb.run(it.run_id).attempts) == 1
    assert [p["id"] for p in sb.run(it.run_id).pending] == [it.interrupt.id]


def test_a_position_with_no_interrupt_is_refused_listing_the_open_one(sb):
    it = pause(sb)
    assert it.position == 1
    with pytest.raises(UnaddressedAnswer) as info:
        sb.eval(SOURCE, call_log=it.call_log, resume=Resume(position=7, value="yes"))
    message = str(info.value)
    assert "position 7 answers nothing" in message
    assert "'ask' at position 1" in message and it.interrupt.id in message
    assert info.value.open == [{"position": 1, "name": "ask", "ids": [it.interrupt.id]}]
    assert info.value.unaddressed == ["position 7"]
    unchanged(sb, it)


def test_an_unknown_interrupt_id_is_refused_listing_the_open_one(sb):
    it = pause(sb)
    with pytest.raises(UnaddressedAnswer, match=r"id 'no-such-id' answers nothing\. Open interrupts: 'ask'"):
        sb.resume(it.run_id, answers={"no-such-id": "yes"})
    unchanged(sb, it)


def test_the_refusal_is_a_run_state_error_and_a_value_error(sb):
    it = pause(sb)
    with pytest.raises(RunStateError) as info:
        sb.resume(it.run_id, answers={"no-such-id": "yes"})
    assert isinstance(info.value, ValueError) and info.value.run_id == it.run_id


def test_one_stray_answer_among_good_ones_refuses_them_all(sb):
    it = pause(sb)
    with pytest.raises(UnaddressedAnswer) as info:
        sb.resume(it.run_id, answers={it.interrupt.id: "yes", f"{it.run_id}:0": "no"})
    assert info.value.unaddressed == [f"id '{it.run_id}:0'"]
    unchanged(sb, it)


def test_after_a_refusal_the_right_answer_resumes_the_run(sb):
    it = pause(sb)
    with pytest.raises(UnaddressedAnswer):
        sb.eval(SOURCE, call_log=it.call_log, resume=Resume(position=0, value="yes"))
    result = sb.eval(SOURCE, call_log=it.call_log, resume=Resume(position=it.position, value="yes"))
    assert result.output == "yes" and sb.calls == [1, 2]


def test_an_answer_to_a_run_with_no_open_interrupt_is_refused(sb):
    sb.action(lambda x: x, name="noop")
    failed = "await actions.noop(1); throw new Error('boom')"
    with pytest.raises(Exception) as info:
        sb.eval(failed)
    run_id = info.value.run_id
    with pytest.raises(UnaddressedAnswer, match="has no open interrupt"):
        sb.resume(run_id, answers={f"{run_id}:0": True})


def test_a_plain_value_with_no_open_interrupt_is_not_an_address_and_the_resume_goes_on(sb):
    it = pause(sb)
    assert sb.resume(it.run_id, "yes").output == "yes"
    sb.store.update_run(it.run_id, status="failed")  # as a crash after the answer was recorded leaves it
    assert sb.resume(it.run_id, "yes").output == "yes"
    assert sb.calls == [1, 2]  # the retry replayed everything, ran nothing again


def test_a_retry_with_another_answer_than_the_recorded_one_is_refused(sb):
    it = pause(sb)
    assert sb.resume(it.run_id, "yes").output == "yes"
    sb.store.update_run(it.run_id, status="failed")  # as a crash after the answer was recorded leaves it
    with pytest.raises(UnaddressedAnswer, match="has no open interrupt; resume it without an answer"):
        sb.resume(it.run_id, "no")
    assert sb.resume(it.run_id).output == "yes" and sb.calls == [1, 2]


PARKED = "await actions.work(1); await ctx.sleep(3600000); return 'woke'"


@pytest.mark.parametrize("value", [None, True, False, 5, "yes", {"approved": True}])
def test_an_answer_to_a_parked_run_is_refused_before_anything_runs(sb, value):
    with pytest.raises(RunParked) as info:
        sb.eval(PARKED)
    run_id = info.value.run_id
    entries = len(sb.run(run_id).entries)
    with pytest.raises(UnaddressedAnswer, match=r"the one answer answers nothing: the run \(parked\) has no open"):
        sb.resume(run_id, value)
    assert (sb.status(run_id), len(sb.run(run_id).entries), sb.calls) == ("parked", entries, [1])
    with pytest.raises(RunParked):  # no answer: it just resumes (and parks again, its timer not due)
        sb.resume(run_id)
    assert sb.calls == [1]


def test_a_fork_answering_where_no_interrupt_is_open_is_refused_like_an_answer_by_id(sb):
    it = pause(sb)
    assert sb.resume(it.run_id, "yes").output == "yes"
    runs = len(sb.runs())
    for answer in ({"value": True}, {"answers": {it.interrupt.id: True}}):
        with pytest.raises(UnaddressedAnswer, match="has no open interrupt"):
            sb.fork(it.run_id, 0, **answer)
    assert len(sb.runs()) == runs  # refused before the fork was made
    with pytest.raises(SandboxInterrupt):  # (left out: no answer, and the fork asks again)
        sb.fork(it.run_id, 0)


def test_from_a_bare_call_log_a_position_must_be_one_of_its_open_slots(sb):
    it = pause(sb)
    bare = list(it.call_log)
    with pytest.raises(UnaddressedAnswer, match=r"open slots are \[1\]"):
        sb.eval(SOURCE, call_log=bare, resume=Resume(position=0, value="yes"))
    runs_before = len(sb.runs())
    with pytest.raises(UnaddressedAnswer):
        sb.eval(SOURCE, call_log=bare, resume=Resume(position=5, value="yes"))
    assert len(sb.runs()) == runs_before  # refused before a run was created
    assert sb.eval(SOURCE, call_log=bare, resume=Resume(position=1, value="yes")).output == "yes"


def test_from_a_bare_call_log_an_interrupt_id_cannot_be_answered(sb):
    it = pause(sb)
    with pytest.raises(UnaddressedAnswer, match="answers nothing"):
        sb.eval(SOURCE, call_log=list(it.call_log), resume=Resume(id=it.interrupt.id, value="yes"))


def test_an_answer_without_a_call_log_or_run_is_refused(sb):
    with pytest.raises(UnaddressedAnswer, match="pass the interrupted run's call_log"):
        sb.eval(SOURCE, resume=Resume(position=1, value="yes"))
    assert sb.runs() == []


def test_a_fork_answer_must_reach_the_interrupt_open_at_the_fork_point(sb):
    it = pause(sb)
    result = sb.resume(it.run_id, "yes")
    answer_seq = next(e["seq"] for e in sb.run(result.run_id).entries if e["kind"] == "answer")
    runs_before = len(sb.runs())
    with pytest.raises(UnaddressedAnswer, match="'ask' at position 1"):
        sb.fork(it.run_id, answer_seq, answers={"no-such-id": "no"})
    assert len(sb.runs()) == runs_before  # no fork was created
    assert sb.fork(it.run_id, answer_seq, answers={it.interrupt.id: "no"}).output == "no"


def test_a_delegated_childs_interrupt_is_answered_by_its_own_id(sb):
    child = "return await actions.ask('from the child')"
    source = "return await ctx.delegate({script: ctx.input})"
    it = pause(sb, source, input=child)
    assert it.interrupt.run_id != it.run_id
    with pytest.raises(UnaddressedAnswer) as info:
        sb.resume(it.run_id, answers={"r-nothing:0": "yes"})
    assert it.interrupt.id in info.value.open[0]["ids"]
    assert sb.resume(it.run_id, answers={it.interrupt.id: "yes"}).output == "yes"


@pytest.mark.parametrize(
    "resume, error",
    [
        (Resume(position="1", value=True), "position"),
        (Resume(position=-1, value=True), "position"),
        (Resume(position=True, value=True), "position"),
    ],
)
def test_a_position_that_is_not_a_slot_number_is_a_type_error(sb, resume, error):
    it = pause(sb)
    with pytest.raises(TypeError, match=error):
        sb.eval(SOURCE, call_log=it.call_log, resume=resume)


def test_a_resume_with_neither_position_nor_id_is_a_type_error(sb):
    it = pause(sb)
    with pytest.raises(TypeError, match="needs position= .* or id="):
        sb.eval(SOURCE, call_log=it.call_log, resume=Resume(value="yes"))
    unchanged(sb, it)


def test_an_answer_keyed_by_something_other_than_an_id_is_a_type_error(sb):
    it = pause(sb)
    with pytest.raises(TypeError, match="interrupt id"):
        sb.resume(it.run_id, answers={1: "yes"})


PARALLEL = (
    "const r = await ctx.parallel([() => actions.ask('a'), () => actions.work(1), () => actions.ask('b'),"
    " () => actions.work(2)]); return r"
)


@given(positions=st.sets(st.integers(0, 6), min_size=1, max_size=3))
def test_a_resume_goes_on_exactly_when_every_position_it_answers_is_open(positions):
    sb = Sandbox()
    sb.action(lambda x: x, name="work")

    @sb.action
    def ask(question, resume=None):
        if resume is None:
            raise ActionInterrupt(data=question)
        return resume.value

    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(PARALLEL)
    it = info.value
    open_ = {i.position for i in it.interrupts}
    assert open_ == {0, 2}
    answers = [Resume(position=p, value=f"answer {p}") for p in sorted(positions)]
    if positions <= open_:
        try:
            result = sb.eval(PARALLEL, call_log=it.call_log, resume=answers)
            assert positions == open_ and result.output == ["answer 0", 1, "answer 2", 2]
        except SandboxInterrupt as again:
            assert {i.position for i in again.interrupts} == open_ - positions
    else:
        with pytest.raises(UnaddressedAnswer) as refused:
            sb.eval(PARALLEL, call_log=it.call_log, resume=answers)
        assert refused.value.unaddressed == [f"position {p}" for p in sorted(positions - open_)]
        assert "at position 0" in str(refused.value) and "at position 2" in str(refused.value)
        assert len(sb.run(it.run_id).attempts) == 1


@settings(max_examples=scaled(20), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(key=st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.tuples(st.text(max_size=3)))
def test_an_answers_key_that_is_no_interrupt_id_string_is_a_sandbox_error_changing_nothing(sb, key):
    it = pause(sb)
    sb.calls.clear()
    sb.calls.append(1)
    with pytest.raises(InvalidValue, match="keyed by interrupt id"):
        sb.resume(it.run_id, answers={key: True})
    unchanged(sb, it)
