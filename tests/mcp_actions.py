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


def questions(sb: Any) -> None:
    """A question (``ask``: its answer is its result) and an approval (``pay``), for the answer-value tests."""
    from jupyter_sandbox import ActionInterrupt

    def ask(q: str, resume: Any = None) -> Any:
        if resume is None:
            raise ActionInterrupt(data={"q": q})
        return {"answer": resume.value}

    sb.action(ask)
    sb.action(lambda order: order, name="pay", approval=True)


def gated(sb: Any) -> None:
    """``gate``, an approval whose every run appends a line to ``$GATE_LOG`` (how a test sees it never ran)."""
    import os

    def gate(n: int) -> int:
        with open(os.environ["GATE_LOG"], "a") as log:
            log.write(f"{n}\n")
        return n

    sb.action(gate, approval=True)
