"""What a run card shows of questions, approvals' inputs, a model's script, limits, steps and a cell's error;
its Resume button; and its CSS carried once per notebook (card_doc.py, cards.py, card.js in QuickJS)."""

from __future__ import annotations

import asyncio
import html as htmllib
import re
import sys
import threading
import time
from pathlib import Path

from pace import bound
from test_magic import FakeComm, attach, card, cell, ip, testing_shell  # noqa: F401 (fixtures)

import jupyter_sandbox
from jupyter_sandbox import ActionInterrupt, Limits, Sandbox
from jupyter_sandbox.notebook import card_clicks, card_comm, current_session
from jupyter_sandbox.notebook import cards as card_registry
from jupyter_sandbox.notebook.card_doc import INPUT, card_document
from jupyter_sandbox.notebook.card_html import card_html
from jupyter_sandbox.notebook.cards import RunCard, styles_here

FILES = Path(__file__).parent / "mcp_servers" / "files.py"


def paused(sb: Sandbox, source: str, **kw) -> str:
    try:
        sb.eval(source, **kw)
    except jupyter_sandbox.SandboxError as exc:
        return exc.run_id
    raise AssertionError("the run did not pause")


def text_of(markup: str) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", "", markup))


def test_an_answered_question_leaves_a_row_with_the_question_the_answer_who_and_when():
    with Sandbox(":memory:", identity="ada") as sb:

        @sb.action
        def ask(question, resume=None):
            if resume is None:
                raise ActionInterrupt(data={"question": question})
            return resume.value

        run_id = paused(sb, "return await actions.ask('which colour?')")
        sb.resume(run_id, "blue")
        doc = card_document(sb, run_id)
        page = card_html(doc)
    [row] = doc["answered"]
    assert row["question"] == {"p": '{"question": "which colour?"}'} and row["value"] == {"p": '"blue"'}
    assert row["by"] == "ada" and row["via"] == "api" and re.fullmatch(r"\d\d:\d\d", row["when"])
    shown = text_of(re.search(r'<div class="jsbx-answered[^"]*" [^>]*data-role="question">.*?</div>', page).group(0))
    assert re.fullmatch(
        r'\? ask answered by ada via api, \d\d:\d\d asked \{"question": "which colour\?"\} answer "blue"', shown
    ), shown
    assert "rejected" not in text_of(page)  # a question is answered, never approved or rejected


def test_an_mcp_approval_shows_the_tools_input_formatted_not_its_annotations():
    with Sandbox(":memory:") as sb:
        sb.mcp("files", [sys.executable, str(FILES), "files"])
        body = "\n".join(f"line {i}" for i in range(30))
        run_id = paused(sb, f"return await actions.files.write_file({{path: '/notes/w.md', text: {body!r}}})")
        doc = card_document(sb, run_id)
        page = card_html(doc)
    [pending] = doc["pending"]
    assert pending["tool"] == "write_file" and pending["server"] == "files"
    assert pending["hints"] == ["destructive", "open-world"] and pending["data"] is None
    assert pending["input"]["text"].startswith('{\n  "path": "/notes/w.md",\n  "text": "line 0\\nline 1')
    box = re.search(r'<div class="jsbx-input" data-role="input">.*?</pre>', page, flags=re.S).group(0)
    assert "/notes/w.md" in text_of(box) and "line 29" in text_of(box)
    panel = re.search(r'<div class="jsbx-pending".*?<div class="jsbx-buttons">', page, flags=re.S).group(0)
    assert "annotations" not in panel and "read_only" not in panel and "chars</span>" not in panel
    assert "MCP tool write_file of files · destructive, open-world" in text_of(panel)


def test_a_long_approval_input_shows_its_first_lines_and_the_rest_behind_an_expander():
    with Sandbox(":memory:") as sb:
        sb.action(lambda rows: len(rows), name="load", approval=True)
        run_id = paused(sb, "return await actions.load(ctx.input)", input=list(range(5000)))
        doc = card_document(sb, run_id)
        page = card_html(doc)
    shown = doc["pending"][0]["input"]
    assert len(shown["text"]) == INPUT and shown["cut"] > INPUT  # bounded, and says how long it was
    head = re.search(
        r'<div class="jsbx-input" data-role="input"><span class="jsbx-meta">input</span><pre>(.*?)</pre>',
        page,
        flags=re.S,
    )
    assert head.group(1).count("\n") == 11  # twelve lines at once
    assert re.search(r'<details class="jsbx-more" data-key="input-[^"]+"><summary>\d[\d,]* more lines \(cut at', page)


