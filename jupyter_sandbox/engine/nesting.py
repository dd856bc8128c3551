"""How deep scripts nest: one bound, whichever way the nesting happens.

A plain action run in place that calls ``sb.eval`` gets a helper loop per level (``loop.EngineLoop.serving``
counts them); an ``async def`` action that awaits ``sb.aeval`` nests on the same loop, as coroutines inside
coroutines, and so does a child run (``ctx.delegate``, a saved script, an agent) inside its parent: both are
counted here, in a context variable that each run's tasks inherit. Past ``MAX_NESTING``
levels the innermost script is refused with ``LimitExceeded("nesting")`` before it starts, which its action
fails with, instead of Python's ``RecursionError`` somewhere deep in the engine.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from ..errors import LimitExceeded

__all__ = ["MAX_NESTING", "nested", "nesting_refused"]

MAX_NESTING = 64  # scripts started from actions, one inside another

_depth: contextvars.ContextVar[int] = contextvars.ContextVar("jupyter_sandbox_nesting", default=0)


def nesting_refused() -> LimitExceeded:
    return LimitExceeded(
        "nesting",
        f"scripts nest at most {MAX_NESTING} deep (one started from an action, or a child run, is one level); "
        "does a script start itself again without end?",
        value=MAX_NESTING,
    )


@contextlib.contextmanager
def nested() -> Iterator[int]:
    """Count one more level of scripts started from actions for the code inside; refuse past the bound.

    >>> with nested() as depth:
    ...     depth
    1
    """
    depth = _depth.get() + 1
    if depth > MAX_NESTING:
        raise nesting_refused()
    token = _depth.set(depth)
    try:
        yield depth
    finally:
        _depth.reset(token)
