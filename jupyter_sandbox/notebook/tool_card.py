"""A tool call's result shown as its run's card: what ``display(tool_result)`` puts in a notebook.

``register`` (called by ``%load_ext jupyter_sandbox``) makes IPython display
every ``agents.tool.ToolResult`` with ``show``: the agents layer sits below this
one and does not know the notebook. The card is the run's ordinary
``RunCard`` (cards.py), read from the store: a paused call shows its approval
with Approve / Reject / Edit; answering there resumes the run, and
``tool.result(run_id)`` then reads how it ended.
"""

from __future__ import annotations

from typing import Any

from IPython.display import display

from ..agents.tool import ToolResult
from .cards import RunCard

__all__ = ["register", "show"]


def show(result: Any) -> RunCard | None:
    """Display ``result`` (an ``agents.tool.ToolResult``) as its run's card, or as its text when it has no run."""
    tool = result.tool
    if tool is None or result.run_id is None:  # refused before any run started (arguments not understood)
        display({"text/plain": result.content}, raw=True)
        return None
    return RunCard(tool.sandbox, result.run_id, title=f"{tool.name} tool", show_script=True).show()


def register(ip: Any) -> None:
    """Display ``ToolResult`` values in this shell as their run's card."""
    ip.display_formatter.ipython_display_formatter.for_type(ToolResult, show)
