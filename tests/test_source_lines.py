"""Lines and columns as QuickJS counts them, in every excerpt: the error's, the lint's and the tool's.

QuickJS ends a line at ``\\n``, ``\\r\\n``, ``\\r``, U+2028 and U+2029 and counts a column in UTF-8 bytes;
a ``\\f``, ``\\v``, ``\\x1c`` or NEL is no line break there, though Python's ``str.splitlines`` breaks at it.
"""

from __future__ import annotations

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sandbox import Sandbox
from jupyter_sandbox.engine.returns import top_level_returns
from jupyter_sandbox.errors import LintError, ScriptError
from jupyter_sandbox.source import script_lines

TERMINATORS = ["\n", "\r\n", "\r", "\u2028", "\u2029"]
OTHERS = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "é", "😀", "\t", "a"]
breaks = st.sampled_from(TERMINATORS)
text = st.text(st.sampled_from(OTHERS), max_size=3)
any_text = st.lists(st.sampled_from(OTHERS + TERMINATORS), max_size=4).map("".join)
# Pieces of a script where each line break means something else to QuickJS: in code, ending a line
# comment, inside a block comment, a string (which may hold U+2028 and U+2029) and a template.
pieces = st.one_of(
    breaks.map(lambda br: "1;" + br),
    st.tuples(text, breaks).map(lambda p: f"// {p[0]}{p[1]}"),
    any_text.map(lambda t: f"/* {t} */ "),
    st.text(st.sampled_from([*OTHERS, "\u2028", "\u2029"]), max_size=3).map(lambda t: f'"{t}"; '),
    any_text.map(lambda t: f"`{t}`; "),
)
THROW = 'throw new Error("here")'


def thrown(sb, source):
    with pytest.raises(ScriptError) as caught:
        sb.eval(source)
    return caught.value


@settings(max_examples=scaled(60))
@given(before=st.lists(pieces, max_size=6), after=st.lists(pieces, max_size=2), prefix=text)
def test_an_errors_line_and_caret_are_the_ones_quickjs_means(before, after, prefix):
    source = "".join(before) + f"/*{prefix}*/ {THROW};\n" + "".join(after)
    with Sandbox() as sb:
        error = thrown(sb, source)
    line = script_lines(source)[error.line - 1]
    assert f"/*{prefix}*/ {THROW};" in line  # the line QuickJS named holds the throw
    shown, marks = error.source_line.split("\n")
    assert shown.endswith(line)
    assert shown[marks.index("^") :].startswith('Error("here")')  # QuickJS points at the constructor it calls


@pytest.mark.parametrize("separator", ["\f", "\v", "\x1c", "\x85"])
def test_a_character_python_breaks_lines_at_does_not_move_the_excerpt(sb, separator):
    source = f"const a = 1; // {separator} not a new line\nthrow new Error('on line 2')"
    error = thrown(sb, source)
    assert error.line == 2
    assert error.source_line.splitlines()[0] == "   2 | throw new Error('on line 2')"


@pytest.mark.parametrize("separator", ["\u2028", "\r"])
def test_a_line_break_in_code_is_counted_where_python_counts_it_too(sb, separator):
    error = thrown(sb, f"1;{separator}// two\r\nthrow new Error('three')")
    assert error.line == 3 and error.source_line.startswith("   3 | throw new Error('three')")


def test_a_line_separator_inside_a_string_or_comment_is_no_line_break(sb):
    error = thrown(sb, "const s = '\u2028'; /* \u2029 */ // \u2028throw new Error('one')")
    assert error.line == 1 and error.source_line.endswith("^") and "throw" in error.source_line


def test_the_lints_column_and_caret_count_as_quickjs_does(sb):
    with pytest.raises(LintError) as caught:
        sb.eval("const s = 'é😀'; // \f\nconst t = 'ü'; fetch(s)")
    error = caught.value
    assert (error.line, error.column) == (2, len("const t = 'ü'; ".encode()) + 1)
    text, marks = error.source_line.split("\n")
    assert text[marks.index("^") :].startswith("fetch(s)")


