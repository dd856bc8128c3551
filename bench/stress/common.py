"""What every section shares: the checkout measured, and an exception's first line."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))  # measure this checkout, whatever copy of jupyter_sandbox is installed


def first_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "<str() failed>"
    return text.splitlines()[0] if text else ""
