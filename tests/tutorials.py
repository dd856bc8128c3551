"""Running tutorials as CI checks them: nbval executes every code cell and compares the checked outputs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat


def checks_an_output(path: Path) -> bool:
    """Whether a notebook marks at least one cell's output as checked (nbval compares only those)."""
    nb = nbformat.read(path, as_version=4)
    return any(
        "NBVAL_CHECK_OUTPUT" in cell.source or "nbval-check-output" in cell.metadata.get("tags", [])
        for cell in nb.cells
    )


def run_under_nbval(
    folder: Path, names: list[str], *, kernel: str | None = None, env: dict[str, str] | None = None
) -> None:
    """Run ``names`` (notebooks in ``folder``, beside its ``nbval_sanitize.cfg``) under ``pytest --nbval-lax``.

    With ``kernel`` the cells run in that kernelspec (another venv's); without, in this interpreter's
    environment. Fails naming the cell whose output no longer matches.
    """
    cells = sum(cell.cell_type == "code" for name in names for cell in nbformat.read(folder / name, as_version=4).cells)
    where = ["--nbval-kernel-name", kernel] if kernel else ["--nbval-current-env"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", *where, "--nbval-sanitize-with", "nbval_sanitize.cfg"]
        + ["-p", "no:cacheprovider", "-o", "addopts=", "-q", *names],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert re.search(rf"\b{cells} passed\b", summary) and "failed" not in summary, summary
