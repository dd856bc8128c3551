"""The live output of a run: console, progress bar, timeline, result, approval panels.

A ``RunView`` is what a ``%%sandbox`` cell (or a click, or ``%sandbox resume``)
shows. It watches the run through an ``Observer``, which the engine calls on
its own thread, so the view changes only widget traits (comm messages, safe
from any thread) and never calls ``display()`` from there. Updates are
coalesced to at most one every 0.1 s, so a chatty loop costs little.

Presentation only: every decision about the run is the ``Sandbox``'s.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

import ipywidgets as w

from ...errors import CallLogMismatchError, RunParked, SandboxError, SandboxInterrupt
from ...results import RunResult
from ...engine.attempt import Observer
from ...sandbox import Sandbox
from . import follow
from .follow import RunCancelled
from ._timeline_markup import Html, h, to_json
from .timeline import Timeline
from .timeline_html import render_html, render_mismatch_html

__all__ = ["RunCancelled", "RunContext", "RunView", "views"]

_VIEWS: deque["RunView"] = deque(maxlen=100)


def views() -> list["RunView"]:
    """The run views of this kernel, newest last (the last 100)."""
    return list(_VIEWS)


@dataclass
class RunContext:
    """What a cell's run shares with its approval panels and their resumes."""

    sandbox: Sandbox
    store_output: Callable[[Any], None] | None = None  # ``-o VAR``: called with the output when the run finishes
    show_timeline: bool = True
    timelines: dict[str, Timeline] = field(default_factory=dict)  # one per top-level run, wherever it is shown
    root: "RunView | None" = None
    # Builds the approval panels for a paused run (panel.py); the view itself knows no panels,
    # so panels may create views without an import loop.
    approval_panels: Callable[["RunContext", SandboxInterrupt], tuple[list[Any], list[Any]]] | None = None


class _Throttle:
    """Calls ``push`` at most once every ``interval`` seconds; the last change is never lost."""

    def __init__(self, push: Callable[[], None], interval: float = 0.1):
        self.push, self.interval = push, interval
        self.lock = threading.RLock()
        self.last = 0.0
        self.scheduled = False

    def poke(self) -> None:
        with self.lock:
            if self.scheduled:
                return
            wait = self.last + self.interval - time.monotonic()
            if wait > 0:
                try:  # observers run on the engine's loop: a timer there costs no thread
                    asyncio.get_running_loop().call_later(wait, self.flush)
                    self.scheduled = True
                    return
                except RuntimeError:
                    pass
        self.flush()

    def flush(self) -> None:
        with self.lock:
            self.scheduled = False
            self.last = time.monotonic()
            self.push()


class _Live(Observer):
    def __init__(self, view: "RunView"):
        self.view = view

    def entries(self, run_id: str, entries: list[dict[str, Any]]) -> None:
        if self.view.top_level(run_id):
            with self.view.throttle.lock:
                self.view.pending_entries.append((run_id, entries))
            self.view.throttle.poke()

    def console(self, run_id: str, line: dict[str, str], replayed: bool) -> None:
        child = None if self.view.top_level(run_id) else run_id
        with self.view.throttle.lock:
            self.view.console_lines.append((line.get("level", "log"), line.get("message", ""), replayed, child))
        self.view.throttle.poke()

    def progress(self, run_id: str, patch: Any) -> None:
        if self.view.top_level(run_id):
            self.view.progress_patch = patch if isinstance(patch, dict) or patch is None else {"message": str(patch)}
            self.view.progress_dirty = True
            self.view.throttle.poke()


_LEVEL_COLORS = {"warn": "#b26a00", "error": "#c62828", "debug": "#888", "info": "#1565c0"}
# Jupyter's theme variables (with fallbacks for nbconvert HTML): readable in light and dark themes.
_STYLE = Html(
    "<style>.jsbx-view pre{margin:2px 0} .jsbx-view .jsbx-replayed-line{opacity:.5}"
    ".jsbx-view .jsbx-err,.jsbx-view .jsbx-note{padding:2px 8px;margin:2px 0}"
    ".jsbx-view .jsbx-err{border-left:3px solid var(--jp-error-color1,#c62828)}"
    ".jsbx-view .jsbx-note{border-left:3px solid var(--jp-warn-color1,#f0a500)}</style>")


