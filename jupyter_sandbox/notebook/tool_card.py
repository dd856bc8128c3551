"""A tool call's result shown as its run's card: what ``display(tool_result)`` puts in a notebook.

``agents.tool.ToolResult._ipython_display_`` calls ``show`` (the agents layer
sits below this one and does not import it). A result that came from a run or
a resume is shown as a ``RunView`` of how it ended, so a paused one carries its
approval panels: Approve there resumes the run, and ``tool.result(run_id)``
then reads how it ended. A result read back from the store is shown like
``%sandbox show``: the run's timeline and a panel per pending interrupt.
"""

from __future__ import annotations

from typing import Any

from IPython.display import display

from ..errors import SandboxError
from ..results import RunResult
from .widgets.follow import pending_interrupts
from .widgets.panel import ApprovalPanel, approval_panels
from .widgets.run_view import RunContext, RunView
from .widgets.timeline import Timeline

__all__ = ["show"]


def show(result: Any) -> None:
    """Display ``result`` (an ``agents.tool.ToolResult``) as its run's card, or as its text without a run."""
    tool = result.tool
    if tool is None or result.run_id is None:
        display({"text/plain": result.content}, raw=True)
        return
    sb = tool.sandbox
    context = RunContext(sb, approval_panels=approval_panels)
    outcome = result.outcome
    if isinstance(outcome, (RunResult, SandboxError)):
        view = RunView(context, f"{tool.name} tool")
        view.run_id = result.run_id
        view.timeline_for(result.run_id)
        view.finish(outcome, live=False)
        view.handle = display(view, display_id=True)
        return
    context.timelines[result.run_id] = Timeline(sb.timeline(result.run_id))
    display(context.timelines[result.run_id])
    for interrupt in pending_interrupts(sb, result.run_id):
        display(ApprovalPanel(context, result.run_id, interrupt))