def test_a_limits_excerpt_is_a_block_of_its_own_not_part_of_the_title():
    with Sandbox(":memory:") as sb:
        sb.action(lambda x: x, name="echo")
        try:
            sb.eval("await actions.echo(1)\nwhile (true) {}", limits=Limits(fuel_seconds=0.2))
        except jupyter_sandbox.SandboxError as exc:
            run_id = exc.run_id
        doc = card_document(sb, run_id)
        page = card_html(doc)
    assert "\n" in doc["error"]["message"]  # the message carries its excerpt
    title = re.search(r'<div class="jsbx-err-title">(.*?)</div>', page).group(1)
    assert "|" not in text_of(title) and "fuel-exhausted: the script ran for more than" in text_of(title)
    excerpt = re.search(r'<pre class="jsbx-source" data-role="excerpt">(.*?)</pre>', page, flags=re.S).group(1)
    assert re.search(r"^\s+\d \| ", htmllib.unescape(excerpt), flags=re.M)


def test_the_tool_card_lists_the_script_numbered_with_its_failing_line_marked():
    with Sandbox(":memory:") as sb:
        sb.action(lambda x: x, name="echo")
        result = sb.tool().run({"script": "const a = await actions.echo(1)\nthrow new Error('no ' + a)\nreturn a"})
        shown = card_html(card_document(sb, result.run_id, show_script=True))
        plain = card_html(card_document(sb, result.run_id))
    script = re.search(
        r'<details class="jsbx-script" data-key="script" data-role="script">.*?</details>', shown, flags=re.S
    )
    assert script and "fails at line 2" in script.group(0) and "open" not in script.group(0).split(">")[0]
    lines = re.findall(r'<span class="jsbx-script-line"( data-error="true")?><span class="jsbx-ln">(\d)</span>', shown)
    assert lines == [("", "1"), (' data-error="true"', "2"), ("", "3")]
    assert 'data-role="script"' not in plain  # a cell's card does not repeat the cell's script


def test_a_tool_results_card_in_the_notebook_shows_the_script(ip):  # noqa: F811 (the fixture imported above)
    result = jupyter_sandbox.notebook.defaults.default_sandbox().tool().run({"script": "return 1"})
    shown = jupyter_sandbox.notebook.tool_card.show(result)
    assert shown.doc["show_script"] is True and 'data-role="script"' in shown.bundle()["text/html"]


def test_the_live_card_shows_the_step_the_script_is_in_while_an_action_runs_in_place():
    with Sandbox(":memory:") as sb:
        live = RunCard(sb)
        seen: list = []

        @sb.action
        def work(i):  # quick: runs in place, its step's entries commit with its result (the store lags a step)
            if i == 2:
                seen.append(live.document().get("step"))
            return i

        source = "for (let i = 0; i < 3; i++) await ctx.step(`item ${i}`, () => actions.work(i))\nreturn 1"
        sb.eval(source, observer=live.observer())
        assert seen == ["item 2"]
        assert live.document()["step"] is None  # ended: no current step


def test_a_cancelled_cards_resume_button_resumes_the_run(ip):  # noqa: F811 (the fixture imported above)
    sb = jupyter_sandbox.notebook.defaults.default_sandbox()
    started, blocked = threading.Event(), {"on": True}

    @sb.action
    async def slow(_):
        started.set()
        if blocked["on"]:
            await asyncio.sleep(60)
        return "finally"

    future = sb._loop.submit(sb.aeval("return await actions.slow(1)"))
    assert started.wait(bound(5))
    future.cancel()
    run_id = sb.runs(limit=1)[0].id
    deadline = time.monotonic() + bound(10)  # bounds a hang only
    while sb.run(run_id, journal=False).status == "running":
        assert time.monotonic() < deadline, "the cancellation was never recorded"
        time.sleep(0.02)
    comm = attach(run_id)
    page = comm.docs()[-1]
    assert page["status"] == "cancelled"
    assert 'data-act="resume"' in card_html(page)
    blocked["on"] = False
    comm.click(type="resume")
    assert comm.docs()[-1]["status"] == "completed" and comm.docs()[-1]["output"] == {"p": '"finally"'}
    assert sb.run(run_id, journal=False).status == "completed"


