"""Tutorial 07 with two real kernels on the suite's PostgreSQL server: the approver's answer completes the first card.

The notebook's kernel reads the server's URL from ``JUPYTER_SANDBOX_STORE`` (as a team's kernels would) and starts
the approver's kernel itself; these tests run it as readers do (nbclient) and as CI checks tutorials (nbval).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from tutorials import run_under_nbval

from jupyter_sandbox.notebook.card_doc import CARD_MIME

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _run(tmp_path: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / "07-team.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []  # what the saved notebook shows must not count: only what this run produced
    NotebookClient(nb, kernel_name="python3", timeout=90, resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def _cell(nb: nbformat.NotebookNode, first_line: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(first_line))


def test_the_first_kernels_card_turns_completed_when_the_second_kernel_approves(tmp_path, monkeypatch, postgres_server):
    monkeypatch.setenv("JUPYTER_SANDBOX_STORE", postgres_server)
    nb = _run(tmp_path)
    run_cell = _cell(nb, "%%sandbox --name refund-1042")
    card = next(o for o in run_cell.outputs if CARD_MIME in o.get("data", {}))
    # The cell's card was drawn paused; only the first kernel's watcher, seeing the store change, redraws it.
    assert card["data"][CARD_MIME]["status"] == "completed"
    assert card["data"][CARD_MIME]["pending"] == []
    assert "paused" in "".join(o.get("text", "") for o in _cell(nb, "# NBVAL_CHECK_OUTPUT\nfrom").outputs)
    approved = "".join(o.get("text", "") for o in _cell(nb, 'approver("%sandbox resume').outputs)
    assert "completed" in approved and "no runs waiting for an answer" in approved
    waited = "".join(o.get("text", "") for o in _cell(nb, "# NBVAL_CHECK_OUTPUT\nimport time").outputs)
    assert waited.strip() == "completed {'order': 1042, 'ref': 'RF-1042'}"  # -o filled by the other kernel's resume


def test_tutorial_07_runs_under_nbval_with_its_checked_outputs(tmp_path, monkeypatch, postgres_server):
    monkeypatch.setenv("JUPYTER_SANDBOX_STORE", postgres_server)
    for name in ("07-team.ipynb", "nbval_sanitize.cfg"):
        shutil.copy(NOTEBOOKS / name, tmp_path)
    run_under_nbval(tmp_path, ["07-team.ipynb"])
