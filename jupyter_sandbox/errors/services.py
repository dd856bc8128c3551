"""What the engine stands on: the store, and MCP servers."""

from __future__ import annotations

from typing import Any

from .base import SandboxError

__all__ = ["McpError", "SandboxClosed", "ServerFailed", "StoreError", "ToolFailed"]


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
