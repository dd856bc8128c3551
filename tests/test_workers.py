"""Workers without a leader: ``jupyter-sandbox worker`` processes sharing one store wake each due run once.

Each worker reserves a batch of due runs (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, the write lock on SQLite) with a lease, so the others pass them
by; the claim's compare-and-set is what makes a timer fire once even if two
workers meet.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jupyter_sandbox import ManualClock, RunParked, Sandbox
from jupyter_sandbox.stores.base import new_run_id

ROOT = Path(__file__).resolve().parent.parent
ACTIONS = """
import os

def fire(run_id):
    fd = os.open(os.environ["EFFECTS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (run_id + "\\n").encode())
    os.close(fd)
    return run_id

ACTIONS = {"fire": fire}
"""


def parked_runs(store: str, count: int) -> list[str]:
    """``count`` runs parked on a timer that fell due an hour ago (one run, cloned row by row)."""
    two_hours_ago = (time.time() - 2 * 3600) * 1000
    sb = Sandbox(store, clock=ManualClock(start=two_hours_ago))
    sb.action(lambda run_id: run_id, name="fire")
    with pytest.raises(RunParked) as info:
        sb.eval("await ctx.hours(1); return await actions.fire(ctx.runId)")
    dump = sb.store.dump_run(info.value.run_id)
    clones = [{**dump, "run": {**dump["run"], "id": new_run_id()}} for _ in range(count - 1)]
    sb.store.load_runs(clones)
    sb.close()
    return [info.value.run_id] + [c["run"]["id"] for c in clones]


def worker(store: str, tmp_path: Path, effects: Path, *extra: str, lease: str = "300") -> subprocess.Popen:
    """A ``jupyter-sandbox worker --once``; a long lease by default, which a loaded machine never outlasts."""
    env = {
        **os.environ,
        "EFFECTS": str(effects),
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
        "JUPYTER_SANDBOX_LEASE_SECONDS": lease,
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_sandbox.cli",
            "worker",
            "--store",
            store,
            "--actions",
            "team_actions:ACTIONS",
            "--once",
            *extra,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_four_workers_wake_a_thousand_due_timers_each_once(store_url, tmp_path):
    (tmp_path / "team_actions.py").write_text(ACTIONS)
    effects = tmp_path / "effects.txt"
    ids = parked_runs(store_url, 1_000)
    workers = [worker(store_url, tmp_path, effects) for _ in range(4)]
    reports = []
    for w in workers:
        stdout, stderr = w.communicate(timeout=600)
        assert w.returncode == 0, stderr
        reports.append(stdout.splitlines())
    fired = collections.Counter(effects.read_text().split())
    assert set(fired) == set(ids) and set(fired.values()) == {1}, "a timer fired twice, or not at all"
    assert sum(int(r[-1].split()[-1]) for r in reports) == 1_000  # "completed N" from each worker
    lost_races = [line for r in reports for line in r[:-1] if not line.endswith(" completed")]
    assert lost_races == []  # reserved batches: no worker tried a run another one had taken
    sb = Sandbox(store_url)
    assert {sb.store.get_run(i).status for i in ids} == {"completed"}


def test_a_worker_loads_actions_from_a_module_and_wakes_due_runs(store_url, tmp_path):
    (tmp_path / "team_actions.py").write_text(ACTIONS)
    effects = tmp_path / "effects.txt"
    ids = parked_runs(store_url, 3)
    stdout, stderr = worker(store_url, tmp_path, effects).communicate(timeout=120)
    assert stdout.splitlines()[-1] == "completed 3", stderr
    assert sorted(effects.read_text().split()) == sorted(ids)
    assert [Sandbox(store_url).run(i).output for i in ids] == ids


def test_a_worker_with_a_bad_actions_spec_says_what_is_wrong(store_url, tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter_sandbox.cli",
            "worker",
            "--store",
            store_url,
            "--actions",
            "no_such_module:ACTIONS",
            "--once",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "no_such_module" in done.stderr


def test_the_worker_is_a_console_script():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["jupyter-sandbox"] == "jupyter_sandbox.cli:main"


STEPS = """
import os, time

def step(i):
    fd = os.open(os.environ["EFFECTS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{i}\\n".encode())
    os.close(fd)
    time.sleep(0.01)
    return i

ACTIONS = {"step": step}
"""


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_its_lease_and_another_finishes_the_run(store_url, tmp_path):
    import signal

    (tmp_path / "team_actions.py").write_text(STEPS)
    effects = tmp_path / "effects.txt"
    effects.touch()
    two_hours_ago = (time.time() - 2 * 3600) * 1000
    sb = Sandbox(store_url, clock=ManualClock(start=two_hours_ago))
    with pytest.raises(RunParked) as info:
        sb.eval("await ctx.hours(1); for (let i = 0; i < 200; i++) await actions.step(i); return 'done'")
    sb.close()
    first = worker(store_url, tmp_path, effects, lease="1")
    deadline = time.time() + 120
    while len(effects.read_text().split()) < 50:
        assert time.time() < deadline and first.poll() is None, first.stderr and first.stderr.read()
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)  # mid-run: its lease is left to expire
    first.wait()
    survivor = Sandbox(store_url)

    @survivor.action
    def step(i):
        with open(effects, "a") as f:
            f.write(f"{i}\n")
        return i

    journaled = {e["value"] for e in survivor.run(info.value.run_id).entries if e["kind"] == "result"}
    while survivor.store.get_run(info.value.run_id).status != "completed":
        assert time.time() < deadline, "no worker took the run over"
        survivor.run_due()  # due once the killed worker's lease (1 s) has expired
        time.sleep(0.05)
    counts = collections.Counter(int(x) for x in effects.read_text().split())
    assert set(counts) == set(range(200)), "every step ran"
    repeated = [i for i, n in counts.items() if n > 1]
    assert len(repeated) <= 1 and not set(repeated) & journaled, "a journaled step ran again"
    assert survivor.run(info.value.run_id).output == "done"
