"""A determinism check replays every recorded entry it can reach, and says how many.

``CheckReport.checked`` counts the recorded effects the replay reached and
matched, ``CheckReport.recorded`` the effects in the journal; a check is
deterministic only when it reached every one. A timer a ``Promise.race`` left
open, or an interrupted call, is reached when the replay asks for it again: it
stays open, and the replay goes on past it.
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, ManualClock, RunParked, Sandbox, SandboxInterrupt, ScriptError

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def sb(new_sandbox):
    sandbox = new_sandbox(clock=ManualClock(start=1_700_000_000_000))
    sandbox.calls = []

    @sandbox.action
    def work(value):
        sandbox.calls.append(value)
        return value

    @sandbox.action
    def gate(value, resume=None):
        if resume is None:
            raise ActionInterrupt(data=value)
        return resume.value

    yield sandbox
    sandbox.close()


RACE = "const r = await Promise.race([actions.work(1), ctx.sleep(600000)]);\nawait actions.work(2);\nreturn r;"


def test_a_race_that_left_a_timer_open_is_checked_to_its_end(sb):
    run_id = sb.eval(RACE).run_id
    before = list(sb.calls)
    report = sb.check(run_id)
    assert report.deterministic and report.output_matches
    assert (report.checked, report.recorded) == (3, 3)  # work(1), the open timer, work(2)
    assert sb.calls == before


def test_the_report_says_how_many_recorded_effects_it_checked(sb):
    report = sb.check(sb.eval(RACE).run_id)
    assert "3 of 3 recorded effects checked" in str(report)


def test_an_edit_after_the_open_timer_is_found(sb):
    run_id = sb.eval(RACE).run_id
    report = sb.check(run_id, source=RACE.replace("work(2)", "work(3)"))
    assert not report.deterministic
    assert report.mismatch.position == 2 and report.mismatch.recorded["input"] == 2


def test_an_edit_that_drops_the_effect_after_the_open_timer_is_found(sb):
    run_id = sb.eval(RACE).run_id
    report = sb.check(run_id, source=RACE.replace("await actions.work(2);\n", ""))
    assert not report.deterministic
    assert report.mismatch.position == 2 and report.mismatch.attempted == {"type": "nothing"}
    assert (report.checked, report.recorded) == (2, 3)


def test_an_edit_that_stops_reading_a_recorded_clock_is_found(sb):
    run_id = sb.eval("const t = Date.now(); await actions.work(1); return 1").run_id
    report = sb.check(run_id, source="await actions.work(1); return 1")
    assert not report.deterministic
    # the replay serves work(1) from its content key: the clock read at slot 0 is the one never asked for
    assert report.mismatch.position == 0 and report.mismatch.recorded["type"] == "now"


def test_an_interrupted_run_is_checked_through_the_siblings_that_finished_behind_it(sb):
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("await Promise.all([actions.gate(1), actions.work(2), actions.work(3)])")
    report = sb.check(info.value.run_id)
    assert report.deterministic and (report.checked, report.recorded) == (3, 3)


def test_a_continuation_the_paused_run_never_reached_is_not_a_divergence(sb):
    source = "await Promise.all([actions.gate(1), (async () => { await actions.work(1); await actions.work(2) })()])"
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source)
    report = sb.check(info.value.run_id)
    assert report.deterministic and (report.checked, report.recorded) == (2, 2)


def test_a_parked_run_is_checked_up_to_its_timer(sb):
    with pytest.raises(RunParked) as info:
        sb.eval("await actions.work(1); await ctx.sleep(600000); await actions.work(2)")
    report = sb.check(info.value.run_id)
    assert report.deterministic and (report.checked, report.recorded) == (2, 2)


def test_a_run_that_continued_as_new_is_checked(sb):
    result = sb.eval("const n = ctx.input || 0; await actions.work(n); if (n < 2) ctx.continueAsNew(n + 1); return n")
    first = result.run_ids[0]
    report = sb.check(first)
    assert report.deterministic and report.output_matches and (report.checked, report.recorded) == (1, 1)


def test_a_run_that_failed_replays_its_failure_deterministically(sb):
    with pytest.raises(ScriptError):
        sb.eval("await actions.work(1); throw new Error('boom')")
    run_id = sb.runs(status="failed")[0].id
    report = sb.check(run_id)
    assert report.deterministic and (report.checked, report.recorded) == (1, 1)


def test_a_run_whose_failure_changes_on_replay_is_not_deterministic(sb):
    with pytest.raises(ScriptError):
        sb.eval("await actions.work(1); throw new Error('boom')")
    run_id = sb.runs(status="failed")[0].id
    report = sb.check(run_id, source="await actions.work(1); throw new Error('bang')")
    assert not report.deterministic and report.error is not None


def test_a_run_with_no_effects_has_nothing_to_check_and_says_so(sb):
    report = sb.check(sb.eval("return 1").run_id)
    assert report.deterministic and (report.checked, report.recorded) == (0, 0)


# -- for all runs: a finished run's check reaches every recorded effect ------------------------------------

STATEMENTS = st.sampled_from(
    [
        "await actions.work({n});",
        "await ctx.sleep({n});",
        "Date.now();",
        "Math.random();",
        "await ctx.now();",
        "await Promise.race([actions.work({n}), ctx.sleep(600000)]);",
        "await Promise.race([ctx.sleep(1), actions.gate({n}).catch(() => 0)]);",
        "await ctx.parallel([() => actions.work({n}), () => ctx.sleep(2)]);",
        "await ctx.waitForEvent({{k: {n}}}, {{timeout: 3}});",
        "await ctx.step('s{n}', () => actions.work({n}));",
        "console.log('line {n}');",
    ]
)


@settings(max_examples=scaled(40))
@given(program=st.lists(STATEMENTS, min_size=1, max_size=6))
def test_for_any_finished_run_the_check_is_deterministic_and_reaches_every_effect(program):
    source = "\n".join(s.format(n=i) for i, s in enumerate(program)) + "\nreturn 'done';"
    sandbox = Sandbox(clock=ManualClock(start=1_700_000_000_000))
    try:
        sandbox.action(lambda v: v, name="work")
        sandbox.action(lambda v: v, name="gate")
        run_id = sandbox.eval(source).run_id
        report = sandbox.check(run_id)
    finally:
        sandbox.close()
    assert report.deterministic, str(report)
    assert report.checked == report.recorded
    effects = sum(not s.startswith("console") for s in program)
    assert report.recorded >= effects  # every statement but a console line records at least one effect


def test_console_lines_are_regenerated_not_checked(sb):
    """Notes (console, log, step, plan) are rebuilt by the replay, not matched: a new console line changes
    nothing (tutorial 03), so they are not counted among the recorded effects."""
    run_id = sb.eval("console.log('a'); await actions.work(1); return 1").run_id
    report = sb.check(run_id, source="console.log('b'); console.log('c'); await actions.work(1); return 1")
    assert report.deterministic and (report.checked, report.recorded) == (1, 1)
