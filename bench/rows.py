#!/usr/bin/env python
"""What validating journal rows as they are read costs: µs per row, beside the decode alone.

Run from the repository root::

    python bench/rows.py            # 9 repetitions of a 5,000-action journal (about 20 s)
    python bench/rows.py --quick    # 3 repetitions of 1,000

The journal is the engine's own: a run of N actions (``work({i, tags: [...]})``, half of them failing,
with a clock read, a console line and a step around each tenth), then an approval, so its rows are the
mix a resume reads. Each case decodes the same rows:

* floor: ``cbor2.loads`` of each row, nothing else;
* before: the decode of ``stores/rows.py`` before validation (a copy here: pop the common fields, no checks);
* after: ``stores.rows.decode_journal``, every row checked against its kind's schema;
* store read: ``SQLiteStore.entries`` (the SELECT and ``decode_journal``), what a resume pays.

Prints a markdown table of medians. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # measure this checkout

import cbor2  # noqa: E402

from jupyter_sandbox import ActionInterrupt, Limits, Sandbox, SandboxInterrupt  # noqa: E402
from jupyter_sandbox.stores.rows import Entry, decode_journal  # noqa: E402

MIXED = """
for (let i = 0; i < ctx.input; i++) {
  if (i % 10 === 0) { console.log("at", i, Date.now()); await ctx.step("tenth", async () => {}); }
  try { await actions.work({i, tags: ["a", "b"], nested: {ok: i % 2 === 0}}); } catch (e) {}
}
return await actions.gate(0)
"""
NOOP = "for (let i = 0; i < ctx.input; i++) { await actions.work(i) }\nreturn await actions.gate(0)"  # bench.py's


def journal_rows(script: str, n: int, workdir: Path) -> tuple[Path, str, list[tuple[int, bytes]]]:
    sb = Sandbox(workdir / f"runs-{len(script)}.sqlite", limits=Limits(journal_entries=20 * n + 100))

    @sb.action
    def work(value):
        if not isinstance(value, dict):
            return None
        if value["i"] % 2:
            raise ValueError("odd")
        return {"done": value["i"], "tags": value["tags"]}

    @sb.action
    def gate(x, resume=None):
        raise ActionInterrupt(data=x)

    try:
        sb.eval(script, input=n)
    except SandboxInterrupt as paused:
        run_id = paused.run_id
    rows = sb.store._read("SELECT seq, body FROM run_journal WHERE run_id = ? ORDER BY seq", (run_id,))
    sb.close()
    return Path(sb.store.path), run_id, rows


def decode_before(run_id: str, seq: int, blob: bytes) -> Entry:
    """``stores.rows.decode`` as it was before rows were validated."""
    row = cbor2.loads(blob)
    kind, attempt, at = row.pop("kind"), row.pop("attempt"), row.pop("at")
    return Entry(kind, attempt, at, row.pop("slot", None), row, seq)


def per_row_us(fn, rows: int) -> float:
    """CPU µs per row of one call of ``fn`` (CPU time: the machine is shared, and this is all CPU work)."""
    gc.collect()
    start = time.process_time()
    fn()
    return (time.process_time() - start) / rows * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions of a 1,000-action journal")
    args = parser.parse_args(argv)
    n, reps = (1000, 3) if args.quick else (5000, 9)
    print(f"journals of {n:,} actions; CPU µs per row, median of {reps} repetitions run round robin\n")
    print("| journal | rows | case | µs per row | ratio to floor |")
    print("| --- | ---: | --- | ---: | ---: |")
    with tempfile.TemporaryDirectory(prefix="jsbx-rows-") as tmp:
        for label, script in (("bench.py's (noop)", NOOP), ("mixed", MIXED)):
            measure(label, *journal_rows(script, n, Path(tmp)), reps)
    return 0


def measure(label: str, path: Path, run_id: str, rows: list[tuple[int, bytes]], reps: int) -> None:
    from jupyter_sandbox.stores.sqlite import SQLiteStore

    store = SQLiteStore(path)
    cases = {
        "floor: cbor2.loads": lambda: [cbor2.loads(b) for _, b in rows],
        "before: decode without validation": lambda: [decode_before(run_id, s, b) for s, b in rows],
        "after: decode_journal (validated)": lambda: decode_journal(run_id, rows),
        "store read: SQLiteStore.entries": lambda: store.entries(run_id),
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(reps):  # round robin: a burst of load on the machine falls on every case alike
        for name, fn in cases.items():
            samples[name].append(per_row_us(fn, len(rows)))
    store.close()
    results = {name: statistics.median(values) for name, values in samples.items()}
    floor = results["floor: cbor2.loads"]
    for name, us in results.items():
        print(f"| {label} | {len(rows):,} | {name} | {us:.2f} | {us / floor:.2f} |")
    before, after = results["before: decode without validation"], results["after: decode_journal (validated)"]
    print(f"| {label} | | validation adds | {after - before:.2f} | {after / before:.2f}× unvalidated |")


if __name__ == "__main__":
    sys.exit(main())
