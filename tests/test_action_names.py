"""Action and agent names: a name that would corrupt the script's ``actions`` object is refused at registration.

The rule (``jupyter_sandbox.naming.check_name``): one or more identifiers joined by dots, none a member of
``Object.prototype`` nor ``prototype``, and no name the namespace of another. Every accepted name is a plain
own property of ``actions`` (a dotted one of its namespace object: ``actions.files.read_file``) in the realm,
and the other actions still work beside it.
"""

from __future__ import annotations

import functools
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_sandbox import Sandbox
from jupyter_sandbox.naming import RESERVED_NAMES

# Everything JavaScript's Object.prototype has (quickjs-ng), read from the realm itself below.
PROTOTYPE_MEMBERS = "return Object.getOwnPropertyNames(Object.prototype)"

PROBE = """
const path = ctx.input.split(".");  // a dotted name is a method of a namespace object: actions.files.read_file
let holder = actions;
for (const key of path.slice(0, -1)) holder = holder[key];
const own = Object.getOwnPropertyDescriptor(holder, path[path.length - 1]);
return {own: own !== undefined && typeof own.value === "function", keys: Object.keys(actions).sort(),
        called: await own.value(7), ping: await actions.ping(1)};
"""


def _sandbox() -> Sandbox:
    sb = Sandbox()
    sb.action(lambda x: x + 1, name="ping")
    return sb


def test_every_member_of_object_prototype_is_reserved():
    members = set(Sandbox().eval(PROTOTYPE_MEMBERS).output)
    assert members <= RESERVED_NAMES


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_a_reserved_action_name_is_refused_at_registration(name):
    sb = _sandbox()
    with pytest.raises(ValueError, match="reserved"):
        sb.action(lambda x: x, name=name)
    assert name not in sb.actions


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_a_reserved_agent_name_is_refused_at_registration(name):
    with pytest.raises(ValueError, match="reserved"):
        Sandbox().agent(lambda x: x, name=name)


def test_a_reserved_segment_of_a_dotted_name_is_refused():
    with pytest.raises(ValueError, match="'__proto__' is reserved"):
        _sandbox().action(lambda x: x, name="files.__proto__")


@pytest.mark.parametrize(
    "name, error",
    [
        (5, TypeError),
        (None.__class__, TypeError),
        ("", ValueError),
        ("a" * 129, ValueError),
        ("two words", ValueError),
        ("a..b", ValueError),
        (".a", ValueError),
        ("a.", ValueError),
        ("1st", ValueError),
    ],
)
def test_names_that_are_not_identifiers_are_refused_with_a_clear_error(name, error):
    with pytest.raises(error, match="name"):
        _sandbox().action(lambda x: x, name=name)


def test_a_callable_without_a_name_must_be_given_one():
    sb = _sandbox()
    with pytest.raises(TypeError, match="name="):
        sb.action(functools.partial(print))
    sb.action(functools.partial(print), name="say")
    assert "say" in sb.actions


def test_an_agent_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        Sandbox().agent(5)


def test_a_namespaced_name_is_accepted_and_callable():
    sb = _sandbox()
    sb.action(lambda x: x * 2, name="files.read_file")
    assert sb.eval('return await ctx.call("files.read_file", 4)').output == 8
    assert sb.eval(PROBE, input="files.read_file").output["called"] == 14


def test_a_name_may_not_also_be_the_namespace_of_another():
    sb = _sandbox()
    sb.action(lambda x: x, name="files.read_file")
    with pytest.raises(ValueError, match="namespace"):
        sb.action(lambda x: x, name="files")
    sb2 = _sandbox()
    sb2.action(lambda x: x, name="files")
    with pytest.raises(ValueError, match="inside 'files'"):
        sb2.action(lambda x: x, name="files.read_file")


def test_registering_a_name_again_replaces_it():
    sb = _sandbox()
    sb.action(lambda x: x * 3, name="ping")
    assert sb.eval("return await actions.ping(2)").output == 6


_IDENT = st.text(string.ascii_letters + "_", min_size=1, max_size=6).flatmap(
    lambda head: st.text(string.ascii_letters + string.digits + "_", max_size=6).map(lambda tail: head + tail)
)
NAMES = st.one_of(
    st.sampled_from(sorted(RESERVED_NAMES)),
    _IDENT,
    st.lists(st.one_of(_IDENT, st.sampled_from(sorted(RESERVED_NAMES))), min_size=2, max_size=3).map(".".join),
    st.text(max_size=12),
)


@given(name=NAMES)
def test_any_name_is_either_refused_or_a_plain_own_property_beside_the_others(name):
    sb = _sandbox()
    try:
        sb.action(lambda x: x * 10, name=name)
    except (TypeError, ValueError):
        assert name not in sb.actions
        return
    if name == "ping":
        return  # replaced the probe's own action
    seen = sb.eval(PROBE, input=name).output
    assert seen == {"own": True, "keys": sorted({"ping", name.split(".")[0]}), "called": 70, "ping": 2}
