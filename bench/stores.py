#!/usr/bin/env python
"""The two stores side by side: live per-action cost and resume per recorded action, beside their floors.

Run from the repository root::

    python bench/stores.py           # live at N = 1,000, resume at N = 5,000, 5 repetitions
    python bench/stores.py --quick   # N = 200 and 1,000, 3 repetitions (a smoke run)

SQLite is a WAL file in a temporary folder; PostgreSQL is a throwaway cluster
(tests/postgres_server.py) with its default durability (fsync and synchronous
commit on), reached over TCP loopback. The floors are measured in the same run
on the same store: one SQLite insert+commit; one PostgreSQL round trip
(``SELECT 1``) and one autocommitted INSERT of a journal-shaped row. A live
action awaited alone writes its two entries (its call and its result) in one
commit, so its floor is one commit; PostgreSQL's target is within 2x of it. Prints a markdown table of medians and
writes it to ``bench/results/stores.md``. Nothing here asserts a timing.

Then PostgreSQL at team scale: 10,000 runs parked on timers due at the same moment (``--timers``), drained
by 1, 2 and 4 worker processes in turn (``--workers``), each its own ``Sandbox`` and store connection running
the product's wake path (``cli.work``, as ``jupyter-sandbox worker --once`` does). The time is from the
moment every timer is due (all workers started and waiting) to the last worker finding nothing left. After
the run the script's one action after its timer has written one row per call into a table of its own: each
run's rows are counted, and the table says how many runs were woken once, twice or more, or never.
``--workers-only`` runs only this part.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from postgres_server import PostgresCluster  # noqa: E402

from bench.bench import (  # noqa: E402  # noqa: E402
    _entry_blob,
    floor_commit,
    live_run,
    load_average,
    machine_info,
    make_sandbox,
    median,
    resume_run,
    timed,
)
from jupyter_sandbox import RunParked, Sandbox  # noqa: E402

LIVE_TARGET_US = 60.0  # SQLite live, per action
RESUME_TARGET_US = 15.0  # either store, per recorded action at 5,000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pg_floors(url: str, n: int, reps: int) -> tuple[float, float]:
    """Median seconds of one round trip and of one autocommitted journal INSERT, over ``n`` each."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS floor_j (run_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT "
            "NOT NULL, body BYTEA NOT NULL, PRIMARY KEY (run_id, seq))"
        )
        blobs = [_entry_blob(i) for i in range(n)]

        def trips() -> None:
            for _ in range(n):
                conn.execute("SELECT 1").fetchone()

        def commits() -> None:
            run_id = f"r-{time.perf_counter_ns()}"
            for i, blob in enumerate(blobs):
                conn.execute(
                    "INSERT INTO floor_j (run_id, seq, kind, body) VALUES (%s, %s, %s, %s)", (run_id, i, "result", blob)
                )

        trip = median([timed(trips) for _ in range(reps)]) / n
        commit = median([timed(commits) for _ in range(reps)]) / n
    return trip, commit


def engine(store: str, live_n: int, resume_n: int, reps: int) -> dict[str, float]:
    """Median seconds per action live (async def, def) and per recorded action on resume."""
    sb = make_sandbox(store)
    out: dict[str, list[float]] = {"async": [], "sync": [], "resume": []}
    for _ in range(reps):
        for kind, action in (("async", "anoop"), ("sync", "snoop")):
            seconds, _ = live_run(sb, action, live_n)
            out[kind].append(seconds / live_n)
        _, run_id = live_run(sb, "anoop", resume_n)
        out["resume"].append(resume_run(sb, run_id, resume_n) / resume_n)
    sb.close()
    return {k: median(v) for k, v in out.items()}


# -- N workers draining due timers (PostgreSQL at team scale) -------------------------------------------

PARKED = "await ctx.sleep(ctx.input);\nawait actions.woke(ctx.runId);\nreturn 1"
WORKER = """
import sys, threading
sys.path[:0] = [{repo!r}]
import psycopg
from jupyter_sandbox import Sandbox
from jupyter_sandbox.cli import work

url = sys.argv[1]
effects = psycopg.connect(url, autocommit=True)  # the action's own effect: one row per call, counted after

def woke(run_id):
    effects.execute("INSERT INTO bench_wakes (run_id, pid) VALUES (%s, pg_backend_pid())", (run_id,))
    return True

with Sandbox(store=url) as sb:
    sb.action(woke, name="woke")
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()  # go
    done = work(sb, interval=0.05, once=True, stop=threading.Event(), report=lambda run_id, result: None)
print(done)
"""


