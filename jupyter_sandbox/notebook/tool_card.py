"""A tool call's result shown as its run's card: what ``display(tool_result)`` puts in a notebook.

``agents.tool.ToolResult._ipython_display_`` calls ``show`` (the agents layer
sits below this one and does not import it). A result with a run is shown as
that run's card (``cards.RunCard``), read from the store: a paused one carries
its Approve / Reject buttons (``card.approve()`` from Python), and
``tool.result(run_id)`` then reads how it ended.
"""

from __future__ import annotations

from typing import Any

from IPython.display import display

from .cards import RunCard

__all__ = ["show"]


def show(result: Any) -> None:
    """Display ``result`` (an ``agents.tool.ToolResult``) as its run's card, or as its text without a run."""
    tool = result.tool
    if tool is None or result.run_id is None:
        display({"text/plain": result.content}, raw=True)
        return
    RunCard(tool.sandbox, result.run_id, f"{tool.name} tool").show()
