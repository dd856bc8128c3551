"""``%sandbox scripts``: the store's saved scripts (``actions.scripts.NAME``); ``--remove NAME`` takes one out."""

from __future__ import annotations

import html as _html
from datetime import datetime
from typing import Any

from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..sandbox import Sandbox


@magic_arguments(name="sandbox scripts")
@argument("--remove", metavar="NAME", help="take the saved script NAME out of the store's listing")
def scripts(magics: Any, sb: Sandbox, args: Any) -> None:
    """List the saved scripts every run on the store may call (``actions.scripts.NAME``), newest version of
    each, or remove one (``--remove NAME``; runs that called it still replay it)."""
    if args.remove:
        done = sb.remove_script(args.remove)
        print(f"removed scripts.{args.remove}" if done else f"no saved script {args.remove!r} to remove")
        return
    saved = sb.scripts()
    if not saved:
        print("no saved scripts in this store: sb.save_script(name, source) keeps one")
        return
    rows = [
        (
            f"scripts.{s.name}",
            s.version,
            s.description or "",
            datetime.fromtimestamp(s.created).strftime("%Y-%m-%d %H:%M"),
        )
        for s in saved
    ]
    text = "\n".join(f"{n}  v{v}  {when}  {d}" for n, v, d, when in rows)
    cells = "".join(
        f"<tr><td><code>{_html.escape(n)}</code></td><td>{v}</td><td>{_html.escape(d)}</td><td>{when}</td></tr>"
        for n, v, d, when in rows
    )
    head = "<tr><th>action</th><th>version</th><th>description</th><th>saved</th></tr>"
    display({"text/plain": text, "text/html": f"<table>{head}{cells}</table>"}, raw=True)
