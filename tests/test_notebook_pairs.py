"""Each tutorial is a pair: ``NN-name.py`` (jupytext percent text, what is edited and reviewed) and
``NN-name.ipynb`` (what readers open, with the outputs nbval checks).

A pair is in sync when the ``.ipynb`` holds exactly the cells its ``.py`` reads as: the same types,
sources and tags, in the same order. ``python notebooks/refresh.py`` brings an ``.ipynb`` up to date
with its ``.py`` (see ``notebooks/README.md``). No kernel runs here: this is a fast check.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.config import load_jupytext_config
from jupytext.paired_paths import paired_paths

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TUTORIALS = sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))


def _cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(cell.cell_type, cell.source, list(cell.metadata.get("tags", []))) for cell in nb.cells]


def _first_difference(text: list, ipynb: list) -> str:
    for index, (a, b) in enumerate(zip(text, ipynb, strict=False)):
        if a != b:
            diff = difflib.unified_diff(b[1].splitlines(), a[1].splitlines(), ".ipynb", ".py", lineterm="")
            return f"cell {index} ({a[0]}, tags {a[2]} in .py, {b[0]}, tags {b[2]} in .ipynb):\n" + "\n".join(diff)
    return f".py has {len(text)} cells, .ipynb has {len(ipynb)}"


def test_every_tutorial_notebook_has_its_text_file_and_every_text_file_its_notebook():
    texts = sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]-*.py"))
    assert TUTORIALS, "no tutorial notebooks found"
    assert texts == TUTORIALS


@pytest.mark.parametrize("name", TUTORIALS)
def test_the_folder_config_pairs_the_notebook_with_its_percent_text_file(name):
    notebook = str(NOTEBOOKS / f"{name}.ipynb")
    config = load_jupytext_config(notebook)
    assert config is not None, "notebooks/jupytext.toml not found"
    paths = dict(paired_paths(notebook, "ipynb", config.default_formats(notebook)))
    assert paths == {notebook: {"extension": ".ipynb"},
                     str(NOTEBOOKS / f"{name}.py"): {"extension": ".py", "format_name": "percent"}}


@pytest.mark.parametrize("name", TUTORIALS)
def test_the_notebook_holds_exactly_the_cells_of_its_text_file(name):
    text = _cells(jupytext.read(NOTEBOOKS / f"{name}.py", fmt="py:percent"))
    ipynb = _cells(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4))
    assert text == ipynb, (f"{name}.py and {name}.ipynb are out of sync; run `python notebooks/refresh.py "
                           f"{name[:2]}` after editing the .py. First difference: " + _first_difference(text, ipynb))
