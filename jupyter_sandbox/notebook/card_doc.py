"""The run card's document: what one card shows, read from the store every time.

``card_document(sb, run_id)`` follows a ``continueAsNew`` chain to its last
run and builds, from the stored rows and journals only (never from events a
view happened to see): the status, the output or error, the pending
interrupts (only these get buttons), the answered ones with their decision,
an attempts summary, the console tail and a compact timeline. It is small
whatever the run's length (< 256 KB): consecutive calls of one action are one
row, values are cut to a preview, and at most ``MAX_ROWS`` rows are carried
(with how many were left out). ``full_rows`` is the whole journal as rows, for
"show the full journal" (fetched over the card's comm).

Durations exclude time spent waiting for a human: a call answered in a later
attempt took from that attempt's start to its result, and the wait before it
is shown apart ("waited 10.7 s for an answer").
"""

from __future__ import annotations

import itertools
import json
import statistics
import time
from typing import Any

from ..agents.facade import SandboxLike
from ..errors import RunNotFound
from ..results import status_word
from .card_answers import answered
from .card_values import DETAIL, PREVIEW, cut, preview

__all__ = ["CARD_MIME", "MAX_ROWS", "card_document", "full_rows", "next_version", "preview"]

CARD_MIME = "application/vnd.jupyter-sandbox.run+json"
MAX_ROWS = 300  # rows a card carries: about 40 KB of JSON
HEAD_ROWS = 40  # of those, from the start; the rest from the end
CONSOLE_TAIL = 40
PLAN_ITEMS = 50  # items of a ctx.plan the card lists
TRACEBACK = 4000  # characters of an action's Python traceback, from its end
INPUT = 20_000  # characters of an approval's formatted input the card carries
_HINTS = ("read_only", "destructive", "idempotent", "open_world")  # an MCP tool's annotations, as the card names them
_version = itertools.count(1)


def next_version() -> int:
    """A number that grows across documents, also across a kernel restart (milliseconds since 1970, then a tick)."""
    return int(time.time() * 1000) * 1000 + next(_version) % 1000


def _error(err: Any) -> dict[str, Any] | None:
    if not err:
        return None
    if not isinstance(err, dict):
        return {"name": "Error", "message": str(err)[:DETAIL]}
    keep = ("name", "message", "line", "column", "source_line", "limit", "kind", "position")
    out = {k: err[k] for k in keep if err.get(k) is not None}
    if isinstance(out.get("message"), str):
        out["message"] = out["message"][:DETAIL]
    if isinstance(err.get("traceback"), str):  # an action's Python traceback, shown collapsed
        out["traceback"] = err["traceback"][-TRACEBACK:]
    for side in ("recorded", "attempted"):  # a mismatch: what the journal has and what the script did
        if isinstance(err.get(side), dict):
            out[side] = {
                k: (preview(v, 400) if k == "input" else v)
                for k, v in err[side].items()
                if k in ("type", "name", "input")
            }
    return out


