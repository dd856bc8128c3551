#!/usr/bin/env python
"""Adversarial stress run: bad input, faults, concurrency and escape probes, with figures.

    python -m bench.stress              # the full run (about 6-9 minutes on 2 cores, plus the properties)
    python -m bench.stress --quick      # a smoke run (well under a minute, plus the properties)
    python -m bench.stress --only fuzz --cases 2000 --seed 7
    python bench/stress --quick         # the same, from anywhere

It prints a summary (cases tried per category, crashes, hangs, bare errors,
double executions, corrupted stores, escapes found, wall time) and writes it to
``bench/results/stress.md``. Every count is bounded and every case is
time-bounded, so the run always ends.

Sections:

* **fuzz** — generated bad input (seeded; case ``i`` of seed ``s`` is always
  the same case): syntax errors, scripts waiting on nothing, infinite loops
  (also in the job queue), deep recursion, memory bombs, huge values, values
  that are not JSON through every sink, actions that raise / hang / return
  junk / interrupt with junk, bad run inputs and sources, corrupted call logs,
  corrupted store files. Cases run in worker subprocesses fed one case at a
  time: a worker that dies is a **crash**, a case with no answer within
  ``--hang-after`` seconds is a **hang** (the worker is killed and replaced).
  Each outcome is classified: ok / paused, a *clear* error (a
  ``SandboxError``, or a TypeError/ValueError raised by our own validation), an
  *unclear* one (a stdlib TypeError/ValueError whose message names no context),
  or *bare* (anything else: AttributeError, KeyError, JSONDecodeError,
  UnicodeEncodeError, RecursionError, sqlite3/cbor2/quickjs exceptions...).
  After every case the same Sandbox must still run a script that calls an
  action, and the run just made (and the run list) must still read back.
* **faults** — SIGKILL at random moments during runs and during resumes
  (0 corrupted stores, 0 journaled actions executed twice), a real full disk
  (an 8 MiB tmpfs mostly taken by a filler file, when ``mount`` works; the run
  is resumed after the filler is deleted) and a read-only remount.
* **concurrency** — threads calling ``eval`` at once on one Sandbox, processes
  sharing one store, double approvals (threads and processes), concurrent
  signals: 0 double executions, 0 lost journal entries.
* **escapes** — every probe of ``tests/test_escapes.py``.
* **properties** — the Hypothesis property tests of ``tests/`` under the ``long``
  profile (``dev`` with ``--quick``): tests, examples run, failures, wall time.

One module per section in this package; this file is the command line and the summary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # ``python bench/stress``: import the package from this checkout, and not
    # this folder's modules as top-level ones (Python put the folder first on sys.path)
    _here, _root = Path(__file__).resolve().parent, str(Path(__file__).resolve().parents[2])
    sys.path[:] = [_root] + [p for p in sys.path if Path(p or ".").resolve() != _here]

from bench.stress import concurrency, escapes, faults, fuzz, properties
from bench.stress.common import ROOT
from bench.stress.worker import worker_main

# name -> module, in the order the sections run (escapes first: quick, and it imports the test probes)
SECTIONS = {"escapes": escapes, "fuzz": fuzz, "faults": faults, "concurrency": concurrency, "properties": properties}
# the order of their tables and of their rows in the summary
REPORT_ORDER = ["fuzz", "faults", "concurrency", "escapes", "properties"]


def summarize(args: Any, sections: dict[str, Any], wall: float) -> str:
    try:
        rev = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        rev = "?"
    lines = [
        f"# Stress run ({'quick' if args.quick else 'full'})",
        "",
        f"`python -m bench.stress{' --quick' if args.quick else ''}` — commit {rev}, seed {args.seed}, "
        f"{os.cpu_count()} CPUs, wall time {wall:.0f} s, "
        f"Python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M')}.",
        "",
    ]
    head = ["## Summary", "", "| | |", "|---|---|"]
    for name in REPORT_ORDER:
        if name in sections:
            section, rows = SECTIONS[name].report(sections[name], args)
            lines += section
            head += rows
    head += [f"| wall time | {wall:.0f} s |", ""]
    return "\n".join(lines[:4] + head + lines[4:]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--cases", type=int, help="bad-input cases (default 10000, quick 300)")
    parser.add_argument("--kills", type=int, help="SIGKILL trials, half runs half resumes (default 100, quick 6)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--hang-after", type=float, default=8.0, help="seconds without an answer that make a hang")
    parser.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS))
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "stress.md"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args.seed)
        return
    args.cases = args.cases if args.cases is not None else (300 if args.quick else 10_000)
    args.kills = args.kills if args.kills is not None else (6 if args.quick else 100)
    only = (args.only or ",".join(SECTIONS)).split(",")
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)} (the sections: {', '.join(SECTIONS)})")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    sections: dict[str, Any] = {}
    for name, module in SECTIONS.items():
        if name in only:
            sections[name] = module.run(args, log)
    wall = time.perf_counter() - started
    text = summarize(args, sections, wall)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    raw = out.with_suffix(".json")
    raw.write_text(json.dumps(sections, default=str, indent=1))
    print(text)


if __name__ == "__main__":
    main()
