"""The hash of the labextension's sources, recorded beside the built bundle.

``python labextension/sources_hash.py`` prints it; ``--write`` records it in
``jupyter_sandbox/labextension/sources.sha256`` (build.sh does this after a
build). tests/test_labextension.py recomputes it to catch a bundle that was
not rebuilt after its sources changed.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "jupyter_sandbox" / "labextension" / "sources.sha256"


def source_files(root: Path = ROOT) -> list[Path]:
    """Every file the bundle is built from, sorted."""
    ext = root / "labextension"
    static = root / "jupyter_sandbox/notebook/widgets/static"
    files = [ext / "package.json", *(static / n for n in ("timeline.js", "timeline.css", "card.js", "card.css"))]
    for folder in ("src", "style"):
        files += [p for p in (ext / folder).rglob("*") if p.is_file()]
    return sorted(files)


def sources_hash(root: Path = ROOT) -> str:
    """sha256 over each source's path (relative to the repository) and content.

    Line endings are normalised, so a checkout with CRLF hashes the same.
    """
    digest = hashlib.sha256()
    for path in source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).digest())
    return digest.hexdigest()


if __name__ == "__main__":
    value = sources_hash()
    if "--write" in sys.argv[1:]:
        RECORD.write_text(value + "\n", encoding="utf-8")
    print(value)
