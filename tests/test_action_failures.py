"""An action's failure shows its cause: the Python traceback of the action's own code, and the script line that
called it, for plain and async actions, agents and delegated scripts, live and replayed, in the card and in
what a tool hands the model."""

from __future__ import annotations

import asyncio
import re

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionError, Sandbox, SandboxInterrupt
from jupyter_sandbox.notebook.cards import RunCard
from jupyter_sandbox.tracebacks import MAX_CHARS, MAX_MESSAGE_CHARS

SCRIPT = "const a = 1\nconst b = await actions.divide(a)\nreturn b"


def helper(x):
    return x / 0


def failed(sb: Sandbox, script: str = SCRIPT) -> ActionError:
    with pytest.raises(ActionError) as caught:
        sb.eval(script)
    return caught.value


def assert_actions_frames_only(trace: str | None) -> None:
    assert trace is not None
    assert trace.startswith("Traceback (most recent call last):")
    assert "in divide" in trace and "in helper" in trace and trace.rstrip().endswith("division by zero")
    assert "jupyter_sandbox" not in trace and "asyncio" not in trace and "concurrent" not in trace


def test_a_plain_actions_exception_carries_its_own_frames_and_the_line_of_the_call(sb):
    @sb.action
    def divide(x):
        return helper(x)

    error = failed(sb)
    assert_actions_frames_only(error.traceback)
    assert error.line == 2 and "await actions.divide(a)" in (error.source_line or "")
    assert str(error).startswith("workflow.js:2: ActionError: ZeroDivisionError: division by zero")
    assert error.to_dict()["traceback"] == error.traceback


def test_a_slow_actions_exception_from_its_worker_thread_is_trimmed_the_same(sb):
    import time

    @sb.action
    def divide(x):
        time.sleep(0.05)  # slower than runs in place: a worker thread
        return helper(x)

    for _ in range(2):  # the second call may run in place: the same traceback either way
        assert_actions_frames_only(failed(sb).traceback)


def test_an_async_actions_exception_carries_its_own_frames(sb):
    @sb.action
    async def divide(x):
        await asyncio.sleep(0)
        return helper(x)

    assert_actions_frames_only(failed(sb).traceback)


def test_a_caught_failure_leaves_its_traceback_in_the_journal_and_the_run_completes(sb):
    @sb.action
    def divide(x):
        return helper(x)

    result = sb.eval("try { await actions.divide(1) } catch (e) { return e.message }")
    assert result.output == "ZeroDivisionError: division by zero"
    failure = next(e for e in sb.run(result.run_id).entries if e["kind"] == "result")["error"]
    assert_actions_frames_only(failure["traceback"])


def test_a_failure_replayed_after_a_resume_names_the_same_line_and_traceback(sb):
    @sb.action(approval=True)
    def ask(x):
        return x

    @sb.action
    def divide(x):
        return helper(x)

    script = "const ok = await actions.ask(1)\ntry { await actions.divide(1) } catch (e) {}\nawait actions.ask(2)\n" + (
        "return await actions.divide(2)"
    )
    with pytest.raises(SandboxInterrupt) as first:
        sb.eval(script)
    with pytest.raises(SandboxInterrupt) as second:
        sb.resume(first.value.run_id, True)
    with pytest.raises(ActionError) as last:
        sb.resume(second.value.run_id, True)
    assert last.value.line == 4
    assert_actions_frames_only(last.value.traceback)


def test_an_agents_failure_names_the_line_of_ctx_agent(sb):
    @sb.agent
    def summarize(input):
        return helper(input)

    error = failed(sb, "const x = 1\n\nreturn await ctx.agent({agent: 'summarize', input: x})")
    assert error.line == 3


def test_a_delegated_scripts_failure_names_the_line_of_ctx_delegate(sb):
    @sb.action
    def divide(x):
        return helper(x)

    error = failed(sb, "\nreturn await ctx.delegate({script: 'return await actions.divide(1)', input: 1})")
    assert error.line == 2


def test_an_exception_with_no_frame_of_the_action_has_no_traceback(sb):
    @sb.action
    def odd(x):
        return {1, 2}  # not JSON: the failure is ours, not the action's code

    error = failed(sb, "return await actions.odd(1)")
    assert error.traceback is None and error.line == 1


def test_the_card_shows_the_traceback_collapsed_and_the_error_name_once(sb):
    @sb.action
    def divide(x):
        return helper(x)

    error = failed(sb)
    html = RunCard(sb, error.run_id).bundle()["text/html"]
    assert re.search(r'<details class="jsbx-traceback"[^>]*><summary>Python traceback</summary>', html)
    assert "in helper" in html and '<details class="jsbx-traceback" data-key="traceback" open' not in html
    assert "ZeroDivisionError: ZeroDivisionError" not in html


