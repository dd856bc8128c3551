"""The shape of the code: no import cycles, and each package's promise about what it imports.

The layer contracts themselves are import-linter's (pyproject ``[tool.importlinter]``,
run by ``.ci/run``); these tests state the two rules a reader relies on most.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest
from typecheck import flagged_lines

import jupyter_sandbox


@pytest.fixture(scope="module")
def graph():
    # Imports under ``if TYPE_CHECKING:`` count: a cycle of annotations still ties the modules together for a reader.
    return grimp.build_graph(
        "jupyter_sandbox", include_external_packages=True, exclude_type_checking_imports=False, cache_dir=None
    )


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    modules = sorted(m for m in graph.modules if m.startswith("jupyter_sandbox"))
    edges = {
        m: sorted(n for n in graph.find_modules_directly_imported_by(m) if n.startswith("jupyter_sandbox"))
        for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_through_others(graph):
    assert _cycles(graph) == []


def test_the_cycle_finder_sees_a_cycle():
    class Loop:  # two modules importing each other
        modules = {"jupyter_sandbox.a", "jupyter_sandbox.b"}

        @staticmethod
        def find_modules_directly_imported_by(module):
            return {"jupyter_sandbox.a": {"jupyter_sandbox.b"}, "jupyter_sandbox.b": {"jupyter_sandbox.a"}}[module]

    assert _cycles(Loop) == [["jupyter_sandbox.a", "jupyter_sandbox.b"]]


@pytest.mark.parametrize("package", ["jupyter_sandbox.engine", "jupyter_sandbox.stores"])
def test_engine_and_stores_never_import_ipython(graph, package):
    chains = [
        graph.find_shortest_chain(importer=package, imported=name)
        for name in ("IPython", "ipywidgets", "anywidget")
        if name in graph.modules
    ]
    assert chains == [None] * len(chains)


def test_stores_never_import_the_engine(graph):
    assert graph.find_shortest_chain(importer="jupyter_sandbox.stores", imported="jupyter_sandbox.engine") is None


def test_stores_import_nothing_of_the_package_but_errors_and_the_json_boundary(graph):
    outside = {
        imported
        for module in graph.find_descendants("jupyter_sandbox.stores") | {"jupyter_sandbox.stores"}
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.startswith("jupyter_sandbox.") and not imported.startswith("jupyter_sandbox.stores")
    }
    assert outside <= {"jupyter_sandbox.errors", "jupyter_sandbox.values"}


def test_the_json_boundary_imports_nothing_of_the_package_but_errors(graph):
    imported = graph.find_modules_directly_imported_by("jupyter_sandbox.values")
    assert {m for m in imported if m.startswith("jupyter_sandbox")} == {"jupyter_sandbox.errors"}


def test_the_attempt_loop_its_handlers_and_its_state_import_in_one_direction(graph):
    # The loop imports the handlers and the state; neither imports the loop (they return effects to it).
    for module in ("requests", "calls", "state", "effects"):
        assert not graph.direct_import_exists(
            importer=f"jupyter_sandbox.engine.{module}", imported="jupyter_sandbox.engine.runner"
        )


def test_the_cycle_check_counts_imports_made_only_for_annotations(graph):
    # saved.py names the engine only under ``if TYPE_CHECKING:``; the graph the cycle check reads still has it.
    assert graph.direct_import_exists(importer="jupyter_sandbox.saved", imported="jupyter_sandbox.engine.runs")


TOOL_OVER = """
from jupyter_sandbox import Sandbox
from jupyter_sandbox.agents.tool import SandboxTool
from jupyter_sandbox.notebook.card_doc import card_document

SandboxTool(Sandbox())
card_document(Sandbox(), "r-1")
SandboxTool(object())  # line 8: not a sandbox
card_document("sb", "r-1")  # line 9
"""


@pytest.mark.slow
def test_the_agents_and_notebook_layers_type_the_sandbox_they_are_given(tmp_path, mypy_cache):
    assert flagged_lines(TOOL_OVER, tmp_path, mypy_cache) == [8, 9]


def _store_reads(package: str) -> list[str]:
    """Every ``X.store`` read in a package, as ``path:line X.store``."""
    root = Path(jupyter_sandbox.__file__).parent
    found = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "store":
                found.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("package", ["notebook", "agents"])
def test_the_notebook_and_agents_layers_never_touch_a_sandboxs_store(package):
    # The facade's methods are the way in (store_path, run(journal=False), journal_bytes, change_counter,
    # listen): the only `.store` left is the --store option and the SandboxMagics.store setting.
    reads = [r for r in _store_reads(package) if not r.endswith((" args.store", " magics.store"))]
    assert reads == []


def test_the_store_read_finder_sees_a_read():
    assert any(r.endswith(" args.store") for r in _store_reads("notebook"))
