"""Answer values, over every value a user can send and every channel it comes by.

Only the documented forms decide an approval (``decisions.py``); a question's answer is exactly what was given,
as the script sees it (``None``, JSON null, included: only an answer left out is no answer); any other value is
a clear error and the run is still paused, with nothing recorded.
Channels: ``sb.resume(run, value)``, ``sb.resume(run, answers={id: value})``, the tool's ``resume``, a card's
click, the magic's command line (``%sandbox resume RUN --answer JSON``) and the MCP server's ``resume_run``.
"""

from __future__ import annotations

import json
import math

import pytest
from examples import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, Approve, Edit, Reject, Resume, Sandbox, SandboxInterrupt
from jupyter_sandbox.engine.answers import INTERRUPT_ID
from jupyter_sandbox.errors import RunStateError, SandboxError
from jupyter_sandbox.results import RollbackResult

QUESTION = "return await actions.ask('which colour?')"
APPROVAL = "try { return {paid: await actions.pay({total: 120})} } catch (e) { return {caught: e.message} }"

# JSON as a script holds it: numbers are doubles, an integral one comes back as an int, so past 2**53 the
# number read back is the double's shortest text, not the number given
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(-(2.0**53), 2.0**53, allow_nan=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


class Opaque:
    """A Python object with no JSON form."""


not_json = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, b"bytes", {1, 2}, Opaque(), 10**400, "\ud800", {(1, 2): "key"}]),
    st.builds(lambda v, bad: [v, bad], json_values, st.sampled_from([math.nan, b"x", Opaque(), frozenset()])),
    st.builds(lambda v, bad: {"ok": v, "bad": bad}, json_values, st.sampled_from([math.inf, (1, object())])),
)
decision_like = st.one_of(
    st.just(Approve()),
    st.builds(Reject, st.none() | st.text(max_size=10), st.booleans()),
    st.builds(Edit, json_values),
    st.builds(lambda r: {"approved": False, "reason": r, "rollback": True}, st.none() | st.text(max_size=10)),
    st.builds(lambda v: {"approved": True, "input": v}, json_values),
)


@pytest.fixture(scope="module")
def asking():
    """One sandbox for every example: a question ``ask`` (any answer) and an approval ``pay`` (counted)."""
    sb = Sandbox()
    sb.paid = []

    @sb.action
    def ask(q, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"q": q})
        return {"answer": resume.value}

    @sb.action(approval=True)
    def pay(order):
        sb.paid.append(order)
        return order

    yield sb
    sb.close()


def _paused(sb: Sandbox, source: str) -> SandboxInterrupt:
    with pytest.raises(SandboxInterrupt) as info:
        sb.eval(source)
    return info.value


def _answered(sb: Sandbox, run_id: str) -> list[dict]:
    return [e for e in sb.run(run_id).entries if e["kind"] == "answer"]


def _still_paused(sb: Sandbox, run_id: str) -> None:
    assert sb.run(run_id).status == "interrupted" and _answered(sb, run_id) == []


def _resume(sb: Sandbox, channel: str, paused: SandboxInterrupt, value) -> tuple:
    """Answer through ``channel``: ``(status, output)``, ``("paused",)`` or ``("error", name, message)``."""
    interrupt_id = paused.interrupts[0].id
    try:
        if channel == "first":
            done = sb.resume(paused.run_id, value)
        elif channel == "by_id":
            done = sb.resume(paused.run_id, answers={interrupt_id: value})
        else:
            result = sb.tool().resume(paused.run_id, value)
            if result.error is not None:  # (a refused answer: the run's own status, the refusal as the error)
                return ("error", result.error["name"], result.error["message"])
            return ("paused",) if result.status == "paused" else (result.status, result.output)
    except SandboxInterrupt:
        return ("paused",)
    except (SandboxError, TypeError) as exc:
        return ("error", type(exc).__name__, str(exc))
    return (done.status, None) if isinstance(done, RollbackResult) else ("completed", done.output)


