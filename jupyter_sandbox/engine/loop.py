"""The engine's thread: one asyncio loop that owns every realm.

QuickJS contexts must stay on one thread, and a cell must be able to end
while a run is paused (notes/jupyter.md), so all engine work runs on a daemon
thread with its own loop and a stack larger than any realm's stack limit.
Callers submit coroutines and wait; Ctrl-C while waiting cancels the run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["EngineLoop", "engine_loop"]

T = TypeVar("T")
_STACK_BYTES = 64 * 1024 * 1024  # far above any realm's stack limit: QuickJS must overflow first


class EngineLoop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        previous = threading.stack_size()
        threading.stack_size(_STACK_BYTES)
        try:
            self.thread = threading.Thread(target=self._main, args=(ready,), name="jupyter-sandbox-engine", daemon=True)
            self.thread.start()
        finally:
            threading.stack_size(previous)
        ready.wait()

    def _main(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(ready.set)
        self.loop.run_forever()

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the engine thread and wait for it; Ctrl-C cancels it and re-raises."""
        if threading.current_thread() is self.thread:
            work.close()
            raise RuntimeError(
                "a Sandbox method was called from inside an async action; "
                "await the sandbox's async method (e.g. `await sb.aeval(...)`) instead"
            )
        finished = threading.Event()

        async def tracked() -> T:
            try:
                return await work
            finally:
                finished.set()

        future = self.submit(tracked())
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            finished.wait(2.0)  # let the run record that it was cancelled before the cell moves on
            raise


_LOOP: EngineLoop | None = None
_LOCK = threading.Lock()


def engine_loop() -> EngineLoop:
    """The process's engine loop, started on first use."""
    global _LOOP
    with _LOCK:
        if _LOOP is None or not _LOOP.thread.is_alive():
            _LOOP = EngineLoop()
        return _LOOP
