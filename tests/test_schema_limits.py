"""The bounds a JSON Schema keeps to where it enters (``schema_limits``): a saved script's holds at most
``MAX_SCHEMA_OBJECTS`` objects, and every schema (a saved script's, an action's, an MCP tool's) nests at most
``MAX_SCHEMA_DEPTH`` levels; past either, ``LimitExceeded`` naming the limit and its bound, never a
``RecursionError`` from the checks that descend through it."""

from __future__ import annotations

import warnings

import pytest
from examples import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.types import Tool
from shop_model import Shop

from jupyter_sandbox import LimitExceeded
from jupyter_sandbox.agents.mcp_tools import _spec as mcp_spec
from jupyter_sandbox.schema_limits import MAX_SCHEMA_DEPTH, MAX_SCHEMA_OBJECTS, schema_objects

# One level of nesting around a schema, by keyword, and how many JSON containers (objects, arrays) it adds.
WRAPS = {
    "items": (lambda s: {"type": "array", "items": s}, 1),
    "not": (lambda s: {"not": s}, 1),
    "properties": (lambda s: {"type": "object", "properties": {"a": s}}, 2),
    "anyOf": (lambda s: {"anyOf": [s, {"type": "null"}]}, 2),
}


def nested(depth: int, keyword: str = "items", width: int = 0) -> dict:
    """A schema whose objects and arrays nest exactly ``depth`` levels (at least 1): ``keyword`` wrapped around
    an integer's (a ``not`` for the last level where the keyword adds two), each wrapping object with ``width``
    sibling subschemas beside the one it wraps."""
    schema: dict = {"type": "integer"}
    level = 1
    while level < depth:
        wrap, adds = WRAPS[keyword] if level + WRAPS[keyword][1] <= depth else WRAPS["not"]
        schema, level = wrap(schema), level + adds
        schema.update({f"x-{k}": {"description": "a sibling"} for k in range(width)})
    return schema


def json_depth(value: object) -> int:
    """How many levels of objects and arrays ``value`` nests (the test's own count, by recursion: shallow here)."""
    if isinstance(value, dict):
        return 1 + max((json_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((json_depth(v) for v in value), default=0)
    return 0


def test_the_helper_nests_exactly_the_depth_asked():
    for keyword in WRAPS:
        for depth in (1, 2, 3, 64, 65):
            assert json_depth(nested(depth, keyword, width=2)) == depth


def test_a_large_pydantic_models_schema_is_saved_and_declared(sb):
    objects = schema_objects(Shop.model_json_schema())
    assert objects > 500  # (the bound this limit once was refused it)
    saved = sb.save_script("restock", "return ctx.input.name", input_schema=Shop)
    assert saved.version == 1 and schema_objects(saved.about["input_schema"]) == objects
    assert "restock(input: {" in sb.declarations()


def test_a_saved_schema_of_the_bound_in_objects_is_saved_and_one_more_is_refused(sb):
    def of(objects: int) -> dict:
        return {"anyOf": [{} for _ in range(objects - 1)]}

    assert sb.save_script("wide", "return 1", input_schema=of(MAX_SCHEMA_OBJECTS)).version == 1
    with pytest.raises(LimitExceeded) as refused:
        sb.save_script("wider", "return 1", input_schema=of(MAX_SCHEMA_OBJECTS + 1))
    assert refused.value.limit == "schema-size" and refused.value.value == MAX_SCHEMA_OBJECTS
    assert f"{MAX_SCHEMA_OBJECTS + 1:,} JSON objects" in str(refused.value)
    assert sb.store.script_versions("wider") == []


@pytest.mark.parametrize("keyword", sorted(WRAPS))
@pytest.mark.parametrize("key", ["input_schema", "output_schema"])
def test_a_saved_schema_nested_to_the_bound_is_saved_and_one_level_more_is_refused(sb, keyword, key):
    assert sb.save_script("deep", "return 1", **{key: nested(MAX_SCHEMA_DEPTH, keyword)}).version == 1
    with pytest.raises(LimitExceeded) as refused:
        sb.save_script("deeper", "return 1", **{key: nested(MAX_SCHEMA_DEPTH + 1, keyword)})
    assert refused.value.limit == "schema-depth" and refused.value.value == MAX_SCHEMA_DEPTH
    assert f"the {key} of script 'deeper'" in str(refused.value)
    assert sb.store.script_versions("deeper") == []


@pytest.mark.parametrize("key", ["input_schema", "output_schema"])
def test_an_actions_schema_nested_to_the_bound_registers_and_one_level_more_is_refused(sb, key):
    sb.action(lambda x=None: x, name="deep", **{key: nested(MAX_SCHEMA_DEPTH)})
    with pytest.raises(LimitExceeded) as refused:
        sb.action(lambda x=None: x, name="deeper", **{key: nested(MAX_SCHEMA_DEPTH + 1)})
    assert refused.value.limit == "schema-depth" and f"the {key} of action deeper" in str(refused.value)
    assert "deep(" in sb.declarations() and "deeper" not in sb.declarations()


def test_an_mcp_tools_schema_past_the_bound_is_left_out_with_a_warning_and_one_at_it_is_kept():
    for depth, kept in ((MAX_SCHEMA_DEPTH, True), (MAX_SCHEMA_DEPTH + 1, False)):
        tool = Tool(name="t", input_schema=nested(depth, "properties"), output_schema=nested(depth, "properties"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spec = mcp_spec("srv.t", tool, False)
        assert (spec.input_schema is not None, spec.output_schema is not None) == (kept, kept)
        said = [str(w.message) for w in caught]
        assert len(said) == (0 if kept else 2) and all("schema-depth" in s for s in said)


# Every schema a user or a model may give, nested and wide as it likes: accepted, or refused with LimitExceeded.
@settings(max_examples=scaled(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    depth=st.integers(1, 400),
    keyword=st.sampled_from(sorted(WRAPS)),
    width=st.integers(0, 8),
    where=st.sampled_from(["script", "action", "mcp"]),
)
@example(depth=MAX_SCHEMA_DEPTH, keyword="items", width=0, where="script").via("the deepest within the bound")
@example(depth=MAX_SCHEMA_DEPTH + 1, keyword="items", width=0, where="action").via("the shallowest past it")
@example(depth=1000, keyword="not", width=8, where="script").via("far past Python's recursion limit")
def test_any_schema_is_accepted_within_the_depth_bound_and_refused_with_limit_exceeded_past_it(
    sb, depth, keyword, width, where
):
    schema = nested(depth, keyword, width)
    name = f"s{depth}_{keyword.strip('$')}_{width}_{where}"
    try:
        if where == "script":
            sb.save_script(name, "return 1", input_schema=schema)
        elif where == "action":
            sb.action(lambda x=None: x, name=name, input_schema=schema)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # the warning an MCP tool's schema past the bound is left out with
                mcp_spec(f"srv.{name}", Tool(name=name, input_schema=schema), False)
    except LimitExceeded as refused:
        assert depth > MAX_SCHEMA_DEPTH and refused.limit == "schema-depth"
    except UserWarning as said:
        assert where == "mcp" and depth > MAX_SCHEMA_DEPTH and "schema-depth" in str(said)
    else:
        assert depth <= MAX_SCHEMA_DEPTH
        if where != "mcp":
            assert f"{name}(" in sb.declarations()
