"""Section **properties**: the Hypothesis property suite, with many more examples than CI runs.

Every test that Hypothesis's pytest plugin marks ``hypothesis`` (a ``@given`` test) in the
``tests/test_*.py`` files that import Hypothesis runs in one pytest subprocess under the profile
``long`` (registered in ``tests/conftest.py``; ``dev`` with ``--quick``), chosen by the environment
variable ``HYPOTHESIS_PROFILE``. The section counts property tests, examples run (from
``--hypothesis-show-statistics``) and failures (from the JUnit XML), with the wall time. Failing
examples stay in ``bench/results/hypothesis/`` (Hypothesis's database, gitignored), so the next
stress or pytest run with ``HYPOTHESIS_STORAGE_DIRECTORY`` set there replays them first.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from bench.stress.common import ROOT

# "100 passing, 0 failing, and 0 invalid test cases" (Hypothesis >= 6.1xx) or, before,
# "100 passing examples, 0 failing examples, 0 invalid examples"
_STATS = re.compile(r"(\d+) passing(?: examples)?, (\d+) failing(?: examples)?, (?:and )?(\d+) invalid")
_IMPORTS_HYPOTHESIS = re.compile(r"^(?:from|import) hypothesis\b", re.M)  # a top-level import, not a quoted one


def property_files(tests: Path = ROOT / "tests") -> list[Path]:
    """The test files that use Hypothesis."""
    return sorted(p for p in tests.glob("test_*.py") if _IMPORTS_HYPOTHESIS.search(p.read_text(encoding="utf-8")))


def parse_statistics(text: str) -> dict[str, collections.Counter]:
    """Test id -> passing / failing / invalid examples, summed over Hypothesis's phases."""
    out: dict[str, collections.Counter] = {}
    _, banner, rest = text.partition("Hypothesis Statistics")
    current: collections.Counter | None = None
    for line in rest.splitlines() if banner else []:
        if line.startswith("====="):  # the next pytest banner ends the statistics
            break
        if "::" in line and line.endswith(":") and not line.startswith(" "):
            current = out.setdefault(line[:-1], collections.Counter())
        elif current is not None and (m := _STATS.search(line)):
            current["passing"] += int(m[1])
            current["failing"] += int(m[2])
            current["invalid"] += int(m[3])
    return out


def parse_junit(path: Path) -> list[dict[str, Any]]:
    """One dict per test case: its file (``tests/test_x.py``), name, outcome, seconds and first message line."""
    cases = []
    for case in ET.parse(path).iter("testcase"):
        module = case.get("classname", "")
        parts = module.split(".")
        for k in range(len(parts), 0, -1):  # "tests.test_x.TestClass" -> tests/test_x.py
            if parts[k - 1].startswith("test_"):
                module = "/".join(parts[:k]) + ".py"
                break
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        skipped = any(child.tag == "skipped" for child in case)
        message = (problem.get("message") or "").strip().splitlines() if problem is not None else []
        cases.append(
            {
                "file": module,
                "name": case.get("name", ""),
                "seconds": float(case.get("time") or 0),
                "outcome": problem.tag if problem is not None else "skipped" if skipped else "passed",
                "message": message[0][:160] if message else "",
            }
        )
    return cases


