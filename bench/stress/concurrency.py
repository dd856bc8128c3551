"""Section **concurrency**: threads and processes sharing a store, double approvals, concurrent signals."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.stress.common import ROOT
from jupyter_sandbox import RunParked, Sandbox, SandboxError, SandboxInterrupt

CONC_SOURCE = (
    "let s = 0; for (let i = 0; i < 5; i++) s += await actions.work([ctx.input, i]);\n"
    "const r = await Promise.all([1, 2, 3].map(j => actions.work([ctx.input, 100 + j])));\n"
    "return s + r.length;"
)

PROC_CHILD = textwrap.dedent("""
    import os, sys, json, random, time
    sys.path.insert(0, {root!r})
    from jupyter_sandbox import Sandbox, RunBusyError, RunStateError, SandboxError
    store, effects, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    sb = Sandbox(store)
    def record(tag):
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, (tag + "\\n").encode())
        os.close(fd)
    @sb.action
    def work(x):
        record("w:%s:%s" % (x[0], x[1]))
        return x[1]
    @sb.action(approval=True)
    def pay(x):
        record("pay:%s" % x)
        time.sleep(0.002)
        return "paid"
    @sb.action
    def after(x):
        record("after:%s" % x)
        return 1
    outcomes = {{}}
    if mode == "runs":
        for k in range(int(arg)):
            tag = "%d-%d" % (os.getpid(), k)
            outcomes[tag] = sb.eval({conc_source!r}, input=tag).output
    elif mode in ("approve", "signal"):
        ids = json.loads(open(arg).read())
        random.Random(os.getpid()).shuffle(ids)
        for rid in ids:
            try:
                if mode == "approve":
                    sb.resume(rid, True)
                else:
                    sb.signal(rid, {{"go": rid}})
                outcomes[rid] = "ok"
            except (RunBusyError, RunStateError) as e:
                outcomes[rid] = type(e).__name__
            except SandboxError as e:
                outcomes[rid] = "error " + type(e).__name__
    print(json.dumps(outcomes))
""")


def journal_complete(sb: Sandbox, run_id: str) -> bool:
    """A completed run's journal: contiguous seq numbers, every call answered by a result."""
    entries = sb.run(run_id).entries
    if [e["seq"] for e in entries] != list(range(len(entries))):
        return False
    calls = {e["slot"] for e in entries if e["kind"] == "call"}
    results = [e["slot"] for e in entries if e["kind"] == "result"]
    return calls == set(results) and len(results) == len(set(results))


