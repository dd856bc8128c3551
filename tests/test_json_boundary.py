"""The JSON boundary: what crosses (as the standard library's encoder would write it), and what is refused
wherever it sits in a value (integers past the double range, every type JSON does not have)."""

from __future__ import annotations

import datetime
import decimal
import json
import uuid

import pytest
from examples import scaled
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jupyter_sandbox.errors import InvalidValue
from jupyter_sandbox.values import MAX_DEPTH, json_and_copy, json_copy, to_json

_leaves = st.one_of(
    st.integers(-(10**20), 10**20), st.text(max_size=20), st.booleans(), st.none(), st.floats(-1e300, 1e300)
)
_values = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=30,
)


def _placed(value, huge, where):
    """``value`` with ``huge`` put in at a place chosen by ``where``."""
    return (
        [huge, value]
        if where % 3 == 0
        else {"a": value, "b": [value, {"c": huge}]}
        if where % 3 == 1
        else [value, [[huge]]]
    )


@settings(max_examples=scaled(50))
@given(_values, st.integers(309, 400), st.booleans(), st.integers(0, 2))
def test_an_integer_past_the_double_range_is_refused_wherever_it_sits(value, digits, negative, where):
    huge = (-1 if negative else 1) * 10**digits
    with pytest.raises(InvalidValue, match="double range"):
        to_json(_placed(value, huge, where), "the value")


@settings(max_examples=scaled(50))
@given(_values, st.integers(309, 2000), st.integers(0, 2))
def test_a_long_run_of_digits_in_a_string_or_a_key_crosses(value, digits, where):
    text = "7" * digits
    placed = _placed(value, text, where)
    assert to_json({text: placed}, "the value").count(text) == 2


_any_values = st.recursive(
    st.one_of(
        st.integers(-(2**80), 2**80),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=30),  # any code point but a lone surrogate: every one of them crosses
        st.booleans(),
        st.none(),
    ),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=5).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=scaled(100))
@given(_any_values)
def test_a_json_value_crosses_as_the_standard_librarys_encoder_writes_it(value):
    expected = json.loads(json.dumps(value, ensure_ascii=False))
    assert json.loads(to_json(value, "the value")) == expected
    text, copy = json_and_copy(value, "the value")
    assert json.loads(text) == expected and copy == expected and json_copy(value, "the value") == expected


@settings(max_examples=scaled(50))
@given(_any_values.filter(lambda v: isinstance(v, (list, dict))))
def test_a_copy_shares_no_container_with_the_value(value):
    copy = json_copy(value, "the value")
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copy)}


def _containers(value):
    if isinstance(value, (list, tuple, dict)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


_not_json = st.sampled_from(
    [
        b"bytes",
        {1, 2},
        frozenset(),
        datetime.date(2024, 1, 1),
        decimal.Decimal("1.5"),
        uuid.UUID(int=1),
        float("nan"),
        float("inf"),
        "\ud800",
        {"\udfff": 1},
        {(1, 2): 3},
        object(),
    ]
)


@settings(max_examples=scaled(50))
@given(_values, _not_json, st.integers(0, 2))
def test_what_json_cannot_carry_is_refused_wherever_it_sits(value, bad, where):
    for encode in (to_json, json_copy, json_and_copy):
        with pytest.raises(InvalidValue, match=r"the value is not JSON: \$"):
            encode(_placed(value, bad, where), "the value")


def test_a_subclass_or_a_key_that_is_not_text_crosses_as_the_standard_library_writes_it():
    class Count(int):
        pass

    class Record(dict):
        pass

    value = Record({"n": Count(3), 1: "one", None: [True]})
    assert json.loads(to_json(value, "the value")) == {"n": 3, "1": "one", "null": [True]}
    assert json_copy(value, "the value") == {"n": 3, "1": "one", "null": [True]}


def test_nesting_is_refused_past_the_limit_and_crosses_at_it():
    deep: list = []
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]
    assert json_copy(deep, "the value") == deep
    with pytest.raises(InvalidValue, match="deeper than"):
        to_json([deep], "the value")


@settings(max_examples=scaled(30), deadline=None)
@given(depth=st.integers(1, MAX_DEPTH + 2), kind=st.sampled_from(["list", "dict"]))
@example(depth=MAX_DEPTH, kind="list").via("the deepest within the bound")
@example(depth=MAX_DEPTH + 1, kind="dict").via("the shallowest past it")
def test_a_value_nested_to_any_depth_within_the_bound_is_copied_and_one_past_it_is_invalid(depth, kind):
    """Within MAX_DEPTH, however deep (past the about 200 levels the fast JSON parser takes), the copy equals
    the value; past it, an InvalidValue: never the parser's own ValueError."""
    value: object = [] if kind == "list" else {}
    for _ in range(depth - 1):
        value = [value] if kind == "list" else {"a": value}
    if depth <= MAX_DEPTH:
        text, copy = json_and_copy(value, "the value")
        assert copy == value and json.loads(text) == value
    else:
        with pytest.raises(InvalidValue):
            json_copy(value, "the value")