class RunView(w.VBox):
    """One run's live output; ``run(start)`` drives it, ``finish(outcome)`` shows how it ended.

    Children: a status line, a progress bar (hidden until ``ctx.progress``),
    the console, the timeline (one per top-level run; a resume reuses the
    cell's), the result or error, and one approval panel per pending interrupt.
    """

    def __init__(self, context: RunContext, title: str = "run", *, inline_errors: bool = True):
        self.context, self.title = context, title
        self.inline_errors = inline_errors  # False: the cell raises the error as its (frameless) traceback
        self.run_id: str | None = None
        self.outcome: Any = None
        self.console_lines: list[tuple[str, str, bool, str | None]] = []
        self.pending_entries: list[tuple[str, list[dict[str, Any]]]] = []
        self.progress_patch: dict | None = None
        self.progress_dirty = False
        self.handle: Any = None  # a display handle, when shown at top level: its static HTML is refreshed
        self._tops: dict[str, bool] = {}
        self.status = w.HTML(h("<b>{}</b> starting…", title))
        self.bar = w.FloatProgress(min=0, max=100, layout=w.Layout(width="50%"))
        self.bar_label = w.Label()
        self.progress = w.HBox([self.bar, self.bar_label], layout=w.Layout(display="none"))
        self.console = w.HTML()
        self.timeline_box = w.VBox()
        self.result = w.HTML()
        self.panels = w.VBox()
        self.throttle = _Throttle(self._push)
        self.observer = _Live(self)
        super().__init__([self.status, self.progress, self.console, self.timeline_box, self.result, self.panels])
        self.add_class("jsbx-view")
        self.add_class("jsbx-host")  # timeline.css defines its colours (the status badges) under .jsbx-host
        context.root = context.root or self
        _VIEWS.append(self)

    # -- driving ----------------------------------------------------------------------

    def run(self, start: Callable[[Observer], RunResult], run_id: str | None = None, *, live: bool = True) -> Any:
        """Call ``start(observer)`` (a ``Sandbox.eval``/``resume``), show the outcome and return it.

        Returns the ``RunResult``, or the exception: ``SandboxInterrupt`` and
        ``RunParked`` (paused, panels shown), ``RunCancelled`` (Ctrl-C), or the error.
        ``live=False``: ``start`` does not report to the observer (fork, signal).
        """
        if run_id is not None:
            self.run_id = run_id
            self.timeline_for(run_id)
        self.status.value = h("<b>{}</b> running…", self.title)
        started = time.time()
        try:
            outcome: Any = start(self.observer)
        except KeyboardInterrupt:
            outcome = RunCancelled(self._cancelled(started))
        except (SandboxError, TypeError, ValueError) as exc:  # TypeError/ValueError: input or answer not JSON
            outcome = exc
        self.finish(outcome, live=live)
        return outcome

    def _cancelled(self, started: float) -> str | None:
        """The cancelled run's id, once the engine has recorded it (at most 2 s)."""
        sb = self.context.sandbox
        run_id = self.run_id
        if run_id is None:  # stopped before its first completed effect, so before the observer heard of it
            newest = sb.runs(limit=1)
            run_id = newest[0].id if newest and newest[0].created >= started else None
        # loop.py does not wait for the engine to record the cancellation (its future is cancelled at
        # once), so wait here: the timeline should say "cancelled", not "running".
        deadline = time.monotonic() + 2.0
        while run_id and sb.store.get_run(run_id).status == "running" and time.monotonic() < deadline:
            time.sleep(0.02)
        return run_id

    def top_level(self, run_id: str) -> bool:
        """Whether ``run_id`` is a top-level run (child runs are shown in their parent's timeline only)."""
        if run_id not in self._tops:
            self._tops[run_id] = self.context.sandbox.store.get_run(run_id).parent is None
            if self._tops[run_id] and self.run_id is None:
                self.run_id = run_id
        return self._tops[run_id]

    def timeline_for(self, run_id: str) -> Timeline | None:
        """The run's live timeline: the context's, or a new one shown in this view."""
        if not self.context.show_timeline:
            return None
        timeline = self.context.timelines.get(run_id)
        if timeline is None:
            timeline = self.context.timelines[run_id] = Timeline(self.context.sandbox.timeline(run_id))
            self.timeline_box.children = (*self.timeline_box.children, timeline)
        return timeline

    # -- pushing live updates (any thread) ----------------------------------------------

    def _push(self) -> None:
        batches, self.pending_entries = self.pending_entries, []
        for run_id, entries in batches:
            timeline = self.timeline_for(run_id)
            if timeline is not None:
                add_entries(timeline, entries)
        if self.console_lines:
            self.console.value = console_html(self.console_lines)
        if self.progress_dirty:
            self.progress_dirty = False
            self._show_progress(self.progress_patch)

    def _show_progress(self, patch: dict | None) -> None:
        if not patch:
            self.progress.layout.display = "none"
            return
        percent = patch.get("percent")
        done, total = patch.get("done"), patch.get("total")
        if percent is None and isinstance(done, (int, float)) and isinstance(total, (int, float)) and total > 0:
            percent = 100.0 * done / total
        if isinstance(percent, (int, float)):
            self.bar.value = max(0.0, min(100.0, float(percent)))
        counts = f"{done}/{total}" if done is not None and total is not None else ""
        self.bar_label.value = " ".join(str(x) for x in (patch.get("message"), counts) if x)
        self.progress.layout.display = "flex"

    # -- endings -------------------------------------------------------------------------

    def finish(self, outcome: Any, *, live: bool = True) -> None:
        """Show how the run ended. ``live=False``: it ran unobserved (the scheduler woke it)."""
        self.throttle.flush()
        self.outcome = outcome
        run_id = getattr(outcome, "run_id", None) or self.run_id
        if isinstance(outcome, RunResult):
            run_id = outcome.run_id
        self.run_id = run_id
        if not live and getattr(outcome, "console", None) is not None:
            self.console_lines = [(c.get("level", "log"), c.get("message", ""), False, None) for c in outcome.console]
            self.console.value = console_html(self.console_lines)
        if isinstance(outcome, RunResult):
            self._completed(outcome)
        elif isinstance(outcome, SandboxInterrupt):
            self._paused(outcome)
        elif isinstance(outcome, RunParked):
            self._parked(outcome)
        elif isinstance(outcome, RunCancelled):
            self._set("cancelled", h('<div class="jsbx-note">{}</div>', str(outcome)))
        else:
            self._failed(outcome)
        if run_id and self.top_level(run_id):
            timeline = self.timeline_for(run_id)
            if timeline is not None:
                refresh_timeline(timeline, self.context.sandbox.timeline(run_id))
        root = self.context.root
        if root is not None and root.handle is not None:
            root.handle.update(root)  # the saved notebook's static copy follows the run

    def _set(self, status: str, body: Html | str = "") -> None:
        self.status.value = h('{}<b>{}</b> <code>{}</code> <span class="jsbx-status" data-status="{}">{}</span>',
                              _STYLE, self.title, self.run_id or "", status, status)
        self.result.value = body

    def _completed(self, result: RunResult) -> None:
        stored = ""
        if self.context.store_output is not None:
            self.context.store_output(result.output)
            stored = h(' <span style="color:#888">(stored in <code>{}</code>)</span>',
                       getattr(self.context.store_output, "name", "the output variable"))
        chain = h(" via {}", " → ".join(result.run_ids)) if len(result.run_ids) > 1 else ""
        self._set("completed", h("<div>output{}{}:</div>{}", stored, chain, value_html(result.output)))

    def _paused(self, exc: SandboxInterrupt) -> None:
        n = len(exc.interrupts)
        panels, shown = self.context.approval_panels(self.context, exc) if self.context.approval_panels else ([], [])
        self._set("interrupted", h('<div class="jsbx-note">waiting for {} answer{}{}</div>', n, "s" if n > 1 else "",
                                   h(" ({} in the panel above)", ", ".join(it.name for it in shown)) if shown else ""))
        self.panels.children = panels

    def _parked(self, exc: RunParked) -> None:
        when = (f"it wakes at {datetime.fromtimestamp(exc.due / 1000):%Y-%m-%d %H:%M:%S} "
                f"(in {max(exc.due / 1000 - time.time(), 0):.0f} s)") if exc.due else "only an event wakes it"
        waits = ", ".join(f"an event matching {to_json(x['match'])}" if "match" in x else
                          "a child run" if x.get("key") == "child run" else "a timer"
                          for x in exc.waiting) or "a timer or an event"
        follow.wait_for(self, exc.run_id)
        self._set("parked", h(
            '<div class="jsbx-note">waiting for {}: {}. The store\'s scheduler '
            "(<code>Sandbox.start_scheduler()</code>, started by <code>%load_ext jupyter_sandbox</code>) resumes it then, in this kernel or any other on "
            "this store; <code>%sandbox signal {} JSON</code> sends it an event.</div>", waits, when, exc.run_id))

    def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, CallLogMismatchError):
            source = self.context.sandbox.store.get_run(exc.run_id).source if exc.run_id else None
            body = Html(render_mismatch_html(exc.to_dict(), source))
        elif self.inline_errors:
            body = h('<div class="jsbx-err"><b>{}</b><pre>{}</pre></div>', type(exc).__name__, str(exc))
        else:
            body = ""  # the cell's error output says it, once
        self._set("failed", body)

    # -- static copy ------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        # For a saved notebook without a kernel (or nbconvert): the same content as static HTML.
        html = h('<div class="jsbx-view jsbx-host">{}{}{}{}</div>', Html(self.status.value), Html(self.console.value),
                 Html(self.result.value), [Html(render_html(t.document)) for t in self.timeline_box.children])
        return {**data, "text/html": html}, meta