def _rows(doc: dict[str, Any], group: bool) -> list[dict[str, Any]]:
    """The journal as rows: a call with its result (and interrupt/answer) is one row; runs of one action, one group."""
    started = {a["n"]: a.get("started") for a in doc.get("attempts") or []}
    rows: list[dict[str, Any]] = []
    calls: dict[Any, dict[str, Any]] = {}  # slot -> its call row
    for e in doc.get("entries") or []:
        kind, n = e.get("kind"), e.get("attempt", 1)
        if kind == "call":
            row = {
                "k": "call",
                "seq": e["seq"],
                "a": n,
                "name": e.get("description") or e.get("name"),
                "op": e.get("op"),
                "line": e.get("line"),
                "in": cut(e.get("input")),
                "at": e.get("at"),
            }
            calls[e.get("slot")] = row
            rows.append(row)
        elif kind in ("result", "interrupt", "answer") and e.get("slot") in calls:
            row = calls[e["slot"]]
            if kind == "interrupt":
                row.update(interrupt=e.get("id"), approval=bool(e.get("approval")))
            elif kind == "answer":
                row["answer"] = cut(e.get("value"))
            else:
                row.update(ok=e.get("ok", True), out=cut(e.get("value")), err=_error(e.get("error")), last=e["seq"])
                call_at, at = row.pop("at", None), e.get("at")
                if isinstance(call_at, (int, float)) and isinstance(at, (int, float)):
                    resumed = started.get(n)
                    if n != row["a"] and isinstance(resumed, (int, float)) and resumed > call_at:
                        row["waited"] = round(resumed - call_at, 4)  # the human's wait, not the action's
                        call_at = resumed
                    row["took"] = round(max(at - call_at, 0.0), 6)
                row["a"] = n  # shown in the attempt that finished it
        elif kind == "console":
            rows.append(
                {
                    "k": "console",
                    "seq": e["seq"],
                    "a": n,
                    "level": e.get("level", "log"),
                    "msg": str(e.get("message", ""))[:DETAIL],
                }
            )
        elif kind == "attempt":
            continue  # the attempts summary says it
        elif kind == "step":
            rows.append(
                {
                    "k": "step",
                    "seq": e["seq"],
                    "a": n,
                    "phase": e.get("phase"),
                    "name": e.get("label"),
                    "outcome": e.get("outcome"),
                    "err": _error(e.get("error")),
                }
            )
        elif kind == "plan":
            rows.append({"k": "plan", "seq": e["seq"], "a": n, "plan": _plan(e.get("plan"))})
        elif kind in ("error", "mismatch"):
            rows.append({"k": kind, "seq": e["seq"], "a": n, "err": _error(e.get("error") or e)})
        else:
            rows.append(
                {
                    "k": kind,
                    "seq": e["seq"],
                    "a": n,
                    "in": cut({k: v for k, v in e.items() if k not in ("seq", "kind", "attempt", "at", "key")}),
                }
            )
    for row in rows:
        row.pop("at", None)
    return _grouped(rows) if group else rows


