#!/usr/bin/env python
"""Benchmark of MCP tools as actions: what a call through the sandbox adds over the SDK's own client.

Run from the repository root::

    python bench/mcp.py           # tens of seconds (two server processes start)
    python bench/mcp.py --quick   # fewer calls (a smoke run)

Prints a markdown table of medians beside the floor measured in the same run, and writes it to
``bench/results/mcp.md`` (``--out`` elsewhere). Nothing here asserts a timing. The rows, per call of the
read-only ``read_file`` tool of ``tests/mcp_servers/files.py``:

* ``bare ClientSession.call_tool`` (the floor): the SDK's client awaiting N calls one after the other, on the
  very session (so the very server process) the sandbox's actions use, on the loop that session lives on;
* ``actions.files.read_file, live``: a script awaiting N calls of the tool as an action (``sb.mcp``): the
  engine's live call (journal rows included), input validation against the tool's schema, and the result's
  conversion;
* ``overhead``: the difference of the two medians, per call (target: at most 500 µs);
* ``replayed from the journal``: the same N calls served on resume, which never reach the server.

The two are measured in turns (floor, action, floor, action, ...), so both see the same load, each after a
full garbage collection (a collection of this process's heap, some 100 ms, falling inside one round would
double that round). The load average before each round is printed beside the medians.
Beside each wall time, this process's CPU time per call (every thread's; the server's process is not
counted): on a loaded machine a stdio round trip's wall time is mostly the two processes waiting to be
scheduled, and the CPU column shows what the action itself adds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This file is named mcp.py: run as a script, its folder must not hide the `mcp` package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]
sys.path.insert(0, str(REPO))  # measure this checkout

from jupyter_sandbox import Sandbox, SandboxInterrupt  # noqa: E402

SERVER = [sys.executable, str(REPO / "tests" / "mcp_servers" / "files.py")]
ARGS = {"path": "/readme.txt"}


def cpu() -> float:
    """This process's CPU seconds so far, every thread's (the server's own process is not counted)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def bare(sb: Sandbox, n: int) -> tuple[float, float]:
    """µs per ``call_tool`` (wall, CPU) on the sandbox's own session to the server, on the loop it lives on."""
    conn = sb._mcp_servers["files"]._conn
    session, loop = conn.session, conn.task.get_loop()

    async def run() -> tuple[float, float]:
        start, used = time.perf_counter(), cpu()
        for _ in range(n):
            await session.call_tool("read_file", ARGS)
        return (time.perf_counter() - start) / n * 1e6, (cpu() - used) / n * 1e6

    return asyncio.run_coroutine_threadsafe(run(), loop).result()


def measure(n: int, repeat: int) -> dict[str, list[float]]:
    script = (
        "for (let i = 0; i < ctx.input; i++) await actions.files.read_file({path: '/readme.txt'});\n"
        "return await actions.gate();"
    )
    out: dict[str, list[float]] = {"floor": [], "floor_cpu": [], "live": [], "live_cpu": [], "replayed": [], "load": []}
    with Sandbox() as sb:
        sb.mcp("files", SERVER + ["files"])
        sb.action(lambda resume=None: _gate(resume), name="gate")
        sb.eval("return await actions.files.read_file({path: '/readme.txt'})")
        bare(sb, 10)
        for _ in range(repeat):
            out["load"].append(os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
            gc.collect()
            wall, used = bare(sb, n)
            out["floor"].append(wall)
            out["floor_cpu"].append(used)
            gc.collect()
            start, used = time.perf_counter(), cpu()
            try:
                sb.eval(script, input=n)
            except SandboxInterrupt as paused:
                out["live"].append((time.perf_counter() - start) / n * 1e6)
                out["live_cpu"].append((cpu() - used) / n * 1e6)
                start = time.perf_counter()
                assert sb.resume(paused.run_id, True) is not None
                out["replayed"].append((time.perf_counter() - start) / n * 1e6)
    return out


def _gate(resume: object) -> bool:
    from jupyter_sandbox import ActionInterrupt

    if resume is None:
        raise ActionInterrupt(data="gate")
    return True


def main(argv: list[str]) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    parser.add_argument("--n", type=int, help="calls per round")
    parser.add_argument("--repeat", type=int, help="rounds (the median is reported)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "mcp.md")
    args = parser.parse_args(argv)
    n, repeat = (50, 3) if args.quick else (300, 7)
    n, repeat = args.n or n, args.repeat or repeat
    runs = measure(n, repeat)
    med = {k: statistics.median(v) for k, v in runs.items()}
    floor, sandboxed = med["floor"], med["live"]
    rows = [
        ("bare ClientSession.call_tool (floor)", f"{floor:.0f} µs", f"{med['floor_cpu']:.0f} µs"),
        ("actions.files.read_file, live", f"{sandboxed:.0f} µs", f"{med['live_cpu']:.0f} µs"),
        (
            "overhead (live − floor), target ≤ 500 µs",
            f"{sandboxed - floor:.0f} µs ({sandboxed / floor:.2f}×)",
            f"{med['live_cpu'] - med['floor_cpu']:.0f} µs",
        ),
        ("replayed from the journal (server not contacted)", f"{med['replayed']:.1f} µs", ""),
    ]
    lines = [
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average before each round "
        f"{', '.join(f'{x:.2f}' for x in runs['load'])}; N = {n} calls, median of {repeat}",
        "",
        "| per call | median wall | median CPU of this process |",
        "| --- | --- | --- |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return text


if __name__ == "__main__":
    main(sys.argv[1:])
