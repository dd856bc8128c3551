"""The ``bench/stress/`` package, for the suite: its case generators and fixtures serve the tests too."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import stress  # noqa: E402
from bench.stress import properties  # noqa: E402

__all__ = ["properties", "stress"]
