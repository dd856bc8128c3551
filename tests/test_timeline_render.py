"""The renderers: timeline.js (under node), and the run card: card.js in QuickJS (the static HTML) and in node.

tests/fixtures/timeline_doc.json is a hand-made document of three attempts: a
first run that ends in an interrupt, a resume whose action fails, and a resume
with edited source that fails with a mismatch. It has an entry of every kind.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from jupyter_sandbox.notebook.card_html import mismatch_html as render_mismatch_html

HERE = Path(__file__).parent
DOC = json.loads((HERE / "fixtures" / "timeline_doc.json").read_text())
STATIC = HERE.parent / "jupyter_sandbox" / "notebook" / "widgets" / "static"
TIMELINE_JS = STATIC / "timeline.js"
CARD_JS = STATIC / "card.js"


@pytest.fixture
def doc() -> dict:
    return json.loads(json.dumps(DOC))


class Marks(HTMLParser):
    """Collects every rendered entry: (seq, kind, mark, ids of the steps around it)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict]] = []
        self.rows: list[tuple[int, str, str, tuple[int, ...]]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "data-mark" in a and "data-seq" in a:
            steps = tuple(int(s["data-step"]) for _, s in self.stack if "data-step" in s)
            self.rows.append(
                (int(a["data-seq"]), a["data-kind"] if "data-kind" in a else "step", a["data-mark"], steps)
            )
        self.stack.append((tag, a))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass


def marks(html: str) -> list[tuple[int, str, str, tuple[int, ...]]]:
    parser = Marks()
    parser.feed(html)
    return parser.rows


def js_timeline_html(doc: dict) -> str:
    node = shutil.which("node")
    assert node, "node is needed to test timeline.js"
    script = (
        f"import {{ timelineHtml }} from {json.dumps(TIMELINE_JS.as_uri())};"
        "import fs from 'node:fs';"
        "process.stdout.write(timelineHtml(JSON.parse(fs.readFileSync(0, 'utf8'))));"
    )
    out = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def node_module_call(module: Path, fn: str, doc: dict) -> str:
    node = shutil.which("node")
    assert node, "node is needed to test the renderers"
    script = (
        f"import {{ {fn} }} from {json.dumps(module.as_uri())};"
        "import fs from 'node:fs';"
        f"process.stdout.write({fn}(JSON.parse(fs.readFileSync(0, 'utf8'))));"
    )
    out = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def render_html(doc: dict) -> str:
    return js_timeline_html(doc)


# ---------------------------------------------------------------- timeline.js


def test_every_entry_is_rendered_with_its_seq(doc):
    html = render_html(doc)
    assert {row[0] for row in marks(html)} == {e["seq"] for e in doc["entries"]}


DISTINCTIVE = {
    "attempt": lambda e: f"attempt {e['n']} started",
    "plan": lambda e: "plan updated",
    "step": lambda e: e["label"],
    "now": lambda e: "2025-11-30T10:53:20.040Z",
    "call": lambda e: e["description"],
    "result": lambda e: (
        "mailbox full" if e["ok"] is False else "&quot;total&quot;: 40" if e["slot"] == 1 else "2 orders, 120 EUR"
    ),
    "random": lambda e: "0.4242",
    "console": lambda e: e["message"],
    "log": lambda e: e["message"],
    "timer": lambda e: "sleep 1.00 s",
    "fired": lambda e: "timer fired (slot 4)",
    "wait": lambda e: "timeout 1 min 0 s",
    "event": lambda e: e["signal"],
    "interrupt": lambda e: "&quot;subject&quot;: &quot;Weekly orders&quot;",
    "answer": lambda e: "Totals attached.",
    "error": lambda e: e["error"]["message"],
    "mismatch": lambda e: e["attempted"]["name"],
}


def test_every_entry_shows_its_distinctive_text(doc):
    html = render_html(doc)
    missing = [(e["seq"], DISTINCTIVE[e["kind"]](e)) for e in doc["entries"] if DISTINCTIVE[e["kind"]](e) not in html]
    assert missing == []


def test_entries_are_live_in_their_attempt_and_replayed_in_every_later_one(doc):
    rows = marks(render_html(doc))
    last = max(a["n"] for a in doc["attempts"])
    for e in doc["entries"]:
        seen = [mark for seq, _, mark, _ in rows if seq == e["seq"]]
        assert seen.count("live") == 1, e["seq"]
        assert seen.count("replayed") == last - e["attempt"], e["seq"]


def test_attempt_heading_says_how_many_entries_were_replayed(doc):
    html = render_html(doc)
    assert "<b>Attempt 1</b> — first run" in html
    assert "<b>Attempt 2</b> — resumed, 19 entries replayed from the journal" in html
    assert "↺ replayed 21 entries" in html


def test_attempt_with_edited_source_is_flagged(doc):
    html = render_html(doc)
    heading = re.search(r'<div class="jsbx-attempt-head" data-attempt="3">.*?</div>', html, re.S).group(0)
    assert "source edited" in heading


def test_steps_nest_their_entries(doc):
    live = {seq: steps for seq, _, mark, steps in marks(render_html(doc)) if mark == "live"}
    assert live[3] == (1,)  # the clock read inside "Fetch orders"
    assert live[7] == (1, 2)  # the random read inside "Score orders" inside "Fetch orders"
    assert live[11] == ()  # the log after both steps ended


def test_step_end_shows_the_steps_duration(doc):
    html = render_html(doc)
    summary = re.search(r'<details class="jsbx-step"[^>]*data-seq="2".*?</summary>', html, re.S).group(0)
    assert "320 ms" in summary


def test_result_shows_the_duration_since_its_call(doc):
    row = re.search(r'<li class="jsbx-entry jsbx-k-result" data-seq="5".*?</li>', render_html(doc), re.S).group(0)
    assert "250 ms" in row


def test_plan_is_a_checklist_of_the_latest_plan(doc):
    box = re.search(r'<div class="jsbx-plan-box" data-seq="12">.*?</div>', render_html(doc), re.S).group(0)
    assert "1/3 done" in box
    assert '<li data-done="true"><span class="jsbx-check">☑</span> Fetch orders</li>' in box
    assert '<li data-done="false"><span class="jsbx-check">☐</span> Summarize</li>' in box


def test_html_in_journal_values_is_escaped(doc):
    html = render_html(doc)
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_error_shows_the_source_line_with_a_caret(doc):
    html = render_html(doc)
    assert "ActionError: send_email failed: mailbox full" in html
    assert "  15 | const sent = await actions.send_email(" in html
    assert "\n     |                    ^</pre>" in html


def test_mismatch_entry_renders_a_diff(doc):
    html = render_html(doc)
    assert "CallLogMismatchError: replay diverged at position 1" in html
    assert '<table class="jsbx-diff">' in html


def test_pending_interrupts_are_listed_in_the_header(doc):
    doc["pending"] = [
        {"id": "r-demo:6", "run_id": "r-demo", "position": 6, "name": "send_email", "data": {"subject": "Weekly"}}
    ]
    html = render_html(doc)
    assert re.search(r'class="jsbx-pending">.*send_email.*r-demo:6', html, re.S)


def test_render_html_of_an_empty_document_names_no_entries():
    html = render_html({})
    assert "0 entries" in html
    assert marks(html) == []


# ---------------------------------------------------------------- mismatch diff

MISMATCH = {
    "position": 3,
    "recorded": {"type": "action", "name": "fetch_orders", "input": {"since": "2025-11-01"}},
    "attempted": {"type": "action", "name": "fetch_customers", "input": {"since": "2025-11-01"}},
    "line": 2,
    "column": 7,
    "source_line": None,
}


def diff_rows(html: str) -> dict[str, str]:
    return {m.group(2): m.group(1) for m in re.finditer(r'<tr class="([^"]*)"><th>(\w+)</th>', html)}


def test_mismatch_diff_marks_only_the_differing_rows():
    html = render_mismatch_html(MISMATCH, "a;\nawait actions.fetch_customers({});\n")
    assert diff_rows(html) == {"kind": "", "name": "jsbx-differs", "input": ""}


def test_mismatch_diff_ignores_key_order_as_content_keys_do():
    attempted = {**MISMATCH["attempted"], "input": {"b": 2, "a": 1}}
    html = render_mismatch_html(
        {**MISMATCH, "recorded": {**MISMATCH["recorded"], "input": {"a": 1, "b": 2}}, "attempted": attempted}, None
    )
    assert diff_rows(html)["input"] == ""


def test_mismatch_diff_names_a_clock_read_as_such():
    html = render_mismatch_html({**MISMATCH, "attempted": {"type": "now", "name": None, "input": None}}, None)
    assert "the script now attempted <b>a now read</b>" in html


def test_mismatch_diff_shows_recorded_and_attempted_side_by_side():
    html = render_mismatch_html(MISMATCH, None)
    row = re.search(r"<th>name</th>(.*?)</tr>", html, re.S).group(1)
    assert row == "<td><code>fetch_orders</code></td><td><code>fetch_customers</code></td>"


def test_mismatch_diff_excerpts_the_source_line_with_a_caret():
    html = render_mismatch_html(MISMATCH, "a;\nawait actions.fetch_customers({});\n")
    assert "   2 | await actions.fetch_customers({});\n     |       ^" in html


def test_mismatch_diff_says_nothing_was_recorded_past_the_journal():
    html = render_mismatch_html({**MISMATCH, "recorded": None}, None)
    assert html.count('<td class="jsbx-none">nothing</td>') == 3
    assert "The journal recorded <b>nothing</b> here" in html


# ---------------------------------------------------------------- timeline.js


# A run interrupted inside a step: the resume goes on inside the step it replayed.
IN_STEP = {
    "run": {"id": "r-step", "status": "completed", "output": {"sent": True}},
    "attempts": [{"n": 1, "outcome": "interrupted"}, {"n": 2, "outcome": "completed", "replayed": 2}],
    "entries": [
        {
            "seq": 0,
            "kind": "step",
            "attempt": 1,
            "at": 1.0,
            "id": 7,
            "label": "Deliver",
            "phase": "start",
            "parent": None,
        },
        {
            "seq": 1,
            "kind": "call",
            "attempt": 1,
            "at": 1.1,
            "slot": 0,
            "step": 7,
            "op": "call",
            "name": "ship",
            "input": {},
        },
        {
            "seq": 2,
            "kind": "interrupt",
            "attempt": 1,
            "at": 1.2,
            "slot": 0,
            "step": 7,
            "name": "ship",
            "id": "r-step:0",
        },
        {"seq": 3, "kind": "answer", "attempt": 2, "at": 9.0, "slot": 0, "step": 7, "value": "yes", "id": "r-step:0"},
        {"seq": 4, "kind": "result", "attempt": 2, "at": 9.5, "slot": 0, "step": 7, "ok": True, "value": 1},
        {"seq": 5, "kind": "step", "attempt": 2, "at": 9.6, "id": 7, "phase": "end", "outcome": "ok"},
        {"seq": 6, "kind": "shiny-new-kind", "attempt": 2, "at": 9.7, "what": "<b>unknown</b>"},
    ],
    "pending": [{"id": "r-x:1", "name": "approve", "data": {"a": 1}}],
}


def test_a_step_continued_by_a_resume_nests_the_resumed_entries():
    live = {seq: steps for seq, _, mark, steps in marks(render_html(IN_STEP)) if mark == "live"}
    assert (live[3], live[4], live[5]) == ((7,), (7,), (7,))
    assert '<span class="jsbx-label">Deliver</span> <span class="jsbx-meta">(continued)</span>' in render_html(IN_STEP)


def test_js_escapes_html_in_journal_values(doc):
    html = js_timeline_html(doc)
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_js_unit_tests_pass():
    node = shutil.which("node")
    assert node, "node is needed to test timeline.js"
    run = subprocess.run(
        [node, "--test", str(HERE / "js" / "timeline_render.test.mjs")], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
