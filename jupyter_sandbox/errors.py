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

Foreign exceptions (quickjs, sqlite3, cbor2) are mapped to these at the edge
of the module that meets them. ``to_dict()`` gives any of them as JSON-able
data (``error_dict`` any exception at all): how an error is journaled, stored
on its run, and shown on the card or to a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .source import caret, script_lines

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


class SandboxError(Exception):
    """Base of every error jupyter_sandbox raises.

    ``to_dict()`` is the error as JSON-able data, ``name`` and ``message`` first, then the fields its
    class adds:

    >>> RunNotFound("r-1").to_dict()
    {'name': 'RunNotFound', 'message': "no run 'r-1' in this store", 'run_id': 'r-1'}
    """

    def to_dict(self) -> dict[str, Any]:
        return {"name": type(self).__name__, "message": _text(self)}


def _text(error: BaseException) -> str:
    """``str(error)``, even for an exception whose ``__str__`` raises."""
    try:
        return str(error)
    except BaseException:
        return "<the exception could not be printed>"


def error_dict(error: BaseException) -> dict[str, Any]:
    """Any exception as data: a ``SandboxError``'s ``to_dict()``, another's class name and text.

    >>> error_dict(KeyError("r-1"))
    {'name': 'KeyError', 'message': "'r-1'"}
    """
    if isinstance(error, SandboxError):
        return error.to_dict()
    return {"name": type(error).__name__, "message": _text(error)}


def excerpt(source: str | None, line: int | None, column: int | None) -> str | None:
    """The source line `line` (1-based, as QuickJS counts lines) with a caret under `column`."""
    if not source or not line:
        return None
    lines = script_lines(source)
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    return f"{line:>4} | {text}\n     | {caret(text, column)}"


class LintError(SandboxError):
    """The script uses a name the realm does not provide (fetch, setTimeout, ...).

    Raised before anything runs. ``problems`` lists every finding as
    ``(line, column, name, hint)``; the message names the first.
    """

    def __init__(self, problems: list[tuple[int, int, str, str]], source: str | None = None):
        self.problems = problems
        self.source = source
        line, column, name, hint = problems[0]
        self.line, self.column, self.name = line, column, name
        self.source_line = excerpt(source, line, column)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        message = f"workflow.js:{line}:{column}: `{name}` is not available in a sandbox script: {hint}{more}"
        if self.source_line:
            message += "\n" + self.source_line
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        problems = [
            {"line": line, "column": column, "name": name, "hint": hint} for line, column, name, hint in self.problems
        ]
        return {
            **super().to_dict(),
            "line": self.line,
            "column": self.column,
            "source_line": self.source_line,
            "problems": problems,
        }


class ScriptError(SandboxError):
    """The script threw an uncaught error, or did not parse.

    ``name`` and ``message`` are the JavaScript error's; ``line``/``column``
    point into the cell (1-based); ``stack`` reads ``workflow.js:LINE:COL``;
    ``source_line`` is the offending line with a caret.
    """

    def __init__(
        self,
        name: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        stack: str = "",
        source: str | None = None,
        run_id: str | None = None,
    ):
        self.name, self.message = name, message
        self.line, self.column, self.stack = line, column, stack
        self.run_id = run_id
        self.source_line = excerpt(source, line, column)
        where = f"workflow.js:{line}{f':{column}' if column else ''}: " if line else ""
        text = f"{where}{name}: {message}"
        if self.source_line:
            text += "\n" + self.source_line
        super().__init__(text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "stack": self.stack,
            "source_line": self.source_line,
        }


class ActionError(ScriptError):
    """An action failed (raised, timed out, was rejected, or returned a non-JSON value).

    Inside the script this is a catchable JavaScript ``ActionError`` with
    ``.action`` and ``.message``. It reaches Python only when the script does
    not catch it; ``action`` names the action and ``line`` the script line that called it. ``issues``
    (``[{path, message}]``, else None) lists what the action's schema found wrong with the input, when that
    is why it failed. ``traceback`` is the Python traceback the action raised (its own frames), else None.
    ``limit`` names the ``LimitExceeded`` that made the action fail (``"nesting"`` when a script it started
    nested too deep, however many scripts passed the failure on), else None.
    """

    def __init__(
        self,
        action: str,
        message: str,
        *,
        issues: list[dict[str, str]] | None = None,
        traceback: str | None = None,
        limit: str | None = None,
        **kwargs: Any,
    ):
        self.action, self.issues, self.traceback, self.limit = action, issues, traceback, limit
        super().__init__("ActionError", message, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "action": self.action,
            "issues": self.issues,
            "traceback": self.traceback,
            "limit": self.limit,
        }


