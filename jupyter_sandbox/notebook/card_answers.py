"""A card's answered interrupts: each decision with who made it, how and when, and what an edit changed.

An approval shows approved or rejected (and, for an edit, the input that ran and its ``$.path: old → new``
changes); a question (an interrupt that is no approval) shows what was asked and the answer. Values are cut
as the card's rows are (``card_values.cut``).
"""

from __future__ import annotations

import time
from typing import Any

from .card_values import cut
from .card_values import json_text as _json

__all__ = ["answered", "changes"]


def answered(doc: dict[str, Any]) -> list[dict[str, Any]]:
    asked = {e["id"]: e for e in doc.get("entries") or [] if e.get("kind") == "interrupt" and e.get("id")}
    out = []
    for e in doc.get("entries") or []:
        if e.get("kind") == "answer" and e.get("id") in asked:
            value = e.get("value")
            approved = e.get("approved", value is True or (isinstance(value, dict) and value.get("approved") is True))
            reason = e.get("reason", value.get("reason") if isinstance(value, dict) else None)
            proposed = asked[e["id"]].get("input")
            if not asked[e["id"]].get("approval") and not e.get("approval"):  # a question: what was asked, answered
                out.append(
                    {
                        "id": e["id"],
                        "name": asked[e["id"]].get("name"),
                        "question": cut(asked[e["id"]].get("data", proposed)) or {"p": "null"},
                        "value": cut(value) or {"p": "null"},
                        "attempt": e.get("attempt"),
                        "by": e.get("by"),
                        "via": e.get("via"),
                        "when": _clock(e.get("answered_at")),
                    }
                )
                continue
            item = {
                "id": e["id"],
                "name": asked[e["id"]].get("name"),
                "approved": bool(approved),
                "reason": reason,
                "value": cut(value),
                "attempt": e.get("attempt"),
                "input": cut(proposed),  # which call it was: three sends look alike
                "by": e.get("by"),
                "via": e.get("via"),
                "when": _clock(e.get("answered_at")),
            }
            if "input" in e:  # an edit: the input that ran, and how it differs from the proposal
                item["ran"] = cut(e["input"])
                item["changes"] = changes(proposed, e["input"])
            out.append(item)
    return out


def _clock(at: Any) -> str | None:
    """``19:03`` in this kernel's time zone (the day too when it was not today)."""
    if not isinstance(at, (int, float)) or isinstance(at, bool):
        return None
    then = time.localtime(at)
    same_day = time.strftime("%Y-%m-%d", then) == time.strftime("%Y-%m-%d")
    return time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", then)


def changes(before: Any, after: Any, path: str = "$", room: int = 12) -> list[str]:
    """How ``after`` differs from ``before``, one ``$.path: old → new`` line per changed leaf (at most ``room``)."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= room or a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in [*a, *(k for k in b if k not in a)]:
                walk(a.get(key, _ABSENT), b.get(key, _ABSENT), f"{where}.{key}")
            return
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for n, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{n}]")
            return
        old = "(none)" if a is _ABSENT else _json(a)[:60]
        new = "(removed)" if b is _ABSENT else _json(b)[:60]
        out.append(f"{where}: {old} → {new}")

    walk(before, after, path)
    return out


_ABSENT = object()
