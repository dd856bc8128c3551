"""Reject scripts that use what the realm does not have, before anything runs.

The realm lacks these names too: this lint exists for a clear message that
names the line, not as the security boundary. It works in two passes:

1. `_code_only` scans the source once and blanks out (with spaces, keeping
   newlines, so offsets stay put) everything that is not code: strings,
   comments, regular expression literals and template-literal text, while
   keeping the code inside template `${ ... }` expressions.
2. `lint` looks for the forbidden names in what is left, skipping property
   names (`obj.fetch`, `{fetch: 1}`, a method `fetch() {}`).

It runs on the engine's thread before any fuel limit applies, so its work
must stay linear in the source for every input up to the size limit. Each
regex below is anchored where it starts and matches one token (or one run of
a token) without backtracking over what it consumed; the two places that used
to read ahead again and again (a regex literal left open, a call's closing
parenthesis) remember what they found. Every read of the source is counted
in a `_Meter`, which `lint_work` exposes for tests: a deterministic stand-in
for time.
"""

from __future__ import annotations

import bisect
import re

from ..errors import LintError

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

# After these keywords a "/" starts a regular expression, not a division.
_BEFORE_EXPRESSION = {
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
    "extends",
}
# Pass 1: the next piece of source. Code runs up to the next character that
# may open something; inside a template's `${ ... }` braces are pieces too, to
# find the "}" that closes it. A "/" right after a value (`a/b`, `f(x) / 2`,
# but not `return /x/`) stays in the run, so that dense code takes far fewer
# pieces; `_code_only` tells any other "/" apart.
# (Loops are written `a*(?:b a*)*`, each `b` a character `a` cannot match, so
# a run is read once and never backtracked into.)
_DIVISION = r"(?:{})/(?![/*])".format(
    "|".join(
        r"(?<=[\w$)\]}}]{}){}".format(space, "".join(f"(?<!{word}{space})" for word in sorted(_BEFORE_EXPRESSION)))
        for space in ("", "[ ]")  # (a class: the patterns below are verbose)
    )
)
_PIECES = r"""
    (?P<string>'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'?|"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"?)
  | (?P<comment>//[^\n]*|/\*[^*]*(?:\*+(?!/)[^*]*)*(?:\*+/|\Z))
  | (?P<slash>/)
  | (?P<backtick>`)
"""
_PIECE = re.compile(rf"(?P<code>[^'\"`/]+(?:{_DIVISION}[^'\"`/]*)*)|{_PIECES}", re.VERBOSE)
_PIECE_IN_TEMPLATE = re.compile(
    rf"(?P<code>[^'\"`/{{}}]+(?:{_DIVISION}[^'\"`/{{}}]*)*)|(?P<brace>[{{}}])|{_PIECES}", re.VERBOSE
)
# Template text after "`" or after the "}" closing a "${": up to "`" or "${".
_TEMPLATE_TEXT = re.compile(r"[^`\\$]*(?:(?:\\[\s\S]?|\$(?!\{))[^`\\$]*)*(?:`|\$\{|\Z)")
# A regular expression literal's body, one run at a time (`_RegexLiterals`):
# outside a class it ends at "/", a class opens at "[", and inside one only
# "]" matters; "\" escapes the next character except a line break.
_BODY_RUN = re.compile(r"[^/\\\[\n]*")
_CLASS_RUN = re.compile(r"[^\]\\\n]*")
_FLAGS = re.compile(r"[\w$]*")
# A literal without class or escape. Tried first: it reads only the body's
# first run, which no other "/" can share (a run holds none), so it adds at
# most one read of each character.
_SIMPLE_REGEX = re.compile(r"/[^/\\\[\n]+/[\w$]*")
_LAST_WORD = re.compile(r"(?<![\w$])[\w$]+\Z")

# Pass 2.
_SPACE = re.compile(r"\s*")
_WORD = re.compile(r"[\w$]+")
_METHOD_PREFIXES = {"get", "set", "async", "static"}
_PARENS = re.compile(r"[()]")
_LINE_BREAK = re.compile(r"\r\n?|[\n\u2028\u2029]")


def _always(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str]:
    """`pattern.match` for a pattern that matches at every position (maybe empty): a miss is a bug in it."""
    match = pattern.match(text, pos)
    if match is None:
        raise AssertionError(f"lint pattern {pattern.pattern!r} matched nothing at {pos}")
    return match


def lint(source: str) -> None:
    """Raise `LintError` listing every use of a name the sandbox does not provide.

    The names are those of `HINTS` (fetch, timers, require/import/export,
    process, globalThis); each problem is ``(line, column, name, hint)``,
    1-based, in source order. Strings, comments, regular expressions,
    template text, property accesses and object keys are not uses.
    """
    problems = _problems(source, _Meter())
    if problems:
        raise LintError(problems, source)


def lint_work(source: str) -> int:
    """How many characters `lint(source)` reads, counting every re-read: its cost model.

    Deterministic, unlike a timing, so tests can pin that it grows linearly.
    """
    meter = _Meter()
    _problems(source, meter)
    return meter.steps


class _Meter:
    __slots__ = ("steps",)

    def __init__(self) -> None:
        self.steps = 0


def _problems(source: str, meter: _Meter) -> list[tuple[int, int, str, str]]:
    code = _code_only(source, meter)
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
    line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(source)]
    problems = []
    for match in uses:
        line = bisect.bisect_right(line_starts, match.start())
        column = match.start() - line_starts[line - 1] + 1
        problems.append((line, column, match.group(), HINTS[match.group()]))
    return problems


