"""A store's credentials are never shown: not in ``store.path``, a ``StoreError``, a card's store line or a
printed URL, whichever form libpq takes them in (``user:pw@``, ``?password=``, ``sslpassword``, ``passfile``,
``PGPASSWORD``)."""

from __future__ import annotations

import os
import re
from urllib.parse import quote

import pytest
from examples import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_sandbox import Sandbox, StoreError
from jupyter_sandbox.notebook.card_views import mask
from jupyter_sandbox.stores import open_store
from jupyter_sandbox.stores.base import RunRow, new_run_id
from jupyter_sandbox.stores.urls import masked

FORMS = ("userinfo", "query", "sslpassword", "passfile", "environment", "keyword-in-message")
# A password: a marker no message holds by chance, then anything printable (a URL carries it percent-encoded).
printable = st.characters(min_codepoint=33, max_codepoint=0x2FF)
passwords = st.builds(lambda tail: "Pw" + tail, st.text(printable, min_size=6))


def _url(base: str, form: str, password: str) -> str:
    """``base`` (postgresql://user@/db?host=…) carrying ``password`` in ``form``."""
    encoded = quote(password, safe="")
    if form == "userinfo":
        return re.sub(r"^postgresql://([^@/]*)@", rf"postgresql://\1:{encoded}@", base)
    key = {"query": "password", "sslpassword": "sslpassword", "passfile": "passfile"}.get(form)
    if key:
        return f"{base}&{key}={encoded}"
    return base


def _leaks(password: str, outputs: list[str]) -> list[str]:
    shown = {password, quote(password, safe=""), quote(password)}
    return [out for out in outputs if any(s in out for s in shown)]


def _with_env(form: str, password: str):
    """``PGPASSWORD`` set for the environment form (libpq reads it), restored after."""
    before = os.environ.get("PGPASSWORD")

    def restore():
        if before is None:
            os.environ.pop("PGPASSWORD", None)
        else:
            os.environ["PGPASSWORD"] = before

    if form == "environment":
        os.environ["PGPASSWORD"] = password
    return restore


@settings(max_examples=scaled(100))
@given(form=st.sampled_from(FORMS), password=passwords)
def test_no_password_in_any_error_path_or_card_line_of_a_store_that_cannot_be_reached(form, password):
    url = _url("postgresql://team@/runs?host=/nonexistent/socket/dir&port=5432", form, password)
    restore = _with_env(form, password)
    try:
        with pytest.raises(StoreError) as info:
            open_store(url)
        message = f"connection to server failed: password={password} host=x"  # as a driver might say it
        outputs = [str(info.value), repr(info.value), str(info.value.path), mask(url), masked(url), masked(message)]
        if form == "environment":
            outputs.append(masked(f"PGPASSWORD is {password}", [password]))
        assert _leaks(password, outputs) == []
    finally:
        restore()


@settings(max_examples=scaled(30), suppress_health_check=[HealthCheck.function_scoped_fixture])  # one schema serves all
@given(form=st.sampled_from(FORMS), password=passwords)
def test_no_password_in_a_live_stores_path_errors_or_card_line(postgres_url, form, password):
    url = _url(postgres_url, form, password)  # the test server trusts its users: any password opens it
    restore = _with_env(form, password)
    try:
        sb = Sandbox(url)
        try:
            run = sb.store.create_run(RunRow(id=new_run_id(), kind="workflow", status="completed"))
            with pytest.raises(StoreError) as info:
                sb.store.create_run(RunRow(id=run.id, kind="workflow", status="completed"))
            outputs = [sb.store.path, mask(sb.store.path), str(info.value), str(info.value.path), repr(sb.store.path)]
        finally:
            sb.close()
        assert _leaks(password, outputs) == []
    finally:
        restore()


@pytest.mark.parametrize(
    "url, shown",
    [
        ("postgresql://team:hunter2@db/runs", "postgresql://team:***@db/runs"),
        (
            "postgresql://team@db/runs?sslmode=require&password=hunter2",
            "postgresql://team@db/runs?sslmode=require&password=***",
        ),
        ("postgresql://db/runs?PassFile=/home/me/.pgpass", "postgresql://db/runs?PassFile=***"),
        ("host=db password='a b c' dbname=runs", "host=db password=*** dbname=runs"),
    ],
)
def test_each_credential_form_is_masked_and_the_rest_of_the_url_kept(url, shown):
    assert masked(url) == shown


@pytest.mark.parametrize("url", ["postgresql:/team@db/runs", "postgres:team@db/runs", "SQLITE:/tmp/x.db"])
def test_a_store_url_with_one_slash_is_an_error_not_a_file(tmp_path, url, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match="two slashes"):
        open_store(url)
    assert list(tmp_path.iterdir()) == []
