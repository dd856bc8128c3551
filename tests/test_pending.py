"""``%sandbox runs --pending``: an approver on the same store (any backend) finds what waits and answers it."""

# ruff: noqa: F811  (ip, testing_shell: the fixtures of test_magic, imported so pytest finds them)
from __future__ import annotations

from test_magic import APPROVE, card, cell, ip, testing_shell, text  # noqa: F401

from jupyter_sandbox.notebook import cards as card_registry

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


def _use(ip, url):
    ip.run_line_magic("config", f"SandboxMagics.store = {url!r}")
    ip.run_line_magic("config", "SandboxMagics.scheduler_interval = 0")


def test_pending_lists_each_open_interrupt_of_a_paused_run_and_nothing_else(ip, store_url):
    _use(ip, store_url)
    cell(ip, "--name waits", APPROVE)
    paused, interrupt = card().run_id, card().pending()[0]["id"]
    cell(ip, "--name done", "return 1")
    _, cap = cell(ip, "%sandbox runs --pending", None)
    shown = text(cap)
    rows = [line for line in shown.splitlines() if line.startswith(paused[:8])]
    assert len(rows) == 1 and "send" in rows[0] and "approval" in rows[0] and "waits" in rows[0]
    assert interrupt in rows[0].split()  # the id to answer it by
    assert "done" not in shown and "--id INTERRUPT --answer JSON" in shown


def test_pending_says_so_when_nothing_waits(ip, store_url):
    _use(ip, store_url)
    cell(ip, "", "return 1")
    _, cap = cell(ip, "%sandbox runs --pending", None)
    assert "no runs waiting for an answer" in text(cap)


def test_an_approver_answers_by_the_listed_interrupt_id_and_the_first_card_completes(ip, store_url):
    _use(ip, store_url)
    cell(ip, "--name raffle -o out", APPROVE)
    first = card()
    counters, signatures = {}, {}
    card_registry.poll_once(counters, signatures)
    interrupt = first.pending()[0]["id"]
    _, cap = cell(ip, f"%sandbox --store {store_url!r} runs --pending", None)
    assert interrupt in text(cap)
    cell(ip, f"%sandbox --store {store_url!r} resume {first.run_id} --id {interrupt} --answer true", None)
    card_registry.poll_once(counters, signatures)
    assert first.doc["status"] == "completed" and ip.user_ns["out"] == {"sent": "ana"}
    _, cap = cell(ip, "%sandbox runs --pending", None)
    assert "no runs waiting for an answer" in text(cap)
