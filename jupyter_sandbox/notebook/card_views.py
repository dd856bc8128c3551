"""Where a run is shown in this kernel: its cards and the renderers' links, found in the session and redrawn together.

The session (session.py) keeps both; this module finds them by run and store, and ``publish`` redraws
every one of them after the run changed in this kernel.

>>> from jupyter_sandbox import Sandbox
>>> from jupyter_sandbox.notebook.cards import RunCard
>>> from jupyter_sandbox.notebook.session import close_session
>>> sb = Sandbox()
>>> run_id = sb.eval("return 1").run_id
>>> card = RunCard(sb, run_id)      # a card of the run (``.show()`` displays it)
>>> publish(run_id, sb)             # a resume in this kernel: every card and renderer of the run shows it
>>> [(shown is card, shown.doc["status"]) for shown in cards(run_id)]
[(True, 'completed')]
>>> close_session(); sb.close()     # the session forgets its cards (``%unload_ext``)
"""

from __future__ import annotations

import os
from typing import Any

from ..agents.facade import SandboxLike
from ..stores.urls import masked, secrets_of
from .session import current

__all__ = ["cards", "drop_link", "links", "mask", "publish", "same_store", "watch"]


def cards(run_id: str | None = None, sb: SandboxLike | None = None) -> list[Any]:
    """This kernel's cards, newest last; of one run only if ``run_id`` is given, in ``sb``'s store only if
    ``sb`` is given (a run imported into another store has the same id: it is another run)."""
    session = current()
    with session.lock:
        return [
            c
            for c in session.cards
            if (run_id is None or c.run_id == run_id or run_id in c.chain) and (sb is None or same_store(c.sb, sb))
        ]


def same_store(a: Any, b: Any) -> bool:
    """Whether two Sandboxes read one store (the same object, or the same file or URL)."""
    return a is b or a.store_path == b.store_path


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


def links(run_id: str | None, sb: SandboxLike | None = None) -> list[Any]:
    session = current()
    with session.lock:
        return [link for link in session.links.get(run_id or "", []) if sb is None or same_store(link.sb, sb)]


def drop_link(link: Any) -> None:
    session = current()
    with session.lock:
        if link in session.links.get(link.run_id, []):
            session.links[link.run_id].remove(link)


def publish(run_id: str | None, sb: SandboxLike | None = None) -> None:
    """The run changed in this kernel: refresh every card (and renderer) showing it (in ``sb``'s store, if given)."""
    if not run_id:
        return
    shown = cards(run_id, sb)
    for card in shown:
        card.unpoke()  # the run's last live redraw would only repeat this one, later
        card.refresh()
    if not shown:
        for link in links(run_id, sb):
            link.refresh()


def watch() -> None:
    """Follow the shown runs' changes made elsewhere (card_watch.py): started once, by the first card or link."""
    current().watch.start()
