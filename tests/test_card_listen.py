"""Run cards on PostgreSQL redraw when NOTIFY says their run changed; the poll is the fallback (and SQLite's way).

Most tests here make polling impossible (the poller's ``poll_once`` does nothing), so a card that still turns
completed after another process or Sandbox changed its run was redrawn by its listener. Waits end on a condition
with a generous deadline (a loaded machine is slow); none asserts how fast.
"""

# ruff: noqa: F811  (ip, testing_shell: the fixtures of test_magic, imported so pytest finds them)
from __future__ import annotations

import subprocess
import sys
import time

import psycopg
import pytest
from pace import bound
from test_magic import APPROVE, attach, card, cell, ip, sandbox, testing_shell  # noqa: F401

import jupyter_sandbox
from jupyter_sandbox.notebook import current_session
from jupyter_sandbox.notebook.card_watch import Watch

DEADLINE = bound(10.0)
LISTENERS = "SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN jupyter_sandbox' AND pid <> pg_backend_pid()"


def until(condition, what):
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def listener_pids(url):
    with psycopg.connect(url, autocommit=True) as conn:
        return {row[0] for row in conn.execute(LISTENERS)}


@pytest.fixture
def no_poll(monkeypatch):
    """The poller looks at no store: only a listener can redraw a card."""
    monkeypatch.setattr(Watch, "poll_once", lambda *args, **kwargs: None)


def shown_paused(ip, url, out="out"):
    """A paused run's card in this kernel on ``url`` (its scheduler off), once its listener hears the store."""
    ip.run_line_magic("config", f"SandboxMagics.store = {url!r}")
    ip.run_line_magic("config", "SandboxMagics.scheduler_interval = 0")
    cell(ip, f"-o {out}", APPROVE)
    shown = card()
    assert shown.doc["status"] == "paused"
    until(lambda: current_session().watch.listening(sandbox()), "the card's listener")
    return shown


def listener_of(sb):
    return next(li for li in current_session().watch.listeners() if li.sb is sb)


def approve_elsewhere(url, run_id, sent="from elsewhere"):
    """Another kernel (a Sandbox of its own on the same URL) approves the run."""
    with jupyter_sandbox.Sandbox(url) as other:
        other.action(name="fetch")(lambda query: {"n": 0})  # replayed, not called
        other.action(approval=True, name="send")(lambda msg: {"sent": sent})
        other.resume(run_id, True)


def test_a_card_turns_completed_when_another_process_approves_its_run_with_polling_off(ip, postgres_url, no_poll):
    shown = shown_paused(ip, postgres_url)
    comm = attach(shown.run_id)  # and a renderer showing the same run
    script = (
        "import sys, jupyter_sandbox as j\n"
        "with j.Sandbox(sys.argv[1]) as sb:\n"
        "    sb.action(name='fetch')(lambda q: {'n': 0})\n"
        "    sb.action(approval=True, name='send')(lambda m: {'sent': 'another process'})\n"
        "    sb.resume(sys.argv[2], True)\n"
    )
    subprocess.run([sys.executable, "-c", script, postgres_url, shown.run_id], check=True, timeout=120)
    until(lambda: shown.doc["status"] == "completed", "the card to turn completed")
    assert ip.user_ns["out"] == {"sent": "another process"}
    until(lambda: comm.docs()[-1]["status"] == "completed", "the renderer to turn completed")


def test_a_change_to_another_run_does_not_redraw_this_card(ip, postgres_url, no_poll, monkeypatch):
    shown = shown_paused(ip, postgres_url)
    cell(ip, "", APPROVE)
    other_run = card().run_id
    drawn = []  # the card's redraws
    refresh = shown.refresh

    def counted():
        doc = refresh()
        drawn.append(doc)
        return doc

    monkeypatch.setattr(shown, "refresh", counted)
    approve_elsewhere(postgres_url, other_run)  # many announcements, none of this card's run
    with jupyter_sandbox.Sandbox(postgres_url) as other:  # then one of its run: a barrier after them
        other.store.update_run(shown.run_id, name="touched")
        touched = other.store.get_run(shown.run_id).updated
    until(lambda: any(doc.get("updated") == touched for doc in drawn), "the card to show its run's change")
    assert len(drawn) == 1


