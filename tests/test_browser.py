"""End to end in a real JupyterLab and Chromium: highlighting, and the run card live, after a restart and a reload.

JupyterLab runs on 127.0.0.1 on a free port with a temporary root, and pip's
playwright drives Debian's chromium (headless; installed if missing: a missing
browser fails the test, it never skips). One server and one notebook serve
every check, in order: the ``%%sandbox`` cell is highlighted as JavaScript; a
click on Approve turns the same card completed in place; a run resumed from
another cell (``%sandbox resume``) turns the first cell's card completed;
three answers leave one card with three decisions and no nesting; a
5,000-entry run's saved output stays under 256 KB; after a kernel restart and
a page reload no output reads "model not found", an old card's Approve is
disabled with a hint until ``%load_ext`` runs and then resumes the run; the
same notebook in Notebook 7 approves from its card; the dark theme. The
screenshots are saved under /tmp/cards/ (their paths are printed: run with
``-s``) and JupyterLab is shut down, no process left behind.

Run alone: ``python -m pytest tests/test_browser.py -m browser -q -s``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import browser_support
import nbformat
import pytest
from browser_support import KERNEL_IDLE, lab_session

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]
SHOTS = Path("/tmp/cards")

SETUP = """\
import sys
import jupyter_sandbox as js
%config SandboxMagics.store = {store!r}
sent = []

@js.action
def lookup(query):
    return {{"rows": 3, "query": query}}

@js.action(approval=True)
def send_email(message):
    sent.append(message)
    return {{"sent_to": message["to"]}}

