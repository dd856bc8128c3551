"""The machine's pace, measured once when the test run starts: the bound on every wait a test must bound.

No test asserts that something was fast (speed is measured in ``bench/``). Where a test must still bound a
wait, to turn a hang into a failure (a fuzz case that never answers, a subprocess, a scheduler that should
have fired by now), it writes the bound for an idle machine and passes it through ``bound``, which scales it
by ``SLOWDOWN``: the median time of a fixed piece of CPU work now, over that work's time on an idle machine
(never below 1), with a margin on top. A run started on a machine already busy with other work gets
proportionally longer bounds; ``JUPYTER_SANDBOX_TEST_SLOWDOWN`` sets the factor outright.
"""

from __future__ import annotations

import os
import statistics
import time

IDLE_SECONDS = 0.025  # _work() on an idle 2-core machine (its best of many runs)
MARGIN = 3.0  # a run may get busier after it started: the bound leaves room for that


def _work() -> int:
    total = 0
    for i in range(200_000):
        total += i * i % 7
    return total


def measure(rounds: int = 7) -> float:
    """This machine's slowdown now: the median of ``rounds`` timings of a fixed piece of work, over its idle time."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        _work()
        times.append(time.perf_counter() - started)
    return max(1.0, statistics.median(times) / IDLE_SECONDS)


SLOWDOWN = float(os.environ.get("JUPYTER_SANDBOX_TEST_SLOWDOWN") or measure())


def bound(idle_seconds: float) -> float:
    """A bound on a wait, in seconds: ``idle_seconds`` (what it takes on an idle machine, with room) scaled."""
    return idle_seconds * SLOWDOWN * MARGIN