LIMITS = (
    "source-size",
    "memory",
    "stack",
    "fuel-exhausted",
    "journal-cap",
    "generations",
    "console",
    "nesting",
    "schema-size",
    "schema-depth",
)


class LimitExceeded(SandboxError):
    """A run went past one of its limits.

    ``limit`` is one of ``source-size``, ``memory``, ``stack``,
    ``fuel-exhausted``, ``journal-cap``, ``generations`` (continueAsNew
    successors in one call), ``console`` (lines or bytes of console output in
    one attempt), ``nesting`` (scripts started from ``async def`` actions, one
    inside another), ``schema-size`` (a saved script's schema, refused at save), ``schema-depth`` (a
    schema nested too deep, refused where it enters); ``value`` is the bound.
    The kernel, the Sandbox and the store are unharmed.
    """

    def __init__(
        self,
        limit: str,
        message: str,
        *,
        value: Any = None,
        run_id: str | None = None,
        line: int | None = None,
        source: str | None = None,
    ):
        self.limit, self.value, self.run_id, self.line = limit, value, run_id, line
        self.source_line = excerpt(source, line, 1) if line else None
        text = f"{limit}: {message}"
        if self.source_line:
            text += "\n" + self.source_line
        super().__init__(text)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "limit": self.limit, "line": self.line}


class CallLogMismatchError(SandboxError):
    """The resumed script did something other than what the journal recorded.

    ``position`` is the slot that diverged; ``recorded`` and ``attempted`` are
    dicts with ``type``, ``name`` and ``input`` (what the journal holds there,
    and what the script asked for now); ``line``/``source_line`` locate the
    attempt in the source. Nothing was served from the journal for it.
    """

    def __init__(
        self,
        position: int,
        recorded: dict | None,
        attempted: dict,
        *,
        line: int | None = None,
        column: int | None = None,
        source: str | None = None,
        run_id: str | None = None,
    ):
        self.position, self.recorded, self.attempted = position, recorded, attempted
        self.line, self.column, self.run_id = line, column, run_id
        self.source_line = excerpt(source, line, column)
        text = (
            f"the script is not deterministic: at position {position} the journal recorded "
            f"{_describe(recorded)} but the script attempted {_describe(attempted)}"
        )
        differs = _difference(recorded, attempted)
        if differs:
            text += f": {differs}"
        if line:
            text += f" (workflow.js:{line}:{column})"
        if self.source_line:
            text += "\n" + self.source_line
        text += "\nBranch only on input, action results, ctx.now() and the recorded Date/Math.random."
        super().__init__(text)

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "position": self.position,
            "recorded": self.recorded,
            "attempted": self.attempted,
            "line": self.line,
            "column": self.column,
            "source_line": self.source_line,
        }


def _difference(recorded: dict | None, attempted: dict | None) -> str:
    """What differs between a recorded and an attempted effect: the kind, the name, or which input fields."""
    if not recorded or not attempted:
        return ""
    if recorded.get("type") != attempted.get("type"):
        return "the kind differs"
    if recorded.get("name") != attempted.get("name"):
        return "the name differs"
    a, b = recorded.get("input"), attempted.get("input")
    if isinstance(a, dict) and isinstance(b, dict):
        fields = sorted((k for k in a.keys() | b.keys() if a.get(k, _MISSING) != b.get(k, _MISSING)), key=str)
        if fields:
            shown = ", ".join(repr(k) for k in fields[:5]) + (f" and {len(fields) - 5} more" if len(fields) > 5 else "")
            return f"only the input differs, in field{'s' if len(fields) > 1 else ''} {shown}"
    return "only the input differs" if a != b else ""


_MISSING = object()


def _describe(entry: dict | None) -> str:
    if entry is None:
        return "nothing"
    kind = entry.get("type", "?")
    if kind in ("action", "delegate", "agent"):
        return f"{kind} {entry.get('name')!r} with input {entry.get('input')!r}"
    return f"a {kind} read" if kind in ("now", "random") else kind


