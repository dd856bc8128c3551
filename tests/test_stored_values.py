"""Every stored value outside the journal is read through one validation (stores/stored.py).

Damaged or foreign meta, run options and export headers are a ``StoreError`` naming the store or
run and the field, never a bare ``KeyError``/``TypeError``/``ValueError``; options and limits a
newer version wrote, and this one does not know, are ignored; known ones with a wrong value are refused.
"""

from __future__ import annotations

import shutil
import sqlite3

import cbor2
import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_sandbox import Sandbox, StoreError
from jupyter_sandbox.stores.migrations import latest


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A store file with one paused run, its export beside it."""
    path = tmp_path_factory.mktemp("stored") / "template.db"
    with Sandbox(store=str(path)) as sb:
        run_id = sb.eval("return Math.random() < 2").run_id
        sb.export_run(run_id, path.with_suffix(".run"))
    return path, run_id


def copy_of(template, tmp_path, name="store.db"):
    path = tmp_path / name
    shutil.copy(template[0], path)
    return path


def write(path, sql, *args):
    with sqlite3.connect(path) as conn:
        conn.execute(sql, args)
    conn.close()


def opened(path, run_id):
    """Open the store and read the run as a resume would: its options decide its limits."""
    with Sandbox(store=str(path)) as sb:
        return sb.check(run_id)


# -- meta.schema_version ------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "³", " 2", "", "2.0", "1e3", "３"])
def test_a_schema_version_out_of_range_or_not_a_number_is_a_store_error_naming_it(template, tmp_path, value):
    path = copy_of(template, tmp_path)
    write(path, "UPDATE meta SET value = ? WHERE key = 'schema_version'", value)
    with pytest.raises(StoreError, match="meta.schema_version"):
        opened(path, template[1])


def test_a_newer_schema_version_asks_for_an_upgrade(template, tmp_path):
    path = copy_of(template, tmp_path)
    write(path, "UPDATE meta SET value = ? WHERE key = 'schema_version'", str(latest() + 1))
    with pytest.raises(StoreError, match="newer jupyter_sandbox"):
        opened(path, template[1])


# -- a run's options -------------------------------------------------------------------------


def set_options(path, run_id, options):
    write(path, "UPDATE runs SET options = ? WHERE id = ?", cbor2.dumps(options), run_id)


def test_an_unknown_limit_from_a_newer_version_is_ignored(template, tmp_path):
    path = copy_of(template, tmp_path)
    set_options(path, template[1], {"limits": {"max_children": 8}, "newer_option": {"x": 1}})
    assert opened(path, template[1]).deterministic


@pytest.mark.parametrize(
    "options, field",
    [
        ({"limits": {"fuel_seconds": -1}}, "fuel_seconds"),
        ({"limits": {"memory_bytes": 1.5}}, "memory_bytes"),
        ({"limits": {"fuel_seconds": "2"}}, "fuel_seconds"),
        ({"strict": "yes"}, ".strict"),
        ({"actions": "send"}, ".actions"),
        ({"limits": [1]}, ".limits"),
    ],
)
def test_a_known_option_with_a_wrong_value_is_a_store_error_naming_run_and_field(template, tmp_path, options, field):
    path = copy_of(template, tmp_path)
    set_options(path, template[1], options)
    with pytest.raises(StoreError) as caught:
        opened(path, template[1])
    assert template[1] in str(caught.value) and field in str(caught.value)


# -- an export's header -----------------------------------------------------------------------


def export_with(template, tmp_path, **header):
    doc = cbor2.loads(template[0].with_suffix(".run").read_bytes())
    doc.update(header)
    path = tmp_path / "damaged.run"
    path.write_bytes(cbor2.dumps(doc))
    return path


@pytest.mark.parametrize("header", [{"schema": "2"}, {"schema": -1}, {"root": 7}, {"runs": {}}, {"format": "zip"}])
def test_an_export_with_a_foreign_header_is_a_store_error_naming_the_field(template, tmp_path, header):
    path = export_with(template, tmp_path, **header)
    with Sandbox() as sb, pytest.raises(StoreError) as caught:
        sb.import_run(path)
    assert f".{next(iter(header))}" in str(caught.value)


def test_an_export_from_a_newer_version_with_extra_fields_still_imports(template, tmp_path):
    path = export_with(template, tmp_path, newer_field={"x": 1})
    with Sandbox() as sb:
        assert sb.import_run(path) == template[1]


# -- properties: whatever is stored, a StoreError or a reading -------------------------------------

json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=5)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
limit_names = st.sampled_from(["fuel_seconds", "memory_bytes", "journal_entries", "generations", "max_children"])
options = st.one_of(
    json_like,
    st.fixed_dictionaries(
        {},
        optional={
            "strict": json_like,
            "actions": st.one_of(json_like, st.lists(st.text(max_size=5), max_size=3)),
            "limits": st.one_of(json_like, st.dictionaries(limit_names, json_like, max_size=3)),
        },
    ),
)
HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]  # each example copies the file afresh


@settings(max_examples=scaled(30), suppress_health_check=HEALTH)
@given(value=st.one_of(st.text(max_size=6), st.integers(-5, 2**40), st.binary(max_size=4), st.floats(allow_nan=False)))
def test_any_stored_schema_version_opens_or_is_a_store_error(template, tmp_path, value):
    path = copy_of(template, tmp_path, "meta.db")
    write(path, "UPDATE meta SET value = ? WHERE key = 'schema_version'", value)
    try:
        opened(path, template[1])
    except StoreError:
        pass


@settings(max_examples=scaled(40), suppress_health_check=HEALTH)
@given(value=options)
def test_any_stored_options_read_or_are_a_store_error_naming_the_run(template, tmp_path, value):
    path = copy_of(template, tmp_path, "options.db")
    set_options(path, template[1], value)
    try:
        opened(path, template[1])
    except StoreError as exc:
        assert template[1] in str(exc)


@settings(max_examples=scaled(40), suppress_health_check=HEALTH)
@given(header=st.dictionaries(st.sampled_from(["format", "schema", "root", "runs", "extra"]), json_like, max_size=3))
def test_any_export_header_imports_or_is_a_store_error(template, tmp_path, header):
    path = export_with(template, tmp_path, **header)
    with Sandbox() as sb:
        try:
            sb.import_run(path)
        except StoreError:
            pass
