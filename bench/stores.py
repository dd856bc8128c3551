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
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N, 3 repetitions")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "stores.md")
    args = parser.parse_args(argv)
    live_n, resume_n, reps = (200, 1_000, 3) if args.quick else (1_000, 5_000, 5)
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
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("JUPYTER_SANDBOX_LEASE_SECONDS", "30")
    raise SystemExit(main())
