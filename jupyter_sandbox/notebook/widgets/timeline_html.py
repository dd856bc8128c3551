"""Static HTML for a run's timeline document (docs/journal.md).

The twin of ``static/timeline.js`` for places without JavaScript: a saved
notebook opened without a kernel, an untrusted notebook, nbconvert HTML. It
emits the same markup classes, so ``static/timeline.css`` (inlined here)
styles both. Every journal value is escaped. Pure functions; nothing here
imports IPython.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ._timeline_entries import Context, items_html, nest
from ._timeline_markup import Html, error_block, iso, json_block, is_number, pill, plan_list, plural, duration, h
from ._timeline_markup import render_mismatch_html

__all__ = ["render_html", "render_mismatch_html"]

_CSS = Path(__file__).parent / "static" / "timeline.css"

# ---------------------------------------------------------------- document


def _run_head(cx: Context) -> Html:
    run = cx.doc.get("run") or {}
    status = run.get("status") or "unknown"
    facts = " · ".join(x for x in (
        run.get("kind"), plural(len(cx.attempts), "attempt", "attempts"), plural(len(cx.entries), "entry", "entries"),
        f"created {iso(run['created'] * 1000)}" if is_number(run.get("created")) else "",
    ) if x)
    plan = cx.plan.get("plan") if cx.plan else None
    plan = plan if isinstance(plan, list) else []
    done = sum(1 for it in plan if isinstance(it, dict) and it.get("done"))
    return h(
        '<div class="jsbx-run"><span class="jsbx-status" data-status="{status}">{status}</span>'
        '<span class="jsbx-run-name">{name}</span> <code>{id}</code> <span class="jsbx-meta">{facts}</span>{parent}{successor}</div>'
        "{error}{output}{plan}{pending}",
        status=status, name=run.get("name") or "run", id=run.get("id"), facts=facts,
        parent=h(' <span class="jsbx-meta">child of <code>{}</code></span>', run["parent"]) if run.get("parent") else "",
        successor=h(' <span class="jsbx-meta">continued as <code>{}</code></span>', run["successor"]) if run.get("successor") else "",
        error=error_block(run["error"], cx.source) if run.get("error") else "",
        output=json_block("output", run["output"]) if run.get("output") is not None else "",
        plan=h('<div class="jsbx-plan-box" data-seq="{}"><b>Plan</b> <span class="jsbx-meta">{}/{} done</span>{}</div>',
               cx.plan.get("seq"), done, len(plan), plan_list(plan)) if cx.plan else "",
        pending=[h('<div class="jsbx-pending"><b>⏸ waiting for an answer:</b> <span class="jsbx-label">{}</span> <code>{}</code>{}</div>',
                   p.get("name"), p.get("id"), json_block("data", p.get("data")) if "data" in p else "")
                 for p in cx.doc.get("pending") or []],
    )


def _attempt_head(attempt: dict, cx: Context, prev: dict | None) -> Html:
    n = attempt["n"]
    replayed = attempt.get("replayed")
    if replayed is None:
        replayed = len(cx.before(n))
    what = "first run" if n == 1 else f"resumed, {plural(replayed, 'entry', 'entries')} replayed from the journal"
    took = duration(attempt["ended"] - attempt["started"]) if is_number(attempt.get("started")) and is_number(attempt.get("ended")) else ""
    edited = prev and prev.get("source_hash") and attempt.get("source_hash") and prev["source_hash"] != attempt["source_hash"]
    outcome = attempt.get("outcome")
    return h(
        '<div class="jsbx-attempt-head" data-attempt="{}"><b>Attempt {}</b> — {}{}{}<span class="jsbx-meta">{}</span></div>',
        n, n, what,
        h(' <span class="jsbx-status" data-status="{0}">{0}</span>', outcome) if outcome else "",
        pill("edited", "source edited") if edited else "", took,
    )


def _part(html: str, attempt: int | None = None) -> Html:
    return h('<div class="jsbx-part"{}>{}</div>', Html(f' data-attempt="{int(attempt)}"') if attempt is not None else "", Html(html))


@cache
def _css() -> str:
    return _CSS.read_text(encoding="utf-8")


def render_html(doc: dict) -> str:
    """The whole timeline of ``doc`` as self-contained HTML (inline ``<style>``).

    Shows the run header (status, plan, pending interrupts), then each attempt:
    for a resume, a collapsed group of the earlier entries marked ``replayed``,
    then its own entries marked ``live``, nested by step. Every entry carries
    ``data-seq``, ``data-kind`` and ``data-mark`` attributes.
    """
    cx = Context(doc or {})
    parts = [_part(_run_head(cx))]
    prev = None
    for attempt in cx.attempts:
        n = attempt["n"]
        parts.append(_part(_attempt_head(attempt, cx, prev), n))
        if n > 1:
            earlier = cx.before(n)
            parts.append(_part(h(
                '<details class="jsbx-replayed"><summary>↺ replayed {}</summary>{}</details>',
                plural(len(earlier), "entry", "entries"), items_html(nest(earlier, cx), "replayed", cx),
            ), n))
        own = cx.by_attempt.get(n, [])
        body = items_html(nest(own, cx), "live", cx) if own else Html('<p class="jsbx-meta jsbx-empty">no entries yet</p>')
        parts.append(_part(body, n))
        prev = attempt
    return h('<div class="jsbx-host jsbx-static"><style>{}</style><div class="jsbx-timeline">{}</div></div>', Html(_css()), parts)

