"""The workflow ctx API: each method, through interrupt and resume where it is journaled."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_sandbox import ActionError, ActionInterrupt, RunParked, Sandbox, SandboxInterrupt
from jupyter_sandbox.engine.waits import matches

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def gated(sb):
    """``actions.gate(x)`` interrupts once; ``actions.work(x)`` counts its calls."""
    sb.work_calls = []

    @sb.action
    def gate(value, resume=None):
        if resume is None:
            raise ActionInterrupt(data=value)
        return resume.value

    @sb.action
    def work(value):
        sb.work_calls.append(value)
        return f"did {value}"

    return sb


def run_through_gate(sb, source, answer=True, **kwargs):
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source, **kwargs)
    return info.value, sb.resume(info.value.run_id, answer)


def kinds(sb, run_id, kind):
    return [e for e in sb.run(run_id).entries if e["kind"] == kind]


def test_ctx_call_description_is_stored_outside_the_key(gated):
    it, result = run_through_gate(
        gated, "await ctx.call('work', 1, {description: 'Do the work'}); return await actions.gate(0)"
    )
    call = kinds(gated, it.run_id, "call")[0]
    assert call["description"] == "Do the work" and call["key"] == "tool|work|1"
    assert gated.work_calls == [1]


def test_step_journals_start_and_end_with_outcome_and_nests(gated):
    source = """
    const r = await ctx.step('outer', async () => {
      const a = await ctx.step('inner', () => actions.work('a'));
      await actions.gate(0);
      return a;
    });
    try { await ctx.step('failing', async () => { throw new Error('nope') }) } catch (e) {}
    return r;
    """
    it, result = run_through_gate(gated, source)
    assert result.output == "did a"
    steps = [(e["label"], e["phase"], e.get("outcome"), e["parent"]) for e in kinds(gated, it.run_id, "step")]
    assert steps == [
        ("outer", "start", None, None),
        ("inner", "start", None, 1),
        ("inner", "end", "ok", 1),
        ("outer", "end", "ok", None),
        ("failing", "start", None, None),
        ("failing", "end", "error", None),
    ]
    assert gated.work_calls == ["a"]


def test_plan_publishes_a_checklist_and_a_later_plan_replaces_it(gated):
    source = (
        "ctx.plan(['fetch', 'draft']); await actions.gate(0); "
        "ctx.plan([{title: 'fetch', done: true}, {title: 'draft', done: false}]); return 1"
    )
    it, _ = run_through_gate(gated, source)
    plans = [e["plan"] for e in kinds(gated, it.run_id, "plan")]
    assert plans == [["fetch", "draft"], [{"done": True, "title": "fetch"}, {"done": False, "title": "draft"}]]


def test_plan_must_be_a_list(sb):
    with pytest.raises(Exception, match="ctx.plan takes an array"):
        sb.eval("ctx.plan('not a list')")


def test_parallel_has_promise_all_semantics(gated):
    source = (
        "const r = await ctx.parallel([() => actions.work(1), () => actions.work(2)]); await actions.gate(0); return r"
    )
    _, result = run_through_gate(gated, source)
    assert result.output == ["did 1", "did 2"]
    assert gated.work_calls == [1, 2]


def test_parallel_settled_has_all_settled_semantics(gated):
    @gated.action
    def fail(_):
        raise KeyError("k")

    source = (
        "const r = await ctx.parallelSettled([() => actions.work(1), () => actions.fail(2)]);"
        " await actions.gate(0); return r.map(x => x.status + ':' + (x.value || x.reason.message))"
    )
    _, result = run_through_gate(gated, source)
    assert result.output == ["fulfilled:did 1", "rejected:KeyError: 'k'"]


def test_parallel_rejects_non_functions_clearly(sb):
    with pytest.raises(Exception, match="item 0 is not a function"):
        sb.eval("await ctx.parallel([1])")


def test_parallel_branches_completing_in_another_order_still_replay(gated):
    """Continuations complete live in another order than they started, and the run still replays (rule 3)."""
    delays = {"a": 0.12, "b": 0.01, "c": 0.06}

    @gated.action
    async def fetch(name):
        await asyncio.sleep(delays[name])
        return name.upper()

    source = """
    const out = [];
    await ctx.parallel(['a', 'b', 'c'].map(n => async () => {
      out.push(await actions.fetch(n)); out.push(await ctx.now())
    }));
    await actions.gate(0);
    return out;
    """
    it, result = run_through_gate(gated, source)
    order = [x for x in result.output if isinstance(x, str)]
    assert order == ["B", "C", "A"]
    live_clock = [e["value"] for e in kinds(gated, it.run_id, "now")]
    assert [x for x in result.output if not isinstance(x, str)] == live_clock


def test_ctx_now_is_journaled_and_replayed(gated):
    it, result = run_through_gate(gated, "const t = await ctx.now(); await actions.gate(0); return t")
    assert result.output == kinds(gated, it.run_id, "now")[0]["value"]


def test_ctx_log_is_journaled_once(gated):
    it, _ = run_through_gate(gated, "ctx.log('warn', 'low disk', {free: 3}); await actions.gate(0); return 1")
    logs = kinds(gated, it.run_id, "log")
    assert [(e["level"], e["message"], e["data"]) for e in logs] == [("warn", "low disk", {"free": 3})]


def test_console_lines_are_journaled_once_across_attempts(gated):
    it, _ = run_through_gate(gated, "console.log('before'); await actions.gate(0); console.log('after')")
    assert [e["message"] for e in kinds(gated, it.run_id, "console")] == ["before", "after"]


def test_progress_goes_to_on_progress_and_is_never_replayed():
    patches = []
    sb = Sandbox(on_progress=lambda run_id, patch: patches.append(patch))

    @sb.action
    def gate(_, resume=None):
        if resume is None:
            raise ActionInterrupt()
        return 1

    source = "ctx.progress({done: 1, total: 2}); await actions.gate(0); ctx.progress({done: 2, total: 2})"
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source)
    sb.resume(info.value.run_id, True)
    assert patches == [{"done": 1, "total": 2}, {"done": 2, "total": 2}]
    assert not [e for e in sb.run(info.value.run_id).entries if "progress" in str(e.get("kind"))]


# -- timers -------------------------------------------------------------------------


def test_a_short_sleep_waits_in_place(clock):
    sb = Sandbox(clock=clock)
    result = sb.eval("const a = await ctx.now(); await ctx.sleep(500); return (await ctx.now()) - a")
    assert result.output == 500  # a ManualClock moves only by the sleep, however long the machine took
    entries = sb.run(result.run_id).entries
    assert [e["kind"] for e in entries if e["kind"] in ("timer", "fired")] == ["timer", "fired"]


def test_a_clock_that_moves_only_when_told_does_not_move_while_the_script_computes(clock):
    sb = Sandbox(clock=clock)
    source = "const a = Date.now(); let n = 0; for (let i = 0; i < 3e6; i++) n += i; return [a, Date.now()]"
    assert sb.eval(source).output == [clock.now()] * 2


def test_the_system_clock_moves_while_the_script_computes():
    sb = Sandbox()
    source = "const a = Date.now(); let n = 0; for (let i = 0; i < 3e6; i++) n += i; return Date.now() - a"
    assert sb.eval(source).output > 0  # the loop takes tens of ms at least, more on a busy machine


def test_a_long_sleep_parks_and_the_scheduler_resumes_it_when_due(clock):
    sb = Sandbox(clock=clock)
    with pytest.raises(RunParked) as info:
        sb.eval("console.log('before'); await ctx.hours(1); console.log('after'); return 'woke'")
    parked = info.value
    assert parked.due == pytest.approx(clock.now() + 3_600_000, abs=5)
    assert sb.run(parked.run_id).status == "parked"
    assert sb.run_due() == []  # not due yet
    clock.advance(3_600_000)
    [(run_id, result)] = sb.run_due()
    assert run_id == parked.run_id
    assert result.output == "woke"
    assert [line["message"] for line in result.console] == ["before", "after"]
    fired = [e for e in sb.run(run_id).entries if e["kind"] == "fired"]
    assert len(fired) == 1


def test_minutes_and_hours_are_sleeps_of_that_many_ms(clock):
    sb = Sandbox(clock=clock)
    with pytest.raises(RunParked) as info:
        sb.eval("await ctx.minutes(2)")
    timer = [e for e in sb.run(info.value.run_id).entries if e["kind"] == "timer"][0]
    assert timer["ms"] == 120_000 and timer["key"] == "sleep|120000"


def test_sleep_rejects_a_bad_duration(sb):
    with pytest.raises(Exception, match="non-negative number"):
        sb.eval("await ctx.sleep(-1)")


# -- events ---------------------------------------------------------------------------

WAIT = "const e = await ctx.waitForEvent({type: 'approved'}, {timeout: TIMEOUT}); return e"


def test_a_signal_after_the_wait_resumes_the_parked_run(clock):
    sb = Sandbox(clock=clock)
    with pytest.raises(RunParked) as info:
        sb.eval(WAIT.replace("TIMEOUT", "null"))
    assert info.value.due is None
    result = sb.signal(info.value.run_id, {"type": "approved", "by": "ada"})
    assert result.output == {"type": "approved", "by": "ada"}


def test_a_signal_before_the_wait_is_kept_and_delivered(clock):
    sb = Sandbox(clock=clock)

    @sb.action
    def gate(_, resume=None):
        if resume is None:
            raise ActionInterrupt()
        return 1

    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("await actions.gate(0); return await ctx.waitForEvent({type: 'go'})")
    assert sb.signal(info.value.run_id, {"type": "go", "n": 1}) is None  # kept: the run is not waiting yet
    assert sb.resume(info.value.run_id, True).output == {"type": "go", "n": 1}


def test_a_wait_times_out_to_null(clock):
    sb = Sandbox(clock=clock)
    with pytest.raises(RunParked) as info:
        sb.eval(WAIT.replace("TIMEOUT", "60000"))
    assert info.value.due == pytest.approx(clock.now() + 60_000, abs=5)
    clock.advance(60_000)
    [(_, result)] = sb.run_due()
    assert result.output is None


def test_only_a_matching_event_is_delivered(clock):
    sb = Sandbox(clock=clock)
    with pytest.raises(RunParked) as info:
        sb.eval(WAIT.replace("TIMEOUT", "null"))
    with pytest.raises(RunParked):
        sb.signal(info.value.run_id, {"type": "rejected"})
    assert sb.signal(info.value.run_id, {"type": "approved"}).output == {"type": "approved"}


@pytest.mark.parametrize("match, other, wanted", [("'go'", "stop", "go"), ("3", 4, 3), ("[1, 2]", [1], [1, 2])])
def test_a_wait_for_a_plain_value_is_woken_only_by_an_equal_event(clock, match, other, wanted):
    sb = Sandbox(clock=clock)
    with pytest.raises(RunParked) as info:
        sb.eval(f"return await ctx.waitForEvent({match})")
    with pytest.raises(RunParked):
        sb.signal(info.value.run_id, other)
    with pytest.raises(RunParked):
        sb.signal(info.value.run_id, {"value": wanted})
    assert sb.signal(info.value.run_id, wanted).output == wanted


def test_two_signals_to_one_wait_deliver_one_and_keep_the_other(clock):
    sb = Sandbox(clock=clock)
    source = "const a = await ctx.waitForEvent({}); const b = await ctx.waitForEvent({}); return [a, b]"
    with pytest.raises(RunParked) as info:
        sb.eval(source)
    run_id = info.value.run_id
    sb.store.add_signal(run_id, {"n": 1})
    sb.store.add_signal(run_id, {"n": 2})
    result = sb.resume(run_id)
    assert result.output == [{"n": 1}, {"n": 2}]
    events = [e for e in sb.run(run_id).entries if e["kind"] == "event"]
    assert [e["event"] for e in events] == [{"n": 1}, {"n": 2}]
    assert len({e["signal"] for e in events}) == 2


def test_concurrent_signals_are_each_delivered_exactly_once(clock):
    import threading

    sb = Sandbox(clock=clock)
    with pytest.raises(RunParked) as info:
        sb.eval("const a = await ctx.waitForEvent({}); const b = await ctx.waitForEvent({}); return [a.n, b.n]")
    run_id = info.value.run_id
    results = []

    def send(n):
        try:
            results.append(sb.signal(run_id, {"n": n}))
        except Exception as exc:  # a parked pause, or the other resume holding the run
            results.append(exc)

    threads = [threading.Thread(target=send, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = sb.run(run_id)
    if final.status != "completed":
        sb.resume(run_id)
        final = sb.run(run_id)
    assert sorted(final.output) == [1, 2]
    assert len([e for e in final.entries if e["kind"] == "event"]) == 2


# -- child runs -------------------------------------------------------------------------


def test_delegate_runs_a_script_child_and_returns_its_output(gated):
    result = gated.eval("return await ctx.delegate({script: 'return ctx.input * 2', input: 21, name: 'double'})")
    assert result.output == 42
    children = [r for r in gated.runs(include_children=True) if r.parent == result.run_id]
    assert [(c.kind, c.name, c.status) for c in children] == [("workflow", "double", "completed")]


def test_a_failing_child_throws_an_action_error(sb):
    result = sb.eval(
        "try { await ctx.delegate({script: 'throw new Error(\"child broke\")'}) }"
        " catch (e) { return [e instanceof ActionError, e.message] }"
    )
    assert result.output[0] is True and "child broke" in result.output[1]


def test_a_three_level_delegate_chain_with_an_interrupt_in_the_deepest_child(gated):
    grandchild = "return await actions.gate('deep') + ':' + await actions.work('g')"
    child = f"return 'c(' + await ctx.delegate({{script: {grandchild!r}}}) + ')' + await actions.work('c')"
    parent = f"const a = await actions.work('p'); const r = await ctx.delegate({{script: {child!r}}}); return a + r"
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval(parent)
    it = info.value
    assert it.interrupt.data == "deep" and it.interrupt.run_id != it.run_id
    result = gated.resume(it.run_id, "yes")
    assert result.output == "did pc(yes:did g)did c"
    assert gated.work_calls == ["p", "g", "c"]


def test_answering_a_child_interrupt_by_position_reaches_the_child(gated):
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval("return await ctx.delegate({script: 'return await actions.gate(1)'})")
    from jupyter_sandbox import Resume

    it = info.value
    result = gated.eval(
        "return await ctx.delegate({script: 'return await actions.gate(1)'})",
        call_log=it.call_log,
        resume=Resume(position=it.position, value="via position"),
    )
    assert result.output == "via position"


def test_agent_runs_a_python_agent_as_a_child_run(sb):
    @sb.agent
    def researcher(question, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"question": question})
        return {"answer": resume.value}

    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return await ctx.agent({agent: 'researcher', input: 'why?'})")
    assert info.value.interrupt.data == {"question": "why?"}
    result = sb.resume(info.value.run_id, "because")
    assert result.output == {"answer": "because"}
    child = [r for r in sb.runs(include_children=True) if r.kind == "agent"][0]
    assert child.status == "completed" and child.parent == result.run_id


def test_an_unknown_agent_is_an_action_error(sb):
    with pytest.raises(ActionError, match="no agent named 'ghost'"):
        sb.eval("await ctx.agent({agent: 'ghost'})")


# -- continueAsNew ----------------------------------------------------------------------


def test_continue_as_new_across_three_generations_past_a_small_cap():
    from jupyter_sandbox import Limits

    sb = Sandbox(limits=Limits(journal_entries=30))
    done = []

    @sb.action
    def step(i):
        done.append(i)
        return i

    source = """
    const start = ctx.input ? ctx.input.next : 0;
    for (let i = start; i < Math.min(start + 10, 30); i++) await actions.step(i);
    if (start + 10 < 30) await ctx.continueAsNew({next: start + 10});
    return {last: start + 9};
    """
    result = sb.eval(source)
    assert result.output == {"last": 29}
    assert done == list(range(30))
    assert len(result.run_ids) == 3 and result.run_id == result.run_ids[-1]
    first, second, third = (sb.run(r) for r in result.run_ids)
    assert (first.status, second.status, third.status) == ("continued", "continued", "completed")
    assert first.successor == second.id and second.predecessor == first.id
    assert second.input == {"next": 10}


def test_without_continue_as_new_the_same_work_hits_the_cap():
    from jupyter_sandbox import LimitExceeded, Limits

    sb = Sandbox(limits=Limits(journal_entries=30))
    sb.action(lambda i: i, name="step")
    with pytest.raises(LimitExceeded, match="journal-cap"):
        sb.eval("for (let i = 0; i < 30; i++) await actions.step(i)")


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["go", "stop", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "type"]), inner, max_size=3),
    max_leaves=6,
)


def _canonical(value):
    return json.dumps(value, sort_keys=True)  # JSON's own equality: true is not 1, [1] is not 1


@given(event=_VALUES, match=_VALUES)
def test_an_event_matches_an_object_by_its_fields_and_any_other_value_by_equality(event, match):
    if match is None or match == {}:
        expected = True
    elif isinstance(match, dict):
        expected = isinstance(event, dict) and all(
            k in event and _canonical(event[k]) == _canonical(v) for k, v in match.items()
        )
    else:
        expected = _canonical(event) == _canonical(match)
    assert matches(event, match) is expected
