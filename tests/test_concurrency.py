"""Concurrency: many runs at once in one Sandbox, processes sharing a store, double approvals, racing signals.

Expected: 0 double executions, 0 lost journal entries, every run finishes.
Counts are small here; ``bench/stress`` runs 300 threaded runs, 4 processes
x 40 runs, 100 double approvals (threads and processes) and 50 racing signals.
Every test that shares a store runs on SQLite and on PostgreSQL (``store_url``).
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pace import bound

from jupyter_sandbox import RunBusyError, RunParked, RunStateError, Sandbox, SandboxError, SandboxInterrupt

ROOT = Path(__file__).resolve().parent.parent
from stress_module import stress  # noqa: E402  (bench/stress, loaded once)

SOURCE = stress.CONC_SOURCE  # 5 sequential calls and 3 in Promise.all; returns 13


@pytest.fixture
def store_path(store_url):
    """The shared store, on each backend in turn (conftest's ``store_path`` is an SQLite file)."""
    return store_url


def journal_complete(sb: Sandbox, run_id: str) -> None:
    assert stress.journal_complete(sb, run_id), f"run {run_id}: a gap, or a call without exactly one result"


def counting(sb: Sandbox) -> collections.Counter:
    lock = threading.Lock()
    calls: collections.Counter = collections.Counter()

    @sb.action
    def work(x):
        with lock:
            calls[tuple(x)] += 1
        time.sleep(0.001)
        return x[1]

    @sb.action(approval=True)
    def pay(x):
        with lock:
            calls[("pay", x)] += 1
        time.sleep(0.002)
        return "paid"

    @sb.action
    def after(x):
        with lock:
            calls[("after", x)] += 1
        return 1

    return calls


def test_threads_calling_eval_at_once_on_one_sandbox(store_path):
    sb = Sandbox(store_path)
    calls = counting(sb)
    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(lambda k: sb.eval(SOURCE, input=f"t{k}"), range(30)))
    assert [r.output for r in results] == [13] * 30
    assert len(calls) == 30 * 8 and set(calls.values()) == {1}, "an action ran twice (or not at all)"
    for r in results:
        journal_complete(sb, r.run_id)
    assert len({r.run_id for r in results}) == 30


def test_a_slow_action_in_one_run_does_not_hold_up_the_others(sb):
    # The slow action ends only when the quick run has finished (or, if that run waits for it, after a bound
    # that then fails the test): a quick run held up by it would finish after it.
    entered, release, slow_done = threading.Event(), threading.Event(), threading.Event()

    @sb.action
    def slow(x):
        entered.set()
        release.wait(bound(30))
        slow_done.set()
        return x

    @sb.action
    def quick(x):
        return x

    slow_thread = threading.Thread(target=lambda: sb.eval("return await actions.slow(1)"))
    slow_thread.start()
    try:
        assert entered.wait(bound(10))
        result = sb.eval("let s = 0; for (let i = 0; i < 20; i++) s += await actions.quick(i); return s")
        assert result.output == 190 and not slow_done.is_set()
    finally:
        release.set()
        slow_thread.join()


