"""The attempt's handlers as specifications: an item the prelude queues (or a call's outcome) in, the
effects the attempt loop applies out. No realm runs here; the attempt's state is read, never changed."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import CallLogMismatchError, Sandbox
from jupyter_sandbox.actions import Outcome
from jupyter_sandbox.engine.answers import Answers
from jupyter_sandbox.engine.attempt import Attempt, Observer
from jupyter_sandbox.engine.calls import outcome_effects
from jupyter_sandbox.engine.clock import ManualClock
from jupyter_sandbox.engine.effects import (
    Append,
    CallAction,
    ChildRun,
    Complete,
    Continue,
    Dispatch,
    Done,
    Fail,
    Hold,
    Observe,
    ParkChild,
    Pause,
    Progress,
    Reopen,
    ReplaceExecutor,
    Request,
    Settle,
    Timer,
    WaitFor,
)
from jupyter_sandbox.engine.journal import Journal
from jupyter_sandbox.engine.plan import ReplayPlan
from jupyter_sandbox.engine.requests import handle
from jupyter_sandbox.engine.state import AttemptState
from jupyter_sandbox.engine.waits import EventWait
from jupyter_sandbox.errors import Interrupt
from jupyter_sandbox.stores.base import RunRow
from jupyter_sandbox.stores.rows import Entry

NOW = 1_700_000_000_000.0


@pytest.fixture
def sandbox():
    sb = Sandbox(":memory:", clock=ManualClock(start=NOW))

    @sb.action
    def add(x):
        return x

    @sb.action(approval=True)
    def pay(order):
        return order

    yield sb
    sb.close()


def state_of(sb, entries=(), *, execute=True, status="created", frontier=0, plan=None, answers=None):
    """An attempt's state as the loop starts it, over a journal of ``entries`` (no store read, no realm)."""
    engine = sb._engine
    journal = Journal([Entry(kind, 1, NOW, slot, body, seq) for seq, (kind, slot, body) in enumerate(entries)])
    run = RunRow(id="r-1", kind="workflow", status=status, source="return 1", input=None)
    attempt = Attempt(
        engine,
        run,
        journal,
        2,
        plan=plan or ReplayPlan(frontier=frontier),
        answers=answers or Answers(),
        strict=False,
        action_names=sorted(engine.actions),
        limits=engine.limits,
        recorded_at=journal.recorded,
        observer=Observer(),
        store=engine.store,
        execute=execute,
    )
    return AttemptState.of(attempt)


def call(slot, name="add", value=1, **extra):
    return {"t": "call", "s": slot, "name": name, "input": value, "key": f"{name}|{value}", **extra}


def test_a_clock_read_is_journaled_with_the_value_the_script_got(sandbox):
    assert handle(state_of(sandbox), {"t": "now", "s": 3, "value": NOW}) == [Append("now", 3, {"value": NOW})]


def test_a_console_line_is_shown_and_journaled(sandbox):
    item = {"t": "console", "r": 0, "level": "log", "message": "hi"}
    assert handle(state_of(sandbox), item) == [
        Observe("console", ({"level": "log", "message": "hi"}, False)),
        Append("console", None, {"level": "log", "message": "hi"}),
    ]


def test_a_console_line_the_replay_gave_again_is_shown_but_not_journaled_again(sandbox):
    item = {"t": "console", "r": 1, "level": "warn", "message": "again"}
    assert handle(state_of(sandbox), item) == [Observe("console", ({"level": "warn", "message": "again"}, True))]


def test_a_live_call_is_journaled_as_a_request_then_dispatched(sandbox):
    state = state_of(sandbox)
    request, dispatch = handle(state, call(0, value=5))
    assert request == Request("call", 0, {"key": "add|5", "op": "call", "name": "add", "input": 5})
    assert dispatch == Dispatch(0, CallAction(sandbox._engine.actions["add"], 5, None, False))


def test_a_call_that_needs_approval_journals_that_it_does_and_asks_for_it(sandbox):
    request, dispatch = handle(state_of(sandbox), call(0, name="pay", value=9))
    assert request.body["approval"] is True
    assert dispatch.work.approval is True


def test_a_call_an_earlier_attempt_left_open_is_taken_up_not_journaled_again(sandbox):
    left = ("call", 0, {"key": "add|5", "op": "call", "name": "add", "input": 5})
    state = state_of(sandbox, [left])
    effects = handle(state, call(0, value=5))
    assert [type(e) for e in effects] == [Reopen, Dispatch]
    assert effects[0].entry is state.attempt.journal.open_request(0)