def add_entries(timeline: Timeline, entries: list[dict[str, Any]]) -> None:
    """Append the entries the timeline does not have yet (by ``seq``); an ``attempt`` entry starts an attempt."""
    known = timeline.document["entries"]
    last = known[-1]["seq"] if known else -1
    fresh = [e for e in entries if e.get("seq", -1) > last]
    for e in fresh:
        if e.get("kind") == "attempt":
            timeline.start_attempt({"n": e.get("n"), "source_hash": e.get("source_hash"), "started": e.get("at"),
                                    "first_seq": e["seq"], "outcome": "running"})
    timeline.append(fresh)


def refresh_timeline(timeline: Timeline, doc: dict[str, Any]) -> None:
    """Bring a live timeline up to the stored document (what an unobserved run wrote, final attempt rows)."""
    add_entries(timeline, doc.get("entries") or [])
    for attempt in doc.get("attempts") or []:
        timeline.start_attempt(attempt)
    timeline.set_run(doc.get("run") or {})
    timeline.set_pending(doc.get("pending") or [])  # also re-syncs the whole document


CONSOLE_LINES = 1000  # shown live; the timeline (and the run's result) keep every line


def console_html(lines: list[tuple[str, str, bool, str | None]]) -> Html:
    """Console lines, coloured by level; replayed ones dimmed, a child run's prefixed with its id."""
    cut = len(lines) - CONSOLE_LINES
    rows = [h('<div class="{}" style="color:{}">{}{}</div>', "jsbx-replayed-line" if replayed else "",
              _LEVEL_COLORS.get(level, "inherit"), h("[{}] ", child) if child else "", message)
            for level, message, replayed, child in lines[max(cut, 0):]]
    more = h('<div style="color:#888">… {} earlier lines</div>', cut) if cut > 0 else ""
    return h('<pre style="max-height:20em;overflow:auto">{}{}</pre>', more, rows)


def value_html(value: Any) -> Html:
    """A run's output, pretty-printed."""
    return h('<pre style="background:var(--jp-layout-color2,#f6f8fa);padding:4px 8px">{}</pre>', to_json(value, 2))