class InvalidCallLog(SandboxError, ValueError):
    """A call log passed to ``eval`` is malformed; ``position`` is the offending slot, if any."""

    def __init__(self, message: str, *, position: int | None = None):
        self.position = position
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "position": self.position}


class InvalidValue(SandboxError, TypeError):
    """A value that must cross the boundary as JSON is not JSON; the message names where and why."""


class InvalidEdit(InvalidValue):
    """An edited approval whose input its action's schema refuses: nothing was resumed; ``issues`` says why.

    >>> str(InvalidEdit("mail", [{"path": "$.to", "message": "required"}]))
    'the edited input does not match what mail takes, so nothing was sent: $.to: required'
    """

    def __init__(self, action: str, issues: list[dict[str, str]]):
        self.action, self.issues = action, issues
        listed = "; ".join(f"{i.get('path', '$')}: {i.get('message', '')}" for i in issues[:10])
        super().__init__(f"the edited input does not match what {action} takes, so nothing was sent: {listed}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "action": self.action, "issues": self.issues}


class InputInvalid(SandboxError):
    """A call's input does not match its action's schema: ``issues`` is ``[{path, message}]``.

    >>> str(InputInvalid([{"path": "$.to", "message": "required"}]))
    '$.to: required'
    """

    def __init__(self, issues: list[dict[str, str]]):
        self.issues = issues
        super().__init__("; ".join(f"{i['path']}: {i['message']}" for i in issues) or "invalid input")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "issues": self.issues}


class ChildSpecError(SandboxError, TypeError):
    """A ``ctx.delegate`` / ``ctx.agent`` spec that cannot be run; the script sees it as an ``ActionError``."""


class RegistrationError(SandboxError, ValueError, TypeError):
    """An action, agent or saved script that cannot be registered as given: a name the rule refuses
    (``naming.check_name``), one in the saved scripts' namespace, a replacement of another kind, an ``Action``
    with ``saved=`` handed to ``add_action``. Also a ``ValueError`` and a ``TypeError``, what these were before.

    >>> isinstance(RegistrationError("bad name"), (SandboxError, ValueError, TypeError))
    True
    """


@dataclass
class Interrupt:
    """One pending interrupt: an action that needs an answer.

    ``id`` is ``"RUN_ID:POSITION"`` of the run that holds the interrupted call
    (a child run's id when a delegated child interrupted); ``position`` is the
    slot in the top run that a ``Resume`` targets.
    """

    id: str
    run_id: str
    position: int
    name: str
    input: Any = None
    data: Any = None
    state: Any = None
    approval: bool = False


class RunPaused(SandboxError):
    """The run stopped and can be resumed later; nothing is lost."""

    def __init__(self, message: str, *, run_id: str):
        self.run_id = run_id
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "run_id": self.run_id}


class SandboxInterrupt(RunPaused):
    """An action raised ``ActionInterrupt``: the run paused for an answer.

    Its fields: ``call_log`` (slots, ``None`` where a call is open),
    ``console``, ``data``, ``interrupt`` (``.data``, ``.state``), ``position``;
    plus ``run_id`` and ``interrupts``, every pending interrupt when parallel
    branches interrupted together (``interrupt`` is the first).
    """

    def __init__(self, *, run_id: str, call_log: list, console: list[dict], data: dict, interrupts: list[Interrupt]):
        self.call_log, self.console, self.data = call_log, console, data
        self.interrupts = interrupts
        self.interrupt = interrupts[0]
        self.position = self.interrupt.position
        names = ", ".join(f"{i.name!r} at position {i.position}" for i in interrupts)
        super().__init__(f"run {run_id} paused: {names} needs an answer", run_id=run_id)


class RunParked(RunPaused):
    """The run is waiting on a timer or an event; a scheduler or a signal resumes it.

    ``due`` is the earliest time (epoch ms) it should wake, or ``None`` when
    only an event without timeout can wake it; ``waiting`` describes the waits.
    """

    def __init__(
        self, *, run_id: str, due: float | None, waiting: list[dict], console: list[dict], data: dict, call_log: list
    ):
        self.due, self.waiting = due, waiting
        self.console, self.data, self.call_log = console, data, call_log
        what = ", ".join(w.get("key", "?") for w in waiting)
        super().__init__(f"run {run_id} parked on {what}", run_id=run_id)


