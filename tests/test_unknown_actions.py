"""An unknown action name is an ActionError that says what to call instead.

After a kernel restart, before the notebook registers its actions again, this is
the first error every user meets: it must name the action, list the registered
ones and suggest the closest, for ``actions.NAME(...)`` and ``ctx.call`` alike.
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionError, Sandbox

BOTH_BACKENDS = True  # the conformance suite: each test on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def publishing(sb):
    for name in ("publish", "preview", "send_email", "search"):
        sb.action(lambda x: x, name=name)
    return sb


CALLS = {"actions.NAME": "actions.publsh({draft: 1})", "ctx.call": "ctx.call('publsh', {draft: 1})"}


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_an_unknown_action_is_an_action_error_the_script_can_catch(publishing, call):
    result = publishing.eval(
        f"try {{ await {call}; return 'called' }} "
        "catch (e) { return [e instanceof ActionError, e.name, e.action, e.message] }"
    )
    is_action_error, name, action, message = result.output
    assert (is_action_error, name, action) == (True, "ActionError", "publsh")
    assert message == (
        'no action named "publsh" is registered; did you mean "publish"? '
        "(available: preview, publish, search, send_email)"
    )


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_an_uncaught_unknown_action_fails_the_run_with_that_action_error(publishing, call):
    with pytest.raises(ActionError) as info:
        publishing.eval(f"await {call}")
    assert info.value.action == "publsh"
    assert 'did you mean "publish"?' in str(info.value)
    assert info.value.line == 1


def test_with_no_action_registered_the_message_says_none(sb):
    with pytest.raises(ActionError) as info:
        sb.eval("await actions.publish(1)")
    assert 'no action named "publish" is registered (available: none)' in str(info.value)


def test_a_name_far_from_every_action_gets_no_suggestion(publishing):
    result = publishing.eval("return await actions.zzz(1).catch((e) => e.message)")
    assert result.output == 'no action named "zzz" is registered (available: preview, publish, search, send_email)'


def test_a_case_slip_is_suggested(publishing):
    result = publishing.eval("return await actions.SendEmail(1).catch((e) => e.message)")
    assert 'did you mean "send_email"?' in result.output


def test_a_long_list_of_actions_is_cut_short(sb):
    for i in range(60):
        sb.action(lambda x: x, name=f"a{i:02d}")
    result = sb.eval("return await actions.nope(1).catch((e) => e.message)")
    assert result.output.endswith("a39, and 20 more)")


def test_a_huge_unknown_name_is_shown_cut_short_and_costs_no_suggestion(publishing):
    result = publishing.eval("const name = 'p'.repeat(1 << 20); return await ctx.call(name, 1).catch((e) => e.message)")
    assert len(result.output) < 300 and "..." in result.output


def test_actions_stays_a_plain_frozen_object_for_everything_else(publishing):
    result = publishing.eval(
        "return ['publsh' in actions, 'publish' in actions, Object.keys(actions).sort(), actions.then === undefined, "
        "actions.toJSON === undefined, JSON.stringify(actions), typeof actions.toString,"
        " actions.hasOwnProperty('publish'), "
        "actions instanceof Object, Object.isFrozen(actions), typeof actions[Symbol.iterator]]"
    )
    assert result.output == [
        False,
        True,
        ["preview", "publish", "search", "send_email"],
        True,
        True,
        "{}",
        "function",
        True,
        True,
        True,
        "undefined",
    ]


def test_awaiting_the_actions_object_itself_does_not_hang(publishing):
    assert publishing.eval("const a = await actions; return a === actions").output is True


def test_an_unknown_action_makes_no_journal_entry_and_replays_the_same(publishing, tmp_path):
    result = publishing.eval("const m = await actions.publsh(1).catch((e) => e.message); return m")
    kinds = [e["kind"] for e in publishing.run(result.run_id).entries]
    assert "call" not in kinds and "result" not in kinds
    assert publishing.check(result.run_id).deterministic


def one_edit(name: str, data) -> str:
    """``name`` with one typo: a letter dropped, doubled, changed, or two neighbours swapped."""
    i = data.draw(st.integers(0, len(name) - 1))
    kind = data.draw(st.sampled_from(["drop", "double", "change", "swap"]))
    if kind == "drop":
        return name[:i] + name[i + 1 :]
    if kind == "double":
        return name[:i] + name[i] + name[i:]
    if kind == "change":
        return name[:i] + data.draw(st.sampled_from("qxz")) + name[i + 1 :]
    j = min(i + 1, len(name) - 1)
    return name[:i] + name[j] + name[i] + name[j + 1 :] if j != i else name[:-1] + "q"


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, change, swap neighbours) from a to b: the test's own reference."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


NAMES = st.from_regex(r"[a-z][a-z_]{5,11}", fullmatch=True)


@settings(max_examples=scaled(40))
@given(names=st.lists(NAMES, min_size=1, max_size=5, unique=True), data=st.data())
def test_for_any_one_letter_typo_of_a_name_unlike_the_others_that_name_is_suggested(names, data):
    target = data.draw(st.sampled_from(names))
    typo = one_edit(target, data)
    assume(typo not in names)
    assume(all(distance(typo, other) > 1 for other in names if other != target))  # the target is the closest
    sb = Sandbox()
    try:
        for name in names:
            sb.action(lambda x: x, name=name)
        message = sb.eval(f"return await actions[{typo!r}](1).catch((e) => e.message)").output
    finally:
        sb.close()
    assert f'did you mean "{target}"?' in message
    assert f"(available: {', '.join(sorted(names))})" in message


@pytest.mark.parametrize("script", ["actions.rwa.echo({x: 1})", "actions.raw.ehco.deep(1)", "actions.nope.a.b.c()"])
def test_a_misspelt_namespace_is_the_same_action_error_as_a_misspelt_action(sb, script):
    sb.action(lambda x: x, name="raw.echo")
    result = sb.eval(
        f"try {{ await {script}; return 'called' }} "
        "catch (e) { return [e instanceof ActionError, e.action, e.message] }"
    )
    is_action_error, action, message = result.output
    assert is_action_error and action == script.removeprefix("actions.").split("(")[0]
    assert "is registered" in message and "raw.echo" in message


def test_a_misspelt_namespace_suggests_the_action_it_resembles(sb):
    sb.action(lambda x: x, name="raw.echo")
    with pytest.raises(ActionError, match='did you mean "raw.echo"'):
        sb.eval("await actions.rwa.echo(1)")