def test_another_call_where_an_earlier_attempt_left_one_open_is_a_mismatch(sandbox):
    left = ("call", 0, {"key": "add|5", "op": "call", "name": "add", "input": 5})
    with pytest.raises(CallLogMismatchError) as raised:
        handle(state_of(sandbox, [left]), call(0, value=6))
    assert raised.value.recorded == {"type": "action", "name": "add", "input": 5}


def test_a_sleep_requests_a_timer_due_its_ms_from_now(sandbox):
    effects = handle(state_of(sandbox), {"t": "sleep", "s": 2, "ms": 500, "key": "sleep|500"})
    assert effects == [
        Request("timer", 2, {"key": "sleep|500", "ms": 500, "due": NOW + 500}),
        Timer(2, NOW + 500),
    ]


def test_a_sleep_left_open_keeps_the_due_time_it_was_journaled_with(sandbox):
    left = ("timer", 2, {"key": "sleep|500", "ms": 500, "due": NOW - 100})
    effects = handle(state_of(sandbox, [left]), {"t": "sleep", "s": 2, "ms": 500, "key": "sleep|500"})
    assert effects[1] == Timer(2, NOW - 100)


def test_a_wait_for_an_event_with_a_timeout_is_due_when_the_timeout_ends(sandbox):
    item = {"t": "wait", "s": 1, "match": {"kind": "go"}, "timeout": 60, "key": "wait|go"}
    effects = handle(state_of(sandbox), item)
    assert effects[1] == WaitFor(1, EventWait({"kind": "go"}, NOW + 60, "wait|go"))


def test_a_delegated_child_gets_a_new_run_id_journaled_before_it_runs(sandbox):
    item = {"t": "delegate", "s": 4, "name": "child", "input": {"script": "return 1"}, "key": "delegate|child"}
    request, dispatch = handle(state_of(sandbox), item)
    assert isinstance(dispatch.work, ChildRun)
    assert request.body["child"] == dispatch.work.child_id
    assert dispatch.work.resumed is False


def test_continue_as_new_done_and_progress_are_handed_to_the_loop(sandbox):
    state = state_of(sandbox)
    assert handle(state, {"t": "continue", "state": {"n": 1}}) == [Continue({"n": 1})]
    assert handle(state, {"t": "done", "outcome": {"ok": True, "value": 2}}) == [Done({"ok": True, "value": 2})]
    assert handle(state, {"t": "progress", "patch": {"pct": 50}}) == [Progress({"pct": 50})]


def test_an_effect_imported_from_a_bare_call_log_is_journaled_as_if_it_had_run(sandbox):
    plan = ReplayPlan.from_call_log([{"type": "action", "name": "add", "input": 1, "response": 2}])
    state = state_of(sandbox, plan=plan)
    effects = handle(state, {"t": "imported", "i": 0, "s": 0, "key": "add|1"})
    assert [(e.kind, e.slot) for e in effects] == [("call", 0), ("result", 0)]
    assert effects[0].body["imported"] is True and effects[1].body == {"ok": True, "value": 2}


def test_a_check_holds_a_request_the_recorded_run_left_open_too(sandbox):
    left = ("call", 0, {"key": "add|5", "op": "call", "name": "add", "input": 5})
    state = state_of(sandbox, [left], execute=False, status="interrupted")
    assert handle(state, call(0, value=5)) == [Hold(0, state.attempt.journal.open_request(0))]


def test_a_check_that_meets_a_live_call_the_recorded_run_never_made_fails(sandbox):
    state = state_of(sandbox, execute=False, status="completed", frontier=3)
    (fail,) = handle(state, call(0))
    assert isinstance(fail, Fail) and isinstance(fail.error, CallLogMismatchError)


def test_a_check_past_the_recorded_frontier_of_a_paused_run_checks_nothing(sandbox):
    state = state_of(sandbox, execute=False, status="interrupted", frontier=3)
    assert handle(state, call(3)) == []
    assert handle(state, {"t": "random", "s": 4, "value": 0.5}) == []


def test_a_mismatch_the_prelude_found_fails_the_attempt(sandbox):
    item = {"t": "mismatch", "s": 0, "attempted": {"type": "now"}}
    (fail,) = handle(state_of(sandbox), item)
    assert isinstance(fail.error, CallLogMismatchError) and fail.error.position == 0


