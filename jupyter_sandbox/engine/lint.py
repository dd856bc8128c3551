"""Reject scripts that use what the realm does not have, before anything runs.

The realm lacks these names too: this lint exists for a clear message that
names the line, not as the security boundary. It works in two passes:

1. `code_only` (jupyter_sandbox/source.py) blanks out everything that is
   not code: strings, comments, regular expression literals and template text.
2. `lint` looks for the forbidden names in what is left, skipping property
   names (`obj.fetch`, `{fetch: 1}`, a method `fetch() {}`).

It runs on the engine's thread before any fuel limit applies, so its work
must stay linear in the source for every input up to the size limit. Each
regex is anchored where it starts and matches one token (or one run of
a token) without backtracking over what it consumed; the two places that used
to read ahead again and again (a regex literal left open, a call's closing
parenthesis) remember what they found. Every read of the source is counted
in a `Meter`, which `lint_work` exposes for tests: a deterministic stand-in
for time.
"""

from __future__ import annotations

import bisect
import re

from ..errors import LintError
from ..source import Meter, always, code_only, line_starts

__all__ = ["lint", "lint_work"]

_ACTION = "register a Python action and call it with `await actions.NAME(...)`"
_TIMER = "use `await ctx.sleep(ms)`"
_MODULE = "a script cannot load modules; put the code in the cell or in a Python action"
HINTS = {
    "fetch": _ACTION,
    "setTimeout": _TIMER,
    "setInterval": _TIMER,
    "setImmediate": _TIMER,
    "clearTimeout": "there are no timers to cancel; " + _TIMER,
    "clearInterval": "there are no timers to cancel; " + _TIMER,
    "require": _MODULE,
    "import": _MODULE,
    "export": "a script is not a module; `return` a value to set the run's output",
    "process": "pass values as input (`ctx.input`)",
    "globalThis": "use `data` for shared state",
}

# A forbidden name not followed by more of an identifier (`fetch_`); `lint`
# checks what precedes it (`prefetch`, `$fetch`, `#fetch`), since a lookbehind
# here would make the scan several times slower.
_NAMES = re.compile(r"(?:{})(?![\w$])".format("|".join(HINTS)))
_IDENTIFIER_CHAR = re.compile(r"[\w$#]")

# Pass 2.
_SPACE = re.compile(r"\s*")
_WORD = re.compile(r"[\w$]+")
_METHOD_PREFIXES = {"get", "set", "async", "static"}
_PARENS = re.compile(r"[()]")


def lint(source: str) -> None:
    """Raise `LintError` listing every use of a name the sandbox does not provide.

    The names are those of `HINTS` (fetch, timers, require/import/export,
    process, globalThis); each problem is ``(line, column, name, hint)``,
    1-based, in source order. Strings, comments, regular expressions,
    template text, property accesses and object keys are not uses.
    """
    problems = _problems(source, Meter())
    if problems:
        raise LintError(problems, source)


def lint_work(source: str) -> int:
    """How many characters `lint(source)` reads, counting every re-read: its cost model.

    Deterministic, unlike a timing, so tests can pin that it grows linearly.
    """
    meter = Meter()
    _problems(source, meter)
    return meter.steps


def _problems(source: str, meter: Meter) -> list[tuple[int, int, str, str]]:
    code = code_only(source, meter)
    reverse = code[::-1]  # lets a forward regex look backwards from a name
    parens = _Parens(code, meter)
    meter.steps += 3 * len(code)  # the join, the reversal, the search for names
    uses = [
        match
        for match in _NAMES.finditer(code)
        if not (match.start() and _IDENTIFIER_CHAR.match(code, match.start() - 1))
        and not _is_property_name(code, reverse, match.start(), match.end(), parens, meter)
    ]
    if not uses:
        return []
    meter.steps += len(source)
    starts = [start for start, _ in line_starts(source, code)]  # as QuickJS numbers lines
    problems = []
    at, column = 0, 1  # lines and columns as QuickJS counts them: a column is UTF-8 bytes from 1
    for match in uses:  # in source order: each column is counted on from the last one on its line
        line = bisect.bisect_right(starts, match.start())
        if at < starts[line - 1]:
            at, column = starts[line - 1], 1
        meter.steps += match.start() - at
        before = source[at : match.start()]
        if "\r" in before:  # a \r in a block comment: QuickJS counts the column afresh after it
            before, column = before[before.rindex("\r") + 1 :], 1
        column += len(before.encode("utf-8", "surrogatepass"))
        at = match.start()
        problems.append((line, column, match.group(), HINTS[match.group()]))
    return problems


class _Parens:
    """Where the parenthesis opened at an index closes, found once for the whole code."""

    def __init__(self, code: str, meter: Meter):
        self.code, self.meter = code, meter
        self.closes: dict[int, int] | None = None

    def close(self, open_paren: int) -> int | None:
        if self.closes is None:  # built on first use: most scripts never ask
            self.meter.steps += len(self.code)
            self.closes, stack = {}, []
            for match in _PARENS.finditer(self.code):  # strings are blanked: parens are code
                if match.group() == "(":
                    stack.append(match.start())
                elif stack:
                    self.closes[stack.pop()] = match.start()
        return self.closes.get(open_paren)


def _is_property_name(code: str, reverse: str, start: int, end: int, parens: _Parens, meter: Meter) -> bool:
    """Whether the name at code[start:end] names a property rather than a variable."""
    before_at = len(code) - start
    space = always(_SPACE, reverse, before_at).end()
    meter.steps += space - before_at + 4
    before_at = space
    before = reverse[before_at : before_at + 3]  # the three characters before it, nearest first
    after_at = always(_SPACE, code, end).end()
    meter.steps += after_at - end + 1
    after = code[after_at : after_at + 1]
    if before[:1] == ".":
        return before != "..."  # obj.fetch, obj?.fetch; but ...fetch spreads the variable
    if after == ":":
        return before[:1] in ("{", ",")  # { fetch: 1 }; not `cond ? fetch : x`
    if after == "(":  # a method definition `fetch(...) {` in an object or class body
        word = _WORD.match(reverse, before_at)
        meter.steps += (word.end() - before_at) if word else 1
        prefix = word.group()[::-1] if word else before[:1]
        method_like = prefix in _METHOD_PREFIXES or prefix in ("{", ",", ";", "}")
        return method_like and _body_follows(code, after_at, parens, meter)
    return False


def _body_follows(code: str, open_paren: int, parens: _Parens, meter: Meter) -> bool:
    """Whether the parenthesised list at `open_paren` is followed by a `{` (a body, not a call)."""
    close = parens.close(open_paren)
    if close is None:
        return False
    following = always(_SPACE, code, close + 1).end()
    meter.steps += following - close
    return code[following : following + 1] == "{"
