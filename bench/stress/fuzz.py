"""Section **fuzz**: feed generated bad-input cases to worker subprocesses, time-bound every case,
count crashes and hangs; and its tables."""

from __future__ import annotations

import collections
import contextlib
import json
import selectors
import subprocess
import sys
import time
from typing import Any

from bench.stress.cases import make_case
from bench.stress.common import ROOT


def run_fuzz(
    cases: int, seed: int, workers: int, hang_after: float, log: Any, exclude: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Run cases 0..cases-1 (skipping the categories in ``exclude``) on ``workers`` subprocesses."""
    pending = collections.deque(i for i in range(cases) if make_case(seed, i)["category"] not in exclude)
    reports: list[dict[str, Any]] = []
    sel = selectors.DefaultSelector()
    procs: dict[int, dict[str, Any]] = {}

    def spawn() -> None:
        # cwd=ROOT: ``-m bench.stress`` imports this checkout's package (and through it, its jupyter_sandbox)
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.stress", "--worker", "--seed", str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            cwd=str(ROOT),
        )
        state = {"proc": proc, "case": None, "since": 0.0, "buffer": ""}
        procs[proc.pid] = state
        sel.register(proc.stdout, selectors.EVENT_READ, state)
        feed(state)

    def feed(state: dict[str, Any]) -> None:
        if pending:
            i = pending.popleft()
            state["case"], state["since"] = i, time.monotonic()
            state["proc"].stdin.write(f"{i}\n")
            state["proc"].stdin.flush()
        else:
            state["case"] = None

    def retire(state: dict[str, Any]) -> None:
        proc = state["proc"]
        with contextlib.suppress(Exception):
            sel.unregister(proc.stdout)
        with contextlib.suppress(Exception):
            proc.kill()
        proc.wait()
        procs.pop(proc.pid, None)

    for _ in range(min(workers, cases)):
        spawn()
    while procs:
        for key, _ in sel.select(timeout=0.2):
            state = key.data
            line = state["proc"].stdout.readline()
            if not line:  # the worker died: the case it held crashed it
                code = state["proc"].wait()
                if state["case"] is not None:
                    case = make_case(seed, state["case"])
                    reports.append(
                        {
                            "i": case["i"],
                            "category": case["category"],
                            "label": case["label"],
                            "outcome": "crash",
                            "exc": f"exit {code}",
                            "msg": None,
                            "usable": False,
                            "poisoned": False,
                            "unexpected": True,
                            "seconds": 0,
                        }
                    )
                retire(state)
                if pending:
                    spawn()
                continue
            reports.append(json.loads(line))
            if len(reports) % 1000 == 0:
                log(f"  fuzz: {len(reports)}/{cases} cases")
            feed(state)
            if state["case"] is None:
                retire(state)
        now = time.monotonic()
        for state in list(procs.values()):
            if state["case"] is not None and now - state["since"] > hang_after:
                case = make_case(seed, state["case"])
                reports.append(
                    {
                        "i": case["i"],
                        "category": case["category"],
                        "label": case["label"],
                        "outcome": "hang",
                        "exc": None,
                        "msg": f"no answer within {hang_after:g} s",
                        "usable": False,
                        "poisoned": False,
                        "unexpected": True,
                        "seconds": hang_after,
                    }
                )
                retire(state)
                if pending:
                    spawn()
    reports.sort(key=lambda r: r["i"])
    return {"reports": reports}


def run(args: Any, log: Any) -> dict[str, Any]:
    log(f"fuzz: {args.cases} cases on {args.workers} workers...")
    return run_fuzz(args.cases, args.seed, args.workers, args.hang_after, log)


def report(result: dict[str, Any], args: Any) -> tuple[list[str], list[str]]:
    """The section's tables, and its rows of the summary."""
    reports = result["reports"]
    lines: list[str] = []
    by_cat: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in reports:
        c = by_cat[r["category"]]
        c["cases"] += 1
        c[r["outcome"]] += 1
        c["unusable after"] += not r.get("usable", False) and r["outcome"] not in ("crash", "hang")
        c["store poisoned"] += bool(r.get("poisoned"))
        c["seconds"] += r.get("seconds", 0)
    cols = ["cases", "ok", "paused", "clear", "unclear", "bare", "crash", "hang", "unusable after", "store poisoned"]
    lines += [
        "## Bad input (generated, subprocess-isolated)",
        "",
        "| category | " + " | ".join(cols) + " |",
        "|---" * (len(cols) + 1) + "|",
    ]
    total: collections.Counter = collections.Counter()
    for cat in sorted(by_cat):
        total.update(by_cat[cat])
        lines.append(f"| {cat} | " + " | ".join(str(by_cat[cat][c]) for c in cols) + " |")
    lines.append("| **total** | " + " | ".join(f"**{total[c]}**" for c in cols) + " |")
    lines += [
        "",
        f"Hang = no answer within {args.hang_after:g} s. *clear* = a `SandboxError`, or a "
        "TypeError/ValueError from our own validation; *unclear* = a stdlib TypeError/ValueError that "
        "names no context; *bare* = anything else (AttributeError, KeyError, JSONDecodeError, "
        "UnicodeEncodeError, RecursionError, sqlite3/cbor2/quickjs exceptions...). *unusable after* = "
        "the same Sandbox could not run `return await actions.sanity(2)` next; *store poisoned* = the "
        "run just made or the run list no longer reads back.",
        "",
    ]
    worst = [
        r
        for r in reports
        if r["outcome"] in ("bare", "crash", "hang", "unclear")
        or r.get("poisoned")
        or (not r.get("usable") and r["outcome"] not in ("crash", "hang"))
    ]
    kinds: collections.Counter = collections.Counter()
    example = {}
    for r in worst:
        what = (
            r["outcome"]
            if r["outcome"] in ("crash", "hang")
            else (
                f"{r['outcome']} {r.get('module') or ''}.{r.get('exc')}"
                if r["outcome"] in ("bare", "unclear")
                else "poisoned " + r.get("poison", "")
                if r.get("poisoned")
                else "unusable " + r.get("unusable", "")
            )
        )
        key = (r["category"], what[:110])
        kinds[key] += 1
        example.setdefault(key, r)
    if kinds:
        lines += [
            "Distinct failures (category, what, count, an example case):",
            "",
            "| category | failure | count | example |",
            "|---|---|---|---|",
        ]
        for (cat, what), n in kinds.most_common(40):
            ex = example[(cat, what)]
            label = ex["label"].replace("|", "\\|").replace("\n", " ")[:60]
            msg = (ex.get("msg") or "").replace("|", "\\|")[:80]
            lines.append(f"| {cat} | {what.replace('|', '/')} | {n} | #{ex['i']} `{label}` {msg} |")
        lines.append("")
    c = collections.Counter(r["outcome"] for r in reports)
    head = [
        f"| bad-input cases | {len(reports)} in {len({r['category'] for r in reports})} categories |",
        f"| crashes of the Python process | {c['crash']} |",
        f"| hangs (> {args.hang_after:g} s) | {c['hang']} |",
        f"| bare (non-SandboxError) exceptions | {c['bare']} |",
        f"| unclear stdlib errors | {c['unclear']} |",
        f"| Sandbox unusable afterwards | "
        f"{sum(1 for r in reports if not r.get('usable') and r['outcome'] not in ('crash', 'hang'))} |",
        f"| store poisoned (run no longer reads back) | {sum(1 for r in reports if r.get('poisoned'))} |",
    ]
    return lines, head
