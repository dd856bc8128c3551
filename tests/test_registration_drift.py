"""Registrations that differ between the process that paused a run and the one that resumes it.

A run calls ``fetch`` (recorded) and then pauses for the approval of ``pay``; a fresh process resumes it with
one registration changed: an action removed, renamed, its kind (sync or async), its schema or its approval
policy changed. Over every change and answer: the resume replays exactly, or fails with a clear
SandboxError naming the action; nothing recorded runs again; and once a process registers the actions as
the first did, the run resumes to the output it would have had.
"""

from __future__ import annotations

import collections
import tempfile
from pathlib import Path

from examples import scaled
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from jupyter_sandbox import Sandbox, SandboxInterrupt
from jupyter_sandbox.errors import SandboxError

CHANGES = (
    "none",
    "remove_fetch",
    "rename_fetch",
    "fetch_schema",
    "fetch_async",
    "fetch_needs_approval",
    "remove_pay",
    "rename_pay",
    "pay_schema",
    "pay_async",
    "pay_without_approval",
    "pay_approval_policy",
)


class Other(BaseModel):
    other: str


def register(sb: Sandbox, ran: collections.Counter, change: str = "none") -> Sandbox:
    """``fetch`` and ``pay`` (needs approval) as the first process registers them, but for ``change``."""

    def fetch(x):
        ran["fetch"] += 1
        return x["q"] * 10

    async def fetch_async(x):
        return fetch(x)

    def fetch_typed(x: Other):
        return fetch({"q": 0})

    def pay(x):
        ran["pay"] += 1
        return {"paid": x["total"]}

    async def pay_async(x):
        return pay(x)

    def pay_typed(x: Other):
        return pay({"total": 0})

    fetches = {"fetch_schema": fetch_typed, "fetch_async": fetch_async}
    if change not in ("remove_fetch", "rename_fetch"):
        sb.action(fetches.get(change, fetch), name="fetch", approval=change == "fetch_needs_approval")
    elif change == "rename_fetch":
        sb.action(fetch, name="fetch_v2")
    pays = {"pay_schema": pay_typed, "pay_async": pay_async}
    approval = {"pay_without_approval": False, "pay_approval_policy": lambda x: x["total"] > 1_000}
    if change not in ("remove_pay", "rename_pay"):
        sb.action(pays.get(change, pay), name="pay", approval=approval.get(change, True))
    elif change == "rename_pay":
        sb.action(pay, name="pay_v2", approval=True)
    return sb


def _script(calls: int) -> str:
    fetches = " + ".join(f"await actions.fetch({{q: {i + 1}}})" for i in range(calls))
    return (
        f"const n = {fetches};\n"
        "try { return {n, paid: await actions.pay({total: n})} } catch (e) { return {n, rejected: e.message} }"
    )


@settings(max_examples=scaled(16), deadline=None)
@given(change=st.sampled_from(CHANGES), approve=st.booleans(), calls=st.integers(1, 3))
@example(change="pay_schema", approve=True, calls=1)  # once failed the approved call for good
@example(change="remove_pay", approve=True, calls=1)
@example(change="rename_fetch", approve=True, calls=2)
def test_a_resume_under_another_registration_replays_exactly_or_fails_naming_the_action(change, approve, calls):
    ran: collections.Counter = collections.Counter()
    n = sum(10 * (i + 1) for i in range(calls))
    expected = {"n": n, "paid": {"paid": n}} if approve else {"n": n, "rejected": "pay was rejected"}
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "runs.sqlite")
        with register(Sandbox(store), ran) as first:
            try:
                first.eval(_script(calls))
            except SandboxInterrupt as paused:
                run_id = paused.run_id
        assert ran == {"fetch": calls}
        with register(Sandbox(store), ran, change) as other:
            try:
                outcome = other.resume(run_id, approve).output
            except SandboxError as exc:
                outcome = exc
        assert ran["fetch"] == calls, "a recorded call ran again"
        if not isinstance(outcome, SandboxError):
            assert outcome == expected and ran["pay"] == int(approve)
            return
        changed = "fetch" if "fetch" in change else "pay"
        assert f"{changed!r}" in str(outcome) or f'"{changed}"' in str(outcome), outcome
        assert ran["pay"] == 0
        with register(Sandbox(store), ran) as restored:  # the registration restored: the run goes on
            assert restored.run(run_id).status in ("interrupted", "failed")
            assert restored.resume(run_id, approve).output == expected
        assert ran == {"fetch": calls, **({"pay": 1} if approve else {})}
