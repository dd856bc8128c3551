"""Every error jupyter_sandbox raises, each carrying its data as attributes.

    SandboxError
    ├── LintError              the source uses something the realm does not have
    ├── ScriptError            the script threw (or could not be parsed)
    │   └── ActionError        an action's failure the script did not catch
    ├── LimitExceeded          source-size, memory, stack, fuel-exhausted, journal-cap, generations, console
    ├── CallLogMismatchError   replay diverged from the recorded journal
    ├── InvalidCallLog         a call log passed to eval is not one (also a ValueError)
    ├── InvalidValue           a value that must cross as JSON is not JSON (also a TypeError)
    │   └── InvalidEdit        an edited approval's input its action's schema refuses
    ├── InputInvalid           a call's input its action's schema refuses
    ├── ChildSpecError         a ctx.delegate / ctx.agent spec that cannot run (also a TypeError)
    ├── RegistrationError      an action, agent or saved script refused at registration (also a ValueError, TypeError)
    ├── RunPaused              the run stopped and can be resumed
    │   ├── SandboxInterrupt   an action needs an answer
    │   └── RunParked          the run waits on a timer or an event
    ├── RunCancelled           the kernel was interrupted while the run went on
    ├── RunStateError          the run is not in a state that allows this
    │   ├── RunBusyError       someone else is already resuming it
    │   ├── AnswerRefused      the approvers' policy or the store's grants refuse this answer
    │   └── UnaddressedAnswer  an answer reaches no open interrupt (also a ValueError)
    ├── RunNotFound
    ├── StoreError             the store file is unusable (corrupt, newer schema, read-only)
    │   └── SandboxClosed      the Sandbox was closed (before this call, or while this run ran)
    └── McpError               an MCP server's tool as an action
        ├── ServerFailed       the server would not start, exited, hung or broke the protocol
        └── ToolFailed         the tool ran and reported a failure

Each family is a module of its own (``base``, ``script``, ``call_log``, ``values``, ``runs``,
``services``); import them from here, ``jupyter_sandbox.errors``, or from ``jupyter_sandbox``.

Foreign exceptions (quickjs, sqlite3, cbor2) are mapped to these at the edge
of the module that meets them. ``to_dict()`` gives any of them as JSON-able
data (``error_dict`` any exception at all): how an error is journaled, stored
on its run, and shown on the card or to a model.
"""

from __future__ import annotations

from .base import SandboxError, error_dict
from .call_log import CallLogMismatchError, InvalidCallLog
from .runs import (
    AnswerRefused,
    Interrupt,
    RunBusyError,
    RunCancelled,
    RunNotFound,
    RunParked,
    RunPaused,
    RunStateError,
    SandboxInterrupt,
    UnaddressedAnswer,
)
from .script import ActionError, LimitExceeded, LintError, ScriptError
from .services import McpError, SandboxClosed, ServerFailed, StoreError, ToolFailed
from .values import ChildSpecError, InputInvalid, InvalidEdit, InvalidValue, RegistrationError

__all__ = [
    "ActionError",
    "AnswerRefused",
    "CallLogMismatchError",
    "ChildSpecError",
    "InputInvalid",
    "Interrupt",
    "InvalidCallLog",
    "InvalidEdit",
    "InvalidValue",
    "LimitExceeded",
    "LintError",
    "McpError",
    "RegistrationError",
    "RunBusyError",
    "RunCancelled",
    "RunNotFound",
    "RunParked",
    "RunPaused",
    "RunStateError",
    "SandboxClosed",
    "SandboxError",
    "SandboxInterrupt",
    "ScriptError",
    "ServerFailed",
    "StoreError",
    "ToolFailed",
    "UnaddressedAnswer",
    "error_dict",
]
