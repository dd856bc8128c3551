"""``jupyter-sandbox worker``: wake a shared store's due runs outside a notebook (``jupyter-sandbox mcp``:
serve a sandbox over MCP, in ``jupyter_sandbox/mcp.py``).

    jupyter-sandbox worker --store postgresql://host/db --actions mypkg.actions:ACTIONS
    jupyter-sandbox migrate --store postgresql://owner@host/db

``--actions MODULE:OBJECT`` names the actions the runs may call: a mapping of
name to function, a list of functions, or a function that registers them on
the ``Sandbox`` it is given. Run one worker per machine, or several: each due
run is reserved by one of them (``Store.due_runs``) and its claim is a
compare-and-set, so every timer fires once; a worker that dies loses its
leases and its runs move to another worker when they expire.

``migrate`` brings a store's tables up to this version, run once per upgrade by
the store's owner (opening a current store runs no DDL, so other roles need
only SELECT, INSERT, UPDATE and DELETE on its tables).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from .errors import SandboxError
from .sandbox import Sandbox

__all__ = ["load_actions", "main"]

log = logging.getLogger("jupyter_sandbox.worker")


def load_actions(sb: Sandbox, spec: str) -> list[str]:
    """Register the actions ``MODULE:OBJECT`` names on ``sb``; return their names."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--actions {spec!r}: expected MODULE:OBJECT, e.g. mypkg.actions:ACTIONS")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise SystemExit(f"--actions {spec!r}: {exc}") from exc
    before = set(sb.actions)
    if isinstance(target, Mapping):
        for name, fn in target.items():
            sb.action(fn, name=name)
    elif isinstance(target, (list, tuple)):
        for fn in target:
            sb.action(fn)
    elif callable(target):
        target(sb)
    else:
        raise SystemExit(
            f"--actions {spec!r} is a {type(target).__name__}: expected a mapping of name to "
            "function, a list of functions, or a function that registers them on a Sandbox"
        )
    return sorted(set(sb.actions) - before)


def work(sb: Sandbox, *, interval: float, once: bool, stop: threading.Event, report: Callable[[str, Any], None]) -> int:
    """Wake due runs until ``stop`` (or, with ``once``, until none is due); return how many completed."""
    completed = 0
    while not stop.is_set():
        try:
            woken = sb.run_due()
        except SandboxError as exc:  # the store is down: say so, and try again next round
            log.warning("waking due runs failed: %s", exc)
            woken = []
        for run_id, result in woken:
            report(run_id, result)
            completed += not isinstance(result, BaseException)
        if once and not woken:
            break
        if not woken:
            stop.wait(interval)
    return completed


def migrate_store(spec: str) -> int:
    """``jupyter-sandbox migrate``: open the store (which migrates it when its opener may) and say what changed."""
    from .stores import open_store
    from .stores.migrations import STEPS

    try:
        store = open_store(spec)
        try:
            before, after = store.migrate()
            opened = getattr(store, "migrated_from", None)  # opening it may have done the work
            before = before if opened is None else opened
        finally:
            store.close()
    except SandboxError as exc:
        print(f"jupyter-sandbox migrate: {exc}", file=sys.stderr)
        return 2
    if before == after:
        print(f"{store.path}: schema {after}, up to date")
        return 0
    changes = "; ".join(step.change for step in STEPS if before < step.version <= after)
    print(f"{store.path}: schema {before or 'none'} -> {after}" + (f" ({changes})" if before else " (created)"))
    return 0


def main(argv: list[str] | None = None) -> int:
    args_given = sys.argv[1:] if argv is None else argv
    if args_given[:1] == ["mcp"]:
        # Looked up by name, not imported: the MCP server sits above this module (it uses load_actions).
        return int(importlib.import_module("jupyter_sandbox.mcp").main(args_given[1:]))
    parser = argparse.ArgumentParser(prog="jupyter-sandbox", description="jupyter_sandbox from the command line")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "mcp", help="serve a store's sandbox over MCP (stdio): jupyter-sandbox mcp --store PATH --actions MODULE:OBJECT"
    )
    worker = commands.add_parser("worker", help="wake the due runs of a store (no leader: run as many as you like)")
    worker.add_argument("--store", required=True, help="the store: a postgresql:// URL, or an SQLite file")
    worker.add_argument(
        "--actions", action="append", default=[], metavar="MODULE:OBJECT", help="the actions runs may call (repeatable)"
    )
    worker.add_argument("--interval", type=float, default=1.0, help="seconds between looks when nothing is due")
    worker.add_argument("--once", action="store_true", help="wake what is due, then exit")
    worker.add_argument("-q", "--quiet", action="store_true", help="print only the final count")
    migrate = commands.add_parser("migrate", help="bring a store's tables up to this version (as the store's owner)")
    migrate.add_argument("--store", required=True, help="the store: a postgresql:// URL, or an SQLite file")
    args = parser.parse_args(argv)
    if args.command == "migrate":
        return migrate_store(args.store)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        sb = Sandbox(args.store)
    except SandboxError as exc:
        print(f"jupyter-sandbox worker: {exc}", file=sys.stderr)
        return 2
    for spec in args.actions:
        load_actions(sb, spec)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())

    def report(run_id: str, result: Any) -> None:
        if not args.quiet:
            outcome = type(result).__name__ if isinstance(result, BaseException) else "completed"
            print(f"{time.strftime('%H:%M:%S')} {run_id} {outcome}", flush=True)

    try:
        completed = work(sb, interval=args.interval, once=args.once, stop=stop, report=report)
    finally:
        sb.close()
    print(f"completed {completed}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
