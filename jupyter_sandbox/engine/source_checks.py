"""What a script must be before it runs: a string, within the size limit, characters the realm can read,
and nothing the lint refuses (``lint.py``). Checked before a run exists, so a refused script leaves nothing."""

from __future__ import annotations

from ..errors import LimitExceeded, ScriptError
from ..source import line_starts
from .lint import lint
from .realm import Limits

__all__ = ["check_source"]


def check_source(source: str, limits: Limits) -> None:
    """Refuse ``source`` unless it is a string of at most ``limits.source_bytes`` that the realm can read and
    the lint passes: a ``TypeError``, ``LimitExceeded`` (``source-size``) or ``ScriptError`` naming the place."""
    if not isinstance(source, str):
        raise TypeError(f"the script must be a string, got {type(source).__name__}")
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > limits.source_bytes:
        raise LimitExceeded(
            "source-size",
            f"the script is {size:,} bytes; the limit is {limits.source_bytes:,} bytes "
            f"({limits.source_bytes / 1024:,.4g} KiB)",
            value=limits.source_bytes,
        )
    _check_characters(source)
    lint(source)


def _check_characters(source: str) -> None:
    """Characters the realm cannot read: a NUL, or a lone surrogate (not UTF-8)."""
    if "\0" not in source:
        try:
            source.encode("utf-8")
            return  # the usual case, at C speed
        except UnicodeEncodeError:
            pass
    for number, (start, end) in enumerate(line_starts(source), start=1):  # lines and columns as QuickJS counts
        text = source[start:end]
        for index, char in enumerate(text):
            if char == "\0" or "\ud800" <= char <= "\udfff":
                column = len(text[:index].encode("utf-8", "surrogatepass")) + 1
                what = "a NUL character" if char == "\0" else f"a lone surrogate (U+{ord(char):04X})"
                raise ScriptError(
                    "SyntaxError",
                    f"the script contains {what}, which the realm cannot read; "
                    f"write it as the escape \\u{ord(char):04x} inside a string",
                    line=number,
                    column=column,
                    source=source,
                )
