"""The notebook session: the one owner of the notebook's process state.

Everything the notebook layer keeps between cells lives on one ``NotebookSession``: the default store,
one ``Sandbox`` per store, the registrations made with ``@jupyter_sandbox.action`` (replayed onto
each of them), the run cards shown in this kernel and the renderers' links to them, the watcher that
keeps them current (card_watch.py), and the one thread that makes the cards' live redraws.

``%load_ext jupyter_sandbox`` (``load_ipython_extension``) opens the session, or adopts the one that
decorators used before it opened; ``%unload_ext`` (``unload_ipython_extension``) closes it: its
Sandboxes close (so the engine's loop stops with the last of them), its threads end, and what it
registered is forgotten. The next use opens a fresh one.

>>> from jupyter_sandbox.notebook import session
>>> s = session.current()
>>> s.default_sandbox() is session.current().default_sandbox()
True
>>> session.close_session()
>>> s.closed and session.current() is not s
True
>>> session.close_session()
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..sandbox import Sandbox
from .card_watch import Watch

__all__ = ["DEFAULT_STORE", "NotebookSession", "Redraws", "close_session", "configured_store", "current"]

log = logging.getLogger("jupyter_sandbox")

DEFAULT_STORE = ".sandbox/runs.sqlite"
CARDS_KEPT = 500  # cards remembered per session: the oldest one's run is no longer followed
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")  # a database URL: not a path under the notebook's folder


def configured_store() -> str:
    """``JUPYTER_SANDBOX_STORE`` if set (a path or a URL), else ``.sandbox/runs.sqlite``."""
    return os.environ.get("JUPYTER_SANDBOX_STORE") or DEFAULT_STORE


class NotebookSession:
    """The notebook's state in this process: its Sandboxes, registrations, cards and their threads."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.default_store: str = configured_store()
        self.sandboxes: dict[str, Sandbox] = {}  # the resolved store -> its Sandbox
        # (kind, fn, options): replayed onto every Sandbox, so each store sees the same actions.
        self.registered: list[tuple[str, Callable[..., Any], dict[str, Any]]] = []
        self.from_namespace: dict[str, Callable[..., Any]] = {}  # name -> the namespace function it came from
        self.cards: deque[Any] = deque(maxlen=CARDS_KEPT)  # the RunCards shown, newest last
        self.links: dict[str, list[Any]] = {}  # run id -> the renderers' comms showing it
        self.styled_cell: str | None = None  # the cell whose cards carry the cards' one <style> (styles_here)
        self.watch = Watch(self.watched)
        self.redraws = Redraws()
        self.closed = False

    def resolve(self, store: str | os.PathLike[str] | None) -> str:
        """The store a name means: ``None`` is the default; a relative path is under the kernel's folder."""
        store = os.fspath(store) if store is not None else self.default_store
        if store == ":memory:" or _URL.match(store):
            return store
        path = Path(store).expanduser()
        if not path.is_absolute():  # relative to the kernel's cwd, i.e. beside the notebook
            path = Path.cwd() / path
        return str(path)

    def sandbox_for(self, store: str | os.PathLike[str] | None = None) -> Sandbox:
        """The Sandbox of a store (the default when ``None``), made on first use with every registration."""
        key = self.resolve(store)
        with self.lock:
            if self.closed:
                raise RuntimeError("this notebook session is closed (%unload_ext): use session.current()")
            sb = self.sandboxes.get(key)
            if sb is None:
                if key != ":memory:" and not _URL.match(key):
                    Path(key).parent.mkdir(parents=True, exist_ok=True)
                sb = self.sandboxes[key] = Sandbox(key)
                for kind, fn, options in self.registered:
                    getattr(sb, kind)(fn, **options)
            return sb

    def default_sandbox(self) -> Sandbox:
        return self.sandbox_for(None)

    def watched(self) -> dict[Any, list[tuple[str, list[Any], list[Any]]]]:
        """Every Sandbox with runs shown, and per run the cards and the renderers' links showing it."""
        by_store: dict[Any, dict[str, tuple[list[Any], list[Any]]]] = {}
        with self.lock:
            for card in self.cards:
                if card.run_id:
                    by_store.setdefault(card.sb, {}).setdefault(card.run_id, ([], []))[0].append(card)
            for run_id, links in self.links.items():
                for link in links:
                    by_store.setdefault(link.sb, {}).setdefault(run_id, ([], []))[1].append(link)
        return {sb: [(rid, c, li) for rid, (c, li) in runs.items()] for sb, runs in by_store.items()}

    def close(self) -> None:
        """End the session's threads, close its Sandboxes and forget its registrations and cards. Idempotent."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            sandboxes = list(self.sandboxes.values())
            self.sandboxes.clear()
            self.registered.clear()
            self.from_namespace.clear()
            self.cards.clear()
            self.links.clear()
        self.redraws.close()
        self.watch.stop()
        for sb in sandboxes:
            sb.close()


class Redraws:
    """The one thread that makes the cards' live redraws when they are due (each card at most once queued).

    ``at(card, when)`` queues ``card._flush()`` for ``when`` (``time.monotonic()``) unless it is queued
    already; ``drop(card)`` takes it out; ``close()`` ends the thread.
    """

    def __init__(self) -> None:
        self._due: dict[Any, float] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def at(self, card: Any, when: float) -> bool:
        """Queue a redraw of ``card`` at ``when``; False if one is queued already (or the session closed)."""
        with self._changed:
            if self._closed or card in self._due:
                return False
            self._due[card] = when
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="jupyter-sandbox-redraws", daemon=True)
                self._thread.start()
            self._changed.notify()
            return True

    def queued(self, card: Any) -> bool:
        with self._changed:
            return card in self._due

    def drop(self, card: Any) -> None:
        with self._changed:
            self._due.pop(card, None)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._due.clear()
            self._changed.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(10.0)  # bounds a hang only: a redraw under way ends first

    def _run(self) -> None:
        while True:
            with self._changed:
                if self._closed:
                    return
                if not self._due:
                    self._changed.wait()
                    continue
                card, when = min(self._due.items(), key=lambda item: item[1])
                wait = when - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                del self._due[card]
            try:
                card._flush()  # outside the lock: a redraw reads the store
            except Exception:  # one card's trouble is not the next one's
                log.debug("a live redraw of a run card failed", exc_info=True)


_current: NotebookSession | None = None
_lock = threading.Lock()


def current() -> NotebookSession:
    """The open notebook session, opened on first use (by ``%load_ext`` or the first ``@action``)."""
    global _current
    with _lock:
        if _current is None or _current.closed:
            _current = NotebookSession()
        return _current


def close_session() -> None:
    """Close the open notebook session, if any (``%unload_ext jupyter_sandbox``; tests between cases)."""
    global _current
    with _lock:
        session, _current = _current, None
    if session is not None:
        session.close()
