"""The JSON boundary: what a value must be to cross between Python and a script, and copies that share nothing.

Every value that enters the journal or leaves it passes here: ``to_json`` checks a value from Python before
it crosses into the realm (JSON's types, 256 levels at most, no integer past the double range), ``json_copy``
keeps a Python value in the form the script sees, ``detach`` copies a JSON value so the journal and its
readers never share a mutable object. It imports nothing of the package but ``errors``, so the stores may use it too.

A value made only of JSON's own types (``dict`` with ``str`` keys, ``list``, ``tuple``, ``str``, ``int``, ``float``,
``bool``, ``None``: the types exactly, no subclass) is checked by one walk and written by pydantic-core's encoder,
several times faster than the standard library's on long strings; anything else (a subclass, a key that is not
text, a value that fails a check) takes the standard library's encoder, which also names what is wrong.

>>> to_json({"b": (1, 2)}, "the input")
'{"b":[1,2]}'
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic_core import PydanticSerializationError
from pydantic_core import from_json as _from_json
from pydantic_core import to_json as _to_json

from .errors import InvalidValue

__all__ = ["MAX_DEPTH", "detach", "json_and_copy", "json_copy", "to_json", "well_formed"]

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
    data = _plain_json(value)
    if data is not None:
        return data.decode("utf-8")
    return _checked_json(value, what)


def _plain_json(value: Any) -> bytes | None:
    """The UTF-8 JSON of a value made only of JSON's own types that passes every check; None for any other."""
    if not _plain(value, MAX_DEPTH):
        return None
    try:
        return _to_json(value)
    except PydanticSerializationError:  # a lone surrogate (or nesting its encoder refuses): the checked path says
        return None


def _checked_json(value: Any, what: str) -> str:
    """JSON by the standard library's encoder (any subclass it takes, keys made text), every check, or the error."""
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
    return json_and_copy(value, what)[1]


def json_and_copy(value: Any, what: str) -> tuple[str, Any]:
    """``to_json(value, what)`` and ``json_copy(value, what)`` at the cost of one encode (the copy is parsed
    back from its UTF-8 bytes, which pydantic-core reads several times faster than ``json.loads`` a text)."""
    if type(value) in _SCALARS:
        return to_json(value, what), value
    data = _plain_json(value)
    if data is None:
        text = _checked_json(value, what)
        return text, json.loads(text)
    try:
        return data.decode("utf-8"), _from_json(data)
    except ValueError:  # nested past pydantic-core's own recursion limit (about 200), within MAX_DEPTH
        return data.decode("utf-8"), json.loads(data)


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


_MAX_DOUBLE = sys.float_info.max


def _plain(value: Any, room: int) -> bool:
    """Whether ``value`` is only JSON's own types (exactly), with text keys, finite floats, integers within the
    double range and at most ``room`` levels of nesting (the checks ``_checked_json`` makes, in one walk)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_MAX_DOUBLE <= value <= _MAX_DOUBLE
    if kind is float:
        return value - value == 0.0  # neither NaN nor an infinity
    if kind is dict:
        if room <= 0:
            return False
        for key in value:
            if type(key) is not str:
                return False
        items: Any = value.values()
    elif kind is list or kind is tuple:
        if room <= 0:
            return False
        items = value
    else:
        return False
    room -= 1
    for item in items:  # the scalars inline: a call per item would cost more than the walk
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if -_MAX_DOUBLE <= item <= _MAX_DOUBLE:
                continue
            return False
        if kind is float:
            if item - item == 0.0:
                continue
            return False
        if not _plain(item, room):
            return False
    return True


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


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, as the realm's ``String.prototype.toWellFormed``
    does for console text, step labels and log messages; a high surrogate before a low one is the character
    the pair encodes, as the script would read it. For text the host makes (an action's error message) that
    is journaled, where a lone surrogate cannot be stored.

    >>> well_formed("bad \\ud800 pair \\ud83d\\ude00")
    'bad \ufffd pair 😀'
    """
    if not _unstorable(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _unstorable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