def _grouped(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive plain calls of one action (same attempt, no interrupt) as one row: ``inc × 1,000``."""
    out: list[dict[str, Any]] = []
    for _, same in itertools.groupby(rows, key=lambda r: (r["k"], r.get("name"), r["a"], "interrupt" in r)):
        run = list(same)
        first = run[0]
        if len(run) < 3 or first["k"] != "call" or "interrupt" in first:
            out.extend(run)
            continue
        took = [r["took"] for r in run if isinstance(r.get("took"), (int, float))]
        failed = sum(1 for r in run if r.get("ok") is False)
        out.append(
            {
                "k": "group",
                "seq": first["seq"],
                "last": run[-1].get("last", run[-1]["seq"]),
                "a": first["a"],
                "name": first["name"],
                "count": len(run),
                "failed": failed,
                "open": sum(1 for r in run if "ok" not in r),
                "each": statistics.median(took) if took else None,
                "took": sum(took) if took else None,
                "in": first.get("in"),
                "out": run[-1].get("out"),
            }
        )
    return out


def full_rows(sb: SandboxLike, run_id: str) -> list[dict[str, Any]]:
    """Every journal entry of the run's chain as a row, ungrouped: "show the full journal"."""
    return [r for rid in sb.chain(run_id) for r in _rows(sb.timeline(rid), group=False)]


def _formatted(value: Any) -> dict[str, Any]:
    """A value as indented JSON, at most ``INPUT`` characters (``cut``: how long it was, if longer)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return {"text": text[:INPUT], **({"cut": len(text)} if len(text) > INPUT else {})}


def _pending(doc: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for p in doc.get("pending") or []:
        for item in p.get("interrupts") or [p]:
            data = item.get("data")
            approval = bool(item.get("approval", p.get("approval")))
            editable = data.get("input") if approval and isinstance(data, dict) else data
            shown: dict[str, Any] = {
                "id": item["id"],
                "name": item.get("name") or "?",
                "approval": approval,
                "data": cut(data),
                "html": data.get("html") if isinstance(data, dict) else None,
                "edit": json.dumps(editable, indent=2, ensure_ascii=False, default=str)[:INPUT],
            }
            if approval and isinstance(data, dict):  # what the approver decides on: the input, not the action's facts
                shown.update(data=None, input=_formatted(editable))
                if isinstance(data.get("tool"), str):  # an MCP tool: which, and what its server says it does
                    annotations = data.get("annotations")
                    hints: dict[str, Any] = annotations if isinstance(annotations, dict) else {}
                    shown.update(
                        tool=data["tool"],
                        server=data.get("server"),
                        hints=[h.replace("_", "-") for h in _HINTS if hints.get(h) is True],
                    )
            found.append(shown)
    return found


def card_document(
    sb: SandboxLike,
    run_id: str,
    *,
    title: str | None = None,
    out_var: str | None = None,
    error_in_cell: int | None = None,
    show_script: bool = False,
) -> dict[str, Any]:
    """The card of ``run_id`` as the store has it now (a JSON document, see the module doc).

    ``error_in_cell``: the attempt whose error the cell shows below the card (the card then does not repeat
    it); ``show_script``: the card lists the script (a run no cell shows the source of, a model's)."""
    try:
        chain = sb.chain(run_id)
    except RunNotFound:
        return {
            "version": next_version(),
            "run_id": run_id,
            "store": sb.store_path,
            "status": "missing",
            "title": title,
            "rows": [],
            "pending": [],
            "answered": [],
            "attempts": [],
        }
    docs = [sb.timeline(rid) for rid in chain]
    last = docs[-1]
    run = last["run"]
    rows: list[dict[str, Any]] = []
    for i, d in enumerate(docs):
        if len(docs) > 1:
            rows.append(
                {
                    "k": "chain",
                    "seq": (d.get("entries") or [{"seq": 0}])[0].get("seq", 0),
                    "a": 0,
                    "name": d["run"]["id"],
                    "i": i,
                }
            )
        part = _rows(d, group=True)
        for row in part if d is last else ():  # the error the cell shows: the row says so instead of repeating it
            if row["k"] == "error" and error_in_cell is not None and row["a"] == error_in_cell:
                row["in_cell"] = True
        rows.extend(part)
    omitted = max(len(rows) - MAX_ROWS, 0)
    if omitted:
        gap = {"k": "omitted", "count": omitted, "a": 0, "seq": -1}
        rows = [*rows[:HEAD_ROWS], gap, *rows[-(MAX_ROWS - HEAD_ROWS) :]]
    console = [e for d in docs for e in d.get("entries") or [] if e.get("kind") == "console"]
    attempts = [
        {k: a.get(k) for k in ("n", "outcome", "started", "ended", "source_hash", "replayed")}
        for a in last.get("attempts") or []
    ]
    return {
        "version": next_version(),
        "run_id": run_id,
        "chain": chain,
        "store": sb.store_path,
        "title": title,
        "name": run.get("name"),
        "kind": run.get("kind"),
        "status": status_word(str(run.get("status"))),  # the one vocabulary (results.STATUSES)
        "created": docs[0]["run"].get("created"),
        "updated": run.get("updated"),
        "wake_at": run.get("wake_at"),
        "output": cut(run.get("output")) if run.get("status") == "completed" else None,
        "error": _error(run.get("error")) if run.get("status") in ("failed", "cancelled") else None,
        "error_in_cell": error_in_cell,  # the attempt whose error the cell's own traceback shows (shown once)
        "source": (last.get("source") or "")[:50_000],
        "attempts": attempts,
        "pending": _pending(last),
        "answered": answered(last),
        "console": [
            {"level": c.get("level", "log"), "msg": str(c.get("message", ""))[:500]} for c in console[-CONSOLE_TAIL:]
        ],
        "console_total": len(console),
        "rows": rows,
        "omitted": omitted,
        "entries": sum(len(d.get("entries") or []) for d in docs),
        "out_var": out_var,
        "show_script": show_script,
        "step": _open_step(last) if run.get("status") == "running" else None,
        "plan": next(
            (_plan(e.get("plan")) for e in reversed(last.get("entries") or []) if e.get("kind") == "plan"), None
        ),
    }


def _plan(plan: Any) -> list[Any] | None:
    """A ``ctx.plan`` as the card's checklist: at most ``PLAN_ITEMS`` items, each a title (cut) or ``{title, done}``."""
    if not isinstance(plan, list):
        return None
    title = lambda v: v[:PREVIEW] if isinstance(v, str) else preview(v)  # noqa: E731
    return [
        {"title": title(item.get("title", item)), "done": bool(item.get("done"))}
        if isinstance(item, dict)
        else title(item)
        for item in plan[:PLAN_ITEMS]
    ]


def _open_step(doc: dict[str, Any]) -> str | None:
    """The innermost ``ctx.step`` the latest attempt started and has not ended: what a running run is doing."""
    open_: dict[Any, str] = {}
    for e in doc.get("entries") or []:
        if e.get("kind") == "step":
            if e.get("phase") == "start":
                open_[e.get("id")] = str(e.get("label") or "")
            else:
                open_.pop(e.get("id"), None)
    return list(open_.values())[-1] if open_ else None
