"""Signals are never lost: not against a resume or a park in another process, not inside a short timeout,
not when sent to the id the API returned while a child or a successor waits.

A parking attempt reads the pending signals in the transaction that parks it, after locking the run's row,
and a sender locks that row before it queues its signal: the signal is seen by the park (the run is due at
once and resumed) or the sender sees the run parked (and resumes it).
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pace import bound
from peer_process import Peer
from signal_peer import SCRIPT, sandbox

import jupyter_sandbox.engine.runs as runs
from jupyter_sandbox import Limits, ManualClock, RunParked, Sandbox, SandboxInterrupt
from jupyter_sandbox.errors import RunStateError

ROOT = Path(__file__).resolve().parent.parent
HANG = bound(40.0)  # seconds that only bound a hang


@contextlib.contextmanager
def peers(store: str):
    resumer, sender = Peer("signal_peer.py", store), Peer("signal_peer.py", store)
    try:
        yield resumer, sender
    finally:
        resumer.close()
        sender.close()


def _gated(sb: Sandbox) -> str:
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(SCRIPT)
    return info.value.run_id


def _race(resumer: Peer, sender: Peer, run_id: str, park_delay_ms: int, **signal) -> None:
    resumer.send(op="resume", run=run_id, park_delay_ms=park_delay_ms)
    sender.send(op="signal", run=run_id, event={"go": run_id}, **signal)
    resumer.answer(), sender.answer()


def _delivered_once(sb: Sandbox, run_id: str) -> None:
    run = sb.run(run_id)
    assert run.status == "completed", f"the signal was lost: the run is {run.status}"
    assert run.output == {"go": run_id}
    assert [e["signal"] is not None for e in run.entries if e["kind"] == "event"] == [True]


def test_a_signal_sent_while_another_process_parks_the_run_is_never_lost(store_url):
    sb = sandbox(store_url)
    run_ids = [_gated(sb) for _ in range(3)]
    with peers(store_url) as (resumer, sender):
        for run_id in run_ids:  # the park held back 300 ms: the signal comes after the check, before the park
            _race(resumer, sender, run_id, 300, when_waiting=True)
    for run_id in run_ids:
        _delivered_once(sb, run_id)
    sb.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_over_interleavings_of_resume_and_signal_in_two_processes_no_signal_is_lost(backend, request, tmp_path):
    store = str(tmp_path / "runs.sqlite") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    sb = sandbox(store)
    with peers(store) as (resumer, sender):

        @settings(
            max_examples=scaled(12), suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
        )
        @given(
            park_delay_ms=st.integers(min_value=0, max_value=40),
            after_ms=st.integers(min_value=0, max_value=40),
            when_waiting=st.booleans(),
            noise=st.booleans(),
        )
        def interleaving(park_delay_ms, after_ms, when_waiting, noise):
            run_id = _gated(sb)
            if noise:  # a signal no wait takes, queued first: it neither wakes the run for good nor is delivered
                sb.signal(run_id, {"go": "someone else"})
            _race(resumer, sender, run_id, park_delay_ms, after_ms=after_ms, when_waiting=when_waiting)
            _delivered_once(sb, run_id)
            assert len(sb.store.pending_signals(run_id)) == int(noise)

        interleaving()
    sb.close()


def test_a_run_parked_beside_a_matching_signal_is_due(store_url, monkeypatch):
    """The park's process ends before it resumes the run again (no re-attempt here): the scheduler wakes it."""
    clock = ManualClock(start=1_700_000_000_000)
    sb = sandbox(store_url)
    sb._engine.clock = clock
    other = Sandbox(store_url)
    run_id = _gated(sb)
    finish = type(sb.store).finish_attempt

    def signal_then_park(self, rid, attempt, status, entries, **kwargs):
        if status == "parked":  # a signal committed after the attempt's own check, before its park
            other.store.add_signal(rid, {"go": rid})
        return finish(self, rid, attempt, status, entries, **kwargs)

    monkeypatch.setattr(type(sb.store), "finish_attempt", signal_then_park)
    monkeypatch.setattr(runs, "_REWAKES", 0)
    with pytest.raises(RunParked):
        sb.resume(run_id, True)
    monkeypatch.undo()
    assert run_id in sb.store.due_runs(clock.now())
    sb.store.release(run_id)  # (due_runs reserved it for this process: give it back for the wake below)
    assert dict(sb.run_due())[run_id].output == {"go": run_id}
    other.close()
    sb.close()


