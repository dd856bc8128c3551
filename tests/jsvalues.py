"""Hostile JSON values, and models of what each side of the boundary must see.

Python -> JS is ``json.dumps`` then ``JSON.parse``: numbers become doubles
(``-0`` stays ``-0``), objects list integer-like keys first, ``__proto__`` is
an own key. JS -> Python is the prelude's canonical JSON: keys sorted by
UTF-16 code units, ``-0`` written ``0``, integral doubles below 1e21 as
integers (with JS's shortest digits). ``FP`` is a JS fingerprint of a value
(type, bits, key order, prototype); ``fingerprint`` is the Python model of it.
"""

from __future__ import annotations

import json
import math
import re
import struct
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

# A JS fingerprint: exact (number bits, UTF-16 units, own-key order, prototype).
FP_JS = r"""
function FP(x) {
  if (x === undefined) return "u";
  if (x === null) return "n";
  if (typeof x === "boolean") return x ? "T" : "F";
  if (typeof x === "number") {
    const u = new Uint8Array(new Float64Array([x]).buffer);
    let h = "d";
    for (let i = 7; i >= 0; i--) h += (u[i] < 16 ? "0" : "") + u[i].toString(16);
    return h;
  }
  if (typeof x === "string") return "s" + FPS(x);
  if (Array.isArray(x)) return "[" + x.map(FP).join(",") + "]";
  if (typeof x === "object") {
    const proto = Object.getPrototypeOf(x) === Object.prototype ? "" : "!proto";
    return "{" + proto + Object.getOwnPropertyNames(x).map(k => FPS(k) + ":" + FP(x[k])).join(",") + "}";
  }
  return "?" + typeof x;
}
function FPS(s) {
  let out = "";
  for (let i = 0; i < s.length; i++) out += (i ? "." : "") + s.charCodeAt(i).toString(16);
  return "'" + out + "'";
}
"""

_INDEX = re.compile(r"0|[1-9][0-9]*")


def _units(text: str) -> str:
    data = text.encode("utf-16-be", "surrogatepass")
    return "'" + ".".join(format(int.from_bytes(data[i : i + 2], "big"), "x") for i in range(0, len(data), 2)) + "'"


