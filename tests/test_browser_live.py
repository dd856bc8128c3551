"""End to end in a real JupyterLab, Notebook 7 and Chromium: the card while its run goes, and a quiet kernel.

The running card: a run held at two gates (files the test creates) shows,
under its cell and while the cell still runs, a progress bar with what
``ctx.progress`` said last, the step the store has it in, and a timeline that grew
between the gates; it ends completed with no bar. No "make this card live"
hint shows meanwhile. A failing action's card names the line of the call
and holds its Python traceback (the action's frames), collapsed until
clicked. Quiet until asked: after a kernel restart and a reload,
each saved card asks the new kernel once (counted on the page's
websockets), however many times the kernel goes busy and idle; a click on
"try again" asks once more; ``%load_ext`` makes the cards live without another
refusal. Screenshots (light and dark) go to /tmp/shots/.

Run alone: ``python -m pytest tests/test_browser_live.py -m browser -q -s``.
"""

from __future__ import annotations

import collections
import re
import time

import browser_support
import pytest
from browser_support import KERNEL_IDLE, SHOTS, lab_session, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SETUP = """\
import os, time
import jupyter_sandbox as js
%config SandboxMagics.store = {store!r}
GATES = {gates!r}

@js.action
def work(i):
    gate = os.path.join(GATES, f"gate-{{i}}")
    if i in (3, 7):  # held until the test opens the gate
        while not os.path.exists(gate):
            time.sleep(0.05)
    return {{"item": i}}

@js.action(approval=True)
def publish(report):
    return {{"published": report}}

def ratio(x):
    return x / 0

@js.action
def divide(x):
    return ratio(x)
"""

RUN = """\
%%sandbox --name gated
for (let i = 0; i < 10; i++) {
  await ctx.step(`item ${i}`, () => actions.work(i))
  ctx.progress({done: i + 1, total: 10, message: "working"})
}
return "done"
"""
PENDING = '%%sandbox --name later\nreturn await actions.publish("weekly")'
IDLE = "x = 1"
FAIL = "%%sandbox --name failing\nconst x = 1\nreturn await actions.divide(x)"
CELLS = ["%load_ext jupyter_sandbox", None, RUN, PENDING, IDLE, FAIL]
LOAD, SETUP_CELL, RUN_CELL, PENDING_CELL, IDLE_CELL, FAIL_CELL = range(len(CELLS))


def run_cells(page, *indexes, wait=True):
    browser_support.run_cells(page, len(CELLS), *indexes, wait=wait)


def card_of(cells, i):
    return cells.nth(i).locator(".jp-Cell-outputArea .jsbx-card")


def entries_shown(card) -> int:
    text = card.locator(".jsbx-card-timeline > summary").inner_text()
    return int(re.search(r"([\d,]+) entr", text).group(1).replace(",", ""))


class CommOpens:
    """The ``comm_open`` messages to the cards' target a page sends on its kernels' websockets, by run id."""

    def __init__(self, page):
        self.runs: collections.Counter[str] = collections.Counter()
        page.on("websocket", lambda ws: ws.on("framesent", self._frame))

    def _frame(self, payload):
        data = payload.encode() if isinstance(payload, str) else payload
        if b"comm_open" in data and b"jupyter_sandbox.card" in data:
            found = re.search(rb'"run_id":\s*"([^"]+)"', data)
            self.runs[found.group(1).decode() if found else "?"] += 1

    def reach(self, run_id: str, n: int, what: str) -> None:
        wait_until(lambda: self.runs[run_id] >= n, what)