def test_a_kind_no_handler_knows_does_nothing(sandbox):
    assert handle(state_of(sandbox), {"t": "something-new"}) == []


# -- a live call's outcome -----------------------------------------------------------------------------


def requested(sandbox, slot=0, name="add", value=1):
    state = state_of(sandbox)
    entry = Entry("call", 2, NOW, slot, {"key": f"{name}|{value}", "op": "call", "name": name, "input": value})
    state.requests[slot] = entry
    return state


def test_a_result_is_journaled_and_settled_with_its_json(sandbox):
    effects = outcome_effects(requested(sandbox), 0, Outcome("ok", value=[1, 2], json="[1,2]"))
    assert effects == [Append("result", 0, {"ok": True, "value": [1, 2]}), Settle(0, '{"ok":true,"value":[1,2]}')]


def test_a_failed_call_settles_with_its_error_naming_the_action(sandbox):
    effects = outcome_effects(requested(sandbox), 0, Outcome("error", error={"name": "ValueError", "message": "no"}))
    error = {"name": "ValueError", "message": "no", "action": "add"}
    assert effects == [Complete("result", 0, {"ok": False, "error": error})]


def test_a_timed_out_call_replaces_the_pool_before_its_failure_is_journaled(sandbox):
    effects = outcome_effects(requested(sandbox), 0, Outcome("timeout", error={"name": "ActionTimeout"}))
    assert [type(e) for e in effects] == [ReplaceExecutor, Complete]


def test_an_interrupt_is_journaled_and_pauses_the_attempt_under_its_run_and_slot_id(sandbox):
    effects = outcome_effects(requested(sandbox, slot=3), 3, Outcome("interrupt", data={"q": "ok?"}))
    assert effects[0].kind == "interrupt" and effects[0].body["id"] == "r-1:3"
    assert effects[1] == Pause(Interrupt("r-1:3", "r-1", 3, "add", 1, {"q": "ok?"}, None, False))


def test_a_delegated_childs_interrupts_become_the_parents_one_pause_each(sandbox):
    theirs = [Interrupt(f"c-1:{i}", "c-1", i, "ask", None, i) for i in range(2)]
    effects = outcome_effects(requested(sandbox, slot=5), 5, Outcome("child-interrupt", data=theirs))
    assert [type(e) for e in effects] == [Append, Pause, Pause]
    assert [e.interrupt.position for e in effects[1:]] == [5, 5]
    assert [e.interrupt.id for e in effects[1:]] == ["c-1:0", "c-1:1"]


def test_a_parked_child_is_waited_on_with_its_due_and_its_event_matches(sandbox):
    effects = outcome_effects(requested(sandbox), 0, Outcome("parked", data=NOW + 5, state=[{"go": 1}]))
    assert effects == [ParkChild(0, NOW + 5, [{"go": 1}])]


# -- the handlers only read ---------------------------------------------------------------------------

ITEMS = st.one_of(
    st.builds(lambda s, v: {"t": "now", "s": s, "value": v}, st.integers(0, 50), st.floats(0, 1e13)),
    st.builds(
        lambda r, m: {"t": "console", "r": r, "level": "log", "message": m}, st.integers(0, 1), st.text(max_size=20)
    ),
    st.builds(lambda s, v: call(s, value=v), st.integers(0, 50), st.integers()),
    st.builds(lambda s, ms: {"t": "sleep", "s": s, "ms": ms, "key": f"sleep|{ms}"}, st.integers(0, 50), st.integers(0)),
)


@settings(max_examples=scaled(50), deadline=None)
@given(items=st.lists(ITEMS, max_size=8))
def test_handling_items_changes_nothing_in_the_attempts_state(items):
    sb = Sandbox(":memory:", clock=ManualClock(start=NOW))
    try:
        sb.action(lambda x: x, name="add")
        state = state_of(sb)
        fresh = state_of(sb)
        for item in items:
            handle(state, dict(item))
        assert _contents(state) == _contents(fresh)
        assert state.attempt.journal.entries == []
    finally:
        sb.close()


def _contents(state):
    return (
        state.writer.pending,
        list(state.ready),
        state.waits,
        state.requests,
        state.held,
        state.interrupts,
        state.continue_state,
        state.outcome,
        state.replaying,
        state.ran,
    )
