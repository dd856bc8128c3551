"""The README's table of limits is ``limits_table()``, generated from ``Limits``: the two cannot drift.

Run this file (``python tests/test_limits_table.py``) to rewrite the README's table after changing ``Limits``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import fields
from pathlib import Path

from jupyter_sandbox import Limits
from jupyter_sandbox.engine.limits import limits_table

README = Path(__file__).resolve().parent.parent / "README.md"
TABLE = re.compile(r"(<!-- limits table: [^\n]*-->\n)(.*?)(<!-- end of limits table -->)", re.S)


def readme_table(text: str) -> str:
    match = TABLE.search(text)
    assert match, "the README has no limits table markers"
    return match.group(2)


def test_the_readmes_limits_table_is_the_one_generated_from_limits():
    assert readme_table(README.read_text(encoding="utf-8")) == limits_table() + "\n", (
        "run `python tests/test_limits_table.py` to regenerate the README's limits table"
    )


def test_the_table_has_a_row_with_the_default_of_every_field():
    table = limits_table()
    for item in fields(Limits):
        assert f"| `{item.name}` |" in table
    assert "| `generations` | 100 successors |" in table
    assert "| `console_lines` | 10,000 lines |" in table and "| `journal_entries` | 5,000 entries |" in table


if __name__ == "__main__":
    text = README.read_text(encoding="utf-8")
    README.write_text(TABLE.sub(lambda m: m.group(1) + limits_table() + "\n" + m.group(3), text, count=1))
    sys.exit(0)
