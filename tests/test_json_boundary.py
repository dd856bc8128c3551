"""The JSON boundary's refusal of integers past the double range, wherever they sit in a value."""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox.errors import InvalidValue
from jupyter_sandbox.values import to_json

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
