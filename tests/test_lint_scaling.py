"""The lint's cost grows linearly with the source, for every source up to the
size limit, and it reports what ``tests/fixtures/lint_pairs.json`` says each of
its sources has.

The lint runs on the engine's thread before any fuel limit applies. Its cost is
pinned with `lint_work`, a deterministic count of the characters it reads
(re-reads included), never with a clock; bench/lint.py measures the time.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox.engine.lint import HINTS, lint, lint_work
from jupyter_sandbox.errors import LintError

KIB = 1024
# Each was quadratic or a candidate for it: a regex literal left open (every
# "/" inside is tried again), an unclosed call whose ")" was searched for
# again at every name, long literals with escapes, deep nesting, slashes that
# may divide or open a regex.
PATHOLOGICAL = {
    "open regex classes": "/[",
    "open regex class after a word": "/x[",
    "escaped slashes": "\\/",
    "escaped slashes after a word": "x\\/\\/",
    "slash and backslash after =": "=/\\",
    "unclosed method-like calls": ",fetch(",
    "unclosed calls after a brace": "{fetch(",
    "unclosed getter-like calls": "get fetch(",
    "unclosed calls": "f(",
    "nested brackets": "[[[{{{(((",
    "slash after increment": "a++ / ",
    "slash after paren": "(/",
    "divisions": "a/",
    "regexes after return": "return /",
    "open comment of stars": "/***",
    "template escapes": "`\\$\\",
    "string escapes": "'\\\\",
    "forbidden names": " fetch ",
}
# Generated sources: a unit of JS punctuation and keywords, tiled.
TOKENS = [
    *"/[]\\(){}'\"`$*,;:.+=-!?\n x1#",
    "${",
    "*/",
    "/*",
    "//",
    "fetch",
    "return ",
    "get ",
    "async",
    "...",
    "f(",
    "\\/",
    "\r\n",
    "\u2028",
    "process",
    "a",
    "++",
    "typeof ",
]
units = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=12).map("".join)
# A bound on the work per character that holds for every source (the worst
# found by search is about 11); a quadratic pass exceeds it within a few KiB.
WORK_PER_CHAR = 20
WORK_FIXED = 64


def tile(unit: str, size: int) -> str:
    return unit * max(size // len(unit), 1)


def problems(lint_function, source: str) -> list[tuple[int, int, str, str]] | None:
    try:
        lint_function(source)
    except LintError as error:
        return error.problems
    return None


@pytest.mark.parametrize("unit", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_doubling_a_pathological_source_at_most_doubles_the_work(unit):
    small, large = lint_work(tile(unit, 16 * KIB)), lint_work(tile(unit, 32 * KIB))
    assert large <= 2 * small + WORK_FIXED


@pytest.mark.parametrize("unit", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_a_pathological_source_of_64_kib_costs_a_bounded_work_per_character(unit):
    source = tile(unit, 64 * KIB)
    assert lint_work(source) <= WORK_PER_CHAR * len(source)


@settings(max_examples=scaled(60))
@given(units)
def test_any_tiled_source_costs_a_bounded_work_per_character(unit):
    source = tile(unit, 4 * KIB)
    assert lint_work(source) <= WORK_PER_CHAR * len(source) + WORK_FIXED


@given(st.text(max_size=3000) | st.lists(st.sampled_from(TOKENS), max_size=400).map("".join))
def test_lint_raises_nothing_but_lint_error_on_any_text(source):
    found = problems(lint, source)  # anything but LintError propagates and fails the test
    assert found is None or found == sorted(found)
    assert all(line >= 1 and column >= 1 and name in HINTS for line, column, name, _hint in found or [])


# Frozen (source, problems) pairs: tiled pathological units, token soups and text with the forbidden names,
# each with the (line, column, name) of every problem a regex-based lint and this one both reported for it.
PAIRS = json.loads((Path(__file__).parent / "fixtures" / "lint_pairs.json").read_text(encoding="utf-8"))


def test_reports_for_each_frozen_source_exactly_its_frozen_problems():
    assert len(PAIRS) > 500 and sum(bool(pair["problems"]) for pair in PAIRS) > 100
    wrong = []
    for pair in PAIRS:
        found = [[line, column, name] for line, column, name, _hint in problems(lint, pair["source"]) or []]
        if found != pair["problems"]:
            wrong.append(f"{pair['source'][:60]!r}: {found} instead of {pair['problems']}")
    assert not wrong, f"{len(wrong)} of {len(PAIRS)}:\n" + "\n".join(wrong[:20])


# Programs: statements that may use the forbidden names as code, and literals
# that hold them only as text.
NAMES = sorted(HINTS)


def _nested(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds("f({})".format, inner),
        st.builds("{} / {}".format, inner, inner),
        st.builds("{} + {}".format, inner, inner),
        st.builds("[{}, {}]".format, inner, inner),
        st.builds("({{ key: {} }})".format, inner),
        st.builds("`t ${{{}}} u`".format, inner),
        st.builds("await ({})".format, inner),
    )


expressions = st.recursive(
    st.sampled_from(["a", "items", "$y", "_z", "2", "obj.fetch", "actions.process", "x.y.require", *NAMES]),
    _nested,
    max_leaves=6,
)
statements = st.one_of(
    st.builds("const v = {};".format, expressions),
    st.builds("{};".format, expressions),
    st.builds("if ({}) {{ {}; }}".format, expressions, expressions),
)
text = st.lists(
    st.sampled_from(
        [*NAMES, " ", "(", ")", "{", "}", "*", "/", "\\", "'", '"', "`", "$", "[", "]", "\n", "${", "x", "."]
    ),
    min_size=1,
    max_size=12,
).map("".join)


def _escaped(content: str, specials: str) -> str:
    return "".join("\\" + char if char in specials else char for char in content)


literals = st.one_of(
    text.map(lambda t: "'" + _escaped(t, "\\'").replace("\n", "\\n") + "';"),
    text.map(lambda t: '"' + _escaped(t, '\\"').replace("\n", "\\n") + '";'),
    text.map(lambda t: "`" + _escaped(t, "\\`$") + "`;"),
    text.map(lambda t: "// " + t.replace("\n", " ")),
    text.map(lambda t: "/* " + t.replace("*", "x") + " */"),
    st.builds(
        lambda form, t: form.format(_escaped(t.replace("\n", " "), "\\/[]*")),
        st.sampled_from(["void /{}/;", "const r = /{}/g;", "f(/{}/);"]),
        text,
    ),
)


@given(st.lists(statements, min_size=1, max_size=6), st.data())
def test_forbidden_names_only_inside_literals_do_not_change_the_verdict(program, data):
    lines = []
    for statement in program:
        lines += data.draw(st.lists(literals, max_size=2))
        lines.append(statement)
    plain, with_literals = problems(lint, "\n".join(program)), problems(lint, "\n".join(lines))
    # Literals are lines of their own: the statements' problems keep their columns.
    assert [(column, name) for _line, column, name, _hint in plain or []] == [
        (column, name) for _line, column, name, _hint in with_literals or []
    ]