def test_the_tools_excerpt_counts_lines_as_quickjs_does(sb):
    tool = sb.tool()
    result = tool.run({"script": "const a = 1; // \x85 \f\nconst x = {};\nreturn x.a.b;"})
    assert result.error["line"] == 3
    assert ">    3 | return x.a.b;" in result.content


def test_a_return_value_that_cannot_cross_names_the_return_line(sb):
    source = "const m = new Map();\nconst f = () => { return 1 };\nreturn m;"
    error = thrown(sb, source)
    assert "Map" in error.message
    assert (error.line, error.column) == (3, 1)
    assert error.source_line.startswith("   3 | return m;")


def test_the_return_of_a_function_the_script_defines_is_not_the_scripts_own():
    source = "function f() {\n  if (x) { return 1 }\n}\nclass A { get y() { return 2 } }\n"
    source += "for (const a of b) {\n  return a\n}"
    assert top_level_returns(source) == [(6, 3)]


def test_returns_in_strings_comments_and_regexes_are_not_returns():
    assert top_level_returns("const s = 'return';\n// return\nconst r = /return/;\nreturn s") == [(4, 1)]


def test_script_lines_split_where_quickjs_does():
    source = "a\fb\r\nc\rd\u2028e\u2029f\x85g\n/* \r\u2028 */'\u2028'\n// \u2028x"
    assert script_lines(source) == ["a\fb", "c", "d", "e", "f\x85g", "/* \r\u2028 */'\u2028'", "// \u2028x"]


@pytest.mark.parametrize("bad", ["\0", "\ud800"])
def test_a_character_the_realm_cannot_read_is_located_as_quickjs_counts(sb, bad):
    error = thrown(sb, f"const a = 1;\u2028const b = 'é{bad}';")
    assert (error.line, error.column) == (2, len("const b = 'é".encode()) + 1)


def test_a_carriage_return_in_a_block_comment_restarts_the_column_but_not_the_line(sb):
    error = thrown(sb, "/* one\r two */ throw new Error('x')")
    assert error.line == 1
    text, marks = error.source_line.split("\n")
    assert text[marks.index("^") :].startswith("Error('x')")
    with pytest.raises(LintError) as caught:
        sb.eval("/* \r */ fetch(1)")
    assert caught.value.column == len(" */ ") + 1


# -- the line a live call records ----------------------------------------------------------------------------


def _call_lines(sb, source):
    run_id = sb.eval(source).run_id
    return [e.get("line") for e in sb.run(run_id).entries if e["kind"] == "call"]


@pytest.mark.parametrize(
    "setup",
    [
        "Error.stackTraceLimit = 0;",
        "Object.defineProperty(Error, 'stackTraceLimit', {get() { return 0 }, set(v) { throw new Error('no') }});",
    ],
    ids=["zero", "hostile-accessor"],
)
def test_a_live_call_records_its_line_whatever_the_script_did_to_the_stack_limit(sb, setup):
    @sb.action
    def echo(x):
        return x

    source = f"{setup}\nawait actions.echo(1)\n  await ctx.call('echo', 2)\nreturn 1"
    assert _call_lines(sb, source) == [2, 3]


def test_the_scripts_own_stack_limit_is_kept_across_a_call(sb):
    @sb.action
    def echo(x):
        return x

    source = "Error.stackTraceLimit = 1\nawait actions.echo(1)\nreturn new Error('x').stack.split('\\n').length"
    assert sb.eval(source).output == 2  # one frame and the trailing newline's empty line


def test_a_live_call_records_its_own_line_inside_a_function_named_like_a_frame(sb):
    @sb.action
    def echo(x):
        return x

    # The name puts ":25000:3" at the end of a line of the stack text: only the call's own frame counts.
    name = '"a:25000:3\\nb"'
    source = f"const o = {{[{name}]: async () => {{ await actions.echo(1) }}}}\nawait o[{name}]()\nreturn 1"
    assert _call_lines(sb, source) == [1]


def test_a_live_call_handed_over_as_a_value_records_the_scripts_line(sb):
    @sb.action
    def echo(x):
        return x

    source = "const a = actions.echo\nawait a(1)\nawait Promise.all([2, 3].map(actions.echo))\nreturn 1"
    assert _call_lines(sb, source) == [2, 3, 3]
