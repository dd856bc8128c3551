"""The pre-run lint: names the realm does not have are rejected with their line,
column and a hint; the same words in strings, comments, regular expressions,
property names and longer identifiers are not."""

from __future__ import annotations

import pytest

from jupyter_sandbox.engine.lint import lint, lint_work
from jupyter_sandbox.errors import LintError


def problems(source: str) -> list[tuple[int, int, str]]:
    """(line, column, name) of every problem `lint` reports, [] when it passes."""
    try:
        lint(source)
    except LintError as error:
        return [(line, column, name) for line, column, name, _hint in error.problems]
    return []


def lint_error(source: str) -> LintError:
    with pytest.raises(LintError) as caught:
        lint(source)
    return caught.value


def test_fetch_is_rejected_naming_its_line():
    error = lint_error("const url = ctx.input.url\nconst page = await fetch(url)\n")
    assert error.problems == [(2, 20, "fetch", "register a Python action and call it with `await actions.NAME(...)`")]
    assert (error.line, error.column, error.name) == (2, 20, "fetch")
    assert str(error).startswith(
        "workflow.js:2:20: `fetch` is not available in a sandbox script: register a Python action"
    )


@pytest.mark.parametrize(
    ("source", "name", "hint"),
    [
        ("setTimeout(() => {}, 10)", "setTimeout", "await ctx.sleep(ms)"),
        ("const t = setInterval(tick, 10)", "setInterval", "await ctx.sleep(ms)"),
        ("setImmediate(tick)", "setImmediate", "await ctx.sleep(ms)"),
        ("clearTimeout(t)", "clearTimeout", "await ctx.sleep(ms)"),
        ("clearInterval(t)", "clearInterval", "await ctx.sleep(ms)"),
        ("const fs = require('fs')", "require", "cannot load modules"),
        ("const key = process.env.KEY", "process", "ctx.input"),
        ("globalThis.counter = 1", "globalThis", "use `data` for shared state"),
    ],
)
def test_each_forbidden_name_is_rejected_with_its_hint(source, name, hint):
    error = lint_error(source)
    assert [p[2] for p in error.problems] == [name]
    assert hint in error.problems[0][3]
    assert f"`{name}`" in str(error) and hint in str(error)


@pytest.mark.parametrize(
    "statement",
    ["import x from 'y'", "import { a, b } from 'y'", "import * as ns from 'y'", "import 'side-effect'"],
)
def test_static_import_is_rejected(statement):
    error = lint_error(f"const a = 1\n{statement}\n")
    assert error.problems == [
        (2, 1, "import", "a script cannot load modules; put the code in the cell or in a Python action")
    ]


def test_dynamic_import_is_rejected():
    assert problems("const mod = await import('./helper.js')") == [(1, 19, "import")]


def test_import_meta_is_rejected():
    assert problems("const here = import.meta.url") == [(1, 14, "import")]


def test_export_is_rejected_with_a_hint_to_return():
    error = lint_error("export default 42")
    assert error.problems[0][:3] == (1, 1, "export")
    assert "`return`" in error.problems[0][3]


def test_names_inside_strings_are_allowed():
    source = """
    const a = 'fetch(url) then setTimeout'
    const b = "require('x'); process.exit()"
    const c = 'it\\'s globalThis'
    const d = "say \\"import\\" export"
    const e = 'line \\
    continues fetch'
    """
    assert problems(source) == []


def test_names_inside_template_text_are_allowed():
    assert problems("const t = `fetch ${x} setTimeout\n  process $ {globalThis} \\${require}`") == []


def test_template_expression_is_scanned():
    assert problems("const t = `page: ${await fetch(u)}!`") == [(1, 26, "fetch")]


def test_nested_template_and_braces_in_expressions_are_scanned():
    source = "const t = `a ${ {k: 1}.k } b ${ `inner ${process.env.X}` } fetch`"
    assert problems(source) == [(1, 42, "process")]


def test_names_inside_comments_are_allowed():
    source = "// fetch the page\n/* setTimeout\n   require('x') */ const x = 1 // globalThis\n"
    assert problems(source) == []


def test_lines_after_a_multiline_comment_and_template_are_counted():
    source = "/*\n fetch\n*/\nconst t = `\n${1}\n`\nfetch(x)"
    assert problems(source) == [(7, 1, "fetch")]


