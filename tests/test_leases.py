"""Leases and fencing, the same on both backends: a claim is a lease (owner, expiry, epoch).

The epoch is the run's attempt number: every claim increments it, and every
journal write names its attempt, so a write from an attempt that lost the run
is refused in the same statement. A lease is renewed while its process runs
the run; a paused, cut-off or killed process stops renewing, and once the lease
expires the run reads ``stalled`` and the next resume or scheduler takes it over.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pace import bound

from jupyter_sandbox import ActionInterrupt, RunBusyError, Sandbox, SandboxInterrupt
from jupyter_sandbox.stores.rows import Entry, encode
from jupyter_sandbox.stores.sqlite import SQLiteStore

CHILD = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    from jupyter_sandbox import Sandbox, ActionInterrupt, RunBusyError, RunStateError
    store, effects, command = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    sb = Sandbox(store)

    def note(text):
        with open(effects, "a") as f:
            f.write(text + "\\n")

    @sb.action
    def effect(i):
        note(f"start {i}")
        time.sleep(float(os.environ.get("EFFECT_SECONDS", "0")) if i == 2 else 0)
        note(f"end {i}")
        return i

    @sb.action
    def approve(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        note("approve")
        time.sleep(float(os.environ.get("APPROVE_SECONDS", "1.0")))  # the winner holds the run this long
        return resume.value

    try:
        if command == "start":
            result = sb.eval(os.environ["SOURCE"])
        else:
            go = Path(sys.argv[5])
            Path(f"{go}.ready.{os.getpid()}").touch()
            while not go.exists():  # both racers claim at the same moment
                time.sleep(0.005)
            result = sb.resume(sys.argv[4], True)
        print(json.dumps({"status": "completed", "output": result.output}), flush=True)
    except RunBusyError as exc:
        print(json.dumps({"status": "busy", "error": str(exc)}), flush=True)
    except RunStateError as exc:
        print(json.dumps({"status": "state", "error": str(exc)}), flush=True)
""")


