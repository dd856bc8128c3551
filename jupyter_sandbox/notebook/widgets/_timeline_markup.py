"""Markup helpers shared by the static timeline renderer.

Markup is built with :func:`h`, which escapes whatever it interpolates unless
it is already :class:`Html`, so no journal value can inject markup.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from html import escape
from typing import Any

from ...errors import excerpt

_HINT = "Branch only on input, action results, ctx.now() and the recorded Date/Math.random."


class Html(str):
    """Markup that is already safe to emit."""


def _piece(value: Any) -> str:
    if isinstance(value, Html):
        return value
    if isinstance(value, (list, tuple)):
        return "".join(_piece(v) for v in value)
    if value is None or value is False:
        return ""
    return escape(str(value), quote=True)


def h(template: str, *args: Any, **kwargs: Any) -> Html:
    """``template.format`` with every argument escaped unless it is :class:`Html`."""
    return Html(template.format(*map(_piece, args), **{k: _piece(v) for k, v in kwargs.items()}))


# ---------------------------------------------------------------- formatting


def to_json(value: Any, indent: int | None = None, sort_keys: bool = False) -> str:
    """JSON as JavaScript's JSON.stringify writes it (compact unless ``indent``)."""
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, sort_keys=sort_keys,
                          separators=None if indent else (",", ":"))
    except (TypeError, ValueError):
        return str(value)


def preview(value: Any, limit: int = 60) -> str:
    """Compact JSON cut to ``limit`` characters, for a summary line."""
    text = to_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def duration(seconds: float) -> str:
    """A duration for people: ``120 ms``, ``2.50 s``, ``3 min 4 s``, ``2 h 5 min``."""
    s = max(seconds, 0.0)
    if s < 1:
        return f"{round(s * 1000)} ms"
    if s < 60:
        return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60)} s"
    if s < 86400:
        return f"{int(s // 3600)} h {int(s % 3600 // 60)} min"
    return f"{s / 86400:.1f} d"


def iso(ms: Any) -> str:
    """Epoch milliseconds as an ISO 8601 UTC time, or "" when it is not a usable time."""
    if not is_number(ms):
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return ""


def plural(n: int, one: str, many: str) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{n} {one if n == 1 else many}"


def is_number(value: Any) -> bool:
    """A real int or float (not a bool), as journal times are."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ---------------------------------------------------------------- blocks


def json_block(label: str, value: Any) -> Html:
    """A collapsed block: ``label`` and a preview, expanding to pretty JSON."""
    return h('<details class="jsbx-json"><summary>{} <code>{}</code></summary><pre>{}</pre></details>',
             label, preview(value), to_json(value, 2))


def pill(kind: str, text: Any) -> Html:
    """A small badge, styled by ``jsbx-pill-KIND``."""
    return h('<span class="jsbx-pill jsbx-pill-{}">{}</span>', kind, text)


def error_block(err: Any, source: str | None) -> Html:
    """An error dict (or message) in red, with its source line and caret, and its stack collapsed."""
    e = {"message": err} if isinstance(err, str) else (err or {})
    ex = e.get("source_line") or excerpt(source, e.get("line"), e.get("column"))
    where = h(' <span class="jsbx-where">workflow.js:{}:{}</span>', e["line"], e.get("column") or 1) if e.get("line") else ""
    return h(
        '<div class="jsbx-error"><div class="jsbx-err-title">{}{}: {}{}</div>{}{}</div>',
        pill("limit", e["limit"]) if e.get("limit") else "",
        e.get("name") or "Error", e.get("message"), where,
        h('<pre class="jsbx-source">{}</pre>', ex) if ex else "",
        h('<details class="jsbx-json"><summary>stack</summary><pre>{}</pre></details>', e["stack"]) if e.get("stack") else "",
    )


def _describe(side: dict | None) -> str:
    if not side:
        return "nothing"
    if side.get("type") in ("now", "random"):
        return f"a {side['type']} read"
    return f"{side.get('type')} {side['name']}" if side.get("name") else str(side.get("type"))


def render_mismatch_html(mismatch: dict, source: str | None = None) -> str:
    """A ``CallLogMismatchError.to_dict()`` as a side-by-side diff table.

    ``mismatch`` has ``position``, ``recorded`` and ``attempted`` (each a dict
    ``{type, name, input}`` or None), ``line``, ``column``, ``source_line``;
    ``source`` is the script, used when ``source_line`` is missing. Rows whose
    recorded and attempted values differ carry the ``jsbx-differs`` class.
    """
    recorded, attempted = mismatch.get("recorded"), mismatch.get("attempted")
    rows = []
    for label, field in (("kind", "type"), ("name", "name"), ("input", "input")):
        a = (recorded or {}).get(field)
        b = (attempted or {}).get(field)
        cells = [_diff_cell(side, value, field) for side, value in ((recorded, a), (attempted, b))]
        # Compared canonically, as content keys are: key order is no difference.
        differs = to_json(a, sort_keys=True) != to_json(b, sort_keys=True)
        rows.append(h('<tr class="{}"><th>{}</th>{}</tr>', "jsbx-differs" if differs else "", label, cells))
    ex = mismatch.get("source_line") or excerpt(source, mismatch.get("line"), mismatch.get("column"))
    position = mismatch.get("position")
    return h(
        '<div class="jsbx-mismatch"><div class="jsbx-err-title">CallLogMismatchError: replay diverged at position {}</div>'
        "<p>The journal recorded <b>{}</b> here; the script now attempted <b>{}</b>.</p>"
        '<table class="jsbx-diff"><thead><tr><th>position {}</th><th>recorded (journal)</th><th>attempted (script now)</th></tr></thead>'
        '<tbody>{}</tbody></table>{}<p class="jsbx-hint">{}</p></div>',
        position, _describe(recorded), _describe(attempted), position, rows,
        h('<pre class="jsbx-source">{}</pre>', ex) if ex else "", _HINT,
    )


def _diff_cell(side: dict | None, value: Any, field: str) -> Html:
    if not side:
        return Html('<td class="jsbx-none">nothing</td>')
    if field == "input":
        return h("<td><pre>{}</pre></td>", to_json(value, 2))
    return h("<td><code>{}</code></td>", "—" if value is None else value)


def plan_list(plan: Any) -> Html:
    """A ``ctx.plan`` list (strings or ``{title, done}``) as a checklist."""
    items = []
    for item in plan if isinstance(plan, list) else []:
        done = bool(item.get("done")) if isinstance(item, dict) else False
        title = item.get("title") if isinstance(item, dict) else item
        items.append(h('<li data-done="{}"><span class="jsbx-check">{}</span> {}</li>',
                       "true" if done else "false", "☑" if done else "☐", title))
    return h('<ul class="jsbx-plan">{}</ul>', items)
