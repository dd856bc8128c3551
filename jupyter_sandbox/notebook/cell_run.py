"""A run started from a cell (``%%sandbox``, or a ``%sandbox`` subcommand that resumes): its card shown as it
goes, ``-o VAR`` filled when it completes, and a failure raised as the cell's error, without Python frames.

In a kernel after ``%load_ext jupyter_sandbox`` (the card is displayed, which only a kernel draws):

>>> magics = get_ipython().magics_manager.registry["SandboxMagics"]  # doctest: +SKIP
>>> sb = magics.sandbox()  # doctest: +SKIP
>>> start = lambda observer: sb.eval("return 1", observer=observer)  # doctest: +SKIP
>>> show_run(magics, sb, "%%sandbox", start, out="result")  # doctest: +SKIP

A failure is raised without our frames: IPython shows its ``_render_traceback_``, the message alone.

>>> quiet(ValueError("the input must be JSON"))._render_traceback_()
['ValueError: the input must be JSON']
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, Protocol

from IPython.core.error import UsageError

from ..errors import RunCancelled, RunPaused, SandboxError
from ..results import RollbackResult, RunResult
from ..sandbox import Sandbox
from .card_views import publish
from .cards import RunCard

__all__ = ["Magics", "OutputVar", "quiet", "show_run"]


class Magics(Protocol):
    """What the subcommands need of the magics that call them (``magics.SandboxMagics``)."""

    shell: Any
    show_timeline: bool

    def sandbox(self, store: str | None = None) -> Sandbox: ...

    def lookup(self, name: str, option: str) -> Any: ...


class OutputVar:
    """``-o NAME``: stores a finished run's output into the user's namespace."""

    def __init__(self, namespace: dict[str, Any], name: str):
        if not name.isidentifier():
            raise UsageError(f"-o {name}: not a valid Python variable name")
        self.namespace, self.name = namespace, name

    def __call__(self, value: Any) -> None:
        self.namespace[self.name] = value


def quiet(error: BaseException) -> BaseException:
    """The error, shown by IPython as its message only (no Python frames: they are ours, not the user's)."""
    text, name = str(error), type(error).__name__
    named = text.startswith(f"{name}: ") or re.match(rf"workflow\.js:[\d:]+ {name}: ", text)
    lines = (text if named else f"{name}: {text}").splitlines()  # the prefix once
    error._render_traceback_ = lambda: lines  # type: ignore[attr-defined]
    return error


def show_run(
    magics: Magics,
    sb: Sandbox,
    title: str,
    start: Callable[[Any], Any],
    *,
    run_id: str | None = None,
    out: str | None = None,
    live: bool = True,
) -> Any:
    """Display the run's card, run ``start(observer)``; a failure becomes the cell's (frameless) error, shown once.

    The card reads the store; the other cards of the same run (another cell's) are refreshed
    too, and ``-o`` is filled whenever the run completes, also later (a click, the scheduler).
    """
    store_output = OutputVar(magics.shell.user_ns, out) if out else None
    card = RunCard(sb, run_id, title, store_output, out, timeline=magics.show_timeline).show()
    started = time.time()
    try:
        outcome: Any = start(card.observer() if live else None)
    except KeyboardInterrupt:
        outcome = RunCancelled(_cancelled(sb, card.run_id, started))
    except (SandboxError, TypeError, ValueError) as exc:  # TypeError/ValueError: input or answer not JSON
        outcome = exc
    ran = getattr(outcome, "run_id", None)
    if isinstance(outcome, RunResult) and outcome.run_ids:
        ran = outcome.run_ids[0]
    if ran and card.run_id is None:
        card.bind(ran)
    failed = not isinstance(outcome, (RunResult, RunPaused, RollbackResult))  # (a rejection that rolled back)
    if failed and card.run_id:
        card.error_in_cell = sb.run(ran or card.run_id, journal=False).attempt
    if card.run_id:
        publish(card.run_id, sb)  # this card, and every other card of the run (the cell that started it)
    elif card.handle is not None:
        card.handle.update({"text/plain": ""}, raw=True)  # no run was made (a lint error): the error says it all
    if not failed:
        return outcome
    raise quiet(outcome) from None  # RunCancelled too: the stop button must stop "run all" here


def _cancelled(sb: Sandbox, run_id: str | None, started: float) -> str | None:
    """The cancelled run's id, once the engine has recorded it (at most 2 s)."""
    if run_id is None:  # stopped before its first effect, so before the card heard of it
        newest = sb.runs(limit=1)
        run_id = newest[0].id if newest and newest[0].created >= started else None
    deadline = time.monotonic() + 2.0  # the loop does not wait for the engine to record the cancellation
    while run_id and sb.run(run_id, journal=False).status == "running" and time.monotonic() < deadline:
        time.sleep(0.02)
    return run_id
