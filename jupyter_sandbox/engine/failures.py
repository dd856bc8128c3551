"""An uncaught ``ActionError`` located at the call that failed, with the action's Python traceback.

The script's ``ActionError`` is made by the host when it settles the call, so
its JavaScript stack has no line of the script (live and replayed alike). The
journal knows better: the failed result (with the traceback the action raised,
journaled with it) and its call entry (with the script line that made the
call). This holds for every call that journals a line: actions, MCP tools,
agents, ``ctx.delegate`` and child runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ActionError, SandboxError
from ..stores.rows import Entry

__all__ = ["located"]


def located(error: SandboxError, entries: Sequence[Entry], source: str) -> SandboxError:
    """``error`` with its call's line and traceback when it is an ``ActionError`` the journal's last failed
    result of that action raised; any other error as it is."""
    if not isinstance(error, ActionError) or error.line is not None:
        return error
    calls = {e.slot: e for e in entries if e.kind == "call"}
    for entry in reversed(entries):
        failure = entry.body.get("error") if entry.kind == "result" and entry.body.get("ok") is False else None
        if not isinstance(failure, dict) or failure.get("action") != error.action:
            continue
        if failure.get("message") != error.message:
            continue
        call = calls.get(entry.slot)
        line, column = (call.body.get("line"), call.body.get("column")) if call is not None else (None, None)
        traceback, limit = failure.get("traceback"), failure.get("limit")
        return ActionError(
            error.action,
            error.message,
            line=line if isinstance(line, int) else None,
            column=column if isinstance(column, int) and isinstance(line, int) else None,
            stack=error.stack,
            source=source,
            run_id=error.run_id,
            issues=error.issues,
            traceback=traceback if isinstance(traceback, str) else None,
            limit=limit if isinstance(limit, str) else None,
        )
    return error
