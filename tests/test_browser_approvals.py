"""In a real JupyterLab and Chromium: Edit & approve on a run card (a redraw meanwhile keeps the typed edit, its
focus and caret), and the card then says who approved,
how and when, and shows the input that ran with its difference from the proposal (light and dark theme).

Screenshots: /tmp/shots/approvals-light.png and approvals-dark.png (their paths are printed with ``-s``).
Run alone: ``python -m pytest tests/test_browser_approvals.py -m browser -q -s``.
"""

from __future__ import annotations

import time

import pytest
from browser_support import KERNEL_IDLE, SHOTS, lab_session, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

SETUP = """\
import os
os.environ["JUPYTERHUB_USER"] = "ada@lab"  # who approves: before the notebook's Sandbox exists
import jupyter_sandbox as js
%config SandboxMagics.store = {store!r}
paid = []

@js.action(approval=True)
def pay(order):
    paid.append(order)
    return {{"paid": order["total"], "to": order["to"]}}
"""
PAY = '%%sandbox --name refund -o out\nreturn await actions.pay({total: 120, to: "bo"})'
SHOW = 'print("paid", paid)'
CELLS = ["%load_ext jupyter_sandbox", None, PAY, SHOW]
PAY_CELL, SHOW_CELL = 2, 3

# The kernel redraws every card of this kernel (as a change to their run would), without the page's focus moving.
REDRAW = """() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.requestExecute({
  code: 'from jupyter_sandbox.notebook.cards import cards\\nfor c in cards(): c.refresh()', silent: true}).done"""


def test_the_card_after_edit_and_approve_shows_who_approved_and_the_input_that_ran(tmp_path):
    from playwright.sync_api import expect

    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    store = tmp_path / "store" / "runs.sqlite"
    write_notebook(root / "approve.ipynb", [c if c is not None else SETUP.format(store=str(store)) for c in CELLS])
    light, dark = SHOTS / "approvals-light.png", SHOTS / "approvals-dark.png"
    with lab_session(root, home, expect_ms=30_000, failure_shot=SHOTS / "approvals-failure.png") as session:
        lab = session.lab
        page = session.open("approve.ipynb", len(CELLS), timeout_ms=30_000, idle_ms=45_000)
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        expect(cells).to_have_count(len(CELLS))
        lab.remember()
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        card = cells.nth(PAY_CELL).locator(".jp-Cell-outputArea .jsbx-card")
        expect(card.locator('button[data-act="approve"]')).to_be_enabled()
        page.wait_for_function(KERNEL_IDLE % len(CELLS), timeout=60_000)
        lab.remember()

        # Edit & approve: open the editor, change the total; a redraw of the card meanwhile (the kernel sends
        # the run's card again) keeps what was typed, the focus and the caret; then click.
        edited = '{"total": 90, "to": "bo"}'
        card.locator("details.jsbx-edit summary").click()
        box = card.locator("textarea.jsbx-edited")
        box.fill(edited)
        box.evaluate("(el) => el.setSelectionRange(12, 12)")  # the caret after "90"
        version = card.get_attribute("data-version")
        page.evaluate(REDRAW)
        expect(card).not_to_have_attribute("data-version", version)  # redrawn: a new document, new nodes
        expect(box).to_have_value(edited)
        expect(box).to_be_focused()
        assert box.evaluate("(el) => [el.selectionStart, el.selectionEnd]") == [12, 12]
        box.press_sequentially("5")  # typing goes on where it was: the total is now 905
        expect(box).to_have_value('{"total": 905, "to": "bo"}')
        box.fill(edited)
        card.locator('button[data-act="edit"]').click()
        expect(card.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        answered = card.locator(".jsbx-answered")
        expect(answered).to_contain_text("pay approved by ada@lab via card, ")
        expect(answered).to_contain_text("ran with")
        expect(answered.locator('[data-role="changes"]')).to_contain_text("$.total: 120 → 90")
        text = answered.inner_text()
        assert "proposed" in text and '"total": 120' in text and '"total": 90' in text, text
        page.evaluate("(i) => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i; }", SHOW_CELL)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")
        expect(cells.nth(SHOW_CELL).locator(".jp-Cell-outputArea")).to_contain_text("paid [{'total': 90, 'to': 'bo'}]")
        cells.nth(PAY_CELL).locator(".jp-Cell-outputArea").screenshot(path=str(light))

        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        time.sleep(0.5)
        cells.nth(PAY_CELL).locator(".jp-Cell-outputArea").screenshot(path=str(dark))
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        lab.remember()
        print(f"\nscreenshots: {light}, {dark}")