@settings(max_examples=scaled(10), deadline=None)
@given(depth=st.integers(0, 400), budget=st.integers(600, 6000))
def test_the_tools_content_carries_the_traceback_within_its_budget(depth, budget):
    def recurse(n):
        return 1 / 0 if n == 0 else recurse(n - 1)

    with Sandbox(":memory:") as sb:
        sb.action(lambda x: recurse(depth), name="deep")
        tool = sb.tool(budget=budget)
        content = tool({"script": "const a = 1\nreturn await actions.deep(1)"}).content
    assert len(content.encode()) <= budget
    assert "at line 2" in content
    if budget >= 2000:
        assert "Python traceback of the action:" in content and "ZeroDivisionError: division by zero" in content


def test_a_traceback_is_cut_from_its_start_to_its_bound(sb):
    @sb.action
    def wordy(x):
        raise ValueError("why " * 5000)

    error = failed(sb, "return await actions.wordy(1)")
    assert error.traceback is not None and len(error.traceback) <= MAX_CHARS
    assert error.traceback.rstrip().endswith("why")
    marker, kept = error.traceback.split("\n", 1)
    whole = int(re.fullmatch(r"…\[cut: (\d+) earlier characters\]", marker).group(1)) + len(kept)
    assert whole > len("why " * 5000)  # the count says how much of the whole traceback was cut


@settings(max_examples=scaled(10), deadline=None)
@given(past=st.integers(-MAX_MESSAGE_CHARS // 2, 2 * MAX_MESSAGE_CHARS))  # drawn mostly near 0: the bound's edge
def test_an_actions_error_message_is_cut_past_its_bound_saying_how_much(past):
    length = MAX_MESSAGE_CHARS - len("RuntimeError: ") + past
    text = "RuntimeError: " + "m" * length
    with Sandbox(":memory:") as sb:
        sb.action(lambda x: (_ for _ in ()).throw(RuntimeError("m" * length)), name="wordy")
        caught = sb.eval("try { await actions.wordy(1) } catch (e) { return e.message }").output
    if len(text) <= MAX_MESSAGE_CHARS:
        assert caught == text
    else:
        assert caught == text[:MAX_MESSAGE_CHARS] + f"…[cut: {len(text) - MAX_MESSAGE_CHARS} more characters]"


def test_a_20_mb_error_message_is_caught_by_the_script_cut(sb):
    @sb.action
    def wordy(x):
        raise RuntimeError("m" * (20 << 20))

    caught = sb.eval("try { await actions.wordy(1) } catch (e) { return [e.name, e.message.length] }").output
    assert caught == [
        "ActionError",
        MAX_MESSAGE_CHARS + len(f"…[cut: {(20 << 20) + 14 - MAX_MESSAGE_CHARS} more characters]"),
    ]


def as_the_script_reads(text: str) -> str:
    """``text`` as the realm's ``toWellFormed`` leaves it: a surrogate pair is its character, a lone one U+FFFD."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        pair = "\ud800" <= c <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff"
        if pair:
            out.append(chr(0x10000 + ((ord(c) - 0xD800) << 10) + ord(text[i + 1]) - 0xDC00))
        out.append("\ufffd" if not pair and "\ud800" <= c <= "\udfff" else "" if pair else c)
        i += 2 if pair else 1
    return "".join(out)


# Any text, lone surrogates drawn often (st.text never draws one: its alphabet leaves surrogates out)
ANY_CHARACTER = st.one_of(st.characters(categories=["Cs"]), st.characters(exclude_categories=()))
ANY_TEXT = st.lists(ANY_CHARACTER, max_size=30).map("".join)


@settings(max_examples=scaled(15), deadline=None)
@given(text=ANY_TEXT, at=st.sampled_from([0, 5000]))
def test_any_text_in_an_actions_exception_reaches_the_script_with_lone_surrogates_replaced(tmp_path_factory, text, at):
    message = "x" * at + text
    store = tmp_path_factory.mktemp("surrogates") / "runs.sqlite"
    script = "try { await actions.boom(1) } catch (e) { return [e.name, e.message] }"
    with Sandbox(store) as sb:
        sb.action(lambda x: (_ for _ in ()).throw(RuntimeError(message)), name="boom")
        result = sb.eval(script)
    expected = ["ActionError", f"RuntimeError: {as_the_script_reads(message)}" if message else "RuntimeError"]
    assert result.output == expected
    with Sandbox(store) as again:  # a fresh process's Sandbox replays it from the journal alone
        again.action(lambda x: pytest.fail("a journaled call ran again"), name="boom")
        report = again.check(result.run_id)
    assert report.deterministic and report.output_matches is not False and report.checked == report.recorded == 1


def test_a_lone_surrogate_in_a_cause_or_a_non_text_argument_reaches_the_traceback_and_the_card(sb):
    @sb.action
    def boom(k):
        if k == "cause":
            raise RuntimeError("several") from ValueError("bad \ud800")
        raise RuntimeError({"key": "\udfff"}, 7)

    caught = sb.eval("try { await actions.boom('args') } catch (e) { return e.message }")
    assert caught.output == "RuntimeError: ({'key': '\\udfff'}, 7)"  # the arguments' repr escapes it
    error = failed(sb, "return await actions.boom('cause')")
    assert error.message == "RuntimeError: several"
    assert error.traceback is not None and "ValueError: bad \ufffd" in error.traceback
    assert "bad \ufffd" in RunCard(sb, error.run_id).bundle()["text/html"]