def park_timers(url: str, count: int, due_in_ms: int) -> str:
    """``count`` runs parked on one timer due at the same moment: one parked by the engine, the rest its
    copies under new ids (runs, journal and attempts rows alike), so setting up 10,000 takes seconds."""
    import psycopg

    with Sandbox(store=url) as sb:
        sb.action(lambda run_id: True, name="woke")
        try:
            sb.eval(PARKED, input=due_in_ms)
            raise AssertionError("the run did not park")
        except RunParked as parked:
            run_id = str(parked.run_id)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_wakes (run_id TEXT NOT NULL, pid INTEGER NOT NULL)")
        conn.execute("TRUNCATE bench_wakes")
        for table, key in (("runs", "id"), ("run_journal", "run_id"), ("run_attempts", "run_id")):
            cols = [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "ORDER BY ordinal_position",
                    (table,),
                )
            ]
            picked = ", ".join("%(id)s || '-' || g" if c == key else c for c in cols)
            conn.execute(
                f"INSERT INTO {table} ({', '.join(cols)}) SELECT {picked} FROM {table}, generate_series(2, %(n)s) g "
                f"WHERE {key} = %(id)s",
                {"id": run_id, "n": count},
            )
    return run_id


def drain(url: str, workers: int, count: int) -> dict[str, Any]:
    """Park ``count`` timers, start ``workers`` processes running the product's wake path (``cli.work``), let
    them go together once the timers are due, and time until the last has nothing left; then count wakes."""
    import subprocess

    import psycopg

    # ms: past the parking attempt's lease (a parked run stays its owner's until the lease ends), and room to
    # copy the runs and start the workers
    due_in = int(float(os.environ.get("JUPYTER_SANDBOX_LEASE_SECONDS", "30")) * 1000) + 5_000
    park_timers(url, count, due_in)
    with psycopg.connect(url, autocommit=True) as conn:
        due_at = float(conn.execute("SELECT max(wake_at) FROM runs").fetchone()[0]) / 1000
    program = WORKER.format(repo=str(REPO))
    cpu_before = _children_cpu()
    procs = [
        subprocess.Popen([sys.executable, "-c", program, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(workers)
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        time.sleep(max(0.0, due_at + 0.2 - time.time()))  # every timer due
        start = time.perf_counter()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        completed = [int(p.communicate(timeout=3_600)[0].split()[-1]) for p in procs]
        seconds = time.perf_counter() - start
        cpu = _children_cpu() - cpu_before  # the workers' own CPU, every thread, from their start (tiny) to exit
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    with psycopg.connect(url, autocommit=True) as conn:
        per_run = dict(conn.execute("SELECT run_id, count(*) FROM bench_wakes GROUP BY run_id").fetchall())
        statuses = dict(conn.execute("SELECT status, count(*) FROM runs GROUP BY status").fetchall())
        conn.execute("DELETE FROM run_journal; DELETE FROM run_attempts; DELETE FROM runs")
    return {
        "workers": workers,
        "seconds": seconds,
        "cpu": cpu,
        "completed": sum(completed),
        "per_worker": completed,
        "woken_once": sum(1 for n in per_run.values() if n == 1),
        "woken_twice_or_more": sum(1 for n in per_run.values() if n > 1),
        "never_woken": count - len(per_run),
        "statuses": statuses,
    }


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's children that have been waited for."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def realm_floor(reps: int = 5) -> tuple[float, float]:
    """Median wall and CPU seconds of one realm with its prelude (``Realm(...)``): a wake's least JS work."""
    from jupyter_sandbox.engine.limits import Limits
    from jupyter_sandbox.engine.realm import Realm

    walls, cpus = [], []
    for _ in range(reps):
        wall, cpu = time.perf_counter(), time.process_time()
        Realm("return 1", Limits())
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return median(walls), median(cpus)


def drain_table(timers: int, counts: list[int]) -> list[str]:
    """The workers' drain of ``timers`` due timers on a fresh durable cluster, one row per worker count,
    with the floors of one wake measured in the same run: a realm, a round trip and a commit."""
    with PostgresCluster(port=free_port(), durable=True) as cluster:
        results = []
        floors: list[tuple[float, float, float, float]] = []
        for n in counts:  # the floors beside each drain, so each is read against the load of its moment
            trip, commit = pg_floors(cluster.url, 200, 3)
            floors.append((*realm_floor(), trip, commit))
            results.append(drain(cluster.url, n, timers))
    one = next((r["seconds"] for r in results if r["workers"] == 1), None)
    ms = 1e3
    lines = [
        f"{timers:,} parked runs due at once, drained by N worker processes (`cli.work`, each its own connection):",
        "",
        "| workers | drain s | runs/s | speed-up over 1 | ms per run | workers' CPU ms per run | completed "
        "| woken once | twice or more | never | floors: realm ms (CPU) · round trip ms · commit ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r, (realm_wall, realm_cpu, trip, commit) in zip(results, floors, strict=True):
        speedup = f"{one / r['seconds']:.2f}x" if one else ""
        lines.append(
            f"| {r['workers']} | {r['seconds']:.1f} | {timers / r['seconds']:.0f} | {speedup} "
            f"| {r['seconds'] / timers * ms:.1f} | {r['cpu'] / timers * ms:.1f} | {r['completed']:,} "
            f"| {r['woken_once']:,} | {r['woken_twice_or_more']:,} | {r['never_woken']:,} "
            f"| {realm_wall * ms:.1f} ({realm_cpu * ms:.1f}) · {trip * ms:.2f} · {commit * ms:.2f} |"
        )
    lines += [
        "",
        f"{os.cpu_count()} CPUs; load average {load_average()}; statuses after each drain: "
        + "; ".join(str(r["statuses"]) for r in results),
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N, 3 repetitions")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "stores.md")
    parser.add_argument("--timers", type=int, help="due timers the workers drain (default 10,000; --quick 100)")
    parser.add_argument("--workers", default="1,2,4", help="worker counts to drain them with, in turn")
    parser.add_argument("--workers-only", action="store_true", help="only the workers' drain")
    args = parser.parse_args(argv)
    live_n, resume_n, reps = (200, 1_000, 3) if args.quick else (1_000, 5_000, 5)
    timers = args.timers or (100 if args.quick else 10_000)
    if args.workers_only:
        text = "\n".join(drain_table(timers, [int(w) for w in args.workers.split(",")]))
        print(text)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
        return 0
    us = 1e6
    rows: list[tuple[str, str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="jsbx-stores-") as tmp:
        sqlite_path = Path(tmp) / "runs.sqlite"
        sqlite_commit = median([floor_commit(Path(tmp) / "floor.sqlite", live_n) for _ in range(reps)]) / live_n
        lite = engine(str(sqlite_path), live_n, resume_n, reps)
    with PostgresCluster(port=free_port(), durable=True) as cluster:
        trip, commit = pg_floors(cluster.url, live_n, reps)
        pg = engine(cluster.url, live_n, resume_n, reps)

    def row(case: str, n: int, value: float, floor: float | None, target: float | None) -> None:
        ratio = f"{value / floor:.2f}x" if floor else ""
        rows.append(
            (
                case,
                f"{n:,}",
                f"{value * us:.1f}",
                f"{floor * us:.1f}" if floor else "",
                ratio + (f" (target ≤ {target:.0f} µs)" if target else ""),
            )
        )

    rows.append(("floor: SQLite WAL insert+commit, 1 entry", f"{live_n:,}", f"{sqlite_commit * us:.1f}", "", ""))
    rows.append(("floor: PostgreSQL round trip (SELECT 1)", f"{live_n:,}", f"{trip * us:.1f}", "", ""))
    rows.append(("floor: PostgreSQL autocommit INSERT, 1 entry", f"{live_n:,}", f"{commit * us:.1f}", "", ""))
    row("live, SQLite, async def (per action)", live_n, lite["async"], sqlite_commit, LIVE_TARGET_US)
    row("live, SQLite, def (per action)", live_n, lite["sync"], sqlite_commit, LIVE_TARGET_US)
    row("live, PostgreSQL, async def (per action)", live_n, pg["async"], commit, 2 * commit * us)
    row("live, PostgreSQL, def (per action)", live_n, pg["sync"], commit, 2 * commit * us)
    row("resume, SQLite (per recorded action)", resume_n, lite["resume"], None, RESUME_TARGET_US)
    row("resume, PostgreSQL (per recorded action)", resume_n, pg["resume"], None, RESUME_TARGET_US)
    lines = ["| case | N | median µs | floor µs (1 commit for live) | × floor |", "|---|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", f"{reps} repetitions; load average {load_average()}", *machine_info()]
    lines += ["", *drain_table(timers, [int(w) for w in args.workers.split(",")])]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("JUPYTER_SANDBOX_LEASE_SECONDS", "30")
    raise SystemExit(main())
