"""The run card's document (card_doc.py) and its one renderer (card.js, in QuickJS for the static HTML and in node)."""

from __future__ import annotations

import html as htmllib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_sandbox import Sandbox
from jupyter_sandbox.notebook.card_doc import CARD_MIME, MAX_ROWS, _rows, card_document
from jupyter_sandbox.notebook.card_html import card_html
from jupyter_sandbox.notebook.cards import RunCard

CARD_JS = Path(__file__).parent.parent / "jupyter_sandbox" / "notebook" / "widgets" / "static" / "card.js"


@pytest.fixture
def sb():
    with Sandbox(":memory:") as sandbox:
        sandbox.action(lambda x: x + 1, name="inc")
        sandbox.action(lambda x: "sent " + x, name="send", approval=True)
        yield sandbox


def node_card_html(doc: dict) -> str:
    node = shutil.which("node")
    assert node, "node is needed to run card.js as the browser does"
    script = (
        f"import {{ cardHtml }} from {json.dumps(CARD_JS.as_uri())};import fs from 'node:fs';"
        "process.stdout.write(cardHtml(JSON.parse(fs.readFileSync(0, 'utf8'))));"
    )
    return subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout


def body(static: str) -> str:
    return static.split("</style>", 1)[1]


def test_the_static_html_is_what_the_browser_renderer_draws(sb):
    try:
        sb.eval(
            "console.log('<b>hi</b>')\nfor (let i = 0; i < 5; i++) await actions.inc(i)\nreturn await actions.send('x')"
        )
    except Exception as exc:
        run_id = exc.run_id
    doc = card_document(sb, run_id)
    assert body(card_html(doc)) == node_card_html(doc)


def test_consecutive_calls_of_one_action_are_one_row(sb):
    result = sb.eval("let s = 0\nfor (let i = 0; i < 1000; i++) s = await actions.inc(s)\nreturn s")
    doc = card_document(sb, result.run_id)
    (group,) = [r for r in doc["rows"] if r["k"] == "group"]
    assert (group["name"], group["count"], group["failed"], group["open"]) == ("inc", 1000, 0, 0)
    assert "<b>inc</b> × 1,000" in card_html(doc) and "all ok" in card_html(doc)


def test_a_5000_entry_run_saves_under_256_kb(sb):
    source = (
        "for (let i = 0; i < 1200; i++) { await actions.inc(i); console.log('line ' + i) }\nreturn 'x'.repeat(100000)"
    )
    from jupyter_sandbox import Limits

    result = sb.eval(source, limits=Limits(journal_entries=6000))
    doc = card_document(sb, result.run_id)
    assert doc["entries"] >= 3600 and doc["omitted"] > 0 and len(doc["rows"]) <= MAX_ROWS + 1
    saved = RunCard(sb, result.run_id).bundle()
    assert len(json.dumps(saved)) < 256 * 1024
    assert len(doc["output"]["p"]) <= 160 and len(doc["output"]["d"]) <= 2001  # cut, behind an expander


def test_a_call_answered_later_counts_its_time_from_the_resume_not_the_human_wait():
    doc = {
        "attempts": [{"n": 1, "started": 0.0}, {"n": 2, "started": 11.0}],
        "entries": [
            {"seq": 0, "kind": "call", "attempt": 1, "at": 1.0, "slot": 0, "name": "send_email", "input": {}},
            {"seq": 1, "kind": "interrupt", "attempt": 1, "at": 1.1, "slot": 0, "id": "r:0", "approval": True},
            {"seq": 2, "kind": "answer", "attempt": 2, "at": 11.1, "slot": 0, "id": "r:0", "value": True},
            {"seq": 3, "kind": "result", "attempt": 2, "at": 11.2, "slot": 0, "ok": True, "value": 1},
        ],
    }
    (row,) = _rows(doc, group=True)
    assert row["took"] == pytest.approx(0.2) and row["waited"] == pytest.approx(10.0) and row["a"] == 2
    shown = node_card_html({"run_id": "r", "rows": [row], "attempts": doc["attempts"]})
    assert "waited 10.0 s for an answer" in shown and "10.2" not in shown


def test_a_continued_runs_card_shows_the_chains_end(sb):
    result = sb.eval("if ((ctx.input ?? 0) < 2) return await ctx.continueAsNew((ctx.input ?? 0) + 1)\nreturn 'end'")
    first = sb.runs(limit=10)[-1].id
    doc = card_document(sb, first)
    assert doc["status"] == "completed" and len(doc["chain"]) == 3 and doc["chain"][-1] == result.run_ids[-1]