CHANNELS = st.sampled_from(["first", "by_id", "tool"])


def _json_form(value):
    """The JSON form an answer is journaled as, or ``NOT_JSON`` (then it is refused as not JSON)."""
    value = value.to_json() if isinstance(value, (Approve, Reject, Edit)) else value
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")  # (a lone surrogate cannot be stored)
    except (TypeError, ValueError, UnicodeEncodeError):
        return NOT_JSON
    return NOT_JSON if not _ints_fit(value) else json.loads(text)  # (a key JSON can write, an int, is made text)


NOT_JSON = object()


def _ints_fit(value) -> bool:
    if isinstance(value, dict):
        return all(_ints_fit(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_ints_fit(v) for v in value)
    return not (type(value) is int and abs(value) > 1.7976931348623157e308)


def _refused_as_not_json(outcome: tuple) -> bool:
    return outcome[:2] == ("error", "InvalidValue") and "is not JSON" in outcome[2]


@settings(max_examples=scaled(35), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values | not_json | decision_like, channel=CHANNELS)
@example(value={"approved": False, "reason": "no", "rollback": True}, channel="first")
@example(value=Reject("no", rollback=True), channel="tool")
@example(value=None, channel="first")  # null is an answer, on every channel
@example(value=None, channel="tool")
@example(value={"10:30": "standup"}, channel="tool")
def test_a_questions_answer_is_exactly_the_value_given_or_a_clear_error_leaving_it_paused(asking, value, channel):
    paused = _paused(asking, QUESTION)
    outcome = _resume(asking, channel, paused, value)
    form = _json_form(value)
    if form is NOT_JSON:
        assert _refused_as_not_json(outcome), outcome
    elif channel == "tool" and isinstance(value, dict) and any(INTERRUPT_ID.match(k) for k in value):
        assert outcome[:2] == ("error", "UnaddressedAnswer")  # a key shaped like an id: by id, to no one
    else:
        assert outcome == ("completed", {"answer": form})
        assert [e["value"] for e in _answered(asking, paused.run_id)] == [form]
        return
    _still_paused(asking, paused.run_id)


def _approves(value) -> bool | None:
    """What the documented forms say (``decisions.py``): True approves, False rejects, None is refused."""
    if isinstance(value, (Approve, Edit)) or value is True:
        return True
    if isinstance(value, Reject) or value is False:
        return False
    if isinstance(value, dict) and value.get("approved") is True and set(value) <= {"approved", "input"}:
        return True
    if isinstance(value, dict) and value.get("approved") is False and set(value) <= {"approved", "reason", "rollback"}:
        reason, rollback = value.get("reason"), value.get("rollback", False)
        return False if (reason is None or isinstance(reason, str)) and isinstance(rollback, bool) else None
    return None


near_misses = st.sampled_from(
    ["false", "true", "approve", 1, 0, 1.0, [True], {"approved": "true"}, {"approved": 1}, {"approved": True, "x": 1}]
)
edits_not_json = st.builds(lambda bad: {"approved": True, "input": bad}, not_json) | st.builds(Edit, not_json)


@settings(max_examples=scaled(35), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values | near_misses | decision_like | edits_not_json | not_json, channel=CHANNELS)
@example(value="false", channel="first")
@example(value={"approved": False, "reason": 7}, channel="tool")
@example(value=Edit({"total": math.nan}), channel="by_id")
@example(value=None, channel="first")  # null is an answer, and not a decision
@example(value=Reject("no", rollback=True), channel="tool")  # the tool once failed on the rollback's result
def test_only_the_documented_forms_decide_an_approval_through_every_api_channel(asking, value, channel):
    asking.paid.clear()
    paused = _paused(asking, APPROVAL)
    outcome = _resume(asking, channel, paused, value)
    form, approves = _json_form(value), _approves(value)
    if approves is None:
        refused = outcome[:2] == ("error", "RunStateError") and "does not answer the approval of 'pay'" in outcome[2]
        assert refused or _refused_as_not_json(outcome), outcome
    elif form is NOT_JSON:
        assert _refused_as_not_json(outcome), outcome
    elif isinstance(form, dict) and form.get("rollback"):  # the rejection rolls the run back there
        assert outcome == ("rolled_back", None) and asking.paid == []
        assert asking.run(paused.run_id).status == "rolled_back"
        return
    else:
        assert [e["approved"] for e in _answered(asking, paused.run_id)] == [approves]
        if not approves:
            assert asking.paid == [] and outcome[1]["caught"].startswith("pay was rejected")
        else:
            ran = form["input"] if isinstance(form, dict) and "input" in form else {"total": 120}
            assert asking.paid == [ran] and outcome == ("completed", {"paid": ran})
        return
    assert asking.paid == []
    _still_paused(asking, paused.run_id)


# -- null is an answer; an answer left out is none -----------------------------------------------------------


@pytest.mark.parametrize("channel", ["first", "by_id", "tool"])
def test_a_question_answered_with_null_receives_null(asking, channel):
    paused = _paused(asking, QUESTION)
    assert _resume(asking, channel, paused, None) == ("completed", {"answer": None})
    assert [e["value"] for e in _answered(asking, paused.run_id)] == [None]


def test_a_resume_with_no_answer_answers_nothing_and_the_question_asks_again(asking):
    paused = _paused(asking, QUESTION)
    with pytest.raises(SandboxInterrupt):
        asking.resume(paused.run_id)
    assert asking.tool().resume(paused.run_id).status == "paused"
    _still_paused(asking, paused.run_id)


@pytest.mark.parametrize("channel", ["first", "by_id", "tool"])
def test_an_approval_answered_with_null_is_refused_as_no_decision_and_still_waits(asking, channel):
    asking.paid.clear()
    paused = _paused(asking, APPROVAL)
    outcome = _resume(asking, channel, paused, None)
    assert outcome[:2] == ("error", "RunStateError"), outcome
    assert outcome[2].startswith("None (JSON null) does not answer the approval of 'pay'"), outcome
    _still_paused(asking, paused.run_id)
    assert asking.resume(paused.run_id, True).output == {"paid": {"total": 120}}  # nothing was lost


def test_a_resume_position_with_its_value_left_out_answers_nothing_and_null_answers_null(asking):
    paused = _paused(asking, QUESTION)
    bare = list(paused.call_log)  # a call log alone: a new run, answered by position
    with pytest.raises(SandboxInterrupt) as again:  # no answer: the call runs live with no resume value
        asking.eval(QUESTION, call_log=bare, resume=Resume(position=paused.position))
    assert _answered(asking, again.value.run_id) == []
    assert asking.eval(QUESTION, call_log=bare, resume=Resume(position=paused.position, value=None)).output == {
        "answer": None
    }


def test_a_fork_answering_null_gives_the_question_null_and_one_left_out_asks_again(asking):
    paused = _paused(asking, QUESTION)
    asked_at = next(e["seq"] for e in asking.run(paused.run_id).entries if e["kind"] == "interrupt") + 1
    assert asking.fork(paused.run_id, asked_at, None).output == {"answer": None}
    with pytest.raises(SandboxInterrupt):
        asking.fork(paused.run_id, asked_at)


# -- the magic's command line -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def magic(tmp_path_factory):
    """An IPython shell with the extension loaded, its store in a folder of its own, and that store's Sandbox."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import start_ipython

    import jupyter_sandbox
    from jupyter_sandbox.notebook.session import close_session

    start_ipython()
    shell = InteractiveShell.instance()
    store = str(tmp_path_factory.mktemp("magic") / "runs.sqlite")
    close_session()
    jupyter_sandbox.load_ipython_extension(shell)
    shell.run_line_magic("config", f"SandboxMagics.store = {store!r}")
    shell.run_line_magic("config", "SandboxMagics.scheduler_interval = 0")
    from tests.mcp_actions import questions

    sb = shell.magics_manager.registry["SandboxMagics"].sandbox()
    questions(sb)
    yield shell, sb
    shell.config.pop("SandboxMagics", None)
    close_session()


def _on_the_line(value) -> str:
    """``value`` as the magic's ``--answer`` takes it: JSON in single quotes (a quote inside as ``\\u0027``)."""
    text = json.dumps(value, ensure_ascii=False).replace("'", "\\u0027")
    return "' " + text + "'" if text.startswith("-") else "'" + text + "'"  # (argparse takes -1e-07 for an option)


@settings(max_examples=scaled(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values, question=st.booleans())
@example(value="it's a 'quoted' \\ answer", question=True)
@example(value={"approved": False, "reason": "no", "rollback": True}, question=False)  # the magic once raised
@example(value="false", question=False)
@example(value=None, question=True)  # --answer null answers null
def test_the_magics_answer_is_exactly_the_json_on_its_command_line(magic, value, question):
    from IPython.utils.capture import capture_output

    shell, sb = magic
    paused = _paused(sb, QUESTION if question else APPROVAL)
    approves = _approves(value)
    with capture_output():
        try:
            shell.run_line_magic("sandbox", f"resume {paused.run_id} --answer {_on_the_line(value)}")
            error = None
        except Exception as exc:  # the magic's own error, shown as its message
            error = exc
    run = sb.run(paused.run_id)
    answered = _answered(sb, paused.run_id)
    if question:
        assert error is None and run.output == {"answer": value}
        assert [e["value"] for e in answered] == [value]
    elif approves is None:
        assert isinstance(error, RunStateError) and "does not answer the approval of 'pay'" in str(error)
        assert run.status == "interrupted" and answered == []
    elif isinstance(value, dict) and value.get("rollback"):
        assert error is None and run.status == "rolled_back"
    else:
        assert error is None and [e["approved"] for e in answered] == [approves]
        ran = value["input"] if isinstance(value, dict) and "input" in value else {"total": 120}
        assert run.output == ({"paid": ran} if approves else {"caught": "pay was rejected" + _reason(value)})


def _reason(value) -> str:
    return f": {value['reason']}" if isinstance(value, dict) and value.get("reason") else ""


# -- the MCP server's resume_run, over stdio ----------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_session(tmp_path_factory):
    """A client session with ``python -m jupyter_sandbox.mcp`` (no ``--allow-approvals``), driven from sync code."""
    from mcp_portal import served

    with served(tmp_path_factory.mktemp("mcp"), "--actions", "tests.mcp_actions:questions", "--no-scheduler") as (
        call,
        _,
    ):
        yield lambda tool, **arguments: call(tool, arguments).structured_content


@settings(max_examples=scaled(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values | decision_like.map(lambda d: d.to_json() if hasattr(d, "to_json") else d))
@example(value=True)
@example(value=None)  # answers: null is JSON null, the question's answer
@example(value={"approved": True, "input": {"total": 1}})
def test_through_the_mcp_server_a_question_gets_exactly_its_answer_and_no_answer_approves(mcp_session, value):
    asked = mcp_session("run_script", script=QUESTION)
    answered = mcp_session("resume_run", run_id=asked["run_id"], answers=value)
    if isinstance(value, dict) and any(INTERRUPT_ID.match(k) for k in value):
        assert answered["status"] == "paused" and answered["error"]["name"] == "UnaddressedAnswer"
    else:
        assert answered["status"] == "completed" and answered["output"] == {"answer": value}
    gate = mcp_session("run_script", script="return await actions.pay({total: 120})")
    refused = mcp_session("resume_run", run_id=gate["run_id"], answers=value)
    by_id = mcp_session("resume_run", run_id=gate["run_id"], answers={gate["pending"][0]["id"]: value})
    for outcome in (refused, by_id):
        assert outcome["status"] == "paused" and outcome["pending"] == gate["pending"], outcome
        assert outcome["answers"] == [], outcome
    assert mcp_session("get_run", run_id=gate["run_id"])["status"] == "paused"
