#!/usr/bin/env python
"""Benchmark of the engine: live per-action cost and resume cost, beside floors.

Run from the repository root::

    python bench/bench.py            # N = 100, 1,000, 5,000 (well under 2 minutes on 2 cores)
    python bench/bench.py --quick    # N = 100, 1,000, 3 repetitions (a smoke run)

Prints a markdown table (and machine info) and writes it to
``bench/results/latest.md`` (``--out`` to write elsewhere). ``bench/README.md``
says what each row means. Nothing here asserts a timing: it measures.

The measured script::

    for (let i = 0; i < ctx.input; i++) { await actions.noop(i) }
    return await actions.gate(0)

``noop`` does nothing (so what is measured is the engine's own cost), ``gate``
raises ``ActionInterrupt`` on its first call, so the run pauses with N
recorded actions; ``sb.resume(run_id, True)`` then replays those N from the
journal and calls ``gate`` live once.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # measure this checkout, not whatever copy is installed

import cbor2  # noqa: E402
import quickjs  # noqa: E402

import jupyter_sandbox  # noqa: E402
from jupyter_sandbox import ActionInterrupt, Limits, Resume, Sandbox, SandboxInterrupt  # noqa: E402

SCRIPT = "for (let i = 0; i < ctx.input; i++) { await actions.%s(i) }\nreturn await actions.gate(0)"
LIMITS = Limits(journal_entries=50_000)  # the default cap (5,000 entries) is 2,500 actions
LIVE_TARGET_US = 60.0
RESUME_TARGET_US = 10.0

# Case names (tests/test_bench_smoke.py checks that each one is printed).
F_COMMIT = "floor: SQLite WAL insert+commit, 1 entry"
F_READ = "floor: SQLite read + CBOR decode, 2 entries"
F_ROUNDTRIP = "floor: quickjs promise round trip via Python"
F_INREALM = "floor: quickjs await served in-realm"
LIVE_FILE_ASYNC = "live, file store, async def noop"
LIVE_FILE_SYNC = "live, file store, def noop"
LIVE_MEM_ASYNC = "live, :memory: store, async def noop"
RESUME_FILE = "resume, file store"
RESUME_MEM = "resume, :memory: store"
RESUME_CALL_LOG = "resume, bare call log, file store"
FIXED_LIVE = "fixed: live run with N = 0"
FIXED_RESUME = "fixed: resume with N = 0"
ENGINE_CASES = (LIVE_FILE_ASYNC, LIVE_FILE_SYNC, LIVE_MEM_ASYNC, RESUME_FILE, RESUME_MEM, RESUME_CALL_LOG)
RESUME_CASES = (RESUME_FILE, RESUME_CALL_LOG)  # --resume: the rows a resume's speed is judged by
LIVE_CASES = (LIVE_FILE_ASYNC, LIVE_FILE_SYNC, LIVE_MEM_ASYNC)  # --live: the rows the live path is judged by
CASES = [
    F_COMMIT,
    F_READ,
    F_ROUNDTRIP,
    F_INREALM,
    LIVE_FILE_ASYNC,
    LIVE_FILE_SYNC,
    LIVE_MEM_ASYNC,
    RESUME_FILE,
    RESUME_MEM,
    RESUME_CALL_LOG,
    FIXED_LIVE,
    FIXED_RESUME,
]

HEADER = (
    "| case | N | median total ms | µs per action | µs per entry | floor µs | ratio to floor | target µs "
    "| meets target |"
)


# -- timing --------------------------------------------------------------------------


LAST_CPU = [0.0]  # the process CPU seconds of the last ``timed`` call (all threads: the engine's too)


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes (garbage from earlier calls collected first, untimed)."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    LAST_CPU[0] = time.process_time() - cpu
    return time.perf_counter() - start


def median(samples: list[float]) -> float:
    return statistics.median(samples)


# -- floors --------------------------------------------------------------------------


_JOURNAL_TABLE = (
    "CREATE TABLE IF NOT EXISTS j (run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, "
    "body BLOB NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID"
)


def _entry_blob(seq: int) -> bytes:
    """A small CBOR blob shaped like the engine's ``result`` entry."""
    return cbor2.dumps({"kind": "result", "attempt": 1, "at": time.time(), "ok": True, "value": None, "slot": seq})


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(_JOURNAL_TABLE)
    return db


