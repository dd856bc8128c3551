"""The repository stands alone: no file cites a document, a ticket or a history a reader of it does not have.

Design and rules live in ``docs/`` (``docs/replay.md``, ``docs/architecture.md``) and the README; code and
tests cite those. This test greps every tracked text file for references to documents outside the repository,
to ticket numbers, and to accounts of when or in which commit a piece of work was done.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Each: (what it is, the pattern). Case-insensitive.
CITATIONS: list[tuple[str, str]] = [
    ("a design document outside the repository", r"\bDESIGN\.md\b"),
    ("notes outside the repository", r"(?<![\w/.])notes/[a-z_]+\.md\b"),
    ("a source document by number", r"\bseeds? ?`?\d{3}\b|\bseed-(?:shaped|\d{3})\b"),
    ("a source document", r"\bthe seeds?(?:'s)?\b(?! ?=)"),
    ("a ticket by number", r"\bissues? ?#?\d+\b"),
    ("someone's private notes", r"\blead's notes\b|\bthe team's lead\b"),
    ("an account of how the work was done", r"\bthis session(?:'s)?\b"),
    ("a path outside the repository", r"/work/shared\b"),
    (
        "an account of when a piece of work was done, by commit",
        r"\b(?:found|fixed|since|before|after|measured)(?: on| in| at)? "
        r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b",
    ),
]

_PATTERN = re.compile("|".join(f"(?P<c{i}>{p})" for i, (_, p) in enumerate(CITATIONS)), re.IGNORECASE)

# Files that are not the project's prose: generated bundles and lock files.
_SKIP_SUFFIXES = (".sha256", "package-lock.json")
_SKIP_PARTS = ("jupyter_sandbox/labextension/static/",)


def tracked_files(root: Path) -> list[Path]:
    """The files git tracks under ``root``, or, outside a checkout, every file but caches and environments."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True, timeout=60
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.SubprocessError):
        skip = {".git", ".venv", "node_modules", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache"}
        names = [
            p.relative_to(root).as_posix()
            for p in root.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(root).parts)
        ]
    return [
        root / n
        for n in sorted(names)
        if not n.endswith(_SKIP_SUFFIXES) and not any(n.startswith(part) for part in _SKIP_PARTS)
    ]


def citations(root: Path, *, exclude: tuple[Path, ...] = ()) -> list[str]:
    """Every line of every tracked text file under ``root`` that cites something outside the repository."""
    found = []
    for path in tracked_files(root):
        if path in exclude or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary
        for number, line in enumerate(text.splitlines(), 1):
            for match in _PATTERN.finditer(line):
                what = CITATIONS[int(match.lastgroup[1:])][0]  # type: ignore[index]
                found.append(f"{path.relative_to(root)}:{number}: {what}: {match.group(0)!r} in {line.strip()[:120]!r}")
    return found


def test_no_file_cites_a_document_ticket_or_history_outside_the_repository():
    found = citations(ROOT, exclude=(Path(__file__).resolve(),))
    assert not found, "cite docs/ or the README in the project's own words instead:\n" + "\n".join(found)


CITING = [
    "The loop (DESIGN.md, Replay):",
    "Traps from notes/quickjs.md that shape this module",
    "Limits (seed 001's defaults)",
    "the call log of seeds 000/004",
    "from a seed-shaped call log",
    "The seed's test: continuations complete in another order",
    "the run card's costs (issue 12)",
    "Deviation from the lead's notes (INotebookTracker)",
    "the code at the start of this session's speed work",
    "# Found before e500f0a (fixed there)",
    "Measured at bda5bc7",
]
OWN_WORDS = [
    "see docs/replay.md rule 2",
    "random.Random(seed)",
    "case i of seed s is always the same case",
    "the lead byte marks the length",
    "every issue the schema found",
    "issues=[...]",
    "at 0x7f3a9b2c",
    "helper loops nest at most 64 deep",
]


@pytest.mark.parametrize(("line", "cites"), [(line, True) for line in CITING] + [(line, False) for line in OWN_WORDS])
def test_a_line_is_flagged_exactly_when_it_cites_something_outside(line, cites, tmp_path):
    (tmp_path / "module.py").write_text(f"# {line}\n")
    assert bool(citations(tmp_path)) is cites, line
