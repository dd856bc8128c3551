"""Each countable limit holds at its default value and fails one past it, with the error the README's table names.

(Memory, stack and fuel have no exact edge a script can meet; tests/test_limits.py and
tests/test_resource_limits.py reach each of them.)
"""

from __future__ import annotations

import pytest

from jupyter_sandbox import InvalidValue, LimitExceeded, Limits, Sandbox, ScriptError

DEFAULTS = Limits()


@pytest.fixture(scope="module")
def sb():
    with Sandbox() as sandbox:
        yield sandbox


def limit_of(sb, source):
    with pytest.raises(LimitExceeded) as caught:
        sb.eval(source)
    return caught.value.limit


def at_or_past(sb, source, past, limit):
    """The run's result at the limit's value; one past it, the run must fail with ``limit``."""
    if past:
        assert limit_of(sb, source) == limit
        return None
    return sb.eval(source)


@pytest.mark.parametrize("past", [0, 1])
def test_the_source_size_limit_is_its_value(sb, past):
    source = "//" + "é" * ((DEFAULTS.source_bytes - 2) // 2) + "x" * (DEFAULTS.source_bytes % 2 + past)
    assert len(source.encode()) == DEFAULTS.source_bytes + past
    result = at_or_past(sb, source, past, "source-size")
    assert past or result.status == "completed"


def test_a_script_one_byte_past_the_source_limit_is_told_both_sizes_in_bytes(sb):
    with pytest.raises(LimitExceeded, match=r"the script is 262,145 bytes; the limit is 262,144 bytes \(256 KiB\)"):
        sb.eval("//" + "x" * (DEFAULTS.source_bytes - 1))


@pytest.mark.parametrize("past", [0, 1])
def test_the_journal_entry_limit_is_its_value(sb, past):
    reads = DEFAULTS.journal_entries - 1 + past  # the attempt's opening entry, and one entry per read
    source = f"for (let i = 0; i < {reads}; i++) Math.random(); return 'done'"
    result = at_or_past(sb, source, past, "journal-cap")
    assert past or len(sb.run(result.run_id).entries) == DEFAULTS.journal_entries


@pytest.mark.parametrize("past", [0, 1])
def test_the_console_line_limit_is_its_value_not_the_journal_cap(sb, past):
    # More lines than journal entries: console lines are bounded by their own limit.
    assert DEFAULTS.console_lines > DEFAULTS.journal_entries
    source = f"for (let i = 0; i < {DEFAULTS.console_lines + past}; i++) console.log(i); return 'done'"
    result = at_or_past(sb, source, past, "console")
    assert past or (result.output == "done" and len(result.console) == DEFAULTS.console_lines)


def test_console_lines_still_leave_the_entry_cap_to_the_scripts_effects(sb):
    source = f"""
    for (let i = 0; i < {DEFAULTS.journal_entries}; i++) console.log(i);
    for (let i = 0; i < {DEFAULTS.journal_entries - 1}; i++) Math.random();
    return 'done'
    """
    assert sb.eval(source).output == "done"
    assert limit_of(sb, source.replace(f"< {DEFAULTS.journal_entries - 1};", f"< {DEFAULTS.journal_entries};")) == (
        "journal-cap"
    )


@pytest.mark.parametrize("past", [0, 1])
def test_the_console_byte_limit_is_its_value(sb, past):
    source = f"console.log('x'.repeat({DEFAULTS.console_bytes + past})); return 'done'"
    result = at_or_past(sb, source, past, "console")
    assert past or result.output == "done"


@pytest.mark.parametrize("past", [0, 1])
def test_the_generations_limit_is_its_value(sb, past):
    successors = DEFAULTS.generations + past
    source = (
        f"const n = ctx.input ? ctx.input.n : 0; if (n < {successors}) await ctx.continueAsNew({{n: n + 1}}); return n"
    )
    if past:
        assert limit_of(sb, source) == "generations"
    else:
        result = sb.eval(source)
        assert result.output == DEFAULTS.generations and len(result.run_ids) == DEFAULTS.generations + 1


@pytest.mark.parametrize("past", [0, 1])
def test_the_nesting_limit_is_its_value(sb, past):
    from jupyter_sandbox.engine.limits import MAX_DEPTH

    source = f"let v = 1; for (let i = 0; i < {MAX_DEPTH + past}; i++) v = [v]; return v"
    if past:
        with pytest.raises(ScriptError) as caught:
            sb.eval(source)
        assert caught.value.name == "TypeError" and "nests deeper than 256 levels" in caught.value.message
        with pytest.raises(InvalidValue):
            sb.eval("return 1", input=nested(MAX_DEPTH + past))
    else:
        assert sb.eval(source).output == nested(MAX_DEPTH)
        assert sb.eval("return ctx.input", input=nested(MAX_DEPTH)).output == nested(MAX_DEPTH)


def nested(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value