def _code_only(source: str, meter: _Meter) -> str:
    """`source` with strings, comments, regex literals and template text blanked."""
    out = []
    pos, end = 0, len(source)
    depth = 0  # "{" nesting inside template expressions
    templates: list[int] = []  # the depth at which each open "${" was entered
    regexes = _RegexLiterals(source, meter)
    # What precedes a "/", to tell a division from a regex: the last code run,
    # or ")" after a string, regex or template (a value), "(" where an
    # expression starts. Judged only when a "/" comes, which is rare.
    before = "("
    while pos < end:
        piece = _always(_PIECE_IN_TEMPLATE if templates else _PIECE, source, pos)
        kind, text = piece.lastgroup, piece.group()
        pos = piece.end()
        meter.steps += len(text) + 1
        if kind == "code":
            out.append(text)
            if not text.isspace():
                before = text
        elif kind == "string":
            out.append(_blank(text))
            before = ")"
        elif kind == "comment":
            out.append(_blank(text))
        elif kind == "slash":
            close = 0 if _ends_a_value(before, meter) else regexes.end(pos - 1)
            out.append(_blank(source[pos - 1 : close]) if close else text)
            pos = close or pos
            before = ")" if close else "("
        elif kind == "brace" and not (text == "}" and depth == templates[-1]):
            depth += 1 if text == "{" else -1
            out.append(text)
            before = text
        else:  # "`" opens a template, or "}" closes a "${": template text follows
            if kind == "brace":
                templates.pop()
            out.append(text)
            text = _always(_TEMPLATE_TEXT, source, pos).group()
            meter.steps += len(text) + 1
            out.append(_blank(text))
            pos += len(text)
            if text.endswith("${"):
                templates.append(depth)
                before = "("
            else:
                before = ")"
    return "".join(out)


def _ends_a_value(code: str, meter: _Meter) -> bool:
    """Whether a "/" after `code` divides (after a value) rather than opens a regex."""
    meter.steps += len(code)  # (each code run is judged at most once: a "/" resets `before`)
    code = code.rstrip()
    if code[-1] in ")]}":  # best effort: a block's "}" is rarely followed by a regex
        return True
    word = _LAST_WORD.search(code, max(len(code) - 12, 0))  # keywords are short
    return (code[-1].isalnum() or code[-1] in "_$") and not (word and word.group() in _BEFORE_EXPRESSION)


class _RegexLiterals:
    """Where the regular expression literal opened by a "/" ends, if it does on its line.

    The body is read by a machine with two states, outside or inside a `[...]`
    class (`\\x` is one step in either). A literal left open is read to the
    end of its line, and then each "/" it contained may be tried as a literal
    of its own (`/[/[/[`, `\\/\\/\\/`): read afresh, that is quadratic. But
    the machine is deterministic: a try that reaches a place, in a state,
    where an earlier try failed fails there too. So failures are marked per
    state and place, and no place is read more than a few times.
    """

    def __init__(self, source: str, meter: _Meter):
        self.source, self.meter = source, meter
        self.failed: tuple[bytearray, bytearray] | None = None  # (outside, inside), made at the first failure

    def end(self, start: int) -> int:
        """The index after the literal whose "/" is at `start` (with its flags), or 0."""
        source, failed = self.source, self.failed
        simple = _SIMPLE_REGEX.match(source, start)  # the usual literal, in one C call
        if simple:
            self.meter.steps += simple.end() - start
            return simple.end()
        at, inside = start + 1, 0
        path = []  # (state, first, last + 1) of the places read, each a step boundary
        while not (failed and failed[inside][at]):
            stop = _always(_CLASS_RUN if inside else _BODY_RUN, source, at).end()
            self.meter.steps += stop - at + 1
            path.append((inside, at, stop + 1))
            char = source[stop : stop + 1]
            if char == "\\":
                if source[stop + 1 : stop + 2] in ("", "\n"):
                    break
                at = stop + 2
            elif char == "/":  # (only outside a class: a class run reads past "/")
                if stop == start + 1:
                    return 0  # `//` is a comment; never reached, but an empty body is no literal
                flags = _always(_FLAGS, source, stop + 1).end()
                self.meter.steps += flags - stop
                return flags
            elif char in ("[", "]"):  # (a run stops at "[" only outside a class, at "]" only inside)
                at, inside = stop + 1, 1 - inside
            else:  # the line ended
                break
        if failed is None:
            size = len(source) + 2  # room for the place just past the end
            failed = self.failed = (bytearray(size), bytearray(size))
        for state, first, last in path:
            failed[state][first:last] = b"\x01" * (last - first)
            self.meter.steps += last - first
        return 0


def _blank(text: str) -> str:
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(part) for part in text.split("\n"))


class _Parens:
    """Where the parenthesis opened at an index closes, found once for the whole code."""

    def __init__(self, code: str, meter: _Meter):
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


def _is_property_name(code: str, reverse: str, start: int, end: int, parens: _Parens, meter: _Meter) -> bool:
    """Whether the name at code[start:end] names a property rather than a variable."""
    before_at = len(code) - start
    space = _always(_SPACE, reverse, before_at).end()
    meter.steps += space - before_at + 4
    before_at = space
    before = reverse[before_at : before_at + 3]  # the three characters before it, nearest first
    after_at = _always(_SPACE, code, end).end()
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


def _body_follows(code: str, open_paren: int, parens: _Parens, meter: _Meter) -> bool:
    """Whether the parenthesised list at `open_paren` is followed by a `{` (a body, not a call)."""
    close = parens.close(open_paren)
    if close is None:
        return False
    following = _always(_SPACE, code, close + 1).end()
    meter.steps += following - close
    return code[following : following + 1] == "{"
