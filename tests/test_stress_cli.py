"""The stress run (``bench/stress/``): both ways to start it, and its ``properties`` section's counts.

The other sections' figures are the suite's own tests (test_bad_input.py, test_faults.py,
test_concurrency.py, test_escapes.py run their cases small); here: the command line, and that the
properties section counts what pytest and Hypothesis report.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from stress_module import properties

ROOT = Path(__file__).resolve().parent.parent

STATISTICS = textwrap.dedent("""\
    ============================ Hypothesis Statistics =============================
    tests/test_a.py::test_one:

      - during generate phase (0.06 seconds):
        - 100 passing, 0 failing, and 3 invalid test cases

      - Stopped because settings.max_examples=100


    tests/test_a.py::test_two[x]:

      - during reuse phase (0.01 seconds):
        - 0 passing examples, 1 failing examples, 0 invalid examples
      - during shrink phase (0.05 seconds):
        - 10 passing, 3 failing, and 0 invalid test cases

    =========================== short test summary info ============================
    FAILED tests/test_a.py::test_two[x] - assert 10 < 10
    1 passed, 1 failed
""")


def test_the_statistics_parser_sums_each_tests_examples_over_its_phases_in_either_wording():
    assert properties.parse_statistics("noise before\n" + STATISTICS) == {
        "tests/test_a.py::test_one": {"passing": 100, "failing": 0, "invalid": 3},
        "tests/test_a.py::test_two[x]": {"passing": 10, "failing": 4, "invalid": 0},
    }


def test_the_statistics_parser_finds_nothing_without_the_statistics_banner():
    assert properties.parse_statistics(STATISTICS.split("\n", 1)[1]) == {}


def test_the_junit_parser_maps_each_case_to_its_file_and_names_the_failure(tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text(
        textwrap.dedent("""\
        <testsuites><testsuite name="pytest">
          <testcase classname="tests.test_a" name="test_one" time="1.5"/>
          <testcase classname="tests.test_a.TestGroup" name="test_two[x]" time="0.25">
            <failure message="AssertionError: assert 10 &lt; 10&#10;second line">trace</failure>
          </testcase>
          <testcase classname="tests.test_b" name="test_three" time="0"><skipped message="no"/></testcase>
        </testsuite></testsuites>
    """)
    )
    assert properties.parse_junit(junit) == [
        {"file": "tests/test_a.py", "name": "test_one", "seconds": 1.5, "outcome": "passed", "message": ""},
        {
            "file": "tests/test_a.py",
            "name": "test_two[x]",
            "seconds": 0.25,
            "outcome": "failure",
            "message": "AssertionError: assert 10 < 10",
        },
        {"file": "tests/test_b.py", "name": "test_three", "seconds": 0.0, "outcome": "skipped", "message": ""},
    ]


def test_the_property_files_are_the_test_files_that_import_hypothesis(tmp_path):
    (tmp_path / "test_uses.py").write_text("import os\nfrom hypothesis import given\n")
    (tmp_path / "test_also.py").write_text("import hypothesis.strategies as st\n")
    (tmp_path / "test_plain.py").write_text("# hypothesis is only mentioned here\nimport os\n")
    (tmp_path / "test_quoted.py").write_text('SOURCE = """\n    from hypothesis import given\n"""\n')
    (tmp_path / "helper.py").write_text("from hypothesis import given\n")
    assert [p.name for p in properties.property_files(tmp_path)] == ["test_also.py", "test_uses.py"]


PROPERTY_TESTS = textwrap.dedent("""\
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=40, database=None)
    @given(st.integers())
    def test_holds(x):
        assert x + 0 == x

    @settings(max_examples=40, database=None)
    @given(st.text())
    def test_fails_on_long_text(s):
        assert len(s) < 3

    def test_not_a_property():
        pass
""")


@pytest.mark.slow
def test_the_properties_section_runs_only_property_tests_and_counts_examples_and_failures(tmp_path):
    (tmp_path / "test_demo.py").write_text(PROPERTY_TESTS)
    result = properties.run_properties(
        "long",
        log=lambda message: None,
        timeout=120,
        files=[tmp_path / "test_demo.py"],
        cwd=tmp_path,
        storage=tmp_path / "db",
    )
    assert result["exit"] == 1 and not result["timed_out"]
    assert sorted((c["name"], c["outcome"]) for c in result["cases"]) == [
        ("test_fails_on_long_text", "failure"),
        ("test_holds", "passed"),
    ]
    assert result["stats"]["test_demo.py::test_holds"] == {"passing": 40, "failing": 0, "invalid": 0}
    assert result["stats"]["test_demo.py::test_fails_on_long_text"]["failing"] >= 1
    lines, head = properties.report(result, SimpleNamespace())
    assert "| property tests (Hypothesis, profile long) / failed | 2 / 1 |" in head
    assert any(line.startswith("- `test_demo.py::test_fails_on_long_text`: AssertionError") for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize(
    "how",
    [["-m", "bench.stress"], [str(ROOT / "bench" / "stress")]],
    ids=["python -m bench.stress", "python bench/stress"],
)
def test_the_stress_run_starts_either_way_and_writes_its_summary(tmp_path, how):
    out = tmp_path / "stress.md"
    proc = subprocess.run(
        [sys.executable, *how, "--only", "escapes", "--out", str(out)],
        cwd=ROOT if how[0] == "-m" else tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "## Summary" in text and "## Escape probes" in text
    assert any(line.startswith("| escape probes / found something | ") for line in text.splitlines())
    assert out.with_suffix(".json").is_file()
    assert proc.stdout.strip() == text.strip()


def test_an_unknown_section_is_refused_with_the_names_of_the_sections():
    proc = subprocess.run(
        [sys.executable, "-m", "bench.stress", "--only", "fuzz,bogus"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "unknown section bogus" in proc.stderr and "properties" in proc.stderr
