"""The run card as an ipywidgets view, for frontends without our JupyterLab extension.

VS Code, Colab and JupyterLab with the extension disabled render ipywidgets
but not the card's own MIME type. While its run waits for an answer, a card's
output carries, beside ``CARD_MIME`` and its static ``text/html``, a widget
view (``WIDGET_MIME``) of a ``CardView``: an anywidget whose front end is the
card's own renderer (``static/widget.js`` joined with ``card.js`` and
``timeline.js``: one renderer), whose synced ``doc`` is the card document, and
whose clicks come back as the same messages the extension's comm carries.
JupyterLab and Notebook 7 with the extension rank the card's MIME type ahead
of the widget view, so they never show it.

The view knows nothing of runs: ``RunCard`` (cards.py) gives it the documents
to show and handles what it receives.

Example (what ``RunCard`` does)::

    view = CardView(receive=lambda data: print(data))
    view.show({"run_id": "r-1", "status": "interrupted", "pending": [...]})
    bundle.update(view.entry())
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from .card_html import es_module, style

__all__ = ["WIDGET_MIME", "CardView"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class CardView(anywidget.AnyWidget):
    """One card's widget: ``show(doc)`` draws a document; a click calls ``receive(message)``."""

    _esm = es_module("widget.js")
    _css = style()
    doc = traitlets.Dict().tag(sync=True)

    def __init__(self, receive: Callable[[dict[str, Any]], None]):
        super().__init__()
        self._receive = receive
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict):  # anything else is not a message a card sends
            self._receive(content)

    def show(self, doc: dict[str, Any]) -> None:
        """Draw ``doc`` in every view of this widget."""
        self.doc = doc

    def entry(self) -> dict[str, Any]:
        """The output's widget-view entry: which model to draw (ipywidgets' protocol 2)."""
        return {WIDGET_MIME: {"model_id": self.model_id, "version_major": 2, "version_minor": 1}}
