"""The prebuilt JupyterLab extension shipped inside the package.

The bundle in jupyter_sandbox/labextension/ is committed (no npm at install
time), so these tests guard that it was rebuilt after its sources changed
(labextension/build.sh records their hash) and that pip installs it enabled.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILT = ROOT / "jupyter_sandbox" / "labextension"


def _sources_hash_module():
    spec = importlib.util.spec_from_file_location("sources_hash", ROOT / "labextension" / "sources_hash.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _built_package() -> dict:
    return json.loads((BUILT / "package.json").read_text())


def test_committed_bundle_was_built_from_the_current_sources():
    recorded = (BUILT / "sources.sha256").read_text().strip()
    assert recorded == _sources_hash_module().sources_hash(), (
        "labextension sources changed since the bundle was built: run labextension/build.sh and commit "
        "jupyter_sandbox/labextension/"
    )


def test_sources_hash_covers_the_shared_card_renderer():
    names = {p.relative_to(ROOT).as_posix() for p in _sources_hash_module().source_files()}
    assert {
        "jupyter_sandbox/notebook/widgets/static/timeline.js",
        "jupyter_sandbox/notebook/widgets/static/timeline.css",
        "jupyter_sandbox/notebook/widgets/static/card.js",
        "labextension/package.json",
        "labextension/src/index.js",
        "labextension/src/card.js",
    } <= names


def test_built_package_is_named_jupyter_sandbox():
    assert _built_package()["name"] == "jupyter-sandbox"


def test_built_package_declares_the_plugins_and_no_bare_mime_renderer():
    build = _built_package()["jupyterlab"]["_build"]
    assert build["extension"] == "./extension" and "mimeExtension" not in build


def test_built_package_entry_point_exists():
    assert (BUILT / _built_package()["jupyterlab"]["_build"]["load"]).is_file()


def test_bundle_contains_the_shared_renderer_and_not_jupyterlab_itself():
    bundle = "".join(p.read_text(encoding="utf-8") for p in (BUILT / "static").glob("*.js"))
    assert "application/vnd.jupyter-sandbox.run+json" in bundle
    assert "jsbx-card" in bundle
    assert "application/vnd.jupyter-sandbox.timeline+json" not in bundle  # a renderer nothing emitted
    # JupyterLab's packages come from the running Lab, not from our bundle.
    assert sum(p.stat().st_size for p in (BUILT / "static").glob("*.js")) < 200_000


def _installed_with_pip() -> bool:
    try:
        importlib.metadata.distribution("jupyter_sandbox")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _installed_with_pip(), reason="jupyter_sandbox is not pip-installed (CI installs it)")
def test_pip_install_makes_the_extension_enabled_in_jupyterlab():
    # This interpreter's jupyter: the one whose environment pip installed into.
    run = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"], capture_output=True, text=True, timeout=120
    )
    listing = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
    line = next((ln for ln in listing.splitlines() if ln.split()[:1] == ["jupyter-sandbox"]), None)
    assert line is not None, listing
    assert re.search(r"\benabled\b.*\bOK\b.*\(python, jupyter_sandbox\)", line), line
