"""A run as one portable file: move a paused run to another store or machine and resume it there.

The file is CBOR: ``{"format": "jupyter-sandbox-run", "schema", "root", "runs": [...]}``
with the run, its child runs, their journals (the CBOR rows as stored),
attempts and signals.
"""

from __future__ import annotations

import os
from pathlib import Path

import cbor2

from ..errors import StoreError
from .base import SCHEMA_VERSION, Store

__all__ = ["export_run", "import_run", "FORMAT"]

FORMAT = "jupyter-sandbox-run"


def export_run(store: Store, run_id: str, path: str | os.PathLike[str]) -> Path:
    """Write a run and its children to one file."""
    dumps, pending = [], [run_id]
    while pending:
        current = pending.pop()
        dumps.append(store.dump_run(current))
        pending.extend(store.children(current))
    target = Path(path)
    target.write_bytes(cbor2.dumps({"format": FORMAT, "schema": SCHEMA_VERSION, "root": run_id, "runs": dumps}))
    return target


def import_run(store: Store, path: str | os.PathLike[str]) -> str:
    """Load a file written by ``export_run``; return the root run's id."""
    try:
        doc = cbor2.loads(Path(path).read_bytes())
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("no jupyter-sandbox-run header")
        runs, root = doc["runs"], doc["root"]
    except Exception as exc:  # cbor2, OSError, missing keys: all mean "not an export"
        raise StoreError(f"{path} is not a jupyter_sandbox run export: {exc}", path=str(path)) from exc
    if doc.get("schema", 0) > SCHEMA_VERSION:
        raise StoreError(f"{path} was exported by a newer jupyter_sandbox", path=str(path))
    store.load_runs(runs)
    return root
