"""One JSON Schema as a TypeScript type: the types of an action's input and output in the declarations.

``Renderer`` turns one JSON Schema into a TypeScript type: ``$ref`` (into
``$defs``, ``definitions``, any JSON pointer, or ``#``), ``const`` and
``enum`` as literal unions, ``anyOf``/``oneOf``/``allOf``, type lists and
OpenAPI's ``nullable``, tuples (``prefixItems``, or draft 4's ``items`` list)
with optional and rest elements, ``additionalProperties`` and
``patternProperties`` as index signatures, property names that need quoting.
A recursive ``$ref`` becomes a named type alias; anything nested deeper than
``max_depth`` is ``unknown``. No maintained Python library does this.

>>> schema = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}
>>> Renderer(schema).type(schema)
'{ to: string }'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["INDENT", "Renderer", "jsdoc", "literal", "property_key"]

IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
# Names the world already declares (and TypeScript's own): an alias must not take one.
TAKEN = {
    "ActionError",
    "CallOptions",
    "ActionName",
    "ActionInput",
    "ActionMap",
    "LogLevel",
    "PlanItem",
    "Settled",
    "TextEncoder",
    "TextDecoder",
    "Promise",
    "Array",
    "Record",
    "Object",
    "String",
    "Number",
    "Boolean",
    "Error",
    "Date",
    "Map",
    "Set",
    "JSON",
    "Math",
    "Partial",
    "Required",
    "Readonly",
    "Pick",
    "Omit",
    "Awaited",
    "ReturnType",
    "Parameters",
    "Uint8Array",
    "ArrayBuffer",
    "Symbol",
    "Function",
    "unknown",
    "never",
    "any",
    "object",
}
INDENT = "  "


def literal(value: Any) -> str | None:
    """A TypeScript literal type for a JSON primitive (None for objects and arrays)."""
    if (
        value is None
        or isinstance(value, (bool, str))
        or (isinstance(value, (int, float)) and value == value and value not in (float("inf"), float("-inf")))
    ):
        return json.dumps(value)  # ASCII with \\u escapes: a valid TypeScript literal too
    return None


def property_key(name: str) -> str:
    """A property name as TypeScript needs it: bare when an identifier, else a quoted string."""
    return name if IDENTIFIER.match(name) else json.dumps(name)


def jsdoc(text: str | None, indent: str) -> str:
    """A JSDoc comment (``*/`` in the text cannot close it)."""
    if not text:
        return ""
    lines = str(text).replace("*/", "*\\/").strip().splitlines()
    if len(lines) == 1:
        return f"{indent}/** {lines[0]} */\n"
    return f"{indent}/**\n" + "".join(f"{indent} * {line}".rstrip() + "\n" for line in lines) + f"{indent} */\n"


def _compound(text: str) -> bool:
    """Whether a type has a top-level ``|`` or ``&`` (it needs parentheses before ``[]``)."""
    depth, i = 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "{[(<":
            depth += 1
        elif c in "}])>":
            depth -= 1
        elif c in "|&" and depth == 0:
            return True
        i += 1
    return False


def _join(parts: Iterable[str], op: str) -> str:
    unique = list(dict.fromkeys(parts))  # in order, each once: linear in the parts (an enum of thousands)
    if op == " | ":
        if "unknown" in unique or "any" in unique:
            return "unknown" if "unknown" in unique else "any"
        unique = [p for p in unique if p != "never"] or ["never"]
    else:
        unique = [p for p in unique if p != "unknown"] or ["unknown"]
    if len(unique) == 1:
        return unique[0]
    return op.join(f"({p})" if _compound(p) else p for p in unique)


class Renderer:
    """Renders the schemas of one document (``root``: where its ``$ref``s point) as TypeScript types.

    ``aliases`` (name → body) is shared between documents so that names of
    recursive types stay unique across the declarations.
    """

    def __init__(
        self,
        root: Any,
        *,
        aliases: dict[str, str] | None = None,
        max_depth: int = 24,
        prefix: str = "",
        budget: int = 5000,
    ):
        self.root, self.max_depth, self.prefix = root, max_depth, prefix
        self.budget = budget  # schemas rendered at most: inlined $refs can multiply a small document
        self.aliases: dict[str, str] = {} if aliases is None else aliases
        self.named: dict[str, str] = {}  # ref -> alias name (this document's)
        self.expanding: list[str] = []  # refs being rendered, outermost first
        # len(expanding) at each object member being rendered: TypeScript defers an alias's use inside an
        # object type only, so a recursion must cross one (else ``type A = A | null`` is a circular alias).
        self.members: list[int] = []

    def type(self, schema: Any, depth: int = 0, indent: str = "") -> str:
        if schema is True or schema == {}:
            return "unknown"
        if schema is False:
            return "never"
        self.budget -= 1
        if not isinstance(schema, dict) or depth > self.max_depth or self.budget < 0:
            return "unknown"
        text = self._type(schema, depth, indent)
        if schema.get("nullable") is True:
            text = _join([text, "null"], " | ")
        return text

    def _type(self, s: dict[str, Any], depth: int, indent: str) -> str:
        if isinstance(s.get("$ref"), str):
            return self._ref(s["$ref"], depth, indent)
        if "const" in s:
            return literal(s["const"]) or "unknown"
        if isinstance(s.get("enum"), list) and s["enum"]:
            members = [literal(v) for v in s["enum"]]
            return "unknown" if None in members else _join(members, " | ")  # type: ignore[arg-type]
        for key in ("anyOf", "oneOf"):
            if isinstance(s.get(key), list) and s[key]:
                return _join((self.type(x, depth + 1, indent) for x in s[key]), " | ")
        if isinstance(s.get("allOf"), list) and s["allOf"]:
            return _join((self.type(x, depth + 1, indent) for x in s["allOf"]), " & ")
        kinds = s.get("type")
        if isinstance(kinds, str):
            kinds = [kinds]
        if not isinstance(kinds, list):  # no type: guess from the keywords present
            kinds = (
                ["object"]
                if any(k in s for k in ("properties", "additionalProperties", "patternProperties"))
                else ["array"]
                if any(k in s for k in ("items", "prefixItems"))
                else []
            )
        if not kinds:
            return "unknown"
        return _join((self._kind(s, kind, depth, indent) for kind in kinds), " | ")

    def _kind(self, s: dict[str, Any], kind: Any, depth: int, indent: str) -> str:
        if kind == "object":
            return self._object(s, depth, indent)
        if kind == "array":
            return self._array(s, depth, indent)
        return (
            {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}.get(
                kind, "unknown"
            )
            if isinstance(kind, str)
            else "unknown"
        )

    def _object(self, s: dict[str, Any], depth: int, indent: str) -> str:
        properties: dict[str, Any] = s["properties"] if isinstance(s.get("properties"), dict) else {}
        inner = indent + INDENT
        self.members.append(len(self.expanding))
        try:
            return self._members(s, properties, depth, indent, inner)
        finally:
            self.members.pop()

    def _members(self, s: dict[str, Any], properties: dict[str, Any], depth: int, indent: str, inner: str) -> str:
        required = set(s.get("required") or []) if isinstance(s.get("required"), list) else set()
        members: list[tuple[str, str]] = []  # (doc, member)
        value_types: list[str] = []
        optional = False
        for name, sub in properties.items():
            text = self.type(sub, depth + 1, inner)
            value_types.append(text)
            optional = optional or name not in required
            doc = sub.get("description") if isinstance(sub, dict) else None
            members.append((jsdoc(doc, inner), f"{property_key(str(name))}{'' if name in required else '?'}: {text}"))
        extra = s.get("additionalProperties")
        patterns: dict[str, Any] = s["patternProperties"] if isinstance(s.get("patternProperties"), dict) else {}
        index: list[str] = [self.type(p, depth + 1, inner) for p in patterns.values()]
        if isinstance(extra, dict) or extra is True:
            index.append(self.type(extra, depth + 1, inner))
        elif extra is None and not properties and not patterns:
            index.append("unknown")  # a bare {"type": "object"}: any keys
        if index:
            # TypeScript requires every property to fit the index signature: widen it by theirs.
            value = _join([*index, *value_types, *(["undefined"] if optional else [])], " | ")
            members.append(("", f"[key: string]: {value}"))
        if not members:
            return "Record<string, never>"
        if not any(doc for doc, _ in members) and sum(len(m) for _, m in members) < 80:
            return "{ " + "; ".join(m for _, m in members) + " }"
        return "{\n" + "".join(f"{doc}{inner}{m};\n" for doc, m in members) + indent + "}"

    def _array(self, s: dict[str, Any], depth: int, indent: str) -> str:
        items = s.get("items")
        prefix = s.get("prefixItems") if isinstance(s.get("prefixItems"), list) else None
        rest: Any = items
        if prefix is None and isinstance(items, list):  # draft 4 tuples: items is the list, additionalItems the rest
            prefix, rest = items, s.get("additionalItems")
        if prefix is None:
            return f"{self._element(items, depth, indent)}[]" if isinstance(items, dict) else "unknown[]"
        least = s.get("minItems", len(prefix)) if isinstance(s.get("minItems"), int) else len(prefix)
        most = s.get("maxItems") if isinstance(s.get("maxItems"), int) else None
        elements = [self.type(p, depth + 1, indent) + ("" if i < least else "?") for i, p in enumerate(prefix)]
        if rest is not False and (most is None or most > len(prefix)):
            elements.append(f"...{self._element(rest if isinstance(rest, dict) else True, depth, indent)}[]")
        return "[" + ", ".join(elements) + "]"

    def _element(self, schema: Any, depth: int, indent: str) -> str:
        text = self.type(schema, depth + 1, indent)
        return f"({text})" if _compound(text) else text

    def _ref(self, ref: str, depth: int, indent: str) -> str:
        if ref in self.named:
            return self.named[ref]
        target = self._resolve(ref)
        if target is None:
            return "unknown"
        if ref in self.expanding:  # recursion: the type gets a name, and refers to itself by it
            if not any(at > self.expanding.index(ref) for at in self.members):
                return "unknown"  # no object in between: TypeScript could not defer it (nor could a value exist)
            self.named[ref] = self._alias_name(ref)
            return self.named[ref]
        self.expanding.append(ref)
        try:
            body = self.type(target, depth + 1, "" if ref in self.named else indent)
        finally:
            self.expanding.pop()
        if ref in self.named:  # it turned out recursive while being rendered
            self.aliases[self.named[ref]] = body
            return self.named[ref]
        return body

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return None  # another document: not ours to fetch
        node = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def _alias_name(self, ref: str) -> str:
        last = ref.rstrip("/").rsplit("/", 1)[-1] if ref != "#" else "Root"
        base = re.sub(r"[^A-Za-z0-9_$]", "_", last) or "T"
        base = self.prefix + (base if IDENTIFIER.match(base) else f"T_{base}")
        name, n = base, 1
        while name in self.aliases or name in TAKEN:
            n += 1
            name = f"{base}_{n}"
        self.aliases[name] = "unknown"  # reserved now, its body is set when rendered
        return name