def test_processes_sharing_one_store(tmp_path, store_url):
    store, effects, program = store_url, tmp_path / "effects.txt", tmp_path / "child.py"
    effects.touch()
    Sandbox(store).close()
    program.write_text(stress.PROC_CHILD.format(root=str(ROOT), conc_source=SOURCE))
    procs = [
        subprocess.Popen(
            [sys.executable, str(program), str(store), str(effects), "runs", "6"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = {}
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        outputs.update(json.loads(stdout.strip().splitlines()[-1]))
    assert list(outputs.values()) == [13] * 18
    counts = collections.Counter(effects.read_text().split())
    assert len(counts) == 18 * 8 and set(counts.values()) == {1}
    sb = Sandbox(store)
    runs = sb.runs()
    assert len(runs) == 18 and {r.status for r in runs} == {"completed"}
    for run in runs:
        journal_complete(sb, run.id)


def test_double_approvals_from_threads_execute_once(store_path):
    sb = Sandbox(store_path)
    calls = counting(sb)
    ids = []
    for k in range(10):
        with pytest.raises(SandboxInterrupt) as info:
            sb.eval("return await actions.pay(ctx.input)", input=k)
        ids.append(info.value.run_id)

    def approve(run_id):
        try:
            return sb.resume(run_id, True).output
        except (RunBusyError, RunStateError) as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(9) as pool:
        outcomes = collections.Counter(pool.map(approve, [rid for rid in ids for _ in range(3)]))
    assert outcomes["paid"] == 10 and sum(outcomes.values()) == 30
    assert [calls[("pay", k)] for k in range(10)] == [1] * 10
    assert {sb.store.get_run(rid).status for rid in ids} == {"completed"}


def test_two_sandboxes_on_one_file_resume_the_same_run_once(store_path):
    first, second = Sandbox(store_path), Sandbox(store_path)
    calls = counting(first)
    calls_second = counting(second)
    with pytest.raises(SandboxInterrupt) as info:
        first.eval("return await actions.pay('x')")
    barrier = threading.Barrier(2)

    def approve(sb):
        barrier.wait()
        try:
            return sb.resume(info.value.run_id, True).output
        except (RunBusyError, RunStateError) as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(pool.map(approve, [first, second]))
    assert outcomes.count("paid") == 1, outcomes
    assert calls[("pay", "x")] + calls_second[("pay", "x")] == 1


def test_double_approvals_from_processes_execute_once(tmp_path, store_url):
    store, effects, program = store_url, tmp_path / "effects.txt", tmp_path / "child.py"
    effects.touch()
    program.write_text(stress.PROC_CHILD.format(root=str(ROOT), conc_source=SOURCE))
    sb = Sandbox(store)
    stress.register_conc_actions(sb, effects)
    ids = []
    for k in range(10):
        with pytest.raises(SandboxInterrupt) as info:
            sb.eval("return await actions.pay(ctx.input)", input=k)
        ids.append(info.value.run_id)
    sb.close()
    idfile = tmp_path / "ids.json"
    idfile.write_text(json.dumps(ids))
    procs = [
        subprocess.Popen(
            [sys.executable, str(program), str(store), str(effects), "approve", str(idfile)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outcomes: collections.Counter = collections.Counter()
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        outcomes.update(json.loads(stdout.strip().splitlines()[-1]).values())
    assert outcomes["ok"] == 10, outcomes
    counts = collections.Counter(effects.read_text().split())
    assert [counts[f"pay:{k}"] for k in range(10)] == [1] * 10
    sb = Sandbox(store)
    assert {sb.store.get_run(rid).status for rid in ids} == {"completed"}


def test_racing_signals_are_delivered_once(store_path):
    sb = Sandbox(store_path)
    calls = counting(sb)
    ids = []
    for _ in range(5):
        with pytest.raises(RunParked) as info:
            sb.eval("const e = await ctx.waitForEvent({go: ctx.runId}); await actions.after(ctx.runId); return e")
        ids.append(info.value.run_id)

    def send(run_id):
        try:
            sb.signal(run_id, {"go": run_id})
        except SandboxError as exc:
            return type(exc).__name__
        return "ok"

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(send, [rid for rid in ids for _ in range(3)]))
    # No resume here: a signal that met a busy resume was taken by that resume's park
    assert [calls[("after", rid)] for rid in ids] == [1] * 5
    for rid in ids:
        assert sb.store.get_run(rid).status == "completed"
        assert sum(1 for e in sb.run(rid).entries if e["kind"] == "event") == 1
        journal_complete(sb, rid)


# The defect this guards against: Sandbox.aeval resumes by run id only while the
# CallLog still equals the stored one (_owns); once the first click finished, the same SandboxInterrupt.call_log
# is no longer 'owned' and a second eval(call_log=..., resume=...) silently starts a NEW run from the bare call
# log (with input None) and executes the approved action again
def test_a_second_click_with_the_same_call_log_does_not_pay_twice(sb):
    calls = counting(sb)
    source = "return await actions.pay(ctx.input)"
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source, input="a")
    it = info.value
    from jupyter_sandbox import Resume

    outcomes = []
    for _ in range(2):  # a double click on the approval panel, through the call log and Resume
        try:
            outcomes.append(
                sb.eval(source, call_log=it.call_log, resume=Resume(position=it.position, value=True)).run_id
            )
        except SandboxError as exc:
            outcomes.append(type(exc).__name__)
    assert sum(n for key, n in calls.items() if key[0] == "pay") == 1, (dict(calls), outcomes)
