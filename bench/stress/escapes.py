"""Section **escapes**: every probe of ``tests/test_escapes.py``, counted."""

from __future__ import annotations

import sys
from typing import Any

from bench.stress.common import ROOT, first_line


def run_escapes(log: Any) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_escapes

    found = []
    for probe in test_escapes.PROBES:
        try:
            probe.check(test_escapes.run_probe(probe.script, body=probe.body))
        except AssertionError as exc:
            found.append((probe.name, first_line(exc)[:160]))
        except Exception as exc:
            found.append((probe.name, f"{type(exc).__name__}: {first_line(exc)[:140]}"))
    log("  escapes done")
    return {"probes": len(test_escapes.PROBES), "found": found}


def run(args: Any, log: Any) -> dict[str, Any]:
    log("escapes...")
    return run_escapes(log)


def report(result: dict[str, Any], args: Any) -> tuple[list[str], list[str]]:
    """The probes that found something, and the section's row of the summary."""
    lines = [
        "## Escape probes",
        "",
        f"{result['probes']} probes (tests/test_escapes.py); **{len(result['found'])} found something**:",
        "",
    ]
    for name, why in result["found"]:
        lines.append(f"- `{name}`: {why}")
    lines.append("")
    head = [f"| escape probes / found something | {result['probes']} / {len(result['found'])} |"]
    return lines, head