def run_properties(
    profile: str,
    log: Any,
    timeout: float,
    files: list[Path] | None = None,
    cwd: Path = ROOT,
    storage: Path = ROOT / "bench" / "results" / "hypothesis",
) -> dict[str, Any]:
    """Run the property tests of ``files`` (default: ``property_files()``) in pytest, from ``cwd``;
    Hypothesis keeps its example database in ``storage``."""
    files = property_files() if files is None else files
    if not files:
        log("  properties: no test file imports hypothesis")
        return {
            "profile": profile,
            "files": [],
            "cases": [],
            "stats": {},
            "seconds": 0.0,
            "exit": None,
            "timed_out": False,
        }
    storage.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HYPOTHESIS_PROFILE": profile, "HYPOTHESIS_STORAGE_DIRECTORY": str(storage)}
    names = [str(f.relative_to(cwd)) for f in files]  # as pytest names them in its test ids
    with tempfile.TemporaryDirectory(prefix="jsbx-props-") as tmp:
        junit = Path(tmp) / "junit.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-o",
            f"timeout={int(timeout)}",
            "-m",
            "hypothesis",
            "--hypothesis-show-statistics",
            f"--junitxml={junit}",
            f"--rootdir={cwd}",  # test ids relative to cwd, whatever setup.py or ini file sits above it
            *names,
        ]
        started = time.perf_counter()
        timed_out = False
        try:
            proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
            stdout, code = proc.stdout, proc.returncode
        except subprocess.TimeoutExpired as exc:  # bounded like every other section: report what finished
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            code, timed_out = None, True
        seconds = time.perf_counter() - started
        cases = parse_junit(junit) if junit.exists() else []
    if code not in (0, 1, 5):  # 1: tests failed (counted); 5: none collected; others: pytest itself failed
        log("  properties: pytest exited " + str(code) + ": " + " / ".join(stdout.strip().splitlines()[-3:]))
    log(f"  properties done ({seconds:.0f} s)")
    return {
        "profile": profile,
        "files": names,
        "cases": cases,
        "stats": {k: dict(v) for k, v in parse_statistics(stdout).items()},
        "seconds": round(seconds, 1),
        "exit": code,
        "timed_out": timed_out,
    }


def run(args: Any, log: Any) -> dict[str, Any]:
    profile = "dev" if args.quick else "long"
    log(f"properties: the Hypothesis suite, HYPOTHESIS_PROFILE={profile}...")
    return run_properties(profile, log, timeout=600 if args.quick else 3600)


def report(result: dict[str, Any], args: Any) -> tuple[list[str], list[str]]:
    """A row per test file, the failing tests, and the section's rows of the summary."""
    profile = result["profile"]
    if not result["files"]:
        return (
            ["## Properties (Hypothesis)", "", "No test file imports hypothesis.", ""],
            ["| property tests | none |"],
        )
    per_file: dict[str, collections.Counter] = {f: collections.Counter() for f in result["files"]}
    for case in result["cases"]:
        c = per_file.setdefault(case["file"], collections.Counter())
        c["tests"] += 1
        c["failed"] += case["outcome"] in ("failure", "error")
        c["seconds"] += case["seconds"]
    for test_id, stats in result["stats"].items():
        c = per_file.setdefault(test_id.split("::")[0], collections.Counter())
        c["examples"] += stats.get("passing", 0) + stats.get("failing", 0)
        c["invalid"] += stats.get("invalid", 0)
    cols = ["tests", "examples", "invalid", "failed"]
    lines = [
        "## Properties (Hypothesis)",
        "",
        f"`HYPOTHESIS_PROFILE={profile} pytest -m hypothesis` over the test files that use Hypothesis; "
        f"pytest exit {result['exit']}{', **timed out**' if result['timed_out'] else ''}. *examples* = "
        "passing + failing test cases over every phase; *invalid* = rejected by `assume` or a filter.",
        "",
        "| file | " + " | ".join(cols) + " | seconds |",
        "|---" * (len(cols) + 2) + "|",
    ]
    total: collections.Counter = collections.Counter()
    for name in sorted(per_file):
        c = per_file[name]
        total.update(c)
        lines.append(f"| {name} | " + " | ".join(f"{c[k]:,}" for k in cols) + f" | {c['seconds']:.1f} |")
    lines.append("| **total** | " + " | ".join(f"**{total[k]:,}**" for k in cols) + f" | **{total['seconds']:.1f}** |")
    failing = [case for case in result["cases"] if case["outcome"] in ("failure", "error")]
    if failing:
        lines += ["", "Failing property tests:", ""]
        lines += [f"- `{case['file']}::{case['name']}`: {case['message']}" for case in failing[:20]]
    lines.append("")
    trouble = (
        " (timed out)"
        if result["timed_out"]
        else f" (pytest exit {result['exit']})"
        if result["exit"] not in (0, 1, 5)
        else ""
    )
    head = [
        f"| property tests (Hypothesis, profile {profile}) / failed | {total['tests']} / {total['failed']}{trouble} |",
        f"| property examples run | {total['examples']:,} |",
        f"| property suite wall time | {result['seconds']:.0f} s |",
    ]
    return lines, head
