"""Each tutorial is a pair: ``NN-name.py`` (jupytext percent text, what is edited and reviewed) and
``NN-name.ipynb`` (what readers open, with the outputs nbval checks).

A pair is in sync when the ``.ipynb`` holds exactly the cells its ``.py`` reads as: the same types,
sources and tags, in the same order. ``python notebooks/refresh.py`` brings an ``.ipynb`` up to date
with its ``.py`` (see ``notebooks/README.md``). No kernel runs here: this is a fast check.
"""

from __future__ import annotations

import difflib
import importlib.util
import shutil
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
    assert paths == {
        notebook: {"extension": ".ipynb"},
        str(NOTEBOOKS / f"{name}.py"): {"extension": ".py", "format_name": "percent"},
    }


@pytest.mark.parametrize("name", TUTORIALS)
def test_the_notebook_holds_exactly_the_cells_of_its_text_file(name):
    text = _cells(jupytext.read(NOTEBOOKS / f"{name}.py", fmt="py:percent"))
    ipynb = _cells(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4))
    assert text == ipynb, (
        f"{name}.py and {name}.ipynb are out of sync; run `python notebooks/refresh.py "
        f"{name[:2]}` after editing the .py. First difference: " + _first_difference(text, ipynb)
    )


# -- notebooks/refresh.py: how a pair is brought back in sync --------------------------------------------


@pytest.fixture
def refresh(tmp_path, monkeypatch):
    """``notebooks/refresh.py`` working on a copy of the tutorials in ``tmp_path``."""
    spec = importlib.util.spec_from_file_location("jsbx_refresh", NOTEBOOKS / "refresh.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path in NOTEBOOKS.glob("[0-9][0-9]-*.*"):
        shutil.copy(path, tmp_path)
    monkeypatch.setattr(module, "HERE", tmp_path)
    return module


def test_syncing_a_pair_that_is_in_sync_leaves_the_notebook_byte_for_byte_unchanged(refresh, tmp_path):
    for name in TUTORIALS:
        refresh.refresh(name, run=False)
        assert (tmp_path / f"{name}.ipynb").read_bytes() == (NOTEBOOKS / f"{name}.ipynb").read_bytes(), name


def test_syncing_takes_the_cells_from_the_text_keeps_ids_and_clears_only_the_changed_code_cells_outputs(
    refresh, tmp_path
):
    name = "01-quickstart"
    before = nbformat.read(tmp_path / f"{name}.ipynb", as_version=4)
    code = [i for i, c in enumerate(before.cells) if c.cell_type == "code" and c.outputs]
    changed, kept = code[0], code[1]
    text = (tmp_path / f"{name}.py").read_text(encoding="utf-8")
    old_line = before.cells[changed].source.splitlines()[-1]
    text = text.replace(old_line, old_line + "  # edited", 1).replace("# # 01 · Quickstart", "# # 01 · Start here", 1)
    (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    refresh.refresh(name, run=False)
    after = nbformat.read(tmp_path / f"{name}.ipynb", as_version=4)
    assert _cells(after) == _cells(jupytext.read(tmp_path / f"{name}.py", fmt="py:percent"))
    assert after.cells[0].source.startswith("# 01 · Start here")
    assert [c.id for c in after.cells] == [c.id for c in before.cells]
    assert after.cells[changed].outputs == [] and after.cells[changed].execution_count is None
    assert after.cells[kept].outputs == before.cells[kept].outputs
    assert after.metadata == before.metadata


@pytest.mark.kernel
@pytest.mark.slow
def test_refreshing_executes_the_notebook_and_saves_outputs_without_widget_state(refresh, tmp_path):
    name = "01-quickstart"
    before = nbformat.read(tmp_path / f"{name}.ipynb", as_version=4)
    text = (tmp_path / f"{name}.py").read_text(encoding="utf-8")
    edited = text.replace('Sandbox().eval("return 1 + 1")', 'Sandbox().eval("return 40 + 2")')
    (tmp_path / f"{name}.py").write_text(edited, encoding="utf-8")
    refresh.refresh(name, run=True)
    after = nbformat.read(tmp_path / f"{name}.ipynb", as_version=4)
    printed = [o.get("text", "") for c in after.cells if c.cell_type == "code" for o in c.outputs]
    assert "1 + 1 = 42\n" in printed
    assert all(c.execution_count for c in after.cells if c.cell_type == "code")
    assert "widgets" not in after.metadata and after.metadata == before.metadata
    assert [c.id for c in after.cells] == [c.id for c in before.cells]
    assert not list(tmp_path.glob(".sandbox")), "the notebook ran beside the files"