def test_a_matching_event_sent_inside_a_short_timeout_is_taken_while_the_runner_sleeps_in_place(store_url):
    sb = Sandbox(store_url, limits=Limits(inline_sleep_ms=HANG * 1000))
    out: list = []
    runner = threading.Thread(
        target=lambda: out.append(
            sb.eval(f"return await ctx.waitForEvent('go', {{timeout: {HANG * 500:.0f}}})").output
        ),
        daemon=True,
    )
    runner.start()
    run_id = None
    while run_id is None and runner.is_alive():  # (the run appears at once; the thread's end bounds the loop)
        waiting = [r for r in sb.runs() if any(e["kind"] == "wait" for e in sb.run(r.id).entries)]
        run_id = waiting[0].id if waiting else None
    assert sb.signal(run_id, "go") is None  # the run is running (asleep in place): the event waits for it
    runner.join(HANG)
    assert out == ["go"], "the event was ignored until the timeout"
    sb.close()


# -- addressed to the id the API returned --------------------------------------------------------------------


def test_a_signal_to_the_top_level_run_reaches_the_child_that_waits(store_url):
    sb = Sandbox(store_url)
    child = "return await ctx.waitForEvent({go: 1})"
    with pytest.raises(RunParked) as info:
        sb.eval(f"return await ctx.delegate({{script: {json.dumps(child)}}})")
    result = sb.signal(info.value.run_id, {"go": 1, "n": 7})
    assert result is not None and result.output == {"go": 1, "n": 7}
    sb.close()


def test_a_signal_to_the_first_run_reaches_its_successor_that_waits(store_url):
    sb = Sandbox(store_url)
    source = "if (ctx.input === null) return ctx.continueAsNew(1); return await ctx.waitForEvent('go')"
    with pytest.raises(RunParked) as info:
        sb.eval(source)
    first = sb.runs()[-1].id
    assert first != info.value.run_id and sb.run(first).status == "continued"
    result = sb.signal(first, "go")
    assert result is not None and result.output == "go"
    sb.close()


def test_a_signal_to_a_completed_run_is_refused(store_url):
    sb = Sandbox(store_url)
    done = sb.eval("return 1")
    with pytest.raises(RunStateError, match="completed"):
        sb.signal(done.run_id, "go")
    assert sb.store.pending_signals(done.run_id) == []
    sb.close()


def test_a_signal_to_a_run_whose_successor_completed_is_refused(store_url):
    sb = Sandbox(store_url)
    done = sb.eval("if (ctx.input === null) return ctx.continueAsNew(1); return 2")
    with pytest.raises(RunStateError, match="continued as"):
        sb.signal(done.run_ids[0], "go")
    sb.close()


def test_a_signal_to_a_child_of_a_completed_run_is_refused_naming_its_top_level_run(store_url):
    sb = Sandbox(store_url)
    done = sb.eval("return await ctx.delegate({script: 'return 1'})")
    (child,) = sb.store.children(done.run_id)
    with pytest.raises(RunStateError, match=f"run {child} \\(a child of {done.run_id}\\) is completed") as info:
        sb.signal(child, "go")
    assert "continued as" not in str(info.value)
    sb.close()


def test_a_signal_to_a_rolled_back_run_is_refused_for_it_never_resumes(store_url):
    sb = Sandbox(store_url)
    with pytest.raises(RunParked) as info:
        sb.eval("return await ctx.waitForEvent({kind: 'go'})")
    run_id = info.value.run_id
    assert sb.rollback(run_id).status == "rolled_back"
    with pytest.raises(RunStateError, match="rolled back"):
        sb.signal(run_id, {"kind": "go"})
    assert sb.store.pending_signals(run_id) == []
    sb.close()
