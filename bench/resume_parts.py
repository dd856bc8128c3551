#!/usr/bin/env python
"""Where a resume by run id spends its time: CPU µs per recorded action, phase by phase, beside floors.

Run from the repository root::

    python bench/resume_parts.py            # N = 5,000, 5 rounds (about a minute on 2 cores)
    python bench/resume_parts.py --quick    # N = 1,000, 3 rounds

The journal is ``bench/bench.py``'s (N awaited no-op actions, then a gate that pauses), written by the engine
to a SQLite file. Each round times, in CPU time of this process (other work on the machine inflates wall time,
not CPU time), the steps a resume by run id takes, each on its own, in the engine's own code:

* ``store.entries``: the SELECT and ``decode_journal`` (every row decoded and checked), through a second
  ``Sandbox`` on the file; beside it the floors ``SELECT`` alone and ``cbor2.loads`` of each row;
* ``Journal(entries)``: the indices (slots, requests, completions);
* ``ReplayPlan.from_journal`` and its JSON for the realm;
* the realm: a fresh ``Realm`` started with that plan and replayed to the gate (``drain`` and ``deliver`` as
  the runner calls them), beside the floor of an await served in a bare realm (``bench/bench.py``'s);
* ``Journal.call_log``: the call log a resume returns;
* the whole ``sb.resume(run_id, True)``; what it costs beyond the steps above is the rest (claim, the
  attempt's entries, the runner's loop, finishing the attempt).

Prints a markdown table of medians. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import gc
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # measure this checkout

import cbor2  # noqa: E402

from bench.bench import LIMITS, SCRIPT, BareDriver, make_sandbox  # noqa: E402
from jupyter_sandbox import Sandbox, SandboxInterrupt  # noqa: E402
from jupyter_sandbox.engine.journal import Journal  # noqa: E402
from jupyter_sandbox.engine.plan import ReplayPlan  # noqa: E402
from jupyter_sandbox.engine.realm import Realm  # noqa: E402

STEPS = (
    "floor: SELECT seq, body",
    "floor: cbor2.loads of each row",
    "store.entries (SELECT + decode_journal)",
    "Journal(entries): the indices",
    "ReplayPlan.from_journal + its JSON",
    "realm: start + replay to the gate",
    "floor: await served in a bare realm",
    "Journal.call_log",
    "sb.resume(run_id, True), whole",
)


def cpu(fn: Callable[[], object]) -> float:
    """CPU seconds of this process one call of ``fn`` takes (earlier garbage collected first, untimed)."""
    gc.collect()
    start = time.process_time()
    fn()
    return time.process_time() - start


def replay(source: str, settings: dict[str, object], n: int) -> None:
    """A realm started with the plan and pumped as the runner pumps a replay, to the gate's live call."""
    realm = Realm(source, LIMITS)
    realm.start(settings, 0.0, json.dumps(n))
    served = 0
    while True:
        realm.drain()
        step = realm.deliver(0.0)
        if step != 1:
            break
        served += 1
    if served != n:
        raise RuntimeError(f"the realm served {served} recorded actions, expected {n}")


def bare_awaits(n: int) -> None:
    driver = BareDriver()
    driver.replay(json.dumps([{"s": i, "v": None} for i in range(n)]), n)
    while driver.job():
        pass
    if not driver.done():
        raise RuntimeError("the bare realm did not finish")


def measure(n: int, rounds: int, workdir: Path) -> dict[str, list[float]]:
    path = workdir / "parts.sqlite"
    writer = make_sandbox(path)
    runs = []
    for _ in range(rounds):  # one paused run per round: each whole resume takes its own
        try:
            writer.eval(SCRIPT % "anoop", input=n)
        except SandboxInterrupt as pause:
            runs.append(pause.run_id)
    reader = make_sandbox(path)  # another Sandbox on the file, as another kernel resumes
    db = sqlite3.connect(path)
    samples: dict[str, list[float]] = {step: [] for step in STEPS}
    for run_id in runs:
        for step, seconds in one_round(db, reader, run_id, n).items():
            samples[step].append(seconds / n * 1e6)
    db.close()
    writer.close()
    reader.close()
    return samples


def one_round(db: sqlite3.Connection, reader: Sandbox, run_id: str, n: int) -> dict[str, float]:
    """Each step once on one paused run (its whole resume last: it moves the run on)."""
    select = "SELECT seq, body FROM run_journal WHERE run_id = ? ORDER BY seq"
    rows = db.execute(select, (run_id,)).fetchall()
    entries = reader.store.entries(run_id)
    journal = Journal(entries)
    plan = ReplayPlan.from_journal(journal)
    settings = {"runId": run_id, "strict": False, "actions": ["anoop", "gate"], "plan": plan.to_js()}
    steps: dict[str, Callable[[], object]] = {
        STEPS[0]: lambda: db.execute(select, (run_id,)).fetchall(),
        STEPS[1]: lambda: [cbor2.loads(body) for _, body in rows],
        STEPS[2]: lambda: reader.store.entries(run_id),
        STEPS[3]: lambda: Journal(entries),
        STEPS[4]: lambda: json.dumps(ReplayPlan.from_journal(journal).to_js()),
        STEPS[5]: lambda: replay(SCRIPT % "anoop", settings, n),
        STEPS[6]: lambda: bare_awaits(n),
        STEPS[7]: lambda: journal.call_log(),
        STEPS[8]: lambda: reader.resume(run_id, True),
    }
    return {step: cpu(fn) for step, fn in steps.items()}


def table(samples: dict[str, list[float]], n: int, rounds: int) -> str:
    medians = {step: statistics.median(values) for step, values in samples.items()}
    parts = [STEPS[2], STEPS[3], STEPS[4], STEPS[5], STEPS[7]]
    rest = medians[STEPS[8]] - sum(medians[p] for p in parts)
    lines = [
        f"Resume by run id, N = {n:,}: CPU µs per recorded action, median of {rounds} rounds",
        "",
        "| step | µs per action |",
        "| --- | ---: |",
        *(f"| {step} | {medians[step]:.1f} |" for step in STEPS),
        f"| the rest of sb.resume (claim, attempt entries, the runner's loop, finish) | {rest:.1f} |",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 1,000, 3 rounds")
    args = parser.parse_args()
    n, rounds = (1_000, 3) if args.quick else (5_000, 5)
    with tempfile.TemporaryDirectory() as tmp:
        print(table(measure(n, rounds, Path(tmp)), n, rounds))


if __name__ == "__main__":
    main()
