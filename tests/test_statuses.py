"""One vocabulary of run statuses (``results.STATUSES``) wherever a run's status is shown: a ToolResult, the MCP
server's ``get_run`` and ``list_runs``, the card, ``%sandbox runs``; a status filter outside it is an error."""

from __future__ import annotations

import pytest
from typecheck import flagged_lines

from jupyter_sandbox import Sandbox, SandboxInterrupt
from jupyter_sandbox.errors import InvalidValue, SandboxError
from jupyter_sandbox.notebook.card_doc import card_document
from jupyter_sandbox.results import STATUSES, status_word

CHAIN = "if ((ctx.input ?? 0) < 2) await ctx.continueAsNew((ctx.input ?? 0) + 1); return 'done ' + ctx.input"


@pytest.fixture
def sb(tmp_path):
    sandbox = Sandbox(tmp_path / "runs.sqlite")

    @sandbox.action(approval=True)
    def send(to: str) -> str:
        return f"sent to {to}"

    yield sandbox
    sandbox.close()


def _paused(sb: Sandbox) -> str:
    with pytest.raises(SandboxInterrupt) as paused:
        sb.eval("return await actions.send('ann')")
    return paused.value.run_id


def test_a_completed_continue_as_new_chain_is_completed_with_its_last_output(sb):
    first = sb.eval(CHAIN).run_ids[0]
    result = sb.tool().result(first)
    assert (result.status, result.output) == ("completed", "done 2")
    assert sb.status(first) == "completed"
    assert card_document(sb, first)["status"] == "completed"


def test_a_stalled_run_is_stalled_and_resumable_not_failed(sb):
    run_id = _paused(sb)
    sb.store.update_run(run_id, status="running", owner="a-host-that-died", lease_until=1.0)
    assert sb.store.get_run(run_id).status == "stalled"
    result = sb.tool().result(run_id)
    assert result.status == "stalled" and result.error is None and "resume_run" in result.content
    assert sb.tool().resume(run_id, True).status == "completed"


def test_a_run_waiting_for_an_answer_is_paused_in_every_view(sb):
    run_id = _paused(sb)
    assert sb.tool().result(run_id).status == "paused"
    assert sb.status(run_id) == "paused"
    assert card_document(sb, run_id)["status"] == "paused"
    assert [r.id for r in sb.runs(status="paused")] == [run_id]


def test_the_store_spelling_of_paused_still_filters(sb):
    run_id = _paused(sb)
    assert [r.id for r in sb.runs(status="interrupted")] == [run_id]


@pytest.mark.parametrize("word", ["pased", "PAUSED", "", "done"])
def test_an_unknown_status_filter_is_an_error_naming_the_vocabulary(sb, word):
    with pytest.raises(InvalidValue, match="completed") as error:
        sb.runs(status=word)
    assert isinstance(error.value, SandboxError)


def test_every_stored_status_has_a_word_of_the_vocabulary():
    from jupyter_sandbox.stores.runs_table import RUN_STATUSES

    assert {status_word(s) for s in RUN_STATUSES - {"continued"}} <= set(STATUSES)


def test_the_stored_statuses_are_the_typed_vocabulary_of_the_store():
    from typing import get_args

    from jupyter_sandbox.results import Status
    from jupyter_sandbox.stores.runs_table import RUN_STATUSES, RunStatus

    assert set(get_args(RunStatus)) == RUN_STATUSES
    assert get_args(Status) == STATUSES


MISSPELT = """
from jupyter_sandbox.actions import Outcome
from jupyter_sandbox.engine.attempt import AttemptResult
from jupyter_sandbox.results import Status
from jupyter_sandbox.stores.base import RunRow

RunRow(id="r", kind="workflow", status="interrupted")
AttemptResult("reached")
Outcome("child-interrupt")
shown: Status = "paused"
RunRow(id="r", kind="workflow", status="paused")  # line 11: a word, not a stored status
AttemptResult("done")  # line 12
Outcome("okay")  # line 13
word: Status = "interrupted"  # line 14: a stored status, not a word
"""


@pytest.mark.slow
def test_mypy_rejects_a_misspelt_status_or_outcome(tmp_path, mypy_cache):
    assert flagged_lines(MISSPELT, tmp_path, mypy_cache) == [11, 12, 13, 14]
