"""jupyter_sandbox: durable, resumable JavaScript workflow scripts for Jupyter.

A script runs in a deterministic QuickJS realm; its only effects are calls to
Python *actions* and journaled clock and random reads, timers and events.
Every effect is written to a journal, so a run can pause (an action needs a
human) and resume later by replaying the journal: nothing recorded runs twice.

>>> from jupyter_sandbox import Sandbox
>>> with Sandbox() as sb:             # closed at the end of the block: its threads end
...     sb.eval("return 1 + 1").output
2

In a notebook: ``%load_ext jupyter_sandbox`` then a ``%%sandbox`` cell.
"""

from .actions import ActionInterrupt, Resume
from .decisions import Approve, Edit, Reject
from .engine.attempt import Observer
from .engine.clock import ManualClock, SystemClock
from .engine.journal import CallLog
from .engine.realm import Limits
from .errors import (
    ActionError,
    AnswerRefused,
    CallLogMismatchError,
    ChildSpecError,
    InputInvalid,
    Interrupt,
    InvalidCallLog,
    InvalidEdit,
    InvalidValue,
    LimitExceeded,
    LintError,
    McpError,
    RegistrationError,
    RunBusyError,
    RunCancelled,
    RunNotFound,
    RunParked,
    RunPaused,
    RunStateError,
    SandboxClosed,
    SandboxError,
    SandboxInterrupt,
    ScriptError,
    ServerFailed,
    StoreError,
    ToolFailed,
    UnaddressedAnswer,
)
from .results import CheckReport, RunInfo, RunResult
from .sandbox import Sandbox

__version__ = "0.1.0"

__all__ = [
    "ActionError",
    "ActionInterrupt",
    "AnswerRefused",
    "Approve",
    "CallLog",
    "CallLogMismatchError",
    "CheckReport",
    "ChildSpecError",
    "Edit",
    "InputInvalid",
    "Interrupt",
    "InvalidCallLog",
    "InvalidEdit",
    "InvalidValue",
    "LimitExceeded",
    "Limits",
    "LintError",
    "ManualClock",
    "McpError",
    "Observer",
    "RegistrationError",
    "Reject",
    "Resume",
    "RunBusyError",
    "RunCancelled",
    "RunInfo",
    "RunNotFound",
    "RunParked",
    "RunPaused",
    "RunResult",
    "RunStateError",
    "Sandbox",
    "SandboxClosed",
    "SandboxError",
    "SandboxInterrupt",
    "ScriptError",
    "ServerFailed",
    "StoreError",
    "SystemClock",
    "ToolFailed",
    "UnaddressedAnswer",
    "__version__",
]


def load_ipython_extension(ipython):  # pragma: no cover - exercised through a kernel
    """``%load_ext jupyter_sandbox``: register the %%sandbox magics."""
    from .notebook.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):  # pragma: no cover - exercised through a kernel
    """``%unload_ext jupyter_sandbox``: close the notebook session (its Sandboxes, their threads, the cards)."""
    from .notebook.magics import unload_ipython_extension as unload

    unload(ipython)


def __getattr__(name: str):
    # The notebook's module-level decorators live with the magic, loaded on first use.
    if name in ("action", "agent", "default_sandbox"):
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'jupyter_sandbox' has no attribute {name!r}")
