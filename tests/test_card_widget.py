# ruff: noqa: F811  (ip, testing_shell: the fixtures of test_magic, imported so pytest finds them)
"""The card's ipywidgets view (for frontends without our extension), in a shell whose front end draws widgets.

A click is delivered as ipywidgets delivers a view's ``model.send(...)``: a custom message on the widget's
comm. The browser side (the view drawn in JupyterLab with the extension disabled) is
tests/test_browser_widget.py.
"""

from __future__ import annotations

import re
from html import unescape

import pytest
from test_magic import APPROVE, card, cell, ip, sandbox, testing_shell  # noqa: F401

from jupyter_sandbox.notebook import cards as card_registry
from jupyter_sandbox.notebook.card_doc import CARD_MIME
from jupyter_sandbox.notebook.card_widget import WIDGET_MIME, CardView

TWO = """
const a = (await actions.send({to: "ana"})).sent
const b = (await actions.send({to: "bo"})).sent
return [a, b]
"""


@pytest.fixture
def widgets(monkeypatch):
    """A kernel whose front end may draw widgets (the test shell has none: its widgets' comms go nowhere)."""
    monkeypatch.setattr(card_registry, "widgets_available", lambda: True)


def click(view: CardView, **msg) -> None:
    view._handle_msg({"content": {"data": {"method": "custom", "content": msg}}, "buffers": []})


def pending_id(view: CardView) -> str:
    return view.doc["pending"][0]["id"]


def test_a_waiting_runs_output_carries_the_widget_view_beside_the_card_and_its_html(ip, widgets):
    cell(ip, "-o out", APPROVE)
    shown = card()
    bundle = shown.bundle(shown.doc)
    assert {CARD_MIME, "text/html", "text/plain", WIDGET_MIME} <= set(bundle)
    assert bundle[WIDGET_MIME]["model_id"] == shown.view.model_id
    assert shown.view.doc["pending"] == shown.doc["pending"]


def test_without_a_kernel_there_is_no_widget_view(ip):
    cell(ip, "-o out", APPROVE)
    assert card().view is None and WIDGET_MIME not in card().bundle(card().doc)


def test_approve_from_the_widget_view_completes_the_run_and_closes_the_view(ip, widgets):
    cell(ip, "-o out", APPROVE)
    shown = card()
    view = shown.view
    click(view, type="answer", interrupt_id=pending_id(view), choice="approve")
    assert ip.user_ns["out"] == {"sent": "ana"} and shown.doc["status"] == "completed"
    answered = shown.doc["answered"][0]
    assert answered["approved"] and answered["via"] == "card" and answered["by"] == sandbox().identity
    assert shown.view is None and view.comm is None  # closed: the output no longer names it
    assert WIDGET_MIME not in shown.bundle(shown.doc)


def test_reject_with_a_reason_from_the_widget_view(ip, widgets):
    cell(ip, "-o out", APPROVE)
    view = card().view
    click(view, type="answer", interrupt_id=pending_id(view), choice="reject", reason="not today")
    assert ip.user_ns["out"] == {"rejected": "send was rejected: not today"} and ip.user_ns["calls"]["send"] == []


def test_edit_from_the_widget_view_runs_the_edited_input(ip, widgets):
    cell(ip, "-o out", APPROVE)
    view = card().view
    click(view, type="answer", interrupt_id=pending_id(view), choice="edit", edited={"to": "bob"})
    assert ip.user_ns["calls"]["send"] == [{"to": "bob"}] and ip.user_ns["out"] == {"sent": "bob"}


def test_a_second_click_on_a_decided_interrupt_is_refused_and_says_who_decided(ip, widgets):
    cell(ip, "-o out", TWO)
    shown = card()
    view = shown.view
    first = pending_id(view)
    click(view, type="answer", interrupt_id=first, choice="approve")
    assert shown.doc["status"] == "paused" and pending_id(view) != first  # the second send waits now
    click(view, type="answer", interrupt_id=first, choice="reject")
    by = sandbox().identity
    assert view.doc["notice"] == f"interrupt {first} was already approved by {by} via card: this answer was not given"
    assert ip.user_ns["calls"]["send"] == [{"to": "ana"}] and len(shown.doc["answered"]) == 1
    click(view, type="answer", interrupt_id=pending_id(view), choice="approve")  # the next click clears it
    assert ip.user_ns["out"] == ["ana", "bo"] and "notice" not in shown.doc


def test_the_approvers_policy_holds_for_the_widget_view(ip, widgets, monkeypatch):
    monkeypatch.setattr(sandbox()._engine, "approvers", lambda who, via, interrupt: via != "card")
    cell(ip, "-o out", APPROVE)
    view = card().view
    interrupt = pending_id(view)
    click(view, type="answer", interrupt_id=interrupt, choice="approve")
    assert view.doc["notice"].startswith("AnswerRefused: ")
    assert ip.user_ns["calls"]["send"] == [] and [p["id"] for p in view.doc["pending"]] == [interrupt]


def test_a_message_that_is_no_click_answers_nothing(ip, widgets):
    cell(ip, "-o out", APPROVE)
    view = card().view
    view._handle_msg({"content": {"data": {"method": "custom", "content": ["approve"]}}, "buffers": []})
    click(view, type="answer", interrupt_id=7, choice="approve")
    assert view.doc["notice"] == "no interrupt has the id 7: nothing was answered"
    click(view, type="answer", interrupt_id=pending_id(view), choice="delete")
    assert ip.user_ns["calls"]["send"] == [] and card().doc["status"] == "paused"
    assert view.doc["notice"].startswith("ValueError: unknown choice 'delete'")


def test_the_full_journal_comes_back_to_the_view_that_asked(ip, widgets, monkeypatch):
    cell(ip, "-o out", APPROVE)
    view = card().view
    sent = []
    monkeypatch.setattr(view, "send", lambda msg, buffers=None: sent.append(msg))
    click(view, type="journal")
    assert [m["type"] for m in sent] == ["journal"] and any(r.get("name") == "fetch" for r in sent[0]["rows"])


def test_the_static_card_says_how_to_answer_from_a_cell_and_that_command_works(ip):
    cell(ip, "--name later -o out", APPROVE)
    html = card().bundle(card().doc)["text/html"]
    how = re.search(r'data-role="how">.*?<code>(.*?)</code>', html)
    assert how, html
    command = unescape(how.group(1))
    assert command == f"%sandbox resume {card().run_id} --id {card().doc['pending'][0]['id']} --answer true"
    cell(ip, command, None)
    assert ip.user_ns["calls"]["send"] == [{"to": "ana", "n": 3}]
    assert card().doc["status"] == "completed"
