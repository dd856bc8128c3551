#!/usr/bin/env python
"""Benchmark of big values crossing between Python and a script, beside the realm's own JSON in the same run.

Run from the repository root::

    python bench/values.py           # a 30 MB value, median of 3 rounds (about a minute on 2 cores)
    python bench/values.py --quick   # a 3 MB value (a smoke run)

The value is a list of 1 KB strings (30,000 of them: 30 MB of JSON). Rows, each the median of the rounds,
the rounds interleaved so every row sees the same load:

* floor ``JSON.parse`` and ``JSON.stringify``: the realm's own, of the same text, in a bare QuickJS context
  with the same memory limit (what a script pays to read or write the value itself);
* ``input into the realm``: ``sb.eval("return ctx.input.length", input=value)`` (checks, the run row, the
  crossing), less the same eval with no input;
* ``result out of the realm``: a script that builds the value and returns it, less the same script returning
  its length (the value's checks, its JSON, the journal's row);
* ``an action's result into the realm``: ``return (await actions.big()).length`` with ``big`` returning the
  value, less the same with a small one.

Each row's ratio is to ``JSON.parse`` (into the realm) or ``JSON.stringify`` (out of it); target ≤ 3×. Every row
is timed in wall time and in the process's CPU time (every thread, the engine's too): on a shared machine the
first stretches with the other work, the second far less. Two more
rows are not targets but what a run's input costs in an in-memory SQLite table, its CBOR written when the run is
created and the run's row then updated twice (its claim and its end): held in the run's row, as schema 3 kept it
(SQLite rewrites a whole row, overflow pages too, on every ``UPDATE``, so the value is written 3 times), and in a
row of its own, as the store keeps it since schema 4 (``run_values``: written once).
Before each timed call, untimed: a garbage collection and, on Linux with glibc, ``malloc_trim(0)``, so the
memory a previous call freed is given back and does not change what the next one's allocations cost.
Writes ``bench/results/values.md`` (``--out`` elsewhere). Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # measure this checkout

import quickjs  # noqa: E402

from jupyter_sandbox import Limits, Sandbox  # noqa: E402

LIMITS = Limits(memory_bytes=1 << 30, journal_bytes=1 << 30, fuel_seconds=120)
BUILD = "const a = []; for (let i = 0; i < ctx.input; i++) a.push('doc ' + i + ' ' + 'y'.repeat(1000));\n"


def value(count: int) -> list[str]:
    return [f"doc {i} " + "y" * 1000 for i in range(count)]


def _trimmer():
    """glibc's ``malloc_trim``, where there is one: a round's freed 30 MB would otherwise stay in the
    allocator's arenas and change what the next round's allocations cost."""
    if not sys.platform.startswith("linux"):
        return lambda: None
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl)
        return lambda: None
    return lambda: trim(0)


_trim = _trimmer()


def timed(fn) -> Took:
    gc.collect()
    _trim()  # untimed, like the collection
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return Took(time.perf_counter() - start, time.process_time() - cpu)


class Took(NamedTuple):
    """Wall time and the process's CPU time (every thread: the engine's too), s. Other work on the machine
    stretches the first (a thread waits for a core) far more than the second."""

    wall: float
    cpu: float

    def __sub__(self, other: object) -> Took:
        assert isinstance(other, Took)
        return Took(self.wall - other.wall, self.cpu - other.cpu)


def floors(text: str) -> tuple[Took, Took]:
    ctx = quickjs.Context()
    ctx.set_memory_limit(LIMITS.memory_bytes)
    ctx.eval("(s) => { globalThis.S = s; return 0 }")(text)
    parse = timed(lambda: ctx.eval("globalThis.V = JSON.parse(S), 0"))
    stringify = timed(lambda: ctx.eval("JSON.stringify(V).length"))
    return parse, stringify


def row_writes(value: object, *, apart: bool) -> Took:
    """An in-memory SQLite run holding ``value``'s CBOR, created, then updated twice (a status column only):
    the value in the run's row (schema 3), or ``apart`` in a row of its own (schema 4's ``run_values``)."""
    import cbor2

    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, status TEXT, input BLOB)")
    conn.execute("CREATE TABLE run_values (run_id TEXT, name TEXT, value BLOB, PRIMARY KEY (run_id, name))")

    def write() -> None:
        blob = cbor2.dumps(value)
        conn.execute("INSERT INTO runs VALUES ('r', 'created', ?)", (None if apart else blob,))
        if apart:
            conn.execute("INSERT INTO run_values VALUES ('r', 'input', ?)", (blob,))
        for status in ("running", "completed"):
            conn.execute("UPDATE runs SET status = ? WHERE id = 'r'", (status,))

    took = timed(write)
    conn.close()
    return took


def main(argv: list[str]) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 3 MB value (a smoke run)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (the median is reported)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "values.md")
    args = parser.parse_args(argv)
    count = 3_000 if args.quick else 30_000
    big = value(count)
    text = json.dumps(big)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows: dict[str, list[Took]] = {k: [] for k in ("parse", "stringify", "row", "apart", "input", "output", "action")}
    with Sandbox(limits=LIMITS) as sb:
        sb.action(lambda: big, name="big")
        sb.action(lambda: [], name="small")
        sb.eval("return 1")
        for _ in range(args.repeat):
            parse, stringify = floors(text)
            rows["parse"].append(parse)
            rows["stringify"].append(stringify)
            for layout, apart in (("row", False), ("apart", True)):
                rows[layout].append(row_writes(big, apart=apart) - row_writes([], apart=apart))
            rows["input"].append(
                timed(lambda: sb.eval("return ctx.input.length", input=big))
                - timed(lambda: sb.eval("return ctx.input.length", input=[]))
            )
            assert sb.eval(BUILD + "return a", input=count).output == big
            rows["output"].append(
                timed(lambda: sb.eval(BUILD + "return a", input=count))
                - timed(lambda: sb.eval(BUILD + "return a.length", input=count))
            )
            rows["action"].append(
                timed(lambda: sb.eval("return (await actions.big()).length"))
                - timed(lambda: sb.eval("return (await actions.small()).length"))
            )
    med = {k: Took(*(statistics.median(getattr(t, f) for t in v) * 1e3 for f in Took._fields)) for k, v in rows.items()}
    table = [
        ("floor: the realm's JSON.parse of the value", "parse", None),
        ("floor: the realm's JSON.stringify of the value", "stringify", None),
        ("SQLite: the value in its run's row, written 3 times (schema 3)", "row", None),
        ("SQLite: the value in a row of its own, written once (schema 4, as an input is now)", "apart", None),
        ("input into the realm (sb.eval input=)", "input", "parse"),
        ("result out of the realm (return value)", "output", "stringify"),
        ("an action's result into the realm", "action", "parse"),
    ]
    lines = [
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end; a value of {len(text) / 1e6:.1f} MB of JSON "
        f"({count:,} strings of 1 KB), median of {args.repeat}",
        "",
        "| case | median ms | × its floor (target ≤ 3) | CPU ms | × its floor in CPU |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, key, floor in table:
        wall, cpu = med[key]
        ratios = ("", "") if floor is None else (f"{wall / med[floor].wall:.2f}", f"{cpu / med[floor].cpu:.2f}")
        lines.append(f"| {name} | {wall:.0f} | {ratios[0]} | {cpu:.0f} | {ratios[1]} |")
    out = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(out, encoding="utf-8")
    print(out)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