def test_answered_interrupts_show_their_decision_and_only_open_ones_have_buttons(sb):
    try:
        sb.eval("await actions.send('a')\nreturn await actions.send('b')")
    except Exception as exc:
        run_id = exc.run_id
    first = card_document(sb, run_id)["pending"][0]["id"]
    try:
        sb.resume(run_id, answers={first: True})
    except Exception:
        pass
    doc = card_document(sb, run_id)
    assert [a["id"] for a in doc["answered"]] == [first] and len(doc["pending"]) == 1
    html = node_card_html(doc)
    assert html.count('data-act="approve"') == 1 and f'class="jsbx-answered" data-interrupt="{first}"' in html


def _asking_edit(sb):
    sb.sent = []

    @sb.action(approval=True)
    def mail(to):
        sb.sent.append(to)
        return to

    try:
        sb.eval("return await actions.mail('ada')")
    except Exception as exc:
        return RunCard(sb, exc.run_id)


def test_an_edit_with_its_input_left_out_is_refused_and_nothing_runs(sb):
    card = _asking_edit(sb)
    with pytest.raises(TypeError, match="edit needs the edited input"):
        card.answer(None, "edit")
    assert sb.sent == [] and sb.status(card.run_id) == "paused" and len(card.pending()) == 1


def test_an_edit_to_null_runs_the_call_with_null(sb):
    card = _asking_edit(sb)
    assert card.answer(None, "edit", None).output is None
    assert sb.sent == [None]


def test_a_long_row_list_is_windowed_in_the_browser_and_whole_in_the_static_html():
    rows = [{"k": "console", "seq": i, "a": 1, "level": "log", "msg": f"m{i}"} for i in range(200)]
    doc = {"run_id": "r", "rows": rows, "attempts": [{"n": 1}], "entries": 200}
    assert card_html(doc).count('class="jsbx-row ') == 200
    node = shutil.which("node")
    script = (
        f"import {{ cardHtml }} from {json.dumps(CARD_JS.as_uri())};import fs from 'node:fs';"
        "process.stdout.write(cardHtml(JSON.parse(fs.readFileSync(0, 'utf8')), {windowed: true}));"
    )
    windowed = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert windowed.count('class="jsbx-row ') < 30 and 'data-rows="200"' in windowed


@given(st.text(max_size=40))
def test_every_value_is_escaped(tail):
    text = "<zz " + tail  # a tag the card never writes
    rows = [
        {"k": "console", "seq": 0, "a": 1, "level": "log", "msg": text},
        {"k": "call", "seq": 1, "a": 1, "name": text, "in": {"p": text}, "ok": True},
    ]
    doc = {
        "run_id": text,
        "name": text,
        "status": text,
        "rows": rows,
        "attempts": [],
        "entries": 2,
        "console": [{"level": "log", "msg": text}],
        "console_total": 1,
    }
    shown = body(card_html(doc))
    assert htmllib.escape(text, quote=True).replace("&#x27;", "&#39;") in shown
    assert "<zz" not in shown


def test_the_bundle_has_the_card_the_html_and_text_but_no_widget(sb):
    result = sb.eval("return 1")
    bundle = RunCard(sb, result.run_id).bundle()
    assert set(bundle) == {CARD_MIME, "text/html", "text/plain"}
    assert bundle["text/plain"] == f"run {result.run_id} · completed"


def test_the_edit_box_has_a_row_for_every_line_of_the_input_up_to_a_screenful():
    with Sandbox(":memory:") as sb:
        sb.action(lambda m: m, name="post", approval=True)
        for keys, rows in ((4, 7), (1, 4), (40, 20)):
            message = {f"field{i}": i for i in range(keys)}  # indented: a line per field and two braces
            try:
                sb.eval("return await actions.post(ctx.input)", input=message)
            except Exception as exc:
                run_id = exc.run_id
            html = card_html(card_document(sb, run_id))
            assert f'<textarea class="jsbx-edited" rows="{rows}"' in html


def test_a_plan_is_a_checklist_of_its_latest_state():
    with Sandbox(":memory:") as sb:
        result = sb.eval(
            'ctx.plan(["load", "check", "send"])\n'
            'ctx.plan([{title: "load", done: true}, {title: "check", done: false}, "send"])\nreturn 1'
        )
        html = card_html(card_document(sb, result.run_id))
    assert '<div class="jsbx-plan-box" data-role="plan"><b>Plan</b> <span class="jsbx-meta">1/3 done</span>' in html
    assert '<li data-done="true"><span class="jsbx-check">☑</span> load</li>' in html
    assert '<li data-done="false"><span class="jsbx-check">☐</span> send</li>' in html
    assert "&quot;title&quot;" not in html  # no raw JSON of the plan anywhere
