"""Shared fixtures: a Sandbox on an in-memory store, one on a file, a manual clock."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import HealthCheck, settings

from jupyter_sandbox import ManualClock, Sandbox

# Properties over generated inputs: CI runs a bounded, reproducible profile;
# ``--hypothesis-profile=long`` (bench/stress) runs many more examples.
settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=2_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def sb():
    sandbox = Sandbox()
    yield sandbox
    sandbox.close()


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "runs.sqlite"


@pytest.fixture
def clock():
    return ManualClock(start=1_700_000_000_000)


@pytest.fixture
def counted(sb):
    """A sandbox with a side-effecting action that counts its calls: ``counted.calls``."""
    calls: list = []

    @sb.action
    def record(value):
        calls.append(value)
        return {"recorded": value}

    sb.calls = calls
    return sb


# -- PostgreSQL: one throwaway cluster per session (tests/postgres_server.py), one fresh schema per test ------


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of a PostgreSQL server: ``JUPYTER_SANDBOX_TEST_POSTGRES``, else a cluster started here.

    Without PostgreSQL the Postgres half of the suite is skipped, except under
    ``CI=true``, where it fails: CI must test both backends.
    """
    from postgres_server import PostgresCluster

    given = os.environ.get("JUPYTER_SANDBOX_TEST_POSTGRES")
    if given:
        yield given
        return
    try:
        import psycopg  # noqa: F401
        cluster = PostgresCluster()
        cluster.start()
    except Exception as exc:  # not installed, or the server would not start: say which
        if _in_ci():
            pytest.fail(f"CI must test PostgreSQL, but it is not usable here: {exc}")
        pytest.skip(f"PostgreSQL is not usable here: {exc}")
    try:
        yield cluster.url
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_server, request):
    """A URL whose ``search_path`` is a schema of its own: an empty store for this test."""
    import psycopg
    from postgres_server import with_schema

    schema = f"t{os.getpid()}_{next(_SCHEMAS)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    yield with_schema(postgres_server, schema)
    if os.environ.get("JUPYTER_SANDBOX_TEST_POSTGRES"):  # someone else's server: leave it clean
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


_SCHEMAS = itertools.count()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    """The store every conformance test runs on: an SQLite file, then a PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return request.getfixturevalue("postgres_url")
