"""The benchmark runs (``bench/bench.py --quick``) and prints every row. No timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CASES = [
    "floor: SQLite WAL insert+commit, 1 entry",
    "floor: SQLite read + CBOR decode, 2 entries",
    "floor: quickjs promise round trip via Python",
    "floor: quickjs await served in-realm",
    "live, file store, async def noop",
    "live, file store, def noop",
    "live, :memory: store, async def noop",
    "resume, file store",
    "resume, :memory: store",
    "fixed: live run with N = 0",
    "fixed: resume with N = 0",
]
HEADER = (
    "| case | N | median total ms | µs per action | µs per entry | floor µs | ratio to floor | target µs "
    "| meets target |"
)


def run_bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One of bench/'s scripts run as a reader would, checked to have exited cleanly."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


@pytest.mark.slow
def test_quick_benchmark_runs_and_prints_every_case(tmp_path):
    out = tmp_path / "latest.md"
    proc = run_bench("bench.py", "--quick", "--out", str(out))
    lines = proc.stdout.splitlines()
    assert HEADER in lines
    rows = [line for line in lines if line.startswith("| ")]
    for case in CASES:
        assert any(row.startswith(f"| {case} |") for row in rows), f"no row for {case!r}"
    for n in ("100", "1,000"):
        assert any(row.startswith(f"| resume, file store | {n} |") for row in rows)
    assert out.read_text(encoding="utf-8").strip() == proc.stdout.strip()


@pytest.mark.slow
def test_resume_parts_runs_and_prints_every_step():
    from bench.resume_parts import STEPS

    proc = run_bench("resume_parts.py", "--quick")
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    for step in STEPS:
        assert any(row.startswith(f"| {step} |") for row in rows), f"no row for {step!r}"


@pytest.mark.slow
def test_values_bench_runs_and_prints_each_crossing_with_its_ratio_to_the_floor(tmp_path):
    out = tmp_path / "values.md"
    proc = run_bench("values.py", "--quick", "--repeat", "1", "--out", str(out))
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    for case in ("input into the realm", "result out of the realm", "an action's result into the realm"):
        row = next((r for r in rows if r.startswith(f"| {case}")), None)
        assert row is not None, f"no row for {case!r}"
        assert float(row.split("|")[3]) > 0, row  # the ratio column is filled in
    assert out.read_text(encoding="utf-8").strip() == proc.stdout.strip()
