"""A run as one portable file: move a paused run to another store or machine and resume it there.

The file is CBOR: ``{"format": "jupyter-sandbox-run", "schema", "root", "runs": [...]}``
with the run, its child runs, their journals (the CBOR rows as stored),
attempts and signals.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import cbor2

from ..errors import StoreError
from .base import SCHEMA_VERSION, Store
from .row_rules import decode_value
from .rows import decode_journal
from .runs_table import decode_run
from .stored import export_header

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
    except Exception as exc:  # cbor2, OSError: both mean "not an export"
        raise StoreError(f"{path} is not a jupyter_sandbox run export: {exc}", path=str(path)) from exc
    header = export_header(str(path), doc, SCHEMA_VERSION)  # the format, schema, root and runs (stored.py)
    runs, root = header.runs, header.root
    for item in runs:  # checked before anything is loaded: a damaged file loads nothing
        _check_dump(item, path)
    store.load_runs(runs)
    return root


def _check_dump(item: Any, path: str | os.PathLike[str]) -> None:
    """One run of an export, as ``dump_run`` writes it, every row read as the store would read it."""
    shape = (
        isinstance(item, dict)
        and isinstance(item.get("run"), dict)
        and all(
            isinstance(item.get(key), list) and all(isinstance(row, list) and len(row) == width for row in item[key])
            for key, width in (("journal", 3), ("attempts", 7), ("signals", 3))
        )
    )
    if not shape:
        raise StoreError(
            f"{path} is not a jupyter_sandbox run export: a run is not shaped as dump_run writes it", path=str(path)
        )
    try:
        run = decode_run(dict(item["run"]))
        decode_journal(run["id"], [(seq, body) for seq, _, body in item["journal"]])
        for event, _, _ in item["signals"]:
            decode_value(run["id"], "signal", event)
    except StoreError as exc:
        raise StoreError(f"{path}: {exc}", path=str(path)) from exc
