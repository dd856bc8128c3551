"""The run timeline as a live widget, with a static fallback in its mime bundle.

``Timeline`` is an anywidget whose view (``static/timeline.js``) renders the
synced ``doc`` (a timeline document, docs/journal.md). While a run is going,
the kernel sends only what is new as custom messages, not the whole journal:

    {"type": "append",   "entries": [...]}   new journal entries, in seq order
    {"type": "attempt",  "attempt": {...}}   an attempt started or changed (keyed by n)
    {"type": "progress", "patch": {...}}     ctx.progress: done/total/percent/message; None clears
    {"type": "status",   "run": {...}}       fields of the run row that changed

The widget keeps a Python copy of the document; ``sync()`` pushes it whole as
``doc``, for views that render later (a new view only gets ``doc``, not old
messages). Its mime bundle also carries ``text/html`` and the timeline mime
type, so a saved notebook, an untrusted one and nbconvert HTML still show it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .timeline_html import render_html

__all__ = ["TIMELINE_MIME", "Timeline", "timeline_bundle"]

TIMELINE_MIME = "application/vnd.jupyter-sandbox.timeline+json"

_STATIC = Path(__file__).parent / "static"


def _summary(doc: dict) -> str:
    run = doc.get("run") or {}
    entries = doc.get("entries") or []
    attempts = doc.get("attempts") or []
    return (f"Timeline of run {run.get('id', '?')} ({run.get('status', 'unknown')}, "
            f"{len(attempts)} attempt{'s' if len(attempts) != 1 else ''}, {len(entries)} entries)")


def timeline_bundle(doc: dict) -> dict[str, Any]:
    """The static mime bundle of a timeline document, for display without a widget.

    ``text/plain`` (a one-line summary), ``text/html`` (:func:`render_html`)
    and ``TIMELINE_MIME`` (the document itself, which the JupyterLab extension
    renders). Show it with ``IPython.display.display(bundle, raw=True)``.
    """
    return {"text/plain": _summary(doc), "text/html": render_html(doc), TIMELINE_MIME: doc}


def _empty_doc() -> dict[str, Any]:
    return {"version": 1, "run": {}, "attempts": [], "entries": [], "pending": [], "source": ""}


class Timeline(anywidget.AnyWidget):
    """A run's timeline that updates live while the run goes on.

    ``Timeline(doc)`` shows a timeline document; ``append``, ``start_attempt``,
    ``progress`` and ``set_run`` update every open view with a small message
    each; ``sync()`` re-sends the whole document.
    """

    _esm = _STATIC / "timeline.js"
    _css = _STATIC / "timeline.css"

    doc = traitlets.Dict().tag(sync=True)

    def __init__(self, doc: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._doc: dict[str, Any] = {**_empty_doc(), **(doc or {})}
        self._doc["entries"] = list(self._doc.get("entries") or [])
        self._doc["attempts"] = list(self._doc.get("attempts") or [])
        self.sync()

    @property
    def document(self) -> dict[str, Any]:
        """The Python copy of the document, including what was sent since the last ``sync()``."""
        return self._doc

    def append(self, entries: list[dict]) -> None:
        """Add journal entries (in seq order) and send them to the views."""
        if not entries:
            return
        entries = [dict(e) for e in entries]
        self._doc["entries"].extend(entries)
        self.send({"type": "append", "entries": entries})

    def start_attempt(self, attempt: dict) -> None:
        """Add an attempt, or update the one with the same ``n``, and tell the views."""
        attempts = self._doc["attempts"]
        for i, known in enumerate(attempts):
            if known.get("n") == attempt.get("n"):
                attempts[i] = {**known, **attempt}
                break
        else:
            attempts.append(dict(attempt))
        self.send({"type": "attempt", "attempt": dict(attempt)})

    def progress(self, patch: dict | None) -> None:
        """Show ``ctx.progress`` (``done``, ``total``, ``percent``, ``message``); None hides the bar.

        Progress is deliberately not journaled, so it is not part of ``doc``.
        """
        self.send({"type": "progress", "patch": patch})

    def set_run(self, run: dict) -> None:
        """Merge changed fields of the run row (status, error, output, ...) and tell the views."""
        self._doc["run"] = {**(self._doc.get("run") or {}), **run}
        self.send({"type": "status", "run": dict(run)})

    def set_pending(self, pending: list[dict]) -> None:
        """Replace the pending interrupts (``doc["pending"]``) and re-sync the document."""
        self._doc["pending"] = list(pending)
        self.sync()

    def sync(self) -> None:
        """Send the whole document as ``doc``: every view re-renders from it."""
        # A fresh outer dict and lists: traitlets only syncs a value that compares unequal.
        self.doc = {**self._doc, "entries": list(self._doc["entries"]), "attempts": list(self._doc["attempts"])}

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        # The widget view first; the static parts for wherever the widget cannot render.
        return {**data, **timeline_bundle(self._doc)}, metadata