def run_concurrency(threads_runs: int, proc_count: int, runs_per_proc: int, approvals: int, log: Any) -> dict:
    out: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="jsbx-conc-"))
    try:
        # 1. threads calling eval at once on one Sandbox (one file store)
        sb = Sandbox(tmp / "threads.sqlite")
        lock = threading.Lock()
        work_calls: collections.Counter = collections.Counter()

        @sb.action
        def work(x):
            with lock:
                work_calls[(x[0], x[1])] += 1
            time.sleep(0.001)
            return x[1]

        started = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(lambda k: sb.eval(CONC_SOURCE, input=f"t{k}"), range(threads_runs)))
        out["threads: runs"] = threads_runs
        out["threads: wrong outputs"] = sum(r.output != 13 for r in results)
        out["threads: double executions"] = sum(n - 1 for n in work_calls.values() if n > 1)
        out["threads: lost journal entries"] = sum(not journal_complete(sb, r.run_id) for r in results)
        out["threads: seconds"] = round(time.perf_counter() - started, 2)
        sb.close()
        log("  concurrency: threads done")

        # 2. processes sharing one store
        store = tmp / "shared.sqlite"
        effects = tmp / "effects.txt"
        effects.touch()
        Sandbox(store).close()
        program = tmp / "child.py"
        program.write_text(PROC_CHILD.format(root=str(ROOT), conc_source=CONC_SOURCE))
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, str(program), str(store), str(effects), "runs", str(runs_per_proc)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(proc_count)
        ]
        outputs: dict[str, Any] = {}
        failures = 0
        for p in procs:
            stdout, stderr = p.communicate(timeout=300)
            if p.returncode != 0:
                failures += 1
                out.setdefault("processes: failure", stderr.strip().splitlines()[-1:] or [""])
            else:
                outputs.update(json.loads(stdout.strip().splitlines()[-1]))
        sb = Sandbox(store)
        runs = sb.runs(limit=100000)
        counts = collections.Counter(effects.read_text().split())
        out["processes: processes x runs"] = f"{proc_count} x {runs_per_proc}"
        out["processes: failed processes"] = failures
        out["processes: wrong outputs"] = sum(v != 13 for v in outputs.values())
        out["processes: runs not completed"] = sum(r.status != "completed" for r in runs)
        out["processes: double executions"] = sum(n - 1 for n in counts.values() if n > 1)
        out["processes: lost journal entries"] = sum(not journal_complete(sb, r.id) for r in runs)
        out["processes: seconds"] = round(time.perf_counter() - started, 2)
        sb.close()
        log("  concurrency: processes done")

        # 3. double approvals: threads in one Sandbox, then processes sharing the store
        for how in ("threads", "processes"):
            store = tmp / f"approve-{how}.sqlite"
            effects = tmp / f"approve-{how}.txt"
            effects.touch()
            sb = Sandbox(store)
            register_conc_actions(sb, effects)
            ids = []
            for k in range(approvals):
                try:
                    sb.eval("const r = await actions.pay(ctx.input); return r", input=k)
                except SandboxInterrupt as it:
                    ids.append(it.run_id)
            outcomes: collections.Counter = collections.Counter()
            if how == "threads":

                def approve(rid: str, sb: Sandbox = sb) -> str:  # this iteration's Sandbox
                    try:
                        sb.resume(rid, True)
                        return "ok"
                    except SandboxError as e:
                        return type(e).__name__

                with ThreadPoolExecutor(12) as pool:
                    for res in pool.map(approve, [rid for rid in ids for _ in range(3)]):
                        outcomes[res] += 1
            else:
                sb.close()
                idfile = tmp / "ids.json"
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
                for p in procs:
                    stdout, _ = p.communicate(timeout=300)
                    for res in json.loads(stdout.strip().splitlines()[-1]).values():
                        outcomes[res] += 1
                sb = Sandbox(store)
            counts = collections.Counter(effects.read_text().split())
            paid = [n for k, n in counts.items() if k.startswith("pay:")]
            out[f"double approvals ({how}): runs x clicks"] = f"{len(ids)} x 3"
            out[f"double approvals ({how}): outcomes"] = dict(outcomes)
            out[f"double approvals ({how}): double executions"] = sum(n - 1 for n in paid if n > 1)
            out[f"double approvals ({how}): never executed"] = len(ids) - len(paid)
            out[f"double approvals ({how}): runs not completed"] = sum(
                sb.store.get_run(rid).status != "completed" for rid in ids
            )
            sb.close()
        # 3b. double clicks through the bare call log path: eval(call_log=it.call_log, resume=Resume(...)) twice
        from jupyter_sandbox import Resume

        store = tmp / "approve-calllog.sqlite"
        effects = tmp / "approve-calllog.txt"
        effects.touch()
        sb = Sandbox(store)
        register_conc_actions(sb, effects)
        source = "const r = await actions.pay(ctx.input); return r"
        for k in range(approvals):
            try:
                sb.eval(source, input=k)
            except SandboxInterrupt as it:
                for _ in range(2):
                    with contextlib.suppress(SandboxError):
                        sb.eval(source, call_log=it.call_log, resume=Resume(position=it.position, value=True))
        counts = collections.Counter(effects.read_text().split())
        paid = [n for k, n in counts.items() if k.startswith("pay:")]
        out["double approvals (eval call_log, sequential clicks): runs x clicks"] = f"{approvals} x 2"
        out["double approvals (eval call_log, sequential clicks): double executions"] = sum(paid) - approvals
        sb.close()
        log("  concurrency: double approvals done")

        # 4. concurrent signals to parked runs, from three processes
        store = tmp / "signals.sqlite"
        effects = tmp / "signals.txt"
        effects.touch()
        sb = Sandbox(store)
        register_conc_actions(sb, effects)
        ids = []
        for _ in range(approvals // 2):
            try:
                sb.eval("const e = await ctx.waitForEvent({go: ctx.runId}); await actions.after(ctx.runId); return e")
            except RunParked as parked:
                ids.append(parked.run_id)
        sb.close()
        idfile = tmp / "signal-ids.json"
        idfile.write_text(json.dumps(ids))
        procs = [
            subprocess.Popen(
                [sys.executable, str(program), str(store), str(effects), "signal", str(idfile)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        for p in procs:
            p.communicate(timeout=300)
        sb = Sandbox(store)
        register_conc_actions(sb, effects)
        for _ in range(3):  # deliver whatever a busy resume left waiting
            for rid in ids:
                if sb.store.get_run(rid).status == "parked":
                    with contextlib.suppress(SandboxError):
                        sb.resume(rid)
        counts = collections.Counter(effects.read_text().split())
        afters = [n for k, n in counts.items() if k.startswith("after:")]
        out["signals: runs x senders"] = f"{len(ids)} x 3"
        out["signals: double executions"] = sum(n - 1 for n in afters if n > 1)
        out["signals: runs not completed"] = sum(sb.store.get_run(rid).status != "completed" for rid in ids)
        out["signals: delivered more than once"] = sum(
            len([e for e in sb.run(rid).entries if e["kind"] == "event" and e.get("event")]) > 1 for rid in ids
        )
        sb.close()
        log("  concurrency: signals done")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def register_conc_actions(sb: Sandbox, effects: Path) -> None:
    def record(tag: str) -> None:
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, (tag + "\n").encode())
        os.close(fd)

    @sb.action(approval=True)
    def pay(x):
        record(f"pay:{x}")
        return "paid"

    @sb.action
    def after(x):
        record(f"after:{x}")
        return 1

    @sb.action
    def work(x):
        record(f"w:{x[0]}:{x[1]}")
        return x[1]


def run(args: Any, log: Any) -> dict[str, Any]:
    log("concurrency...")
    q = args.quick
    return run_concurrency(
        threads_runs=40 if q else 300,
        proc_count=2 if q else 4,
        runs_per_proc=5 if q else 40,
        approvals=10 if q else 100,
        log=log,
    )


def report(result: dict[str, Any], args: Any) -> tuple[list[str], list[str]]:
    """The section's table, and its rows of the summary."""
    lines = ["## Concurrency", "", "| measure | value |", "|---|---|"]
    for k, v in result.items():
        lines.append(f"| {k} | {v} |")
    lines.append("")
    doubles = sum(v for k, v in result.items() if k.endswith("double executions") and isinstance(v, int))
    lost = sum(v for k, v in result.items() if k.endswith("lost journal entries") and isinstance(v, int))
    head = [
        f"| double executions (threads, processes, approvals, signals) | {doubles} |",
        f"| lost journal entries | {lost} |",
    ]
    return lines, head
