"""Where the script's own ``return`` statements stand, to name the line of a return value that cannot cross.

The prelude serialises the value the script returned after the script's frame
is gone, so QuickJS's stack cannot say which ``return`` it came from. This
scan finds the ``return`` keywords of the script's top level (not those of the
functions it defines) in the source with its strings, comments and regular
expressions blanked (``source.code_only``): when there is one, that is the line.

A ``{`` opens a function's body after ``=>``, or after ``)`` whose ``(`` does not
follow ``if``, ``for``, ``while``, ``switch``, ``catch`` or ``with``: a function,
a method, a getter, a constructor. Every other ``{`` is a block, an object or a
class body, inside which a ``return`` is still the enclosing function's.
"""

from __future__ import annotations

import bisect
import re

from ..source import Meter, code_only, line_starts

__all__ = ["cannot_throw_null", "top_level_returns"]

_TOKEN = re.compile(r"=>|[{}()]|[A-Za-z_$][\w$]*")
_NOT_A_FUNCTION = frozenset({"if", "for", "while", "switch", "catch", "with"})


def top_level_returns(source: str) -> list[tuple[int, int]]:
    """The (line, column) of each ``return`` of the script's top level, as QuickJS counts them.

    >>> top_level_returns("const f = () => { return 1 };\\nreturn f()")
    [(2, 1)]
    """
    code = code_only(source, Meter())
    opens: list[int] = []  # positions of the open "(" not yet closed
    before_open: dict[int, str] = {}  # an open "(" -> the word just before it
    braces: list[bool] = []  # each open "{": whether it opens a function's body
    functions = 0  # how many of them do
    last, word = "", ""  # the last token, and the last word seen
    found: list[int] = []
    for match in _TOKEN.finditer(code):
        token = match.group()
        if token == "(":
            opens.append(match.start())
            before_open[match.start()] = word if last == word else ""
        elif token == ")":
            opened = opens.pop() if opens else -1
            token = ")" + before_open.pop(opened, "")
        elif token == "{":
            body = last == "=>" or (last.startswith(")") and last[1:] not in _NOT_A_FUNCTION)
            braces.append(body)
            functions += body
        elif token == "}":
            if braces:
                functions -= braces.pop()
        else:
            word = token
            if token == "return" and functions == 0 and code[match.start() - 1 : match.start()] != ".":
                found.append(match.start())
        last = token
    starts = [start for start, _ in line_starts(source, code)]
    out = []
    for at in found:
        line = bisect.bisect_right(starts, at)
        out.append((line, len(source[starts[line - 1] : at].encode("utf-8", "surrogatepass")) + 1))
    return out


_THROW = re.compile(r"(?<![\w$])throw(?![\w$])")
_THROWN_ERROR = re.compile(r"\s*(?:new\s|[\"'`])")  # what follows a `throw` that cannot throw null


def cannot_throw_null(source: str) -> bool:
    """Whether the script has no ``throw`` that could throw null: each throws ``new ...`` or a string.

    Then a null thrown at the host is QuickJS out of memory so badly it could build no error.

    >>> cannot_throw_null("throw new Error('x')"), cannot_throw_null("catch (e) { throw e }")
    (True, False)
    """
    if not _THROW.search(source):  # the usual script: one scan in C
        return True
    code = code_only(source, Meter())
    return all(_THROWN_ERROR.match(source, m.end()) for m in _THROW.finditer(code))  # (offsets agree)
