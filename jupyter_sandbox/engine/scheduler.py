"""The scheduler: wakes parked runs whose timer (or wait timeout) fell due.

A parked run holds nothing: no thread, no realm. The scheduler polls the store
on the engine loop; a run whose timer fell due while no process was running
wakes on the first poll after a Sandbox on that store starts its scheduler.
Two schedulers (two kernels) on one store are safe: a resume takes the run
with a compare-and-set, so exactly one wakes it. A store that announces its
changes (``listen()``, PostgreSQL's NOTIFY) wakes the scheduler early.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loop import LoopHold
    from .runs import Engine

__all__ = ["Scheduler"]

log = logging.getLogger("jupyter_sandbox")


class Scheduler:
    def __init__(
        self, engine: Engine, loop: LoopHold, interval: float, on_result: Callable[[str, Any], None] | None = None
    ):
        self.engine, self.loop, self.interval, self.on_result = engine, loop, interval, on_result
        self._future: Any = None
        self._changes: Any = None  # the store's listener, when it has one

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
        if self._changes is not None:
            self._changes.close()
            self._changes = None

    async def _main(self) -> None:
        while True:
            try:
                for run_id, result in await self.engine.run_due():
                    if self.on_result is not None:
                        self.on_result(run_id, result)
            except Exception:  # one bad run must not stop the others from waking
                log.exception("scheduler tick failed")
            await self._pause()

    async def _pause(self) -> None:
        """Wait ``interval``, or only until the store announces a change (then at least a tenth of a second)."""
        listen = getattr(self.engine.store, "listen", None)
        if listen is None:
            await asyncio.sleep(self.interval)
            return
        try:
            if self._changes is None:
                self._changes = listen()
            await asyncio.get_running_loop().run_in_executor(None, self._changes.wait, self.interval)
            await asyncio.sleep(min(0.1, self.interval))  # a burst of changes is one tick, not many
        except Exception:  # the listener broke (the server restarted): poll, and listen again next time
            log.warning("listening for store changes failed; polling", exc_info=True)
            self._changes = None
            await asyncio.sleep(self.interval)
