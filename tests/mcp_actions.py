"""Actions for the MCP server tests (``--actions tests.mcp_actions:register``), as a notebook would register them."""

from __future__ import annotations

from typing import Any


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def send_email(to: str, body: str) -> dict[str, Any]:
    """Send an email (a human approves it first)."""
    return {"sent": True, "to": to}


def register(sb: Any) -> None:
    sb.action(add)
    sb.action(send_email, approval=True)
