"""Finding actions by words: for a large catalog (many MCP tools), a prompt carries only the ones that match.

``matching(specs, "read file")`` keeps the entries whose name or description contains any of the words
(case-insensitive; a name's dots and underscores separate words too), the best matches first: more words
matched, then a match in the name before one only in the description, then by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["matching"]


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^0-9a-z]+", text.lower()) if w]


def matching(specs: Iterable[Any], query: str, limit: int | None = None) -> list[Any]:
    """The catalog entries that match ``query`` (all of them for a query of no words), best first."""
    if not isinstance(query, str):
        raise TypeError(f"query is a string of words, got {type(query).__name__}")
    words = _words(query)
    specs = list(specs)
    if not words:
        return specs[:limit] if limit is not None else specs
    scored = []
    for spec in specs:
        name = spec.name.lower()
        about = (spec.description or "").lower()
        in_name = sum(w in name for w in words)
        in_about = sum(w in about and w not in name for w in words)
        if in_name or in_about:
            scored.append((-(in_name + in_about), -in_name, spec.name, spec))
    scored.sort(key=lambda row: row[:3])
    found = [row[3] for row in scored]
    return found[:limit] if limit is not None else found
