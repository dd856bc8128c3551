"""The JSON Schema → TypeScript renderer, and the declarations built from the catalog."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox.agents.catalog import ActionSpec
from jupyter_sandbox.agents.schema_types import Renderer, literal, property_key
from jupyter_sandbox.agents.typescript import PREAMBLE, declarations


def ts(schema, root=None):
    return Renderer(schema if root is None else root).type(schema)


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "number"),
        ({"type": "number"}, "number"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "null"}, "null"),
        ({}, "unknown"),
        (True, "unknown"),
        (False, "never"),
        ({"type": "no-such"}, "unknown"),
        ({"type": ["string", "null"]}, "string | null"),
        ({"type": "string", "nullable": True}, "string | null"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "string | number"),
        ({"oneOf": [{"type": "string"}, {"type": "string"}]}, "string"),
        ({"anyOf": [{"type": "string"}, {}]}, "unknown"),
        (
            {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "number"}}},
                ]
            },
            "{ a: string } & { b?: number }",
        ),
    ],
)
def test_scalars_unions_and_intersections(schema, expected):
    assert ts(schema) == expected


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"const": "a"}, '"a"'),
        ({"const": 3}, "3"),
        ({"const": None}, "null"),
        ({"const": True}, "true"),
        ({"const": {"a": 1}}, "unknown"),
        ({"enum": ["a", "b", 1, None]}, '"a" | "b" | 1 | null'),
        ({"enum": ['say "hi"', "back\\slash", "line\nbreak"]}, '"say \\"hi\\"" | "back\\\\slash" | "line\\nbreak"'),
    ],
)
def test_const_and_enum_are_literal_types_escaped_as_strings(schema, expected):
    assert ts(schema) == expected


def test_literal_refuses_what_is_not_a_json_primitive():
    assert literal(float("nan")) is None and literal([1]) is None and literal(2.5) == "2.5"


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"type": "array", "items": {"type": "string"}}, "string[]"),
        ({"type": "array", "items": {"type": ["string", "null"]}}, "(string | null)[]"),
        ({"type": "array"}, "unknown[]"),
        (
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
            "[number, string]",
        ),
        ({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, "[number, ...string[]]"),
        (
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 1, "items": False},
            "[number, string?]",
        ),
        ({"type": "array", "prefixItems": [{"type": "integer"}]}, "[number, ...unknown[]]"),
        ({"type": "array", "items": [{"type": "integer"}], "additionalItems": False}, "[number]"),  # draft 4
    ],
)
def test_arrays_and_tuples(schema, expected):
    assert ts(schema) == expected


@pytest.mark.parametrize(
    "schema, expected",
    [
        (
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]},
            "{ a: string; b?: number }",
        ),
        ({"type": "object"}, "{ [key: string]: unknown }"),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "{ [key: string]: number }"),
        ({"type": "object", "additionalProperties": False}, "Record<string, never>"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": True,
            },
            "{ a: string; [key: string]: unknown }",
        ),
        # every property must fit the index signature, so it is widened by their types
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
            "{ a?: string; [key: string]: number | string | undefined }",
        ),
        (
            {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False},
            "{ [key: string]: string }",
        ),
        ({"properties": {"a": {"type": "null"}}, "required": ["a"]}, "{ a: null }"),  # no "type": guessed
    ],
)
def test_objects_and_index_signatures(schema, expected):
    assert ts(schema) == expected


@pytest.mark.parametrize(
    "name, key",
    [
        ("plain", "plain"),
        ("_ok$", "_ok$"),
        ("with-dash", '"with-dash"'),
        ("two words", '"two words"'),
        ("1st", '"1st"'),
        ("", '""'),
        ('quo"te', '"quo\\"te"'),
        ("é", '"\\u00e9"'),
    ],
)
def test_property_names_that_are_not_identifiers_are_quoted(name, key):
    assert property_key(name) == key


def test_descriptions_become_jsdoc_that_a_comment_closer_cannot_escape():
    schema = {"type": "object", "properties": {"a": {"type": "string", "description": "evil */ declare x"}}}
    text = ts(schema)
    assert "/** evil *\\/ declare x */" in text
    assert "*/ declare" not in text


def test_a_ref_into_defs_is_inlined():
    root = {
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        "type": "array",
        "items": {"$ref": "#/$defs/P"},
    }
    assert ts(root) == "{ x: number }[]"


def test_refs_through_definitions_and_json_pointers_with_escapes_resolve():
    root = {
        "definitions": {"a/b": {"type": "string"}, "c~d": {"type": "integer"}},
        "anyOf": [{"$ref": "#/definitions/a~1b"}, {"$ref": "#/definitions/c~0d"}],
    }
    assert ts(root) == "string | number"


@pytest.mark.parametrize("ref", ["#/$defs/Missing", "https://example.com/schema.json", "#/$defs/P/0/x"])
def test_a_ref_that_cannot_be_resolved_is_unknown(ref):
    assert ts({"$ref": ref, "$defs": {"P": {}}}) == "unknown"


def test_a_recursive_ref_becomes_a_named_alias():
    root = {
        "$defs": {
            "Tree": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                },
                "required": ["name"],
            }
        },
        "$ref": "#/$defs/Tree",
    }
    renderer = Renderer(root)
    assert renderer.type(root) == "Tree"
    assert renderer.aliases == {"Tree": "{ name: string; children?: Tree[] }"}


def test_a_root_that_refers_to_itself_is_named_too():
    root = {"type": "object", "properties": {"next": {"$ref": "#"}}}
    renderer = Renderer(root)
    assert renderer.type(root) == "{ next?: Root }"
    assert renderer.aliases == {"Root": "{ next?: Root }"}


def test_mutual_recursion_names_the_cycle():
    root = {
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
        },
        "$ref": "#/$defs/A",
    }
    renderer = Renderer(root)
    assert renderer.type(root) == "A"
    assert renderer.aliases == {"A": "{ b?: { a?: A } }"}


def test_alias_names_avoid_the_worlds_own_names():
    root = {
        "$defs": {"ActionError": {"type": "object", "properties": {"next": {"$ref": "#/$defs/ActionError"}}}},
        "$ref": "#/$defs/ActionError",
    }
    renderer = Renderer(root)
    assert renderer.type(root) == "ActionError_2"


@pytest.mark.parametrize(
    "root",
    [
        {"$ref": "#"},
        {"anyOf": [{"type": "null"}, {"$ref": "#"}]},
        {"type": "array", "prefixItems": [{"allOf": [{"type": "null"}, {"$ref": "#"}]}]},
    ],
)
def test_a_recursion_that_never_passes_through_an_object_is_unknown(root):
    # TypeScript defers an alias only inside an object type: ``type A = A | null`` would be circular
    renderer = Renderer(root)
    assert "Root" not in renderer.type(root) and renderer.aliases == {}


def test_nesting_past_the_depth_guard_is_unknown():
    schema: dict = {"type": "string"}
    for _ in range(40):
        schema = {"type": "array", "items": schema}
    assert Renderer(schema, max_depth=10).type(schema) == "unknown" + "[]" * 11


def test_refs_that_multiply_stay_within_the_budget():
    defs = {
        f"D{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(40)
    }
    defs["D40"] = {"type": "string"}
    root = {"$defs": defs, "$ref": "#/$defs/D0"}
    text = Renderer(root, max_depth=200, budget=2000).type(root)  # 2**40 expansions without the budget
    assert len(text) < 200_000 and "unknown" in text


schemas = st.recursive(
    st.sampled_from(
        [
            {},
            True,
            False,
            {"type": "string"},
            {"type": "integer"},
            {"type": "null"},
            {"enum": ["a", 1, None]},
            {"const": "x"},
            {"$ref": "#"},
            {"$ref": "#/nowhere"},
        ]
    ),
    lambda inner: st.one_of(
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda ps: {"type": "array", "prefixItems": ps}, st.lists(inner, max_size=3)),
        st.builds(
            lambda props, req, extra: {
                "type": "object",
                "properties": props,
                "required": req,
                "additionalProperties": extra,
            },
            st.dictionaries(st.text(max_size=5), inner, max_size=3),
            st.lists(st.text(max_size=5), max_size=2),
            st.one_of(st.just(False), st.just(True), inner),
        ),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"allOf": xs}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda i: {**i, "nullable": True} if isinstance(i, dict) else i, inner),
    ),
    max_leaves=12,
)


@given(schemas)
def test_any_schema_renders_to_a_type_without_raising(schema):
    renderer = Renderer(schema)
    text = renderer.type(schema)
    assert isinstance(text, str) and text
    assert all(isinstance(body, str) for body in renderer.aliases.values())


def test_declarations_list_each_action_with_its_doc_types_and_the_world():
    send = ActionSpec(
        "send_email",
        "Send an email.",
        {
            "type": "object",
            "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
            "required": ["to", "body"],
        },
        {"type": "object", "properties": {"sent": {"type": "boolean"}}, "required": ["sent"]},
        input_optional=False,
        approval=True,
    )
    ping = ActionSpec("ping", None, takes_input=False)
    text = declarations([send, ping])
    assert text.startswith(PREAMBLE)
    assert "send_email(input: { to: string; body: string }, options?: CallOptions): Promise<{ sent: boolean }>;" in text
    assert "  ping(): Promise<any>;" in text
    assert "Needs a human's approval" in text
    assert "declare const ctx: {" in text and "declare class TextDecoder" in text


def test_recursive_types_shared_by_an_input_and_an_output_get_one_alias():
    tree = {
        "$defs": {
            "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}
        },
        "$ref": "#/$defs/Tree",
    }
    text = declarations([ActionSpec("walk", None, tree, tree, input_optional=False)], preamble=False)
    assert "walk(input: Walk_Tree, options?: CallOptions): Promise<Walk_Tree>;" in text
    assert "type Walk_Tree = { kids?: Walk_Tree[] };" in text
    assert "Walk_Tree_2" not in text


class _Counted(str):
    """A member's TypeScript text that counts the comparisons made with it: the work a union's rendering does."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@settings(max_examples=scaled(20), deadline=None)
@given(members=st.integers(1, 4000), repeated=st.integers(0, 50))
def test_a_union_of_many_members_is_rendered_once_each_in_order_with_work_linear_in_them(members, repeated):
    """An ``enum`` or ``anyOf`` of thousands of members (a saved script's schema may hold that many under its
    size bound) is rendered with a bounded number of comparisons per member, not one per pair."""
    from jupyter_sandbox.agents.schema_types import _join

    parts = [_Counted(str(i)) for i in range(members)] + [_Counted(str(i)) for i in range(min(repeated, members))]
    _Counted.compared = 0
    assert _join(parts, " | ") == " | ".join(str(i) for i in range(members))
    assert _Counted.compared <= 4 * len(parts)