def test_a_failed_cells_card_says_where_the_error_is_instead_of_repeating_it(ip):  # noqa: F811 (the fixture imported above)
    ip.run_cell("import jupyter_sandbox\n@jupyter_sandbox.action\ndef lookup(key):\n    return {}[key]")
    result, cap = cell(ip, "", "return await actions.lookup('nope')")
    page = cap.outputs[-1].data["text/html"]
    [row] = [r for r in card().doc["rows"] if r["k"] == "error"]
    assert row["in_cell"] is True
    assert text_of(page).count("ActionError") == 0  # the call row names the Python error, the cell the rest
    assert "the run failed here: its error is shown below the cell" in text_of(page)


class Shell:
    """A kernel's shell as ``styles_here`` reads it: the request being executed names its cell."""

    def __init__(self, cell_id):
        self.cell_id = cell_id

    def get_parent(self):
        return {"metadata": {"cellId": self.cell_id} if self.cell_id else {}}


def test_the_cards_css_is_carried_by_the_cards_of_one_cell_only(monkeypatch):
    monkeypatch.setattr(current_session(), "styled_cell", None)
    assert styles_here(Shell("a")) is True  # the first card shown in this kernel
    assert styles_here(Shell("b")) is False
    assert styles_here(Shell("a")) is True  # its cell again: the output it replaces carried it
    assert styles_here(Shell(None)) is True  # a frontend that does not say which cell: every card
    with Sandbox(":memory:") as sb:
        run = sb.eval("return 1")
        card = RunCard(sb, run.run_id)
        card.styled = False
        bare = card.bundle()["text/html"]
        card.styled = True
        styled = card.bundle()["text/html"]
    unversioned = lambda page: re.sub(r'data-version="\d+"', "", page)  # noqa: E731
    assert "<style" not in bare and styled.startswith('<style data-jsbx-style="card">')
    assert unversioned(styled).endswith(unversioned(bare))
    assert len(bare) < 2_000 < len(styled) - 8_000  # the CSS is most of a small card's text/html


def test_in_a_notebook_only_the_first_cells_cards_carry_the_css(ip, monkeypatch):  # noqa: F811 (the fixture imported above)
    monkeypatch.setattr(current_session(), "styled_cell", None)
    cells = iter(["first", "second", "first"])
    monkeypatch.setattr(card_registry, "_shell", lambda: Shell(next(cells)))
    styles = []
    for _ in range(3):
        result, cap = cell(ip, "", "return 1")
        styles.append(all("<style" in o.data.get("text/html", "<style") for o in cap.outputs))
    assert styles == [True, False, True]


def test_a_renderer_of_a_cells_card_shows_what_that_card_shows(ip):  # noqa: F811 (the fixture imported above)
    ip.run_cell("import jupyter_sandbox\n@jupyter_sandbox.action\ndef lookup(key):\n    return {}[key]")
    cell(ip, "", "return await actions.lookup('nope')")
    shown = card().doc
    comm = FakeComm()
    card_comm._open(comm, {"content": {"data": {"run_id": shown["run_id"], "card": shown["card"]}}})
    assert comm.docs()[-1]["error_in_cell"] == 1  # the cell shows the error: the renderer does not repeat it
    other = attach(shown["run_id"])  # a saved card's renderer, no card of this kernel: the card shows the error
    assert other.docs()[-1]["error_in_cell"] is None


def test_a_click_for_the_first_open_interrupt_when_none_is_open_says_so_and_answers_nothing():
    with Sandbox() as sb:
        run_id = sb.eval("return 1").run_id
        notice = card_clicks.click(sb, run_id, {"type": "answer", "choice": "approve"})
        assert notice == "no interrupt is open (the run is completed): nothing was answered"
        assert card_document(sb, run_id)["answered"] == []
