"""``%sandbox runs``: the store's runs, newest first; ``--pending``: each open interrupt and how to answer it."""

from __future__ import annotations

import html as _html
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..results import STATUSES
from ..sandbox import Sandbox
from .card_doc import preview
from .card_views import mask
from .cards import RunCard
from .cell_run import Magics

__all__ = ["runs"]


@magic_arguments(name="sandbox runs")
@argument("--status", help=f"only runs with this status ({', '.join(STATUSES)})")
@argument("--all", action="store_true", help="child runs too")
@argument("--limit", type=int, default=50, help="at most this many, newest first (default 50)")
@argument(
    "--pending",
    action="store_true",
    help="only runs waiting for an answer: each open interrupt, what it waits for, and how to answer it",
)
def runs(magics: Magics, sb: Sandbox, args: Any) -> None:
    """List the store's runs: id, name, status, attempts, times, and their output, error or wake time."""
    if args.pending:
        return _pending_runs(sb, args.limit)
    rows = sb.runs(status=args.status, limit=args.limit, include_children=args.all)
    where = mask(sb.store_path)
    if not rows:
        return _nothing(f"no {args.status + ' ' if args.status else ''}runs in", where)
    table = []
    for r in rows:
        note = (
            preview(r.output, 60)
            if r.status == "completed"
            else f"wakes {_when(r.wake_at / 1000)}"
            if r.status == "parked" and r.wake_at
            else (r.error or {}).get("name", "")
            if isinstance(r.error, dict)
            else ""
        )
        table.append((r.id, r.name or "", sb.status(r), str(r.attempt), _when(r.created), _when(r.updated), note))
    head = ("id", "name", "status", "attempts", "created", "updated", "output / note")
    _show_table("runs in", where, head, table, code=(0,))


def _pending_runs(sb: Sandbox, limit: int) -> None:
    """``runs --pending``: one row per open interrupt of a paused run (a child's shows under its top-level run)."""
    where = mask(sb.store_path)
    table = []
    for r in sb.runs(status="paused", limit=limit):
        for p in RunCard(sb, r.id).pending():  # what the card's buttons would answer, children's included
            table.append(
                (
                    r.id,
                    r.name or "",
                    p["id"],
                    p["name"],
                    "approval" if p["approval"] else "interrupt",
                    _when(r.updated),
                    _clip((p["data"] or {}).get("p") or "", 60),
                )
            )
    if not table:
        return _nothing("no runs waiting for an answer in", where)
    head = ("run", "name", "interrupt", "waits for", "kind", "since", "data")
    hint = "answer with `%sandbox resume RUN --id INTERRUPT --answer JSON` (or --reject REASON)"
    _show_table("waiting for an answer in", where, head, table, code=(0, 2), hint=hint)


def _nothing(what: str, where: str) -> None:
    """An empty listing: ``what`` the store ``where`` holds none of."""
    e = _html.escape
    display({"text/plain": f"{what} {where}", "text/html": f"<i>{e(what)} <code>{e(where)}</code></i>"}, raw=True)


def _show_table(
    title: str,
    where: str,
    head: tuple[str, ...],
    table: Sequence[tuple[str, ...]],
    *,
    code: tuple[int, ...],
    hint: str = "",
) -> None:
    """A listing as aligned text and as an HTML table (the columns ``code`` in monospace), under ``title where``."""
    widths = [max(len(x) for x in col) for col in zip(head, *table, strict=True)]
    text = "\n".join("  ".join(c.ljust(n) for c, n in zip(row, widths, strict=True)).rstrip() for row in [head, *table])
    e = _html.escape
    cells = "".join(
        "<tr>"
        + "".join(f"<td><code>{e(c)}</code></td>" if i in code else f"<td>{e(c)}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in table
    )
    html = (
        f'<div>{e(title)} <code>{e(where)}</code></div><table class="jsbx-runs"><thead><tr>'
        + "".join(f"<th>{e(c)}</th>" for c in head)
        + f"</tr></thead><tbody>{cells}</tbody></table>"
        + (f"<div><small>{e(hint)}</small></div>" if hint else "")
    )
    plain = f"{title} {where}\n{text}" + (f"\n{hint}" if hint else "")
    display({"text/plain": plain, "text/html": html}, raw=True)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _when(t: float | None) -> str:
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S") if t else ""
