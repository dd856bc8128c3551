"""A saved script's schemas, over any value given as one: used, or refused at save with nothing stored.

Whatever is given as ``input_schema`` or ``output_schema`` (a JSON Schema, a broken one, any JSON value), the
save either keeps a script every later run can declare and call, in this process and in a fresh one on the
store, or is refused naming the schema, with nothing stored and the store running as before.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from examples import scaled
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jupyter_sandbox import Sandbox
from jupyter_sandbox.errors import ActionError, SandboxError

scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
KEYWORDS = ["type", "properties", "required", "items", "enum", "minimum", "$ref", "anyOf", "additionalProperties"]
TYPES = ["object", "string", "integer", "number", "array", "boolean", "null", "nonsense", 5, ["string", "null"]]
schema_like = st.recursive(
    st.fixed_dictionaries({}, optional={"type": st.sampled_from(TYPES)}),
    lambda inner: st.dictionaries(
        st.sampled_from(KEYWORDS),
        inner | json_values | st.dictionaries(st.text(max_size=4), inner, max_size=2) | st.lists(inner, max_size=2),
        max_size=3,
    ),
    max_leaves=6,
)
schemas = st.none() | schema_like | json_values


def _runs(sb: Sandbox, name: str | None, call_input) -> None:
    """The store still runs; a kept script is declared and its call ends as a result or a clear error."""
    assert sb.eval("return 1").output == 1
    sb.declarations()
    if name is not None:
        try:
            sb.eval(f"return await actions.scripts.{name}(ctx.input)", input=call_input)
        except ActionError:
            pass  # (an input or an output its schema refuses: the call fails, named)


@settings(max_examples=scaled(20), deadline=None)
@given(input_schema=schemas, output_schema=schemas, call_input=json_values)
@example(input_schema={"type": "nonsense"}, output_schema=None, call_input=1)
@example(input_schema=None, output_schema={"$ref": "#/nowhere"}, call_input=1)  # once broke every call
@example(input_schema={"properties": {"a": {"type": 5}}}, output_schema=None, call_input={})
def test_a_schema_is_used_or_refused_at_save_with_nothing_stored(input_schema, output_schema, call_input):
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "runs.sqlite")
        with Sandbox(store) as sb:
            try:
                sb.save_script("kept", "return ctx.input", input_schema=input_schema, output_schema=output_schema)
                kept = "kept"
            except SandboxError as exc:  # (and a TypeError, what a schema refused was before)
                assert "schema" in str(exc) and isinstance(exc, TypeError), exc
                assert sb.scripts() == [] and sb.store.scripts(removed=True) == []
                kept = None
            _runs(sb, kept, call_input)
        with Sandbox(store) as fresh:  # another process on the store: declares and runs the same
            assert [s.name for s in fresh.scripts()] == ([kept] if kept else [])
            _runs(fresh, kept, call_input)
