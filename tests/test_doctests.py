"""The examples in the package's docstrings are true, and leave nothing running.

Each module whose source holds a ``>>>`` prompt runs its own docstrings' examples with the standard ``doctest``
module, in a temporary working directory (an example that opens the notebook's default store writes
``.sandbox/`` there). Every module imports outside a kernel; an example that needs a kernel or a server is
marked ``# doctest: +SKIP`` in place, with the reason beside it.
"""

from __future__ import annotations

import doctest
import importlib
import re
import threading
from pathlib import Path

import pytest

import jupyter_sandbox

PACKAGE = Path(jupyter_sandbox.__file__).parent
PROMPT = re.compile(r"^\s*>>> ", re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# Modules with examples today: finding fewer means the search broke (or an example was lost), not that all is well.
KNOWN = {
    "jupyter_sandbox",
    "jupyter_sandbox.actions",
    "jupyter_sandbox.agents.catalog",
    "jupyter_sandbox.agents.facade",
    "jupyter_sandbox.agents.input_issues",
    "jupyter_sandbox.agents.mcp_processes",
    "jupyter_sandbox.agents.mcp_tools",
    "jupyter_sandbox.agents.schema_types",
    "jupyter_sandbox.agents.tool",
    "jupyter_sandbox.agents.tool_result",
    "jupyter_sandbox.agents.typescript",
    "jupyter_sandbox.agents.validators",
    "jupyter_sandbox.calling",
    "jupyter_sandbox.decisions",
    "jupyter_sandbox.engine.answers",
    "jupyter_sandbox.engine.clock",
    "jupyter_sandbox.engine.limits",
    "jupyter_sandbox.engine.loop",
    "jupyter_sandbox.engine.nesting",
    "jupyter_sandbox.engine.plan",
    "jupyter_sandbox.engine.pool",
    "jupyter_sandbox.engine.realm",
    "jupyter_sandbox.engine.returns",
    "jupyter_sandbox.errors.base",
    "jupyter_sandbox.errors.runs",
    "jupyter_sandbox.errors.services",
    "jupyter_sandbox.errors.values",
    "jupyter_sandbox.naming",
    "jupyter_sandbox.notebook.card_clicks",
    "jupyter_sandbox.notebook.card_comm",
    "jupyter_sandbox.notebook.card_views",
    "jupyter_sandbox.notebook.cards",
    "jupyter_sandbox.notebook.cell_run",
    "jupyter_sandbox.notebook.commands",
    "jupyter_sandbox.notebook.defaults",
    "jupyter_sandbox.notebook.session",
    "jupyter_sandbox.registering",
    "jupyter_sandbox.results",
    "jupyter_sandbox.run_arguments",
    "jupyter_sandbox.sandbox",
    "jupyter_sandbox.schema_limits",
    "jupyter_sandbox.source",
    "jupyter_sandbox.stores",
    "jupyter_sandbox.stores.base",
    "jupyter_sandbox.stores.dialect",
    "jupyter_sandbox.stores.stored",
    "jupyter_sandbox.stores.urls",
    "jupyter_sandbox.tracebacks",
    "jupyter_sandbox.values",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_with_examples() -> list[str]:
    # Read as text, not imported: collecting this file should not import the whole package.
    return sorted(module_name(path) for path in PACKAGE.rglob("*.py") if PROMPT.search(path.read_text("utf-8")))


MODULES = modules_with_examples()


def test_finds_every_module_known_to_have_examples():
    assert KNOWN - set(MODULES) == set()


@pytest.mark.parametrize("name", MODULES)
def test_examples_hold(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    running = set(threading.enumerate())
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=FLAGS, report=False)
    assert attempted > 0, f"{name} has a >>> prompt but doctest ran none of its examples"
    assert failed == 0, f"{failed} of {attempted} examples failed (the output above shows which)"
    assert [thread.name for thread in threading.enumerate() if thread not in running] == []
