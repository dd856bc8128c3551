"""Keeping shown runs current when they change elsewhere: a listener per store that announces changes, a poller for all.

A store with ``listen()`` (PostgreSQL: ``NOTIFY`` in the transaction of every
change to a run or a signal) gets a listener thread with a connection of its
own: each announced run id redraws, at once, the cards and renderers showing
that run, if what they show of it (``signature``) moved. Every store is also
polled every ``POLL_SECONDS`` (its ``change_counter()``), except a store whose
listener is connected: the poll is the fallback while a listener reconnects
(with backoff, after a server restart or a killed connection) and what SQLite
always uses. A listener ends, closing its connection, within
``LISTEN_SECONDS`` of its store closing or its last card going away. Nothing
here raises into the kernel: a failing store is retried, never fatal.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..agents.facade import SandboxLike

__all__ = ["BACKOFF", "LISTEN_SECONDS", "POLL_SECONDS", "Watch", "signature"]

log = logging.getLogger("jupyter_sandbox")

POLL_SECONDS = 0.5
LISTEN_SECONDS = 1.0  # a listener's longest wait: how soon it notices its store closed or unwatched
BACKOFF = (0.25, 8.0)  # a listener's first and longest pause between failed connections

Shown = tuple[str, list[Any], list[Any]]  # a run id, the cards showing it, the renderers' links showing it
Watched = Callable[[], dict[Any, list[Shown]]]  # every Sandbox with runs shown, and those runs


def signature(sb: SandboxLike, run_id: str) -> tuple[Any, ...]:
    """What a card shows of a run's rows, along its ``continueAsNew`` chain: a change here is worth a redraw.
    A running run's journal grows without touching its row, so its size is part of it."""
    sig: list[Any] = []
    row, n = sb.run(run_id, journal=False), 0
    sig.append((row.status, row.updated, row.attempt))
    while row.status == "continued" and row.successor and n < 1000:
        row, n = sb.run(row.successor, journal=False), n + 1
        sig.append((row.status, row.updated, row.attempt))
    if row.status == "running":
        sig.append(sb.journal_bytes(row.id))
    return tuple(sig)


def running(sig: tuple[Any, ...] | None) -> bool:
    """Whether a signature is of a run still running (its journal may grow unannounced)."""
    return sig is not None and isinstance(sig[-1], int)


def _redraw(shown: list[Any], links: list[Any], live: bool = False) -> None:
    for view in (*shown, *(() if shown else links)):  # a card's redraw is sent to the renderers of its run too
        try:
            if live and hasattr(view, "poke"):
                view.poke()  # a running run's card redraws on its own throttle, not once more per look
            else:
                view.refresh()
        except Exception:  # one card's trouble (its store closed meanwhile) is not another's
            log.debug("redrawing a run card failed", exc_info=True)


def _redraw_if_moved(
    sb: SandboxLike, run_id: str, shown: list[Any], links: list[Any], signatures: dict[tuple[Any, str], tuple[Any, ...]]
) -> tuple[Any, ...] | None:
    """Redraw what shows ``run_id`` if its ``signature`` moved since ``signatures`` last saw it (also at first
    sight: it may have moved since it was drawn). Returns the signature, or None when the run cannot be read."""
    try:
        sig = signature(sb, run_id)
    except Exception:  # a closed store
        return None
    if signatures.get((sb, run_id)) != sig:
        signatures[(sb, run_id)] = sig
        _redraw(shown, links, live=running(sig))
    return sig


