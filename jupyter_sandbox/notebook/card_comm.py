"""The cards' comm: each renderer in the browser (the labextension's) opens one to show a run live.

The renderer opens a comm to ``COMM_TARGET`` (registered by ``%load_ext``) with the run id and store;
the kernel answers with the card document and sends a new one whenever the run changes, and takes the
renderer's clicks (card_clicks.py) and its request for the whole journal.

>>> from IPython import get_ipython
>>> register_comm_target(get_ipython())    # True in a kernel; False outside one (a plain IPython shell has no comms)
False
"""

from __future__ import annotations

from typing import Any

from ..agents.facade import SandboxLike
from .card_clicks import click
from .card_doc import card_document, full_rows
from .card_views import cards, drop_link, mask, watch
from .session import current

__all__ = ["COMM_TARGET", "READY_TARGET", "register_comm_target"]

COMM_TARGET = "jupyter_sandbox.card"
READY_TARGET = "jupyter_sandbox.ready"  # the front end's: %load_ext announces itself there


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
            drop_link(self)

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
    comm.on_close(lambda _msg: drop_link(link))
    link.refresh()
    watch()


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
