"""Run cards in this kernel: one card per displayed run, always showing what the store says.

A ``RunCard`` is displayed as a mime bundle of our own type (``CARD_MIME``:
the card document; ``text/html``: the same card drawn by ``card.js`` in
QuickJS; ``text/plain``), never as a widget, so a saved notebook, a reload or
a kernel restart can never show "model not found". The bundle is displayed
with a display id and replaced (``update_display_data``) whenever the run
changes, so the saved notebook holds the latest state.

Live after the cell ended: the labextension's renderer opens a comm to the
target ``jupyter_sandbox.card`` (registered by ``%load_ext``) with the run id
and store; the kernel answers with the document and sends a new one whenever
the run changes: after a resume in this kernel (``publish``), or when the run
changed elsewhere (the scheduler, another kernel on the same store): heard at
once on a store that announces changes (PostgreSQL's NOTIFY), else polled
twice a second (card_watch.py). A click arrives as ``{type: "answer",
interrupt_id, choice, reason?, edited?}``; the kernel resumes the run with
exactly that answer only if the interrupt is still open in the store,
otherwise it just refreshes (and says so). ``-o VAR`` is filled when the run
completes, whichever way it completed.

Frontends without the extension: while its run waits for an answer, the
bundle also carries an ipywidgets view of the card (card_widget.py), drawn by
the same renderer; its clicks take the same path as the comm's (``click``:
the same addressing, ``channel="card"``, the same approvers and identity).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from IPython.display import display

from ..agents.facade import SandboxLike
from ..decisions import Approve, Edit, Reject
from ..engine.attempt import Observer
from ..errors import Interrupt, InvalidEdit, RunParked, SandboxError, SandboxInterrupt
from ..stores.urls import masked, secrets_of
from .card_doc import CARD_MIME, card_document, full_rows
from .card_html import card_html
from .session import current

__all__ = ["COMM_TARGET", "RunCard", "answer_for", "cards", "click", "publish", "register_comm_target"]

COMM_TARGET = "jupyter_sandbox.card"
READY_TARGET = "jupyter_sandbox.ready"  # the front end's: %load_ext announces itself there
PUSH_SECONDS = 0.25  # live updates while a run goes: at most 4 a second, each a full read of the store
REDRAW_SHARE = 0.1  # and spaced so that redrawing takes at most this share of the time (a long journal's read)
_ENDED = ("completed", "failed", "cancelled", "rolled_back", "missing")  # a card's widget view closes then


def cards(run_id: str | None = None, sb: SandboxLike | None = None) -> list[RunCard]:
    """This kernel's cards, newest last; of one run only if ``run_id`` is given, in ``sb``'s store only if
    ``sb`` is given (a run imported into another store has the same id: it is another run)."""
    session = current()
    with session.lock:
        return [
            c
            for c in session.cards
            if (run_id is None or c.run_id == run_id or run_id in c.chain) and (sb is None or same_store(c.sb, sb))
        ]


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


def same_store(a: Any, b: Any) -> bool:
    """Whether two Sandboxes read one store (the same object, or the same file or URL)."""
    return a is b or a.store_path == b.store_path


def answer_for(interrupt: Interrupt | dict[str, Any], choice: str, value: Any = None) -> Any:
    """The answer a button sends, in its JSON form. For an approval: approve → ``Approve()`` (``true``),
    reject → ``Reject(reason)`` (``false``, or ``{"approved": false, "reason": R}``), edit → ``Edit(V)``
    (``{"approved": true, "input": V}``). For another interrupt: approve → ``true``, reject → ``false`` (or
    ``{"approved": false, "reason": R}``), edit → ``V`` itself."""
    approval = interrupt.approval if isinstance(interrupt, Interrupt) else bool(interrupt.get("approval"))
    if choice == "approve":
        return Approve().to_json()
    if choice == "reject":
        return Reject(value or None).to_json()
    if choice == "edit":
        return Edit(value).to_json() if approval else value
    raise ValueError(f"unknown choice {choice!r}: approve, reject or edit")


def mask(store: str) -> str:
    """A store's name as a saved card carries it: no password; relative to the notebook's folder if under it
    (so a notebook moved or refreshed elsewhere finds the store beside it)."""
    store = masked(store, secrets_of(store))
    if "://" not in store and os.path.isabs(store):
        try:
            relative = os.path.relpath(store)
        except ValueError:
            return store
        return store if relative.startswith("..") else relative
    return store


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
            _watch()
        return self

    def bind(self, run_id: str) -> None:
        if self.run_id is None:
            self.run_id, self.chain = run_id, [run_id]
            _watch()

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
        for link in _links(self.run_id, self.sb):
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

    def answer(self, interrupt_id: str | None = None, choice: str = "approve", value: Any = None) -> Any:
        """Answer an open interrupt (the first one by default) as its button would; return the outcome.

        An interrupt that is no longer open (answered in another cell, another
        kernel, by a click) is not answered again: the card refreshes and this returns None.
        """
        return answer_run(self.sb, self.run_id or "", interrupt_id, choice, value)

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


def publish(run_id: str | None, sb: SandboxLike | None = None) -> None:
    """The run changed in this kernel: refresh every card (and renderer) showing it (in ``sb``'s store, if given)."""
    if not run_id:
        return
    shown = cards(run_id, sb)
    for card in shown:
        card.unpoke()  # the run's last live redraw would only repeat this one, later
        card.refresh()
    if not shown:
        for link in _links(run_id, sb):
            link.refresh()


def resume_run(sb: SandboxLike, run_id: str) -> Any:
    """Resume ``run_id`` (a cancelled run: the card's Resume) as ``sb.resume`` does, its cards told as it goes;
    its outcome (an error is returned, not raised)."""
    doc = card_document(sb, run_id)
    try:
        outcome: Any = sb.resume(doc["chain"][-1], observer=_Fanout(cards(run_id, sb)), channel="card")
    except SandboxError as exc:  # a pause is an outcome too
        outcome = exc
    publish(run_id, sb)
    return outcome


def widgets_available() -> bool:
    """Whether this process runs in a kernel, whose front end may draw ipywidgets."""
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def click(sb: SandboxLike, run_id: str, data: dict[str, Any]) -> str | None:
    """Do what a card's click asks: ``{type: "answer", interrupt_id, choice, reason?, edited?}``,
    ``{type: "resume"}`` or ``{type: "rollback"}``, from the extension's comm or the widget view alike.
    Return why it did not go through (the card shows it until the next click), or None. A click on an
    interrupt that is no longer open (answered meanwhile: another view, another kernel, a cell) answers
    nothing and says so."""
    kind = data.get("type")
    outcome: Any = None
    if kind == "answer":
        choice = data.get("choice", "approve")
        value = data.get("edited") if choice == "edit" else data.get("reason")
        interrupt_id = data.get("interrupt_id")
        if interrupt_id is not None and not isinstance(interrupt_id, str):
            return f"no interrupt has the id {interrupt_id!r:.60}: nothing was answered"
        outcome = answer_run(sb, run_id, interrupt_id, choice, value)
        if outcome is None:
            return _not_open(sb, run_id, interrupt_id)
    elif kind == "resume":  # the card's Resume button (a cancelled run)
        outcome = resume_run(sb, run_id)
    elif kind == "rollback":  # the card's Roll back button (a failed, rejected or cancelled run)
        try:
            sb.rollback(run_id, channel="card")
        except SandboxError as exc:
            outcome = exc
    if isinstance(outcome, Exception) and not isinstance(outcome, (SandboxInterrupt, RunParked)):
        return f"{type(outcome).__name__}: {outcome}"[:2000]
    return None


def _not_open(sb: SandboxLike, run_id: str, interrupt_id: Any) -> str:
    doc = card_document(sb, run_id)
    done = next((a for a in doc.get("answered") or [] if a.get("id") == interrupt_id), None)
    if done is None:
        return f"interrupt {interrupt_id} is not open (the run is {doc.get('status')}): nothing was answered"
    how = "approved" if done.get("approved") else "rejected"
    who = "".join(f" {w} {done[k]}" for w, k in (("by", "by"), ("via", "via")) if done.get(k))
    return f"interrupt {interrupt_id} was already {how}{who}: this answer was not given"


def answer_run(sb: SandboxLike, run_id: str, interrupt_id: str | None, choice: str, value: Any = None) -> Any:
    """Resume ``run_id`` with one answer if that interrupt is still open, else refresh its cards; its outcome."""
    doc = card_document(sb, run_id)
    open_ = doc.get("pending") or []
    target = next((p for p in open_ if p["id"] == interrupt_id), None) if interrupt_id else (open_[:1] or [None])[0]
    if target is None:
        publish(run_id, sb)
        return None
    if choice == "edit" and target.get("approval"):  # an edit is checked against the action's schema first
        issues = sb.input_issues(target.get("name", ""), value)
        if issues:
            return InvalidEdit(target.get("name", "?"), issues)
    observer = _Fanout(cards(run_id, sb))
    try:
        outcome: Any = sb.resume(
            doc["chain"][-1],
            answers={target["id"]: answer_for(target, choice, value)},
            observer=observer,
            channel="card",
        )
    except (SandboxError, TypeError, ValueError) as exc:  # a pause is an outcome too
        outcome = exc
    publish(run_id, sb)
    return outcome


class _Fanout(Observer):
    """A resume from a click or a cell tells every card of the run, as the cell that started it was told."""

    def __init__(self, shown: list[RunCard]):
        self.views = [card.observer() for card in shown]

    def entries(self, run_id: str, entries: list[dict[str, Any]]) -> None:
        for view in self.views:
            view.entries(run_id, entries)

    def progress(self, run_id: str, patch: Any) -> None:
        for view in self.views:
            view.progress(run_id, patch)

    def step(self, run_id: str, note: dict[str, Any]) -> None:
        for view in self.views:
            view.step(run_id, note)


# -- the comm: renderers in the browser ------------------------------------------------------


class _Link:
    """One renderer's comm, showing one run."""

    def __init__(
        self,
        comm: Any,
        sb: SandboxLike,
        run_id: str,
        title: str | None = None,
        out_var: str | None = None,
        card_id: str | None = None,
    ):
        self.comm, self.sb, self.run_id = comm, sb, run_id
        self.card_id = card_id  # the RunCard of this kernel whose output it renders, if any (its card_id)
        self.title, self.out_var = title, out_var  # as the saved card showed them
        self.sent = 0
        self.notice: str | None = None  # why this renderer's last click did not resume the run
        self.chain: list[str] = [run_id]  # the runs it shows (a continueAsNew chain): their changes redraw it

    def send(self, doc: dict[str, Any]) -> None:
        if doc.get("version", 0) <= self.sent:
            return
        if self.notice:
            doc = {**doc, "notice": self.notice}
        self.sent = doc.get("version", 0)
        try:
            self.comm.send({"type": "doc", "doc": doc})
        except Exception:  # a closed comm: forget it
            _drop(self)

    def refresh(self) -> None:
        own = next((c for c in cards(self.run_id, self.sb) if c.card_id == self.card_id), None)
        if own is not None:  # the card it renders: the same document (the cell's error, the script shown or not)
            doc = own.document()
        else:
            doc = card_document(self.sb, self.run_id, title=self.title, out_var=self.out_var)
            doc["store"] = mask(doc.get("store") or "")
        self.chain = doc.get("chain") or [self.run_id]
        self.send(doc)

    def on_msg(self, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        kind = data.get("type")
        if kind in ("answer", "resume", "rollback"):
            self.notice = None
            self.notice = click(self.sb, self.run_id, data)
            self.refresh()
        elif kind == "journal":
            self.comm.send({"type": "journal", "rows": full_rows(self.sb, self.run_id)})
        else:
            self.refresh()


def _links(run_id: str | None, sb: SandboxLike | None = None) -> list[_Link]:
    session = current()
    with session.lock:
        return [link for link in session.links.get(run_id or "", []) if sb is None or same_store(link.sb, sb)]


def _drop(link: _Link) -> None:
    session = current()
    with session.lock:
        if link in session.links.get(link.run_id, []):
            session.links[link.run_id].remove(link)


def _open(comm: Any, msg: dict[str, Any]) -> None:
    from .defaults import configured_store, sandbox_for

    data = (msg.get("content") or {}).get("data") or {}
    run_id = str(data.get("run_id") or "")
    store = data.get("store") or None
    if store and mask(configured_store()) == store:
        store = None  # the default store (its URL may hold a password the card does not)
    text = lambda key: str(data[key]) if isinstance(data.get(key), str) else None  # noqa: E731
    link = _Link(comm, sandbox_for(store), run_id, text("title"), text("out_var"), text("card"))
    session = current()
    with session.lock:
        session.links.setdefault(run_id, []).append(link)
    comm.on_msg(link.on_msg)
    comm.on_close(lambda _msg: _drop(link))
    link.refresh()
    _watch()


def register_comm_target(ip: Any) -> bool:
    """Register the cards' comm target on the shell's kernel (none in a plain IPython shell)."""
    kernel = getattr(ip, "kernel", None)
    manager = getattr(kernel, "comm_manager", None)
    if manager is None:
        return False
    manager.register_target(COMM_TARGET, _open)
    _announce()
    return True


def _announce() -> None:
    """Tell the front end the target is there: the cards it drew before ``%load_ext`` ask again, once."""
    try:
        from comm import create_comm

        create_comm(target_name=READY_TARGET, data={}).close()
    except Exception:  # a front end without the labextension has no such target: nothing to tell
        pass


# -- changes made elsewhere: card_watch.py listens (PostgreSQL) and polls --------------------------


def poll_once(counters: dict[Any, int], signatures: dict[tuple[Any, str], tuple]) -> None:
    """One look at each watched store: redraw the runs whose rows changed since the last look."""
    current().watch.poll_once(counters, signatures)


def _watch() -> None:
    current().watch.start()
