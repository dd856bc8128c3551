"""The threads plain actions run on: a pool that lends a thread for each of its own that waits on a run.

An action may run a script itself (``sb.eval`` inside an action): its thread then waits for that run, whose
own plain actions need threads of the same pool. With a fixed pool, a chain of such calls as deep as the
pool deadlocks. ``ActionPool`` counts a thread that waits on a run (``lend_this_thread``) as lent, not busy: the pool
may start one more thread for each, so nesting never runs out of threads, whatever the pool's size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

__all__ = ["MAX_LENT", "WORKERS", "ActionPool", "lend_this_thread"]

WORKERS = 32  # threads for plain actions that run at once
MAX_LENT = 256  # threads lent to runs that actions wait on: past that, an action runs scripts without end

_mine = threading.local()  # .pool: the ActionPool whose worker this thread is


class ActionPool(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` for plain actions whose workers may wait on runs without starving it.

    >>> pool = ActionPool(4)
    >>> pool.submit(sum, [1, 2]).result()
    3
    >>> pool.shutdown()
    """

    def __init__(self, workers: int = WORKERS):
        super().__init__(max_workers=workers, thread_name_prefix="jsbx-action", initializer=self._enter)
        self._lent = 0
        self._lending = threading.Lock()

    def _enter(self) -> None:
        _mine.pool = self

    def lend(self) -> None:
        """One of this pool's threads waits on a run: allow one more thread meanwhile."""
        with self._lending:
            if self._lent >= MAX_LENT:
                raise RuntimeError(
                    f"more than {MAX_LENT} actions wait at once on scripts they started: "
                    "does an action run a script that calls it again without end?"
                )
            self._lent += 1
            self._max_workers += 1  # read by the executor when it is given work: it may start a thread
            if not self._work_queue.empty():  # work already waits for a thread: start one now
                self._adjust_thread_count()

    def give_back(self) -> None:
        with self._lending:
            self._lent -= 1
            self._max_workers -= 1  # (a thread it started stays, idle, and is reused)


def lend_this_thread() -> Callable[[], None]:
    """Before a wait for a run: the calling thread, if an action pool's worker, is lent until the returned
    function is called (a ``RuntimeError`` past ``MAX_LENT``)."""
    pool: ActionPool | None = getattr(_mine, "pool", None)
    if pool is None:
        return _nothing
    pool.lend()
    return pool.give_back


def _nothing() -> None:
    return None