class RunCancelled(SandboxError):
    """The kernel was interrupted while a run was going; the engine marked the run ``cancelled``.

    >>> str(RunCancelled("r-1"))
    'run r-1 cancelled (kernel interrupted); `%sandbox resume r-1` runs it again from its journal'
    """

    def __init__(self, run_id: str | None):
        self.run_id = run_id
        hint = f"; `%sandbox resume {run_id}` runs it again from its journal" if run_id else ""
        super().__init__(f"run {run_id or '?'} cancelled (kernel interrupted){hint}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "run_id": self.run_id}


class RunStateError(SandboxError):
    """The run is not in a state that allows the operation (for example resuming a finished run).

    ``answered``: for an answer that came after another answered its interrupt (a race lost), that answer as
    the journal records it (``id``, ``name``, ``by``, ``via``, ``process``, ``answered_at``, ``approved``...);
    else None.
    """

    def __init__(self, message: str, *, run_id: str, status: str | None = None, answered: dict[str, Any] | None = None):
        self.run_id, self.status, self.answered = run_id, status, answered
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        extra = {"answered": self.answered} if self.answered is not None else {}
        return {**super().to_dict(), "run_id": self.run_id, "status": self.status, **extra}


class RunBusyError(RunStateError):
    """Another resume of this run is already in progress (a double click, another kernel)."""


class AnswerRefused(RunStateError):
    """An answer this caller may not give: the ``Sandbox(approvers=...)`` policy, or the store (on
    PostgreSQL, a database role without the grant to record answers) refused it. Nothing was recorded;
    the run still waits for an answer."""


class UnaddressedAnswer(RunStateError, ValueError):
    """A resume's answer reaches no open interrupt (a wrong position or id): nothing was run or recorded.

    ``unaddressed`` names the answers that reach nothing; ``open`` lists the interrupts that may be
    answered, each ``{"position", "ids", "name"}``.
    """

    def __init__(
        self,
        message: str,
        *,
        run_id: str,
        status: str | None,
        unaddressed: list[str],
        open: list[dict[str, Any]],
        answered: dict[str, Any] | None = None,
    ):
        self.unaddressed, self.open = unaddressed, open
        super().__init__(message, run_id=run_id, status=status, answered=answered)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "unaddressed": self.unaddressed, "open": self.open}


class RunNotFound(SandboxError):
    """No run with that id in this store."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        super().__init__(f"no run {run_id!r} in this store")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "run_id": self.run_id}


class StoreError(SandboxError):
    """The store file cannot be used: not a store, corrupt, read-only, full, or newer than this version."""

    def __init__(self, message: str, *, path: str | None = None):
        self.path = path
        super().__init__(message)


class SandboxClosed(StoreError):
    """The ``Sandbox`` was closed: a call made after ``close()``, or a run that ``close()`` stopped.

    ``run_id`` names the run it stopped (None for a refused call). That run's journal keeps every effect
    recorded before the close, and the run is ``cancelled``: a ``Sandbox`` on the same store resumes it,
    running nothing recorded again (an in-memory store ends with its Sandbox, and its runs with it).

    >>> str(SandboxClosed("r-1")).split(";")[0]
    'run r-1 stopped: its Sandbox was closed while it ran'
    """

    def __init__(self, run_id: str | None = None, *, path: str | None = None):
        self.run_id = run_id
        if run_id is None:
            message = "this Sandbox is closed (its store and its engine loop): make a new one"
        else:
            message = (
                f"run {run_id} stopped: its Sandbox was closed while it ran; "
                f"Sandbox(<the same store>).resume({run_id!r}) goes on from its journal"
            )
        super().__init__(message, path=path)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "run_id": self.run_id}


class McpError(SandboxError):
    """An MCP server's tool, called as an action, did not give a result (``sb.mcp``)."""


class ServerFailed(McpError):
    """The server could not answer: it would not start, exited, hung, or answered with a protocol error."""


class ToolFailed(McpError):
    """The tool ran and reported a failure (a result with ``isError``): its text."""
