"""The issues an input meets, reported alike whichever library checked it.

An issue is ``{"path": "$.items[0].name", "message": ...}``: where in the input (``$`` is the input itself)
and what is wrong there. pydantic's errors (a typed action's input) and jsonschema's (an explicit schema, an
MCP tool's) become the same issues, at most ``MAX_ISSUES`` of at most ``MAX_MESSAGE`` characters each, so a
hostile input that fails thousands of ways journals and shows only the first ones.

>>> issue_path(["items", 0, "first name"])
'$.items[0]["first name"]'
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..errors import InputInvalid

__all__ = ["MAX_ISSUES", "MAX_MESSAGE", "capped", "check_schema", "input_location", "issue_path", "pydantic_issues"]

MAX_ISSUES = 20  # a hostile input can fail thousands of ways; the journal keeps the first ones
MAX_MESSAGE = 300


def issue_path(location: Any) -> str:
    """``$.items[0].name`` from a location's parts (``$`` is the input itself)."""
    path = "$"
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            path += f".{part}"
        else:
            path += f"[{json.dumps(str(part))}]"
    return path


def check_schema(checker: Any, value: Any) -> Any:
    """``value`` if it fits a ``jsonschema`` validator's schema, else ``InputInvalid`` with its issues."""
    found = sorted(checker.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    if found:
        raise InputInvalid(capped([{"path": issue_path(e.absolute_path), "message": e.message} for e in found]))
    return value


def input_location(value: Any, location: Any) -> list[Any]:
    """The parts of a pydantic error location that are the input's own: pydantic puts the name of a union's
    branch (``Cat``, ``int``, a tag) in the location too (``pet.Cat.lives`` for the input's ``pet.lives``).
    A part is the input's when the input there has that key or index; a last part that is not is a key
    missing from an object (``Field required``); any other part is a branch's name, and left out."""
    kept: list[Any] = []
    for i, part in enumerate(location):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and isinstance(part, int) and -len(value) <= part < len(value):
            value = value[part]
        elif i == len(location) - 1 and isinstance(value, dict) and isinstance(part, str):
            pass  # the missing key itself
        else:
            continue
        kept.append(part)
    return kept


def pydantic_issues(exc: ValidationError, value: Any) -> list[dict[str, str]]:
    """The issues of pydantic's ``exc`` for the input ``value``: at the input's own paths, each once."""
    issues: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()  # two branches can fail alike at one place (a set: a hostile value fails
    for error in exc.errors(include_url=False, include_context=False):  # in millions of places, each once)
        message = error["msg"]
        if error["type"] != "missing":
            shown = _short(error.get("input"))
            if shown is not None:
                message += f" (got {shown})"
        path = issue_path(input_location(value, error["loc"]))
        if (path, message) not in seen:
            seen.add((path, message))
            issues.append({"path": path, "message": message})
    return capped(issues)


def _short(value: Any, width: int = 40) -> str | None:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    return text if len(text) <= width else None


def capped(issues: list[dict[str, str]]) -> list[dict[str, str]]:
    """At most MAX_ISSUES issues of at most MAX_MESSAGE characters each (jsonschema quotes the whole value)."""
    kept = [
        {
            "path": i["path"][:MAX_MESSAGE],
            "message": i["message"] if len(i["message"]) <= MAX_MESSAGE else i["message"][:MAX_MESSAGE] + "…",
        }
        for i in issues[:MAX_ISSUES]
    ]
    if len(issues) > MAX_ISSUES:
        kept.append({"path": "$", "message": f"and {len(issues) - MAX_ISSUES} more issues"})
    return kept
