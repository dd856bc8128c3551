"""A script's source as QuickJS reads it: which characters are code, and where its lines break.

`code_only` scans the source once and blanks out (with spaces, keeping the
line breaks QuickJS counts there, so offsets and line numbers stay put)
everything that is not code: strings, comments, regular expression literals
and template-literal text, while keeping the code inside template
`${ ... }` expressions. The lint (engine/lint.py) looks for names in what is
left, engine/returns.py for the script's own `return` statements.

QuickJS numbers lines by context, as measured on quickjs-ng: a `\n` always
ends one; a lone `\r` too, except inside a block comment (where it starts
the column count afresh but no new line); U+2028 and U+2029
only in code (inside a string, a template or a comment they are no line
break, and one that ends a line comment is swallowed with it). Python's
`str.splitlines` also breaks at `\f`, `\v`, `\x1c`-`\x1e` and NEL, which
QuickJS never counts. A column counts UTF-8 bytes from 1.
`script_lines` and `caret` draw every excerpt (errors.excerpt, the agent
tool's content) from these rules.

The scan must stay linear in the source for every input up to the size
limit: each regex below is anchored where it starts and matches one token
(or one run of a token) without backtracking over what it consumed, and every
read is counted in a `Meter` (the lint's deterministic stand-in for time).
"""

from __future__ import annotations

import re

__all__ = ["LINE_TERMINATOR", "Meter", "always", "caret", "code_only", "line_starts", "script_lines"]

LINE_TERMINATOR = re.compile("\r\n|[\n\r\u2028\u2029]")
_RARE_BREAKS = re.compile("[\r\u2028\u2029]")


def line_starts(source: str, code: str | None = None) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``source`` as QuickJS numbers them, its break left out.

    ``code`` is ``code_only(source)`` if the caller has it already.

    >>> line_starts("a\\nb")
    [(0, 1), (2, 3)]
    """
    if code is None:
        code = code_only(source, Meter()) if _RARE_BREAKS.search(source) else source
    out, start = [], 0
    for match in LINE_TERMINATOR.finditer(code):
        out.append((start, match.start()))
        start = match.end()
    out.append((start, len(source)))
    return out


def script_lines(source: str) -> list[str]:
    """The source's lines as QuickJS numbers them (line N is ``script_lines(source)[N - 1]``).

    >>> script_lines("a\\fb\\r\\nc /* \\r */")
    ['a\\x0cb', 'c /* \\r */']
    """
    if not _RARE_BREAKS.search(source):
        return source.split("\n")
    return [source[start:end] for start, end in line_starts(source)]


def caret(text: str, column: int | None) -> str:
    """A caret under QuickJS's ``column`` (UTF-8 bytes from 1) of the line ``text``, its tabs kept so it lines up.

    A ``\\r`` left inside a line is one in a block comment: QuickJS counts no line there but counts the
    column afresh after it, so the column is measured from the last such ``\\r`` it fits after.
    """
    target = _column_index(text, max((column or 1) - 1, 0))
    return "".join("\t" if char == "\t" else " " for char in text[:target]) + "^"


def _column_index(text: str, room: int) -> int:
    """The index in ``text`` that lies ``room`` UTF-8 bytes after the column's base."""
    bases = [0] + [i + 1 for i, char in enumerate(text) if char == "\r"]
    for n in range(len(bases) - 1, -1, -1):
        at, left = bases[n], room
        limit = bases[n + 1] if n + 1 < len(bases) else len(text)
        while left > 0 and at < len(text):
            left -= len(text[at].encode("utf-8", "surrogatepass"))
            at += 1
        if at < limit or (at == limit == len(text)) or n == 0:  # (a caret may stand just past the end)
            return at
    return 0


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
# pieces; `code_only` tells any other "/" apart.
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
  | (?P<comment>//[^\n\r\u2028\u2029]*[\u2028\u2029]?|/\*[^*]*(?:\*+(?!/)[^*]*)*(?:\*+/|\Z))
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


def always(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str]:
    """`pattern.match` for a pattern that matches at every position (maybe empty): a miss is a bug in it."""
    match = pattern.match(text, pos)
    if match is None:
        raise AssertionError(f"source pattern {pattern.pattern!r} matched nothing at {pos}")
    return match


class Meter:
    __slots__ = ("steps",)

    def __init__(self) -> None:
        self.steps = 0


def code_only(source: str, meter: Meter) -> str:
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
        piece = always(_PIECE_IN_TEMPLATE if templates else _PIECE, source, pos)
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
            out.append(_blank(text, "\n" if text.startswith("/*") else "\n\r"))
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
            text = always(_TEMPLATE_TEXT, source, pos).group()
            meter.steps += len(text) + 1
            out.append(_blank(text))
            pos += len(text)
            if text.endswith("${"):
                templates.append(depth)
                before = "("
            else:
                before = ")"
    return "".join(out)


def _ends_a_value(code: str, meter: Meter) -> bool:
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

    def __init__(self, source: str, meter: Meter):
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
            stop = always(_CLASS_RUN if inside else _BODY_RUN, source, at).end()
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
                flags = always(_FLAGS, source, stop + 1).end()
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


def _blank(text: str, breaks: str = "\n\r") -> str:
    """``text`` as spaces, but for the line breaks QuickJS counts inside it (``breaks``)."""
    return _NOT_A_BREAK[breaks].sub(" ", text)


# What a blanked literal keeps: QuickJS counts \n and \r inside strings, templates and line comments,
# only \n inside block comments, and U+2028/U+2029 nowhere but in code.
_NOT_A_BREAK = {"\n\r": re.compile(r"[^\n\r]"), "\n": re.compile(r"[^\n]")}
