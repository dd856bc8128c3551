#!/usr/bin/env python
"""Benchmark of MCP tools as actions: what a call through the sandbox adds over the SDK's own client.

Run from the repository root::

    python bench/mcp.py           # tens of seconds (two server processes start)
    python bench/mcp.py --quick   # fewer calls (a smoke run)

Prints a markdown table of medians beside the floor measured in the same run, and writes it to
``bench/results/mcp.md`` (``--out`` elsewhere). Nothing here asserts a timing. The rows, per call of the
read-only ``read_file`` tool of ``tests/mcp_servers/files.py``:

* ``bare ClientSession.call_tool`` (the floor): the SDK's client, in one asyncio loop, awaiting N calls one
  after the other on a session to its own server process;
* ``actions.files.read_file, live``: a script awaiting N calls of the tool as an action (``sb.mcp``): the
  engine's live call (journal rows included), the hop from the engine's loop to the MCP loop's thread and
  back, input validation against the tool's schema, and the result's conversion;
* ``overhead``: the difference of the two medians, per call;
* ``replayed from the journal``: the same N calls served on resume, which never reach the server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This file is named mcp.py: run as a script, its folder must not hide the `mcp` package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]
sys.path.insert(0, str(REPO))  # measure this checkout

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from jupyter_sandbox import Sandbox, SandboxInterrupt  # noqa: E402

SERVER = [sys.executable, str(REPO / "tests" / "mcp_servers" / "files.py")]
ARGS = {"path": "/readme.txt"}


def bare(n: int, repeat: int) -> list[float]:
    async def run() -> list[float]:
        params = StdioServerParameters(command=SERVER[0], args=SERVER[1:] + ["bare"])
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                await session.list_tools()
                await session.call_tool("read_file", ARGS)
                per_call = []
                for _ in range(repeat):
                    start = time.perf_counter()
                    for _ in range(n):
                        await session.call_tool("read_file", ARGS)
                    per_call.append((time.perf_counter() - start) / n * 1e6)
                return per_call

    return asyncio.run(run())


def through_sandbox(n: int, repeat: int) -> tuple[list[float], list[float]]:
    script = (
        "for (let i = 0; i < ctx.input; i++) await actions.files.read_file({path: '/readme.txt'});\n"
        "return await actions.gate();"
    )
    live, replayed = [], []
    with Sandbox() as sb:
        sb.mcp("files", SERVER + ["files"])
        sb.action(lambda resume=None: _gate(resume), name="gate")
        sb.eval("return await actions.files.read_file({path: '/readme.txt'})")
        for _ in range(repeat):
            start = time.perf_counter()
            try:
                sb.eval(script, input=n)
            except SandboxInterrupt as paused:
                live.append((time.perf_counter() - start) / n * 1e6)
                start = time.perf_counter()
                assert sb.resume(paused.run_id, True) is not None
                replayed.append((time.perf_counter() - start) / n * 1e6)
    return live, replayed


def _gate(resume: object) -> bool:
    from jupyter_sandbox import ActionInterrupt

    if resume is None:
        raise ActionInterrupt(data="gate")
    return True


def main(argv: list[str]) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "mcp.md")
    args = parser.parse_args(argv)
    n, repeat = (50, 3) if args.quick else (300, 7)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    floor = statistics.median(bare(n, repeat))
    live, replayed = through_sandbox(n, repeat)
    sandboxed, resumed = statistics.median(live), statistics.median(replayed)
    rows = [
        ("bare ClientSession.call_tool (floor)", f"{floor:.0f} µs"),
        ("actions.files.read_file, live", f"{sandboxed:.0f} µs"),
        ("overhead (live − floor)", f"{sandboxed - floor:.0f} µs ({sandboxed / floor:.2f}×)"),
        ("replayed from the journal (server not contacted)", f"{resumed:.1f} µs"),
    ]
    lines = [
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end; N = {n} calls, median of {repeat}",
        "",
        "| per call | median |",
        "| --- | --- |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return text


if __name__ == "__main__":
    main(sys.argv[1:])
