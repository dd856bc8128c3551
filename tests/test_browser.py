"""End to end in a real JupyterLab and Chromium: highlight, run, approve by click, resume, timeline.

JupyterLab runs on 127.0.0.1 on a free port with a temporary root, and pip's
playwright drives Debian's chromium (headless; installed if missing: a missing
browser fails the test, it never skips). The notebook loads the extension,
registers an ordinary action and an approval action, and runs a ``%%sandbox``
cell that calls both. The test checks that the cell's editor is highlighted as
JavaScript, clicks Approve in the page, waits for the resumed run's output and
for the timeline's replayed and live entries, re-runs the cell that prints the
``-o`` variable, saves a screenshot (its path is printed: run with ``-s``) and
shuts JupyterLab down, checking that no process is left behind.

Run alone: ``python -m pytest tests/test_browser.py -m browser -q -s``.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from browser_support import CHROMIUM_ARGS, JupyterLab, alive, cmdline, descendants, ensure_chromium

pytestmark = [pytest.mark.browser, pytest.mark.timeout(150)]

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

SETUP_CELL, SANDBOX_CELL, SHOW_CELL = 1, 2, 3

KERNEL_IDLE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return Boolean(kernel && kernel.status === 'idle' && panel.content && panel.content.widgets.length === %d);
}"""

# CodeMirror's highlighted tokens of a cell's editor, in order: [[text, className, color], ...].
TOKENS = """(cell) => [...cell.querySelectorAll('.cm-content .cm-line span')]
  .filter((s) => s.children.length === 0).map((s) => [s.textContent, s.className, getComputedStyle(s).color])"""


