"""The card's static HTML, made by the browser's own renderer (``static/card.js``) run in QuickJS.

The ES modules ``timeline.js`` and ``card.js`` are loaded into one QuickJS
context as a script: their ``import`` lines are dropped and ``export`` is cut
from their declarations (they share one scope then). So the saved
``text/html`` of a card (nbconvert, GitHub, a page without the extension) is
exactly what the live view draws, from one implementation. ``es_module`` joins
them the same way into the one ES module the widget view (card_widget.py) loads.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from pathlib import Path
from typing import Any

import _quickjs as quickjs  # (not the wrapper, whose import starts a thread: engine/realm.py)

__all__ = ["card_html", "es_module", "mismatch_html", "style"]

_STATIC = Path(__file__).parent / "widgets" / "static"
_lock = threading.Lock()
_context: quickjs.Context | None = None


def _module(name: str, text: str) -> str:
    """An ES module as a function that returns its exports (its imports read from ``__modules``)."""
    names = re.findall(r"^export (?:async )?(?:function\*?|const|let|class) (\w+)", text, flags=re.M)
    text = re.sub(r"^import \{([^}]*)\} from '([^']+)';\s*$", r"const {\1} = __modules['\2'];", text, flags=re.M)
    if re.search(r"^export default ", text, flags=re.M):
        text = re.sub(r"^export default ", "const __default_export = ", text, flags=re.M)
        names.append("default: __default_export")
    text = re.sub(r"^export ", "", text, flags=re.M)
    return f"__modules['./{name}'] = (function () {{\n{text}\nreturn {{{', '.join(names)}}};\n}})();\n"


CARD_MODULES = ("timeline.js", "card.js")  # in the order they import each other


def es_module(entry: str) -> str:
    """The card's modules and ``entry`` (a file beside them importing them) as one ES module whose default
    export is ``entry``'s: what anywidget loads, as it resolves no relative import."""
    code = "".join(_module(name, (_STATIC / name).read_text()) for name in (*CARD_MODULES, entry))
    return f"const __modules = {{}};\n{code}export default __modules['./{entry}'].default;\n"


def _render() -> Any:
    global _context
    if _context is None:
        ctx = quickjs.Context()
        ctx.set_memory_limit(256 * 1024 * 1024)
        code = "".join(_module(name, (_STATIC / name).read_text()) for name in CARD_MODULES)
        ctx.eval(
            "globalThis.__modules = {};\n"
            + code
            # JSON.stringify: a flat string (QuickJS's rope strings do not cross into Python)
            + "globalThis.__card = (s) => JSON.stringify(__modules['./card.js'].cardHtml(JSON.parse(s)));"
            + "globalThis.__mismatch = (s, src) => JSON.stringify(__modules['./timeline.js'].mismatchHtml("
            + "JSON.parse(s), src));"
        )
        _context = ctx
    return _context


@functools.cache
def style() -> str:
    """The card's CSS, inlined into the static HTML (there is no extension to load it)."""
    return (_STATIC / "timeline.css").read_text() + (_STATIC / "card.css").read_text()


def card_html(doc: dict[str, Any], styled: bool = True) -> str:
    """The static HTML of a card document, with its style (``styled``) or without (another output of the
    page carries it: the style's rules apply to the whole page)."""
    with _lock:  # one QuickJS context, used from the kernel's and the poller's threads
        body = json.loads(_render().get("__card")(json.dumps(doc, default=str)))
    return f'<style data-jsbx-style="card">{style()}</style>{body}' if styled else body


def mismatch_html(mismatch: dict[str, Any], source: str | None) -> str:
    """A ``CallLogMismatchError`` (its ``to_dict()``) as the diff the card shows, with its style."""
    with _lock:
        body = json.loads(_render().get("__mismatch")(json.dumps(mismatch, default=str), source or ""))
    return f'<style>{style()}</style><div class="jsbx-host">{body}</div>'
