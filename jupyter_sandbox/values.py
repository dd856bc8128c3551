"""The JSON boundary: what a value must be to cross between Python and a script, and copies that share nothing.

Every value that enters the journal or leaves it passes here: ``to_json`` checks a value from Python before
it crosses into the realm (JSON's types, 256 levels at most, no integer past the double range), ``json_copy``
keeps a Python value in the form the script sees, ``detach`` copies a JSON value so the journal and its
readers never share a mutable object. It imports nothing but ``errors``, so the stores may use it too.

>>> to_json({"b": (1, 2)}, "the input")
'{"b": [1, 2]}'
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .errors import InvalidValue

__all__ = ["MAX_DEPTH", "detach", "json_copy", "to_json"]

MAX_DEPTH = 256  # below the 400 levels the journal's CBOR decoder reads back
# A run of as many digits as the largest double has (maybe past it), looked for in the UTF-8 text with every
# ASCII digit made "0" and every other byte " ": bytes.translate and a substring search run at memory speed,
# where a regex for \d{309} steps through a 30 MB text in seconds. (Numbers in JSON are ASCII digits.)
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_NUMBER = b"0" * 309


_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False)  # json.dumps with options builds one per call


def to_json(value: Any, what: str) -> str:
    """JSON for the realm; a clear TypeError naming ``what`` and the offending part if it is not JSON."""
    if value is None:
        return "null"
    try:
        text = _ENCODER.encode(value)
        data = text.encode("utf-8")  # a lone surrogate cannot be stored
        # An int the script would read as Infinity; a text shorter than 309 characters holds none (no scan).
        if len(data) >= 309 and _LONG_NUMBER in data.translate(_DIGITS) and _first_problem(value, "$"):
            raise ValueError("an integer past the double range")
        if isinstance(value, (dict, list, tuple)) and _too_deep(value, MAX_DEPTH):
            raise ValueError("too deep")
        return text
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        raise InvalidValue(f"{what} is not JSON: {_first_problem(value, '$')}") from None


def json_copy(value: Any, what: str) -> Any:
    """``value`` as the script sees it (JSON's types: tuples as lists, keys as text), sharing nothing with it.

    What enters from Python (a run's input, an answer, an interrupt's data, a signal) is kept in this form, so
    the caller's later edits of their object change nothing recorded.
    """
    text = to_json(value, what)
    return value if type(value) in _SCALARS else json.loads(text)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def detach(value: Any) -> Any:
    """A copy of a JSON value sharing no dict or list with it (scalars are immutable and shared).

    Values kept in the journal and values handed to Python never share a mutable object, in either
    direction: an action that edits its input, or a caller who edits a call log, changes nothing recorded.
    """
    kind = type(value)
    if kind is dict:
        return {k: detach(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list or kind is tuple:
        return [detach(v) if type(v) in _CONTAINERS else v for v in value]
    return value


_CONTAINERS = frozenset({dict, list, tuple})


def _too_deep(value: Any, room: int) -> bool:
    if room <= 0:
        return True
    items = value.values() if isinstance(value, dict) else value
    return any(isinstance(v, (dict, list, tuple)) and _too_deep(v, room - 1) for v in items)


def _first_problem(value: Any, path: str, depth: int = 0) -> str:
    if depth >= MAX_DEPTH:
        return f"{path} nests deeper than {MAX_DEPTH} levels"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has a key of type {type(key).__name__}"
            if _unstorable(key):
                return f"{path} has a key with a lone surrogate"
            found = _first_problem(item, f"{path}.{key}", depth + 1)
            if found:
                return found
        return ""
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _first_problem(item, f"{path}[{i}]", depth + 1)
            if found:
                return found
        return ""
    if type(value) is int and abs(value) > sys.float_info.max:
        return f"{path} is an integer past the double range (the script would read it as Infinity)"
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return f"{path} is {value}, which JSON cannot carry"
    if isinstance(value, str):
        return f"{path} is a string with a lone surrogate" if _unstorable(value) else ""
    if value is None or isinstance(value, (bool, int, float)):
        return ""
    return f"{path} is a {type(value).__name__}"


def _unstorable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