def test_a_renderer_of_a_continued_run_redraws_when_the_chains_last_run_changes(ip, postgres_url, no_poll):
    ip.run_line_magic("config", f"SandboxMagics.store = {postgres_url!r}")
    ip.run_line_magic("config", "SandboxMagics.scheduler_interval = 0")
    cell(ip, "", "if (!ctx.input) return await ctx.continueAsNew(1)\n" + APPROVE)
    last = card().run_id
    first = next(run.id for run in sandbox().runs() if run.successor == last)
    assert card().doc["status"] == "paused"
    comm = attach(first)  # a saved card's renderer, which knows only the chain's first run
    current_session().cards.clear()  # and no card: only the renderer shows the run
    until(lambda: current_session().watch.listening(sandbox()), "the renderer's listener")
    approve_elsewhere(postgres_url, last)  # announces the last run only
    until(lambda: comm.docs()[-1]["status"] == "completed", "the renderer to turn completed")


def test_after_its_connection_is_killed_the_listener_reconnects_and_the_card_still_updates(ip, postgres_url, no_poll):
    before = listener_pids(postgres_url)
    shown = shown_paused(ip, postgres_url)
    listener = listener_of(sandbox())
    ours = listener_pids(postgres_url) - before
    assert len(ours) == 1 and listener.connections == 1
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (ours.pop(),))
    until(lambda: listener.connections == 2 and listener.connected.is_set(), "the listener to reconnect")
    approve_elsewhere(postgres_url, shown.run_id)
    until(lambda: shown.doc["status"] == "completed", "the card to turn completed")
    assert ip.user_ns["out"] == {"sent": "from elsewhere"}


def test_while_the_store_refuses_to_listen_the_card_is_polled(ip, postgres_url, monkeypatch):
    from jupyter_sandbox.errors import StoreError
    from jupyter_sandbox.stores.postgres import PostgresStore

    def refuse(store):
        raise StoreError("listening is down")

    monkeypatch.setattr(PostgresStore, "listen", refuse)
    ip.run_line_magic("config", f"SandboxMagics.store = {postgres_url!r}")
    ip.run_line_magic("config", "SandboxMagics.scheduler_interval = 0")
    cell(ip, "-o out", APPROVE)
    shown = card()
    assert not current_session().watch.listening(sandbox())
    approve_elsewhere(postgres_url, shown.run_id)
    until(lambda: shown.doc["status"] == "completed", "the poll to redraw the card")
    assert ip.user_ns["out"] == {"sent": "from elsewhere"}


def test_closing_the_sandbox_ends_its_listener_and_its_connection(ip, postgres_url):
    before = listener_pids(postgres_url)
    shown_paused(ip, postgres_url)
    listener = listener_of(sandbox())
    ours = listener_pids(postgres_url) - before
    assert len(ours) == 1
    sandbox().close()
    listener.join(DEADLINE)
    assert not listener.is_alive() and not listener.connected.is_set()
    until(lambda: not ours & listener_pids(postgres_url), "the listener's connection to close")


def test_a_listener_ends_when_its_last_card_goes_away(ip, postgres_url):
    shown_paused(ip, postgres_url)
    listener = listener_of(sandbox())
    current_session().cards.clear()
    listener.join(DEADLINE)
    assert not listener.is_alive()
    assert sandbox() not in {li.sb for li in current_session().watch.listeners()}


def test_a_card_on_sqlite_has_no_listener_and_is_polled(ip, tmp_path):
    cell(ip, "-o out", APPROVE)
    shown = card()
    assert sandbox() not in {li.sb for li in current_session().watch.listeners()}
    approve_elsewhere(str(tmp_path / ".sandbox" / "runs.sqlite"), shown.run_id)
    until(lambda: shown.doc["status"] == "completed", "the poll to redraw the card")
