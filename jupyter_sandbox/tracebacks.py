"""An action's Python traceback as the person who wrote the action needs it: its own frames, not ours.

An exception raised in an action passes through this package's frames (the
call, the worker thread, the engine's loop) and asyncio's or
``concurrent.futures``' before it reaches the action's code. ``action_traceback``
drops those leading frames and keeps everything from the first frame of the
action's own code on (the libraries it called included), chained causes too,
cut to ``MAX_CHARS`` from the end (where the failing line is).

>>> def divide(x):
...     return x / 0
>>> try:
...     divide(1)
... except ZeroDivisionError as exc:
...     print(action_traceback(exc).splitlines()[-1])
ZeroDivisionError: division by zero
"""

from __future__ import annotations

import os
import traceback

__all__ = ["MAX_CHARS", "action_traceback"]

MAX_CHARS = 4000  # journaled with the call's result: enough for a dozen frames
_OURS = os.path.dirname(os.path.abspath(__file__)) + os.sep
_MACHINERY = tuple(
    os.sep + os.path.join(*parts) for parts in (("asyncio", ""), ("concurrent", "futures", ""), ("threading.py",))
)


def _machinery(filename: str) -> bool:
    """A frame of this package or of the machinery that carried the call to the action."""
    path = os.path.abspath(filename) if filename and not filename.startswith("<") else filename or ""
    return path.startswith(_OURS) or any(part in path for part in _MACHINERY)


def action_traceback(exc: BaseException) -> str | None:
    """The traceback of ``exc`` from the action's first own frame on; None when no frame is the action's."""
    try:
        te = traceback.TracebackException.from_exception(exc, capture_locals=False)
    except Exception:  # an exception whose text or frames cannot be read: the message says what it can
        return None
    frames = list(te.stack)
    first = next((i for i, f in enumerate(frames) if not _machinery(f.filename)), None)
    if first is None:
        return None
    te.stack = traceback.StackSummary.from_list(frames[first:])
    try:
        text = "".join(te.format())
    except Exception:
        return None
    return text if len(text) <= MAX_CHARS else "…\n" + text[-(MAX_CHARS - 2) :]
