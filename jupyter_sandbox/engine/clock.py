"""Clocks: where the engine reads the time for timers, waits and live ``Date.now()``.

Inject a ``ManualClock`` in tests (and in tutorials) so that an hour-long
``ctx.hours(1)`` is one ``advance()`` away.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock", "ManualClock"]


class Clock(Protocol):
    """What the engine needs of a clock."""

    def now(self) -> float:
        """Epoch milliseconds."""

    async def sleep(self, ms: float) -> None:
        """Wait until ``ms`` have passed on this clock."""


class SystemClock:
    """The machine's clock (the default)."""

    def now(self) -> float:
        return time.time() * 1000.0

    async def sleep(self, ms: float) -> None:
        await asyncio.sleep(ms / 1000.0)


class ManualClock:
    """A clock that moves only when told to; ``sleep`` advances it at once.

    >>> clock = ManualClock(start=0)
    >>> clock.advance(3_600_000)   # an hour later
    """

    def __init__(self, start: float | None = None):
        self._now = time.time() * 1000.0 if start is None else float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, ms: float) -> None:
        with self._lock:
            self._now += ms

    async def sleep(self, ms: float) -> None:
        self.advance(ms)
        await asyncio.sleep(0)
