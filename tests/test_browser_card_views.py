"""End to end in a real JupyterLab, Notebook 7 and Chromium: what a run card shows and does, one server for all.

A paused run exported and imported into a second store, whose copy is then approved there: the original card
stays interrupted, on its own store, and its own Approve still finishes it. A cancelled run's card resumes it
from its Resume button. A question answered from the card leaves a row with the question, the answer, who and
when. An MCP tool's approval shows the tool's input; a model's script shows on its tool card, numbered, its
failing line marked; a script out of fuel keeps its excerpt out of the title; a failed cell's error is not
repeated by its card. Screenshots of each, light and dark, in Lab and Notebook 7: /tmp/shots/card-*.png.

Run alone: ``python -m pytest tests/test_browser_card_views.py -m browser -q -s``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import browser_support
import nbformat
import pytest
from browser_support import KERNEL_IDLE, SHOTS, lab_session, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
FILES = Path(__file__).parent / "mcp_servers" / "files.py"

SETUP = """\
import os, sys, time
import jupyter_sandbox as js
%config SandboxMagics.store = {store!r}
OTHER, GATE = {other!r}, {gate!r}
sb = js.default_sandbox()

@js.action(approval=True)
def pay(order):
    return {{"paid": order["total"], "to": order["to"]}}

@js.action
def ask(question, resume=None):
    if resume is None:
        raise js.ActionInterrupt(data={{"question": question}})
    return resume.value

@js.action
def echo(x):
    return x

@js.action
def wait_gate(i):
    while not os.path.exists(GATE):  # until the test opens the gate
        time.sleep(0.05)
    return {{"through": i}}

def ratio(x):
    return x / 0

@js.action
def divide(x):
    return ratio(x)

sb.mcp("files", [sys.executable, {files!r}, "files"])
"""
PAY = '%%sandbox --name pay\nreturn await actions.pay({total: 120, to: "bo"})'
COPY = (
    "%sandbox export pay {path}\n%sandbox --store {other} import {path}\n"
    "%sandbox --store {other} resume pay --answer true"
)
ASK = '%%sandbox --name colour\nreturn await actions.ask("which colour?")'
MCP = (
    "%%sandbox --name notes\nreturn await actions.files.write_file({path: '/notes/weekly.md', "
    "text: ['# Weekly', '', '- shipped the card', '- fixed the edit box', '- next: the widget'].join('\\n')})"
)
SPIN = (  # run from Python, shown by %sandbox show: the card, not a cell's error, shows the limit
    "try:\n    sb.eval('await actions.echo(1)\\nwhile (true) {}', name='spin', limits=js.Limits(fuel_seconds=0.3))\n"
    "except js.LimitExceeded as exc:\n    print('out of fuel')\n%sandbox show spin"
)
FAIL = "%%sandbox --name failing\nconst x = 1\nreturn await actions.divide(x)"
TOOL = (
    "result = sb.tool().run({'script': 'const a = await actions.echo(2)\\n"
    "if (a > 1) throw new Error(`too big: ${a}`)\\nreturn a'})\ndisplay(result)"
)
STUCK = "%%sandbox --name stuck\nreturn await actions.wait_gate(1)"
CELLS = ["%load_ext jupyter_sandbox", None, PAY, None, ASK, MCP, SPIN, FAIL, TOOL, STUCK]
LOAD, SETUP_CELL, PAY_CELL, COPY_CELL, ASK_CELL, MCP_CELL, SPIN_CELL, FAIL_CELL, TOOL_CELL, STUCK_CELL = range(
    len(CELLS)
)

THEME = "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})"


def run_cells(page, *indexes, wait=True):
    browser_support.run_cells(page, len(CELLS), *indexes, wait=wait)


class Frontend:
    """One page of the module's server: its cells, and screenshots of an output in both themes."""

    def __init__(self, page, name):
        self.page, self.name = page, name
        self.cells = page.locator(".jp-Notebook .jp-Cell")

    def card(self, i):
        return self.cells.nth(i).locator(".jp-Cell-outputArea .jsbx-card").first

    def shoot(self, i, what):
        output = self.cells.nth(i).locator(".jp-Cell-outputArea")
        shots = []
        for theme, light in (("JupyterLab Light", "true"), ("JupyterLab Dark", "false"), ("JupyterLab Light", "true")):
            self.page.evaluate(THEME, theme)
            self.page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")
            if len(shots) < 2:
                time.sleep(0.3)  # the theme's variables settle
                path = SHOTS / f"card-{what}-{self.name}-{'light' if light == 'true' else 'dark'}.png"
                output.screenshot(path=str(path))
                shots.append(path)
        print("screenshots:", *shots)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("card-views")
    root, home = tmp / "root", tmp / "home"
    root.mkdir()
    home.mkdir()
    store, other, gate = tmp / "runs.sqlite", tmp / "elsewhere.sqlite", tmp / "gate"
    setup = SETUP.format(store=str(store), other=str(other), gate=str(gate), files=str(FILES))
    copy = COPY.format(path=str(tmp / "pay.run"), other=str(other))
    write_notebook(
        root / "views.ipynb", [setup if i == SETUP_CELL else copy if i == COPY_CELL else c for i, c in enumerate(CELLS)]
    )
    with lab_session(root, home) as session:
        yield session, {"store": store, "other": other, "gate": gate}


def open_notebook(lab, frontend):
    session, _ = lab
    return Frontend(session.open("views.ipynb", len(CELLS), frontend=frontend), frontend)


