"""Clocks: where the engine reads the time for timers, waits and live ``Date.now()``.

The default, ``SystemClock``, follows the store's clock (PostgreSQL's ``clock_timestamp()``, read
with every claim; SQLite's is this machine's), so a timer parked by one process and woken by another
is due at the same moment whatever their own clocks say.

Inject a ``ManualClock`` in tests (and in tutorials) so that an hour-long
``ctx.hours(1)`` is one ``advance()`` away.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Clock", "SystemClock", "ManualClock"]


class Clock(Protocol):
    """What the engine needs of a clock.

    A clock may also say whether time passes on it without being told: ``ticking`` (True when absent).
    A live ``Date.now()`` in a script that computes for a while adds the time since the host last read a
    ticking clock; a clock that moves only when told keeps the script at exactly its reading.
    """

    def now(self) -> float:
        """Epoch milliseconds."""

    async def sleep(self, ms: float) -> None:
        """Wait until ``ms`` have passed on this clock."""


class SystemClock:
    """The machine's clock (the default), or the store's once ``following`` it: epoch ms from ``source``."""

    ticking = True

    def __init__(self, source: Callable[[], float] | None = None):
        self._source = source

    def now(self) -> float:
        return self._source() if self._source is not None else time.time() * 1000.0

    def following(self, store: Any) -> SystemClock:
        """This clock reading ``store.now_ms()`` where the store has a clock of its own (``Store.now_ms``)."""
        source = getattr(store, "now_ms", None)
        return SystemClock(source) if callable(source) else self

    async def sleep(self, ms: float) -> None:
        await asyncio.sleep(ms / 1000.0)


class ManualClock:
    """A clock that moves only when told to; ``sleep`` advances it at once.

    >>> clock = ManualClock(start=0)
    >>> clock.advance(3_600_000)   # an hour later
    """

    ticking = False  # a script's live reads are the clock's reading, not the reading plus the time it ran

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
