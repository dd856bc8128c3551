"""Actions for the MCP server tests (``--actions tests.mcp_actions:register``), as a notebook would register them."""

from __future__ import annotations

from typing import Any


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def send_email(to: str, body: str) -> dict[str, Any]:
    """Send an email (a human approves it first)."""
    return {"sent": True, "to": to}


def book(room: str) -> dict[str, Any]:
    """Book a room (``cancel`` is its revert)."""
    return {"booked": room}


def cancel(room: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"cancelled": result["booked"]}


def register(sb: Any) -> None:
    sb.action(add)
    sb.action(send_email, approval=True)
    sb.action(book, revert=cancel)
