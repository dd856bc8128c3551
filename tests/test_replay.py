"""Replay: re-run, don't re-execute (docs/replay.md, a section per rule)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest

from jupyter_sandbox import ActionInterrupt, CallLogMismatchError, Resume, SandboxInterrupt

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


def interrupt_once(sb, name="approve"):
    """Register an action that interrupts on its first call and returns the answer on resume."""
    calls = []

    def action(value, resume=None):
        calls.append((value, None if resume is None else resume.value))
        if resume is None:
            raise ActionInterrupt(data={"asking": value}, state={"saved": value})
        return {"answer": resume.value, "state": resume.state}

    sb.action(action, name=name)
    return calls


def pause(sb, source, **kwargs):
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source, **kwargs)
    return info.value


# -- rule 1: a recorded effect is served, never executed again ---------------------


def test_a_recorded_action_runs_exactly_once_across_run_and_resumes(counted):
    calls = interrupt_once(counted)
    source = (
        "await actions.record('sent'); const a = await actions.approve(1); "
        "const b = await actions.approve(2); return [a, b]"
    )
    first = pause(counted, source)
    second = pause(counted, source, call_log=first.call_log, resume=Resume(first.position, "yes"))
    result = counted.eval(source, call_log=second.call_log, resume=Resume(second.position, "again"))
    assert counted.calls == ["sent"]
    assert result.output == [{"answer": "yes", "state": {"saved": 1}}, {"answer": "again", "state": {"saved": 2}}]
    assert [c for c in calls if c[1] is not None] == [(1, "yes"), (2, "again")]


def test_resume_by_run_id_serves_the_journal(counted):
    interrupt_once(counted)
    it = pause(counted, "await actions.record(1); return await actions.approve('x')")
    result = counted.resume(it.run_id, "ok")
    assert result.output == {"answer": "ok", "state": {"saved": "x"}}
    assert counted.calls == [1]
    assert result.run_id == it.run_id


def test_a_recorded_failure_is_thrown_again_without_calling_the_action(sb):
    failures = []

    @sb.action
    def flaky(_):
        failures.append(1)
        raise ConnectionError("timeout")

    interrupt_once(sb)
    source = (
        "let msg; try { await actions.flaky(1) } catch (e) { msg = e.message } await actions.approve(1); return msg"
    )
    it = pause(sb, source)
    assert sb.resume(it.run_id, True).output == "ConnectionError: timeout"
    assert failures == [1]


# -- rule 4: the null hole, Promise.all with an interrupt in the middle ---------------


def test_promise_all_interrupt_leaves_a_null_hole_and_resume_runs_only_it(counted):
    calls = interrupt_once(counted)
    source = "return await Promise.all([actions.record('a'), actions.approve('b'), actions.record('c')])"
    it = pause(counted, source)
    assert it.position == 1
    assert it.call_log[1] is None
    assert it.call_log[0]["response"] == {"recorded": "a"} and it.call_log[2]["response"] == {"recorded": "c"}
    assert it.interrupt.data == {"asking": "b"} and it.interrupt.state == {"saved": "b"}
    result = counted.eval(source, call_log=it.call_log, resume=Resume(position=1, value="go"))
    assert counted.calls == ["a", "c"]
    assert len(calls) == 2
    assert result.output[1] == {"answer": "go", "state": {"saved": "b"}}


def test_in_flight_calls_finish_and_are_recorded_when_a_sibling_interrupts(sb):
    finished = []

    @sb.action
    async def slow(x):
        await asyncio.sleep(0.15)
        finished.append(x)
        return x

    interrupt_once(sb)
    it = pause(sb, "return await Promise.all([actions.approve(0), actions.slow(1), actions.slow(2)])")
    assert finished == [1, 2]
    assert it.call_log[0] is None and it.call_log[1]["response"] == 1 and it.call_log[2]["response"] == 2


def test_several_parallel_interrupts_are_all_reported_and_answered_independently(sb):
    calls = interrupt_once(sb)
    source = "return await Promise.all([actions.approve('x'), actions.approve('y')])"
    it = pause(sb, source)
    assert [i.position for i in it.interrupts] == [0, 1]
    assert len({i.id for i in it.interrupts}) == 2
    second = it.interrupts[1]
    again = pause(sb, source, call_log=it.call_log, resume=Resume(id=second.id, value="for y"))
    assert [i.position for i in again.interrupts] == [0]  # the unanswered one interrupts again
    result = sb.resume(again.run_id, answers={again.interrupts[0].id: "for x"})
    assert [o["answer"] for o in result.output] == ["for x", "for y"]
    assert [c for c in calls if c[1]] == [("y", "for y"), ("x", "for x")]


# -- rule 3: completions delivered in live order ------------------------------------

CONCURRENT = """
async function branch(name, delays) {
  for (const d of delays) {
    const r = await actions.wait_ms({name, d});
    const t = Date.now();
    data[name] = (data[name] || []).concat([t]);
    console.log(name, r, t);
  }
  return name;
}
const done = await Promise.all([branch('a', [30, 5, 20]), branch('b', [5, 40, 1]), branch('c', [15, 15, 15])]);
const last = await actions.approve(done);
return {done, last, seen: data};
"""


def test_exact_replay_under_concurrency(sb):
    order = []

    @sb.action
    async def wait_ms(arg):
        await asyncio.sleep(arg["d"] / 1000)
        order.append(arg["name"])
        return arg["d"]

    interrupt_once(sb)
    it = pause(sb, CONCURRENT)
    assert order != sorted(order), "live completion order should differ from slot order"
    result = sb.eval(CONCURRENT, call_log=it.call_log, resume=Resume(it.position, "fine"))
    assert len(order) == 9, "nothing recorded ran again"
    assert result.console[: len(it.console)] == it.console
    assert result.data == it.data
    assert result.output["seen"] == it.data


def test_a_json_round_tripped_call_log_still_replays_exactly(sb):
    @sb.action
    async def wait_ms(arg):
        await asyncio.sleep(arg["d"] / 1000)
        return arg["d"]

    interrupt_once(sb)
    it = pause(sb, CONCURRENT)
    plain = json.loads(json.dumps(it.call_log))
    result = sb.eval(CONCURRENT, call_log=plain, resume=Resume(it.position, "fine"))
    assert result.data == it.data
    assert result.console[: len(it.console)] == it.console


def test_a_bare_seed_call_log_resumes_by_content_key(sb):
    calls = interrupt_once(sb)

    @sb.action
    def lookup(x):
        raise AssertionError("recorded: must not run")

    source = (
        "const [a, b] = await Promise.all([actions.lookup('p'), actions.lookup('q')]);"
        " return [a, b, await actions.approve(a + b)]"
    )
    # A bare call log (no order, no extra keys) in which the two branches
    # were recorded in the other order: key matching still serves each its own result.
    seed_log = [
        {"type": "action", "name": "lookup", "input": "q", "response": "Q"},
        {"type": "action", "name": "lookup", "input": "p", "response": "P"},
        None,
    ]
    result = sb.eval(source, call_log=seed_log, resume=Resume(position=2, value="ok", state={"saved": "PQ"}))
    assert result.output == ["P", "Q", {"answer": "ok", "state": {"saved": "PQ"}}]
    assert calls == [("PQ", "ok")]


# -- rule 2: divergence fails loudly ---------------------------------------------------


def test_calling_another_action_at_a_recorded_slot_is_a_mismatch(counted):
    interrupt_once(counted)

    @counted.action
    def other(_):
        raise AssertionError("must not run")

    it = pause(counted, "await actions.record(1); await actions.approve(2)")
    with pytest.raises(CallLogMismatchError) as info:
        counted.eval(
            "await actions.other(1);\nawait actions.approve(2)", call_log=it.call_log, resume=Resume(it.position, True)
        )
    error = info.value
    assert error.position == 0
    assert error.recorded["name"] == "record" and error.attempted["name"] == "other"
    assert error.line == 1
    assert counted.calls == [1]


def test_reading_the_clock_where_an_action_was_recorded_is_a_mismatch(counted):
    interrupt_once(counted)
    it = pause(counted, "await actions.record(1); await actions.approve(2)")
    with pytest.raises(CallLogMismatchError) as info:
        counted.eval(
            "const t = Date.now();\nawait actions.record(1); await actions.approve(2)",
            call_log=it.call_log,
            resume=Resume(it.position, True),
        )
    assert info.value.position == 0
    assert info.value.recorded["type"] == "action" and info.value.attempted["type"] == "now"


def test_changed_input_at_a_recorded_slot_is_a_mismatch(counted):
    interrupt_once(counted)
    it = pause(counted, "await actions.record(1); await actions.approve(2)")
    with pytest.raises(CallLogMismatchError) as info:
        counted.resume(it.run_id, True, source="await actions.record(99); await actions.approve(2)")
    assert info.value.recorded["input"] == 1 and info.value.attempted["input"] == 99
    assert counted.calls == [1]


def test_a_mismatch_message_names_position_both_sides_and_the_line(counted):
    interrupt_once(counted)
    it = pause(counted, "await actions.record(1); await actions.approve(2)")
    with pytest.raises(CallLogMismatchError) as info:
        counted.resume(it.run_id, True, source="// edited\nawait actions.approve(2)")
    text = str(info.value)
    assert "at position 0" in text and "'record'" in text and "'approve'" in text
    assert "workflow.js:2:" in text and "await actions.approve(2)" in text


def test_a_script_that_stops_asking_for_recorded_effects_is_a_mismatch(counted):
    interrupt_once(counted)
    it = pause(counted, "await Promise.all([actions.record(1), actions.approve(2)])")
    with pytest.raises(CallLogMismatchError) as info:
        counted.resume(it.run_id, True, source="await new Promise(() => {})")
    assert info.value.position == 0


def test_relabelling_a_description_keeps_the_replay_valid(counted):
    interrupt_once(counted)
    it = pause(counted, "await ctx.call('record', 1, {description: 'old label'}); await actions.approve(2)")
    result = counted.resume(
        it.run_id,
        True,
        source="await ctx.call('record', 1, {description: 'new label'}); return await actions.approve(2)",
    )
    assert result.output["answer"] is True
    assert counted.calls == [1]


# -- clock and randomness ------------------------------------------------------------------


def test_clock_and_random_reads_are_recorded_and_replayed(sb):
    interrupt_once(sb)
    source = (
        "const a = [Date.now(), new Date().getTime(), Math.random(), await ctx.now()];"
        " await actions.approve(1); return a"
    )
    it = pause(sb, source)
    assert [e["type"] for e in it.call_log[:4]] == ["now", "now", "random", "now"]
    assert it.call_log[4] is None
    result = sb.resume(it.run_id, True)
    assert result.output == [
        it.call_log[0]["response"],
        it.call_log[1]["response"],
        it.call_log[2]["response"],
        it.call_log[3]["response"],
    ]


def test_deterministic_dates_are_untouched(sb):
    result = sb.eval("return [new Date(0).toISOString(), Date.UTC(2020, 0, 1), new Date(86400000).getDate()]")
    assert result.output == ["1970-01-01T00:00:00.000Z", 1577836800000, 2]
    assert result.call_log == []


def test_strict_mode_makes_date_and_random_throw_with_the_way_out(sb):
    result = sb.eval(
        "const out = [];"
        "try { Date.now() } catch (e) { out.push(e.message) }"
        "try { new Date() } catch (e) { out.push(e.message) }"
        "try { Math.random() } catch (e) { out.push(e.message) }"
        "out.push(new Date(0).getTime(), typeof await ctx.now()); return out",
        strict=True,
    )
    assert "ctx.now()" in result.output[0] and "ctx.now()" in result.output[1]
    assert "input" in result.output[2]
    assert result.output[3:] == [0, "number"]


TZ_SCRIPT = textwrap.dedent("""
    import json, sys
    from jupyter_sandbox import Sandbox, Resume, ActionInterrupt, SandboxInterrupt, CallLog
    sb = Sandbox(sys.argv[1])
    @sb.action
    def approve(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        return resume.value
    source = '''
    const d = new Date();
    const fixed = new Date(2024, 6, 1, 12, 30);
    await actions.approve(1);
    return [d.getHours(), d.getDate(), d.toString(), d.getTimezoneOffset(), fixed.getTime(), fixed.toString(),
            new Date(0).getHours()];
    '''
    if sys.argv[2] == "start":
        try:
            sb.eval(source)
        except SandboxInterrupt as it:
            print(json.dumps({"run_id": it.run_id}))
    else:
        print(json.dumps(sb.resume(sys.argv[3], True).output))
""")


def test_a_run_replays_identically_in_another_timezone(tmp_path):
    store = tmp_path / "tz.sqlite"
    script = tmp_path / "tz.py"
    script.write_text(TZ_SCRIPT)
    env = {**os.environ, "TZ": "America/New_York"}
    started = subprocess.run(
        [sys.executable, str(script), str(store), "start"], env=env, capture_output=True, text=True, check=True
    )
    run_id = json.loads(started.stdout)["run_id"]
    finished = subprocess.run(
        [sys.executable, str(script), str(store), "resume", run_id],
        env={**os.environ, "TZ": "Asia/Tokyo"},
        capture_output=True,
        text=True,
        check=True,
    )
    output = json.loads(finished.stdout)
    assert output[3] == 0 and output[6] == 0  # UTC, whatever the host says
    assert output[4] == 1719837000000  # 2024-07-01T12:30Z
    again = subprocess.run(
        [sys.executable, "-c", "import quickjs; print(quickjs.Context().eval('new Date(0).getHours()'))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert again.stdout.strip() == "19", "the host timezone really was New York"


@pytest.mark.parametrize(
    "name", ["performance", "WeakRef", "FinalizationRegistry", "setTimeout", "fetch", "require", "process"]
)
def test_host_sources_of_nondeterminism_are_absent(sb, name):
    assert (
        sb.eval(f"return typeof this.{name} + ',' + Function('return typeof {name}')()").output == "undefined,undefined"
    )


# -- the host's plumbing is out of reach ---------------------------------------------------

SCRIPT_GLOBALS = {
    # ECMAScript and quickjs-ng's deterministic extras
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "AsyncDisposableStack",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DOMException",
    "DataView",
    "Date",
    "DisposableStack",
    "Error",
    "EvalError",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "Function",
    "Infinity",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "InternalError",
    "Iterator",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "String",
    "SuppressedError",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakMap",
    "WeakSet",
    "atob",
    "btoa",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "eval",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "queueMicrotask",
    "undefined",
    "unescape",
    # the script's API
    "ActionError",
    "TextDecoder",
    "TextEncoder",
    "actions",
    "console",
    "ctx",
    "data",
}


@pytest.mark.parametrize("reach", ["this", "Function('return this')()", "(0, eval)('this')"])
def test_the_global_object_holds_only_the_scripts_api(sb, reach):
    result = sb.eval(f"const g = {reach}; return Object.getOwnPropertyNames(g)")
    assert set(result.output) == SCRIPT_GLOBALS


def test_the_api_objects_are_frozen(sb):
    result = sb.eval(
        "ctx.call = () => 'forged'; actions.x = 1; return [Object.isFrozen(ctx), "
        "Object.isFrozen(actions), 'x' in actions, actions.x === 1]"
    )
    assert result.output == [True, True, False, False]


# -- rule 6: console and data are rebuilt by the replay ----------------------------------


def test_console_is_regenerated_in_full_on_resume(sb):
    interrupt_once(sb)
    it = pause(
        sb,
        "console.log('one'); await actions.approve(1); console.log('two'); "
        "await actions.approve(2); console.log('three')",
    )
    assert [line["message"] for line in it.console] == ["one"]
    with pytest.raises(SandboxInterrupt) as second:
        sb.resume(it.run_id, True)
    assert [line["message"] for line in second.value.console] == ["one", "two"]
    result = sb.resume(it.run_id, True)
    assert [line["message"] for line in result.console] == ["one", "two", "three"]


def test_resume_with_the_call_log_from_another_sandbox_uses_the_call_log_alone(sb):
    interrupt_once(sb)
    from jupyter_sandbox import Sandbox

    other = Sandbox()
    interrupt_once(other)
    it = pause(sb, "const t = Date.now(); const r = await actions.approve(1); return [t, r.answer]")
    result = other.eval(
        "const t = Date.now(); const r = await actions.approve(1); return [t, r.answer]",
        call_log=it.call_log,
        resume=Resume(it.position, "b"),
    )
    assert result.output == [it.call_log[0]["response"], "b"]
    assert result.run_id != it.run_id


def test_the_conformance_suite_runs_each_test_on_the_store_it_names(sb, backend):
    assert type(sb.store).__name__ == {"sqlite": "SQLiteStore", "postgres": "PostgresStore"}[backend]
