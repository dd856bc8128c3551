"""Approvals: exactly the decision forms decide, the journal governs, every answer says who gave it, and
only who may answer does. On SQLite and PostgreSQL where a store is involved."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from jupyter_sandbox import (
    ActionError,
    AnswerRefused,
    Approve,
    Edit,
    Reject,
    RunStateError,
    Sandbox,
    SandboxInterrupt,
)
from jupyter_sandbox.errors import UnaddressedAnswer

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "try { return await actions.pay({total: 120}) } catch (e) { return 'caught ' + e.message }"


def _paused(sb: Sandbox, source: str = SCRIPT) -> SandboxInterrupt:
    with pytest.raises(SandboxInterrupt) as caught:
        sb.eval(source)
    return caught.value


def _payer(sb: Sandbox, paid: list, approval=True):
    @sb.action(approval=approval)
    def pay(order):
        paid.append(order)
        return {"paid": order["total"]} if isinstance(order, dict) and "total" in order else {"paid": order}


def _answers(sb: Sandbox, run_id: str) -> list[dict]:
    return [e for e in sb.run(run_id).entries if e["kind"] == "answer"]


# -- one definition of an answer ------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
near_misses = st.sampled_from(
    [
        "false",
        "no",
        "true",
        "yes",
        1,
        0,
        [False],
        [True],
        {"note": "ok"},
        {"approved": "yes"},
        {"approved": 1},
        {"approved": None},
        {"approved": True, "extra": 1},
        {"approved": False, "reason": 3},
        {"approved": False, "input": {"total": 1}},
        {"approve": True},
    ]
)
exact_forms = st.one_of(
    st.just(True),
    st.just(False),
    st.just(Approve()),
    st.builds(Reject, st.none() | st.text(max_size=20)),
    st.builds(Edit, json_values),
    st.just({"approved": True}),
    st.builds(lambda v: {"approved": True, "input": v}, json_values),
    st.builds(lambda r: {"approved": False, "reason": r}, st.none() | st.text(max_size=20)),
    st.just({"approved": False}),
)


def _expected(value):
    """The decision a value states, by the documented forms (README "Who approves"): approve, reject, or None."""
    if isinstance(value, (Approve, Edit)) or value is True:
        return "approve"
    if isinstance(value, Reject) or value is False:
        return "reject"
    if isinstance(value, dict) and value.get("approved") is True and set(value) <= {"approved", "input"}:
        return "approve"
    if isinstance(value, dict) and value.get("approved") is False and set(value) <= {"approved", "reason"}:
        return "reject" if value.get("reason") is None or isinstance(value.get("reason"), str) else None
    return None


@settings(max_examples=scaled(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(exact_forms, near_misses, json_values))
def test_only_the_exact_approve_forms_run_an_approval_action_and_the_journal_records_what_happened(sb, value):
    paid: list = []
    if "pay" not in sb.actions:
        _payer(sb, paid)
    sb._engine.actions["pay"].fn = lambda order: paid.append(order) or {"paid": True}
    paused = _paused(sb)
    expected = _expected(value)
    if expected is None:
        with pytest.raises(RunStateError, match="does not answer the approval of 'pay'"):
            sb.resume(paused.run_id, answers={paused.interrupts[0].id: value})
        assert paid == [] and _answers(sb, paused.run_id) == []
        assert sb.run(paused.run_id).status == "interrupted"
        return
    output = sb.resume(paused.run_id, answers={paused.interrupts[0].id: value}).output
    [answer] = _answers(sb, paused.run_id)
    assert answer["approved"] is (expected == "approve")
    assert (paid != []) is answer["approved"]
    if expected == "reject":
        assert output.startswith("caught pay was rejected")
    elif isinstance(value, Edit) or (isinstance(value, dict) and "input" in value):
        assert paid == [value.input if isinstance(value, Edit) else value["input"]]


@pytest.mark.parametrize("truthy", ["false", "no", 1, [False], {"note": "looks fine"}])
def test_a_truthy_answer_that_is_no_decision_is_refused_before_anything_runs(store_url, truthy):
    with Sandbox(store_url) as sb:
        paid: list = []
        _payer(sb, paid)
        paused = _paused(sb)
        with pytest.raises(RunStateError, match=r"takes exactly True / False, Approve\(\)"):
            sb.resume(paused.run_id, truthy)
        assert paid == [] and _answers(sb, paused.run_id) == []
        assert sb.resume(paused.run_id, Reject("not today")).output == "caught pay was rejected: not today"
        assert paid == [] and _answers(sb, paused.run_id)[0]["reason"] == "not today"


def test_a_question_takes_any_json_value(sb):
    from jupyter_sandbox import ActionInterrupt

    @sb.action
    def ask(q, resume=None):
        if resume is None:
            raise ActionInterrupt(data={"q": q})
        return resume.value

    paused = _paused(sb, "return await actions.ask('colour?')")
    assert sb.resume(paused.run_id, {"note": "blue", "approved": "maybe"}).output == {
        "note": "blue",
        "approved": "maybe",
    }


def test_a_mistyped_interrupt_id_approves_nothing_through_the_tool(store_url):
    with Sandbox(store_url) as sb:
        paid: list = []
        _payer(sb, paid)
        tool = sb.tool()
        paused = tool.run({"script": SCRIPT})
        result = tool.resume(paused.run_id, {f"{paused.run_id}:99": False})
        assert result.status == "paused" and result.error["name"] == "UnaddressedAnswer"
        assert paid == [] and sb.run(paused.run_id).status == "interrupted"
        with pytest.raises(UnaddressedAnswer):
            sb.resume(paused.run_id, answers={f"{paused.run_id}:99": True})
        assert tool.resume(paused.run_id, {paused.pending[0]["id"]: True}).output == {"paid": 120}


def test_one_answer_for_several_open_approvals_answers_none_of_them(sb):
    paid: list = []
    _payer(sb, paid)
    paused = _paused(sb, "return await Promise.all([actions.pay({total: 1}), actions.pay({total: 2})])")
    with pytest.raises(UnaddressedAnswer, match="several open interrupts"):
        sb.resume(paused.run_id, True)
    assert paid == []


# -- the journal governs -----------------------------------------------------------------------------------


def test_a_recorded_rejection_is_never_carried_out_by_a_process_that_registered_no_approval(store_url):
    with Sandbox(store_url) as asking:
        _payer(asking, [])
        paused = _paused(asking)
    with Sandbox(store_url) as other:
        paid: list = []
        _payer(other, paid, approval=False)
        assert other.resume(paused.run_id, False).output == "caught pay was rejected"
        assert paid == []


def test_an_mcp_action_registered_without_approval_does_not_carry_out_a_rejection(store_url):
    with Sandbox(store_url) as asking:
        asking.action(lambda order: order, name="files.delete", approval=True)
        paused = _paused(asking, "try { return await actions.files.delete('a') } catch (e) { return e.message }")
    with Sandbox(store_url) as other:
        deleted: list = []
        other.action(lambda order: deleted.append(order), name="files.delete", approval=False)
        rejected = other.resume(paused.run_id, {"approved": False, "reason": "no"})
        assert rejected.output == "files.delete was rejected: no"
        assert deleted == []


def test_an_answer_from_a_process_without_the_action_is_refused_and_the_run_stays_answerable(store_url):
    with Sandbox(store_url) as asking:
        paid: list = []
        _payer(asking, paid)
        paused = _paused(asking)
        with Sandbox(store_url) as bare:
            with pytest.raises(RunStateError, match="this process has no action 'pay'"):
                bare.resume(paused.run_id, answers={paused.interrupts[0].id: True})
            assert _answers(bare, paused.run_id) == [] and bare.run(paused.run_id).status == "interrupted"
        assert asking.resume(paused.run_id, True).output == {"paid": 120}
        assert paid == [{"total": 120}]


def test_a_recorded_approval_is_carried_out_as_recorded_after_a_crash_and_never_asked_again(store_url, tmp_path):
    """The approving process dies inside the approved call: a fresh process (registering the action
    with or without approval) runs it with the edited input, without asking again."""
    with Sandbox(store_url) as sb:
        _payer(sb, [])
        paused = _paused(sb)
    crash = textwrap.dedent(
        f"""
        import os
        from jupyter_sandbox import Edit, Sandbox
        sb = Sandbox({store_url!r})
        sb.action(lambda order: os._exit(3), name="pay", approval=True)
        sb.resume({paused.run_id!r}, Edit({{"total": 90}}))
        """
    )
    done = subprocess.run([sys.executable, "-c", crash], cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == 3, done.stderr.decode()
    for approval in (False, True):
        with Sandbox(store_url) as fresh:
            paid: list = []
            _payer(fresh, paid, approval=approval)
            if approval:  # the second process finds the run completed by the first
                assert fresh.run(paused.run_id).status == "completed"
                continue
            assert fresh.resume(paused.run_id).output == {"paid": 90}
            assert paid == [{"total": 90}]


def test_a_decided_interrupt_is_not_decided_again(store_url, tmp_path):
    with Sandbox(store_url) as sb:
        _payer(sb, [])
        paused = _paused(sb)
    crash = (
        "import os\nfrom jupyter_sandbox import Sandbox\n"
        f"sb = Sandbox({store_url!r})\n"
        "sb.action(lambda order: os._exit(3), name='pay', approval=True)\n"
        f"sb.resume({paused.run_id!r}, True)\n"
    )
    assert subprocess.run([sys.executable, "-c", crash], cwd=ROOT, timeout=120).returncode == 3
    with Sandbox(store_url) as sb:
        _payer(sb, [])
        with pytest.raises(RunStateError, match=r"was already answered by .* UTC: approved; resume without an answer"):
            sb.resume(paused.run_id, answers={paused.interrupts[0].id: False})


programs = st.lists(
    st.tuples(st.booleans(), st.booleans(), st.booleans()),  # asked in the first process, approved, registered later
    min_size=1,
    max_size=4,
)


@settings(max_examples=scaled(15), deadline=None)
@given(calls=programs)
def test_resuming_in_a_fresh_sandbox_with_another_registration_never_changes_what_runs(calls):
    # Every call is made in the first attempt (the process whose registration decides whether it needs
    # approval); each answer then comes from a fresh process that registers every action otherwise.
    source = (
        "return await Promise.all(["
        + ", ".join(f"actions.a{i}({i}).catch((e) => e.name)" for i in range(len(calls)))
        + "])"
    )
    ran: list = []
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "runs.sqlite")

        def register(sb: Sandbox, which: int) -> None:
            for i, flags in enumerate(calls):
                sb.action(lambda n: ran.append(n) or n, name=f"a{i}", approval=flags[which])

        with Sandbox(store) as first:
            register(first, 0)
            try:
                outcome = first.eval(source).output
            except SandboxInterrupt as paused:
                run_id, outcome = paused.run_id, None
        while outcome is None:
            with Sandbox(store) as fresh:  # each answer from a process registering otherwise
                register(fresh, 2)
                pending = fresh.run(run_id).pending[0]
                entries = fresh.run(run_id).entries
                number = next(e["input"] for e in entries if e["kind"] == "call" and e["slot"] == pending["position"])
                try:
                    outcome = fresh.resume(run_id, answers={pending["id"]: calls[number][1]}).output
                except SandboxInterrupt:
                    outcome = None
    expected = [i for i, (asked, approved, _) in enumerate(calls) if not asked or approved]
    assert sorted(ran) == expected
    assert outcome == [i if i in expected else "ActionError" for i in range(len(calls))]


# -- who, how, when -------------------------------------------------------------------------------------------


def test_every_answer_entry_says_who_how_and_when_on_the_stores_clock(store_url, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    with Sandbox(store_url) as sb, Sandbox(store_url, identity="bo@lab") as named:
        _payer(sb, [])
        _payer(named, [])
        first, second = _paused(sb), _paused(sb)
        sb.resume(first.run_id, True)
        named.tool().resume(second.run_id, Edit({"total": 5}))
        [by_api] = _answers(sb, first.run_id)
        [by_tool] = _answers(sb, second.run_id)
    assert (by_api["by"], by_api["via"]) == ("ada", "api")
    assert (by_tool["by"], by_tool["via"], by_tool["input"]) == ("bo@lab", "tool", {"total": 5})
    assert by_api["process"].endswith(f":{__import__('os').getpid()}")
    assert abs(by_api["answered_at"] - by_api["at"]) < 600  # the store's clock, in seconds
    if store_url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(store_url) as conn:
            role = conn.execute("SELECT current_user").fetchone()[0]
        assert by_api["role"] == role
    else:
        assert "role" not in by_api


def test_the_default_identity_is_user_at_host_without_jupyterhub(monkeypatch):
    import getpass
    import socket

    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    assert Sandbox().identity == f"{getpass.getuser()}@{socket.gethostname()}"


def test_the_export_carries_who_answered(tmp_path):
    with Sandbox(str(tmp_path / "a.sqlite"), identity="ada@lab") as sb:
        _payer(sb, [])
        paused = _paused(sb)
        sb.resume(paused.run_id, True)
        sb.export_run(paused.run_id, tmp_path / "run.jsbx")
    with Sandbox(str(tmp_path / "b.sqlite")) as other:
        run_id = other.import_run(tmp_path / "run.jsbx")
        [answer] = _answers(other, run_id)
    assert (answer["by"], answer["via"], answer["approved"]) == ("ada@lab", "api", True)


def test_the_tools_result_says_who_approved(sb):
    _payer(sb, [])
    tool = sb.tool()
    paused = tool.run({"script": SCRIPT})
    done = tool.resume(paused.run_id, True)
    assert done.answers == [tool.result(paused.run_id).answers[0]]
    assert done.answers[0]["by"] == sb.identity and done.answers[0]["via"] == "tool"
    assert done.answers[0]["approved"] is True


# -- who may answer --------------------------------------------------------------------------------------------


def test_an_approval_callable_decides_per_call_and_its_verdict_is_journaled(store_url):
    with Sandbox(store_url) as sb:
        paid: list = []
        sb.action(lambda o: paid.append(o["total"]) or o["total"], name="pay", approval=lambda o: o["total"] > 100)
        assert sb.eval("return await actions.pay({total: 5})").output == 5
        paused = _paused(sb, "return await actions.pay({total: 500})")
        calls = [e for e in sb.run(paused.run_id).entries if e["kind"] == "call"]
        assert calls[0]["approval"] is True and paid == [5]
    with Sandbox(store_url) as other:  # a policy that would now say no changes nothing recorded
        other.action(lambda o: paid.append(o["total"]) or o["total"], name="pay", approval=lambda o: False)
        with pytest.raises(ActionError, match="pay was rejected"):
            other.resume(paused.run_id, False)
    assert paid == [5]


class Order(BaseModel):
    total: int


def test_an_approval_callable_gets_the_validated_input(sb):
    seen: list = []

    @sb.action(approval=lambda order: seen.append(order) or order.total > 100)
    def pay(order: Order) -> int:
        return order.total

    assert sb.eval("return await actions.pay({total: 7})").output == 7
    assert seen == [Order(total=7)]


def test_the_approvers_policy_refuses_before_anything_is_recorded(store_url):
    asked = []

    def approvers(identity, channel, interrupt):
        asked.append((identity, channel, interrupt.name, interrupt.approval))
        return channel == "card"

    with Sandbox(store_url, identity="eve@lab", approvers=approvers) as sb:
        paid: list = []
        _payer(sb, paid)
        paused = _paused(sb)
        with pytest.raises(AnswerRefused, match="eve@lab .via api. may not answer"):
            sb.resume(paused.run_id, True)
        assert paid == [] and _answers(sb, paused.run_id) == []
        assert asked == [("eve@lab", "api", "pay", True)]
        assert sb.resume(paused.run_id, True, channel="card").output == {"paid": 120}


def test_a_database_role_without_the_grant_cannot_record_an_answer(postgres_server, postgres_url):
    """The team setup of README "Who approves": answers are journal rows of kind 'answer', and a row
    policy lets only members of `approvers` insert them."""
    import psycopg

    with Sandbox(postgres_url) as owner:
        _payer(owner, [])
        paused = _paused(owner)
        schema = owner.store.schema
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        for role in ("jsbx_approver", "jsbx_viewer"):
            conn.execute(
                f"DO $$ BEGIN CREATE ROLE {role} LOGIN PASSWORD 'pw'; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
            )
            conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}")
        conn.execute("DO $$ BEGIN CREATE ROLE approvers; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT approvers TO jsbx_approver")
        conn.execute(f"ALTER TABLE {schema}.run_journal ENABLE ROW LEVEL SECURITY")
        conn.execute(f"CREATE POLICY journal_read ON {schema}.run_journal FOR SELECT USING (true)")
        conn.execute(
            f"CREATE POLICY journal_write ON {schema}.run_journal FOR INSERT "
            "WITH CHECK (kind <> 'answer' OR pg_has_role(current_user, 'approvers', 'MEMBER'))"
        )
    from urllib.parse import urlsplit, urlunsplit

    def login(role: str) -> str:
        parts = urlsplit(postgres_url)
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit(parts._replace(netloc=f"{role}:pw@{host}"))

    with Sandbox(login("jsbx_viewer")) as viewer:
        paid: list = []
        _payer(viewer, paid)
        with pytest.raises(AnswerRefused, match="'jsbx_viewer' may not record answers"):
            viewer.resume(paused.run_id, True)
        assert paid == [] and _answers(viewer, paused.run_id) == []
        assert viewer.run(paused.run_id).status == "interrupted"
    with Sandbox(login("jsbx_approver")) as approver:
        paid = []
        _payer(approver, paid)
        assert approver.resume(paused.run_id, True).output == {"paid": 120}
        [answer] = _answers(approver, paused.run_id)
    assert answer["role"] == "jsbx_approver" and paid == [{"total": 120}]


def test_a_rejection_reaches_the_script_as_a_rejected_action_error(sb):
    _payer(sb, [])
    paused = _paused(sb, "return await actions.pay({total: 1})")
    with pytest.raises(ActionError, match="pay was rejected: too much"):
        sb.resume(paused.run_id, Reject("too much"))


def test_the_card_shows_who_approved_and_the_input_that_ran_with_its_difference(sb):
    from jupyter_sandbox.notebook.card_doc import card_document
    from jupyter_sandbox.notebook.card_html import card_html

    _payer(sb, [])
    sb.identity = "ada@lab"
    paused = _paused(sb, "return await actions.pay({total: 120, to: 'bo'})")
    sb.resume(paused.run_id, Edit({"total": 90, "to": "bo"}), channel="card")
    [answered] = card_document(sb, paused.run_id)["answered"]
    assert (answered["by"], answered["via"], answered["changes"]) == ("ada@lab", "card", ["$.total: 120 → 90"])
    html = card_html(card_document(sb, paused.run_id))
    assert f"approved by ada@lab via card, {answered['when']}" in html
    assert "ran with" in html and "$.total: 120 → 90" in html
