"""The text a tool call hands back to the model, cut to a budget by structure, never mid-token blindly.

Sections, in order of importance: the status line, the error (kind, message,
the input's issues, the line and a source excerpt), the pending answers, the
output (JSON), the console's tail. The error and the pending list are kept
whole as far as possible; the output is shrunk structurally (the first items
of long arrays, the first keys of big objects, the start of long strings, each
cut marked ``…[cut: N more …]``); the console keeps its last lines. The
budget counts UTF-8 bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..source import caret, script_lines

__all__ = ["CUT", "excerpt", "render", "shrink"]

CUT = "…[cut"  # every marker starts with this
SHOWN_ISSUES = 20  # the input's issues listed in an error; the rest are counted
_MORE = re.compile(r"and (\d+) more issues")
_LEVELS = [(None, None), (200, 2000), (50, 500), (20, 200), (8, 80), (3, 40), (1, 20)]  # (items, characters)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _clip(value: Any, items: int | None, chars: int | None, depth: int = 0) -> Any:
    if isinstance(value, str):
        if chars is not None and len(value) > chars:
            return value[:chars] + f"{CUT}: {len(value) - chars} more characters]"
        return value
    if depth > 64:
        return f"{CUT}: nested deeper]"
    if isinstance(value, list):
        elements = [_clip(v, items, chars, depth + 1) for v in (value if items is None else value[:items])]
        if items is not None and len(value) > items:
            elements.append(f"{CUT}: {len(value) - items} more items]")
        return elements
    if isinstance(value, dict):
        keys = list(value) if items is None else list(value)[:items]
        fields = {k: _clip(value[k], items, chars, depth + 1) for k in keys}
        if len(keys) < len(value):
            fields[CUT + "]"] = f"{len(value) - len(keys)} more keys"
        return fields
    return value


def shrink(value: Any, budget: int) -> str:
    """``value`` as JSON text of at most ``budget`` bytes, cut by structure first, by length last."""
    for items, chars in _LEVELS:
        text = json.dumps(_clip(value, items, chars), ensure_ascii=False, default=str)
        if _size(text) <= budget:
            return text
    return _cut(text, budget)


def _cut(text: str, budget: int) -> str:
    marker = f"{CUT}: {_size(text)} bytes in all]"
    room = max(budget - _size(marker), 0)
    return text.encode("utf-8")[:room].decode("utf-8", "ignore") + marker


def excerpt(source: str | None, line: int | None, column: int | None = None, context: int = 2) -> str | None:
    """Lines around ``line`` (1-based, as QuickJS counts lines), numbered, the line itself marked with ``>``
    and a caret under ``column``."""
    if not source or not line:
        return None
    lines = script_lines(source)
    if not 1 <= line <= len(lines):
        return None
    out = []
    for n in range(max(line - context, 1), min(line + context, len(lines)) + 1):
        text = lines[n - 1] if len(lines[n - 1]) <= 200 else lines[n - 1][:200] + f"{CUT}]"
        out.append(f"{'>' if n == line else ' '} {n:>4} | {text}")
        if n == line and column:
            out.append(f"       | {caret(lines[n - 1], column)}")
    return "\n".join(out)


def _console(lines: list[dict[str, str]], budget: int) -> str:
    if not lines or budget <= 0:
        return ""
    head = f"console ({len(lines)} lines):\n"
    kept: list[str] = []
    used = _size(head)
    for line in reversed(lines):
        message = str(line.get("message", ""))
        if len(message) > 500:
            message = message[:500] + f"{CUT}: {len(message) - 500} more characters]"
        text = f"[{line.get('level', 'log')}] {message}\n"
        if used + _size(text) > budget - 40:
            break
        kept.append(text)
        used += _size(text)
    cut = len(lines) - len(kept)
    more = f"{CUT}: {cut} earlier lines]\n" if cut else ""
    return head + more + "".join(reversed(kept))


def _error(error: dict[str, Any], budget: int) -> str:
    name = error.get("name") or "Error"
    where = f" in {error['action']}" if error.get("action") else ""
    message = str(error.get("message") or "")
    if error.get("action") and message.startswith(f"{error['action']}: "):
        message = message[len(error["action"]) + 2 :]  # the script's message names the action; the line above does
    issues = error.get("issues") or []
    if issues and message.startswith("invalid input"):
        message = "invalid input (the action's schema refused it):"
    if len(message) > budget // 3:
        message = message[: budget // 3] + f"{CUT}: {len(message) - budget // 3} more characters]"
    out = [f"error: {name}{where}: {message}"]
    for issue in issues[:SHOWN_ISSUES]:
        out.append(f"  - {issue.get('path', '$')}: {issue.get('message', '')}")
    left = _issues_left(issues[SHOWN_ISSUES:])
    if left:
        out.append(f"  - and {left} more issues")
    if error.get("line"):
        out.append(f"at line {error['line']}" + (f", column {error['column']}" if error.get("column") else "") + ":")
    if error.get("excerpt"):
        out.append(error["excerpt"])
    if error.get("hint"):
        out.append(str(error["hint"]))
    text = "\n".join(out) + "\n"
    trace = str(error.get("traceback") or "")
    room = budget - _size(text) - 40
    if trace and room > 80:  # the action's Python traceback, its end (the failing line) first kept
        if _size(trace) > room:
            tail = trace.encode("utf-8")[-room:].decode("utf-8", "ignore")
            trace = f"{CUT}: {_size(trace) - _size(tail)} bytes of the traceback]\n{tail}"
        text += "Python traceback of the action:\n" + trace.rstrip("\n") + "\n"
    return text if _size(text) <= budget else _cut(text, budget) + "\n"


def _issues_left(rest: list[Any]) -> int:
    """How many issues ``rest`` stands for: the catalog ends a cut list with ``and N more issues``."""
    count = 0
    for issue in rest:
        more = _MORE.fullmatch(str(issue.get("message", ""))) if isinstance(issue, dict) else None
        count += int(more.group(1)) if more else 1
    return count


def render(
    status: str,
    run_id: str | None,
    *,
    budget: int,
    output: Any = None,
    console: list | None = None,
    error: dict[str, Any] | None = None,
    pending: list[dict[str, Any]] | None = None,
    note: str | None = None,
) -> str:
    """The content of one tool result, at most ``budget`` bytes."""
    parts = [f"status: {status}" + (f" (run {run_id})" if run_id else "") + "\n"]
    if note:
        parts.append(note + "\n")
    if error is not None:
        parts.append(_error(error, budget // 2))
    for item in pending or []:
        what = "needs approval" if item.get("approval") else "waits for an answer"
        parts.append(
            f"- {item.get('name')} {what} (interrupt {item.get('id')}): "
            + shrink(item.get("data"), max(budget // (4 * max(len(pending or []), 1)), 80))
            + "\n"
        )
    room = budget - sum(_size(p) for p in parts)
    console_text = _console(console or [], room // 3 if status == "completed" else room // 2)
    if status == "completed":
        head = "output:\n"
        body = shrink(output, max(room - _size(console_text) - _size(head) - 1, 40))
        parts.append(head + body + "\n")
        console_text = _console(console or [], budget - sum(_size(p) for p in parts))  # what the output left
    parts.append(console_text)
    text = "".join(parts)
    return text if _size(text) <= budget else _cut(text, budget)
