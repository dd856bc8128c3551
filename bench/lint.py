#!/usr/bin/env python
"""Benchmark of the pre-run lint: time per KiB of ordinary and pathological
sources at 16, 64 and 256 KiB (the size limit), beside floors measured in the
same run. Linear work shows as a flat row.

Run from the repository root::

    python bench/lint.py              # 16, 64, 256 KiB, 5 repetitions (about a minute on 2 cores)
    python bench/lint.py --quick      # 16 and 64 KiB, 3 repetitions

Prints a markdown table and writes it to ``bench/results/lint.md`` (``--out``
elsewhere). ``bench/README.md`` says what the rows and columns mean. Nothing
here asserts a timing: it measures.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # measure this checkout, not whatever copy is installed

from jupyter_sandbox.engine.lint import lint  # noqa: E402
from jupyter_sandbox.errors import LintError  # noqa: E402

KIB = 1024
WORKFLOW = r"""
// a workflow with strings, templates, regular expressions and divisions
const items = await actions.list_items({ page: 1, filter: "open", note: 'it\'s' });
for (const item of items) {
  if (/^draft-\d+$/.test(item.id)) continue;
  const label = `item ${item.id}: ${item.title.replace(/\s+/g, ' ')} (${items.length / 2})`;
  data.seen = (data.seen || 0) + 1; /* count it */
  await ctx.step(label, async () => actions.process_item({ id: item.id, ratio: a / b }));
}
"""
MINIFIED = 'var a="x",b=\'y\',c=d/e;function f(g){return g.h("i")+`j${k}l`+/m/.test(n)}if(o){p=q/2}'
ORDINARY = {
    "workflow (tests/test_lint.py)": WORKFLOW,
    "minified (tests/test_lint.py)": MINIFIED,
    "prelude.js (real code, has findings)": (REPO / "jupyter_sandbox/engine/js/prelude.js").read_text(),
}
# Each is quadratic for a naive regex-based lint (the first five) or a candidate for it.
PATHOLOGICAL = {
    "open regex classes `/[`": "/[",
    "escaped slashes `x\\/\\/`": "x\\/\\/",
    "open class after a word `/x[`": "/x[",
    "unclosed calls `,fetch(`": ",fetch(",
    "unclosed calls `{fetch(`": "{fetch(",
    "unclosed calls `f(`": "f(",
    "slash after increment `a++ / `": "a++ / ",
    "slashes after parens `(/`": "(/",
    "divisions `a/`": "a/",
    "regexes after return `return /`": "return /",
    "nested brackets `[[[{{{(((`": "[[[{{{(((",
    "open comment of stars `/***`": "/***",
    "template escapes `` `\\$\\ ``": "`\\$\\",
    "string escapes `'\\\\`": "'\\\\",
    "forbidden names ` fetch `": " fetch ",
}
F_COUNT = "floor: `str.count('/')` over the source"
F_ENCODE = "floor: `source.encode('utf-8')` (the size check)"


def tile(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def timed(fn: Callable[[], object]) -> float:
    """CPU seconds of one call (the lint is single-threaded CPU work: other load on the machine then
    shows far less than in wall time)."""
    gc.collect()
    start = time.process_time()
    fn()
    return time.process_time() - start


def linting(lint_function: Callable[[str], None], source: str) -> Callable[[], None]:
    def run() -> None:
        try:
            lint_function(source)
        except LintError:
            pass

    return run


def machine_info() -> str:
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = (
        " (with uncommitted changes to lint.py)"
        if git("status", "--porcelain", "--", "jupyter_sandbox/engine/lint.py")
        else ""
    )
    return (
        f"Python {platform.python_version()}, git {git('rev-parse', '--short', 'HEAD') or 'unknown'}{dirty}, "
        f"{os.cpu_count()} CPUs, load average {load_average()}"
    )


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="16 and 64 KiB, 3 repetitions")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "lint.md")
    args = parser.parse_args(argv)
    sizes = [16, 64] if args.quick else [16, 64, 256]
    reps = 3 if args.quick else 5
    cases = {**ORDINARY, **PATHOLOGICAL}
    sources = {(name, kib): tile(unit, kib * KIB) for name, unit in cases.items() for kib in sizes}
    runs: dict[tuple[str, int], Callable[[], object]] = {key: linting(lint, source) for key, source in sources.items()}
    for kib in sizes:
        probe = sources[(next(iter(cases)), kib)]
        runs[(F_COUNT, kib)] = lambda probe=probe: probe.count("/")
        runs[(F_ENCODE, kib)] = lambda probe=probe: probe.encode("utf-8")
    started_load = load_average()
    samples: dict[tuple[str, int], list[float]] = {key: [] for key in runs}
    for rep in range(reps):  # interleaved, so drifting load touches every case alike
        print(f"repetition {rep + 1}/{reps}", file=sys.stderr)
        for key, run in runs.items():
            samples[key].append(timed(run))
    per_kib = {key: statistics.median(values) / key[1] * 1e6 for key, values in samples.items()}

    head = " | ".join(f"CPU µs/KiB at {kib} KiB" for kib in sizes)
    lines = [
        "# Lint: median CPU time per KiB, beside floors",
        "",
        machine_info() + f" (at the start: {started_load})",
        f"{reps} repetitions, interleaved; medians.",
        "",
        f"| source | {head} | growth {sizes[-1]}/{sizes[0]} KiB | ratio to str.count at {sizes[-1]} KiB |",
        "| --- " * (len(sizes) + 3) + "|",
    ]
    for name in [*cases, F_COUNT, F_ENCODE]:
        cells = [f"{per_kib[(name, kib)]:,.1f}" for kib in sizes]
        growth = per_kib[(name, sizes[-1])] / per_kib[(name, sizes[0])]
        ratio = per_kib[(name, sizes[-1])] / per_kib[(F_COUNT, sizes[-1])]
        row = f"| {name} | {' | '.join(cells)} | {growth:.2f} | {ratio:,.0f}"
        lines.append(row + " |")
    lines += ["", f"Load average at the end: {load_average()}."]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
