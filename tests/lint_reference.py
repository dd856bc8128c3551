"""A reference lint: regex-based, and quadratic on some inputs
(an open regex literal, an unclosed call). Kept only as an oracle: on small
sources, tests/test_lint_scaling.py checks that the linear lint reports exactly
what this one did. Do not import it from the package."""

from __future__ import annotations

import bisect
import re

from jupyter_sandbox.errors import LintError

__all__ = ["lint"]

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
# (Loops are written `a*(?:b a*)*` so long runs scan fast.)
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
_REGEX = re.compile(r"/(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[\w$]*")
_LAST_WORD = re.compile(r"(?<![\w$])[\w$]+\Z")

# Pass 2.
_SPACE = re.compile(r"\s*")
_WORD = re.compile(r"[\w$]+")
_METHOD_PREFIXES = {"get", "set", "async", "static"}
_PARENS = re.compile(r"[()]")
_LINE_BREAK = re.compile(r"\r\n?|[\n\u2028\u2029]")


def lint(source: str) -> None:
    """Raise `LintError` listing every use of a name the sandbox does not provide.

    The names are those of `HINTS` (fetch, timers, require/import/export,
    process, globalThis); each problem is ``(line, column, name, hint)``,
    1-based, in source order. Strings, comments, regular expressions,
    template text, property accesses and object keys are not uses.
    """
    code = _code_only(source)
    reverse = code[::-1]  # lets a forward regex look backwards from a name
    uses = [
        match
        for match in _NAMES.finditer(code)
        if not (match.start() and _IDENTIFIER_CHAR.match(code, match.start() - 1))
        and not _is_property_name(code, reverse, match.start(), match.end())
    ]
    if not uses:
        return
    line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(source)]
    problems = []
    for match in uses:
        line = bisect.bisect_right(line_starts, match.start())
        column = match.start() - line_starts[line - 1] + 1
        problems.append((line, column, match.group(), HINTS[match.group()]))
    raise LintError(problems, source)


def _code_only(source: str) -> str:
    """`source` with strings, comments, regex literals and template text blanked."""
    out = []
    pos, end = 0, len(source)
    depth = 0  # "{" nesting inside template expressions
    templates = []  # the depth at which each open "${" was entered
    # What precedes a "/", to tell a division from a regex: the last code run,
    # or ")" after a string, regex or template (a value), "(" where an
    # expression starts. Judged only when a "/" comes, which is rare.
    before = "("
    while pos < end:
        piece = (_PIECE_IN_TEMPLATE if templates else _PIECE).match(source, pos)
        kind, text = piece.lastgroup, piece.group()
        pos = piece.end()
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
            regex = None if _ends_a_value(before) else _REGEX.match(source, pos - 1)
            out.append(_blank(regex.group()) if regex else text)
            pos = regex.end() if regex else pos
            before = ")" if regex else "("
        elif kind == "brace" and not (text == "}" and depth == templates[-1]):
            depth += 1 if text == "{" else -1
            out.append(text)
            before = text
        else:  # "`" opens a template, or "}" closes a "${": template text follows
            if kind == "brace":
                templates.pop()
            out.append(text)
            text = _TEMPLATE_TEXT.match(source, pos).group()
            out.append(_blank(text))
            pos += len(text)
            if text.endswith("${"):
                templates.append(depth)
                before = "("
            else:
                before = ")"
    return "".join(out)


def _ends_a_value(code: str) -> bool:
    """Whether a "/" after `code` divides (after a value) rather than opens a regex."""
    code = code.rstrip()
    if code[-1] in ")]}":  # best effort: a block's "}" is rarely followed by a regex
        return True
    word = _LAST_WORD.search(code, max(len(code) - 12, 0))  # keywords are short
    return (code[-1].isalnum() or code[-1] in "_$") and not (word and word.group() in _BEFORE_EXPRESSION)


def _blank(text: str) -> str:
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(part) for part in text.split("\n"))


def _is_property_name(code: str, reverse: str, start: int, end: int) -> bool:
    """Whether the name at code[start:end] names a property rather than a variable."""
    before_at = len(code) - start
    before_at = _SPACE.match(reverse, before_at).end()
    before = reverse[before_at : before_at + 3]  # the three characters before it, nearest first
    after_at = _SPACE.match(code, end).end()
    after = code[after_at : after_at + 1]
    if before[:1] == ".":
        return before != "..."  # obj.fetch, obj?.fetch; but ...fetch spreads the variable
    if after == ":":
        return before[:1] in ("{", ",")  # { fetch: 1 }; not `cond ? fetch : x`
    if after == "(":  # a method definition `fetch(...) {` in an object or class body
        word = _WORD.match(reverse, before_at)
        prefix = word.group()[::-1] if word else before[:1]
        return (prefix in _METHOD_PREFIXES or prefix in ("{", ",", ";", "}")) and _body_follows(code, after_at)
    return False


def _body_follows(code: str, open_paren: int) -> bool:
    """Whether the parenthesised list at `open_paren` is followed by a `{` (a body, not a call)."""
    depth = 0
    for match in _PARENS.finditer(code, open_paren):  # strings are blanked: parens are code
        depth += 1 if match.group() == "(" else -1
        if depth == 0:
            following = _SPACE.match(code, match.end()).end()
            return code[following : following + 1] == "{"
    return False
