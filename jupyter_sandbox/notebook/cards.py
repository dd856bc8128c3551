"""Run cards in this kernel: one card per displayed run, always showing what the store says.

A ``RunCard`` is displayed as a mime bundle of our own type (``CARD_MIME``:
the card document; ``text/html``: the same card drawn by ``card.js`` in
QuickJS; ``text/plain``), never as a widget, so a saved notebook, a reload or
a kernel restart can never show "model not found". The bundle is displayed
with a display id and replaced (``update_display_data``) whenever the run
changes, so the saved notebook holds the latest state.

Live after the cell ended: the labextension's renderer opens a comm
(card_comm.py) and is sent a new document whenever the run changes: after a
resume in this kernel (``publish``, card_views.py), or when the run changed
elsewhere (the scheduler, another kernel on the same store): heard at once on
a store that announces changes (PostgreSQL's NOTIFY), else polled twice a
second (card_watch.py). A click (card_clicks.py) resumes the run with exactly
that answer only if the interrupt is still open in the store, otherwise it
just refreshes (and says so). ``-o VAR`` is filled when the run completes,
whichever way it completed.

Frontends without the extension: while its run waits for an answer, the
bundle also carries an ipywidgets view of the card (card_widget.py), drawn by
the same renderer; its clicks take the same path as the comm's (``click``:
the same addressing, ``channel="card"``, the same approvers and identity).

>>> from jupyter_sandbox import Sandbox, SandboxInterrupt
>>> sb = Sandbox()
>>> @sb.action(approval=True)
... def refund(order):
...     return {"refunded": order}
>>> try:
...     sb.eval("return await actions.refund(7)")
... except SandboxInterrupt as paused:
...     card = RunCard(sb, paused.run_id)
>>> card = card.show()      # displayed, and redrawn as the run changes: only a kernel draws it  # doctest: +SKIP
>>> card.bundle()["text/plain"]         # the bundle's text, beside the card document and its HTML  # doctest: +ELLIPSIS
'run r-... · paused · waiting for refund'
>>> card.approve().output               # as its Approve button would: the run resumes
{'refunded': 7}
>>> card.doc["status"]
'completed'
>>> from jupyter_sandbox.notebook.session import close_session
>>> close_session(); sb.close()         # the session forgets its cards (``%unload_ext``)
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from IPython.display import display

from ..agents.facade import SandboxLike
from ..engine.answers import NO_ANSWER
from ..engine.attempt import Observer
from ..errors import SandboxError
from .card_clicks import answer_run, click
from .card_doc import CARD_MIME, card_document, full_rows
from .card_html import card_html
from .card_views import cards, links, mask, publish, watch
from .session import current

__all__ = ["RunCard", "cards", "merge_progress", "poll_once", "publish", "styles_here"]

PUSH_SECONDS = 0.25  # live updates while a run goes: at most 4 a second, each a full read of the store
REDRAW_SHARE = 0.1  # and spaced so that redrawing takes at most this share of the time (a long journal's read)
_ENDED = ("completed", "failed", "cancelled", "rolled_back", "missing")  # a card's widget view closes then


def styles_here(ip: Any = None) -> bool:
    """Whether a card shown now carries the cards' CSS in its ``text/html``.

    The rules of one ``<style>`` apply to the whole page a saved notebook is shown in (nbconvert, a frontend
    without the labextension, which has its own copy), so only the cards of one cell carry it: the cell of
    the first card shown since the kernel started, and whatever replaces its output when it runs again.
    Where the frontend does not say which cell runs (no ``cellId``), every card carries it.
    """
    ip = ip if ip is not None else _shell()
    try:
        cell = (ip.get_parent().get("metadata") or {}).get("cellId")
    except AttributeError:  # not a kernel's shell
        cell = None
    if not isinstance(cell, str) or not cell:
        return True
    session = current()
    with session.lock:
        if session.styled_cell is None:
            session.styled_cell = cell
        return session.styled_cell == cell


def _shell() -> Any:
    from IPython import get_ipython

    return get_ipython()


class RunCard:
    """The card of one run. ``show()`` displays it; ``refresh()`` re-reads the store and redraws it everywhere."""

    def __init__(
        self,
        sb: SandboxLike,
        run_id: str | None = None,
        title: str | None = None,
        store_output: Callable[[Any], None] | None = None,
        out_name: str | None = None,
        timeline: bool = True,
        show_script: bool = False,
    ):
        self.sb, self.run_id, self.title = sb, run_id, title
        self.show_script = show_script  # the card lists the script: no cell shows it (a model wrote it)
        self.timeline = timeline  # SandboxMagics.show_timeline: False leaves the rows out
        self.store_output, self.out_name = store_output, out_name
        self.handle: Any = None
        self.styled = True  # its text/html carries the cards' CSS (styles_here, decided when shown)
        self.card_id = uuid.uuid4().hex[:16]  # its renderers name it when they connect: they show what it shows
        self.chain: list[str] = [run_id] if run_id else []
        self.error_in_cell: int | None = None  # the attempt whose error the cell's traceback shows
        self.filled: Any = None  # the (run, updated) whose output -o holds
        self.signature: Any = None
        self.doc: dict[str, Any] = {}
        self._push_at = 0.0
        self._redraw_cost = 0.0  # how long the last live redraw took
        self._poked_at = 0.0  # when the waiting live redraw was asked for
        self._drawn_at = 0.0  # when the last redraw began
        self.progress: dict[str, Any] | None = None  # the merged ctx.progress patches of its run in this kernel
        self.steps: dict[Any, str] = {}  # the ctx.step calls its run has open now, as the engine tells them
        self._drawing = threading.Lock()  # one redraw at a time, so the newest document is the one left drawn
        self.view: Any = None  # its CardView, while its run waits for an answer in a kernel with widgets
        self.notice: str | None = None  # why the view's last click did not go through
        self.session = current()  # whose registry keeps it, and whose thread makes its live redraws
        with self.session.lock:
            self.session.cards.append(self)

    # -- what it shows ----------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        if self.run_id is None:
            return {
                "version": 0,
                "run_id": None,
                "status": "starting",
                "title": self.title,
                "rows": [],
                "pending": [],
                "answered": [],
                "attempts": [],
                "store": mask(self.sb.store_path),
            }
        doc = card_document(
            self.sb,
            self.run_id,
            title=self.title,
            out_var=self.out_name,
            error_in_cell=self.error_in_cell,
            show_script=self.show_script,
        )
        doc["store"] = mask(doc.get("store") or "")
        doc["card"] = self.card_id
        self.chain = doc.get("chain") or [self.run_id]
        if not self.timeline:
            doc.pop("rows", None)
        if doc.get("status") == "running":
            if self.progress is not None:
                doc["progress"] = self.progress
            if self.steps:  # the engine told of it before its entry was committed: the store's may lag one step
                doc["step"] = list(self.steps.values())[-1]
        return doc

    def bundle(self, doc: dict[str, Any] | None = None) -> dict[str, Any]:
        """The mime bundle. A running run's has no static HTML: it redraws a few times a second, and the
        QuickJS drawing would cost the run; the first redraw after it stops running carries it again."""
        doc = doc if doc is not None else self.document()
        plain = f"run {doc.get('run_id')} · {doc.get('status')}"
        if doc.get("pending"):
            plain += " · waiting for " + ", ".join(p["name"] for p in doc["pending"])
        if doc.get("status") == "running":
            return {CARD_MIME: doc, "text/plain": plain}
        out = {CARD_MIME: doc, "text/html": card_html(doc, self.styled), "text/plain": plain}
        if self.view is not None and doc.get("pending"):
            out.update(self.view.entry())
        return out

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        return self.bundle()

    def show(self) -> RunCard:
        self.styled = styles_here()
        self.doc = self.document()
        self._show_in_view(self.doc)
        self.handle = display(self.bundle(self.doc), raw=True, display_id=True)
        if self.run_id:
            watch()
        return self

    def bind(self, run_id: str) -> None:
        if self.run_id is None:
            self.run_id, self.chain = run_id, [run_id]
            watch()

    def refresh(self, since: float | None = None) -> dict[str, Any]:
        """Re-read the store; redraw this card's output and its renderers; fill ``-o`` on completion.
        ``since``: only if no redraw began after that moment (``time.monotonic()``)."""
        with self._drawing:
            if since is not None and self._drawn_at >= since:
                return self.doc  # a newer redraw (the run's last, full one) already read the store
            self._drawn_at = time.monotonic()
            doc = self.document()
            self._fill(doc)  # -o first: whoever sees the card completed (a cell reading .doc) finds the output set
            self.doc = doc
            self._show_in_view(doc)
            if self.handle is not None:
                self.handle.update(self.bundle(doc), raw=True)
            if self.view is not None and doc.get("status") in _ENDED:  # nothing left to click, nor to redraw
                self.view.close()
                self.view = None
        for link in links(self.run_id, self.sb):
            link.send(doc)
        return doc

    def _show_in_view(self, doc: dict[str, Any]) -> None:
        """Give the widget view ``doc``; make the view when the run first waits for an answer."""
        if self.view is None and doc.get("pending") and widgets_available():
            from .card_widget import CardView  # ipywidgets only where a kernel can show it

            self.view = CardView(receive=self._receive)
        if self.view is not None:
            self.view.show({**doc, "notice": self.notice} if self.notice else doc)

    def _receive(self, data: dict[str, Any]) -> None:
        """A message from the widget view: what the extension's comm would carry."""
        if data.get("type") == "journal":
            if self.view is not None:
                self.view.send({"type": "journal", "rows": full_rows(self.sb, self.run_id or "")})
            return
        self.notice = None
        self.notice = click(self.sb, self.run_id or "", data)
        if self.notice:
            self.refresh()

    def _fill(self, doc: dict[str, Any]) -> None:
        if self.store_output is None or doc.get("status") != "completed":
            return
        last = (doc.get("chain") or [self.run_id])[-1]
        key = (last, doc.get("updated"))
        if key != self.filled:
            self.filled = key
            self.store_output(self.sb.run(last, journal=False).output)

    def poke(self) -> None:
        """A live change: redraw soon, on the session's redraw thread (never on the engine's: it must run on).
        Redraws are ``PUSH_SECONDS`` apart or more: as far apart as keeps their share of the time under
        ``REDRAW_SHARE``."""
        redraws = self.session.redraws
        with self.session.lock:
            if redraws.queued(self):
                return
            self._poked_at = now = time.monotonic()
            spacing = max(PUSH_SECONDS, self._redraw_cost / REDRAW_SHARE)
            redraws.at(self, now + max(self._push_at + spacing - now, 0.05))

    def unpoke(self) -> None:
        """Drop a live redraw still waiting: a full one is about to be made."""
        self.session.redraws.drop(self)

    def _flush(self) -> None:
        with self.session.lock:
            poked = self._poked_at
        started = time.monotonic()
        try:
            self.refresh(since=poked)
        except SandboxError:  # the store closed meanwhile: nothing left to show
            pass
        self._push_at = time.monotonic()
        self._redraw_cost = self._push_at - started

    def observer(self) -> Observer:
        """What the engine tells as the run goes: new entries and console lines, ``ctx.progress`` patches."""
        return _Live(self)

    # -- answering from Python --------------------------------------------------------------

    def pending(self) -> list[dict[str, Any]]:
        """The run's open interrupts, as the store has them now."""
        return self.document().get("pending") or []

    def answer(self, interrupt_id: str | None = None, choice: str = "approve", value: Any = NO_ANSWER) -> Any:
        """Answer an open interrupt (the first one by default) as its button would; return the outcome.

        ``value``: an edit's input (``None`` edits it to null; an edit must be given one), a rejection's
        reason. An interrupt that is no longer open (answered in another cell, another
        kernel, by a click) is not answered again: the card refreshes and this returns None.
        ``card.answer(iid, "edit", {"total": 90})`` approves the call with that input instead.
        """
        if value is NO_ANSWER and choice == "edit":  # (null is an input: only one left out is refused)
            raise TypeError(
                'edit needs the edited input: card.answer(interrupt_id, "edit", value) (None edits it to null)'
            )
        return answer_run(self.sb, self.run_id or "", interrupt_id, choice, None if value is NO_ANSWER else value)

    def approve(self, interrupt_id: str | None = None) -> Any:
        return self.answer(interrupt_id, "approve")

    def reject(self, interrupt_id: str | None = None, reason: str | None = None) -> Any:
        return self.answer(interrupt_id, "reject", reason)


