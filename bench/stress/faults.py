"""Section **faults**: SIGKILL during runs and resumes, a full disk, a read-only store; and its table."""

from __future__ import annotations

import collections
import contextlib
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from bench.stress.common import ROOT, first_line
from jupyter_sandbox import Sandbox, SandboxInterrupt

EFFECTS = 40
RUN_SOURCE = f"for (let i = 0; i < {EFFECTS}; i++) {{ await actions.effect(i) }} return 'done'"
RESUME_SOURCE = (
    f"await actions.gate('go');\nfor (let i = 0; i < {EFFECTS}; i++) {{ await actions.effect(i) }} return 'done'"
)

CHILD = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {root!r})
    from jupyter_sandbox import Sandbox
    store, effects, mode, run_id = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    sb = Sandbox(store)
    def record(tag):
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, (tag + "\\n").encode())
        os.close(fd)
    @sb.action
    def effect(i):
        record(str(i))
        time.sleep(0.003)
        return i
    @sb.action(approval=True)
    def gate(x):
        record("gate")
        return x
    print("ready", flush=True)
    if mode == "run":
        sb.eval({run_source!r})
    else:
        sb.resume(run_id, True)
""")


def _recorder(sb: Sandbox, effects: Path) -> None:
    def record(tag: str) -> None:
        with open(effects, "a") as f:
            f.write(tag + "\n")

    @sb.action
    def effect(i):
        record(str(i))
        return i

    @sb.action(approval=True)
    def gate(x):
        record("gate")
        return x


def store_health(path: Path) -> tuple[bool, str]:
    """Whether a store passes SQLite's integrity check and every run and journal entry decodes."""
    try:
        db = sqlite3.connect(path)
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
        db.close()
        if check != "ok":
            return False, f"integrity_check: {check}"
        sb = Sandbox(path)
        for run in sb.runs(include_children=True):
            sb.run(run.id)
        sb.close()
        return True, ""
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"


def journaled_results(sb: Sandbox, run_id: str) -> set[str]:
    done = set()
    entries = sb.run(run_id).entries
    calls = {e["slot"]: e for e in entries if e["kind"] == "call"}
    for e in entries:
        if e["kind"] == "result" and e["slot"] in calls:
            call = calls[e["slot"]]
            done.add("gate" if call["name"] == "gate" else str(call["input"]))
    return done


def kill_trial(workdir: Path, mode: str, rng: random.Random, kills: int) -> dict[str, Any]:
    """Start (mode=run) or resume (mode=resume) a run in a child, SIGKILL it, repeat, then finish it here."""
    store, effects, program = workdir / "runs.sqlite", workdir / "effects.txt", workdir / "child.py"
    first_mode = mode
    program.write_text(CHILD.format(root=str(ROOT), run_source=RUN_SOURCE))
    effects.touch()
    run_id = "-"
    if mode == "resume":
        sb = Sandbox(store)
        _recorder(sb, effects)
        try:
            sb.eval(RESUME_SOURCE)
        except SandboxInterrupt as it:
            run_id = it.run_id
        sb.close()
    # key -> how many times it had run when its result was first seen journaled: any later run of it is a
    # journaled action executed twice (runs before that point are the at-least-once gap of a killed call)
    baseline: dict[str, int] = {}
    corrupted: list[str] = []
    for _ in range(kills):
        child = subprocess.Popen(
            [sys.executable, str(program), str(store), str(effects), mode, run_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        child.stdout.readline()  # "ready": the Sandbox is up, the run is starting
        time.sleep(rng.uniform(0.0, 0.25))
        child.send_signal(signal.SIGKILL)
        child.wait()
        healthy, why = store_health(store)
        if not healthy:
            corrupted.append(why)
            break
        sb = Sandbox(store)
        runs = sb.runs()
        counts_now = collections.Counter(effects.read_text().split())
        if runs:
            run_id = runs[0].id
            for key in journaled_results(sb, run_id):
                baseline.setdefault(key, counts_now[key])
        sb.close()
        if mode == "run" and runs:
            mode = "resume"  # later kills hit resumes of the same run
    output = None
    sb = Sandbox(store)
    _recorder(sb, effects)
    if not corrupted:
        runs = sb.runs()
        for _ in range(5):
            runs = sb.runs()
            if not runs:
                output = sb.eval(RUN_SOURCE).output
                break
            if runs[0].status == "completed":
                output = runs[0].output
                break
            try:
                output = sb.resume(runs[0].id, True).output
                break
            except SandboxInterrupt:
                continue
    sb.close()
    counts = collections.Counter(effects.read_text().split())
    expected = {str(i) for i in range(EFFECTS)} | ({"gate"} if first_mode == "resume" else set())
    twice_journaled = sorted(k for k, n in baseline.items() if counts[k] > n)
    repeats = sorted(k for k, n in counts.items() if n > 1)
    return {
        "output": output,
        "corrupted": corrupted,
        "lost": sorted(expected - set(counts)),
        "journaled_twice": twice_journaled,
        "repeats": repeats,
    }


def run_kill_trials(trials: int, seed: int, log: Any) -> dict[str, Any]:
    rng = random.Random(seed)
    totals = collections.Counter()
    details = []
    with tempfile.TemporaryDirectory(prefix="jsbx-kill-") as tmp:
        for t in range(trials):
            mode = "run" if t % 2 == 0 else "resume"
            workdir = Path(tmp) / f"t{t}"
            workdir.mkdir()
            result = kill_trial(workdir, mode, rng, kills=rng.choice([1, 1, 2, 3]))
            totals[f"{mode} trials"] += 1
            totals["corrupted stores"] += bool(result["corrupted"])
            totals["journaled actions executed twice"] += len(result["journaled_twice"])
            totals["in-flight actions repeated (at-least-once)"] += len(result["repeats"]) - len(
                result["journaled_twice"]
            )
            totals["runs not finished"] += result["output"] != "done"
            totals["effects lost"] += len(result["lost"])
            if result["corrupted"] or result["journaled_twice"] or result["output"] != "done" or result["lost"]:
                details.append({"trial": t, "mode": mode, **result})
            shutil.rmtree(workdir, ignore_errors=True)
            if (t + 1) % 25 == 0:
                log(f"  kill trials: {t + 1}/{trials}")
    return {"totals": dict(totals), "details": details[:10]}


@contextlib.contextmanager
def tmpfs(size: str):
    """A tmpfs of ``size`` mounted on a fresh directory, or None when mounting is not allowed here."""
    where = Path(tempfile.mkdtemp(prefix="jsbx-tmpfs-"))
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
        ).returncode
        == 0
    )
    try:
        yield where if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)
        shutil.rmtree(where, ignore_errors=True)


