"""Values handed to Python and values kept in the journal never share a mutable object, in either direction.

An action that edits its input, an answer or the data it interrupted with, an observer that edits the
entries it is shown, a caller who edits the objects they passed in: none of it changes what was recorded,
what ``SandboxInterrupt.call_log`` / ``RunResult.call_log`` show, or whether the documented resume works.
"""

from __future__ import annotations

import asyncio
import json
import string
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, Resume, Sandbox, SandboxInterrupt
from jupyter_sandbox.actions import Action
from jupyter_sandbox.calling import call_action
from jupyter_sandbox.engine.attempt import Observer

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)

SOURCE = "const v = {items: [1], tag: 'x'}; await actions.wreck(v); const a = await actions.gate(1); return [v, a]"
ORIGINAL = {"items": [1], "tag": "x"}


def wreck_everything(value):
    """What a careless action does: empty every container it was given, in place."""
    if isinstance(value, dict):
        for inner in value.values():
            wreck_everything(inner)
        value.clear()
        value["wrecked"] = True
    elif isinstance(value, list):
        for inner in value:
            wreck_everything(inner)
        value.clear()
        value.append("wrecked")


@pytest.fixture
def sb(new_sandbox):
    sandbox = new_sandbox()

    @sandbox.action
    def wreck(value):
        wreck_everything(value)
        return "done"

    @sandbox.action(approval=True)
    def gate(x):
        return x

    return sandbox


def pause(sb, source=SOURCE, **kwargs):
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source, **kwargs)
    return info.value


def test_an_action_editing_its_input_leaves_the_interrupts_call_log_as_the_script_sent_it(sb):
    it = pause(sb)
    assert it.call_log[0]["input"] == ORIGINAL


def test_after_an_action_edited_its_input_the_documented_resume_works(sb):
    it = pause(sb)
    result = sb.eval(SOURCE, call_log=it.call_log, resume=Resume(position=it.position, value=True))
    assert result.output == [ORIGINAL, 1]  # the script's own object was never touched either


def test_after_an_action_edited_its_input_a_resume_from_the_bare_call_log_works(sb):
    it = pause(sb)
    result = sb.eval(
        SOURCE, call_log=json.loads(json.dumps(it.call_log)), resume=Resume(position=it.position, value=True)
    )
    assert result.output == [ORIGINAL, 1]


def test_an_action_editing_its_input_leaves_the_finished_runs_call_log_as_sent(sb):
    result = sb.eval("const v = {items: [1], tag: 'x'}; await actions.wreck(v); return v")
    assert result.call_log[0]["input"] == ORIGINAL
    assert result.call_log == sb.call_log(result.run_id)


def test_an_action_that_edits_its_input_then_interrupts_records_the_input_as_sent():
    sb = Sandbox()

    @sb.action
    def ask(value, resume=None):
        wreck_everything(value)
        if resume is None:
            raise ActionInterrupt(data="ok?")
        return resume.value

    source = "return await actions.ask({items: [1], tag: 'x'})"
    it = pause(sb, source)
    assert it.interrupt.input == ORIGINAL
    recorded = [e for e in sb.run(it.run_id).entries if e["kind"] == "interrupt"]
    assert recorded[0]["input"] == ORIGINAL
    assert sb.eval(source, call_log=it.call_log, resume=Resume(position=it.position, value="yes")).output == "yes"


def test_data_an_action_interrupted_with_and_edits_later_is_shown_as_it_was_raised():
    sb = Sandbox()
    held = {"draft": ["hello"]}

    @sb.action
    def ask(value, resume=None):
        if resume is None:
            raise ActionInterrupt(data=held, state=held)
        return resume.state

    it = pause(sb, "return await actions.ask(1)")
    held["draft"].append("edited after the interrupt")
    assert it.interrupt.data == {"draft": ["hello"]}
    assert sb.run(it.run_id).pending[0]["data"] == {"draft": ["hello"]}
    assert sb.resume(it.run_id, "go").output == {"draft": ["hello"]}


