"""The approval panel: one per pending interrupt, answered with one click.

It shows the action's name and its payload (``interrupt.data``) as a JSON
tree; if the payload is a dict with an ``"html"`` key, that HTML is shown
first (an action may render its own preview: ``ActionInterrupt(data={"html":
"<b>Send?</b>", ...})``; the HTML comes from your own Python code, so it is
shown as is). The buttons send these answers:

=================  =========================================  ==============================
button             approval interrupt (``approval=True``)     any other interrupt
=================  =========================================  ==============================
Approve            ``True``                                   ``True``
Reject             ``{"approved": False, "reason": R}``       ``False`` (with a reason R:
                   (R is ``None`` when the box is empty)      ``{"approved": False, "reason": R}``)
Edit & send        ``{"approved": True, "input": EDITED}``    ``EDITED`` itself
=================  =========================================  ==============================

EDITED is the text box's JSON (prefilled with the action's input for an
approval, else with ``interrupt.data``); invalid JSON shows an error and
sends nothing. The first click answers: every button disables, and a second
click does nothing. The resume runs inside the panel's ``output``, so the
resumed run (and any new panel) appears there; it answers only this panel's
interrupt id, so parallel interrupts each get their own panel and answer:
answering one resumes the run, which pauses again on the others, whose panels
stay where they are (a new panel appears only for a new interrupt). A newer
panel for the same interrupt (``%sandbox show RUN``) supersedes an older one.

``panels()`` lists this kernel's panels, newest last: a cell can find one and
``panel.approve_button.click()``.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import ipywidgets as w
from IPython.display import display

from ...errors import Interrupt, SandboxInterrupt
from ._timeline_markup import Html, h, to_json
from .run_view import RunContext, RunView

__all__ = ["ApprovalPanel", "answer_for", "json_tree", "live_panel", "panels"]

_PANELS: deque["ApprovalPanel"] = deque(maxlen=200)


def panels() -> list["ApprovalPanel"]:
    """The approval panels of this kernel, newest last (the last 200)."""
    return list(_PANELS)


def live_panel(interrupt_id: str) -> "ApprovalPanel | None":
    """The unanswered panel of this interrupt, if one is showing."""
    return next((p for p in reversed(_PANELS) if p.interrupt.id == interrupt_id and not p.answered), None)


def approval_panels(context: RunContext, paused: SandboxInterrupt) -> tuple[list["ApprovalPanel"], list[Interrupt]]:
    """Panels for a paused run's interrupts, and the interrupts whose panel still shows (a parallel sibling's)."""
    shown = [it for it in paused.interrupts if live_panel(it.id) is not None]
    return [ApprovalPanel(context, paused.run_id, it) for it in paused.interrupts if it not in shown], shown


def answer_for(interrupt: Interrupt, choice: str, value: Any = None) -> Any:
    """The answer a button sends (the table above): ``choice`` is approve, reject (``value``: the reason) or edit."""
    if choice == "approve":
        return True
    if choice == "reject":
        return {"approved": False, "reason": value or None} if interrupt.approval or value else False
    return {"approved": True, "input": value} if interrupt.approval else value


class ApprovalPanel(w.VBox):
    """Approve / Reject / Edit for one interrupt of run ``run_id`` (the top-level run to resume)."""

    def __init__(self, context: RunContext, run_id: str, interrupt: Interrupt):
        self.context, self.run_id, self.interrupt = context, run_id, interrupt
        self.answered = False  # the guard: ``disabled`` alone reaches the browser too late for a double click
        self.answer: Any = None
        self.view: RunView | None = None  # the resumed run's view, once answered
        what = "needs approval" if interrupt.approval else "needs an answer"
        self.title = w.HTML(h('<b>⏸ {}</b> {} <span style="color:#888">interrupt <code>{}</code></span>',
                              interrupt.name, what, interrupt.id))
        self.payload = w.HTML(data_html(interrupt.data))
        self.approve_button = w.Button(description="Approve", button_style="success", icon="check")
        self.reject_button = w.Button(description="Reject", button_style="danger", icon="times")
        self.reason_text = w.Text(placeholder="reason (optional)")
        self.edit_text = w.Textarea(value=to_json(_editable(interrupt), 2), rows=4, layout=w.Layout(width="100%"))
        self.edit_button = w.Button(description="Edit & approve" if interrupt.approval else "Send edited",
                                    icon="pencil")
        self.message = w.HTML()
        self.output = w.Output()
        self.approve_button.on_click(lambda _: self.send(answer_for(interrupt, "approve")))
        self.reject_button.on_click(
            lambda _: self.send(answer_for(interrupt, "reject", self.reason_text.value.strip())))
        self.edit_button.on_click(lambda _: self._send_edited())
        super().__init__([self.title, self.payload,
                          w.HBox([self.approve_button, self.reject_button, self.reason_text]),
                          self.edit_text, self.edit_button, self.message, self.output],
                         layout=w.Layout(border="1px solid #f0a500", padding="6px", margin="4px 0"))
        for older in _PANELS:  # one live panel per interrupt: the newest
            if older.interrupt.id == interrupt.id and not older.answered:
                older._close("superseded by a newer panel for this interrupt")
        _PANELS.append(self)

    @property
    def buttons(self) -> list[w.Button]:
        return [self.approve_button, self.reject_button, self.edit_button]

    def _send_edited(self) -> None:
        try:
            edited = json.loads(self.edit_text.value)
        except ValueError as exc:
            self.message.value = h('<span style="color:#c62828">not valid JSON, nothing sent: {}</span>', exc)
            return
        self.send(answer_for(self.interrupt, "edit", edited))

    def _close(self, why: str) -> None:
        self.answered = True
        for button in self.buttons:
            button.disabled = True
        self.message.value = h('<span style="color:#888">{}</span>', why)

    def send(self, answer: Any) -> Any:
        """Answer this interrupt and resume the run here; return its outcome (None if already answered)."""
        if self.answered:
            return None
        self._close(f"sent {to_json(answer)}")
        self.answer = answer
        self.view = RunView(self.context, title=f"resumed after {self.interrupt.name}")
        sb, answers = self.context.sandbox, {self.interrupt.id: answer}
        with self.output:  # the resumed run's output lands in this panel
            display(self.view)
            return self.view.run(lambda observer: sb.resume(self.run_id, answers=answers, observer=observer),
                                 run_id=self.run_id)


def _editable(interrupt: Interrupt) -> Any:
    data = interrupt.data
    if interrupt.approval:
        return data.get("input", interrupt.input) if isinstance(data, dict) else interrupt.input
    return data


def data_html(data: Any) -> Html:
    """``interrupt.data`` for people: its ``"html"`` (if a dict has one), then the rest as a JSON tree."""
    if isinstance(data, dict) and isinstance(data.get("html"), str):
        rest = {k: v for k, v in data.items() if k != "html"}
        return h("<div>{}</div>{}", Html(data["html"]), json_tree(rest, open_depth=0) if rest else "")
    return json_tree(data)


def json_tree(value: Any, depth: int = 0, open_depth: int = 2) -> Html:
    """A JSON value as nested ``<details>`` (open to ``open_depth``); scalars as code, long strings as pre."""
    if isinstance(value, (dict, list)) and value:
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        items = [h("<li><b>{}</b>: {}</li>", k, json_tree(v, depth + 1, open_depth)) for k, v in pairs]
        n = len(value)
        size = f"{{{n} key{'s' if n > 1 else ''}}}" if isinstance(value, dict) else f"[{n} item{'s' if n > 1 else ''}]"
        return h('<details{}><summary style="color:#888">{}</summary><ul style="margin:0">{}</ul></details>',
                 Html(" open") if depth < open_depth else "", size, items)
    if isinstance(value, str) and "\n" in value:
        return h('<pre style="margin:0">{}</pre>', value)
    return h("<code>{}</code>", to_json(value))