def merge_progress(shown: dict[str, Any] | None, patch: Any) -> dict[str, Any] | None:
    """The progress a card shows after ``ctx.progress(patch)``: an object patches it (a ``null`` field drops
    that field), ``null`` clears it, a number is a percent, anything else a message."""
    if patch is None:
        return None
    if isinstance(patch, dict):
        merged = {**(shown or {}), **patch}
        return {k: v for k, v in merged.items() if v is not None}
    if isinstance(patch, (int, float)) and not isinstance(patch, bool):
        return {**(shown or {}), "percent": patch}
    return {**(shown or {}), "message": str(patch)}


class _Live(Observer):
    def __init__(self, card: RunCard):
        self.card = card

    def _seen(self, run_id: str) -> None:
        if self.card.run_id is None and self.card.sb.run(run_id, journal=False).parent is None:
            self.card.bind(run_id)
        self.card.poke()

    def entries(self, run_id: str, entries: list[dict[str, Any]]) -> None:
        self._seen(run_id)

    def console(self, run_id: str, line: dict[str, str], replayed: bool) -> None:
        self._seen(run_id)

    def progress(self, run_id: str, patch: Any) -> None:
        if run_id not in self.card.chain and self.card.run_id is not None:
            return  # a child run's progress is its own card's
        self.card.progress = merge_progress(self.card.progress, patch)
        self._seen(run_id)

    def step(self, run_id: str, note: dict[str, Any]) -> None:
        if run_id not in self.card.chain and self.card.run_id is not None:
            return
        if note.get("phase") == "start":
            self.card.steps[note.get("id")] = str(note.get("label") or "")
        else:
            self.card.steps.pop(note.get("id"), None)
        self._seen(run_id)


def widgets_available() -> bool:
    """Whether this process runs in a kernel, whose front end may draw ipywidgets."""
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


# -- changes made elsewhere: card_watch.py listens (PostgreSQL) and polls --------------------------


def poll_once(counters: dict[Any, int], signatures: dict[tuple[Any, str], tuple]) -> None:
    """One look at each watched store: redraw the runs whose rows changed since the last look."""
    current().watch.poll_once(counters, signatures)
