"""A value as a card shows it: JSON cut to a preview, and a longer (still bounded) detail behind an expander."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DETAIL", "PREVIEW", "cut", "json_text", "preview"]

PREVIEW = 160  # characters of a value shown in a row
DETAIL = 2000  # characters of a value behind a row's expander


def json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def preview(value: Any, limit: int = PREVIEW) -> str:
    """``value`` as JSON, cut to ``limit`` characters (``…`` marks the cut)."""
    text = json_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cut(value: Any) -> dict[str, Any] | None:
    """A value as a preview and, if longer, an expandable (still bounded) detail."""
    if value is None:
        return None
    text = json_text(value)
    if len(text) <= PREVIEW:
        return {"p": text}
    pretty = json.dumps(value, indent=2, ensure_ascii=False, default=str) if len(text) <= DETAIL else text
    return {
        "p": text[: PREVIEW - 1] + "…",
        "d": pretty[:DETAIL] + ("…" if len(pretty) > DETAIL else ""),
        "n": len(text),
    }
