"""The magics and the run card in-process: an IPython shell, no kernel; clicks as the comm messages a card sends."""

from __future__ import annotations

import time

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output
from pace import bound
from typing_extensions import TypedDict

import jupyter_sandbox
from jupyter_sandbox import notebook
from jupyter_sandbox.errors import Interrupt
from jupyter_sandbox.notebook import card_comm
from jupyter_sandbox.notebook import cards as card_registry
from jupyter_sandbox.notebook.card_clicks import answer_for
from jupyter_sandbox.notebook.card_doc import CARD_MIME
from jupyter_sandbox.notebook.cards import cards
from jupyter_sandbox.notebook.magics import SandboxMagics
from jupyter_sandbox.notebook.session import close_session

APPROVE = """
const found = await actions.fetch({q: 1})
try {
  return {sent: (await actions.send({to: "ana", n: found.n})).sent}
} catch (e) {
  return {rejected: e.message}
}
"""


@pytest.fixture(scope="session")
def testing_shell():
    start_ipython()  # once per process: IPython's shell for tests (tracebacks on stdout)
    return InteractiveShell.instance()


@pytest.fixture
def ip(testing_shell, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default store is .sandbox/runs.sqlite under the cwd
    shell = testing_shell
    close_session()  # a fresh notebook session: no Sandbox, registration or card of another test
    jupyter_sandbox.load_ipython_extension(shell)  # what %load_ext calls, with fresh config each test
    shell.user_ns["calls"] = calls = {"fetch": 0, "send": []}

    @jupyter_sandbox.action
    def fetch(query):
        calls["fetch"] += 1
        return {"n": 3}

    @jupyter_sandbox.action(approval=True)
    def send(msg):
        calls["send"].append(msg)
        return {"sent": msg["to"]}

    yield shell
    for name in ("out", "value", "edited"):
        shell.user_ns.pop(name, None)
    shell.config.pop("SandboxMagics", None)  # %config writes there too
    for magics in [c for c in shell.configurables if isinstance(c, SandboxMagics)]:
        shell.configurables.remove(magics)
    close_session()


def cell(ip, line, body=""):
    """Run ``%%sandbox LINE`` (or a line magic / Python when ``body`` is None); return (result, captured)."""
    source = f"%%sandbox {line}\n{body}" if body is not None else line
    with capture_output() as cap:
        result = ip.run_cell(source)
    return result, cap


def html(cap):
    return "".join(o.data.get("text/html", "") for o in cap.outputs)


def text(cap):
    return cap.stdout + "".join(o.data.get("text/plain", "") for o in cap.outputs)


def sandbox():
    return notebook.default_sandbox()


def card():
    """The newest card of this kernel."""
    return cards()[-1]


class FakeComm:
    """What the kernel side of a card's comm needs: ``send``, ``on_msg``, ``on_close``; ``click`` is the browser."""

    def __init__(self):
        self.sent, self.handler = [], None

    def send(self, data):
        self.sent.append(data)

    def on_msg(self, handler):
        self.handler = handler

    def on_close(self, handler):
        pass

    def click(self, **data):
        self.handler({"content": {"data": data}})

    def docs(self):
        return [m["doc"] for m in self.sent if m["type"] == "doc"]


def attach(run_id, store=None):
    """Open a comm as the labextension's renderer does for a card of ``run_id``."""
    comm = FakeComm()
    card_comm._open(comm, {"content": {"data": {"run_id": run_id, "store": store}}})
    return comm


# -- the cell magic ------------------------------------------------------------------------


def test_options_are_documented_and_checked(ip):
    doc = SandboxMagics.sandbox_cell.__doc__
    for option in (
        "--input",
        "--out",
        "--name",
        "--strict",
        "--actions",
        "--fuel",
        "--memory",
        "--journal-entries",
        "--timeout",
        "--store",
        "Approve",
    ):
        assert option in doc
    for sub in ("runs", "show", "resume", "signal", "check", "fork", "export", "import", "--reject", "--at"):
        assert sub in SandboxMagics.sandbox_line.__doc__
    result, cap = cell(ip, "--no-such-option", "return 1")
    assert not result.success and "unrecognized arguments: --no-such-option" in cap.stdout + cap.stderr


def test_input_from_a_variable_and_output_into_one(ip):
    ip.user_ns["value"] = {"a": [1, 2]}
    result, cap = cell(ip, "-i value -o out --name io", "return {got: ctx.input, n: ctx.input.a.length}")
    assert result.success
    assert ip.user_ns["out"] == {"got": {"a": [1, 2]}, "n": 2}
    assert "(in <code>out</code>)" in html(cap) and sandbox().runs()[0].name == "io"


def test_missing_input_variable_is_a_usage_error(ip):
    result, cap = cell(ip, "-i nowhere", "return 1")
    assert "-i nowhere: no variable 'nowhere'" in cap.stdout + cap.stderr


def test_dollar_and_braces_are_left_to_javascript(ip):
    ip.user_ns["x"] = "PYTHON"
    cell(ip, "-o out", "const x = 2\nreturn `${x}` + '$x' + '{x}'")
    assert ip.user_ns["out"] == "2$x{x}"


def test_strict_mode(ip):
    result, cap = cell(ip, "--strict", "return Math.random()")
    assert not result.success and "Math.random" in cap.stdout
    result, _ = cell(ip, "-o out", "return typeof Math.random()")
    assert result.success and ip.user_ns["out"] == "number"


def test_actions_limits_what_the_script_sees(ip):
    cell(ip, "--actions fetch -o out", "return Object.keys(actions).sort()")
    assert ip.user_ns["out"] == ["fetch"]
    result, cap = cell(ip, "--actions fetch", "return await actions.send({to: 'x'})")
    assert not result.success


def test_actions_registers_plain_functions_from_the_namespace(ip):
    ip.run_cell("def double(x):\n    return 2 * x")
    cell(ip, "--actions double,fetch -o out", "return await actions.double(21)")
    assert ip.user_ns["out"] == 42
    ip.run_cell("def double(x):\n    return 3 * x")  # the cell was edited and re-run
    cell(ip, "--actions double -o out", "return await actions.double(21)")
    assert ip.user_ns["out"] == 63
    result, cap = cell(ip, "--actions nothing_here", "return 1")
    assert "'nothing_here' is not a registered action and is not defined" in cap.stdout + cap.stderr


def test_limit_options_override_the_configured_defaults(ip):
    result, cap = cell(ip, "--fuel 0.2", "while (true) {}")
    assert not result.success and "fuel-exhausted" in cap.stdout
    result, cap = cell(ip, "--journal-entries 5", "for (let i = 0; i < 20; i++) await actions.fetch(i)")
    assert "journal-cap" in cap.stdout
    result, cap = cell(ip, "--memory 0", "return 1")
    assert "memory_bytes must be a positive integer" in cap.stdout + cap.stderr


def test_a_loop_out_of_fuel_keeps_the_console_printed_before_it(ip):
    result, cap = cell(ip, "--fuel 0.2", "console.log('spinning')\nlet i = 0\nwhile (true) { i++ }")
    assert "fuel-exhausted" in cap.stdout and card().doc["console"] == [{"level": "log", "msg": "spinning"}]


def test_config_changes_the_defaults(ip, tmp_path):
    ip.run_line_magic("config", "SandboxMagics.fuel_seconds = 0.2")
    result, cap = cell(ip, "", "while (true) {}")
    assert "fuel-exhausted" in cap.stdout
    ip.run_line_magic("config", "SandboxMagics.strict = True")
    result, cap = cell(ip, "", "return Date.now()")
    assert not result.success and "ctx.now()" in cap.stdout
    ip.run_line_magic("config", "SandboxMagics.store = 'elsewhere.sqlite'")
    cell(ip, "--name moved", "return 1")
    assert (tmp_path / "elsewhere.sqlite").exists() and sandbox().runs()[0].name == "moved"


def test_errors_render_without_a_python_traceback(ip):
    result, cap = cell(ip, "", "const a = 1\nnull.boom()")
    assert isinstance(result.error_in_exec, jupyter_sandbox.ScriptError)
    # line 3 as the editor counts it: the %%sandbox line is line 1
    assert "workflow.js:3:" in cap.stdout and "   3 | null.boom()" in cap.stdout and "^" in cap.stdout
    assert "Traceback" not in cap.stdout and "site-packages" not in cap.stdout and ".py" not in cap.stdout
    result, cap = cell(ip, "", "setTimeout(() => 1, 5)")
    assert "LintError: workflow.js:2:1: `setTimeout`" in cap.stdout and "Traceback" not in cap.stdout


def test_an_action_error_is_shown_once_with_its_prefix_once(ip):
    ip.run_cell("import jupyter_sandbox\n@jupyter_sandbox.action\ndef lookup(key):\n    return {}[key]")
    result, cap = cell(ip, "", "console.log('before')\nreturn await actions.lookup('nope')")
    assert cap.stdout.count("ActionError:") == 1 and "KeyError: 'nope'" in cap.stdout
    assert card().doc["error_in_cell"] == 1 and card().doc["console"] == [{"level": "log", "msg": "before"}]
    assert 'class="jsbx-error"' not in cap.outputs[-1].data["text/html"]  # the card does not repeat the error


def test_the_card_shows_console_timeline_and_output_from_the_store(ip):
    result, cap = cell(ip, "-o out", "console.warn('careful')\nawait actions.fetch(1)\nreturn 'ok'")
    doc = card().doc
    assert doc["status"] == "completed" and doc["output"] == {"p": '"ok"'} and doc["console"][0]["msg"] == "careful"
    assert doc["entries"] == len(sandbox().timeline(doc["run_id"])["entries"])
    last = cap.outputs[-1].data
    assert last[CARD_MIME]["status"] == "completed" and "application/vnd.jupyter.widget-view+json" not in last
    assert "&quot;ok&quot;" in last["text/html"] and 'data-status="completed"' in last["text/html"]


def test_a_running_runs_card_redraws_with_its_progress_and_growing_journal(ip):
    seen: dict[str, object] = {}

    @jupyter_sandbox.action
    def peek(i):  # runs mid-run: waits (bounded) for the card to show the progress said before it
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            doc = cards()[-1].doc
            if doc.get("status") == "running" and (doc.get("progress") or {}).get("done") == 3:
                seen.update(doc)
                return True
            time.sleep(0.02)
        return False

    script = "for (let i = 0; i < 3; i++) { await actions.fetch(i); ctx.progress({done: i + 1, total: 4}) }"
    result, cap = cell(ip, "-o out", script + "\nreturn await actions.peek(3)")
    assert ip.user_ns["out"] is True
    assert seen["progress"] == {"done": 3, "total": 4} and seen["entries"] >= 6
    last = cap.outputs[-1].data
    assert card().doc["status"] == "completed" and "progress" not in card().doc and "text/html" in last


def test_show_timeline_off_leaves_the_timeline_out_of_the_card(ip):
    ip.run_line_magic("config", "SandboxMagics.show_timeline = False")
    _, cap = cell(ip, "", "await actions.fetch(1)\nreturn 2")
    assert "rows" not in card().doc and 'class="jsbx-card-timeline"' not in cap.outputs[-1].data["text/html"]


# -- answering ------------------------------------------------------------------------------------


def test_approve_resumes_the_run_and_stores_the_output(ip):
    cell(ip, "-o out", APPROVE)
    shown = card()
    (pending,) = shown.doc["pending"]
    assert pending["approval"] and '"to": "ana"' in pending["edit"] and pending["name"] == "send"
    comm = attach(shown.run_id)
    comm.click(type="answer", interrupt_id=pending["id"], choice="approve")
    comm.click(type="answer", interrupt_id=pending["id"], choice="approve")  # a second click only refreshes
    comm.click(type="answer", interrupt_id=pending["id"], choice="reject")
    assert ip.user_ns["calls"] == {"fetch": 1, "send": [{"to": "ana", "n": 3}]}
    assert ip.user_ns["out"] == {"sent": "ana"} and shown.doc["status"] == "completed"


def test_answering_replaces_the_pending_panel_in_place(ip):
    _, cap = cell(ip, "-o out", APPROVE)
    shown = card()
    shown.approve()
    doc = shown.doc
    assert doc["pending"] == [] and doc["answered"][0]["approved"] and doc["status"] == "completed"
    html_now = shown.bundle(doc)["text/html"]
    assert html_now.count('class="jsbx-host jsbx-card"') == 1 and 'data-act="approve"' not in html_now
    assert len(cards()) == 1  # no new card inside the old one


def test_three_answers_leave_one_card_with_three_decisions(ip):
    cell(
        ip,
        "-o out",
        "const a = []\nfor (const to of ['a', 'b', 'c']) a.push((await actions.send({to})).sent)\nreturn a",
    )
    shown = card()
    for _ in range(3):
        shown.approve()
    assert ip.user_ns["out"] == ["a", "b", "c"] and len(cards()) == 1
    assert [a["approved"] for a in shown.doc["answered"]] == [True] * 3 and shown.doc["pending"] == []


def test_reject_with_a_reason_runs_the_catch_branch(ip):
    cell(ip, "-o out", APPROVE)
    comm = attach(card().run_id)
    comm.click(type="answer", interrupt_id=card().doc["pending"][0]["id"], choice="reject", reason="too late")
    assert ip.user_ns["out"] == {"rejected": "send was rejected: too late"} and ip.user_ns["calls"]["send"] == []
    assert card().doc["answered"][0] == {**card().doc["answered"][0], "approved": False, "reason": "too late"}


def test_a_click_whose_resume_fails_says_why_in_the_card(ip, monkeypatch):
    cell(ip, "-o out", APPROVE)
    comm = attach(card().run_id)

    def busy(run_id, *args, **kwargs):
        raise jupyter_sandbox.RunBusyError(f"run {run_id} is being run by another process", run_id=run_id)

    monkeypatch.setattr(card().sb, "resume", busy)
    comm.click(type="answer", interrupt_id=card().doc["pending"][0]["id"], choice="approve")
    assert "RunBusyError: run" in comm.docs()[-1]["notice"] and comm.docs()[-1]["pending"]


def test_edit_sends_the_edited_input(ip):
    cell(ip, "-o out", APPROVE)
    comm = attach(card().run_id)
    comm.click(type="answer", interrupt_id=card().doc["pending"][0]["id"], choice="edit", edited={"to": "bob"})
    assert ip.user_ns["calls"]["send"] == [{"to": "bob"}] and ip.user_ns["out"] == {"sent": "bob"}


class Mail(TypedDict):  # at module level: the annotations are strings, resolved in this module
    to: str


def test_an_edit_its_action_refuses_shows_the_issues_and_resumes_nothing(ip):
    sent = []

    @jupyter_sandbox.action(approval=True)
    def mail(msg: Mail) -> dict:
        sent.append(msg)
        return {"sent": msg["to"]}

    cell(ip, "-o out", "return await actions.mail({to: 'ana'})")
    comm = attach(card().run_id)
    interrupt = card().doc["pending"][0]["id"]
    comm.click(type="answer", interrupt_id=interrupt, choice="edit", edited={"to": 7})
    notice = comm.docs()[-1]["notice"]
    assert notice.startswith("InvalidEdit: the edited input does not match what mail takes") and "$.to" in notice
    assert sent == [] and [p["id"] for p in comm.docs()[-1]["pending"]] == [interrupt]  # still open, nothing sent
    comm.click(type="answer", interrupt_id=interrupt, choice="edit", edited={"to": "bob"})
    assert sent == [{"to": "bob"}] and ip.user_ns["out"] == {"sent": "bob"}


def test_a_stale_click_only_refreshes(ip):
    cell(ip, "--name stale -o out", APPROVE)
    first = card()
    interrupt = first.doc["pending"][0]["id"]
    comm = attach(first.run_id)
    cell(ip, "%sandbox resume stale --answer true", None)  # answered elsewhere
    sent_before = len(comm.docs())
    comm.click(type="answer", interrupt_id=interrupt, choice="reject")
    assert ip.user_ns["calls"]["send"] == [{"to": "ana", "n": 3}] and ip.user_ns["out"] == {"sent": "ana"}
    assert len(comm.docs()) >= sent_before and comm.docs()[-1]["status"] == "completed"
    assert first.approve() is None  # from Python too: nothing open, nothing answered


def test_answers_for_ordinary_and_approval_interrupts():
    plain = Interrupt("r:0", "r", 0, "ask")
    approval = Interrupt("r:0", "r", 0, "send", approval=True)
    assert answer_for(plain, "approve") is True and answer_for(plain, "reject") is False
    assert answer_for(plain, "edit", [1]) == [1]
    assert answer_for(plain, "reject", "no") == {"approved": False, "reason": "no"}
    assert answer_for(approval, "reject") is False  # Reject() has the JSON form false
    assert answer_for(approval, "edit", {"to": "x"}) == {"approved": True, "input": {"to": "x"}}


def test_parallel_interrupts_each_answer_their_own(ip):
    ip.run_cell("""
import jupyter_sandbox
from jupyter_sandbox import ActionInterrupt
@jupyter_sandbox.action
def ask(question, resume=None):
    if resume is None:
        raise ActionInterrupt(data={"html": "<b>" + question + "?</b>", "question": question})
    return resume.value
""")
    cell(ip, "-o out", "return await ctx.parallel([() => actions.ask('a'), () => actions.ask('b')])")
    shown = card()
    first, second = shown.doc["pending"]
    assert first["id"] != second["id"] and first["html"] == "<b>a?</b>" and "question" in first["data"]["p"]
    shown.answer(second["id"], "edit", "B")
    assert "out" not in ip.user_ns and [p["id"] for p in shown.doc["pending"]] == [first["id"]]
    shown.answer(first["id"], "approve")
    assert ip.user_ns["out"] == [True, "B"] and len(cards()) == 1


# -- the line magic ---------------------------------------------------------------------------


def test_runs_lists_names_and_statuses(ip):
    cell(ip, "--name one", "return 1")
    cell(ip, "--name two", APPROVE)
    _, cap = cell(ip, "%sandbox runs", None)
    lines = text(cap).splitlines()[1:]
    assert lines[0].split()[:3] == ["id", "name", "status"]
    assert lines[1].split()[1:3] == ["two", "paused"] and lines[2].split()[1:3] == ["one", "completed"]
    assert "<table" in html(cap)
    _, cap = cell(ip, "%sandbox runs --status completed", None)
    assert "two" not in text(cap)
    _, cap = cell(ip, "%sandbox", None)
    assert "%sandbox needs a subcommand: runs, show, resume" in cap.stderr


def test_runs_names_the_store_it_looked_in(ip, tmp_path):
    _, cap = cell(ip, "%sandbox --store empty.sqlite runs", None)
    assert text(cap) == "no runs in empty.sqlite"  # beside the notebook: named relative to its folder
    cell(ip, "--name one", "return 1")
    _, cap = cell(ip, "%sandbox runs", None)
    assert text(cap).startswith("runs in .sandbox/runs.sqlite\n")
    _, cap = cell(ip, f"%sandbox --store {tmp_path.parent / 'outside.sqlite'} runs", None)
    assert text(cap) == f"no runs in {tmp_path.parent / 'outside.sqlite'}"


def test_show_displays_the_runs_card_with_its_open_interrupts(ip):
    cell(ip, "--name later", APPROVE)
    _, cap = cell(ip, "%sandbox show later", None)
    assert cap.outputs[0].data[CARD_MIME]["pending"][0]["name"] == "send"
    assert 'data-act="approve"' in html(cap)
    card().approve()
    assert sandbox().runs()[0].status == "completed" and cards()[0].doc["status"] == "completed"


def test_resume_in_another_cell_refreshes_the_first_card_and_fills_its_out(ip):
    cell(ip, "--name raffle -o out", APPROVE)
    first = card()
    cell(ip, "%sandbox resume raffle --answer true", None)
    assert first.doc["status"] == "completed" and first.doc["pending"] == []
    assert ip.user_ns["out"] == {"sent": "ana"}  # the first cell's -o, though another cell resumed it


def test_a_resume_cell_after_a_click_shows_the_outcome_and_fills_its_variable(ip):
    cell(ip, "--name clicked", APPROVE)
    comm = attach(card().run_id)
    comm.click(type="answer", interrupt_id=card().doc["pending"][0]["id"], choice="approve")
    assert comm.docs()[-1]["status"] == "completed"
    result, cap = cell(ip, "%sandbox resume clicked --answer true -o later", None)
    assert result.success and "already answered and has completed" in cap.stdout
    assert ip.user_ns["later"] == {"sent": "ana"} and len(ip.user_ns["calls"]["send"]) == 1
    assert card().doc["status"] == "completed"


def test_resume_answers_or_rejects(ip):
    cell(ip, "--name a", APPROVE)
    cell(ip, "--name b", APPROVE)
    cell(ip, '%sandbox resume a --answer \'{"approved": true, "input": {"to": "zoe"}}\' -o out', None)
    assert ip.user_ns["out"] == {"sent": "zoe"}
    cell(ip, "%sandbox resume b --reject 'not now' -o out", None)
    assert ip.user_ns["out"] == {"rejected": "send was rejected: not now"}
    result, cap = cell(ip, "%sandbox resume a --answer true", None)
    assert "already answered and has completed" in cap.stdout and result.success
    result, cap = cell(ip, "%sandbox resume a", None)
    assert "RunStateError: run" in cap.stdout and "is completed" in cap.stdout and "Traceback" not in cap.stdout
    result, cap = cell(ip, "%sandbox resume nope", None)
    assert "no run 'nope'" in cap.stdout + cap.stderr


def test_resume_with_edited_source_renders_the_mismatch(ip):
    cell(ip, "--name m", APPROVE)
    ip.user_ns["edited"] = "await actions.send({to: 'x'})\n" + APPROVE
    result, cap = cell(ip, "%sandbox resume m --answer true --source edited", None)
    assert isinstance(result.error_in_exec, jupyter_sandbox.CallLogMismatchError)
    assert "jsbx-mismatch" in html(cap) and "position 0" in cap.stdout and "Traceback" not in cap.stdout
    assert "the name differs" in cap.stdout  # fetch was recorded, send attempted
    assert sandbox().run(card().run_id).source == "\n" + APPROVE  # the failed edit left the source as it was
    card().approve()  # so the first cell's card still resumes its own script
    assert ip.user_ns["calls"]["send"] == [{"to": "ana", "n": 3}]


def test_a_mismatch_in_one_input_field_names_that_field(ip):
    cell(ip, "--name field", "await actions.fetch({q: 1, page: 1})\nreturn await actions.send({to: 'ana'})")
    ip.user_ns["edited"] = "await actions.fetch({q: 2, page: 1})\nreturn await actions.send({to: 'ana'})"
    result, cap = cell(ip, "%sandbox resume field --answer true --source edited", None)
    assert "only the input differs, in field 'q'" in cap.stdout


def test_signal_wakes_a_parked_run(ip):
    result, cap = cell(ip, "--name waiter -o out", "const e = await ctx.waitForEvent({type: 'go'})\nreturn e.value")
    assert result.success and card().doc["status"] == "parked"
    cell(ip, '%sandbox signal waiter {"type": "go", "value": 7}', None)
    assert ip.user_ns["out"] == 7  # the parked cell's -o, filled when the signal resumed it
    _, cap = cell(ip, '%sandbox signal waiter {"type": "late"}', None)
    assert "RunStateError" in cap.stdout and "is completed" in cap.stdout  # nothing would ever take it


def test_scheduler_wakes_a_parked_cell_and_fills_its_output(ip):
    ip.run_line_magic("config", "SandboxMagics.scheduler_interval = 0.1")
    cell(ip, "-o out", "await ctx.sleep(1100)\nreturn 'woke'")
    shown = card()
    assert shown.doc["status"] == "parked"
    deadline = time.monotonic() + bound(5)
    while ip.user_ns.get("out") != "woke" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ip.user_ns.get("out") == "woke" and shown.doc["status"] == "completed"


def test_a_card_follows_its_run_resumed_by_another_kernel(ip, tmp_path):
    ip.run_line_magic("config", "SandboxMagics.scheduler_interval = 0")  # this kernel's scheduler stays off
    cell(ip, "-o out", APPROVE)
    shown = card()
    comm = attach(shown.run_id)
    counters, signatures = {}, {}
    card_registry.poll_once(counters, signatures)  # what the poller thread does every 0.5 s
    with jupyter_sandbox.Sandbox(tmp_path / ".sandbox" / "runs.sqlite") as other:  # a second notebook's kernel
        other.action(name="fetch")(lambda query: {"n": 0})  # replayed, not called
        other.action(approval=True, name="send")(lambda msg: {"sent": "from elsewhere"})
        other.resume(shown.run_id, True)
    card_registry.poll_once(counters, signatures)
    assert shown.doc["status"] == "completed" and ip.user_ns["out"] == {"sent": "from elsewhere"}
    assert comm.docs()[-1]["status"] == "completed"


def test_an_unchanged_store_is_not_read_again(ip, monkeypatch):
    cell(ip, "-o out", APPROVE)
    counters, signatures = {}, {}
    card_registry.poll_once(counters, signatures)
    monkeypatch.setattr(card().sb, "timeline", None)  # a redraw would call it
    card_registry.poll_once(counters, signatures)


def test_check_reports_determinism_or_the_divergence(ip):
    cell(ip, "--name c -o out", "return (await actions.fetch(1)).n")
    _, cap = cell(ip, "%sandbox check c", None)
    assert "deterministic" in text(cap) and "✓" in html(cap)
    ip.user_ns["edited"] = "await actions.fetch(2)\nreturn 1"
    _, cap = cell(ip, "%sandbox check c --source edited", None)
    assert "diverged at position 0" in text(cap) and "jsbx-mismatch" in html(cap)


def test_fork_tries_another_answer(ip):
    cell(ip, "--name f -o out", APPROVE)
    card().approve()
    seq = next(e["seq"] for e in sandbox().timeline(sandbox().runs()[0].id)["entries"] if e["kind"] == "interrupt")
    cell(ip, f"%sandbox fork f --at {seq + 1} --answer false --name what-if -o out", None)
    assert ip.user_ns["out"] == {"rejected": "send was rejected"}
    assert [r.name for r in sandbox().runs()][:2] == ["what-if", "f"]


def test_export_and_import_into_another_store(ip, tmp_path):
    cell(ip, "--name x", APPROVE)
    _, cap = cell(ip, f"%sandbox export x {tmp_path / 'x.run'}", None)
    assert "exported run" in cap.stdout
    _, cap = cell(ip, f"%sandbox --store other.sqlite import {tmp_path / 'x.run'}", None)
    assert "imported run" in cap.stdout and "(paused)" in cap.stdout
    cell(ip, "%sandbox --store other.sqlite resume x --answer true -o out", None)
    assert ip.user_ns["out"] == {"sent": "ana"}


def test_a_card_is_bound_to_its_store_not_to_a_run_of_the_same_id_imported_elsewhere(ip, tmp_path):
    cell(ip, "--name x", APPROVE)
    first = card()
    comm = attach(first.run_id)  # the original card's renderer, on the default store
    cell(ip, f"%sandbox export x {tmp_path / 'x.run'}", None)
    cell(ip, f"%sandbox --store other.sqlite import {tmp_path / 'x.run'}", None)
    cell(ip, "%sandbox --store other.sqlite resume x --answer true -o out", None)
    assert ip.user_ns["out"] == {"sent": "ana"} and card().doc["status"] == "completed"
    assert first.doc["status"] == "paused" and "other" not in first.doc["store"]
    assert comm.docs() and all(d["status"] == "paused" and "other" not in d["store"] for d in comm.docs())
    assert sandbox().store.get_run(first.run_id).status == "interrupted"


def test_module_decorators_use_the_store_beside_the_notebook(ip, tmp_path):
    assert jupyter_sandbox.default_sandbox() is sandbox()
    assert sandbox().store.path == str(tmp_path / ".sandbox" / "runs.sqlite")
    assert {"fetch", "send"} <= set(notebook.sandbox_for("other.sqlite").actions)


def test_config_points_the_magics_at_a_postgres_store(ip, postgres_url):
    from jupyter_sandbox.stores.postgres import PostgresStore

    ip.run_line_magic("config", f"SandboxMagics.store = {postgres_url!r}")
    cell(ip, "--name shared", "return 1")
    assert isinstance(sandbox().store, PostgresStore) and sandbox().runs()[0].name == "shared"