def _double(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer past the double range parses as an infinity in JS
        return math.copysign(math.inf, value)


def _is_index(key: str) -> bool:
    return bool(_INDEX.fullmatch(key)) and int(key) < 2**32 - 1


def js_keys(keys) -> list[str]:
    """The order ``Object.getOwnPropertyNames`` gives for an object built with these keys in order."""
    keys = list(keys)
    return sorted((k for k in keys if _is_index(k)), key=int) + [k for k in keys if not _is_index(k)]


def fingerprint(value: Any) -> str:
    """What ``FP`` returns for the JS value ``JSON.parse(json.dumps(value))``."""
    if value is None:
        return "n"
    if value is True or value is False:
        return "T" if value else "F"
    if isinstance(value, (int, float)):
        return "d" + struct.pack(">d", _double(value)).hex()
    if isinstance(value, str):
        return "s" + _units(value)
    if isinstance(value, list):
        return "[" + ",".join(fingerprint(v) for v in value) + "]"
    return "{" + ",".join(_units(k) + ":" + fingerprint(value[k]) for k in js_keys(value)) + "}"


class Refused(Exception):
    """The model's answer for a value that must be refused at the boundary."""


def to_python(value: Any) -> Any:
    """What Python receives for the JS value ``JSON.parse(json.dumps(value))`` sent back out."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, (int, float)):
        d = _double(value)
        if not math.isfinite(d):
            raise Refused(f"{value!r:.40} is not a finite double")
        if d == 0:
            return 0  # JSON.stringify(-0) is "0"
        if d.is_integer() and abs(d) < 1e21:
            return int(Decimal(repr(d)))  # JS prints the shortest digits, then zeros
        return d
    if isinstance(value, str):
        if not well_formed(value):
            raise Refused("a lone surrogate")
        return value
    if isinstance(value, list):
        return [to_python(v) for v in value]
    for key in value:
        if not well_formed(key):
            raise Refused("a key with a lone surrogate")
    keys = sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    return {k: to_python(value[k]) for k in keys}


def well_formed(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def js_literal(value: Any) -> str:
    """A JS expression that builds the value as ``JSON.parse`` would (own ``__proto__`` keys, lone surrogates)."""
    return f"JSON.parse({json.dumps(json.dumps(value))})"


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


# -- the values -----------------------------------------------------------------------

EDGE_INTS = [
    0,
    1,
    -1,
    2**31,
    2**32 + 1,
    2**53 - 1,
    2**53,
    2**53 + 1,
    -(2**53 + 1),
    2**63,
    2**64 + 1,
    10**21,
    10**21 + 1,
    2**70 + 3,
    10**308 + 7,
]
EDGE_FLOATS = [
    -0.0,
    0.0,
    0.1,
    -1.5,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    1e21,
    1e-7,
    123456789.125,
    2.0**53,
    float(2**64),
    -1e300,
]
KEYS = [
    "__proto__",
    "constructor",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "then",
    "prototype",
    "",
    "0",
    "1",
    "10",
    "4294967295",
    "01",
    "-1",
    "a",
    "b",
    "é",
    "😀",
    "\u2028",
    "~undefined",
]


def strings(lone_surrogates: bool) -> st.SearchStrategy[str]:
    chars = st.characters(codec="utf-8") if not lone_surrogates else st.characters(exclude_categories=())
    return st.text(chars, max_size=6) | st.sampled_from(["", "\u2028\u2029", "😀", "\ufeff", "\x00", "\\", '"'])


def json_values(*, lone_surrogates: bool = False, max_depth: int = 250) -> st.SearchStrategy[Any]:
    """JSON values as Python holds them, hostile at every leaf and key.

    Keys with lone surrogates are left out (``surrogate_keys`` adds them), and so
    are integers past the double range (``beyond_doubles``): both are NEW defects
    with their own strict-xfail properties in test_properties.py.
    """
    text = strings(lone_surrogates)
    keys = st.sampled_from(KEYS) | strings(False)
    leaves = (
        st.none()
        | st.booleans()
        | st.sampled_from(EDGE_INTS)
        | st.integers(-(2**60), 2**60)
        | st.sampled_from(EDGE_FLOATS)
        | st.floats(allow_nan=False, allow_infinity=False)
        | text
    )
    shallow = st.recursive(
        leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=12
    )
    return shallow | st.builds(_nest, shallow, st.integers(1, max_depth), st.lists(st.booleans(), min_size=1))


def _nest(value: Any, levels: int, shape: list[bool]) -> Any:
    """``value`` at the bottom of ``levels`` nested arrays / objects (a deep value, built without recursion)."""
    for i in range(max(levels - depth(value), 0)):
        value = [value] if shape[i % len(shape)] else {"k": value}
    return value


surrogate_keys = st.sampled_from(["\ud800", "a\udc00", "\udfff\ud800", "😀\ud83d"])
beyond_doubles = st.sampled_from([2**1024, 10**400, -(2**1100) - 1])


def containing(values: st.SearchStrategy[Any], part: st.SearchStrategy[Any], as_key: bool) -> st.SearchStrategy[Any]:
    """A generated value with ``part`` (a key, or a leaf) placed inside it."""

    def place(value, piece, wrap_in_list):
        inner = {piece: value} if as_key else [value, piece]
        return [inner] if wrap_in_list else {"k": inner}

    return st.builds(place, values, part, st.booleans())


def value_sandbox(value=None):
    """``give`` returns ``value``; ``take`` records what it receives; ``gate`` pauses once."""
    from jupyter_sandbox import ActionInterrupt, Limits, Sandbox

    sb = Sandbox(limits=Limits(stack_bytes=8 * 2**20))  # room for FP's own recursion at depth 250
    sb.received = []

    @sb.action
    def give(_):
        return value

    @sb.action
    def take(x):
        sb.received.append(x)
        return 1

    @sb.action
    def gate(_, resume=None):
        if resume is None:
            raise ActionInterrupt()
        return 1

    return sb
