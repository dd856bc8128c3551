"""What the script did: a name the realm lacks, an uncaught throw, an action's failure, a limit reached."""

from __future__ import annotations

from typing import Any

from .base import SandboxError, excerpt

__all__ = ["ActionError", "LimitExceeded", "LintError", "ScriptError"]


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