def test_names_inside_regex_literals_are_allowed():
    source = """
    if (/fetch/.test(s)) log(s)
    const r = s.match(/process\\/[a-z]+/g)
    const q = [/[/]require/, /setTimeout/i]
    function f(s) { return /import/.test(s) }
    """
    assert problems(source) == []


def test_division_is_not_mistaken_for_a_regex():
    assert problems("const r = total / fetch / 2") == [(1, 19, "fetch")]
    assert problems("const r = (a + b) /process/ c") == [(1, 20, "process")]


def test_property_access_is_allowed():
    source = """
    obj.fetch(url)
    await actions.fetch_page({url})
    const p = x?.process
    const q = client
      .fetch()
      .process()
    this.#fetch = 1
    """
    assert problems(source) == []


def test_object_keys_are_allowed():
    source = """
    const o = { process: 1, fetch: f, 'x': 2, require: 3 }
    const { fetch: get } = actions
    const m = { fetch() { return 1 }, async process(x) {}, get require() { return 2 } }
    class Client { fetch(url) { return url } }
    """
    assert problems(source) == []


def test_shorthand_property_is_a_use():
    assert problems("const o = { a, fetch }") == [(1, 16, "fetch")]


def test_spread_is_a_use():
    assert problems("const all = [...process]") == [(1, 17, "process")]


def test_ternary_branch_is_a_use():
    assert problems("const f = ok ? fetch : null") == [(1, 16, "fetch")]


def test_call_in_a_block_is_a_use():
    assert problems("if (ok) { fetch(url) }") == [(1, 11, "fetch")]


def test_identifiers_containing_a_name_are_allowed():
    source = (
        "prefetch(); processed; fetcher; $fetch; fetch_; _fetch; fetch2; importer; exported; requireAll; myglobalThis"
    )
    assert problems(source) == []


def test_all_problems_are_reported_in_order():
    source = "const a = fetch(u)\nsetTimeout(f); const b = require('x')\n// fine\nexport { a }\n"
    error = lint_error(source)
    assert [p[:3] for p in error.problems] == [
        (1, 11, "fetch"),
        (2, 1, "setTimeout"),
        (2, 26, "require"),
        (4, 1, "export"),
    ]
    assert "(and 3 more)" in str(error)


def test_message_has_caret_under_the_name():
    error = lint_error("const x = 1\n  const y = await fetch(x)\n")
    source_line, caret_line = str(error).splitlines()[-2:]
    assert source_line.endswith("  const y = await fetch(x)")
    assert source_line[caret_line.index("^") :].startswith("fetch(x)")


def test_crlf_line_endings_count_as_one_line():
    assert problems("const a = 1\r\nconst b = 2\r\nfetch(a)") == [(3, 1, "fetch")]


def test_unterminated_string_ends_at_the_line():
    assert problems("const s = 'oops\nfetch(x)") == [(2, 1, "fetch")]


def test_a_clean_script_passes():
    source = """
    const items = await actions.list_items({ page: 1 })
    const sizes = items.map((item) => new TextEncoder().encode(item.body).length)
    await ctx.sleep(1000)
    data.total = sizes.reduce((a, b) => a + b, 0) / 1024
    return { total: data.total, when: await ctx.now() }
    """
    assert lint(source) is None


WORKFLOW = r"""
// a workflow with strings, templates, regular expressions and divisions
const items = await actions.list_items({ page: 1, filter: "open", note: 'it\'s' });
for (const item of items) {
  if (/^draft-\d+$/.test(item.id)) continue;
  const label = `item ${item.id}: ${item.title.replace(/\s+/g, ' ')} (${items.length / 2})`;
  data.seen = (data.seen || 0) + 1; /* count it */
  await ctx.step(label, async () => actions.process_item({ id: item.id, ratio: a / b }));
}
"""
MINIFIED = 'var a="x",b=\'y\',c=d/e;function f(g){return g.h("i")+`j${k}l`+/m/.test(n)}if(o){p=q/2}'


@pytest.mark.parametrize("chunk", [WORKFLOW, MINIFIED], ids=["workflow", "minified"])
def test_largest_allowed_source_lints_clean_reading_each_character_a_few_times(chunk):
    # The lint runs on the engine's thread before any limit applies: a clean
    # 256 KiB script must cost work linear in its size (lint_work counts the
    # characters read, re-reads included; bench/lint.py has the timings).
    source = chunk * (256 * 1024 // len(chunk))
    assert problems(source) == []
    assert lint_work(source) <= 8 * len(source)