class Watch:
    """The poller thread and the listener threads of one registry of shown runs (``watched``)."""

    def __init__(self, watched: Watched):
        self.watched = watched
        self._lock = threading.Lock()
        self._poller: threading.Thread | None = None
        self._listeners: dict[Any, _Listener] = {}  # Sandbox -> the listener of its store
        self._stopping = threading.Event()

    def start(self) -> None:
        """Make sure the poller runs, and a listener for every watched store that can listen."""
        with self._lock:
            if self._stopping.is_set():
                return
            if self._poller is None or not self._poller.is_alive():
                self._poller = threading.Thread(target=self._poll, name="jupyter-sandbox-cards", daemon=True)
                self._poller.start()
        self._listen_all()

    def stop(self, timeout: float = 10.0) -> None:
        """End the poller and every listener (each closes its connection); ``start()`` does nothing after."""
        self._stopping.set()
        with self._lock:
            threads: list[threading.Thread] = [*self._listeners.values()]
            if self._poller is not None:
                threads.append(self._poller)
        for listener in threads:
            if isinstance(listener, _Listener):
                listener.stop()
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout)  # bounds a hang only: each notices within LISTEN_SECONDS or POLL_SECONDS

    def listening(self, sb: Any) -> bool:
        """Whether a listener hears ``sb``'s store now (so its changes need no poll)."""
        listener = self._listeners.get(sb)
        return listener is not None and listener.connected.is_set()

    def listeners(self) -> list[_Listener]:
        with self._lock:
            return list(self._listeners.values())

    def _listen_all(self) -> None:
        heard = {sb for sb in self.watched() if sb.announces_changes}
        with self._lock:
            if self._stopping.is_set():
                return
            for sb in heard - set(self._listeners):
                self._listeners[sb] = listener = _Listener(self, sb)
                listener.start()

    def _keeps(self, listener: _Listener) -> bool:
        """Whether ``listener`` is still wanted (its store open and shown); if not, it is forgotten."""
        wanted = not listener.stopping.is_set() and not self._stopping.is_set() and listener.sb.announces_changes
        if wanted and listener.sb in self.watched():
            return True
        self._forget(listener)
        return False

    def _forget(self, listener: _Listener) -> None:
        # a card shown meanwhile gets a new listener from the next start() or poll (the poll covers until then)
        with self._lock:
            if self._listeners.get(listener.sb) is listener:
                del self._listeners[listener.sb]

    def poll_once(
        self,
        counters: dict[Any, int],
        signatures: dict[tuple[Any, str], tuple[Any, ...]],
        skip: Callable[[Any], bool] = lambda sb: False,
    ) -> None:
        """One look at each watched store (but those ``skip`` names): redraw the runs whose rows changed."""
        for sb, runs in self.watched().items():
            if skip(sb):
                counters.pop(sb, None)  # looked at afresh when its listener drops
                for run_id, shown, links in runs:  # a journal's rows are not announced: look at running runs
                    sig = signatures.get((sb, run_id))
                    if sig is None or running(sig):
                        _redraw_if_moved(sb, run_id, shown, links, signatures)
                continue
            try:
                counter = sb.change_counter()
            except Exception:  # a closed store
                continue
            if counters.get(sb) == counter:
                continue
            counters[sb] = counter
            for run_id, shown, links in runs:
                _redraw_if_moved(sb, run_id, shown, links, signatures)

    def _poll(self) -> None:
        counters: dict[Any, int] = {}
        signatures: dict[tuple[Any, str], tuple[Any, ...]] = {}
        while not self._stopping.wait(POLL_SECONDS):
            try:
                self._listen_all()  # a listener that ended while its store was briefly unwatched comes back
                self.poll_once(counters, signatures, skip=self.listening)
            except Exception:  # the poller must outlive any one store's trouble
                log.debug("polling run stores failed", exc_info=True)


class _Listener(threading.Thread):
    """Hears one store's announced changes; reconnects with backoff; redraws only the runs announced."""

    def __init__(self, watch: Watch, sb: SandboxLike):
        super().__init__(name=f"jupyter-sandbox-listen {sb.store_path}", daemon=True)
        self.watch, self.sb = watch, sb
        self.connected = threading.Event()  # set while LISTEN holds and what it missed was caught up
        self.stopping = threading.Event()
        self.connections = 0  # how many times it (re)connected
        self._signatures: dict[tuple[Any, str], tuple[Any, ...]] = {}

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        changes: Any = None
        pause = BACKOFF[0]
        try:
            while self.watch._keeps(self):
                if changes is None:
                    try:
                        changes = self.sb.listen()
                    except Exception:  # the server is down or refuses: the poll covers meanwhile
                        log.debug("listening to %s failed", self.sb.store_path, exc_info=True)
                        self.stopping.wait(pause)
                        pause = min(pause * 2, BACKOFF[1])
                        continue
                    self.connections += 1
                    self._changed(None)  # what changed before LISTEN held
                    self.connected.set()
                try:
                    ids = changes.wait(LISTEN_SECONDS)
                except Exception:  # the connection broke: poll, and listen again after a pause
                    self.connected.clear()
                    _close(changes)
                    changes = None
                    self.stopping.wait(pause)
                    pause = min(pause * 2, BACKOFF[1])
                    continue
                pause = BACKOFF[0]
                if ids:
                    self._changed(set(ids))
        except Exception:  # never into the kernel: the poll carries on without this listener
            log.warning("a run card listener stopped", exc_info=True)
        finally:
            self.connected.clear()
            if changes is not None:
                _close(changes)
            self.watch._forget(self)  # so the next start() or poll makes a new one

    def _changed(self, ids: set[str] | None) -> None:
        """Redraw the shown runs among ``ids`` (every shown run if None) whose signature moved."""
        seen: dict[tuple[Any, str], tuple[Any, ...]] = {}
        for sb, runs in self.watch.watched().items():
            if sb is not self.sb:
                continue
            for run_id, shown, links in runs:
                if ids is not None:
                    chain = {run_id, *(r for v in (*shown, *links) for r in getattr(v, "chain", ()))}
                    if not chain & ids:
                        continue
                sig = _redraw_if_moved(sb, run_id, shown, links, self._signatures)
                if sig is not None:
                    seen[(sb, run_id)] = sig
        if ids is None:
            self._signatures = seen  # forget runs no longer shown


def _close(changes: Any) -> None:
    try:
        changes.close()
    except Exception:
        log.debug("closing a store listener failed", exc_info=True)
