"""What a live card shows of a running run: ``ctx.progress`` merged patch by patch, and a journal that grows."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import ActionInterrupt, SandboxInterrupt
from jupyter_sandbox.notebook.card_watch import running, signature
from jupyter_sandbox.notebook.cards import merge_progress

fields = st.sampled_from(["done", "total", "percent", "message"])
values = st.one_of(st.none(), st.integers(-5, 10**6), st.text(max_size=20))
patches = st.one_of(st.none(), st.dictionaries(fields, values, max_size=4))


@settings(max_examples=scaled(200))
@given(st.lists(patches, max_size=8))
def test_progress_is_the_patches_merged_in_order_null_clearing(seq):
    shown = None
    expected: dict | None = None
    for patch in seq:
        shown = merge_progress(shown, patch)
        expected = None if patch is None else {**(expected or {}), **patch}
        expected = None if expected is None else {k: v for k, v in expected.items() if v is not None}
    assert shown == expected


def test_a_number_is_a_percent_and_other_values_a_message():
    assert merge_progress({"done": 1}, 40) == {"done": 1, "percent": 40}
    assert merge_progress(None, "loading") == {"message": "loading"}
    assert merge_progress(None, True) == {"message": "True"}


def test_a_running_runs_signature_moves_as_its_journal_grows(sb):
    marks = []

    @sb.action
    def mark(i):
        marks.append(signature(sb, run_id[0]))
        return i

    run_id: list[str] = []

    @sb.action
    def start():
        return None

    original = sb.store.create_run

    def create_run(run):
        run_id.append(run.id)
        return original(run)

    sb.store.create_run = create_run  # type: ignore[method-assign]
    sb.eval("await actions.start(); for (let i = 0; i < 3; i++) await actions.mark(i); return 1")
    assert len(set(marks)) == 3 and all(running(m) for m in marks)
    assert not running(signature(sb, run_id[0]))


def test_a_paused_runs_signature_has_no_journal_size(sb):
    @sb.action
    def ask():
        raise ActionInterrupt(data={"q": 1})

    with pytest.raises(SandboxInterrupt) as paused:
        sb.eval("return await actions.ask()")
    assert not running(signature(sb, paused.value.run_id))
