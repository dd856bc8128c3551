"""In a real JupyterLab and Chromium: the card's ipywidgets view, for frontends without our extension.

With the extension, a waiting run's output carries the widget view too, and Lab draws our card's renderer
(ranked ahead of it), never the widget. With the extension disabled (``jupyter labextension disable`` in the
server's own config folder), Lab draws the widget view: Approve there resumes the run, which completes, and
the output becomes the static card.

Screenshots: /tmp/shots/widget-with-extension.png (our renderer), widget-light.png, widget-dark.png (the widget
view waiting) and widget-done.png (the static card after the click).
Run alone: ``python -m pytest tests/test_browser_widget.py -m browser -q -s``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import KERNEL_IDLE, SHOTS, lab_session, light_and_dark, write_notebook
from test_browser_approvals import SETUP

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
CARD_MIME = "application/vnd.jupyter-sandbox.run+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

PAY = '%%sandbox --name {name} -o out\nreturn await actions.pay({{total: 120, to: "bo"}})'
SHOW = 'print("paid", [(o["total"], o["to"]) for o in paid])'
PAY_CELL, SHOW_CELL, N_CELLS = 2, 3, 4

# The mime types of the PAY cell's outputs, from the notebook's model (what the kernel sent, not what is drawn).
OUTPUT_TYPES = """(i) => {
  const outputs = window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs;
  const found = [];
  for (let n = 0; n < outputs.length; n++) found.push(Object.keys(outputs.get(n).data));
  return found;
}"""


def notebook(path: Path, store: Path, name: str) -> None:
    write_notebook(path, ["%load_ext jupyter_sandbox", SETUP.format(store=str(store)), PAY.format(name=name), SHOW])


def test_lab_with_the_extension_draws_the_card_and_without_it_the_widget_view_approves(tmp_path):
    from playwright.sync_api import expect

    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    store = tmp_path / "store" / "runs.sqlite"
    notebook(root / "with.ipynb", store, "with-extension")
    notebook(root / "without.ipynb", store, "without-extension")
    light, dark, done = SHOTS / "widget-light.png", SHOTS / "widget-dark.png", SHOTS / "widget-done.png"

    def open_and_run(name: str):
        page.goto(f"{lab.url}/lab/tree/{name}")
        page.wait_for_function(f"() => window.jupyterapp?.shell.currentWidget?.context?.path === {name!r}")
        page.wait_for_function(KERNEL_IDLE % N_CELLS, timeout=60_000)
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        expect(cells).to_have_count(N_CELLS)
        lab.remember()
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        return cells

    with lab_session(root, home, expect_ms=30_000, failure_shot=SHOTS / "widget-failure.png") as session:
        lab = session.lab
        page = session.page = session.browser.new_page(viewport={"width": 1100, "height": 1200})
        page.set_default_timeout(30_000)

        # With the extension: the output carries the widget view, and our renderer is the one drawn.
        cells = open_and_run("with.ipynb")
        assert page.evaluate("() => window.jupyterapp.hasPlugin('jupyter-sandbox:card')")
        output = cells.nth(PAY_CELL).locator(".jp-Cell-outputArea")
        expect(output.locator('.jsbx-mime .jsbx-card button[data-act="approve"]')).to_be_enabled()
        page.wait_for_function(KERNEL_IDLE % N_CELLS, timeout=60_000)
        types = page.evaluate(OUTPUT_TYPES, PAY_CELL)
        assert any(CARD_MIME in t and WIDGET_MIME in t for t in types), types
        page.wait_for_timeout(1000)  # time for a widget view to appear, were it going to
        assert output.locator(".jsbx-widget").count() == 0
        assert output.locator(".jupyter-widgets").count() == 0
        assert output.locator(".jsbx-card").count() == 1
        output.screenshot(path=str(SHOTS / "widget-with-extension.png"))
        lab.remember()

        # Without it (disabled in the server's config, picked up by the next page load): the widget view.
        page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
        lab.disable_extension("jupyter-sandbox")
        cells = open_and_run("without.ipynb")
        assert not page.evaluate("() => window.jupyterapp.hasPlugin('jupyter-sandbox:card')")
        output = cells.nth(PAY_CELL).locator(".jp-Cell-outputArea")
        view = output.locator(".jsbx-widget")
        approve = view.locator('.jsbx-card button[data-act="approve"]')
        expect(approve).to_be_enabled()
        page.wait_for_function(KERNEL_IDLE % N_CELLS, timeout=60_000)
        assert output.locator(".jsbx-mime").count() == 0
        assert view.locator('[data-role="how"]').count() == 0  # a live card needs no other way to answer
        expect(view.locator(".jsbx-pending")).to_contain_text("pay needs approval")
        light_and_dark(page, output, light, dark)

        approve.click()
        # The run completed; its output is the static card now (the widget view left the bundle).
        static = output.locator(".jsbx-card")
        expect(static.locator(".jsbx-card-head .jsbx-status")).to_have_attribute("data-status", "completed")
        expect(output.locator(".jsbx-widget")).to_have_count(0)
        expect(static.locator(".jsbx-answered")).to_contain_text("pay approved by ada@lab via card")
        page.evaluate("(i) => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i; }", SHOW_CELL)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")
        expect(cells.nth(SHOW_CELL).locator(".jp-Cell-outputArea")).to_contain_text("paid [(120, 'bo')]")
        types = page.evaluate(OUTPUT_TYPES, PAY_CELL)
        assert all(WIDGET_MIME not in t for t in types), types
        output.screenshot(path=str(done))
        lab.remember()
        print(f"\nscreenshots: {light}, {dark}, {done}")