print("kernel prefix:", sys.prefix)
"""

SCRIPT = """\
%%sandbox -o result
const found = await actions.lookup({q: "weekly report"})
console.log(`found ${found.rows} rows`)
const receipt = await actions.send_email({to: "ana@example.com", rows: found.rows})
return {delivered: receipt.sent_to, rows: found.rows}
"""

SHOW = 'print("result =", globals().get("result", "(not set yet)"), "| sent to", [m["to"] for m in sent])'
RAFFLE = '%%sandbox --name raffle -o raffle_out\nreturn await actions.send_email({to: "raffle@example.com"})'
RESUME = "%sandbox resume raffle --answer true"
THREE = (
    "%%sandbox --name three -o three_out\nconst got = []\n"
    'for (const to of ["a", "b", "c"]) got.push((await actions.send_email({to})).sent_to)\nreturn got'
)
BIG = (
    "%%sandbox --name big --journal-entries 6000\nlet s = 0\n"
    "for (let i = 0; i < 2500; i++) s = await actions.lookup(i).then((r) => s + r.rows)\nreturn s"
)
LATER = '%%sandbox --name later\nreturn await actions.send_email({to: "later@example.com"})'
NB7 = '%%sandbox --name nb7\nreturn await actions.send_email({to: "nb7@example.com"})'
CELLS = ["%load_ext jupyter_sandbox", None, SCRIPT, SHOW, RAFFLE, RESUME, THREE, BIG, LATER, NB7]
LOAD_CELL, SETUP_CELL, SANDBOX_CELL, SHOW_CELL, RAFFLE_CELL, RESUME_CELL, THREE_CELL, BIG_CELL, LATER_CELL, NB7_CELL = (
    range(len(CELLS))
)

# CodeMirror's highlighted tokens of a cell's editor, in order: [[text, className, color], ...].
TOKENS = """(cell) => [...cell.querySelectorAll('.cm-content .cm-line span')]
  .filter((s) => s.children.length === 0).map((s) => [s.textContent, s.className, getComputedStyle(s).color])"""


def write_notebook(path, store):
    browser_support.write_notebook(path, [c if c is not None else SETUP.format(store=str(store)) for c in CELLS])


def run_cells(page, *indexes):
    """Run these cells (in order), as a user selecting each and pressing Shift+Enter would."""
    browser_support.run_cells(page, len(CELLS), *indexes)


def token_class(tokens, word):
    return next((cls for text, cls, _ in tokens if text == word), None)


def card_of(cells, i):
    return cells.nth(i).locator(".jp-Cell-outputArea .jsbx-card")


def test_the_run_card_in_jupyterlab_and_notebook_7(tmp_path):
    """The whole flow in JupyterLab 4, then Notebook 7 on the same server."""
    from playwright.sync_api import expect

    started = time.monotonic()
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    write_notebook(root / "e2e.ipynb", tmp_path / "store" / "runs.sqlite")
    shot = SHOTS / "lab-light.png"
    SHOTS.mkdir(parents=True, exist_ok=True)
    n = len(CELLS)
    with lab_session(root, home, expect_ms=30_000, failure_shot=shot) as session:
        lab, browser = session.lab, session.browser
        page = session.open("e2e.ipynb", n, width=1280, height=3000, timeout_ms=30_000, idle_ms=45_000)
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        expect(cells).to_have_count(n)
        lab.remember()

        # 1. The %%sandbox cell is highlighted as JavaScript; the Python cell as Python.
        highlighted = cells.nth(SANDBOX_CELL).locator(".cm-line span", has_text=re.compile(r"^const$"))
        try:  # CodeMirror highlights as it parses: give it a moment
            highlighted.first.wait_for(state="attached", timeout=15_000)
        except Exception:
            pass  # the assertions below say what is missing
        py_tokens = cells.nth(SETUP_CELL).evaluate(TOKENS)
        js_tokens = cells.nth(SANDBOX_CELL).evaluate(TOKENS)
        keyword = token_class(py_tokens, "def")
        assert keyword, f"`def` is not highlighted in the Python cell: {py_tokens}"
        assert token_class(js_tokens, "const") == keyword, f"`const` is no keyword in the %%sandbox cell: {js_tokens}"

        # 2. Run every cell: each paused run's card shows Approve; the raffle, resumed by the next cell, is completed.
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        expect(cells.nth(SETUP_CELL).locator(".jp-Cell-outputArea")).to_contain_text(f"kernel prefix: {sys.prefix}")
        card = card_of(cells, SANDBOX_CELL)
        approve = card.locator('button[data-act="approve"]')
        expect(approve).to_be_enabled()  # live: the renderer attached over the comm
        expect(card).to_contain_text("send_email needs approval")
        expect(card.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "paused")
        page.wait_for_function(KERNEL_IDLE % n, timeout=60_000)
        raffle = card_of(cells, RAFFLE_CELL)
        expect(raffle.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        expect(raffle.locator('button[data-act="approve"]')).to_have_count(0)
        lab.remember()

        # 3. A real click on Approve turns the same card completed, in place: one card, the decision, the output.
        approve.click()
        expect(card.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        expect(card).to_contain_text('"delivered": "ana@example.com"')
        expect(card.locator(".jsbx-answered")).to_contain_text("send_email approved")
        expect(cells.nth(SANDBOX_CELL).locator(".jsbx-card")).to_have_count(1)
        run_cells(page, SHOW_CELL)  # -o was filled by the click's resume
        expect(cells.nth(SHOW_CELL).locator(".jp-Cell-outputArea")).to_contain_text(
            "result = {'delivered': 'ana@example.com', 'rows': 3}"
        )

        # 4. Three answers: one card, three decisions, no nested card.
        three = card_of(cells, THREE_CELL)
        for k in range(3):
            button = three.locator('button[data-act="approve"]:enabled')
            expect(button).to_have_count(1)
            button.click()
            expect(three.locator(".jsbx-answered")).to_have_count(k + 1)
        expect(three.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        expect(cells.nth(THREE_CELL).locator(".jsbx-card")).to_have_count(1)
        expect(cells.nth(THREE_CELL).locator(".jsbx-card .jsbx-card")).to_have_count(0)
        expect(card_of(cells, BIG_CELL)).to_contain_text("lookup × 2,500")
        # one card up close: three decisions
        cells.nth(THREE_CELL).locator(".jp-Cell-outputArea").screenshot(path=str(SHOTS / "lab-light-card.png"))
        page.evaluate("() => window.jupyterapp.shell.currentWidget.content.node.scrollTo(0, 0)")
        page.screenshot(path=str(shot), full_page=True)

        # 5. Save; the 5,000-entry run's saved output is small.
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        time.sleep(1.0)
        saved = nbformat.read(root / "e2e.ipynb", as_version=4)
        big_size = len(json.dumps(saved.cells[BIG_CELL].outputs))
        assert big_size < 256 * 1024, big_size
        widget_views = {
            i
            for i, c in enumerate(saved.cells)
            for o in c.outputs
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        }
        assert widget_views <= {LATER_CELL, NB7_CELL}, widget_views  # only runs still waiting carry the widget view

        # 6. Restart the kernel and reload the page: no "model not found"; the old card waits for %load_ext.
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
        page.reload()
        page.wait_for_function(KERNEL_IDLE % n, timeout=45_000)
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        later = card_of(cells, LATER_CELL)
        expect(later.locator('button[data-act="approve"]')).to_be_disabled()
        expect(later.locator('[data-role="hint"]')).to_contain_text("%load_ext jupyter_sandbox")
        assert "model not found" not in page.inner_text("body")
        run_cells(page, LOAD_CELL, SETUP_CELL)  # the actions are Python: the new kernel registers them again
        expect(later.locator('button[data-act="approve"]')).to_be_enabled()
        later.locator('button[data-act="approve"]').click()
        expect(later.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        assert "model not found" not in page.inner_text("body")
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")

        # 7. The dark theme.
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        time.sleep(0.5)
        # the output areas, not the cards: a card redraws its node when a newer document arrives
        cells.nth(THREE_CELL).locator(".jp-Cell-outputArea").screenshot(path=str(SHOTS / "lab-dark-card.png"))
        cells.nth(NB7_CELL).locator(".jp-Cell-outputArea").screenshot(path=str(SHOTS / "lab-dark-pending.png"))
        page.screenshot(path=str(SHOTS / "lab-dark.png"), full_page=True)
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        lab.remember()

        # 8. Notebook 7 on the same server and kernel: the saved cards render, and one approves from its card.
        nb7 = browser.new_page(viewport={"width": 1280, "height": 3000})
        nb7.goto(f"{lab.url}/notebooks/e2e.ipynb")
        nb7_cells = nb7.locator(".jp-Notebook .jp-Cell")
        expect(nb7_cells).to_have_count(n)
        nb7_card = card_of(nb7_cells, NB7_CELL)
        expect(nb7_card.locator('button[data-act="approve"]')).to_be_enabled(timeout=45_000)
        nb7_card.locator('button[data-act="approve"]').click()
        expect(nb7_card.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        assert "model not found" not in nb7.inner_text("body")
        nb7.screenshot(path=str(SHOTS / "notebook7.png"), full_page=True)
        lab.remember()
        nb7.close()
        print(
            f"\nscreenshots: {SHOTS}/lab-light.png, lab-dark.png, notebook7.png; big card saved {big_size} bytes; "
            f"{time.monotonic() - started:.1f} s before shutdown"
        )
    assert not lab.escalated, f"shutdown needed force: {lab.escalated}"
    print(f"whole test: {time.monotonic() - started:.1f} s; {len(session.ours)} processes started, none left")
