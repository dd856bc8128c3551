"""An action's Python traceback as the person who wrote the action needs it: its own frames, not ours.

An exception raised in an action passes through this package's frames (the
call, the worker thread, the engine's loop) and asyncio's or
``concurrent.futures``' before it reaches the action's code. ``action_traceback``
drops those leading frames and keeps everything from the first frame of the
action's own code on (the libraries it called included), chained causes too,
cut to ``MAX_CHARS`` from the end (where the failing line is). ``cut_message`` bounds the
exception's message the same way from its start (``MAX_MESSAGE_CHARS``): both are journaled with the
call's result and handed to the script, so an action that raises a 20 MB message still fails as an
``ActionError`` the script can catch. Each cut is marked ``…[cut: N … characters]``.

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

__all__ = ["MAX_CHARS", "MAX_MESSAGE_CHARS", "action_traceback", "cut_message"]

MAX_CHARS = 4000  # journaled with the call's result: enough for a dozen frames
MAX_MESSAGE_CHARS = 64 * 1024  # an exception's message: a response body or a dump, not megabytes of it
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
    if len(text) <= MAX_CHARS:
        return text
    kept = MAX_CHARS - 48  # room for the marker (a count of up to 15 digits)
    return f"…[cut: {len(text) - kept} earlier characters]\n" + text[-kept:]


def cut_message(text: str) -> str:
    """``text`` when it has at most ``MAX_MESSAGE_CHARS`` characters, else its start and how much was cut.

    >>> cut_message("x" * (MAX_MESSAGE_CHARS + 5))[-26:]
    'x…[cut: 5 more characters]'
    """
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return text[:MAX_MESSAGE_CHARS] + f"…[cut: {len(text) - MAX_MESSAGE_CHARS} more characters]"
