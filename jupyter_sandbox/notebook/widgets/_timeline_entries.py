"""Journal entries as timeline rows, nested by step (the static renderer's half of timeline.js)."""

from __future__ import annotations

from typing import Any, Callable

from ._timeline_markup import (
    Html, duration, error_block, h, is_number, iso, json_block, pill, plan_list, render_mismatch_html,
)


class Context:
    """What the renderers look up across the whole document."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.entries: list[dict] = list(doc.get("entries") or [])
        self.source: str | None = doc.get("source")
        self.step_start: dict[Any, dict] = {}
        self.call_of: dict[int, dict] = {}  # result seq -> the call it completes
        self.by_attempt: dict[int, list[dict]] = {}
        self.plan: dict | None = None
        last_call: dict[Any, dict] = {}
        for e in self.entries:
            self.by_attempt.setdefault(e.get("attempt") or 1, []).append(e)
            kind = e.get("kind")
            if kind == "step" and e.get("phase") == "start":
                self.step_start[e.get("id")] = e
            elif kind == "call":
                last_call[e.get("slot")] = e
            elif kind == "result" and e.get("slot") in last_call:
                self.call_of[e["seq"]] = last_call[e["slot"]]
            elif kind == "plan":
                self.plan = e
        # Attempts come from the document, completed by any attempt an entry names.
        known = {a["n"]: a for a in doc.get("attempts") or []}
        for n in self.by_attempt:
            known.setdefault(n, {"n": n})
        self.attempts = [known[n] for n in sorted(known)]
        run = doc.get("run") or {}
        first = self.attempts[0].get("started") if self.attempts else None
        self.t0 = run.get("created") or first or (self.entries[0].get("at") if self.entries else None)

    def before(self, n: int) -> list[dict]:
        """The entries written before attempt ``n``: what it replayed."""
        return [e for e in self.entries if (e.get("attempt") or 1) < n]


def _call_label(call: dict) -> Any:
    return call.get("description") or call.get("name")


# Each kind's row: (text after the kind name, blocks below it, meta).
Row = tuple[Any, Any, str]


def _call(e: dict, cx: Context) -> Row:
    op = e.get("op")
    main = h('<span class="jsbx-label">{}</span>{}{}{}', _call_label(e),
             h(' <code class="jsbx-name">{}</code>', e.get("name")) if e.get("description") else "",
             pill("op", op) if op and op != "call" else "",
             h(' <span class="jsbx-meta">child <code>{}</code></span>', e["child"]) if e.get("child") else "")
    return main, json_block("input", e.get("input")) if "input" in e else "", ""


def _result(e: dict, cx: Context) -> Row:
    call = cx.call_of.get(e.get("seq"))
    label = h('<span class="jsbx-label">{}</span>', _call_label(call)) if call else h("slot {}", e.get("slot"))
    took = duration(e["at"] - call["at"]) if call and is_number(e.get("at")) and is_number(call.get("at")) else ""
    if e.get("ok") is False:
        err = e.get("error") or {}
        main = h('{} {} <span class="jsbx-errtext">{}: {}</span>', label, pill("fail", "failed"), err.get("name"), err.get("message"))
        return main, "", took
    return h("{} {}", label, pill("ok", "ok")), json_block("value", e.get("value")) if "value" in e else "", took


def _timer(e: dict, cx: Context) -> Row:
    due = h(", due <code>{}</code>", iso(e["due"])) if e.get("due") else ""
    return h("sleep {}{}", duration((e.get("ms") or 0) / 1000), due), "", ""


def _wait(e: dict, cx: Context) -> Row:
    timeout = e.get("timeout")
    text = f", timeout {duration(timeout / 1000)}" if is_number(timeout) else ", no timeout"
    return h("wait for an event{}", text), json_block("match", e.get("match")), ""


def _event(e: dict, cx: Context) -> Row:
    if e.get("event") is None:
        return "timed out, no event", "", ""
    signal = h(" (signal <code>{}</code>)", e["signal"]) if e.get("signal") else ""
    return h("event delivered{}", signal), json_block("event", e["event"]), ""


def _interrupt(e: dict, cx: Context) -> Row:
    blocks = [json_block(k, e[k]) for k in ("input", "data", "state") if k in e]
    return h('<span class="jsbx-label">{}</span> needs an answer <code>{}</code>', e.get("name"), e.get("id")), blocks, ""


def _line(e: dict, cx: Context) -> Row:
    level = e.get("level")
    main = h('{} <span class="jsbx-msg">{}</span>', pill(f"level-{level}", level), e.get("message"))
    return main, json_block("data", e["data"]) if e.get("kind") == "log" and "data" in e else "", ""


def _attempt(e: dict, cx: Context) -> Row:
    ids = e.get("resumed_from") or []
    return h("attempt {} started{}{}", e.get("n"),
             h(", answering <code>{}</code>", ", ".join(map(str, ids))) if ids else "",
             h(" · source <code>{}</code>", str(e["source_hash"])[:8]) if e.get("source_hash") else ""), "", ""


KINDS: dict[str, Callable[[dict, Context], Row]] = {
    "call": _call,
    "result": _result,
    "now": lambda e, cx: (h("clock read <code>{}</code>", iso(e.get("value"))), "", ""),
    "random": lambda e, cx: (h("random read <code>{}</code>", e.get("value")), "", ""),
    "timer": _timer,
    "fired": lambda e, cx: (h("timer fired (slot {})", e.get("slot")), "", ""),
    "wait": _wait,
    "event": _event,
    "interrupt": _interrupt,
    "answer": lambda e, cx: (h("answered <code>{}</code>", e.get("id")), json_block("value", e.get("value")), ""),
    "console": _line,
    "log": _line,
    "plan": lambda e, cx: ("plan updated", plan_list(e.get("plan")), ""),
    "attempt": _attempt,
    "error": lambda e, cx: ("", error_block(e.get("error"), cx.source), ""),
    "mismatch": lambda e, cx: ("", Html(render_mismatch_html(e, cx.source)), ""),
}


def _offset(e: dict, cx: Context) -> str:
    return f"+{duration(e['at'] - cx.t0)}" if is_number(e.get("at")) and is_number(cx.t0) else ""


def entry_row(e: dict, mark: str, cx: Context) -> Html:
    """One entry as an ``<li>`` with its seq, replayed/live mark, kind, text and blocks."""
    kind = e.get("kind")
    render = KINDS.get(kind)
    main, more, meta = render(e, cx) if render else ("", json_block("entry", e), "")
    title = " · ".join(x for x in (
        f"seq {e.get('seq')}", f"slot {e['slot']}" if e.get("slot") is not None else "",
        f"attempt {e.get('attempt') or 1}", iso(e["at"] * 1000) if is_number(e.get("at")) else "",
    ) if x)
    return h(
        '<li class="jsbx-entry jsbx-k-{kind}" data-seq="{seq}" data-kind="{kind}" data-mark="{mark}"><div class="jsbx-line">'
        '<span class="jsbx-seq" title="{title}">#{seq}</span><span class="jsbx-mark">{mark}</span><span class="jsbx-kind">{kind}</span>'
        '<span class="jsbx-main">{main}</span><span class="jsbx-meta">{meta}</span></div>{more}</li>',
        kind=kind, seq=e.get("seq"), mark=mark, title=title, main=main, more=more,
        meta=" · ".join(x for x in (meta, _offset(e, cx)) if x),
    )


class StepNode:
    """A step and what happened inside it; ``start`` is None for a step continued from a replayed attempt."""

    def __init__(self, id: Any, start: dict | None):
        self.id, self.start = id, start
        self.end: dict | None = None
        self.items: list[dict | StepNode] = []


def nest(entries: list[dict], cx: Context) -> list[dict | StepNode]:
    """Nest a run of entries by step, as timeline.js does.

    A step's start opens a node under its parent, an entry goes under the step
    it names, the end closes the node. A step opened before these entries (in
    a replayed attempt) reappears as a continued node.
    """
    root: list[dict | StepNode] = []
    nodes: dict[Any, StepNode] = {}

    def node_for(step_id: Any, depth: int = 0) -> list[dict | StepNode]:
        if step_id is None or depth > 64:
            return root
        node = nodes.get(step_id)
        if node is None:
            node = nodes[step_id] = StepNode(step_id, None)
            node_for((cx.step_start.get(step_id) or {}).get("parent"), depth + 1).append(node)
        return node.items

    for e in entries:
        kind, phase = e.get("kind"), e.get("phase")
        if kind == "step" and phase == "start" and e.get("id") not in nodes:
            node = nodes[e.get("id")] = StepNode(e.get("id"), e)
            node_for(e.get("parent")).append(node)
        elif kind == "step" and phase == "end":
            node_for(e.get("id"))
            nodes[e.get("id")].end = e
        elif kind != "step":
            node_for(e.get("step")).append(e)
    return root


def _step_html(node: StepNode, mark: str, cx: Context) -> Html:
    start, end = node.start, node.end
    label = (start or cx.step_start.get(node.id) or {}).get("label") or f"step {node.id}"
    outcome = (end.get("outcome") or "ok") if end else "open"
    took = duration(end["at"] - start["at"]) if start and end and is_number(end.get("at")) and is_number(start.get("at")) else ""
    end_row = h(
        '<div class="jsbx-entry jsbx-k-step-end" data-seq="{}" data-kind="step" data-mark="{}"><div class="jsbx-line">'
        '<span class="jsbx-seq">#{}</span><span class="jsbx-mark">{}</span><span class="jsbx-kind">end</span>'
        '<span class="jsbx-main">{}</span><span class="jsbx-meta">{}</span></div>{}</div>',
        end.get("seq"), mark, end.get("seq"), mark, outcome, _offset(end, cx),
        error_block(end["error"], cx.source) if end.get("error") else "",
    ) if end else ""
    head = h('<span class="jsbx-seq">#{}</span><span class="jsbx-mark">{}</span>', start.get("seq"), mark) if start else ""
    return h(
        '<li class="jsbx-step-item"><details class="jsbx-step" data-outcome="{outcome}" data-step="{id}"{seq} data-mark="{mark}" open><summary>'
        '{head}<span class="jsbx-kind">step</span><span class="jsbx-label">{label}</span>{continued} {pill}'
        '<span class="jsbx-meta">{took}</span></summary>{items}{end}</details></li>',
        outcome=outcome, id=node.id, seq=h(' data-seq="{}"', start.get("seq")) if start else "", mark=mark, head=head, label=label,
        continued="" if start else Html(' <span class="jsbx-meta">(continued)</span>'),
        pill=pill(f"outcome-{outcome}", outcome), took=took, items=items_html(node.items, mark, cx), end=end_row,
    )


def items_html(items: list[dict | StepNode], mark: str, cx: Context) -> Html:
    """A nested list of entries and steps, each marked ``replayed`` or ``live``."""
    if not items:
        return Html("")
    return h('<ol class="jsbx-entries">{}</ol>', [
        _step_html(it, mark, cx) if isinstance(it, StepNode) else entry_row(it, mark, cx) for it in items
    ])
