"""The tutorial notebooks run top to bottom, and the outputs they check still match.

``pytest --nbval-lax`` executes every code cell of ``notebooks/*.ipynb`` in a
fresh kernel and compares the outputs of the cells marked
``# NBVAL_CHECK_OUTPUT`` (or tagged ``nbval-check-output``) with the ones
saved in the notebook, after ``notebooks/nbval_sanitize.cfg`` has replaced
what varies (run ids). It runs on a copy of the folder, so the notebooks'
stores (``.sandbox/`` beside them) are written there, not into the repo.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TUTORIALS = ["01-quickstart", "02-approvals", "03-determinism", "04-workflows", "05-durability", "06-agent", "08-mcp"]


def test_tutorials_run_and_their_checked_outputs_match(tmp_path):
    work = tmp_path / "notebooks"
    work.mkdir()
    cells = 0
    for name in TUTORIALS:
        shutil.copy(NOTEBOOKS / f"{name}.ipynb", work)
        nb = nbformat.read(work / f"{name}.ipynb", as_version=4)
        cells += sum(cell.cell_type == "code" for cell in nb.cells)
        assert any(
            "NBVAL_CHECK_OUTPUT" in cell.source or "nbval-check-output" in cell.metadata.get("tags", [])
            for cell in nb.cells
        ), f"{name} checks no output"
    shutil.copy(NOTEBOOKS / "nbval_sanitize.cfg", work)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval-lax",
            "--nbval-current-env",
            "--nbval-sanitize-with",
            "nbval_sanitize.cfg",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-q",
            *[f"{n}.ipynb" for n in TUTORIALS],
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=280,
    )
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert re.search(rf"\b{cells} passed\b", summary) and "failed" not in summary, summary
