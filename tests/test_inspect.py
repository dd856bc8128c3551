"""Determinism check, fork, cancellation, and watching a run live."""

from __future__ import annotations

import threading
import time

import pytest
from pace import bound

from jupyter_sandbox import ActionInterrupt, Observer, SandboxInterrupt

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def gated(sb):
    sb.calls = []

    @sb.action
    def gate(value, resume=None):
        if resume is None:
            raise ActionInterrupt(data=value)
        sb.calls.append(("gate", resume.value))
        return resume.value

    @sb.action
    def work(value):
        sb.calls.append(("work", value))
        return value * 2

    return sb


def test_check_on_a_deterministic_finished_run_says_so_and_executes_nothing(gated):
    result = gated.eval("const t = Date.now(); const a = await actions.work(1); return [a, Math.random() < 1]")
    before = list(gated.calls)
    report = gated.check(result.run_id)
    assert report.deterministic and report.output_matches
    assert report.replayed == 3  # the clock, the action, the random read
    assert gated.calls == before
    assert "deterministic" in str(report)


def test_check_on_a_source_edited_into_nondeterminism_reports_the_position(gated):
    result = gated.eval("await actions.work(1); await actions.work(2)")
    report = gated.check(
        result.run_id, source="await actions.work(1);\nif (Math.random() > 2) {} await actions.work(2)"
    )
    assert not report.deterministic
    assert report.mismatch.position == 1
    assert report.mismatch.attempted["type"] == "random" and report.mismatch.recorded["name"] == "work"
    assert report.mismatch.line == 2


def test_check_on_a_paused_run_replays_up_to_the_open_call(gated):
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval("await actions.work(1); await actions.gate(2)")
    report = gated.check(info.value.run_id)
    assert report.deterministic and report.replayed == 1
    assert gated.run(info.value.run_id).status == "interrupted"


def test_check_does_not_touch_the_stored_run(gated):
    run_id = gated.eval("await actions.work(1); return 1").run_id
    before = gated.run(run_id)
    gated.check(run_id, source="await actions.work(5)")
    after = gated.run(run_id)
    assert (after.entries, after.status, after.source) == (before.entries, before.status, before.source)


def test_fork_replays_up_to_a_journal_position_and_answers_differently(gated):
    source = "const a = await actions.work(1); const ok = await actions.gate('send?'); return ok ? 'sent' : 'held'"
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval(source)
    original = gated.resume(info.value.run_id, True)
    assert original.output == "sent"
    interrupt = [e for e in gated.run(original.run_id).entries if e["kind"] == "interrupt"][0]
    fork = gated.fork(original.run_id, at=interrupt["seq"] + 1, value=False)
    assert fork.output == "held" and fork.run_id != original.run_id
    assert gated.calls.count(("work", 1)) == 1  # the fork replayed it
    assert gated.run(original.run_id).output == "sent"


def test_fork_before_an_effect_runs_it_live(gated):
    run_id = gated.eval("return await actions.work(3)").run_id
    fork = gated.fork(run_id, at=1)  # keep only the attempt marker
    assert fork.output == 6
    assert gated.calls.count(("work", 3)) == 2


def test_cancelling_a_waiting_eval_marks_the_run_cancelled_and_keeps_the_journal(sb):
    import asyncio

    started = threading.Event()

    @sb.action
    async def forever(_):
        started.set()
        await asyncio.sleep(3600)  # only the cancel ends it

    @sb.action
    def quick(x):
        return x

    future = sb._loop.submit(sb.aeval("await actions.quick(1); await actions.forever(1)", name="long"))
    assert started.wait(bound(5))
    future.cancel()
    run = sb.run(_settled(sb).id)
    assert run.status == "cancelled"
    assert [e["kind"] for e in run.entries] == ["attempt", "call", "result", "call"]
    assert sb.eval("return 'still usable'").output == "still usable"


def test_a_cancelled_run_can_be_resumed(sb):
    import asyncio

    started = threading.Event()
    blocked = {"on": True}

    @sb.action
    async def slow(_):
        started.set()
        if blocked["on"]:
            await asyncio.sleep(60)
        return "finally"

    future = sb._loop.submit(sb.aeval("return await actions.slow(1)"))
    assert started.wait(bound(5))
    future.cancel()
    assert _settled(sb).status == "cancelled"
    blocked["on"] = False
    run_id = sb.runs()[0].id
    assert sb.resume(run_id).output == "finally"


def _settled(sb):
    """The newest run once it is no longer running (bounded only against a hang)."""
    deadline = time.monotonic() + bound(5)
    while sb.runs()[0].status == "running":
        assert time.monotonic() < deadline, "the run is still running"
        time.sleep(0.02)
    return sb.runs()[0]


class Recorder(Observer):
    def entries(self, run_id, entries):  # type: ignore[override]
        self.entries_seen = getattr(self, "entries_seen", []) + entries

    def console(self, run_id, line, replayed):  # type: ignore[override]
        self.console_seen = getattr(self, "console_seen", []) + [(line["message"], replayed)]

    def progress(self, run_id, patch):  # type: ignore[override]
        self.progress_seen = getattr(self, "progress_seen", []) + [patch]


def test_an_observer_sees_entries_console_and_progress_as_they_happen(gated):
    watcher = Recorder()
    source = "console.log('a'); ctx.progress({done: 1}); await actions.work(1); await actions.gate(0); console.log('b')"
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval(source, observer=watcher)
    kinds = [e["kind"] for e in watcher.entries_seen]
    assert kinds[:4] == ["attempt", "console", "call", "result"]
    assert watcher.console_seen == [("a", False)]
    assert watcher.progress_seen == [{"done": 1}]
    again = Recorder()
    gated.resume(info.value.run_id, True, observer=again)
    assert again.console_seen == [("a", True), ("b", False)]
    assert not hasattr(again, "progress_seen")


def test_a_broken_observer_does_not_fail_the_run(sb):
    class Broken(Observer):
        def entries(self, run_id, entries):
            raise RuntimeError("widget gone")

        def console(self, run_id, line, replayed):
            raise RuntimeError("widget gone")

    assert sb.eval("console.log('x'); return 5", observer=Broken()).output == 5


def test_the_timeline_document_groups_entries_by_attempt(gated):
    with pytest.raises(SandboxInterrupt) as info:
        gated.eval("await actions.work(1); await actions.gate(0)")
    doc = gated.timeline(info.value.run_id)
    assert doc["pending"][0]["name"] == "gate"
    gated.resume(info.value.run_id, True)
    doc = gated.timeline(info.value.run_id)
    assert [a["n"] for a in doc["attempts"]] == [1, 2]
    assert doc["attempts"][1]["replayed"] == 1
    assert doc["attempts"][1]["first_seq"] > 0
    assert doc["run"]["status"] == "completed" and doc["pending"] == []
    assert {e["attempt"] for e in doc["entries"]} == {1, 2}


def test_a_run_read_without_its_journal_has_the_row_and_reads_no_entry(sb, monkeypatch):
    @sb.action
    def work(x):
        return x * 2

    result = sb.eval("let s = 0; for (let i = 0; i < 5; i++) s += await actions.work(i); return s", name="sum")
    full = sb.run(result.run_id)

    def no_journal(run_id):
        raise AssertionError("the journal was read")

    monkeypatch.setattr(sb.store, "entries", no_journal)
    row = sb.run(result.run_id, journal=False)
    assert (row.id, row.name, row.status, row.attempt, row.output) == (result.run_id, "sum", "completed", 1, 20)
    assert (row.entries, row.attempts, row.pending) == ([], [], []) and full.entries
