#!/usr/bin/env python
"""Bring each tutorial's ``.ipynb`` up to date with its ``.py`` and re-execute it.

    python notebooks/refresh.py                # every tutorial
    python notebooks/refresh.py 02 04          # the tutorials whose names start so
    python notebooks/refresh.py --no-execute   # sync the cells only (a prose edit): no kernel

A tutorial is a jupytext pair (``notebooks/jupytext.toml``): ``NN-name.py`` in the percent format
holds the cells and is what you edit; ``NN-name.ipynb`` is what readers open, with saved outputs.
This reads the ``.py``, keeps the ``.ipynb``'s notebook metadata and cell ids (so a diff shows only
what changed), executes the notebook with nbclient in a temporary folder (so no ``.sandbox/`` store
is left beside the notebooks), drops the widgets' saved state and writes the ``.ipynb`` back.
nbval then compares the cells marked ``# NBVAL_CHECK_OUTPUT`` (or tagged ``nbval-check-output``, for
``%%sandbox`` cells, whose first line must be the magic) with those outputs: see
``tests/test_first_command.py``, which runs them so in the venv the README's first command makes.
With ``--no-execute`` a code cell whose source changed loses its outputs, and every other cell
keeps its own.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbformat
from jupytext.combine import combine_inputs_with_outputs

HERE = Path(__file__).resolve().parent
FORMAT = "py:percent"
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def synced(name: str) -> nbformat.NotebookNode:
    """The cells of ``name.py`` with the metadata, ids and (for unchanged cells) outputs of ``name.ipynb``."""
    text = jupytext.read(HERE / f"{name}.py", fmt=FORMAT)
    path = HERE / f"{name}.ipynb"
    if not path.exists():  # a new tutorial
        text.metadata = nbformat.from_dict(METADATA)
        return text
    old = nbformat.read(path, as_version=4)
    sources = {cell.get("id"): cell.source for cell in old.cells}
    nb = combine_inputs_with_outputs(text, old, fmt=FORMAT)
    for cell in nb.cells:
        if cell.cell_type == "code" and sources.get(cell.get("id")) != cell.source:
            cell.outputs, cell.execution_count = [], None  # outputs of other code would mislead
    return nb


def execute(nb: nbformat.NotebookNode, name: str) -> None:
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory() as tmp:  # the notebook's .sandbox/ goes there, not into the repo
        started = time.monotonic()
        # Now and then nbclient gets the reply of a cell that clicked a panel only when its timeout
        # ends, although the kernel went idle at once; the notebook still comes out right, later.
        client = NotebookClient(
            nb, kernel_name="python3", timeout=60, record_timing=False, resources={"metadata": {"path": tmp}}
        )
        try:
            with client.setup_kernel():
                for index, cell in enumerate(nb.cells):
                    client.execute_cell(cell, index)
        except Exception:
            # Outside the folder: a stray NN-*.ipynb there would be an unpaired tutorial.
            failed = Path(tempfile.mkdtemp(prefix="jsbx-refresh-")) / f"{name}.failed.ipynb"
            nbformat.write(nb, failed)
            print(f"{name}: failed; how far it got: {failed}", file=sys.stderr)
            raise
        print(f"{name}: executed in {time.monotonic() - started:.1f} s")
    # Keep the outputs, not the widgets' state (hundreds of KB per notebook): a saved notebook shows
    # each widget's static HTML copy until its cells run again.
    nb.metadata.pop("widgets", None)


def refresh(name: str, run: bool) -> Path:
    nb = synced(name)
    if run:
        execute(nb, name)
    path = HERE / f"{name}.ipynb"
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return path


def main(argv: list[str]) -> None:
    run = "--no-execute" not in argv
    wanted = [a for a in argv if not a.startswith("--")]
    names = sorted(path.stem for path in HERE.glob("[0-9][0-9]-*.py"))
    chosen = [n for n in names if not wanted or any(n.startswith(w) for w in wanted)]
    if not chosen:
        raise SystemExit(f"no tutorial matches {' '.join(wanted)} (have: {', '.join(names)})")
    for name in chosen:
        print("wrote", refresh(name, run).relative_to(HERE.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