def run_disk_faults(log: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    effects = Path(tempfile.mkdtemp()) / "effects.txt"
    effects.touch()
    with tmpfs("8m") as where:  # room for SQLite's WAL (up to ~4 MB before its 1000-page checkpoint)
        if where is None:
            out["disk-full"] = "skipped (mount not permitted)"
        else:
            filler = where / "filler"
            filler.write_bytes(b"\0" * 7_700_000)
            store = where / "runs.sqlite"
            sb = Sandbox(store)
            _recorder(sb, effects)

            @sb.action
            def bulky(i):
                with open(effects, "a") as f:
                    f.write(f"b{i}\n")
                return "q" * 3000

            source = "for (let i = 0; i < 120; i++) await actions.bulky(i); return 'done'"
            error: BaseException | None = None
            try:
                sb.eval(source)
            except BaseException as e:
                error = e
            out["disk-full error"] = f"{type(error).__module__}.{type(error).__name__}" if error else "none"
            out["disk-full error is StoreError"] = type(error).__name__ == "StoreError"
            runs = sb.store.list_runs()
            out["disk-full run status after"] = runs[0].status if runs else None
            journaled = journaled_results(sb, runs[0].id) if runs else set()
            filler.unlink()
            try:
                result = sb.resume(runs[0].id)
                out["disk-full resume after freeing space"] = result.output
            except BaseException as e:
                out["disk-full resume after freeing space"] = f"{type(e).__name__}: {first_line(e)[:120]}"
            counts = collections.Counter(effects.read_text().split())
            out["disk-full journaled actions executed twice"] = sum(
                1 for k, n in counts.items() if n > 1 and k[1:] in journaled
            )
            sb.close()
            out["disk-full store healthy after"] = store_health(store)[0]
            # read-only: remount the same tmpfs read-only and use the store
            subprocess.run(["mount", "-o", "remount,ro", str(where)], capture_output=True)
            try:
                ro = Sandbox(store)
                ro.action(lambda x: x, name="effect")
                ro.eval("return await actions.effect(1)")
                out["read-only"] = "no error (!)"
            except BaseException as e:
                out["read-only"] = f"{type(e).__module__}.{type(e).__name__}: {first_line(e)[:100]}"
            out["read-only error is StoreError"] = out["read-only"].startswith("jupyter_sandbox.errors.StoreError")
            subprocess.run(["mount", "-o", "remount,rw", str(where)], capture_output=True)
    log("  disk faults done")
    return out


def run(args: Any, log: Any) -> dict[str, Any]:
    log(f"faults: {args.kills} SIGKILL trials...")
    return {"kill": run_kill_trials(args.kills, args.seed, log), "disk": run_disk_faults(log)}


def report(result: dict[str, Any], args: Any) -> tuple[list[str], list[str]]:
    """The section's table, and its rows of the summary."""
    kill = result["kill"]
    lines = ["## Faults", "", "| measure | value |", "|---|---|"]
    for k, v in kill["totals"].items():
        lines.append(f"| SIGKILL: {k} | {v} |")
    for k, v in result["disk"].items():
        lines.append(f"| {k} | {v} |")
    if kill["details"]:
        lines += [
            "",
            "Kill trials with a problem: "
            + "; ".join(
                f"#{d['trial']} {d['mode']}: corrupted={d['corrupted']} twice={d['journaled_twice']} "
                f"output={d['output']!r} lost={d['lost'][:5]}"
                for d in kill["details"]
            ),
        ]
    lines.append("")
    t = kill["totals"]
    head = [
        f"| SIGKILL trials (runs + resumes) | {t.get('run trials', 0)} + {t.get('resume trials', 0)} |",
        f"| corrupted stores | {t.get('corrupted stores', 0)} |",
        f"| journaled actions executed twice | {t.get('journaled actions executed twice', 0)} |",
    ]
    return lines, head