@pytest.mark.parametrize("frontend", ["lab", "notebook7"])
def test_what_a_card_shows_and_does(lab, frontend):
    from playwright.sync_api import expect

    session, paths = lab
    server = session.lab
    if paths["gate"].exists():
        paths["gate"].unlink()
    nb = open_notebook(lab, frontend)
    page = nb.page
    try:
        run_cells(page, LOAD, SETUP_CELL, PAY_CELL)
        server.remember()
        original = nb.card(PAY_CELL)
        expect(original.locator('button[data-act="approve"]')).to_be_enabled()

        # Exported, imported into a second store and approved there: the original card is left alone.
        run_cells(page, COPY_CELL)
        copy = nb.card(COPY_CELL)
        expect(copy.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        expect(copy.locator(".jsbx-card-head")).to_contain_text("elsewhere.sqlite")
        time.sleep(1.5)  # three polls of the card watcher: a card following the copy would have redrawn by now
        expect(original.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "paused")
        expect(original.locator(".jsbx-card-head")).not_to_contain_text("elsewhere.sqlite")
        expect(original.locator(".jsbx-card-head")).to_contain_text("runs.sqlite")
        nb.shoot(PAY_CELL, "export-import-original")
        original.locator('button[data-act="approve"]').click()
        expect(original.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        expect(copy.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")

        # A question answered from the card: a row with the question, the answer, who and when.
        run_cells(page, ASK_CELL)
        asked = nb.card(ASK_CELL)
        expect(asked.locator('button[data-act="approve"]')).to_be_enabled()  # live: the renderer has its document
        asked.locator("details.jsbx-edit summary").click()
        asked.locator("textarea.jsbx-edited").fill('"blue"')
        asked.locator('button[data-act="edit"]').click()
        expect(asked.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        row = asked.locator('[data-role="question"]')
        expect(row).to_contain_text(re.compile(r"\? ask answered by \S+ via card, \d\d:\d\d"))
        expect(row).to_contain_text('asked {"question": "which colour?"}')
        expect(row).to_contain_text('answer "blue"')
        expect(asked).not_to_contain_text("rejected")
        nb.shoot(ASK_CELL, "question")

        # An MCP tool's approval: its input, formatted; the tool and what its server says of it.
        run_cells(page, MCP_CELL)
        tool_input = nb.card(MCP_CELL).locator('.jsbx-pending [data-role="input"] pre').first
        expect(tool_input).to_contain_text('"path": "/notes/weekly.md"')
        expect(nb.card(MCP_CELL).locator(".jsbx-pending")).to_contain_text("MCP tool write_file of files")
        expect(nb.card(MCP_CELL).locator(".jsbx-pending")).not_to_contain_text("annotations")
        nb.shoot(MCP_CELL, "mcp-approval")

        # Out of fuel: the title is one line, the excerpt a block of its own.
        run_cells(page, SPIN_CELL)
        spin = nb.card(SPIN_CELL)
        expect(spin.locator(".jsbx-err-title")).to_contain_text("fuel-exhausted: the script ran for more than")
        expect(spin.locator(".jsbx-err-title")).not_to_contain_text("|")
        expect(spin.locator('.jsbx-error [data-role="excerpt"]')).to_contain_text("|")
        nb.shoot(SPIN_CELL, "fuel")

        # A failed cell: the error is the cell's; the card says so instead of repeating it.
        run_cells(page, FAIL_CELL)
        failing = nb.card(FAIL_CELL)
        expect(failing.locator(".jsbx-row-error")).to_contain_text("its error is shown below the cell")
        expect(failing).not_to_contain_text("ActionError")
        output = nb.cells.nth(FAIL_CELL).locator(".jp-Cell-outputArea")
        expect(output).to_contain_text("workflow.js:3: ActionError: ZeroDivisionError: division by zero")
        nb.shoot(FAIL_CELL, "failed-cell")

        # The model's script on its tool card: collapsed, numbered, the failing line marked.
        run_cells(page, TOOL_CELL)
        script = nb.card(TOOL_CELL).locator('[data-role="script"]')
        expect(script).to_contain_text("fails at line 2")
        expect(script.locator("pre")).to_be_hidden()
        script.locator("summary").click()
        expect(script.locator('.jsbx-script-line[data-error="true"]')).to_contain_text("2 if (a > 1) throw")
        nb.shoot(TOOL_CELL, "tool-script")

        # Cancelled (the kernel interrupted mid-run), then resumed from its card.
        run_cells(page, STUCK_CELL, wait=False)
        stuck = nb.card(STUCK_CELL)
        expect(stuck.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "running")
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.interrupt()")
        expect(stuck.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "cancelled")
        page.wait_for_function(KERNEL_IDLE % len(CELLS))
        resume = stuck.locator('button[data-act="resume"]')
        expect(resume).to_be_enabled()
        nb.shoot(STUCK_CELL, "cancelled")
        paths["gate"].touch()
        resume.click()
        expect(stuck.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        expect(stuck.locator(".jsbx-output")).to_contain_text('{"through": 1}')
        server.remember()
    except BaseException:
        page.screenshot(path=str(SHOTS / f"card-views-{frontend}-failure.png"))
        print(f"\njupyter lab log tail:\n{server.log_tail()}")
        raise
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.close()


def test_a_saved_notebook_carries_the_cards_css_once(lab):
    root = lab[0].lab.root
    saved = nbformat.read(root / "views.ipynb", as_version=4)
    styled = [
        i
        for i, c in enumerate(saved.cells)
        for o in c.get("outputs", [])
        if "<style" in o.get("data", {}).get("text/html", "")
    ]
    cards = [i for i, c in enumerate(saved.cells) for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    assert len(cards) >= 8 and styled == [PAY_CELL], (styled, cards)
