"""mypy over a snippet of code that uses the package: the lines it flags (a typed vocabulary or signature)."""

from __future__ import annotations

from pathlib import Path


def flagged_lines(source: str, directory: Path, cache: Path) -> list[int]:
    """The line numbers mypy reports an error on in ``source`` (the package's own files checked, not reported).

    ``cache`` is mypy's cache folder: one shared by a session's snippets types the package and its
    dependencies once.
    """
    from mypy import api

    script = directory / "snippet.py"
    script.write_text(source)
    report, _, _ = api.run(
        [
            "--follow-imports=silent",
            "--ignore-missing-imports",
            f"--cache-dir={cache}",
            "--python-version=3.10",
            str(script),
        ]
    )
    return sorted({int(line.split(":")[1]) for line in report.splitlines() if ": error:" in line})