def write_notebook(path, store):
    nb = new_notebook(cells=[
        new_code_cell("%load_ext jupyter_sandbox"),
        new_code_cell(SETUP.format(store=str(store))),
        new_code_cell(SCRIPT),
        new_code_cell(SHOW),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


def token_class(tokens, word):
    return next((cls for text, cls, _ in tokens if text == word), None)


def test_approve_in_jupyterlab(tmp_path):
    """The whole flow in JupyterLab 4, and the highlighting in Notebook 7 on the same server."""
    from playwright.sync_api import expect, sync_playwright

    started = time.monotonic()
    chromium = ensure_chromium()
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    write_notebook(root / "e2e.ipynb", tmp_path / "store" / "runs.sqlite")
    shot = tmp_path / "jupyter_sandbox_e2e.png"
    baseline = set(descendants(os.getpid()))
    ours: dict[int, int] = {}  # every process this test started (and their children): pid -> starttime
    left: dict[int, str] = {}

    lab = JupyterLab(root, home)
    pw = browser = page = None
    try:
        lab.start()
        pw = sync_playwright().start()
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 2400})
        page.set_default_timeout(30_000)
        expect.set_options(timeout=30_000)
        page.goto(f"{lab.url}/lab/tree/e2e.ipynb")
        page.wait_for_function(KERNEL_IDLE % 4, timeout=45_000)
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        expect(cells).to_have_count(4)
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
        assert token_class(py_tokens, "import") == keyword, py_tokens
        # `const` is no Python keyword: highlighted as one only by the JavaScript grammar.
        assert token_class(js_tokens, "const") == keyword, f"`const` is not a keyword in the %%sandbox cell: {js_tokens}"
        assert token_class(js_tokens, "await") == keyword, js_tokens
        assert token_class(js_tokens, "return") == keyword, js_tokens
        plain = cells.nth(SANDBOX_CELL).locator(".cm-content").evaluate("(el) => getComputedStyle(el).color")
        const_color = next(color for text, _, color in js_tokens if text == "const")
        assert const_color != plain, f"keyword colour {const_color} is the plain text colour"

        # 2. Run every cell: the run pauses on the approval action and the cell shows the panel.
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        sandbox_out = cells.nth(SANDBOX_CELL).locator(".jp-Cell-outputArea")
        expect(cells.nth(SETUP_CELL).locator(".jp-Cell-outputArea")).to_contain_text(f"kernel prefix: {sys.prefix}")
        approve = sandbox_out.get_by_role("button", name=re.compile(r"\bApprove$"))  # the name starts with the icon's glyph
        expect(approve).to_be_visible()
        expect(sandbox_out).to_contain_text("send_email needs approval")
        expect(sandbox_out.locator('.jsbx-status[data-status="interrupted"]').first).to_be_visible()
        expect(cells.nth(SHOW_CELL).locator(".jp-Cell-outputArea")).to_contain_text("result = (not set yet) | sent to []")
        page.wait_for_function(KERNEL_IDLE % 4)
        lab.remember()

        # 3. A real click on Approve resumes the run by replay, in the panel.
        approve.click()
        expect(approve).to_be_disabled()
        expect(sandbox_out).to_contain_text("resumed after send_email")
        expect(sandbox_out.locator('.jsbx-status[data-status="completed"]').first).to_be_visible()
        expect(sandbox_out).to_contain_text('"delivered": "ana@example.com"')
        badges = sandbox_out.locator(".jsbx-status").evaluate_all(
            "els => els.map(e => getComputedStyle(e).backgroundColor)")
        assert badges and all(c not in ("rgba(0, 0, 0, 0)", "transparent") for c in badges), \
            f"a status badge has no colour: {badges}"

        # 4. The timeline shows attempt 2 with replayed entries (lookup, not run again) and live ones (send_email).
        timeline = sandbox_out.locator(".jsbx-timeline")
        expect(timeline).to_have_count(1)  # the resume reuses the cell's timeline
        expect(timeline.locator('.jsbx-attempt-head[data-attempt="2"]')).to_contain_text("replayed from the journal")
        replayed_group = timeline.locator("details.jsbx-replayed")
        expect(replayed_group).to_have_count(1)
        replayed_group.locator(":scope > summary").click()  # open it, as a reader would
        replayed = replayed_group.locator('.jsbx-entry[data-mark="replayed"]')
        expect(replayed.first).to_be_visible()
        expect(replayed_group).to_contain_text("lookup")
        live = timeline.locator('.jsbx-part[data-attempt="2"] .jsbx-entry[data-mark="live"]')
        expect(live.first).to_be_visible()
        expect(timeline.locator('.jsbx-part[data-attempt="2"]').last).to_contain_text("send_email")
        n_replayed, n_live = replayed.count(), live.count()
        assert n_replayed >= 2 and n_live >= 1, (n_replayed, n_live)

        # The -o variable was set by the click's resume: re-run the cell that prints it.
        page.evaluate("""() => {
          const notebook = window.jupyterapp.shell.currentWidget.content;
          notebook.activeCellIndex = %d;
          window.jupyterapp.commands.execute('notebook:run-cell');
        }""" % SHOW_CELL)
        expect(cells.nth(SHOW_CELL).locator(".jp-Cell-outputArea")).to_contain_text(
            "result = {'delivered': 'ana@example.com', 'rows': 3} | sent to ['ana@example.com']")

        # 5. The screenshot: the sandbox cell's editor, the resumed output and the opened timeline.
        # The page is tall enough for the whole notebook; start from its top.
        page.evaluate("() => window.jupyterapp.shell.currentWidget.content.node.scrollTo(0, 0)")
        page.screenshot(path=str(shot))
        print(f"\nscreenshot: {shot}  ({n_replayed} replayed, {n_live} live entries; "
              f"{time.monotonic() - started:.1f} s before shutdown)")

        # 6. Notebook 7, served by the same server, highlights the same notebook the same way.
        nb7 = browser.new_page(viewport={"width": 1280, "height": 1600})
        nb7.goto(f"{lab.url}/notebooks/e2e.ipynb")
        nb7_cells = nb7.locator(".jp-Notebook .jp-Cell")
        expect(nb7_cells).to_have_count(4)
        for cell, word in ((SANDBOX_CELL, "const"), (SETUP_CELL, "def")):  # each editor highlights as it renders
            nb7_cells.nth(cell).locator(".cm-line span", has_text=re.compile(rf"^{word}$")).first.wait_for(
                state="attached", timeout=15_000)
        nb7_py, nb7_js = nb7_cells.nth(SETUP_CELL).evaluate(TOKENS), nb7_cells.nth(SANDBOX_CELL).evaluate(TOKENS)
        nb7_keyword = token_class(nb7_py, "def")
        assert nb7_keyword, f"`def` is not highlighted in Notebook 7's Python cell: {nb7_py}"
        assert token_class(nb7_js, "const") == nb7_keyword, f"Notebook 7: `const` is no keyword: {nb7_js}"
        lab.remember()
        nb7.close()
    except BaseException as exc:
        if page is not None:
            try:
                page.screenshot(path=str(shot))
            except Exception:
                pass
        print(f"\nscreenshot (at failure): {shot}\njupyter lab log tail:\n{lab.log_tail()}")
        if hasattr(exc, "add_note"):
            exc.add_note(f"screenshot: {shot}; JupyterLab log: {lab.log_path}")
        raise
    finally:
        expect.set_options(timeout=5_000)  # playwright's default, for any later test
        ours.update({p: s for p, s in descendants(os.getpid()).items() if p not in baseline and p != os.getpid()})
        if browser is not None:
            browser.close()
        if pw is not None:
            pw.stop()
        left = lab.stop()
        ours.update(lab.seen)
        time.sleep(0.2)
        left.update({p: cmdline(p) for p in alive(ours)})
        for pid in left:  # don't leave them to the next test, even when failing
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if left or lab.escalated:
            print(f"left behind: {left}; forced: {lab.escalated}")
    assert not left, f"processes left behind: {left}; screenshot: {shot}"
    assert not lab.escalated, f"shutdown needed force: {lab.escalated}; screenshot: {shot}"
    print(f"whole test: {time.monotonic() - started:.1f} s; {len(ours)} processes started, none left")