def wait_until(check, what, timeout=60.0):
    """Wait for ``check()`` to hold; the timeout only bounds a hang."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_a_running_card_is_live_and_a_saved_card_asks_its_kernel_once(tmp_path):
    from playwright.sync_api import expect

    root, home, gates = tmp_path / "root", tmp_path / "home", tmp_path / "gates"
    for d in (root, home, gates):
        d.mkdir()
    setup = SETUP.format(store=str(tmp_path / "runs.sqlite"), gates=str(gates))
    write_notebook(root / "live.ipynb", [c if c is not None else setup for c in CELLS])
    n = len(CELLS)
    with lab_session(root, home) as session:
        lab = session.lab
        for frontend in ("lab", "notebook7"):
            for g in gates.iterdir():
                g.unlink()
            page = session.open("live.ipynb", n, frontend=frontend)
            cells = page.locator(".jp-Notebook .jp-Cell")
            expect(cells).to_have_count(n)
            run_cells(page, LOAD, SETUP_CELL)
            lab.remember()

            # The run held at its first gate: the bar says 3 of 10, the step is item 3, no hint.
            run_cells(page, RUN_CELL, wait=False)
            card = card_of(cells, RUN_CELL)
            bar = card.locator('[data-role="progress"] .jsbx-progress')
            expect(bar).to_contain_text("working · 3 / 10 · 30%")
            # the step as the store has it: its end is written with the next call's result
            expect(card.locator('[data-role="progress"]')).to_contain_text(re.compile(r"step item [23](?!\d)"))
            expect(card.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "running")
            expect(card.locator('[data-role="hint"]')).to_have_count(0)
            at_first = entries_shown(card)
            cells.nth(RUN_CELL).locator(".jp-Cell-outputArea").screenshot(
                path=str(SHOTS / f"first-hour-{frontend}-progress-light.png")
            )

            # Released: held again at 7 of 10, with a longer timeline, in the same card.
            (gates / "gate-3").touch()
            expect(bar).to_contain_text("working · 7 / 10 · 70%")
            expect(card.locator('[data-role="progress"]')).to_contain_text(re.compile(r"step item [67](?!\d)"))
            assert entries_shown(card) > at_first
            expect(card.locator(".jsbx-row-group, .jsbx-row-step").first).to_be_visible()
            if frontend == "lab":
                page.evaluate(
                    "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
                )
                page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
                cells.nth(RUN_CELL).locator(".jp-Cell-outputArea").screenshot(
                    path=str(SHOTS / f"first-hour-{frontend}-progress-dark.png")
                )
                page.evaluate(
                    "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
                )
            (gates / "gate-7").touch()
            expect(card.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
            expect(card.locator('[data-role="progress"]')).to_have_count(0)
            expect(cells.nth(RUN_CELL).locator(".jsbx-card")).to_have_count(1)
            page.wait_for_function(KERNEL_IDLE % n)
            run_cells(page, PENDING_CELL)
            expect(card_of(cells, PENDING_CELL).locator('button[data-act="approve"]')).to_be_enabled()

            # A failing action: the card names the line of the call, its Python traceback collapsed until clicked.
            run_cells(page, FAIL_CELL)
            failing = card_of(cells, FAIL_CELL)
            expect(failing.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "failed")
            trace = failing.locator(".jsbx-traceback").first
            expect(trace).to_have_count(1)
            expect(trace.locator("pre")).to_be_hidden()
            expect(failing).not_to_contain_text("ZeroDivisionError: ZeroDivisionError")
            expect(failing.locator(".jsbx-row-call")).to_contain_text("ZeroDivisionError: division by zero")
            trace.locator("summary").click()
            expect(trace.locator("pre")).to_be_visible()
            expect(trace.locator("pre")).to_contain_text("in ratio")
            expect(trace.locator("pre")).not_to_contain_text("jupyter_sandbox")
            expect(cells.nth(FAIL_CELL).locator(".jp-Cell-outputArea")).to_contain_text("workflow.js:3: ActionError")
            output = cells.nth(FAIL_CELL).locator(".jp-Cell-outputArea")
            output.screenshot(path=str(SHOTS / f"first-hour-{frontend}-traceback-light.png"))
            if frontend == "lab":
                page.evaluate(
                    "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
                )
                page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
                output.screenshot(path=str(SHOTS / f"first-hour-{frontend}-traceback-dark.png"))
                page.evaluate(
                    "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
                )
                page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
            if frontend == "notebook7":
                page.close()
                break

            # Quiet until asked: restart without %load_ext, reload; every saved card asks once.
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
            time.sleep(0.5)
            pending_run = card_of(cells, PENDING_CELL).get_attribute("data-run")
            opens = CommOpens(page)
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
            page.reload()
            page.wait_for_function(KERNEL_IDLE % n, timeout=60_000)
            cells = page.locator(".jp-Notebook .jp-Cell")
            pending = card_of(cells, PENDING_CELL)
            expect(pending.locator('[data-role="hint"]')).to_contain_text("%load_ext jupyter_sandbox")
            expect(card_of(cells, RUN_CELL).locator('[data-role="hint"]')).to_have_count(0)  # nothing to answer there
            opens.reach(pending_run, 1, "the saved card to ask the new kernel")
            for _ in range(5):  # busy, idle, busy, idle...: the old renderer asked again at each idle
                run_cells(page, IDLE_CELL)
            time.sleep(1.0)
            assert opens.runs[pending_run] == 1 and max(opens.runs.values()) == 1, opens.runs
            expect(pending.locator('button[data-act="approve"]')).to_be_disabled()
            pending.locator('button[data-act="connect"]').click()  # "try again": one more ask
            opens.reach(pending_run, 2, "the click to ask again")
            run_cells(page, LOAD, SETUP_CELL)  # the kernel announces itself: the cards ask, and are answered
            expect(pending.locator('button[data-act="approve"]')).to_be_enabled()
            assert opens.runs[pending_run] == 3 and max(opens.runs.values()) == 3, opens.runs
            pending.locator('button[data-act="approve"]').click()
            expect(pending.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
            page.close()
