"""TypeScript declarations of a script's world, for a model to read and ``tsc`` to check.

``declarations(specs)`` renders ``declare const actions: {...}`` from the
catalog's JSON Schemas, then the fixed part of the world (``world.d.ts``:
``ctx``, ``console``, ``data``, ``TextEncoder``/``TextDecoder``,
``ActionError``), after a short preamble of the rules.

Each action's input and output schema is rendered by schema_types.py's
``Renderer``; the aliases of recursive types are shared, and merged where
they read the same.

>>> from jupyter_sandbox import Sandbox
>>> with Sandbox() as sb:
...     @sb.action
...     def add(pair: list[int]) -> int:
...         '''Add two numbers.'''
...         return pair[0] + pair[1]
...     world = declarations(sb.catalog())
>>> print(world)            # what a model reads: the rules, then ``actions`` and ``ctx``  # doctest: +ELLIPSIS
// The world of a sandbox script. ...
declare const actions: {
  /** Add two numbers. */
  add(input: number[], options?: CallOptions): Promise<number>;
};
...
declare const ctx: {
...
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

from .schema_types import INDENT, Renderer, jsdoc, property_key

__all__ = ["PREAMBLE", "declarations"]

PREAMBLE = """\
// The world of a sandbox script. The script is JavaScript (read these TypeScript declarations as its API).
// - It is the body of an async function: use top-level `await`; `return VALUE` makes VALUE (JSON) the run's output.
// - Its only effects are `await actions.NAME(input)` calls and the `ctx` API below. There is no fetch, no
//   setTimeout/setInterval, no require/import, no process: they do not exist.
// - It must be deterministic. A run can pause (an approval, a timer, an event) and resumes by running the script
//   again from the top, serving every recorded call from a journal: branch only on ctx.input, action results,
//   ctx.now() and Date/Math.random (which are recorded), never on anything else.
// - A failed action throws ActionError (catch it to go on); when the input did not fit the action's schema,
//   `error.issues` lists what was wrong, where (`$` is the input); when the action's result did not fit its
//   declared type, the message says its output_schema refuses it and `error.issues` lists where (`$` is the
//   result).
// - Inputs and outputs are JSON values.
"""


def _signature(spec: Any, aliases: dict[str, str], indent: str = INDENT) -> str:
    """One action's method signature with its JSDoc (its key is the last segment of a dotted name)."""
    prefix = "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", spec.name) if w) + "_"
    lines = [spec.description or ""]
    if spec.approval:
        lines.append("Needs a human's approval: the run pauses until someone answers; a rejection throws ActionError.")
    schema = spec.input_schema
    if isinstance(schema, dict) and schema.get("description"):
        lines.append(f"@param input {schema['description']}")
    if spec.returns:
        lines.append(f"@returns {spec.returns}")
    doc = jsdoc("\n".join(line for line in lines if line), indent)
    output = (
        "any"
        if spec.output_schema is None
        else Renderer(spec.output_schema, aliases=aliases, prefix=prefix).type(spec.output_schema, 0, indent)
    )
    if not spec.takes_input:
        params = ""
    else:
        kind = "unknown" if schema is None else Renderer(schema, aliases=aliases, prefix=prefix).type(schema, 0, indent)
        params = f"input{'?' if spec.input_optional else ''}: {kind}, options?: CallOptions"
    return f"{doc}{indent}{property_key(spec.name.rsplit('.', 1)[-1])}({params}): Promise<{output}>;\n"


def _members(specs: list[Any], aliases: dict[str, str], depth: int = 0, indent: str = INDENT) -> str:
    """The members of ``actions`` (or of one namespace in it): a dotted name (``files.read_file``) is a
    method of a nested object, as the script reaches it (``actions.files.read_file``)."""
    out: list[str] = []
    groups: dict[str, list[Any]] = {}
    for spec in specs:
        segments = spec.name.split(".")
        if len(segments) == depth + 1:
            out.append(_signature(spec, aliases, indent))
        else:
            groups.setdefault(segments[depth], []).append(spec)
    for key, members in groups.items():
        out.append(
            f"{indent}{property_key(key)}: {{\n{_members(members, aliases, depth + 1, indent + INDENT)}{indent}}};\n"
        )
    return "".join(out)


def declarations(specs: Iterable[Any], *, preamble: bool = True) -> str:
    """The declarations of a script's world for these catalog entries (``agents.catalog.ActionSpec``)."""
    aliases: dict[str, str] = {}
    specs = list(specs)
    names = [spec.name for spec in specs]
    methods = _members(specs, aliases)
    methods = _merge_aliases(aliases, methods)
    parts = [PREAMBLE if preamble else "", "declare const actions: {\n", methods, "};\n", _action_map(names)]
    if aliases:
        parts.append("\n" + "".join(f"type {name} = {body};\n" for name, body in aliases.items()))
    parts.append("\n" + resources.files(__package__).joinpath("world.d.ts").read_text(encoding="utf-8"))
    return "".join(parts)


def _action_map(names: list[str]) -> str:
    """``ActionMap``: every action by its full name (``"files.read_file"``), the type of the very method the
    script reaches through ``actions``, so ``ctx.call(name, ...)`` is typed as ``actions.files.read_file``."""
    lines = [
        f"  {json.dumps(name)}: (typeof actions)" + "".join(f"[{json.dumps(part)}]" for part in name.split(".")) + ";\n"
        for name in names
    ]
    return (
        "\n/** Every action by its full name, as `ctx.call` takes it. */\ntype ActionMap = {\n"
        + "".join(lines)
        + "};\n"
    )


def _merge_aliases(aliases: dict[str, str], text: str) -> str:
    """One alias for recursive types that read the same but for their own name (an input's and an output's
    Tree, or one model used by many actions). Repeated until nothing merges (mutual recursion merges late)."""
    while True:
        seen: dict[str, str] = {}
        renamed: dict[str, str] = {}
        for name, body in aliases.items():
            keep = seen.setdefault(_word(name).sub("\0", body), name)
            if keep != name:
                renamed[name] = keep
        if not renamed:
            return text
        names = sorted(renamed, key=len, reverse=True)
        pattern = re.compile(r"(?<![A-Za-z0-9_$])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_$])")
        rename = functools.partial(pattern.sub, lambda m, renamed=renamed: renamed[m.group(1)])
        for name in renamed:
            del aliases[name]
        for name in aliases:
            aliases[name] = rename(aliases[name])
        text = rename(text)


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_$]){re.escape(name)}(?![A-Za-z0-9_$])")