@pytest.fixture
def child(tmp_path, store_url):
    program = tmp_path / "child.py"
    program.write_text(CHILD)
    effects = tmp_path / "effects.txt"
    effects.touch()

    def spawn(*args, env=None):
        return subprocess.Popen(
            [sys.executable, str(program), store_url, str(effects), *args],
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    spawn.effects = lambda: effects.read_text().splitlines()
    spawn.store = store_url
    return spawn


def outcome(process) -> dict:
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    return json.loads(stdout.strip().splitlines()[-1])


def gated(sb: Sandbox) -> None:
    @sb.action
    def approve(x, resume=None):
        if resume is None:
            raise ActionInterrupt(data=x)
        return resume.value


# -- one owner at a time -------------------------------------------------------------------------------------


def test_two_processes_racing_to_resume_one_wins_and_the_other_gets_RunBusyError(child, tmp_path):
    sb = Sandbox(child.store)
    gated(sb)
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return await actions.approve(1)")
    go = tmp_path / "go"
    racers = [child("resume", info.value.run_id, str(go), env={"APPROVE_SECONDS": str(bound(1.0))}) for _ in range(2)]
    deadline = time.monotonic() + bound(60)
    while len(list(tmp_path.glob("go.ready.*"))) < 2:  # both started and waiting at the gate
        assert time.monotonic() < deadline and all(p.poll() is None for p in racers), "a racer did not start"
        time.sleep(0.01)
    go.touch()
    outcomes = sorted((outcome(p) for p in racers), key=lambda o: o["status"])
    assert [o["status"] for o in outcomes] == ["busy", "completed"], outcomes
    assert "already being resumed" in outcomes[0]["error"]
    assert child.effects().count("approve") == 1


def test_a_lease_is_renewed_while_a_long_action_runs(store_url, monkeypatch):
    lease = bound(0.1)  # 0.3 s on an idle machine: longer on a busy one, where the heartbeat runs late
    monkeypatch.setenv("JUPYTER_SANDBOX_LEASE_SECONDS", str(lease))
    sb, rival = Sandbox(store_url), Sandbox(store_url)
    started = threading.Event()

    @sb.action
    def slow(x):
        started.set()
        time.sleep(5 * lease)  # five leases long: only the heartbeat keeps it
        return x

    runner = threading.Thread(target=lambda: sb.eval("return await actions.slow(1)"))
    runner.start()
    assert started.wait(bound(10))
    time.sleep(2.7 * lease)
    run = sb.runs()[0]
    try:
        assert rival.store.get_run(run.id).status == "running"
        with pytest.raises(RunBusyError):
            rival.store.claim(run.id, ("interrupted",), source_hash="")
    finally:
        runner.join()
    assert sb.store.get_run(run.id).status == "completed"


def test_an_expired_lease_reads_stalled_and_the_next_resume_takes_the_run_over(store_url):
    sb = Sandbox(store_url)
    gated(sb)
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval("return await actions.approve(1)")
    run_id = info.value.run_id
    far_away = "another-machine:1:token"  # another host: only its lease's expiry tells
    sb.store.update_run(run_id, status="running", owner=far_away, lease_until=time.time() + 3600)
    assert sb.store.get_run(run_id).status == "running"
    with pytest.raises(RunBusyError, match="already being resumed"):
        sb.resume(run_id, "yes")
    sb.store.update_run(run_id, lease_until=time.time() - 1)
    assert sb.store.get_run(run_id).status == "stalled"
    assert sb.resume(run_id, "yes").output == "yes"


def test_a_scheduler_takes_over_a_run_whose_lease_expired(store_url):
    sb = Sandbox(store_url)
    sb.action(lambda x: x * 2, name="double")
    run_id = sb.eval("return await actions.double(21)").run_id
    sb.store.update_run(run_id, status="running", owner="another-machine:1:token", lease_until=time.time() + 3600)
    assert sb.run_due() == []  # a live lease elsewhere: not ours to take
    sb.store.update_run(run_id, lease_until=time.time() - 1)
    [(woken, result)] = sb.run_due()
    assert woken == run_id and result.output == 42
    assert sb.store.get_run(run_id).status == "completed"


# -- fencing: a write from an attempt that lost the run is refused ----------------------------------------------


def entry(epoch: int, seq: int) -> tuple[Entry, bytes]:
    e = Entry("console", epoch, 0.0, None, {"level": "log", "message": f"from attempt {epoch}"}, seq)
    return e, encode(e)


# Every example is a new run in the test's one store (hence function-scoped fixtures are fine).
@settings(max_examples=scaled(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        # batches of 1-3 entries (one fenced statement) and of 70 (past the one-statement size: a transaction)
        st.tuples(st.sampled_from(["claim", "append"]), st.integers(0, 3), st.sampled_from([1, 2, 3, 70])),
        min_size=1,
        max_size=12,
    )
)
def test_only_the_current_attempt_can_append(store_url, steps):
    """Any interleaving of takeovers and appends (of 1-3 or 70 entries, from the current or an older attempt)."""
    sb = Sandbox(store_url)
    run_id = sb.eval("return 1").run_id
    epochs = [sb.store.claim(run_id, ("completed",), source_hash="", force=True)]
    seq = len(sb.store.entries(run_id))
    written: list[int] = []
    for op, age, count in steps:
        if op == "claim":
            epochs.append(sb.store.claim(run_id, (), source_hash="", force=True))  # a takeover
            continue
        epoch = epochs[max(len(epochs) - 1 - age, 0)]
        batch = [entry(epoch, seq + k) for k in range(count)]
        if epoch == epochs[-1]:
            sb.store.append(run_id, batch)
            written += [epoch] * count
            seq += count
        else:
            with pytest.raises(RunBusyError, match="lost its lease"):
                sb.store.append(run_id, batch)
    journal = sb.store.entries(run_id)
    assert [e.seq for e in journal] == list(range(seq))  # no gap: a refused batch left nothing behind
    assert [e.attempt for e in journal if e.kind == "console"] == written
    sb.close()


def test_a_stale_attempt_cannot_finish_the_run(store_url):
    sb = Sandbox(store_url)
    run_id = sb.eval("return 1").run_id
    stale = sb.store.claim(run_id, ("completed",), source_hash="", force=True)
    current = sb.store.claim(run_id, (), source_hash="", force=True)
    seq = len(sb.store.entries(run_id))
    with pytest.raises(RunBusyError, match=f"attempt {stale} lost its lease .*attempt {current}"):
        sb.store.finish_attempt(run_id, stale, "failed", [entry(stale, seq)], replayed=0)
    assert len(sb.store.entries(run_id)) == seq  # nothing of it was written
    sb.store.finish_attempt(run_id, current, "completed", [entry(current, seq)], replayed=0, output=2)
    assert sb.store.get_run(run_id).output == 2


def test_a_lease_stolen_from_a_paused_process_refuses_its_late_append(child, monkeypatch):
    lease = "1.0"
    source = "const out = []; for (let i = 1; i <= 3; i++) out.push(await actions.effect(i)); return out"
    paused = child("start", env={"SOURCE": source, "EFFECT_SECONDS": "0.5", "JUPYTER_SANDBOX_LEASE_SECONDS": lease})
    deadline = time.time() + 60
    while "start 2" not in child.effects():  # inside effect(2): effect(1) is journaled
        assert time.time() < deadline and paused.poll() is None, paused.stderr and paused.stderr.read()
        time.sleep(0.01)
    paused.send_signal(signal.SIGSTOP)  # a GC pause, a suspended laptop, a partition: it stops renewing
    try:
        time.sleep(float(lease) + 0.5)
        monkeypatch.setenv("JUPYTER_SANDBOX_LEASE_SECONDS", lease)
        sb = Sandbox(child.store)
        run = sb.runs()[0]
        assert sb.store.get_run(run.id).status == "stalled"
        sb.action(lambda i: i, name="effect")
        taken = sb.resume(run.id)  # the takeover: no force needed
        assert taken.output == [1, 2, 3]
    finally:
        paused.send_signal(signal.SIGCONT)
    late = outcome(paused)
    assert late["status"] == "busy" and "lost its lease" in late["error"], late
    assert "end 2" in child.effects()  # the paused process did finish its call...
    entries = sb.run(run.id).entries  # ...but nothing it wrote after the takeover was recorded
    assert [e["seq"] for e in entries] == list(range(len(entries)))
    takeover = max(e["attempt"] for e in entries)
    first_of_takeover = min(e["seq"] for e in entries if e["attempt"] == takeover)
    assert all(e["seq"] < first_of_takeover for e in entries if e["attempt"] < takeover)
    results = [e["slot"] for e in entries if e["kind"] == "result"]
    assert len(results) == len(set(results)) == 3  # each call answered once: nothing lost, nothing doubled
    assert sb.store.get_run(run.id).status == "completed" and sb.run(run.id).output == [1, 2, 3]


def test_a_store_dropped_without_close_ends_its_lease_thread(tmp_path):
    sb = Sandbox(SQLiteStore(tmp_path / "runs.sqlite", lease=0.3))
    sb.eval("return 1")  # a run held, then released: the heartbeat thread has started
    thread = sb.store._heartbeat._thread
    assert thread is not None and thread.is_alive()
    del sb
    gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive()
