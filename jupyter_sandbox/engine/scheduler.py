"""The scheduler: wakes parked runs whose timer (or wait timeout) fell due.

A parked run holds nothing: no thread, no realm. The scheduler polls the store
on the engine loop; a run whose timer fell due while no process was running
wakes on the first poll after a Sandbox on that store starts its scheduler.
Two schedulers (two kernels) on one store are safe: a resume takes the run
with a compare-and-set, so exactly one wakes it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .runs import Engine
    from .loop import EngineLoop

__all__ = ["Scheduler"]

log = logging.getLogger("jupyter_sandbox")


class Scheduler:
    def __init__(self, engine: Engine, loop: EngineLoop, interval: float,
                 on_result: Callable[[str, Any], None] | None = None):
        self.engine, self.loop, self.interval, self.on_result = engine, loop, interval, on_result
        self._future: Any = None

    @property
    def running(self) -> bool:
        return self._future is not None and not self._future.done()

    def start(self) -> None:
        if not self.running:
            self._future = self.loop.submit(self._main())

    def stop(self) -> None:
        if self._future is not None:
            self._future.cancel()
            self._future = None

    async def _main(self) -> None:
        while True:
            try:
                for run_id, result in await self.engine.run_due():
                    if self.on_result is not None:
                        self.on_result(run_id, result)
            except Exception:  # one bad run must not stop the others from waking
                log.exception("scheduler tick failed")
            await asyncio.sleep(self.interval)
