"""The base of every error, and the helpers every family uses: an error as data, a source excerpt."""

from __future__ import annotations

from typing import Any

from ..source import caret, script_lines

__all__ = ["SandboxError", "error_dict", "excerpt"]


class SandboxError(Exception):
    """Base of every error jupyter_sandbox raises.

    ``to_dict()`` is the error as JSON-able data, ``name`` and ``message`` first, then the fields its
    class adds:

    >>> from jupyter_sandbox.errors import RunNotFound
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