def test_an_action_editing_its_answer_leaves_the_callers_object_and_the_record_untouched():
    sb = Sandbox()

    @sb.action
    def ask(value, resume=None):
        if resume is None:
            raise ActionInterrupt()
        resume.value["notes"].append("added by the action")
        return len(resume.value["notes"])

    it = pause(sb, "return await actions.ask(1)")
    answer = {"approved": True, "notes": []}
    assert sb.resume(it.run_id, answers={it.interrupt.id: answer}).output == 1
    assert answer == {"approved": True, "notes": []}
    recorded = [e for e in sb.run(it.run_id).entries if e["kind"] == "answer"]
    assert recorded[0]["value"] == {"approved": True, "notes": []}


def test_an_approval_edited_input_reaches_the_action_as_a_copy():
    sb = Sandbox()
    seen = []

    @sb.action(approval=True)
    def send(message):
        seen.append(message)
        message["to"] = "someone else"
        return "sent"

    it = pause(sb, "return await actions.send({to: 'a@b'})")
    edited = {"to": "c@d"}
    assert sb.resume(it.run_id, {"approved": True, "input": edited}).output == "sent"
    assert seen == [{"to": "someone else"}] and edited == {"to": "c@d"}


class EditingObserver(Observer):
    """A view that trims what it shows by editing the entries it is handed."""

    def entries(self, run_id, entries):
        for entry in entries:
            if isinstance(entry.get("input"), dict):
                entry["input"].clear()


def test_an_observer_editing_the_entries_it_is_shown_changes_nothing_recorded(sb):
    it = pause(sb, observer=EditingObserver())
    assert it.call_log[0]["input"] == ORIGINAL
    result = sb.eval(
        SOURCE, call_log=it.call_log, resume=Resume(position=it.position, value=True), observer=EditingObserver()
    )
    assert result.call_log[0]["input"] == ORIGINAL


def test_the_run_input_is_kept_as_the_script_sees_it_not_as_the_callers_object():
    sb = Sandbox()
    given_input = {"items": [1], 2: ("a", "b")}
    result = sb.eval("return ctx.input", input=given_input)
    given_input["items"].append("edited after the run")
    assert result.output == {"items": [1], "2": ["a", "b"]}
    assert sb.run(result.run_id).input == result.output


def test_a_signal_event_is_kept_as_the_script_sees_it():
    sb = Sandbox()
    source = "return await ctx.waitForEvent({type: 'go'})"
    event = {"type": "go", 7: (1, 2)}
    try:
        sb.eval(source)
    except Exception as parked:
        run_id = parked.run_id
    result = sb.signal(run_id, event)
    event["type"] = "edited"
    assert result.output == {"type": "go", "7": [1, 2]}
    assert sb.call_log(run_id)[0]["response"] == result.output


def test_call_action_hands_the_function_copies_of_its_input_and_answer():
    seen = {}

    def fn(value, resume=None):
        seen.update(value=value, resume=resume)
        return 1

    given_input = {"a": [1, {"b": [2]}]}
    given_resume = Resume(value={"v": [1]}, state={"s": [2]})
    with ThreadPoolExecutor(1) as pool:
        outcome = asyncio.run(call_action(Action("fn", fn), given_input, given_resume, pool, None))
    assert outcome.kind == "ok"
    assert seen["value"] == given_input and seen["value"] is not given_input
    assert seen["value"]["a"] is not given_input["a"] and seen["value"]["a"][1] is not given_input["a"][1]
    assert seen["resume"].value == given_resume.value and seen["resume"].value is not given_resume.value
    assert seen["resume"].state == given_resume.state and seen["resume"].state is not given_resume.state


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**31), 2**31)
    | st.floats(-1e6, 1e6)
    | st.text(string.ascii_letters + " ", max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(string.ascii_letters, max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(value=JSON)
def test_for_any_input_an_action_wrecking_it_leaves_the_record_and_the_resume_intact(value):
    sb = Sandbox()
    sb.action(lambda v: wreck_everything(v), name="wreck")

    @sb.action
    def ask(v, resume=None):
        wreck_everything(v)
        if resume is None:
            raise ActionInterrupt(data=v)
        return "answered"

    source = "await actions.wreck(ctx.input); const a = await actions.ask(ctx.input); return [ctx.input, a]"
    sent = json.loads(json.dumps(value))
    it = pause(sb, source, input=value)
    assert it.call_log[0]["input"] == sent and it.interrupt.input == sent
    result = sb.eval(source, call_log=it.call_log, resume=Resume(position=it.position, value=True))
    assert result.output == [sent, "answered"]
    assert result.call_log[0]["input"] == sent and result.call_log[1]["input"] == sent
