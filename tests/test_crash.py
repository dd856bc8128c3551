"""Crash safety: SIGKILL at a random moment, then the store opens, decodes, and the run finishes.

The guarantee (docs/replay.md rule 5): an effect whose result was
journaled never runs again; the one in flight when the process died may run
twice (at-least-once). Each test runs on SQLite and on PostgreSQL. ``bench/stress`` runs many more trials.
"""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from jupyter_sandbox import Sandbox

STEPS = 60
SOURCE = f"for (let i = 0; i < {STEPS}; i++) {{ await actions.effect(i) }} return 'done'"

CHILD = textwrap.dedent(f"""
    import sys, time
    from jupyter_sandbox import Sandbox
    sb = Sandbox(sys.argv[1])
    @sb.action
    def effect(i):
        with open(sys.argv[2], "a") as f:
            f.write(f"{{i}}\\n")
        time.sleep(0.002)
        return i
    sb.eval({SOURCE!r})
""")


def crash_trial(workdir: Path, kill_after: float, store: str) -> dict:
    """Start a run in a child, SIGKILL it after ``kill_after`` s, finish it here; return what happened."""
    effects, program = workdir / "effects.txt", workdir / "child.py"
    program.write_text(CHILD)
    effects.touch()
    child = subprocess.Popen([sys.executable, str(program), str(store), str(effects)])
    time.sleep(kill_after)
    child.send_signal(signal.SIGKILL)
    child.wait()
    sb = Sandbox(store)  # the store opens...
    completed_before = set()
    for run in sb.runs():
        for entry in sb.run(run.id).entries:  # ...and every journal decodes
            if entry["kind"] == "result":
                completed_before.add(entry["value"])

    @sb.action
    def effect(i):
        with open(effects, "a") as f:
            f.write(f"{i}\n")
        return i

    runs = sb.runs()
    if runs and runs[0].status != "completed":
        output = sb.resume(runs[0].id).output  # the killed process's lease is taken over
    elif runs:
        output = runs[0].output
    else:
        output = sb.eval(SOURCE).output  # killed before the run was even created
    counts = collections.Counter(int(line) for line in effects.read_text().split())
    sb.close()
    return {"output": output, "counts": counts, "completed_before": completed_before}


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing_and_repeats_at_most_the_call_in_flight(tmp_path, new_store):
    rng = random.Random(20261130)
    trials = 20
    repeated_total = 0
    for trial in range(trials):
        workdir = tmp_path / f"trial{trial}"
        workdir.mkdir()
        result = crash_trial(workdir, rng.uniform(0.2, 0.9), new_store())
        counts = result["counts"]
        assert result["output"] == "done"
        assert set(counts) == set(range(STEPS)), "every effect ran"
        repeated = [i for i, n in counts.items() if n > 1]
        assert len(repeated) <= 1 and all(counts[i] == 2 for i in repeated), counts
        assert not set(repeated) & result["completed_before"], "a journaled effect ran again"
        repeated_total += len(repeated)
    print(f"{trials} SIGKILL trials: 0 lost, {repeated_total} in-flight repeats, 0 journaled repeats")


def test_a_killed_runs_lease_is_taken_over_only_when_its_process_is_gone(store_url):
    from jupyter_sandbox import RunBusyError
    from jupyter_sandbox.stores.base import OWNER

    sb = Sandbox(store_url)
    sb.action(lambda x: x, name="effect")
    run_id = sb.eval("return 1").run_id
    sb.store.update_run(
        run_id, status="running", owner="otherhost-but-same:1:x".replace("otherhost-but-same", os.uname().nodename)
    )  # pid 1 is alive: its lease holds
    with pytest.raises(RunBusyError):
        sb.store.claim(run_id, ("interrupted",), source_hash="")
    sb.store.update_run(run_id, owner=f"{os.uname().nodename}:999999:dead")  # no such process
    assert sb.store.claim(run_id, ("interrupted",), source_hash="") >= 2
    assert OWNER