def floor_commit(path: Path, n: int) -> float:
    """N transactions of one INSERT each (BEGIN IMMEDIATE ... COMMIT), as the store writes them."""
    db = _connect(path)
    run_id = f"r-{time.perf_counter_ns()}"
    blobs = [_entry_blob(i) for i in range(n)]

    def work() -> None:
        for i, blob in enumerate(blobs):
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO j (run_id, seq, kind, body) VALUES (?, ?, ?, ?)", (run_id, i, "result", blob))
            db.execute("COMMIT")

    seconds = timed(work)
    db.close()
    return seconds


def floor_read(path: Path, n: int) -> float:
    """Read 2N journal rows back through a fresh connection and decode each (2 entries per action)."""
    db = _connect(path)
    run_id = f"r-{time.perf_counter_ns()}"
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        "INSERT INTO j (run_id, seq, kind, body) VALUES (?, ?, ?, ?)",
        [(run_id, i, "result", _entry_blob(i)) for i in range(2 * n)],
    )
    db.execute("COMMIT")
    db.close()
    reader = sqlite3.connect(path, isolation_level=None)

    def work() -> None:
        rows = reader.execute("SELECT seq, body FROM j WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        decoded = [cbor2.loads(body) for _, body in rows]
        assert len(decoded) == 2 * n

    seconds = timed(work)
    reader.close()
    return seconds


# The least a host call through Python can cost: a JS host stub returns a promise and
# pushes the request onto a queue held in a closure; Python takes the queue
# between jobs, calls a Python function, and settles the promise by calling a
# JS function handle with a JSON result. Same limits as a realm (time limit on).
_DRIVER = r"""
globalThis.__bench = (function () {
  const queue = [];
  const waiting = new Map();
  let next = 0, done = false, recs = [], served = 0;
  const live = { call(input) {
    return new Promise((res) => {
      const id = next++;
      waiting.set(id, res);
      queue.push(`{"id":${id},"input":${JSON.stringify(input)}}`);
    });
  } };
  const replay = { call(input) { return Promise.resolve(recs[served++].v); } };
  const script = async function (host, n) {
    for (let i = 0; i < n; i++) { await host.call(i); }
    return n;
  };
  return {
    start(n) { done = false; script(live, n).then(() => { done = true; }); },
    replay(plan, n) {
      recs = JSON.parse(plan); served = 0; done = false;
      script(replay, n).then(() => { done = true; });
    },
    take() {
      if (queue.length === 0) return "";
      const text = "[" + queue.join(",") + "]";
      queue.length = 0;
      return text;
    },
    settle(id, json) { const res = waiting.get(id); waiting.delete(id); res(JSON.parse(json).value); },
    done() { return done; },
  };
})();
"""


class BareDriver:
    def __init__(self) -> None:
        self.ctx = quickjs.Context()
        self.ctx.set_memory_limit(LIMITS.memory_bytes)
        self.ctx.set_max_stack_size(LIMITS.stack_bytes)
        self.ctx.eval(_DRIVER)
        get = self.ctx.eval
        self.start, self.replay = get("__bench.start"), get("__bench.replay")
        self.take, self.settle, self.done = get("__bench.take"), get("__bench.settle"), get("__bench.done")
        get("delete globalThis.__bench")
        self.ctx.set_time_limit(LIMITS.fuel_seconds)
        self.job = self.ctx.execute_pending_job


def _py_noop(value: object) -> None:
    return None


def floor_roundtrip(n: int) -> float:
    """N awaits, each a round trip: JS queues a request, Python takes it, calls a function, settles."""
    d = BareDriver()

    def work() -> None:
        job, take, settle = d.job, d.take, d.settle
        d.start(n)
        while True:
            while job():
                pass
            text = take()
            if not text:
                break
            for request in json.loads(text):
                settle(request["id"], json.dumps({"ok": True, "value": _py_noop(request["input"])}))
        assert d.done()

    return timed(work)


def floor_inrealm(n: int) -> float:
    """N awaits served from an array handed to the realm once (JSON), Python only draining jobs."""
    d = BareDriver()
    plan = json.dumps([{"s": i, "v": None} for i in range(n)])

    def work() -> None:
        job = d.job
        d.replay(plan, n)
        while job():
            pass
        assert d.done()

    return timed(work)


# -- the engine -------------------------------------------------------------------------


def make_sandbox(store: str | Path) -> Sandbox:
    sb = Sandbox(store=store, limits=LIMITS)

    @sb.action
    async def anoop(i):
        return None

    @sb.action
    def snoop(i):
        return None

    @sb.action
    async def gate(i, resume=None):
        if resume is None:
            raise ActionInterrupt(data="bench gate")
        return resume.value

    return sb


def live_run(sb: Sandbox, action: str, n: int) -> tuple[float, str]:
    """Start a run of N actions that pauses at the gate; return (seconds, run id)."""
    seconds, pause = paused_run(sb, action, n)
    return seconds, pause.run_id


def paused_run(sb: Sandbox, action: str, n: int) -> tuple[float, SandboxInterrupt]:
    paused: list[SandboxInterrupt] = []

    def work() -> None:
        try:
            sb.eval(SCRIPT % action, input=n)
        except SandboxInterrupt as pause:
            paused.append(pause)
            return
        raise RuntimeError("the bench script did not pause at its gate")

    seconds = timed(work)
    return seconds, paused[0]


def resume_call_log(sb: Sandbox, call_log: list, n: int) -> float:
    """``sb.eval`` of the script from a bare call log (plain JSON: no run id) answering the gate at slot N."""

    def work() -> None:
        result = sb.eval(SCRIPT % "anoop", input=n, call_log=call_log, resume=Resume(position=n, value=True))
        if result.output is not True:
            raise RuntimeError(f"the call-log resume returned {result.output!r}")

    return timed(work)


def resume_run(sb: Sandbox, run_id: str, n: int) -> float:
    def work() -> None:
        result = sb.resume(run_id, True)
        if result.output is not True or result.replayed != n:
            raise RuntimeError(f"resume returned {result.output!r} after replaying {result.replayed} (expected {n})")

    return timed(work)


@dataclass
class Row:
    case: str
    n: int
    total_ms: float | None
    per_us: float | None
    floor_us: float | None = None
    target_us: float | None = None
    per_entry: bool = False  # the target is stated per journal entry (resume), not per action (live)

    @property
    def judged_us(self) -> float | None:
        """The figure the target is compared with, in the unit the target is stated in."""
        if self.per_us is None:
            return None
        return self.per_us / 2 if self.per_entry else self.per_us


def measure(
    ns: list[int],
    reps: dict[int, int],
    base_reps: int,
    workdir: Path,
    log: Callable[[str], None],
    resume_only: bool = False,
    live_only: bool = False,
) -> list[Row]:
    rows: list[Row] = []
    cases = RESUME_CASES if resume_only else LIVE_CASES if live_only else ENGINE_CASES
    cpu_samples: dict[int, dict[str, list[float]]] = {}  # --live: N -> case -> CPU seconds per repetition

    def engine_samples(n: int, count: int, path: Path) -> dict[str, list[float]]:
        """``count`` repetitions of every engine case at N, interleaved, on a fresh store file."""
        samples: dict[str, list[float]] = {c: [] for c in ENGINE_CASES}
        cpu = cpu_samples.setdefault(n, {c: [] for c in LIVE_CASES})
        writer, resumer, memory = make_sandbox(path), make_sandbox(path), make_sandbox(":memory:")
        try:
            for _ in range(count):
                seconds, pause = paused_run(writer, "anoop", n)
                samples[LIVE_FILE_ASYNC].append(seconds)
                if live_only:  # the live rows alone, each with its CPU time: no resumes between them
                    cpu[LIVE_FILE_ASYNC].append(LAST_CPU[0])
                    samples[LIVE_FILE_SYNC].append(live_run(writer, "snoop", n)[0])
                    cpu[LIVE_FILE_SYNC].append(LAST_CPU[0])
                    samples[LIVE_MEM_ASYNC].append(live_run(memory, "anoop", n)[0])
                    cpu[LIVE_MEM_ASYNC].append(LAST_CPU[0])
                    continue
                # Resumed through a second Sandbox on the same file (its own SQLite connection), as
                # another kernel would: the journal is read from the file.
                samples[RESUME_FILE].append(resume_run(resumer, pause.run_id, n))
                bare = json.loads(json.dumps(list(pause.call_log)))  # plain JSON: resumed from the log alone
                samples[RESUME_CALL_LOG].append(resume_call_log(resumer, bare, n))
                if resume_only:
                    continue
                samples[LIVE_FILE_SYNC].append(live_run(writer, "snoop", n)[0])
                seconds, run_id = live_run(memory, "anoop", n)
                samples[LIVE_MEM_ASYNC].append(seconds)
                samples[RESUME_MEM].append(resume_run(memory, run_id, n))
        finally:
            for sb in (writer, resumer, memory):
                sb.close()
        return samples

    # Warm up (imports, the prelude, the thread pool, SQLite) outside any measurement.
    engine_samples(10, 1, workdir / "warmup.sqlite")
    floor_roundtrip(10), floor_inrealm(10)

    log(f"N = 0 baseline ({base_reps} reps)")
    base = {case: median(s) for case, s in engine_samples(0, base_reps, workdir / "n0.sqlite").items() if s}
    rows.append(Row(FIXED_LIVE, 0, base[LIVE_FILE_ASYNC] * 1e3, None))
    if not live_only:
        rows.append(Row(FIXED_RESUME, 0, base[RESUME_FILE] * 1e3, None))

    for n in ns:
        count = reps[n]
        log(f"N = {n:,} ({count} reps)")
        floors: dict[str, list[float]] = {F_COMMIT: [], F_READ: [], F_ROUNDTRIP: [], F_INREALM: []}
        floor_cpu = cpu_samples.setdefault(n, {c: [] for c in LIVE_CASES})
        for _rep in range(count):
            floors[F_COMMIT].append(floor_commit(workdir / f"floor-{n}.sqlite", n))
            floor_cpu.setdefault(F_COMMIT, []).append(LAST_CPU[0])
            floors[F_ROUNDTRIP].append(floor_roundtrip(n))
            floor_cpu.setdefault(F_ROUNDTRIP, []).append(LAST_CPU[0])
            if not live_only:  # (the live rows' floor is a commit and a round trip)
                floors[F_READ].append(floor_read(workdir / f"floor-{n}.sqlite", n))
                floors[F_INREALM].append(floor_inrealm(n))
        floor_us = {case: median(s) / n * 1e6 for case, s in floors.items() if s}
        for case in (F_COMMIT, F_READ, F_ROUNDTRIP, F_INREALM):
            if case in floor_us:
                rows.append(Row(case, n, median(floors[case]) * 1e3, floor_us[case]))

        samples = engine_samples(n, count, workdir / f"engine-{n}.sqlite")
        durable_floor = floor_us[F_COMMIT] + floor_us[F_ROUNDTRIP]
        # A resumed action: at least the round trip that made it live, and the await that serves it in the realm.
        replay_floor = floor_us[F_ROUNDTRIP] + floor_us.get(F_INREALM, 0.0)
        plan = [
            (LIVE_FILE_ASYNC, durable_floor, LIVE_TARGET_US, False),
            (LIVE_FILE_SYNC, durable_floor, LIVE_TARGET_US, False),
            (LIVE_MEM_ASYNC, floor_us[F_ROUNDTRIP], None, False),
            (RESUME_FILE, replay_floor, RESUME_TARGET_US, False),
            (RESUME_MEM, replay_floor, RESUME_TARGET_US, False),
            (RESUME_CALL_LOG, replay_floor, RESUME_TARGET_US * 1.2, False),
        ]
        for case, floor, target, per_entry in plan:
            if case not in cases:
                continue
            total = median(samples[case])
            rows.append(Row(case, n, total * 1e3, (total - base[case]) / n * 1e6, floor, target, per_entry))
    if live_only:
        rows.extend(cpu_rows(cpu_samples, ns))
    return rows


def cpu_rows(samples: dict[int, dict[str, list[float]]], ns: list[int]) -> list[Row]:
    """The live rows and their floors again in process CPU time (``--live``): what other work on the machine
    moves far less than wall time. Engine rows less the N = 0 run's CPU, per action, beside the floors' CPU."""
    rows = []
    for n in ns:
        per = {case: median(s) / n * 1e6 for case, s in samples[n].items() if case in (F_COMMIT, F_ROUNDTRIP)}
        floor = per[F_COMMIT] + per[F_ROUNDTRIP]
        for case in (F_COMMIT, F_ROUNDTRIP):
            rows.append(Row(f"{case} (CPU)", n, median(samples[n][case]) * 1e3, per[case]))
        for case in LIVE_CASES:
            total, base = median(samples[n][case]), median(samples[0][case])
            case_floor = per[F_ROUNDTRIP] if case == LIVE_MEM_ASYNC else floor
            rows.append(Row(f"{case} (CPU)", n, total * 1e3, (total - base) / n * 1e6, case_floor))
    return rows


# -- reporting ------------------------------------------------------------------------------


def machine_info() -> list[str]:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "jupyter_sandbox")
    dirty = " (engine files modified since that commit)" if dirty else ""
    return [
        f"- python {platform.python_version()} ({platform.python_implementation()}), {platform.platform()}",
        f"- quickjs-ng {version('quickjs-ng')}, cbor2 {version('cbor2')}, SQLite {sqlite3.sqlite_version}",
        f"- jupyter_sandbox {jupyter_sandbox.__version__} from {Path(jupyter_sandbox.__file__).parent}, "
        f"git {commit}{dirty}",
        f"- cpu count {os.cpu_count()}, load average at start {load_average()}",
    ]


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def table(rows: list[Row]) -> list[str]:
    out = [HEADER, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        engine = r.target_us is not None or r.case.startswith("live")
        per_action = r.per_us if engine else None
        per_entry = r.per_us / 2 if engine and r.per_us is not None else (r.per_us if not engine else None)
        ratio = r.per_us / r.floor_us if r.per_us is not None and r.floor_us else None
        judged = r.judged_us
        meets = "—" if r.target_us is None or judged is None else ("yes" if judged <= r.target_us else "no")
        target = "—" if r.target_us is None else f"≤ {r.target_us:g} per {'entry' if r.per_entry else 'action'}"
        out.append(
            f"| {r.case} | {r.n:,} | {fmt(r.total_ms, 2)} | {fmt(per_action)} | {fmt(per_entry)} "
            f"| {fmt(r.floor_us)} | {fmt(ratio, 2) if ratio is not None else '—'} | {target} | {meets} |"
        )
    return out


def growth(rows: list[Row], ns: list[int]) -> list[str]:
    """µs per action at each N, and the largest N over the one before: ≈ 1 when time grows linearly in N."""
    lines = []
    a, b = sorted(ns)[-2:]
    for case in ENGINE_CASES:
        by_n = {r.n: r.per_us for r in rows if r.case == case}
        if not all(by_n.get(n) for n in ns):
            continue
        each = " / ".join(f"{by_n[n]:,.1f}" for n in ns)
        lines.append(
            f"- {case}: µs per action at N = {' / '.join(f'{n:,}' for n in ns)}: {each}; "
            f"N = {b:,} over N = {a:,}: {by_n[b] / by_n[a]:.2f}"
        )
    return lines


NOTES = """\
How to read it (bench/README.md has more):

- Engine rows: µs per action = (median total at N − median total at N = 0) / N, so the run's fixed
  cost (the two `fixed:` rows) is not spread over the actions. One action = one recorded call =
  **two** journal entries (`call` + `result`); per journal entry is half the per-action figure.
  Each target is judged per action (one recorded call), at N = 5,000. Floors are per operation
  (the `µs per entry` column).
- live: `sb.eval` of N awaited no-op actions up to the pause at the gate. resume: `sb.resume(run_id,
  True)` replaying those N actions from the journal, plus the gate called live once.
- Floors are total / N of the bare operation. Floor of `live, file store` rows = SQLite commit +
  quickjs round trip; of `live, :memory:` = quickjs round trip; of `resume` rows = quickjs round trip +
  quickjs await served in-realm (what serving one recorded action costs at least).
  `floor: quickjs await served in-realm` is the lower bound for a replay that makes no Python call
  per entry; `floor: SQLite read + CBOR decode` is the cost of reading one action's two entries.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 100 and 1,000 only, 3 repetitions (a smoke run)")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "bench" / "results" / "latest.md",
        help="where to write the markdown results (default: bench/results/latest.md)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="only the resume rows (by run id from the file, and from a bare call log) at N = 1,000, 5,000, "
        "20,000, beside their floors",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="only the live rows (file store async def and def, :memory: async def) at N = 1,000 and 5,000, "
        "beside their floors",
    )
    args = parser.parse_args(argv)

    if args.quick:
        ns, reps, base_reps = [100, 1_000], {100: 3, 1_000: 3}, 3
    elif args.resume:
        ns, reps, base_reps = [1_000, 5_000, 20_000], {1_000: 5, 5_000: 5, 20_000: 3}, 5
    elif args.live:
        ns, reps, base_reps = [1_000, 5_000], {1_000: 5, 5_000: 5}, 5
    else:
        ns, reps, base_reps = [100, 1_000, 5_000, 20_000], {100: 7, 1_000: 5, 5_000: 5, 20_000: 3}, 7

    def log(message: str) -> None:
        print(f"... {message}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    info = machine_info()
    with tempfile.TemporaryDirectory(prefix="jsbx-bench-") as tmp:
        rows = measure(ns, reps, base_reps, Path(tmp), log, resume_only=args.resume, live_only=args.live)
    elapsed = time.perf_counter() - started

    mode = "quick" if args.quick else "resume" if args.resume else "live" if args.live else "full"
    lines = [
        f"# jupyter_sandbox engine benchmark ({mode} run, {time.strftime('%Y-%m-%d %H:%M:%S')})",
        "",
        *info,
        f"- repetitions: {', '.join(f'N = {n:,}: {reps[n]}' for n in ns)}; N = 0: {base_reps}; "
        f"medians reported; whole run {elapsed:.1f} s; load average at end {load_average()}",
        "",
        *table(rows),
        "",
        "Growth (linear in N ⇒ ≈ 1):",
        "",
        *growth(rows, ns),
        "",
        NOTES,
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
