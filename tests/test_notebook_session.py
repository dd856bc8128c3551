"""The notebook session owns the notebook's process state: %load_ext opens it, %unload_ext closes it."""

from __future__ import annotations

import threading
import time

import pytest
from pace import bound
from test_magic import APPROVE, card, cell, ip, testing_shell  # noqa: F401 (fixtures)

import jupyter_sandbox
from jupyter_sandbox.errors import StoreError
from jupyter_sandbox.notebook import current_session
from jupyter_sandbox.notebook.cards import RunCard
from jupyter_sandbox.notebook.session import close_session


def until(condition, what):
    deadline = time.monotonic() + bound(30)  # bounds a hang only
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def test_unloading_the_extension_closes_the_sessions_sandboxes_and_ends_its_threads(ip):  # noqa: F811
    session = current_session()
    cell(ip, "-o out", APPROVE)  # a paused run's card: the poller watches it
    shown = card()
    shown.poke()  # and a live redraw queued: the redraw thread runs
    sb = jupyter_sandbox.default_sandbox()
    threads = [session.watch._poller, session.redraws._thread]
    assert all(t is not None and t.is_alive() for t in threads)
    jupyter_sandbox.unload_ipython_extension(ip)
    assert session.closed and len(session.cards) == 0 and session.sandboxes == {}
    assert not any(t.is_alive() for t in threads)
    with pytest.raises(StoreError, match="closed"):
        sb.eval("return 1")


def test_an_action_registered_before_load_ext_is_kept_by_the_session_it_opens(testing_shell):  # noqa: F811
    close_session()
    try:

        @jupyter_sandbox.action
        def early(x):
            return x

        before = current_session()
        jupyter_sandbox.load_ipython_extension(testing_shell)
        assert current_session() is before and "early" in jupyter_sandbox.default_sandbox().actions
    finally:
        jupyter_sandbox.unload_ipython_extension(testing_shell)


def test_after_unload_the_next_session_starts_with_nothing_registered(ip):  # noqa: F811
    assert "send" in jupyter_sandbox.default_sandbox().actions  # the fixture's
    jupyter_sandbox.unload_ipython_extension(ip)
    assert "send" not in jupyter_sandbox.default_sandbox().actions
    close_session()


def test_many_cards_poked_at_once_share_one_redraw_thread(ip):  # noqa: F811
    sb = jupyter_sandbox.default_sandbox()
    run = sb.eval("return 1")
    shown = [RunCard(sb, run.run_id) for _ in range(20)]
    before = {t.ident for t in threading.enumerate()}
    for view in shown:
        view.poke()
        view.poke()  # a second poke while one is queued adds nothing
    started = [t for t in threading.enumerate() if t.ident not in before]
    assert [t.name for t in started] == ["jupyter-sandbox-redraws"]
    until(lambda: all(view._push_at > 0 for view in shown), "every card's redraw")
